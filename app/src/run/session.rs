//! One `softgen run`: the robot's kind, then its controller (`controllers/`), through the
//! output chain to a device at a fixed rate: the simulated plant (hardware in the loop), a
//! serial board, a comedi card or, with `--dry-run`, nowhere (the channel map and the first
//! commands are printed and no device is touched); and the steps every controller's run
//! shares (the plants as the run wires them, the loop's settings, the header, the estimator,
//! replays).

use crate::run::config::{Drives, PlantIntegratorName, RunConfig, SensorEntry, ValveSupply};
use crate::run::controllers::box_ddp::settings::DdpMpcSettings;
use crate::run::controllers::gait_steering::settings::MpcSettings;
use crate::run::controllers::PlannerSettings;
use crate::run::driver::RunDriver;
use crate::run::estimation::configured_sensors;
use crate::run::outputs::{finish, open_comedi, recorded_plant, trajectory_writer};
use crate::run::request::{ControllerChoice, PlantSetting, RunOptions, RunReport, StateSource};
use crate::run::sensing::Estimation;
use crate::support::output::PendingFile;
use nalgebra::SVector;
use softgen_runtime::Tolerances;
use softgen_runtime::{
    run_hardware, ActuatorCommand, ControlInput, CoordinateKind, Device, DeviceError, DeviceValue, EmulatingPlant,
    LoopConfig, Model, OutputChain, Recorder, Recording, Serpenoid, SimulatedPlant, Simulation, SimulationConfig,
    State, StateEstimator, ValveDecisions, ValvePlant, ValveWiring,
};
use softgen_runtime::{RobotVisitor, RunConfigFile};
use std::io::Write;
use std::sync::atomic::AtomicUsize;
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

pub(crate) fn try_realtime() {
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

/// Where a valve-driven robot's wave starts, checked: its supply, the spec's valve delay, the
/// starting decisions (the supply parameter's value, the options' frequency and offset over
/// the spec's wave) and the run's parameter values.
pub(crate) struct ValveStart<P> {
    /// The supply the run configuration's `[valves]` table names.
    pub(crate) supply: ValveSupply,
    /// The spec's phase delay between neighbouring valves (rad).
    pub(crate) delay: f64,
    /// The wave's starting decisions.
    pub(crate) initial: ValveDecisions,
    /// The run's parameter values.
    pub(crate) params: P,
}

impl<P> ValveStart<P> {
    /// The wave as a run's header states it.
    pub(crate) fn wave_line(&self) -> String {
        format!(
            "{:.3} Hz, offset {:.3}, supply {} = {} ({:.3} bar)",
            self.initial.frequency,
            self.initial.offset,
            self.supply.parameter,
            self.initial.pressure,
            self.initial.pressure / self.supply.units_per_bar
        )
    }
}

/// A valve-driven robot's wave start from `config` (read from `path`) and the options, and
/// the plant's wiring checked (before a dry run too).
pub(crate) fn valve_start<R: Model<N, C>, const N: usize, const C: usize>(
    o: &RunOptions,
    config: &RunConfig,
    path: &str,
) -> Result<ValveStart<R::Params>, String> {
    use softgen_runtime::ParamSet;
    let supply = config.valve_supply.clone().ok_or_else(|| format!("{path}: `{}` needs a [valves] table", R::NAME))?;
    let wave = R::VALVE_GAIT.ok_or_else(|| {
        format!("robot `{}` declares no valve wave ([gait] kind = \"travelling_wave_valves\")", R::NAME)
    })?;
    let params = configured_params::<R, N, C>(config)?;
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
    valve_wiring(&config.channels, R::VALVES.len(), supply.units_per_bar, path)?;
    Ok(ValveStart { supply, delay: wave.delay, initial, params })
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
pub(crate) fn valve_plant_step(loop_config: &LoopConfig) -> f64 {
    (1.0 / loop_config.rate_hz).min(3.5e-3)
}

/// The simulated plant's wiring of a valve robot's channels: a valve channel per valve pair,
/// then the supply's pressure regulator (the actuators' order).
pub(crate) fn valve_wiring(
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
pub(crate) fn print_plant_center_of_mass<R: Model<N, C>, const N: usize, const C: usize>(
    end: Option<&SVector<f64, N>>,
    params: &R::Params,
) {
    if let Some(q) = end {
        let com = R::center_of_mass(q, params, &R::cache(q, params));
        println!("plant       centre of mass at ({:.3}, {:.3}) m", com.x, com.y);
    }
}

/// Joints left free (no servo): robots driven otherwise.
pub(crate) fn no_servo() -> softgen_runtime::JointPd {
    softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 }
}

/// The run configuration's sensors and the state estimator on them, as a run builds it:
/// the configured parameters, the plant's environment (with `[estimator]`'s contact law in
/// place of its own), the loop's period, the spec's initial state at t = 0.
pub(crate) fn state_estimator<R: Model<N, C>, const N: usize, const C: usize>(
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

/// A planner's state estimator, where its run needs one: on the robot always, on the plant
/// with `--state estimated` (built, so its settings and sensors are checked, before a dry
/// run too).
pub(crate) fn planner_estimation<R: Model<N, C>, const N: usize, const C: usize>(
    o: &RunOptions,
    config: &RunConfig,
    path: &str,
    loop_config: &LoopConfig,
) -> Result<Option<Estimation<R, N, C>>, String> {
    let on_robot = o.on_robot();
    match on_robot || o.state == StateSource::Estimated {
        true => Ok(Some(state_estimator::<R, N, C>(config, path, loop_config, on_robot)?)),
        false => Ok(None),
    }
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
    let on_robot = o.on_robot();
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
    let log = crate::run::estimation::SensorLog::parse(&log_path.display().to_string(), &text, &sensors, N, commands)?;
    let (pending, file) = PendingFile::create(&o.sensor_log)?;
    let mut out = std::io::BufWriter::new(file);
    let (periods, largest, fault) = crate::run::estimation::replay_log(filter, &log, &mut out)?;
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
pub(crate) fn planned_inputs<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<ControlInput> {
    let mut inputs = Vec::new();
    if const { !R::MUSCLES.is_empty() } {
        inputs.push(ControlInput::MusclePressures);
    }
    if const { !R::THRUSTERS.is_empty() } {
        inputs.push(ControlInput::Thrusts);
    }
    inputs
}

/// The actuator name of a valve-driven robot's supply regulator.
const VALVE_SUPPLY: &str = "supply";

/// The robot's actuators in channel order, with what each drives: joint actuators, then
/// muscles (a muscle takes pressure, like an actuator length), then thrusters, then valve
/// pairs (by the coordinate each drives) and their supply.
pub(crate) fn actuators<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<(&'static str, Drives)> {
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
        if o.sets_limb_gait() {
            return Err(format!(
                "--limb-gait, --stride and --gait-frequency drive limbed robots; `{}` has no muscles",
                R::NAME
            ));
        }
        self.run_serpenoid::<R, N, C>(config, path, actuated)
    }

    /// A robot driven by pressure-regulated muscles: its paper's limb gait, or box-DDP or the
    /// stride planner with `--controller mpc`.
    fn run_muscles<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        if o.sets_serpenoid() {
            return Err(format!("--amplitude, --temporal-frequency, --spatial-frequency and --offset set a serpenoid gait; `{}` runs a limb gait (--limb-gait, --stride, --gait-frequency)", R::NAME));
        }
        if o.controller == ControllerChoice::Gait {
            o.check_open_loop_goal()?;
            return self.run_limb_gait::<R, N, C>(config, path);
        }
        if o.sets_limb_gait() {
            return Err("--limb-gait, --stride and --gait-frequency set the open-loop gait; the mpc controller plans the pressures (with solver = \"strides\", the gait cycles)".into());
        }
        let box_ddp = || Ok(PlannerSettings::BoxDdp(DdpMpcSettings::default()));
        let planner = configured_planner(&config, &path, o, R::NAME, box_ddp)?;
        // The muscles' 1 ms step: a limbed robot's contacts need it.
        self.run_planner::<R, N, C>(config, path, planner, PlannerStart::Commands { plant_step: 0.001 })
    }

    /// A swimming robot: its paper's swimming inputs held, or box-DDP with `--controller mpc`.
    fn run_swimmer<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        if o.sets_serpenoid() || o.sets_limb_gait() {
            return Err(format!("`{}` swims: choose its inputs with --swim; the gait options do not apply", R::NAME));
        }
        if o.controller == ControllerChoice::Gait {
            o.check_open_loop_goal()?;
            return self.run_swimming_inputs::<R, N, C>(config, path);
        }
        if o.swim.is_some() {
            return Err("--swim holds inputs; the mpc controller plans them".into());
        }
        let box_ddp = || Ok(PlannerSettings::BoxDdp(DdpMpcSettings::default()));
        let planner = configured_planner(&config, &path, o, R::NAME, box_ddp)?;
        // RK4 at 0.25 ms: the joints' viscosity at rest is stiff.
        self.run_planner::<R, N, C>(config, path, planner, PlannerStart::Commands { plant_step: 0.00025 })
    }

    /// A valve-driven robot: its valve wave, or the valve sampler steering the wave to a goal
    /// with `--controller mpc`.
    fn run_valves<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
    ) -> Result<RunReport, String> {
        let o = self.options;
        if o.amplitude.is_some() || o.spatial_frequency.is_some() || o.sets_limb_gait() {
            return Err(format!(
                "`{}` is driven by a valve wave: --temporal-frequency (rad/s) and --offset set it; the other gait options do not apply",
                R::NAME
            ));
        }
        let mpc = o.controller == ControllerChoice::Mpc;
        if !mpc {
            o.check_open_loop_goal()?;
        }
        if mpc && (o.temporal_frequency.is_some() || o.offset.is_some()) {
            return Err(
                "--temporal-frequency and --offset set the open-loop wave; the mpc controller plans them".into()
            );
        }
        let start = valve_start::<R, N, C>(o, &config, &path)?;
        if !mpc {
            return self.run_valve_wave::<R, N, C>(config, path, start);
        }
        let bounds_needed =
            || Err(format!("{path} has no [mpc] table: the valve sampler needs its bounds there (noise, min, max)"));
        let planner = configured_planner(&config, &path, o, R::NAME, bounds_needed)?;
        self.run_planner::<R, N, C>(config, path, planner, PlannerStart::Valves(start))
    }

    /// A robot whose joints follow a serpenoid gait (the spec's, the options over it): the
    /// gait, or with `--controller mpc` the gait sampler steering it or box-DDP deciding its
    /// wave.
    fn run_serpenoid<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        actuated: &[(&str, Drives)],
    ) -> Result<RunReport, String> {
        let o = self.options;
        let gait_defaults = R::GAIT.ok_or_else(|| format!("robot `{}` declares no gait to run", R::NAME))?;
        let gait = Serpenoid {
            amplitude: o.amplitude.unwrap_or(gait_defaults.amplitude),
            temporal_frequency: o.temporal_frequency.unwrap_or(gait_defaults.temporal_frequency),
            spatial_frequency: o.spatial_frequency.unwrap_or(gait_defaults.spatial_frequency),
            offset: o.offset.unwrap_or(gait_defaults.offset),
            ramp: 2.0,
        };
        gait.validate()?;
        if o.controller == ControllerChoice::Gait {
            return self.run_serpenoid_gait::<R, N, C>(config, path, gait, actuated);
        }
        let sampler = || Ok(PlannerSettings::GaitSampling(MpcSettings::default()));
        let planner = configured_planner(&config, &path, o, R::NAME, sampler)?;
        self.run_planner::<R, N, C>(config, path, planner, PlannerStart::Gait { gait, actuated })
    }

    /// The run of `planner`, the one place a planner is dispatched: each planner's run
    /// from what the robot's kind starts it with. The run configuration's parser chose
    /// the planner by the robot's drive, so a planner meets the start it needs.
    fn run_planner<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        planner: PlannerSettings,
        start: PlannerStart<R::Params>,
    ) -> Result<RunReport, String> {
        match (planner, start) {
            (PlannerSettings::GaitSampling(settings), PlannerStart::Gait { gait, actuated }) => {
                self.run_gait_steering::<R, N, C>(config, path, settings, gait, actuated)
            }
            // Box-DDP deciding the gait's wave (`solver = "ddp"`), from the gait given.
            (PlannerSettings::BoxDdp(settings), PlannerStart::Gait { gait, .. }) => {
                self.run_gait_wave_mpc::<R, N, C>(config, path, settings, gait)
            }
            (PlannerSettings::BoxDdp(settings), PlannerStart::Commands { plant_step }) => {
                self.run_horizon_mpc::<R, N, C>(config, path, settings, plant_step, None)
            }
            // The stride planner walks a limbed robot: muscles, no thrusters.
            (PlannerSettings::Strides(settings), PlannerStart::Commands { .. }) if R::THRUSTERS.is_empty() => {
                self.run_stride_mpc::<R, N, C>(config, path, settings)
            }
            (PlannerSettings::ValveSampling(settings), PlannerStart::Valves(start)) => {
                self.run_valve_steering::<R, N, C>(config, path, settings, start)
            }
            (other, _) => Err(planner_mismatch(&path, &other, R::NAME)),
        }
    }
}

/// What a robot's kind starts its planner with.
pub(crate) enum PlannerStart<'a, P> {
    /// Pressures and thrusts (muscles, thrusters): the simulated plant's step (s).
    Commands { plant_step: f64 },
    /// Valves: the wave's start.
    Valves(ValveStart<P>),
    /// Joints following a serpenoid gait: the gait, and the actuators in channel order.
    Gait { gait: Serpenoid, actuated: &'a [(&'a str, Drives)] },
}

/// The run's planner: the run configuration's, or without an `[mpc]` table the `default`
/// planner's settings at the command line's goal (or why it needs the table); then aimed at
/// the command line's goal, the one place the command line changes a planner.
pub(crate) fn configured_planner(
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
pub(crate) fn planner_mismatch(path: &str, planner: &PlannerSettings, robot: &str) -> String {
    format!("{path}: mpc: {} does not plan `{robot}`", planner.description())
}

/// Hardware in the loop: the generated model in the run configuration's environment behind
/// the chain, with `servo` on its joints, stepped with RK4 at the loop period or `max_step`,
/// whichever is shorter. Returns the plant's simulation settings too (the MPC's model shares
/// them).
pub(crate) fn simulated_plant<R: Model<N, C>, const N: usize, const C: usize>(
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
pub(crate) fn plant_simulation_config<R: Model<N, C>, const N: usize, const C: usize>(
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
pub(crate) fn loop_config(o: &RunOptions, config: &RunConfig) -> Result<LoopConfig, String> {
    let loop_config = LoopConfig {
        rate_hz: o.rate_hz.unwrap_or(config.rate_hz),
        duration: o.duration,
        command_timeout: config.safety.command_timeout,
    };
    loop_config.validate()?;
    Ok(loop_config)
}

/// The header's estimator line: its step and the sensors it reads, and from where.
pub(crate) fn print_estimator(sensors: &[softgen_runtime::Sensor], step: f64, on_robot: bool) {
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
pub(crate) fn print_header(
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
pub(crate) fn dry_run(
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
pub(crate) fn run_on_plant<R: Model<N, C>, P: EmulatingPlant<R, N, C>, const N: usize, const C: usize>(
    plant: P,
    o: &RunOptions,
    loop_config: &LoopConfig,
    chain: &mut OutputChain,
    stop: &AtomicUsize,
    controller: impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
) -> Result<(RunReport, Option<SVector<f64, N>>), String> {
    let (mut device, pending_record, pending_trajectory) = recorded_plant(plant, o, |_, _| {})?;
    let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
    let plant = device.into_inner();
    let end = plant.as_ref().ok().map(|p| p.coordinates());
    let report = finish(outcome, safe, chain, plant.map(drop), pending_record, Some(pending_trajectory))?;
    Ok((report, end))
}

/// The robot's parameters with the run configuration's values in place of the spec's.
pub(crate) fn configured_params<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
) -> Result<R::Params, String> {
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
pub(crate) fn plant_inputs(
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
pub(crate) fn run_real_device(
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
        let board = crate::run::serial::SerialDevice::open(port, o.ack_timeout, None)?;
        let (pending_record, record) = PendingFile::create(&o.record)?;
        let mut device = Recorder::new(board, record, 100).map_err(|e| e.0)?;
        let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
        return finish(outcome, safe, chain, device.into_inner().map(drop), pending_record, None).map(Some);
    }
    Ok(None)
}
