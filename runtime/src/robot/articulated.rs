//! M^-1 applied to many columns at once through a rigid tree's articulated-body
//! factorisation: O(n) per column with no matrix formed, for the forward dynamics' derivatives.

use crate::robot::dynamics::multiply_add;
use nalgebra::SMatrix;

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

/// Columns solved side by side: two 256-bit registers per component. Measured against 16 and
/// 32 on the scaling snakes: 8 was as fast at 62 coordinates and faster below (fewer unused
/// lanes in the last block, everything in registers on a chain).
const LANES: usize = 8;
type Lanes = [f64; LANES];

/// One set of right-hand sides for [`ArticulatedFactor::solve_into`]: `out = scale * M^-1 b`,
/// with `b` the identity where it is `None` (then `out` is `scale * M^-1`).
pub struct Solve<'a, const N: usize> {
    pub scale: f64,
    pub b: Option<&'a SMatrix<f64, N, N>>,
    pub out: &'a mut SMatrix<f64, N, N>,
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
        let mut active = [0usize; 6];
        let mut count = 0;
        for r in 0..6 {
            if self.subspace.iter().any(|s| s[r] != 0.0) {
                active[count] = r;
                count += 1;
            }
        }
        match count {
            0 => solves.iter_mut().for_each(|solve| *solve.out = SMatrix::zeros()),
            1 => self.solve_compact::<1>(&active, solves),
            2 => self.solve_compact::<2>(&active, solves),
            3 => self.solve_compact::<3>(&active, solves),
            4 => self.solve_compact::<4>(&active, solves),
            5 => self.solve_compact::<5>(&active, solves),
            _ => self.solve_compact::<6>(&active, solves),
        }
    }

    /// [`Self::solve_into`] over the `R` components in `active`.
    fn solve_compact<const R: usize>(&self, active: &[usize; 6], solves: &mut [Solve<'_, N>]) {
        let mut subspace = [[0.0f64; R]; N];
        let mut weighted = [[0.0f64; R]; N];
        for t in 0..N {
            for (c, &r) in active[..R].iter().enumerate() {
                subspace[t][c] = self.subspace[t][r];
                weighted[t][c] = self.projected[t][r] * self.inverse_pivot[t];
            }
        }
        // Per coordinate the block's right-hand sides, overwritten by u / D and then by the
        // solution; per joint the force p from below and the acceleration a.
        let mut force = [[[0.0f64; LANES]; R]; N];
        let mut acceleration = [[[0.0f64; LANES]; R]; N];
        let chain = self.parent.iter().enumerate().all(|(t, &parent)| parent == t.checked_sub(1));
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
            if chain {
                self.chain_passes(&subspace, &weighted, &mut rows);
            } else {
                self.passes(&subspace, &weighted, &mut rows, &mut force, &mut acceleration);
            }
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

    /// [`Self::passes`] for a chain (each joint's parent the one before it), where the force
    /// from below and the acceleration are running sums that stay in registers from joint to
    /// joint instead of going through memory per joint.
    fn chain_passes<const R: usize>(&self, subspace: &[[f64; R]; N], weighted: &[[f64; R]; N], rows: &mut [Lanes; N]) {
        let mut force = [[0.0f64; LANES]; R];
        for t in (0..N).rev() {
            let u = &mut rows[self.coordinate[t]];
            for c in 0..R {
                let s = subspace[t][c];
                for w in 0..LANES {
                    u[w] = multiply_add(-s, force[c][w], u[w]);
                }
            }
            for c in 0..R {
                let weight = weighted[t][c];
                for w in 0..LANES {
                    force[c][w] = multiply_add(weight, u[w], force[c][w]);
                }
            }
            let inverse_pivot = self.inverse_pivot[t];
            for x in u.iter_mut() {
                *x *= inverse_pivot;
            }
        }
        let mut acceleration = [[0.0f64; LANES]; R];
        for t in 0..N {
            let x = &mut rows[self.coordinate[t]];
            for c in 0..R {
                let weight = weighted[t][c];
                for w in 0..LANES {
                    x[w] = multiply_add(-weight, acceleration[c][w], x[w]);
                }
            }
            for c in 0..R {
                let s = subspace[t][c];
                for w in 0..LANES {
                    acceleration[c][w] = multiply_add(s, x[w], acceleration[c][w]);
                }
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
