//! Mechanical state (q, qd) of an `N`-coordinate system, with the vector arithmetic that
//! the integrators need.

use nalgebra::SVector;

/// Generalized positions and velocities. Also used for their time derivative (qd, qdd).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State<const N: usize> {
    /// The coordinates.
    pub q: SVector<f64, N>,
    /// Their rates.
    pub qd: SVector<f64, N>,
}

impl<const N: usize> State<N> {
    /// The state (q, qd).
    pub fn new(q: SVector<f64, N>, qd: SVector<f64, N>) -> Self {
        State { q, qd }
    }

    /// Every coordinate and rate zero.
    pub fn zeros() -> Self {
        State { q: SVector::zeros(), qd: SVector::zeros() }
    }

    /// `self + h * rate`.
    #[inline]
    pub fn add_scaled(&self, h: f64, rate: &State<N>) -> State<N> {
        State { q: self.q + rate.q * h, qd: self.qd + rate.qd * h }
    }

    /// Whether every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.q.iter().chain(self.qd.iter()).all(|v| v.is_finite())
    }
}
