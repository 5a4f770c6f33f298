//! Reading the URDF's `<link>`s and `<joint>`s: names, inertials, joint types, ends, axes
//! and limits, each problem reported at its element.

use super::*;

impl<'a> Reader<'a> {
    /// The `<link>`s, each named and with its inertial, and their indices by name.
    pub(super) fn links(
        &mut self,
        robot: roxmltree::Node<'a, 'a>,
        prefix: &str,
    ) -> (Vec<Link<'a>>, BTreeMap<String, usize>) {
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
    pub(super) fn joints(
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
    pub(super) fn joint_kind(&mut self, node: roxmltree::Node, what: &str) -> Option<Kind> {
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
    pub(super) fn joint_end(
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
    pub(super) fn joint_limits(&mut self, node: roxmltree::Node, what: &str, kind: Kind) -> Option<(f64, f64)> {
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
}
