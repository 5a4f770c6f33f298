//! Receding-horizon control through the fixed-rate loop: the in-loop half follows the newest
//! box-DDP plan, reading each command at its own time, and hands the measured state with the
//! commands in effect to the planner without ever waiting; the planner thread's body re-plans
//! from it and posts plans that fit a fixed-size mailbox slot.

use crate::hardware::steering::{
    new_measurement, run_planning_thread, PlannerStats, PlanningStep, SteeringLink, SteeringPhase,
};
use crate::optimal_control::receding::RecedingHorizon;
use crate::robot::model::Model;
use crate::robot::state::State;
use nalgebra::{DVector, Vector3};

/// Most values (knots x commands) a plan carries through the mailbox. Fixed, so that the
/// loop copies a plan without allocating.
pub const PLAN_CAPACITY: usize = 1024;
/// Most commands a planned robot has.
pub const MAX_PLANNED_COMMANDS: usize = 64;

/// A plan as the loop follows it: commands per knot from `start`, one knot per `interval`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandPlan {
    /// When the first knot starts (s).
    pub start: f64,
    /// Each knot's length (s).
    pub interval: f64,
    knots: usize,
    commands: usize,
    values: [f64; PLAN_CAPACITY],
}

impl CommandPlan {
    /// The plan of `knots` (each the commands of one knot) from `start`.
    pub fn new(start: f64, interval: f64, knots: &[DVector<f64>]) -> Result<Self, String> {
        let commands = knots.first().map_or(0, |k| k.len());
        if knots.is_empty() || commands == 0 || knots.iter().any(|k| k.len() != commands) {
            return Err("a plan needs knots with the same, non-zero number of commands each".into());
        }
        check_plan_fits(knots.len(), commands)?;
        let mut values = [0.0; PLAN_CAPACITY];
        for (k, knot) in knots.iter().enumerate() {
            values[k * commands..(k + 1) * commands].copy_from_slice(knot.as_slice());
        }
        Ok(CommandPlan { start, interval, knots: knots.len(), commands, values })
    }

    /// The commands to send at `time`: the knot that holds it (the first before the start,
    /// the last past the horizon).
    pub fn command_at(&self, time: f64) -> &[f64] {
        let knot = ((time - self.start) / self.interval).floor().clamp(0.0, (self.knots - 1) as f64) as usize;
        &self.values[knot * self.commands..(knot + 1) * self.commands]
    }

    /// Commands a knot.
    pub fn commands(&self) -> usize {
        self.commands
    }
}

/// Whether a horizon of `knots` over `commands` commands fits the loop's fixed-size plans.
pub fn check_plan_fits(knots: usize, commands: usize) -> Result<(), String> {
    if commands > MAX_PLANNED_COMMANDS {
        return Err(format!("{commands} commands: the loop follows plans of at most {MAX_PLANNED_COMMANDS}"));
    }
    if knots * commands > PLAN_CAPACITY {
        return Err(format!(
            "{knots} knots x {commands} commands = {} values: the loop's plans hold at most {PLAN_CAPACITY}",
            knots * commands
        ));
    }
    Ok(())
}

/// The state the planner starts from, with the commands the loop was sending then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandSnapshot<const N: usize> {
    /// The measurement's time (s).
    pub time: f64,
    /// The measured state.
    pub state: State<N>,
    count: usize,
    values: [f64; MAX_PLANNED_COMMANDS],
}

impl<const N: usize> CommandSnapshot<N> {
    /// The commands the loop was sending then.
    pub fn commands(&self) -> &[f64] {
        &self.values[..self.count]
    }
}

/// The mailboxes between the loop and a receding-horizon planner.
pub type PlanLink<const N: usize> = SteeringLink<N, CommandSnapshot<N>, CommandPlan>;

/// The in-loop half: one call per period.
pub struct PlanFollower<R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
    goal: Vector3<f64>,
    /// 1 on the world axes the goal binds, 0 on those it leaves free (see
    /// [`PlanFollower::with_goal_axes`]).
    goal_axes: Vector3<f64>,
    arrival_radius: f64,
    hold: f64,
    /// The commands before the first plan arrives.
    initial: [f64; MAX_PLANNED_COMMANDS],
    count: usize,
    plan: Option<CommandPlan>,
    /// The plan followed before the newest, until the newest starts (a planner with a
    /// lead posts plans that start after they arrive).
    previous: Option<CommandPlan>,
    last_plan: u64,
    last_measurement: u64,
    /// Travelling, arrived or finished.
    pub phase: SteeringPhase,
    /// Distance of the measured centre of mass from the goal (m), NaN before the first
    /// measurement.
    pub distance: f64,
    /// Plans taken over.
    pub plans_applied: u64,
    /// A scheduled plan's state (a bending plane's phase) when the newest measurement was
    /// taken, handed to the planner with it (see [`PlanFollower::set_schedule_state`]).
    schedule_state: [f64; MAX_SCHEDULE_STATES],
    states: usize,
}

/// The most schedule states a follower hands over.
pub const MAX_SCHEDULE_STATES: usize = 4;

impl<R: Model<N, C>, const N: usize, const C: usize> PlanFollower<R, N, C> {
    /// Follows plans of `initial.len()` commands (sent until the first plan arrives) towards
    /// `goal`: arrived when the centre of mass is within `arrival_radius` (m), finished once
    /// it has stayed there for `hold` s.
    pub fn new(
        params: R::Params,
        goal: Vector3<f64>,
        arrival_radius: f64,
        hold: f64,
        initial: &[f64],
    ) -> Result<Self, String> {
        check_plan_fits(1, initial.len())?;
        if goal.iter().any(|g| !g.is_finite()) || initial.iter().any(|c| !c.is_finite()) {
            return Err(format!("the goal {goal:?} and the initial commands {initial:?} must be finite"));
        }
        for (name, value) in [("arrival radius", arrival_radius), ("hold", hold)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {value}"));
            }
        }
        let mut values = [0.0; MAX_PLANNED_COMMANDS];
        values[..initial.len()].copy_from_slice(initial);
        Ok(PlanFollower {
            params,
            goal,
            goal_axes: Vector3::repeat(1.0),
            arrival_radius,
            hold,
            initial: values,
            count: initial.len(),
            plan: None,
            previous: None,
            last_plan: 0,
            last_measurement: 0,
            phase: SteeringPhase::Travelling,
            distance: f64::NAN,
            plans_applied: 0,
            schedule_state: [0.0; MAX_SCHEDULE_STATES],
            states: 0,
        })
    }

    /// Measures the distance to the goal along the world axes marked `true` only (x, y, z;
    /// all three unless set): a robot that cannot move along an axis is not held to the
    /// goal's value on it.
    pub fn with_goal_axes(mut self, axes: [bool; 3]) -> Self {
        self.goal_axes = Vector3::from_fn(|i, _| if axes[i] { 1.0 } else { 0.0 });
        self
    }

    /// The distance of `com` from the goal along the goal's axes.
    pub fn distance_of(&self, com: &Vector3<f64>) -> f64 {
        (com - self.goal).component_mul(&self.goal_axes).norm()
    }

    /// For plans of a schedule's decisions: the schedule's state at the time of the
    /// measurement the next [`PlanFollower::command`] may read (the state the loop's commands
    /// had then), appended to the snapshot's commands for the planner.
    pub fn set_schedule_state(&mut self, state: &[f64]) -> Result<(), String> {
        if state.len() > MAX_SCHEDULE_STATES || self.count + state.len() > MAX_PLANNED_COMMANDS {
            return Err(format!("{} schedule states do not fit a snapshot of {} commands", state.len(), self.count));
        }
        self.schedule_state[..state.len()].copy_from_slice(state);
        self.states = state.len();
        Ok(())
    }

    /// The plan in effect at `t`: the newest from its start, before it the plan before (or
    /// the newest, read at its first knot, where there is none).
    fn plan_at(&self, t: f64) -> Option<&CommandPlan> {
        match (&self.plan, &self.previous) {
            (Some(plan), Some(previous)) if t < plan.start => Some(previous),
            (plan, _) => plan.as_ref(),
        }
    }

    /// The commands to send at `t`: the plan in effect's, or the initial ones before any.
    fn commands_at(&self, t: f64) -> &[f64] {
        match self.plan_at(t) {
            Some(plan) => plan.command_at(t),
            None => &self.initial[..self.count],
        }
    }

    /// Writes this period's commands into `commands`: takes the newest plan, hands the
    /// newest measurement to the planner, and tracks arrival. Never blocks and never
    /// allocates.
    pub fn command(&mut self, link: &PlanLink<N>, t: f64, commands: &mut [f64]) -> Result<SteeringPhase, String> {
        if commands.len() != self.count {
            return Err(format!("{} commands for a plan of {}", commands.len(), self.count));
        }
        if let Some((sequence, plan)) = link.plans.try_latest() {
            if sequence != self.last_plan {
                self.last_plan = sequence;
                if plan.commands() != self.count {
                    return Err(format!("the planner sent {} commands for {}", plan.commands(), self.count));
                }
                if plan.values[..plan.knots * plan.commands].iter().any(|v| !v.is_finite()) {
                    return Err(format!("the planner sent non-finite commands in its plan from t = {} s", plan.start));
                }
                // The plan in effect now stays until the new one starts.
                self.previous = self.plan_at(t).copied();
                self.plan = Some(plan);
                self.plans_applied += 1;
            }
        }
        if let Some((time, state, com)) =
            new_measurement::<R, N, C>(&link.measured, &mut self.last_measurement, &self.params)?
        {
            self.distance = self.distance_of(&com);
            self.phase = match self.phase {
                _ if self.distance > self.arrival_radius => SteeringPhase::Travelling,
                SteeringPhase::Travelling => SteeringPhase::Arrived { at: time },
                SteeringPhase::Arrived { at } if time - at >= self.hold => SteeringPhase::Finished { at },
                held => held,
            };
            // The commands in effect at the measurement's time, from the plan the loop
            // follows.
            let mut values = [0.0; MAX_PLANNED_COMMANDS];
            values[..self.count].copy_from_slice(self.commands_at(time));
            values[self.count..self.count + self.states].copy_from_slice(&self.schedule_state[..self.states]);
            link.snapshots.try_post(CommandSnapshot { time, state, count: self.count + self.states, values });
        }
        commands.copy_from_slice(self.commands_at(t));
        Ok(self.phase)
    }
}

/// The receding-horizon planner thread's body (see
/// [`run_planning_thread`](crate::hardware::steering::run_planning_thread)): a plan that
/// fails or ends past its deadline is not posted, and the loop keeps following the last one.
pub fn run_horizon_planner<R: Model<N, C>, const N: usize, const C: usize>(
    planner: &mut RecedingHorizon<R, N, C>,
    link: &PlanLink<N>,
    rate_hz: f64,
) -> PlannerStats {
    let interval = planner.settings.interval;
    run_planning_thread(link, rate_hz, |snapshot| {
        let outcome = planner.plan(snapshot.time, &snapshot.state.q, &snapshot.state.qd, snapshot.commands());
        let plan = match (&outcome.failure, planner.kept_plan()) {
            (None, Some((start, knots))) => CommandPlan::new(start, interval, knots).ok(),
            _ => None,
        };
        PlanningStep {
            plan,
            rollouts: outcome.forward_passes as u64,
            failed_rollouts: 0,
            jacobians: outcome.jacobians as u64,
        }
    })
}

/// The planner thread's body for plans of a schedule's decisions (see
/// [`run_horizon_planner`]): each snapshot carries the decisions in effect, then the
/// schedule's state at the measurement ([`PlanFollower::set_schedule_state`]).
pub fn run_scheduled_planner<R: Model<N, C>, const N: usize, const C: usize>(
    planner: &mut RecedingHorizon<R, N, C>,
    link: &PlanLink<N>,
    rate_hz: f64,
) -> PlannerStats {
    let (interval, decisions, states) = (planner.settings.interval, planner.commands(), planner.schedule().states());
    run_planning_thread(link, rate_hz, |snapshot| {
        let values = snapshot.commands();
        if values.len() != decisions + states {
            return PlanningStep { plan: None, rollouts: 0, failed_rollouts: 0, jacobians: 0 };
        }
        let (current, schedule_state) = values.split_at(decisions);
        let outcome = planner.plan_from(snapshot.time, &snapshot.state.q, &snapshot.state.qd, schedule_state, current);
        let plan = match (&outcome.failure, planner.kept_plan()) {
            (None, Some((start, knots))) => CommandPlan::new(start, interval, knots).ok(),
            _ => None,
        };
        PlanningStep {
            plan,
            rollouts: outcome.forward_passes as u64,
            failed_rollouts: 0,
            jacobians: outcome.jacobians as u64,
        }
    })
}
