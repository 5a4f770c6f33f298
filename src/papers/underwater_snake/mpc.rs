//! Model-predictive control of the underwater snake of 004: reach a waypoint 2 m ahead, 1 m
//! to the side and 0.5 m up from the start and hold it, with its six propellers and its six
//! joint pressures planned by box-DDP over the generated model (the same water, hulls and
//! actuators as the plant) at 100 Hz, the plant integrated by ROS34PW2 as the swimming
//! experiments do. Not in the paper, which drives the robot open loop: the task shows the
//! optimal-control layer on a soft robot in water.

use super::model::{neutral_params, swimming_simulation, JOINT_ACTUATORS, PROPELLERS};
use nalgebra::{SVector, Vector3};
use softgen_generated::underwater_snake::{Params, DOF};
use softgen_generated::UnderwaterSnake;
use softgen_runtime::{
    ControlInput, DdpSettings, GoalWeights, HorizonSettings, Integrator, Model, PlannerStatistics, RecedingHorizon,
    Rosenbrock34, State, Tolerances,
};

/// The waypoint, from the starting centre of mass (m): ahead (x), to the side (y), up (z).
pub const WAYPOINT: [f64; 3] = [2.0, 1.0, 0.5];
/// Thrust bound either way (N): twice the paper's unit input.
pub const THRUST_LIMIT: f64 = 2.0;
/// The tracked points the heading runs between.
const TAIL_END: usize = 0;
const NOSE: usize = 1;
/// Reached: the centre of mass within this distance of the waypoint (m).
pub const ARRIVAL_RADIUS: f64 = 0.1;

/// The task's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct WaypointTask {
    /// Simulated time (s).
    pub duration: f64,
    /// The plan must hold the waypoint for this long after reaching it (s).
    pub hold: f64,
    /// The receding horizon: knots, steps, rate, bounds.
    pub horizon: HorizonSettings,
    /// The cost's weights.
    pub weights: GoalWeights,
}

impl WaypointTask {
    /// 100 Hz plans over 0.5 s (4 knots of 125 ms), one DDP iteration each (real-time
    /// iteration: the plan improves from period to period as it is carried along). Each
    /// knot costs one or two of the system's exact Jacobians, about 0.45 ms each for this
    /// robot, which sets the knots: 10 knots of 50 ms took 11 ms per plan, past the period.
    pub fn new(p: &Params) -> Result<Self, String> {
        let muscles: Vec<f64> = (0..JOINT_ACTUATORS)
            .map(|k| UnderwaterSnake::muscle(k, p).map(|m| m.rated_pressure).ok_or(format!("no muscle {k}")))
            .collect::<Result<_, _>>()?;
        let mut lower = vec![-THRUST_LIMIT; PROPELLERS];
        let mut upper = vec![THRUST_LIMIT; PROPELLERS];
        lower.extend(std::iter::repeat_n(0.0, JOINT_ACTUATORS));
        upper.extend(muscles);
        Ok(WaypointTask {
            duration: 60.0,
            hold: 5.0,
            horizon: HorizonSettings {
                knots: 4,
                interval: 0.125,
                substeps: 1,
                iterations: 1,
                period: 0.01,
                deadline: None,
                lower,
                upper,
            },
            weights: GoalWeights {
                goal: Vector3::zeros(),
                position: Vector3::from_element(1.0),
                // The terminal distance counts most: over half a second the robot moves a
                // few centimetres, and the last ones to the waypoint must still pay.
                terminal_position: Vector3::from_element(50.0),
                rate: 0.1,
                terminal_rate: 1.0,
                effort: 1e-3,
                command_rate: 1e-4,
                rest: vec![0.0; PROPELLERS + JOINT_ACTUATORS],
                // Tail end to nose: the propellers push along the body, so it must face the
                // waypoint to reach it.
                heading_points: Some((TAIL_END, NOSE)),
                travel_command: None,
                heading: 1.0,
                terminal_heading: 10.0,
                posture: Vec::new(),
                distance_scaled: None,
            },
        })
    }
}

/// One sample per planning period.
#[derive(Clone, Debug)]
pub struct WaypointSample {
    /// The sample's time (s).
    pub t: f64,
    /// The plant's state the plan started from.
    pub state: State<DOF>,
    /// The centre of mass (m).
    pub center_of_mass: Vector3<f64>,
    /// Its distance from the waypoint (m).
    pub distance: f64,
    /// The commands in effect (thrusts in N, pressures in MPa).
    pub commands: Vec<f64>,
    /// The plan's wall time (ms), its cost, and whether it was used.
    pub plan_ms: f64,
    /// See `plan_ms`.
    pub cost: f64,
    /// The plan's line-search rollouts and system Jacobians.
    pub forward_passes: usize,
    /// See `forward_passes`.
    pub jacobians: usize,
    /// See `plan_ms`: true where the plan was not used.
    pub failed: bool,
}

/// A run of the task.
#[derive(Clone, Debug)]
pub struct WaypointRun {
    /// The waypoint (m).
    pub goal: Vector3<f64>,
    /// One sample per planning period.
    pub samples: Vec<WaypointSample>,
    /// The planner's counts.
    pub statistics: PlannerStatistics,
    /// The planning period (s).
    pub period: f64,
    /// When the centre of mass came within the arrival radius and stayed there to the end.
    pub reached_at: Option<f64>,
    /// The centre of mass's distance from the waypoint at the end (m).
    pub final_distance: f64,
    /// The failures' reasons, first few.
    pub failures: Vec<String>,
}

/// Runs the task from rest at the start pose.
pub fn run_waypoint(task: &WaypointTask) -> Result<WaypointRun, String> {
    let p = neutral_params();
    let period = task.horizon.period;
    let mut plant = swimming_simulation(&p, period)?;
    let inputs = [ControlInput::Thrusts, ControlInput::MusclePressures];
    let q0 = SVector::<f64, DOF>::from_column_slice(UnderwaterSnake::INITIAL_POSITION);
    let start = UnderwaterSnake::center_of_mass(&q0, &p, &UnderwaterSnake::cache(&q0, &p));
    let goal = start + Vector3::from(WAYPOINT);
    let weights = GoalWeights { goal, ..task.weights.clone() };
    let mut planner = RecedingHorizon::new(
        swimming_simulation(&p, period)?,
        &inputs,
        task.horizon.clone(),
        weights,
        // A real-time iteration tries few steps: a plan that finds none keeps the last one.
        DdpSettings { line_search_steps: 4, ..DdpSettings::default() },
    )?;
    let mut integrator =
        Rosenbrock34::<DOF>::new(Tolerances { relative: 1e-6, absolute: 1e-8 }).map_err(|e| e.to_string())?;
    let mut x = State::new(q0, SVector::zeros());
    let mut t = 0.0;
    let mut commands = vec![0.0; PROPELLERS + JOINT_ACTUATORS];
    let steps = (task.duration / period).round() as usize;
    let mut samples = Vec::with_capacity(steps);
    let mut failures = Vec::new();
    let mut inside_since: Option<f64> = None;
    for k in 0..steps {
        let outcome = planner.plan(t, &x.q, &x.qd, &commands);
        if let Some(reason) = &outcome.failure {
            if failures.len() < 5 {
                failures.push(format!("t = {t:.2} s: {reason}"));
            }
        }
        commands.copy_from_slice(planner.command_at(t).as_slice());
        plant.set_thrusts(&commands[..PROPELLERS])?;
        plant.set_muscle_pressures(&commands[PROPELLERS..])?;
        let com = planner.center_of_mass(&x.q);
        let distance = (com - goal).norm();
        inside_since = if distance <= ARRIVAL_RADIUS { inside_since.or(Some(t)) } else { None };
        samples.push(WaypointSample {
            t,
            state: x,
            center_of_mass: com,
            distance,
            commands: commands.clone(),
            plan_ms: outcome.compute.as_secs_f64() * 1e3,
            cost: outcome.cost,
            forward_passes: outcome.forward_passes,
            jacobians: outcome.jacobians,
            failed: outcome.failure.is_some(),
        });
        // Done once it has held the waypoint long enough.
        if inside_since.is_some_and(|since| t - since >= task.hold) {
            break;
        }
        integrator
            .integrate_to(&mut plant, &mut t, &mut x, (k + 1) as f64 * period)
            .map_err(|e| format!("the plant failed at t = {t:.3} s: {e}"))?;
    }
    let final_distance = samples.last().map_or(f64::NAN, |s| s.distance);
    let held = inside_since.filter(|since| samples.last().is_some_and(|s| s.t - since >= task.hold));
    Ok(WaypointRun {
        goal,
        samples,
        statistics: planner.statistics(),
        period,
        reached_at: held,
        final_distance,
        failures,
    })
}
