//! Spec validation: from parsed TOML to a `Robot`, with every error naming the file, line,
//! column and field, and what was expected. Never panics on user input.
//!
//! One `Validator` whose methods are spread over files by step, as one impl: `robot.rs`
//! (the whole spec in order: name, parameters, gravity, base, the body tree and the base's
//! coordinates, then every other step), `bodies.rs` (rigid bodies and their joints),
//! `soft.rs` (soft sections, their materials and muscles), `contacts.rs` (contact points and
//! skin grids), `markers.rs` (tracked points), `environment.rs` (contact, friction and
//! terrain), `water.rs` (hulls, thrusters and the water's coefficients), `actuators.rs`
//! (actuators, gaits and the controller's coordinates) and `values.rs` (numbers,
//! expressions and parameters, and the rules `Params::check` applies).

mod actuators;
mod bodies;
mod contacts;
mod environment;
mod markers;
mod robot;
mod soft;
mod values;
mod water;

use crate::model::{
    Body, ContactPoint, Coordinate, CoordinateKind, Elasticity, EnvironmentDefaults, GaitDefaults, Hull, Inertia,
    Joint, MuscleBank, Parameter, ParameterRule, PlanarChainCoordinates, Robot, Rule, SectionKind, SkinPlacement,
    SoftSection, TerrainDefault, Thruster, Valve, ValveGaitDefaults, Viscosity, Water,
};
pub(crate) use crate::spec::error::is_identifier;
pub use crate::spec::error::{SpecError, SpecErrors};
use crate::spec::expr::{self, Expr, Number};
use crate::spec::repeat;
use crate::spec::{self, Anisotropy, BaseKind, JointKind, Plane, Spec, Value};
use softgen_runtime::physical_inertia;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use toml::Spanned;

/// Where a soft section sits.
struct SoftContext {
    normal: Option<[f64; 3]>,
    parent: Option<usize>,
}

/// The bodies as a tree: what `body_tree` finds and the later steps read.
pub(super) struct BodyTree {
    /// A body's index in the spec by its name.
    pub(super) index_of: BTreeMap<String, usize>,
    /// The base body's index in the spec.
    pub(super) root: usize,
    /// Each body's parent, by index in the spec.
    pub(super) parent_of: Vec<Option<usize>>,
    /// The spec's indices, parent first (breadth-first from the root, children in file order).
    pub(super) order: Vec<usize>,
    /// A body's index in the robot (its place in `order`) by its index in the spec.
    pub(super) new_index: BTreeMap<usize, usize>,
}

impl BodyTree {
    /// The robot's index of spec body `o`'s parent.
    pub(super) fn parent(&self, o: usize) -> Option<usize> {
        self.parent_of[o].and_then(|p| self.new_index.get(&p).copied())
    }
}

/// The actuators, sorted by kind: what `actuators` finds and the gaits read.
pub(super) struct Actuators {
    /// Coordinates driven by a joint torque.
    pub(super) actuated: Vec<usize>,
    pub(super) valves: Vec<Valve>,
    pub(super) muscles: Vec<MuscleBank>,
    pub(super) thrusters: Vec<Thruster>,
    /// The smallest of the joint torques' limits (infinite without one).
    pub(super) torque_limit: f64,
}

/// Names a spec may not use for parameters: coordinates and built-ins.
const RESERVED: &[&str] = &["pi", "gravity", "t"];

/// Rust's keywords (strict, reserved and 2024-edition ones): a parameter becomes a struct
/// field and a spec's file stem a module, so neither may be one.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "static", "struct", "super", "trait", "true", "try", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield",
];

/// Most contact points a robot may have: each adds code to every contact kernel (about 280
/// lines per skin point), so that thousands of them would make codegen and the generated
/// crate's build run out of memory and time.
pub const MAX_CONTACT_POINTS: i64 = 1000;
/// Most bodies a robot may have (the scaling fixtures go to 60 links).
pub const MAX_BODIES: usize = 200;
/// Largest spec file read, in bytes.
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// Module names a spec's file stem may not take: the generated crate's own root file.
const RESERVED_MODULES: &[&str] = &["lib", "main"];

/// How a module in this workspace's generated/ is regenerated; out-of-tree modules name their
/// own command (`softgen-codegen --out DIR SPEC`).
pub const IN_TREE_COMMAND: &str = "cargo run -p softgen-codegen";

/// Parses and validates a spec. `path` is used in messages and in the generated header;
/// the robot's name is the file stem. An imported URDF is read relative to `path`'s folder.
pub fn load(path: &str, source: &str) -> Result<Robot, SpecErrors> {
    load_in(path, source, std::path::Path::new(path).parent().unwrap_or(std::path::Path::new("")))
}

/// As [`load`], with an imported URDF read relative to `folder` (the spec file's real folder,
/// where `path` is a display path relative to some other root).
pub fn load_in(path: &str, source: &str, folder: &std::path::Path) -> Result<Robot, SpecErrors> {
    let mut v = Validator {
        path: path.to_string(),
        source: source.to_string(),
        errors: Vec::new(),
        rules: Vec::new(),
        labels: Labels::default(),
    };
    if source.len() > MAX_SPEC_BYTES {
        v.error(0..0, "", format!("the spec is {} bytes, more than the limit of {MAX_SPEC_BYTES}", source.len()));
        return Err(SpecErrors(v.errors));
    }
    // Through serde_path_to_error, so that a wrong-typed or missing value names its field
    // (`bodies[1].origin`), not only its line.
    let spec: Spec = match serde_path_to_error::deserialize(toml::Deserializer::new(source)) {
        Ok(s) => s,
        Err(e) => {
            let field = field_path(e.path());
            let e = e.into_inner();
            let span = e.span().unwrap_or(0..0);
            let message = implicit_table_message(source, &span, e.message().trim());
            v.error(span, &field, message);
            return Err(SpecErrors(v.errors));
        }
    };
    // Repeated entries become entries written out, each labelled for errors.
    let mut repeat_errors = Vec::new();
    let (mut bodies, mut body_labels) = repeat::expand(&spec.bodies, "bodies", MAX_BODIES, &mut repeat_errors);
    let (mut contact_points, mut contact_labels) =
        repeat::expand(&spec.contact_points, "contact_points", MAX_CONTACT_POINTS as usize, &mut repeat_errors);
    let (actuators, actuator_labels) = repeat::expand(&spec.actuators, "actuators", MAX_BODIES, &mut repeat_errors);
    let mut markers = spec.markers.clone();
    for e in repeat_errors {
        v.error(e.span, &e.field, e.message);
    }
    if !v.errors.is_empty() {
        return Err(SpecErrors(v.errors));
    }
    // An imported URDF's links come first, as bodies; the spec's own attach to them.
    let mut base = spec.base.clone();
    if let Some(import) = &spec.import {
        let i = import.get_ref();
        if let Some(b) = &spec.base {
            v.error(
                b.span(),
                "base",
                "with [import], the base is the imported root: give its kind, plane and initial pose as [import]'s `base`, `plane` and `initial`",
            );
            return Err(SpecErrors(v.errors));
        }
        let prefix = i.prefix.as_ref().map_or("", |p| p.get_ref().as_str());
        let exclude: Vec<&str> = i.exclude.iter().map(|e| e.get_ref().as_str()).collect();
        let root = i.root.as_ref().map(|r| r.get_ref().as_str());
        let seeds = i.collision_points.as_ref().map(|c| {
            let c = c.get_ref();
            let shapes: Vec<spec::CollisionShape> = c.shapes.iter().map(|s| *s.get_ref()).collect();
            crate::spec::urdf::CollisionSeeds {
                links: c.links.iter().map(|l| l.get_ref().as_str()).collect(),
                shapes: if shapes.is_empty() {
                    vec![spec::CollisionShape::Box, spec::CollisionShape::Sphere, spec::CollisionShape::Cylinder]
                } else {
                    shapes
                },
            }
        });
        let imported = match crate::spec::urdf::import(
            path,
            folder,
            i.urdf.get_ref(),
            prefix,
            root,
            &exclude,
            seeds.as_ref(),
            import.span(),
        ) {
            Ok(imported) => imported,
            Err(errors) => return Err(SpecErrors(errors)),
        };
        let total = imported.bodies.len() + bodies.len();
        if total > MAX_BODIES {
            v.error(
                import.span(),
                "import.urdf",
                format!("{total} bodies with the imported links, more than the limit of {MAX_BODIES}"),
            );
            return Err(SpecErrors(v.errors));
        }
        for (k, b) in bodies.iter().enumerate() {
            let name = b.get_ref().name.get_ref();
            let imported_link =
                imported.bodies.iter().any(|i| i.name.get_ref() == name) || imported.frames.contains_key(name);
            if imported_link {
                v.error(
                    b.get_ref().name.span(),
                    &format!("{}.name", body_labels[k]),
                    format!(
                        "`{name}` is already a link of the imported URDF (a `prefix` in [import] keeps names apart)"
                    ),
                );
            }
        }
        crate::spec::urdf::apply_frames(&imported.frames, &mut bodies, &mut contact_points, &mut markers);
        // Seeded points are already on their bodies; after the spec's own (the robot's limit
        // on contact points counts them with the rest).
        for (label, points) in imported.contact_points {
            contact_points.push(Spanned::new(import.span(), points));
            contact_labels.push(label);
        }
        let span = import.span();
        base = Some(Spanned::new(
            span.clone(),
            spec::Base {
                kind: i.base.clone().unwrap_or_else(|| Spanned::new(span.clone(), BaseKind::Fixed)),
                plane: i.plane.clone(),
                body: Spanned::new(span.clone(), imported.root.clone()),
                initial: i.initial.clone(),
            },
        ));
        let spanned: Vec<Spanned<spec::Body>> =
            imported.bodies.into_iter().map(|b| Spanned::new(span.clone(), b)).collect();
        bodies = spanned.into_iter().chain(bodies).collect();
        body_labels = imported.labels.into_iter().chain(body_labels).collect();
    }
    if base.is_none() {
        v.error(0..0, "", "missing field `base`");
    }
    if !v.errors.is_empty() {
        return Err(SpecErrors(v.errors));
    }
    v.labels = Labels { bodies: body_labels, contact_points: contact_labels, actuators: actuator_labels };
    let spec = Spec { bodies, contact_points, markers, actuators, base, ..spec };
    let robot = v.robot(&spec);
    if v.errors.is_empty() {
        robot.ok_or_else(|| SpecErrors(vec![]))
    } else {
        Err(SpecErrors(v.errors))
    }
}

struct Validator {
    path: String,
    source: String,
    errors: Vec<SpecError>,
    rules: Vec<ParameterRule>,
    labels: Labels,
}

/// How errors name each entry of the expanded lists: `bodies[3]`, or `bodies[1] (k = 7)` for
/// one of a repeated entry's copies.
#[derive(Default)]
struct Labels {
    bodies: Vec<String>,
    contact_points: Vec<String>,
    actuators: Vec<String>,
}

impl Labels {
    fn of(list: &[String], name: &str, i: usize) -> String {
        list.get(i).cloned().unwrap_or_else(|| format!("{name}[{i}]"))
    }
    fn body(&self, i: usize) -> String {
        Labels::of(&self.bodies, "bodies", i)
    }
    fn contact_points(&self, i: usize) -> String {
        Labels::of(&self.contact_points, "contact_points", i)
    }
    fn actuator(&self, i: usize) -> String {
        Labels::of(&self.actuators, "actuators", i)
    }
}

/// A serde path as the spec's fields are written (`bodies[1].origin`), without the private
/// keys through which toml carries spans.
/// The toml crate's message for a table header `[a.b]` in a spec that never opens `[a]`,
/// "invalid type: string "b", expected a borrowed string" (its spanned fields cannot read an
/// implicit table), said so that a user knows what to write.
fn implicit_table_message(source: &str, span: &Range<usize>, message: &str) -> String {
    let start = source[..span.start.min(source.len())].rfind('\n').map_or(0, |i| i + 1);
    let header = source[start..].lines().next().unwrap_or("").trim();
    let parent = header.strip_prefix('[').and_then(|h| h.split(']').next()).and_then(|h| h.rsplit_once('.'));
    match parent {
        Some((parent, _)) if message.contains("expected a borrowed string") => format!(
            "`{header}` is a table inside `[{parent}]`, which the spec never opens: write `[{parent}]` on a line of its own above it"
        ),
        _ => message.to_string(),
    }
}

fn field_path(path: &serde_path_to_error::Path) -> String {
    let mut field = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => field.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } | serde_path_to_error::Segment::Enum { variant: key } => {
                if key.starts_with("$__") {
                    continue;
                }
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    field
}

fn stem(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file.strip_suffix(".toml").unwrap_or(file).to_string()
}

fn planar_violation(v: &[Expr; 3], normal: Option<[f64; 3]>) -> bool {
    let Some(n) = normal else { return false };
    let axis = n.iter().position(|c| *c != 0.0).unwrap_or(2);
    v[axis] != Expr::Num(Number::Rational(0, 1))
}
