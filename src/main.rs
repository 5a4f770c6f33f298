//! The `softgen` command line: `simulate` (the default: the pedal-wave demo), `eval`, `run`,
//! `roll`, `list`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use softgen::{
    eval_json, plot_run, run_scenario, AnisotropyName, EvalInput, IntegratorName, RunSettings, TerrainName, ROBOTS,
};
use std::io::{BufWriter, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "softgen",
    version,
    about = "Equations of motion for soft and hybrid robots: simulate and evaluate generated models",
    long_about = "Equations of motion for soft and hybrid robots.\n\nWith no subcommand, runs `simulate` with its defaults: the modular snake's pedal wave on flat ground for 20 s (003_011ffa2a91e05fc5), writing out/snake_pedal_wave.csv, .png and .svg.",
    args_conflicts_with_subcommands = true,
    allow_negative_numbers = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    simulate: SimulateArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a robot (default: the paper's pedal wave on flat ground for 20 s).
    #[command(allow_negative_numbers = true)]
    Simulate(SimulateArgs),
    /// Print M, C qd, G and every contact point's position, velocity and Jacobian as JSON.
    #[command(allow_negative_numbers = true)]
    Eval(EvalArgs),
    /// Run a robot's gait through its output chain to a device at a fixed rate (default: the
    /// snake on the simulated plant, hardware in the loop, 1 kHz for 10 s).
    #[command(allow_negative_numbers = true)]
    Run(RunArgs),
    /// The soft snake (000_a2f8bdeafcf4372f): dropped from 0.6 m, then planar or spatial
    /// rolling driven by pressures; CSV, plots and travelling velocities beside Table I.
    #[command(allow_negative_numbers = true)]
    Roll(RollArgs),
    /// The seed papers' experiments: `experiment list` names them, `experiment run NAME`
    /// runs one, writes its CSV and figures under out/NAME/, compares with the paper and
    /// ends with `verdict: reproduced` or `verdict: differs: <reason>`.
    Experiment(ExperimentArgs),
    /// Run a sweep file on every core: one results table (Parquet, or CSV) with each run's
    /// inputs, figures and status. Interrupted, the same command resumes it; `--shard K/N`
    /// runs one of N slices (for array jobs) and `sweep merge` joins the slices.
    #[command(args_conflicts_with_subcommands = true)]
    Sweep(SweepArgs),
    /// List the robots and their generalized coordinates.
    List,
}

#[derive(Args)]
struct ExperimentArgs {
    #[command(subcommand)]
    action: ExperimentAction,
}

#[derive(Subcommand)]
enum ExperimentAction {
    /// Print every experiment's name, one a line.
    List {
        /// Also say what each runs.
        #[arg(long)]
        verbose: bool,
    },
    /// Run one experiment.
    Run {
        /// Its name, as `experiment list` prints it.
        name: String,
        /// Output folder (the experiment writes into NAME/ inside it).
        #[arg(long, default_value = "out")]
        output: PathBuf,
    },
}

fn experiment(args: ExperimentArgs) -> Result<ExitCode, String> {
    match args.action {
        ExperimentAction::List { verbose } => {
            for e in softgen::EXPERIMENTS {
                if verbose {
                    println!("{:<22} {}", e.name, e.what);
                } else {
                    println!("{}", e.name);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ExperimentAction::Run { name, output } => {
            let e = softgen::find_experiment(&name)?;
            println!("{}: {}", e.name, e.what);
            let start = Instant::now();
            let report = e.run(&output)?;
            for line in &report.lines {
                println!("{line}");
            }
            println!("outputs in {} ({:.1} s)", output.join(e.name).display(), start.elapsed().as_secs_f64());
            println!("{}", report.verdict_line());
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Args)]
struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepAction>,
    /// The sweep file (TOML; see sweeps/README.md).
    file: Option<PathBuf>,
    /// Run only shard K of N (K = 0 .. N-1), the runs whose number is K modulo N.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Results table (default: out/sweeps/<name>.parquet, or .shard-K-of-N.parquet).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Table format (default: from --output's extension, else Parquet).
    #[arg(long, value_enum)]
    format: Option<softgen::TableFormat>,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
}

#[derive(Subcommand)]
enum SweepAction {
    /// Join the shards' tables into the table the whole sweep gives on one machine.
    Merge {
        /// The merged table (.parquet or .csv).
        #[arg(long)]
        output: PathBuf,
        /// Every shard's table.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
}

fn sweep(args: SweepArgs) -> Result<ExitCode, String> {
    if let Some(SweepAction::Merge { output, shards }) = args.action {
        let mut tables = Vec::new();
        for path in &shards {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            tables.push((
                path.display().to_string(),
                softgen::SweepTable::from_parquet(bytes, &path.display().to_string())?,
            ));
        }
        let merged = softgen::SweepTable::merge(tables)?;
        merged.write(&output, softgen::format_of(&output))?;
        println!(
            "merged {} shards: {} runs ({} failed) -> {}",
            shards.len(),
            merged.rows.len(),
            merged.failed(),
            output.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let file = args.file.ok_or("give a sweep file (softgen sweep FILE) or `softgen sweep merge`")?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let sweep = softgen::Sweep::parse(&text, &file.display().to_string())?;
    let shard = args.shard.as_deref().map(softgen::Shard::parse).transpose()?;
    let format =
        args.format.or(args.output.as_deref().map(softgen::format_of)).unwrap_or(softgen::TableFormat::Parquet);
    let output = args.output.unwrap_or_else(|| softgen::default_output(&sweep, shard, format));
    let stop = stop_flag()?;
    let options = softgen::SweepOptions { shard, journal: None, workers: args.workers, stop: Arc::clone(&stop) };
    let runs = sweep.shard_runs(shard).len();
    println!(
        "sweep {}: {} of {} runs ({}){}",
        sweep.name,
        runs,
        sweep.points.len(),
        sweep.target.describe(),
        shard.map_or(String::new(), |s| format!(", shard {s}"))
    );
    let bar = ProgressBar::new(runs as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed, {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let progress = |done: usize, _: usize| bar.set_position(done as u64);
    let outcome = softgen::sweep_to_file(&sweep, &output, format, &options, &progress);
    bar.finish_and_clear();
    let outcome = outcome?;
    if !outcome.complete {
        let signal = stop.load(Ordering::Relaxed);
        eprintln!(
            "interrupted: {} of {runs} runs done, kept in {}; the same command resumes the sweep",
            outcome.table.rows.len(),
            softgen::journal_path(&output).display()
        );
        return Ok(if signal != 0 { signal_exit(signal) } else { ExitCode::FAILURE });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = if args.workers == 0 { cores } else { args.workers };
    let rate = outcome.ran as f64 / outcome.wall_seconds.max(1e-9);
    println!(
        "{} runs ({} failed; {} from the journal, {} run now in {:.2} s: {:.3} runs/s, {:.3} per worker on {workers})",
        outcome.table.rows.len(),
        outcome.table.failed(),
        outcome.resumed,
        outcome.ran,
        outcome.wall_seconds,
        rate,
        rate / workers.min(outcome.ran.max(1)) as f64
    );
    if outcome.table.failed() > 0 {
        println!("failed runs have their error in the `error` column");
    }
    println!("table          {}", output.display());
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy, ValueEnum)]
enum RollingName {
    /// All sections bend in one plane, which turns about the body axis.
    Planar,
    /// Adjacent sections' bending planes shifted by pi / 3.
    Spatial,
}

#[derive(Args)]
struct RollArgs {
    #[arg(value_enum, default_value = "spatial")]
    gait: RollingName,
    /// Gait time after the drop (s).
    #[arg(long, default_value_t = 15.0)]
    duration: f64,
    /// Time to fall from 0.6 m and settle before the gait (s).
    #[arg(long, default_value_t = 2.0)]
    settle: f64,
    /// Turns of the bending plane per second (Hz).
    #[arg(long, default_value_t = 0.5)]
    frequency: f64,
    /// Pressure ceiling (bar).
    #[arg(long, default_value_t = 3.0)]
    ceiling: f64,
    /// Bend of every section (rad); "max" for the largest the ceiling allows.
    #[arg(long, default_value = "0.4")]
    bend: String,
    /// Relative tolerance of the ROS34PW2 integrator.
    #[arg(long, default_value_t = 1e-3)]
    tolerance: f64,
    /// Output folder.
    #[arg(long, default_value = "out")]
    output: PathBuf,
}

fn roll(args: RollArgs) -> Result<ExitCode, String> {
    let stop = stop_flag()?;
    let rolling = match args.gait {
        RollingName::Planar => softgen::Rolling::Planar,
        RollingName::Spatial => softgen::Rolling::Spatial,
    };
    let mut run = softgen::RollingRun::new(rolling);
    run.stop = Some(Arc::clone(&stop));
    run.duration = args.duration;
    run.settle = args.settle;
    run.frequency = args.frequency;
    run.ceiling = args.ceiling;
    run.tolerance = args.tolerance;
    run.bend = match args.bend.as_str() {
        "max" => None,
        text => Some(text.parse::<f64>().map_err(|_| format!("--bend: expected radians or \"max\", got `{text}`"))?),
    };
    let name = match rolling {
        softgen::Rolling::Planar => "planar",
        softgen::Rolling::Spatial => "spatial",
    };
    let progress = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
    progress.set_style(ProgressStyle::with_template("{bar:40} {msg}").map_err(|e| e.to_string())?);
    let end = run.settle + run.duration;
    let summary = softgen::run_rolling(&run, |s| {
        progress.set_position((1000.0 * s.t / end.max(1e-9)) as u64);
        progress.set_message(format!("t = {:.1} s", s.t));
    })?;
    progress.finish_and_clear();
    let csv_path = softgen::write_rolling_outputs(&summary, name, &args.output)?;
    let (paper_x, paper_y) = match rolling {
        softgen::Rolling::Planar => (3.51, 9.39),
        softgen::Rolling::Spatial => (0.67, 7.77),
    };
    // Where the run ended (the end time unless it stopped early).
    let simulated = summary.samples.last().map_or(0.0, |s| s.t);
    println!(
        "{name} rolling, {} s at {} Hz, {} bar ceiling, bend {:.3} rad per section",
        run.duration, run.frequency, run.ceiling, summary.bend
    );
    match summary.velocity_cm_s {
        Some((vx, vy)) => println!("travelling velocity  V_x = {vx:.2} cm/s, V_y = {vy:.2} cm/s (paper's model, Table I: {paper_x}, {paper_y})"),
        None => println!(
            "travelling velocity  not measured: it is fitted after the gait's ramp, from t = {:.1} s, and the run ended at t = {simulated:.1} s",
            summary.window_start
        ),
    }
    println!(
        "integration          {} right-hand sides, {} Jacobians, {:.2} s wall for {:.1} s simulated ({:.2}x real time)",
        summary.evaluations,
        summary.jacobians,
        summary.wall_seconds,
        simulated,
        simulated / summary.wall_seconds.max(1e-9)
    );
    println!(
        "outputs              {} and .position, .orientation, .lengths, .track (.png and .svg)",
        csv_path.display()
    );
    if let Some(code) = summary.error.as_ref().and_then(|e| stopped_by_signal(&stop, e)) {
        return Ok(code);
    }
    match summary.error {
        Some(e) => Err(format!("the run stopped early: {e} (outputs above hold everything up to then)")),
        None => Ok(ExitCode::SUCCESS),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum DeviceName {
    /// The generated model integrated in step with the commands (hardware in the loop).
    Sim,
    /// A microcontroller board on a serial line (docs/serial-protocol.md); needs --port.
    Serial,
    /// A comedi DAQ card (NI PCI-6221, PCI-6703, ...); --port is its device, e.g.
    /// /dev/comedi0. Needs a build with `--features comedi`.
    Comedi,
}

#[derive(Args)]
struct RunArgs {
    #[arg(long, default_value = "snake_pedal_wave")]
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
    /// Try SCHED_FIFO and mlockall (says so when the system refuses).
    #[arg(long)]
    realtime: bool,
    #[arg(long)]
    amplitude: Option<f64>,
    #[arg(long)]
    temporal_frequency: Option<f64>,
    #[arg(long)]
    spatial_frequency: Option<f64>,
    #[arg(long)]
    offset: Option<f64>,
    /// What drives the actuators: the robot's gait, or the model-predictive controller
    /// steering the gait to a goal (needs --device sim: it uses the plant's state).
    #[arg(long, value_enum, default_value = "gait")]
    controller: ControllerName,
    /// Goal of the model-predictive controller, "X,Y" in metres (world frame); default:
    /// the run configuration's [mpc] goal.
    #[arg(long, value_parser = parse_goal, allow_hyphen_values = true)]
    goal: Option<nalgebra::Vector2<f64>>,
    /// Limbed robots (the pinniped): the gait; default backward.
    #[arg(long, value_enum)]
    limb_gait: Option<LimbGaitName>,
    /// Limbed robots: stride radius of the circling limbs (m); default 0.10.
    #[arg(long, allow_hyphen_values = true)]
    stride: Option<f64>,
    /// Limbed robots: gait cycles per second (Hz); default 1.00.
    #[arg(long, allow_hyphen_values = true)]
    gait_frequency: Option<f64>,
    /// Swimming robots (the underwater snake): which of the paper's swimming inputs to
    /// hold; default forward.
    #[arg(long, value_enum)]
    swim: Option<SwimName>,
}

/// The underwater snake's inputs (004, Sec 3.2).
#[derive(Clone, Copy, ValueEnum)]
enum SwimName {
    Forward,
    Backward,
    TwoPropellers,
    #[value(name = "yaw-0.3")]
    Yaw03,
    #[value(name = "yaw-0.1")]
    Yaw01,
    #[value(name = "pitch-1")]
    Pitch1,
    #[value(name = "pitch-2")]
    Pitch2,
    Spiral,
}

/// The pinniped's gaits (002, section III).
#[derive(Clone, Copy, ValueEnum)]
enum LimbGaitName {
    Forward,
    Backward,
    TurnLeft,
    TurnRight,
    InPlaceCw,
    InPlaceCcw,
}

#[derive(Clone, Copy, ValueEnum)]
enum ControllerName {
    /// The robot's gait, open loop.
    Gait,
    /// Model-predictive control: re-plans amplitude, frequency and offset towards --goal.
    Mpc,
}

fn parse_goal(text: &str) -> Result<nalgebra::Vector2<f64>, String> {
    let bad = || format!("expected X,Y in metres (e.g. 1.0,-0.7), got `{text}`");
    let (x, y) = text.split_once(',').ok_or_else(bad)?;
    let x: f64 = x.trim().parse().map_err(|_| bad())?;
    let y: f64 = y.trim().parse().map_err(|_| bad())?;
    if !(x.is_finite() && y.is_finite()) {
        return Err(bad());
    }
    Ok(nalgebra::Vector2::new(x, y))
}

/// A flag that SIGINT and SIGTERM set to their number, so that a long run ends at its next
/// control period with its outputs in order instead of being killed mid-write.
fn stop_flag() -> Result<Arc<AtomicUsize>, String> {
    let stop = Arc::new(AtomicUsize::new(0));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(signal, Arc::clone(&stop), signal as usize)
            .map_err(|e| format!("cannot install the handler for signal {signal}: {e}"))?;
    }
    Ok(stop)
}

/// Exit status for a run ended by a signal: 128 + the signal number, as shells do.
fn signal_exit(signal: usize) -> ExitCode {
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}

/// When a simulated run ended with `error` because a signal set `stop`: says so and gives
/// the signal's exit status (the outputs written so far are kept).
fn stopped_by_signal(stop: &AtomicUsize, error: &impl std::fmt::Display) -> Option<ExitCode> {
    let signal = stop.load(Ordering::Relaxed);
    (signal != 0).then(|| {
        eprintln!("{error}: the outputs above hold everything up to then");
        signal_exit(signal)
    })
}

fn run(args: RunArgs) -> Result<ExitCode, String> {
    let stop = stop_flag()?;
    for path in [&args.record, &args.trajectory] {
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
        goal: args.goal,
        limb_gait: args.limb_gait.map(|g| match g {
            LimbGaitName::Forward => softgen::Gait::Forward,
            LimbGaitName::Backward => softgen::Gait::Backward,
            LimbGaitName::TurnLeft => softgen::Gait::CrawlTurn { left: true },
            LimbGaitName::TurnRight => softgen::Gait::CrawlTurn { left: false },
            LimbGaitName::InPlaceCw => softgen::Gait::InPlace { counterclockwise: false },
            LimbGaitName::InPlaceCcw => softgen::Gait::InPlace { counterclockwise: true },
        }),
        stride: args.stride,
        gait_frequency: args.gait_frequency,
        swim: args.swim.map(|w| match w {
            SwimName::Forward => softgen::straight_conditions()[0].clone(),
            SwimName::Backward => softgen::straight_conditions()[1].clone(),
            SwimName::TwoPropellers => softgen::straight_conditions()[2].clone(),
            SwimName::Yaw03 => softgen::yaw_conditions()[0].clone(),
            SwimName::Yaw01 => softgen::yaw_conditions()[1].clone(),
            SwimName::Pitch1 => softgen::pitch_conditions()[0].clone(),
            SwimName::Pitch2 => softgen::pitch_conditions()[1].clone(),
            SwimName::Spiral => softgen::spiral_conditions()[0].clone(),
        }),
    };
    let report = softgen::run_on_device(&options, stop)?;
    match report.fault {
        None => Ok(ExitCode::SUCCESS),
        Some(softgen_runtime::SafetyFault::Signal(s)) => {
            eprintln!("stopped by signal {s}: outputs in their safe state, logs complete");
            Ok(signal_exit(s as usize))
        }
        Some(fault) => Err(format!("run stopped: {fault} (outputs in their safe state, logs complete)")),
    }
}

/// The defaults of a run's settings: the flags of `simulate` show the sweep file's defaults.
const DEFAULTS: RunSettings = RunSettings::DEFAULT;

#[derive(Args, Clone)]
struct SimulateArgs {
    /// Robot to simulate.
    #[arg(long, default_value = "snake_pedal_wave")]
    robot: String,
    /// Simulated time (s).
    #[arg(long, default_value_t = DEFAULTS.duration)]
    duration: f64,
    #[arg(long, value_enum, default_value_t = DEFAULTS.integrator)]
    integrator: IntegratorName,
    /// Step of fixed-step integrators, and controller/sample period (s).
    #[arg(long, default_value_t = DEFAULTS.dt)]
    dt: f64,
    /// Relative tolerance of dopri5 and ros34 (default: 1e-6 for dopri5, 1e-3 for ros34).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 and ros34 (default: 1e-8 for dopri5, 1e-4 for ros34).
    #[arg(long)]
    atol: Option<f64>,
    #[arg(long, value_enum, default_value_t = DEFAULTS.terrain)]
    terrain: TerrainName,
    /// Stair face position along x (m).
    #[arg(long, default_value_t = DEFAULTS.stair_position)]
    stair_position: f64,
    /// Stair height (m).
    #[arg(long, default_value_t = DEFAULTS.stair_height)]
    stair_height: f64,
    /// Pipe inner diameter (m).
    #[arg(long, default_value_t = DEFAULTS.pipe_diameter)]
    pipe_diameter: f64,
    /// Gait amplitude A (rad); serpenoid gaits only.
    #[arg(long)]
    amplitude: Option<f64>,
    /// Gait temporal frequency omega (rad/s); for a valve wave 2 pi f.
    #[arg(long)]
    temporal_frequency: Option<f64>,
    /// Gait spatial frequency eta (rad); for a valve wave the delay beta_i / i.
    #[arg(long, allow_hyphen_values = true)]
    spatial_frequency: Option<f64>,
    /// Gait joint offset (rad); for a valve wave eq 13's phi (0 straight, 0.4 turns).
    #[arg(long, allow_hyphen_values = true)]
    offset: Option<f64>,
    /// Gait fade-in time (s); 0 starts the full wave at once.
    #[arg(long, default_value_t = DEFAULTS.ramp)]
    ramp: f64,
    /// No gait: passive joints.
    #[arg(long)]
    passive: bool,
    /// Adapt the spatial frequencies with the admittance controller (eqs 22-24).
    #[arg(long)]
    admittance: bool,
    #[arg(long, default_value_t = DEFAULTS.admittance_inertia)]
    admittance_inertia: f64,
    #[arg(long, default_value_t = DEFAULTS.admittance_damping)]
    admittance_damping: f64,
    #[arg(long, default_value_t = DEFAULTS.admittance_stiffness)]
    admittance_stiffness: f64,
    /// k_Pi of eq 24.
    #[arg(long, default_value_t = DEFAULTS.admittance_gain)]
    admittance_gain: f64,
    /// Contact spring constant k (N/m).
    #[arg(long)]
    contact_stiffness: Option<f64>,
    /// Contact damping d (N s/m).
    #[arg(long)]
    contact_damping: Option<f64>,
    /// Friction coefficient (along the body, or isotropic).
    #[arg(long)]
    friction: Option<f64>,
    /// Friction coefficient across the body.
    #[arg(long)]
    friction_across: Option<f64>,
    /// Directions of the two friction coefficients (default: the spec's).
    #[arg(long, value_enum)]
    anisotropy: Option<AnisotropyName>,
    /// Regularised friction velocity scale (m/s); 0 = exact Coulomb sign.
    #[arg(long)]
    friction_regularisation: Option<f64>,
    /// Set a model parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Output directory for <robot>.csv, <robot>.png and <robot>.svg.
    #[arg(long, default_value = "out")]
    output: PathBuf,
    /// Write every k-th sample to the CSV.
    #[arg(long, default_value_t = 5)]
    csv_every: usize,
    /// Skip the PNG plot.
    #[arg(long)]
    no_plot: bool,
}

impl SimulateArgs {
    /// The run settings these flags give (a sweep file gives the same by key).
    fn settings(&self) -> Result<RunSettings, String> {
        let mut params = std::collections::BTreeMap::new();
        for (name, value) in parse_sets(&self.set)? {
            params.insert(name, value);
        }
        Ok(RunSettings {
            duration: self.duration,
            integrator: self.integrator,
            dt: self.dt,
            rtol: self.rtol,
            atol: self.atol,
            terrain: self.terrain,
            stair_position: self.stair_position,
            stair_height: self.stair_height,
            pipe_diameter: self.pipe_diameter,
            amplitude: self.amplitude,
            temporal_frequency: self.temporal_frequency,
            spatial_frequency: self.spatial_frequency,
            offset: self.offset,
            ramp: self.ramp,
            passive: self.passive,
            admittance: self.admittance,
            admittance_inertia: self.admittance_inertia,
            admittance_damping: self.admittance_damping,
            admittance_stiffness: self.admittance_stiffness,
            admittance_gain: self.admittance_gain,
            contact_stiffness: self.contact_stiffness,
            contact_damping: self.contact_damping,
            friction: self.friction,
            friction_across: self.friction_across,
            anisotropy: self.anisotropy,
            friction_regularisation: self.friction_regularisation,
            params,
        })
    }
}

#[derive(Args)]
struct EvalArgs {
    /// Robot to evaluate.
    robot: String,
    /// Generalized coordinates, comma-separated (default: the spec's initial pose).
    #[arg(long, allow_hyphen_values = true)]
    q: Option<String>,
    /// Generalized velocities, comma-separated (default: zero).
    #[arg(long, allow_hyphen_values = true)]
    qd: Option<String>,
    /// Read {"q": [...], "qd": [...], "params": {"name": value}} as JSON from stdin.
    #[arg(long)]
    stdin: bool,
    /// Set a model parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

fn parse_list(name: &str, text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .enumerate()
        .map(|(i, s)| s.parse::<f64>().map_err(|_| format!("--{name}: value {i} `{s}` is not a number")))
        .collect()
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, f64)>, String> {
    sets.iter()
        .map(|s| {
            let (name, value) = s.split_once('=').ok_or_else(|| format!("--set `{s}`: expected NAME=VALUE"))?;
            let v = value.trim().parse::<f64>().map_err(|_| format!("--set `{s}`: `{value}` is not a number"))?;
            Ok((name.trim().to_string(), v))
        })
        .collect()
}

fn simulate(args: SimulateArgs) -> Result<ExitCode, String> {
    let stop = stop_flag()?;
    let settings = args.settings()?;
    let resolved = settings.scenario(&args.robot)?;
    for note in &resolved.notes {
        eprintln!("note: {note}");
    }
    let integrator = resolved.integrator;
    let mut s = resolved.scenario;
    s.stop = Some(Arc::clone(&stop));
    s.csv_every = args.csv_every;

    std::fs::create_dir_all(&args.output).map_err(|e| format!("{}: {e}", args.output.display()))?;
    let csv_path = args.output.join(format!("{}.csv", args.robot));
    // Written beside the target and renamed once the run has produced it, so a rejected run
    // (bad parameter, bad robot, a state that fails at t = 0) never clobbers earlier outputs.
    let (pending_csv, file) = softgen::PendingFile::create(&csv_path)?;
    let mut csv = BufWriter::new(file);

    let bar = ProgressBar::with_draw_target(Some((s.duration * 1000.0) as u64), ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template("{bar:40} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let start = Instant::now();
    let mut shown = false;
    let mut progress = |t: f64| {
        if !shown && start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        bar.set_position((t * 1000.0) as u64);
        if shown {
            bar.set_message(format!("{t:.2} / {:.2} s simulated", s.duration));
        }
    };
    let result = run_scenario(&s, Some(&mut csv), &mut progress);
    bar.finish_and_clear();
    std::io::Write::flush(&mut csv).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    drop(csv);
    let summary = result?;
    pending_csv.commit()?;

    let start_com = summary.com_start();
    let end_com = summary.com_end();
    println!("robot          {}", summary.robot);
    println!("terrain        {}", summary.terrain);
    println!(
        "simulated      {:.3} s in {:.3} s wall ({:.0}x real time)",
        summary.simulated,
        summary.wall_seconds,
        summary.simulated / summary.wall_seconds.max(1e-9)
    );
    println!("rhs calls      {}", summary.evaluations);
    println!(
        "CoM            ({:.4}, {:.4}, {:.4}) -> ({:.4}, {:.4}, {:.4}) m",
        start_com.x, start_com.y, start_com.z, end_com.x, end_com.y, end_com.z
    );
    if summary.simulated > 0.0 {
        println!("mean velocity  {:.2} cm/s along x", 100.0 * (end_com.x - start_com.x) / summary.simulated);
    }
    println!("max depth      {:.2} mm", summary.max_depth * 1000.0);
    println!("csv            {}", csv_path.display());
    if !args.no_plot {
        let png = args.output.join(format!("{}.png", args.robot));
        plot_run(&summary, &png)?;
        println!("plot           {} (and .svg)", png.display());
    }
    if let Some(e) = summary.error {
        if let Some(code) = stopped_by_signal(&stop, &e) {
            return Ok(code);
        }
        let hint = if matches!(integrator, IntegratorName::Rk4 | IntegratorName::Euler) {
            "; a fixed-step explicit integrator is unstable on stiff robots (soft sections, stiff contact): try --integrator ros34"
        } else {
            ""
        };
        return Err(format!("the run stopped early: {e} (outputs above hold everything up to then){hint}"));
    }
    Ok(ExitCode::SUCCESS)
}

fn eval(args: EvalArgs) -> Result<(), String> {
    let mut input = EvalInput { q: None, qd: None, params: parse_sets(&args.set)? };
    if args.stdin {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| format!("reading stdin: {e}"))?;
        softgen::read_stdin_input(&text, &mut input)?;
    }
    if let Some(q) = &args.q {
        input.q = Some(parse_list("q", q)?);
    }
    if let Some(qd) = &args.qd {
        input.qd = Some(parse_list("qd", qd)?);
    }
    println!("{}", eval_json(&args.robot, &input)?);
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = |result: Result<ExitCode, String>| match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    };
    let result = match cli.command {
        None => return exit(simulate(cli.simulate)),
        Some(Command::Simulate(args)) => return exit(simulate(args)),
        Some(Command::Eval(args)) => eval(args),
        Some(Command::Run(args)) => return exit(run(args)),
        Some(Command::Roll(args)) => return exit(roll(args)),
        Some(Command::Experiment(args)) => return exit(experiment(args)),
        Some(Command::Sweep(args)) => return exit(sweep(args)),
        Some(Command::List) => {
            for robot in ROBOTS {
                let name = robot.name;
                match eval_json(name, &EvalInput::default()) {
                    Ok(json) => {
                        let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
                        println!(
                            "{name}: {} ({} coordinates, {} contact points; {})",
                            robot.description, robot.dof, robot.contacts, robot.spec
                        );
                        for c in v["coordinates"].as_array().into_iter().flatten() {
                            println!(
                                "  q{:<2} {:<16} [{}] {}",
                                c["index"],
                                c["name"].as_str().unwrap_or(""),
                                c["unit"].as_str().unwrap_or(""),
                                c["meaning"].as_str().unwrap_or("")
                            );
                        }
                    }
                    Err(e) => println!("{name}: {e}"),
                }
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
