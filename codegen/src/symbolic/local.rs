//! The robot as one tree of links, with each link's local pieces derived by symbolica: the
//! transform from its parent (fixed offset and rotation composed with the joint's motion,
//! expanded and simplified with the joint coordinate as the only variable), its joint axis,
//! and its inertia terms in its own frame. These expressions stay small whatever the size of
//! the robot; the recursive algorithms compose them numerically, body by body.
//!
//! A floating base becomes a chain of massless virtual links, one coordinate each (planar:
//! x, then z or y, then the angle; spatial: x, y, z, then yaw, pitch and roll about the
//! rotated axes, R = Rz Ry Rx), so every joint of the tree moves one coordinate about an axis
//! fixed in its link and one algorithm serves every base.

use crate::model::{ContactPoint, Elasticity, Inertia, Robot, SectionKind, SoftSection};
use crate::spec::{BaseKind, JointKind};
use crate::symbolic::{add, axis_angle, from_expr, identity, mat_mul, mul, number, q_symbol, sym, zero, Mat3, Vec3};
use symbolica::prelude::*;

/// How a link moves relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkJointKind {
    Revolute,
    Prismatic,
}

/// A link's joint: one coordinate about (or along) a unit axis given in the parent frame.
#[derive(Clone, Debug)]
pub struct LinkJoint {
    pub kind: LinkJointKind,
    pub axis: [f64; 3],
    pub coordinate: usize,
}

/// A body's mass, centre of mass and rotational inertia about it, in its own frame.
pub struct LinkInertia {
    pub mass: Atom,
    pub center_of_mass: Vec3,
    pub inertia: Mat3,
}

/// One link of the tree: a body of the spec or a virtual link of a floating base.
pub struct Link {
    /// Identifier for the link's intermediates in generated code.
    pub name: String,
    pub parent: Option<usize>,
    /// The spec body this link is (None for virtual links).
    pub body: Option<usize>,
    /// Rotation of the link frame in the parent frame, R(q).
    pub rotation: Mat3,
    /// Origin of the link frame in the parent frame, t(q).
    pub translation: Vec3,
    pub joint: Option<LinkJoint>,
    pub inertia: Option<LinkInertia>,
    /// A constant-curvature section: `rotation` and `translation` place its base frame in
    /// the parent's, its children hang from its tip, and its mass is in slices along it.
    pub section: Option<SectionLink>,
}

/// A soft section as a joint of the tree: its coordinates set three shape variables (length
/// and bending-angle vector, see [`crate::symbolic::section`]), and its mass is a row of thin slices at
/// Gauss-Legendre nodes.
pub struct SectionLink {
    pub coordinates: Vec<usize>,
    /// `len`, `bend_y`, `bend_z` in the section's coordinates and the parameters.
    pub shape: [Atom; 3],
    /// d(shape)/dq for each of its coordinates (constants or parameters: the map is affine).
    pub shape_gradient: Vec<[Atom; 3]>,
    pub mass: Atom,
    /// The slices' rotational inertia about their own axes per unit mass (x along the
    /// centre line): a thin disc of radius r, (r^2 / 2, r^2 / 4, r^2 / 4).
    pub slice_inertia: [Atom; 3],
    /// Nodes xi in [0, 1] and weights (summing to 1) of the slices.
    pub quadrature: Vec<(f64, f64)>,
    /// Per coordinate: its elastic energy, force (dE/dq) and stiffness (d2E/dq2).
    pub elastic: Vec<ElasticTerm>,
    /// Linear viscous damping of each coordinate.
    pub damping: Atom,
    /// The actuators' power-law viscosity (extensible sections with a viscous material).
    pub viscosity: Option<ViscousLaw>,
}

/// One coordinate's elastic energy and its first two derivatives, derived by symbolica.
pub struct ElasticTerm {
    pub energy: Atom,
    pub force: Atom,
    pub stiffness: Atom,
}

/// The power-law viscosity of an extensible section's actuators, as atoms.
pub struct ViscousLaw {
    pub area: Atom,
    pub consistency: Atom,
    pub power_index: Atom,
    pub rate_scale: Atom,
    pub rest_length: Atom,
}

/// The elastic energy of one coordinate `q` and its derivatives: 1/2 K q^2, or the Yeoh
/// energy area L0 sum_p C_p0 (I1 - 3)^p of an actuator stretched to lambda = 1 + q / L0,
/// I1 = lambda^2 + 2 / lambda; symbolica differentiates it.
fn elastic_term(elasticity: &Elasticity, coordinate: usize, rest_length: &Atom) -> ElasticTerm {
    let q = sym(&q_symbol(coordinate));
    let energy = match elasticity {
        Elasticity::Linear(k) => parse!(&format!("1/2*({})*({q})^2", from_expr(k))),
        Elasticity::Yeoh { coefficients, area } => {
            let stretch = parse!(&format!("1+({q})/({rest_length})"));
            let invariant = parse!(&format!("({stretch})^2+2*({stretch})^-1-3"));
            let mut sum = zero();
            for (p, c) in coefficients.iter().enumerate() {
                sum = add(&sum, &parse!(&format!("({})*({invariant})^{}", from_expr(c), p + 1)));
            }
            parse!(&format!("({})*({rest_length})*({sum})", from_expr(area)))
        }
    };
    let variable = symbol!(q_symbol(coordinate).as_str());
    let force = energy.derivative(variable);
    let stiffness = force.derivative(variable);
    ElasticTerm { energy, force, stiffness }
}

fn rotation_about(axis: [f64; 3], angle: f64) -> [[f64; 3]; 3] {
    let (s, c) = angle.sin_cos();
    let [x, y, z] = axis;
    let t = 1.0 - c;
    [
        [c + x * x * t, x * y * t - z * s, x * z * t + y * s],
        [y * x * t + z * s, c + y * y * t, y * z * t - x * s],
        [z * x * t - y * s, z * y * t + x * s, c + z * z * t],
    ]
}

/// A body's fixed rotation in its parent's frame from the spec's [roll, pitch, yaw]
/// (R = Rz Ry Rx). Planar robots turn about the plane normal only: the in-plane angle (yaw
/// for x-y, pitch about +y for x-z), and a revolute joint turns about +-normal, as the
/// planar spec format defines.
pub fn fixed_rotation(rpy: [f64; 3], normal: Option<[f64; 3]>) -> [[f64; 3]; 3] {
    match normal {
        Some(n) => rotation_about(n, if n[2] != 0.0 { rpy[2] } else { -rpy[1] }),
        None => {
            let [roll, pitch, yaw] = rpy;
            times(
                &times(&rotation_about([0.0, 0.0, 1.0], yaw), &rotation_about([0.0, 1.0, 0.0], pitch)),
                &rotation_about([1.0, 0.0, 0.0], roll),
            )
        }
    }
}

fn times(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            *entry = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

fn apply(a: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|k| a[i][k] * v[k]).sum())
}

fn constant_matrix(m: &[[f64; 3]; 3]) -> Mat3 {
    m.map(|row| row.map(number))
}

fn expanded(m: Mat3) -> Mat3 {
    m.map(|row| row.map(|e| e.expand()))
}

fn virtual_link(name: &str, parent: Option<usize>, kind: LinkJointKind, axis: [f64; 3], coordinate: usize) -> Link {
    let q = sym(&q_symbol(coordinate));
    let (rotation, translation) = match kind {
        LinkJointKind::Revolute => (expanded(axis_angle(axis, &q)), [zero(), zero(), zero()]),
        LinkJointKind::Prismatic => (identity(), axis.map(|a| if a == 0.0 { zero() } else { number(a) * &q })),
    };
    Link {
        name: name.to_string(),
        parent,
        body: None,
        rotation,
        translation,
        joint: Some(LinkJoint { kind, axis, coordinate }),
        inertia: None,
        section: None,
    }
}

/// The robot's links in parent-first order. Each spec body is one link; a floating base
/// adds its virtual links before the base body.
pub fn links(robot: &Robot) -> Vec<Link> {
    let normal = robot.plane_normal();
    let mut links: Vec<Link> = Vec::new();
    let mut link_of_body: Vec<usize> = Vec::with_capacity(robot.bodies.len());
    for (index, body) in robot.bodies.iter().enumerate() {
        let inertia = Some(LinkInertia {
            mass: from_expr(&body.mass).expand(),
            center_of_mass: body.center_of_mass.clone().map(|e| from_expr(&e).expand()),
            inertia: match (&body.inertia, normal) {
                (Inertia::Planar(i), Some(n)) => {
                    // About the plane normal only: i n n'.
                    let i = from_expr(i);
                    [0, 1, 2].map(|a| {
                        [0, 1, 2].map(|b| if n[a] * n[b] == 0.0 { zero() } else { (number(n[a] * n[b]) * &i).expand() })
                    })
                }
                (Inertia::Full([xx, yy, zz, xy, xz, yz]), _) => {
                    let e = |x: &crate::spec::expr::Expr| from_expr(x).expand();
                    [[e(xx), e(xy), e(xz)], [e(xy), e(yy), e(yz)], [e(xz), e(yz), e(zz)]]
                }
                // A planar inertia in a spatial robot does not pass validation.
                (Inertia::Planar(_), None) => {
                    [[zero(), zero(), zero()], [zero(), zero(), zero()], [zero(), zero(), zero()]]
                }
            },
        });
        let link = match body.parent {
            None => {
                let mut parent = None;
                match (robot.base, normal) {
                    (BaseKind::Fixed, _) => {}
                    (BaseKind::Planar, Some(n)) => {
                        let second =
                            if n[2] != 0.0 { ("base_y", [0.0, 1.0, 0.0]) } else { ("base_z", [0.0, 0.0, 1.0]) };
                        for (k, (name, kind, axis)) in [
                            ("base_x", LinkJointKind::Prismatic, [1.0, 0.0, 0.0]),
                            (second.0, LinkJointKind::Prismatic, second.1),
                            ("base_angle", LinkJointKind::Revolute, n),
                        ]
                        .into_iter()
                        .enumerate()
                        {
                            links.push(virtual_link(name, parent, kind, axis, k));
                            parent = Some(links.len() - 1);
                        }
                    }
                    (BaseKind::Planar, None) | (BaseKind::Spatial, _) => {
                        for (k, (name, kind, axis)) in [
                            ("base_x", LinkJointKind::Prismatic, [1.0, 0.0, 0.0]),
                            ("base_y", LinkJointKind::Prismatic, [0.0, 1.0, 0.0]),
                            ("base_z", LinkJointKind::Prismatic, [0.0, 0.0, 1.0]),
                            ("base_yaw", LinkJointKind::Revolute, [0.0, 0.0, 1.0]),
                            ("base_pitch", LinkJointKind::Revolute, [0.0, 1.0, 0.0]),
                            ("base_roll", LinkJointKind::Revolute, [1.0, 0.0, 0.0]),
                        ]
                        .into_iter()
                        .enumerate()
                        {
                            links.push(virtual_link(name, parent, kind, axis, k));
                            parent = Some(links.len() - 1);
                        }
                    }
                }
                Link {
                    name: body.name.clone(),
                    parent,
                    body: Some(index),
                    rotation: identity(),
                    translation: [zero(), zero(), zero()],
                    joint: None,
                    inertia,
                    section: None,
                }
            }
            Some(p) => {
                let fixed = fixed_rotation(body.rotation, normal);
                let origin: Vec3 = body.origin.clone().map(|e| from_expr(&e).expand());
                let joint = body.joint.as_ref().and_then(|j| {
                    let coordinate = j.coordinate?;
                    let kind = match j.kind {
                        JointKind::Revolute => LinkJointKind::Revolute,
                        JointKind::Prismatic => LinkJointKind::Prismatic,
                        JointKind::Fixed => return None,
                    };
                    let axis = match (kind, normal) {
                        (LinkJointKind::Revolute, Some(n)) => {
                            let sign = if j.axis.iter().zip(n.iter()).map(|(a, b)| a * b).sum::<f64>() > 0.0 {
                                1.0
                            } else {
                                -1.0
                            };
                            n.map(|c| sign * c)
                        }
                        _ => j.axis,
                    };
                    Some((kind, axis, coordinate))
                });
                let (rotation, translation, joint) = match joint {
                    None => (constant_matrix(&fixed), origin, None),
                    Some((kind, axis, coordinate)) => {
                        let q = sym(&q_symbol(coordinate));
                        let parent_axis = apply(&fixed, axis);
                        let link_joint = Some(LinkJoint { kind, axis: parent_axis, coordinate });
                        match kind {
                            LinkJointKind::Revolute => {
                                let rotation = expanded(mat_mul(&constant_matrix(&fixed), &axis_angle(axis, &q)));
                                (rotation, origin, link_joint)
                            }
                            LinkJointKind::Prismatic => {
                                let translation = [0, 1, 2].map(|k| {
                                    if parent_axis[k] == 0.0 {
                                        origin[k].clone()
                                    } else {
                                        (&origin[k] + number(parent_axis[k]) * &q).expand()
                                    }
                                });
                                (constant_matrix(&fixed), translation, link_joint)
                            }
                        }
                    }
                };
                Link {
                    name: body.name.clone(),
                    parent: Some(link_of_body[p]),
                    body: Some(index),
                    rotation,
                    translation,
                    joint,
                    inertia,
                    section: None,
                }
            }
        };
        let mut link = link;
        if let Some(section) = &body.section {
            link.inertia = None;
            link.joint = None;
            link.section = Some(section_link(section, &body.mass));
        }
        links.push(link);
        link_of_body.push(links.len() - 1);
    }
    links
}

/// A contact point's offset in its body's frame, simplified.
pub fn contact_point_offset(point: &ContactPoint) -> Vec3 {
    point.position.clone().map(|e| from_expr(&e).expand())
}

/// The local pieces printed readably, one link at a time (for the equations snapshot).
#[cfg(feature = "oracle")]
pub fn local_report(robot: &Robot, links: &[Link]) -> String {
    let mut out = String::from("Local pieces (each link in its parent's frame)\n");
    for link in links {
        let parent = link.parent.map_or("world".to_string(), |p| links[p].name.clone());
        out.push_str(&format!("\n{} (parent {parent})\n", link.name));
        if let Some(j) = &link.joint {
            out.push_str(&format!(
                "  joint: {:?} about {:?}, coordinate q{} ({})\n",
                j.kind, j.axis, j.coordinate, robot.coordinates[j.coordinate].name
            ));
        }
        for (i, row) in link.rotation.iter().enumerate() {
            out.push_str(&format!("  R[{i}] = [{}, {}, {}]\n", row[0], row[1], row[2]));
        }
        let t = &link.translation;
        out.push_str(&format!("  t = [{}, {}, {}]\n", t[0], t[1], t[2]));
        if let Some(inertia) = &link.inertia {
            let c = &inertia.center_of_mass;
            out.push_str(&format!("  m = {}, c = [{}, {}, {}]\n", inertia.mass, c[0], c[1], c[2]));
            for (i, row) in inertia.inertia.iter().enumerate() {
                out.push_str(&format!("  I[{i}] = [{}, {}, {}]\n", row[0], row[1], row[2]));
            }
        }
    }
    out
}

/// A section's shape map (length, bending angles) from its coordinates:
/// - extensible, actuators at radius r and angles psi_j: len = L0 + mean(l),
///   bend_y = -2 / (3 r) sum_j l_j cos psi_j, bend_z = -2 / (3 r) sum_j l_j sin psi_j;
/// - inextensible, curvatures (k_y, k_z): len = L0, bend = L0 (k_y, k_z);
/// - planar, curvature k: len = L0, bend_y = L0 k (or bend_z, in the x-z plane).
fn section_link(section: &SoftSection, mass: &crate::spec::expr::Expr) -> SectionLink {
    let count = section.coordinates;
    let coordinates: Vec<usize> = (0..count).map(|j| section.first_coordinate + j).collect();
    let q: Vec<Atom> = coordinates.iter().map(|&c| sym(&q_symbol(c))).collect();
    let rest_length = from_expr(&section.rest_length);
    let shape_gradient: Vec<[Atom; 3]> = match &section.kind {
        SectionKind::Extensible { actuator_radius, actuator_angles } => {
            let radius = from_expr(actuator_radius);
            let per_radius = mul(&number(-2.0 / 3.0), &parse!(&format!("({radius})^-1")));
            actuator_angles
                .iter()
                .map(|angle| {
                    let angle = from_expr(angle);
                    let cos = crate::symbolic::call("cos", &angle);
                    let sin = crate::symbolic::call("sin", &angle);
                    [number(1.0 / 3.0), mul(&per_radius, &cos).expand(), mul(&per_radius, &sin).expand()]
                })
                .collect()
        }
        SectionKind::Inextensible => vec![[zero(), rest_length.clone(), zero()], [zero(), zero(), rest_length.clone()]],
        SectionKind::Planar { towards_z: false } => vec![[zero(), rest_length.clone(), zero()]],
        SectionKind::Planar { towards_z: true } => vec![[zero(), zero(), rest_length.clone()]],
    };
    let shape: [Atom; 3] = std::array::from_fn(|x| {
        let mut e = if x == 0 { rest_length.clone() } else { zero() };
        for (j, gradient) in shape_gradient.iter().enumerate() {
            e = add(&e, &mul(&gradient[x], &q[j]));
        }
        e.expand()
    });
    let elastic = coordinates.iter().map(|&c| elastic_term(&section.elasticity, c, &rest_length)).collect();
    SectionLink {
        coordinates,
        shape,
        shape_gradient,
        mass: from_expr(mass).expand(),
        slice_inertia: section.slice_inertia.clone().map(|e| from_expr(&e).expand()),
        quadrature: crate::algorithms::quadrature::gauss_legendre(section.quadrature),
        elastic,
        damping: from_expr(&section.damping),
        viscosity: section.viscosity.as_ref().map(|v| ViscousLaw {
            area: from_expr(&v.area),
            consistency: from_expr(&v.consistency),
            power_index: from_expr(&v.power_index),
            rate_scale: from_expr(&v.rate_scale),
            rest_length: rest_length.clone(),
        }),
    }
}
