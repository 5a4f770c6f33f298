//! URDF import: a spec's `[import] urdf` read into spec bodies, one per moving link, with
//! the links on fixed joints merged into their moving ancestor as named frames (their mass
//! and inertia added to it), and every error naming the URDF file, line, element and
//! attribute.
//!
//! Why merge: URDFs of real robots hang dozens of massless frames (cameras, optical frames,
//! feet, flanges) on fixed joints, and a body of its own for each would cost the generated
//! recursion work for nothing; Pinocchio's importer merges them the same way, so the two
//! models are the same tree. A spec body or contact point may still attach to a merged link
//! by its name: `apply_frames` re-expresses it in the ancestor's frame.

mod collision;
mod frames;
mod read;
mod tree;

pub use frames::apply_frames;

use crate::spec::error::{is_identifier, SpecError};
use crate::spec::{self, BodyKind, JointKind, Value};
use frames::*;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;
use tree::bodies;

/// Largest URDF read, in bytes (the largest published robot descriptions are a few MB).
pub const MAX_URDF_BYTES: u64 = 16 << 20;

type Matrix3 = [[f64; 3]; 3];

/// A merged link: where it sits in the body it was merged into.
#[derive(Clone, Debug)]
pub struct Frame {
    pub body: String,
    pub position: [f64; 3],
    pub rotation: Matrix3,
}

/// What an import adds to a spec.
pub struct Imported {
    /// One spec body per moving link (and the root), parent before child.
    pub bodies: Vec<spec::Body>,
    /// How errors name each body: the URDF link it came from.
    pub labels: Vec<String>,
    /// The root body's name.
    pub root: String,
    /// Links merged into an ancestor, by (prefixed) name.
    pub frames: BTreeMap<String, Frame>,
    /// Contact points seeded from collision primitives (`[import] collision_points`), each
    /// set on its link's body, with how errors name it.
    pub contact_points: Vec<(String, spec::ContactPoints)>,
}

/// Which collision primitives seed contact points: those of `links` (every imported link
/// when empty) whose shape is in `shapes`.
#[derive(Clone, Debug)]
pub struct CollisionSeeds<'s> {
    pub links: Vec<&'s str>,
    pub shapes: Vec<spec::CollisionShape>,
}

/// One inertial element, in its link's frame.
#[derive(Clone, Copy)]
struct Inertial {
    mass: f64,
    center: [f64; 3],
    /// Rotational inertia about the centre, in the link frame.
    tensor: Matrix3,
}

struct Link<'a> {
    name: String,
    node: roxmltree::Node<'a, 'a>,
    inertial: Option<Inertial>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Revolute,
    Prismatic,
    Fixed,
}

struct Joint {
    name: String,
    kind: Kind,
    parent: usize,
    child: usize,
    origin: [f64; 3],
    rpy: [f64; 3],
    axis: [f64; 3],
    limits: Option<(f64, f64)>,
}

/// Errors while reading one URDF, each at its element.
struct Reader<'a> {
    file: String,
    document: &'a roxmltree::Document<'a>,
    errors: Vec<SpecError>,
}

impl<'a> Reader<'a> {
    fn error(&mut self, node: roxmltree::Node, field: String, message: impl Into<String>) {
        let position = self.document.text_pos_at(node.range().start);
        self.errors.push(SpecError {
            file: self.file.clone(),
            line: position.row as usize,
            column: position.col as usize,
            field,
            message: message.into(),
        });
    }

    /// An element's attribute as `count` finite numbers separated by spaces; `default` when
    /// the attribute is absent (None: required).
    fn numbers<const N: usize>(
        &mut self,
        node: roxmltree::Node,
        what: &str,
        attribute: &str,
        default: Option<[f64; N]>,
    ) -> Option<[f64; N]> {
        let field = format!("{what} <{}> {attribute}", node.tag_name().name());
        let Some(text) = node.attribute(attribute) else {
            if default.is_none() {
                self.error(node, field, "missing");
            }
            return default;
        };
        let values: Result<Vec<f64>, _> = text.split_whitespace().map(str::parse::<f64>).collect();
        match values {
            Ok(v) if v.len() == N && v.iter().all(|x| x.is_finite()) => v.try_into().ok(),
            Ok(v) if v.len() == N => {
                self.error(node, field, format!("must be finite, got \"{text}\""));
                None
            }
            Ok(v) => {
                self.error(node, field, format!("expected {N} number(s), got {} in \"{text}\"", v.len()));
                None
            }
            Err(_) => {
                self.error(node, field, format!("expected {N} number(s), got \"{text}\""));
                None
            }
        }
    }

    fn origin(&mut self, parent: roxmltree::Node, what: &str) -> ([f64; 3], [f64; 3]) {
        match child(parent, "origin") {
            Some(o) => (
                self.numbers(o, what, "xyz", Some([0.0; 3])).unwrap_or([0.0; 3]),
                self.numbers(o, what, "rpy", Some([0.0; 3])).unwrap_or([0.0; 3]),
            ),
            None => ([0.0; 3], [0.0; 3]),
        }
    }

    fn inertial(&mut self, link: roxmltree::Node, name: &str) -> Option<Inertial> {
        let node = child(link, "inertial")?;
        let what = format!("link `{name}` <inertial>");
        let (center, rpy) = self.origin(node, &what);
        let mass = match child(node, "mass") {
            Some(m) => self.numbers::<1>(m, &what, "value", None).map(|[m]| m),
            None => {
                self.error(node, format!("{what} <mass>"), "missing");
                None
            }
        }?;
        if mass < 0.0 {
            let m = child(node, "mass").unwrap_or(node);
            self.error(m, format!("{what} <mass> value"), format!("must be >= 0 kg, got {mass}"));
            return None;
        }
        let Some(inertia) = child(node, "inertia") else {
            self.error(node, format!("{what} <inertia>"), "missing");
            return None;
        };
        let mut entries = [0.0; 6];
        for (k, attribute) in ["ixx", "iyy", "izz", "ixy", "ixz", "iyz"].iter().enumerate() {
            entries[k] = self.numbers::<1>(inertia, &what, attribute, None)?[0];
        }
        if let Some(bad) = entries.iter().find(|v| !v.is_finite()) {
            self.error(inertia, format!("{what} <inertia>"), format!("must be finite, got {bad}"));
            return None;
        }
        let [xx, yy, zz, xy, xz, yz] = entries;
        let local = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]];
        // The tensor is given in the inertial frame (turned by rpy): into the link frame.
        let r = rotation_from_rpy(rpy);
        let tensor = if rpy == [0.0; 3] { local } else { mat_mul(&mat_mul(&r, &local), &transpose(&r)) };
        Some(Inertial { mass, center, tensor })
    }
}

fn child<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> Option<roxmltree::Node<'a, 'a>> {
    node.children().find(|c| c.is_element() && c.tag_name().name() == name)
}

/// Reads `urdf` (relative to `folder`, the spec's folder) for the spec shown as `spec_path`. `prefix` goes
/// before every link name; `root` picks the link the import starts from (default: the
/// URDF's one root); the links in `exclude` are left out with their subtrees. The bodies'
/// fields carry `span` (the spec's `[import]`), where later validation names them.
pub fn import(
    spec_path: &str,
    folder: &Path,
    urdf: &str,
    prefix: &str,
    root: Option<&str>,
    exclude: &[&str],
    seeds: Option<&CollisionSeeds>,
    span: std::ops::Range<usize>,
) -> Result<Imported, Vec<SpecError>> {
    // Read from the spec's real folder; named in messages beside the spec as they name it.
    let path = folder.join(urdf);
    let file = Path::new(spec_path).parent().unwrap_or(Path::new("")).join(urdf).to_string_lossy().into_owned();
    let refuse =
        |message: String| vec![SpecError { file: file.clone(), line: 1, column: 1, field: String::new(), message }];
    let size = std::fs::metadata(&path).map_err(|e| refuse(format!("cannot read the URDF: {e}")))?.len();
    if size > MAX_URDF_BYTES {
        return Err(refuse(format!("the URDF is {size} bytes, more than the limit of {MAX_URDF_BYTES}")));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| refuse(format!("cannot read the URDF: {e}")))?;
    let options = roxmltree::ParsingOptions { allow_dtd: false, ..Default::default() };
    let document = roxmltree::Document::parse_with_options(&text, options).map_err(|e| {
        let position = e.pos();
        vec![SpecError {
            file: file.clone(),
            line: position.row as usize,
            column: position.col as usize,
            field: String::new(),
            message: format!("not well-formed XML: {e}"),
        }]
    })?;
    let mut reader = Reader { file: file.clone(), document: &document, errors: Vec::new() };
    let robot = document.root_element();
    if robot.tag_name().name() != "robot" {
        reader.error(robot, format!("<{}>", robot.tag_name().name()), "a URDF's root element is <robot>");
        return Err(reader.errors);
    }

    import_tree(&mut reader, robot, prefix, root, exclude, seeds, span).map_err(|stop| match stop {
        Stop::Import(message) => refuse(message),
        Stop::Reported => std::mem::take(&mut reader.errors),
    })
}

/// Why an import stopped: a problem of the spec's `[import]` table (named at the spec's
/// file), or the URDF's problems, already reported to the reader at their elements.
enum Stop {
    Import(String),
    Reported,
}

/// The URDF's links and joints as read.
struct Tree<'a> {
    links: Vec<Link<'a>>,
    /// A link's index by its (unprefixed) name.
    index_of: BTreeMap<String, usize>,
    joints: Vec<Joint>,
    /// The joint each link is the child of.
    parent_joint: Vec<Option<usize>>,
}

/// The spec bodies an import makes, and where each link went.
struct Bodies {
    bodies: Vec<spec::Body>,
    /// The link each body is made from.
    body_links: Vec<usize>,
    /// Each body's links: its own, then those merged into it.
    members: Vec<Vec<usize>>,
    /// The body each link is in.
    body_of: Vec<Option<usize>>,
    /// Each link's position and rotation in its body's frame.
    place: Vec<([f64; 3], Matrix3)>,
    frames: BTreeMap<String, Frame>,
}

/// The import's steps on a parsed `<robot>`: links and joints, the tree under the root,
/// the bodies and their inertials, the contact points seeded from collisions.
#[allow(clippy::too_many_arguments)]
fn import_tree<'a>(
    reader: &mut Reader<'a>,
    robot: roxmltree::Node<'a, 'a>,
    prefix: &str,
    root: Option<&str>,
    exclude: &[&str],
    seeds: Option<&CollisionSeeds>,
    span: std::ops::Range<usize>,
) -> Result<Imported, Stop> {
    let (links, index_of) = reader.links(robot, prefix);
    let (joints, parent_joint) = reader.joints(robot, &links, &index_of);
    if !reader.errors.is_empty() {
        return Err(Stop::Reported);
    }
    if links.is_empty() {
        reader.error(robot, "<robot>".into(), "has no <link>");
        return Err(Stop::Reported);
    }
    let tree = Tree { links, index_of, joints, parent_joint };
    let (root, order) = reader.tree_order(robot, &tree, root, exclude)?;
    let mut bodies = bodies(&tree, &order, root, prefix, &span);
    reader.body_inertials(&tree, &mut bodies, root, &span);
    if !reader.errors.is_empty() {
        return Err(Stop::Reported);
    }
    let contact_points = match seeds {
        Some(seeds) => reader.collision_points(&tree, &bodies, &order, seeds, prefix, &span)?,
        None => Vec::new(),
    };
    if !reader.errors.is_empty() {
        return Err(Stop::Reported);
    }
    let Bodies { bodies, body_links, frames, .. } = bodies;
    let labels = body_links.iter().map(|_| "import.urdf".to_string()).collect();
    Ok(Imported { bodies, labels, root: format!("{prefix}{}", tree.links[root].name), frames, contact_points })
}
