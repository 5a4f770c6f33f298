//! The valve sampler: MPPI steering a valve-driven robot's wave to a goal.

use crate::run::config::RunConfig;
use crate::run::controllers::steering::SteeredTask;
use crate::run::request::RunReport;
use crate::run::sensing::Sensing;
use crate::run::session::{
    actuators, dry_run, loop_config, no_servo, planner_estimation, plant_simulation_config, print_estimator,
    print_header, print_plant_center_of_mass, try_realtime, valve_plant, Run, ValveStart,
};
use nalgebra::SVector;
use settings::ValveMpcSettings;
use softgen_runtime::{
    run_valve_planner, write_valve_commands, ActuatorCommand, Model, OutputChain, Simulation, State, SteeredValveWave,
    ValveLink, ValvePlanner, ValveSteering, ValveSteeringConfig,
};
use std::sync::Arc;

pub(crate) mod settings;

impl Run<'_> {
    /// The valve sampler steering a valve-driven robot's wave (from `start`) to the goal in
    /// `settings`: each valve pair's state to its digital line and the supply pressure to its
    /// regulator, through the output chain to a device, the planner in its own thread on the
    /// measured or estimated state.
    pub(crate) fn run_valve_steering<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: ValveMpcSettings,
        start: ValveStart<R::Params>,
    ) -> Result<RunReport, String> {
        let o = self.options;
        let on_robot = o.on_robot();
        let ValveStart { supply, delay, initial, params } = &start;
        let (initial, valves) = (*initial, R::VALVES.len());
        let loop_config = loop_config(o, &config)?;
        let period = 1.0 / loop_config.rate_hz;
        let estimation = planner_estimation::<R, N, C>(o, &config, &path, &loop_config)?;
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuated = actuators::<R, N, C>();
        let names: Vec<&str> = actuated.iter().map(|(name, _)| *name).collect();
        let controller_line = format!(
            "mpc: valve sampling to ({}, {}) m (centre of mass), {} rollouts of {} s every {} ms ({} Hz); starting wave {}",
            settings.goal.x,
            settings.goal.y,
            settings.samples,
            settings.horizon,
            1e3 / settings.replan_hz,
            settings.replan_hz,
            start.wave_line()
        );
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &names);
        if let Some((sensors, _, filter)) = &estimation {
            print_estimator(sensors, filter.step(), on_robot);
        }
        let steered = SteeredValveWave::new(*delay, 0.0, initial);
        let units_per_bar = supply.units_per_bar;
        let mut open_loop = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            write_valve_commands(&steered, t, units_per_bar, commands);
            Ok(())
        };
        if o.dry_run {
            println!("dry run: the mpc controller needs the plant's state, so these are the starting wave's commands");
            return dry_run(&mut chain, &mut open_loop, &[0.0, period], period, ActuatorCommand::Valve(false));
        }
        if o.realtime {
            try_realtime();
        }
        let plant_config = plant_simulation_config::<R, N, C>(&config, &loop_config, no_servo());
        let start_state =
            State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let start_com = R::center_of_mass(&start_state.q, params, &R::cache(&start_state.q, params)).xy();
        let mut planner = ValvePlanner::<R, N, C>::new(
            Simulation::new(params.clone(), plant_config)?,
            settings.planner(settings.goal, &supply.parameter),
            initial,
        )
        .map_err(|e| format!("{path}: mpc: {e}"))?;
        let steering_config = ValveSteeringConfig {
            goal: settings.goal,
            arrival_radius: settings.arrival_radius,
            hold: settings.hold,
            initial,
            units_per_bar,
        };
        let mut steering = ValveSteering::<R, N, C>::new(params.clone(), steering_config, period)?;
        let link = Arc::new(ValveLink::<N>::new());
        let measured = Arc::clone(&link);
        let plant = || valve_plant::<R, N, C>(&config, &loop_config, &path);
        let sensed = Sensing::new(o, &config, &path, estimation, valves + 1, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let link = &*link;
        let task =
            SteeredTask { goal: settings.goal, goal_height: None, start_distance: (start_com - settings.goal).norm() };
        let plan = || run_valve_planner(&mut planner, link, settings.replan_hz);
        let steered = self.steer(&loop_config, &mut chain, sensed, link, plan, &mut steering, task)?;
        print_plant_center_of_mass::<R, N, C>(steered.end.as_ref(), params);
        Ok(steered.report())
    }
}
