//! Symbolica atoms for the generation path: the names of the symbols every derived
//! expression is written in (the interface through which derived atoms are read into the
//! DAG, shared with the oracle in `derive.rs`), atoms from numbers and spec expressions,
//! and 3-vector and 3 x 3 matrix arithmetic on atoms with rotations. Used by `local.rs`,
//! `section.rs` and `recursive.rs`; `derive.rs` keeps its own arithmetic, so a bug here
//! cannot hide behind the oracle.
//!
//! Below it, what symbolica derives: a link's local pieces (`local.rs`) and a section's
//! (`section.rs`).

pub(crate) mod local;
pub(crate) mod section;

use crate::spec::expr::{shortest_decimal, Expr, Number};
use symbolica::prelude::*;

/// Symbol names used in derived expressions.
pub fn q_symbol(i: usize) -> String {
    format!("q{i}")
}
pub fn qd_symbol(i: usize) -> String {
    format!("qd{i}")
}
pub fn param_symbol(name: &str) -> String {
    format!("p_{name}")
}

pub(crate) fn zero() -> Atom {
    Atom::num(0)
}

/// The exact text symbolica reads for a number: its shortest decimal as a rational `(n/d)`,
/// with integers as long as needed (the 6e-17 of cos(pi / 2) has a 33-digit denominator;
/// exponent notation is not a number to symbolica's parser).
pub(crate) fn number_text(v: f64) -> String {
    let (negative, digits, shift) = shortest_decimal(v);
    let sign = if negative { "-" } else { "" };
    let zeros = "0".repeat(shift.unsigned_abs() as usize);
    if shift >= 0 {
        format!("({sign}{digits}{zeros})")
    } else {
        format!("({sign}{digits}/1{zeros})")
    }
}

pub(crate) fn number(v: f64) -> Atom {
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
pub(crate) fn from_expr(e: &Expr) -> Atom {
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

pub(crate) fn sym(name: &str) -> Atom {
    parse!(name)
}

pub(crate) fn call(f: &str, a: &Atom) -> Atom {
    parse!(&format!("{f}({a})"))
}

pub(crate) fn add(a: &Atom, b: &Atom) -> Atom {
    if a.is_zero() {
        return b.clone();
    }
    if b.is_zero() {
        return a.clone();
    }
    a + b
}

pub(crate) fn mul(a: &Atom, b: &Atom) -> Atom {
    if a.is_zero() || b.is_zero() {
        return zero();
    }
    a * b
}

pub(crate) type Vec3 = [Atom; 3];
pub(crate) type Mat3 = [[Atom; 3]; 3];

pub(crate) fn dot(a: &Vec3, b: &Vec3) -> Atom {
    add(&add(&mul(&a[0], &b[0]), &mul(&a[1], &b[1])), &mul(&a[2], &b[2]))
}

pub(crate) fn mat_vec(m: &Mat3, v: &Vec3) -> Vec3 {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v)]
}

pub(crate) fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let col = |j: usize| [b[0][j].clone(), b[1][j].clone(), b[2][j].clone()];
    let c = [col(0), col(1), col(2)];
    [
        [dot(&a[0], &c[0]), dot(&a[0], &c[1]), dot(&a[0], &c[2])],
        [dot(&a[1], &c[0]), dot(&a[1], &c[1]), dot(&a[1], &c[2])],
        [dot(&a[2], &c[0]), dot(&a[2], &c[1]), dot(&a[2], &c[2])],
    ]
}

pub(crate) fn identity() -> Mat3 {
    [[number(1.0), zero(), zero()], [zero(), number(1.0), zero()], [zero(), zero(), number(1.0)]]
}

pub(crate) fn constant_vec(v: [f64; 3]) -> Vec3 {
    [number(v[0]), number(v[1]), number(v[2])]
}

/// Rotation by `angle` about the constant unit `axis` (Rodrigues).
pub(crate) fn axis_angle(axis: [f64; 3], angle: &Atom) -> Mat3 {
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
