//! The stride planner: a limbed robot's gait cycles, chosen whole by rolling each out.

use crate::run::config::RunConfig;
use crate::run::controllers::steering::SteeredTask;
use crate::run::driver::{StrideMpc, StrideMpcRequest, StrideRequest};
use crate::run::request::RunReport;
use crate::run::sensing::Sensing;
use crate::run::session::{
    configured_params, dry_run, loop_config, planner_estimation, print_estimator, print_header,
    print_plant_center_of_mass, try_realtime, wired_plant, Run,
};
use nalgebra::SVector;
use settings::StrideMpcSettings;
use softgen_runtime::{
    ActuatorCommand, Model, OutputChain, State, Steering, SteeringPhase, SteeringProgress, StrideChoice, StrideLink,
    StrideSnapshot, StrideSteering,
};
use std::sync::Arc;

pub(crate) mod settings;

impl Run<'_> {
    /// The stride planner steering a limbed robot to a goal: its paper's strides (whole
    /// cycles of its gaits), each chosen in the planner thread a lead before its cycle from
    /// the measured state (the simulated plant's, true or estimated, or the robot's
    /// estimate), played by the loop through the output chain.
    pub(crate) fn run_stride_mpc<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: StrideMpcSettings,
    ) -> Result<RunReport, String> {
        let o = self.options;
        let make = self
            .driver
            .and_then(|d| d.stride_mpc)
            .ok_or_else(|| format!("{path}: solver = \"strides\", but no paper registers strides for `{}`", R::NAME))?;
        let muscles = R::MUSCLES.len();
        if const { !R::ACTUATED.is_empty() || !R::THRUSTERS.is_empty() } {
            return Err(format!("`{}` has actuators besides its muscles, which no stride drives", R::NAME));
        }
        let request = StrideMpcRequest {
            goal: settings.goal,
            parameters: &config.parameters,
            ceiling: config.safety.pressure_ceiling,
        };
        let StrideMpc { strides, initial, cycle, settle, decision_period, pressures, mut planner, description } =
            make(&request)?;
        let decision_period = settings.replan_hz.map_or(decision_period, |rate| 1.0 / rate);
        // A plan has the whole decision period unless told otherwise, a quarter cycle at
        // most when decisions come once a cycle.
        let lead = settings.lead.unwrap_or(decision_period.min(0.25 * cycle));
        let on_robot = o.on_robot();
        let loop_config = loop_config(o, &config)?;
        let period = 1.0 / loop_config.rate_hz;
        let params = configured_params::<R, N, C>(&config)?;
        let steering_config = softgen_runtime::StrideSteeringConfig {
            goal: settings.goal,
            arrival_radius: settings.arrival_radius,
            hold: settings.hold,
            cycle,
            decision_period,
            first_cycle: settle,
            lead,
            initial,
            strides: strides.len(),
        };
        let steering = StrideSteering::<R, N, C>::new(params.clone(), steering_config, period)
            .map_err(|e| format!("{path}: mpc: {e}"))?;
        let estimation = planner_estimation::<R, N, C>(o, &config, &path, &loop_config)?;
        let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let start_com = R::center_of_mass(&start.q, &params, &R::cache(&start.q, &params)).xy();
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuators: Vec<&str> = R::MUSCLES.iter().map(|m| m.name).collect();
        let controller_line = format!(
            "mpc: stride planner from ({:.3}, {:.3}) to ({:.3}, {:.3}) m (centre of mass); {description}; {} s cycles, a stride decided every {} s ({} Hz), each planned {} s ahead, after {} s of {}",
            start_com.x, start_com.y, settings.goal.x, settings.goal.y, cycle, decision_period, 1.0 / decision_period, lead, settle, strides[initial]
        );
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &actuators);
        if let Some((sensors, _, filter)) = &estimation {
            print_estimator(sensors, filter.step(), on_robot);
        }
        let mut buffer = vec![0.0; muscles];
        if o.dry_run {
            println!("dry run: the mpc controller needs the robot's state, so these are the commands while it settles");
            let mut controller = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
                pressures(initial, t, &mut buffer)?;
                for (c, p) in commands.iter_mut().zip(&buffer) {
                    *c = ActuatorCommand::Pressure(*p);
                }
                Ok(())
            };
            return dry_run(&mut chain, &mut controller, &[0.0, period], period, ActuatorCommand::Pressure(0.0));
        }
        if o.realtime {
            try_realtime();
        }
        let link = Arc::new(StrideLink::<N>::new());
        let measured = Arc::clone(&link);
        let plant = || wired_plant::<R, N, C>(&config, &loop_config, &path);
        let sensed = Sensing::new(o, &config, &path, estimation, muscles, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let link = &*link;
        let plan_stride = |snapshot: &StrideSnapshot<N>| {
            planner(&StrideRequest {
                time: snapshot.time,
                q: snapshot.state.q.as_slice(),
                qd: snapshot.state.qd.as_slice(),
                reached: &snapshot.reached[..muscles],
                current: snapshot.current,
                current_start: snapshot.current_start,
                boundary: snapshot.boundary,
            })
        };
        // A plan slower than the lead is late for its decision: that is the overrun.
        let plan = || softgen_runtime::run_stride_planner(link, 1.0 / lead, plan_stride);
        let mut played_strides = PlayedStrides { steering, pressures: &*pressures };
        let task =
            SteeredTask { goal: settings.goal, goal_height: None, start_distance: (start_com - settings.goal).norm() };
        let steered = self.steer(&loop_config, &mut chain, sensed, link, plan, &mut played_strides, task)?;
        print_plant_center_of_mass::<R, N, C>(steered.end.as_ref(), &params);
        let played: Vec<String> = strides
            .iter()
            .zip(&played_strides.steering.periods_played)
            .filter(|(_, k)| **k > 0)
            .map(|(name, k)| format!("{name} {:.2}", *k as f64 * decision_period))
            .collect();
        println!(
            "strides     {} (seconds played); {} decisions had no plan in time ({} plans one decision late taken at the next)",
            played.join(", "),
            played_strides.steering.late_plans,
            played_strides.steering.late_plans_taken
        );
        Ok(steered.report())
    }
}

/// The stride steering with the pressures of the strides it plays: the controller the loop
/// drives.
struct PlayedStrides<'a, R: Model<N, C>, const N: usize, const C: usize> {
    steering: StrideSteering<R, N, C>,
    /// Commanded pressures (bar) of a stride some seconds into its cycle.
    pressures: &'a (dyn Fn(usize, f64, &mut [f64]) -> Result<(), String> + Send),
}

impl<R: Model<N, C>, const N: usize, const C: usize> Steering<N> for PlayedStrides<'_, R, N, C> {
    type Snapshot = StrideSnapshot<N>;
    type Plan = StrideChoice;

    fn command(
        &mut self,
        link: &StrideLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        self.steering.command(link, t, commands, self.pressures)
    }

    /// The muscles' pressures held.
    fn hold(&self, held: &[f64], commands: &mut [ActuatorCommand]) {
        for (command, pressure) in commands.iter_mut().zip(held) {
            *command = ActuatorCommand::Pressure(*pressure);
        }
    }

    fn progress(&self) -> SteeringProgress {
        let steering = &self.steering;
        SteeringProgress { phase: steering.phase, distance: steering.distance, plans_applied: steering.plans_applied }
    }
}
