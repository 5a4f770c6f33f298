//! The experiment of the hybrid robot imported from URDF (panda_soft_finger): the arm holds
//! its soft finger over the table and the finger presses with set forces; it writes its CSV
//! and figures and ends with a computed verdict.

use crate::papers::experiment::{write_csv, Experiment, ExperimentReport, Verdict, ViewedRun};
use crate::papers::panda_soft_finger::press::{run_press, static_pressure, PressRun, PressTask, ARM_JOINTS};
use softgen_generated::PandaSoftFinger;
use softgen_runtime::Model;
use std::path::Path;

/// The experiments of the hybrid robot, in the order `experiment list` prints them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[Experiment {
    name: "panda-finger-press",
    what: "Panda arm (imported URDF) with a soft finger: press the table at 1 N then 2 N, force loop on the muscles' pressure, arm in joint impedance",
    run: press,
}];

/// What one judged window of a run measured.
struct Window {
    from: f64,
    to: f64,
    set: f64,
    force: f64,
    /// Largest distance of the force from its mean in the window (N).
    ripple: f64,
    pressure: f64,
    statics: f64,
    slip: f64,
    arm_error: f64,
}

/// The samples of `run` in [from, to] measured against the statics.
fn judge(run: &PressRun, task: &PressTask, from: f64, to: f64, set: f64) -> Result<Window, String> {
    let inside: Vec<_> = run.samples.iter().filter(|s| s.t >= from - 1e-9 && s.t <= to + 1e-9).collect();
    let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
        return Err(format!("panda-finger-press: no samples in {from} to {to} s"));
    };
    let n = inside.len() as f64;
    let force = inside.iter().map(|s| s.force).sum::<f64>() / n;
    let ripple = inside.iter().map(|s| (s.force - force).abs()).fold(0.0, f64::max);
    let pressure = inside.iter().map(|s| s.reached.iter().sum::<f64>() / 3.0).sum::<f64>() / n;
    let length = inside
        .iter()
        .map(|s| (s.state.q[ARM_JOINTS] + s.state.q[ARM_JOINTS + 1] + s.state.q[ARM_JOINTS + 2]) / 3.0)
        .sum::<f64>()
        / n;
    Ok(Window {
        from,
        to,
        set,
        force,
        ripple,
        pressure,
        statics: static_pressure(&task.params, length, force),
        slip: (last.tip.xy() - first.tip.xy()).norm(),
        arm_error: inside.iter().map(|s| s.arm_error).fold(0.0, f64::max),
    })
}

/// `panda-finger-press`: the task of `press.rs`, its force, pressures and tip over time.
fn press(out: &Path) -> Result<ExperimentReport, String> {
    use softgen_app::{plot_time_series, Series};
    let task = PressTask::new();
    let run = run_press(&task)?;
    let rows: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            format!(
                "{:.3},{:.4},{:.6},{:.6},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.8},{:.8},{:.8},{:.8},{:.8},{:.8},{:.3e}",
                s.t,
                s.set_force,
                s.force,
                s.tangential_force,
                s.touching,
                s.commanded[0],
                s.reached[0],
                s.reached[1],
                s.reached[2],
                s.tip.x,
                s.tip.y,
                s.tip.z,
                s.state.q[ARM_JOINTS],
                s.state.q[ARM_JOINTS + 1],
                s.state.q[ARM_JOINTS + 2],
                s.state.qd[ARM_JOINTS],
                s.state.qd[ARM_JOINTS + 1],
                s.arm_error
            )
        })
        .collect();
    write_csv(
        &out.join("press.csv"),
        "t_s,set_force_n,force_n,tangential_force_n,points_touching,commanded_bar,pressure1_bar,pressure2_bar,pressure3_bar,tip_x_m,tip_y_m,tip_z_m,finger_l1_m,finger_l2_m,finger_l3_m,finger_l1_rate_m_s,finger_l2_rate_m_s,arm_error_rad",
        &rows,
    )?;
    // The coordinates at 100 Hz for `--view`.
    let header: Vec<&str> = std::iter::once("t").chain(PandaSoftFinger::COORDINATES.iter().map(|c| c.name)).collect();
    let trajectory: Vec<String> = run
        .samples
        .iter()
        .step_by(10)
        .map(|s| {
            let values: Vec<String> = s.state.q.iter().map(|v| v.to_string()).collect();
            format!("{},{}", s.t, values.join(","))
        })
        .collect();
    write_csv(&out.join("trajectory.csv"), &header.join(","), &trajectory)?;
    let view =
        ViewedRun::new("trajectory.csv", PandaSoftFinger::NAME, "Panda arm with a soft finger pressing the table");
    let series =
        |name: &str, colour: [u8; 3], value: fn(&crate::papers::panda_soft_finger::press::PressSample) -> f64| Series {
            name: name.into(),
            colour,
            points: run.samples.iter().map(|s| (s.t, value(s))).collect(),
        };
    plot_time_series(
        "Panda with a soft finger: the table's push",
        "force (N)",
        &[series("set", [200, 40, 40], |s| s.set_force), series("measured", [40, 60, 200], |s| s.force)],
        &out.join("force.png"),
    )?;
    plot_time_series(
        "Panda with a soft finger: muscle pressure",
        "pressure (bar)",
        &[series("commanded", [200, 40, 40], |s| s.commanded[0]), series("reached", [40, 60, 200], |s| s.reached[0])],
        &out.join("pressure.png"),
    )?;
    plot_time_series(
        "Panda with a soft finger: tip ring's height over the table",
        "height (mm)",
        &[series("tip", [30, 150, 60], |s| s.tip.z * 1e3)],
        &out.join("tip_height.png"),
    )?;
    let p = &task.params;
    let first = run.samples.first().ok_or("panda-finger-press: no samples")?;
    let mut lines = vec![
        format!(
            "pose: joints 2, 4, 6 at ({:.4}, {:.4}, {:.4}) rad put the tip ring's centre at ({:.4}, {:.4}, {:.4}) m, {:.1} mm over the table, the finger {:.2e} rad off vertical",
            run.pose[1], run.pose[3], run.pose[5], first.tip.x, first.tip.y, first.tip.z, first.tip.z * 1e3, run.tilt
        ),
        format!(
            "force loop: PI {} bar/N, {} bar/(N s) on the table's push, {:.0} ms muscle lag, ceiling {} bar; arm: joint impedance with gravity compensation, torques within the URDF's efforts",
            task.proportional, task.integral, p.muscle_lag * 1e3, task.ceiling
        ),
        format!(
            "statics of the straight finger, never used by the loop: p A = k l + F / 3 - m g / 6 (k = {} N/m, A = {:.4e} m^2, m = {} kg)",
            p.muscle_stiffness, p.muscle_area, p.finger_mass
        ),
    ];
    let touchdown = run.samples.iter().find(|s| s.touching > 0).map(|s| s.t);
    lines.push(match touchdown {
        Some(t) => format!("touchdown at t = {t:.3} s"),
        None => "the finger never touched the table".into(),
    });
    let mut reasons = Vec::new();
    for (from, to, set) in task.windows() {
        let w = judge(&run, &task, from, to, set)?;
        let force_off = (w.force - w.set).abs() / w.set.max(f64::MIN_POSITIVE);
        let statics_off = (w.pressure - w.statics).abs() / w.statics.abs().max(f64::MIN_POSITIVE);
        lines.push(format!(
            "{} N held, {:.1} to {:.1} s: force {:.4} N ({:.2} % off, ripple {:.1e} N), pressure {:.5} bar against the statics' {:.5} ({:.1e} apart), tip slid {:.2e} m, arm joints at most {:.1e} rad off the pose",
            w.set, w.from, w.to, w.force, 100.0 * force_off, w.ripple, w.pressure, w.statics, statics_off, w.slip, w.arm_error
        ));
        if force_off > task.force_tolerance {
            reasons.push(format!("{:.4} N held for {} N ({:.1} % off)", w.force, w.set, 100.0 * force_off));
        }
        if statics_off > task.force_tolerance {
            reasons.push(format!(
                "at {} N the pressure is {:.4} bar, the statics ask {:.4} ({:.1} % apart)",
                w.set,
                w.pressure,
                w.statics,
                100.0 * statics_off
            ));
        }
        if w.slip > task.slip_tolerance {
            reasons.push(format!("the tip slid {:.2e} m while pressing {} N", w.slip, w.set));
        }
    }
    let simulated = run.samples.last().map_or(0.0, |s| s.t);
    lines.push(format!(
        "{simulated:.1} s simulated in {:.2} s wall ({:.0}x real time, {} right-hand sides); outputs: press.csv, trajectory.csv, force, pressure, tip_height (.png and .svg)",
        run.wall_seconds,
        simulated / run.wall_seconds.max(1e-9),
        run.evaluations
    ));
    let verdict = if reasons.is_empty() { Verdict::Reached } else { Verdict::Differs(reasons.join("; ")) };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}
