//! Dense linear algebra on fixed-size matrices, below the dynamics and the articulated-body
//! factor: the Cholesky factor and its solves, the inverse of a symmetric positive definite
//! matrix, tiled products and a fused multiply-add. Nothing here knows a robot.

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

/// Replaces symmetric positive definite `a` by its inverse; an error (and `a` unspecified)
/// when it is not positive definite. Up to 32 rows by Gauss-Jordan elimination without
/// pivoting, column by column (stable for positive definite matrices, whose pivots are the
/// positive Schur complements; n^3 multiply-adds, all in whole columns), past that through the
/// Cholesky factor (`spd_inverse_from_factor`, n^3 / 2 in shorter loops). Measured: at 8, 14
/// and 22 rows elimination took 0.13, 0.46 and 1.8 us against 0.24, 1.3 and 3.3 us for the
/// factor and its inverse; at 62 it took 47 us against 41.
pub fn spd_inverse_in_place<const N: usize>(a: &mut SMatrix<f64, N, N>) -> Result<(), ForwardDynamicsError> {
    if N > 32 {
        let mut factor = *a;
        cholesky_in_place(&mut factor)?;
        spd_inverse_from_factor(&factor, a);
        return Ok(());
    }
    let data = a.as_mut_slice();
    let mut pivot_column = [0.0f64; N];
    for k in 0..N {
        let pivot = data[k * N + k];
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(ForwardDynamicsError);
        }
        let reciprocal = 1.0 / pivot;
        pivot_column.copy_from_slice(&data[k * N..(k + 1) * N]);
        // Every other column less its entry k times column k / pivot; its entry k becomes
        // that multiple's negative (the inverse's, as elimination builds it in place).
        for c in (0..N).filter(|&c| c != k) {
            let factor = data[c * N + k] * reciprocal;
            if factor == 0.0 {
                continue;
            }
            let column = &mut data[c * N..(c + 1) * N];
            for (x, &y) in column.iter_mut().zip(&pivot_column) {
                *x -= factor * y;
            }
            column[k] = -factor;
        }
        let column = &mut data[k * N..(k + 1) * N];
        for x in column.iter_mut() {
            *x *= reciprocal;
        }
        column[k] = reciprocal;
    }
    Ok(())
}

/// M^-1 from the Cholesky factor L of M ([`cholesky_in_place`]): U = L^-T (upper triangular)
/// column by column, U[:, k] = (e_k - sum_(m<k) L[k, m] U[:, m]) / L[k, k], then M^-1 = U U'
/// ([`multiply_into`], skipping the triangles' zeros). Building U's columns from earlier ones
/// leaves one division per column off the sums' path; substituting the unit columns one by one
/// instead chains a division per entry and was measured 3 times slower at 22 coordinates.
pub fn spd_inverse_from_factor<const N: usize>(factor: &SMatrix<f64, N, N>, out: &mut SMatrix<f64, N, N>) {
    let mut upper = SMatrix::<f64, N, N>::zeros();
    let lower = factor.as_slice();
    let columns = upper.as_mut_slice();
    for k in 0..N {
        let (done, rest) = columns.split_at_mut(k * N);
        let column = &mut rest[..N];
        for m in 0..k {
            let weight = lower[m * N + k];
            if weight == 0.0 {
                continue;
            }
            for (x, &y) in column[..=m].iter_mut().zip(&done[m * N..m * N + m + 1]) {
                *x -= weight * y;
            }
        }
        column[k] = 1.0;
        let reciprocal = 1.0 / lower[k * N + k];
        for x in column[..=k].iter_mut() {
            *x *= reciprocal;
        }
    }
    let upper_transpose = upper.transpose();
    multiply_into(1.0, &upper, &upper_transpose, out, true);
}

/// a * b + c, fused where the target has fused multiply-add (one rounding, one instruction);
/// without it, `mul_add` would call a software routine, so the two operations stay apart.
#[inline(always)]
pub(crate) fn multiply_add(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_feature = "fma")]
    {
        a.mul_add(b, c)
    }
    #[cfg(not(target_feature = "fma"))]
    {
        a * b + c
    }
}

/// `out` = alpha a b for fixed-size column-major matrices, by tiles of 8 rows by 4 columns of
/// `out` held in registers while the inner dimension runs (each step loads 8 entries of a
/// column of `a` and 4 of `b`: 32 multiply-adds for 12 loads, where a column at a time does 1
/// load and 1 store per multiply-add); the rows and columns past the last whole tile run one
/// entry or one column at a time. `upper_times_lower`: `a` is upper and `b` lower triangular,
/// so an entry's products start at the inner index max(row, column). Measured at 22 and 62
/// coordinates: 1.4 to 1.6 times faster than nalgebra's product of the same fixed sizes.
pub fn multiply_into<const N: usize, const M: usize, const K: usize>(
    alpha: f64,
    a: &SMatrix<f64, N, M>,
    b: &SMatrix<f64, M, K>,
    out: &mut SMatrix<f64, N, K>,
    upper_times_lower: bool,
) {
    const ROWS: usize = 8;
    let (a, b, out) = (a.as_slice(), b.as_slice(), out.as_mut_slice());
    let whole_rows = N / ROWS * ROWS;
    let start = |row: usize, column: usize| if upper_times_lower { row.max(column).min(M) } else { 0 };
    for (block, columns) in b.chunks_exact(4 * M).enumerate() {
        let first = 4 * block;
        let (b0, rest) = columns.split_at(M);
        let (b1, rest) = rest.split_at(M);
        let (b2, b3) = rest.split_at(M);
        for row in (0..whole_rows).step_by(ROWS) {
            // Four named accumulators rather than an array of them: measured, the compiler
            // then keeps all eight vectors in registers.
            let (mut s0, mut s1, mut s2, mut s3) = ([0.0f64; ROWS], [0.0f64; ROWS], [0.0f64; ROWS], [0.0f64; ROWS]);
            for k in start(row, first)..M {
                let mut column = [0.0f64; ROWS];
                column.copy_from_slice(&a[k * N + row..k * N + row + ROWS]);
                let (f0, f1, f2, f3) = (b0[k], b1[k], b2[k], b3[k]);
                for r in 0..ROWS {
                    s0[r] = multiply_add(column[r], f0, s0[r]);
                    s1[r] = multiply_add(column[r], f1, s1[r]);
                    s2[r] = multiply_add(column[r], f2, s2[r]);
                    s3[r] = multiply_add(column[r], f3, s3[r]);
                }
            }
            for (c, column_sums) in [s0, s1, s2, s3].iter().enumerate() {
                let target = &mut out[(first + c) * N + row..(first + c) * N + row + ROWS];
                for (x, &sum) in target.iter_mut().zip(column_sums) {
                    *x = alpha * sum;
                }
            }
        }
        for c in first..first + 4 {
            for row in whole_rows..N {
                let mut sum = 0.0;
                for k in start(row, c)..M {
                    sum = multiply_add(a[k * N + row], b[c * M + k], sum);
                }
                out[c * N + row] = alpha * sum;
            }
        }
    }
    for c in K / 4 * 4..K {
        let target = &mut out[c * N..(c + 1) * N];
        target.iter_mut().for_each(|x| *x = 0.0);
        for k in 0..M {
            let factor = alpha * b[c * M + k];
            if factor == 0.0 {
                continue;
            }
            let column = &a[k * N..(k + 1) * N];
            let rows = if upper_times_lower { (k + 1).min(N) } else { N };
            for (x, &y) in target[..rows].iter_mut().zip(&column[..rows]) {
                *x = multiply_add(y, factor, *x);
            }
        }
    }
}

/// Solves L L' X = B in place for every column of `b`, with the factor of
/// [`cholesky_in_place`]. Both substitutions update all K right-hand sides at once, a row of
/// X at a time (x_k /= L[k, k], then x_i -= L[i, k] x_k for every later row i forward, every
/// earlier row backward, with the columns of L' as rows of L): the rows are contiguous in X'
/// and the K columns' chains run side by side. Each entry sees the same operations in the
/// same order as in one column's axpy substitution (the tests' reference,
/// `solve_cholesky_column_by_column`), so the results are the same to the bit; that form ran
/// each column's chain of N dependent steps and divisions alone, and the exact Jacobian's two
/// 15-column solves took 6 % of the soft snake's by profile. (The dot-product form of the
/// backward pass cannot vectorise, its sum's order being fixed: 3 n right-hand sides at n =
/// 22 took half their time in it.)
#[inline]
pub fn solve_cholesky_columns<const N: usize, const K: usize>(factor: &SMatrix<f64, N, N>, b: &mut SMatrix<f64, N, K>) {
    let lower = factor.as_slice();
    // X' (K x N, column-major): its column k, contiguous, is row k of X.
    let mut rows: SMatrix<f64, K, N> = b.transpose();
    let rows_slice = rows.as_mut_slice();
    for k in 0..N {
        let (done, later) = rows_slice.split_at_mut((k + 1) * K);
        let pivot = &mut done[k * K..];
        let diagonal = lower[k * N + k];
        pivot.iter_mut().for_each(|x| *x /= diagonal);
        // L[i, k] for the rows i after k: column k of L below its diagonal.
        for (row, &l) in later.chunks_exact_mut(K).zip(&lower[k * N + k + 1..(k + 1) * N]) {
            for (x, &p) in row.iter_mut().zip(pivot.iter()) {
                *x -= l * p;
            }
        }
    }
    for i in (0..N).rev() {
        let (earlier, from) = rows_slice.split_at_mut(i * K);
        let pivot = &mut from[..K];
        let diagonal = lower[i * N + i];
        pivot.iter_mut().for_each(|x| *x /= diagonal);
        // L[i, j] for the rows j before i: row i of L left of its diagonal.
        for (j, row) in earlier.chunks_exact_mut(K).enumerate() {
            let l = lower[j * N + i];
            for (x, &p) in row.iter_mut().zip(pivot.iter()) {
                *x -= l * p;
            }
        }
    }
    *b = rows.transpose();
}

/// [`solve_cholesky_columns`] one column at a time (axpy: x[k+1..] -= L[k+1.., k] x_k
/// forward, then the same with the columns of L', transposed once): the reference the tests
/// hold the row-wise form to, bit for bit.
#[cfg(test)]
fn solve_cholesky_column_by_column<const N: usize, const K: usize>(
    factor: &SMatrix<f64, N, N>,
    b: &mut SMatrix<f64, N, K>,
) {
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

    /// A deterministic matrix with no zero or repeated pattern.
    fn sample<const R: usize, const K: usize>(seed: f64) -> SMatrix<f64, R, K> {
        SMatrix::from_fn(|i, j| ((i as f64 + 1.3) * (j as f64 + seed)).sin())
    }

    /// A well-conditioned symmetric positive definite matrix.
    fn positive_definite<const N: usize>() -> SMatrix<f64, N, N> {
        let root = sample::<N, N>(0.4) + SMatrix::<f64, N, N>::identity() * N as f64;
        root * root.transpose()
    }

    #[test]
    fn tiled_product_matches_nalgebra_across_partial_tiles() {
        // 11 x 9 times 9 x 6: rows 8 + 3, columns 4 + 2, so full, partial-row,
        // partial-column and corner tiles all run.
        let a = sample::<11, 9>(0.7);
        let b = sample::<9, 6>(1.9);
        let mut product = SMatrix::<f64, 11, 6>::zeros();
        multiply_into(-2.5, &a, &b, &mut product, false);
        let expected = a * b * -2.5;
        assert!((product - expected).amax() < 1e-13 * expected.amax(), "{product} vs {expected}");
    }

    #[test]
    fn inverse_from_factor_inverts() {
        // Sizes below, at and past a tile, and one that is not a multiple of it.
        fn check<const N: usize>() {
            let matrix = positive_definite::<N>();
            let mut factor = matrix;
            cholesky_in_place(&mut factor).unwrap();
            let mut inverse = SMatrix::<f64, N, N>::zeros();
            spd_inverse_from_factor(&factor, &mut inverse);
            let expected = matrix.try_inverse().unwrap();
            assert!((inverse - expected).amax() < 1e-12 * expected.amax(), "N = {N}");
            assert!((matrix * inverse - SMatrix::<f64, N, N>::identity()).amax() < 1e-12);
        }
        check::<3>();
        check::<8>();
        check::<13>();
        check::<22>();
    }

    #[test]
    fn inverse_in_place_inverts_and_refuses_indefinite() {
        // Elimination below 33 rows, the factor past it.
        fn check<const N: usize>() {
            let matrix = positive_definite::<N>();
            let mut inverse = matrix;
            spd_inverse_in_place(&mut inverse).unwrap();
            assert!((matrix * inverse - SMatrix::<f64, N, N>::identity()).amax() < 1e-12, "N = {N}");
            let mut indefinite = matrix;
            indefinite[(N / 2, N / 2)] = -1.0;
            assert_eq!(spd_inverse_in_place(&mut indefinite), Err(ForwardDynamicsError), "N = {N}");
        }
        check::<1>();
        check::<7>();
        check::<22>();
        check::<40>();
    }

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
        // The row-wise form does each entry's operations in the column form's order.
        let mut by_column = b;
        solve_cholesky_column_by_column(&factor, &mut by_column);
        assert_eq!(columns, by_column);
    }

    #[test]
    fn row_wise_solve_is_the_column_form_to_the_bit() {
        // At the soft snake's size (15 coordinates, 15 right-hand sides), on a matrix with
        // no zeros, and with one right-hand side.
        let l = SMatrix::<f64, 15, 15>::from_fn(|i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.5 + (0.7 * i as f64).sin(),
            std::cmp::Ordering::Greater => ((3 * i + 5 * j) as f64).cos() / 3.0,
        });
        let mut factor = l * l.transpose();
        cholesky_in_place(&mut factor).unwrap();
        let b = SMatrix::<f64, 15, 15>::from_fn(|i, k| ((i * 15 + k) as f64 * 0.37).sin() * 1e3);
        let (mut rows, mut columns) = (b, b);
        solve_cholesky_columns(&factor, &mut rows);
        solve_cholesky_column_by_column(&factor, &mut columns);
        assert_eq!(rows, columns);
        let one = SMatrix::<f64, 15, 1>::from_fn(|i, _| (i as f64).exp() - 3.0);
        let (mut rows, mut columns) = (one, one);
        solve_cholesky_columns(&factor, &mut rows);
        solve_cholesky_column_by_column(&factor, &mut columns);
        assert_eq!(rows, columns);
    }

    #[test]
    fn rejects_indefinite() {
        let mut a = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 1.0);
        let mut b = SVector::<f64, 2>::new(1.0, 1.0);
        assert_eq!(solve_spd_in_place(&mut a, &mut b), Err(ForwardDynamicsError));
    }
}
