//! Box-constrained differential dynamic programming (box-DDP, Tassa, Mansard and Todorov
//! 2014) over a horizon of knots: x_(k+1) = f_k(x_k, u_k) with bounds on u, a running cost
//! l_k(x, u) and a terminal cost, solved by Riccati-like backward passes (the control's
//! step from a box QP per knot, feedback on the free controls only) and forward passes with
//! a line search through the true dynamics, with Levenberg-Marquardt regularisation.
//!
//! Why DDP: the dynamics come as a step function with its Jacobians (the generated
//! derivatives of the robot's model, `knots.rs`), each iteration costs one pass of them
//! over the horizon, and the controls stay inside their box at every iterate, so any
//! iteration's plan can be sent; the real-time loop runs one or a few iterations per
//! planning period and warm-starts the next plan by shifting this one ([`BoxDdp::shift`]).
//! The workspace is sized once, so iterations do not allocate.

use super::box_qp::{BoxQp, BoxQpError};
use nalgebra::{DMatrix, DVector};

/// A horizon's dynamics, one step per knot.
pub trait KnotDynamics {
    /// Size of the state x.
    fn state_size(&self) -> usize;
    /// Number of controls u.
    fn control_size(&self) -> usize;
    /// Writes x_(k+1) = f_k(x, u) into `next` and, when asked, its Jacobians d f/d x into
    /// `by_state` and d f/d u into `by_control`.
    fn step(
        &mut self,
        knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
    ) -> Result<(), String>;
}

/// First and second derivatives of a cost term, which [`KnotCost`] adds to.
#[derive(Clone, Debug)]
pub struct CostDerivatives {
    /// dl/dx.
    pub x: DVector<f64>,
    /// dl/du.
    pub u: DVector<f64>,
    /// d^2 l / dx^2.
    pub xx: DMatrix<f64>,
    /// d^2 l / du^2.
    pub uu: DMatrix<f64>,
    /// d^2 l / du dx (controls by states).
    pub ux: DMatrix<f64>,
}

impl CostDerivatives {
    /// All zero, for `states` states and `controls` controls.
    pub fn zeros(states: usize, controls: usize) -> Self {
        CostDerivatives {
            x: DVector::zeros(states),
            u: DVector::zeros(controls),
            xx: DMatrix::zeros(states, states),
            uu: DMatrix::zeros(controls, controls),
            ux: DMatrix::zeros(controls, states),
        }
    }

    fn clear(&mut self) {
        self.x.fill(0.0);
        self.u.fill(0.0);
        self.xx.fill(0.0);
        self.uu.fill(0.0);
        self.ux.fill(0.0);
    }
}

/// A horizon's costs. The Hessians may be Gauss-Newton approximations (J' W J of a
/// residual), which keep them positive semi-definite.
pub trait KnotCost {
    /// l_k(x, u); with `derivatives`, writes its derivatives there (they arrive zeroed).
    fn running(
        &mut self,
        knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        derivatives: Option<&mut CostDerivatives>,
    ) -> f64;
    /// The terminal cost of the last state; with `derivatives`, its x and xx parts.
    fn terminal(&mut self, state: &DVector<f64>, derivatives: Option<&mut CostDerivatives>) -> f64;
}

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DdpSettings {
    /// Iterations per call of [`BoxDdp::solve`].
    pub max_iterations: usize,
    /// Converged when the predicted reduction is below this, relative to the cost.
    pub tolerance: f64,
    /// Levenberg-Marquardt regularisation of Q_uu: its start, floor, ceiling and factor.
    pub regularisation: f64,
    /// The regularisation's floor.
    pub min_regularisation: f64,
    /// Its ceiling: reached without a step that reduces the cost, the solve fails.
    pub max_regularisation: f64,
    /// Its factor up after a failed step and down after an accepted one.
    pub regularisation_factor: f64,
    /// Line-search steps tried, from 1 down by this factor, this many times.
    pub line_search_factor: f64,
    /// See `line_search_factor`.
    pub line_search_steps: usize,
    /// A step is accepted when the actual reduction is at least this part of the predicted.
    pub acceptance: f64,
}

impl Default for DdpSettings {
    fn default() -> Self {
        DdpSettings {
            max_iterations: 50,
            tolerance: 1e-7,
            regularisation: 1e-6,
            min_regularisation: 1e-9,
            max_regularisation: 1e10,
            regularisation_factor: 10.0,
            line_search_factor: 0.5,
            line_search_steps: 10,
            acceptance: 1e-4,
        }
    }
}

impl DdpSettings {
    /// Checks that every setting is finite and in its range.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("tolerance", self.tolerance),
            ("regularisation", self.regularisation),
            ("minimum regularisation", self.min_regularisation),
            ("maximum regularisation", self.max_regularisation),
        ];
        if let Some((name, value)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            return Err(format!("DDP {name} must be finite and > 0, got {value}"));
        }
        if self.min_regularisation > self.max_regularisation {
            return Err(format!(
                "DDP regularisation floor {} is above its ceiling {}",
                self.min_regularisation, self.max_regularisation
            ));
        }
        if !(self.regularisation_factor.is_finite() && self.regularisation_factor > 1.0) {
            return Err(format!("DDP regularisation factor must be > 1, got {}", self.regularisation_factor));
        }
        if !(self.line_search_factor > 0.0 && self.line_search_factor < 1.0) {
            return Err(format!("DDP line-search factor must be in (0, 1), got {}", self.line_search_factor));
        }
        if self.line_search_steps == 0 || self.max_iterations == 0 {
            return Err("DDP needs at least one iteration and one line-search step".into());
        }
        if !(self.acceptance > 0.0 && self.acceptance < 1.0) {
            return Err(format!("DDP acceptance must be in (0, 1), got {}", self.acceptance));
        }
        Ok(())
    }
}

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DdpReport {
    /// Iterations run (backward passes that led to a forward pass).
    pub iterations: usize,
    /// Cost of the plan before and after.
    pub initial_cost: f64,
    /// See `initial_cost`.
    pub cost: f64,
    /// The predicted reduction fell below the tolerance.
    pub converged: bool,
    /// Forward passes run, accepted or not.
    pub forward_passes: usize,
    /// Regularisation at the end.
    pub regularisation: f64,
}

/// Why a solve failed; the plan kept is the last one whose cost was finite.
#[derive(Clone, Debug, PartialEq)]
pub enum DdpError {
    /// The dynamics failed or gave a non-finite state while rolling out the current plan.
    Rollout {
        /// The knot where it failed.
        knot: usize,
        /// The dynamics' message.
        reason: String,
    },
    /// The cost of the current plan is not finite.
    NonFiniteCost,
    /// The regularisation reached its ceiling without a step that reduces the cost.
    RegularisationLimit,
    /// The sizes of the dynamics and the cost do not match the solver's.
    Size(String),
}

impl std::fmt::Display for DdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DdpError::Rollout { knot, reason } => write!(f, "the plan's rollout failed at knot {knot}: {reason}"),
            DdpError::NonFiniteCost => write!(f, "the plan's cost is not finite"),
            DdpError::RegularisationLimit => {
                write!(f, "no step reduced the cost before the regularisation reached its ceiling")
            }
            DdpError::Size(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for DdpError {}

/// A trajectory over the horizon: states at the knots (one more than controls), the
/// controls, and the dynamics' Jacobians at each knot.
#[derive(Clone, Debug)]
struct Trajectory {
    states: Vec<DVector<f64>>,
    controls: Vec<DVector<f64>>,
    by_state: Vec<DMatrix<f64>>,
    by_control: Vec<DMatrix<f64>>,
    cost: f64,
}

impl Trajectory {
    fn new(states: usize, controls: usize, knots: usize) -> Self {
        Trajectory {
            states: vec![DVector::zeros(states); knots + 1],
            controls: vec![DVector::zeros(controls); knots],
            by_state: vec![DMatrix::zeros(states, states); knots],
            by_control: vec![DMatrix::zeros(states, controls); knots],
            cost: f64::INFINITY,
        }
    }
}

/// The box-DDP solver and its plan.
#[derive(Clone, Debug)]
pub struct BoxDdp {
    /// The solver's settings, which may change between solves.
    pub settings: DdpSettings,
    states: usize,
    controls: usize,
    knots: usize,
    lower: DVector<f64>,
    upper: DVector<f64>,
    nominal: Trajectory,
    trial: Trajectory,
    /// Whether `nominal` has been rolled out from the current initial state.
    rolled_out: bool,
    feedforward: Vec<DVector<f64>>,
    gains: Vec<DMatrix<f64>>,
    regularisation: f64,
    qp: BoxQp,
    cost_derivatives: CostDerivatives,
    // Backward-pass buffers.
    value_x: DVector<f64>,
    value_xx: DMatrix<f64>,
    q_x: DVector<f64>,
    q_u: DVector<f64>,
    q_xx: DMatrix<f64>,
    q_uu: DMatrix<f64>,
    q_ux: DMatrix<f64>,
    value_xx_by_state: DMatrix<f64>,
    value_xx_by_control: DMatrix<f64>,
    q_uu_gain: DMatrix<f64>,
    step_lower: DVector<f64>,
    step_upper: DVector<f64>,
    gain_column: DVector<f64>,
    deviation: DVector<f64>,
    /// Predicted reduction for a unit step: linear and quadratic parts.
    expected: (f64, f64),
}

impl BoxDdp {
    /// A solver for `knots` steps of a system with `states` states and controls bounded by
    /// `lower` and `upper`; the first plan holds every control at the point of its box
    /// nearest zero.
    pub fn new(
        states: usize,
        knots: usize,
        lower: DVector<f64>,
        upper: DVector<f64>,
        settings: DdpSettings,
    ) -> Result<Self, String> {
        settings.validate()?;
        let controls = lower.len();
        if upper.len() != controls {
            return Err(format!("{} lower bounds but {} upper bounds", controls, upper.len()));
        }
        if states == 0 || controls == 0 || knots == 0 {
            return Err(format!("a horizon needs states, controls and knots; got {states}, {controls} and {knots}"));
        }
        if let Some(i) = (0..controls).find(|&i| !(lower[i] <= upper[i]) || lower[i].is_nan() || upper[i].is_nan()) {
            return Err(format!("bounds of control {i}: [{}, {}] is not an interval", lower[i], upper[i]));
        }
        let mut nominal = Trajectory::new(states, controls, knots);
        for control in &mut nominal.controls {
            for i in 0..controls {
                control[i] = 0.0_f64.clamp(lower[i], upper[i]);
            }
        }
        Ok(BoxDdp {
            settings,
            states,
            controls,
            knots,
            trial: nominal.clone(),
            nominal,
            rolled_out: false,
            feedforward: vec![DVector::zeros(controls); knots],
            gains: vec![DMatrix::zeros(controls, states); knots],
            regularisation: settings.regularisation,
            qp: BoxQp::new(controls),
            cost_derivatives: CostDerivatives::zeros(states, controls),
            value_x: DVector::zeros(states),
            value_xx: DMatrix::zeros(states, states),
            q_x: DVector::zeros(states),
            q_u: DVector::zeros(controls),
            q_xx: DMatrix::zeros(states, states),
            q_uu: DMatrix::zeros(controls, controls),
            q_ux: DMatrix::zeros(controls, states),
            value_xx_by_state: DMatrix::zeros(states, states),
            value_xx_by_control: DMatrix::zeros(states, controls),
            q_uu_gain: DMatrix::zeros(controls, states),
            step_lower: DVector::zeros(controls),
            step_upper: DVector::zeros(controls),
            gain_column: DVector::zeros(controls),
            deviation: DVector::zeros(states),
            expected: (0.0, 0.0),
            lower,
            upper,
        })
    }

    /// The plan's knots (controls).
    pub fn knots(&self) -> usize {
        self.knots
    }

    /// The plan's controls, one per knot.
    pub fn controls(&self) -> &[DVector<f64>] {
        &self.nominal.controls
    }

    /// The states the plan predicts, one more than the controls.
    pub fn states(&self) -> &[DVector<f64>] {
        &self.nominal.states
    }

    /// The plan's cost (infinite before the first solve).
    pub fn cost(&self) -> f64 {
        self.nominal.cost
    }

    /// The controls' lower bounds.
    pub fn lower(&self) -> &DVector<f64> {
        &self.lower
    }

    /// The controls' upper bounds.
    pub fn upper(&self) -> &DVector<f64> {
        &self.upper
    }

    /// Replaces the plan's controls (clamped into their box), e.g. to warm-start from
    /// another plan.
    pub fn set_controls(&mut self, controls: &[DVector<f64>]) -> Result<(), String> {
        if controls.len() != self.knots || controls.iter().any(|c| c.len() != self.controls) {
            return Err(format!("a plan has {} knots of {} controls", self.knots, self.controls));
        }
        for (mine, given) in self.nominal.controls.iter_mut().zip(controls) {
            for i in 0..self.controls {
                let value = if given[i].is_finite() { given[i] } else { 0.0 };
                mine[i] = value.clamp(self.lower[i], self.upper[i]);
            }
        }
        self.rolled_out = false;
        Ok(())
    }

    /// Warm start for the next period: drops the first `knots` knots of the plan (controls,
    /// predicted states and their Jacobians, gains) and repeats the last one at the end. The
    /// shifted trajectory serves [`BoxDdp::real_time_iteration`] as its linearisation; a
    /// [`BoxDdp::solve`] from a new initial state rolls the plan out again.
    pub fn shift(&mut self, knots: usize) {
        if knots == 0 {
            return;
        }
        if knots >= self.knots {
            let last = self.nominal.controls[self.knots - 1].clone();
            for control in &mut self.nominal.controls {
                control.copy_from(&last);
            }
            self.rolled_out = false;
            return;
        }
        fn rotate<T: Clone>(items: &mut [T], knots: usize) {
            items.rotate_left(knots);
            let kept = items.len() - knots;
            for k in kept..items.len() {
                items[k] = items[kept - 1].clone();
            }
        }
        rotate(&mut self.nominal.controls, knots);
        rotate(&mut self.nominal.states, knots);
        rotate(&mut self.nominal.by_state, knots);
        rotate(&mut self.nominal.by_control, knots);
        rotate(&mut self.gains, knots);
        rotate(&mut self.feedforward, knots);
    }

    /// One real-time iteration (Diehl's, in DDP form): a backward pass about the plan's
    /// trajectory as the last call left it (shifted by [`BoxDdp::shift`] when knots have
    /// passed), and one forward pass with its feedback from the new initial state, taken
    /// whole, or shortened until its rollout is finite. Its cost is not compared with the
    /// last plan's, which started elsewhere: the gains absorb the new state's difference,
    /// and the iteration costs one rollout. With no trajectory yet, the plan is rolled out.
    pub fn real_time_iteration<D: KnotDynamics, L: KnotCost>(
        &mut self,
        dynamics: &mut D,
        cost: &mut L,
        initial_state: &DVector<f64>,
    ) -> Result<DdpReport, DdpError> {
        self.check_sizes(dynamics, initial_state)?;
        let mut report = DdpReport {
            iterations: 0,
            initial_cost: self.nominal.cost,
            cost: self.nominal.cost,
            converged: false,
            forward_passes: 0,
            regularisation: self.regularisation,
        };
        if !self.rolled_out {
            self.roll_out(dynamics, cost, initial_state)?;
            report.forward_passes = 1;
            report.cost = self.nominal.cost;
            return Ok(report);
        }
        while self.backward(cost).is_err() {
            self.increase_regularisation()?;
        }
        report.iterations = 1;
        let mut step = 1.0;
        let mut last_error = None;
        for _ in 0..self.settings.line_search_steps {
            report.forward_passes += 1;
            self.trial.states[0].copy_from(initial_state);
            match self.forward(dynamics, cost, step, true) {
                Ok(()) => {
                    last_error = None;
                    break;
                }
                Err(e) => last_error = Some(e),
            }
            step *= self.settings.line_search_factor;
        }
        if let Some(error) = last_error {
            self.increase_regularisation()?;
            return Err(error);
        }
        std::mem::swap(&mut self.nominal, &mut self.trial);
        self.regularisation =
            (self.regularisation / self.settings.regularisation_factor).max(self.settings.min_regularisation);
        report.cost = self.nominal.cost;
        report.regularisation = self.regularisation;
        Ok(report)
    }

    fn check_sizes<D: KnotDynamics>(&self, dynamics: &D, initial_state: &DVector<f64>) -> Result<(), DdpError> {
        if dynamics.state_size() != self.states || dynamics.control_size() != self.controls {
            return Err(DdpError::Size(format!(
                "the dynamics have {} states and {} controls, the solver {} and {}",
                dynamics.state_size(),
                dynamics.control_size(),
                self.states,
                self.controls
            )));
        }
        if initial_state.len() != self.states {
            return Err(DdpError::Size(format!(
                "initial state has {} entries, expected {}",
                initial_state.len(),
                self.states
            )));
        }
        Ok(())
    }

    /// Runs up to `settings.max_iterations` iterations from `initial_state`. The plan stays
    /// feasible throughout; on an error it is the last plan whose cost was finite.
    pub fn solve<D: KnotDynamics, L: KnotCost>(
        &mut self,
        dynamics: &mut D,
        cost: &mut L,
        initial_state: &DVector<f64>,
    ) -> Result<DdpReport, DdpError> {
        self.check_sizes(dynamics, initial_state)?;
        // Roll the plan out from the new initial state, without feedback.
        if !self.rolled_out || self.nominal.states[0] != *initial_state {
            self.roll_out(dynamics, cost, initial_state)?;
        }
        let initial_cost = self.nominal.cost;
        let mut report = DdpReport {
            iterations: 0,
            initial_cost,
            cost: initial_cost,
            converged: false,
            forward_passes: 0,
            regularisation: self.regularisation,
        };
        while report.iterations < self.settings.max_iterations {
            // Backward pass, regularised up until every knot's QP is positive definite.
            loop {
                match self.backward(cost) {
                    Ok(()) => break,
                    Err(()) => {
                        self.increase_regularisation()?;
                    }
                }
            }
            report.iterations += 1;
            let predicted = -(self.expected.0 + self.expected.1);
            if predicted < self.settings.tolerance * (1.0 + self.nominal.cost.abs()) {
                report.converged = true;
                break;
            }
            // Forward passes down the line search.
            let mut step = 1.0;
            let mut accepted = false;
            for _ in 0..self.settings.line_search_steps {
                report.forward_passes += 1;
                self.trial.states[0].copy_from(initial_state);
                if self.forward(dynamics, cost, step, true).is_ok() {
                    let actual = self.nominal.cost - self.trial.cost;
                    let expected = -(step * self.expected.0 + step * step * self.expected.1);
                    if actual > 0.0 && actual >= self.settings.acceptance * expected {
                        accepted = true;
                        break;
                    }
                }
                step *= self.settings.line_search_factor;
            }
            if accepted {
                std::mem::swap(&mut self.nominal, &mut self.trial);
                self.regularisation =
                    (self.regularisation / self.settings.regularisation_factor).max(self.settings.min_regularisation);
            } else {
                self.increase_regularisation()?;
            }
        }
        report.cost = self.nominal.cost;
        report.regularisation = self.regularisation;
        Ok(report)
    }

    /// Rolls the plan's controls out from `initial_state`, without feedback, as the nominal
    /// trajectory.
    fn roll_out<D: KnotDynamics, L: KnotCost>(
        &mut self,
        dynamics: &mut D,
        cost: &mut L,
        initial_state: &DVector<f64>,
    ) -> Result<(), DdpError> {
        self.trial.states[0].copy_from(initial_state);
        for k in 0..self.knots {
            self.trial.controls[k].copy_from(&self.nominal.controls[k]);
        }
        self.forward(dynamics, cost, 0.0, false)?;
        std::mem::swap(&mut self.nominal, &mut self.trial);
        self.rolled_out = true;
        Ok(())
    }

    fn increase_regularisation(&mut self) -> Result<(), DdpError> {
        self.regularisation *= self.settings.regularisation_factor;
        if self.regularisation > self.settings.max_regularisation {
            self.regularisation = self.settings.max_regularisation;
            return Err(DdpError::RegularisationLimit);
        }
        Ok(())
    }

    /// Rolls out `trial` from its first state: with `feedback`, the controls are the
    /// nominal ones plus `step` times the feedforward and the gains on the state's
    /// deviation, clamped into the box; without, `trial`'s own controls. Every step leaves
    /// its Jacobians, and the cost is summed.
    fn forward<D: KnotDynamics, L: KnotCost>(
        &mut self,
        dynamics: &mut D,
        cost: &mut L,
        step: f64,
        feedback: bool,
    ) -> Result<(), DdpError> {
        let mut total = 0.0;
        for k in 0..self.knots {
            if feedback {
                self.deviation.copy_from(&self.trial.states[k]);
                self.deviation -= &self.nominal.states[k];
                let control = &mut self.trial.controls[k];
                control.copy_from(&self.nominal.controls[k]);
                control.axpy(step, &self.feedforward[k], 1.0);
                control.gemv(1.0, &self.gains[k], &self.deviation, 1.0);
                for i in 0..self.controls {
                    control[i] = control[i].clamp(self.lower[i], self.upper[i]);
                }
            }
            let (before, after) = self.trial.states.split_at_mut(k + 1);
            dynamics
                .step(
                    k,
                    &before[k],
                    &self.trial.controls[k],
                    &mut after[0],
                    Some((&mut self.trial.by_state[k], &mut self.trial.by_control[k])),
                )
                .map_err(|reason| DdpError::Rollout { knot: k, reason })?;
            if after[0].iter().any(|v| !v.is_finite()) {
                return Err(DdpError::Rollout { knot: k, reason: "the state is not finite".into() });
            }
            total += cost.running(k, &before[k], &self.trial.controls[k], None);
        }
        total += cost.terminal(&self.trial.states[self.knots], None);
        if !total.is_finite() {
            return Err(DdpError::NonFiniteCost);
        }
        self.trial.cost = total;
        Ok(())
    }

    /// The backward pass over the nominal trajectory; Err when a knot's Q_uu is not
    /// positive definite at the current regularisation.
    fn backward<L: KnotCost>(&mut self, cost: &mut L) -> Result<(), ()> {
        self.cost_derivatives.clear();
        cost.terminal(&self.nominal.states[self.knots], Some(&mut self.cost_derivatives));
        self.value_x.copy_from(&self.cost_derivatives.x);
        self.value_xx.copy_from(&self.cost_derivatives.xx);
        self.expected = (0.0, 0.0);
        for k in (0..self.knots).rev() {
            self.cost_derivatives.clear();
            cost.running(k, &self.nominal.states[k], &self.nominal.controls[k], Some(&mut self.cost_derivatives));
            let a = &self.nominal.by_state[k];
            let b = &self.nominal.by_control[k];
            let l = &self.cost_derivatives;
            // Q_x = l_x + A' V_x, Q_u = l_u + B' V_x.
            self.q_x.copy_from(&l.x);
            self.q_x.gemv_tr(1.0, a, &self.value_x, 1.0);
            self.q_u.copy_from(&l.u);
            self.q_u.gemv_tr(1.0, b, &self.value_x, 1.0);
            // Q_xx = l_xx + A' V_xx A, Q_uu = l_uu + B' V_xx B, Q_ux = l_ux + B' V_xx A.
            self.value_xx_by_state.gemm(1.0, &self.value_xx, a, 0.0);
            self.value_xx_by_control.gemm(1.0, &self.value_xx, b, 0.0);
            self.q_xx.copy_from(&l.xx);
            self.q_xx.gemm_tr(1.0, a, &self.value_xx_by_state, 1.0);
            self.q_uu.copy_from(&l.uu);
            self.q_uu.gemm_tr(1.0, b, &self.value_xx_by_control, 1.0);
            self.q_ux.copy_from(&l.ux);
            self.q_ux.gemm_tr(1.0, b, &self.value_xx_by_state, 1.0);
            for i in 0..self.controls {
                self.q_uu[(i, i)] += self.regularisation;
            }
            // The control step: a box QP on the step's bounds, warm-started at the last one.
            let control = &self.nominal.controls[k];
            for i in 0..self.controls {
                self.step_lower[i] = self.lower[i] - control[i];
                self.step_upper[i] = self.upper[i] - control[i];
            }
            match self.qp.solve(&self.q_uu, &self.q_u, &self.step_lower, &self.step_upper, &mut self.feedforward[k]) {
                Ok(_) => {}
                Err(BoxQpError::NotPositiveDefinite) | Err(BoxQpError::BadInput) => return Err(()),
            }
            // Gains on the free controls: K_f = -Q_ff^-1 Q_ux,f; clamped controls get none.
            let gains = &mut self.gains[k];
            gains.fill(0.0);
            for s in 0..self.states {
                for &i in self.qp.free_indices() {
                    self.gain_column[i] = -self.q_ux[(i, s)];
                }
                self.qp.solve_free(&mut self.gain_column);
                for &i in self.qp.free_indices() {
                    gains[(i, s)] = self.gain_column[i];
                }
            }
            // Remove the regularisation again before the value function.
            for i in 0..self.controls {
                self.q_uu[(i, i)] -= self.regularisation;
            }
            let feedforward = &self.feedforward[k];
            self.expected.0 += feedforward.dot(&self.q_u);
            self.q_uu.mul_to(feedforward, &mut self.gain_column);
            self.expected.1 += 0.5 * feedforward.dot(&self.gain_column);
            // V_x = Q_x + K' Q_uu k + K' Q_u + Q_ux' k;
            // V_xx = Q_xx + K' Q_uu K + K' Q_ux + Q_ux' K.
            self.value_x.copy_from(&self.q_x);
            self.value_x.gemv_tr(1.0, gains, &self.q_u, 1.0);
            self.value_x.gemv_tr(1.0, &self.q_ux, feedforward, 1.0);
            self.q_uu_gain.gemm(1.0, &self.q_uu, gains, 0.0);
            self.value_x.gemv_tr(1.0, &self.q_uu_gain, feedforward, 1.0);
            self.value_xx.copy_from(&self.q_xx);
            self.value_xx.gemm_tr(1.0, gains, &self.q_uu_gain, 1.0);
            self.value_xx.gemm_tr(1.0, gains, &self.q_ux, 1.0);
            self.value_xx.gemm_tr(1.0, &self.q_ux, gains, 1.0);
            // Symmetrise against rounding.
            for c in 0..self.states {
                for r in c + 1..self.states {
                    let mean = 0.5 * (self.value_xx[(r, c)] + self.value_xx[(c, r)]);
                    self.value_xx[(r, c)] = mean;
                    self.value_xx[(c, r)] = mean;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
