//! The spec file format: serde types mirroring the book's spec format (docs/src/reference/spec-format.md), with source spans
//! kept on every field that validation may reject.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A number, or an expression over the spec's `[parameters]` (e.g. `"link_length / 2"`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Expression(String),
}

/// Deserialized by hand rather than as an untagged enum, so that a wrong type gets "invalid
/// type: boolean `true`, expected a number or ..." at its line and field instead of "data
/// did not match any variant".
struct ValueVisitor;

const VALUE_EXPECTED: &str = "a number or a string expression over the [parameters]";

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(VALUE_EXPECTED)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Expression(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// A 3-vector of values.
pub type Vector = [Spanned<Value>; 3];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub description: Spanned<String>,
    #[serde(default)]
    pub parameters: BTreeMap<String, Spanned<f64>>,
    /// Required unless `[import]` gives the base (validation fills it in from there).
    #[serde(default)]
    pub base: Option<Spanned<Base>>,
    /// A URDF whose links become the robot's rigid tree (codegen/src/urdf.rs).
    #[serde(default)]
    pub import: Option<Spanned<Import>>,
    #[serde(default)]
    pub bodies: Vec<Spanned<Body>>,
    #[serde(default)]
    pub contact_points: Vec<Spanned<ContactPoints>>,
    /// Named points that are tracked but never touch anything (motion-capture markers).
    #[serde(default)]
    pub markers: Vec<Spanned<Marker>>,
    #[serde(default)]
    pub environment: Option<Spanned<Environment>>,
    #[serde(default)]
    pub actuators: Vec<Spanned<Actuator>>,
    #[serde(default)]
    pub controller: Option<Spanned<Controller>>,
    #[serde(default)]
    pub gait: Option<Spanned<Gait>>,
    /// The coordinates the robot's controllers read generalized forces in, where the paper
    /// writes them in others than the model's.
    #[serde(default)]
    pub controller_coordinates: Option<Spanned<ControllerCoordinates>>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// The root body is welded to the world.
    Fixed,
    /// The root body moves in a plane: two translations and one rotation.
    Planar,
    /// The root body moves freely: x, y, z and Z-Y-X angles.
    Spatial,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Plane {
    Xz,
    Xy,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    pub kind: Spanned<BaseKind>,
    /// Plane of motion for planar robots (and for fixed-base robots whose joints all turn
    /// about the plane normal).
    pub plane: Option<Spanned<Plane>>,
    /// The root body.
    pub body: Spanned<String>,
    /// Initial base pose: planar [x, z or y, angle]; spatial [x, y, z, yaw, pitch, roll].
    #[serde(default)]
    pub initial: Vec<Spanned<f64>>,
}

/// `[import]`: a URDF's links and joints as the robot's rigid tree; the spec adds the rest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// The URDF file, relative to the spec's folder.
    pub urdf: Spanned<String>,
    /// Put before every imported link's name (default none).
    #[serde(default)]
    pub prefix: Option<Spanned<String>>,
    /// The link to import from, with its subtree (default the URDF's one root link).
    #[serde(default)]
    pub root: Option<Spanned<String>>,
    /// Links left out, each with everything that hangs from it (a gripper, to mount a tool
    /// of the spec's own in its place).
    #[serde(default)]
    pub exclude: Vec<Spanned<String>>,
    /// How the root link moves (default fixed).
    #[serde(default)]
    pub base: Option<Spanned<BaseKind>>,
    /// Plane of motion of a planar base.
    #[serde(default)]
    pub plane: Option<Spanned<Plane>>,
    /// Initial base coordinates, as `[base] initial`.
    #[serde(default)]
    pub initial: Vec<Spanned<f64>>,
    /// Contact points seeded from the URDF's collision primitives.
    #[serde(default)]
    pub collision_points: Option<Spanned<CollisionPoints>>,
}

/// `[import] collision_points`: which links' collision primitives seed contact points.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollisionPoints {
    /// The links (default: every imported link).
    #[serde(default)]
    pub links: Vec<Spanned<String>>,
    /// The shapes (default: box, sphere and cylinder).
    #[serde(default)]
    pub shapes: Vec<Spanned<CollisionShape>>,
}

/// A URDF collision primitive that seeds contact points.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollisionShape {
    /// Its eight corners.
    Box,
    /// 42 points on it.
    Sphere,
    /// Eight points around each rim.
    Cylinder,
}

impl CollisionShape {
    pub fn name(self) -> &'static str {
        match self {
            CollisionShape::Box => "box",
            CollisionShape::Sphere => "sphere",
            CollisionShape::Cylinder => "cylinder",
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    /// A rigid link.
    Rigid,
    /// A rigid module (propulsion module, head): physically a rigid body with extra
    /// payload such as thrusters.
    RigidModule,
    /// A constant-curvature soft section driven by actuator lengths.
    ConstantCurvature,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    Revolute,
    Prismatic,
    Fixed,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    pub name: Spanned<String>,
    #[serde(default = "rigid")]
    pub kind: Spanned<BodyKind>,
    /// Parent body name; absent only for the base body.
    pub parent: Option<Spanned<String>>,
    /// Joint to the parent; absent only for the base body.
    pub joint: Option<Spanned<JointKind>>,
    /// Joint axis in the parent frame (unit vector). Defaults to the plane normal in planar
    /// robots.
    pub axis: Option<Spanned<[f64; 3]>>,
    /// Position of the joint (the body frame's origin) in the parent frame (m).
    pub origin: Option<Vector>,
    /// Fixed rotation of the body frame relative to the parent frame, applied before the
    /// joint: [roll, pitch, yaw] about x, y, z (rad).
    pub rotation: Option<Spanned<[f64; 3]>>,
    /// Initial joint coordinate (rad or m).
    #[serde(default)]
    pub initial: Option<Spanned<f64>>,
    pub mass: Spanned<Value>,
    /// Centre of mass in the body frame (m).
    pub center_of_mass: Option<Vector>,
    /// Rotational inertia about the centre of mass in the body frame (kg m^2): a single
    /// value (about the plane normal, planar robots), [ixx, iyy, izz], or
    /// [ixx, iyy, izz, ixy, ixz, iyz]. Required for rigid bodies; soft sections take their
    /// slices' inertia from `section.disc_radius`.
    pub inertia: Option<Spanned<Inertia>>,
    /// Constant-curvature sections: geometry, elasticity and quadrature.
    #[serde(default)]
    pub section: Option<Spanned<SectionSpec>>,
    /// In water: the body's hull, whose displaced volume, added mass and drag the water
    /// acts through.
    #[serde(default)]
    pub hydrodynamics: Option<Spanned<HydrodynamicsSpec>>,
    /// One body per index value (see [`Repeat`]).
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// `repeat = { index = "k", from = 2, to = 20 }` on an entry of `bodies`, `contact_points`
/// or `actuators`: the entry stands for one entry per k in from..=to, in place, each with the
/// `{...}` placeholders of its strings evaluated (codegen/src/repeat.rs).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// The index's name in placeholders (default `i`).
    pub index: Option<Spanned<String>>,
    pub from: Spanned<i64>,
    /// Inclusive.
    pub to: Spanned<i64>,
}

/// Which constant-curvature model a soft section follows.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SectionModel {
    /// Three actuator lengths: bending in any direction and extension (3 coordinates).
    Extensible,
    /// Bending in any direction at constant length (2 coordinates).
    Inextensible,
    /// Bending in one plane (1 coordinate).
    Planar,
}

impl SectionModel {
    /// Number of coordinates.
    pub fn coordinates(self) -> usize {
        match self {
            SectionModel::Extensible => 3,
            SectionModel::Inextensible => 2,
            SectionModel::Planar => 1,
        }
    }
}

/// A constant-curvature section. Extensible sections are driven by three actuators at
/// `actuator_radius` from the neutral axis and their coordinates are the actuators' length
/// changes (m); inextensible and planar sections keep their length and their coordinates are
/// curvatures (1/m).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    pub model: Spanned<SectionModel>,
    /// Length of the unactuated section (m).
    pub rest_length: Spanned<Value>,
    /// Distance of the actuators from the neutral axis (m); extensible sections only.
    pub actuator_radius: Option<Spanned<Value>>,
    /// Angles of the three actuators about the section's x axis, from +y (rad); default
    /// 0, 2 pi / 3, 4 pi / 3; extensible sections only.
    pub actuator_angles: Option<Spanned<Vec<Spanned<Value>>>>,
    /// Radius of the thin discs the section is sliced into (their rotational inertia) (m).
    /// Without it, the body's `inertia = [ixx, iyy, izz]` states the slices' rotational
    /// inertia summed over the section.
    pub disc_radius: Option<Spanned<Value>>,
    /// Elastic stiffness of each coordinate: N/m for actuator lengths, N m^3 for
    /// curvatures (energy 1/2 K q^2). Required unless `material` gives the elasticity.
    pub stiffness: Option<Spanned<Value>>,
    /// Viscous damping of each coordinate: N s/m for actuator lengths, N m^3 s for
    /// curvatures.
    pub damping: Spanned<Value>,
    /// Gauss-Legendre nodes over the section for M, C, G (default 8).
    pub quadrature: Option<Spanned<i64>>,
    /// Initial coordinates: three length changes (m), or two or one curvatures (1/m).
    pub initial: Option<Spanned<Vec<f64>>>,
    /// Extensible sections: the actuators' visco-hyperelastic material (instead of
    /// `stiffness`).
    pub material: Option<Spanned<MaterialSpec>>,
}

/// A visco-hyperelastic actuator material (004, eqs 19-26): each actuator's silicone, of
/// cross-section `area`, stretched uniaxially by lambda = 1 + l / L0, stores
/// area L0 W(lambda) with the Yeoh energy W = sum_p C_p0 (I1 - 3)^p, I1 = lambda^2 + 2 /
/// lambda; a power-law viscous stress eta_0 |rate|^(k - 1) rate of the strain rate
/// damps it, with the viscosity held at its value at `rate_scale` below that rate.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialSpec {
    /// [C10, C20, C30] (J/m^3).
    pub yeoh: Spanned<Vec<Spanned<Value>>>,
    /// Silicone cross-section per actuator (m^2).
    pub area: Spanned<Value>,
    /// eta_0 (Pa s^k); without it the material is purely elastic.
    pub consistency: Option<Spanned<Value>>,
    /// k, the power-law index (dimensionless, > 0).
    pub power_index: Option<Spanned<Value>>,
    /// The strain rate (1/s, > 0) below which the viscosity stops growing.
    pub rate_scale: Option<Spanned<Value>>,
}

/// A body's hull in water: a circular cylinder along the body frame's x axis (rigid bodies),
/// or a soft section's own envelope of the given radius along its centre line.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HydrodynamicsSpec {
    /// Cylinder radius (m).
    pub radius: Spanned<Value>,
    /// Rigid bodies: the cylinder's length along x (m); sections use their rest length.
    pub length: Option<Spanned<Value>>,
    /// Rigid bodies: where the cylinder starts along x (m), default 0.
    pub start: Option<Spanned<Value>>,
    /// Rigid bodies: centre of buoyancy in the body frame (m), default the cylinder's centre.
    pub center_of_buoyancy: Option<Vector>,
}

/// Contact points on a soft section's skin: rings along xi, points around each ring.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkinGridSpec {
    /// Skin radius (m).
    pub radius: Spanned<Value>,
    /// Rings at xi = k / rings, k = 0 .. rings - 1.
    pub rings: Spanned<i64>,
    /// Points per ring at angles 2 pi k / around from +y about the section's x axis.
    pub around: Spanned<i64>,
    /// Add a ring at the section's tip (xi = 1).
    #[serde(default)]
    pub tip: bool,
}

fn rigid() -> Spanned<BodyKind> {
    Spanned::new(0..0, BodyKind::Rigid)
}

#[derive(Clone, Debug)]
pub enum Inertia {
    Scalar(Value),
    Vector(Vec<Value>),
}

/// By hand, like [`Value`], for a message that names what was expected.
struct InertiaVisitor;

impl<'de> serde::de::Visitor<'de> for InertiaVisitor {
    type Value = Inertia;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a value (planar robots) or a list of 3 or 6 values, each a number or a string expression")
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Inertia, E> {
        Ok(Inertia::Scalar(Value::Number(v)))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Inertia, E> {
        Ok(Inertia::Scalar(Value::Number(v as f64)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Inertia, E> {
        Ok(Inertia::Scalar(Value::Number(v as f64)))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Inertia, E> {
        Ok(Inertia::Scalar(Value::Expression(v.to_string())))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Inertia, A::Error> {
        let mut values = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            // A wrong count is named by validation, with the field.
            values.push(v);
        }
        Ok(Inertia::Vector(values))
    }
}

impl<'de> Deserialize<'de> for Inertia {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Inertia, D::Error> {
        d.deserialize_any(InertiaVisitor)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ContactKind {
    /// Points listed one by one in the body frame.
    Points,
    /// A grid on the skin of a soft section (radius, angles, slices).
    SkinGrid,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactPoints {
    pub body: Spanned<String>,
    #[serde(default = "points_kind")]
    pub kind: Spanned<ContactKind>,
    /// Point positions in the body frame (m).
    #[serde(default)]
    pub positions: Vec<Vector>,
    /// Optional names, one per position.
    #[serde(default)]
    pub names: Vec<Spanned<String>>,
    #[serde(default)]
    pub grid: Option<Spanned<SkinGridSpec>>,
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// A named point of the robot that a sensor tracks (a motion-capture marker): generated
/// positions and Jacobians like a contact point's, but no contact force and no cost in the
/// contact kernels.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    pub name: Spanned<String>,
    pub body: Spanned<String>,
    /// On a rigid body: the point in the body frame (m).
    #[serde(default)]
    pub position: Option<Vector>,
    /// On a soft section: where along it, 0 at its base to 1 at its tip.
    #[serde(default)]
    pub xi: Option<Spanned<f64>>,
    /// On a soft section: about its x axis from +y (rad); default 0.
    #[serde(default)]
    pub angle: Option<Spanned<f64>>,
    /// On a soft section: distance from the centre line (m); default 0.
    #[serde(default)]
    pub radius: Option<Spanned<Value>>,
}

fn points_kind() -> Spanned<ContactKind> {
    Spanned::new(0..0, ContactKind::Points)
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TerrainKind {
    None,
    Flat,
    Stair,
    Pipe,
    Floor,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Medium {
    Air,
    Water,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Anisotropy {
    Isotropic,
    BodyAxis,
    WorldAxis,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Terrain {
    pub kind: Spanned<TerrainKind>,
    pub height: Option<Spanned<Value>>,
    pub position: Option<Spanned<Value>>,
    pub diameter: Option<Spanned<Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Friction {
    pub along: Spanned<Value>,
    pub across: Option<Spanned<Value>>,
    #[serde(default)]
    pub anisotropy: Option<Spanned<Anisotropy>>,
    /// Velocity scale of regularised friction (m/s); 0 = exact Coulomb sign.
    pub regularisation: Option<Spanned<Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Gravitational acceleration along -z (m/s^2); becomes the parameter `gravity`.
    pub gravity: Option<Spanned<f64>>,
    #[serde(default)]
    pub medium: Option<Spanned<Medium>>,
    pub terrain: Option<Spanned<Terrain>>,
    pub contact_stiffness: Option<Spanned<Value>>,
    pub contact_damping: Option<Spanned<Value>>,
    /// Hunt and Crossley's dissipation h (s/m), a damper k h depth depth_rate beside (or,
    /// with `contact_damping = 0`, instead of) eq 18's.
    pub contact_dissipation: Option<Spanned<Value>>,
    pub friction: Option<Spanned<Friction>>,
    /// With `medium = "water"`: the water's density and the hulls' coefficients.
    pub water: Option<Spanned<WaterSpec>>,
}

/// The water and the hydrodynamic coefficients every hull shares (Table 2 of 004 gives
/// the defaults). Each literal becomes a parameter of the same name (`water_density`,
/// `added_mass_coefficient`, ...).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaterSpec {
    /// rho (kg/m^3), default 1000.
    pub density: Option<Spanned<Value>>,
    /// C_a, added mass across the hull per displaced mass, default 1.
    pub added_mass_coefficient: Option<Spanned<Value>>,
    /// alpha, added mass along the hull per displaced mass, default 0.2.
    pub surge_added_mass: Option<Spanned<Value>>,
    /// C_D, the cross-flow drag coefficient, default 1.
    pub drag_coefficient: Option<Spanned<Value>>,
    /// beta, linear drag along the hull relative to across, default 0.2.
    pub surge_linear_drag: Option<Spanned<Value>>,
    /// Omega, linear roll drag per rho pi R^3 L C_D V, default 0.5.
    pub roll_linear_drag: Option<Spanned<Value>>,
    /// V, the reference speed of the linear drag (m/s), default 1.
    pub reference_speed: Option<Spanned<Value>>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorKind {
    /// A torque (revolute) or force (prismatic) on a joint coordinate.
    JointTorque,
    /// A pneumatic muscle actuator driven by pressure.
    PneumaticMuscle,
    /// A solenoid valve switching a chamber on or off.
    SolenoidValve,
    /// A propeller thruster on a rigid module.
    Thruster,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Actuator {
    pub kind: Spanned<ActuatorKind>,
    /// The body whose joint this actuator drives.
    pub joint: Spanned<String>,
    pub torque_limit: Option<Spanned<Value>>,
    /// Solenoid valves: how the driven coordinate responds to the valve state.
    pub response: Option<Spanned<Response>>,
    /// Pneumatic muscles on an inextensible section: their distance from the neutral axis
    /// (m). Extensible sections carry it in their `section`.
    pub radius: Option<Spanned<Value>>,
    /// Pneumatic muscles on an inextensible section: their angles about the section's x
    /// axis from +y (rad); default 0, 2 pi / 3, 4 pi / 3.
    pub angles: Option<Spanned<Vec<Spanned<Value>>>>,
    /// Pneumatic muscles: effective area, force per pressure (m^2).
    pub area: Option<Spanned<Value>>,
    /// Pneumatic muscles: the highest pressure they are rated for (bar).
    pub rated_pressure: Option<Spanned<Value>>,
    /// Pneumatic muscles: time constant of the first-order lag between commanded and
    /// reached pressure (s); 0 for none.
    pub pressure_lag: Option<Spanned<Value>>,
    /// Thrusters: the point of attack in the body frame (m).
    pub position: Option<Vector>,
    /// Thrusters: the direction of positive thrust in the body frame.
    pub direction: Option<Spanned<[f64; 3]>>,
    /// Thrusters: a name (default `thruster<k>`, k counting the thrusters from 1).
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// A linear response of a driven coordinate to its actuator's command u: first order
/// (one time constant, tau x' = gain u - x) or second order (two, eq 15 of
/// 001_6780a70913e94322); steady state gain u.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    pub time_constants: Spanned<Vec<Spanned<Value>>>,
    pub gain: Spanned<Value>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ControllerKind {
    JointPd,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Controller {
    /// Only `joint_pd` exists today; the field is required so that specs say which.
    #[allow(dead_code)]
    pub kind: Spanned<ControllerKind>,
    pub stiffness: Spanned<Value>,
    pub damping: Spanned<Value>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ControllerCoordinatesKind {
    /// A planar chain's relative angles, one body's angle and the centre of mass (003, eq 7).
    PlanarChain,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerCoordinates {
    /// Only `planar_chain` exists today; the field is required so that specs say which.
    #[allow(dead_code)]
    pub kind: Spanned<ControllerCoordinatesKind>,
    /// +1 or -1: the controller's joint angle over the model's.
    pub joint_sign: Spanned<f64>,
    /// Two contact points of one body: its angle is the direction from the first to the
    /// second.
    pub heading: Spanned<Vec<Spanned<String>>>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GaitKind {
    Serpenoid,
    TravellingWaveValves,
    Rolling,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gait {
    pub kind: Spanned<GaitKind>,
    /// Serpenoid only.
    pub amplitude: Option<Spanned<Value>>,
    pub temporal_frequency: Spanned<Value>,
    pub spatial_frequency: Spanned<Value>,
    pub offset: Option<Spanned<Value>>,
}
