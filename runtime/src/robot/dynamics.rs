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
    cholesky_in_place(a)?;
    solve_cholesky(a, b);
    Ok(())
}

/// Overwrites the lower triangle of symmetric positive definite `a` (the only part read) with
/// its Cholesky factor L, a = L L'; an error when `a` is not positive definite.
#[inline]
pub fn cholesky_in_place<const N: usize>(a: &mut SMatrix<f64, N, N>) -> Result<(), ForwardDynamicsError> {
    // By columns (left-looking): column j of L is A's column j less, for each earlier column
    // k, L[j, k] times column k, then scaled by its pivot. nalgebra stores columns
    // contiguously, so every inner loop runs down two columns (the row-by-row form strided
    // across them); each entry still subtracts its products in the order k = 0, 1, ..., so
    // the factors are the same to the bit. For these small fixed sizes it beats the general
    // routine and keeps everything on the stack.
    let data = a.as_mut_slice();
    for j in 0..N {
        let (done, rest) = data.split_at_mut(j * N);
        let column = &mut rest[..N];
        for k in 0..j {
            let previous = &done[k * N..(k + 1) * N];
            let factor = previous[j];
            for (x, &y) in column[j..].iter_mut().zip(&previous[j..]) {
                *x -= y * factor;
            }
        }
        let diagonal = column[j];
        if !(diagonal > 0.0) || !diagonal.is_finite() {
            return Err(ForwardDynamicsError);
        }
        let pivot = diagonal.sqrt();
        column[j] = pivot;
        let inverse = 1.0 / pivot;
        for x in column[j + 1..].iter_mut() {
            *x *= inverse;
        }
    }
    Ok(())
}

/// Solves L L' x = b in place, for the factor L that [`cholesky_in_place`] left in `factor`.
#[inline]
pub fn solve_cholesky<const N: usize>(factor: &SMatrix<f64, N, N>, b: &mut SVector<f64, N>) {
    let data = factor.as_slice();
    // L y = b, column by column: the same order of subtractions per entry.
    for k in 0..N {
        let column = &data[k * N..(k + 1) * N];
        b[k] /= column[k];
        let value = b[k];
        for i in (k + 1)..N {
            b[i] -= column[i] * value;
        }
    }
    // L' x = y: row i of L' is column i of L.
    for i in (0..N).rev() {
        let column = &data[i * N..(i + 1) * N];
        let mut value = b[i];
        for k in (i + 1)..N {
            value -= column[k] * b[k];
        }
        b[i] = value / column[i];
    }
}

/// 1 / x, and 0 at x = 0: generated derivative code's slope of a fractional power (a speed
/// sqrt(u . u) at rest), where the product it multiplies vanishes too.
#[inline]
pub fn reciprocal_or_zero(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        1.0 / x
    }
}

/// Partial derivatives of the forward dynamics qdd = FD(q, qd, tau) at one state, row i
/// being qdd_i: what gradient-based control and estimation linearise with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForwardDynamicsDerivatives<const N: usize> {
    /// qdd itself.
    pub acceleration: SVector<f64, N>,
    /// d qdd / dq.
    pub position: SMatrix<f64, N, N>,
    /// d qdd / dqd.
    pub velocity: SMatrix<f64, N, N>,
    /// d qdd / dtau = M^-1.
    pub force: SMatrix<f64, N, N>,
}

impl<const N: usize> Default for ForwardDynamicsDerivatives<N> {
    fn default() -> Self {
        ForwardDynamicsDerivatives {
            acceleration: SVector::zeros(),
            position: SMatrix::zeros(),
            velocity: SMatrix::zeros(),
            force: SMatrix::zeros(),
        }
    }
}

/// The forward dynamics' partial derivatives from the model's generated inverse-dynamics
/// derivatives: qdd by the model's forward dynamics, then, differentiating M qdd + C qd + G =
/// tau at fixed tau, d qdd/dq = -M^-1 dID/dq, d qdd/dqd = -M^-1 dID/dqd and d qdd/dtau = M^-1
/// (one Cholesky factor of M, its columns solved in place). Does not allocate.
pub fn forward_dynamics_derivatives<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: &SVector<f64, N>,
    params: &R::Params,
    cache: &R::Cache,
    out: &mut ForwardDynamicsDerivatives<N>,
) -> Result<(), ForwardDynamicsError> {
    forward_dynamics::<R, N, C>(q, qd, params, cache, tau, &mut out.acceleration)?;
    R::inverse_dynamics_derivatives_into(q, qd, &out.acceleration, params, cache, &mut out.position, &mut out.velocity);
    let mut factor = SMatrix::<f64, N, N>::zeros();
    R::mass_matrix_into(q, params, cache, &mut factor);
    cholesky_in_place(&mut factor)?;
    out.position.neg_mut();
    out.velocity.neg_mut();
    out.force = SMatrix::identity();
    solve_cholesky_columns(&factor, &mut out.position);
    solve_cholesky_columns(&factor, &mut out.velocity);
    solve_cholesky_columns(&factor, &mut out.force);
    Ok(())
}

/// Solves L L' X = B in place for every column of `b`, with the factor of
/// [`cholesky_in_place`]. Both substitutions run as column updates (axpy: x[k+1..] -=
/// L[k+1.., k] x_k forward, then the same with the columns of L', transposed once), whose
/// inner loops are contiguous and vectorise; the dot-product form of the backward pass cannot,
/// its sum's order being fixed. Measured: 3 n right-hand sides at n = 22 took half the
/// derivatives' time in the dot-product form.
#[inline]
pub fn solve_cholesky_columns<const N: usize, const K: usize>(factor: &SMatrix<f64, N, N>, b: &mut SMatrix<f64, N, K>) {
    let upper = factor.transpose();
    let (lower, upper) = (factor.as_slice(), upper.as_slice());
    for column in b.as_mut_slice().chunks_exact_mut(N) {
        for k in 0..N {
            let l = &lower[k * N..(k + 1) * N];
            let value = column[k] / l[k];
            column[k] = value;
            for (x, &a) in column[k + 1..].iter_mut().zip(&l[k + 1..]) {
                *x -= a * value;
            }
        }
        // Column i of L' holds row i of L: L[i, k] for k <= i.
        for i in (0..N).rev() {
            let u = &upper[i * N..(i + 1) * N];
            let value = column[i] / u[i];
            column[i] = value;
            for (x, &a) in column[..i].iter_mut().zip(&u[..i]) {
                *x -= a * value;
            }
        }
    }
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
    fn one_factor_serves_many_right_hand_sides() {
        // A 6 x 6 SPD matrix: its factor is the lower triangle of L, and solving with it
        // gives every right-hand side exactly what a fresh factor-and-solve gives.
        let l = SMatrix::<f64, 6, 6>::from_fn(|i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.0 + i as f64,
            std::cmp::Ordering::Greater => ((3 * i + j) as f64).sin(),
        });
        let a = l * l.transpose();
        let mut factor = a;
        cholesky_in_place(&mut factor).unwrap();
        assert!((factor.lower_triangle() - l).norm() < 1e-12);
        for k in 0..6 {
            let b = SVector::<f64, 6>::from_fn(|i, _| ((i + 7 * k) as f64).cos());
            let mut once = b;
            solve_cholesky(&factor, &mut once);
            let (mut work, mut fresh) = (a, b);
            solve_spd_in_place(&mut work, &mut fresh).unwrap();
            assert_eq!(once, fresh);
            assert!((a * once - b).norm() < 1e-12);
        }
    }

    #[test]
    fn columns_solve_like_single_right_hand_sides() {
        // The column form agrees with the vector form to rounding (its backward pass sums in
        // another order), on a factor whose upper triangle still holds the matrix.
        let l = SMatrix::<f64, 7, 7>::from_fn(|i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 2.0 + (i as f64).cos(),
            std::cmp::Ordering::Greater => ((5 * i + 2 * j) as f64).sin(),
        });
        let a = l * l.transpose();
        let mut factor = a;
        cholesky_in_place(&mut factor).unwrap();
        let b = SMatrix::<f64, 7, 3>::from_fn(|i, k| ((i * 3 + k) as f64).sin());
        let mut columns = b;
        solve_cholesky_columns(&factor, &mut columns);
        for k in 0..3 {
            let mut single: SVector<f64, 7> = b.column(k).into_owned();
            solve_cholesky(&factor, &mut single);
            assert!((columns.column(k) - single).amax() < 1e-13 * single.amax());
        }
        assert!((a * columns - b).amax() < 1e-12);
    }

    #[test]
    fn rejects_indefinite() {
        let mut a = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 1.0);
        let mut b = SVector::<f64, 2>::new(1.0, 1.0);
        assert_eq!(solve_spd_in_place(&mut a, &mut b), Err(ForwardDynamicsError));
    }
}
