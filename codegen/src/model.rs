//! The validated robot description that derivation works from: bodies in parent-first
//! order, generalized coordinates, contact points, parameters and defaults.

use crate::spec::expr::Expr;
use crate::spec::{Anisotropy, BaseKind, JointKind, Plane};

/// One numeric runtime parameter with its default.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub default: f64,
    pub doc: String,
}

/// What a generalized coordinate is: the runtime's own kind, which the generated modules
/// name in their coordinate tables.
pub use softgen_runtime::CoordinateKind;

#[derive(Clone, Debug, PartialEq)]
pub struct Coordinate {
    pub name: String,
    pub kind: CoordinateKind,
    pub meaning: String,
    pub actuated: bool,
    pub initial: f64,
}

/// How a body hangs from its parent.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub kind: JointKind,
    /// Unit axis in the parent frame.
    pub axis: [f64; 3],
    /// Index of the joint's coordinate (None for fixed joints).
    pub coordinate: Option<usize>,
}

/// Inertia about the centre of mass in the body frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Inertia {
    /// About the plane normal (planar robots).
    Planar(Expr),
    /// [ixx, iyy, izz, ixy, ixz, iyz].
    Full([Expr; 6]),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    pub name: String,
    pub parent: Option<usize>,
    pub joint: Option<Joint>,
    pub origin: [Expr; 3],
    /// Fixed [roll, pitch, yaw] (rad) before the joint.
    pub rotation: [f64; 3],
    pub mass: Expr,
    pub center_of_mass: [Expr; 3],
    pub inertia: Inertia,
    /// Soft sections: the constant-curvature model (`joint` is None; `rotation` mounts the
    /// section on its parent's tip).
    pub section: Option<SoftSection>,
    /// In water: the hull the water acts on.
    pub hull: Option<Hull>,
}

/// A body's hull in water: a circular cylinder of `radius` along the body frame's x axis
/// from `start` to `start + length` (a soft section: its envelope along the centre line at
/// rest length, displacing water slice by slice).
#[derive(Clone, Debug, PartialEq)]
pub struct Hull {
    pub radius: Expr,
    pub length: Expr,
    pub start: Expr,
    /// Centre of buoyancy in the body frame (rigid bodies).
    pub center_of_buoyancy: [Expr; 3],
}

/// The water a robot swims in, and the coefficients its hulls share (004, eqs 28-34), each
/// an expression over the parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Water {
    pub density: Expr,
    pub added_mass_coefficient: Expr,
    pub surge_added_mass: Expr,
    pub drag_coefficient: Expr,
    pub surge_linear_drag: Expr,
    pub roll_linear_drag: Expr,
    pub reference_speed: Expr,
}

/// How a constant-curvature section's coordinates set its length and bending.
#[derive(Clone, Debug, PartialEq)]
pub enum SectionKind {
    /// Three actuators at `actuator_radius` and `actuator_angles` from the neutral axis; the
    /// coordinates are their length changes (m).
    Extensible { actuator_radius: Expr, actuator_angles: [Expr; 3] },
    /// Constant length; the coordinates are the curvatures bending towards +y and +z (1/m).
    Inextensible,
    /// Constant length, bending in one plane: towards +y of the section's frame (towards +z
    /// in robots that move in the x-z plane); the coordinate is the curvature (1/m).
    Planar { towards_z: bool },
}

/// A constant-curvature section: its kind, geometry, slices, elasticity and damping.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftSection {
    pub kind: SectionKind,
    pub rest_length: Expr,
    /// The slices' rotational inertia about their own centres per unit mass, (x along the
    /// centre line): a thin disc of radius r gives (r^2 / 2, r^2 / 4, r^2 / 4).
    pub slice_inertia: [Expr; 3],
    pub elasticity: Elasticity,
    pub damping: Expr,
    /// The actuators' power-law viscosity, when their material has one.
    pub viscosity: Option<Viscosity>,
    /// Gauss-Legendre nodes over the section.
    pub quadrature: usize,
    /// Index of the first of its coordinates, and how many it has.
    pub first_coordinate: usize,
    pub coordinates: usize,
}

/// What stores a section's elastic energy.
#[derive(Clone, Debug, PartialEq)]
pub enum Elasticity {
    /// 1/2 K q^2 per coordinate.
    Linear(Expr),
    /// Per actuator of an extensible section: area L0 W(lambda), lambda = 1 + l / L0,
    /// W = sum_p C_p0 (lambda^2 + 2 / lambda - 3)^p (Yeoh, uniaxial and incompressible).
    Yeoh { coefficients: [Expr; 3], area: Expr },
}

/// Power-law viscous stress eta_0 |rate|^(k - 1) rate on each actuator's silicone of
/// cross-section `area`, the strain rate being l' / L0, with |rate|^2 regularised to
/// rate^2 + rate_scale^2 so the viscosity stays finite at rest.
#[derive(Clone, Debug, PartialEq)]
pub struct Viscosity {
    pub area: Expr,
    pub consistency: Expr,
    pub power_index: Expr,
    pub rate_scale: Expr,
}

/// Where a skin contact point sits on a soft section.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinPlacement {
    /// Along the section, in [0, 1].
    pub xi: f64,
    /// About the section's x axis, from +y (rad).
    pub angle: f64,
    /// Skin radius (m).
    pub radius: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ContactPoint {
    pub name: String,
    pub body: usize,
    /// In the body frame (rigid bodies).
    pub position: [Expr; 3],
    /// On a soft section's skin (then `position` is unused).
    pub skin: Option<SkinPlacement>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TerrainDefault {
    None,
    Flat { height: f64 },
    Stair { position: f64, height: f64 },
    Pipe { diameter: f64 },
    Floor,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnvironmentDefaults {
    pub terrain: TerrainDefault,
    pub contact_stiffness: f64,
    pub contact_damping: f64,
    pub contact_dissipation: f64,
    pub friction_along: f64,
    pub friction_across: f64,
    pub anisotropy: Anisotropy,
    pub friction_regularisation: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GaitDefaults {
    pub amplitude: f64,
    pub temporal_frequency: f64,
    pub spatial_frequency: f64,
    pub offset: f64,
    pub stiffness: f64,
    pub damping: f64,
    pub torque_limit: f64,
}

/// A solenoid valve pair driving one coordinate through a linear response (eq 15 of
/// 001_6780a70913e94322 with two time constants, first order with one); steady state
/// gain x command, the command being the valve state +-1.
#[derive(Clone, Debug, PartialEq)]
pub struct Valve {
    pub coordinate: usize,
    /// One or two time constants (s), parameter expressions.
    pub time_constants: Vec<Expr>,
    pub gain: Expr,
}

/// Three pneumatic muscles along a soft section, driven by pressure: each pulls on the
/// section's coordinates through the gradient of its length change with respect to them.
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleBank {
    /// The section's body name, first coordinate and coordinate count.
    pub body: String,
    pub first_coordinate: usize,
    pub coordinates: usize,
    /// `Some((radius, angles))` on an inextensible section (length change
    /// -r L0 (kappa_y cos psi + kappa_z sin psi)); `None` on an extensible one, whose
    /// coordinates are the muscles' length changes.
    pub placement: Option<(Expr, [Expr; 3])>,
    pub rest_length: Expr,
    pub area: Expr,
    pub rated_pressure: Expr,
    pub pressure_lag: Expr,
}

/// A thruster (a propeller) on a rigid body: a force along a fixed direction at a fixed
/// point of the body, its magnitude the command (N).
#[derive(Clone, Debug, PartialEq)]
pub struct Thruster {
    pub name: String,
    /// The carrying body.
    pub body: usize,
    /// Point of attack in the body frame (m).
    pub position: [Expr; 3],
    /// Unit direction of positive thrust in the body frame.
    pub direction: [f64; 3],
}

/// The travelling valve wave of eq 13: S_i = sign(sin(omega t + delay i) + offset).
#[derive(Clone, Debug, PartialEq)]
pub struct ValveGaitDefaults {
    pub temporal_frequency: f64,
    pub delay: f64,
    pub offset: f64,
}

/// What a parameter-dependent value of the spec must satisfy. The validator checks the
/// spec's own values; the generated `Params::check` checks the same rules again after
/// values are changed at run time (`--set`, a run configuration, stdin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// One value, > 0.
    Positive,
    /// One value, >= 0.
    NonNegative,
    /// Six values [ixx, iyy, izz, ixy, ixz, iyz] about a centre of mass: a rigid body's.
    RigidInertia,
    /// Three principal moments (summed over a section's slices): a rigid body's.
    PrincipalMoments,
    /// Values of any sign within their field's physical range: what an expression over
    /// parameters gives for an origin, a centre of mass or a length, checked again when the
    /// parameters change (`--set link_length=1e300` is refused, not run).
    InRange,
}

/// A rule on values of the spec, with the field it comes from (for the error message).
#[derive(Clone, Debug, PartialEq)]
pub struct ParameterRule {
    pub field: String,
    pub rule: Rule,
    pub values: Vec<Expr>,
}

/// A robot ready for derivation.
#[derive(Clone, Debug, PartialEq)]
pub struct Robot {
    pub name: String,
    pub description: String,
    /// Spec path as given to the generator (for the generated header).
    pub spec_path: String,
    /// The URDF the spec imports, as the spec names it (for the generated header).
    pub urdf: Option<String>,
    /// The command that regenerates the module (for the generated header).
    pub regenerate: String,
    pub base: BaseKind,
    pub plane: Option<Plane>,
    pub parameters: Vec<Parameter>,
    pub coordinates: Vec<Coordinate>,
    pub bodies: Vec<Body>,
    pub contact_points: Vec<ContactPoint>,
    /// Tracked points that never touch (motion-capture markers), placed as contact points are.
    pub markers: Vec<ContactPoint>,
    /// Coordinates driven by actuators, in actuator order.
    pub actuated: Vec<usize>,
    pub environment: EnvironmentDefaults,
    pub gait: Option<GaitDefaults>,
    /// Valve-driven coordinates, in actuator order.
    pub valves: Vec<Valve>,
    pub valve_gait: Option<ValveGaitDefaults>,
    /// Pneumatic muscle banks, in actuator order (three muscles each).
    pub muscles: Vec<MuscleBank>,
    /// Rules the parameters must keep when changed at run time.
    pub rules: Vec<ParameterRule>,
    /// The water, when the robot swims.
    pub water: Option<Water>,
    /// Thrusters, in actuator order.
    pub thrusters: Vec<Thruster>,
    /// The coordinates controllers read generalized forces in, if not the model's.
    pub controller_coordinates: Option<PlanarChainCoordinates>,
}

/// A planar chain's coordinates (003, eq 7): the actuated joints' angles times `joint_sign`,
/// the angle of the body carrying contact points `heading` (indices into the contact list),
/// and the centre of mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarChainCoordinates {
    pub joint_sign: f64,
    pub heading: (usize, usize),
}

impl Robot {
    /// Whether the robot is a chain of soft sections.
    pub fn is_soft(&self) -> bool {
        self.bodies.iter().any(|b| b.section.is_some())
    }

    /// The plane normal of a planar robot, the axis its bodies turn about: -y for the
    /// vertical x-z plane (so that a positive angle turns +x towards +z), +z for x-y.
    pub fn plane_normal(&self) -> Option<[f64; 3]> {
        self.plane.map(|p| match p {
            Plane::Xz => [0.0, -1.0, 0.0],
            Plane::Xy => [0.0, 0.0, 1.0],
        })
    }
}
