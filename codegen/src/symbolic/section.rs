//! A constant-curvature section's local kinematics, derived by symbolica once for every
//! section kind: the centre line's position and frame at xi, and their first and second
//! partial derivatives by the shape variables, all in the section's base frame.
//!
//! Every kind bends the same way and differs only in how its coordinates set three shape
//! variables, each affine in the coordinates: the length `len` and the bending-angle vector
//! (`bend_y`, `bend_z`) (the section turns about (0, -bend_z, bend_y) by its norm; see
//! [`crate::symbolic::local`] for each kind's map). With the rotation vector phi = xi (0, -bend_z,
//! bend_y) and s = |phi|^2:
//! - frame R = exp([phi]x) = I + c1(s) [phi]x + c2(s) [phi]x^2,
//! - centre line p = len xi J(phi) e_x, J = I + c2(s) [phi]x + c3(s) [phi]x^2 (the integral
//!   of R along the arc),
//! - angular velocity R' R^T = J(phi) phi' (J is exp's left Jacobian).
//!
//! c_k are the Stumpff functions: entire in s, so nothing divides by the curvature and every
//! expression is finite and smooth at the straight pose. symbolica differentiates them as
//! plain symbols with dc_k/ds = (k c_(k+2) - c_(k+1)) / 2; the generated code evaluates all
//! of them at a station with one call of the runtime's `stumpff`.
//!
//! A shape variable x turns the station's frame at w_x = J dphi/dx and moves its origin at
//! dp/dx; the recursive algorithms make the Plücker column (w_x, dp/dx - w_x x p) and its
//! rate from these and the second partials.

use crate::symbolic::{add, identity, mat_mul, mat_vec, mul, number, sym, zero, Mat3, Vec3};
use symbolica::prelude::*;

/// The shape variables, in the order of the partial derivatives below.
pub const SHAPE: [&str; 3] = ["len", "bend_y", "bend_z"];
/// The shape variables' rates, in the same order: symbols of the bias pieces. Every kind's
/// shape is affine in its coordinates, so at qdd = 0 the shape's second rates are zero.
pub const SHAPE_RATE: [&str; 3] = ["len_rate", "bend_y_rate", "bend_z_rate"];
/// The position along the section, in [0, 1].
pub const XI: &str = "xi";
/// Stumpff functions c_0 .. c_7 of s = xi^2 (bend_y^2 + bend_z^2) appear as `c0` .. `c7`.
pub fn stumpff_symbol(k: usize) -> String {
    format!("c{k}")
}

/// A section's local pieces at a station xi, as expressions in `xi`, the shape variables
/// and the Stumpff functions at the station. The recursive algorithms assemble motion
/// subspaces, velocities and accelerations from them numerically, which keeps every
/// expression a few terms long.
pub struct SectionKinematics {
    /// Centre line position p and frame R.
    pub position: Vec3,
    pub rotation: Mat3,
    /// dp/dx per shape variable x.
    pub position_partials: [Vec3; 3],
    /// Angular velocity of the frame per unit rate of x (R' R^T = sum_x w_x x').
    pub angular: [Vec3; 3],
    /// d2p/dx dy, `[x][y]`.
    pub position_second: [[Vec3; 3]; 3],
    /// dw_x/dy, `[x][y]`.
    pub angular_partials: [[Vec3; 3]; 3],
    /// The frame's angular acceleration at qdd = 0, w' = sum_xy x' y' dw_x/dy, as one
    /// directional derivative in the shape rates (`len_rate`, ...), expanded. Every term is
    /// xi^n c_k (at most one Stumpff function) times a polynomial in the shape and its rates,
    /// so a section computes those polynomials once for all its stations (see
    /// `section_pass::StationSum`); summing the nine partials per station did not share them.
    pub angular_bias: Vec3,
    /// The centre line's acceleration at qdd = 0, p'' = sum_xy x' y' d2p/dxdy, likewise.
    pub position_bias: Vec3,
}

fn hat(v: &Vec3) -> Mat3 {
    let minus = |a: &Atom| mul(&number(-1.0), a);
    [[zero(), minus(&v[2]), v[1].clone()], [v[2].clone(), zero(), minus(&v[0])], [minus(&v[1]), v[0].clone(), zero()]]
}

fn mat_add(a: &Mat3, b: &Mat3) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|j| add(&a[i][j], &b[i][j])))
}

fn mat_scale(a: &Mat3, s: &Atom) -> Mat3 {
    a.clone().map(|row| row.map(|e| mul(&e, s)))
}

fn expanded3(v: Vec3) -> Vec3 {
    v.map(|e| e.expand())
}

/// d/dx of an expression in the shape variables and the Stumpff functions of
/// s = xi^2 (bend_y^2 + bend_z^2), expanded.
fn total_derivative(e: &Atom, x: usize) -> Atom {
    partial_derivative(e, x).expand()
}

/// d/dx as [`total_derivative`], in the form symbolica's product rule leaves it.
fn partial_derivative(e: &Atom, x: usize) -> Atom {
    let variable = symbol!(SHAPE[x]);
    let mut out = e.derivative(variable);
    if x == 0 {
        return out;
    }
    // ds/dx = 2 xi^2 x.
    let xi = sym(XI);
    let ds = mul(&number(2.0), &mul(&mul(&xi, &xi), &sym(SHAPE[x])));
    for k in 0..6 {
        let along = e.derivative(symbol!(stumpff_symbol(k).as_str()));
        if along.is_zero() {
            continue;
        }
        let rate = add(
            &mul(&number(0.5 * k as f64), &sym(&stumpff_symbol(k + 2))),
            &mul(&number(-0.5), &sym(&stumpff_symbol(k + 1))),
        );
        out = add(&out, &mul(&along, &mul(&rate, &ds)));
    }
    // c_6 and c_7 are only ever reached, never differentiated: their derivatives would need
    // c_8 and c_9, which the runtime does not evaluate.
    debug_assert!((6..8).all(|k| e.derivative(symbol!(stumpff_symbol(k).as_str())).is_zero()));
    out
}

/// d/dt along the shape rates with the shape's second rates zero (qdd = 0), not expanded.
fn time_derivative(e: &Atom) -> Atom {
    let mut out = zero();
    for x in 0..3 {
        let partial = partial_derivative(e, x);
        if !partial.is_zero() {
            out = add(&out, &mul(&sym(SHAPE_RATE[x]), &partial));
        }
    }
    out
}

fn total_derivative3(v: &Vec3, x: usize) -> Vec3 {
    std::array::from_fn(|a| total_derivative(&v[a], x))
}

/// Derives the pieces (about a hundred short expressions; well under a second).
pub fn section_kinematics() -> SectionKinematics {
    let xi = sym(XI);
    let c = |k: usize| sym(&stumpff_symbol(k));
    let (len, bend_y, bend_z) = (sym(SHAPE[0]), sym(SHAPE[1]), sym(SHAPE[2]));
    let phi: Vec3 = [zero(), mul(&number(-1.0), &mul(&xi, &bend_z)), mul(&xi, &bend_y)];
    let phi_hat = hat(&phi);
    let phi_hat2 = mat_mul(&phi_hat, &phi_hat);
    let rotation = mat_add(&mat_add(&identity(), &mat_scale(&phi_hat, &c(1))), &mat_scale(&phi_hat2, &c(2)))
        .map(|row| row.map(|e| e.expand()));
    let jacobian = mat_add(&mat_add(&identity(), &mat_scale(&phi_hat, &c(2))), &mat_scale(&phi_hat2, &c(3)));
    // p = len xi J e_x, whose first component len xi (1 - s c3) is len xi c1.
    let scale = mul(&len, &xi);
    let position: Vec3 = expanded3([
        mul(&scale, &c(1)),
        mul(&scale, &mul(&xi, &mul(&c(2), &bend_y))),
        mul(&scale, &mul(&xi, &mul(&c(2), &bend_z))),
    ]);
    // dphi/dx for x = len, bend_y, bend_z.
    let phi_rate: [Vec3; 3] =
        [[zero(), zero(), zero()], [zero(), zero(), xi.clone()], [zero(), mul(&number(-1.0), &xi), zero()]];
    let position_partials: [Vec3; 3] = std::array::from_fn(|x| total_derivative3(&position, x));
    let angular: [Vec3; 3] = std::array::from_fn(|x| expanded3(mat_vec(&jacobian, &phi_rate[x])));
    let position_second: [[Vec3; 3]; 3] =
        std::array::from_fn(|x| std::array::from_fn(|y| total_derivative3(&position_partials[x], y)));
    let angular_partials: [[Vec3; 3]; 3] =
        std::array::from_fn(|x| std::array::from_fn(|y| total_derivative3(&angular[x], y)));
    // w = J(phi) phi' with phi' = xi (0, -bend_z', bend_y'), and p as above, differentiated
    // along the motion (once and twice) in their factored form.
    let phi_dot: Vec3 = [zero(), mul(&number(-1.0), &mul(&xi, &sym(SHAPE_RATE[2]))), mul(&xi, &sym(SHAPE_RATE[1]))];
    let spin = mat_vec(&jacobian, &phi_dot);
    let angular_bias: Vec3 = std::array::from_fn(|a| time_derivative(&spin[a]).expand());
    let position_bias: Vec3 = std::array::from_fn(|a| time_derivative(&time_derivative(&position[a])).expand());
    SectionKinematics {
        position,
        rotation,
        position_partials,
        angular,
        position_second,
        angular_partials,
        angular_bias,
        position_bias,
    }
}

/// The pieces printed readably (for the equations snapshot), each expression cut at `width`
/// characters.
pub fn kinematics_report(k: &SectionKinematics, width: usize) -> String {
    let cut = |a: &Atom| {
        let text = a.to_string();
        if text.chars().count() <= width {
            text
        } else {
            let head: String = text.chars().take(width).collect();
            format!("{head} ... ({} characters)", text.chars().count())
        }
    };
    let mut out = String::from(
        "Constant-curvature section, local pieces at xi (base frame; c_k = Stumpff functions of s = xi^2 (bend_y^2 + bend_z^2))\n",
    );
    let mut line = |name: String, e: &Atom| out.push_str(&format!("  {name} = {}\n", cut(e)));
    for a in 0..3 {
        line(format!("p[{a}]"), &k.position[a]);
    }
    for a in 0..3 {
        for b in 0..3 {
            line(format!("R[{a}][{b}]"), &k.rotation[a][b]);
        }
    }
    for (x, name) in SHAPE.iter().enumerate() {
        for a in 0..3 {
            line(format!("dp/d{name}[{a}]"), &k.position_partials[x][a]);
        }
        for a in 0..3 {
            line(format!("w_{name}[{a}]"), &k.angular[x][a]);
        }
    }
    for a in 0..3 {
        line(format!("w'[{a}] (qdd = 0)"), &k.angular_bias[a]);
    }
    for a in 0..3 {
        line(format!("p''[{a}] (qdd = 0)"), &k.position_bias[a]);
    }
    for (x, first) in SHAPE.iter().enumerate() {
        for (y, second) in SHAPE.iter().enumerate() {
            if y >= x {
                for a in 0..3 {
                    line(format!("d2p/d{first}d{second}[{a}]"), &k.position_second[x][y][a]);
                }
            }
            for a in 0..3 {
                line(format!("dw_{first}/d{second}[{a}]"), &k.angular_partials[x][y][a]);
            }
        }
    }
    out
}
