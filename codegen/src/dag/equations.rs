//! Every output of a robot's generated module as nodes of one expression DAG: what emission
//! works from, whichever way the equations were derived (the recursive algorithms, or the
//! whole-body expansion kept as a test oracle), and the derivatives' outputs that
//! `differentiate.rs` adds to them.

use crate::algorithms::spatial::{Articulated, Motion};
use crate::dag::{Dag, Input, NodeId};
#[cfg(feature = "oracle")]
use crate::derive::Derived;
use crate::model::Robot;
use crate::spec::expr;
use crate::symbolic::{param_symbol, q_symbol, qd_symbol};
use symbolica::prelude::Atom;

/// What a viewer draws of a robot, as DAG nodes: world frames (rotation, row-major, and
/// origin), the bodies that own them, and each thruster's point of attack.
#[derive(Default)]
pub struct Drawing {
    pub frames: Vec<([[NodeId; 3]; 3], [NodeId; 3])>,
    pub bodies: Vec<DrawnBody>,
    /// Per thruster: its point of attack in the world (its frame's rotation is its body's).
    pub thruster_points: Vec<(usize, [NodeId; 3])>,
}

/// A spec body as a viewer draws it: a rigid body by its frame, a soft section by frames
/// along its centre line, base to tip.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawnBody {
    /// Index into the spec's bodies.
    pub body: usize,
    /// The nearest body above it in the tree (an index into the drawn bodies).
    pub parent: Option<usize>,
    /// Its soft section's index among the sections.
    pub section: Option<usize>,
    pub first_frame: usize,
    pub frames: usize,
}

/// A robot's equations of motion and kinematics, as DAG nodes.
pub struct Equations {
    pub dag: Dag,
    pub mass_matrix: Vec<Vec<NodeId>>,
    pub coriolis: Vec<NodeId>,
    pub coriolis_matrix: Vec<Vec<NodeId>>,
    pub gravity: Vec<NodeId>,
    pub potential_energy: NodeId,
    pub contact_positions: Vec<[NodeId; 3]>,
    pub contact_velocities: Vec<[NodeId; 3]>,
    pub contact_axes: Vec<[NodeId; 3]>,
    /// Per contact point, per coordinate: the Jacobian column.
    pub contact_jacobians: Vec<Vec<[NodeId; 3]>>,
    /// Per frame that carries contact points (a link, or a skin ring of a section), per
    /// coordinate: the Jacobian column of a point of that frame at world position
    /// `Input::Point` (what codegen emits: points of one frame share one kernel).
    pub contact_frames: Vec<ContactFrame>,
    /// Per contact point: its frame.
    pub contact_frame_of: Vec<usize>,
    /// Per marker (`Robot::markers`): its world position, and per coordinate its Jacobian
    /// column. Empty in the expanded oracle, which derives no markers.
    pub marker_positions: Vec<[NodeId; 3]>,
    pub marker_jacobians: Vec<Vec<[NodeId; 3]>>,
    /// Whether points sharing a frame are served by the frame's motion (its world columns and
    /// axis, once per frame in contact: soft robots, whose ring columns cost a station each)
    /// rather than by a Jacobian function of the point's position (rigid robots, whose
    /// columns are cached reads).
    pub frame_motion: bool,
    pub center_of_mass: [NodeId; 3],
    pub total_mass: NodeId,
    pub linear_momentum: [NodeId; 3],
    pub angular_momentum: [NodeId; 3],
    /// Forward dynamics by the articulated-body algorithm, where derived (the recursive path
    /// of robots without soft sections).
    pub articulated: Option<ArticulatedBody>,
    /// Viscous damping force of each coordinate (soft sections; zero elsewhere).
    pub damping: Vec<NodeId>,
    /// d(damping)/d(qd) of each coordinate (the damping is per coordinate).
    pub damping_slope: Vec<NodeId>,
    /// Elastic stiffness of each coordinate, the diagonal of dG/dq's elastic part.
    pub stiffness: Vec<NodeId>,
    /// Points along soft sections' centre lines (for drawing), section by section.
    pub centre_line: Vec<[NodeId; 3]>,
    /// What a viewer draws: every body's world frames and each thruster's point.
    pub drawing: Drawing,
    /// Robots in water: the drag's generalized force, per coordinate (empty otherwise).
    pub hydrodynamic_force: Vec<NodeId>,
    /// Robots in water: the drag's dissipation function R(q, qd), with force -dR/dqd.
    pub hydrodynamic_dissipation: Option<NodeId>,
    /// Rigid bodies' hulls: name, added mass and linear drag in the body frame ([w; v]).
    pub hulls: Vec<(String, Articulated, Articulated)>,
    /// Per thruster, per coordinate: the generalized force of a unit thrust.
    pub thruster_columns: Vec<Vec<NodeId>>,
    /// The inverse dynamics M qdd + C qd + G per coordinate, qdd the inputs
    /// `Input::Acceleration` (Newton-Euler; empty where not derived).
    pub inverse_dynamics: Vec<NodeId>,
    /// dID/dq and dID/dqd in closed form, for trees of rigid links in air (the analytical
    /// derivatives of Newton-Euler, `recursive.rs`); None elsewhere, where the runtime
    /// assembles them from the tangents.
    pub inverse_dynamics_derivatives: Option<InverseDynamicsDerivatives>,
    /// The inverse dynamics' partial derivatives, once the derivative stage has run.
    pub derivatives: Option<Derivatives>,
}

/// The partial derivatives of the inverse dynamics of a rigid tree in factored form: per
/// joint, parents before children, the 6-vectors whose products give every entry
/// (`softgen_runtime::InverseDynamicsFactors` has the formulas), O(n) nodes for n^2 entries.
pub struct InverseDynamicsDerivatives {
    pub joints: Vec<DerivativeJoint>,
    /// dID/dq and dID/dqd as unrolled entries (products of the factors), for small trees.
    pub matrices: Option<(Vec<Vec<NodeId>>, Vec<Vec<NodeId>>)>,
}

/// One joint's factors of dID/dq and dID/dqd = 2 C, in world coordinates.
#[derive(Clone, Debug)]
pub struct DerivativeJoint {
    /// The joint's coordinate.
    pub coordinate: usize,
    /// The nearest joint above it (an index into `InverseDynamicsDerivatives::joints`).
    pub parent: Option<usize>,
    /// Motion vectors [w; v]: S, dS/dt and the acceleration shift c.
    pub subspace: [NodeId; 6],
    pub rate: [NodeId; 6],
    pub shift: [NodeId; 6],
    /// Force vectors [n; f]: I^c S and the rows and columns of dID/dq and C.
    pub projected: [NodeId; 6],
    pub position_row: [NodeId; 6],
    pub position_column: [NodeId; 6],
    pub coriolis_row: [NodeId; 6],
    pub coriolis_column: [NodeId; 6],
}

/// A frame carrying contact points.
pub struct ContactFrame {
    /// Readable name (the link, or the section and ring).
    pub name: String,
    pub columns: Vec<[NodeId; 3]>,
    /// The frame's world Plücker column (angular, linear about the world origin) of each
    /// coordinate that moves it.
    pub motion: Vec<(usize, Motion)>,
    /// The coordinates whose columns are the frame's own (a skin ring's section's: they
    /// differ from ring to ring), ascending; empty for a rigid frame, whose columns are all
    /// its body's.
    pub own: Vec<usize>,
    /// The frame's x axis in the world.
    pub axis: [NodeId; 3],
    /// The frame's origin in the world.
    pub origin: [NodeId; 3],
    /// The distance of every point of the frame from its origin, where one expression gives
    /// it (the radius of a skin ring); `None` for rigid frames.
    pub radius: Option<NodeId>,
    /// A skin ring's label (`section1_ring3`), which the names of its own intermediates start
    /// with; `None` for rigid frames.
    pub label: Option<String>,
}

/// The articulated-body algorithm's outputs: accelerations for the generalized forces
/// `Input::Force`, and the pivots D_i = S_i . I^A_i S_i (all positive exactly when M is
/// positive definite).
pub struct ArticulatedBody {
    pub accelerations: Vec<NodeId>,
    pub pivots: Vec<NodeId>,
    /// Every joint, parents before children: the factorisation of M the runtime applies
    /// M^-1 with (`softgen_runtime::ArticulatedFactor`).
    pub joints: Vec<ArticulatedJoint>,
}

/// One joint's share of the articulated-body factorisation of M, in world coordinates.
#[derive(Clone, Debug)]
pub struct ArticulatedJoint {
    /// The joint's coordinate.
    pub coordinate: usize,
    /// The nearest joint above it (an index into `ArticulatedBody::joints`).
    pub parent: Option<usize>,
    /// Its motion subspace S, [w; v].
    pub subspace: [NodeId; 6],
    /// U = I^A S, [n; f].
    pub projected: [NodeId; 6],
    /// 1 / (S . U).
    pub inverse_pivot: NodeId,
}

/// symbolica's printed form of an atom read back as an expression.
pub fn read_atom(a: &Atom) -> Result<expr::Expr, String> {
    let text = a.to_string();
    expr::parse(&text).map_err(|e| format!("cannot read symbolica output `{text}`: {e}"))
}

/// Reads symbolica atoms into DAG nodes over the robot's coordinates, rates and parameters.
pub struct AtomReader<'a> {
    pub robot: &'a Robot,
}

impl AtomReader<'_> {
    pub fn node(&self, dag: &mut Dag, a: &Atom) -> Result<NodeId, String> {
        let parsed = read_atom(a)?;
        let robot = self.robot;
        let n = robot.coordinates.len();
        let resolve = |s: &str| -> Option<Input> {
            for i in 0..n {
                if s == q_symbol(i) {
                    return Some(Input::Q(i));
                }
                if s == qd_symbol(i) {
                    return Some(Input::Qd(i));
                }
            }
            robot.parameters.iter().position(|p| param_symbol(&p.name) == s).map(Input::Param)
        };
        dag.build(&parsed, &resolve)
    }

    pub fn vec3(&self, dag: &mut Dag, v: &[Atom; 3]) -> Result<[NodeId; 3], String> {
        Ok([self.node(dag, &v[0])?, self.node(dag, &v[1])?, self.node(dag, &v[2])?])
    }
}

impl Equations {
    /// The whole-body expanded derivation read into a DAG (the oracle the recursive path is
    /// tested against).
    #[cfg(feature = "oracle")]
    pub fn from_expanded(robot: &Robot, derived: &Derived) -> Result<Equations, String> {
        let reader = AtomReader { robot };
        let mut dag = Dag::default();
        let row =
            |dag: &mut Dag, atoms: &[Atom]| atoms.iter().map(|a| reader.node(dag, a)).collect::<Result<Vec<_>, _>>();
        let matrix = |dag: &mut Dag, m: &[Vec<Atom>]| m.iter().map(|r| row(dag, r)).collect::<Result<Vec<_>, _>>();
        let mass_matrix = matrix(&mut dag, &derived.mass_matrix)?;
        let coriolis = row(&mut dag, &derived.coriolis)?;
        let coriolis_matrix = matrix(&mut dag, &derived.coriolis_matrix)?;
        let gravity = row(&mut dag, &derived.gravity)?;
        let potential_energy = reader.node(&mut dag, &derived.potential_energy)?;
        let points =
            |dag: &mut Dag, v: &[[Atom; 3]]| v.iter().map(|p| reader.vec3(dag, p)).collect::<Result<Vec<_>, _>>();
        let contact_positions = points(&mut dag, &derived.contact_positions)?;
        let contact_velocities = points(&mut dag, &derived.contact_velocities)?;
        let contact_axes = points(&mut dag, &derived.contact_axes)?;
        let contact_jacobians =
            derived.contact_jacobians.iter().map(|cols| points(&mut dag, cols)).collect::<Result<Vec<_>, _>>()?;
        let center_of_mass = reader.vec3(&mut dag, &derived.center_of_mass)?;
        let total_mass = reader.node(&mut dag, &derived.total_mass)?;
        let linear_momentum = reader.vec3(&mut dag, &derived.linear_momentum)?;
        let angular_momentum = reader.vec3(&mut dag, &derived.angular_momentum)?;
        Ok(Equations {
            dag,
            mass_matrix,
            coriolis,
            coriolis_matrix,
            gravity,
            potential_energy,
            contact_positions,
            contact_velocities,
            contact_axes,
            contact_jacobians,
            center_of_mass,
            total_mass,
            linear_momentum,
            angular_momentum,
            articulated: None,
            contact_frames: Vec::new(),
            contact_frame_of: Vec::new(),
            marker_positions: Vec::new(),
            marker_jacobians: Vec::new(),
            frame_motion: false,
            damping: Vec::new(),
            damping_slope: Vec::new(),
            stiffness: Vec::new(),
            centre_line: Vec::new(),
            drawing: Drawing::default(),
            hydrodynamic_force: Vec::new(),
            hydrodynamic_dissipation: None,
            hulls: Vec::new(),
            thruster_columns: Vec::new(),
            inverse_dynamics: Vec::new(),
            inverse_dynamics_derivatives: None,
            derivatives: None,
        })
    }

    /// How many contact points each contact frame carries.
    pub fn points_on_frame(&self) -> Vec<usize> {
        let mut count = vec![0usize; self.contact_frames.len()];
        for &f in &self.contact_frame_of {
            count[f] += 1;
        }
        count
    }

    /// The output nodes of each hot kernel: those a simulation step calls (M, C qd, G, the
    /// contact positions of every point, the axes and Jacobians of points in contact, forward
    /// dynamics) and the Christoffel C of implicit integrators. Position-level intermediates
    /// that two of them read are cached; diagnostics (energy, momenta, centre of mass, contact
    /// velocities, drawing) compute what they need themselves, so a soft robot's 310 skin
    /// points or its drawing points do not bloat every step's cache.
    pub fn kernels(&self) -> Vec<Vec<NodeId>> {
        let mut kernels = vec![
            self.mass_matrix.iter().flatten().copied().collect(),
            self.coriolis.clone(),
            self.coriolis_matrix.iter().flatten().copied().collect(),
            self.gravity.clone(),
            self.contact_positions.iter().flatten().copied().collect(),
        ];
        if !self.frame_motion {
            kernels.push(self.contact_axes.iter().flatten().copied().collect());
        }
        if let Some(a) = &self.articulated {
            kernels.push(a.accelerations.iter().chain(&a.pivots).copied().collect());
        }
        if !self.hydrodynamic_force.is_empty() {
            kernels.push(self.hydrodynamic_force.clone());
        }
        if !self.thruster_columns.is_empty() {
            kernels.push(self.thruster_columns.iter().flatten().copied().collect());
        }
        // A point alone on its frame has its own Jacobian kernel, which reads its position
        // (frame-motion robots take every point's Jacobian from its frame instead).
        let points_on_frame = self.points_on_frame();
        for (k, &f) in self.contact_frame_of.iter().enumerate() {
            if points_on_frame[f] == 1 && !self.frame_motion {
                kernels.push(self.contact_positions[k].to_vec());
            }
        }
        for frame in &self.contact_frames {
            match self.frame_motion {
                true => kernels.push(
                    frame.motion.iter().flat_map(|(_, m)| m.w.iter().chain(&m.v)).chain(&frame.axis).copied().collect(),
                ),
                false => kernels.push(frame.columns.iter().flatten().copied().collect()),
            }
        }
        kernels
    }

    /// Every output evaluated at one state, flattened in a fixed order with a label per
    /// group (for comparing two derivations).
    pub fn evaluate(&self, q: &[f64], qd: &[f64], tau: &[f64], params: &[f64]) -> Vec<(&'static str, Vec<f64>)> {
        let values = self.dag.evaluate(&|i| match i {
            Input::Q(k) => q[k],
            Input::Qd(k) => qd[k],
            Input::Param(k) => params[k],
            Input::Force(k) => tau[k],
            // Only the inverse dynamics and its derivatives read these; not outputs here.
            Input::Acceleration(_) | Input::PositionDirection(_) | Input::VelocityDirection(_) => 0.0,
            // Only the per-frame Jacobian kernels read points; they are not outputs here.
            Input::Point(_) => 0.0,
        });
        let pick = |ids: &mut dyn Iterator<Item = NodeId>| ids.map(|id| values[id]).collect::<Vec<f64>>();
        vec![
            ("mass matrix", pick(&mut self.mass_matrix.iter().flatten().copied())),
            ("coriolis force", pick(&mut self.coriolis.iter().copied())),
            ("coriolis matrix", pick(&mut self.coriolis_matrix.iter().flatten().copied())),
            ("gravity force", pick(&mut self.gravity.iter().copied())),
            ("potential energy", pick(&mut std::iter::once(self.potential_energy))),
            ("contact positions", pick(&mut self.contact_positions.iter().flatten().copied())),
            ("contact velocities", pick(&mut self.contact_velocities.iter().flatten().copied())),
            ("contact axes", pick(&mut self.contact_axes.iter().flatten().copied())),
            ("contact jacobians", pick(&mut self.contact_jacobians.iter().flatten().flatten().copied())),
            ("centre of mass", pick(&mut self.center_of_mass.iter().copied())),
            ("total mass", pick(&mut std::iter::once(self.total_mass))),
            ("linear momentum", pick(&mut self.linear_momentum.iter().copied())),
            ("angular momentum", pick(&mut self.angular_momentum.iter().copied())),
            ("accelerations", pick(&mut self.articulated.iter().flat_map(|a| a.accelerations.iter().copied()))),
            ("hydrodynamic force", pick(&mut self.hydrodynamic_force.iter().copied())),
            ("thruster columns", pick(&mut self.thruster_columns.iter().flatten().copied())),
        ]
    }
}

/// A group of coordinates (see [`crate::dag::differentiate::loop_groups`]) and, per own column of
/// a contact frame, its tangent along a direction of the group's coordinates.
pub type OwnColumnsGroup = (Vec<usize>, Vec<[NodeId; 6]>);

/// The derivatives of a robot's equations along a direction dq of the coordinates
/// (`Input::PositionDirection`) and dqd of the rates (`Input::VelocityDirection`): dID/dq of
/// the inverse dynamics ID(q, qd, qdd) = M qdd + C qd + G (qdd the inputs
/// `Input::Acceleration`) whole, and the tangents of the state-dependent pieces of the
/// generalized force the simulated system adds (the contact frames' columns, the water's
/// drag, the thrusters' columns), from which the runtime assembles the system's Jacobian.
/// The unit directions give the partial derivatives column by column. (dID/dqd is 2 C, the
/// Christoffel C's kernel, so it has none here.)
pub struct Derivatives {
    /// dID/dq whole, in groups of coordinates (see [`crate::dag::differentiate::loop_groups`]):
    /// each group's rows are the tangent along a direction of its coordinates alone, so every
    /// node they do not move folds to zero, and a unit direction per coordinate gives its
    /// column; `None` where the recursive stage gave the closed form
    /// (`Equations::inverse_dynamics_derivatives`).
    pub position_groups: Option<Vec<(Vec<usize>, Vec<NodeId>)>>,
    /// Per coordinate, the tangent along dq of its world Plücker column [w; v] as every
    /// contact frame beyond it sees it (its joint's, or its section's tip's); `None` where no
    /// contact frame is moved by it, or only as its own.
    pub coordinate_columns: Vec<Option<[NodeId; 6]>>,
    /// Per contact frame, the coordinates of its own that move it (a skin ring's section's,
    /// of `ContactFrame::own`), in the order of its motion.
    pub contact_frames_own: Vec<Vec<usize>>,
    /// Per contact frame, its own columns' tangents in the groups of [`crate::dag::differentiate::loop_groups`] (over the
    /// coordinates that move them): (the group's coordinates, per own column in the order of
    /// `contact_frames_own`, its tangent along a direction of the group's coordinates).
    pub contact_frames_own_groups: Vec<Vec<OwnColumnsGroup>>,
    /// The water's drag force along dq, per coordinate (empty in air).
    pub hydrodynamic_position: Vec<NodeId>,
    /// The water's drag force along dqd, per coordinate (empty in air).
    pub hydrodynamic_velocity: Vec<NodeId>,
    /// Per thruster, per coordinate: its unit thrust's generalized force along dq.
    pub thruster_columns: Vec<Vec<NodeId>>,
}
