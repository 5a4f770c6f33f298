//! `softgen run`: a robot's gait, or the model-predictive controller steering it to a goal,
//! through the output chain to a device at a fixed rate: the simulated plant (hardware in
//! the loop), a serial board, a comedi card or, with `--dry-run`, nowhere (the channel map
//! and the first commands are printed and no device is touched).

use crate::hardware::config::{Drives, PlantIntegratorName, RunConfig, SensorEntry};
use crate::hardware::controllers::box_ddp::settings::DdpMpcSettings;
use crate::hardware::controllers::gait_steering::settings::MpcSettings;
use crate::hardware::controllers::strides::settings::StrideMpcSettings;
use crate::hardware::controllers::PlannerSettings;
use crate::hardware::driver::{
    LimbController, LimbGaitRequest, RunDriver, ScheduledMpc, StrideMpc, StrideMpcRequest, StrideRequest,
};
use crate::hardware::estimation::{configured_sensors, EstimatorReport};
use crate::hardware::outputs::{finish, open_comedi, recorded_plant, trajectory_writer};
use crate::hardware::request::{ControllerChoice, MpcReport, PlantSetting, RunOptions, RunReport, StateSource};
use crate::hardware::sensing::Sensing;
use crate::support::output::PendingFile;
use nalgebra::{SVector, Vector2, Vector3};
use softgen_runtime::{
    run_hardware, run_horizon_planner, run_planner, run_scheduled_planner, run_valve_planner, write_valve_commands,
    ActuatorCommand, ControlInput, CoordinateKind, DdpSettings, Device, DeviceError, DeviceValue, GaitParameters,
    GaitPlanner, GoalSteering, GoalWeights, HorizonSettings, LoopConfig, Model, OutputChain, PlanFollower, PlanLink,
    PlannerStats, RecedingHorizon, Recorder, Recording, SafetyFault, Serpenoid, SimulatedPlant, Simulation,
    SimulationConfig, State, StateEstimator, SteeredValveWave, SteeringConfig, SteeringLink, SteeringPhase,
    ValveDecisions, ValveLink, ValvePlanner, ValvePlant, ValveSteering, ValveSteeringConfig, ValveWiring,
    STOP_FINISHED,
};
use softgen_runtime::{CommandSchedule, KnotIntegrator, PlaneOfMotion, Tolerances, MAX_SCHEDULE_STATES};
use softgen_runtime::{RobotVisitor, RunConfigFile};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// `softgen run`, compiled for each robot by [`App`](crate::App).
pub(crate) struct Run<'a> {
    pub(crate) options: &'a RunOptions,
    pub(crate) stop: Arc<AtomicUsize>,
    pub(crate) driver: Option<&'a RunDriver>,
    /// The robot's own run configuration, if it has one.
    pub(crate) run_config: Option<RunConfigFile>,
}

/// Prints what would reach a device.
struct Printer {
    periods: usize,
}

impl Device for Printer {
    fn name(&self) -> &str {
        "dry run"
    }
    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        self.periods += 1;
        let text: Vec<String> =
            values.iter().map(|v| format!("{} {} = {:.4}", v.kind(), v.channel(), v.number())).collect();
        println!("  t = {t:.4} s: {}", text.join(", "));
        Ok(())
    }
}

fn try_realtime() {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    match mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE) {
        Ok(()) => println!("memory      locked (mlockall)"),
        Err(e) => println!("memory      not locked: mlockall failed ({e}); page faults may cause deadline misses"),
    }
    use thread_priority::{
        set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadPriority,
        ThreadSchedulePolicy,
    };
    let policy = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    match set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Max, policy) {
        Ok(()) => println!("scheduling  SCHED_FIFO at maximum priority"),
        Err(e) => println!(
            "scheduling  normal: SCHED_FIFO was refused ({e:?}); run as root or grant CAP_SYS_NICE / an rtprio limit"
        ),
    }
}

impl Run<'_> {
    /// A robot driven by pressure-regulated muscles: the limb gait's pressures through the
    /// output chain to a comedi card, a serial board or the simulated plant, whose muscles
    /// read the regulators' voltages back.
    fn run_muscles<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        if o.amplitude.is_some()
            || o.temporal_frequency.is_some()
            || o.spatial_frequency.is_some()
            || o.offset.is_some()
        {
            return Err(format!("--amplitude, --temporal-frequency, --spatial-frequency and --offset set a serpenoid gait; `{}` runs a limb gait (--limb-gait, --stride, --gait-frequency)", R::NAME));
        }
        if matches!(o.controller, ControllerChoice::Mpc) {
            if o.limb_gait.is_some() || o.stride.is_some() || o.gait_frequency.is_some() {
                return Err("--limb-gait, --stride and --gait-frequency set the open-loop gait; the mpc controller plans the pressures (with solver = \"strides\", the gait cycles)".into());
            }
            let box_ddp = || Ok(PlannerSettings::BoxDdp(DdpMpcSettings::default()));
            return match configured_planner(&config, &path, o, R::NAME, box_ddp)? {
                PlannerSettings::Strides(settings) => self.run_stride_mpc::<R, N, C>(config, path, settings),
                // The muscles' 1 ms step: a limbed robot's contacts need it.
                PlannerSettings::BoxDdp(settings) => {
                    self.run_horizon_mpc::<R, N, C>(config, path, settings, 0.001, None)
                }
                other => Err(planner_mismatch(&path, &other, R::NAME)),
            };
        }
        if o.goal.is_some() {
            return Err("--goal is the mpc controller's: add --controller mpc".into());
        }
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
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuators: Vec<&str> =
            R::ACTUATED.iter().map(|&i| R::COORDINATES[i].name).chain(R::MUSCLES.iter().map(|m| m.name)).collect();
        let controller_line = format!("{description}; ceiling {} bar", config.safety.pressure_ceiling);
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &actuators);
        let mut controller = controller;
        if o.dry_run {
            println!("dry run: the commands a quarter cycle into the gait, no device touched");
            return dry_run(
                &mut chain,
                &mut controller,
                &[dry_run_at],
                1.0 / loop_config.rate_hz,
                ActuatorCommand::Pressure(0.0),
            );
        }
        if o.realtime {
            try_realtime();
        }
        if let Some(report) =
            run_real_device(o, &config.channels, &loop_config, &mut chain, &self.stop, &mut controller)?
        {
            return Ok(report);
        }
        let plant = wired_plant::<R, N, C>(&config, &loop_config, &path)?;
        let (report, end) = run_on_plant(plant, o, &loop_config, &mut chain, &self.stop, controller)?;
        print_plant_center_of_mass::<R, N, C>(end.as_ref(), &configured_params::<R, N, C>(&config)?);
        Ok(report)
    }
}

impl Run<'_> {
    /// A swimming robot: its driver's named inputs held from the start, thrusts to the thrusters' channels and water pressures to the joints'
    /// regulators, through the output chain to a serial board or the simulated plant, whose
    /// thrusters and muscles read them back.
    fn run_swimmer<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        if o.amplitude.is_some()
            || o.temporal_frequency.is_some()
            || o.spatial_frequency.is_some()
            || o.offset.is_some()
            || o.limb_gait.is_some()
            || o.stride.is_some()
            || o.gait_frequency.is_some()
        {
            return Err(format!("`{}` swims: choose its inputs with --swim; the gait options do not apply", R::NAME));
        }
        if matches!(o.controller, ControllerChoice::Mpc) {
            if o.swim.is_some() {
                return Err("--swim holds inputs; the mpc controller plans them".into());
            }
            let box_ddp = || Ok(PlannerSettings::BoxDdp(DdpMpcSettings::default()));
            return match configured_planner(&config, &path, o, R::NAME, box_ddp)? {
                // RK4 at 0.25 ms: the joints' viscosity at rest is stiff.
                PlannerSettings::BoxDdp(settings) => {
                    self.run_horizon_mpc::<R, N, C>(config, path, settings, 0.00025, None)
                }
                other => Err(planner_mismatch(&path, &other, R::NAME)),
            };
        }
        if o.goal.is_some() {
            return Err("--goal is the mpc controller's: add --controller mpc".into());
        }
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
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuators: Vec<&str> =
            R::MUSCLES.iter().map(|m| m.name).chain(R::THRUSTERS.iter().map(|t| t.name)).collect();
        let controller_line =
            format!("{} held: thrusts {:?} N, joint pressures {:?} MPa", swim.name, swim.thrusts, swim.pressures);
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &actuators);
        let held = swim.clone();
        // The first period sends zeros, so the safety filter's rate limits ramp every input
        // up from rest (it limits changes from the last command sent).
        let first = 1.0 / loop_config.rate_hz;
        let mut controller = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
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
        if o.dry_run {
            println!("dry run: the first three periods' commands (zeros, then ramping under the rate limits), no device touched");
            return dry_run(
                &mut chain,
                &mut controller,
                &[0.0, first, 2.0 * first],
                first,
                ActuatorCommand::Thrust(0.0),
            );
        }
        if o.realtime {
            try_realtime();
        }
        if let Some(report) =
            run_real_device(o, &config.channels, &loop_config, &mut chain, &self.stop, &mut controller)?
        {
            return Ok(report);
        }
        let plant = wired_plant::<R, N, C>(&config, &loop_config, &path)?;
        let (report, end) = run_on_plant(plant, o, &loop_config, &mut chain, &self.stop, controller)?;
        if let Some((x, y, z, yaw)) = end.map(|q| (q[0], q[1], q[2], q[3])) {
            println!("plant       base at ({x:.3}, {y:.3}, {z:.3}) m, yaw {yaw:.3} rad");
        }
        Ok(report)
    }
}

impl Run<'_> {
    /// A valve-driven robot: its valve wave (the spec's `[gait]`, `--temporal-frequency`
    /// and `--offset` in its place) or the valve sampler steering the wave to a goal, each
    /// valve pair's state to its digital line and the supply pressure to its regulator,
    /// through the output chain to a device. On the simulated plant the valves' coordinates
    /// follow their responses to the lines and the supply.
    fn run_valves<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        use softgen_runtime::ParamSet;
        let o = self.options;
        if o.amplitude.is_some()
            || o.spatial_frequency.is_some()
            || o.limb_gait.is_some()
            || o.stride.is_some()
            || o.gait_frequency.is_some()
        {
            return Err(format!(
                "`{}` is driven by a valve wave: --temporal-frequency (rad/s) and --offset set it; the other gait options do not apply",
                R::NAME
            ));
        }
        let mpc = matches!(o.controller, ControllerChoice::Mpc);
        let on_robot = o.serial_port.is_some() || o.comedi_device.is_some();
        // On the robot the planner's state can only be estimated.
        let estimated = mpc && (on_robot || o.state == StateSource::Estimated);
        if !mpc && o.goal.is_some() {
            return Err("--goal is the mpc controller's: add --controller mpc".into());
        }
        if mpc && (o.temporal_frequency.is_some() || o.offset.is_some()) {
            return Err(
                "--temporal-frequency and --offset set the open-loop wave; the mpc controller plans them".into()
            );
        }
        let supply =
            config.valve_supply.clone().ok_or_else(|| format!("{path}: `{}` needs a [valves] table", R::NAME))?;
        let wave = R::VALVE_GAIT.ok_or_else(|| {
            format!("robot `{}` declares no valve wave ([gait] kind = \"travelling_wave_valves\")", R::NAME)
        })?;
        let params = configured_params::<R, N, C>(&config)?;
        let index = <R::Params as ParamSet>::names().iter().position(|n| *n == supply.parameter).ok_or_else(|| {
            format!("{path}: valves.supply_parameter: `{}` is not a parameter of `{}`", supply.parameter, R::NAME)
        })?;
        // A supply that moves no valve's response would decide nothing.
        softgen_runtime::ValveGains::<R, N, C>::new(&params, &supply.parameter)
            .map_err(|e| format!("{path}: valves.supply_parameter: {e}"))?;
        let initial = ValveDecisions {
            pressure: params.get(index),
            frequency: o.temporal_frequency.unwrap_or(wave.temporal_frequency) / std::f64::consts::TAU,
            offset: o.offset.unwrap_or(wave.offset),
        };
        if !(initial.frequency.is_finite() && initial.frequency > 0.0 && initial.offset.is_finite()) {
            return Err(format!(
                "the valve wave needs a temporal frequency above 0 rad/s and a finite offset, got {} rad/s and {}",
                initial.frequency * std::f64::consts::TAU,
                initial.offset
            ));
        }
        let valves = R::VALVES.len();
        // The plant's wiring, checked before a dry run too.
        valve_wiring(&config.channels, valves, supply.units_per_bar, &path)?;
        let bounds_needed =
            || Err(format!("{path} has no [mpc] table: the valve sampler needs its bounds there (noise, min, max)"));
        let settings = match mpc {
            false => None,
            true => match configured_planner(&config, &path, o, R::NAME, bounds_needed)? {
                PlannerSettings::ValveSampling(settings) => Some(settings),
                other => return Err(planner_mismatch(&path, &other, R::NAME)),
            },
        };
        let loop_config = loop_config(o, &config)?;
        let period = 1.0 / loop_config.rate_hz;
        // The estimator (its settings and sensors checked before a dry run too).
        let estimation = match estimated {
            true => Some(state_estimator::<R, N, C>(&config, &path, &loop_config, on_robot)?),
            false => None,
        };
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuated = actuators::<R, N, C>();
        let names: Vec<&str> = actuated.iter().map(|(name, _)| *name).collect();
        let wave_line = format!(
            "{:.3} Hz, offset {:.3}, supply {} = {} ({:.3} bar)",
            initial.frequency,
            initial.offset,
            supply.parameter,
            initial.pressure,
            initial.pressure / supply.units_per_bar
        );
        let controller_line = match &settings {
            None => format!("valve wave: {wave_line}"),
            Some(s) => format!(
                "mpc: valve sampling to ({}, {}) m (centre of mass), {} rollouts of {} s every {} ms ({} Hz); starting wave {wave_line}",
                s.goal.x,
                s.goal.y,
                s.samples,
                s.horizon,
                1e3 / s.replan_hz,
                s.replan_hz
            ),
        };
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &names);
        if let Some((sensors, _, filter)) = &estimation {
            print_estimator(sensors, filter.step(), on_robot);
        }
        let steered = SteeredValveWave::new(wave.delay, 0.0, initial);
        let units_per_bar = supply.units_per_bar;
        let mut open_loop = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            write_valve_commands(&steered, t, units_per_bar, commands);
            Ok(())
        };
        if o.dry_run {
            if settings.is_some() {
                println!(
                    "dry run: the mpc controller needs the plant's state, so these are the starting wave's commands"
                );
            }
            return dry_run(&mut chain, &mut open_loop, &[0.0, period], period, ActuatorCommand::Valve(false));
        }
        if o.realtime {
            try_realtime();
        }
        if settings.is_none() {
            if let Some(report) =
                run_real_device(o, &config.channels, &loop_config, &mut chain, &self.stop, &mut open_loop)?
            {
                return Ok(report);
            }
        }
        let plant_config = plant_simulation_config::<R, N, C>(&config, &loop_config, no_servo());
        let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let stop = &*self.stop;
        let Some(settings) = settings else {
            let plant = valve_plant::<R, N, C>(&config, &loop_config, &path)?;
            let (mut device, pending_record, pending_trajectory) = recorded_plant(plant, o, |_, _| {})?;
            let (outcome, safe) = run_hardware(&loop_config, &mut chain, &mut device, stop, open_loop);
            let plant = device.into_inner();
            let end = plant.as_ref().ok().map(|p| p.state.q);
            let report = finish(outcome, safe, &chain, plant.map(drop), pending_record, Some(pending_trajectory))?;
            print_plant_center_of_mass::<R, N, C>(end.as_ref(), &params);
            return Ok(report);
        };
        let start_com = R::center_of_mass(&start.q, &params, &R::cache(&start.q, &params)).xy();
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
        let (mut device, mut sensing) = Sensing::new(o, &config, &path, estimation, valves + 1, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let link = &*link;
        let (outcome, safe, planner_stats) = loop_with_planner(
            &loop_config,
            &mut chain,
            &mut device,
            stop,
            &link.stop,
            || run_valve_planner(&mut planner, link, settings.replan_hz),
            |t, commands| {
                if let Some(held) = sensing.sense(t, &link.measured)? {
                    // An estimator fault: the last safe commands (valve states, then the
                    // supply in bar), held.
                    let (supply, states) = commands.split_last_mut().expect("valve commands end with the supply");
                    for (command, state) in states.iter_mut().zip(held) {
                        *command = ActuatorCommand::Valve(*state > 0.0);
                    }
                    *supply = ActuatorCommand::Pressure(held[valves]);
                    return Ok(steering.phase);
                }
                let phase = steering.command(link, t, commands)?;
                sensing.sent(commands, period)?;
                Ok(phase)
            },
        );
        let planner_stats = planner_stats?;
        let (run, end, estimator_report) = sensing.finish(device, outcome, safe, &chain)?;
        print_plant_center_of_mass::<R, N, C>(end.as_ref(), &params);
        let report = MpcReport {
            goal: settings.goal,
            goal_height: None,
            planner: planner_stats,
            plans_applied: steering.plans_applied,
            arrived_at: steering.phase.arrived_at(),
            held: matches!(steering.phase, SteeringPhase::Finished { .. }),
            final_distance: steering.distance,
            start_distance: (start_com - settings.goal).norm(),
        };
        Ok(mpc_run_report(run, report, estimator_report))
    }
}

/// The simulated plant of a valve robot as its run configuration wires it, from the spec's
/// initial state: RK4 at the loop's period or 3.5 ms, whichever is shorter (the WPI snake's
/// model agrees with 0.5 ms steps within 0.032 % of its speeds and radii at 3.5 ms, its
/// paper's experiments).
pub(crate) fn valve_plant<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    loop_config: &LoopConfig,
    path: &str,
) -> Result<ValvePlant<R, N, C>, String> {
    let supply = config.valve_supply.as_ref().ok_or_else(|| format!("{path}: `{}` needs a [valves] table", R::NAME))?;
    let wiring = valve_wiring(&config.channels, R::VALVES.len(), supply.units_per_bar, path)?;
    let plant_config = plant_simulation_config::<R, N, C>(config, loop_config, no_servo());
    let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let simulation = Simulation::new(configured_params::<R, N, C>(config)?, plant_config)?;
    ValvePlant::<R, N, C>::new(simulation, start, valve_plant_step(loop_config), &supply.parameter, wiring)
        .map_err(|e| format!("{path}: {e}"))
}

/// The valve plant's RK4 step, which the estimator's process model takes too: the loop's
/// period or 3.5 ms, whichever is shorter.
fn valve_plant_step(loop_config: &LoopConfig) -> f64 {
    (1.0 / loop_config.rate_hz).min(3.5e-3)
}

/// The simulated plant's wiring of a valve robot's channels: a valve channel per valve pair,
/// then the supply's pressure regulator (the actuators' order).
fn valve_wiring(
    channels: &[softgen_runtime::Channel],
    valves: usize,
    units_per_bar: f64,
    path: &str,
) -> Result<ValveWiring, String> {
    use softgen_runtime::Channel;
    let lines = channels[..valves]
        .iter()
        .map(|c| match c {
            Channel::Valve { line, active_high } => Ok((*line, *active_high)),
            other => {
                Err(format!("{path}: the simulated plant reads each valve pair from a valve channel, not {other:?}"))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Some(Channel::PressureRegulator { channel, map, .. }) = channels.get(valves) else {
        return Err(format!("{path}: the simulated plant reads the valves' supply from a pressure regulator channel"));
    };
    Ok(ValveWiring { lines, supply_channel: *channel, supply_map: map.clone(), units_per_bar })
}

/// The plant's last line for a robot on the ground: where its centre of mass ended, in the
/// ground plane.
fn print_plant_center_of_mass<R: Model<N, C>, const N: usize, const C: usize>(
    end: Option<&SVector<f64, N>>,
    params: &R::Params,
) {
    if let Some(q) = end {
        let com = R::center_of_mass(q, params, &R::cache(q, params));
        println!("plant       centre of mass at ({:.3}, {:.3}) m", com.x, com.y);
    }
}

/// Joints left free (no servo): robots driven otherwise.
fn no_servo() -> softgen_runtime::JointPd {
    softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 }
}

impl Run<'_> {
    /// Box-DDP model-predictive control of a robot driven by pressures and thrusts (muscles,
    /// then thrusters, the actuators' order), or with `wave`, of a robot whose servo joints
    /// follow its gait's travelling wave, whose parameters the plans decide: the planner
    /// re-plans over the same model in its own thread, the loop follows the newest plan on
    /// the simulated plant. The plant is stepped by RK4 at the loop's period or
    /// `plant_step`, whichever is shorter.
    fn run_horizon_mpc<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: DdpMpcSettings,
        plant_step: f64,
        wave: Option<ScheduledMpc>,
    ) -> Result<RunReport, String> {
        let o = self.options;
        // On the robot the state can only be estimated.
        let on_robot = o.serial_port.is_some() || o.comedi_device.is_some();
        let (muscles, thrusters) = (R::MUSCLES.len(), R::THRUSTERS.len());
        // Servo joints follow a planned wave, or nothing box-DDP plans.
        let joints = match &wave {
            Some(_) => R::ACTUATED.len(),
            None if const { R::ACTUATED.is_empty() } => 0,
            None => {
                return Err(format!(
                    "`{}` has servo joints besides its muscles and thrusters, which box-DDP does not plan",
                    R::NAME
                ))
            }
        };
        let servo = match wave.is_some() {
            true => R::GAIT.ok_or_else(|| format!("`{}` declares no gait to plan", R::NAME))?.servo(),
            false => no_servo(),
        };
        let scheduled = match (wave, self.driver.and_then(|d| d.scheduled_mpc)) {
            (Some(wave), _) => Some(wave),
            (None, Some(make)) => Some(make()?),
            (None, None) => None,
        };
        let loop_config = loop_config(o, &config)?;
        let plant_config = plant_simulation_config::<R, N, C>(&config, &loop_config, servo);
        let params = configured_params::<R, N, C>(&config)?;
        let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let start_com = R::center_of_mass(&start.q, &params, &R::cache(&start.q, &params));
        let goal = Vector3::new(settings.goal.x, settings.goal.y, settings.goal_height.unwrap_or(start_com.z));
        let estimated = on_robot || o.state == StateSource::Estimated;
        let (sensors, sources, filter) = match estimated {
            true => {
                let (sensors, sources, filter) = state_estimator::<R, N, C>(&config, &path, &loop_config, on_robot)?;
                (sensors, sources, Some(filter))
            }
            false => (Vec::new(), Vec::new(), None),
        };
        let mut planner = horizon_planner::<R, N, C>(
            &config,
            &settings,
            goal,
            params.clone(),
            plant_config.clone(),
            scheduled.as_ref(),
        )
        .map_err(|e| format!("{path}: mpc: {e}"))?;
        // A scheduled plan's decisions become each muscle's pressure through the schedule's
        // forces on the muscles' own coordinates (a wave's, the joints' set points).
        let muscle_forces = match &scheduled {
            Some(_) if joints == 0 => Some(muscle_force_map::<R, N, C>(&params)?),
            _ => None,
        };
        let initial: Vec<f64> = planner.command_at(0.0).iter().copied().collect();
        let mut follower =
            PlanFollower::<R, N, C>::new(params, goal, settings.arrival_radius, settings.hold, &initial)?
                .with_goal_axes(settings.goal_axes);
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuators: Vec<&str> = actuators::<R, N, C>().iter().map(|a| a.0).collect();
        let decided = match &scheduled {
            Some(s) if s.settle > 0.0 => format!("; deciding {}, after {} s at 0 bar", s.description, s.settle),
            Some(s) => format!("; deciding {}", s.description),
            None => String::new(),
        };
        let bound: String = ["x", "y", "z"].iter().zip(settings.goal_axes).filter(|a| a.1).map(|a| *a.0).collect();
        let along = if bound.len() < 3 { format!(" along {bound} only") } else { String::new() };
        let controller_line = format!(
            "mpc: box-DDP from ({:.3}, {:.3}, {:.3}) to ({:.3}, {:.3}, {:.3}) m (centre of mass){along}, {} knots of {} s, {} iteration(s) a plan every {} ms ({} Hz){decided}",
            start_com.x,
            start_com.y,
            start_com.z,
            goal.x,
            goal.y,
            goal.z,
            settings.knots,
            settings.interval,
            settings.iterations,
            1e3 / settings.replan_hz,
            settings.replan_hz
        );
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &actuators);
        if let Some(filter) = &filter {
            print_estimator(&sensors, filter.step(), on_robot);
        }
        let to_commands = move |values: &[f64], commands: &mut [ActuatorCommand]| {
            for (j, (c, v)) in commands.iter_mut().zip(values).enumerate() {
                *c = match j {
                    _ if joints > 0 => ActuatorCommand::JointAngle(*v),
                    _ if j < muscles => ActuatorCommand::Pressure(*v),
                    _ => ActuatorCommand::Thrust(*v),
                };
            }
        };
        let period = 1.0 / loop_config.rate_hz;
        // The schedule's commands for its decisions and state: the muscles' pressures, or a
        // wave's joint set points.
        let mut forces = SVector::<f64, N>::zeros();
        let mut scheduled_commands =
            |state: &[f64], decisions: &[f64], commands: &mut [ActuatorCommand]| match (&scheduled, &muscle_forces) {
                (Some(s), Some(map)) => {
                    s.schedule.commands_into(state, decisions, forces.as_mut_slice());
                    for (command, (coordinate, newtons_per_bar)) in commands.iter_mut().zip(map) {
                        *command = ActuatorCommand::Pressure(forces[*coordinate] / newtons_per_bar);
                    }
                }
                (Some(s), None) => {
                    let angles = &mut forces.as_mut_slice()[..joints];
                    s.schedule.commands_into(state, decisions, angles);
                    for (command, angle) in commands.iter_mut().zip(angles.iter()) {
                        *command = ActuatorCommand::JointAngle(*angle);
                    }
                }
                (None, _) => {}
            };
        if o.dry_run && scheduled.is_some() {
            println!(
                "dry run: the mpc controller needs the plant's state, so these are the commands of the resting decisions"
            );
            let held = initial.clone();
            let mut controller = move |_t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
                scheduled_commands(&[0.0], &held, commands);
                Ok(())
            };
            return dry_run(&mut chain, &mut controller, &[0.0, period], period, ActuatorCommand::Pressure(0.0));
        }
        if o.dry_run {
            println!(
                "dry run: the mpc controller needs the plant's state, so these are the commands before the first plan"
            );
            let held = initial.clone();
            let mut controller = move |_t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
                to_commands(&held, commands);
                Ok(())
            };
            let dt = 1.0 / loop_config.rate_hz;
            return dry_run(&mut chain, &mut controller, &[0.0, dt], dt, ActuatorCommand::Thrust(0.0));
        }
        if o.realtime {
            try_realtime();
        }
        let link = Arc::new(PlanLink::<N>::new());
        let measured = Arc::clone(&link);
        let estimation = filter.map(|filter| (sensors, sources, filter));
        let plant = || {
            // Hardware in the loop: servo channels' angles become the joints' set points,
            // regulators' voltages the muscles' pressures, thruster channels' values the
            // thrusts.
            let (_, mut plant) = simulated_plant::<R, N, C>(&config, &loop_config, servo, plant_step)?;
            if joints == 0 {
                let (regulators, thruster_channels) = plant_inputs(&config.channels, 0, muscles, &actuators, &path)?;
                debug_assert_eq!(regulators.len() + thruster_channels.len(), muscles + thrusters);
                plant.connect_muscles(&regulators).map_err(|e| e.0)?;
                plant.connect_thrusters(&thruster_channels).map_err(|e| e.0)?;
            }
            Ok(plant)
        };
        let (mut device, mut sensing) =
            Sensing::new(o, &config, &path, estimation, joints + muscles + thrusters, plant, move |t, x| {
                measured.measured.try_post((t, *x));
            })?;
        if joints > 0 {
            // A wave's first set points lie anywhere on it; moved to from the starting pose
            // at the joints' rate limit, they do not slam the servos (a step of 1.1 rad rang
            // through the joint, 0.5 rad past its set point, faster than the estimator's
            // implicit steps follow).
            sensing.start_servos_from_rest(&mut chain);
        }
        let stop = &*self.stop;
        let link = &*link;
        let count = initial.len();
        let mut values = [0.0; softgen_runtime::MAX_PLANNED_COMMANDS];
        // A scheduled plan's state (the bending plane's phase) at this period and at the
        // last one, whose measurement the follower hands to the planner.
        let states = scheduled.as_ref().map_or(0, |s| s.schedule.states());
        let settle = scheduled.as_ref().map_or(0.0, |s| s.settle);
        // The estimate is scored over the task, from the plan's start.
        sensing.score_from(settle);
        let (mut schedule_state, mut sent_state) = ([0.0; MAX_SCHEDULE_STATES], [0.0; MAX_SCHEDULE_STATES]);
        let (outcome, safe, planner_stats) = loop_with_planner(
            &loop_config,
            &mut chain,
            &mut device,
            stop,
            &link.stop,
            || match scheduled.is_some() {
                true => run_scheduled_planner(&mut planner, link, settings.replan_hz),
                false => run_horizon_planner(&mut planner, link, settings.replan_hz),
            },
            |t, commands| {
                if let Some(held) = sensing.sense(t, &link.measured)? {
                    // An estimator fault: the last safe command, held.
                    to_commands(held, commands);
                    return Ok(follower.phase);
                }
                let Some(schedule) = scheduled.as_ref().map(|s| s.schedule) else {
                    let phase = follower.command(link, t, &mut values[..count])?;
                    to_commands(&values[..count], commands);
                    sensing.sent(commands, period)?;
                    return Ok(phase);
                };
                if t < settle - 1e-9 {
                    // The drop: every muscle vented, nothing for the planner yet (a wave
                    // settles for no time).
                    commands.iter_mut().for_each(|c| *c = ActuatorCommand::Pressure(0.0));
                    sensing.sent(commands, period)?;
                    return Ok(follower.phase);
                }
                follower.set_schedule_state(&sent_state[..states])?;
                let phase = follower.command(link, t, &mut values[..count])?;
                scheduled_commands(&schedule_state[..states], &values[..count], commands);
                sensing.sent(commands, period)?;
                sent_state = schedule_state;
                schedule.advance(&mut schedule_state[..states], &values[..count], period);
                Ok(phase)
            },
        );
        let planner_stats = planner_stats?;
        let (run, end, estimator_report) = sensing.finish(device, outcome, safe, &chain)?;
        let report = MpcReport {
            goal: settings.goal,
            goal_height: Some(goal.z),
            planner: planner_stats,
            plans_applied: follower.plans_applied,
            arrived_at: follower.phase.arrived_at(),
            held: matches!(follower.phase, SteeringPhase::Finished { .. }),
            final_distance: follower.distance,
            start_distance: follower.distance_of(&start_com),
        };
        // A robot in the horizontal plane has its heading third.
        match end.map(|q| (q[0], q[1], q[2])) {
            Some((x, y, _)) if R::PLANE == PlaneOfMotion::Xy => println!("plant       base at ({x:.3}, {y:.3}) m"),
            Some((x, y, z)) => println!("plant       base at ({x:.3}, {y:.3}, {z:.3}) m"),
            None => {}
        }
        Ok(mpc_run_report(run, report, estimator_report))
    }
}

impl Run<'_> {
    /// The stride planner steering a limbed robot to a goal: its paper's strides (whole
    /// cycles of its gaits), each chosen in the planner thread a lead before its cycle from
    /// the measured state (the simulated plant's, true or estimated, or the robot's
    /// estimate), played by the loop through the output chain.
    fn run_stride_mpc<R: Model<N, C>, const N: usize, const C: usize>(
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
        let on_robot = o.serial_port.is_some() || o.comedi_device.is_some();
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
        let mut steering = softgen_runtime::StrideSteering::<R, N, C>::new(params.clone(), steering_config, period)
            .map_err(|e| format!("{path}: mpc: {e}"))?;
        let estimated = on_robot || o.state == StateSource::Estimated;
        let estimation = match estimated {
            true => Some(state_estimator::<R, N, C>(&config, &path, &loop_config, on_robot)?),
            false => None,
        };
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
        let link = Arc::new(softgen_runtime::StrideLink::<N>::new());
        let measured = Arc::clone(&link);
        let plant = || wired_plant::<R, N, C>(&config, &loop_config, &path);
        let (mut device, mut sensing) = Sensing::new(o, &config, &path, estimation, muscles, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let link = &*link;
        let plan = |snapshot: &softgen_runtime::StrideSnapshot<N>| {
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
        let (outcome, safe, planner_stats) = loop_with_planner(
            &loop_config,
            &mut chain,
            &mut device,
            &self.stop,
            &link.stop,
            // A plan slower than the lead is late for its decision: that is the overrun.
            || softgen_runtime::run_stride_planner(link, 1.0 / lead, plan),
            |t, commands| {
                if let Some(held) = sensing.sense(t, &link.measured)? {
                    // An estimator fault: the last safe commands, held.
                    for (c, p) in commands.iter_mut().zip(held) {
                        *c = ActuatorCommand::Pressure(*p);
                    }
                    return Ok(steering.phase);
                }
                let phase = steering.command(link, t, commands, &*pressures)?;
                sensing.sent(commands, period)?;
                Ok(phase)
            },
        );
        let planner_stats = planner_stats?;
        let (run, end, estimator_report) = sensing.finish(device, outcome, safe, &chain)?;
        print_plant_center_of_mass::<R, N, C>(end.as_ref(), &params);
        let played: Vec<String> = strides
            .iter()
            .zip(&steering.periods_played)
            .filter(|(_, k)| **k > 0)
            .map(|(name, k)| format!("{name} {:.2}", *k as f64 * decision_period))
            .collect();
        println!(
            "strides     {} (seconds played); {} decisions had no plan in time ({} plans one decision late taken at the next)",
            played.join(", "),
            steering.late_plans,
            steering.late_plans_taken
        );
        let report = MpcReport {
            goal: settings.goal,
            goal_height: None,
            planner: planner_stats,
            plans_applied: steering.plans_applied,
            arrived_at: steering.phase.arrived_at(),
            held: matches!(steering.phase, SteeringPhase::Finished { .. }),
            final_distance: steering.distance,
            start_distance: (start_com - settings.goal).norm(),
        };
        Ok(mpc_run_report(run, report, estimator_report))
    }
}

/// An MPC run's report with its closing lines printed: the planner's and the goal's, then
/// the estimator's where the state was estimated.
fn mpc_run_report(mut run: RunReport, report: MpcReport, estimator_report: Option<EstimatorReport>) -> RunReport {
    report.print();
    if let Some(estimator_report) = estimator_report {
        println!("{}", estimator_report.line());
        run.estimator = Some(estimator_report);
    }
    run.mpc = Some(report);
    run
}

/// The loop with a model-predictive planner beside it: `plan` is the planner thread's body
/// (it returns once `planner_stop` is set), `step` computes a period's commands and says
/// where the task is; the run ends when it is finished, and a planner thread that stops
/// early ends it as a controller error. Returns the loop's outcome, the safe state's and the
/// planner's statistics.
#[allow(clippy::too_many_arguments)]
fn loop_with_planner<D: Device>(
    loop_config: &LoopConfig,
    chain: &mut OutputChain,
    device: &mut D,
    stop: &AtomicUsize,
    planner_stop: &AtomicBool,
    plan: impl FnOnce() -> PlannerStats + Send,
    mut step: impl FnMut(f64, &mut [ActuatorCommand]) -> Result<SteeringPhase, String>,
) -> (softgen_runtime::LoopOutcome, Result<(), SafetyFault>, Result<PlannerStats, String>) {
    std::thread::scope(|scope| {
        let planner_thread = scope.spawn(plan);
        let controller = |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            if planner_thread.is_finished() {
                return Err("the planner thread stopped".into());
            }
            if let SteeringPhase::Finished { .. } = step(t, commands)? {
                stop.store(STOP_FINISHED, Ordering::Relaxed);
            }
            Ok(())
        };
        let (outcome, safe) = run_hardware(loop_config, chain, device, stop, controller);
        planner_stop.store(true, Ordering::Relaxed);
        let planner_stats = planner_thread.join().map_err(|_| "the planner thread panicked".to_string());
        (outcome, safe, planner_stats)
    })
}

/// The receding-horizon planner of `settings` towards `goal`, over the model the plant
/// simulates: every muscle's pressure within [0, ceiling] bar and every thrust within the
/// thrust limit (and its channel's rating) either way.
/// The run configuration's sensors and the state estimator on them, as a run builds it:
/// the configured parameters, the plant's environment (with `[estimator]`'s contact law in
/// place of its own), the loop's period, the spec's initial state at t = 0.
fn state_estimator<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    path: &str,
    loop_config: &LoopConfig,
    on_robot: bool,
) -> Result<(Vec<softgen_runtime::Sensor>, Vec<SensorEntry>, StateEstimator<R, N, C>), String> {
    let (sensors, sources) = configured_sensors::<R, N, C>(config, path, on_robot)?;
    // The commands in the loop's order: servo set points (through the gait's servo, as on
    // the plant), then muscle pressures and thrusts.
    let mut inputs = planned_inputs::<R, N, C>();
    let mut servo = softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    if const { !R::ACTUATED.is_empty() } {
        let gait =
            R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait, whose servo its joints follow", R::NAME))?;
        servo = gait.servo();
        inputs.insert(0, ControlInput::JointTargets);
    }
    let mut model_config = plant_simulation_config::<R, N, C>(config, loop_config, servo);
    model_config.contact = config.estimator_contact.applied(&model_config.contact);
    let model = Simulation::<R, N, C>::new(configured_params::<R, N, C>(config)?, model_config)?;
    let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let period = 1.0 / loop_config.rate_hz;
    let settings = config.estimator.clone();
    let filter = match R::VALVES.is_empty() {
        true => StateEstimator::new(model, &inputs, &sensors, settings, &start, 0.0, period),
        // A valve robot's commands are its valve states and supply (the actuators' order).
        false => {
            let supply =
                config.valve_supply.as_ref().ok_or_else(|| format!("{path}: `{}` needs a [valves] table", R::NAME))?;
            let plant_step = valve_plant_step(loop_config);
            let (parameter, units) = (&supply.parameter, supply.units_per_bar);
            StateEstimator::for_valves(model, parameter, units, plant_step, &sensors, settings, &start, 0.0, period)
        }
    }
    .map_err(|e| format!("{path}: estimator: {e}"))?;
    Ok((sensors, sources, filter))
}

/// `--estimate-from LOG`: a sensor log's readings and commands through the estimator the
/// run configuration builds, period by period as the loop did, the log written again to
/// `--sensor-log`; reports whether the estimates equal the logged ones.
fn estimate_from_log<R: Model<N, C>, const N: usize, const C: usize>(
    o: &RunOptions,
    log_path: &std::path::Path,
    config: &RunConfig,
    path: &str,
) -> Result<RunReport, String> {
    let loop_config = loop_config(o, config)?;
    let on_robot = o.serial_port.is_some() || o.comedi_device.is_some();
    let (sensors, _, filter) = state_estimator::<R, N, C>(config, path, &loop_config, on_robot)?;
    // The commands a period sent, as the filter takes them (the loop checks the two agree).
    let commands = filter.command_count();
    if commands == 0 {
        return Err(format!(
            "--estimate-from replays the estimator of a robot driven by servos, pressures, thrusts or valves; `{}` has none",
            R::NAME
        ));
    }
    let text = std::fs::read_to_string(log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log =
        crate::hardware::estimation::SensorLog::parse(&log_path.display().to_string(), &text, &sensors, N, commands)?;
    let (pending, file) = PendingFile::create(&o.sensor_log)?;
    let mut out = std::io::BufWriter::new(file);
    let (periods, largest, fault) = crate::hardware::estimation::replay_log(filter, &log, &mut out)?;
    out.flush().map_err(|e| format!("{}: {e}", o.sensor_log.display()))?;
    drop(out);
    println!("estimator   {periods} periods of {} replayed through the estimator", log_path.display());
    println!("estimates   largest difference from the logged ones: {largest:e}");
    if let Some(fault) = &fault {
        println!("estimator   stopped as the run did: {fault}");
    }
    println!("sensor log  {}", pending.target().display());
    pending.commit()?;
    Ok(RunReport::without_loop())
}

/// The commands box-DDP plans, in the actuators' order: muscle pressures, then thrusts.
fn planned_inputs<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<ControlInput> {
    let mut inputs = Vec::new();
    if const { !R::MUSCLES.is_empty() } {
        inputs.push(ControlInput::MusclePressures);
    }
    if const { !R::THRUSTERS.is_empty() } {
        inputs.push(ControlInput::Thrusts);
    }
    inputs
}

fn horizon_planner<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    settings: &DdpMpcSettings,
    goal: Vector3<f64>,
    params: R::Params,
    mut plant_config: SimulationConfig,
    scheduled: Option<&ScheduledMpc>,
) -> Result<RecedingHorizon<R, N, C>, String> {
    let (muscles, thrusters) = (R::MUSCLES.len(), R::THRUSTERS.len());
    let inputs = planned_inputs::<R, N, C>();
    // A plan carries its decisions: a schedule's, or each muscle's and thruster's command.
    let decided = scheduled.map_or(muscles + thrusters, |s| s.schedule.decisions());
    softgen_runtime::check_plan_fits(settings.knots, decided)?;
    let mut lower = vec![0.0; muscles];
    let mut upper = vec![config.safety.pressure_ceiling; muscles];
    for channel in &config.channels[muscles..] {
        let rating = match channel {
            softgen_runtime::Channel::Thruster { max_thrust, .. } => *max_thrust,
            _ => f64::INFINITY,
        };
        let limit = config.safety.thrust_limit.min(rating);
        lower.push(-limit);
        upper.push(limit);
    }
    let heading_points = match &settings.heading {
        None => None,
        Some((from, to)) => {
            let index = |name: &str| {
                R::CONTACT_POINTS.iter().position(|p| p.name == name).ok_or_else(|| {
                    let names: Vec<&str> = R::CONTACT_POINTS.iter().map(|p| p.name).collect();
                    format!(
                        "heading: `{name}` is not a tracked point of `{}` (points: {})",
                        R::NAME,
                        crate::hardware::config::listed(&names)
                    )
                })
            };
            Some((index(from)?, index(to)?))
        }
    };
    let mut posture = Vec::new();
    for (name, weight) in &settings.posture {
        let i = R::COORDINATES.iter().position(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
            format!("posture: `{name}` is not a coordinate of `{}` (coordinates: {})", R::NAME, names.join(", "))
        })?;
        posture.push((i, R::INITIAL_POSITION[i], *weight));
    }
    let weights = GoalWeights {
        goal,
        posture,
        position: settings.goal_axis_weights() * settings.position_weight,
        terminal_position: settings.goal_axis_weights() * settings.terminal_position_weight,
        rate: settings.velocity_weight,
        terminal_rate: settings.terminal_velocity_weight,
        effort: settings.effort_weight,
        command_rate: settings.command_rate_weight,
        rest: vec![0.0; muscles + thrusters],
        heading_points,
        // A wave's heading is signed by its direction of travel, its temporal frequency
        // being the second decision.
        travel_command: settings.wave.and_then(|w| w.travel_scale).map(|scale| (1, scale)),
        heading: if heading_points.is_some() { settings.heading_weight } else { 0.0 },
        terminal_heading: if heading_points.is_some() { settings.terminal_heading_weight } else { 0.0 },
        distance_scaled: settings.scale_by_distance.then_some(settings.arrival_radius),
    };
    let horizon = HorizonSettings {
        knots: settings.knots,
        interval: settings.interval,
        substeps: settings.substeps,
        iterations: settings.iterations,
        period: 1.0 / settings.replan_hz,
        deadline: Some(settings.deadline),
        lower,
        upper,
    };
    if let Some(damping) = settings.contact_damping {
        plant_config.contact.damping = damping;
    }
    let simulation = Simulation::<R, N, C>::new(params, plant_config)?;
    // A real-time iteration tries few steps: a plan that finds none keeps the last one.
    let ddp = DdpSettings { line_search_steps: 4, ..DdpSettings::default() };
    let mut planner = match scheduled {
        None => RecedingHorizon::new(simulation, &inputs, horizon, weights, ddp)?,
        Some(s) => {
            let horizon = HorizonSettings { lower: s.lower.clone(), upper: s.upper.clone(), ..horizon };
            let weights = GoalWeights { rest: s.rest.clone(), ..weights };
            // A wave sets the servos' targets, and its knots step as the sampler's rollouts
            // do: the wheels' regularised friction needs steps of a few milliseconds anyway,
            // and an explicit step takes one Jacobian where Newton's takes several.
            let input = match settings.wave {
                Some(_) => ControlInput::JointTargets,
                None => ControlInput::ActuatorForces,
            };
            let mut planner = RecedingHorizon::scheduled(simulation, &[input], s.schedule, horizon, weights, ddp)?;
            if settings.wave.is_some() {
                planner.set_knot_integrator(KnotIntegrator::SemiImplicitEuler);
            }
            planner
        }
    };
    planner.lead_knots = settings.lead_knots;
    planner.set_newton(settings.newton_tolerance, settings.retry_from_fresh)?;
    Ok(planner)
}

/// Each muscle's coordinate and its force per bar (N): the coordinate its length is (its
/// gradient a unit vector), where a schedule's forces on the muscles are read back as
/// pressures.
fn muscle_force_map<R: Model<N, C>, const N: usize, const C: usize>(
    params: &R::Params,
) -> Result<Vec<(usize, f64)>, String> {
    (0..R::MUSCLES.len())
        .map(|m| {
            let info = &R::MUSCLES[m];
            let muscle = R::muscle(m, params).ok_or_else(|| format!("muscle `{}` has no values", info.name))?;
            let own = (0..info.coordinates).filter(|&k| muscle.gradient[k] != 0.0).collect::<Vec<_>>();
            match own.as_slice() {
                [k] if muscle.gradient[*k] == 1.0 => Ok((info.first_coordinate + k, muscle.area * 1e5)),
                _ => Err(format!(
                    "muscle `{}` is not one length coordinate of its section (gradient {:?}): a schedule's forces cannot be read back as its pressure",
                    info.name, muscle.gradient
                )),
            }
        })
        .collect()
}

/// The actuator name of a valve-driven robot's supply regulator.
const VALVE_SUPPLY: &str = "supply";

/// The robot's actuators in channel order, with what each drives: joint actuators, then
/// muscles (a muscle takes pressure, like an actuator length), then thrusters, then valve
/// pairs (by the coordinate each drives) and their supply.
fn actuators<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<(&'static str, Drives)> {
    R::ACTUATED
        .iter()
        .map(|&i| {
            (
                R::COORDINATES[i].name.strip_suffix("_joint").unwrap_or(R::COORDINATES[i].name),
                Drives::Coordinate(R::COORDINATES[i].kind),
            )
        })
        .chain(R::MUSCLES.iter().map(|m| (m.name, Drives::Coordinate(CoordinateKind::ActuatorLength))))
        .chain(R::THRUSTERS.iter().map(|t| (t.name, Drives::Thrust)))
        .chain(R::VALVES.iter().map(|&i| {
            let name = R::COORDINATES[i].name;
            (name.strip_suffix("_curvature").unwrap_or(name), Drives::Valve)
        }))
        .chain((!R::VALVES.is_empty()).then_some((VALVE_SUPPLY, Drives::Supply)))
        .collect()
}

/// Robot `R`'s run configuration: the file given, else its own (`own`, its spec's sibling
/// `<robot>.run.toml`); with its path.
pub(crate) fn configured<R: Model<N, C>, const N: usize, const C: usize>(
    file: Option<&std::path::Path>,
    own: Option<RunConfigFile>,
) -> Result<(RunConfig, String), String> {
    let (path, text) = match file {
        Some(p) => {
            (p.to_string_lossy().to_string(), std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => match own {
            Some(file) => (file.path.to_string(), file.text.to_string()),
            None => {
                return Err(format!("robot `{}` needs a run configuration: pass --config <file>.run.toml", R::NAME))
            }
        },
    };
    Ok((parse_robot_run_config::<R, N, C>(&path, &text)?, path))
}

/// A run configuration of robot `R`, `text` read from `path`, its channels checked against
/// the robot's actuators (joint actuators, muscles, thrusters, valve pairs and their supply).
pub fn parse_robot_run_config<R: Model<N, C>, const N: usize, const C: usize>(
    path: &str,
    text: &str,
) -> Result<RunConfig, String> {
    RunConfig::parse(path, text, R::NAME, &actuators::<R, N, C>())
}

impl RobotVisitor for Run<'_> {
    type Output = Result<RunReport, String>;

    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        let (config, path) = configured::<R, N, C>(self.options.config.as_deref(), self.run_config)?;
        let actuated = actuators::<R, N, C>();
        // What a view of the plant's trajectory needs: the configuration's terrain and parameters.
        let setting = PlantSetting { terrain: config.environment.terrain, params: config.parameters.clone() };
        let mut report = self.run_configured::<R, N, C>(config, path, &actuated)?;
        report.plant = Some(setting);
        Ok(report)
    }
}

impl Run<'_> {
    /// The run that `config` (parsed from `path`) describes, `actuated` naming the robot's
    /// actuators in channel order.
    fn run_configured<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        actuated: &[(&str, Drives)],
    ) -> Result<RunReport, String> {
        let o = self.options;
        configured_params::<R, N, C>(&config).map_err(|e| format!("{path}: {e}"))?;
        if let Some(terrain) = config.environment.terrain {
            terrain
                .fits(R::PLANE)
                .map_err(|e| format!("{path}: [environment] terrain for robot `{}`: {e}", R::NAME))?;
        }
        if o.state == StateSource::Estimated {
            if !matches!(o.controller, ControllerChoice::Mpc) {
                return Err("--state estimated feeds the mpc controller: add --controller mpc".into());
            }
            if o.replay.is_some() {
                return Err(
                    "--replay feeds recorded commands to the plant; --state estimated needs a controller".into()
                );
            }
        }
        if let Some(record) = &o.replay {
            return replay::<R, N, C>(o, record, &config, &path);
        }
        if let Some(log) = &o.estimate_from {
            return estimate_from_log::<R, N, C>(o, log, &config, &path);
        }
        // The robot's kind is known when this is compiled for it: in `const` blocks, the
        // branches another kind of robot takes are not compiled for this one at all.
        if const { !R::THRUSTERS.is_empty() } {
            return self.run_swimmer::<R, N, C>(config, path);
        }
        if const { !R::VALVES.is_empty() } {
            return self.run_valves::<R, N, C>(config, path);
        }
        if o.swim.is_some() {
            return Err(format!("--swim holds a swimming robot's thrusts; `{}` has no thrusters", R::NAME));
        }
        if const { !R::MUSCLES.is_empty() } {
            return self.run_muscles::<R, N, C>(config, path);
        }
        if o.limb_gait.is_some() || o.stride.is_some() || o.gait_frequency.is_some() {
            return Err(format!(
                "--limb-gait, --stride and --gait-frequency drive limbed robots; `{}` has no muscles",
                R::NAME
            ));
        }
        let gait_defaults = R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait to run", R::NAME))?;
        let gait = Serpenoid {
            amplitude: o.amplitude.unwrap_or(gait_defaults.amplitude),
            temporal_frequency: o.temporal_frequency.unwrap_or(gait_defaults.temporal_frequency),
            spatial_frequency: o.spatial_frequency.unwrap_or(gait_defaults.spatial_frequency),
            offset: o.offset.unwrap_or(gait_defaults.offset),
            ramp: 2.0,
        };
        gait.validate()?;
        let planner = match o.controller {
            ControllerChoice::Gait => None,
            ControllerChoice::Mpc => {
                let sampler = || Ok(PlannerSettings::GaitSampling(MpcSettings::default()));
                Some(configured_planner(&config, &path, o, R::NAME, sampler)?)
            }
        };
        if let Some(PlannerSettings::BoxDdp(settings)) = planner {
            // Box-DDP deciding the gait's wave (`solver = "ddp"`), from the gait given.
            let bounds =
                settings.wave.ok_or_else(|| format!("{path}: mpc: box-DDP plans `{}`'s gait's wave", R::NAME))?;
            let wave = ScheduledMpc {
                schedule: CommandSchedule::Wave {
                    joints: R::ACTUATED.len(),
                    spatial_frequency: gait.spatial_frequency,
                    lag: bounds.lag,
                },
                lower: bounds.min.to_vec(),
                upper: bounds.max.to_vec(),
                rest: vec![gait.amplitude, gait.temporal_frequency, gait.offset],
                settle: 0.0,
                description: match bounds.lag {
                    0.0 => "the gait's amplitude, temporal frequency and offset".into(),
                    lag => format!("the gait's amplitude, temporal frequency and offset, sent through a {lag} s lag"),
                },
            };
            return self.run_horizon_mpc::<R, N, C>(config, path, settings, 0.001, Some(wave));
        }
        let loop_config = loop_config(o, &config)?;
        let mpc = match planner {
            None => None,
            Some(PlannerSettings::GaitSampling(settings)) => {
                settings.planner(settings.goal).validate()?;
                Some(settings)
            }
            Some(other) => return Err(planner_mismatch(&path, &other, R::NAME)),
        };
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let mut controller = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            for (j, c) in commands.iter_mut().enumerate() {
                *c = ActuatorCommand::JointAngle(gait.joint(t, j, gait.spatial_frequency).0);
            }
            Ok(())
        };

        let controller_line = match &mpc {
            Some(m) => format!(
                "mpc: goal ({}, {}) m, {} rollouts of {} s every {} ms ({} Hz)",
                m.goal.x,
                m.goal.y,
                m.samples,
                m.horizon,
                1e3 / m.replan_hz,
                m.replan_hz
            ),
            None => format!(
                "gait: A = {} rad, omega = {} rad/s, eta = {} rad, offset = {} rad",
                gait.amplitude, gait.temporal_frequency, gait.spatial_frequency, gait.offset
            ),
        };
        let names: Vec<&str> = actuated.iter().map(|a| a.0).collect();
        // The state the planner starts from: the plant's, or estimated from sensors (on the
        // robot, always).
        let on_robot = o.serial_port.is_some() || o.comedi_device.is_some();
        let estimation = match mpc.is_some() && (on_robot || o.state == StateSource::Estimated) {
            true => Some(state_estimator::<R, N, C>(&config, &path, &loop_config, on_robot)?),
            false => None,
        };
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &names);
        if let Some((sensors, _, filter)) = &estimation {
            print_estimator(sensors, filter.step(), on_robot);
        }
        if o.dry_run {
            if mpc.is_some() {
                println!("dry run: the mpc controller needs the plant's state, so these are the gait's commands");
            }
            println!("dry run: first commands, no device touched");
            let dt = 1.0 / loop_config.rate_hz;
            let times: Vec<f64> = (0..5).map(|k| k as f64 * dt).collect();
            return dry_run(&mut chain, &mut controller, &times, dt, ActuatorCommand::Valve(false));
        }

        if o.realtime {
            try_realtime();
        }
        let Some(settings) = mpc else {
            if let Some(report) =
                run_real_device(o, &config.channels, &loop_config, &mut chain, &self.stop, &mut controller)?
            {
                return Ok(report);
            }
            // Hardware in the loop: the generated model behind the same chain.
            let (_, plant) = simulated_plant::<R, N, C>(&config, &loop_config, gait_defaults.servo(), 0.002)?;
            let (mut device, pending_record, pending_trajectory) = recorded_plant(plant, o, |_, _| {})?;
            let (outcome, safe) = run_hardware(&loop_config, &mut chain, &mut device, &self.stop, controller);
            return finish(
                outcome,
                safe,
                &chain,
                device.into_inner().map(drop),
                pending_record,
                Some(pending_trajectory),
            );
        };

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
        let (mut device, mut sensing) = Sensing::new(o, &config, &path, estimation, joints, plant, move |t, x| {
            measured.measured.try_post((t, *x));
        })?;
        let stop = &*self.stop;
        let link = &*link;
        let period = 1.0 / loop_config.rate_hz;
        let (outcome, safe, planner_stats) = loop_with_planner(
            &loop_config,
            &mut chain,
            &mut device,
            stop,
            &link.stop,
            || run_planner(&mut planner, link, settings.replan_hz),
            |t, commands| {
                if let Some(held) = sensing.sense(t, &link.measured)? {
                    // An estimator fault: the last safe set points, held.
                    for (c, v) in commands.iter_mut().zip(held) {
                        *c = ActuatorCommand::JointAngle(*v);
                    }
                    return Ok(steering.phase);
                }
                let phase = steering.command(link, t, commands)?;
                sensing.sent(commands, period)?;
                Ok(phase)
            },
        );
        let planner_stats = planner_stats?;
        let (run, end, estimator_report) = sensing.finish(device, outcome, safe, &chain)?;
        let arrived_at = steering.phase.arrived_at();
        let report = MpcReport {
            goal: settings.goal,
            goal_height: None,
            planner: planner_stats,
            plans_applied: steering.plans_applied,
            held: matches!(steering.phase, SteeringPhase::Finished { .. }),
            arrived_at,
            final_distance: steering.distance,
            start_distance,
        };
        if let Some((x, y)) = end.map(|q| (q[0], q[1])) {
            println!("plant       base at ({x:.3}, {y:.3}) m");
        }
        Ok(mpc_run_report(run, report, estimator_report))
    }
}

/// The run's planner: the run configuration's, or without an `[mpc]` table the `default`
/// planner's settings at the command line's goal (or why it needs the table); then aimed at
/// the command line's goal, the one place the command line changes a planner.
fn configured_planner(
    config: &RunConfig,
    path: &str,
    o: &RunOptions,
    robot: &str,
    default: impl FnOnce() -> Result<PlannerSettings, String>,
) -> Result<PlannerSettings, String> {
    let planner = match &config.planner {
        Some(planner) => planner.clone(),
        None => {
            let planner = default()?;
            if o.goal.is_none() {
                return Err(format!("{path} has no [mpc] table: give the goal with --goal {}", planner.goal_form()));
            }
            planner
        }
    };
    planner.aimed(o.goal, o.goal_height, robot)
}

/// A planner the run configuration's parser would not have chosen for the robot.
fn planner_mismatch(path: &str, planner: &PlannerSettings, robot: &str) -> String {
    format!("{path}: mpc: {} does not plan `{robot}`", planner.description())
}

/// Hardware in the loop: the generated model in the run configuration's environment behind
/// the chain, with `servo` on its joints, stepped with RK4 at the loop period or `max_step`,
/// whichever is shorter. Returns the plant's simulation settings too (the MPC's model shares
/// them).
fn simulated_plant<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    loop_config: &LoopConfig,
    servo: softgen_runtime::JointPd,
    max_step: f64,
) -> Result<(SimulationConfig, SimulatedPlant<R, N, C>), String> {
    let plant_config = plant_simulation_config::<R, N, C>(config, loop_config, servo);
    let mut simulation = Simulation::<R, N, C>::new(configured_params::<R, N, C>(config)?, plant_config.clone())?;
    let settings = config.plant;
    if let Some(depth) = settings.contact_onset_tolerance {
        simulation.locate_contact_onsets(depth)?;
    }
    let start = State::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let step = (1.0 / loop_config.rate_hz).min(max_step);
    let mut plant = SimulatedPlant::new(simulation, start, step).map_err(|e| e.to_string())?;
    if settings.integrator == PlantIntegratorName::Ros34 {
        let tolerances = Tolerances { relative: settings.tolerance, absolute: 0.1 * settings.tolerance };
        plant.use_rosenbrock(tolerances, settings.jacobian_every).map_err(|e| e.to_string())?;
    }
    Ok((plant_config, plant))
}

/// The simulated plant's settings: the robot's environment with the run configuration's in
/// place, `servo` on its joints, commands held over the loop's period.
fn plant_simulation_config<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    loop_config: &LoopConfig,
    servo: softgen_runtime::JointPd,
) -> SimulationConfig {
    let env = R::ENVIRONMENT;
    let (contact, terrain) = config.environment.apply(env.contact_law(), env.terrain);
    SimulationConfig {
        contact,
        terrain,
        gait: None,
        servo,
        admittance: None,
        control_period: 1.0 / loop_config.rate_hz,
    }
}

/// The loop's rate (the command line's, else the run configuration's), duration and
/// watchdog, checked.
fn loop_config(o: &RunOptions, config: &RunConfig) -> Result<LoopConfig, String> {
    let loop_config = LoopConfig {
        rate_hz: o.rate_hz.unwrap_or(config.rate_hz),
        duration: o.duration,
        command_timeout: config.safety.command_timeout,
    };
    loop_config.validate()?;
    Ok(loop_config)
}

/// The header's estimator line: its step and the sensors it reads, and from where.
fn print_estimator(sensors: &[softgen_runtime::Sensor], step: f64, on_robot: bool) {
    println!(
        "estimator   extended Kalman filter on the model, steps of {:.2} ms, {} sensors {}: {}",
        step * 1e3,
        sensors.len(),
        if on_robot { "read from the robot" } else { "emulated from the plant" },
        sensors.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
    );
}

/// What a run is about to do: robot, configuration, rate, controller and each actuator's
/// channel.
fn print_header(
    robot: &str,
    path: &str,
    loop_config: &LoopConfig,
    controller: &str,
    channels: &[softgen_runtime::Channel],
    actuators: &[&str],
) {
    println!("robot       {robot}");
    println!("config      {path}");
    println!("rate        {} Hz for {} s", loop_config.rate_hz, loop_config.duration);
    println!("controller  {controller}");
    for (j, c) in channels.iter().enumerate() {
        println!("channel     actuator {j} ({}) -> {c:?}", actuators[j]);
    }
}

/// A dry run: the controller's commands at `times` (a period `dt` apart) through the chain
/// to a printer, then the safe state one period after the last; no device touched.
fn dry_run(
    chain: &mut OutputChain,
    controller: &mut impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
    times: &[f64],
    dt: f64,
    fill: ActuatorCommand,
) -> Result<RunReport, String> {
    let mut printer = Printer { periods: 0 };
    let mut commands = vec![fill; chain.channels.len()];
    for &t in times {
        controller(t, &mut commands)?;
        chain.send(&mut printer, t, dt, &commands).map_err(|e| e.to_string())?;
    }
    println!("safe state:");
    chain.safe_state(&mut printer, times.last().copied().unwrap_or(0.0) + dt).map_err(|e| e.to_string())?;
    Ok(RunReport::without_loop())
}

/// The simulated plant as hardware in the loop wires it for robot `R`: joints under the
/// gait's servo (RK4 at 2 ms at most), or muscles reading their pressure regulators'
/// voltages (1 ms: a limbed robot's contacts need it), or for a swimmer, muscles and
/// thrusters reading their channels (0.25 ms: the joints' viscosity at rest, 2.5e4 N s/m
/// per actuator, is stiff).
pub(crate) fn wired_plant<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    loop_config: &LoopConfig,
    path: &str,
) -> Result<SimulatedPlant<R, N, C>, String> {
    let no_servo = softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    let (joints, muscles) = (R::ACTUATED.len(), R::MUSCLES.len());
    let actuators: Vec<&str> = R::ACTUATED
        .iter()
        .map(|&i| R::COORDINATES[i].name)
        .chain(R::MUSCLES.iter().map(|m| m.name))
        .chain(R::THRUSTERS.iter().map(|t| t.name))
        .collect();
    if const { !R::THRUSTERS.is_empty() } {
        if joints > 0 {
            return Err(format!(
                "`{}` has joint actuators besides its thrusters, which no plant input drives",
                R::NAME
            ));
        }
        let (regulators, thruster_channels) = plant_inputs(&config.channels, 0, muscles, &actuators, path)?;
        let (_, mut plant) = simulated_plant::<R, N, C>(config, loop_config, no_servo, 0.00025)?;
        plant.connect_muscles(&regulators).map_err(|e| e.0)?;
        plant.connect_thrusters(&thruster_channels).map_err(|e| e.0)?;
        return Ok(plant);
    }
    if muscles > 0 {
        let (regulators, _) = plant_inputs(&config.channels, joints, muscles, &actuators, path)?;
        let (_, mut plant) = simulated_plant::<R, N, C>(config, loop_config, no_servo, 0.001)?;
        plant.connect_muscles(&regulators).map_err(|e| e.0)?;
        return Ok(plant);
    }
    let gait = R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait, whose servo its joints follow", R::NAME))?;
    Ok(simulated_plant::<R, N, C>(config, loop_config, gait.servo(), 0.002)?.1)
}

/// `softgen run --replay`: the recorder CSV `record` fed to the simulated plant as fast as it
/// takes it, the plant's trajectory written to the options' trajectory file. The loop rate
/// (the command line's, else the recording's) must be the recording's: the plant holds each
/// value for one period.
fn replay<R: Model<N, C>, const N: usize, const C: usize>(
    o: &RunOptions,
    record: &std::path::Path,
    config: &RunConfig,
    path: &str,
) -> Result<RunReport, String> {
    let name = record.display().to_string();
    let text = std::fs::read_to_string(record).map_err(|e| format!("{name}: {e}"))?;
    let recording = Recording::parse(&name, &text).map_err(|e| e.0)?;
    let (first, last) = match (recording.periods.first(), recording.periods.last()) {
        (Some(first), Some(last)) => (first.0, last.0),
        _ => return Err(format!("{name}: no values recorded")),
    };
    // Every period but the last (the safe state, sent when the run ended) is one loop
    // period after the one before. Without --rate, the configuration's rate if the
    // recording has it, else the recording's own (to a micro-hertz).
    let body = &recording.periods[..recording.periods.len().saturating_sub(1)];
    let mut loop_config = loop_config(o, config)?;
    if let (None, [a, b, ..]) = (o.rate_hz, body) {
        let spacing = b.0 - a.0;
        if spacing > 0.0 && (spacing * loop_config.rate_hz - 1.0).abs() > 1e-6 {
            loop_config.rate_hz = (1e6 / spacing).round() / 1e6;
            loop_config.validate().map_err(|e| format!("{name}: the recorded rate: {e}"))?;
        }
    }
    let period = 1.0 / loop_config.rate_hz;
    if let Some(w) = body.windows(2).find(|w| ((w[1].0 - w[0].0) - period).abs() > 1e-6 * period) {
        return Err(format!(
            "{name}: values at t = {} s and {} s are not one period of {} Hz apart: the recorded run's rate is not this, or its periods are uneven",
            w[0].0, w[1].0, loop_config.rate_hz
        ));
    }
    println!("robot       {}", R::NAME);
    println!("config      {path}");
    println!(
        "replay      {} periods from {name}, t = {first} to {last} s, at {} Hz",
        recording.periods.len(),
        loop_config.rate_hz
    );
    let (pending_trajectory, mut write_row) = trajectory_writer::<R, N, C>(&o.trajectory)?;
    let end = if const { R::VALVES.is_empty() } {
        let mut plant = wired_plant::<R, N, C>(config, &loop_config, path)?;
        plant.observe(Box::new(move |t, x| write_row(t, x)));
        recording.replay(&mut plant).map_err(|e| format!("{name}: {}", e.0))?;
        plant.state.q
    } else {
        let mut plant = valve_plant::<R, N, C>(config, &loop_config, path)?;
        plant.observe(Box::new(move |t, x| write_row(t, x)));
        recording.replay(&mut plant).map_err(|e| format!("{name}: {}", e.0))?;
        plant.state.q
    };
    pending_trajectory.commit()?;
    let params = configured_params::<R, N, C>(config)?;
    let com = R::center_of_mass(&end, &params, &R::cache(&end, &params));
    println!("trajectory  {}", o.trajectory.display());
    println!("plant       centre of mass at ({:.3}, {:.3}, {:.3}) m at the end", com.x, com.y, com.z);
    Ok(RunReport::without_loop())
}

/// Hardware in the loop on `plant`: the loop runs `controller` through the chain to the
/// plant, recording the commands and the plant's trajectory; returns the report and the
/// plant's final coordinates (None when the plant could not be closed).
fn run_on_plant<R: Model<N, C>, const N: usize, const C: usize>(
    plant: SimulatedPlant<R, N, C>,
    o: &RunOptions,
    loop_config: &LoopConfig,
    chain: &mut OutputChain,
    stop: &AtomicUsize,
    controller: impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
) -> Result<(RunReport, Option<SVector<f64, N>>), String> {
    let (mut device, pending_record, pending_trajectory) = recorded_plant(plant, o, |_, _| {})?;
    let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
    let plant = device.into_inner();
    let end = plant.as_ref().ok().map(|p| p.state.q);
    let report = finish(outcome, safe, chain, plant.map(drop), pending_record, Some(pending_trajectory))?;
    Ok((report, end))
}

/// The robot's parameters with the run configuration's values in place of the spec's.
fn configured_params<R: Model<N, C>, const N: usize, const C: usize>(config: &RunConfig) -> Result<R::Params, String> {
    use softgen_runtime::ParamSet;
    let mut p = R::Params::default();
    for (name, value) in &config.parameters {
        p.set(name, *value).map_err(|e| format!("run configuration [parameters]: {e}"))?;
    }
    p.check().map_err(|e| format!("run configuration [parameters]: {e}"))?;
    Ok(p)
}

/// The simulated plant's inputs from the run configuration's channels, for robots with
/// muscles and thrusters after `first` servo channels: each muscle's pressure regulator
/// (channel, muscle, map) and each thruster's channel. Any other kind of channel there is an
/// error naming the actuator.
#[allow(clippy::type_complexity)]
fn plant_inputs(
    channels: &[softgen_runtime::Channel],
    first: usize,
    muscles: usize,
    actuators: &[&str],
    path: &str,
) -> Result<(Vec<(u16, usize, softgen_runtime::PressureMap)>, Vec<u16>), String> {
    let mut regulators = Vec::new();
    let mut thrusters = Vec::new();
    for (j, c) in channels.iter().enumerate().skip(first) {
        match (j - first < muscles, c) {
            (true, softgen_runtime::Channel::PressureRegulator { channel, map, .. }) => {
                regulators.push((*channel, j - first, map.clone()))
            }
            (false, softgen_runtime::Channel::Thruster { channel, .. }) => thrusters.push(*channel),
            (_, other) => {
                return Err(format!(
                    "{path}: the simulated plant reads muscles from pressure regulators and thrusters from thruster channels; `{}` has {other:?}",
                    actuators.get(j).copied().unwrap_or("?")
                ))
            }
        }
    }
    Ok((regulators, thrusters))
}

/// Runs the loop on the comedi card or serial board the options name, recording every value
/// sent; `None` when they name neither (the simulated plant's turn).
fn run_real_device(
    o: &RunOptions,
    channels: &[softgen_runtime::Channel],
    loop_config: &LoopConfig,
    chain: &mut OutputChain,
    stop: &AtomicUsize,
    controller: impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
) -> Result<Option<RunReport>, String> {
    if let Some(path) = &o.comedi_device {
        let device = open_comedi(path, channels)?;
        let (pending_record, record) = PendingFile::create(&o.record)?;
        let mut device = Recorder::new(device, record, 100).map_err(|e| e.0)?;
        let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
        return finish(outcome, safe, chain, device.into_inner().map(drop), pending_record, None).map(Some);
    }
    if let Some(port) = &o.serial_port {
        let board = crate::hardware::serial::SerialDevice::open(port, o.ack_timeout, None)?;
        let (pending_record, record) = PendingFile::create(&o.record)?;
        let mut device = Recorder::new(board, record, 100).map_err(|e| e.0)?;
        let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
        return finish(outcome, safe, chain, device.into_inner().map(drop), pending_record, None).map(Some);
    }
    Ok(None)
}
