//! Model-predictive control of the valve-driven snake of 001: from rest, reach a goal 1 m
//! away at 45 degrees off its heading and stay there, MPPI re-planning the valve wave's
//! supply pressure, frequency and offset (eq 13's phi) over the complex model, the
//! generated model with the valves' closed-form response (`softgen_runtime::ValvePlanner`).
//! The plant is the same model stepped through every valve switch. Not in the paper, which
//! drives the robot open loop at fixed settings.
//!
//! Why these decisions: the robot has no continuous command; its valves open and shut on
//! the wave, whose frequency sets the pace, whose offset turns it (phi = 0.4 circles at
//! 105-226 mm, Fig 9) and whose supply pressure sets the bend, down to none at the
//! threshold pressure, where the snake stops: that is how a plan holds the goal.

use nalgebra::{SVector, Vector2};
use softgen_generated::wpi_snake::{CONTACTS, DOF};
use softgen_generated::WpiSnake;
use softgen_runtime::{
    JointPd, Model, PlannerStatistics, Simulation, SimulationConfig, State, SteeredValveWave, ValveDecisions,
    ValveDriven, ValvePlanner, ValvePlannerConfig, ValveSnapshot,
};
use std::time::{Duration, Instant};

/// The goal's distance from the start's centre of mass (m) and its angle off the heading
/// (+x, where the head points and the snake travels).
pub const GOAL_DISTANCE: f64 = 1.0;
/// See `GOAL_DISTANCE` (degrees).
pub const GOAL_ANGLE_DEGREES: f64 = 45.0;
/// The spec's parameter that is the supply pressure (kPa).
pub const PRESSURE_PARAMETER: &str = "supply_pressure";

/// The task's settings.
#[derive(Clone, Debug)]
pub struct GoalTask {
    /// Simulated time before giving up (s).
    pub duration: f64,
    /// Reached: the centre of mass within this distance of the goal (m) for `hold` seconds.
    pub arrival_radius: f64,
    /// See `arrival_radius`.
    pub hold: f64,
    /// Re-planning period (s).
    pub period: f64,
    /// The plant's RK4 step (s): the complex model's default, within 0.032 % of 0.5 ms
    /// steps in the paper's speeds and radii.
    pub plant_step: f64,
    /// The planner's settings (its goal is set from the start).
    pub planner: ValvePlannerConfig,
    /// The wave the robot starts with and the first plan's mean.
    pub initial: ValveDecisions,
}

impl GoalTask {
    /// 20 Hz plans of 16 rollouts over 1 s. Measured on the task (rollouts, horizon,
    /// period: reached at, longest plan): 16, 1 s, 100 ms: 5.70 s, 13.4 ms; 16, 1 s, 50 ms:
    /// 5.60 s, 12.3 ms; 32, 1 s, 50 ms: 5.90 s, 23.7 ms; 8, 1 s, 50 ms: 5.75 s, 5.8 ms; 16,
    /// 0.5 s, 50 ms: 5.30 s, 6.8 ms; 16, 2 s, 100 ms: 6.90 s, 23.4 ms; without the heading
    /// term (16, 1 s, 50 ms): 5.45 s.
    pub fn new() -> Self {
        GoalTask {
            duration: 30.0,
            arrival_radius: 0.05,
            hold: 2.0,
            period: 0.05,
            plant_step: 3.5e-3,
            planner: ValvePlannerConfig {
                samples: 16,
                horizon: 1.0,
                step: 5e-3,
                noise: ValveDecisions { pressure: 4.0, frequency: 0.2, offset: 0.2 },
                // From the threshold (the segments stop bending) to the paper's highest.
                min: ValveDecisions { pressure: 20.0, frequency: 1.0, offset: -0.8 },
                max: ValveDecisions { pressure: 55.0, frequency: 2.0, offset: 0.8 },
                temperature: 0.3,
                goal: Vector2::zeros(),
                heading_weight: 1.0,
                seed: 1,
                pressure_parameter: PRESSURE_PARAMETER.to_string(),
            },
            initial: ValveDecisions { pressure: 48.0, frequency: 1.5, offset: 0.0 },
        }
    }
}

impl Default for GoalTask {
    fn default() -> Self {
        Self::new()
    }
}

/// One sample per planning period.
#[derive(Clone, Debug)]
pub struct GoalSample {
    /// The sample's time (s).
    pub t: f64,
    /// The plant's state the plan started from (driven coordinates exact).
    pub state: State<DOF>,
    /// The centre of mass (m).
    pub center_of_mass: Vector2<f64>,
    /// Its distance from the goal (m).
    pub distance: f64,
    /// The wave as the plan found it (its phase) and the decisions applied from this sample on.
    pub wave: SteeredValveWave,
    /// See `wave`.
    pub decisions: ValveDecisions,
    /// The plan's wall time (ms).
    pub plan_ms: f64,
    /// The best rollout's cost.
    pub best_cost: f64,
    /// Rollouts that failed.
    pub failed: usize,
}

/// A run of the task.
#[derive(Clone, Debug)]
pub struct GoalRun {
    /// The centre of mass at the start (m).
    pub start: Vector2<f64>,
    /// The goal (m).
    pub goal: Vector2<f64>,
    /// One sample per planning period.
    pub samples: Vec<GoalSample>,
    /// The planner's counts.
    pub statistics: PlannerStatistics,
    /// When the centre of mass came within the arrival radius to stay for the hold.
    pub reached_at: Option<f64>,
    /// The centre of mass's distance from the goal at the end (m).
    pub final_distance: f64,
    /// Wall time of the run (s).
    pub wall_seconds: f64,
    /// The plant's right-hand sides.
    pub evaluations: usize,
}

/// The robot in its environment, as the plant and the planner simulate it (`step`: the
/// control period the simulation reports; the valves' switches set the commands).
pub fn simulation(step: f64) -> Result<Simulation<WpiSnake, DOF, CONTACTS>, String> {
    let env = WpiSnake::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: step,
    };
    Simulation::new(<WpiSnake as Model<DOF, CONTACTS>>::Params::default(), config)
}

/// Runs the task: plans every period from the plant's state, applies each plan at once
/// (offline, in simulated time; its compute time is measured against the period).
pub fn run_goal(task: &GoalTask) -> Result<GoalRun, String> {
    let wall = Instant::now();
    let delay = WpiSnake::VALVE_GAIT.ok_or("the wpi_snake spec declares no valve wave")?.delay;
    let mut x = State::new(SVector::from_iterator(WpiSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let system = ValveDriven::prescribed(simulation(task.plant_step)?, 0.0, &x)?;
    let wave = SteeredValveWave::new(delay, 0.0, task.initial);
    let mut plant = ValveDriven::new(system, wave, PRESSURE_PARAMETER, task.plant_step)?;
    let start = plant.ground_center_of_mass(&x);
    let angle = GOAL_ANGLE_DEGREES.to_radians();
    let goal = start + GOAL_DISTANCE * Vector2::new(angle.cos(), angle.sin());
    let mut config = task.planner.clone();
    config.goal = goal;
    let mut planner = ValvePlanner::new(simulation(config.step)?, config, task.initial)?;
    let (mut t, mut samples, mut statistics) = (0.0, Vec::new(), PlannerStatistics::default());
    let (mut within_since, mut reached_at, mut evaluations) = (None::<f64>, None, 0);
    plant.apply(t, task.initial, &mut x)?;
    let mut final_distance;
    loop {
        let exact = plant.exact_state(t, &x);
        let com = plant.ground_center_of_mass(&exact);
        final_distance = (com - goal).norm();
        if final_distance <= task.arrival_radius {
            let since = *within_since.get_or_insert(t);
            if t - since >= task.hold - 1e-9 {
                reached_at = Some(since);
                break;
            }
        } else {
            within_since = None;
        }
        if t >= task.duration - 1e-9 {
            break;
        }
        let snapshot = ValveSnapshot { time: t, state: exact, wave: plant.wave };
        let began = Instant::now();
        let plan = planner.plan(&snapshot);
        let spent = began.elapsed();
        statistics.plans += 1;
        statistics.total += spent;
        statistics.longest = statistics.longest.max(spent);
        if spent > Duration::from_secs_f64(task.period) {
            statistics.overruns += 1;
        }
        if plan.failed == plan.rollouts {
            statistics.failures += 1;
        }
        plant.apply(t, plan.decisions, &mut x)?;
        samples.push(GoalSample {
            t,
            state: exact,
            center_of_mass: com,
            distance: final_distance,
            wave: snapshot.wave,
            decisions: plan.decisions,
            plan_ms: spent.as_secs_f64() * 1e3,
            best_cost: plan.best_cost,
            failed: plan.failed,
        });
        let next = (t + task.period).min(task.duration);
        evaluations += plant.advance(&mut t, &mut x, next)?;
        if !x.is_finite() {
            return Err(format!("the plant's state became non-finite at t = {t:.3} s"));
        }
    }
    Ok(GoalRun {
        start,
        goal,
        samples,
        statistics,
        reached_at,
        final_distance,
        wall_seconds: wall.elapsed().as_secs_f64(),
        evaluations,
    })
}
