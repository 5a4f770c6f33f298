//! Hardware runs end to end: hardware in the loop at 1 kHz with the recorded plant trajectory
//! checked against an offline replay of the recorded commands, the dry run, and a run
//! killed by a signal leaving the safe state and complete logs.

use nalgebra::SVector;
use softgen::{run_on_device, RunOptions};
use softgen_generated::SnakePedalWave;
use softgen_runtime::{Model, Recording, SimulatedPlant, Simulation, SimulationConfig, State};
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// The run configuration the robot comes with (its spec's sibling `.run.toml`).
fn run_config(robot: &str) -> &'static str {
    softgen::run_config_of(robot).unwrap_or_else(|| panic!("{robot} has no run configuration")).text
}

/// The snake's run configuration with a watchdog that tolerates a shared, loaded test
/// machine (the loop statistics still report every miss).
fn tolerant_config(dir: &Path) -> std::path::PathBuf {
    let text = run_config("snake_pedal_wave").replace("command_timeout = 0.05", "command_timeout = 10.0");
    let path = dir.join("snake.run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn options(dir: &Path, duration: f64) -> RunOptions {
    RunOptions {
        robot: "snake_pedal_wave".into(),
        serial_port: None,
        comedi_device: None,
        ack_timeout: std::time::Duration::from_millis(50),
        config: Some(tolerant_config(dir)),
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
        controller: softgen::ControllerChoice::Gait,
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

type R = SnakePedalWave;

#[test]
fn hardware_in_the_loop_matches_an_offline_replay_of_its_commands() {
    let _turn = crate::one_real_time_run();
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 10.0);
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let stats = report.stats.unwrap();
    assert_eq!(stats.periods, 10_001, "1 kHz for 10 s");
    println!("HIL loop: {stats}");

    // Replay the recorded commands into a fresh plant, offline and as fast as possible.
    let recording = Recording::parse("commands.csv", &std::fs::read_to_string(&o.record).unwrap()).unwrap();
    assert_eq!(recording.periods.len(), 10_002, "every period plus the safe state");
    let env = R::ENVIRONMENT;
    let g = R::GAIT.unwrap();
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: g.servo(),
        admittance: None,
        control_period: 0.001,
    };
    let sim = Simulation::<R, 8, 13>::new(Default::default(), config).unwrap();
    let mut plant = SimulatedPlant::new(sim, State::new(SVector::zeros(), SVector::zeros()), 0.001).unwrap();
    let rows = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&rows);
    plant.observe(Box::new(move |t, x| {
        let mut line = format!("{t}");
        for v in x.q.iter() {
            line.push_str(&format!(",{v}"));
        }
        sink.lock().unwrap().push(line);
    }));
    recording.replay(&mut plant).unwrap();
    let recorded = std::fs::read_to_string(&o.trajectory).unwrap();
    let recorded: Vec<&str> = recorded.lines().skip(1).collect();
    let replayed = rows.lock().unwrap();
    assert_eq!(recorded.len(), replayed.len());
    for (a, b) in recorded.iter().zip(replayed.iter()) {
        assert_eq!(a, b, "recorded and replayed plant states differ");
    }
    // And the plant really walked: the gait moved the snake forward.
    let last: Vec<f64> = recorded.last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    assert!(last[1] > 0.02, "base x after 10 s: {}", last[1]);
}

#[test]
fn dry_run_touches_no_device() {
    let _turn = crate::one_real_time_run();
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path(), 10.0);
    o.dry_run = true;
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.stats.is_none());
    assert!(!o.record.exists() && !o.trajectory.exists());
}

#[test]
fn a_signal_mid_run_leaves_the_safe_state_and_complete_logs() {
    let _turn = crate::one_real_time_run();
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 60.0);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["run", "--duration", "60", "--config"])
        .arg(o.config.as_ref().unwrap())
        .arg("--record")
        .arg(&o.record)
        .arg("--trajectory")
        .arg(&o.trajectory)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped by signal 2"), "{stderr}");
    let text = std::fs::read_to_string(&o.record).unwrap();
    assert!(text.ends_with('\n'), "the log ends with a complete line");
    let recording = Recording::parse("commands.csv", &text).unwrap();
    let (_, last) = recording.periods.last().unwrap();
    assert_eq!(last.len(), 5);
    assert!(last.iter().all(|v| v.kind() == "off"), "safe state last: {last:?}");
    assert!(recording.periods.len() > 100, "the run was under way");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("deadline misses"), "statistics printed: {stdout}");
}

#[test]
fn bad_run_configuration_is_reported_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.run.toml");
    std::fs::write(&path, run_config("snake_pedal_wave").replace("actuator = \"link4\"", "actuator = \"link9\""))
        .unwrap();
    let mut o = options(dir.path(), 1.0);
    o.config = Some(path);
    let e = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap_err();
    assert!(e.contains("bad.run.toml:") && e.contains("`link9` is not an actuator"), "{e}");
    assert!(!o.record.exists(), "nothing written for a rejected configuration");
}

/// The pinniped's run configuration with a relaxed watchdog and the ceiling given.
fn pinniped_options(dir: &Path, duration: f64, ceiling: f64) -> RunOptions {
    let text = run_config("pinniped")
        .replace("command_timeout = 0.05", "command_timeout = 10.0")
        .replace("pressure_ceiling = 3.0", &format!("pressure_ceiling = {ceiling:?}"));
    let path = dir.join("pinniped.run.toml");
    std::fs::write(&path, text).unwrap();
    RunOptions { robot: "pinniped".into(), config: Some(path), ..options(dir, duration) }
}

/// The values of one kind (`analog`, `board`, ...) of a recording: (t, channel, value).
fn recorded_values(path: &Path, kind: &str) -> Vec<(f64, u16, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1] == kind).then(|| (f[0].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap()))
        })
        .collect()
}

/// The analog values of a recording: (t, channel, volts).
fn analog_values(path: &Path) -> Vec<(f64, u16, f64)> {
    recorded_values(path, "analog")
}

#[test]
fn pinniped_crawls_backwards_in_the_loop_through_twelve_regulators_under_the_ceiling() {
    let _turn = crate::one_real_time_run();
    let dir = tempfile::tempdir().unwrap();
    let o = pinniped_options(dir.path(), 3.0, 3.0);
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    assert_eq!(report.stats.unwrap().periods, 3001);
    let values = analog_values(&o.record);
    let channels: std::collections::BTreeSet<u16> = values.iter().map(|v| v.1).collect();
    assert_eq!(channels, (0..12).collect());
    // 0-10 V for 0-9 bar: the 3 bar ceiling is 3.33 V. Zero until the gait starts at 1 s,
    // and every regulator vented at the end.
    assert!(values.iter().all(|v| v.2 >= 0.0 && v.2 <= 10.0 * 3.0 / 9.0 + 1e-12));
    assert!(values.iter().filter(|v| v.0 < 0.999).all(|v| v.2 == 0.0));
    let last_time = values.last().unwrap().0;
    assert!(values.iter().filter(|v| v.0 == last_time).all(|v| v.2 == 0.0));
    // The plant crawled backwards (-x) once the gait began.
    let trajectory = std::fs::read_to_string(&o.trajectory).unwrap();
    let last = trajectory.lines().last().unwrap();
    let x: f64 = last.split(',').nth(1).unwrap().parse().unwrap();
    assert!(x < -0.03, "hub x {x} m");
}

#[test]
fn pinniped_ceiling_caps_every_regulator() {
    let _turn = crate::one_real_time_run();
    let dir = tempfile::tempdir().unwrap();
    let o = pinniped_options(dir.path(), 2.0, 1.0);
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let values = analog_values(&o.record);
    let highest = values.iter().map(|v| v.2).fold(0.0, f64::max);
    // The gait asks up to 1.7 bar (the held head); the chain passes 1 bar, 1.11 V.
    assert!((highest - 10.0 / 9.0).abs() < 1e-9, "{highest}");
}

/// The underwater snake's run configuration with a relaxed watchdog.
fn swimmer_options(dir: &Path, duration: f64, swim: &str) -> RunOptions {
    let text = run_config("underwater_snake").replace("command_timeout = 0.05", "command_timeout = 10.0");
    let path = dir.join("underwater_snake.run.toml");
    std::fs::write(&path, text).unwrap();
    RunOptions {
        robot: "underwater_snake".into(),
        config: Some(path),
        swim: Some(swim.into()),
        ..options(dir, duration)
    }
}

#[test]
fn underwater_snake_swims_in_the_loop_through_its_thrusters_and_stops_them() {
    let _turn = crate::one_real_time_run();
    // Yaw turn, condition 1: thrusters 1, 3, 4, 6 at 1 N and joint actuators 1 and 4 at
    // 3 bar, 5 s at 100 Hz on the simulated plant (the neutral set of the run
    // configuration).
    let dir = tempfile::tempdir().unwrap();
    let turn = softgen::papers::underwater_snake::yaw_conditions()[0].clone();
    let o = swimmer_options(dir.path(), 5.0, "yaw-0.3");
    assert_eq!(softgen::papers::underwater_snake::run_driver::condition("yaw-0.3"), Some(turn.clone()));
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    assert_eq!(report.stats.unwrap().periods, 501);
    let boards = recorded_values(&o.record, "board");
    let channels: std::collections::BTreeSet<u16> = boards.iter().map(|v| v.1).collect();
    assert_eq!(channels, (0..6).collect());
    // Zeros first, ramped by the 10 N/s limit, held at 1 N, and stopped at the end.
    assert!(boards.iter().filter(|v| v.0 == 0.0).all(|v| v.2 == 0.0));
    assert!(boards.iter().all(|v| v.2.abs() <= 1.0 + 1e-12));
    let last_time = boards.last().unwrap().0;
    assert!(boards.iter().filter(|v| v.0 == last_time).all(|v| v.2 == 0.0), "thrusters not stopped at the end");
    let held: Vec<f64> = boards.iter().filter(|v| (v.0 - 1.0).abs() < 1e-9).map(|v| v.2).collect();
    assert_eq!(held, vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    let analog = analog_values(&o.record);
    assert!(analog
        .iter()
        .filter(|v| (v.0 - 1.0).abs() < 1e-9)
        .all(|v| (v.2 - if v.1 == 0 || v.1 == 3 { 3.0 } else { 0.0 }).abs() < 1e-9));
    // The plant swam as the offline run does: the same inputs, there held from t = 0, here
    // ramped up by the rate limits (1 N in 0.1 s, 3 bar in 0.15 s), which shifts the early
    // yaw transient (the bent joints first swing the body left, then the turn goes right).
    let trajectory = std::fs::read_to_string(&o.trajectory).unwrap();
    let last: Vec<f64> = trajectory.lines().last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    let offline =
        softgen::papers::underwater_snake::swim(&softgen::papers::underwater_snake::neutral_params(), &turn, 5.0, 0.05)
            .unwrap();
    let end = offline.samples.last().unwrap();
    println!(
        "in the loop: x {:.4} y {:.4} yaw {:.4}; offline: x {:.4} y {:.4} yaw {:.4}",
        last[1], last[2], last[4], end.q[0], end.q[1], end.q[3]
    );
    assert!((last[1] - end.q[0]).abs() < 0.05 * end.q[0].abs(), "x {} in the loop, {} offline", last[1], end.q[0]);
    assert!(
        last[4].signum() == end.q[3].signum() && last[3].abs() < 0.01,
        "yaw {} in the loop, {} offline; z {}",
        last[4],
        end.q[3],
        last[3]
    );
}

#[test]
fn a_swimming_robot_refuses_the_gait_options_and_a_robot_without_thrusters_refuses_swimming() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = swimmer_options(dir.path(), 1.0, "forward");
    o.stride = Some(0.1);
    let e = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap_err();
    assert!(e.contains("--swim"), "{e}");
    let mut o = options(dir.path(), 1.0);
    o.swim = Some("forward".into());
    let e = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap_err();
    assert!(e.contains("has no thrusters"), "{e}");
}

#[test]
fn a_recorded_run_replayed_into_the_plant_gives_the_same_trajectory_for_every_kind_of_robot() {
    let _turn = crate::one_real_time_run();
    // Servo joints, pressure-regulated muscles (on RK4 and, for the soft snake, ROS34PW2),
    // muscles with thrusters, and valve lines with their supply: `run --replay` wires the
    // plant as the run did, so the recording reproduces the trajectory bit for bit.
    let dir = tempfile::tempdir().unwrap();
    let runs = [
        ("snake", RunOptions { config: Some(tolerant_config(dir.path())), ..options(dir.path(), 0.5) }),
        ("pinniped", pinniped_options(dir.path(), 0.5, 3.0)),
        ("swimmer", swimmer_options(dir.path(), 0.5, "forward")),
        ("soft snake", soft_snake_options(dir.path(), 0.5)),
        ("valve snake", wpi_snake_options(dir.path(), 0.5)),
    ];
    for (name, mut o) in runs {
        o.record = dir.path().join(format!("{name}_commands.csv"));
        o.trajectory = dir.path().join(format!("{name}_plant.csv"));
        let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
        assert!(report.fault.is_none(), "{name}: {:?}", report.fault);
        let replay = RunOptions {
            replay: Some(o.record.clone()),
            swim: None,
            trajectory: dir.path().join(format!("{name}_replayed.csv")),
            ..o.clone()
        };
        let report = run_on_device(&replay, Arc::new(AtomicUsize::new(0))).unwrap();
        assert!(report.stats.is_none() && report.plant.is_some(), "{name}: a replay runs no loop");
        let (run, replayed) =
            (std::fs::read_to_string(&o.trajectory).unwrap(), std::fs::read_to_string(&replay.trajectory).unwrap());
        assert!(run.lines().count() > 40, "{name}: {} rows", run.lines().count());
        assert_eq!(run, replayed, "{name}: the replayed trajectory differs from the run's");
    }
    // A replay at a rate the recording was not made at is refused before anything is written.
    let o = RunOptions {
        replay: Some(dir.path().join("snake_commands.csv")),
        rate_hz: Some(250.0),
        trajectory: dir.path().join("wrong_rate.csv"),
        ..options(dir.path(), 0.5)
    };
    let e = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap_err();
    assert!(e.contains("not one period of 250 Hz apart"), "{e}");
    assert!(!o.trajectory.exists());
}

/// The WPI snake's run configuration (valve lines and a supply regulator) with a relaxed
/// watchdog.
fn wpi_snake_options(dir: &Path, duration: f64) -> RunOptions {
    let text = run_config("wpi_snake").replace("command_timeout = 0.05", "command_timeout = 10.0");
    let path = dir.join("wpi_snake.run.toml");
    std::fs::write(&path, text).unwrap();
    RunOptions { robot: "wpi_snake".into(), config: Some(path), ..options(dir, duration) }
}

/// The soft snake's run configuration with a relaxed watchdog.
fn soft_snake_options(dir: &Path, duration: f64) -> RunOptions {
    let text = run_config("soft_snake").replace("command_timeout = 0.05", "command_timeout = 10.0");
    let path = dir.join("soft_snake.run.toml");
    std::fs::write(&path, text).unwrap();
    RunOptions { robot: "soft_snake".into(), config: Some(path), ..options(dir, duration) }
}

/// `softgen run --robot soft_snake` drops the snake and rolls it through its nine
/// regulators, the plant integrated by ROS34PW2 as the rolling runs are: it rolls as the
/// paper's planar rolling run does. What differs: the loop holds each 1 ms period's
/// pressures (the run ramps them between its 10 ms periods), and the plant's muscles follow
/// their regulators' voltages.
#[test]
fn the_soft_snake_rolls_in_the_loop_through_nine_regulators_as_its_rolling_run_does() {
    let _turn = crate::one_real_time_run();
    use softgen::papers::soft_snake::{run_rolling, Rolling, RollingRun};
    use softgen_generated::soft_snake::{CONTACTS, DOF};
    use softgen_generated::SoftSnake;
    let dir = tempfile::tempdir().unwrap();
    // The 2 s drop and 4 s of rolling.
    let (settle, rolling) = (2.0, 4.0);
    let o = soft_snake_options(dir.path(), settle + rolling);
    let report = run_on_device(&o, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    println!("loop: {}", report.stats.unwrap());
    let text = std::fs::read_to_string(&o.trajectory).unwrap();
    let row: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect::<Vec<f64>>())
        .find(|r| (r[0] - settle - rolling).abs() < 1e-9)
        .unwrap();
    let q = SVector::<f64, DOF>::from_column_slice(&row[1..]);
    let p = <SoftSnake as Model<DOF, CONTACTS>>::Params::default();
    let looped = SoftSnake::center_of_mass(&q, &p, &SoftSnake::cache(&q, &p));
    let mut run = RollingRun::new(Rolling::Planar);
    run.duration = rolling;
    let summary = run_rolling(&run, |_| {}).unwrap();
    let (first, last) = (&summary.samples[0], summary.samples.last().unwrap());
    assert!((last.t - settle - rolling).abs() < 1e-9, "{}", last.t);
    let travelled = (last.center_of_mass - first.center_of_mass).xy().norm();
    let difference = (looped - last.center_of_mass).xy().norm();
    println!("rolled {travelled:.4} m in {rolling} s; the loop's plant ends {difference:e} m from the run's");
    assert!(travelled > 0.1, "{travelled}");
    // Measured 0.29 mm of 134 mm (0.21 %) at the configuration's 1 kHz; 0.34 mm at 100 Hz.
    assert!(difference < 0.01 * travelled, "{difference} m of {travelled} m");
    // Every regulator at 0 V through the drop, none above the 3 bar ceiling (6 V of a 5 bar,
    // 10 V regulator), all vented at the end.
    let values = analog_values(&o.record);
    let channels: std::collections::BTreeSet<u16> = values.iter().map(|v| v.1).collect();
    assert_eq!(channels, (0..9).collect());
    assert!(values.iter().filter(|v| v.0 < settle - 1e-9).all(|v| v.2 == 0.0));
    assert!(values.iter().all(|v| (0.0..=6.0 + 1e-12).contains(&v.2)));
    let end = values.last().unwrap().0;
    assert!(values.iter().filter(|v| v.0 == end).all(|v| v.2 == 0.0));
}

/// The pinniped's stride steering.
type PinnipedSteering = softgen_runtime::StrideSteering<
    softgen_generated::Pinniped,
    { softgen_generated::pinniped::DOF },
    { softgen_generated::pinniped::CONTACTS },
>;

/// The pinniped's stride steering as `config` says, at 1 kHz.
fn pinniped_stride_steering(config: softgen_runtime::StrideSteeringConfig) -> Result<PinnipedSteering, String> {
    softgen_runtime::StrideSteering::new(softgen_generated::pinniped::Params::default(), config, 1e-3)
}

/// Drives the pinniped's stride steering at 1 kHz from 0 to `periods` periods, the robot's
/// rest state measured every period and each of `posts` (a period, a plan) posted as the
/// planner would; `sent` sees every period's commands. Returns the snapshots handed to the
/// planner, in order.
fn drive_stride_steering(
    steering: &mut PinnipedSteering,
    link: &softgen_runtime::StrideLink<{ softgen_generated::pinniped::DOF }>,
    periods: usize,
    posts: &[(usize, softgen_runtime::StrideChoice)],
    pressures: &dyn Fn(usize, f64, &mut [f64]) -> Result<(), String>,
    mut sent: impl FnMut(&[softgen_runtime::ActuatorCommand]),
) -> Vec<softgen_runtime::StrideSnapshot<{ softgen_generated::pinniped::DOF }>> {
    use softgen_generated::Pinniped;
    let x = State::new(SVector::from_iterator(Pinniped::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut commands = vec![softgen_runtime::ActuatorCommand::Pressure(-1.0); Pinniped::MUSCLES.len()];
    let (mut snapshots, mut last_snapshot) = (Vec::new(), 0);
    for k in 0..=periods {
        let t = k as f64 * 1e-3;
        link.measured.post((t, x));
        for (_, plan) in posts.iter().filter(|(at, _)| *at == k) {
            link.plans.post(*plan);
        }
        steering.command(link, t, &mut commands, pressures).unwrap();
        if let Some((sequence, snapshot)) = link.snapshots.latest().filter(|(s, _)| *s != last_snapshot) {
            last_snapshot = sequence;
            snapshots.push(snapshot);
        }
        sent(&commands);
    }
    snapshots
}

/// The loop's half of stride planning, period by period at 1 kHz: the initial stride until
/// the first cycle; the state handed to the planner once a cycle, a lead before it, with
/// the muscles' reached pressures after their lag; a plan taken at the start of the cycle
/// it is for and not before; a cycle with no plan back in time keeps the stride in force
/// and counts as late; a plan for another cycle is not taken; a stride that does not exist
/// is an error.
#[test]
fn stride_steering_takes_each_cycles_plan_at_its_start_and_keeps_the_stride_when_none_came() {
    use softgen_generated::pinniped::{Params, DOF};
    use softgen_generated::Pinniped;
    use softgen_runtime::{ActuatorCommand, StrideChoice, StrideLink, StrideSteeringConfig};
    let config = StrideSteeringConfig {
        goal: nalgebra::Vector2::new(5.0, 0.0),
        arrival_radius: 0.05,
        hold: 2.0,
        cycle: 1.0,
        decision_period: 1.0,
        first_cycle: 1.0,
        lead: 0.25,
        initial: 0,
        strides: 3,
    };
    let mut steering = pinniped_stride_steering(config).unwrap();
    let link = StrideLink::<DOF>::new();
    // Stride k commands k bar to every muscle.
    let pressures = |k: usize, _since: f64, out: &mut [f64]| -> Result<(), String> {
        out.fill(k as f64);
        Ok(())
    };
    // The plan for the cycle at 1 s arrives at 0.9 s; none for 2 s; at 2.9 s one made for
    // the cycle at 2 s (stale), then at 2.95 s one for 3 s.
    let plan = |boundary: f64, stride: usize| StrideChoice { boundary, stride, rollouts: 3, failed: 0 };
    let posts = [(900, plan(1.0, 2)), (2900, plan(2.0, 1)), (2950, plan(3.0, 1))];
    let mut sent = Vec::new();
    let snapshots = drive_stride_steering(&mut steering, &link, 3500, &posts, &pressures, |commands| {
        let ActuatorCommand::Pressure(p) = commands[0] else { panic!("{:?}", commands[0]) };
        assert!(commands.iter().all(|c| *c == ActuatorCommand::Pressure(p)));
        sent.push(p);
    });
    // Stride 0 to 1 s, stride 2 from 1 s (its plan taken at the cycle's start, not at 0.9
    // s) through the cycle at 2 s (no plan), stride 1 from 3 s.
    assert!(sent[..1000].iter().all(|p| *p == 0.0));
    assert!(sent[1000..3000].iter().all(|p| *p == 2.0));
    assert!(sent[3000..].iter().all(|p| *p == 1.0));
    assert_eq!((steering.plans_applied, steering.late_plans), (2, 1));
    assert_eq!(steering.periods_played, vec![0, 1, 2]);
    // One snapshot a cycle, the lead before it, with what was in force then.
    let times: Vec<(f64, f64, usize)> = snapshots.iter().map(|s| (s.time, s.boundary, s.current)).collect();
    assert_eq!(times, vec![(0.75, 1.0, 0), (1.75, 2.0, 2), (2.75, 3.0, 2)], "{times:?}");
    // The muscles' reached pressures at 1.75 s: 2 bar commanded since 1 s through the lag
    // (held 750 periods of 1 ms).
    let lag = Pinniped::muscle(0, &Params::default()).unwrap().pressure_lag;
    let expected = 2.0 * (1.0 - (-0.75f64 / lag).exp());
    assert!((snapshots[1].reached[0] - expected).abs() < 1e-9, "{} {expected}", snapshots[1].reached[0]);
    // A stride the robot does not have.
    link.plans.post(StrideChoice { boundary: 4.0, stride: 7, rollouts: 3, failed: 0 });
    let mut commands = vec![ActuatorCommand::Pressure(-1.0); Pinniped::MUSCLES.len()];
    let e = steering.command(&link, 4.0, &mut commands, &pressures).unwrap_err();
    assert!(e.contains("the planner chose stride 7 of 3"), "{e}");
}

/// Stride steering deciding four times a cycle: the state handed to the planner a lead
/// before every decision, with the start of the gait cycle in force; a stride chosen
/// mid-cycle plays in step with the gait's clock (its commands `since` the cycle's start,
/// not the decision); decisions fall on every cycle's start; a plan one decision late is
/// taken at the next decision and counted; a decision period that does not divide the
/// cycle, or a lead longer than it, is refused.
#[test]
fn stride_steering_decides_mid_cycle_on_the_gaits_clock() {
    use softgen_generated::pinniped::DOF;
    use softgen_runtime::{StrideChoice, StrideLink, StrideSteeringConfig};
    use std::cell::RefCell;
    let config = StrideSteeringConfig {
        goal: nalgebra::Vector2::new(5.0, 0.0),
        arrival_radius: 0.05,
        hold: 2.0,
        cycle: 1.0,
        decision_period: 0.25,
        first_cycle: 1.0,
        lead: 0.1,
        initial: 0,
        strides: 3,
    };
    let period = 1e-3;
    for (decision_period, lead, error) in [
        (0.3, 0.1, "the decision period must be the 1 s gait cycle or a whole fraction of it, got 0.3"),
        (2.0, 0.1, "the decision period must be the 1 s gait cycle or a whole fraction of it, got 2"),
        (0.25, 0.3, "the planner's lead must be in (0, 0.25 s]"),
    ] {
        let e = pinniped_stride_steering(StrideSteeringConfig { decision_period, lead, ..config }).err().unwrap();
        assert!(e.contains(error), "{e}");
    }
    let mut steering = pinniped_stride_steering(config).unwrap();
    let link = StrideLink::<DOF>::new();
    // Stride k commands k bar plus the time since its cycle's start, which it records.
    let since_of = RefCell::new(Vec::new());
    let pressures = |k: usize, since: f64, out: &mut [f64]| -> Result<(), String> {
        since_of.borrow_mut().push((k, since));
        out.fill(k as f64 + since);
        Ok(())
    };
    // Answers to the snapshots: stride 1 from 1.5 s; the plan for 1.75 s (stride 2) comes
    // after it and is taken at 2 s; the plan for 2.25 s keeps stride 2.
    let plan = |boundary: f64, stride: usize| StrideChoice { boundary, stride, rollouts: 3, failed: 0 };
    let posts = [(1450, plan(1.5, 1)), (1760, plan(1.75, 2)), (2200, plan(2.25, 2))];
    let snapshots = drive_stride_steering(&mut steering, &link, 2600, &posts, &pressures, |_| {});
    let decisions: Vec<(f64, f64, f64)> =
        snapshots.iter().map(|s| ((s.time * 1e3).round() / 1e3, s.boundary, s.current_start)).collect();
    assert_eq!(
        decisions,
        vec![
            (0.9, 1.0, 1.0),
            (1.15, 1.25, 1.0),
            (1.4, 1.5, 1.0),
            (1.65, 1.75, 1.0),
            (1.9, 2.0, 1.0),
            (2.15, 2.25, 2.0),
            (2.4, 2.5, 2.0)
        ],
        "{decisions:?}"
    );
    let since_of = since_of.borrow();
    let at = |t: f64| since_of[(t / period).round() as usize];
    // Standing before 1.5 s; stride 1 from 1.5 s, 0.5 s into the cycle that began at 1 s.
    assert_eq!(at(1.499).0, 0);
    assert_eq!(at(1.5).0, 1);
    assert!((at(1.5).1 - 0.5).abs() < 1e-9, "{:?}", at(1.5));
    // Stride 1 kept through 1.75 s (that plan came late), stride 2 from 2 s, the cycle's
    // start, where the clock starts again.
    assert_eq!(at(1.8).0, 1);
    assert!((at(1.8).1 - 0.8).abs() < 1e-9, "{:?}", at(1.8));
    assert_eq!(at(1.999).0, 1);
    assert_eq!(at(2.0).0, 2);
    assert!((at(2.1).1 - 0.1).abs() < 1e-9, "{:?}", at(2.1));
    assert!((at(2.3).1 - 0.3).abs() < 1e-9, "{:?}", at(2.3));
    // Late: 1.25 s (no answer), 1.75 s (its plan taken at 2 s), 2.5 s (no answer); the
    // first decision, with no plan yet, is not counted.
    assert_eq!((steering.plans_applied, steering.late_plans, steering.late_plans_taken), (3, 4, 1));
    // Decision periods played: stride 0 from 1 s to 1.5 s, stride 1 to 2 s, stride 2 to the
    // decision at 2.5 s.
    assert_eq!(steering.periods_played, vec![2, 2, 3]);
}
