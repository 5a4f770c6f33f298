//! Inverse dynamics by Newton-Euler and its analytical derivatives (Carpentier and Mansard
//! 2018) per joint, unrolled into dID/dq and dID/dqd for small trees.

// The passes' types and imports, shared by their files.
use super::*;

/// The inverse dynamics ID(q, qd, qdd) = M qdd + C qd + G by Newton-Euler: the forward pass
/// again with every coordinate's acceleration (`Input::Acceleration`) added to the bias
/// accelerations, a joint's S qdd and a section's sum_a S_a qdd_a at each slice and its tip,
/// so that the Newton-Euler forces that gave C qd give M qdd + C qd (water's Kirchhoff terms
/// likewise add the added mass times the acceleration). Poses, columns, inertias and
/// velocities are the first pass's nodes (the DAG shares them); only accelerations and forces
/// are new. O(n) nodes, so that a coordinate's tangent of it is O(n) too. For a tree of rigid
/// links in air, also dID/dq in closed form ([`position_derivatives`]).
pub(super) fn inverse_dynamics(
    dag: &mut Dag,
    robot: &Robot,
    links: &[Link],
    pieces: Option<&Pieces>,
    gravity: NodeId,
) -> Result<(Vec<NodeId>, Option<Vec<Option<PositionFactors>>>), String> {
    let reader = AtomReader { robot };
    let states = forward_pass(dag, &reader, links, pieces, true)?;
    let (composites, beyond) = composites(dag, links, &states);
    let n = robot.coordinates.len();
    let zero = dag.number(0.0);
    let tree = Tree { robot, reader, links, states: &states, subspaces: subspaces(&states, n), pieces, gravity, zero };
    let mut rows = coordinate_rows(dag, &tree, &composites, &beyond)?;
    if let Some(water) = &robot.water {
        immerse_hulls(dag, &tree, water, &mut rows)?;
    }
    let rigid = pieces.is_none() && robot.water.is_none();
    let position = if rigid { Some(position_derivatives(dag, &tree, &composites)?) } else { None };
    Ok(((0..n).map(|i| dag.add2(rows.coriolis[i], rows.gravity[i])).collect(), position))
}

/// dID/dq of a tree of rigid links in closed form, by the analytical derivatives of
/// recursive Newton-Euler (Carpentier and Mansard 2018) in world coordinates, from the
/// Newton-Euler pass with accelerations (`tree`, `composites`). Turning joint j by dq_j
/// carries its subtree rigidly along its column S_j, so every world quantity of the subtree
/// turns with it (X -> S_j x X), and besides that the subtree's velocities gain d_j = dS_j/dt
/// and its accelerations c_j + d_j x v_k, with c_j = -(S_j x a_parent + dS_j/dt x v_parent)
/// (a_parent with the base's fictitious upward acceleration g). The rigid turn leaves
/// tau_i = S_i . F_i unchanged for i at or below j, and what remains sums over the subtree to
/// composite quantities:
/// - i at or below j: dtau_i/dq_j = (I^c_i S_i) . c_j + (dI^c_i/dt S_i - S_i x* h^c_i) . d_j,
/// - i above j: dtau_i/dq_j = S_i . (S_j x* F_j + I^c_j c_j + dI^c_j/dt d_j + d_j x* h^c_j),
///
/// with F_j the composite Newton-Euler force under gravity and h^c the composite momentum.
/// Returned as those vectors per joint (O(n) nodes; the runtime forms the two 6-vector
/// products per entry, `InverseDynamicsFactors`), instead of a tangent pass (O(n)) per
/// coordinate; entries are zero where neither joint is on the other's path.
pub(super) fn position_derivatives(
    dag: &mut Dag,
    tree: &Tree,
    composites: &[Option<Composite>],
) -> Result<Vec<Option<PositionFactors>>, String> {
    let (n, states) = (tree.coordinates(), tree.states);
    let up = tree.up();
    let minus_one = dag.number(-1.0);
    // Per coordinate: c_j, which every entry in its column reads (with d_j = dS_j/dt).
    let mut shifts: Vec<Option<Motion>> = vec![None; n];
    for (index, state) in states.iter().enumerate() {
        let Some((j, s_j, sd_j)) = state.joint else { continue };
        let (velocity, acceleration) = match tree.links[index].parent {
            Some(p) => (states[p].velocity, states[p].bias_acceleration),
            None => (dag.zero_motion(), dag.zero_motion()),
        };
        let acceleration = dag.add_motion(&acceleration, &up);
        let turned = dag.motion_cross(&s_j, &acceleration);
        let carried = dag.motion_cross(&sd_j, &velocity);
        let sum = dag.add_motion(&turned, &carried);
        let shift = dag.scale_motion(&sum, minus_one);
        let name = &tree.links[index].name;
        shifts[j] = Some(dag.pin_motion(shift, &format!("{name}_acceleration_shift")));
    }
    let mut factors: Vec<Option<PositionFactors>> = vec![None; n];
    for (index, state) in states.iter().enumerate() {
        let Some((i, s_i, d_i)) = state.joint else { continue };
        let Some(composite) = composites[index] else { continue };
        let name = &tree.links[index].name;
        let c_i = shifts[i].ok_or("a joint without its acceleration shift")?;
        let projected = dag.inertia_times(&composite.inertia, &s_i);
        let projected = dag.pin_force(projected, &format!("{name}_projected_inertia"));
        let turned = dag.inertia_rate_times(&composite.rate, &s_i);
        let carried = dag.force_cross(&s_i, &composite.momentum);
        let row = dag.sub_force(&turned, &carried);
        let row = dag.pin_force(row, &format!("{name}_position_derivative_row"));
        // What the ancestors' rows read: S_i x* F_i + I^c_i c_i + dI^c_i/dt d_i + d_i x* h^c_i.
        let weight = dag.inertia_times(&composite.inertia, &up);
        let force = dag.add_force(&composite.force, &weight);
        let parts = [
            dag.force_cross(&s_i, &force),
            dag.inertia_times(&composite.inertia, &c_i),
            dag.inertia_rate_times(&composite.rate, &d_i),
            dag.force_cross(&d_i, &composite.momentum),
        ];
        let mut column = parts[0];
        for part in &parts[1..] {
            column = dag.add_force(&column, part);
        }
        let column = dag.pin_force(column, &format!("{name}_position_derivative_column"));
        factors[i] = Some(PositionFactors { subspace: s_i, rate: d_i, shift: c_i, projected, row, column });
    }
    Ok(factors)
}

/// The links with a joint, parents first: (link index, coordinate, the index in this list of
/// the nearest joint above). Fixed links in between pass forces and accelerations through
/// unchanged in world coordinates, so they drop out of the per-joint factorisations.
pub(super) fn joint_order(links: &[Link], states: &[LinkState]) -> Vec<(usize, usize, Option<usize>)> {
    let mut joint_at_or_above: Vec<Option<usize>> = vec![None; links.len()];
    let mut order = Vec::new();
    for (index, link) in links.iter().enumerate() {
        let above = link.parent.and_then(|p| joint_at_or_above[p]);
        joint_at_or_above[index] = above;
        if let Some((k, _, _)) = states[index].joint {
            order.push((index, k, above));
            joint_at_or_above[index] = Some(order.len() - 1);
        }
    }
    order
}

/// A motion vector's components [w; v], and a force vector's [n; f].
pub(super) fn motion_components(m: &Motion) -> [NodeId; 6] {
    [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]]
}

pub(super) fn force_components(f: &Force) -> [NodeId; 6] {
    [f.n[0], f.n[1], f.n[2], f.f[0], f.f[1], f.f[2]]
}

/// Robots with at most this many joints also get dID/dq and 2 C as unrolled entries: measured
/// on the scaling snakes, the straight-line n^2 entries (0.26 us at 8 coordinates, 0.95 at 14)
/// beat the runtime's loops over the factors (1.7 and 3.3 us) while n is small; past that
/// their code grows as n^2 and the factors win (22 coordinates: 1.6 us for the factors
/// against 3.1 for the entries).
pub(super) const UNROLLED_DERIVATIVES_UP_TO: usize = 16;

/// dID/dq and dID/dqd = 2 C as matrices of nodes, every entry the products of the factors
/// (`softgen_runtime::InverseDynamicsFactors` has the formulas), zero where neither joint
/// is on the other's path.
pub(super) fn unrolled_derivatives(
    dag: &mut Dag,
    joints: &[DerivativeJoint],
    n: usize,
) -> (Vec<Vec<NodeId>>, Vec<Vec<NodeId>>) {
    let zero = dag.number(0.0);
    let two = dag.number(2.0);
    let motion = |m: &[NodeId; 6]| Motion { w: [m[0], m[1], m[2]], v: [m[3], m[4], m[5]] };
    let force = |f: &[NodeId; 6]| Force { n: [f[0], f[1], f[2]], f: [f[3], f[4], f[5]] };
    let mut position = vec![vec![zero; n]; n];
    let mut velocity = vec![vec![zero; n]; n];
    for (i, joint) in joints.iter().enumerate() {
        let ki = joint.coordinate;
        let mut above = Some(i);
        while let Some(j) = above {
            let other = &joints[j];
            let kj = other.coordinate;
            let from_shift = dag.force_dot_motion(&force(&joint.projected), &motion(&other.shift));
            let from_rate = dag.force_dot_motion(&force(&joint.position_row), &motion(&other.rate));
            position[ki][kj] = dag.add2(from_shift, from_rate);
            let from_rate = dag.force_dot_motion(&force(&joint.projected), &motion(&other.rate));
            let from_subspace = dag.force_dot_motion(&force(&joint.coriolis_row), &motion(&other.subspace));
            let sum = dag.add2(from_rate, from_subspace);
            velocity[ki][kj] = dag.mul2(two, sum);
            if j != i {
                position[kj][ki] = dag.force_dot_motion(&force(&joint.position_column), &motion(&other.subspace));
                let entry = dag.force_dot_motion(&force(&joint.coriolis_column), &motion(&other.subspace));
                velocity[kj][ki] = dag.mul2(two, entry);
            }
            above = other.parent;
        }
    }
    (position, velocity)
}

/// One joint's factors of dID/dq ([`position_derivatives`]): its S, d and c, and the force
/// vectors I^c S, the row (dI^c/dt S - S x* h^c) and the column its ancestors read.
#[derive(Clone, Copy)]
pub(super) struct PositionFactors {
    pub(super) subspace: Motion,
    pub(super) rate: Motion,
    pub(super) shift: Motion,
    pub(super) projected: Force,
    pub(super) row: Force,
    pub(super) column: Force,
}
