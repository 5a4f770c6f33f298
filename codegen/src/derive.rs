//! The whole-body symbolic derivation, kept as the independent oracle of the recursive path
//! (never emitted): every body's pose written out in q from the base, kinetic and potential
//! energy, M(q), C(q, qd) qd and C(q, qd) from Christoffel symbols, G(q) = dV/dq, contact
//! point positions, velocities and Jacobians, centre of mass and momenta. It shares nothing
//! with `local.rs` and `recursive.rs` but the spec, so agreement between the two (codegen's
//! test) checks both.
//!
//! Its expressions swell with the depth of the tree (108 s for a 22-coordinate snake), so it
//! runs only on the committed robots and the 12-link scaling fixture. A planar chain tracks
//! each body's absolute angle as a sum of coordinates, nothing is expanded, and zero
//! derivatives are skipped.
//!
//! Compiled only with the crate's `oracle` feature, which its own tests turn on: the library
//! does not ship it.
//!
//! Its atom arithmetic and rotations are its own (the generation path has its copy in
//! `symbolic.rs`): the two share only the names of the symbols, the interface through which
//! their outputs are compared.

use crate::model::{Body, CoordinateKind, Inertia, Robot};
use crate::spec::expr::{shortest_decimal, Expr, Number};
use crate::spec::{BaseKind, JointKind};
use crate::symbolic::{param_symbol, q_symbol, qd_symbol};
use symbolica::prelude::*;

/// Everything derived for one robot, as symbolica expressions.
pub struct Derived {
    pub mass_matrix: Vec<Vec<Atom>>,
    pub coriolis: Vec<Atom>,
    pub coriolis_matrix: Vec<Vec<Atom>>,
    pub gravity: Vec<Atom>,
    pub kinetic_energy: Atom,
    pub potential_energy: Atom,
    pub contact_positions: Vec<[Atom; 3]>,
    pub contact_velocities: Vec<[Atom; 3]>,
    pub contact_axes: Vec<[Atom; 3]>,
    pub contact_jacobians: Vec<Vec<[Atom; 3]>>,
    pub center_of_mass: [Atom; 3],
    pub total_mass: Atom,
    pub linear_momentum: [Atom; 3],
    pub angular_momentum: [Atom; 3],
}

fn zero() -> Atom {
    Atom::num(0)
}

/// The exact text symbolica reads for a number: its shortest decimal as a rational `(n/d)`,
/// with integers as long as needed (the 6e-17 of cos(pi / 2) has a 33-digit denominator;
/// exponent notation is not a number to symbolica's parser).
fn number_text(v: f64) -> String {
    let (negative, digits, shift) = shortest_decimal(v);
    let sign = if negative { "-" } else { "" };
    let zeros = "0".repeat(shift.unsigned_abs() as usize);
    if shift >= 0 {
        format!("({sign}{digits}{zeros})")
    } else {
        format!("({sign}{digits}/1{zeros})")
    }
}

fn number(v: f64) -> Atom {
    parse!(&number_text(v))
}

/// `e` with every float replaced by a placeholder symbol, and the placeholders' values.
fn floats_out(e: &Expr, floats: &mut Vec<f64>) -> Expr {
    match e {
        Expr::Num(Number::Float(v)) => {
            floats.push(*v);
            Expr::Sym(format!("float_placeholder_{}_", floats.len() - 1))
        }
        Expr::Num(_) | Expr::Sym(_) => e.clone(),
        Expr::Add(v) => Expr::Add(v.iter().map(|x| floats_out(x, floats)).collect()),
        Expr::Mul(v) => Expr::Mul(v.iter().map(|x| floats_out(x, floats)).collect()),
        Expr::Pow(b, x) => Expr::Pow(Box::new(floats_out(b, floats)), Box::new(floats_out(x, floats))),
        Expr::Call(n, v) => Expr::Call(n.clone(), v.iter().map(|x| floats_out(x, floats)).collect()),
    }
}

/// A spec expression as an atom over `p_` parameter symbols, every number exact.
fn from_expr(e: &Expr) -> Atom {
    let mut floats = Vec::new();
    let without_floats = floats_out(e, &mut floats);
    let renamed = without_floats.rename(&|s| {
        if s == "pi" {
            "pi_placeholder".into()
        } else if s.starts_with("float_placeholder_") {
            s.to_string()
        } else {
            param_symbol(s)
        }
    });
    let mut text = renamed.to_string().replace("pi_placeholder", &number_text(std::f64::consts::PI));
    // Highest index first, so `_1_` is not replaced inside `_11_`.
    for (k, v) in floats.iter().enumerate().rev() {
        text = text.replace(&format!("float_placeholder_{k}_"), &number_text(*v));
    }
    parse!(&text)
}

fn sym(name: &str) -> Atom {
    parse!(name)
}

fn call(f: &str, a: &Atom) -> Atom {
    parse!(&format!("{f}({a})"))
}

fn add(a: &Atom, b: &Atom) -> Atom {
    if a.is_zero() {
        return b.clone();
    }
    if b.is_zero() {
        return a.clone();
    }
    a + b
}

fn mul(a: &Atom, b: &Atom) -> Atom {
    if a.is_zero() || b.is_zero() {
        return zero();
    }
    a * b
}

type Vec3 = [Atom; 3];
type Mat3 = [[Atom; 3]; 3];

fn vadd(a: &Vec3, b: &Vec3) -> Vec3 {
    [add(&a[0], &b[0]), add(&a[1], &b[1]), add(&a[2], &b[2])]
}

fn vscale(a: &Vec3, s: &Atom) -> Vec3 {
    [mul(&a[0], s), mul(&a[1], s), mul(&a[2], s)]
}

fn cross(a: &Vec3, b: &Vec3) -> Vec3 {
    let d = |x: &Atom, y: &Atom, z: &Atom, w: &Atom| add(&mul(x, y), &mul(&number(-1.0), &mul(z, w)));
    [d(&a[1], &b[2], &a[2], &b[1]), d(&a[2], &b[0], &a[0], &b[2]), d(&a[0], &b[1], &a[1], &b[0])]
}

fn dot(a: &Vec3, b: &Vec3) -> Atom {
    add(&add(&mul(&a[0], &b[0]), &mul(&a[1], &b[1])), &mul(&a[2], &b[2]))
}

fn mat_vec(m: &Mat3, v: &Vec3) -> Vec3 {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v)]
}

fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let col = |j: usize| [b[0][j].clone(), b[1][j].clone(), b[2][j].clone()];
    let c = [col(0), col(1), col(2)];
    [
        [dot(&a[0], &c[0]), dot(&a[0], &c[1]), dot(&a[0], &c[2])],
        [dot(&a[1], &c[0]), dot(&a[1], &c[1]), dot(&a[1], &c[2])],
        [dot(&a[2], &c[0]), dot(&a[2], &c[1]), dot(&a[2], &c[2])],
    ]
}

fn transpose(a: &Mat3) -> Mat3 {
    let e = |i: usize, j: usize| a[j][i].clone();
    [[e(0, 0), e(0, 1), e(0, 2)], [e(1, 0), e(1, 1), e(1, 2)], [e(2, 0), e(2, 1), e(2, 2)]]
}

fn identity() -> Mat3 {
    [[number(1.0), zero(), zero()], [zero(), number(1.0), zero()], [zero(), zero(), number(1.0)]]
}

fn constant_vec(v: [f64; 3]) -> Vec3 {
    [number(v[0]), number(v[1]), number(v[2])]
}

/// Rotation by `angle` about the constant unit `axis` (Rodrigues).
fn axis_angle(axis: [f64; 3], angle: &Atom) -> Mat3 {
    let c = call("cos", angle);
    let s = call("sin", angle);
    let one_minus_c = add(&number(1.0), &mul(&number(-1.0), &c));
    let a = constant_vec(axis);
    let skew = [
        [zero(), mul(&number(-1.0), &a[2]), a[1].clone()],
        [a[2].clone(), zero(), mul(&number(-1.0), &a[0])],
        [mul(&number(-1.0), &a[1]), a[0].clone(), zero()],
    ];
    let mut r = identity();
    for i in 0..3 {
        for j in 0..3 {
            let diagonal = if i == j { c.clone() } else { zero() };
            let outer = mul(&one_minus_c, &mul(&a[i], &a[j]));
            r[i][j] = add(&add(&diagonal, &mul(&s, &skew[i][j])), &outer);
        }
    }
    r
}

fn constant_rotation(rpy: [f64; 3]) -> Mat3 {
    let [roll, pitch, yaw] = rpy;
    let m = |a: [f64; 3], t: f64| axis_angle(a, &number(t));
    mat_mul(&mat_mul(&m([0.0, 0.0, 1.0], yaw), &m([0.0, 1.0, 0.0], pitch)), &m([1.0, 0.0, 0.0], roll))
}

/// Orientation of a body in the world.
#[derive(Clone)]
enum Orientation {
    /// Planar robots: angle about the plane normal.
    Planar(Atom),
    Matrix(Mat3),
}

struct BodyFrame {
    position: Vec3,
    orientation: Orientation,
    /// Planar robots: d(angle)/dq_i; spatial robots: world angular-velocity Jacobian columns.
    angular_planar: Vec<f64>,
    angular_spatial: Vec<Vec3>,
}

/// Derives everything for `robot`.
pub fn derive(robot: &Robot) -> Derived {
    let n = robot.coordinates.len();
    let q: Vec<Atom> = (0..n).map(|i| sym(&q_symbol(i))).collect();
    let qd: Vec<Atom> = (0..n).map(|i| sym(&qd_symbol(i))).collect();
    let q_symbols: Vec<Symbol> = (0..n).map(|i| symbol!(q_symbol(i).as_str())).collect();
    let at = Coordinates { robot, qd: &qd, q_symbols: &q_symbols };
    let frames = body_frames(robot, &q);
    let sums = BodySums::of(&at, &frames);
    let BodySums {
        mut mass_matrix,
        potential_energy,
        total_mass,
        mass_moment,
        linear_momentum,
        angular_momentum,
        coriolis,
    } = sums;
    for i in 0..n {
        for j in 0..i {
            mass_matrix[i][j] = mass_matrix[j][i].clone();
        }
    }
    let half = number(0.5);
    let mut kinetic_energy = zero();
    for i in 0..n {
        for j in 0..n {
            kinetic_energy = add(&kinetic_energy, &mul(&mul(&half, &mass_matrix[i][j]), &mul(&qd[i], &qd[j])));
        }
    }
    let coriolis_matrix = christoffel_coriolis_matrix(&at, &mass_matrix);
    let gravity_force: Vec<Atom> = q_symbols.iter().map(|s| potential_energy.derivative(*s)).collect();
    let contacts = ContactTerms::of(&at, &frames);
    let inverse_mass = parse!(&format!("({})^-1", total_mass));
    let center_of_mass = vscale(&mass_moment, &inverse_mass);

    Derived {
        mass_matrix,
        coriolis,
        coriolis_matrix,
        gravity: gravity_force,
        kinetic_energy,
        potential_energy,
        contact_positions: contacts.positions,
        contact_velocities: contacts.velocities,
        contact_axes: contacts.axes,
        contact_jacobians: contacts.jacobians,
        center_of_mass,
        total_mass,
        linear_momentum,
        angular_momentum,
    }
}

/// The robot and its coordinates' atoms: qd and q's symbols (to differentiate by).
struct Coordinates<'a> {
    robot: &'a Robot,
    qd: &'a [Atom],
    q_symbols: &'a [Symbol],
}

impl Orientation {
    /// The rotation matrix, about `normal` for a planar robot's angle.
    fn matrix(&self, normal: Option<[f64; 3]>) -> Mat3 {
        match self {
            Orientation::Planar(angle) => axis_angle(normal.unwrap_or([0.0, 0.0, 1.0]), angle),
            Orientation::Matrix(m) => m.clone(),
        }
    }
}

/// Every body's frame in the world, from the base out.
fn body_frames(robot: &Robot, q: &[Atom]) -> Vec<BodyFrame> {
    let mut frames: Vec<BodyFrame> = Vec::with_capacity(robot.bodies.len());
    for body in &robot.bodies {
        let frame = match body.parent {
            None => base_frame(robot, q),
            Some(p) => child_frame(robot, body, &frames[p], q),
        };
        frames.push(frame);
    }
    frames
}

/// The base's frame: fixed, planar or spatial (yaw, pitch, roll: R = Rz Ry Rx).
fn base_frame(robot: &Robot, q: &[Atom]) -> BodyFrame {
    let n = robot.coordinates.len();
    let normal = robot.plane_normal();
    let mut angular_planar = vec![0.0; n];
    let mut angular_spatial = vec![[zero(), zero(), zero()]; n];
    let (position, orientation) = match (robot.base, normal) {
        (BaseKind::Fixed, Some(_)) => ([zero(), zero(), zero()], Orientation::Planar(zero())),
        (BaseKind::Fixed, None) => ([zero(), zero(), zero()], Orientation::Matrix(identity())),
        (BaseKind::Planar, Some(nv)) => {
            angular_planar[2] = 1.0;
            let position =
                if nv[2] != 0.0 { [q[0].clone(), q[1].clone(), zero()] } else { [q[0].clone(), zero(), q[1].clone()] };
            (position, Orientation::Planar(q[2].clone()))
        }
        (BaseKind::Planar, None) | (BaseKind::Spatial, _) => {
            let rz = axis_angle([0.0, 0.0, 1.0], &q[3]);
            let ry = axis_angle([0.0, 1.0, 0.0], &q[4]);
            let rx = axis_angle([1.0, 0.0, 0.0], &q[5]);
            let rzy = mat_mul(&rz, &ry);
            angular_spatial[3] = constant_vec([0.0, 0.0, 1.0]);
            angular_spatial[4] = mat_vec(&rz, &constant_vec([0.0, 1.0, 0.0]));
            angular_spatial[5] = mat_vec(&rzy, &constant_vec([1.0, 0.0, 0.0]));
            ([q[0].clone(), q[1].clone(), q[2].clone()], Orientation::Matrix(mat_mul(&rzy, &rx)))
        }
    };
    BodyFrame { position, orientation, angular_planar, angular_spatial }
}

/// A body's frame from its parent's: the fixed transform, then its joint's motion.
fn child_frame(robot: &Robot, body: &Body, parent: &BodyFrame, q: &[Atom]) -> BodyFrame {
    let normal = robot.plane_normal();

    let parent_r = parent.orientation.matrix(normal);
    let origin: Vec3 = [from_expr(&body.origin[0]), from_expr(&body.origin[1]), from_expr(&body.origin[2])];
    let joint_position = vadd(&parent.position, &mat_vec(&parent_r, &origin));
    let mut angular_planar = parent.angular_planar.clone();
    let mut angular_spatial = parent.angular_spatial.clone();
    let joint = body.joint.as_ref();
    let (position, orientation) = match (&parent.orientation, normal) {
        (Orientation::Planar(parent_angle), Some(nv)) => {
            // Fixed rotation about the normal: yaw for x-y, pitch about +y for x-z.
            let fixed = if nv[2] != 0.0 { body.rotation[2] } else { -body.rotation[1] };
            let mut angle = add(parent_angle, &number(fixed));
            let mut position = joint_position;
            if let Some(j) = joint {
                if let Some(c) = j.coordinate {
                    match j.kind {
                        JointKind::Revolute => {
                            let sign = if j.axis.iter().zip(nv.iter()).map(|(a, b)| a * b).sum::<f64>() > 0.0 {
                                1.0
                            } else {
                                -1.0
                            };
                            angle = add(&angle, &mul(&number(sign), &q[c]));
                            angular_planar[c] += sign;
                        }
                        JointKind::Prismatic => {
                            let r = axis_angle(nv, &angle);
                            let axis = mat_vec(&r, &constant_vec(j.axis));
                            position = vadd(&position, &vscale(&axis, &q[c]));
                        }
                        JointKind::Fixed => {}
                    }
                }
            }
            (position, Orientation::Planar(angle))
        }
        _ => {
            let r1 = mat_mul(&parent_r, &constant_rotation(body.rotation));
            let mut r = r1.clone();
            let mut position = joint_position;
            if let Some(j) = joint {
                if let Some(c) = j.coordinate {
                    let world_axis = mat_vec(&r1, &constant_vec(j.axis));
                    match j.kind {
                        JointKind::Revolute => {
                            r = mat_mul(&r1, &axis_angle(j.axis, &q[c]));
                            angular_spatial[c] = vadd(&angular_spatial[c], &world_axis);
                        }
                        JointKind::Prismatic => position = vadd(&position, &vscale(&world_axis, &q[c])),
                        JointKind::Fixed => {}
                    }
                }
            }
            (position, Orientation::Matrix(r))
        }
    };
    BodyFrame { position, orientation, angular_planar, angular_spatial }
}

/// The sums over the bodies: M's upper triangle, the energies' and momenta's terms, and
/// C(q, qd) qd by Newton-Euler.
struct BodySums {
    mass_matrix: Vec<Vec<Atom>>,
    potential_energy: Atom,
    total_mass: Atom,
    mass_moment: Vec3,
    linear_momentum: Vec3,
    angular_momentum: Vec3,
    coriolis: Vec<Atom>,
}

impl BodySums {
    fn of(at: &Coordinates, frames: &[BodyFrame]) -> BodySums {
        let Coordinates { robot, q_symbols, qd, .. } = *at;
        let n = robot.coordinates.len();
        let normal = robot.plane_normal();
        let gravity = sym(&param_symbol("gravity"));
        let mut mass_matrix = vec![vec![zero(); n]; n];
        let mut potential_energy = zero();
        let mut total_mass = zero();
        let mut mass_moment = [zero(), zero(), zero()];
        let mut linear_momentum = [zero(), zero(), zero()];
        let mut angular_momentum = [zero(), zero(), zero()];
        // C(q, qd) qd by Newton-Euler: sum over bodies of J' (m a) + Jw' (I_w alpha + w x I_w w),
        // with a and alpha the accelerations at qdd = 0. Equal to the Christoffel form (C qd is
        // unique; only the matrix C is not) and far smaller, since the Jacobians are shared with M.
        let mut coriolis_newton_euler = vec![zero(); n];
        for (body, frame) in robot.bodies.iter().zip(frames) {
            let m = from_expr(&body.mass);
            let r = frame.orientation.matrix(normal);
            let com_local: Vec3 = [
                from_expr(&body.center_of_mass[0]),
                from_expr(&body.center_of_mass[1]),
                from_expr(&body.center_of_mass[2]),
            ];
            let com = vadd(&frame.position, &mat_vec(&r, &com_local));
            // Linear velocity Jacobian of the centre of mass, column by column.
            let jv: Vec<Vec3> = q_symbols
                .iter()
                .map(|s| [com[0].derivative(*s), com[1].derivative(*s), com[2].derivative(*s)])
                .collect();
            for i in 0..n {
                for j in i..n {
                    let mut entry = mul(&m, &dot(&jv[i], &jv[j]));
                    match (&body.inertia, normal) {
                        (Inertia::Planar(inertia), Some(_)) => {
                            let w = frame.angular_planar[i] * frame.angular_planar[j];
                            if w != 0.0 {
                                entry = add(&entry, &mul(&number(w), &from_expr(inertia)));
                            }
                        }
                        (inertia, _) => {
                            let world_inertia = world_inertia(inertia, &r);
                            let wi = &frame.angular_spatial[i];
                            let wj = &frame.angular_spatial[j];
                            entry = add(&entry, &dot(wi, &mat_vec(&world_inertia, wj)));
                        }
                    }
                    mass_matrix[i][j] = add(&mass_matrix[i][j], &entry);
                }
            }
            potential_energy = add(&potential_energy, &mul(&mul(&m, &gravity), &com[2]));
            total_mass = add(&total_mass, &m);
            mass_moment = vadd(&mass_moment, &vscale(&com, &m));
            let mut velocity = [zero(), zero(), zero()];
            for i in 0..n {
                velocity = vadd(&velocity, &vscale(&jv[i], &qd[i]));
            }
            // Acceleration of the centre of mass at qdd = 0.
            let bias = rate_at_rest(&velocity, robot, q_symbols, qd);
            let bias_force = vscale(&bias, &m);
            for i in 0..n {
                coriolis_newton_euler[i] = add(&coriolis_newton_euler[i], &dot(&jv[i], &bias_force));
            }
            if !matches!((&body.inertia, normal), (Inertia::Planar(_), Some(_))) {
                let mut omega = [zero(), zero(), zero()];
                for i in 0..n {
                    omega = vadd(&omega, &vscale(&frame.angular_spatial[i], &qd[i]));
                }
                let alpha = rate_at_rest(&omega, robot, q_symbols, qd);
                let inertia_world = world_inertia(&body.inertia, &r);
                let torque = vadd(&mat_vec(&inertia_world, &alpha), &cross(&omega, &mat_vec(&inertia_world, &omega)));
                for i in 0..n {
                    coriolis_newton_euler[i] = add(&coriolis_newton_euler[i], &dot(&frame.angular_spatial[i], &torque));
                }
            }
            let momentum = vscale(&velocity, &m);
            linear_momentum = vadd(&linear_momentum, &momentum);
            let spin: Vec3 = match (&body.inertia, normal) {
                (Inertia::Planar(inertia), Some(nv)) => {
                    let mut rate = zero();
                    for i in 0..n {
                        if frame.angular_planar[i] != 0.0 {
                            rate = add(&rate, &mul(&number(frame.angular_planar[i]), &qd[i]));
                        }
                    }
                    vscale(&constant_vec(nv), &mul(&from_expr(inertia), &rate))
                }
                (inertia, _) => {
                    let mut omega = [zero(), zero(), zero()];
                    for i in 0..n {
                        omega = vadd(&omega, &vscale(&frame.angular_spatial[i], &qd[i]));
                    }
                    mat_vec(&world_inertia(inertia, &r), &omega)
                }
            };
            angular_momentum = vadd(&vadd(&angular_momentum, &cross(&com, &momentum)), &spin);
        }
        BodySums {
            mass_matrix,
            potential_energy,
            total_mass,
            mass_moment,
            linear_momentum,
            angular_momentum,
            coriolis: coriolis_newton_euler,
        }
    }
}

/// C(q, qd) from the Christoffel symbols of M's derivatives.
fn christoffel_coriolis_matrix(at: &Coordinates, mass_matrix: &[Vec<Atom>]) -> Vec<Vec<Atom>> {
    let Coordinates { robot, q_symbols, qd, .. } = *at;
    let n = robot.coordinates.len();
    let half = number(0.5);
    // dM_ij/dq_k, only for coordinates M depends on (base translations never appear).
    let mut d_mass = vec![vec![vec![zero(); n]; n]; n];
    for i in 0..n {
        for j in i..n {
            for k in 0..n {
                if robot.coordinates[k].kind == CoordinateKind::BaseTranslation {
                    continue;
                }
                let d = mass_matrix[i][j].derivative(q_symbols[k]);
                d_mass[i][j][k] = d.clone();
                d_mass[j][i][k] = d;
            }
        }
    }
    // Christoffel symbols of the first kind: c_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i).
    let mut coriolis_matrix = vec![vec![zero(); n]; n];
    for i in 0..n {
        for j in 0..n {
            let mut entry = zero();
            for k in 0..n {
                let sum = add(&add(&d_mass[i][j][k], &d_mass[i][k][j]), &mul(&number(-1.0), &d_mass[j][k][i]));
                if !sum.is_zero() {
                    entry = add(&entry, &mul(&mul(&half, &sum), &qd[k]));
                }
            }
            coriolis_matrix[i][j] = entry;
        }
    }
    coriolis_matrix
}

/// The contact points' positions, velocities, axes and Jacobians.
struct ContactTerms {
    positions: Vec<Vec3>,
    velocities: Vec<Vec3>,
    axes: Vec<Vec3>,
    jacobians: Vec<Vec<Vec3>>,
}

impl ContactTerms {
    fn of(at: &Coordinates, frames: &[BodyFrame]) -> ContactTerms {
        let Coordinates { robot, q_symbols, qd, .. } = *at;
        let n = robot.coordinates.len();
        let normal = robot.plane_normal();
        // Contact points.
        let mut contact_positions = Vec::new();
        let mut contact_velocities = Vec::new();
        let mut contact_axes = Vec::new();
        let mut contact_jacobians = Vec::new();
        for c in &robot.contact_points {
            let frame = &frames[c.body];
            let r = frame.orientation.matrix(normal);
            let local: Vec3 = [from_expr(&c.position[0]), from_expr(&c.position[1]), from_expr(&c.position[2])];
            let position = vadd(&frame.position, &mat_vec(&r, &local));
            let jacobian: Vec<Vec3> = q_symbols
                .iter()
                .map(|s| [position[0].derivative(*s), position[1].derivative(*s), position[2].derivative(*s)])
                .collect();
            let mut velocity = [zero(), zero(), zero()];
            for i in 0..n {
                velocity = vadd(&velocity, &vscale(&jacobian[i], &qd[i]));
            }
            contact_axes.push([r[0][0].clone(), r[1][0].clone(), r[2][0].clone()]);
            contact_positions.push(position);
            contact_velocities.push(velocity);
            contact_jacobians.push(jacobian);
        }
        ContactTerms {
            positions: contact_positions,
            velocities: contact_velocities,
            axes: contact_axes,
            jacobians: contact_jacobians,
        }
    }
}

/// d(v)/dt at qdd = 0, that is sum_k dv/dq_k qd_k, for a vector `v` linear in qd. Base
/// translations never appear in velocities, so they are skipped.
fn rate_at_rest(v: &Vec3, robot: &Robot, q_symbols: &[Symbol], qd: &[Atom]) -> Vec3 {
    let mut rate = [zero(), zero(), zero()];
    for (k, s) in q_symbols.iter().enumerate() {
        if robot.coordinates[k].kind == CoordinateKind::BaseTranslation {
            continue;
        }
        let dv = [v[0].derivative(*s), v[1].derivative(*s), v[2].derivative(*s)];
        rate = vadd(&rate, &vscale(&dv, &qd[k]));
    }
    rate
}

/// R I R' for a full body-frame inertia.
fn world_inertia(inertia: &Inertia, r: &Mat3) -> Mat3 {
    let body: Mat3 = match inertia {
        Inertia::Full([xx, yy, zz, xy, xz, yz]) => {
            let e = from_expr;
            [[e(xx), e(xy), e(xz)], [e(xy), e(yy), e(yz)], [e(xz), e(yz), e(zz)]]
        }
        // A planar inertia in a spatial robot cannot pass validation; treat as a point mass.
        Inertia::Planar(_) => [[zero(), zero(), zero()], [zero(), zero(), zero()], [zero(), zero(), zero()]],
    };
    mat_mul(&mat_mul(r, &body), &transpose(r))
}
