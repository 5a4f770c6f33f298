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

use crate::spec::{self, BodyKind, JointKind, Value};
use crate::spec_error::{is_identifier, SpecError};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

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

impl<'a> Reader<'a> {
    /// The `<link>`s, each named and with its inertial, and their indices by name.
    fn links(&mut self, robot: roxmltree::Node<'a, 'a>, prefix: &str) -> (Vec<Link<'a>>, BTreeMap<String, usize>) {
        let mut links: Vec<Link> = Vec::new();
        let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
        for node in robot.children().filter(|c| c.is_element() && c.tag_name().name() == "link") {
            let Some(name) = node.attribute("name") else {
                self.error(node, "<link> name".into(), "missing");
                continue;
            };
            let full = format!("{prefix}{name}");
            if !is_identifier(&full) {
                self.error(
                node,
                format!("link `{name}` name"),
                format!("`{full}` is not usable in generated code: letters, digits and `_`, starting with a letter (a `prefix` can supply the letter)"),
            );
            }
            if index_of.insert(name.to_string(), links.len()).is_some() {
                self.error(node, format!("link `{name}` name"), "duplicate link name");
            }
            let inertial = self.inertial(node, name);
            links.push(Link { name: name.to_string(), node, inertial });
        }
        (links, index_of)
    }

    /// The `<joint>`s between the links, each link the child of one joint at most, and the
    /// joint each link is the child of.
    fn joints(
        &mut self,
        robot: roxmltree::Node<'a, 'a>,
        links: &[Link],
        index_of: &BTreeMap<String, usize>,
    ) -> (Vec<Joint>, Vec<Option<usize>>) {
        let mut joints: Vec<Joint> = Vec::new();
        let mut parent_joint: Vec<Option<usize>> = vec![None; links.len()];
        for node in robot.children().filter(|c| c.is_element() && c.tag_name().name() == "joint") {
            let Some(name) = node.attribute("name").map(str::to_string) else {
                self.error(node, "<joint> name".into(), "missing");
                continue;
            };
            let what = format!("joint `{name}`");
            let Some(kind) = self.joint_kind(node, &what) else { continue };
            let (parent, child_link) =
                (self.joint_end(node, &what, "parent", index_of), self.joint_end(node, &what, "child", index_of));
            let (origin, rpy) = self.origin(node, &what);
            let axis = match child(node, "axis") {
                Some(a) if kind != Kind::Fixed => {
                    let v = self.numbers(a, &what, "xyz", Some([1.0, 0.0, 0.0])).unwrap_or([1.0, 0.0, 0.0]);
                    let length = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                    if length == 0.0 {
                        self.error(a, format!("{what} <axis> xyz"), "must not be the zero vector");
                        [1.0, 0.0, 0.0]
                    } else {
                        v
                    }
                }
                _ => [1.0, 0.0, 0.0],
            };
            let limits = self.joint_limits(node, &what, kind);
            let (Some(parent), Some(child_link)) = (parent, child_link) else { continue };
            if parent == child_link {
                self.error(node, format!("{what} <child> link"), "a joint cannot join a link to itself");
                continue;
            }
            if let Some(other) = parent_joint[child_link] {
                self.error(
                node,
                format!("{what} <child> link"),
                format!(
                    "link `{}` is already the child of joint `{}`: a link has one parent (a URDF describes a tree, not a loop)",
                    links[child_link].name, joints[other].name
                ),
            );
                continue;
            }
            parent_joint[child_link] = Some(joints.len());
            joints.push(Joint { name, kind, parent, child: child_link, origin, rpy, axis, limits });
        }
        (joints, parent_joint)
    }

    /// A joint's `type`: revolute (or continuous), prismatic or fixed; none inside the tree
    /// for floating and planar.
    fn joint_kind(&mut self, node: roxmltree::Node, what: &str) -> Option<Kind> {
        match node.attribute("type") {
            Some("revolute" | "continuous") => Some(Kind::Revolute),
            Some("prismatic") => Some(Kind::Prismatic),
            Some("fixed") => Some(Kind::Fixed),
            Some(other @ ("floating" | "planar")) => {
                self.error(
                    node,
                    format!("{what} type"),
                    format!("a {other} joint inside the tree is not supported: a robot's only floating joint is its base (`[import] base = \"spatial\"` or `\"planar\"`)"),
                );
                return None;
            }
            Some(other) => {
                self.error(
                    node,
                    format!("{what} type"),
                    format!("unknown joint type `{other}`: expected revolute, continuous, prismatic or fixed"),
                );
                return None;
            }
            None => {
                self.error(node, format!("{what} type"), "missing");
                return None;
            }
        }
    }

    /// The link a joint's `<parent>` or `<child>` (`tag`) names.
    fn joint_end(
        &mut self,
        node: roxmltree::Node,
        what: &str,
        tag: &str,
        index_of: &BTreeMap<String, usize>,
    ) -> Option<usize> {
        let Some(element) = child(node, tag) else {
            self.error(node, format!("{what} <{tag}>"), "missing");
            return None;
        };
        let Some(link) = element.attribute("link") else {
            self.error(element, format!("{what} <{tag}> link"), "missing");
            return None;
        };
        match index_of.get(link) {
            Some(i) => Some(*i),
            None => {
                self.error(element, format!("{what} <{tag}> link"), format!("no link named `{link}` in this URDF"));
                None
            }
        }
    }

    /// A revolute or prismatic joint's `<limit>` (lower, upper); none for continuous and
    /// fixed joints.
    fn joint_limits(&mut self, node: roxmltree::Node, what: &str, kind: Kind) -> Option<(f64, f64)> {
        if node.attribute("type") == Some("continuous") || kind == Kind::Fixed {
            None
        } else {
            match child(node, "limit") {
                Some(l) => {
                    let lower = self.numbers::<1>(l, &what, "lower", Some([0.0])).map(|[v]| v);
                    let upper = self.numbers::<1>(l, &what, "upper", Some([0.0])).map(|[v]| v);
                    for attribute in ["effort", "velocity"] {
                        if let Some([v]) = self.numbers::<1>(l, &what, attribute, None) {
                            if v < 0.0 {
                                self.error(l, format!("{what} <limit> {attribute}"), format!("must be >= 0, got {v}"));
                            }
                        }
                    }
                    match (lower, upper) {
                        (Some(lower), Some(upper)) if lower <= upper => Some((lower, upper)),
                        (Some(lower), Some(upper)) => {
                            self.error(
                                l,
                                format!("{what} <limit> lower"),
                                format!("lower ({lower}) must not exceed upper ({upper})"),
                            );
                            None
                        }
                        _ => None,
                    }
                }
                None => {
                    self.error(
                        node,
                        format!("{what} <limit>"),
                        "missing: a revolute or prismatic joint needs its <limit> (URDF requires it)",
                    );
                    None
                }
            }
        }
    }

    /// The root link (named, or the URDF's one root) and the links under it, parents first,
    /// without those in `exclude` and their subtrees.
    fn tree_order(
        &mut self,
        robot: roxmltree::Node,
        tree: &Tree,
        root: Option<&str>,
        exclude: &[&str],
    ) -> Result<(usize, Vec<usize>), Stop> {
        let Tree { links, index_of, joints, parent_joint } = tree;
        let roots: Vec<usize> = (0..links.len()).filter(|&i| parent_joint[i].is_none()).collect();
        let root = match root {
            Some(name) => match index_of.get(name) {
                Some(i) => *i,
                None => return Err(Stop::Import(format!("[import] root: no link named `{name}` in this URDF"))),
            },
            None => match roots.as_slice() {
                [one] => *one,
                [] => {
                    self.error(robot, "<robot>".into(), "every link is some joint's child: the joints form a loop");
                    return Err(Stop::Reported);
                }
                many => {
                    let names: Vec<&str> = many.iter().map(|&i| links[i].name.as_str()).collect();
                    self.error(
                        robot,
                        "<robot>".into(),
                        format!(
                            "more than one root link ({}): name the one to import with `[import] root`",
                            names.join(", ")
                        ),
                    );
                    return Err(Stop::Reported);
                }
            },
        };
        let mut left_out = vec![false; links.len()];
        for name in exclude {
            match index_of.get(*name) {
                Some(&i) if i == root => {
                    return Err(Stop::Import(format!("[import] exclude: `{name}` is the root link")))
                }
                Some(&i) => left_out[i] = true,
                None => return Err(Stop::Import(format!("[import] exclude: no link named `{name}` in this URDF"))),
            }
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        for (j, joint) in joints.iter().enumerate() {
            children[joint.parent].push(j);
        }
        // Depth first, parents before children, joints in document order.
        let mut order = vec![root];
        let mut visited = vec![false; links.len()];
        visited[root] = true;
        let mut k = 0;
        while k < order.len() {
            let link = order[k];
            k += 1;
            for &j in children[link].iter().rev() {
                let c = joints[j].child;
                if left_out[c] {
                    continue;
                }
                if visited[c] {
                    self.error(
                        links[c].node,
                        format!("link `{}`", links[c].name),
                        "reached twice: the joints form a loop",
                    );
                    return Err(Stop::Reported);
                }
                visited[c] = true;
                order.insert(k, c);
            }
        }
        // Under a chosen root only its subtree is imported; from the one root, every link must
        // be reached.
        let from_the_root = roots.len() == 1 && roots[0] == root && exclude.is_empty();
        if let Some(stray) = (0..links.len()).find(|&i| from_the_root && !visited[i]) {
            self.error(
                links[stray].node,
                format!("link `{}`", links[stray].name),
                "not reachable from the root: the joints form a loop",
            );
            return Err(Stop::Reported);
        }
        Ok((root, order))
    }

    /// Each body's mass, centre and inertia: its links' inertials, in its frame; a body
    /// without mass or with an unphysical inertia is reported.
    fn body_inertials(&mut self, tree: &Tree, bodies: &mut Bodies, root: usize, span: &std::ops::Range<usize>) {
        let Tree { links, .. } = tree;
        let Bodies { bodies, body_links, members, place, .. } = bodies;
        let number = |x: f64| Spanned::new(span.clone(), Value::Number(x));
        for (b, body) in bodies.iter_mut().enumerate() {
            let parts: Vec<Inertial> = members[b]
                .iter()
                .filter_map(|&link| {
                    links[link].inertial.map(|i| {
                        let (p, r) = place[link];
                        let tensor =
                            if r == identity() { i.tensor } else { mat_mul(&mat_mul(&r, &i.tensor), &transpose(&r)) };
                        Inertial { mass: i.mass, center: add(p, mat_vec(&r, i.center)), tensor }
                    })
                })
                .collect();
            let link = body_links[b];
            let combined = match parts.as_slice() {
                [one] => Some(*one),
                _ => combine(&parts),
            };
            let Some(inertial) = combined.filter(|i| i.mass > 0.0) else {
                let merged: Vec<&str> = members[b].iter().skip(1).map(|&l| links[l].name.as_str()).collect();
                self.error(
                links[link].node,
                format!("link `{}` <inertial> <mass>", links[link].name),
                format!(
                    "the link{} carries no mass: every body needs mass > 0 (a massless moving link leaves the mass matrix singular){}",
                    if merged.is_empty() { String::new() } else { format!(" (with {}, fixed to it)", merged.join(", ")) },
                    if link == root { "; choose a `root` that has mass" } else { "" }
                ),
            );
                continue;
            };
            let t = inertial.tensor;
            // The rule of the spec's bodies, on what the model's body is: the sum of its links.
            // (Published URDFs carry links whose own tensors are not physical, ANYmal C's cameras
            // among them, merged into a heavy body whose sum is.)
            let entries = [t[0][0], t[1][1], t[2][2], t[0][1], t[0][2], t[1][2]];
            if let Err(message) = softgen_runtime::physical_inertia(entries) {
                let merged: Vec<&str> = members[b].iter().skip(1).map(|&l| links[l].name.as_str()).collect();
                let node =
                    child(links[link].node, "inertial").and_then(|i| child(i, "inertia")).unwrap_or(links[link].node);
                self.error(
                    node,
                    format!("link `{}` <inertial> <inertia>", links[link].name),
                    format!(
                        "not the inertia of a rigid body{}: {message}",
                        if merged.is_empty() {
                            String::new()
                        } else {
                            format!(" (with {}, fixed to it)", merged.join(", "))
                        }
                    ),
                );
                continue;
            }
            body.mass = number(inertial.mass);
            body.center_of_mass = Some(inertial.center.map(number));
            body.inertia = Some(Spanned::new(
                span.clone(),
                spec::Inertia::Vector(
                    [t[0][0], t[1][1], t[2][2], t[0][1], t[0][2], t[1][2]].into_iter().map(Value::Number).collect(),
                ),
            ));
        }
    }

    /// Contact points on the collision primitives `seeds` asks for, in each link's body frame.
    #[allow(clippy::too_many_arguments)]
    fn collision_points(
        &mut self,
        tree: &Tree,
        bodies: &Bodies,
        order: &[usize],
        seeds: &CollisionSeeds,
        prefix: &str,
        span: &std::ops::Range<usize>,
    ) -> Result<Vec<(String, spec::ContactPoints)>, Stop> {
        let Tree { links, index_of, .. } = tree;
        let Bodies { body_links, body_of, place, .. } = bodies;
        let name = |link: usize| format!("{prefix}{}", links[link].name);
        let number = |x: f64| Spanned::new(span.clone(), Value::Number(x));
        let mut contact_points = Vec::new();
        let mut chosen: Vec<(usize, bool)> = Vec::new();
        if seeds.links.is_empty() {
            chosen.extend(order.iter().map(|&l| (l, false)));
        } else {
            for link in &seeds.links {
                match index_of.get(*link).filter(|i| order.contains(i)) {
                    Some(&i) => chosen.push((i, true)),
                    None => {
                        return Err(Stop::Import(format!(
                            "[import] collision_points: no link named `{link}` among the imported links"
                        )))
                    }
                }
            }
        }
        for (link, named) in chosen {
            let what = format!("link `{}` <collision>", links[link].name);
            let mut positions = Vec::new();
            let mut names = Vec::new();
            let collisions =
                links[link].node.children().filter(|c| c.is_element() && c.tag_name().name() == "collision");
            for (k, collision) in collisions.enumerate() {
                let Some(local) = self.seed_points(collision, &what, seeds) else { continue };
                let (origin, rpy) = self.origin(collision, &what);
                let turn = rotation_from_rpy(rpy);
                let (p, r) = place[link];
                for (i, v) in local.iter().enumerate() {
                    let in_link = add(origin, mat_vec(&turn, *v));
                    positions.push(add(p, mat_vec(&r, in_link)).map(number));
                    names.push(Spanned::new(span.clone(), format!("{}_collision{k}_{i}", name(link))));
                }
            }
            if positions.is_empty() {
                if named {
                    let shapes: Vec<&str> = seeds.shapes.iter().map(|s| s.name()).collect();
                    self.error(
                        links[link].node,
                        format!("link `{}`", links[link].name),
                        format!(
                            "[import] collision_points names it, but it has no <collision> {} to seed contact points from (meshes are not read)",
                            shapes.join(", ")
                        ),
                    );
                }
                continue;
            }
            let body = name(body_links[body_of[link].expect("every imported link is in a body")]);
            contact_points.push((
                format!("import.collision_points ({})", links[link].name),
                spec::ContactPoints {
                    body: Spanned::new(span.clone(), body),
                    kind: Spanned::new(span.clone(), spec::ContactKind::Points),
                    positions,
                    names,
                    grid: None,
                    repeat: None,
                },
            ));
        }
        Ok(contact_points)
    }

    /// The points one `<collision>`'s shape seeds, in its own frame: a box's corners, points
    /// on a sphere or a cylinder; none for a mesh or a shape `seeds` leaves out.
    fn seed_points(&mut self, collision: roxmltree::Node, what: &str, seeds: &CollisionSeeds) -> Option<Vec<[f64; 3]>> {
        let Some(geometry) = child(collision, "geometry") else {
            self.error(collision, format!("{what} <geometry>"), "missing");
            return None;
        };
        let Some(shape) = geometry.children().find(|c| c.is_element()) else {
            self.error(geometry, format!("{what} <geometry>"), "empty: expected a box, sphere, cylinder or mesh");
            return None;
        };
        let kind = match shape.tag_name().name() {
            "box" => spec::CollisionShape::Box,
            "sphere" => spec::CollisionShape::Sphere,
            "cylinder" => spec::CollisionShape::Cylinder,
            // Meshes (and shapes URDF does not define) seed nothing: they are not read.
            _ => return None,
        };
        if !seeds.shapes.contains(&kind) {
            return None;
        }
        let positive = |attribute: &str, reader: &mut Reader| -> Option<f64> {
            let [v] = reader.numbers::<1>(shape, &what, attribute, None)?;
            if v > 0.0 {
                Some(v)
            } else {
                let field = format!("{what} <{}> {attribute}", shape.tag_name().name());
                reader.error(shape, field, format!("must be > 0 m, got {v}"));
                None
            }
        };
        let local = match kind {
            spec::CollisionShape::Box => {
                let Some(size) = self.numbers::<3>(shape, &what, "size", None) else { return None };
                if let Some(v) = size.iter().find(|v| **v <= 0.0) {
                    self.error(shape, format!("{what} <box> size"), format!("must be > 0 m, got {v}"));
                    return None;
                }
                box_corners(size)
            }
            spec::CollisionShape::Sphere => {
                let Some(radius) = positive("radius", self) else { return None };
                sphere_points(radius)
            }
            spec::CollisionShape::Cylinder => {
                let (Some(radius), Some(length)) = (positive("radius", self), positive("length", self)) else {
                    return None;
                };
                cylinder_points(radius, length)
            }
        };
        Some(local)
    }
}

/// The bodies: the root and each link on a moving joint; links on fixed joints merge into
/// the body of their parent, at their place in it.
fn bodies(tree: &Tree, order: &[usize], root: usize, prefix: &str, span: &std::ops::Range<usize>) -> Bodies {
    let Tree { links, joints, parent_joint, .. } = tree;
    let mut body_of: Vec<Option<usize>> = vec![None; links.len()];
    let mut place: Vec<([f64; 3], Matrix3)> = vec![([0.0; 3], identity()); links.len()];
    let mut bodies: Vec<spec::Body> = Vec::new();
    let mut body_links: Vec<usize> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut frames = BTreeMap::new();
    let name = |link: usize| format!("{prefix}{}", links[link].name);
    let number = |x: f64| Spanned::new(span.clone(), Value::Number(x));
    for &link in order {
        let joint = parent_joint[link].filter(|_| link != root).map(|j| &joints[j]);
        match joint {
            Some(joint) if joint.kind == Kind::Fixed => {
                let parent = joint.parent;
                let body = body_of[parent].expect("parents come first");
                let (p, r) = place[parent];
                let position = add(p, mat_vec(&r, joint.origin));
                let rotation = mat_mul(&r, &rotation_from_rpy(joint.rpy));
                body_of[link] = Some(body);
                place[link] = (position, rotation);
                members[body].push(link);
                frames.insert(name(link), Frame { body: name(body_links[body]), position, rotation });
            }
            _ => {
                let (parent_body, origin, rotation, kind, axis, initial) = match joint {
                    Some(joint) => {
                        let parent = joint.parent;
                        let (p, r) = place[parent];
                        let origin = add(p, mat_vec(&r, joint.origin));
                        // Exact when the parent is a body's own frame.
                        let rpy = if r == identity() {
                            joint.rpy
                        } else {
                            rpy_from_rotation(&mat_mul(&r, &rotation_from_rpy(joint.rpy)))
                        };
                        let kind =
                            if joint.kind == Kind::Revolute { JointKind::Revolute } else { JointKind::Prismatic };
                        // Zero unless the limits exclude it: then their middle.
                        let initial = match joint.limits {
                            Some((lower, upper)) if !(lower..=upper).contains(&0.0) => (lower + upper) / 2.0,
                            _ => 0.0,
                        };
                        (body_of[parent], origin, rpy, Some(kind), Some(joint.axis), initial)
                    }
                    None => (None, [0.0; 3], [0.0; 3], None, None, 0.0),
                };
                body_of[link] = Some(bodies.len());
                body_links.push(link);
                members.push(vec![link]);
                bodies.push(spec::Body {
                    name: Spanned::new(span.clone(), name(link)),
                    kind: Spanned::new(span.clone(), BodyKind::Rigid),
                    parent: parent_body.map(|b| Spanned::new(span.clone(), name(body_links[b]))),
                    joint: kind.map(|k| Spanned::new(span.clone(), k)),
                    axis: axis.map(|a| Spanned::new(span.clone(), a)),
                    origin: joint.map(|_| origin.map(number)),
                    rotation: (rotation != [0.0; 3]).then(|| Spanned::new(span.clone(), rotation)),
                    initial: (kind.is_some() && initial != 0.0).then(|| Spanned::new(span.clone(), initial)),
                    // Set below, once every merged link is in.
                    mass: number(0.0),
                    center_of_mass: None,
                    inertia: None,
                    section: None,
                    hydrodynamics: None,
                    repeat: None,
                });
            }
        }
    }
    Bodies { bodies, body_links, members, body_of, place, frames }
}

/// A box's eight corners, about its centre.
fn box_corners([x, y, z]: [f64; 3]) -> Vec<[f64; 3]> {
    let mut corners = Vec::with_capacity(8);
    for sx in [1.0, -1.0] {
        for sy in [1.0, -1.0] {
            for sz in [1.0, -1.0] {
                corners.push([sx * x / 2.0, sy * y / 2.0, sz * z / 2.0]);
            }
        }
    }
    corners
}

/// Points around a cylinder's two rims (its axis z, centred).
pub const CYLINDER_RIM_POINTS: usize = 8;

/// A cylinder's two rims, `CYLINDER_RIM_POINTS` points each: lying on its side, its lowest
/// point is at most r (1 - cos(pi / 8)) = 0.076 r under the lowest seeded one.
fn cylinder_points(radius: f64, length: f64) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(2 * CYLINDER_RIM_POINTS);
    for z in [length / 2.0, -length / 2.0] {
        for k in 0..CYLINDER_RIM_POINTS {
            let angle = std::f64::consts::TAU * k as f64 / CYLINDER_RIM_POINTS as f64;
            points.push([radius * angle.cos(), radius * angle.sin(), z]);
        }
    }
    points
}

/// A sphere's 42 points: the vertices of an icosahedron with each face cut into four, on
/// the sphere. Whatever its orientation, the sphere's lowest point is at most 0.066 r under
/// the lowest seeded one (12 vertices alone leave 0.20 r).
fn sphere_points(radius: f64) -> Vec<[f64; 3]> {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut vertices: Vec<[f64; 3]> = vec![
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ];
    let unit = |v: [f64; 3]| {
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|x| x / n)
    };
    for v in vertices.iter_mut() {
        *v = unit(*v);
    }
    const FACES: [[usize; 3]; 20] = [
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    // Each edge's midpoint once, in the order the faces meet them.
    let mut midpoints: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for face in FACES {
        for k in 0..3 {
            let (a, b) = (face[k], face[(k + 1) % 3]);
            let edge = (a.min(b), a.max(b));
            if !midpoints.contains_key(&edge) {
                let m = unit(add(vertices[a], vertices[b]));
                midpoints.insert(edge, vertices.len());
                vertices.push(m);
            }
        }
    }
    vertices.into_iter().map(|v| v.map(|x| radius * x)).collect()
}

/// The sum of rigid inertias, about their common centre of mass; None without mass.
fn combine(parts: &[Inertial]) -> Option<Inertial> {
    let mass: f64 = parts.iter().map(|p| p.mass).sum();
    if mass <= 0.0 {
        return None;
    }
    let mut center = [0.0; 3];
    for p in parts {
        for k in 0..3 {
            center[k] += p.mass * p.center[k];
        }
    }
    center = center.map(|c| c / mass);
    let mut tensor = [[0.0; 3]; 3];
    for p in parts {
        // Parallel axes: m (|d|^2 E - d d^T).
        let d = [p.center[0] - center[0], p.center[1] - center[1], p.center[2] - center[2]];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        for i in 0..3 {
            for j in 0..3 {
                let shift = if i == j { d2 } else { 0.0 } - d[i] * d[j];
                tensor[i][j] += p.tensor[i][j] + p.mass * shift;
            }
        }
    }
    Some(Inertial { mass, center, tensor })
}

/// Spec bodies, contact points and markers that name a merged link: moved onto the body it
/// was merged into, their positions and rotations composed with the link's place in it.
/// Expressions stay expressions (the sum is written out), so parameters still reach them.
pub fn apply_frames(
    frames: &BTreeMap<String, Frame>,
    bodies: &mut [Spanned<spec::Body>],
    contact_points: &mut [Spanned<spec::ContactPoints>],
    markers: &mut [Spanned<spec::Marker>],
) {
    for body in bodies.iter_mut() {
        let span = body.span();
        let b = body.get_mut();
        let Some(frame) = b.parent.as_ref().and_then(|p| frames.get(p.get_ref())) else { continue };
        let parent_span = b.parent.as_ref().map_or(span.clone(), |p| p.span());
        b.parent = Some(Spanned::new(parent_span.clone(), frame.body.clone()));
        let origin = b
            .origin
            .clone()
            .unwrap_or_else(|| std::array::from_fn(|_| Spanned::new(parent_span.clone(), Value::Number(0.0))));
        b.origin = Some(moved(frame, &origin));
        let rpy = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
        let rotation_span = b.rotation.as_ref().map_or(parent_span.clone(), |r| r.span());
        // A non-finite rotation is left for validation to name.
        if rpy.iter().all(|v| v.is_finite()) {
            let composed = rpy_from_rotation(&mat_mul(&frame.rotation, &rotation_from_rpy(rpy)));
            b.rotation = Some(Spanned::new(rotation_span, composed));
        }
    }
    for points in contact_points.iter_mut() {
        let c = points.get_mut();
        let Some(frame) = frames.get(c.body.get_ref()) else { continue };
        c.body = Spanned::new(c.body.span(), frame.body.clone());
        for position in c.positions.iter_mut() {
            *position = moved(frame, position);
        }
    }
    for marker in markers.iter_mut() {
        let m = marker.get_mut();
        let Some(frame) = frames.get(m.body.get_ref()) else { continue };
        m.body = Spanned::new(m.body.span(), frame.body.clone());
        // Only a rigid body's position moves; a merged link is never a soft section.
        if let Some(position) = m.position.as_mut() {
            *position = moved(frame, position);
        }
    }
}

/// p + R v, for values that may be expressions.
fn moved(frame: &Frame, v: &spec::Vector) -> spec::Vector {
    let numbers: Option<Vec<f64>> =
        v.iter().map(|x| if let Value::Number(n) = x.get_ref() { Some(*n) } else { None }).collect();
    if let Some(n) = numbers {
        let out = add(frame.position, mat_vec(&frame.rotation, [n[0], n[1], n[2]]));
        return std::array::from_fn(|i| Spanned::new(v[i].span(), Value::Number(out[i])));
    }
    let text = |x: &Spanned<Value>| match x.get_ref() {
        Value::Number(n) => format!("({n:?})"),
        Value::Expression(e) => format!("({e})"),
    };
    std::array::from_fn(|i| {
        let mut sum = format!("{:?}", frame.position[i]);
        for (k, component) in v.iter().enumerate() {
            let coefficient = frame.rotation[i][k];
            if coefficient != 0.0 {
                sum.push_str(&format!(" + {coefficient:?} * {}", text(component)));
            }
        }
        Spanned::new(v[i].span(), Value::Expression(sum))
    })
}

fn identity() -> Matrix3 {
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn mat_vec(m: &Matrix3, v: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

fn mat_mul(a: &Matrix3, b: &Matrix3) -> Matrix3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))
}

fn transpose(m: &Matrix3) -> Matrix3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

/// R = Rz(yaw) Ry(pitch) Rx(roll), URDF's and the spec's convention.
pub fn rotation_from_rpy([roll, pitch, yaw]: [f64; 3]) -> Matrix3 {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

/// The [roll, pitch, yaw] of a rotation matrix (pitch in [-pi/2, pi/2]).
pub fn rpy_from_rotation(r: &Matrix3) -> [f64; 3] {
    let pitch = (-r[2][0]).atan2((r[0][0] * r[0][0] + r[1][0] * r[1][0]).sqrt());
    if (r[0][0] * r[0][0] + r[1][0] * r[1][0]).sqrt() < 1e-12 {
        // Gimbal lock: roll and yaw turn about the same axis; put it all in roll.
        let roll = if pitch > 0.0 { r[0][1].atan2(r[1][1]) } else { (-r[0][1]).atan2(r[1][1]) };
        return [roll, pitch, 0.0];
    }
    [r[2][1].atan2(r[2][2]), pitch, r[1][0].atan2(r[0][0])]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowest of `points` (on a shape about its centre) over the shape's lowest point,
    /// as a fraction of `radius`, worst over many directions of gravity.
    fn worst_lift(points: &[[f64; 3]], radius: f64, support: impl Fn([f64; 3]) -> f64) -> f64 {
        let mut worst: f64 = 0.0;
        // Directions on a fine latitude-longitude grid.
        for i in 0..=180 {
            let polar = std::f64::consts::PI * i as f64 / 180.0;
            for j in 0..360 {
                let azimuth = std::f64::consts::TAU * j as f64 / 360.0;
                let d = [polar.sin() * azimuth.cos(), polar.sin() * azimuth.sin(), polar.cos()];
                let lowest = points.iter().map(|p| p[0] * d[0] + p[1] * d[1] + p[2] * d[2]).fold(f64::MIN, f64::max);
                worst = worst.max((support(d) - lowest) / radius);
            }
        }
        worst
    }

    #[test]
    fn seeded_points_lie_on_their_shapes_and_stay_near_its_lowest_point() {
        let sphere = sphere_points(0.03);
        assert_eq!(sphere.len(), 42);
        for p in &sphere {
            assert!(((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt() - 0.03).abs() < 1e-15);
        }
        let lift = worst_lift(&sphere, 0.03, |_| 0.03);
        assert!(lift < 0.066, "a sphere's lowest seeded point is {lift} r up");
        // Twelve vertices alone would leave 0.20 r: the subdivision is what the figure is for.
        assert!(worst_lift(&sphere[..12], 0.03, |_| 0.03) > 0.19);

        let (r, l) = (0.02, 0.3);
        let cylinder = cylinder_points(r, l);
        assert_eq!(cylinder.len(), 2 * CYLINDER_RIM_POINTS);
        for p in &cylinder {
            assert!(((p[0] * p[0] + p[1] * p[1]).sqrt() - r).abs() < 1e-15 && (p[2].abs() - l / 2.0).abs() < 1e-15);
        }
        // The cylinder's support in direction d: r |d_xy| + l/2 |d_z|.
        let lift = worst_lift(&cylinder, r, |d| r * d[0].hypot(d[1]) + l / 2.0 * d[2].abs());
        let bound = 1.0 - (std::f64::consts::PI / CYLINDER_RIM_POINTS as f64).cos();
        assert!(lift <= bound + 1e-12 && lift > 0.9 * bound, "{lift} against {bound}");

        let corners = box_corners([0.58, 0.14, 0.18]);
        assert_eq!(corners.len(), 8);
        assert!(corners.iter().all(|c| c[0].abs() == 0.29 && c[1].abs() == 0.07 && c[2].abs() == 0.09));
        let lift = worst_lift(&corners, 0.09, |d| 0.29 * d[0].abs() + 0.07 * d[1].abs() + 0.09 * d[2].abs());
        assert!(lift < 1e-15, "a box's corners are its extreme points: {lift}");
    }

    #[test]
    fn rpy_round_trips_through_the_rotation_matrix() {
        for rpy in [[0.1, -0.4, 2.5], [-3.0, 1.2, -0.3], [0.0, 0.0, 0.0], [1.0, std::f64::consts::FRAC_PI_2, 0.0]] {
            let r = rotation_from_rpy(rpy);
            let back = rotation_from_rpy(rpy_from_rotation(&r));
            for i in 0..3 {
                for j in 0..3 {
                    assert!((r[i][j] - back[i][j]).abs() < 1e-14, "{rpy:?}: {r:?} vs {back:?}");
                }
            }
        }
    }

    #[test]
    fn combined_inertia_is_the_parallel_axis_sum() {
        // Two point masses of 1 kg at x = -1 and x = +1: 2 kg at 0 with Iyy = Izz = 2.
        let point = |x: f64| Inertial { mass: 1.0, center: [x, 0.0, 0.0], tensor: [[0.0; 3]; 3] };
        let c = combine(&[point(-1.0), point(1.0)]).unwrap();
        assert_eq!(c.mass, 2.0);
        assert_eq!(c.center, [0.0; 3]);
        assert_eq!(c.tensor, [[0.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]);
    }
}
