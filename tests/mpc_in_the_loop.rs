//! Model-predictive control in hardware-in-the-loop: `softgen run` with the planner in its
//! own thread re-planning from the simulated plant's state while the loop sends commands to
//! the plant: the snake on wheels steered by the gait sampler to a goal 1 m away (20 Hz
//! plans, 1 kHz loop), and the underwater snake's pressures and thrusts planned by box-DDP
//! to its waypoint (100 Hz plans and loop), each on the plant's state and on the state
//! estimator's from emulated sensors, whose silence ends a run safely; the WPI snake's
//! valve sampler on the plant's state and on the estimate; the soft snake's rolling box-DDP
//! on the plant's state and on the estimate; the pinniped's stride planner on the estimate.
//! Their own test
//! binary, one test at a time, so no other test competes for the cores while the loop keeps
//! its deadlines.

use softgen::{run_on_device, ControllerChoice, RunOptions, RunReport};
use softgen_runtime::Recording;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// One run at a time: each has a loop thread and a planner thread, and this machine two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A robot's MPC run on the simulated plant, with its own run configuration.
fn mpc_options(robot: &str, dir: &Path, config: std::path::PathBuf, duration: f64) -> RunOptions {
    RunOptions {
        robot: robot.into(),
        serial_port: None,
        comedi_device: None,
        ack_timeout: std::time::Duration::from_millis(50),
        config: Some(config),
        dry_run: false,
        rate_hz: None,
        duration,
        record: dir.join("commands.csv"),
        trajectory: dir.join("plant.csv"),
        realtime: false,
        amplitude: None,
        temporal_frequency: None,
        spatial_frequency: None,
        offset: None,
        controller: ControllerChoice::Mpc,
        goal: None,
        goal_height: None,
        limb_gait: None,
        stride: None,
        gait_frequency: None,
        swim: None,
        replay: None,
        state: softgen::StateSource::True,
        sensor_log: dir.join("sensors.csv"),
        estimate_from: None,
    }
}

/// The run configuration the robot comes with (its spec's sibling `.run.toml`).
fn run_config(robot: &str) -> &'static str {
    softgen::run_config_of(robot).unwrap_or_else(|| panic!("{robot} has no run configuration")).text
}

/// The robot's own run configuration in `dir`, with a watchdog that tolerates a shared,
/// loaded test machine (every miss is still counted).
fn tolerant_config(robot: &str, dir: &Path) -> std::path::PathBuf {
    let config = dir.join(format!("{robot}.run.toml"));
    std::fs::write(&config, run_config(robot).replace("command_timeout = 0.05", "command_timeout = 10.0")).unwrap();
    config
}

/// The robot's MPC run for `duration` s on the state estimated from its configuration's
/// emulated sensors, with the tolerant watchdog.
fn estimated_options(robot: &str, dir: &Path, duration: f64) -> RunOptions {
    let config = tolerant_config(robot, dir);
    RunOptions { state: softgen::StateSource::Estimated, ..mpc_options(robot, dir, config, duration) }
}

/// The snake on wheels' box-DDP run configuration, with the tolerant watchdog, in `dir`.
fn wave_ddp_config(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("model-specs");
    let text = std::fs::read_to_string(root.join("snake_lateral_undulation.ddp.run.toml")).unwrap();
    let config = dir.join("snake.ddp.run.toml");
    std::fs::write(&config, text.replace("command_timeout = 0.05", "command_timeout = 10.0")).unwrap();
    config
}

/// Runs `options` on the simulated plant to the end, which must come without a fault;
/// prints the loop's and the planner's lines and checks the goal was 1 m from the start.
fn run_to_a_goal_one_metre_away(options: &RunOptions) -> (softgen::MpcReport, softgen_runtime::LoopStats) {
    let report = run_on_device(options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let (mpc, stats) = (report.mpc.unwrap(), report.stats.unwrap());
    println!("loop: {stats}");
    println!("planner: {}", mpc.planner);
    assert!((mpc.start_distance - 1.0).abs() < 1e-3, "the goal is 1 m away: {}", mpc.start_distance);
    (mpc, stats)
}

/// The plans reached the loop: some were posted and the loop took plans over.
///
/// What these tests hold is what the controller does: goal reached and held, no fault (and,
/// for the samplers and the stride planner, no failed rollout). The planner's rate, its
/// overruns and its plans past their deadline (counted among those not used) are the
/// machine's: they are measured by the optimal-control bench (`cargo bench --bench
/// optimal_control`) and printed by every run, not asserted here, as the project measures
/// performance with benches, not timed tests. A fresh-clone test run on a loaded day
/// (2026-12-03) planned at 13-16 Hz where 20 were asked (plans of 59-72 ms, 14 of 25 of the
/// pinniped's strides over their lead) and every goal was still reached.
fn assert_plans_followed(mpc: &softgen::MpcReport) {
    assert!(mpc.planner.plans > mpc.planner.failed_plans, "{}", mpc.planner);
    assert!(mpc.plans_applied > 0, "no plan applied: {}", mpc.planner);
}

/// The estimate was scored against the plant's truth every period of the task until the
/// goal was reached: at least `(arrived - scored_from) * rate_hz` periods. The bound follows
/// the run, not a fixed count: a run whose plans come sooner arrives sooner and ends its
/// fixed hold after, so a fixed count tests the machine's speed (CI's hardware run of the
/// soft snake arrived 0.7 s sooner than here and scored 18 periods under its fixed 10,000).
fn assert_scored_to_arrival(estimator: &softgen::EstimatorReport, arrived: f64, rate_hz: f64) {
    let approach = ((arrived - estimator.scored_from) * rate_hz).floor().max(1.0) as u64;
    assert!(
        estimator.scored >= approach,
        "{} periods scored from t = {} s; the goal was reached at t = {arrived} s, {approach} periods in",
        estimator.scored,
        estimator.scored_from
    );
}

#[test]
fn model_predictive_control_in_the_loop_reaches_a_goal_one_metre_away() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = tolerant_config("snake_lateral_undulation", dir.path());
    let options = mpc_options("snake_lateral_undulation", dir.path(), config, 40.0);
    let (mpc, stats) = run_to_a_goal_one_metre_away(&options);
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 40 s", mpc.final_distance));
    println!("arrived at t = {arrived:.2} s");
    assert!(mpc.final_distance < 0.15, "{}", mpc.final_distance);
    // The run ends one settling second after arrival, not at the 40 s limit.
    assert!(
        stats.periods < 40_000 && (stats.periods as f64 / 1000.0 - arrived - 1.0).abs() < 0.1,
        "{} periods",
        stats.periods
    );
    // Re-planning asked at 20 Hz: a plan every 50 ms, with 32 rollouts of 1 s each (the rate
    // reached is the machine's: `assert_plans_followed`).
    assert_eq!(mpc.planner.failed_rollouts, 0);
    assert_plans_followed(&mpc);
    // Every period's commands are in the recording, the safe state last.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    assert_eq!(recording.periods.len() as u64, stats.periods + 1);
    assert!(recording.periods.last().unwrap().1.iter().all(|v| v.kind() == "off"));
}

/// The snake on wheels steered by box-DDP deciding its wave at 50 Hz over 0.5 s
/// (model-specs/snake_lateral_undulation.ddp.run.toml, the settings of mpc-003-goals with
/// the wave's 0.1 s lag and the goal's terms scaled by the distance left): it reaches the
/// goal 1 m away, 45 degrees off its axis, with its plans within the wave's bounds and no
/// set point past the servo channels' range. Unscaled, one CI run of this test stalled the
/// wave 0.118 m from the goal for 30 s (README, "The snake on wheels' plans near the goal").
#[test]
fn box_ddp_in_the_loop_steers_the_wheeled_snakes_wave_to_its_goal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = wave_ddp_config(dir.path());
    let options = mpc_options("snake_lateral_undulation", dir.path(), config, 40.0);
    let (mpc, stats) = run_to_a_goal_one_metre_away(&options);
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 40 s", mpc.final_distance));
    println!("arrived at t = {arrived:.2} s, {} plans applied", mpc.plans_applied);
    assert!(mpc.held && mpc.final_distance <= 0.1, "{} m", mpc.final_distance);
    // The run ends at arrival (hold = 0), not at the 40 s limit.
    assert!((stats.periods as f64 / 1000.0 - arrived).abs() < 0.1, "{} periods, arrived at {arrived} s", stats.periods);
    // Re-planning asked at 50 Hz (the rate reached is the machine's: `assert_plans_followed`).
    assert_plans_followed(&mpc);
    // Every set point within the wave's bounds (amplitude 1.2 rad plus offset 0.6 rad), the
    // safe state last.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    assert_eq!(recording.periods.len() as u64, stats.periods + 1);
    for (t, values) in &recording.periods[..recording.periods.len() - 1] {
        for v in values {
            assert!(v.number().abs() <= 1.8 + 1e-12, "t = {t}: {} {} = {}", v.kind(), v.channel(), v.number());
        }
    }
    assert!(recording.periods.last().unwrap().1.iter().all(|v| v.kind() == "off"));
}

/// The same run from the state the filter estimates from the configuration's motion capture
/// and servo readings, for 12 s: the filter keeps the robot (no fault) while the plans take
/// it toward the goal. Without the wave's lag the set points jumped at every plan, the
/// servos rang, and the filter called its estimate diverged (at 0.17 and 0.90 s in two runs
/// on this goal). Not held to arrival: on the estimate the plans reached it at 12.8 and
/// 14.7 s in two runs and stalled 0.15 m away in a third (as they did on the truth on
/// some goals, before the goal's terms were scaled by the distance left). With one filter step a period, where the wave whips the tail the filter's
/// first-order step fell behind the plant and its estimate was lost in four runs of eight
/// (between 1.5 and 13.8 s); the configuration's four steps a period hold it.
#[test]
fn box_ddp_in_the_loop_keeps_the_wheeled_snakes_estimate_through_its_plans() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = wave_ddp_config(dir.path());
    let options = RunOptions {
        state: softgen::StateSource::Estimated,
        ..mpc_options("snake_lateral_undulation", dir.path(), config, 12.0)
    };
    let (mpc, _) = run_to_a_goal_one_metre_away(&options);
    println!("{:.3} m from the goal at the end", mpc.final_distance);
    assert_plans_followed(&mpc);
    // Closer than at the start. Not more: how far the plans get in 12 s depends on how
    // they first turn the body (0.20 and 0.70 m left in two runs).
    assert!(mpc.final_distance < 0.9, "{:.3} m from the goal after 12 s", mpc.final_distance);
    // A servo robot's sensor log replays through its estimator to the same bytes too.
    let logged = replayed_log_is_the_runs(&options, dir.path());
    assert!(logged > 1_000_000, "{logged} bytes");
}

#[test]
fn box_ddp_in_the_loop_brings_the_underwater_snake_to_its_waypoint_and_holds_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = tolerant_config("underwater_snake", dir.path());
    let options = mpc_options("underwater_snake", dir.path(), config, 40.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let stats = report.stats.unwrap();
    println!("loop: {stats}");
    println!("planner: {}", mpc.planner);
    // The configured waypoint: 2 m ahead, 1 m to the side, 0.5 m up.
    assert!((mpc.start_distance - 2.29).abs() < 0.01, "{}", mpc.start_distance);
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("waypoint not reached: {:.3} m away after 40 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    println!(
        "reached at t = {arrived:.2} s, {:.3} m away at the end; {} plans applied",
        mpc.final_distance, mpc.plans_applied
    );
    assert!(mpc.final_distance <= 0.1);
    // The run ends once the waypoint has been held for 2 s.
    let end = stats.periods as f64 / 100.0;
    assert!((end - arrived - 2.0).abs() < 0.1, "ended at {end} s, reached at {arrived} s");
    // Re-planning asked at 100 Hz (the rate reached is the machine's: `assert_plans_followed`).
    assert_plans_followed(&mpc);
    // Every command went out within its bounds (5 bar, 2 N), the safe state last.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    assert_eq!(recording.periods.len() as u64, stats.periods + 1);
    for (t, values) in &recording.periods {
        for v in values {
            let bound = if v.kind() == "analog" { 5.0 } else { 2.0 };
            assert!(v.number().abs() <= bound + 1e-12, "t = {t}: {} {} = {}", v.kind(), v.channel(), v.number());
        }
    }
}

#[test]
fn box_ddp_on_the_estimated_state_brings_the_underwater_snake_to_its_waypoint() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let options = estimated_options("underwater_snake", dir.path(), 40.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let estimator = report.estimator.unwrap();
    println!("{}", estimator.line());
    // The planner saw only the estimate, and still reached the waypoint and held it.
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("waypoint not reached: {:.3} m away after 40 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    // Scored against the plant's truth every period: within a few millimetres and tenths
    // of a degree (markers of 1 mm, an IMU of 0.3 degrees).
    assert_scored_to_arrival(&estimator, arrived, 100.0);
    let rms = |kind| estimator.rms.iter().find(|(k, _)| *k == kind).unwrap().1;
    assert!(rms(softgen_runtime::CoordinateKind::BaseTranslation) < 3e-3, "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::BaseRotation) < 0.5f64.to_radians(), "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::ActuatorLength) < 0.5e-3, "{}", estimator.line());
    // The tail and the nose, the snake's length apart. Measured: 1.87 mm RMS at the nose (4.16 mm
    // with the base's process noise on the cylinders' strokes too).
    let marked = estimator.marker_rms.iter().map(|m| m.1).fold(0.0, f64::max);
    assert!(marked < 2.5e-3, "{}", estimator.line());
    // Every sensor reported, about one mocap frame in eight was lost, nothing was an outlier.
    for (name, count) in &estimator.readings {
        assert!(*count > 1000, "{name}: {count} readings");
    }
    let mocap = estimator.readings.iter().find(|(n, _)| n == "mocap_tail").unwrap().1 as f64;
    let expected = 120.0 * (report.stats.unwrap().periods as f64 / 100.0) * 7.0 / 8.0;
    assert!((mocap / expected - 1.0).abs() < 0.05, "{mocap} frames, expected about {expected}");
    assert_eq!(estimator.stats.outliers, 0);
    assert!(estimator.fault.is_none());
    // The sensor log replays through the estimator offline to the same bytes: every
    // reading, estimate and command, bit for bit.
    let logged = replayed_log_is_the_runs(&options, dir.path());
    assert!(logged > 1_000_000, "{logged} bytes");
}

/// Replays the sensor log of the run `options` made through the estimator its run
/// configuration builds (`--estimate-from`) and checks the replay writes the same bytes;
/// returns the log's size.
fn replayed_log_is_the_runs(options: &RunOptions, dir: &Path) -> usize {
    replayed_log_is(&options.sensor_log, options, dir)
}

/// Replays sensor log `log` of the run `options` made (`--estimate-from`, its run
/// configuration's estimator) and checks the replay writes the same bytes; returns the
/// log's size.
fn replayed_log_is(log: &Path, options: &RunOptions, dir: &Path) -> usize {
    let replayed = dir.join("replayed.csv");
    let replay = RunOptions {
        estimate_from: Some(log.to_path_buf()),
        sensor_log: replayed.clone(),
        ..mpc_options(&options.robot, dir, options.config.clone().unwrap(), 0.0)
    };
    run_on_device(&replay, Arc::new(AtomicUsize::new(0))).unwrap();
    let logged = std::fs::read(log).unwrap();
    assert!(logged == std::fs::read(&replayed).unwrap(), "the replay differs from the run's sensor log");
    logged.len()
}

/// `robot`'s MPC run of `duration` s on the estimated state with sensor `sensor` silent
/// from `silent_after` s on, in `dir`: its options and report.
fn run_with_a_silent_sensor(
    robot: &str,
    sensor: &str,
    silent_after: f64,
    duration: f64,
    dir: &Path,
) -> (RunOptions, RunReport) {
    let config = dir.join(format!("{robot}.run.toml"));
    let name = format!("name = \"{sensor}\"");
    // A limbed robot's strides are decided once a cycle here, each plan given three quarters
    // of it: plans not back in time would leave the robot standing on a loaded machine, and
    // the hold must be mid-stride (what this test is about is the hold, not the rate).
    let text = run_config(robot)
        .replace("command_timeout = 0.05", "command_timeout = 10.0")
        .replace("solver = \"strides\"\n", "solver = \"strides\"\nreplan_hz = 1.0\nlead = 0.75\n")
        .replace(&name, &format!("{name}\nsilent_after = {silent_after:?}"));
    std::fs::write(&config, &text).unwrap();
    let options = RunOptions { state: softgen::StateSource::Estimated, ..mpc_options(robot, dir, config, duration) };
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    (options, report)
}

/// The failed run's recorded periods in `dir` and the index of the first at or after `t`.
fn failed_recording_from(dir: &Path, t: f64) -> (Vec<(f64, Vec<softgen_runtime::DeviceValue>)>, usize) {
    let text = std::fs::read_to_string(dir.join("commands.failed.csv")).unwrap();
    let periods = Recording::parse("commands.csv", &text).unwrap().periods;
    let index = periods.iter().position(|(at, _)| *at >= t - 1e-9).unwrap();
    (periods, index)
}

#[test]
fn a_sensor_that_falls_silent_holds_the_last_command_then_ends_the_run_safely() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (options, report) = run_with_a_silent_sensor("underwater_snake", "mocap_nose", 1.0, 10.0, dir.path());
    let fault = report.fault.expect("the run must end in a fault").to_string();
    assert!(
        fault.contains("sensor `mocap_nose` silent since t = 1.000 s, past its timeout of 0.1 s (at t = 1.110 s")
            && fault.contains("held for 0.2 s"),
        "{fault}"
    );
    // Its last frame at 1 s, past its 0.1 s timeout and 10 ms latency at 1.11 s, held 0.2 s:
    // the safe state at 1.31 s.
    let stats = report.stats.unwrap();
    let end = stats.periods as f64 / 100.0;
    assert!((end - 1.31).abs() < 0.021, "ended at {end} s");
    // The commands in the hold are the last ones before the fault, then the safe state.
    let (periods, fault_at) = failed_recording_from(dir.path(), 1.11);
    let held = &periods[fault_at].1;
    for (t, values) in &periods[fault_at..periods.len() - 1] {
        assert_eq!(values, held, "t = {t}: the hold changed the commands");
    }
    assert!(periods.last().unwrap().1.iter().all(|v| v.number() == 0.0));
    // The failed run's sensor log is kept beside the old one and replays to the same fault.
    replayed_log_is(&dir.path().join("sensors.failed.csv"), &options, dir.path());
}

/// The gait sampler on the estimated state: the wheeled snake's tail and head in motion
/// capture (120 Hz, 1 mm, 10 ms late, one frame in eight lost) and its servos' positions;
/// the filter's process model is the plant's servo on the set points sent. The goal 1 m
/// away is reached as on the plant's true state, and the estimate follows the truth within
/// a few millimetres.
#[test]
fn the_gait_sampler_on_the_estimated_state_steers_the_wheeled_snake_to_its_goal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("snake.run.toml");
    let text = run_config("snake_lateral_undulation").replace("command_timeout = 0.05", "command_timeout = 10.0");
    std::fs::write(&config, &text).unwrap();
    let options = RunOptions {
        state: softgen::StateSource::Estimated,
        ..mpc_options("snake_lateral_undulation", dir.path(), config, 30.0)
    };
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let estimator = report.estimator.unwrap();
    println!("{}", estimator.line());
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 30 s", mpc.final_distance));
    assert!(arrived < 20.0, "reached at {arrived} s");
    assert_scored_to_arrival(&estimator, arrived, 1000.0);
    let rms = |kind| estimator.rms.iter().find(|(k, _)| *k == kind).unwrap().1;
    assert!(rms(softgen_runtime::CoordinateKind::BaseTranslation) < 3e-3, "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::RevoluteJoint) < 0.5f64.to_radians(), "{}", estimator.line());
    for (name, count) in &estimator.readings {
        assert!(*count > 1000, "{name}: {count} readings");
    }
    assert!(estimator.fault.is_none());
}

/// The centre of mass in the ground plane at time `t` of a plant trajectory CSV (the row
/// at `t`; the safe state's period comes after it).
fn center_of_mass_at<R: softgen_runtime::Model<N, C>, const N: usize, const C: usize>(
    trajectory: &Path,
    t: f64,
) -> nalgebra::Vector2<f64> {
    let text = std::fs::read_to_string(trajectory).unwrap();
    let row: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|line| line.split(',').map(|v| v.parse().unwrap()).collect::<Vec<f64>>())
        .find(|row| (row[0] - t).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no row at t = {t} s"));
    let q = nalgebra::SVector::<f64, N>::from_column_slice(&row[1..]);
    let p = R::Params::default();
    R::center_of_mass(&q, &p, &R::cache(&q, &p)).xy()
}

/// `softgen run --robot wpi_snake` drives the paper's wave through the output chain: valve
/// states on digital lines, the supply on a regulator, the simulated plant reading them back.
/// It moves the snake as the paper's complex-model run at the same settings does; what
/// differs is only that the loop switches valves on its 1 ms periods, not at the wave's
/// own instants, and that its RK4 steps are 1 ms.
#[test]
fn the_wpi_snakes_valve_wave_through_the_loop_moves_it_as_the_papers_run() {
    use softgen::papers::wpi_snake::{run_snake, SnakeModel, SnakeRun};
    use softgen_generated::wpi_snake::{CONTACTS, DOF};
    use softgen_generated::WpiSnake;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = tolerant_config("wpi_snake", dir.path());
    // The paper's runs need six cycles at least.
    let duration = 4.0;
    let mut options = mpc_options("wpi_snake", dir.path(), config, duration);
    options.controller = ControllerChoice::Gait;
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let looped = center_of_mass_at::<WpiSnake, DOF, CONTACTS>(&options.trajectory, duration);
    let mut run = SnakeRun::new(SnakeModel::Complex, 1.5, 54.0, 0.0);
    run.duration = duration;
    let paper = run_snake(&run, 1, |_| {}).unwrap();
    let last = paper.samples.last().unwrap();
    assert!((last.t - duration).abs() < 1e-9);
    let start = paper.samples[0].center_of_mass;
    let (travelled, difference) = ((last.center_of_mass - start).norm(), (looped - last.center_of_mass).norm());
    println!("travelled {travelled:.4} m in {duration} s; the loop's plant ends {difference:e} m from the paper's run");
    assert!(travelled > 0.2, "{travelled}");
    assert!(difference < 0.01 * travelled, "{difference} m of {travelled} m");
    // Every period: four valve lines and the supply's volts (0.54 bar of a 1 bar, 10 V
    // regulator), the safe state last (the supply vented).
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    let (_, first) = &recording.periods[0];
    assert_eq!(first.iter().filter(|v| v.kind() == "digital").count(), 4);
    assert!(first.iter().any(|v| v.kind() == "analog" && (v.number() - 5.4).abs() < 1e-9), "{first:?}");
    let (_, safe) = recording.periods.last().unwrap();
    assert!(safe.iter().any(|v| v.kind() == "analog" && v.number() == 0.0), "{safe:?}");
}

/// The valve sampler in its own thread steers the WPI snake's wave (supply pressure,
/// frequency, offset) to mpc-001-goal's goal, 1 m away at 45 degrees, on the simulated
/// plant reading its valve lines, and holds it there for 2 s.
#[test]
fn the_valve_sampler_in_the_loop_brings_the_wpi_snake_to_its_goal_and_holds_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = tolerant_config("wpi_snake", dir.path());
    let options = mpc_options("wpi_snake", dir.path(), config, 30.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let stats = report.stats.unwrap();
    println!("loop: {stats}");
    println!("planner: {}", mpc.planner);
    assert!((mpc.start_distance - 1.0).abs() < 1e-3, "the goal is 1 m away: {}", mpc.start_distance);
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 30 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    println!("reached at t = {arrived:.2} s, {:.3} m away at the end", mpc.final_distance);
    assert!(mpc.final_distance <= 0.05, "{}", mpc.final_distance);
    // The run ends once the goal has been held for 2 s.
    let end = stats.periods as f64 / 1000.0;
    assert!((end - arrived - 2.0).abs() < 0.1, "ended at {end} s, reached at {arrived} s");
    assert_eq!(mpc.planner.failed_rollouts, 0, "{}", mpc.planner);
    assert_plans_followed(&mpc);
    // The supply stayed within the planner's bounds (20-55 kPa: 2-5.5 V) until the safe
    // state vented it.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    let (last, periods) = recording.periods.split_last().unwrap();
    for (t, values) in periods {
        for v in values.iter().filter(|v| v.kind() == "analog") {
            assert!((2.0 - 1e-9..=5.5 + 1e-9).contains(&v.number()), "t = {t}: supply {} V", v.number());
        }
    }
    assert!(last.1.iter().any(|v| v.kind() == "analog" && v.number() == 0.0));
}

/// The valve sampler on the estimated state: motion capture on three of the WPI snake's
/// five wheels (120 Hz, 1 mm, 10 ms late, one frame in eight lost) and a filter whose
/// process model prescribes the segments' curvatures by their valves' responses to the
/// states and supply sent. The goal is reached and held as on the plant's state, the base
/// is estimated within a millimetre or two, the curvatures are the plant's (same responses
/// to the same commands), and the sensor log replays bit for bit.
#[test]
fn the_valve_sampler_on_the_estimated_state_brings_the_wpi_snake_to_its_goal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let options = estimated_options("wpi_snake", dir.path(), 30.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let estimator = report.estimator.unwrap();
    println!("{}", estimator.line());
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 30 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    // On the plant's state: 5.6 s.
    assert!(arrived < 8.0, "reached at {arrived} s");
    assert_scored_to_arrival(&estimator, arrived, 1000.0);
    let rms = |kind| estimator.rms.iter().find(|(k, _)| *k == kind).unwrap().1;
    assert!(rms(softgen_runtime::CoordinateKind::BaseTranslation) < 2e-3, "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::BaseRotation) < 0.5f64.to_radians(), "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::Curvature) < 1e-6, "{}", estimator.line());
    // The wheels the markers are on: the 2 mm for rigid bodies.
    for (name, marker_rms) in &estimator.marker_rms {
        assert!(*marker_rms < 2e-3, "{name}: {marker_rms} m");
    }
    for (name, count) in &estimator.readings {
        assert!(*count > 500, "{name}: {count} readings");
    }
    assert_eq!(estimator.stats.outliers, 0);
    let logged = replayed_log_is_the_runs(&options, dir.path());
    assert!(logged > 100_000, "{logged} bytes");
}

/// A valve robot's fault: the WPI snake's middle wheel's motion capture falls silent at 1 s.
/// Past its 0.1 s timeout and 10 ms latency the loop holds the last valve states and supply
/// it sent for the configured 0.2 s, then sends the safe state (valves to their safe lines,
/// the supply vented); the failed run's sensor log replays to the same fault.
#[test]
fn a_valve_robots_silent_sensor_holds_its_valves_then_ends_the_run_safely() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (options, report) = run_with_a_silent_sensor("wpi_snake", "mocap_middle", 1.0, 10.0, dir.path());
    let fault = report.fault.expect("the run must end in a fault").to_string();
    assert!(
        fault.contains("sensor `mocap_middle` silent since t = 1.000 s") && fault.contains("held for 0.2 s"),
        "{fault}"
    );
    // Its last frame at 1 s, silent past 0.1 s and 10 ms: the hold from about 1.11 s, the
    // safe state 0.2 s later.
    let end = report.stats.unwrap().periods as f64 / 1000.0;
    assert!((end - 1.31).abs() < 0.02, "ended at {end} s");
    let (periods, fault_at) = failed_recording_from(dir.path(), 1.11);
    // The valve lines and the supply were those of the period before the fault throughout
    // the hold, while the wave would have switched them.
    let held = &periods[fault_at - 1].1;
    let hold = &periods[fault_at..periods.len() - 1];
    assert!(hold.len() >= 150, "{} periods held", hold.len());
    for (t, values) in hold {
        assert_eq!(values, held, "t = {t}: the hold changed the commands");
    }
    let (last_t, last) = periods.last().unwrap();
    assert!(last.iter().any(|v| v.kind() == "analog" && v.number() == 0.0), "t = {last_t}: {last:?}");
    replayed_log_is(&dir.path().join("sensors.failed.csv"), &options, dir.path());
}

/// The soft snake's model-predictive controller in the loop: after its 2 s drop at 0 bar,
/// box-DDP decides mpc-000's rotating bend (each section's bend and the bending plane's
/// rate) from the simulated plant's state (ROS34PW2, touchdowns located), the loop turns
/// the newest plan's decisions and the plane's phase into each muscle's pressure, and the
/// snake rolls to the goal 0.3 m to the side and holds it. The goal binds the side only
/// (`goal_axes = ["y"]`: rolling cannot move the body along its axis). The run has 120 s;
/// a run that arrives ends 2 s after. Until the plan's box was cut to where its model rolls
/// the way the plant does (bend 0.15-0.3 rad, plane rate within pi rad/s; `MAX_BEND` in
/// src/papers/soft_snake/mpc.rs), 9 of 10 runs reached the goal at t = 13.6-27.0 s and the
/// tenth rolled the wrong way at the plane's top rate, as this test did in CI (1.081 m off
/// after 120 s, 471 system Jacobians a plan). With the box (2026-11-29, one run at a time,
/// the command in release): 4 of 4 reached it at t = 11.0-11.2 s, 170-175 Jacobians a plan.
#[test]
fn box_ddp_in_the_loop_rolls_the_soft_snake_to_its_goal_and_holds_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let config = tolerant_config("soft_snake", dir.path());
    let options = mpc_options("soft_snake", dir.path(), config, 120.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let stats = report.stats.unwrap();
    println!("loop: {stats}");
    println!("planner: {}", mpc.planner);
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 120 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    println!("reached at t = {arrived:.2} s, {:.3} m away at the end", mpc.final_distance);
    assert!(mpc.final_distance <= 0.03, "{}", mpc.final_distance);
    let end = stats.periods as f64 / 1000.0;
    assert!((end - arrived - 2.0).abs() < 0.1, "ended at {end} s, reached at {arrived} s");
    assert_plans_followed(&mpc);
    // Nothing before the drop ended; every pressure under the 3 bar ceiling (6 V of the
    // 5 bar, 10 V regulators) and under the bend's bound; every regulator vented at the end.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    let (last, periods) = recording.periods.split_last().unwrap();
    for (t, values) in periods {
        for v in values {
            assert_eq!(v.kind(), "analog");
            if *t < 2.0 - 1e-9 {
                assert_eq!(v.number(), 0.0, "t = {t}: {} V during the drop", v.number());
            }
            assert!((0.0..=6.0).contains(&v.number()), "t = {t}: {} V", v.number());
        }
    }
    assert!(last.1.iter().all(|v| v.number() == 0.0));
}

#[test]
fn box_ddp_on_the_estimated_state_rolls_the_soft_snake_to_its_goal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let options = estimated_options("soft_snake", dir.path(), 120.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    let estimator = report.estimator.unwrap();
    println!("{}", estimator.line());
    // The filter follows the snake from the drop through the roll with no fault.
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    println!("planner: {}", mpc.planner);
    // The planner sees only the estimate and rolls the snake to the goal 0.3 m aside. From
    // 2026-11-29 until the plan's box was cut to where its model rolls the way the plant
    // does (bend 0.15-0.3 rad, plane rate within pi rad/s; see `MAX_BEND` in
    // src/papers/soft_snake/mpc.rs), this test only reported the goal: in CI's build it ended
    // off the goal in two runs of four, the plans at the old box's corners, where the model
    // rolls the other way, taking about 500 system Jacobians each. Measured with the box
    // (2026-11-29, one run at a time): 4 of 4 runs of the command in release reached it at
    // t = 11.7-12.3 s (166-175 system Jacobians a plan, none overran), and this test in
    // the test profile at 11.76 s.
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 120 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    println!("goal reached at t = {arrived:.2} s");
    assert_plans_followed(&mpc);
    // Scored against the plant's truth every period of the task, from the plan's start after
    // the 2 s drop (the targets are the tasks'). Measured (2026-11-29, four runs at
    // 1 kHz to the goal and its hold at t = 11.7-12.3 s): over the task the tail 0.95 mm and
    // 0.24 degrees, the marked points (the three section tips) 0.63 mm RMS, the largest 0.76
    // mm; over the whole run, the drop's landing included, the tail 0.90-0.94 mm, the
    // section tips' largest 2.05-2.08 mm (1.63-1.75 mm in runs of 20-27 s, which dilute the
    // landing more). At 100 Hz the tail, which carries no marker, was 2.28-2.55 mm; at 1 kHz
    // it and the section tips are held to the 2 mm.
    assert_eq!(estimator.scored_from, 2.0, "scored from the plan's start");
    assert_scored_to_arrival(&estimator, arrived, 1000.0);
    let (whole, _, whole_scored) = estimator.whole_run.clone().expect("the whole run's figures beside the task's");
    assert!(whole_scored > estimator.scored + 1_900, "{whole_scored} against {}", estimator.scored);
    let whole_position = whole.iter().find(|(k, _)| *k == softgen_runtime::CoordinateKind::BaseTranslation).unwrap().1;
    assert!(whole_position < 2e-3, "{}", estimator.line());
    let marked = estimator.marker_rms.iter().map(|m| m.1).fold(0.0, f64::max);
    assert!(marked < 2e-3, "{}", estimator.line());
    let rms = |kind| estimator.rms.iter().find(|(k, _)| *k == kind).unwrap().1;
    assert!(rms(softgen_runtime::CoordinateKind::BaseTranslation) < 2e-3, "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::BaseRotation) < 1f64.to_radians(), "{}", estimator.line());
    assert!(rms(softgen_runtime::CoordinateKind::ActuatorLength) < 0.15e-3, "{}", estimator.line());
    for (name, count) in &estimator.readings {
        assert!(*count > 1000, "{name}: {count} readings");
    }
    assert!(estimator.stats.outliers * 100 <= estimator.stats.updates, "{}", estimator.line());
    // The run's sensor log replays through the estimator offline to the same bytes.
    replayed_log_is_the_runs(&options, dir.path());
}

/// The pinniped's stride planner on the estimated state: motion capture on the hub and the
/// four limb tips (labelled markers: 120 Hz, 1 mm, 10 ms late, one frame in eight lost),
/// the pressures commanded through the regulators' lag. Every 20 ms the planner takes the
/// estimate and decides the stride from the next decision on; the robot turns, crawls to
/// the goal 0.5 m away at 60 degrees and holds it, as mpc-002 offline. Every
/// pressure within the 3 bar ceiling, every regulator vented at the end, the sensor log
/// replays bit for bit.
#[test]
fn the_stride_planner_on_the_estimated_state_walks_the_pinniped_to_its_goal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let options = estimated_options("pinniped", dir.path(), 40.0);
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let estimator = report.estimator.unwrap();
    println!("planner: {}", mpc.planner);
    println!("{}", estimator.line());
    let arrived =
        mpc.arrived_at.unwrap_or_else(|| panic!("goal not reached: {:.3} m away after 40 s", mpc.final_distance));
    assert!(mpc.held, "reached at {arrived} s but not held");
    assert!(arrived < 30.0, "reached at {arrived} s");
    // A plan a decision (whether each came within its 20 ms lead is the machine's:
    // `assert_plans_followed`).
    assert!(mpc.planner.plans >= 100, "{}", mpc.planner);
    assert_eq!(mpc.planner.failed_rollouts, 0, "{}", mpc.planner);
    assert_plans_followed(&mpc);
    // The hub and the limb tips, as the 2 mm asks of rigid bodies and section tips.
    for (name, marker_rms) in &estimator.marker_rms {
        assert!(*marker_rms < 2e-3, "{name}: {marker_rms} m");
    }
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    let (last, periods) = recording.periods.split_last().unwrap();
    for (t, values) in periods {
        for v in values {
            // 3 bar of the regulators' 9 bar for 10 V.
            assert!((0.0..=3.0 / 9.0 * 10.0 + 1e-9).contains(&v.number()), "t = {t}: {} V", v.number());
            if *t < 1.0 - 1e-9 {
                assert_eq!(v.number(), 0.0, "t = {t}: {} V while the robot settles", v.number());
            }
        }
    }
    assert!(last.1.iter().all(|v| v.number() == 0.0));
    let logged = replayed_log_is_the_runs(&options, dir.path());
    assert!(logged > 100_000, "{logged} bytes");
}

/// A limbed robot's fault mid-stride: the pinniped's head marker falls silent at 3.5 s,
/// half way through its third gait cycle. Past its 0.1 s timeout and 10 ms latency the loop
/// holds the twelve pressures it last sent for 0.2 s, while the stride would have moved
/// them, then vents every regulator; the failed run's sensor log replays to the same fault.
#[test]
fn a_limbed_robots_silent_sensor_holds_its_pressures_mid_stride_then_vents_them() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (options, report) = run_with_a_silent_sensor("pinniped", "mocap_head", 3.5, 10.0, dir.path());
    let fault = report.fault.expect("the run must end in a fault").to_string();
    assert!(
        fault.contains("sensor `mocap_head` silent since t = 3.500 s") && fault.contains("held for 0.2 s"),
        "{fault}"
    );
    let end = report.stats.unwrap().periods as f64 / 1000.0;
    assert!((end - 3.81).abs() < 0.02, "ended at {end} s");
    let (periods, fault_at) = failed_recording_from(dir.path(), 3.61);
    let held = &periods[fault_at - 1].1;
    let hold = &periods[fault_at..periods.len() - 1];
    assert!(hold.len() >= 150, "{} periods held", hold.len());
    for (t, values) in hold {
        assert_eq!(values, held, "t = {t}: the hold changed the pressures");
    }
    // The stride was moving the pressures in the half second before the hold began: not at
    // one instant, since the pressures of a stride's posture can rest for a while (one CI
    // run found those of 20 ms before the fault equal to the held ones; the plans may also
    // have come too late there, leaving the robot standing, hence the longer lead above).
    let before = &periods[fault_at.saturating_sub(500)..fault_at - 1];
    assert!(
        before.iter().any(|(_, values)| values != held),
        "the pressures did not change in the {} periods before the fault",
        before.len()
    );
    assert!(held.iter().any(|v| v.number() > 0.0), "{held:?}");
    assert!(periods.last().unwrap().1.iter().all(|v| v.number() == 0.0));
    replayed_log_is(&dir.path().join("sensors.failed.csv"), &options, dir.path());
}
