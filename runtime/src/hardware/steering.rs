//! Model-predictive control through the fixed-rate loop: the mailboxes between the loop and
//! the planner, the gait sampler's in-loop half (the newest plan into joint set points, the
//! measured state handed to the planner without ever waiting), and the planner thread's
//! timing, which every planner shares.

use crate::hardware::actuation::ActuatorCommand;
use crate::hardware::mailbox::Mailbox;
use crate::optimal_control::gait_sampling::{GaitParameters, GaitPlanner, Plan, PlanningSnapshot, SteeredGait};
use crate::robot::model::Model;
use crate::robot::state::State;
use nalgebra::{Vector2, Vector3};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the loop and the planner exchange: by default the gait sampler's snapshots and
/// plans.
#[derive(Debug)]
pub struct SteeringLink<const N: usize, S: Copy = PlanningSnapshot<N>, P: Copy = Plan> {
    /// The newest measured state and its time, from the state source (the simulated
    /// plant's observer; a pose tracker on the robot).
    pub measured: Mailbox<(f64, State<N>)>,
    /// The newest state the planner should start from, with what the loop was sending then.
    pub snapshots: Mailbox<S>,
    /// The newest plan.
    pub plans: Mailbox<P>,
    /// Tells the planner thread to finish.
    pub stop: AtomicBool,
}

impl<const N: usize, S: Copy, P: Copy> Default for SteeringLink<N, S, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize, S: Copy, P: Copy> SteeringLink<N, S, P> {
    /// An empty link: no measurement, no plan.
    pub fn new() -> Self {
        SteeringLink {
            measured: Mailbox::new(),
            snapshots: Mailbox::new(),
            plans: Mailbox::new(),
            stop: AtomicBool::new(false),
        }
    }
}

/// Where the steering is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SteeringPhase {
    /// Heading for the goal.
    Travelling,
    /// Within the arrival radius: the gait is fading out.
    Arrived {
        /// When the goal was reached (s).
        at: f64,
    },
    /// Arrived (at `at`) and settled: the task is done.
    Finished {
        /// When the goal was reached (s).
        at: f64,
    },
}

impl SteeringPhase {
    /// When the goal was reached, if it was.
    pub fn arrived_at(&self) -> Option<f64> {
        match *self {
            SteeringPhase::Travelling => None,
            SteeringPhase::Arrived { at } | SteeringPhase::Finished { at } => Some(at),
        }
    }
}

/// Where a steered task stands after a period: its phase, how far the robot is from the
/// goal and how many plans the loop has taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteeringProgress {
    /// Travelling, arrived or finished.
    pub phase: SteeringPhase,
    /// The measured distance from the goal (m), NaN before the first measurement.
    pub distance: f64,
    /// Plans taken over by the controller.
    pub plans_applied: u64,
}

/// A controller steered by a planner in its own thread, as the real-time loop drives it:
/// one call per period computes the commands from the newest plan and hands the newest
/// measurement to the planner through the [`SteeringLink`] they share. Every model-predictive
/// controller is one of these (the gait sampler's, the valve sampler's, the stride planner's,
/// box-DDP's plan following), so one loop drives them all.
pub trait Steering<const N: usize> {
    /// What the loop hands the planner: the state to start from, with what was being sent.
    type Snapshot: Copy;
    /// What the planner hands back.
    type Plan: Copy;

    /// This period's commands at time `t` (s), in the actuators' order: takes the newest
    /// plan, posts the newest measurement for the planner and tracks the task. Never blocks
    /// and never allocates.
    fn command(
        &mut self,
        link: &SteeringLink<N, Self::Snapshot, Self::Plan>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String>;

    /// The commands that hold `held`, the last safe period's commands as the state
    /// estimator recorded them (one number each, in the actuators' order): what the loop
    /// sends after an estimator fault.
    fn hold(&self, held: &[f64], commands: &mut [ActuatorCommand]);

    /// Where the task stands.
    fn progress(&self) -> SteeringProgress;
}

/// Arrival and hold, measurement by measurement: within `radius` of the goal since
/// `within_since` (kept here) is `Arrived`, and `Finished` once that has lasted `hold`
/// seconds; farther away is `Travelling` again. Shared by the planners' in-loop halves that
/// hold a goal.
pub(crate) fn arrival_phase(
    within_since: &mut Option<f64>,
    time: f64,
    distance: f64,
    radius: f64,
    hold: f64,
) -> SteeringPhase {
    if distance <= radius {
        let since = *within_since.get_or_insert(time);
        if time - since >= hold - 1e-9 {
            SteeringPhase::Finished { at: since }
        } else {
            SteeringPhase::Arrived { at: since }
        }
    } else {
        *within_since = None;
        SteeringPhase::Travelling
    }
}

/// The newest measurement, if it is new since `last` (which it updates): its time, the
/// state and the centre of mass there. A measured state that is not finite is an error.
/// Shared by every planner's in-loop half.
pub(crate) fn new_measurement<R: Model<N, C>, const N: usize, const C: usize>(
    measured: &Mailbox<(f64, State<N>)>,
    last: &mut u64,
    params: &R::Params,
) -> Result<Option<(f64, State<N>, Vector3<f64>)>, String> {
    let Some((sequence, (time, state))) = measured.try_latest() else { return Ok(None) };
    if sequence == *last {
        return Ok(None);
    }
    *last = sequence;
    if !state.is_finite() {
        return Err(format!("the measured state is not finite at t = {time} s"));
    }
    let com = R::center_of_mass(&state.q, params, &R::cache(&state.q, params));
    Ok(Some((time, state, com)))
}

/// The in-loop controller's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteeringConfig {
    /// Where the centre of mass should go (m, world frame, plane of motion).
    pub goal: Vector2<f64>,
    /// Arrival: the centre of mass within this distance of the goal (m).
    pub arrival_radius: f64,
    /// After arrival the gait fades out for this long (s), then the task is finished.
    pub settle: f64,
    /// Time constant (s) with which the gait follows a new plan.
    pub lag: f64,
    /// The gait faded in from straight before the first plan arrives.
    pub initial: GaitParameters,
    /// Spatial frequency of the wave (rad), fixed.
    pub spatial_frequency: f64,
}

impl SteeringConfig {
    /// Checks the goal, the radius, the settle time, the rate and the gait's bounds.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.goal.x.is_finite() && self.goal.y.is_finite()) {
            return Err(format!("goal must be finite, got ({}, {})", self.goal.x, self.goal.y));
        }
        for (name, value) in
            [("arrival radius", self.arrival_radius), ("settle time", self.settle), ("gait lag", self.lag)]
        {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {value}"));
            }
        }
        let p = self.initial;
        if !(p.amplitude.is_finite()
            && p.temporal_frequency.is_finite()
            && p.offset.is_finite()
            && self.spatial_frequency.is_finite())
        {
            return Err(format!(
                "initial gait must be finite, got {p:?} with spatial frequency {}",
                self.spatial_frequency
            ));
        }
        Ok(())
    }
}

/// The in-loop controller: one call per period.
pub struct GoalSteering<R: Model<N, C>, const N: usize, const C: usize> {
    gait: SteeredGait,
    /// The gait as it was when the last command was computed: the planner starts from the
    /// state measured at that command's time, so it must start from this gait too.
    sent: SteeredGait,
    sent_time: f64,
    params: R::Params,
    goal: Vector2<f64>,
    arrival_radius: f64,
    settle: f64,
    period: f64,
    last_plan: u64,
    last_measurement: u64,
    /// Travelling, arrived or finished.
    pub phase: SteeringPhase,
    /// Distance of the measured centre of mass from the goal (m), NaN before the first
    /// measurement.
    pub distance: f64,
    /// Plans taken over by the gait.
    pub plans_applied: u64,
}

impl<R: Model<N, C>, const N: usize, const C: usize> GoalSteering<R, N, C> {
    /// Steers as `config` says, one call every `period` seconds.
    pub fn new(params: R::Params, config: &SteeringConfig, period: f64) -> Result<Self, String> {
        config.validate()?;
        let gait = SteeredGait::new(config.spatial_frequency, config.lag, config.initial);
        Ok(GoalSteering {
            gait,
            sent: gait,
            sent_time: 0.0,
            params,
            goal: config.goal,
            arrival_radius: config.arrival_radius,
            settle: config.settle,
            period,
            last_plan: 0,
            last_measurement: 0,
            phase: SteeringPhase::Travelling,
            distance: f64::NAN,
            plans_applied: 0,
        })
    }

    /// The gait now.
    pub fn gait(&self) -> &SteeredGait {
        &self.gait
    }

    /// Computes this period's joint set points into `commands` (one per actuated joint).
    /// Takes the newest plan, hands the newest measurement to the planner, and tracks
    /// arrival. Never blocks and never allocates.
    pub fn command(
        &mut self,
        link: &SteeringLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        if commands.len() != R::ACTUATED.len() {
            return Err(format!("{} commands for {} actuated joints", commands.len(), R::ACTUATED.len()));
        }
        if let Some((sequence, plan)) = link.plans.try_latest() {
            if sequence != self.last_plan && self.phase == SteeringPhase::Travelling {
                if !(plan.parameters.amplitude.is_finite()
                    && plan.parameters.temporal_frequency.is_finite()
                    && plan.parameters.offset.is_finite())
                {
                    return Err(format!("the planner returned non-finite gait parameters {:?}", plan.parameters));
                }
                self.gait.target = plan.parameters;
                self.plans_applied += 1;
            }
            self.last_plan = sequence;
        }
        if let Some((time, state, com)) =
            new_measurement::<R, N, C>(&link.measured, &mut self.last_measurement, &self.params)?
        {
            self.distance = (Vector2::new(com.x, com.y) - self.goal).norm();
            if self.phase == SteeringPhase::Travelling && self.distance <= self.arrival_radius {
                self.phase = SteeringPhase::Arrived { at: time };
                // Fade the wave and the turn out; the frequency keeps the phase moving.
                self.gait.target.amplitude = 0.0;
                self.gait.target.offset = 0.0;
            }
            // The measurement belongs to the command sent at its time, when it is that one.
            let gait = if (time - self.sent_time).abs() < 0.5 * self.period { self.sent } else { self.gait };
            link.snapshots.try_post(PlanningSnapshot { time, state, gait });
        }
        if let SteeringPhase::Arrived { at } = self.phase {
            if t - at >= self.settle {
                self.phase = SteeringPhase::Finished { at };
            }
        }
        for (j, command) in commands.iter_mut().enumerate() {
            *command = ActuatorCommand::JointAngle(self.gait.joint_angle(j));
        }
        self.sent = self.gait;
        self.sent_time = t;
        self.gait.advance(self.period);
        Ok(self.phase)
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> Steering<N> for GoalSteering<R, N, C> {
    type Snapshot = PlanningSnapshot<N>;
    type Plan = Plan;

    fn command(
        &mut self,
        link: &SteeringLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        GoalSteering::command(self, link, t, commands)
    }

    /// The joints' set points held.
    fn hold(&self, held: &[f64], commands: &mut [ActuatorCommand]) {
        for (command, angle) in commands.iter_mut().zip(held) {
            *command = ActuatorCommand::JointAngle(*angle);
        }
    }

    fn progress(&self) -> SteeringProgress {
        SteeringProgress { phase: self.phase, distance: self.distance, plans_applied: self.plans_applied }
    }
}

/// What the planner thread did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlannerStats {
    /// Plans made.
    pub plans: u64,
    /// Plans not posted: failed, or past their deadline (the loop kept the last good one).
    pub failed_plans: u64,
    /// Rollouts run, and how many of them failed.
    pub rollouts: u64,
    /// See `rollouts`.
    pub failed_rollouts: u64,
    /// System Jacobians the plans evaluated (box-DDP's knots; none for the samplers).
    pub jacobians: u64,
    /// Time spent planning.
    pub busy: Duration,
    /// Longest single plan.
    pub longest: Duration,
    /// Plans that took longer than the re-planning period.
    pub overruns: u64,
    /// Time from the first plan's start to the thread's end: the span the planner planned
    /// over. A loop may post no snapshot for a while after the thread starts (the soft
    /// snake's 2 s drop before its controller takes over), and that wait is not planning.
    pub elapsed: Duration,
}

impl PlannerStats {
    /// Plans per second of wall time, over the span the planner planned.
    pub fn rate_hz(&self) -> f64 {
        self.plans as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Rollouts per second of planning time (one core).
    pub fn rollouts_per_second(&self) -> f64 {
        self.rollouts as f64 / self.busy.as_secs_f64().max(1e-9)
    }

    /// The mean time of a plan.
    pub fn mean_plan(&self) -> Duration {
        if self.plans == 0 {
            Duration::ZERO
        } else {
            self.busy / self.plans as u32
        }
    }
}

impl fmt::Display for PlannerStats {
    /// `N plans at X Hz, longest Y ms, overruns Z`, then the details.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} plans at {:.1} Hz, longest {:.1} ms, overruns {}; {} not used; {:.1} s, plan mean {:.1} ms; {} rollouts, {:.0} rollouts/s on one core, {} failed",
            self.plans,
            self.rate_hz(),
            self.longest.as_secs_f64() * 1e3,
            self.overruns,
            self.failed_plans,
            self.elapsed.as_secs_f64(),
            self.mean_plan().as_secs_f64() * 1e3,
            self.rollouts,
            self.rollouts_per_second(),
            self.failed_rollouts,
        )?;
        if self.jacobians > 0 {
            write!(
                f,
                "; {} system Jacobians, {:.1} a plan",
                self.jacobians,
                self.jacobians as f64 / self.plans.max(1) as f64
            )?;
        }
        Ok(())
    }
}

/// What one call of a planner produced: the plan to post (`None`: the plan failed, and the
/// loop keeps the last one), and its rollouts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanningStep<P> {
    /// The plan to post.
    pub plan: Option<P>,
    /// Rollouts run, and how many of them failed.
    pub rollouts: u64,
    /// See `rollouts`.
    pub failed_rollouts: u64,
    /// System Jacobians the call evaluated.
    pub jacobians: u64,
}

/// The gait sampler's planner thread (see [`run_planning_thread`]).
pub fn run_planner<R: Model<N, C>, const N: usize, const C: usize>(
    planner: &mut GaitPlanner<R, N, C>,
    link: &SteeringLink<N>,
    rate_hz: f64,
) -> PlannerStats {
    run_planning_thread(link, rate_hz, |snapshot| {
        let plan = planner.plan(snapshot);
        PlanningStep {
            plan: Some(plan),
            rollouts: plan.rollouts as u64,
            failed_rollouts: plan.failed as u64,
            jacobians: 0,
        }
    })
}

/// A planner thread's body: every `1 / rate_hz` seconds, plans from the newest snapshot (if
/// there is a new one) and posts the plan, until `link.stop` is set. A plan that takes
/// longer than a period counts as an overrun and the next one starts at once, without
/// trying to catch up.
pub fn run_planning_thread<const N: usize, S: Copy, P: Copy>(
    link: &SteeringLink<N, S, P>,
    rate_hz: f64,
    mut plan: impl FnMut(&S) -> PlanningStep<P>,
) -> PlannerStats {
    let period = Duration::from_secs_f64(1.0 / rate_hz);
    let mut first_plan = None;
    let mut stats = PlannerStats::default();
    let mut next = Instant::now();
    let mut last_snapshot = 0;
    while !link.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            // Short sleeps, so a stop request is seen quickly.
            std::thread::sleep((next - now).min(Duration::from_millis(5)));
            continue;
        }
        let Some((sequence, snapshot)) = link.snapshots.latest().filter(|(s, _)| *s != last_snapshot) else {
            next = now + Duration::from_millis(1);
            continue;
        };
        last_snapshot = sequence;
        let began = Instant::now();
        first_plan.get_or_insert(began);
        let step = plan(&snapshot);
        let took = began.elapsed();
        match step.plan {
            Some(plan) => link.plans.post(plan),
            None => stats.failed_plans += 1,
        }
        stats.plans += 1;
        stats.rollouts += step.rollouts;
        stats.failed_rollouts += step.failed_rollouts;
        stats.jacobians += step.jacobians;
        stats.busy += took;
        stats.longest = stats.longest.max(took);
        if took > period {
            stats.overruns += 1;
        }
        next = (next + period).max(began);
        if next < Instant::now() {
            next = Instant::now();
        }
    }
    stats.elapsed = first_plan.map_or(Duration::ZERO, |first| first.elapsed());
    stats
}

#[cfg(test)]
mod tests {
    use super::{run_planning_thread, PlannerStats, PlanningStep, SteeringLink};
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    /// The planner's span starts at its first plan: a wait for the loop's first snapshot (a
    /// drop before the controller takes over) is not planning, and the rate does not count
    /// it. Deterministic: the first plan begins after the first snapshot is posted.
    #[test]
    fn the_planning_span_starts_at_the_first_plan() {
        let link = SteeringLink::<1, u32, u32>::new();
        let (stats, posted) = std::thread::scope(|scope| {
            let planner = scope.spawn(|| {
                run_planning_thread(&link, 200.0, |&snapshot| PlanningStep {
                    plan: Some(snapshot),
                    rollouts: 0,
                    failed_rollouts: 0,
                    jacobians: 0,
                })
            });
            std::thread::sleep(Duration::from_millis(300));
            let posted = Instant::now();
            for k in 0..20 {
                link.snapshots.post(k);
                std::thread::sleep(Duration::from_millis(2));
            }
            link.stop.store(true, Ordering::Relaxed);
            (planner.join().unwrap(), posted)
        });
        assert!(stats.plans > 0, "{stats}");
        assert!(stats.elapsed <= posted.elapsed(), "{stats}: the 300 ms before the first snapshot counted");
    }

    #[test]
    fn the_planner_line_counts_system_jacobians_only_where_plans_evaluated_some() {
        let sampler = PlannerStats { plans: 4, rollouts: 128, elapsed: Duration::from_secs(1), ..Default::default() };
        let line = sampler.to_string();
        assert!(line.starts_with("4 plans at 4.0 Hz, longest 0.0 ms, overruns 0"), "{line}");
        assert!(!line.contains("Jacobians"), "{line}");
        let ddp = PlannerStats { jacobians: 100, ..sampler };
        assert!(ddp.to_string().ends_with("; 100 system Jacobians, 25.0 a plan"), "{ddp}");
    }
}
