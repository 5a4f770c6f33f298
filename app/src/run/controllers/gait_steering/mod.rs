//! The gait sampler: MPPI steering a serpenoid gait to a goal.

use crate::run::config::{Drives, RunConfig};
use crate::run::controllers::open_loop::serpenoid_controller;
use crate::run::controllers::steering::SteeredTask;
use crate::run::request::RunReport;
use crate::run::sensing::Sensing;
use crate::run::session::{
    configured_params, dry_run, loop_config, planner_estimation, plant_simulation_config, print_estimator,
    print_header, simulated_plant, try_realtime, Run,
};
use nalgebra::{SVector, Vector2};
use settings::MpcSettings;
use softgen_runtime::{
    run_planner, ActuatorCommand, GaitParameters, GaitPlanner, GoalSteering, Model, OutputChain, Serpenoid, Simulation,
    State, SteeringConfig, SteeringLink,
};
use std::sync::Arc;

pub(crate) mod settings;

impl Run<'_> {
    /// The gait sampler steering a serpenoid gait (from `gait`) to the goal in `settings`: the
    /// joints' set points of the steered gait through the output chain to a device, the
    /// planner in its own thread on the measured or estimated state.
    pub(crate) fn run_gait_steering<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: MpcSettings,
        gait: Serpenoid,
        actuated: &[(&str, Drives)],
    ) -> Result<RunReport, String> {
        let o = self.options;
        let gait_defaults = R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait to run", R::NAME))?;
        let loop_config = loop_config(o, &config)?;
        settings.planner(settings.goal).validate()?;
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let controller_line = format!(
            "mpc: goal ({}, {}) m, {} rollouts of {} s every {} ms ({} Hz)",
            settings.goal.x,
            settings.goal.y,
            settings.samples,
            settings.horizon,
            1e3 / settings.replan_hz,
            settings.replan_hz
        );
        let names: Vec<&str> = actuated.iter().map(|a| a.0).collect();
        // The state the planner starts from: the plant's, or estimated from sensors (on the
        // robot, always).
        let on_robot = o.on_robot();
        let estimation = planner_estimation::<R, N, C>(o, &config, &path, &loop_config)?;
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &names);
        if let Some((sensors, _, filter)) = &estimation {
            print_estimator(sensors, filter.step(), on_robot);
        }
        if o.dry_run {
            println!("dry run: the mpc controller needs the plant's state, so these are the gait's commands");
            println!("dry run: first commands, no device touched");
            let dt = 1.0 / loop_config.rate_hz;
            let times: Vec<f64> = (0..5).map(|k| k as f64 * dt).collect();
            let mut controller = serpenoid_controller(gait);
            return dry_run(&mut chain, &mut controller, &times, dt, ActuatorCommand::Valve(false));
        }
        if o.realtime {
            try_realtime();
        }

        // Model-predictive control: the planner rolls out the same model in the same
        // environment, in its own thread; the loop only swaps plans and measurements.
        let params = configured_params::<R, N, C>(&config)?;
        let plant_config = plant_simulation_config::<R, N, C>(&config, &loop_config, gait_defaults.servo());
        let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let model = Simulation::<R, N, C>::new(params.clone(), plant_config)?;
        let initial = GaitParameters {
            amplitude: gait.amplitude,
            temporal_frequency: gait.temporal_frequency,
            offset: gait.offset,
        };
        let mut planner = GaitPlanner::new(model, settings.planner(settings.goal), initial)?;
        let steering_config = SteeringConfig {
            goal: settings.goal,
            arrival_radius: settings.arrival_radius,
            settle: settings.settle,
            lag: settings.lag,
            initial,
            spatial_frequency: gait.spatial_frequency,
        };
        let mut steering = GoalSteering::<R, N, C>::new(params.clone(), &steering_config, 1.0 / loop_config.rate_hz)?;
        let start_distance = {
            let cache = R::cache(&start.q, &params);
            let com = R::center_of_mass(&start.q, &params, &cache);
            (Vector2::new(com.x, com.y) - settings.goal).norm()
        };
        let link = Arc::new(SteeringLink::<N>::new());
        let measured = Arc::clone(&link);
        let joints = R::ACTUATED.len();
        let plant = || Ok(simulated_plant::<R, N, C>(&config, &loop_config, gait_defaults.servo(), 0.002)?.1);
        let sensed = Sensing::new(o, &config, &path, estimation, joints, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let task = SteeredTask { goal: settings.goal, goal_height: None, start_distance };
        let link = &*link;
        let plan = || run_planner(&mut planner, link, settings.replan_hz);
        let steered = self.steer(&loop_config, &mut chain, sensed, link, plan, &mut steering, task)?;
        if let Some((x, y)) = steered.end.as_ref().map(|q| (q[0], q[1])) {
            println!("plant       base at ({x:.3}, {y:.3}) m");
        }
        Ok(steered.report())
    }
}
