//! Water acting on a swimming robot's hulls (004, eqs 28-34), as DAG nodes added to the
//! recursive algorithms' outputs. The hulls are hydrodynamically decoupled (each sees still
//! water, as the paper assumes), so every term is a sum over hulls of J_h' (...) with J_h the
//! hull frame's body Jacobian:
//! - buoyancy: the displaced mass rho V pushed up at the centre of buoyancy, in G and the
//!   potential energy (-rho V g z_b), so G = dV/dq holds with it;
//! - added mass: the fluid's kinetic energy 1/2 v' A v with a constant symmetric 6 x 6 A in
//!   the hull's frame (eq 30 with its sign typo fixed), so M gains J' A J, C qd the
//!   Kirchhoff terms J' (A a + v x* A v), and the Christoffel C the body form
//!   J' (A Jdot + B(A, v) J) with B(A, v) u = 1/2 (v x* A u - A (v x u) + u x* A v), which
//!   holds for any body-fixed symmetric inertia, so Mdot - 2 C stays skew;
//! - drag: linear, -D v with eq 32's structure, and quadratic cross-flow by strip theory,
//!   -1/2 rho C_D 2 R |u_perp| u_perp per unit length, as a velocity-dependent generalized
//!   force with its dissipation function R (Q = -dR/dqd, and qd . Q <= 0).
//!
//! A rigid hull is a cylinder along its body's x axis, integrated in closed form (added mass,
//! linear drag) or at Gauss-Legendre strips (the quadratic drag, which is not polynomial). A
//! soft section's hull is its envelope at rest length, one disc per slice: the water pumped
//! into its actuators weighs what it displaces, so the buoyant volume stays the rest volume.

use crate::algorithms::quadrature::gauss_legendre;
use crate::algorithms::spatial::{Articulated, Force, Motion, Vec3};
use crate::algorithms::tree::Frame;
use crate::dag::{Dag, NodeId};

/// Gauss-Legendre strips along a rigid hull for the quadratic cross-flow drag.
const STRIPS: usize = 4;

/// The water's parameters as DAG nodes.
pub(crate) struct WaterNodes {
    pub density: NodeId,
    pub added_mass_coefficient: NodeId,
    pub surge_added_mass: NodeId,
    pub drag_coefficient: NodeId,
    pub surge_linear_drag: NodeId,
    pub roll_linear_drag: NodeId,
    pub reference_speed: NodeId,
    pub gravity: NodeId,
}

/// A hull in its own frame: symmetric 6 x 6 maps from the frame's motion [w; v] (about its
/// origin, in its axes) to force [n; f].
pub(crate) struct Hull {
    pub added_mass: Articulated,
    pub linear_drag: Articulated,
    /// rho V (kg).
    pub displaced_mass: NodeId,
    pub buoyancy_centre: Vec3,
    /// Strips (x along the hull axis, 1/2 rho C_D 2 R times the strip's length).
    pub strips: Vec<(NodeId, NodeId)>,
}

fn symmetric(dag: &mut Dag, entries: &[(usize, usize, NodeId)]) -> Articulated {
    let mut a = dag.zero_articulated();
    for &(r, c, v) in entries {
        a.e[r][c] = v;
        a.e[c][r] = v;
    }
    a
}

// Indices into [w; v].
const ROLL: usize = 0;
const PITCH: usize = 1;
const YAW: usize = 2;
const SURGE: usize = 3;
const SWAY: usize = 4;
const HEAVE: usize = 5;

/// A rigid cylinder of `radius` along x from `start` to `start + length`, buoyant at
/// `buoyancy_centre`. Per unit length it carries added mass m' = C_a rho pi R^2 across and
/// linear drag c' = rho pi R C_D V across (eq 32 with the radius that makes it a force per
/// velocity); integrated over the length: A = m' [alpha L, L, L; 0, I2, I2; couplings +-I1]
/// with I1 = int x dx, I2 = int x^2 dx (eq 30 when the hull starts at the frame), and D
/// likewise with beta along and Omega R^2 L in roll.
pub(crate) fn cylinder(
    dag: &mut Dag,
    water: &WaterNodes,
    radius: NodeId,
    length: NodeId,
    start: NodeId,
    buoyancy_centre: Vec3,
) -> Hull {
    let pi = dag.number(std::f64::consts::PI);
    let area = dag.mul(vec![pi, radius, radius]);
    let end = dag.add2(start, length);
    let moment = |dag: &mut Dag, power: i32| {
        let a = dag.powi(end, power);
        let b = dag.powi(start, power);
        let difference = dag.sub(a, b);
        let inverse = dag.number(1.0 / power as f64);
        dag.mul2(difference, inverse)
    };
    let first = moment(dag, 2);
    let second = moment(dag, 3);
    let per_length = dag.mul(vec![water.added_mass_coefficient, water.density, area]);
    let across = dag.mul2(per_length, length);
    let along = dag.mul2(across, water.surge_added_mass);
    let coupling = dag.mul2(per_length, first);
    let minus_coupling = dag.neg(coupling);
    let rotational = dag.mul2(per_length, second);
    let added_mass = symmetric(
        dag,
        &[
            (SURGE, SURGE, along),
            (SWAY, SWAY, across),
            (HEAVE, HEAVE, across),
            (PITCH, PITCH, rotational),
            (YAW, YAW, rotational),
            (SWAY, YAW, coupling),
            (HEAVE, PITCH, minus_coupling),
        ],
    );
    let drag_per_length = dag.mul(vec![water.density, pi, radius, water.drag_coefficient, water.reference_speed]);
    let drag_across = dag.mul2(drag_per_length, length);
    let drag_along = dag.mul2(drag_across, water.surge_linear_drag);
    let drag_roll = dag.mul(vec![drag_across, water.roll_linear_drag, radius, radius]);
    let drag_coupling = dag.mul2(drag_per_length, first);
    let minus_drag_coupling = dag.neg(drag_coupling);
    let drag_rotational = dag.mul2(drag_per_length, second);
    let linear_drag = symmetric(
        dag,
        &[
            (SURGE, SURGE, drag_along),
            (SWAY, SWAY, drag_across),
            (HEAVE, HEAVE, drag_across),
            (ROLL, ROLL, drag_roll),
            (PITCH, PITCH, drag_rotational),
            (YAW, YAW, drag_rotational),
            (SWAY, YAW, drag_coupling),
            (HEAVE, PITCH, minus_drag_coupling),
        ],
    );
    let volume = dag.mul2(area, length);
    let displaced_mass = dag.mul2(water.density, volume);
    // 1/2 rho C_D (2 R) per unit length, times each strip's length.
    let cross_flow = dag.mul(vec![water.density, water.drag_coefficient, radius]);
    let strips = gauss_legendre(STRIPS)
        .into_iter()
        .map(|(xi, weight)| {
            let xi = dag.number(xi);
            let along = dag.mul2(length, xi);
            let x = dag.add2(start, along);
            let weight = dag.number(weight);
            (x, dag.mul(vec![cross_flow, length, weight]))
        })
        .collect();
    Hull { added_mass, linear_drag, displaced_mass, buoyancy_centre, strips }
}

/// One slice of a soft section's hull: a disc of `radius` and thickness `rest_length *
/// weight` at the slice's centre, with the section's per-length added mass and drag across,
/// alpha and beta along, and Omega R^2 in roll (its pitch and yaw come from the slices' lever
/// arms).
pub(crate) fn slice(dag: &mut Dag, water: &WaterNodes, radius: NodeId, rest_length: NodeId, weight: f64) -> Hull {
    let pi = dag.number(std::f64::consts::PI);
    let weight = dag.number(weight);
    let thickness = dag.mul2(rest_length, weight);
    let area = dag.mul(vec![pi, radius, radius]);
    let across = dag.mul(vec![water.added_mass_coefficient, water.density, area, thickness]);
    let along = dag.mul2(across, water.surge_added_mass);
    let added_mass = symmetric(dag, &[(SURGE, SURGE, along), (SWAY, SWAY, across), (HEAVE, HEAVE, across)]);
    let drag_across =
        dag.mul(vec![water.density, pi, radius, water.drag_coefficient, water.reference_speed, thickness]);
    let drag_along = dag.mul2(drag_across, water.surge_linear_drag);
    let drag_roll = dag.mul(vec![drag_across, water.roll_linear_drag, radius, radius]);
    let linear_drag = symmetric(
        dag,
        &[(SURGE, SURGE, drag_along), (SWAY, SWAY, drag_across), (HEAVE, HEAVE, drag_across), (ROLL, ROLL, drag_roll)],
    );
    let displaced_mass = dag.mul(vec![water.density, area, thickness]);
    let zero = dag.number(0.0);
    let cross_flow = dag.mul(vec![water.density, water.drag_coefficient, radius, thickness]);
    Hull {
        added_mass,
        linear_drag,
        displaced_mass,
        buoyancy_centre: [zero, zero, zero],
        strips: vec![(zero, cross_flow)],
    }
}

/// Where water terms are added: the robot's outputs so far.
pub(crate) struct WaterRows<'a> {
    pub mass_matrix: &'a mut Vec<Vec<NodeId>>,
    pub coriolis: &'a mut Vec<NodeId>,
    pub coriolis_matrix: &'a mut Vec<Vec<NodeId>>,
    pub gravity: &'a mut Vec<NodeId>,
    /// Terms of the potential energy.
    pub potential: &'a mut Vec<NodeId>,
    /// The drag's generalized force, per coordinate.
    pub drag: &'a mut Vec<NodeId>,
    /// Terms of the drag's dissipation function.
    pub dissipation: &'a mut Vec<NodeId>,
}

/// B(A, v) u = 1/2 (v x* A u - A (v x u) + u x* A v).
fn b_times(dag: &mut Dag, a: &Articulated, v: &Motion, momentum: &Force, u: &Motion) -> Force {
    let au = dag.articulated_times(a, u);
    let first = dag.force_cross(v, &au);
    let vu = dag.motion_cross(v, u);
    let second = dag.articulated_times(a, &vu);
    let third = dag.force_cross(u, momentum);
    let sum = dag.sub_force(&first, &second);
    let sum = dag.add_force(&sum, &third);
    let half = dag.number(0.5);
    dag.scale_force(&sum, half)
}

/// Adds one hull's water terms. `frame` is the hull frame's world pose, velocity and bias
/// acceleration; `columns` the world column S_j and its rate of every coordinate that moves
/// it (its path from the root).
pub(crate) fn immerse(
    dag: &mut Dag,
    name: &str,
    hull: &Hull,
    water: &WaterNodes,
    frame: &Frame,
    columns: &[(usize, Motion, Motion)],
    rows: &mut WaterRows,
) {
    let Frame { rotation, position, velocity, bias } = frame;
    // Everything in the hull's frame, where A and D are constant.
    let local: Vec<(usize, Motion, Motion)> = columns
        .iter()
        .map(|(j, s, sd)| {
            let s_local = dag.motion_to_frame(rotation, position, s);
            let s_local = dag.pin_motion(s_local, &format!("{name}_hull_column{j}"));
            (*j, s_local, dag.motion_to_frame(rotation, position, sd))
        })
        .collect();
    let v = dag.motion_to_frame(rotation, position, velocity);
    let a = dag.motion_to_frame(rotation, position, bias);

    // Added mass: M += J' A J.
    let projected: Vec<Force> = local
        .iter()
        .map(|(j, s, _)| {
            let f = dag.articulated_times(&hull.added_mass, s);
            dag.pin_force(f, &format!("{name}_hull_projected{j}"))
        })
        .collect();
    for (x, (i, s_i, _)) in local.iter().enumerate() {
        for (y, (j, _, _)) in local.iter().enumerate().take(x + 1) {
            let extra = dag.force_dot_motion(&projected[y], s_i);
            rows.mass_matrix[*i][*j] = dag.add2(rows.mass_matrix[*i][*j], extra);
            if i != j {
                rows.mass_matrix[*j][*i] = rows.mass_matrix[*i][*j];
            }
        }
    }
    // C qd += J' (A a + v x* A v), the Kirchhoff terms.
    let momentum = dag.articulated_times(&hull.added_mass, &v);
    let inertial = dag.articulated_times(&hull.added_mass, &a);
    let gyroscopic = dag.force_cross(&v, &momentum);
    let force = dag.add_force(&inertial, &gyroscopic);
    for (i, s_i, _) in &local {
        let extra = dag.force_dot_motion(&force, s_i);
        rows.coriolis[*i] = dag.add2(rows.coriolis[*i], extra);
    }
    // Christoffel C += J' (A Jdot + B(A, v) J).
    for (j, s_j, sd_j) in &local {
        let from_rate = dag.articulated_times(&hull.added_mass, sd_j);
        let from_b = b_times(dag, &hull.added_mass, &v, &momentum, s_j);
        let column = dag.add_force(&from_rate, &from_b);
        for (i, s_i, _) in &local {
            let extra = dag.force_dot_motion(&column, s_i);
            rows.coriolis_matrix[*i][*j] = dag.add2(rows.coriolis_matrix[*i][*j], extra);
        }
    }

    // Buoyancy: rho V g up at the centre of buoyancy; G = dV/dq gains -S_j . (c x F; F).
    let turned = dag.mat_vec3(rotation, &hull.buoyancy_centre);
    let centre = dag.add3(position, &turned);
    let centre = dag.pin3(centre, &format!("{name}_buoyancy_centre"));
    let lift = dag.mul2(hull.displaced_mass, water.gravity);
    let zero = dag.number(0.0);
    let up = [zero, zero, lift];
    let wrench = Force { n: dag.cross3(&centre, &up), f: up };
    for (j, s, _) in columns {
        let extra = dag.force_dot_motion(&wrench, s);
        rows.gravity[*j] = dag.sub(rows.gravity[*j], extra);
    }
    let height = dag.mul2(lift, centre[2]);
    rows.potential.push(dag.neg(height));

    // Drag in the hull's frame: linear -D v, and per strip at x the cross-flow velocity
    // u = (v_y + w_z x, v_z - w_y x) with force -k |u| u and moment (x, 0, 0) x F.
    let linear = dag.articulated_times(&hull.linear_drag, &v);
    let half = dag.number(0.5);
    let power = dag.force_dot_motion(&linear, &v);
    rows.dissipation.push(dag.mul2(half, power));
    let mut drag = Force { n: linear.n.map(|x| dag.neg(x)), f: linear.f.map(|x| dag.neg(x)) };
    for &(x, k) in &hull.strips {
        let turn_z = dag.mul2(v.w[2], x);
        let turn_y = dag.mul2(v.w[1], x);
        let u_y = dag.add2(v.v[1], turn_z);
        let u_z = dag.sub(v.v[2], turn_y);
        let squared = {
            let yy = dag.mul2(u_y, u_y);
            let zz = dag.mul2(u_z, u_z);
            dag.add2(yy, zz)
        };
        let speed = dag.powf(squared, 0.5);
        let scale = dag.mul2(k, speed);
        let f_y = dag.mul2(scale, u_y);
        let f_z = dag.mul2(scale, u_z);
        let f_y = dag.neg(f_y);
        let f_z = dag.neg(f_z);
        drag.f[1] = dag.add2(drag.f[1], f_y);
        drag.f[2] = dag.add2(drag.f[2], f_z);
        let pitch = dag.mul2(x, f_z);
        let yaw = dag.mul2(x, f_y);
        drag.n[1] = dag.sub(drag.n[1], pitch);
        drag.n[2] = dag.add2(drag.n[2], yaw);
        let third = dag.number(1.0 / 3.0);
        let cubed = dag.mul(vec![squared, speed]);
        rows.dissipation.push(dag.mul(vec![third, k, cubed]));
    }
    for (i, s_i, _) in &local {
        let extra = dag.force_dot_motion(&drag, s_i);
        rows.drag[*i] = dag.add2(rows.drag[*i], extra);
    }
}
