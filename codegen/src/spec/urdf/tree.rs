//! The tree under the root link, its links merged into bodies (a moving link's body takes
//! the links fixed to it), and each body's mass, centre and inertia from its links'.

use super::*;

impl<'a> Reader<'a> {
    /// The root link (named, or the URDF's one root) and the links under it, parents first,
    /// without those in `exclude` and their subtrees.
    pub(super) fn tree_order(
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
    pub(super) fn body_inertials(
        &mut self,
        tree: &Tree,
        bodies: &mut Bodies,
        root: usize,
        span: &std::ops::Range<usize>,
    ) {
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
}

/// The bodies: the root and each link on a moving joint; links on fixed joints merge into
/// the body of their parent, at their place in it.
pub(super) fn bodies(tree: &Tree, order: &[usize], root: usize, prefix: &str, span: &std::ops::Range<usize>) -> Bodies {
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

/// The sum of rigid inertias, about their common centre of mass; None without mass.
pub(super) fn combine(parts: &[Inertial]) -> Option<Inertial> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
