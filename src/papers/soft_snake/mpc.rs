//! Model-predictive control of the soft snake of 000: from rest on its carpet, roll to a goal
//! 0.3 m to the side and stay there, box-DDP re-planning at 20 Hz the bend of its sections
//! and the rate at which their bending plane turns (the rolling gait's two parameters, now
//! decided by the plan), over the generated model with its skin contact, the plant
//! integrated by ROS34PW2 as the rolling experiments do. Not in the paper, which rolls the
//! robot open loop at fixed settings; the issue that asked for optimised rolling carried it
//! here.
//!
//! Why the plan decides the gait's parameters and not the nine pressures held over each
//! knot: held pressures bend the body but do not roll it (rolling is the bending plane
//! turning), so a gradient-based plan from rest would see no way sideways; the plane's rate
//! moves the body sideways at first order. The pressures stay within [0, ceiling] by the
//! bend's bound, and follow the paper's length-to-pressure map.

use super::gait::PneumaticMuscles;
use super::rolling::{
    geometries, mount_rolls, rolling_muscles, rolling_plant, rolling_simulation, Rolling, RollingRun,
};
use nalgebra::{SVector, Vector3};
use softgen_generated::soft_snake::{Params, CONTACTS, DOF, SECTIONS, SOFT_SECTIONS};
use softgen_generated::SoftSnake;
use softgen_runtime::{
    BendingMuscle, CommandSchedule, ControlInput, DdpSettings, GoalWeights, HorizonSettings, Integrator, Model,
    PlannerStatistics, RecedingHorizon, RobotKnots, Simulation, State,
};
use std::time::Instant;

/// The goal, from the settled centre of mass (m): to the side (y), the body lying along x.
pub const GOAL_ASIDE: f64 = 0.3;
/// Reached: the centre of mass within this distance of the goal, in the ground plane (m).
pub const ARRIVAL_RADIUS: f64 = 0.03;
/// The bend's bound (rad per section). Why this low: the plan's model (one implicit Euler
/// step of 62.5 ms a knot) predicts the plant's roll only where bend and plane rate are
/// both moderate. Rolling 3 s from the settled snake at fixed settings, sideways travel of
/// the plant (ROS34PW2) against the model: bend 0.3 at +-pi rad/s, +0.16/-0.16 m against
/// +0.12/-0.19 m, and at 2 pi, +0.35/-0.35 m against +0.22/-0.38 m; bend 0.6 at +pi,
/// +0.056 m against -0.019 m, and at +2 pi, +0.070 m against -0.083 m: the model rolls the
/// other way. The same runs in sixteen steps a knot agree (+0.043 m at bend 0.6, +2 pi), so
/// the long step is what fails. A plan allowed those corners rolled the snake away from
/// its goal at the top rate for tens of seconds. The plant rolls faster at 0.3 than at 0.6
/// anyway (0.050 against 0.032 m in 3 s at 1 rad/s). `the_plans_model_rolls_the_way_the_plant_does_within_the_box`
/// in tests/papers/soft_snake.rs keeps the box where the two agree.
pub const MAX_BEND: f64 = 0.3;
/// The bend's lower bound (rad per section): the body stays bent, so a turning plane always
/// rolls it. Why: below it the model's roll outruns the plant's (bend 0.1 at pi rad/s, 0.16
/// against 0.11 m in 3 s), so with the bound at 0 the plans, weighing effort, rolled at a
/// mean bend of 0.07 rad, switching between the bounds, and mpc-000 took 9.05 s with 249
/// system Jacobians a plan and 88 of 222 plans overrunning; at 0.15, 6.75 s, 151 a plan and
/// 3 of 176 (2026-11-29, one run each).
pub const MIN_BEND: f64 = 0.15;
/// The bending plane's rate bound either way (rad/s): half a turn a second, the paper's
/// gait. At bend 0.1 and 2 pi rad/s the plant's skin slips (0.039 m in 3 s) while the model
/// rolls it 0.30 m; at pi the two agree in sign and within 55 %.
pub const MAX_PLANE_RATE: f64 = std::f64::consts::PI;

/// The task's settings.
#[derive(Clone, Debug)]
pub struct RollAsideTask {
    /// The plant's and the planner's robot: carpet friction, pressure ceiling, the
    /// drop's settling time, the pressures' update period.
    pub rolling: RollingRun,
    /// Simulated time after settling (s).
    pub duration: f64,
    /// The plan must keep the goal for this long after reaching it (s).
    pub hold: f64,
    /// The receding horizon: knots, steps, rate, bounds.
    pub horizon: HorizonSettings,
    /// The cost's weights.
    pub weights: GoalWeights,
    /// The contact damping of the planner's model (N s/m); the plant keeps the spec's
    /// (eq 3 of 000). Why it differs: the paper's damping switches on at touchdown, a jump in
    /// the force that leaves an implicit Euler step across a touchdown with no solution, so
    /// Newton's iterations stall. With the spec's 25 N s/m, 265 of 400 plans failed that way
    /// and the snake stopped 0.074 m short; without it, none failed in 169 plans. Rolling is
    /// slow enough that the damping changes little of the motion the plan predicts.
    pub planner_contact_damping: f64,
    /// The plan's implicit steps: Newton converged once an update is below this relative to
    /// the rates, and a step failing from the knot's kept matrix halved at once rather than
    /// first retried from a fresh one (`RecedingHorizon::set_newton`). Why: the skin's
    /// contact (a penalty with a kink at touchdown, friction regularised over 1 cm/s) takes
    /// 10 to 19 damped Newton iterations a step at 62.5 ms, nearly each with a fresh system
    /// Jacobian, so the retry repeats the
    /// failed attempt but for its first iterate, and fails the same way; a plan needs its
    /// rates to a millionth, not to 1e-10. Measured on this task (2026-11-30, one binary,
    /// alternately, three runs each): the defaults (1e-10, retry) 146.8 system Jacobians a
    /// plan, 17 to 26 of 181 plans over the 50 ms period, reached at 7.00 s; these, 104.3 a
    /// plan, 0 to 1 of 179, 6.85 s. 1e-6 with the retry: 135 a plan, 6.30 s.
    pub newton_tolerance: f64,
    /// See `newton_tolerance`.
    pub retry_from_fresh: bool,
}

impl RollAsideTask {
    /// 20 Hz plans over 0.5 s (8 knots of 62.5 ms, one implicit step each), one real-time
    /// iteration each. Measured on the task (plans, the mean plan's system Jacobians,
    /// reached at): 4 knots of 2 steps 169, 314, 6.40 s; 4 of 4 steps 174, 261, 6.65 s;
    /// 4 of 1 step 207, 388, 8.30 s; 8 of 1 step 105, 330, 3.20 s.
    pub fn new() -> Self {
        let mut rolling = RollingRun::new(Rolling::Planar);
        rolling.duration = 0.0;
        RollAsideTask {
            rolling,
            duration: 20.0,
            hold: 2.0,
            horizon: HorizonSettings {
                knots: 8,
                interval: 0.0625,
                substeps: 1,
                iterations: 1,
                period: 0.05,
                deadline: None,
                lower: vec![MIN_BEND, -MAX_PLANE_RATE],
                upper: vec![MAX_BEND, MAX_PLANE_RATE],
            },
            weights: GoalWeights {
                goal: Vector3::zeros(),
                // In the ground plane only: the height follows the contact.
                position: Vector3::new(1.0, 1.0, 0.0),
                terminal_position: Vector3::new(50.0, 50.0, 0.0),
                rate: 1e-3,
                terminal_rate: 1e-2,
                effort: 1e-3,
                // Smooth plans: at 1e-4 the bend switched between its bounds from one plan to
                // the next (reached at 3.2 s), at 1e-3 it still chattered (5.6 s); at 1e-2
                // the plane's rate ramps up and down (9.7 s). An effort weight of 0.1 on
                // top slowed it to 14.3 s.
                command_rate: 1e-2,
                // The box's top bend, the plane still.
                rest: vec![MAX_BEND, 0.0],
                heading_points: None,
                travel_command: None,
                heading: 0.0,
                terminal_heading: 0.0,
                posture: Vec::new(),
                distance_scaled: None,
            },
            planner_contact_damping: 0.0,
            newton_tolerance: 1e-6,
            retry_from_fresh: false,
        }
    }
}

impl Default for RollAsideTask {
    fn default() -> Self {
        Self::new()
    }
}

/// The rotating bend of the soft snake's nine muscles: each section's three muscles, their
/// extension r theta (1 - cos(angle - phi)) (`RollingGait::lengths` with the plane's phase
/// phi) turned into pressure by the paper's map and into force on the length coordinate.
pub fn bending_muscles(p: &Params, muscles: &PneumaticMuscles, rolling: Rolling) -> Result<CommandSchedule, String> {
    let geometry = geometries(p)?;
    let rolls = mount_rolls();
    let section_phase = if rolling == Rolling::Planar { 0.0 } else { std::f64::consts::FRAC_PI_3 };
    let mut table = Vec::with_capacity(3 * SECTIONS);
    for i in 0..SECTIONS {
        for j in 0..3 {
            table.push(BendingMuscle {
                coordinate: SOFT_SECTIONS[i].first_coordinate + j,
                force_per_bend: muscles.force(geometry[i].actuator_radius / muscles.metres_per_bar),
                angle: geometry[i].actuator_angles[j] + rolls[i] - i as f64 * section_phase,
            });
        }
    }
    CommandSchedule::rotating_bend(DOF, &table)
}

/// The task's rotating bend, its bound checked against the ceiling.
pub fn rolling_schedule(task: &RollAsideTask) -> Result<CommandSchedule, String> {
    let run = &task.rolling;
    let p = &run.params;
    let muscles = rolling_muscles(run)?;
    let geometry = geometries(p)?;
    let highest_bend = geometry.iter().map(|g| muscles.largest_bend(g)).fold(f64::INFINITY, f64::min);
    if task.horizon.upper.first().is_some_and(|b| *b > highest_bend) {
        return Err(format!(
            "the bend's bound {} rad would ask more than the {} bar ceiling allows ({highest_bend:.2} rad)",
            task.horizon.upper[0], run.ceiling
        ));
    }
    bending_muscles(p, &muscles, run.rolling)
}

/// The planner's model: the plant's, without the contact damping (see
/// `RollAsideTask::planner_contact_damping`).
pub fn planning_simulation(task: &RollAsideTask) -> Result<Simulation<SoftSnake, DOF, CONTACTS>, String> {
    let damping = task.planner_contact_damping;
    if !(damping.is_finite() && damping >= 0.0) {
        return Err(format!("the planner's contact damping must be finite and >= 0 N s/m, got {damping}"));
    }
    let mut simulation = rolling_simulation(&task.rolling)?;
    simulation.config.contact.damping = damping;
    Ok(simulation)
}

/// The snake dropped on its carpet and settled, as the task starts.
pub fn settled_start(task: &RollAsideTask) -> Result<State<DOF>, String> {
    let run = &task.rolling;
    let (mut plant, mut integrator) = rolling_plant(run)?;
    let mut x = State::new(SVector::from_iterator(SoftSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut t = 0.0;
    integrator
        .integrate_to(&mut plant, &mut t, &mut x, run.settle)
        .map_err(|e| format!("the drop failed at t = {t:.3} s: {e}"))?;
    Ok(x)
}

/// The task's plant as the plans drive it: the rotating bend's forces ramped between the
/// control periods' ends (a first-order hold, as in the rolling runs), the plane's phase
/// advancing under the rate in effect, ROS34PW2 between.
struct RollingPlant {
    plant: Simulation<SoftSnake, DOF, CONTACTS>,
    integrator: softgen_runtime::Rosenbrock34<DOF>,
    x: State<DOF>,
    t: f64,
    phase: f64,
    forces_now: SVector<f64, DOF>,
    forces_next: SVector<f64, DOF>,
}

impl RollingPlant {
    /// From `x` at `t`, the plane at phase 0 under `decisions`.
    fn new(
        run: &RollingRun,
        schedule: &CommandSchedule,
        x: State<DOF>,
        t: f64,
        decisions: &[f64],
    ) -> Result<Self, String> {
        let (plant, integrator) = rolling_plant(run)?;
        let mut forces_now = SVector::<f64, DOF>::zeros();
        schedule.commands_into(&[0.0], decisions, forces_now.as_mut_slice());
        Ok(RollingPlant { plant, integrator, x, t, phase: 0.0, forces_now, forces_next: SVector::zeros() })
    }

    /// One control period of `h` seconds under `decisions`, ending at `next`.
    fn period(&mut self, schedule: &CommandSchedule, decisions: &[f64], h: f64, next: f64) -> Result<(), String> {
        schedule.advance(std::slice::from_mut(&mut self.phase), decisions, h);
        schedule.commands_into(&[self.phase], decisions, self.forces_next.as_mut_slice());
        self.plant.set_actuator_force_ramp(self.t, &self.forces_now, next, &self.forces_next)?;
        let t = &mut self.t;
        self.integrator
            .integrate_to(&mut self.plant, t, &mut self.x, next)
            .map_err(|e| format!("the plant failed at t = {t:.3} s: {e}"))?;
        self.forces_now = self.forces_next;
        Ok(())
    }
}

/// How far the centre of mass travels in `duration` seconds from `start` (a settled state)
/// at a fixed bend and plane rate, in the plant (as the task drives it: first-order hold of
/// the forces over each control period, ROS34PW2) and in the plan's model (the planner's
/// simulation stepped knot by knot, as a plan predicts it): the check that the decisions'
/// box is where the plan's model can be trusted.
pub fn fixed_gait_travel(
    task: &RollAsideTask,
    start: &State<DOF>,
    bend: f64,
    plane_rate: f64,
    duration: f64,
) -> Result<(Vector3<f64>, Vector3<f64>), String> {
    use softgen_runtime::KnotDynamics;
    let run = &task.rolling;
    let p = &run.params;
    let center_of_mass = |q: &SVector<f64, DOF>| SoftSnake::center_of_mass(q, p, &SoftSnake::cache(q, p));
    let schedule = rolling_schedule(task)?;
    let decisions = [bend, plane_rate];
    let mut rolling = RollingPlant::new(run, &schedule, *start, 0.0, &decisions)?;
    for k in 0..(duration / run.control_period).round() as usize {
        rolling.period(&schedule, &decisions, run.control_period, (k + 1) as f64 * run.control_period)?;
    }
    let plant_travel = center_of_mass(&rolling.x.q) - center_of_mass(&start.q);
    let horizon = &task.horizon;
    let mut knots = roll_aside_knots(task)?;
    let mut state =
        RobotKnots::<SoftSnake, DOF, CONTACTS>::scheduled_state_vector(&start.q, &start.qd, &[0.0], &decisions);
    let mut next = state.clone();
    let control = nalgebra::DVector::from_row_slice(&decisions);
    for k in 0..(duration / horizon.interval).round() as usize {
        knots
            .step(k % horizon.knots, &state, &control, &mut next, None)
            .map_err(|e| format!("the plan's model failed at knot {k}: {e}"))?;
        std::mem::swap(&mut state, &mut next);
    }
    let q = SVector::<f64, DOF>::from_iterator(state.rows(0, DOF).iter().copied());
    Ok((plant_travel, center_of_mass(&q) - center_of_mass(&start.q)))
}

/// One sample per planning period.
#[derive(Clone, Debug)]
pub struct RollAsideSample {
    /// The sample's time (s).
    pub t: f64,
    /// The plant's state the plan started from.
    pub state: State<DOF>,
    /// The centre of mass (m).
    pub center_of_mass: Vector3<f64>,
    /// In the ground plane (m).
    pub distance: f64,
    /// The decisions in effect (bend, plane rate) and the plane's phase.
    pub bend: f64,
    /// See `bend`.
    pub plane_rate: f64,
    /// See `bend`.
    pub phase: f64,
    /// The nine pressures at the sample (bar).
    pub pressures: [f64; 9],
    /// The plan's wall time (ms).
    pub plan_ms: f64,
    /// The plan's cost.
    pub cost: f64,
    /// System Jacobians the plan evaluated.
    pub jacobians: usize,
    /// Whether the plan failed (the last good one was kept).
    pub failed: bool,
}

/// A run of the task.
#[derive(Clone, Debug)]
pub struct RollAsideRun {
    /// The centre of mass at the start (m).
    pub start: Vector3<f64>,
    /// The goal (m).
    pub goal: Vector3<f64>,
    /// One sample per planning period.
    pub samples: Vec<RollAsideSample>,
    /// The planner's counts.
    pub statistics: PlannerStatistics,
    /// The planning period (s).
    pub period: f64,
    /// When the centre of mass came within the arrival radius and stayed there to the end.
    pub reached_at: Option<f64>,
    /// The centre of mass's distance from the goal at the end (m).
    pub final_distance: f64,
    /// The highest pressure commanded (bar).
    pub highest_pressure: f64,
    /// The failures' reasons, first few.
    pub failures: Vec<String>,
    /// Wall time of the run (s).
    pub wall_seconds: f64,
}

/// The task's planner, its centre of mass pulled to `goal`: box-DDP over the planner's
/// model with the task's horizon, weights and Newton settings.
pub fn roll_aside_planner(
    task: &RollAsideTask,
    goal: Vector3<f64>,
) -> Result<RecedingHorizon<SoftSnake, DOF, CONTACTS>, String> {
    let mut planner = RecedingHorizon::scheduled(
        planning_simulation(task)?,
        &[ControlInput::ActuatorForces],
        rolling_schedule(task)?,
        task.horizon.clone(),
        GoalWeights { goal, ..task.weights.clone() },
        DdpSettings { line_search_steps: 4, ..DdpSettings::default() },
    )?;
    planner.set_newton(task.newton_tolerance, task.retry_from_fresh)?;
    Ok(planner)
}

/// The planner's knots alone (the task's horizon and Newton settings), for rolling its
/// model out at fixed decisions.
pub fn roll_aside_knots(task: &RollAsideTask) -> Result<RobotKnots<SoftSnake, DOF, CONTACTS>, String> {
    let mut knots = RobotKnots::scheduled(
        planning_simulation(task)?,
        &[ControlInput::ActuatorForces],
        rolling_schedule(task)?,
        task.horizon.interval,
        task.horizon.substeps,
    )?;
    knots.set_newton(task.newton_tolerance, task.retry_from_fresh)?;
    Ok(knots)
}

/// Settles the dropped snake, then rolls it to the goal under the planner.
pub fn run_roll_aside(task: &RollAsideTask) -> Result<RollAsideRun, String> {
    let started = Instant::now();
    let run = &task.rolling;
    let p = run.params.clone();
    let schedule = rolling_schedule(task)?;
    for (name, value) in [("duration", task.duration), ("hold", task.hold)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!("{name} must be finite and >= 0 s, got {value}"));
        }
    }
    let period = task.horizon.period;
    let control_period = run.control_period;
    let per_plan = (period / control_period).round() as usize;
    if per_plan == 0 || ((per_plan as f64) * control_period - period).abs() > 1e-9 * period {
        return Err(format!(
            "the planning period {period} s must be a multiple of the control period {control_period} s"
        ));
    }
    let mut decisions = task.weights.rest.clone();
    let mut rolling = RollingPlant::new(run, &schedule, settled_start(task)?, run.settle, &decisions)?;
    let center_of_mass = |q: &SVector<f64, DOF>| SoftSnake::center_of_mass(q, &p, &SoftSnake::cache(q, &p));
    let start = center_of_mass(&rolling.x.q);
    let goal = start + Vector3::new(0.0, GOAL_ASIDE, 0.0);
    let mut planner = roll_aside_planner(task, goal)?;
    let plans = (task.duration / period).round() as usize;
    let mut samples = Vec::with_capacity(plans);
    let mut failures = Vec::new();
    let mut inside_since: Option<f64> = None;
    let mut highest_pressure: f64 = 0.0;
    let pressure_per_newton = 1.0 / rolling_muscles(run)?.force(1.0);
    for k in 0..plans {
        let since = rolling.t - run.settle;
        let (x, phase) = (rolling.x, rolling.phase);
        let outcome = planner.plan_from(since, &x.q, &x.qd, &[phase], &decisions);
        if let Some(reason) = &outcome.failure {
            if failures.len() < 5 {
                failures.push(format!("t = {since:.2} s: {reason}"));
            }
        }
        let com = center_of_mass(&x.q);
        let distance = (com - goal).xy().norm();
        inside_since = if distance <= ARRIVAL_RADIUS { inside_since.or(Some(since)) } else { None };
        let pressures: [f64; 9] = std::array::from_fn(|m| {
            rolling.forces_now[SOFT_SECTIONS[m / 3].first_coordinate + m % 3] * pressure_per_newton
        });
        highest_pressure = pressures.iter().fold(highest_pressure, |a, b| a.max(*b));
        decisions.copy_from_slice(planner.command_at(since).as_slice());
        samples.push(RollAsideSample {
            t: since,
            state: x,
            center_of_mass: com,
            distance,
            bend: decisions[0],
            plane_rate: decisions[1],
            phase,
            pressures,
            plan_ms: outcome.compute.as_secs_f64() * 1e3,
            cost: outcome.cost,
            jacobians: outcome.jacobians,
            failed: outcome.failure.is_some(),
        });
        if inside_since.is_some_and(|at| since - at >= task.hold) {
            break;
        }
        // The plan's commands over the period, a control period at a time: the plane's
        // phase advances under the planned rate, the forces ramp between the periods'
        // ends (a first-order hold, as in the rolling runs).
        for c in 0..per_plan {
            decisions.copy_from_slice(planner.command_at(rolling.t - run.settle).as_slice());
            let next = run.settle + (k * per_plan + c + 1) as f64 * control_period;
            rolling.period(&schedule, &decisions, control_period, next)?;
        }
    }
    let final_distance = samples.last().map_or(f64::NAN, |s| s.distance);
    let reached_at = inside_since.filter(|at| samples.last().is_some_and(|s| s.t - at >= task.hold));
    Ok(RollAsideRun {
        start,
        goal,
        samples,
        statistics: planner.statistics(),
        period,
        reached_at,
        final_distance,
        highest_pressure,
        failures,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
