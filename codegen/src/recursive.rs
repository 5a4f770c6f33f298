//! The recursive algorithms of rigid-body dynamics, unrolled for one robot into the DAG: a
//! forward pass (parent to child) for poses, joint motion subspaces, velocities and bias
//! accelerations; a backward pass (child to parent) for composite inertias, their rates,
//! composite momenta and Newton-Euler forces; then per coordinate
//! - M by the composite rigid body algorithm: M_ij = S_j . (I^c_i S_i) for j on i's path,
//! - C qd by recursive Newton-Euler at zero acceleration and zero gravity,
//! - G by the composite inertias under gravity: G_i = S_i . (I^c_i a_g),
//! - the Christoffel C(q, qd) by the composite form of Echeandia and Wensing (2021),
//!   C = sum_k J_k' (I_k Jdot_k + B_k J_k) with B(I, v) u = 1/2 (v x* I u - I (v x u) + u x* I v),
//!   whose subtree sums reduce to B^c u = 1/2 (dI^c/dt u + u x* h^c) (h^c the composite
//!   momentum), so C costs what M costs: O(n) composites and one dot product per entry.
//!
//! Everything is in world coordinates (Plücker vectors about the world origin), so composite
//! quantities of a subtree are plain sums and no frame changes appear. Per-link quantities are
//! pinned, named intermediates: the emitted code follows the tree instead of re-expanding
//! every body's pose from the base, and its size grows with the entries of M.

use crate::dag::{Dag, Input, NodeId};
use crate::equations::{
    ArticulatedBody, ArticulatedJoint, AtomReader, ContactFrame, DerivativeJoint, Drawing, DrawnBody, Equations,
    InverseDynamicsDerivatives,
};
use crate::hydrodynamics::{self, WaterNodes, WaterRows};
use crate::local::{contact_point_offset, Link, LinkJointKind};
use crate::model::{ContactPoint, Robot, Thruster};
use crate::section::section_kinematics;
use crate::section_pass::{section_rows, section_state, Pieces, Rows, SectionState, Station};
use crate::spatial::{Articulated, Force, Mat3, Motion, Vec3};
use crate::symbolic::from_expr;
use crate::tree::{body_state, BodyState, Composite, Frame};
use std::collections::HashMap;

/// Segments of each section's drawn centre line (points at xi = k / 6).
pub const CENTRE_LINE_SEGMENTS: usize = 6;

/// A link's world quantities from the forward pass.
struct LinkState {
    rotation: Mat3,
    position: Vec3,
    velocity: Motion,
    bias_acceleration: Motion,
    /// World motion subspace of its joint and its rate, with the coordinate.
    joint: Option<(usize, Motion, Motion)>,
    /// The joint's velocity-product acceleration dS/dt qd (zero without a joint).
    joint_bias: Motion,
    /// Coordinates on the path from the root to this link, root first (its own last).
    path: Vec<usize>,
    body: Option<BodyState>,
    /// A soft section: its slices and tip (the link's pose, velocity and bias are the tip's).
    section: Option<SectionState>,
}

/// What the passes after the forward and composite passes read: the robot, its links with
/// their world state, and each coordinate's world motion subspace with its rate.
struct Tree<'a> {
    robot: &'a Robot,
    reader: AtomReader<'a>,
    links: &'a [Link],
    states: &'a [LinkState],
    subspaces: Vec<Option<(Motion, Motion)>>,
    pieces: Option<&'a Pieces>,
    gravity: NodeId,
    zero: NodeId,
}

impl Tree<'_> {
    fn coordinates(&self) -> usize {
        self.robot.coordinates.len()
    }

    /// The motion subspace of coordinate `j` and its rate.
    fn subspace(&self, j: usize) -> Result<(Motion, Motion), String> {
        self.subspaces[j].ok_or_else(|| "a coordinate without a joint".to_string())
    }

    /// The base's fictitious upward acceleration g, through which gravity enters the passes.
    fn up(&self) -> Motion {
        let zero = self.zero;
        Motion { w: [zero, zero, zero], v: [zero, zero, self.gravity] }
    }
}

/// The rows of the equations per coordinate: M, C qd, the Christoffel C and G, and a
/// section's elastic energy, damping and stiffness.
struct CoordinateRows {
    mass_matrix: Vec<Vec<NodeId>>,
    coriolis: Vec<NodeId>,
    coriolis_matrix: Vec<Vec<NodeId>>,
    /// Per coordinate of a rigid joint, C's factors (B^c' S and the column), see
    /// `DerivativeJoint`.
    coriolis_factors: Vec<Option<(Force, Force)>>,
    gravity: Vec<NodeId>,
    elastic_energy: Vec<NodeId>,
    damping: Vec<NodeId>,
    damping_slope: Vec<NodeId>,
    stiffness: Vec<NodeId>,
}

/// Water's contributions beside the rows it adds to (`hydrodynamics.rs`).
#[derive(Default)]
struct WaterOutputs {
    force: Vec<NodeId>,
    dissipation: Option<NodeId>,
    hulls: Vec<(String, Articulated, Articulated)>,
}

/// Contact points' kinematics and their frames.
#[derive(Default)]
struct ContactOutputs {
    positions: Vec<Vec3>,
    velocities: Vec<Vec3>,
    axes: Vec<Vec3>,
    jacobians: Vec<Vec<Vec3>>,
    frames: Vec<ContactFrame>,
    frame_of: Vec<usize>,
}

/// Whole-robot quantities from the root composites.
struct WholeRobot {
    total_mass: NodeId,
    center_of_mass: Vec3,
    momentum: Force,
    /// Gravity's, the sections' elastic and water's potential energy.
    potential_energy: NodeId,
}

/// Builds every output of the generated module from the robot's links, pass by pass:
/// forward (poses, subspaces, velocities, bodies), composites (child to parent), the rows
/// per coordinate, water, thrusters, whole-robot quantities, contact points, centre lines,
/// and the articulated-body algorithm. The passes run in this order, which is also the
/// order the DAG's nodes are made in.
pub fn equations(robot: &Robot, links: &[Link]) -> Result<Equations, String> {
    let reader = AtomReader { robot };
    let mut dag = Dag::default();
    let gravity = dag.input(Input::Param(
        robot.parameters.iter().position(|p| p.name == "gravity").ok_or("the robot has no `gravity` parameter")?,
    ));

    let pieces = match links.iter().any(|l| l.section.is_some()) {
        true => Some(Pieces::read(&section_kinematics())?),
        false => None,
    };
    let states = forward_pass(&mut dag, &reader, links, pieces.as_ref(), false)?;
    let (composites, beyond) = composites(&mut dag, links, &states);

    let zero = dag.number(0.0);
    let tree = Tree {
        robot,
        reader,
        links,
        states: &states,
        subspaces: subspaces(&states, robot.coordinates.len()),
        pieces: pieces.as_ref(),
        gravity,
        zero,
    };
    let mut rows = coordinate_rows(&mut dag, &tree, &composites, &beyond)?;
    let water = match &robot.water {
        Some(water) => immerse_hulls(&mut dag, &tree, water, &mut rows)?,
        None => WaterOutputs::default(),
    };
    let thruster_columns = thruster_columns(&mut dag, &tree)?;
    let whole = whole_robot(&mut dag, &tree, &composites, rows.elastic_energy);
    let contacts = contact_points(&mut dag, &tree)?;
    let (marker_positions, marker_jacobians) = markers(&mut dag, &tree)?;
    let (centre_line, drawing) = drawing(&mut dag, &tree)?;

    // The articulated-body algorithm needs every joint's motion to be a rigid body's; soft
    // sections move many slices along different columns, so their robots factorise M.
    // Added mass is not a rigid body's inertia either: robots in water factorise M too.
    let articulated = match states.iter().any(|s| s.section.is_some()) || robot.water.is_some() {
        true => None,
        false => Some(articulated_body(&mut dag, links, &states, gravity, robot.coordinates.len())),
    };
    let (inverse_dynamics, position_derivatives) = inverse_dynamics(&mut dag, robot, links, pieces.as_ref(), gravity)?;
    // dID/dq's factors with C's (dID/dqd = 2 C, the Christoffel C doubled: see
    // `Model::inverse_dynamics_derivatives_into`), per joint, parents first.
    let inverse_dynamics_derivatives = match position_derivatives {
        None => None,
        Some(position) => {
            let mut joints = Vec::new();
            for (_, k, parent) in joint_order(links, &states) {
                let (Some(factors), Some((coriolis_row, coriolis_column))) = (position[k], rows.coriolis_factors[k])
                else {
                    return Err(format!("joint of coordinate {k} without its derivative factors"));
                };
                joints.push(DerivativeJoint {
                    coordinate: k,
                    parent,
                    subspace: motion_components(&factors.subspace),
                    rate: motion_components(&factors.rate),
                    shift: motion_components(&factors.shift),
                    projected: force_components(&factors.projected),
                    position_row: force_components(&factors.row),
                    position_column: force_components(&factors.column),
                    coriolis_row: force_components(&coriolis_row),
                    coriolis_column: force_components(&coriolis_column),
                });
            }
            let n = robot.coordinates.len();
            let matrices =
                (joints.len() <= UNROLLED_DERIVATIVES_UP_TO).then(|| unrolled_derivatives(&mut dag, &joints, n));
            Some(InverseDynamicsDerivatives { joints, matrices })
        }
    };

    Ok(Equations {
        dag,
        mass_matrix: rows.mass_matrix,
        coriolis: rows.coriolis,
        coriolis_matrix: rows.coriolis_matrix,
        gravity: rows.gravity,
        potential_energy: whole.potential_energy,
        contact_positions: contacts.positions,
        contact_velocities: contacts.velocities,
        contact_axes: contacts.axes,
        contact_jacobians: contacts.jacobians,
        contact_frames: contacts.frames,
        contact_frame_of: contacts.frame_of,
        marker_positions,
        marker_jacobians,
        frame_motion: states.iter().any(|s| s.section.is_some()),
        center_of_mass: whole.center_of_mass,
        total_mass: whole.total_mass,
        linear_momentum: whole.momentum.f,
        angular_momentum: whole.momentum.n,
        articulated,
        damping: rows.damping,
        damping_slope: rows.damping_slope,
        stiffness: rows.stiffness,
        centre_line,
        drawing,
        hydrodynamic_force: water.force,
        hydrodynamic_dissipation: water.dissipation,
        hulls: water.hulls,
        thruster_columns,
        inverse_dynamics,
        inverse_dynamics_derivatives,
        derivatives: None,
    })
}

/// The inverse dynamics ID(q, qd, qdd) = M qdd + C qd + G by Newton-Euler: the forward pass
/// again with every coordinate's acceleration (`Input::Acceleration`) added to the bias
/// accelerations, a joint's S qdd and a section's sum_a S_a qdd_a at each slice and its tip,
/// so that the Newton-Euler forces that gave C qd give M qdd + C qd (water's Kirchhoff terms
/// likewise add the added mass times the acceleration). Poses, columns, inertias and
/// velocities are the first pass's nodes (the DAG shares them); only accelerations and forces
/// are new. O(n) nodes, so that a coordinate's tangent of it is O(n) too. For a tree of rigid
/// links in air, also dID/dq in closed form ([`position_derivatives`]).
fn inverse_dynamics(
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
fn position_derivatives(
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
fn joint_order(links: &[Link], states: &[LinkState]) -> Vec<(usize, usize, Option<usize>)> {
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
fn motion_components(m: &Motion) -> [NodeId; 6] {
    [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]]
}
fn force_components(f: &Force) -> [NodeId; 6] {
    [f.n[0], f.n[1], f.n[2], f.f[0], f.f[1], f.f[2]]
}

/// Robots with at most this many joints also get dID/dq and 2 C as unrolled entries: measured
/// on the scaling snakes, the straight-line n^2 entries (0.26 us at 8 coordinates, 0.95 at 14)
/// beat the runtime's loops over the factors (1.7 and 3.3 us) while n is small; past that
/// their code grows as n^2 and the factors win (22 coordinates: 1.6 us for the factors
/// against 3.1 for the entries).
const UNROLLED_DERIVATIVES_UP_TO: usize = 16;

/// dID/dq and dID/dqd = 2 C as matrices of nodes, every entry the products of the factors
/// (`softgen_runtime::InverseDynamicsFactors` has the formulas), zero where neither joint
/// is on the other's path.
fn unrolled_derivatives(dag: &mut Dag, joints: &[DerivativeJoint], n: usize) -> (Vec<Vec<NodeId>>, Vec<Vec<NodeId>>) {
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
struct PositionFactors {
    subspace: Motion,
    rate: Motion,
    shift: Motion,
    projected: Force,
    row: Force,
    column: Force,
}

/// Each coordinate's world motion subspace and rate: a joint's own, and below a section its
/// coordinates' columns at the tip (which move everything beyond it).
fn subspaces(states: &[LinkState], n: usize) -> Vec<Option<(Motion, Motion)>> {
    let mut subspaces: Vec<Option<(Motion, Motion)>> = vec![None; n];
    for state in states {
        if let Some((k, s, sd)) = state.joint {
            subspaces[k] = Some((s, sd));
        }
        // Below a section, its coordinates move everything along the tip's columns.
        if let Some(section) = &state.section {
            for (a, &k) in section.frame.coordinates.iter().enumerate() {
                subspaces[k] = Some((section.tip.columns[a], section.tip.column_rates[a]));
            }
        }
    }
    subspaces
}

/// M by the composite rigid body algorithm, C qd by Newton-Euler, G from composite inertias
/// and the Christoffel C in composite form, per joint; a section's rows from its slices and
/// what hangs from its tip (`section_pass.rs`), with its elasticity and damping.
fn coordinate_rows(
    dag: &mut Dag,
    tree: &Tree,
    composites: &[Option<Composite>],
    beyond: &[Option<Composite>],
) -> Result<CoordinateRows, String> {
    let (n, zero) = (tree.coordinates(), tree.zero);
    let (links, states) = (tree.links, tree.states);
    let mut mass_matrix = vec![vec![zero; n]; n];
    let mut coriolis_factors: Vec<Option<(Force, Force)>> = vec![None; n];
    let mut coriolis = vec![zero; n];
    let mut coriolis_matrix = vec![vec![zero; n]; n];
    let mut gravity_force = vec![zero; n];
    let up = tree.up();
    let mut elastic_energy = Vec::new();
    let mut damping = vec![zero; n];
    let mut stiffness = vec![zero; n];
    let mut damping_slope = vec![zero; n];
    for (index, state) in states.iter().enumerate() {
        if let Some(section) = &state.section {
            let own = &section.frame.coordinates;
            let mut above = Vec::new();
            for &j in state.path.iter().filter(|j| !own.contains(j)) {
                let (s_j, sd_j) = tree.subspace(j)?;
                above.push((j, s_j, sd_j));
            }
            let rows = Rows {
                mass_matrix: &mut mass_matrix,
                coriolis: &mut coriolis,
                coriolis_matrix: &mut coriolis_matrix,
                gravity: &mut gravity_force,
            };
            section_rows(dag, section, beyond[index].as_ref(), &above, &up, rows);
            for (a, &k) in own.iter().enumerate() {
                let rate = dag.input(Input::Qd(k));
                damping[k] = dag.mul2(section.damping, rate);
                damping_slope[k] = section.damping;
                if let Some(viscosity) = &section.viscosity {
                    let (force, slope) = viscosity.force(dag, rate);
                    damping[k] = dag.add2(damping[k], force);
                    damping_slope[k] = dag.add2(damping_slope[k], slope);
                }
                stiffness[k] = section.elastic[a].stiffness;
                elastic_energy.push(section.elastic[a].energy);
            }
            continue;
        }
        let Some((i, s_i, sd_i)) = state.joint else { continue };
        let Some(composite) = composites[index] else { continue };
        let inertia = composite.inertia;
        let name = &links[index].name;
        let projected = dag.inertia_times(&inertia, &s_i);
        let projected = dag.pin_force(projected, &format!("{name}_projected_inertia"));
        for &j in &state.path {
            let (s_j, _) = tree.subspace(j)?;
            let entry = dag.force_dot_motion(&projected, &s_j);
            mass_matrix[i][j] = entry;
            mass_matrix[j][i] = entry;
        }
        coriolis[i] = dag.force_dot_motion(&composite.force, &s_i);
        let weight = dag.inertia_times(&inertia, &up);
        gravity_force[i] = dag.force_dot_motion(&weight, &s_i);

        // Christoffel C: B^c S = 1/2 (dI^c/dt S + S x* h^c), B^c' S = 1/2 (dI^c/dt S - S x* h^c).
        let half = dag.number(0.5);
        let turned = dag.inertia_rate_times(&composite.rate, &s_i);
        let carried = dag.force_cross(&s_i, &composite.momentum);
        let sum = dag.add_force(&turned, &carried);
        let difference = dag.sub_force(&turned, &carried);
        let b_s = dag.scale_force(&sum, half);
        let bt_s = dag.scale_force(&difference, half);
        let bt_s = dag.pin_force(bt_s, &format!("{name}_coriolis_row"));
        let inertia_sd = dag.inertia_times(&inertia, &sd_i);
        let column = dag.add_force(&inertia_sd, &b_s);
        let column = dag.pin_force(column, &format!("{name}_coriolis_column"));
        for &j in &state.path {
            let (s_j, sd_j) = tree.subspace(j)?;
            let from_rate = dag.force_dot_motion(&projected, &sd_j);
            let from_b = dag.force_dot_motion(&bt_s, &s_j);
            coriolis_matrix[i][j] = dag.add2(from_rate, from_b);
            if j != i {
                coriolis_matrix[j][i] = dag.force_dot_motion(&column, &s_j);
            }
        }
        coriolis_factors[i] = Some((bt_s, column));
    }

    Ok(CoordinateRows {
        mass_matrix,
        coriolis,
        coriolis_matrix,
        coriolis_factors,
        gravity: gravity_force,
        elastic_energy,
        damping,
        damping_slope,
        stiffness,
    })
}

/// Water: buoyancy, added mass and drag of every hull, added to the rows; the drag and its
/// dissipation function, and each rigid hull's added mass and linear drag.
fn immerse_hulls(
    dag: &mut Dag,
    tree: &Tree,
    water: &crate::model::Water,
    rows: &mut CoordinateRows,
) -> Result<WaterOutputs, String> {
    let (n, zero, gravity) = (tree.coordinates(), tree.zero, tree.gravity);
    let (robot, links, states, reader) = (tree.robot, tree.links, tree.states, &tree.reader);
    let mut hulls = Vec::new();
    {
        let node = |dag: &mut Dag, e: &crate::expr::Expr| reader.node(dag, &from_expr(e));
        let nodes = WaterNodes {
            density: node(dag, &water.density)?,
            added_mass_coefficient: node(dag, &water.added_mass_coefficient)?,
            surge_added_mass: node(dag, &water.surge_added_mass)?,
            drag_coefficient: node(dag, &water.drag_coefficient)?,
            surge_linear_drag: node(dag, &water.surge_linear_drag)?,
            roll_linear_drag: node(dag, &water.roll_linear_drag)?,
            reference_speed: node(dag, &water.reference_speed)?,
            gravity,
        };
        let mut drag = vec![zero; n];
        let mut dissipation = Vec::new();
        let mut water_potential = Vec::new();
        for (index, state) in states.iter().enumerate() {
            let Some(hull) = links[index].body.and_then(|b| robot.bodies[b].hull.as_ref()) else { continue };
            let name = &links[index].name;
            let radius = node(dag, &hull.radius)?;
            let mut water_rows = WaterRows {
                mass_matrix: &mut rows.mass_matrix,
                coriolis: &mut rows.coriolis,
                coriolis_matrix: &mut rows.coriolis_matrix,
                gravity: &mut rows.gravity,
                potential: &mut water_potential,
                drag: &mut drag,
                dissipation: &mut dissipation,
            };
            match &state.section {
                Some(section) => {
                    let rest_length = node(dag, &hull.length)?;
                    let own = &section.frame.coordinates;
                    let mut above = Vec::new();
                    for &j in state.path.iter().filter(|j| !own.contains(j)) {
                        let (s_j, sd_j) = tree.subspace(j)?;
                        above.push((j, s_j, sd_j));
                    }
                    let quadrature = links[index].section.as_ref().map(|s| s.quadrature.clone()).unwrap_or_default();
                    for (k, (slice, &(_, weight))) in section.slices.iter().zip(&quadrature).enumerate() {
                        let mut columns = above.clone();
                        for (a, &j) in own.iter().enumerate() {
                            columns.push((j, slice.columns[a], slice.column_rates[a]));
                        }
                        let slice_hull = hydrodynamics::slice(dag, &nodes, radius, rest_length, weight);
                        hydrodynamics::immerse(
                            dag,
                            &format!("{name}_slice{k}"),
                            &slice_hull,
                            &nodes,
                            &slice.frame,
                            &columns,
                            &mut water_rows,
                        );
                    }
                }
                None => {
                    let length = node(dag, &hull.length)?;
                    let start = node(dag, &hull.start)?;
                    let centre = [
                        node(dag, &hull.center_of_buoyancy[0])?,
                        node(dag, &hull.center_of_buoyancy[1])?,
                        node(dag, &hull.center_of_buoyancy[2])?,
                    ];
                    let rigid_hull = hydrodynamics::cylinder(dag, &nodes, radius, length, start, centre);
                    hulls.push((name.clone(), rigid_hull.added_mass, rigid_hull.linear_drag));
                    let mut columns = Vec::new();
                    for &j in &state.path {
                        let (s_j, sd_j) = tree.subspace(j)?;
                        columns.push((j, s_j, sd_j));
                    }
                    let frame = Frame {
                        rotation: state.rotation,
                        position: state.position,
                        velocity: state.velocity,
                        bias: state.bias_acceleration,
                    };
                    hydrodynamics::immerse(dag, name, &rigid_hull, &nodes, &frame, &columns, &mut water_rows);
                }
            }
        }
        rows.elastic_energy.extend(water_potential);
        let dissipation = dag.add(dissipation);
        Ok(WaterOutputs { force: drag, dissipation: Some(dissipation), hulls })
    }
}

/// Thrusters: the generalized force of a unit thrust, S_j . (c x d; d) along the path of the
/// carrying body, with c the point of attack and d the direction in the world (the
/// configuration matrix of eqs 35-37).
fn thruster_columns(dag: &mut Dag, tree: &Tree) -> Result<Vec<Vec<NodeId>>, String> {
    let (n, zero) = (tree.coordinates(), tree.zero);
    let (robot, states) = (tree.robot, tree.states);
    let mut thruster_columns = Vec::new();
    for thruster in &robot.thrusters {
        let (index, point) = thruster_point(dag, tree, thruster)?;
        let state = &states[index];
        let point = dag.pin3(point, &format!("{}_point", thruster.name));
        let along = dag.constant3(thruster.direction);
        let direction = dag.mat_vec3(&state.rotation, &along);
        let direction = dag.pin3(direction, &format!("{}_direction", thruster.name));
        let wrench = Force { n: dag.cross3(&point, &direction), f: direction };
        let mut column = vec![zero; n];
        for &j in &state.path {
            let (s_j, _) = tree.subspace(j)?;
            column[j] = dag.force_dot_motion(&wrench, &s_j);
        }
        thruster_columns.push(column);
    }

    Ok(thruster_columns)
}

/// A thruster's carrying link (its index) and its point of attack in the world.
fn thruster_point(dag: &mut Dag, tree: &Tree, thruster: &Thruster) -> Result<(usize, Vec3), String> {
    let index = tree
        .links
        .iter()
        .position(|l| l.body == Some(thruster.body))
        .ok_or("a thruster on a body that is not a link")?;
    let state = &tree.states[index];
    let mut local = [tree.zero; 3];
    for (a, e) in thruster.position.iter().enumerate() {
        local[a] = tree.reader.node(dag, &from_expr(e))?;
    }
    let offset = dag.mat_vec3(&state.rotation, &local);
    Ok((index, dag.add3(&state.position, &offset)))
}

/// Whole-robot quantities from the root composites: mass, centre of mass, momentum, and the
/// potential energy (gravity's added to the other potential energies).
fn whole_robot(
    dag: &mut Dag,
    tree: &Tree,
    composites: &[Option<Composite>],
    mut elastic_energy: Vec<NodeId>,
) -> WholeRobot {
    let (links, gravity) = (tree.links, tree.gravity);
    let roots: Vec<usize> = (0..links.len()).filter(|&i| links[i].parent.is_none()).collect();
    let mut total = dag.number(0.0);
    let mut first_moment = dag.zero3();
    let mut momentum = dag.zero_force();
    for &r in &roots {
        if let Some(c) = composites[r] {
            total = dag.add2(total, c.inertia.m);
            first_moment = dag.add3(&first_moment, &c.inertia.h);
            momentum = dag.add_force(&momentum, &c.momentum);
        }
    }
    let potential_energy = dag.mul2(gravity, first_moment[2]);
    elastic_energy.push(potential_energy);
    let potential_energy = dag.add(elastic_energy);
    let inverse_total = dag.powi(total, -1);
    let center_of_mass = dag.scale3(&first_moment, inverse_total);

    WholeRobot { total_mass: total, center_of_mass, momentum, potential_energy }
}

/// Where points sit on their links: the skin rings of soft sections already laid out (one
/// station per distinct xi) and their y and z axes scaled by a skin radius, shared by every
/// point on them; `label` keeps the pinned names of two sets of points apart.
struct Placements {
    label: &'static str,
    link_of_body: Vec<usize>,
    rings: HashMap<(usize, u64), Station>,
    labels: HashMap<(usize, u64), String>,
    scaled_axes: HashMap<(usize, u64, NodeId), (Vec3, Vec3)>,
}

/// A point placed on its link: the frame carrying it (rotation, origin, velocity), its offset
/// from that origin in world axes, the frame's own columns (a ring's section coordinates) and
/// the ring's radius (`None` on a rigid body).
struct Placement {
    link: usize,
    rotation: Mat3,
    origin: Vec3,
    frame_velocity: Motion,
    local: Vec3,
    own: Vec<(usize, Motion)>,
    bound: Option<NodeId>,
    /// The ring's label (`section1_ring3`), which its intermediates' names start with; `None`
    /// on a rigid body.
    label: Option<String>,
}

impl Placements {
    fn new(tree: &Tree, label: &'static str) -> Self {
        let mut link_of_body = vec![0; tree.robot.bodies.len()];
        for (index, link) in tree.links.iter().enumerate() {
            if let Some(b) = link.body {
                link_of_body[b] = index;
            }
        }
        Placements { label, link_of_body, rings: HashMap::new(), labels: HashMap::new(), scaled_axes: HashMap::new() }
    }

    fn place(&mut self, dag: &mut Dag, tree: &Tree, point: &ContactPoint) -> Result<Placement, String> {
        let (links, states, reader, pieces) = (tree.links, tree.states, &tree.reader, tree.pieces);
        let index = self.link_of_body[point.body];
        let state = &states[index];
        let tag = self.label;
        match (&point.skin, &state.section) {
            (Some(skin), Some(section)) => {
                let key = (index, skin.xi.to_bits());
                // Skin points sit on rings: stations along their section, one per distinct xi.
                if !self.rings.contains_key(&key) {
                    let pieces = pieces.as_ref().ok_or("a soft section without its local pieces")?;
                    let label = format!(
                        "{}_{tag}{}",
                        links[index].name,
                        self.rings.keys().filter(|(l, _)| *l == index).count()
                    );
                    let station = section.frame.station(dag, pieces, skin.xi, &label, false)?;
                    self.rings.insert(key, station);
                    self.labels.insert(key, label);
                }
                let ring = &self.rings[&key];
                let radius = reader.node(dag, &from_expr(&skin.radius))?;
                // The ring's y and z axes scaled by the skin radius, pinned: each point around
                // it is then origin + cos a y + sin a z, six products instead of the radius
                // times every product.
                let axes = match self.scaled_axes.get(&(key.0, key.1, radius)) {
                    Some(axes) => *axes,
                    None => {
                        let label = format!(
                            "{}_{tag}{}",
                            links[index].name,
                            self.scaled_axes.keys().filter(|(l, _, _)| *l == index).count()
                        );
                        let y = dag.scale3(&Dag::column3(&ring.rotation, 1), radius);
                        let z = dag.scale3(&Dag::column3(&ring.rotation, 2), radius);
                        let axes = (dag.pin3(y, &format!("{label}_skin_y")), dag.pin3(z, &format!("{label}_skin_z")));
                        self.scaled_axes.insert((key.0, key.1, radius), axes);
                        axes
                    }
                };
                let (sin, cos) = skin.angle.sin_cos();
                let (cos, sin) = (dag.number(snap_unit(cos)), dag.number(snap_unit(sin)));
                let along_y = dag.scale3(&axes.0, cos);
                let along_z = dag.scale3(&axes.1, sin);
                let local = dag.add3(&along_y, &along_z);
                let own: Vec<(usize, Motion)> =
                    section.frame.coordinates.iter().copied().zip(ring.columns.iter().copied()).collect();
                Ok(Placement {
                    link: index,
                    rotation: ring.rotation,
                    origin: ring.position,
                    frame_velocity: ring.velocity,
                    local,
                    own,
                    bound: Some(radius),
                    label: self.labels.get(&key).cloned(),
                })
            }
            _ => {
                let local = reader.vec3(dag, &contact_point_offset(point))?;
                Ok(Placement {
                    link: index,
                    rotation: state.rotation,
                    origin: state.position,
                    frame_velocity: state.velocity,
                    local: dag.mat_vec3(&state.rotation, &local),
                    own: Vec::new(),
                    bound: None,
                    label: None,
                })
            }
        }
    }

    /// The motion subspace columns on the placed point's path: a ring's own where it has
    /// them, the joints' elsewhere.
    fn path_columns(tree: &Tree, placement: &Placement) -> Result<Vec<(usize, Motion)>, String> {
        let state = &tree.states[placement.link];
        let mut path_columns = Vec::with_capacity(state.path.len());
        for &j in &state.path {
            let s_j = match placement.own.iter().find(|(k, _)| *k == j) {
                Some((_, column)) => *column,
                None => tree.subspace(j)?.0,
            };
            path_columns.push((j, s_j));
        }
        Ok(path_columns)
    }
}

/// The Jacobian columns S_j.v + S_j.w x p of a point at `at` moved by `path_columns`.
fn point_columns(dag: &mut Dag, n: usize, path_columns: &[(usize, Motion)], at: &Vec3) -> Vec<Vec3> {
    let mut columns = vec![dag.zero3(); n];
    for &(j, s_j) in path_columns {
        let turn = dag.cross3(&s_j.w, at);
        columns[j] = dag.add3(&s_j.v, &turn);
    }
    columns
}

/// Markers: their world positions and Jacobian columns, placed as contact points are.
fn markers(dag: &mut Dag, tree: &Tree) -> Result<(Vec<Vec3>, Vec<Vec<Vec3>>), String> {
    let n = tree.coordinates();
    let mut placements = Placements::new(tree, "marker_ring");
    let (mut positions, mut jacobians) = (Vec::new(), Vec::new());
    for marker in &tree.robot.markers {
        let placement = placements.place(dag, tree, marker)?;
        let position = dag.add3(&placement.origin, &placement.local);
        let position = dag.pin3(position, &format!("{}_marker_position", marker.name));
        let path_columns = Placements::path_columns(tree, &placement)?;
        jacobians.push(point_columns(dag, n, &path_columns, &position));
        positions.push(position);
    }
    Ok((positions, jacobians))
}

/// Contact points: positions, velocities, axes and Jacobian columns from their link's pose,
/// velocity and the motion subspaces on its path, and the frames they share.
fn contact_points(dag: &mut Dag, tree: &Tree) -> Result<ContactOutputs, String> {
    let n = tree.coordinates();
    let links = tree.links;
    let mut placements = Placements::new(tree, "ring");
    let mut contact_positions = Vec::new();
    let mut contact_velocities = Vec::new();
    let mut contact_axes = Vec::new();
    let mut contact_jacobians = Vec::new();
    let mut frame_keys: Vec<(usize, Option<u64>)> = Vec::new();
    let mut contact_frames: Vec<ContactFrame> = Vec::new();
    let mut contact_frame_of: Vec<usize> = Vec::new();
    for point in &tree.robot.contact_points {
        let placement = placements.place(dag, tree, point)?;
        let index = placement.link;
        let path_columns = Placements::path_columns(tree, &placement)?;
        let Placement { rotation, origin, frame_velocity, local, own, bound, label, .. } = placement;
        let position = dag.add3(&origin, &local);
        let position = dag.pin3(position, &format!("{}_position", point.name));
        let spin = dag.cross3(&frame_velocity.w, &position);
        let velocity = dag.add3(&frame_velocity.v, &spin);
        // The Jacobian column of coordinate j at a point p is S_j.v + S_j.w x p: once for
        // this point (the oracle compares these), once for any point of its frame.
        let columns_at = |dag: &mut Dag, at: &Vec3| point_columns(dag, n, &path_columns, at);
        let frame_key = (index, point.skin.as_ref().map(|s| s.xi.to_bits()));
        // A point joins the frame of the point before it when both ride the same body (and
        // ring); otherwise it opens a frame. A frame's points are then consecutive, which the
        // runtime relies on (`CONTACT_FRAME_START`); a body listed twice apart gets two frames.
        let frame = match frame_keys.last() {
            Some(last) if *last == frame_key => frame_keys.len() - 1,
            _ => {
                let name = match &point.skin {
                    Some(skin) => format!("{} ring at xi = {}", links[index].name, skin.xi),
                    None => links[index].name.clone(),
                };
                let at = [dag.input(Input::Point(0)), dag.input(Input::Point(1)), dag.input(Input::Point(2))];
                let columns = columns_at(dag, &at);
                let motion = path_columns.clone();
                let axis = Dag::column3(&rotation, 0);
                frame_keys.push(frame_key);
                let mut own: Vec<usize> = own.iter().map(|(j, _)| *j).collect();
                own.sort_unstable();
                contact_frames.push(ContactFrame { name, columns, motion, own, axis, origin, radius: bound, label });
                contact_frames.len() - 1
            }
        };
        // A ring's points lie on a circle of their radius about its origin; a ring with two
        // radii, or a rigid frame, has no bound.
        if contact_frames[frame].radius != bound {
            contact_frames[frame].radius = None;
        }
        contact_frame_of.push(frame);
        let columns = columns_at(dag, &position);
        contact_positions.push(position);
        contact_velocities.push(velocity);
        contact_axes.push(Dag::column3(&rotation, 0));
        contact_jacobians.push(columns);
    }

    Ok(ContactOutputs {
        positions: contact_positions,
        velocities: contact_velocities,
        axes: contact_axes,
        jacobians: contact_jacobians,
        frames: contact_frames,
        frame_of: contact_frame_of,
    })
}

/// What a viewer draws: each spec body's world frames, parents first (a rigid body's own
/// frame; a soft section's frames along its centre line at xi = k / CENTRE_LINE_SEGMENTS,
/// base to tip, whose positions are also the centre line), and each thruster's point.
fn drawing(dag: &mut Dag, tree: &Tree) -> Result<(Vec<Vec3>, Drawing), String> {
    let (robot, links, states, pieces) = (tree.robot, tree.links, tree.states, tree.pieces);
    let mut centre_line = Vec::new();
    let mut drawing = Drawing::default();
    // The drawn body of each link (virtual links draw nothing).
    let mut drawn_of_link: Vec<Option<usize>> = vec![None; links.len()];
    for (index, (link, state)) in links.iter().zip(states).enumerate() {
        // A virtual link's parent chain is followed up to the nearest drawn body.
        let mut above = link.parent;
        let parent = loop {
            match above {
                None => break None,
                Some(a) => match drawn_of_link[a] {
                    Some(d) => break Some(d),
                    None => above = links[a].parent,
                },
            }
        };
        let Some(body) = link.body else {
            continue;
        };
        let first_frame = drawing.frames.len();
        let section = match &state.section {
            Some(section) => {
                let pieces = pieces.as_ref().ok_or("a soft section without its local pieces")?;
                for k in 0..=CENTRE_LINE_SEGMENTS {
                    let xi = k as f64 / CENTRE_LINE_SEGMENTS as f64;
                    let label = format!("{}_centre{k}", link.name);
                    let station = section.frame.station(dag, pieces, xi, &label, false)?;
                    centre_line.push(station.position);
                    drawing.frames.push((station.rotation, station.position));
                }
                // Its index among the spec's sections, as `SOFT_SECTIONS` lists them.
                Some(robot.bodies[..body].iter().filter(|b| b.section.is_some()).count())
            }
            None => {
                drawing.frames.push((state.rotation, state.position));
                None
            }
        };
        drawn_of_link[index] = Some(drawing.bodies.len());
        drawing.bodies.push(DrawnBody {
            body,
            parent,
            section,
            first_frame,
            frames: drawing.frames.len() - first_frame,
        });
    }
    for thruster in &robot.thrusters {
        let (index, point) = thruster_point(dag, tree, thruster)?;
        let drawn = drawn_of_link[index].ok_or("a thruster on a body that is not drawn")?;
        drawing.thruster_points.push((drawn, point));
    }

    Ok((centre_line, drawing))
}

/// A sine or cosine of a skin angle with its round-off at the multiples of pi / 2 removed
/// (cos(pi / 2) is 6e-17, not 0), so that the products it would scale fold away.
fn snap_unit(x: f64) -> f64 {
    let nearest = x.round();
    if (x - nearest).abs() < 1e-15 {
        nearest
    } else {
        x
    }
}

/// Parent to child: each link's world pose, its joint's world motion subspace S and rate
/// v_parent x S, velocity and bias acceleration (at qdd = 0), and its body's inertia about the
/// world origin with momentum, Newton-Euler force, gyroscopic force and inertia rate.
fn forward_pass(
    dag: &mut Dag,
    reader: &AtomReader,
    links: &[Link],
    pieces: Option<&Pieces>,
    accelerations: bool,
) -> Result<Vec<LinkState>, String> {
    let mut states: Vec<LinkState> = Vec::with_capacity(links.len());
    for link in links {
        let name = &link.name;
        let mut local_rotation = [[0; 3]; 3];
        for (row, atoms) in local_rotation.iter_mut().zip(&link.rotation) {
            *row = reader.vec3(dag, atoms)?;
        }
        let local_translation = reader.vec3(dag, &link.translation)?;
        let (rotation, position, velocity, bias, mut path, parent_rotation) = match link.parent {
            None => {
                let zero = dag.zero_motion();
                (local_rotation, local_translation, zero, zero, Vec::new(), None)
            }
            Some(p) => {
                let parent = &states[p];
                let rotation = dag.mat_mul3(&parent.rotation, &local_rotation);
                let offset = dag.mat_vec3(&parent.rotation, &local_translation);
                let position = dag.add3(&parent.position, &offset);
                (
                    rotation,
                    position,
                    parent.velocity,
                    parent.bias_acceleration,
                    parent.path.clone(),
                    Some(parent.rotation),
                )
            }
        };
        let rotation = dag.pin_mat3(rotation, &format!("{name}_rotation"));
        let position = dag.pin3(position, &format!("{name}_position"));
        if let Some(section) = &link.section {
            let pieces = pieces.ok_or("a soft section without its local pieces")?;
            let base = Frame { rotation, position, velocity, bias };
            let state = section_state(dag, reader, pieces, link, section, base, accelerations)?;
            path.extend(section.coordinates.iter().copied());
            let zero = dag.zero_motion();
            states.push(LinkState {
                rotation: state.tip.rotation,
                position: state.tip.position,
                velocity: state.tip.velocity,
                bias_acceleration: state.tip.bias,
                joint: None,
                joint_bias: zero,
                path,
                body: None,
                section: Some(state),
            });
            continue;
        }
        let (velocity, bias, joint, joint_bias) = match &link.joint {
            None => (velocity, bias, None, dag.zero_motion()),
            Some(j) => {
                let local_axis = dag.constant3(j.axis);
                let axis = match parent_rotation {
                    Some(r) => dag.mat_vec3(&r, &local_axis),
                    None => local_axis,
                };
                let axis = dag.pin3(axis, &format!("{name}_axis"));
                let subspace = match j.kind {
                    LinkJointKind::Revolute => Motion { w: axis, v: dag.cross3(&position, &axis) },
                    LinkJointKind::Prismatic => Motion { w: dag.zero3(), v: axis },
                };
                let subspace = dag.pin_motion(subspace, &format!("{name}_subspace"));
                // A joint axis fixed in the parent moves with it: dS/dt = v_parent x S.
                let subspace_rate = dag.motion_cross(&velocity, &subspace);
                let subspace_rate = dag.pin_motion(subspace_rate, &format!("{name}_subspace_rate"));
                let rate = dag.input(Input::Qd(j.coordinate));
                let joint_velocity = dag.scale_motion(&subspace, rate);
                let velocity = dag.add_motion(&velocity, &joint_velocity);
                let joint_bias = dag.scale_motion(&subspace_rate, rate);
                let mut bias = dag.add_motion(&bias, &joint_bias);
                if accelerations {
                    let acceleration = dag.input(Input::Acceleration(j.coordinate));
                    let joint_acceleration = dag.scale_motion(&subspace, acceleration);
                    bias = dag.add_motion(&bias, &joint_acceleration);
                }
                path.push(j.coordinate);
                (
                    dag.pin_motion(velocity, &format!("{name}_velocity")),
                    dag.pin_motion(bias, &format!("{name}_{}", if accelerations { "acceleration" } else { "bias" })),
                    Some((j.coordinate, subspace, subspace_rate)),
                    joint_bias,
                )
            }
        };
        let body = match &link.inertia {
            None => None,
            Some(inertia) => {
                let mass = reader.node(dag, &inertia.mass)?;
                let local_com = reader.vec3(dag, &inertia.center_of_mass)?;
                let mut local_inertia = [[0; 3]; 3];
                for a in 0..3 {
                    for b in 0..3 {
                        local_inertia[a][b] = reader.node(dag, &inertia.inertia[a][b])?;
                    }
                }
                let frame = Frame { rotation, position, velocity, bias };
                Some(body_state(dag, name, mass, &local_com, &local_inertia, &frame))
            }
        };
        states.push(LinkState {
            rotation,
            position,
            velocity,
            bias_acceleration: bias,
            joint,
            joint_bias,
            path,
            body,
            section: None,
        });
    }
    Ok(states)
}

/// Child to parent: the composite of every subtree that has a body (None for links with no
/// body below them), and for soft sections the composite of what hangs from the tip.
fn composites(dag: &mut Dag, links: &[Link], states: &[LinkState]) -> (Vec<Option<Composite>>, Vec<Option<Composite>>) {
    let mut composites: Vec<Option<Composite>> = vec![None; links.len()];
    let mut beyond: Vec<Option<Composite>> = vec![None; links.len()];
    let sum = |dag: &mut Dag, a: Option<Composite>, b: &Composite| match a {
        None => *b,
        Some(other) => Composite {
            inertia: dag.add_inertia(&other.inertia, &b.inertia),
            force: dag.add_force(&other.force, &b.force),
            momentum: dag.add_force(&other.momentum, &b.momentum),
            rate: dag.add_inertia_rate(&other.rate, &b.rate),
        },
    };
    let mut own: Vec<Option<Composite>> = Vec::with_capacity(states.len());
    for s in states {
        let mut slices: Option<Composite> = None;
        if let Some(section) = &s.section {
            // Momentum and inertia rate (diagnostics, Christoffel C) from the world slices;
            // inertia and force as the section sums them, in its base frame.
            for slice in &section.slices {
                let b = &slice.body;
                slices = Some(sum(
                    dag,
                    slices,
                    &Composite { inertia: b.inertia, force: b.force, momentum: b.momentum, rate: b.rate },
                ));
            }
            slices = slices.map(|c| Composite { inertia: section.slices_inertia, force: section.slices_force, ..c });
        }
        own.push(match &s.body {
            Some(b) => Some(Composite { inertia: b.inertia, force: b.force, momentum: b.momentum, rate: b.rate }),
            None => slices,
        });
    }
    for index in (0..links.len()).rev() {
        let name = &links[index].name;
        if let Some(tip) = beyond[index].take() {
            beyond[index] = Some(Composite {
                inertia: dag.pin_inertia(tip.inertia, &format!("{name}_tip_composite_inertia")),
                force: dag.pin_force(tip.force, &format!("{name}_tip_composite_force")),
                momentum: dag.pin_force(tip.momentum, &format!("{name}_tip_composite_momentum")),
                rate: dag.pin_inertia_rate(tip.rate, &format!("{name}_tip_composite_rate")),
            });
        }
        let Some(total) = own[index].take() else { continue };
        let composite = Composite {
            inertia: dag.pin_inertia(total.inertia, &format!("{name}_composite_inertia")),
            force: dag.pin_force(total.force, &format!("{name}_composite_force")),
            momentum: dag.pin_force(total.momentum, &format!("{name}_composite_momentum")),
            rate: dag.pin_inertia_rate(total.rate, &format!("{name}_composite_rate")),
        };
        composites[index] = Some(composite);
        if let Some(p) = links[index].parent {
            own[p] = Some(sum(dag, own[p].take(), &composite));
            if links[p].section.is_some() {
                beyond[p] = Some(sum(dag, beyond[p].take(), &composite));
            }
        }
    }
    (composites, beyond)
}

/// Forward dynamics by the articulated-body algorithm (Featherstone), in world coordinates:
/// child to parent, each link's articulated inertia I^A and bias force p^A (its body's
/// v x* I v, plus what its children pass on: I^a = I^A - U U'/D and
/// p^a = p^A + I^a c + U u / D, with U = I^A S, D = S . U, u = tau - S . p^A and c the joint's
/// velocity-product acceleration); then parent to child, a = a_parent + c,
/// qdd = (u - U . a) / D, a += S qdd, from the base's fictitious upward acceleration g.
/// O(n) with no matrix to factorise. The articulated inertias, U and 1/D depend on the
/// position only, so they are cached with the poses.
fn articulated_body(
    dag: &mut Dag,
    links: &[Link],
    states: &[LinkState],
    gravity: NodeId,
    coordinates: usize,
) -> ArticulatedBody {
    let count = links.len();
    let mut inertia: Vec<Option<Articulated>> = vec![None; count];
    let mut bias: Vec<Option<Force>> = vec![None; count];
    for (index, state) in states.iter().enumerate() {
        if let Some(body) = &state.body {
            inertia[index] = Some(dag.articulated_from(&body.inertia));
            bias[index] = Some(body.gyroscopic);
        }
    }
    // Per link with a joint: (U, 1/D, u).
    let mut projected: Vec<Option<(Force, usize, usize)>> = vec![None; count];
    let mut pivots = Vec::new();
    for index in (0..count).rev() {
        let name = &links[index].name;
        let (Some(articulated), Some(force)) = (inertia[index].take(), bias[index].take()) else { continue };
        let articulated = dag.pin_articulated(articulated, &format!("{name}_articulated"));
        let force = dag.pin_force(force, &format!("{name}_articulated_bias"));
        let (passed_inertia, passed_force) = match states[index].joint {
            None => (articulated, force),
            Some((k, s, _)) => {
                let u_vector = dag.articulated_times(&articulated, &s);
                let u_vector = dag.pin_force(u_vector, &format!("{name}_articulated_subspace"));
                let pivot = dag.force_dot_motion(&u_vector, &s);
                let pivot = dag.pin_named(pivot, format!("{name}_pivot"));
                pivots.push(pivot);
                let inverse = dag.powi(pivot, -1);
                let inverse = dag.pin_named(inverse, format!("{name}_inverse_pivot"));
                let applied = dag.input(Input::Force(k));
                let along = dag.force_dot_motion(&force, &s);
                let remaining = dag.sub(applied, along);
                let remaining = dag.pin_named(remaining, format!("{name}_remaining_force"));
                projected[index] = Some((u_vector, inverse, remaining));
                let reduced = dag.articulated_reduce(&articulated, &u_vector, inverse);
                let reduced = dag.pin_articulated(reduced, &format!("{name}_articulated_passed"));
                let carried = dag.articulated_times(&reduced, &states[index].joint_bias);
                let share = dag.mul2(remaining, inverse);
                let pushed = dag.scale_force(&u_vector, share);
                let sum = dag.add_force(&force, &carried);
                (reduced, dag.add_force(&sum, &pushed))
            }
        };
        if let Some(p) = links[index].parent {
            inertia[p] = Some(match inertia[p].take() {
                None => passed_inertia,
                Some(existing) => dag.add_articulated(&existing, &passed_inertia),
            });
            bias[p] = Some(match bias[p].take() {
                None => passed_force,
                Some(existing) => dag.add_force(&existing, &passed_force),
            });
        }
    }
    let z = dag.number(0.0);
    let mut accelerations = vec![z; coordinates];
    let mut acceleration: Vec<Motion> = Vec::with_capacity(count);
    for (index, state) in states.iter().enumerate() {
        let name = &links[index].name;
        let parent = match links[index].parent {
            Some(p) => acceleration[p],
            // The base accelerates upward at g instead of gravity pulling every body down.
            None => Motion { w: [z, z, z], v: [z, z, gravity] },
        };
        let a = match (state.joint, projected[index]) {
            (Some((k, s, _)), Some((u_vector, inverse, remaining))) => {
                let a = dag.add_motion(&parent, &state.joint_bias);
                let resisted = dag.force_dot_motion(&u_vector, &a);
                let free = dag.sub(remaining, resisted);
                let qdd = dag.mul2(free, inverse);
                let qdd = dag.pin_named(qdd, format!("{name}_acceleration"));
                accelerations[k] = qdd;
                let driven = dag.scale_motion(&s, qdd);
                dag.add_motion(&a, &driven)
            }
            _ => parent,
        };
        acceleration.push(dag.pin_motion(a, &format!("{name}_spatial_acceleration")));
    }
    // The factorisation the runtime solves many right-hand sides with: each joint's S, U and
    // 1/D and the nearest joint above it.
    // A massless subtree has no pivots; then there is no factorisation to keep (the parents'
    // indices count every joint).
    let mut joints = Vec::new();
    for (index, k, parent) in joint_order(links, states) {
        let (Some((_, s, _)), Some((u_vector, inverse, _))) = (states[index].joint, projected[index]) else {
            joints.clear();
            break;
        };
        joints.push(ArticulatedJoint {
            coordinate: k,
            parent,
            subspace: motion_components(&s),
            projected: force_components(&u_vector),
            inverse_pivot: inverse,
        });
    }
    ArticulatedBody { accelerations, pivots, joints }
}
