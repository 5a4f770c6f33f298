//! Receding-horizon control: box-DDP re-planned from each measured state over the robot's
//! knots, warm-started by shifting the last plan by the knots that have passed, a few
//! iterations per planning period. A plan that fails (a rollout that diverges, a
//! non-finite cost, no step the regularisation allows) or ends past its deadline is not
//! used: the controller keeps following the last plan that succeeded, shifted, which is
//! inside the commands' box by construction, and counts the failure.

use super::cost::{GoalCost, GoalWeights};
use super::ddp::{BoxDdp, DdpReport, DdpSettings, KnotDynamics};
use super::knots::{KnotIntegrator, RobotKnots};
use super::schedule::CommandSchedule;
use crate::robot::model::Model;
use crate::simulation::closed_loop::Simulation;
use crate::simulation::system_jacobian::ControlInput;
use nalgebra::{DVector, SVector};
use std::time::{Duration, Instant};

/// A receding-horizon controller's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct HorizonSettings {
    /// Knots over the horizon and the interval of each (s): the horizon is their product.
    pub knots: usize,
    /// See `knots`.
    pub interval: f64,
    /// Implicit steps per knot.
    pub substeps: usize,
    /// DDP iterations per plan (one is real-time iteration).
    pub iterations: usize,
    /// The planning period (s): a plan must be ready within it, or it counts as an overrun.
    pub period: f64,
    /// A plan ready later than this after it began (s) is dropped for the last good one
    /// (the real-time loop, where the plant has moved on); `None` uses every plan (offline
    /// runs in simulated time, which then repeat exactly whatever the machine's load). A
    /// plan between the period and the deadline counts as an overrun and is used: it is
    /// still the newest, and its commands are read at their own times.
    pub deadline: Option<f64>,
    /// Bounds of the commands, one entry per command.
    pub lower: Vec<f64>,
    /// See `lower`.
    pub upper: Vec<f64>,
}

/// Most knots over a horizon.
pub const MAX_KNOTS: usize = 1000;

impl HorizonSettings {
    /// Checks the settings for `commands` commands a knot.
    pub fn validate(&self, commands: usize) -> Result<(), String> {
        if !(1..=MAX_KNOTS).contains(&self.knots) {
            return Err(format!("MPC knots must be in 1..={MAX_KNOTS}, got {}", self.knots));
        }
        for (name, value) in [
            ("knot interval", self.interval),
            ("planning period", self.period),
            ("plan deadline", self.deadline.unwrap_or(self.period)),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("MPC {name} must be finite and > 0 s, got {value}"));
            }
        }
        if let Some(deadline) = self.deadline.filter(|d| *d < self.period) {
            return Err(format!(
                "MPC plan deadline {deadline} s is shorter than the planning period {} s",
                self.period
            ));
        }
        if !(1..=100).contains(&self.iterations) {
            return Err(format!("MPC iterations per plan must be in 1..=100, got {}", self.iterations));
        }
        if self.lower.len() != commands || self.upper.len() != commands {
            return Err(format!(
                "MPC bounds: {} lower and {} upper for {commands} commands",
                self.lower.len(),
                self.upper.len()
            ));
        }
        for i in 0..commands {
            let (l, u) = (self.lower[i], self.upper[i]);
            if !(l.is_finite() && u.is_finite() && l <= u) {
                return Err(format!("MPC bounds of command {i}: [{l}, {u}] is not a finite interval"));
            }
        }
        Ok(())
    }

    /// The horizon (s).
    pub fn horizon(&self) -> f64 {
        self.knots as f64 * self.interval
    }
}

/// What one plan did.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOutcome {
    /// The measured state's time.
    pub time: f64,
    /// The plan's cost, and the iterations it ran.
    pub cost: f64,
    /// See `cost`.
    pub iterations: usize,
    /// Rollouts of the line search, and the system Jacobians the knots evaluated.
    pub forward_passes: usize,
    /// See `forward_passes`.
    pub jacobians: usize,
    /// Wall time of the plan.
    pub compute: Duration,
    /// Why the plan was not used, if it was not; the last good plan is followed instead.
    pub failure: Option<String>,
}

/// The planner's counts over a run, for its closing line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlannerStatistics {
    /// Plans made.
    pub plans: usize,
    /// Plans not used: failed, or ready past the period.
    pub failures: usize,
    /// Plans ready past the period.
    pub overruns: usize,
    /// The longest plan.
    pub longest: Duration,
    /// The plans' total compute.
    pub total: Duration,
}

impl PlannerStatistics {
    /// Plans per second of compute: the rate the planner could sustain.
    pub fn achievable_rate(&self) -> f64 {
        if self.total.is_zero() {
            return f64::INFINITY;
        }
        self.plans as f64 / self.total.as_secs_f64()
    }

    /// `planner: N plans at X Hz, longest Y ms, overruns Z`, X the planning rate.
    pub fn line(&self, period: f64) -> String {
        format!(
            "planner: {} plans at {:.0} Hz, longest {:.1} ms, overruns {}, failures {} (compute for {:.0} plans per second)",
            self.plans,
            1.0 / period,
            self.longest.as_secs_f64() * 1e3,
            self.overruns,
            self.failures,
            self.achievable_rate()
        )
    }
}

/// Box-DDP over a robot's knots, re-planned at each measured state.
pub struct RecedingHorizon<R: Model<N, C>, const N: usize, const C: usize> {
    /// The controller's settings.
    pub settings: HorizonSettings,
    knots: RobotKnots<R, N, C>,
    cost: GoalCost<R, N, C>,
    ddp: BoxDdp,
    /// The last good plan (its controls) and the time it starts at.
    kept: Vec<DVector<f64>>,
    kept_time: Option<f64>,
    /// When the solver's plan starts.
    plan_time: Option<f64>,
    statistics: PlannerStatistics,
    /// Knots a plan starts after the measured state's time (0: at it). A plan in the
    /// real-time loop is ready tens of milliseconds after its measurement, and its first
    /// knot, optimised from the measured state, would be applied from a state the robot has
    /// left; with a lead the planner first steps the model that many knots under the
    /// commands in effect (those the loop keeps sending until the plan starts) and plans
    /// from the state there.
    pub lead_knots: usize,
}

impl<R: Model<N, C>, const N: usize, const C: usize> RecedingHorizon<R, N, C> {
    /// A controller of `simulation` (the model the plans roll out: the plant's contact,
    /// terrain and servos, no gait) through `inputs`, with costs `weights`. The first plan
    /// starts from every command at the point of its box nearest its resting value.
    pub fn new(
        simulation: Simulation<R, N, C>,
        inputs: &[ControlInput],
        settings: HorizonSettings,
        weights: GoalWeights,
        ddp: DdpSettings,
    ) -> Result<Self, String> {
        let commands = inputs.iter().map(|input| input.count::<R, N, C>()).sum();
        Self::scheduled(simulation, inputs, CommandSchedule::Held { commands }, settings, weights, ddp)
    }

    /// As [`RecedingHorizon::new`], the plans deciding what `schedule` turns into the
    /// commands (the bounds, resting values and command-rate cost are the decisions').
    pub fn scheduled(
        simulation: Simulation<R, N, C>,
        inputs: &[ControlInput],
        schedule: CommandSchedule,
        settings: HorizonSettings,
        weights: GoalWeights,
        ddp: DdpSettings,
    ) -> Result<Self, String> {
        let knots = RobotKnots::scheduled(simulation, inputs, schedule, settings.interval, settings.substeps)?;
        let commands = knots.control_size();
        settings.validate(commands)?;
        let params = knots.simulation().params.clone();
        let cost = GoalCost::new(params, weights, settings.interval, commands)?;
        let lower = DVector::from_column_slice(&settings.lower);
        let upper = DVector::from_column_slice(&settings.upper);
        let mut solver = BoxDdp::new(knots.state_size(), settings.knots, lower, upper, ddp)?;
        let rest = DVector::from_fn(commands, |i, _| cost.weights.rest[i].clamp(settings.lower[i], settings.upper[i]));
        solver.set_controls(&vec![rest; settings.knots])?;
        let kept = solver.controls().to_vec();
        Ok(RecedingHorizon {
            settings,
            knots,
            cost,
            ddp: solver,
            kept,
            kept_time: None,
            plan_time: None,
            statistics: PlannerStatistics::default(),
            lead_knots: 0,
        })
    }

    /// Commands a knot: the robot's actuator commands.
    pub fn commands(&self) -> usize {
        self.knots.control_size()
    }

    /// The counts over the run so far.
    pub fn statistics(&self) -> PlannerStatistics {
        self.statistics
    }

    /// The goal the cost pulls the centre of mass to.
    pub fn goal(&self) -> nalgebra::Vector3<f64> {
        self.cost.weights.goal
    }

    /// Moves the goal the cost pulls the centre of mass to.
    pub fn set_goal(&mut self, goal: nalgebra::Vector3<f64>) {
        self.cost.weights.goal = goal;
    }

    /// The centre of mass at q.
    pub fn center_of_mass(&self, q: &SVector<f64, N>) -> nalgebra::Vector3<f64> {
        self.cost.center_of_mass(q)
    }

    /// Integrates the knots' steps with `integrator`.
    pub fn set_knot_integrator(&mut self, integrator: KnotIntegrator) {
        self.knots.integrator = integrator;
    }

    /// The knots' Newton settings ([`RobotKnots::set_newton`]).
    pub fn set_newton(&mut self, tolerance: f64, retry_from_fresh: bool) -> Result<(), String> {
        self.knots.set_newton(tolerance, retry_from_fresh)
    }

    /// The plan as commands over time, for the loop to read at their own times.
    pub fn schedule(&self) -> CommandSchedule {
        self.knots.schedule()
    }

    /// Plans from the state (q, qd) measured at `time`, with `current` the commands in
    /// effect (for the command-rate cost), for held commands.
    pub fn plan(&mut self, time: f64, q: &SVector<f64, N>, qd: &SVector<f64, N>, current: &[f64]) -> PlanOutcome {
        self.plan_from(time, q, qd, &[], current)
    }

    /// Plans from the state (q, qd) and the schedule's state (a wave's phase) at `time`,
    /// with `current` the decisions in effect.
    pub fn plan_from(
        &mut self,
        time: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        schedule_state: &[f64],
        current: &[f64],
    ) -> PlanOutcome {
        let started = Instant::now();
        let mut outcome = PlanOutcome {
            time,
            cost: f64::NAN,
            iterations: 0,
            forward_passes: 0,
            jacobians: 0,
            compute: Duration::ZERO,
            failure: None,
        };
        let jacobians_before = self.knots.jacobians;
        let states = self.schedule().states();
        if current.len() != self.commands() {
            outcome.failure = Some(format!("{} current commands given for {}", current.len(), self.commands()));
        } else if schedule_state.len() != states {
            outcome.failure =
                Some(format!("{} schedule states given for the schedule's {states}", schedule_state.len()));
        } else if q.iter().chain(qd.iter()).chain(current).chain(schedule_state).any(|v| !v.is_finite()) {
            outcome.failure = Some("the measured state or the current commands are not finite".into());
        } else {
            let mut x0 = RobotKnots::<R, N, C>::scheduled_state_vector(q, qd, schedule_state, current);
            let start = time + self.lead_knots as f64 * self.settings.interval;
            let decisions = DVector::from_column_slice(current);
            let mut predicted = DVector::zeros(x0.len());
            for knot in 0..self.lead_knots {
                if let Err(e) = self.knots.step(knot, &x0, &decisions, &mut predicted, None) {
                    outcome.failure = Some(format!("the state {} knots ahead could not be predicted: {e}", knot + 1));
                    break;
                }
                std::mem::swap(&mut x0, &mut predicted);
            }
            if outcome.failure.is_none() {
                // The goal terms' scale for this plan, from where it starts.
                self.cost.scale_for_start(&SVector::from_iterator(x0.rows(0, N).iter().copied()));
                // Warm start: the solver's plan, shifted by the knots that have passed since
                // it started (rounded: with a planning period shorter than a knot, none, and
                // the plan starts again at its new start with its first knot a period longer,
                // an error of one period that does not accumulate).
                if let Some(previous) = self.plan_time {
                    let passed = ((start - previous) / self.settings.interval).round().max(0.0) as usize;
                    self.ddp.shift(passed);
                }
                self.plan_time = Some(start);
                // One real-time iteration (one rollout), then full iterations if asked for.
                let mut result = self.ddp.real_time_iteration(&mut self.knots, &mut self.cost, &x0);
                if self.settings.iterations > 1 {
                    if let Ok(first) = result {
                        self.ddp.settings.max_iterations = self.settings.iterations - 1;
                        result = self.ddp.solve(&mut self.knots, &mut self.cost, &x0).map(|more| DdpReport {
                            iterations: first.iterations + more.iterations,
                            forward_passes: first.forward_passes + more.forward_passes,
                            ..more
                        });
                    }
                }
                match result {
                    Ok(report) => {
                        outcome.cost = report.cost;
                        outcome.iterations = report.iterations;
                        outcome.forward_passes = report.forward_passes;
                    }
                    Err(e) => outcome.failure = Some(e.to_string()),
                }
            }
        }
        outcome.compute = started.elapsed();
        outcome.jacobians = self.knots.jacobians - jacobians_before;
        let took = outcome.compute.as_secs_f64();
        if outcome.failure.is_none() && took > self.settings.period {
            self.statistics.overruns += 1;
            if let Some(deadline) = self.settings.deadline.filter(|d| took > *d) {
                outcome.failure =
                    Some(format!("the plan took {:.1} ms, past its deadline of {:.1} ms", took * 1e3, deadline * 1e3));
            }
        }
        self.statistics.plans += 1;
        self.statistics.total += outcome.compute;
        self.statistics.longest = self.statistics.longest.max(outcome.compute);
        match &outcome.failure {
            None => {
                self.kept.clone_from_slice(self.ddp.controls());
                self.kept_time = self.plan_time;
            }
            Some(_) => {
                self.statistics.failures += 1;
                // The solver starts again from the last good plan.
                let _ = self.ddp.set_controls(&self.kept);
                self.plan_time = self.kept_time;
            }
        }
        outcome
    }

    /// The commands to send at `time`: the last good plan's knot that holds it (the last
    /// knot past the horizon; the resting commands before any plan).
    pub fn command_at(&self, time: f64) -> &DVector<f64> {
        let knot = match self.kept_time {
            Some(start) => {
                (((time - start) / self.settings.interval).floor().max(0.0) as usize).min(self.settings.knots - 1)
            }
            None => 0,
        };
        &self.kept[knot]
    }

    /// The last good plan: the time its first knot starts and its commands per knot
    /// (`None` before the first plan succeeds).
    pub fn kept_plan(&self) -> Option<(f64, &[DVector<f64>])> {
        self.kept_time.map(|start| (start, self.kept.as_slice()))
    }

    /// The states the solver's plan predicts (q, qd, previous commands per knot).
    pub fn predicted_states(&self) -> &[DVector<f64>] {
        self.ddp.states()
    }
}
