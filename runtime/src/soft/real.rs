//! Scalars that generic kinematics run on: `f64`, and forward-mode dual numbers `Dual<S>`
//! (value plus one directional derivative, nestable), so one implementation yields values,
//! exact Jacobian columns, and, nested, second directional derivatives.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// A real scalar for generic kinematics.
pub trait Real:
    Copy
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// A constant.
    fn from_f64(v: f64) -> Self;
    /// The plain value (the real part of a dual number, recursively).
    fn value(self) -> f64;
    /// The sine.
    fn sin(self) -> Self;
    /// The cosine.
    fn cos(self) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// 0.
    fn zero() -> Self {
        Self::from_f64(0.0)
    }
    /// 1.
    fn one() -> Self {
        Self::from_f64(1.0)
    }
    /// `self * c` for a plain constant.
    #[inline]
    fn scale(self, c: f64) -> Self {
        self * Self::from_f64(c)
    }
}

impl Real for f64 {
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn value(self) -> f64 {
        self
    }
    #[inline]
    fn sin(self) -> Self {
        f64::sin(self)
    }
    #[inline]
    fn cos(self) -> Self {
        f64::cos(self)
    }
    #[inline]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline]
    fn scale(self, c: f64) -> Self {
        self * c
    }
}

/// `re + eps * e` with `e^2 = 0`: carries the derivative along one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual<S> {
    /// The value.
    pub re: S,
    /// Its derivative along the direction.
    pub eps: S,
}

impl<S: Real> Dual<S> {
    /// A variable with value `re` moving at rate `eps`.
    #[inline]
    pub fn new(re: S, eps: S) -> Self {
        Dual { re, eps }
    }

    /// A constant.
    #[inline]
    pub fn constant(re: S) -> Self {
        Dual { re, eps: S::zero() }
    }
}

impl<S: Real> Add for Dual<S> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Dual { re: self.re + o.re, eps: self.eps + o.eps }
    }
}

impl<S: Real> Sub for Dual<S> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Dual { re: self.re - o.re, eps: self.eps - o.eps }
    }
}

impl<S: Real> Mul for Dual<S> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Dual { re: self.re * o.re, eps: self.re * o.eps + self.eps * o.re }
    }
}

impl<S: Real> Div for Dual<S> {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        let re = self.re / o.re;
        Dual { re, eps: (self.eps - re * o.eps) / o.re }
    }
}

impl<S: Real> Neg for Dual<S> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Dual { re: -self.re, eps: -self.eps }
    }
}

impl<S: Real> AddAssign for Dual<S> {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl<S: Real> SubAssign for Dual<S> {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl<S: Real> MulAssign for Dual<S> {
    #[inline]
    fn mul_assign(&mut self, o: Self) {
        *self = *self * o;
    }
}

impl<S: Real> Real for Dual<S> {
    #[inline]
    fn from_f64(v: f64) -> Self {
        Dual::constant(S::from_f64(v))
    }
    #[inline]
    fn value(self) -> f64 {
        self.re.value()
    }
    #[inline]
    fn sin(self) -> Self {
        Dual { re: self.re.sin(), eps: self.eps * self.re.cos() }
    }
    #[inline]
    fn cos(self) -> Self {
        Dual { re: self.re.cos(), eps: -(self.eps * self.re.sin()) }
    }
    #[inline]
    fn sqrt(self) -> Self {
        let root = self.re.sqrt();
        Dual { re: root, eps: self.eps / (root + root) }
    }
    #[inline]
    fn scale(self, c: f64) -> Self {
        Dual { re: self.re.scale(c), eps: self.eps.scale(c) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f<S: Real>(x: S) -> S {
        (x * x).sin() / (S::one() + x.cos()) + x.sqrt().scale(3.0)
    }

    #[test]
    fn dual_derivatives_match_finite_differences() {
        let x = 0.7;
        let first = f(Dual::new(x, 1.0)).eps;
        let h = 1e-6;
        assert!((first - (f(x + h) - f(x - h)) / (2.0 * h)).abs() < 1e-8, "{first}");
        // Nested: the second derivative in the eps.eps slot.
        let second = f(Dual::new(Dual::new(x, 1.0), Dual::new(1.0, 0.0))).eps.eps;
        let fd = (f(x + h) - 2.0 * f(x) + f(x - h)) / (h * h);
        assert!((second - fd).abs() < 1e-3, "{second} vs {fd}");
        let d1 = |y: f64| f(Dual::new(y, 1.0)).eps;
        assert!((second - (d1(x + h) - d1(x - h)) / (2.0 * h)).abs() < 1e-7);
    }
}
