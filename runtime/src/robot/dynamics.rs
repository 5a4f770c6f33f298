//! Forward dynamics: solve M(q) qdd = tau - C(q, qd) qd - G(q) on fixed-size types.

use crate::robot::model::Model;
use nalgebra::{SMatrix, SVector};

/// The mass matrix was not positive definite (a modelling error or a non-finite state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardDynamicsError;

impl std::fmt::Display for ForwardDynamicsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mass matrix is not positive definite")
    }
}

impl std::error::Error for ForwardDynamicsError {}

/// Generalized accelerations for generalized force `force` (actuator torques plus J' F), by
/// the model's own forward dynamics (the articulated-body algorithm for generated rigid
/// robots, M, C qd, G and a Cholesky solve otherwise). Does not allocate.
#[inline]
pub fn forward_dynamics<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    params: &R::Params,
    cache: &R::Cache,
    force: &SVector<f64, N>,
    qdd: &mut SVector<f64, N>,
) -> Result<(), ForwardDynamicsError> {
    if R::forward_dynamics_into(q, qd, force, params, cache, qdd) {
        Ok(())
    } else {
        Err(ForwardDynamicsError)
    }
}

/// Solves `a x = b` for symmetric positive definite `a` (lower triangle read), overwriting
/// `a` with its Cholesky factor and `b` with `x`.
#[inline]
pub fn solve_spd_in_place<const N: usize>(
    a: &mut SMatrix<f64, N, N>,
    b: &mut SVector<f64, N>,
) -> Result<(), ForwardDynamicsError> {
    // Plain Cholesky-Banachiewicz: for these small fixed sizes it beats the general routine
    // and keeps everything on the stack.
    for j in 0..N {
        let mut diagonal = a[(j, j)];
        for k in 0..j {
            diagonal -= a[(j, k)] * a[(j, k)];
        }
        if !(diagonal > 0.0) || !diagonal.is_finite() {
            return Err(ForwardDynamicsError);
        }
        let pivot = diagonal.sqrt();
        a[(j, j)] = pivot;
        let inverse = 1.0 / pivot;
        for i in (j + 1)..N {
            let mut value = a[(i, j)];
            for k in 0..j {
                value -= a[(i, k)] * a[(j, k)];
            }
            a[(i, j)] = value * inverse;
        }
    }
    for i in 0..N {
        let mut value = b[i];
        for k in 0..i {
            value -= a[(i, k)] * b[k];
        }
        b[i] = value / a[(i, i)];
    }
    for i in (0..N).rev() {
        let mut value = b[i];
        for k in (i + 1)..N {
            value -= a[(k, i)] * b[k];
        }
        b[i] = value / a[(i, i)];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_spd_system() {
        let l = SMatrix::<f64, 3, 3>::new(2.0, 0.0, 0.0, 0.5, 1.5, 0.0, -0.3, 0.2, 1.1);
        let a = l * l.transpose();
        let x = SVector::<f64, 3>::new(0.3, -1.2, 2.0);
        let mut b = a * x;
        let mut work = a;
        solve_spd_in_place(&mut work, &mut b).unwrap();
        assert!((b - x).norm() < 1e-12);
    }

    #[test]
    fn rejects_indefinite() {
        let mut a = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 1.0);
        let mut b = SVector::<f64, 2>::new(1.0, 1.0);
        assert_eq!(solve_spd_in_place(&mut a, &mut b), Err(ForwardDynamicsError));
    }
}
