//! Model-predictive control of the rigid snake on passive wheels (snake_lateral_undulation
//! with its run configuration's floor and servos): box-DDP over its gait's wave (amplitude,
//! temporal frequency, offset), head to head with the sampling planner the run
//! configuration sets up (MPPI over the same three parameters), on the four goals of the
//! MPC tests, 1 m from the start: to the side, behind the tail, ahead of the head and the
//! run configuration's 45 degrees off. Both re-plan at the configuration's 20 Hz over 1 s
//! from the plant's state, offline in simulated time, the plant integrated by RK4 at 1 ms.
//!
//! Why the wave: joint set points held over a knot give a plan from rest no way to travel
//! (a snake on passive wheels moves by undulating, a second-order effect), so DDP decides
//! the wave's parameters as the sampler does, differentiating through the wave's phase
//! (`CommandSchedule::Wave`).

use nalgebra::{SVector, Vector2, Vector3};
use softgen_app::{MpcSettings, PlannerSettings, RunConfig};
use softgen_generated::SnakeLateralUndulation;
use softgen_runtime::{
    CommandSchedule, ControlInput, DdpSettings, GaitParameters, GaitPlanner, GoalWeights, HorizonSettings, Integrator,
    KnotIntegrator, Model, PlanningSnapshot, RecedingHorizon, RungeKutta4, Simulation, SimulationConfig, State,
    SteeredGait,
};
use std::time::{Duration, Instant};

type R = SnakeLateralUndulation;
const N: usize = 8;
const C: usize = 13;
const JOINTS: usize = 5;
/// The plant's step and the control period (s).
const PLANT_STEP: f64 = 0.001;

/// The goals, by name and direction from the start (degrees; the body lies along x, its
/// head towards -x, so 180 is ahead): those of the MPC tests.
pub const GOALS: [(&str, f64); 4] = [("left", 90.0), ("behind", 0.0), ("ahead", 180.0), ("configured", -45.0)];
/// Each goal this far from the start (m).
pub const GOAL_DISTANCE: f64 = 1.0;
/// How often box-DDP re-plans (Hz): the MPC issue's rate for this robot. MPPI keeps the run
/// configuration's rate.
pub const DDP_RATE_HZ: f64 = 50.0;
/// Box-DDP's knots, each a tenth of the sampler's horizon (0.1 s): a 0.5 s horizon, the
/// shortest the MPC issue allows and the cheapest of those measured to reach every goal
/// (see [`GoalsTask::new`]).
pub const DDP_KNOTS: usize = 5;

/// Which planner steers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planner {
    /// Box-DDP on the generated derivatives, one real-time iteration a plan.
    Ddp,
    /// The run configuration's sampling planner (MPPI).
    Mppi,
}

impl Planner {
    /// The planner's name: `box-DDP` or `MPPI`.
    pub fn name(self) -> &'static str {
        match self {
            Planner::Ddp => "box-DDP",
            Planner::Mppi => "MPPI",
        }
    }
}

/// The task's settings.
#[derive(Clone, Debug)]
pub struct GoalsTask {
    /// The sampler's settings, from the robot's run configuration; its arrival radius,
    /// bounds and step are the DDP plans' too (its rate is not: [`DDP_RATE_HZ`]).
    pub sampler: MpcSettings,
    /// The DDP plans: [`DDP_KNOTS`] knots of a tenth of the sampler's horizon, re-planned at
    /// [`DDP_RATE_HZ`].
    pub horizon: HorizonSettings,
    /// How the knots step: semi-implicit Euler at the sampler's 2 ms, as its rollouts do.
    pub knot_integrator: KnotIntegrator,
    /// The DDP cost's weights.
    pub weights: GoalWeights,
    /// Simulated time each goal gets (s).
    pub duration: f64,
}

impl GoalsTask {
    /// The robot's run configuration, and DDP over 5 knots of 0.1 s (0.5 s), each 50
    /// semi-implicit steps of 2 ms following the wave's phase, one iteration per plan,
    /// re-planned at 50 Hz. Until 2026-12-01 it planned 10 knots (1 s) at the sampler's 20
    /// Hz; what follows was measured with those.
    ///
    /// The best of what was measured on the goal ahead (20 s; reached at, or the distance
    /// left; failed plans; compute per simulated second): 3 implicit steps a knot and a
    /// command-rate weight of 1e-2, not reached (1.25 m), 83 of 800 failed, 0.26 s/s (the
    /// plans bang from bound to bound); weight 1, 0.79 m; 3 iterations, 1.03 m at 1.2 s/s;
    /// semi-implicit 2 ms steps, 1.17 m with no plan failing at 0.13 s/s, and with weight 1,
    /// 10, 30, 100: 0.54 m, reached at 18.0 s, 0.62 m, 0.15 m; horizons of 2 and 3 s, 0.88
    /// and 0.61 m; a heading term along the body, 0.63 and 0.58 m. Over all four goals the
    /// chosen setting (weight 10) reached the goal ahead at 36.6 s and none of the others
    /// (0 of 4 in a later build: the runs are sensitive to rounding).
    ///
    /// Then the heading term signed by the wave's direction of travel (`travel_command`,
    /// 2026-11-30): the body travels toward link 1's end (away from the head tip) while the
    /// temporal frequency is positive and the other way while it is negative, so without
    /// the sign the plans could not tell
    /// which way of turning or reversing takes the body to the goal. Signed alone (the
    /// residual |g| tanh(omega / s) h - g), it made the plans reverse and turn, but which
    /// goals a setting reached depended on small changes (running, terminal heading weight;
    /// scale s in rad/s; goals of 4): 5, 50, 0.5: 3; 10, 100, 0.5: 0; 5, 50, 0.2: 1; 5, 50,
    /// 1.0: 3; 5, 50, 2.0: 2; 5, 50, 0.8: 2; 5, 50, 1.2: 2; 6, 60, 1.0: 1; 4, 40, 1.0: 3;
    /// 3, 30, 1.0: 1; 0, 50, 1.0: 0. It failed most on the goal to the side: across the
    /// way, the residual is smallest with omega at zero, so the plans stopped the wave and
    /// with it any turning. With the standstill residual |g| sech(omega / s) beside it
    /// (stopping costs what travelling across does): 5, 50, 1.0: 3 (the side goal 0.110 m
    /// short); 5, 50, 0.5: 4; 3, 30, 1.0: 3 (0.139 m short); 8, 80, 1.0: 4 (kept); 10,
    /// 100, 1.0: 4; 6, 60, 1.0: 4; 8, 80, 0.7: 4; 8, 80, 1.5: 4; 15, 150, 1.0: 3.
    ///
    /// At the MPC issue's 50 Hz (`horizon.period` 0.02 s; MPPI kept at the run
    /// configuration's 20 Hz; 2026-12-01; reached at left, behind, ahead, configured; compute
    /// per simulated second against MPPI's 0.29 s): 10 knots (1 s), 15.82, 11.66, 12.54,
    /// 12.20 s at 0.35 s/s; 6 knots (0.6 s), 11.76, 11.56, 10.44, 15.98 s at 0.21 s/s; 5
    /// knots (0.5 s), 14.30, 11.44, 12.58, 14.36 s at 0.175 s/s (plans 4 to 5 ms). Every goal
    /// reached, but later than MPPI on three, with 1.4 to 1.7x less compute, short of the bar.
    /// The system's Jacobian is 70 % of a plan (perf); held over 2, 5 or 10 of a knot's steps
    /// (a W-method's frozen matrix) it cut the plan to 2 to 4 ms, but 4 to 49 % of the plans
    /// failed their line search and no goal was reached: the wheels' regularised friction
    /// changes the Jacobian within one 2 ms step. Steps of 4 ms (25 a knot) failed 6 to 8 %
    /// of the plans and reached no goal either. What made the bar: each step's accelerations
    /// and the commands' columns taken from the Jacobian's own factor and forward dynamics
    /// rather than computed again, and the floor's friction slopes for its six moving inputs
    /// only (both bit for bit, so the paths did not move): 17 to 27 % less compute a plan,
    /// 2.35 to 2.83x less than MPPI's in two runs on a loaded machine (2.05 to 2.28x
    /// before), so 5 knots at 50 Hz became the task's setting. On 2026-12-04 the same plans
    /// gave 1.85 to 1.96x on this machine; the floor's slopes in 3 x 3 blocks and the
    /// semi-implicit chain column by column (both equal to before to rounding) cut a plan
    /// from 2.18 to 1.73 ms: 2.3 to 2.4x in three runs, every goal reached.
    pub fn new() -> Result<GoalsTask, String> {
        let point = |name: &str| {
            R::CONTACT_POINTS
                .iter()
                .position(|p| p.name == name)
                .ok_or_else(|| format!("snake_lateral_undulation has no tracked point `{name}`"))
        };
        let sampler = match run_config()?.planner {
            Some(PlannerSettings::GaitSampling(sampler)) => sampler,
            _ => return Err("snake_lateral_undulation.run.toml has no gait sampler's [mpc] table".into()),
        };
        let (min, max) = (sampler.min.to_array(), sampler.max.to_array());
        let gait = R::GAIT.ok_or("snake_lateral_undulation has no gait")?;
        let interval = sampler.horizon / 10.0;
        Ok(GoalsTask {
            horizon: HorizonSettings {
                knots: DDP_KNOTS,
                interval,
                substeps: (interval / sampler.step).round().max(1.0) as usize,
                iterations: 1,
                period: 1.0 / DDP_RATE_HZ,
                deadline: None,
                lower: min.to_vec(),
                upper: max.to_vec(),
            },
            weights: GoalWeights {
                goal: Vector3::zeros(),
                // In the floor's plane.
                position: Vector3::new(1.0, 1.0, 0.0),
                terminal_position: Vector3::new(20.0, 20.0, 0.0),
                rate: 0.0,
                terminal_rate: 0.0,
                effort: 1e-3,
                command_rate: 10.0,
                rest: vec![gait.amplitude, gait.temporal_frequency, gait.offset],
                // The chord from the head tip to link 1's rear end: the way the body
                // travels while the wave's temporal frequency is positive (measured: the
                // sampler's runs), the reverse while it is negative.
                heading_points: Some((point("head_tip")?, point("link1_rear")?)),
                travel_command: Some((1, 1.0)),
                heading: 8.0,
                terminal_heading: 80.0,
                posture: Vec::new(),
                distance_scaled: None,
            },
            knot_integrator: KnotIntegrator::SemiImplicitEuler,
            sampler,
            duration: 40.0,
        })
    }
}

/// One goal's run by one planner.
#[derive(Clone, Debug)]
pub struct GoalRun {
    /// The goal's name, one of `GOALS`.
    pub goal_name: &'static str,
    /// The planner.
    pub planner: Planner,
    /// The goal (m).
    pub goal: Vector2<f64>,
    /// When the centre of mass came within the arrival radius (s).
    pub reached_at: Option<f64>,
    /// The centre of mass's distance from the goal at the end (m).
    pub final_distance: f64,
    /// Plans made.
    pub plans: usize,
    /// Plans that failed (the last good plan followed instead).
    pub failed: usize,
    /// The planner's compute over the run, and its longest plan.
    pub compute: Duration,
    /// See `compute`.
    pub longest: Duration,
    /// Plans whose compute took longer than the planner's period (in the loop, a plan
    /// that late would come after the one due next).
    pub overruns: usize,
    /// Per plan: time, centre of mass and the wave's parameters it set.
    pub samples: Vec<(f64, Vector2<f64>, [f64; 3])>,
    /// Where the run ended (what a plan from there starts from).
    pub end: RunEnd,
}

/// Where a [`GoalRun`] ended.
#[derive(Clone, Debug)]
pub struct RunEnd {
    /// When (s).
    pub t: f64,
    /// The plant's state.
    pub state: State<N>,
    /// For box-DDP, the wave's phase and the parameters in force (amplitude, temporal
    /// frequency, offset); for MPPI, which steers its own gait, the initial values.
    pub phase: f64,
    /// See `phase`.
    pub decisions: [f64; 3],
}

impl GoalRun {
    /// Compute per simulated second (s/s).
    pub fn compute_per_second(&self) -> f64 {
        let simulated = self.samples.last().map_or(0.0, |s| s.0);
        self.compute.as_secs_f64() / simulated.max(f64::MIN_POSITIVE)
    }
}

/// The robot's run configuration (its spec's sibling `.run.toml`).
pub fn run_config() -> Result<RunConfig, String> {
    let file = crate::run_config_of(R::NAME).ok_or_else(|| format!("robot `{}` has no run configuration", R::NAME))?;
    parse_run_config(file.path, file.text)
}

/// A run configuration of this robot, `text` read from `path`.
pub fn parse_run_config(path: &str, text: &str) -> Result<RunConfig, String> {
    softgen_app::parse_robot_run_config::<R, N, C>(path, text)
}

/// The plant of the run configuration: its floor under the wheels, servos tracking set
/// points; the planners' models are the same.
pub fn simulation() -> Result<Simulation<R, N, C>, String> {
    let env = R::ENVIRONMENT;
    let (contact, terrain) = run_config()?.environment.apply(env.contact_law(), env.terrain);
    let gait = R::GAIT.ok_or("snake_lateral_undulation has no gait")?;
    let config = SimulationConfig {
        contact,
        terrain,
        gait: None,
        servo: gait.servo(),
        admittance: None,
        control_period: PLANT_STEP,
    };
    Simulation::new(Default::default(), config)
}

fn com_xy(x: &State<N>) -> Vector2<f64> {
    let p = Default::default();
    let c = R::center_of_mass(&x.q, &p, &R::cache(&x.q, &p));
    Vector2::new(c.x, c.y)
}

/// The goal `direction` degrees from the start's centre of mass.
pub fn goal_of(direction: f64) -> Vector2<f64> {
    let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    com_xy(&start) + GOAL_DISTANCE * Vector2::new(direction.to_radians().cos(), direction.to_radians().sin())
}

/// Runs one goal with one planner: plans every `horizon.period` (box-DDP) or `1 / replan_hz`
/// (MPPI) s of simulated time from the plant's state, until the centre of mass is within the
/// arrival radius or the time is up.
pub fn run_goal(
    task: &GoalsTask,
    planner: Planner,
    goal_name: &'static str,
    direction: f64,
) -> Result<GoalRun, String> {
    let settings = &task.sampler;
    let goal = goal_of(direction);
    let gait = R::GAIT.ok_or("snake_lateral_undulation has no gait")?;
    let initial =
        GaitParameters { amplitude: gait.amplitude, temporal_frequency: gait.temporal_frequency, offset: gait.offset };
    let period = match planner {
        Planner::Ddp => task.horizon.period,
        Planner::Mppi => 1.0 / settings.replan_hz,
    };
    let per_plan = (period / PLANT_STEP).round() as usize;
    if per_plan == 0 {
        return Err(format!("re-planning every {period} s is faster than the plant's 1 kHz"));
    }
    let mut plant = simulation()?;
    let mut rk4 = RungeKutta4::new(PLANT_STEP).map_err(|e| e.to_string())?;
    let mut x = State::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut t = 0.0;
    let mut run = GoalRun {
        goal_name,
        planner,
        goal,
        reached_at: None,
        final_distance: f64::NAN,
        plans: 0,
        failed: 0,
        compute: Duration::ZERO,
        longest: Duration::ZERO,
        overruns: 0,
        samples: Vec::new(),
        end: RunEnd { t: 0.0, state: x, phase: 0.0, decisions: [0.0; 3] },
    };
    let periods = (task.duration / PLANT_STEP).round() as usize;
    let mut targets = SVector::<f64, N>::zeros();
    // The sampler steers a lagging gait; DDP decides the wave's parameters itself, its phase
    // carried from period to period.
    let mut sampler = match planner {
        Planner::Mppi => Some(GaitPlanner::new(simulation()?, settings.planner(goal), initial)?),
        Planner::Ddp => None,
    };
    let mut steered = SteeredGait::new(gait.spatial_frequency, settings.lag, initial);
    let schedule = wave_schedule()?;
    let mut horizon = match planner {
        Planner::Ddp => Some(ddp_planner(task, goal)?),
        Planner::Mppi => None,
    };
    let mut decisions = vec![0.0, initial.temporal_frequency, 0.0];
    let mut phase = 0.0;
    let mut set_points = [0.0; JOINTS];
    for k in 0..periods {
        if k % per_plan == 0 {
            let started = Instant::now();
            let parameters = match (&mut sampler, &mut horizon) {
                (Some(sampler), _) => {
                    let plan = sampler.plan(&PlanningSnapshot { time: t, state: x, gait: steered });
                    run.failed += (plan.failed > 0) as usize;
                    steered.target = plan.parameters;
                    plan.parameters.to_array()
                }
                (None, Some(horizon)) => {
                    let outcome = horizon.plan_from(t, &x.q, &x.qd, &[phase], &decisions);
                    run.failed += outcome.failure.is_some() as usize;
                    decisions.copy_from_slice(horizon.command_at(t).as_slice());
                    [decisions[0], decisions[1], decisions[2]]
                }
                (None, None) => return Err("no planner set up".into()),
            };
            let spent = started.elapsed();
            run.plans += 1;
            run.compute += spent;
            run.longest = run.longest.max(spent);
            run.overruns += (spent.as_secs_f64() > period) as usize;
            let com = com_xy(&x);
            run.samples.push((t, com, parameters));
            run.final_distance = (com - goal).norm();
            if run.final_distance < settings.arrival_radius {
                run.reached_at = Some(t);
                break;
            }
        }
        // One plant period with the set points held, as the loop holds them.
        match &horizon {
            Some(horizon) => {
                decisions.copy_from_slice(horizon.command_at(t).as_slice());
                schedule.commands_into(&[phase], &decisions, &mut set_points);
                schedule.advance(std::slice::from_mut(&mut phase), &decisions, PLANT_STEP);
            }
            None => {
                for (j, target) in set_points.iter_mut().enumerate() {
                    *target = steered.joint_angle(j);
                }
                steered.advance(PLANT_STEP);
            }
        }
        targets.fixed_rows_mut::<JOINTS>(0).copy_from_slice(&set_points);
        plant.set_joint_targets(&targets);
        // Accumulated as the MPC tests step it, so the sampler's runs are theirs.
        let end = t + PLANT_STEP;
        rk4.integrate_to(&mut plant, &mut t, &mut x, end)
            .map_err(|e| format!("{goal_name} with {}: the plant failed at t = {t:.3} s: {e}", planner.name()))?;
    }
    if run.reached_at.is_none() {
        run.final_distance = (com_xy(&x) - goal).norm();
    }
    run.end = RunEnd { t, state: x, phase, decisions: [decisions[0], decisions[1], decisions[2]] };
    Ok(run)
}

/// The wave the DDP plans decide: the gait's spatial frequency over the five joints.
pub fn wave_schedule() -> Result<CommandSchedule, String> {
    let gait = R::GAIT.ok_or("snake_lateral_undulation has no gait")?;
    Ok(CommandSchedule::Wave { joints: JOINTS, spatial_frequency: gait.spatial_frequency, lag: 0.0 })
}

/// The task's box-DDP planner toward `goal` (what the run and the bench plan with).
pub fn ddp_planner(task: &GoalsTask, goal: Vector2<f64>) -> Result<RecedingHorizon<R, N, C>, String> {
    let mut horizon = RecedingHorizon::scheduled(
        simulation()?,
        &[ControlInput::JointTargets],
        wave_schedule()?,
        task.horizon.clone(),
        GoalWeights { goal: Vector3::new(goal.x, goal.y, 0.0), ..task.weights.clone() },
        DdpSettings { line_search_steps: 4, ..DdpSettings::default() },
    )?;
    horizon.set_knot_integrator(task.knot_integrator);
    Ok(horizon)
}
