//! Rigid trees' factored forms for the forward dynamics' derivatives: the articulated-body
//! factorisation of M, which applies M^-1 to many columns at once in O(n) each with no matrix
//! formed, and the per-joint factors whose products are dID/dq and dID/dqd.

use crate::robot::dense::multiply_add;
use nalgebra::SMatrix;
use wide::f64x4;

/// The articulated-body factorisation of a rigid tree's mass matrix at one configuration, as
/// generated code leaves it ([`crate::Model::articulated_factor_into`]): per joint, parents
/// before children, its coordinate, the nearest joint above it, its world motion subspace S
/// ([w; v]), U = I^A S ([n; f], with I^A its articulated-body inertia) and 1 / D = 1 / (S . U).
/// With these, the articulated-body algorithm at zero velocity and zero gravity solves
/// M x = b for any b in O(n) ([`ArticulatedFactor::solve_into`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArticulatedFactor<const N: usize> {
    /// The coordinate of each joint.
    pub coordinate: [usize; N],
    /// The index (into these arrays) of the nearest joint above each joint.
    pub parent: [Option<usize>; N],
    /// Each joint's world motion subspace S, [w; v].
    pub subspace: [[f64; 6]; N],
    /// U = I^A S, [n; f].
    pub projected: [[f64; 6]; N],
    /// 1 / (S . U).
    pub inverse_pivot: [f64; N],
}

impl<const N: usize> Default for ArticulatedFactor<N> {
    fn default() -> Self {
        ArticulatedFactor {
            coordinate: [0; N],
            parent: [None; N],
            subspace: [[0.0; 6]; N],
            projected: [[0.0; 6]; N],
            inverse_pivot: [0.0; N],
        }
    }
}

/// Columns solved side by side on a branched tree: two 256-bit registers per component.
const LANES: usize = 8;
type Lanes = [f64; LANES];

/// One set of right-hand sides for [`ArticulatedFactor::solve_into`]: `out = scale * M^-1 b`,
/// with `b` the identity where it is `None` (then `out` is `scale * M^-1`).
pub struct Solve<'a, const N: usize> {
    /// The factor on M^-1 b.
    pub scale: f64,
    /// The right-hand sides, as columns; None for the identity.
    pub b: Option<&'a SMatrix<f64, N, N>>,
    /// Where scale * M^-1 b goes.
    pub out: &'a mut SMatrix<f64, N, N>,
}

/// Whether each joint's parent is the one before it.
fn is_chain(parent: &[Option<usize>]) -> bool {
    parent.iter().enumerate().all(|(t, &above)| above == t.checked_sub(1))
}

/// What [`ArticulatedFactor::on_components`] runs.
enum Work<'s, 'a, const N: usize> {
    Solves(&'s mut [Solve<'a, N>]),
    Derivatives {
        columns: &'s ChainColumns<'s, N>,
        position: &'s mut SMatrix<f64, N, N>,
        velocity: &'s mut SMatrix<f64, N, N>,
        inverse: &'s mut SMatrix<f64, N, N>,
    },
}

impl<const N: usize> Work<'_, '_, N> {
    fn zero(self) {
        match self {
            Work::Solves(solves) => solves.iter_mut().for_each(|solve| *solve.out = SMatrix::zeros()),
            Work::Derivatives { position, velocity, inverse, .. } => {
                for out in [position, velocity, inverse] {
                    *out = SMatrix::zeros();
                }
            }
        }
    }
}

/// One row of a chain solve's right-hand sides (then of its solutions): N columns, or two
/// sets of N side by side. The passes run over a row's values as one flat vector, so two
/// solves sharing a factor share each joint's loads, and at 22 coordinates their 44 columns
/// fill eleven 256-bit registers where 22 leave two columns to scalar instructions.
trait ChainRow<const N: usize>: Copy {
    const ZERO: Self;
    /// Every column, side by side.
    fn values(&self) -> &[f64];
    fn values_mut(&mut self) -> &mut [f64];
    /// One set of N columns.
    fn slot(&self, slot: usize) -> &[f64; N];
    fn slot_mut(&mut self, slot: usize) -> &mut [f64; N];
}

impl<const N: usize> ChainRow<N> for [f64; N] {
    const ZERO: Self = [0.0; N];
    #[inline(always)]
    fn values(&self) -> &[f64] {
        self
    }
    #[inline(always)]
    fn values_mut(&mut self) -> &mut [f64] {
        self
    }
    #[inline(always)]
    fn slot(&self, _: usize) -> &[f64; N] {
        self
    }
    #[inline(always)]
    fn slot_mut(&mut self, _: usize) -> &mut [f64; N] {
        self
    }
}

impl<const N: usize> ChainRow<N> for [[f64; N]; 2] {
    const ZERO: Self = [[0.0; N]; 2];
    #[inline(always)]
    fn values(&self) -> &[f64] {
        self.as_flattened()
    }
    #[inline(always)]
    fn values_mut(&mut self) -> &mut [f64] {
        self.as_flattened_mut()
    }
    #[inline(always)]
    fn slot(&self, slot: usize) -> &[f64; N] {
        &self[slot]
    }
    #[inline(always)]
    fn slot_mut(&mut self, slot: usize) -> &mut [f64; N] {
        &mut self[slot]
    }
}

/// Chains up to this many coordinates solve dID/dq and dID/dqd as one set of 2N columns
/// ([`ChainRow`]); at 62 the pair took 1.35 times as long as the two solves apart (measured
/// on the passes alone, with the running sums spilling out of the registers).
const PAIRED_UP_TO: usize = 32;

/// A chain's inverse-dynamics factors with the vectors a row reads across its columns laid
/// out component by component (row i reads joint j's S, d, c and columns for every j), so
/// each row is a few vector loops; only the motion components some S, d or c uses.
struct ChainColumns<'a, const N: usize> {
    factors: &'a InverseDynamicsFactors<N>,
    active: [usize; 6],
    count: usize,
    subspace: [[f64; N]; 6],
    rate: [[f64; N]; 6],
    shift: [[f64; N]; 6],
    position_column: [[f64; N]; 6],
    coriolis_column: [[f64; N]; 6],
}

impl<'a, const N: usize> ChainColumns<'a, N> {
    fn new(factors: &'a InverseDynamicsFactors<N>) -> Self {
        let mut columns = ChainColumns {
            factors,
            active: [0; 6],
            count: 0,
            subspace: [[0.0; N]; 6],
            rate: [[0.0; N]; 6],
            shift: [[0.0; N]; 6],
            position_column: [[0.0; N]; 6],
            coriolis_column: [[0.0; N]; 6],
        };
        for r in 0..6 {
            let used = (0..N)
                .any(|j| factors.subspace[j][r] != 0.0 || factors.rate[j][r] != 0.0 || factors.shift[j][r] != 0.0);
            if !used {
                continue;
            }
            let c = columns.count;
            columns.active[c] = r;
            columns.count += 1;
            for j in 0..N {
                columns.subspace[c][j] = factors.subspace[j][r];
                columns.rate[c][j] = factors.rate[j][r];
                columns.shift[c][j] = factors.shift[j][r];
                columns.position_column[c][j] = factors.position_column[j][r];
                columns.coriolis_column[c][j] = factors.coriolis_column[j][r];
            }
        }
        columns
    }

    /// Slot `slot` of `rows` = dID/dq: row i, j <= i: I^c_i S_i . c_j + position_row_i . d_j;
    /// j > i: S_i . position_column_j.
    fn position_rows<T: ChainRow<N>>(&self, rows: &mut [T; N], slot: usize) {
        let f = self.factors;
        self.rows(
            rows,
            slot,
            1.0,
            |i, r| (f.projected[i][r], f.position_row[i][r], f.subspace[i][r]),
            |c| (&self.shift[c], &self.rate[c], &self.position_column[c]),
        );
    }

    /// Slot `slot` of `rows` = dID/dqd = 2 C: row i, j <= i: 2 (I^c_i S_i . d_j +
    /// coriolis_row_i . S_j); j > i: 2 S_i . coriolis_column_j.
    fn velocity_rows<T: ChainRow<N>>(&self, rows: &mut [T; N], slot: usize) {
        let f = self.factors;
        self.rows(
            rows,
            slot,
            2.0,
            |i, r| (f.projected[i][r], f.coriolis_row[i][r], f.subspace[i][r]),
            |c| (&self.rate[c], &self.subspace[c], &self.coriolis_column[c]),
        );
    }

    /// Entry j of slot `slot` of rows[i] (every entry is written) = scale sum over the
    /// active components c (r their motion component) of, with (a, b, s) =
    /// `row_factors(i, r)` and (x, y, z) = `column_vectors(c)`: j <= i, a x_j + b y_j; j > i,
    /// s z_j. The component count a constant of the loops (so they unroll), four columns at
    /// a time in one register each (the compiler left a whole-row loop's sums in scalar
    /// registers, and split loops' lengths change with every row): a block below the
    /// diagonal computes the lower form, one above it the upper, the one across it both; the
    /// columns past the last whole block one at a time.
    fn rows<'c, T: ChainRow<N>>(
        &'c self,
        rows: &mut [T; N],
        slot: usize,
        scale: f64,
        row_factors: impl Fn(usize, usize) -> (f64, f64, f64),
        column_vectors: impl Fn(usize) -> (&'c [f64; N], &'c [f64; N], &'c [f64; N]),
    ) {
        match self.count {
            0 => rows.iter_mut().for_each(|row| *row.slot_mut(slot) = [0.0; N]),
            1 => self.rows_of::<1, T>(rows, slot, scale, row_factors, column_vectors),
            2 => self.rows_of::<2, T>(rows, slot, scale, row_factors, column_vectors),
            3 => self.rows_of::<3, T>(rows, slot, scale, row_factors, column_vectors),
            4 => self.rows_of::<4, T>(rows, slot, scale, row_factors, column_vectors),
            5 => self.rows_of::<5, T>(rows, slot, scale, row_factors, column_vectors),
            _ => self.rows_of::<6, T>(rows, slot, scale, row_factors, column_vectors),
        }
    }

    /// [`Self::rows`] with `R` active components.
    fn rows_of<'c, const R: usize, T: ChainRow<N>>(
        &'c self,
        rows: &mut [T; N],
        slot: usize,
        scale: f64,
        row_factors: impl Fn(usize, usize) -> (f64, f64, f64),
        column_vectors: impl Fn(usize) -> (&'c [f64; N], &'c [f64; N], &'c [f64; N]),
    ) {
        let whole = N / 4 * 4;
        let vectors: [_; R] = std::array::from_fn(&column_vectors);
        let factor = f64x4::splat(scale);
        for (i, row) in rows.iter_mut().enumerate() {
            let row = row.slot_mut(slot);
            let factors: [_; R] = std::array::from_fn(|c| row_factors(i, self.active[c]));
            let lower = |j: usize| {
                let mut sum = f64x4::splat(0.0);
                for ((a, b, _), (x, y, _)) in factors.iter().zip(&vectors) {
                    sum = f64x4::splat(*a).mul_add(block(x, j), f64x4::splat(*b).mul_add(block(y, j), sum));
                }
                sum * factor
            };
            let upper = |j: usize| {
                let mut sum = f64x4::splat(0.0);
                for ((_, _, s), (_, _, z)) in factors.iter().zip(&vectors) {
                    sum = f64x4::splat(*s).mul_add(block(z, j), sum);
                }
                sum * factor
            };
            for j in (0..whole).step_by(4) {
                let values = if j + 3 <= i {
                    lower(j).to_array()
                } else if j > i {
                    upper(j).to_array()
                } else {
                    let (below, above) = (lower(j).to_array(), upper(j).to_array());
                    std::array::from_fn(|d| if j + d <= i { below[d] } else { above[d] })
                };
                row[j..j + 4].copy_from_slice(&values);
            }
            for (j, entry) in row.iter_mut().enumerate().skip(whole) {
                let mut sum = 0.0;
                for ((a, b, s), (x, y, z)) in factors.iter().zip(&vectors) {
                    sum = if j <= i {
                        multiply_add(*a, x[j], multiply_add(*b, y[j], sum))
                    } else {
                        multiply_add(*s, z[j], sum)
                    };
                }
                *entry = scale * sum;
            }
        }
    }
}

/// Entries j..j + 4 of `values` in one register.
#[inline(always)]
fn block<const N: usize>(values: &[f64; N], j: usize) -> f64x4 {
    f64x4::from([values[j], values[j + 1], values[j + 2], values[j + 3]])
}

/// `out` = `scale` times slot `slot` of `rows`, entry j of its row k being entry (k, j): the
/// row-major solution into the column-major matrix, by 4 x 4 blocks transposed in registers
/// and the rows and columns past the last whole block one entry at a time. A loop over the
/// entries compiles to scatters (or gathers) of one entry per lane, which took two fifths
/// of a chain solve at 22 coordinates.
fn store_transposed<const N: usize, T: ChainRow<N>>(
    rows: &[T; N],
    slot: usize,
    scale: f64,
    out: &mut SMatrix<f64, N, N>,
) {
    let rows: [&[f64; N]; N] = std::array::from_fn(|k| rows[k].slot(slot));
    let columns = out.as_mut_slice();
    let whole = N / 4 * 4;
    let factor = f64x4::splat(scale);
    for k in (0..whole).step_by(4) {
        for j in (0..whole).step_by(4) {
            let rows_block = [block(rows[k], j), block(rows[k + 1], j), block(rows[k + 2], j), block(rows[k + 3], j)];
            for (d, column) in f64x4::transpose(rows_block).into_iter().enumerate() {
                columns[(j + d) * N + k..(j + d) * N + k + 4].copy_from_slice(&(column * factor).to_array());
            }
        }
    }
    for j in whole..N {
        for k in (0..whole).step_by(4) {
            let column = f64x4::from([rows[k][j], rows[k + 1][j], rows[k + 2][j], rows[k + 3][j]]);
            columns[j * N + k..j * N + k + 4].copy_from_slice(&(column * factor).to_array());
        }
    }
    for j in 0..N {
        for (k, row) in rows.iter().enumerate().skip(whole) {
            columns[j * N + k] = scale * row[j];
        }
    }
}

impl<const N: usize> ArticulatedFactor<N> {
    /// Solves every [`Solve`] in `solves`, their columns side by side, `LANES` at a time:
    /// child to parent, u_i = b_i - S_i . p_i and p_parent += p_i + U_i u_i / D_i; parent to
    /// child, x_i = u_i / D_i - U_i . a_parent / D_i and a_i = a_parent + S_i x_i. In world
    /// coordinates no transform sits between a link and its parent, and only the motion
    /// components some S_i uses can carry anything (a planar robot's three), so the passes
    /// keep those alone: 2 n k (2 r + 1) multiply-adds for k columns and r components, against
    /// n^2 k for a product with a formed M^-1.
    pub fn solve_into(&self, solves: &mut [Solve<'_, N>]) {
        self.on_components(Work::Solves(solves));
    }

    /// The forward dynamics' derivatives from the inverse dynamics' factors: `position` =
    /// -M^-1 dID/dq, `velocity` = -M^-1 dID/dqd and `inverse` = M^-1. On a chain whose joints
    /// are its coordinates in order (the snakes), each right-hand side's rows are formed from
    /// the factors where the solve reads them, with no dID matrix in between; elsewhere the
    /// factors are assembled into matrices first.
    pub fn solve_derivatives_into(
        &self,
        factors: &InverseDynamicsFactors<N>,
        position: &mut SMatrix<f64, N, N>,
        velocity: &mut SMatrix<f64, N, N>,
        inverse: &mut SMatrix<f64, N, N>,
    ) {
        let same_chain =
            factors.is_ordered_chain() && factors.coordinate == self.coordinate && factors.parent == self.parent;
        if !same_chain {
            let (mut by_position, mut by_velocity) = (SMatrix::zeros(), SMatrix::zeros());
            factors.assemble_into(&mut by_position, &mut by_velocity);
            self.solve_into(&mut [
                Solve { scale: -1.0, b: Some(&by_position), out: position },
                Solve { scale: -1.0, b: Some(&by_velocity), out: velocity },
                Solve { scale: 1.0, b: None, out: inverse },
            ]);
            return;
        }
        let columns = ChainColumns::new(factors);
        self.on_components(Work::Derivatives { columns: &columns, position, velocity, inverse });
    }

    /// Runs `work` over the motion components some S uses, their count a constant of the
    /// passes (so their loops unroll).
    fn on_components(&self, work: Work<'_, '_, N>) {
        let mut active = [0usize; 6];
        let mut count = 0;
        for r in 0..6 {
            if self.subspace.iter().any(|s| s[r] != 0.0) {
                active[count] = r;
                count += 1;
            }
        }
        match count {
            // No joint moves anything: M would be singular, and the factor pass says so first.
            0 => work.zero(),
            1 => self.run::<1>(&active, work),
            2 => self.run::<2>(&active, work),
            3 => self.run::<3>(&active, work),
            4 => self.run::<4>(&active, work),
            5 => self.run::<5>(&active, work),
            _ => self.run::<6>(&active, work),
        }
    }

    fn run<const R: usize>(&self, active: &[usize; 6], work: Work<'_, '_, N>) {
        match work {
            Work::Solves(solves) => self.solve_compact::<R>(active, solves),
            Work::Derivatives { columns, position, velocity, inverse } => {
                self.chain_derivatives::<R>(active, columns, position, velocity, inverse)
            }
        }
    }

    /// [`Self::solve_derivatives_into`] on a chain over the `R` components in `active`.
    fn chain_derivatives<const R: usize>(
        &self,
        active: &[usize; 6],
        columns: &ChainColumns<'_, N>,
        position: &mut SMatrix<f64, N, N>,
        velocity: &mut SMatrix<f64, N, N>,
        inverse: &mut SMatrix<f64, N, N>,
    ) {
        let (subspace, weighted) = self.compact::<R>(active);
        if N <= PAIRED_UP_TO {
            let mut rows = [[[0.0f64; N]; 2]; N];
            columns.position_rows(&mut rows, 0);
            columns.velocity_rows(&mut rows, 1);
            self.chain_passes(&subspace, &weighted, &mut rows);
            store_transposed(&rows, 0, -1.0, position);
            store_transposed(&rows, 1, -1.0, velocity);
        } else {
            // Every entry of the rows is written before each solve, so one buffer serves both.
            let mut rows = [[0.0f64; N]; N];
            columns.position_rows(&mut rows, 0);
            self.chain_passes(&subspace, &weighted, &mut rows);
            store_transposed(&rows, 0, -1.0, position);
            columns.velocity_rows(&mut rows, 0);
            self.chain_passes(&subspace, &weighted, &mut rows);
            store_transposed(&rows, 0, -1.0, velocity);
        }
        self.chain_inverse(&subspace, &weighted, inverse);
    }

    /// Each joint's S and U / D on the `R` components in `active`.
    #[allow(clippy::type_complexity)]
    fn compact<const R: usize>(&self, active: &[usize; 6]) -> ([[f64; R]; N], [[f64; R]; N]) {
        let mut subspace = [[0.0f64; R]; N];
        let mut weighted = [[0.0f64; R]; N];
        for t in 0..N {
            for (c, &r) in active[..R].iter().enumerate() {
                subspace[t][c] = self.subspace[t][r];
                weighted[t][c] = self.projected[t][r] * self.inverse_pivot[t];
            }
        }
        (subspace, weighted)
    }

    /// [`Self::solve_into`] over the `R` components in `active`.
    fn solve_compact<const R: usize>(&self, active: &[usize; 6], solves: &mut [Solve<'_, N>]) {
        let (subspace, weighted) = self.compact::<R>(active);
        // Per coordinate the block's right-hand sides, overwritten by u / D and then by the
        // solution; per joint the force p from below and the acceleration a.
        let mut force = [[[0.0f64; LANES]; R]; N];
        let mut acceleration = [[[0.0f64; LANES]; R]; N];
        if is_chain(&self.parent) {
            for solve in solves.iter_mut() {
                match solve.b {
                    Some(b) => {
                        // rows[k][j]: entry (k, j) of the right-hand sides, then of the solution.
                        let mut rows = [[0.0f64; N]; N];
                        for (j, column) in b.as_slice().chunks_exact(N).enumerate() {
                            for (row, &value) in rows.iter_mut().zip(column) {
                                row[j] = value;
                            }
                        }
                        self.chain_passes(&subspace, &weighted, &mut rows);
                        store_transposed(&rows, 0, solve.scale, solve.out);
                    }
                    None => {
                        self.chain_inverse(&subspace, &weighted, solve.out);
                        if solve.scale != 1.0 {
                            *solve.out *= solve.scale;
                        }
                    }
                }
            }
            return;
        }
        let total = solves.len() * N;
        for start in (0..total).step_by(LANES) {
            let width = LANES.min(total - start);
            let mut rows = [[0.0f64; LANES]; N];
            for w in 0..width {
                let (which, j) = ((start + w) / N, (start + w) % N);
                match solves[which].b {
                    Some(b) => {
                        for (row, &value) in rows.iter_mut().zip(&b.as_slice()[j * N..(j + 1) * N]) {
                            row[w] = value;
                        }
                    }
                    None => rows[j][w] = 1.0,
                }
            }
            self.passes(&subspace, &weighted, &mut rows, &mut force, &mut acceleration);
            for w in 0..width {
                let (which, j) = ((start + w) / N, (start + w) % N);
                let scale = solves[which].scale;
                let column = &mut solves[which].out.as_mut_slice()[j * N..(j + 1) * N];
                for (x, row) in column.iter_mut().zip(&rows) {
                    *x = scale * row[w];
                }
            }
        }
    }

    /// M^-1 into `inverse` on a chain: the identity's columns through [`Self::chain_passes`].
    /// M^-1 is symmetric, so the solution's rows are its columns, and the passes run on the
    /// matrix's own column-major storage, with no transpose after them.
    fn chain_inverse<const R: usize>(
        &self,
        subspace: &[[f64; R]; N],
        weighted: &[[f64; R]; N],
        inverse: &mut SMatrix<f64, N, N>,
    ) {
        let rows = &mut inverse.data.0;
        *rows = [[0.0; N]; N];
        for (k, row) in rows.iter_mut().enumerate() {
            row[k] = 1.0;
        }
        self.chain_passes(subspace, weighted, rows);
    }

    /// The two passes of a solve on a chain (each joint's parent the one before it), `rows`
    /// (one per coordinate, entry j of a row being column j of the right-hand sides) from
    /// right-hand sides to solutions, all columns at once: the force from below and the
    /// acceleration are running sums over the chain, one row per component, so each joint is
    /// a few long vector loops (the columns' chains of dependent multiply-adds overlap)
    /// instead of a short block waiting on the latency of the one before (measured 3 to 4
    /// times slower at 22 and 62 coordinates).
    fn chain_passes<const R: usize, T: ChainRow<N>>(
        &self,
        subspace: &[[f64; R]; N],
        weighted: &[[f64; R]; N],
        rows: &mut [T; N],
    ) {
        let mut force = [T::ZERO; R];
        for t in (0..N).rev() {
            let u = rows[self.coordinate[t]].values_mut();
            let (s, weight, inverse_pivot) = (subspace[t], weighted[t], self.inverse_pivot[t]);
            for j in 0..u.len() {
                let mut x = u[j];
                for c in 0..R {
                    x = multiply_add(-s[c], force[c].values()[j], x);
                }
                for c in 0..R {
                    let sum = &mut force[c].values_mut()[j];
                    *sum = multiply_add(weight[c], x, *sum);
                }
                u[j] = x * inverse_pivot;
            }
        }
        let mut acceleration = [T::ZERO; R];
        for t in 0..N {
            let x = rows[self.coordinate[t]].values_mut();
            let (s, weight) = (subspace[t], weighted[t]);
            for j in 0..x.len() {
                let mut value = x[j];
                for c in 0..R {
                    value = multiply_add(-weight[c], acceleration[c].values()[j], value);
                }
                for c in 0..R {
                    let sum = &mut acceleration[c].values_mut()[j];
                    *sum = multiply_add(s[c], value, *sum);
                }
                x[j] = value;
            }
        }
    }

    /// The two passes over one block of columns, `rows` from right-hand sides to solutions;
    /// `force` must be zero on entry and is left zero.
    fn passes<const R: usize>(
        &self,
        subspace: &[[f64; R]; N],
        weighted: &[[f64; R]; N],
        rows: &mut [Lanes; N],
        force: &mut [[Lanes; R]; N],
        acceleration: &mut [[Lanes; R]; N],
    ) {
        for t in (0..N).rev() {
            let u = &mut rows[self.coordinate[t]];
            let (above, rest) = force.split_at_mut(t);
            let own = &mut rest[0];
            for c in 0..R {
                let s = subspace[t][c];
                for w in 0..LANES {
                    u[w] = multiply_add(-s, own[c][w], u[w]);
                }
            }
            // Parents come before children, so the parent's force is in `above`.
            if let Some(passed) = self.parent[t].and_then(|parent| above.get_mut(parent)) {
                for c in 0..R {
                    let weight = weighted[t][c];
                    for w in 0..LANES {
                        passed[c][w] += multiply_add(weight, u[w], own[c][w]);
                    }
                }
            }
            for row in own.iter_mut() {
                *row = [0.0; LANES];
            }
            let inverse_pivot = self.inverse_pivot[t];
            for x in u.iter_mut() {
                *x *= inverse_pivot;
            }
        }
        for t in 0..N {
            let x = &mut rows[self.coordinate[t]];
            let (above, rest) = acceleration.split_at_mut(t);
            let own = &mut rest[0];
            match self.parent[t].and_then(|parent| above.get(parent)) {
                Some(from_parent) => {
                    for c in 0..R {
                        let weight = weighted[t][c];
                        for w in 0..LANES {
                            x[w] = multiply_add(-weight, from_parent[c][w], x[w]);
                        }
                    }
                    for c in 0..R {
                        let s = subspace[t][c];
                        for w in 0..LANES {
                            own[c][w] = multiply_add(s, x[w], from_parent[c][w]);
                        }
                    }
                }
                None => {
                    for c in 0..R {
                        let s = subspace[t][c];
                        for w in 0..LANES {
                            own[c][w] = s * x[w];
                        }
                    }
                }
            }
        }
    }
}

/// The partial derivatives of a rigid tree's inverse dynamics in factored form, as generated
/// code leaves them ([`crate::Model::inverse_dynamics_factors_into`]): per joint, parents
/// before children, in world coordinates, motion vectors [w; v] S, d = dS/dt and the
/// acceleration shift c = -(S x a_parent + d x v_parent), and force vectors [n; f] I^c S,
/// the rows and columns below. For joint i at or below joint j (j on i's path to the root,
/// i itself included), with coordinates k_i and k_j:
/// - dID/dq: entry (k_i, k_j) = I^c_i S_i . c_j + position_row_i . d_j and, for j strictly
///   above i, entry (k_j, k_i) = S_j . position_column_i;
/// - dID/dqd = 2 C: entry (k_i, k_j) = 2 (I^c_i S_i . d_j + coriolis_row_i . S_j) and entry
///   (k_j, k_i) = 2 S_j . coriolis_column_i;
///
/// zero where neither joint is on the other's path. O(n) vectors for n^2 entries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InverseDynamicsFactors<const N: usize> {
    /// The coordinate of each joint.
    pub coordinate: [usize; N],
    /// The index (into these arrays) of the nearest joint above each joint.
    pub parent: [Option<usize>; N],
    /// S, each joint's motion subspace.
    pub subspace: [[f64; 6]; N],
    /// d = dS/dt.
    pub rate: [[f64; 6]; N],
    /// c, the acceleration shift.
    pub shift: [[f64; 6]; N],
    /// I^c S, the composite inertia times the subspace.
    pub projected: [[f64; 6]; N],
    /// The row vector of dID/dq's entries below.
    pub position_row: [[f64; 6]; N],
    /// The column vector of dID/dq's entries above.
    pub position_column: [[f64; 6]; N],
    /// The row vector of 2 C's entries below.
    pub coriolis_row: [[f64; 6]; N],
    /// The column vector of 2 C's entries above.
    pub coriolis_column: [[f64; 6]; N],
}

impl<const N: usize> Default for InverseDynamicsFactors<N> {
    fn default() -> Self {
        let zero = [[0.0; 6]; N];
        InverseDynamicsFactors {
            coordinate: [0; N],
            parent: [None; N],
            subspace: zero,
            rate: zero,
            shift: zero,
            projected: zero,
            position_row: zero,
            position_column: zero,
            coriolis_row: zero,
            coriolis_column: zero,
        }
    }
}

/// a . b summed in pairs, so the six products do not wait on each other (a running sum made
/// the assembly latency-bound, several times slower).
fn dot(a: &[f64; 6], b: &[f64; 6]) -> f64 {
    (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]) + (a[4] * b[4] + a[5] * b[5])
}

impl<const N: usize> InverseDynamicsFactors<N> {
    /// Whether the joints form a chain whose joints are the coordinates in order (the snakes).
    pub fn is_ordered_chain(&self) -> bool {
        is_chain(&self.parent) && self.coordinate.iter().enumerate().all(|(t, &k)| k == t)
    }

    /// dID/dq into `position` and dID/dqd into `velocity` (row i being ID_i), every entry
    /// from the formulas on [`InverseDynamicsFactors`], walking each joint's path to the root.
    pub fn assemble_into(&self, position: &mut SMatrix<f64, N, N>, velocity: &mut SMatrix<f64, N, N>) {
        if self.is_ordered_chain() {
            // Row by row in vector loops over the columns, then into column-major storage.
            let columns = ChainColumns::new(self);
            let mut rows = [[0.0f64; N]; N];
            columns.position_rows(&mut rows, 0);
            *position = SMatrix::from_fn(|i, j| rows[i][j]);
            columns.velocity_rows(&mut rows, 0);
            *velocity = SMatrix::from_fn(|i, j| rows[i][j]);
            return;
        }
        *position = SMatrix::zeros();
        *velocity = SMatrix::zeros();
        for i in 0..N {
            let ki = self.coordinate[i];
            let mut above = Some(i);
            // At most N steps: the parents come first, so a path has no more joints than that.
            for _ in 0..N {
                let Some(j) = above else { break };
                let kj = self.coordinate[j];
                position[(ki, kj)] =
                    dot(&self.projected[i], &self.shift[j]) + dot(&self.position_row[i], &self.rate[j]);
                velocity[(ki, kj)] =
                    2.0 * (dot(&self.projected[i], &self.rate[j]) + dot(&self.coriolis_row[i], &self.subspace[j]));
                if j != i {
                    position[(kj, ki)] = dot(&self.subspace[j], &self.position_column[i]);
                    velocity[(kj, ki)] = 2.0 * dot(&self.subspace[j], &self.coriolis_column[i]);
                }
                above = self.parent[j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked transpose against the entry-by-entry definition, at sizes with no
    /// remainder, a remainder, and no whole block.
    #[test]
    fn stores_rows_transposed_at_every_size() {
        fn check<const N: usize>() {
            let mut rows = [[0.0f64; N]; N];
            for (k, row) in rows.iter_mut().enumerate() {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = (k * 100 + j) as f64 + 0.25;
                }
            }
            let mut out = SMatrix::<f64, N, N>::zeros();
            store_transposed(&rows, 0, -2.0, &mut out);
            for k in 0..N {
                for j in 0..N {
                    assert_eq!(out[(k, j)], -2.0 * rows[k][j], "entry ({k}, {j}) at N = {N}");
                }
            }
            // The second of two sets side by side.
            let pairs: [[[f64; N]; 2]; N] = std::array::from_fn(|k| [[0.0; N], rows[k]]);
            let mut second = SMatrix::<f64, N, N>::zeros();
            store_transposed(&pairs, 1, -2.0, &mut second);
            assert_eq!(second, out, "the second set at N = {N}");
        }
        check::<3>();
        check::<4>();
        check::<8>();
        check::<22>();
    }

    /// A chain's factor with made-up entries (the passes are linear whatever they are) on
    /// the planar robots' three motion components.
    fn made_up_chain<const N: usize>() -> ArticulatedFactor<N> {
        let mut factor = ArticulatedFactor::<N>::default();
        let value = |t: usize, r: usize| ((t * 7 + r * 3) % 11) as f64 / 11.0 - 0.4;
        for t in 0..N {
            factor.coordinate[t] = t;
            factor.parent[t] = t.checked_sub(1);
            for r in [2, 3, 4] {
                factor.subspace[t][r] = value(t, r);
                factor.projected[t][r] = value(t + 5, r) * 0.1;
            }
            factor.inverse_pivot[t] = 1.0 + value(t, 1);
        }
        factor
    }

    /// The passes over two sets of columns side by side give each set what it gets alone,
    /// bit for bit, and the inverse solved in place is the identity's solution read by
    /// columns.
    #[test]
    fn paired_and_in_place_solves_match_the_plain_one() {
        fn check<const N: usize>() {
            let factor = made_up_chain::<N>();
            let (subspace, weighted) = factor.compact::<3>(&[2, 3, 4, 0, 0, 0]);
            let entry = |k: usize, j: usize, set: usize| ((k * 13 + j * 5 + set * 3) % 17) as f64 - 8.0;
            let mut pair = [[[0.0f64; N]; 2]; N];
            let mut apart = [[[0.0f64; N]; N]; 2];
            for k in 0..N {
                for j in 0..N {
                    for set in 0..2 {
                        pair[k][set][j] = entry(k, j, set);
                        apart[set][k][j] = entry(k, j, set);
                    }
                }
            }
            factor.chain_passes(&subspace, &weighted, &mut pair);
            for (set, rows) in apart.iter_mut().enumerate() {
                factor.chain_passes(&subspace, &weighted, rows);
                for k in 0..N {
                    assert_eq!(pair[k][set], rows[k], "set {set}, row {k} at N = {N}");
                }
            }
            let mut identity = [[0.0f64; N]; N];
            for (k, row) in identity.iter_mut().enumerate() {
                row[k] = 1.0;
            }
            factor.chain_passes(&subspace, &weighted, &mut identity);
            let mut inverse = SMatrix::<f64, N, N>::zeros();
            factor.chain_inverse(&subspace, &weighted, &mut inverse);
            for k in 0..N {
                for j in 0..N {
                    assert_eq!(inverse[(j, k)], identity[k][j], "entry ({k}, {j}) at N = {N}");
                }
            }
        }
        check::<3>();
        check::<8>();
        check::<22>();
    }
}
