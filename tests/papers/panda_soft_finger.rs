//! The hybrid robot imported from URDF (panda_soft_finger) at its task: the pose puts the
//! finger upright over its spot, the force loop holds each set force, the pressure it ends
//! at meets the statics of a straight extensible section that the loop never uses, the arm
//! holds still and the tip does not slide; bad task settings are refused. Its M, C and G
//! against Pinocchio run in python/tests/test_urdf_import.py, the generic invariants in
//! generated/tests/invariants.rs.

use softgen::papers::panda_soft_finger::press::{
    pressing_pose, run_press, static_pressure, ForceStep, PressTask, ARM_JOINTS,
};

#[test]
fn the_pose_holds_the_finger_upright_over_its_spot() {
    let task = PressTask::new();
    let (pose, tilt) = pressing_pose(&task).unwrap();
    assert!(tilt.abs() < 1e-9, "the finger is {tilt} rad off vertical");
    // Joints 1, 3 and 5 stay at zero, 7 at pi / 4: the arm is in its vertical plane.
    for j in [0, 2, 4] {
        assert_eq!(pose[j], 0.0);
    }
    assert_eq!(pose[6], std::f64::consts::FRAC_PI_4);
    let run = run_press(&PressTask {
        duration: 0.001,
        steps: vec![ForceStep { from: 0.0, force: 0.0 }],
        judged: 0.0,
        ..task.clone()
    })
    .unwrap();
    let tip = run.samples[0].tip;
    assert!((tip.x - task.spot[0]).abs() < 1e-9 && tip.y.abs() < 1e-9 && (tip.z - task.gap).abs() < 1e-9, "{tip:?}");
}

#[test]
fn the_finger_holds_each_set_force_at_the_pressure_its_statics_ask() {
    let task = PressTask::new();
    let run = run_press(&task).unwrap();
    let touchdown = run.samples.iter().position(|s| s.touching > 0).expect("never touched the table");
    // Before touchdown nothing pushes; the tip ring touches with all six points at once.
    assert!(run.samples[..touchdown].iter().all(|s| s.force == 0.0));
    for (from, to, set) in task.windows() {
        let inside: Vec<_> = run.samples.iter().filter(|s| s.t >= from && s.t <= to).collect();
        assert!(inside.len() >= 900, "{} samples in {from}..{to}", inside.len());
        for s in &inside {
            assert_eq!(s.touching, 6, "t = {}", s.t);
            assert!((s.force - set).abs() < 0.01 * set, "t = {}: {} N for {set}", s.t, s.force);
            // Every command and pressure within [0, ceiling].
            assert!(s.commanded.iter().chain(&s.reached).all(|p| (0.0..=task.ceiling).contains(p)));
            let length = (s.state.q[ARM_JOINTS] + s.state.q[ARM_JOINTS + 1] + s.state.q[ARM_JOINTS + 2]) / 3.0;
            let pressure = s.reached.iter().sum::<f64>() / 3.0;
            let statics = static_pressure(&task.params, length, s.force);
            assert!((pressure - statics).abs() < 1e-3 * statics, "t = {}: {pressure} bar, statics {statics}", s.t);
            assert!(s.arm_error < 5e-3, "t = {}: the arm is {} rad off its pose", s.t, s.arm_error);
        }
        let slip = (inside.last().unwrap().tip.xy() - inside[0].tip.xy()).norm();
        assert!(slip < task.slip_tolerance, "the tip slid {slip} m at {set} N");
    }
    let report = softgen::find_experiment("panda-finger-press").unwrap();
    assert!(report.what.contains("imported URDF"));
}

#[test]
fn the_experiment_ends_reached() {
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("panda-finger-press").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "panda-finger-press");
    assert_eq!(report.verdict, softgen::Verdict::Reached, "{}", report.lines.join("\n"));
    for file in ["press.csv", "trajectory.csv", "force.png", "pressure.png", "tip_height.png"] {
        assert!(dir.path().join("panda-finger-press").join(file).exists(), "{file}");
    }
}

#[test]
fn bad_task_settings_are_refused_with_what_was_wrong() {
    let cases: Vec<(PressTask, &str)> = vec![
        (
            PressTask { steps: vec![ForceStep { from: 1.0, force: 1.0 }], ..PressTask::new() },
            "the first force step must start at 0 s",
        ),
        (
            PressTask {
                steps: vec![ForceStep { from: 0.0, force: 1.0 }, ForceStep { from: 0.5, force: 2.0 }],
                ..PressTask::new()
            },
            "force steps at 0 and 0.5 s leave less than the 1 s judged",
        ),
        (
            PressTask { steps: vec![ForceStep { from: 0.0, force: f64::NAN }], ..PressTask::new() },
            "set force NaN N at 0 s",
        ),
        (PressTask { ceiling: 4.0, ..PressTask::new() }, "exceeds the 3 bar muscle `finger_muscle1` is rated for"),
        (PressTask { control_period: -1.0, ..PressTask::new() }, "control period must be finite and >= 0"),
        (PressTask { spot: [2.0, 0.0], ..PressTask::new() }, "no arm pose puts the finger"),
    ];
    for (task, expected) in cases {
        let error = run_press(&task).unwrap_err();
        assert!(error.contains(expected), "expected `{expected}` in: {error}");
    }
}
