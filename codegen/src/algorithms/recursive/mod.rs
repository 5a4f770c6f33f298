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

mod articulated;
mod composites;
mod drawing;
mod forward;
mod inverse_dynamics;
mod points;
mod rows;
mod water;

use articulated::*;
use composites::*;
use drawing::*;
use forward::*;
use inverse_dynamics::*;
use points::*;
use rows::*;
use water::*;

use crate::algorithms::hydrodynamics::{self, WaterNodes, WaterRows};
use crate::algorithms::section_pass::{section_rows, section_state, Pieces, Rows, SectionState, Station};
use crate::algorithms::spatial::{Articulated, Force, Mat3, Motion, Vec3};
use crate::algorithms::tree::{body_state, BodyState, Composite, Frame};
use crate::dag::equations::{
    ArticulatedBody, ArticulatedJoint, AtomReader, ContactFrame, DerivativeJoint, Drawing, DrawnBody, Equations,
    InverseDynamicsDerivatives,
};
use crate::dag::{Dag, Input, NodeId};
use crate::model::{ContactPoint, Robot, Thruster};
use crate::symbolic::from_expr;
use crate::symbolic::local::{contact_point_offset, Link, LinkJointKind};
use crate::symbolic::section::section_kinematics;
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
