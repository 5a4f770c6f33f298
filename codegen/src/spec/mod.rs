//! The spec file format: serde types mirroring the book's spec format (docs/src/reference/spec-format.md), with source spans
//! kept on every field that validation may reject.
//!
//! The spec stage's files: its expressions (`expr.rs`), problems (`error.rs`), repeated
//! entries (`repeat.rs`), the URDF import (`urdf/`) and validation into a `Robot`
//! (`validate/`).

pub(crate) mod error;
pub(crate) mod expr;
pub(crate) mod repeat;
pub(crate) mod urdf;
pub(crate) mod validate;

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
    /// One line without newlines or other control characters, carried into the generated module's
    /// header and docs.
    pub description: Spanned<String>,
    /// Named runtime parameters with their defaults (`link_mass = 0.1`), which values anywhere in
    /// the spec may name and `--set` changes at run time. Names: letters, digits and `_`; not `pi`,
    /// `gravity`, `t`, function names, Rust keywords or `q0`-style names.
    #[serde(default)]
    pub parameters: BTreeMap<String, Spanned<f64>>,
    /// How the root body moves. Required unless `[import]` gives the base.
    #[serde(default)]
    pub base: Option<Spanned<Base>>,
    /// A URDF whose links become the robot's rigid tree (codegen/src/spec/urdf/).
    #[serde(default)]
    pub import: Option<Spanned<Import>>,
    /// The bodies, a tree through `parent`. Required unless `[import]` gives the tree.
    #[serde(default)]
    pub bodies: Vec<Spanned<Body>>,
    /// Points that touch the terrain: listed on a body, or a grid on a soft section's skin.
    #[serde(default)]
    pub contact_points: Vec<Spanned<ContactPoints>>,
    /// Named points that are tracked but never touch anything (motion-capture markers).
    #[serde(default)]
    pub markers: Vec<Spanned<Marker>>,
    /// Gravity, the medium, the terrain, and the contact and friction laws' defaults.
    #[serde(default)]
    pub environment: Option<Spanned<Environment>>,
    /// What drives the robot: joint torques, valve pairs, pneumatic muscles, thrusters.
    #[serde(default)]
    pub actuators: Vec<Spanned<Actuator>>,
    /// The joints' servo gains; required with a gait.
    #[serde(default)]
    pub controller: Option<Spanned<Controller>>,
    /// The robot's default gait.
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
    /// How the root body moves.
    pub kind: Spanned<BaseKind>,
    /// Plane of motion: required for `planar` bases, allowed for `fixed` ones (then every joint
    /// turns about the plane normal), refused for `spatial` ones. In `xz` angles turn +x towards +z
    /// (about -y); in `xy` +x towards +y (about +z). World z is up.
    pub plane: Option<Spanned<Plane>>,
    /// The root body.
    pub body: Spanned<String>,
    /// Initial base pose: planar [x, z or y, angle], spatial [x, y, z, yaw, pitch, roll] with R =
    /// Rz Ry Rx.
    /// Default: zeros.
    #[serde(default)]
    pub initial: Vec<Spanned<f64>>,
}

/// `[import]`: a URDF's links and joints as the robot's rigid tree; the spec adds the rest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// The URDF file, relative to the spec's folder; at most 16 MiB.
    pub urdf: Spanned<String>,
    /// Put before every imported link's name (to keep two imports, or a link and a spec body,
    /// apart).
    #[serde(default)]
    pub prefix: Option<Spanned<String>>,
    /// The link to import from, with its subtree.
    /// Default: the URDF's one root link (a URDF with several roots must name one).
    #[serde(default)]
    pub root: Option<Spanned<String>>,
    /// Links left out, each with everything that hangs from it (a gripper, to mount a tool of the
    /// spec's own in its place).
    #[serde(default)]
    pub exclude: Vec<Spanned<String>>,
    /// How the root link moves, as `[base] kind` (with `[import]` there is no `[base]`).
    /// Default: `"fixed"`.
    #[serde(default)]
    pub base: Option<Spanned<BaseKind>>,
    /// A planar base's plane, as `[base] plane`.
    #[serde(default)]
    pub plane: Option<Spanned<Plane>>,
    /// Initial base coordinates, as `[base] initial`.
    /// Default: zeros.
    #[serde(default)]
    pub initial: Vec<Spanned<f64>>,
    /// Contact points seeded from the URDF's collision primitives (see Importing a URDF in Spec
    /// format).
    #[serde(default)]
    pub collision_points: Option<Spanned<CollisionPoints>>,
}

/// `[import] collision_points`: which links' collision primitives seed contact points.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollisionPoints {
    /// The links whose primitives seed points; a link without a primitive of the asked shapes is an
    /// error.
    /// Default: every imported link.
    #[serde(default)]
    pub links: Vec<Spanned<String>>,
    /// The shapes that seed points.
    /// Default: box, sphere and cylinder.
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
    /// Unique among the bodies; `world` is reserved. Letters, digits and `_`, starting with a
    /// letter.
    pub name: Spanned<String>,
    /// What the body is; a soft section (`section` below) is a joint of the same tree as the rigid
    /// bodies.
    #[serde(default = "rigid")]
    pub kind: Spanned<BodyKind>,
    /// The parent body's name: required for every body but the base body, refused on it. Bodies
    /// form a tree (chains and branches, such as four limbs on one hub).
    pub parent: Option<Spanned<String>>,
    /// The joint to the parent: required for every body but the base body. Soft sections bend
    /// instead.
    pub joint: Option<Spanned<JointKind>>,
    /// Joint axis in the joint frame (the parent frame turned by `rotation`), a unit vector.
    /// Default: in planar robots the plane normal, which their revolute axes must be.
    pub axis: Option<Spanned<[f64; 3]>>,
    /// Position of the joint (the body frame's origin) in the parent frame (m).
    /// Default: zero.
    pub origin: Option<Vector>,
    /// Fixed rotation of the body frame relative to the parent frame, applied before the
    /// joint: [roll, pitch, yaw] about x, y, z (rad).
    pub rotation: Option<Spanned<[f64; 3]>>,
    /// Initial joint coordinate (rad or m).
    /// Default: 0.
    #[serde(default)]
    pub initial: Option<Spanned<f64>>,
    /// The body's mass (kg), above 0. A literal becomes the parameter `<body>_mass`.
    pub mass: Spanned<Value>,
    /// Centre of mass in the body frame (m).
    /// Default: the body frame's origin.
    pub center_of_mass: Option<Vector>,
    /// Rotational inertia about the centre of mass in the body frame (kg m^2): one value (about the
    /// plane normal, planar robots), [ixx, iyy, izz], or [ixx, iyy, izz, ixy, ixz, iyz]. Required
    /// for rigid bodies; soft sections take their slices' inertia from `section.disc_radius`.
    /// Moments >= 0, and a tensor must be a rigid body's: positive semidefinite, each principal
    /// moment at most the sum of the other two (checked at the parameters' defaults).
    pub inertia: Option<Spanned<Inertia>>,
    /// Constant-curvature sections: geometry, elasticity and quadrature.
    #[serde(default)]
    pub section: Option<Spanned<SectionSpec>>,
    /// In water: the body's hull, whose displaced volume, added mass and drag the water
    /// acts through.
    #[serde(default)]
    pub hydrodynamics: Option<Spanned<HydrodynamicsSpec>>,
    /// One body per value of an index, `{...}` in its strings evaluated (Repetition in Spec
    /// format).
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// `repeat = { index = "k", from = 2, to = 20 }` on an entry of `bodies`, `contact_points`
/// or `actuators`: the entry stands for one entry per k in from..=to, in place, each with the
/// `{...}` placeholders of its strings evaluated (codegen/src/spec/repeat.rs).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// The index's name in placeholders.
    /// Default: `i`.
    pub index: Option<Spanned<String>>,
    /// The index's first value.
    pub from: Spanned<i64>,
    /// The index's last value, inclusive; at most 1000 values.
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
    /// Which constant-curvature model the section follows, and so its coordinates.
    pub model: Spanned<SectionModel>,
    /// Length of the unactuated section (m).
    pub rest_length: Spanned<Value>,
    /// Distance of the actuators from the neutral axis (m); extensible sections only.
    pub actuator_radius: Option<Spanned<Value>>,
    /// Angles of the three actuators about the section's x axis, from +y (rad); extensible sections
    /// only.
    /// Default: 0, 2 pi / 3, 4 pi / 3.
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
    /// Gauss-Legendre nodes over the section for M, C and G, 1 to 32.
    /// Default: 8.
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
    /// Rigid bodies: where the cylinder starts along x (m).
    /// Default: 0.
    pub start: Option<Spanned<Value>>,
    /// Rigid bodies: centre of buoyancy in the body frame (m).
    /// Default: the cylinder's centre.
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
    /// The body that carries the points.
    pub body: Spanned<String>,
    /// How the points are placed.
    #[serde(default = "points_kind")]
    pub kind: Spanned<ContactKind>,
    /// Point positions in the body frame (m).
    #[serde(default)]
    pub positions: Vec<Vector>,
    /// Names, one per position.
    /// Default: `<body>_<k>`.
    #[serde(default)]
    pub names: Vec<Spanned<String>>,
    /// Skin grids: the grid's rings and points; its points are named `<body>_skin_<ring>_<k>`.
    #[serde(default)]
    pub grid: Option<Spanned<SkinGridSpec>>,
    /// One entry per value of an index, as a body's `repeat`.
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// A named point of the robot that a sensor tracks (a motion-capture marker): generated
/// positions and Jacobians like a contact point's, but no contact force and no cost in the
/// contact kernels.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// An identifier, unique among the markers and the contact points.
    pub name: Spanned<String>,
    /// The carrying body (a URDF frame merged into a body works too).
    pub body: Spanned<String>,
    /// On a rigid body, required: the point in the body frame (m). In a planar robot it must lie in
    /// the plane.
    #[serde(default)]
    pub position: Option<Vector>,
    /// On a soft section, required: where along it, 0 at its base to 1 at its tip.
    #[serde(default)]
    pub xi: Option<Spanned<f64>>,
    /// On a soft section: about its x axis from +y (rad), as a skin grid's points are placed.
    /// Default: 0.
    #[serde(default)]
    pub angle: Option<Spanned<f64>>,
    /// On a soft section: distance from the centre line (m); a skin radius puts the marker on the
    /// skin.
    /// Default: 0.
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
    /// `none`; `flat` ground at `height`; a `stair` whose face is at x = `position`, solid for x >=
    /// position and z < `height`; a `pipe` of `diameter` along x, centred on y = z = 0; a `floor`
    /// (plane `xy` only: every contact point carries an equal share of the weight, friction only,
    /// as passive wheels).
    pub kind: Spanned<TerrainKind>,
    /// Flat ground's height (m, default 0); a stair's step height (m, required, >= 0).
    pub height: Option<Spanned<Value>>,
    /// A stair's face along x (m); required for a stair.
    pub position: Option<Spanned<Value>>,
    /// A pipe's inner diameter (m); required for a pipe.
    pub diameter: Option<Spanned<Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Friction {
    /// The Coulomb coefficient, along the axis where `anisotropy` names one.
    pub along: Spanned<Value>,
    /// The Coulomb coefficient across the axis.
    /// Default: the value of `along`.
    pub across: Option<Spanned<Value>>,
    /// `isotropic`; `body_axis`: along the carrying body's x axis (for soft sections the neutral
    /// axis at the point); `world_axis`: along world x.
    /// Default: `"isotropic"`.
    #[serde(default)]
    pub anisotropy: Option<Spanned<Anisotropy>>,
    /// Velocity scale eps of regularised friction (m/s): the sign of the sliding velocity v becomes
    /// v / sqrt(v^2 + eps^2); 0 keeps the exact Coulomb sign.
    /// Default: 0.
    pub regularisation: Option<Spanned<Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Gravitational acceleration along -z (m/s^2); becomes the parameter `gravity`.
    /// Default: 9.81.
    pub gravity: Option<Spanned<f64>>,
    /// `water`: the hulls of the bodies that give `hydrodynamics` displace water, carry added mass
    /// and feel drag (Water in Spec format).
    /// Default: `"air"`.
    #[serde(default)]
    pub medium: Option<Spanned<Medium>>,
    /// The ground the contact points meet.
    /// Default: none.
    pub terrain: Option<Spanned<Terrain>>,
    /// k of the normal force f_N = max(k depth (1 + h depth_rate) + d depth_rate, 0) (N/m).
    /// Default: 0.
    pub contact_stiffness: Option<Spanned<Value>>,
    /// d, the seed papers' damper (eq 18 of 001, eq 3 of 000): its force jumps from 0 to d v when a
    /// point touches down at speed v (N s/m).
    /// Default: 0.
    pub contact_damping: Option<Spanned<Value>>,
    /// h, Hunt and Crossley's damper k h depth depth_rate (s/m), beside (or, with `contact_damping
    /// = 0`, instead of) eq 18's: it grows from zero with the depth, so the normal force is
    /// continuous in the state. A mass meeting it at speed v leaves at e v, e = 1 - (2/3) h v for
    /// small h v; to match a damper d at a point's depth at rest, h = d / (k depth).
    /// Default: 0.
    pub contact_dissipation: Option<Spanned<Value>>,
    /// Coulomb friction at the contact points.
    /// Default: none (frictionless).
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
    /// rho (kg/m^3).
    /// Default: 1000.
    pub density: Option<Spanned<Value>>,
    /// C_a, added mass across the hull per displaced mass.
    /// Default: 1.
    pub added_mass_coefficient: Option<Spanned<Value>>,
    /// alpha, added mass along the hull per displaced mass.
    /// Default: 0.2.
    pub surge_added_mass: Option<Spanned<Value>>,
    /// C_D, the cross-flow drag coefficient, also of the linear drag.
    /// Default: 1.
    pub drag_coefficient: Option<Spanned<Value>>,
    /// beta, linear drag along the hull relative to across.
    /// Default: 0.2.
    pub surge_linear_drag: Option<Spanned<Value>>,
    /// Omega, linear roll drag per rho pi R^3 L C_D V: Omega R^2 per linear drag across.
    /// Default: 0.5.
    pub roll_linear_drag: Option<Spanned<Value>>,
    /// V, the reference speed of the linear drag (m/s): the drag across is rho pi R C_D V per unit
    /// length (eq 32 of 004 with the radius its units lack).
    /// Default: 1.
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
    /// How the actuator drives its joint, section or module.
    pub kind: Spanned<ActuatorKind>,
    /// The body whose joint the actuator drives; for a valve, a body with one coordinate (a
    /// revolute or prismatic joint, or a `planar` soft section); for a muscle bank, its section;
    /// for a thruster, the rigid body that carries it.
    pub joint: Spanned<String>,
    /// Joint torques only: the saturation (N m, or N on a prismatic joint).
    /// Default: none.
    pub torque_limit: Option<Spanned<Value>>,
    /// Solenoid valves only, required: how the driven coordinate responds to the valve state S =
    /// +-1. The runtime solves it in closed form over each control period, so the coordinate
    /// follows it whatever the load, and the simulation reports the force the actuator needs.
    pub response: Option<Spanned<Response>>,
    /// Pneumatic muscles on an inextensible section: their distance r from the neutral axis (m);
    /// muscle k changes length by l_k = -r L0 (kappa_y cos psi_k + kappa_z sin psi_k). On an
    /// extensible section the muscles are its actuators, placed by its `section`, and this field is
    /// refused.
    pub radius: Option<Spanned<Value>>,
    /// Pneumatic muscles on an inextensible section: their angles psi_k about the section's x axis
    /// from +y (rad).
    /// Default: 0, 2 pi / 3, 4 pi / 3.
    pub angles: Option<Spanned<Vec<Spanned<Value>>>>,
    /// Pneumatic muscles, required: effective area, force per pressure (m^2); the generalized force
    /// of pressure p is p A dl/dq.
    pub area: Option<Spanned<Value>>,
    /// Pneumatic muscles, required: the highest pressure they are rated for (bar); a run's pressure
    /// ceiling may not exceed it.
    pub rated_pressure: Option<Spanned<Value>>,
    /// Pneumatic muscles: time constant of the first-order lag from commanded to reached pressure
    /// (s). Literals become parameters `<body>_muscle_<field>`; the muscles are named
    /// `<body>_muscle1` .. `3`.
    /// Default: 0.
    pub pressure_lag: Option<Spanned<Value>>,
    /// Thrusters, required: the point of attack in the body frame (m). A thrust u (N) acts as the
    /// generalized force B(q) u, column k of B being J_k' (c x d; d) (eqs 35-37 of 004).
    pub position: Option<Vector>,
    /// Thrusters, required: the direction of positive thrust in the body frame.
    pub direction: Option<Spanned<[f64; 3]>>,
    /// Thrusters: an identifier, by which run configurations name their channels.
    /// Default: `thruster<k>`, k counting the thrusters from 1.
    pub name: Option<Spanned<String>>,
    /// One entry per value of an index, as a body's `repeat`.
    #[serde(default)]
    pub repeat: Option<Spanned<Repeat>>,
}

/// A linear response of a driven coordinate to its actuator's command u: first order
/// (one time constant, tau x' = gain u - x) or second order (two, eq 15 of
/// 001_6780a70913e94322); steady state gain u.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// [tau1, tau2] (s, each above 0): x'' = -(1/tau1 + 1/tau2) x' - x / (tau1 tau2) + C0 S / (tau1
    /// tau2) (eq 15 of 001); or [tau]: tau x' = C0 S - x. Literals become parameters
    /// `<body>_time_constant_<k>`.
    pub time_constants: Spanned<Vec<Spanned<Value>>>,
    /// C0, the coordinate's steady state per unit command; a literal becomes the parameter
    /// `<body>_valve_gain`.
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
    /// The servo law: `joint_pd`, tau = kp (phi_d - phi) + kd (phid_d - phid), the only one today
    /// (the key is required so that specs say which).
    #[allow(dead_code)]
    pub kind: Spanned<ControllerKind>,
    /// kp (N m/rad, or N/m on a prismatic joint).
    pub stiffness: Spanned<Value>,
    /// kd (N m s/rad, or N s/m).
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
    /// Which coordinates (the key is required so that specs say which).
    #[allow(dead_code)]
    pub kind: Spanned<ControllerCoordinatesKind>,
    /// +1 or -1: the controller's joint angle over the model's; -1 where the paper's relative angle
    /// is theta_j - theta_{j+1} and the model's joint turns link j + 1 from link j.
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
    /// `serpenoid` (joint torques, tracked by the controller): phi_j = A sin(omega t + eta (j - 1))
    /// + offset over the actuators in order; `travelling_wave_valves` (valves, eq 13 of 001): S_i =
    /// sign(sin(omega t + eta i) + offset) for valve i = 1, 2, ... in order; `rolling` is refused
    /// as not supported yet.
    pub kind: Spanned<GaitKind>,
    /// Serpenoid only, required there: A (rad); a valve wave's amplitude is its valves' `gain`.
    pub amplitude: Option<Spanned<Value>>,
    /// omega (rad/s).
    pub temporal_frequency: Spanned<Value>,
    /// eta (rad): the phase between neighbouring joints (serpenoid) or valves (the valve wave's
    /// beta_i / i).
    pub spatial_frequency: Spanned<Value>,
    /// The wave's offset (rad for a serpenoid; for valves, added to the sine before its sign: 0
    /// goes straight, 0.4 turns).
    /// Default: 0.
    pub offset: Option<Spanned<Value>>,
}
