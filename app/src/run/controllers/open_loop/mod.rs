//! Open-loop control: the robot's own gait (a serpenoid wave, a paper's limb gait, a valve
//! wave) or a paper's swimming inputs, sent through the output chain without a planner. Each
//! open-loop controller is an [`OpenLoop`]; one run ([`Run::run_open_loop`]) sends any of them
//! to the device the options choose.

use crate::run::config::{Drives, RunConfig};
use crate::run::driver::{LimbController, LimbGaitRequest};
use crate::run::request::RunReport;
use crate::run::session::{
    actuators, configured_params, dry_run, loop_config, print_header, print_plant_center_of_mass, run_on_plant,
    run_real_device, simulated_plant, try_realtime, valve_plant, wired_plant, Run, ValveStart,
};
use nalgebra::SVector;
use softgen_runtime::{
    write_valve_commands, ActuatorCommand, EmulatingPlant, LoopConfig, Model, OutputChain, Serpenoid, SteeredValveWave,
};

/// An open-loop controller and how a run shows it.
pub(crate) struct OpenLoop<'a, F> {
    /// The header's line saying what is sent.
    pub(crate) line: String,
    /// The actuators' names, in channel order.
    pub(crate) actuators: Vec<&'a str>,
    /// The commands at each time.
    pub(crate) controller: F,
    /// What a dry run says before the commands it prints, if anything.
    pub(crate) dry_run_note: Option<&'static str>,
    /// The times whose commands a dry run prints (s).
    pub(crate) dry_run_times: Vec<f64>,
    /// A command before the controller fills it in.
    pub(crate) rest: ActuatorCommand,
}

impl Run<'_> {
    /// `open_loop` through the output chain to the device the options choose: nowhere (a dry
    /// run), a comedi card, a serial board, or the simulated `plant`, whose final coordinates
    /// `print_end` reports.
    pub(crate) fn run_open_loop<R, P, F, const N: usize, const C: usize>(
        self,
        config: &RunConfig,
        path: &str,
        loop_config: &LoopConfig,
        open_loop: OpenLoop<'_, F>,
        plant: impl FnOnce() -> Result<P, String>,
        print_end: impl FnOnce(Option<&SVector<f64, N>>),
    ) -> Result<RunReport, String>
    where
        R: Model<N, C>,
        P: EmulatingPlant<R, N, C>,
        F: FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
    {
        let o = self.options;
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        print_header(R::NAME, path, loop_config, &open_loop.line, &config.channels, &open_loop.actuators);
        let mut controller = open_loop.controller;
        if o.dry_run {
            if let Some(note) = open_loop.dry_run_note {
                println!("{note}");
            }
            let dt = 1.0 / loop_config.rate_hz;
            return dry_run(&mut chain, &mut controller, &open_loop.dry_run_times, dt, open_loop.rest);
        }
        if o.realtime {
            try_realtime();
        }
        if let Some(report) =
            run_real_device(o, &config.channels, loop_config, &mut chain, &self.stop, &mut controller)?
        {
            return Ok(report);
        }
        // Hardware in the loop: the generated model behind the same chain.
        let (report, end) = run_on_plant::<R, P, N, C>(plant()?, o, loop_config, &mut chain, &self.stop, controller)?;
        print_end(end.as_ref());
        Ok(report)
    }

    /// A robot driven by pressure-regulated muscles: its paper's limb gait's pressures; on the
    /// simulated plant the muscles read the regulators' voltages back.
    pub(crate) fn run_limb_gait<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        let limb_gait = self
            .driver
            .and_then(|d| d.limb_gait)
            .ok_or_else(|| format!("robot `{}` has muscles, but no paper registers a limb gait for it", R::NAME))?;
        let request = LimbGaitRequest {
            gait: o.limb_gait.as_deref(),
            stride: o.stride,
            frequency: o.gait_frequency,
            first_muscle: R::ACTUATED.len(),
        };
        let LimbController { controller, description, dry_run_at } = limb_gait(&request)?;
        let loop_config = loop_config(o, &config)?;
        let open_loop = OpenLoop {
            line: format!("{description}; ceiling {} bar", config.safety.pressure_ceiling),
            actuators: R::ACTUATED
                .iter()
                .map(|&i| R::COORDINATES[i].name)
                .chain(R::MUSCLES.iter().map(|m| m.name))
                .collect(),
            controller,
            dry_run_note: Some("dry run: the commands a quarter cycle into the gait, no device touched"),
            dry_run_times: vec![dry_run_at],
            rest: ActuatorCommand::Pressure(0.0),
        };
        let params = configured_params::<R, N, C>(&config)?;
        let plant = || wired_plant::<R, N, C>(&config, &loop_config, &path);
        let print_end = |end: Option<&SVector<f64, N>>| print_plant_center_of_mass::<R, N, C>(end, &params);
        self.run_open_loop::<R, _, _, N, C>(&config, &path, &loop_config, open_loop, plant, print_end)
    }

    /// A swimming robot: its paper's named inputs held from the start, thrusts to the
    /// thrusters' channels and water pressures to the joints' regulators; on the simulated
    /// plant the thrusters and muscles read them back.
    pub(crate) fn run_swimming_inputs<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        let held_inputs = self
            .driver
            .and_then(|d| d.held_inputs)
            .ok_or_else(|| format!("robot `{}` swims, but no paper registers its swimming inputs (--swim)", R::NAME))?;
        let swim = held_inputs(o.swim.as_deref())?;
        let (joints, muscles, thrusters) = (R::ACTUATED.len(), R::MUSCLES.len(), R::THRUSTERS.len());
        if swim.pressures.len() != muscles || swim.thrusts.len() != thrusters {
            return Err(format!(
                "--swim sets {} pressures and {} thrusts; `{}` has {muscles} muscles and {thrusters} thrusters",
                swim.pressures.len(),
                swim.thrusts.len(),
                R::NAME
            ));
        }
        if joints > 0 {
            return Err(format!(
                "`{}` has joint actuators besides its thrusters, which no swimming input drives",
                R::NAME
            ));
        }
        let loop_config = loop_config(o, &config)?;
        let line =
            format!("{} held: thrusts {:?} N, joint pressures {:?} MPa", swim.name, swim.thrusts, swim.pressures);
        let held = swim.clone();
        // The first period sends zeros, so the safety filter's rate limits ramp every input
        // up from rest (it limits changes from the last command sent).
        let first = 1.0 / loop_config.rate_hz;
        let controller = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            let on = if t < 0.5 * first { 0.0 } else { 1.0 };
            for (j, c) in commands.iter_mut().enumerate() {
                *c = match j < muscles {
                    // MPa to bar.
                    true => ActuatorCommand::Pressure(on * 10.0 * held.pressures[j]),
                    false => ActuatorCommand::Thrust(on * held.thrusts[j - muscles]),
                };
            }
            Ok(())
        };
        let open_loop = OpenLoop {
            line,
            actuators: R::MUSCLES.iter().map(|m| m.name).chain(R::THRUSTERS.iter().map(|t| t.name)).collect(),
            controller,
            dry_run_note: Some(
                "dry run: the first three periods' commands (zeros, then ramping under the rate limits), no device touched",
            ),
            dry_run_times: vec![0.0, first, 2.0 * first],
            rest: ActuatorCommand::Thrust(0.0),
        };
        let plant = || wired_plant::<R, N, C>(&config, &loop_config, &path);
        let print_end = |end: Option<&SVector<f64, N>>| {
            if let Some((x, y, z, yaw)) = end.map(|q| (q[0], q[1], q[2], q[3])) {
                println!("plant       base at ({x:.3}, {y:.3}, {z:.3}) m, yaw {yaw:.3} rad");
            }
        };
        self.run_open_loop::<R, _, _, N, C>(&config, &path, &loop_config, open_loop, plant, print_end)
    }

    /// A robot whose joints follow a serpenoid gait: the joints' set points of `gait`.
    pub(crate) fn run_serpenoid_gait<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        gait: Serpenoid,
        actuated: &[(&str, Drives)],
    ) -> Result<RunReport, String> {
        let o = self.options;
        let servo = R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait to run", R::NAME))?.servo();
        let loop_config = loop_config(o, &config)?;
        let dt = 1.0 / loop_config.rate_hz;
        let open_loop = OpenLoop {
            line: format!(
                "gait: A = {} rad, omega = {} rad/s, eta = {} rad, offset = {} rad",
                gait.amplitude, gait.temporal_frequency, gait.spatial_frequency, gait.offset
            ),
            actuators: actuated.iter().map(|a| a.0).collect(),
            controller: serpenoid_controller(gait),
            dry_run_note: Some("dry run: first commands, no device touched"),
            dry_run_times: (0..5).map(|k| k as f64 * dt).collect(),
            rest: ActuatorCommand::Valve(false),
        };
        let plant = || Ok(simulated_plant::<R, N, C>(&config, &loop_config, servo, 0.002)?.1);
        self.run_open_loop::<R, _, _, N, C>(&config, &path, &loop_config, open_loop, plant, |_| {})
    }

    /// A valve-driven robot's valve wave (the spec's `[gait]`, `--temporal-frequency` and
    /// `--offset` in its place): each valve pair's state to its digital line and the supply
    /// pressure to its regulator. On the simulated plant the valves' coordinates follow their
    /// responses to the lines and the supply.
    pub(crate) fn run_valve_wave<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        start: ValveStart<R::Params>,
    ) -> Result<RunReport, String> {
        let o = self.options;
        let loop_config = loop_config(o, &config)?;
        let period = 1.0 / loop_config.rate_hz;
        let steered = SteeredValveWave::new(start.delay, 0.0, start.initial);
        let units_per_bar = start.supply.units_per_bar;
        let open_loop = OpenLoop {
            line: format!("valve wave: {}", start.wave_line()),
            actuators: actuators::<R, N, C>().iter().map(|(name, _)| *name).collect(),
            controller: move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
                write_valve_commands(&steered, t, units_per_bar, commands);
                Ok(())
            },
            dry_run_note: None,
            dry_run_times: vec![0.0, period],
            rest: ActuatorCommand::Valve(false),
        };
        let plant = || valve_plant::<R, N, C>(&config, &loop_config, &path);
        let print_end = |end: Option<&SVector<f64, N>>| print_plant_center_of_mass::<R, N, C>(end, &start.params);
        self.run_open_loop::<R, _, _, N, C>(&config, &path, &loop_config, open_loop, plant, print_end)
    }
}

/// The joints' set points of `gait`, every period.
pub(crate) fn serpenoid_controller(
    gait: Serpenoid,
) -> impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String> + Send + 'static {
    move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
        for (j, c) in commands.iter_mut().enumerate() {
            *c = ActuatorCommand::JointAngle(gait.joint(t, j, gait.spatial_frequency).0);
        }
        Ok(())
    }
}
