//! Derivatives of the equations of motion, in the expression DAG: forward-mode tangents of
//! any node with respect to one input (a coordinate, a rate), and from them the partial
//! derivatives of the inverse dynamics ID(q, qd, qdd) = M(q) qdd + C(q, qd) qd + G(q) (by
//! Newton-Euler, `recursive.rs`) that the runtime turns into those of the forward dynamics
//! (d FD = -M^-1 d ID, as Pinocchio does).
//!
//! The tangents are built on the DAG the recursive algorithms unrolled, so the emitted
//! derivative code keeps the robot's tree: a coordinate's tangent is zero on every node that
//! does not depend on it (the links above its joint, the constants), hash-consing shares every
//! tangent two outputs have in common, and the tangent of a named intermediate (a link's
//! rotation, a composite inertia) is a named intermediate too. The local pieces symbolica
//! derived are differentiated here through their expression nodes by the rules of their
//! functions: a sine's cosine, and a Stumpff function's closed form
//! dc_k/ds = (k c_(k+2) - c_(k+1)) / 2, so a soft section's derivatives stay finite through
//! the straight pose, as its pose is.

use crate::dag::equations::{Derivatives, Equations};
use crate::dag::{Dag, Function, Input, Node, NodeId};
use std::collections::HashMap;

/// The highest Stumpff function the runtime evaluates (`softgen_runtime::stumpff`).
const HIGHEST_STUMPFF: u8 = softgen_runtime::STUMPFF_FUNCTIONS as u8 - 1;

impl Dag {
    /// The tangent of every root when each input in `seeds` moves along its node (the
    /// directional derivative sum_x d(root)/dx seed_x), by forward-mode differentiation over
    /// the nodes the roots reach (children before parents: a node's children always have
    /// smaller ids). `suffix` names the tangents of named intermediates.
    pub fn tangents(
        &mut self,
        roots: &[NodeId],
        seeds: &HashMap<Input, NodeId>,
        suffix: &str,
    ) -> Result<Vec<NodeId>, String> {
        let zero = self.number(0.0);
        let mut reached = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = roots.to_vec();
        while let Some(id) = stack.pop() {
            if reached[id] {
                continue;
            }
            reached[id] = true;
            stack.extend(self.children(id));
        }
        // Tangents of nodes that are not zero; every other reached node's is zero.
        let mut tangent: HashMap<NodeId, NodeId> = HashMap::new();
        let of = |tangent: &HashMap<NodeId, NodeId>, id: NodeId| tangent.get(&id).copied().unwrap_or(zero);
        for id in 0..reached.len() {
            if !reached[id] {
                continue;
            }
            let node = self.nodes[id].clone();
            let d = match node {
                Node::Const(_) => continue,
                Node::Input(input) => match seeds.get(&input) {
                    Some(&seed) => seed,
                    None => continue,
                },
                Node::Add(terms) => {
                    let parts: Vec<NodeId> = terms.iter().filter_map(|t| tangent.get(t).copied()).collect();
                    if parts.is_empty() {
                        continue;
                    }
                    self.add_collecting(parts)
                }
                Node::Mul(factors) => {
                    let mut parts = Vec::new();
                    for (i, f) in factors.iter().enumerate() {
                        let Some(&df) = tangent.get(f) else { continue };
                        let mut product: Vec<NodeId> =
                            factors.iter().enumerate().filter(|&(k, _)| k != i).map(|(_, &g)| g).collect();
                        product.push(df);
                        parts.push(self.mul(product));
                    }
                    if parts.is_empty() {
                        continue;
                    }
                    self.add_collecting(parts)
                }
                Node::Powi(base, exponent) => {
                    let Some(&db) = tangent.get(&base) else { continue };
                    let e = self.number(exponent as f64);
                    let lower = self.powi(base, exponent - 1);
                    self.mul(vec![e, lower, db])
                }
                Node::Powf(base, bits) => {
                    let Some(&db) = tangent.get(&base) else { continue };
                    let exponent = f64::from_bits(bits);
                    let e = self.number(exponent);
                    if exponent < 1.0 {
                        // e b^e / b, with 1 / b read as 0 at b = 0: a speed's slope at rest,
                        // where the base's own tangent is zero too (see
                        // `Function::ReciprocalOrZero`), instead of 0 * infinity.
                        let reciprocal = self.call(Function::ReciprocalOrZero, base);
                        self.mul(vec![e, id, reciprocal, db])
                    } else {
                        let lower = self.powf(base, exponent - 1.0);
                        self.mul(vec![e, lower, db])
                    }
                }
                Node::Call(f, argument) => {
                    let Some(&da) = tangent.get(&argument) else { continue };
                    let slope = self.slope(f, argument, id)?;
                    self.mul(vec![slope, da])
                }
            };
            if d == zero {
                continue;
            }
            // A named intermediate's tangent is one too, so that the sums and products using
            // it do not flatten it and the emitted derivative code keeps the tree.
            if let Some(name) = self.names.get(&id).cloned() {
                self.pin_named(d, format!("{name}_{suffix}"));
            } else if self.is_pinned(id) {
                self.pin(d);
            }
            tangent.insert(id, d);
        }
        Ok(roots.iter().map(|r| of(&tangent, *r)).collect())
    }

    /// f'(a) for the node `call` = f(a).
    fn slope(&mut self, f: Function, a: NodeId, call: NodeId) -> Result<NodeId, String> {
        Ok(match f {
            Function::Sin => self.call(Function::Cos, a),
            Function::Cos => {
                let sin = self.call(Function::Sin, a);
                self.neg(sin)
            }
            // 1 + tan^2.
            Function::Tan => {
                let square = self.powi(call, 2);
                let one = self.number(1.0);
                self.add(vec![one, square])
            }
            Function::Exp => call,
            Function::Log => self.powi(a, -1),
            // -1 / x^2, zero at x = 0 as the function is.
            Function::ReciprocalOrZero => {
                let square = self.powi(call, 2);
                self.neg(square)
            }
            Function::Stumpff(k) => {
                if k + 2 > HIGHEST_STUMPFF {
                    return Err(format!(
                        "the derivative of the Stumpff function c_{k} needs c_{}, past the highest the runtime \
                         evaluates (c_{HIGHEST_STUMPFF})",
                        k + 2
                    ));
                }
                let next = self.call(Function::Stumpff(k + 1), a);
                let after = self.call(Function::Stumpff(k + 2), a);
                let half_k = self.number(k as f64 / 2.0);
                let minus_half = self.number(-0.5);
                let first = self.mul(vec![half_k, after]);
                let second = self.mul(vec![minus_half, next]);
                self.add(vec![first, second])
            }
        })
    }
}

/// How far apart the parts of the pass two coordinates move may be and still share a loop:
/// the nodes only one of them moves, as a fraction of those either moves.
const LOOP_SHARE_TOLERANCE: f64 = 0.15;

/// The coordinates in groups whose columns of dID/dq are computed in one loop: runs of
/// consecutive coordinates that move nearly the same part of the Newton-Euler pass (the
/// nodes `roots` reach that depend on them, alike within [`LOOP_SHARE_TOLERANCE`] of the
/// run's first), in practice one joint's coordinates: a floating base's translations, its
/// rotations, one soft section's or one limb's. Each coordinate alone would fold the most
/// zeros but emit n copies of the pass, whose code no longer stays in the cache (the soft
/// snake: 1.8 MB of machine code, its dID/dq 1.5 times faster than one tangent per direction
/// against 2.9 times in loops); one loop for all would fold none, and coordinates of
/// different limbs in one loop would each run the others' zeros. Coordinates that would run
/// alone share a pass of lanes with their neighbours that would too, up to four of them: a
/// pass of four lanes over what any of them moves took less time than a scalar pass each
/// (the book's codegen performance page). Coordinates that move none of the roots are in no
/// group.
pub fn loop_groups(dag: &Dag, roots: &[NodeId], n: usize) -> Vec<Vec<usize>> {
    let words = n.div_ceil(64);
    let mut reached = vec![false; dag.nodes.len()];
    let mut stack: Vec<NodeId> = roots.to_vec();
    while let Some(id) = stack.pop() {
        if !reached[id] {
            reached[id] = true;
            stack.extend(dag.children(id));
        }
    }
    // Which coordinates each node depends on, `words` bits a node.
    let mut depends = vec![0u64; dag.nodes.len() * words];
    // How many nodes each coordinate moves.
    let mut share = vec![0usize; n];
    for id in 0..dag.nodes.len() {
        if !reached[id] {
            continue;
        }
        let mut bits = vec![0u64; words];
        match dag.nodes[id] {
            Node::Input(Input::Q(j)) => bits[j / 64] |= 1 << (j % 64),
            _ => {
                for c in dag.children(id) {
                    for (b, d) in bits.iter_mut().zip(&depends[c * words..(c + 1) * words]) {
                        *b |= d;
                    }
                }
            }
        }
        for (j, count) in share.iter_mut().enumerate() {
            if bits[j / 64] >> (j % 64) & 1 == 1 {
                *count += 1;
            }
        }
        depends[id * words..(id + 1) * words].copy_from_slice(&bits);
    }
    let moved_by = |id: NodeId, j: usize| depends[id * words + j / 64] >> (j % 64) & 1 == 1;
    let mut groups: Vec<Vec<usize>> = Vec::new();
    // A coordinate that moves none of the roots has zero columns: no loop.
    for j in (0..n).filter(|&j| share[j] > 0) {
        if let Some(run) = groups.last_mut() {
            let first = run[0];
            let both = (0..dag.nodes.len()).filter(|&id| reached[id] && moved_by(id, first) && moved_by(id, j)).count();
            let either = share[first] + share[j] - both;
            if both as f64 >= (1.0 - LOOP_SHARE_TOLERANCE) * either as f64 {
                run.push(j);
                continue;
            }
        }
        groups.push(vec![j]);
    }
    // Coordinates alone share a pass of lanes with their neighbours alone, up to four (a
    // floating base's three rotations: three loops of about 2,900 lines each, then one).
    let mut merged: Vec<(Vec<usize>, bool)> = Vec::with_capacity(groups.len());
    for group in groups {
        let alone = group.len() == 1;
        match merged.last_mut() {
            Some((last, true)) if alone && last.len() < LANES => last.extend(group),
            _ => merged.push((group, alone)),
        }
    }
    merged.into_iter().map(|(group, _)| group).collect()
}

/// The most directions one pass of generated tangent code carries (`softgen_runtime::Lanes4`).
const LANES: usize = 4;

/// The tangents of `roots` in the groups of [`loop_groups`]: per group, its coordinates and
/// the roots' tangent along a direction of those coordinates alone.
fn grouped_tangents(dag: &mut Dag, roots: &[NodeId], n: usize) -> Result<Vec<(Vec<usize>, Vec<NodeId>)>, String> {
    let mut groups = Vec::new();
    for coordinates in loop_groups(dag, roots, n) {
        let along: HashMap<Input, NodeId> =
            coordinates.iter().map(|&j| (Input::Q(j), dag.input(Input::PositionDirection(j)))).collect();
        let tangents = dag.tangents(roots, &along, "along_dq")?;
        groups.push((coordinates, tangents));
    }
    Ok(groups)
}

/// The directional derivatives of a robot's equations (see [`Derivatives`]), added to its DAG.
pub fn derivatives(equations: &mut Equations) -> Result<Derivatives, String> {
    let n = equations.gravity.len();
    if equations.inverse_dynamics.len() != n {
        return Err("the equations have no inverse dynamics to differentiate".into());
    }
    let dag = &mut equations.dag;
    let seeds = |dag: &mut Dag, input: fn(usize) -> Input, direction: fn(usize) -> Input| {
        (0..n).map(|j| (input(j), dag.input(direction(j)))).collect::<HashMap<Input, NodeId>>()
    };
    let along_q = seeds(dag, Input::Q, Input::PositionDirection);
    // dID/dq whole, not a tangent along one direction: nothing at run time asks for one
    // direction alone (the runtime's tangent multiplies the matrix), and a second kernel of
    // the same pass would double the largest part of a soft robot's module.
    let position_groups = match equations.inverse_dynamics_derivatives {
        Some(_) => None,
        None => Some(grouped_tangents(dag, &equations.inverse_dynamics, n)?),
    };
    // dID/dqd is 2 C (the Christoffel C's kernel): no tangent of its own either.
    let along_qd = seeds(dag, Input::Qd, Input::VelocityDirection);
    // Contact frames' columns: a coordinate's column is the same for every frame beyond it
    // (the world column of its joint, or of its section's tip), so its tangent is built
    // once; only a skin ring's own columns (its section's coordinates at the ring) are the
    // ring's.
    let mut shared: Vec<Option<[NodeId; 6]>> = vec![None; n];
    for frame in &equations.contact_frames {
        for (j, m) in &frame.motion {
            if !frame.own.contains(j) {
                let column = [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]];
                if shared[*j].is_some_and(|c| c != column) {
                    return Err(format!("coordinate {j}'s column differs between contact frames beyond it"));
                }
                shared[*j] = Some(column);
            }
        }
    }
    let roots: Vec<NodeId> = shared.iter().flatten().flatten().copied().collect();
    let mut tangents = dag.tangents(&roots, &along_q, "along_dq")?.into_iter();
    let coordinate_columns = shared
        .iter()
        .map(|c| c.map(|_| std::array::from_fn(|_| tangents.next().expect("one tangent per column entry"))))
        .collect();
    let mut contact_frames_own = Vec::with_capacity(equations.contact_frames.len());
    let mut contact_frames_own_groups = Vec::with_capacity(equations.contact_frames.len());
    for frame in &equations.contact_frames {
        let own: Vec<(usize, [NodeId; 6])> = frame
            .motion
            .iter()
            .filter(|(j, _)| frame.own.contains(j))
            .map(|(j, m)| (*j, [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]]))
            .collect();
        let roots: Vec<NodeId> = own.iter().flat_map(|(_, c)| c.iter().copied()).collect();
        contact_frames_own_groups.push(
            grouped_tangents(dag, &roots, n)?
                .into_iter()
                .map(|(coordinates, tangents)| {
                    (coordinates, tangents.chunks(6).map(|c| std::array::from_fn(|r| c[r])).collect())
                })
                .collect(),
        );
        contact_frames_own.push(own.iter().map(|(j, _)| *j).collect());
    }
    let hydrodynamic_position = dag.tangents(&equations.hydrodynamic_force, &along_q, "along_dq")?;
    let hydrodynamic_velocity = dag.tangents(&equations.hydrodynamic_force, &along_qd, "along_dqd")?;
    let thruster_roots: Vec<NodeId> = equations.thruster_columns.iter().flatten().copied().collect();
    let thruster_tangents = dag.tangents(&thruster_roots, &along_q, "along_dq")?;
    let thruster_columns = thruster_tangents.chunks(n.max(1)).map(|c| c.to_vec()).collect::<Vec<_>>();
    let thruster_columns = if equations.thruster_columns.is_empty() { Vec::new() } else { thruster_columns };
    Ok(Derivatives {
        position_groups,
        coordinate_columns,
        contact_frames_own,
        contact_frames_own_groups,
        hydrodynamic_position,
        hydrodynamic_velocity,
        thruster_columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub translated by q0 and q1 carrying two limbs of two coordinates each (q2, q3 and
    /// q4, q5), each limb's force flowing back into the hub's rows: the translations share
    /// one loop, each limb's coordinates one, and the two limbs, though alike in size, two.
    #[test]
    fn a_joints_coordinates_share_a_loop_and_limbs_do_not() {
        let mut dag = Dag::default();
        let q: Vec<NodeId> = (0..6).map(|j| dag.input(Input::Q(j))).collect();
        let hub = dag.add(vec![q[0], q[1]]);
        let hub = dag.pin(hub);
        let mut roots = Vec::new();
        for limb in [[q[2], q[3]], [q[4], q[5]]] {
            let mut chain = hub;
            for _ in 0..30 {
                let sine = dag.call(Function::Sin, limb[0]);
                let cosine = dag.call(Function::Cos, limb[1]);
                let product = dag.mul(vec![chain, sine, cosine]);
                chain = dag.pin(product);
            }
            roots.push(chain);
        }
        roots.push(hub);
        assert_eq!(loop_groups(&dag, &roots, 6), vec![vec![0, 1], vec![2, 3], vec![4, 5]]);
    }

    /// A chain whose every coordinate moves a part of its own beyond the one before: each
    /// would run alone, so they share passes of four lanes instead.
    #[test]
    fn coordinates_alone_share_passes_of_four() {
        let mut dag = Dag::default();
        let q: Vec<NodeId> = (0..6).map(|j| dag.input(Input::Q(j))).collect();
        let mut chain = dag.call(Function::Sin, q[0]);
        let mut roots = Vec::new();
        for &coordinate in &q {
            for _ in 0..30 {
                let sine = dag.call(Function::Sin, coordinate);
                let product = dag.mul(vec![chain, sine]);
                chain = dag.pin(product);
                roots.push(chain);
            }
        }
        assert_eq!(loop_groups(&dag, &roots, 6), vec![vec![0, 1, 2, 3], vec![4, 5]]);
    }
}
