//! 3-vectors and 3x3 matrices over any [`Real`] scalar, as plain arrays, for kinematics
//! that run on dual numbers as well as on `f64`.

use crate::real::Real;

pub type V3<S> = [S; 3];
/// Row-major: `m[row][column]`.
pub type M3<S> = [[S; 3]; 3];

#[inline]
pub fn add<S: Real>(a: &V3<S>, b: &V3<S>) -> V3<S> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline]
pub fn scale<S: Real>(a: &V3<S>, s: S) -> V3<S> {
    [a[0] * s, a[1] * s, a[2] * s]
}

#[inline]
pub fn dot<S: Real>(a: &V3<S>, b: &V3<S>) -> S {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
pub fn cross<S: Real>(a: &V3<S>, b: &V3<S>) -> V3<S> {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[inline]
pub fn mat_vec<S: Real>(m: &M3<S>, v: &V3<S>) -> V3<S> {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

#[inline]
pub fn mat_mul<S: Real>(a: &M3<S>, b: &M3<S>) -> M3<S> {
    let mut out = [[S::zero(); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    out
}

/// `a b'`.
#[inline]
pub fn mat_mul_t<S: Real>(a: &M3<S>, b: &M3<S>) -> M3<S> {
    let mut out = [[S::zero(); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = a[i][0] * b[j][0] + a[i][1] * b[j][1] + a[i][2] * b[j][2];
        }
    }
    out
}

/// A constant matrix lifted to `S`.
#[inline]
pub fn lift<S: Real>(m: &[[f64; 3]; 3]) -> M3<S> {
    let mut out = [[S::zero(); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = S::from_f64(m[i][j]);
        }
    }
    out
}

/// The vector of the skew part of `m`: for `m = [w]x`, `w`.
#[inline]
pub fn vee<S: Real>(m: &M3<S>) -> V3<S> {
    [(m[2][1] - m[1][2]).scale(0.5), (m[0][2] - m[2][0]).scale(0.5), (m[1][0] - m[0][1]).scale(0.5)]
}

/// Rotation about a coordinate axis (0 = x, 1 = y, 2 = z).
#[inline]
pub fn axis_rotation<S: Real>(axis: usize, angle: S) -> M3<S> {
    let (s, c) = (angle.sin(), angle.cos());
    let (o, z) = (S::one(), S::zero());
    match axis {
        0 => [[o, z, z], [z, c, -s], [z, s, c]],
        1 => [[c, z, s], [z, o, z], [-s, z, c]],
        _ => [[c, -s, z], [s, c, z], [z, z, o]],
    }
}
