//! `softgen run`: a robot's controller through its output chain to a device at a fixed rate.

use clap::{Args, ValueEnum};
use softgen::signals::{signal_exit, stop_flag};
use std::path::PathBuf;
use std::process::ExitCode;

/// The exit status of a run whose safe state could not be sent or confirmed at its end,
/// whatever stopped it: distinct from a fault's 1 and a signal's 128 + n, because the
/// outputs may still be driven.
pub const SAFE_STATE_FAILED_STATUS: u8 = 3;
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DeviceName {
    /// The generated model integrated in step with the commands (hardware in the loop).
    Sim,
    /// A microcontroller board on a serial line (docs/src/control/serial-protocol.md); needs --port.
    Serial,
    /// A comedi DAQ card (NI PCI-6221, PCI-6703, ...); --port is its device, e.g.
    /// /dev/comedi0. Needs a build with `--features comedi`.
    Comedi,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    #[arg(long, default_value = softgen::papers::DEFAULT_ROBOT)]
    robot: String,
    /// Run configuration (channel map, ranges, safety limits); default: the snake's.
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "sim")]
    device: DeviceName,
    /// Serial port of the board (with --device serial).
    #[arg(long)]
    port: Option<String>,
    /// Acknowledgement timeout of the serial board (ms).
    #[arg(long, default_value_t = 50)]
    ack_timeout_ms: u64,
    /// Loop rate (Hz, 1-100000); default: the run configuration's.
    #[arg(long)]
    rate: Option<f64>,
    /// Run length (s; at most 1e9 loop periods).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Where every device value is recorded with its time.
    #[arg(long, default_value = "out/run_commands.csv")]
    record: PathBuf,
    /// Where the simulated plant's trajectory is written.
    #[arg(long, default_value = "out/run_plant.csv")]
    trajectory: PathBuf,
    /// Print the channel map and the first commands; touch no device.
    #[arg(long)]
    dry_run: bool,
    /// Also write the simulated plant's trajectory as a 3D animation page beside it
    /// (--device sim).
    #[arg(long)]
    view: bool,
    /// Try SCHED_FIFO and mlockall (says so when the system refuses).
    #[arg(long)]
    realtime: bool,
    /// Feed a recorded run's device values (a --record file, from the robot or the
    /// simulated plant) to the simulated plant instead of running a controller, and write
    /// the plant's trajectory (and with --view its page), at the recording's rate.
    #[arg(long, conflicts_with_all = [
        "port", "dry_run", "realtime", "duration", "record", "amplitude", "temporal_frequency",
        "spatial_frequency", "offset", "controller", "goal", "limb_gait", "stride", "gait_frequency", "swim", "state",
    ])]
    replay: Option<PathBuf>,
    #[arg(long)]
    amplitude: Option<f64>,
    /// The gait's temporal frequency (rad/s); for a valve robot, its valve wave's omega.
    #[arg(long)]
    temporal_frequency: Option<f64>,
    #[arg(long)]
    spatial_frequency: Option<f64>,
    /// The gait's offset; for a valve robot, its valve wave's offset (phi).
    #[arg(long)]
    offset: Option<f64>,
    /// What drives the actuators: the robot's gait, or the model-predictive controller
    /// steering the gait to a goal (needs --device sim: it uses the plant's state).
    #[arg(long, value_enum, default_value = "gait")]
    controller: ControllerName,
    /// Goal of the model-predictive controller's centre of mass, "X,Y" in metres (world
    /// frame), or "X,Y,Z" for robots that move in space (a swimmer; without Z, the start's
    /// height); default: the run configuration's [mpc] goal.
    #[arg(long, value_parser = parse_goal, allow_hyphen_values = true)]
    goal: Option<Goal>,
    /// Muscle-driven robots: the gait, by the name its paper gives it (002: forward,
    /// backward, turn-left, turn-right, in-place-cw, in-place-ccw; default backward. 000:
    /// planar or spatial rolling; default planar).
    #[arg(long)]
    limb_gait: Option<String>,
    /// Limbed robots: stride radius of the circling limbs (m); default 0.10.
    #[arg(long, allow_hyphen_values = true)]
    stride: Option<f64>,
    /// Muscle-driven robots: gait cycles per second (Hz); default 1.00 for a limbed robot, 0.5
    /// turns of the bending plane for a rolling one.
    #[arg(long, allow_hyphen_values = true)]
    gait_frequency: Option<f64>,
    /// Swimming robots: which of its paper's inputs to hold (004: forward, backward,
    /// two-propellers, yaw-0.3, yaw-0.1, pitch-1, pitch-2, spiral; default forward).
    #[arg(long)]
    swim: Option<String>,
    /// The mpc controller's state on the simulated plant: the plant's own (true), or the
    /// state estimator's from the run configuration's [[sensors]], emulated from the plant
    /// with their noise, rate, latency and lost frames (estimated).
    #[arg(long, value_enum, default_value = "true")]
    state: StateName,
    /// Where --state estimated writes each period's sensor readings, estimate and the
    /// commands sent (CSV); --estimate-from writes its replay there.
    #[arg(long, default_value = "out/run_sensors.csv")]
    sensor_log: PathBuf,
    /// Replay a sensor log (a --sensor-log file) through the state estimator the run
    /// configuration builds, period by period, with no loop or plant: the log is written
    /// again to --sensor-log and the estimates compared with the logged ones.
    #[arg(long, conflicts_with_all = [
        "port", "dry_run", "realtime", "replay", "controller", "goal", "state", "amplitude", "temporal_frequency",
        "spatial_frequency", "offset", "limb_gait", "stride", "gait_frequency", "swim", "view",
    ])]
    estimate_from: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum StateName {
    True,
    Estimated,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ControllerName {
    /// The robot's gait, open loop.
    Gait,
    /// Model-predictive control towards --goal: a serpenoid robot's gait re-planned by
    /// sampling, a valve robot's wave (supply pressure, frequency, offset) by sampling, a
    /// robot driven by pressures and thrusts planned by box-DDP.
    Mpc,
}

/// A goal from the command line: in the plane, and a height if given.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Goal {
    plane: nalgebra::Vector2<f64>,
    height: Option<f64>,
}

pub(crate) fn parse_goal(text: &str) -> Result<Goal, String> {
    let bad = |why: String| format!("{why}; expected X,Y or X,Y,Z in metres (e.g. 1.0,-0.7), got `{text}`");
    let values = super::values::parse_list("goal", text).map_err(bad)?;
    if !(2..=3).contains(&values.len()) {
        return Err(bad(format!("--goal: {} values", values.len())));
    }
    if let Some(i) = values.iter().position(|v| v.abs() > 1e3) {
        return Err(bad(format!("--goal: value {i} is {}, more than a kilometre away", values[i])));
    }
    Ok(Goal { plane: nalgebra::Vector2::new(values[0], values[1]), height: values.get(2).copied() })
}

pub(crate) fn run(args: RunArgs) -> Result<ExitCode, String> {
    if args.replay.is_some() && !matches!(args.device, DeviceName::Sim) {
        return Err("--replay feeds the recording to the simulated plant: leave out --device".into());
    }
    let stop = stop_flag()?;
    for path in [&args.record, &args.trajectory, &args.sensor_log] {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    let (serial_port, comedi_device) = match (args.device, args.port) {
        (DeviceName::Sim, None) => (None, None),
        (DeviceName::Sim, Some(_)) => return Err("--port goes with --device serial or comedi".into()),
        (DeviceName::Serial, Some(p)) => (Some(p), None),
        (DeviceName::Comedi, Some(p)) => (None, Some(p)),
        (DeviceName::Serial | DeviceName::Comedi, None) => {
            return Err("--device serial and --device comedi need --port PATH".into())
        }
    };
    if args.view && (serial_port.is_some() || comedi_device.is_some()) {
        return Err("--view draws the simulated plant's trajectory: run it with --device sim (a robot's own \
                    state is not measured)"
            .into());
    }
    let (view, robot) = (args.view && !args.dry_run, args.robot.clone());
    let options = softgen::RunOptions {
        robot: args.robot,
        serial_port,
        comedi_device,
        ack_timeout: std::time::Duration::from_millis(args.ack_timeout_ms),
        config: args.config,
        dry_run: args.dry_run,
        rate_hz: args.rate,
        duration: args.duration,
        record: args.record,
        trajectory: args.trajectory,
        realtime: args.realtime,
        amplitude: args.amplitude,
        temporal_frequency: args.temporal_frequency,
        spatial_frequency: args.spatial_frequency,
        offset: args.offset,
        controller: match args.controller {
            ControllerName::Gait => softgen::ControllerChoice::Gait,
            ControllerName::Mpc => softgen::ControllerChoice::Mpc,
        },
        goal: args.goal.map(|g| g.plane),
        goal_height: args.goal.and_then(|g| g.height),
        limb_gait: args.limb_gait,
        stride: args.stride,
        gait_frequency: args.gait_frequency,
        swim: args.swim,
        replay: args.replay,
        sensor_log: args.sensor_log,
        estimate_from: args.estimate_from,
        state: match args.state {
            StateName::True => softgen::StateSource::True,
            StateName::Estimated => softgen::StateSource::Estimated,
        },
    };
    let report = softgen::run_on_device(&options, stop)?;
    if let (true, Some(plant)) = (view, &report.plant) {
        let page = options.trajectory.with_extension("view.html");
        let title = format!("{robot} on the simulated plant (softgen run)");
        let rate = options.rate_hz.map_or_else(|| "the configured rate".to_string(), |r| format!("{r} Hz"));
        let line = match &options.replay {
            Some(record) => format!("the recorded values of {} at {rate}", record.display()),
            None => format!("{} s at {rate} through the output chain", options.duration),
        };
        let setup = softgen::ViewSetup { title: &title, summary: &line, terrain: plant.terrain, params: &plant.params };
        let frames = softgen::write_view_from_csv(&options.trajectory, &robot, &setup, &page)?;
        println!("view            {} ({frames} frames)", page.display());
    }
    // The last line says how the run left the robot; a run whose safe state failed exits
    // with its own status, whatever stopped it, so no script reads it as a safe stop.
    let ending = report.ending();
    let unsafe_end = report.safe_state_failure.is_some();
    match report.fault {
        None => Ok(ExitCode::SUCCESS),
        Some(softgen_runtime::SafetyFault::Signal(s)) => {
            eprintln!("stopped by signal {s}: {ending}");
            Ok(if unsafe_end { ExitCode::from(SAFE_STATE_FAILED_STATUS) } else { signal_exit(s as usize) })
        }
        Some(fault) if unsafe_end => {
            eprintln!("error: run stopped: {fault} ({ending})");
            Ok(ExitCode::from(SAFE_STATE_FAILED_STATUS))
        }
        Some(fault) => Err(format!("run stopped: {fault} ({ending})")),
    }
}
