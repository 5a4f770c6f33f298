//! Model-predictive control in hardware-in-the-loop: `softgen run` with the planner in its
//! own thread re-planning at 20 Hz from the simulated plant's state, the 1 kHz loop sending
//! the gait to the plant, until the snake reaches a goal 1 m away. Its own test binary, so
//! no other test competes for the cores while the loop keeps its deadlines.

use softgen::{run_on_device, ControllerChoice, RunOptions};
use softgen_runtime::Recording;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The run configuration the robot comes with (its spec's sibling `.run.toml`).
fn run_config(robot: &str) -> &'static str {
    softgen::run_config_of(robot).unwrap_or_else(|| panic!("{robot} has no run configuration")).text
}

#[test]
fn model_predictive_control_in_the_loop_reaches_a_goal_one_metre_away() {
    let dir = tempfile::tempdir().unwrap();
    // A watchdog that tolerates a shared, loaded test machine (every miss is still counted).
    let config = dir.path().join("snake_lateral_undulation.run.toml");
    std::fs::write(
        &config,
        run_config("snake_lateral_undulation").replace("command_timeout = 0.05", "command_timeout = 10.0"),
    )
    .unwrap();
    let options = RunOptions {
        robot: "snake_lateral_undulation".into(),
        serial_port: None,
        comedi_device: None,
        ack_timeout: std::time::Duration::from_millis(50),
        config: Some(config),
        dry_run: false,
        rate_hz: None,
        duration: 40.0,
        record: dir.path().join("commands.csv"),
        trajectory: dir.path().join("plant.csv"),
        realtime: false,
        amplitude: None,
        temporal_frequency: None,
        spatial_frequency: None,
        offset: None,
        controller: ControllerChoice::Mpc,
        goal: None,
        limb_gait: None,
        stride: None,
        gait_frequency: None,
        swim: None,
    };
    let report = run_on_device(&options, Arc::new(AtomicUsize::new(0))).unwrap();
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let mpc = report.mpc.unwrap();
    let stats = report.stats.unwrap();
    println!("loop: {stats}");
    println!("planner: {}", mpc.planner);
    assert!((mpc.start_distance - 1.0).abs() < 1e-3, "the goal is 1 m away: {}", mpc.start_distance);
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
    // Re-planning at 20 Hz: a plan every 50 ms over the run, with 32 rollouts of 1 s each.
    assert!(mpc.planner.rate_hz() >= 19.0, "re-planning rate {:.1} Hz", mpc.planner.rate_hz());
    assert!(
        mpc.planner.overruns * 10 <= mpc.planner.plans,
        "{} of {} plans overran",
        mpc.planner.overruns,
        mpc.planner.plans
    );
    assert_eq!(mpc.planner.failed_rollouts, 0);
    // Every plan is taken over until arrival; the ones made while settling are not.
    let while_settling = 20;
    assert!(
        mpc.plans_applied + while_settling + 2 >= mpc.planner.plans,
        "{} plans, {} applied",
        mpc.planner.plans,
        mpc.plans_applied
    );
    // Every period's commands are in the recording, the safe state last.
    let text = std::fs::read_to_string(&options.record).unwrap();
    let recording = Recording::parse("commands.csv", &text).unwrap();
    assert_eq!(recording.periods.len() as u64, stats.periods + 1);
    assert!(recording.periods.last().unwrap().1.iter().all(|v| v.kind() == "off"));
}
