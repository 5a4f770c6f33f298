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
    fn from_f64(v: f64) -> Self;
    /// The plain value (the real part of a dual number, recursively).
    fn value(self) -> f64;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn sqrt(self) -> Self;
    fn zero() -> Self {
        Self::from_f64(0.0)
    }
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
    pub re: S,
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

/// `re + sum eps_k e_k` with `e_j e_k = 0`: three directional derivatives in one pass
/// (a soft section's three actuator lengths).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jet3<S> {
    pub re: S,
    pub eps: [S; 3],
}

impl<S: Real> Jet3<S> {
    /// Variable `k` of three, with value `re`.
    #[inline]
    pub fn variable(re: S, k: usize) -> Self {
        let mut eps = [S::zero(); 3];
        eps[k] = S::one();
        Jet3 { re, eps }
    }
}

impl<S: Real> Add for Jet3<S> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Jet3 { re: self.re + o.re, eps: [self.eps[0] + o.eps[0], self.eps[1] + o.eps[1], self.eps[2] + o.eps[2]] }
    }
}

impl<S: Real> Sub for Jet3<S> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Jet3 { re: self.re - o.re, eps: [self.eps[0] - o.eps[0], self.eps[1] - o.eps[1], self.eps[2] - o.eps[2]] }
    }
}

impl<S: Real> Mul for Jet3<S> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        Jet3 {
            re: self.re * o.re,
            eps: [
                self.re * o.eps[0] + self.eps[0] * o.re,
                self.re * o.eps[1] + self.eps[1] * o.re,
                self.re * o.eps[2] + self.eps[2] * o.re,
            ],
        }
    }
}

impl<S: Real> Div for Jet3<S> {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        let re = self.re / o.re;
        Jet3 {
            re,
            eps: [(self.eps[0] - re * o.eps[0]) / o.re, (self.eps[1] - re * o.eps[1]) / o.re, (self.eps[2] - re * o.eps[2]) / o.re],
        }
    }
}

impl<S: Real> Neg for Jet3<S> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Jet3 { re: -self.re, eps: [-self.eps[0], -self.eps[1], -self.eps[2]] }
    }
}

impl<S: Real> AddAssign for Jet3<S> {
    #[inline]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl<S: Real> SubAssign for Jet3<S> {
    #[inline]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl<S: Real> MulAssign for Jet3<S> {
    #[inline]
    fn mul_assign(&mut self, o: Self) {
        *self = *self * o;
    }
}

impl<S: Real> Jet3<S> {
    /// f(self) given f(re) and f'(re).
    #[inline]
    fn chain(self, value: S, slope: S) -> Self {
        Jet3 { re: value, eps: [self.eps[0] * slope, self.eps[1] * slope, self.eps[2] * slope] }
    }
}

impl<S: Real> Real for Jet3<S> {
    #[inline]
    fn from_f64(v: f64) -> Self {
        Jet3 { re: S::from_f64(v), eps: [S::zero(); 3] }
    }
    #[inline]
    fn value(self) -> f64 {
        self.re.value()
    }
    #[inline]
    fn sin(self) -> Self {
        self.chain(self.re.sin(), self.re.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        self.chain(self.re.cos(), -self.re.sin())
    }
    #[inline]
    fn sqrt(self) -> Self {
        let root = self.re.sqrt();
        self.chain(root, S::one() / (root + root))
    }
    #[inline]
    fn scale(self, c: f64) -> Self {
        Jet3 { re: self.re.scale(c), eps: [self.eps[0].scale(c), self.eps[1].scale(c), self.eps[2].scale(c)] }
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

    #[test]
    fn jet3_gives_the_three_partials_of_a_dual_each() {
        let g = |a: Jet3<f64>, b: Jet3<f64>, c: Jet3<f64>| (a * b).sin() / (c + a.cos()) + (b * c).sqrt();
        let (x, y, z) = (0.4, 1.3, 0.8);
        let jet = g(Jet3::variable(x, 0), Jet3::variable(y, 1), Jet3::variable(z, 2));
        let gd = |a: Dual<f64>, b: Dual<f64>, c: Dual<f64>| (a * b).sin() / (c + a.cos()) + (b * c).sqrt();
        let partials = [
            gd(Dual::new(x, 1.0), Dual::new(y, 0.0), Dual::new(z, 0.0)).eps,
            gd(Dual::new(x, 0.0), Dual::new(y, 1.0), Dual::new(z, 0.0)).eps,
            gd(Dual::new(x, 0.0), Dual::new(y, 0.0), Dual::new(z, 1.0)).eps,
        ];
        for k in 0..3 {
            assert!((jet.eps[k] - partials[k]).abs() < 1e-14, "{k}");
        }
    }
}
