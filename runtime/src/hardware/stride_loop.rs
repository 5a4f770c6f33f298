//! Robots that walk a stride at a time, through the fixed-rate loop: the in-loop half of a
//! stride planner (each gait cycle's stride taken from the newest plan made for it, the
//! measured state handed to the planner a lead before the cycle starts, the muscles'
//! reached pressures followed through their lag) and the planner thread's body.
//!
//! A stride is a whole gait cycle of one of the robot's gaits: a limbed robot's tips circle
//! through a cycle, and what a gait does to the body shows only over the cycle (the robot
//! rocks and heaves within it), so a plan chooses the next stride, not the next command.
//! The robot's own code says what its strides are (their commands, and how a plan chooses
//! one); this module only times them.

use crate::actuators::muscle_drive::Muscle;
use crate::control::gait_clock::GaitClock;
use crate::hardware::actuation::ActuatorCommand;
use crate::hardware::plan_following::MAX_PLANNED_COMMANDS;
use crate::hardware::steering::{
    arrival_phase, new_measurement, run_planning_thread, PlannerStats, PlanningStep, SteeringLink, SteeringPhase,
};
use crate::robot::model::Model;
use crate::robot::state::State;
use nalgebra::Vector2;

/// What the loop hands the stride planner: the measured state, the muscles' reached
/// pressures then (bar, muscle order; entries past the robot's muscles are zero), the stride
/// in force and the start of the gait cycle it is playing, and when the decision the plan is
/// for falls.
#[derive(Clone, Copy, Debug)]
pub struct StrideSnapshot<const N: usize> {
    /// The measurement's time (s).
    pub time: f64,
    /// The measured state.
    pub state: State<N>,
    /// The muscles' reached pressures (bar).
    pub reached: [f64; MAX_PLANNED_COMMANDS],
    /// The stride in force.
    pub current: usize,
    /// When the gait cycle it plays started (s).
    pub current_start: f64,
    /// When the decision the plan is for falls (s).
    pub boundary: f64,
}

/// A stride planner's answer: the stride from the decision at `boundary` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrideChoice {
    /// The decision it is for (s).
    pub boundary: f64,
    /// The stride chosen, an index into the robot's strides.
    pub stride: usize,
    /// Rollouts the plan ran, and how many of them failed.
    pub rollouts: usize,
    /// See `rollouts`.
    pub failed: usize,
}

/// What the loop and the stride planner exchange.
pub type StrideLink<const N: usize> = SteeringLink<N, StrideSnapshot<N>, StrideChoice>;

/// The in-loop controller's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrideSteeringConfig {
    /// The centre of mass's goal in the ground plane (m).
    pub goal: Vector2<f64>,
    /// Reached: within this distance (m) of the goal for `hold` seconds.
    pub arrival_radius: f64,
    /// See `arrival_radius` (s).
    pub hold: f64,
    /// One gait cycle (s).
    pub cycle: f64,
    /// How often the stride is decided (s): the cycle, or a whole fraction of it, the
    /// strides then changing mid-cycle in step with the gait's clock (a stride chosen
    /// mid-cycle joins its circles where the cycle is).
    pub decision_period: f64,
    /// The first cycle's start (s): before it the robot does `initial` (standing, say, to
    /// settle on the ground).
    pub first_cycle: f64,
    /// How long before a decision the planner gets its state (s), at most the decision
    /// period: the plan must be back by the decision.
    pub lead: f64,
    /// The stride in force until the first plan, and wherever no plan came in time.
    pub initial: usize,
    /// How many strides there are.
    pub strides: usize,
}

impl StrideSteeringConfig {
    /// The gait's clock: cycles from the first, decided every decision period; refused where
    /// the period does not divide the cycle.
    pub fn clock(&self) -> Result<GaitClock, String> {
        GaitClock::new(self.first_cycle, self.cycle, self.decision_period)
    }

    /// Checks the goal, the radius, the hold, the cycle and its decisions, and the lead.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.goal.x.is_finite() && self.goal.y.is_finite()) {
            return Err(format!("goal must be finite, got ({}, {})", self.goal.x, self.goal.y));
        }
        for (name, value) in
            [("arrival radius", self.arrival_radius), ("hold", self.hold), ("first cycle", self.first_cycle)]
        {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {value}"));
            }
        }
        self.clock()?.check_lead(self.lead)?;
        if self.initial >= self.strides {
            return Err(format!("initial stride {} of {} strides", self.initial, self.strides));
        }
        Ok(())
    }
}

/// The loop's half of stride planning. Each period it plays the stride in force, hands the
/// planner the newest measurement once per decision, `lead` seconds before it, and at the
/// decision takes the plan made for it; a plan that is not back by then leaves the stride
/// in force until the next decision (counted in `late_plans`). Where decisions come several
/// times a cycle, a plan one decision late is taken at the next (`late_plans_taken`): its
/// state is a decision period older, and on a loaded computer every plan may come a little
/// late, which would otherwise leave the robot standing.
pub struct StrideSteering<R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
    config: StrideSteeringConfig,
    clock: GaitClock,
    /// The robot's muscles, whose lag the reached pressures follow.
    muscles: Vec<Muscle>,
    reached: [f64; MAX_PLANNED_COMMANDS],
    pressures: [f64; MAX_PLANNED_COMMANDS],
    period: f64,
    /// The stride in force and the start of the gait cycle it is playing.
    pub current: usize,
    current_start: f64,
    /// The next decision, and how many came before it.
    next_decision: f64,
    decisions: u64,
    /// Whether the next decision's state went to the planner.
    requested: bool,
    last_plan: u64,
    last_measurement: u64,
    within_since: Option<f64>,
    /// Travelling, arrived or finished.
    pub phase: SteeringPhase,
    /// Distance of the measured centre of mass from the goal (m), NaN before the first
    /// measurement.
    pub distance: f64,
    /// Plans whose stride was played.
    pub plans_applied: u64,
    /// Decisions whose plan was not back in time (the stride in force went on), and plans
    /// taken a decision late.
    pub late_plans: u64,
    /// Plans taken one decision late, where decisions come several times a cycle.
    pub late_plans_taken: u64,
    /// Decision periods each stride was played, in stride order (the wait before the first
    /// cycle not counted).
    pub periods_played: Vec<u64>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> StrideSteering<R, N, C> {
    /// Steers as `config` says, one call every `period` s, with the robot's muscles'
    /// lags at `params`.
    pub fn new(params: R::Params, config: StrideSteeringConfig, period: f64) -> Result<Self, String> {
        config.validate()?;
        let clock = config.clock()?;
        let muscles = R::MUSCLES.len();
        if muscles == 0 || muscles > MAX_PLANNED_COMMANDS {
            return Err(format!(
                "stride steering drives 1 to {MAX_PLANNED_COMMANDS} muscles; `{}` has {muscles}",
                R::NAME
            ));
        }
        let muscles = (0..muscles)
            .map(|i| {
                R::muscle(i, &params).ok_or_else(|| format!("muscle {i} of `{}` has no generated values", R::NAME))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !(period.is_finite() && period > 0.0) {
            return Err(format!("the loop's period must be finite and > 0 s, got {period}"));
        }
        Ok(StrideSteering {
            params,
            muscles,
            reached: [0.0; MAX_PLANNED_COMMANDS],
            pressures: [0.0; MAX_PLANNED_COMMANDS],
            period,
            current: config.initial,
            current_start: config.first_cycle,
            next_decision: config.first_cycle,
            decisions: 0,
            requested: false,
            last_plan: 0,
            last_measurement: 0,
            within_since: None,
            phase: SteeringPhase::Travelling,
            distance: f64::NAN,
            plans_applied: 0,
            late_plans: 0,
            late_plans_taken: 0,
            periods_played: vec![0; config.strides],
            config,
            clock,
        })
    }

    /// This period's commands (each muscle's pressure, bar) from `stride_pressures(stride,
    /// since, out)`, the stride's commanded pressures `since` seconds into its cycle. Takes
    /// the plan for a decision that falls now, hands the planner the state it needs and
    /// tracks arrival. Never blocks and never allocates.
    pub fn command(
        &mut self,
        link: &StrideLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
        stride_pressures: &dyn Fn(usize, f64, &mut [f64]) -> Result<(), String>,
    ) -> Result<SteeringPhase, String> {
        let muscles = self.muscles.len();
        if commands.len() != muscles {
            return Err(format!("{} commands for {muscles} muscles", commands.len()));
        }
        if t >= self.next_decision - 1e-9 {
            let several_a_cycle = self.clock.several_a_cycle();
            let previous = match self.decisions {
                0 => f64::NAN,
                k => self.clock.decision(k - 1),
            };
            let planned = link.plans.try_latest().filter(|(sequence, plan)| {
                *sequence != self.last_plan
                    && ((plan.boundary - self.next_decision).abs() < 1e-6
                        || several_a_cycle && (plan.boundary - previous).abs() < 1e-6)
            });
            match planned {
                Some((sequence, plan)) => {
                    if plan.stride >= self.config.strides {
                        return Err(format!("the planner chose stride {} of {}", plan.stride, self.config.strides));
                    }
                    self.last_plan = sequence;
                    self.current = plan.stride;
                    self.plans_applied += 1;
                    if (plan.boundary - self.next_decision).abs() >= 1e-6 {
                        self.late_plans += 1;
                        self.late_plans_taken += 1;
                    }
                }
                // Not back in time, or never asked for (the measurement came too late):
                // the stride in force goes on.
                None => self.late_plans += u64::from(self.decisions > 0),
            }
            self.periods_played[self.current] += 1;
            // The gait's clock: the stride plays as from the start of the cycle the
            // decision falls in.
            self.current_start = self.clock.cycle_start(self.next_decision);
            self.decisions += 1;
            self.next_decision = self.clock.decision(self.decisions);
            self.requested = false;
        }
        if let Some((time, state, com)) =
            new_measurement::<R, N, C>(&link.measured, &mut self.last_measurement, &self.params)?
        {
            self.distance = (Vector2::new(com.x, com.y) - self.config.goal).norm();
            self.phase = arrival_phase(
                &mut self.within_since,
                time,
                self.distance,
                self.config.arrival_radius,
                self.config.hold,
            );
            if !self.requested && time >= self.next_decision - self.config.lead - 1e-9 {
                self.requested = true;
                link.snapshots.try_post(StrideSnapshot {
                    time,
                    state,
                    reached: self.reached,
                    current: self.current,
                    current_start: self.current_start,
                    boundary: self.next_decision,
                });
            }
        }
        stride_pressures(self.current, t - self.current_start, &mut self.pressures[..muscles])?;
        for (i, command) in commands.iter_mut().enumerate() {
            let p = self.pressures[i];
            if !p.is_finite() {
                return Err(format!("stride {} commanded a non-finite pressure to muscle {i}", self.current));
            }
            *command = ActuatorCommand::Pressure(p);
            // The muscle's lag over the period, as the plant's and the filter's.
            self.reached[i] = self.muscles[i].pressure_after(p, self.reached[i], self.period);
        }
        Ok(self.phase)
    }
}

/// The stride planner's thread (see [`run_planning_thread`]): `plan` chooses the stride for a
/// snapshot's decision; a plan that fails is not posted, and the loop keeps the stride in
/// force. A plan longer than `1 / rate_hz` s counts as an overrun.
pub fn run_stride_planner<const N: usize>(
    link: &StrideLink<N>,
    rate_hz: f64,
    mut plan: impl FnMut(&StrideSnapshot<N>) -> Result<StrideChoice, String>,
) -> PlannerStats {
    run_planning_thread(link, rate_hz, |snapshot| match plan(snapshot) {
        Ok(choice) => PlanningStep {
            plan: (choice.failed < choice.rollouts).then_some(choice),
            rollouts: choice.rollouts as u64,
            failed_rollouts: choice.failed as u64,
            jacobians: 0,
        },
        Err(_) => PlanningStep { plan: None, rollouts: 0, failed_rollouts: 0, jacobians: 0 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    fn snapshot(boundary: f64) -> StrideSnapshot<1> {
        StrideSnapshot {
            time: boundary - 0.25,
            state: State::new(nalgebra::SVector::zeros(), nalgebra::SVector::zeros()),
            reached: [0.0; MAX_PLANNED_COMMANDS],
            current: 0,
            current_start: boundary - 1.0,
            boundary,
        }
    }

    /// A plan whose every rollout failed, or that returned an error, is not posted (the loop
    /// keeps the stride in force) and counts as not used; a good plan is posted.
    #[test]
    fn failed_stride_plans_are_not_posted() {
        let link = StrideLink::<1>::new();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let stats = std::thread::scope(|scope| {
            let planner = scope.spawn(|| {
                run_stride_planner(&link, 1000.0, |s| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    match s.boundary as u32 {
                        1 => Ok(StrideChoice { boundary: 1.0, stride: 1, rollouts: 3, failed: 3 }),
                        2 => Err("the model failed".into()),
                        _ => Ok(StrideChoice { boundary: s.boundary, stride: 2, rollouts: 3, failed: 1 }),
                    }
                })
            });
            for (k, boundary) in [1.0, 2.0, 3.0].into_iter().enumerate() {
                link.snapshots.post(snapshot(boundary));
                // Each snapshot planned before the next is posted.
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while calls.load(Ordering::SeqCst) <= k && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            link.stop.store(true, Ordering::Relaxed);
            planner.join().unwrap()
        });
        assert_eq!((stats.plans, stats.failed_plans), (3, 2), "{stats}");
        let (_, plan) = link.plans.latest().unwrap();
        assert_eq!(plan, StrideChoice { boundary: 3.0, stride: 2, rollouts: 3, failed: 1 });
    }
}
