//! Box-constrained quadratic programs, minimise 1/2 x' H x + g' x subject to
//! lower <= x <= upper, by projected Newton: Newton steps on the variables not held at a
//! bound, a projected Armijo line search, and the free block's Cholesky factor left for the
//! caller (box-DDP's feedback gains are -H_ff^-1 Q_ux on the free rows).
//!
//! Why projected Newton (Bertsekas 1982, as Tassa, Mansard and Todorov use it in box-DDP):
//! the programs are small (one per knot, as many variables as the robot has commands) and
//! dense, the Hessian is positive definite once regularised, and the active set settles in
//! a few iterations from the previous knot's or plan's solution, so a general QP solver's
//! set-up would cost more than the solve.

use nalgebra::{DMatrix, DVector};

/// How a box QP ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxQpStatus {
    /// The projected gradient vanished (to the tolerance).
    Converged,
    /// Every variable is held at a bound by a gradient pointing out of the box.
    AllClamped,
    /// The improvement of an iteration fell below the tolerance.
    SmallImprovement,
    /// The iteration limit was reached; the point is feasible and no worse than the start.
    IterationLimit,
}

/// Why a box QP failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxQpError {
    /// The Hessian's block on the free variables is not positive definite: the caller
    /// regularises and tries again.
    NotPositiveDefinite,
    /// A Hessian, gradient or bound entry is not finite, or a lower bound exceeds its upper.
    BadInput,
}

/// Projected-Newton settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxQpSettings {
    /// Projected-Newton iterations at most.
    pub max_iterations: usize,
    /// Converged when the free part of the gradient is smaller than this.
    pub gradient_tolerance: f64,
    /// Stops when an iteration improves the value by less than this, relative.
    pub improvement_tolerance: f64,
    /// Sufficient decrease of the line search, relative to the predicted one.
    pub armijo: f64,
    /// The line search's step factor and its smallest step.
    pub step_factor: f64,
    /// See `step_factor`.
    pub min_step: f64,
}

impl Default for BoxQpSettings {
    fn default() -> Self {
        BoxQpSettings {
            max_iterations: 100,
            gradient_tolerance: 1e-10,
            improvement_tolerance: 1e-12,
            armijo: 0.1,
            step_factor: 0.6,
            min_step: 1e-22,
        }
    }
}

/// A box QP's workspace, sized once for the largest program, so solves do not allocate.
#[derive(Clone, Debug)]
pub struct BoxQp {
    /// The solver's settings.
    pub settings: BoxQpSettings,
    gradient: DVector<f64>,
    search: DVector<f64>,
    candidate: DVector<f64>,
    product: DVector<f64>,
    /// Whether each variable is free (not held at a bound).
    free: Vec<bool>,
    /// The free variables' indices, in order.
    free_index: Vec<usize>,
    /// Cholesky factor (lower) of H on the free variables, in its leading block.
    factor: DMatrix<f64>,
}

impl BoxQp {
    /// A workspace for programs of up to `size` variables.
    pub fn new(size: usize) -> Self {
        BoxQp {
            settings: BoxQpSettings::default(),
            gradient: DVector::zeros(size),
            search: DVector::zeros(size),
            candidate: DVector::zeros(size),
            product: DVector::zeros(size),
            free: vec![true; size],
            free_index: Vec::with_capacity(size),
            factor: DMatrix::zeros(size, size),
        }
    }

    /// The free variables at the solution, in order.
    pub fn free_indices(&self) -> &[usize] {
        &self.free_index
    }

    /// Solves in place: `x` holds the start (clamped into the box first) and receives the
    /// solution. All inputs have the workspace's size.
    pub fn solve(
        &mut self,
        hessian: &DMatrix<f64>,
        gradient: &DVector<f64>,
        lower: &DVector<f64>,
        upper: &DVector<f64>,
        x: &mut DVector<f64>,
    ) -> Result<BoxQpStatus, BoxQpError> {
        let n = x.len();
        let finite = hessian.iter().chain(gradient.iter()).all(|v| v.is_finite());
        if !finite || (0..n).any(|i| !(lower[i] <= upper[i]) || lower[i].is_nan() || upper[i].is_nan()) {
            return Err(BoxQpError::BadInput);
        }
        for i in 0..n {
            x[i] = if x[i].is_finite() { x[i].clamp(lower[i], upper[i]) } else { 0.0_f64.clamp(lower[i], upper[i]) };
        }
        let mut value = quadratic_value(hessian, gradient, x);
        let mut status = BoxQpStatus::IterationLimit;
        for iteration in 0..self.settings.max_iterations {
            hessian.mul_to(x, &mut self.product);
            self.gradient.copy_from(&self.product);
            self.gradient += gradient;
            let changed = self.update_free_set(x, lower, upper);
            if self.free_index.is_empty() {
                status = BoxQpStatus::AllClamped;
                break;
            }
            if iteration == 0 || changed {
                self.factor_free(hessian)?;
            }
            let gradient_norm = self.free_index.iter().map(|&i| self.gradient[i].powi(2)).sum::<f64>().sqrt();
            if gradient_norm < self.settings.gradient_tolerance {
                status = BoxQpStatus::Converged;
                break;
            }
            // Newton step on the free variables; the clamped ones stay.
            self.search.fill(0.0);
            for &i in &self.free_index {
                self.search[i] = -self.gradient[i];
            }
            solve_factored(&self.factor, &self.free_index, &mut self.search);
            let slope = self.search.dot(&self.gradient);
            if slope >= 0.0 {
                // Rounding at the optimum: no descent direction is left.
                status = BoxQpStatus::Converged;
                break;
            }
            let mut step = 1.0;
            let accepted = loop {
                for i in 0..n {
                    self.candidate[i] = (x[i] + step * self.search[i]).clamp(lower[i], upper[i]);
                }
                let candidate_value = quadratic_value(hessian, gradient, &self.candidate);
                if (candidate_value - value) / (step * slope) >= self.settings.armijo {
                    break Some(candidate_value);
                }
                step *= self.settings.step_factor;
                if step < self.settings.min_step {
                    break None;
                }
            };
            let Some(new_value) = accepted else {
                status = BoxQpStatus::SmallImprovement;
                break;
            };
            x.copy_from(&self.candidate);
            let improvement = value - new_value;
            value = new_value;
            if improvement < self.settings.improvement_tolerance * (1.0 + value.abs()) {
                status = BoxQpStatus::SmallImprovement;
                break;
            }
        }
        // The free set and its factor at the solution, for the caller's gains.
        hessian.mul_to(x, &mut self.product);
        self.gradient.copy_from(&self.product);
        self.gradient += gradient;
        self.update_free_set(x, lower, upper);
        self.factor_free(hessian)?;
        Ok(status)
    }

    /// Solves H_ff y = b for the free rows of `b` (indexed by the free variables, others
    /// ignored and left as they are), with the factor of the last solve.
    pub fn solve_free(&self, b: &mut DVector<f64>) {
        solve_factored(&self.factor, &self.free_index, b);
    }

    /// A variable is clamped when it sits at a bound and the gradient pushes it outward.
    /// Returns whether the set changed.
    fn update_free_set(&mut self, x: &DVector<f64>, lower: &DVector<f64>, upper: &DVector<f64>) -> bool {
        let mut changed = false;
        self.free_index.clear();
        for i in 0..x.len() {
            let clamped = (x[i] == lower[i] && self.gradient[i] > 0.0) || (x[i] == upper[i] && self.gradient[i] < 0.0);
            changed |= self.free[i] == clamped;
            self.free[i] = !clamped;
            if !clamped {
                self.free_index.push(i);
            }
        }
        changed
    }

    fn factor_free(&mut self, hessian: &DMatrix<f64>) -> Result<(), BoxQpError> {
        let m = self.free_index.len();
        for c in 0..m {
            for r in c..m {
                let mut sum = hessian[(self.free_index[r], self.free_index[c])];
                for k in 0..c {
                    sum -= self.factor[(r, k)] * self.factor[(c, k)];
                }
                if r == c {
                    if !(sum > 0.0) || !sum.is_finite() {
                        return Err(BoxQpError::NotPositiveDefinite);
                    }
                    self.factor[(c, c)] = sum.sqrt();
                } else {
                    self.factor[(r, c)] = sum / self.factor[(c, c)];
                }
            }
        }
        Ok(())
    }
}

/// Solves L L' y = b on the rows `free` of `b`, L in the leading block of `factor`.
fn solve_factored(factor: &DMatrix<f64>, free: &[usize], b: &mut DVector<f64>) {
    let m = free.len();
    // L z = b_f.
    for r in 0..m {
        let mut sum = b[free[r]];
        for c in 0..r {
            sum -= factor[(r, c)] * b[free[c]];
        }
        b[free[r]] = sum / factor[(r, r)];
    }
    // L' y = z.
    for r in (0..m).rev() {
        let mut sum = b[free[r]];
        for c in r + 1..m {
            sum -= factor[(c, r)] * b[free[c]];
        }
        b[free[r]] = sum / factor[(r, r)];
    }
}

/// 1/2 x' H x + g' x.
fn quadratic_value(hessian: &DMatrix<f64>, gradient: &DVector<f64>, x: &DVector<f64>) -> f64 {
    let n = x.len();
    let mut value = 0.0;
    for c in 0..n {
        let mut column = 0.0;
        for r in 0..n {
            column += hessian[(r, c)] * x[r];
        }
        value += x[c] * (0.5 * column + gradient[c]);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact minimiser by enumerating every assignment of each variable to its lower
    /// bound, its upper bound or free (3^n linear solves), keeping the best feasible one.
    fn enumerate(
        h: &DMatrix<f64>,
        g: &DVector<f64>,
        lower: &DVector<f64>,
        upper: &DVector<f64>,
    ) -> (DVector<f64>, f64) {
        let n = g.len();
        let mut best = (DVector::zeros(n), f64::INFINITY);
        for code in 0..3usize.pow(n as u32) {
            let mut x = DVector::zeros(n);
            let mut free = Vec::new();
            let mut c = code;
            for i in 0..n {
                match c % 3 {
                    0 => x[i] = lower[i],
                    1 => x[i] = upper[i],
                    _ => free.push(i),
                }
                c /= 3;
            }
            if !free.is_empty() {
                let m = free.len();
                let hf = DMatrix::from_fn(m, m, |r, c| h[(free[r], free[c])]);
                let rhs = DVector::from_fn(m, |r, _| {
                    -g[free[r]] - (0..n).filter(|j| !free.contains(j)).map(|j| h[(free[r], j)] * x[j]).sum::<f64>()
                });
                let Some(solution) = hf.lu().solve(&rhs) else { continue };
                for (r, &i) in free.iter().enumerate() {
                    x[i] = solution[r];
                }
            }
            if (0..n).any(|i| x[i] < lower[i] - 1e-12 || x[i] > upper[i] + 1e-12) {
                continue;
            }
            let value = 0.5 * x.dot(&(h * &x)) + g.dot(&x);
            if value < best.1 {
                best = (x, value);
            }
        }
        best
    }

    /// A small deterministic generator for the test programs.
    fn numbers(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    #[test]
    fn matches_enumeration_of_active_sets() {
        for seed in 0..40 {
            let mut next = numbers(seed);
            let n = 1 + (seed as usize % 5);
            let a = DMatrix::from_fn(n, n, |_, _| next());
            let h = &a * a.transpose() + DMatrix::identity(n, n) * 0.1;
            let g = DVector::from_fn(n, |_, _| 3.0 * next());
            let lower = DVector::from_fn(n, |_, _| -0.2 - next().abs());
            let upper = DVector::from_fn(n, |_, _| 0.2 + next().abs());
            let mut qp = BoxQp::new(n);
            let mut x = DVector::zeros(n);
            qp.solve(&h, &g, &lower, &upper, &mut x).unwrap();
            let (expected, best) = enumerate(&h, &g, &lower, &upper);
            let value = 0.5 * x.dot(&(&h * &x)) + g.dot(&x);
            assert!(value <= best + 1e-10 * (1.0 + best.abs()), "seed {seed}: {value} > {best}");
            assert!((&x - &expected).norm() < 1e-6, "seed {seed}: {x} vs {expected}");
            assert!((0..n).all(|i| x[i] >= lower[i] && x[i] <= upper[i]), "seed {seed}: out of the box");
        }
    }

    #[test]
    fn free_factor_solves_the_free_block() {
        let h = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let g = DVector::from_row_slice(&[-1.0, 10.0, -0.5]);
        let (lower, upper) = (DVector::from_element(3, -1.0), DVector::from_element(3, 1.0));
        let mut qp = BoxQp::new(3);
        let mut x = DVector::zeros(3);
        qp.solve(&h, &g, &lower, &upper, &mut x).unwrap();
        assert_eq!(qp.free_indices(), &[0, 2], "the second variable is pushed to its lower bound");
        assert_eq!(x[1], -1.0);
        let mut b = DVector::from_row_slice(&[1.0, 7.0, 2.0]);
        qp.solve_free(&mut b);
        let hf = DMatrix::from_row_slice(2, 2, &[4.0, 0.5, 0.5, 2.0]);
        let expected = hf.lu().solve(&DVector::from_row_slice(&[1.0, 2.0])).unwrap();
        assert!((b[0] - expected[0]).abs() < 1e-14 && (b[2] - expected[1]).abs() < 1e-14);
        assert_eq!(b[1], 7.0, "rows of clamped variables are left alone");
    }

    #[test]
    fn refuses_indefinite_and_non_finite_programs() {
        let mut qp = BoxQp::new(2);
        let (lower, upper) = (DVector::from_element(2, -1.0), DVector::from_element(2, 1.0));
        let indefinite = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -1.0]);
        let mut x = DVector::zeros(2);
        assert_eq!(
            qp.solve(&indefinite, &DVector::from_element(2, 0.1), &lower, &upper, &mut x),
            Err(BoxQpError::NotPositiveDefinite)
        );
        let h = DMatrix::identity(2, 2);
        let g = DVector::from_row_slice(&[f64::NAN, 0.0]);
        assert_eq!(qp.solve(&h, &g, &lower, &upper, &mut x), Err(BoxQpError::BadInput));
        let inverted = DVector::from_element(2, 2.0);
        assert_eq!(qp.solve(&h, &DVector::zeros(2), &inverted, &upper, &mut x), Err(BoxQpError::BadInput));
    }
}
