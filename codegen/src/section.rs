//! A constant-curvature section's local kinematics, derived by symbolica once for every
//! section kind: the centre line's position and frame at xi, the section's motion subspace
//! (one column per shape variable) and that subspace's rate, all in the section's base frame.
//!
//! Every kind bends the same way and differs only in how its coordinates set three shape
//! variables, each affine in the coordinates: the length `len` and the bending-angle vector
//! (`bend_y`, `bend_z`) (the section turns about (0, -bend_z, bend_y) by its norm; see
//! [`crate::local`] for each kind's map). With the rotation vector phi = xi (0, -bend_z,
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
//! Columns are Plücker motion vectors about the base frame's origin: a shape variable x moves
//! the station's frame at angular rate w_x = J dphi/dx and its body point at the base origin at
//! v_x = dp/dx - w_x x p.

use crate::derive::{add, cross, identity, mat_mul, mat_vec, mul, number, sym, vadd, zero, Mat3, Vec3};
use symbolica::prelude::*;

/// The shape variables, in the order of [`SectionKinematics::generators`].
pub const SHAPE: [&str; 3] = ["len", "bend_y", "bend_z"];
/// Their rates.
pub const SHAPE_RATE: [&str; 3] = ["len_rate", "bend_y_rate", "bend_z_rate"];
/// The position along the section, in [0, 1].
pub const XI: &str = "xi";
/// Stumpff functions c_0 .. c_7 of s = xi^2 (bend_y^2 + bend_z^2) appear as `c0` .. `c7`.
pub fn stumpff_symbol(k: usize) -> String {
    format!("c{k}")
}

/// A section's local pieces at a station xi, as expressions in `xi`, the shape variables,
/// their rates and the Stumpff functions at the station.
pub struct SectionKinematics {
    pub position: Vec3,
    pub rotation: Mat3,
    /// Per shape variable: the motion subspace column (angular, linear).
    pub generators: [(Vec3, Vec3); 3],
    /// Per shape variable: the column's rate along the shape rates (angular, linear).
    pub generator_rates: [(Vec3, Vec3); 3],
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
/// s = xi^2 (bend_y^2 + bend_z^2).
fn total_derivative(e: &Atom, x: usize) -> Atom {
    let variable = symbol!(SHAPE[x]);
    let mut out = e.derivative(variable);
    if x == 0 {
        return out.expand();
    }
    // ds/dx = 2 xi^2 x.
    let xi = sym(XI);
    let ds = mul(&number(2.0), &mul(&mul(&xi, &xi), &sym(SHAPE[x])));
    for k in 0..6 {
        let along = e.derivative(symbol!(stumpff_symbol(k).as_str()));
        if along.is_zero() {
            continue;
        }
        let rate = add(&mul(&number(0.5 * k as f64), &sym(&stumpff_symbol(k + 2))), &mul(&number(-0.5), &sym(&stumpff_symbol(k + 1))));
        out = add(&out, &mul(&along, &mul(&rate, &ds)));
    }
    out.expand()
}

fn total_derivative3(v: &Vec3, x: usize) -> Vec3 {
    std::array::from_fn(|a| total_derivative(&v[a], x))
}

/// Derives the pieces (a few hundred small terms in all; well under a second).
pub fn section_kinematics() -> SectionKinematics {
    let xi = sym(XI);
    let c = |k: usize| sym(&stumpff_symbol(k));
    let (bend_y, bend_z) = (sym(SHAPE[1]), sym(SHAPE[2]));
    let phi: Vec3 = [zero(), mul(&number(-1.0), &mul(&xi, &bend_z)), mul(&xi, &bend_y)];
    let phi_hat = hat(&phi);
    let phi_hat2 = mat_mul(&phi_hat, &phi_hat);
    let rotation = mat_add(&mat_add(&identity(), &mat_scale(&phi_hat, &c(1))), &mat_scale(&phi_hat2, &c(2))).map(|row| row.map(|e| e.expand()));
    let jacobian = mat_add(&mat_add(&identity(), &mat_scale(&phi_hat, &c(2))), &mat_scale(&phi_hat2, &c(3)));
    let scale = mul(&sym(SHAPE[0]), &xi);
    let position: Vec3 = expanded3([0, 1, 2].map(|a| mul(&jacobian[a][0], &scale)));
    // dphi/dx for x = len, bend_y, bend_z.
    let phi_rate: [Vec3; 3] = [[zero(), zero(), zero()], [zero(), zero(), xi.clone()], [zero(), mul(&number(-1.0), &xi), zero()]];
    let generators: [(Vec3, Vec3); 3] = std::array::from_fn(|x| {
        let angular = expanded3(mat_vec(&jacobian, &phi_rate[x]));
        let moved = total_derivative3(&position, x);
        let turned = cross(&angular, &position);
        let linear = expanded3(vadd(&moved, &turned.map(|e| mul(&number(-1.0), &e))));
        (angular, linear)
    });
    let generator_rates: [(Vec3, Vec3); 3] = std::array::from_fn(|x| {
        let (angular, linear) = &generators[x];
        let mut rate_angular = [zero(), zero(), zero()];
        let mut rate_linear = [zero(), zero(), zero()];
        for y in 0..3 {
            let rate = sym(SHAPE_RATE[y]);
            let da = total_derivative3(angular, y).map(|e| mul(&e, &rate));
            let dl = total_derivative3(linear, y).map(|e| mul(&e, &rate));
            rate_angular = vadd(&rate_angular, &da);
            rate_linear = vadd(&rate_linear, &dl);
        }
        (expanded3(rate_angular), expanded3(rate_linear))
    });
    SectionKinematics { position, rotation, generators, generator_rates }
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
    for (a, e) in k.position.iter().enumerate() {
        out.push_str(&format!("  p[{a}] = {}\n", cut(e)));
    }
    for (a, row) in k.rotation.iter().enumerate() {
        for (b, e) in row.iter().enumerate() {
            out.push_str(&format!("  R[{a}][{b}] = {}\n", cut(e)));
        }
    }
    for (x, name) in SHAPE.iter().enumerate() {
        let (w, v) = &k.generators[x];
        let (wd, vd) = &k.generator_rates[x];
        for a in 0..3 {
            out.push_str(&format!("  S_{name}.w[{a}] = {}\n", cut(&w[a])));
        }
        for a in 0..3 {
            out.push_str(&format!("  S_{name}.v[{a}] = {}\n", cut(&v[a])));
        }
        for a in 0..3 {
            out.push_str(&format!("  dS_{name}/dt.w[{a}] = {}\n", cut(&wd[a])));
        }
        for a in 0..3 {
            out.push_str(&format!("  dS_{name}/dt.v[{a}] = {}\n", cut(&vd[a])));
        }
    }
    out
}
