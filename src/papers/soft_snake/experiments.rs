//! The experiments of 000_a2f8bdeafcf4372f, the soft snake: each runs the robot as the paper did, writes its
//! CSV and figures and ends with a computed verdict.

use super::rolling::{run_rolling, write_rolling_outputs, Rolling, RollingRun};
use crate::papers::experiment::{
    control_task_verdict, plot_path_to_goal, plot_plan_times, qualitative_unless, write_csv, Experiment,
    ExperimentReport, Verdict, ViewedRun,
};
use softgen_runtime::Model;
use std::path::Path;

/// The experiments of 000, in the order `experiment list` prints them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "000-drop",
        what: "soft snake dropped from 0.6 m onto carpet (000, section IV-C, Fig 8A)",
        run: soft_snake_drop,
    },
    Experiment {
        name: "000-rolling-planar",
        what: "soft snake, planar rolling at 3 bar and 0.5 Hz for 15 s (000, Table I)",
        run: rolling_planar,
    },
    Experiment {
        name: "000-rolling-spatial",
        what: "soft snake, spatial rolling at 3 bar and 0.5 Hz for 15 s (000, Table I)",
        run: rolling_spatial,
    },
    Experiment {
        name: "mpc-000-roll-aside",
        what: "soft snake, MPC: roll to a goal 0.3 m to the side on the carpet and stay (bend and bending-plane rate, box-DDP at 20 Hz)",
        run: mpc_roll_aside,
    },
];

fn soft_snake_drop(out: &Path) -> Result<ExperimentReport, String> {
    let mut run = RollingRun::new(Rolling::Planar);
    run.duration = 0.0;
    let summary = run_rolling(&run, |_| {})?;
    if let Some(e) = &summary.error {
        return Err(format!("the drop stopped early: {e}"));
    }
    let csv = write_rolling_outputs(&summary, "drop", out, false)?;
    let view = viewed("soft snake dropped from 0.6 m onto carpet (000, Fig 8A)", &csv);
    let lowest_com = summary.samples.iter().map(|s| s.center_of_mass.z).fold(f64::INFINITY, f64::min);
    let last = summary.samples.last().ok_or("no samples")?;
    let rest =
        summary.samples.iter().rev().take_while(|s| (s.q[2] - last.q[2]).abs() < 1e-4).last().map_or(last.t, |s| s.t);
    let lines = vec![
        format!("paper:   z stops at the ground and the body stays above it (Fig 8A)"),
        format!(
            "softgen: base at {:.2} mm after {:.1} s, settled by t = {rest:.2} s; centre of mass never below {:.2} mm",
            1000.0 * last.q[2],
            last.t,
            1000.0 * lowest_com
        ),
    ];
    let mut reasons = Vec::new();
    if !(lowest_com > 0.0) {
        reasons.push(format!("the centre of mass went {:.2} mm below the ground", -1000.0 * lowest_com));
    }
    if !(last.q[2] > 0.0 && last.q[2] < 0.03) {
        reasons.push(format!("the base came to rest at {:.1} mm, not on the ground", 1000.0 * last.q[2]));
    }
    // Fig 8A shows the drop with no number to hold the run to.
    let matched = format!(
        "it comes to rest on the ground and stays above it, as Fig 8A shows with no number: base at {:.1} mm, settled by t = {rest:.2} s, centre of mass never below {:.1} mm",
        1000.0 * last.q[2],
        1000.0 * lowest_com
    );
    Ok(ExperimentReport { lines, views: vec![view], verdict: qualitative_unless(reasons, matched) })
}

fn rolling(out: &Path, rolling: Rolling) -> Result<ExperimentReport, String> {
    let run = RollingRun::new(rolling);
    let summary = run_rolling(&run, |_| {})?;
    if let Some(e) = &summary.error {
        return Err(format!("the run stopped early: {e}"));
    }
    let name = rolling.name();
    let csv = write_rolling_outputs(&summary, name, out, false)?;
    let view = viewed(&format!("soft snake, {name} rolling at 3 bar and 0.5 Hz (000, Table I)"), &csv);
    let (paper, prototype) = rolling.table_one();
    let (vx, vy) = summary.velocity_cm_s.ok_or("the run is too short to fit a velocity")?;
    let mut lines = vec![
        format!(
            "paper (Table I):  V_x = {:.2}, V_y = {:.2} cm/s (model); {:.2}, {:.2} (prototype)",
            paper.0, paper.1, prototype.0, prototype.1
        ),
        format!("softgen:          V_x = {vx:.2}, V_y = {vy:.2} cm/s (bend {:.2} rad per section)", summary.bend),
    ];
    // How fast this gait can go: the base section's roll rate over the measured window
    // times the skin radius is the speed of rolling without slip.
    let window: Vec<_> = summary.samples.iter().filter(|s| s.t >= summary.window_start).collect();
    let (first, last) = match (window.first(), window.last()) {
        (Some(a), Some(b)) if b.t > a.t => (a, b),
        _ => return Err("no samples in the measured window".into()),
    };
    let roll = softgen_generated::SoftSnake::COORDINATES
        .iter()
        .position(|c| c.name == "base_roll")
        .ok_or("no base_roll coordinate")?;
    let roll_rate = ((last.q[roll] - first.q[roll]) / (last.t - first.t)).abs();
    let skin = run.params.skin_radius;
    let no_slip = 100.0 * roll_rate * skin;
    let (speed, paper_speed) = (vx.hypot(vy), f64::hypot(paper.0, paper.1));
    let peak_pressure = summary.samples.iter().flat_map(|s| s.pressures).fold(0.0, f64::max);
    lines.push(format!(
        "rolling:          {:.2} turns of the body per gait cycle; without slip on the {:.1} cm skin that is {no_slip:.2} cm/s; softgen |V| = {speed:.2} cm/s, the paper's {paper_speed:.2}; highest pressure {peak_pressure:.2} bar (the paper's ceiling: {} bar)",
        roll_rate / (std::f64::consts::TAU * run.frequency),
        100.0 * skin,
        run.ceiling
    ));
    let close = |a: f64, b: f64| (a - b).abs() <= 0.2 * b.abs().max(1.0);
    let verdict = if close(vx, paper.0) && close(vy, paper.1) {
        Verdict::Reproduced
    } else if paper_speed > no_slip {
        // The radius the paper's speed would take, and whether any radius gives its
        // sideways V_x as well: the gait is the same, only the skin grows.
        let needed = paper_speed / (100.0 * roll_rate);
        let sideways = over_skin_radii(rolling, needed)?;
        for (radius, (x, y)) in &sideways {
            lines.push(format!("skin {:.1} cm:       V_x = {x:.2}, V_y = {y:.2} cm/s", 100.0 * radius));
        }
        let (low, high) =
            sideways.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, (x, _))| (a.min(*x), b.max(*x)));
        let (first, last) = (100.0 * sideways[0].0, 100.0 * sideways[sideways.len() - 1].0);
        let at_needed = sideways.iter().find(|(r, _)| *r == needed).map_or((f64::NAN, f64::NAN), |(_, v)| *v);
        let matched: Vec<String> = sideways
            .iter()
            .filter(|(_, (x, y))| close(*x, paper.0) && close(*y, paper.1))
            .map(|(r, _)| format!("{:.1} cm", 100.0 * r))
            .collect();
        let radii = if matched.is_empty() {
            format!(
                "no skin radius from {first:.1} to {last:.1} cm gives Table I's sideways V_x = {:.2} cm/s (softgen's V_x {low:+.2} to {high:+.2}; at the {:.1} cm the speed takes, V = ({:.2}, {:.2}))",
                paper.0,
                100.0 * needed,
                at_needed.0,
                at_needed.1
            )
        } else {
            format!("with a skin of {} softgen's V is within 20 % of Table I's in both components", matched.join(", "))
        };
        Verdict::Unverifiable(format!(
            "the paper lists neither its optimised joint trajectories nor a skin radius; this gait rolls at most {no_slip:.2} cm/s without slip on the {:.1} cm skin ({:.2} turns per cycle), below the paper's |V| = {paper_speed:.2} cm/s, which would take a radius of at least {:.1} cm; softgen V = ({vx:.2}, {vy:.2}) cm/s; {radii}",
            100.0 * skin,
            roll_rate / (std::f64::consts::TAU * run.frequency),
            100.0 * needed
        ))
    } else {
        Verdict::Differs(format!(
            "V = ({vx:.2}, {vy:.2}) cm/s against the paper's ({:.2}, {:.2}): its joint trajectories come from an optimisation it does not list",
            paper.0, paper.1
        ))
    };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}

/// The gait's velocity (V_x, V_y in cm/s) with the skin's radius (m) at `needed` and at 2,
/// 2.5, 3, 3.5 and 4 cm (those within a millimetre of it left out), in increasing radius.
fn over_skin_radii(rolling: Rolling, needed: f64) -> Result<Vec<(f64, (f64, f64))>, String> {
    let mut radii: Vec<f64> =
        [0.02, 0.025, 0.03, 0.035, 0.04].into_iter().filter(|r| (r - needed).abs() >= 1e-3).collect();
    radii.push(needed);
    radii.sort_by(f64::total_cmp);
    let runs: Vec<RollingRun> = radii
        .iter()
        .map(|&radius| {
            let mut run = RollingRun::new(rolling);
            softgen_runtime::ParamSet::set(&mut run.params, "skin_radius", radius).map_err(|e| e.to_string())?;
            Ok(run)
        })
        .collect::<Result<_, String>>()?;
    let velocities = softgen_app::run_all(&runs, |run| {
        let summary = run_rolling(run, |_| {})?;
        if let Some(e) = &summary.error {
            return Err(format!("the run stopped early: {e}"));
        }
        summary.velocity_cm_s.ok_or_else(|| "the run is too short to fit a velocity".to_string())
    });
    radii
        .iter()
        .zip(velocities)
        .map(|(&radius, v)| v.map(|v| (radius, v)).map_err(|e| format!("skin radius {radius} m: {e}")))
        .collect()
}

/// The soft snake's run written to `csv`, as `--view` draws it.
fn viewed(title: &str, csv: &Path) -> ViewedRun {
    let file = csv.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    ViewedRun::new(file, softgen_generated::SoftSnake::NAME, title)
}

fn rolling_planar(out: &Path) -> Result<ExperimentReport, String> {
    rolling(out, Rolling::Planar)
}

fn rolling_spatial(out: &Path) -> Result<ExperimentReport, String> {
    rolling(out, Rolling::Spatial)
}

/// `mpc-000-roll-aside`: the task of `mpc.rs`, its path, decisions, pressures and planner
/// timing.
fn mpc_roll_aside(out: &Path) -> Result<ExperimentReport, String> {
    use super::mpc::{run_roll_aside, RollAsideTask, ARRIVAL_RADIUS, GOAL_ASIDE};
    use softgen_app::{plot_time_series, Series};
    let task = RollAsideTask::new();
    let run = run_roll_aside(&task)?;
    let rows: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            let pressures: Vec<String> = s.pressures.iter().map(|v| format!("{v:.5}")).collect();
            format!(
                "{:.3},{:.6},{:.6},{:.6},{:.6},{:.5},{:.5},{:.5},{},{:.3},{:.6e},{},{}",
                s.t,
                s.center_of_mass.x,
                s.center_of_mass.y,
                s.center_of_mass.z,
                s.distance,
                s.bend,
                s.plane_rate,
                s.phase,
                pressures.join(","),
                s.plan_ms,
                s.cost,
                s.jacobians,
                s.failed as u8
            )
        })
        .collect();
    let pressure_columns: Vec<String> = (0..9).map(|k| format!("pressure_{}_{}_bar", k / 3 + 1, k % 3 + 1)).collect();
    write_csv(
        &out.join("roll_aside.csv"),
        &format!(
            "t_s,com_x_m,com_y_m,com_z_m,distance_m,bend_rad,plane_rate_rad_s,plane_phase_rad,{},plan_ms,plan_cost,plan_jacobians,plan_failed",
            pressure_columns.join(",")
        ),
        &rows,
    )?;
    // The plant's coordinates at every plan, for `--view`.
    let header: Vec<String> = std::iter::once("t".to_string())
        .chain(softgen_generated::SoftSnake::COORDINATES.iter().map(|c| c.name.to_string()))
        .chain(std::iter::once("distance_m".to_string()))
        .collect();
    let trajectory: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            let values: Vec<String> = s.state.q.iter().map(|v| v.to_string()).collect();
            format!("{},{},{}", s.t, values.join(","), s.distance)
        })
        .collect();
    write_csv(&out.join("trajectory.csv"), &header.join(","), &trajectory)?;
    let view = viewed("soft snake, MPC: roll 0.3 m aside", &out.join("trajectory.csv"));
    let path = run.samples.iter().map(|s| (s.center_of_mass.x, s.center_of_mass.y)).collect();
    plot_path_to_goal("soft snake, MPC: path (top view)", path, (run.goal.x, run.goal.y), out)?;
    let decisions = vec![
        Series {
            name: "bend (rad)".into(),
            colour: [200, 40, 40],
            points: run.samples.iter().map(|s| (s.t, s.bend)).collect(),
        },
        Series {
            name: "plane rate (rad/s)".into(),
            colour: [40, 60, 200],
            points: run.samples.iter().map(|s| (s.t, s.plane_rate)).collect(),
        },
        Series {
            name: "distance to goal (m)".into(),
            colour: [30, 150, 60],
            points: run.samples.iter().map(|s| (s.t, s.distance)).collect(),
        },
    ];
    plot_time_series("soft snake, MPC: the plan's decisions", "value", &decisions, &out.join("decisions.png"))?;
    let palette = [[220, 30, 30], [30, 140, 30], [30, 60, 220]];
    let pressures: Vec<Series> = (0..9)
        .map(|k| Series {
            name: pressure_columns[k].clone(),
            colour: palette[k / 3].map(|c| c / (1 + (k % 3) as u8)),
            points: run.samples.iter().map(|s| (s.t, s.pressures[k])).collect(),
        })
        .collect();
    plot_time_series("soft snake, MPC: muscle pressures", "pressure (bar)", &pressures, &out.join("pressures.png"))?;
    let times = run.samples.iter().map(|s| (s.t, s.plan_ms)).collect();
    plot_plan_times("soft snake, MPC: planner time per plan", times, out)?;
    let simulated = run.samples.last().map_or(0.0, |s| s.t);
    let mut lines = vec![
        format!(
            "task: from rest after a {} s drop, roll the centre of mass {GOAL_ASIDE} m to the side and keep it within {ARRIVAL_RADIUS} m for {} s",
            task.rolling.settle, task.hold
        ),
        format!(
            "plans: {} knots of {} s ({} s horizon, implicit steps a knot: {}), {} DDP iteration per plan, bend in [{}, {}] rad, plane rate within {:.2} rad/s; pressures under the {} bar ceiling",
            task.horizon.knots,
            task.horizon.interval,
            task.horizon.horizon(),
            task.horizon.substeps,
            task.horizon.iterations,
            task.horizon.lower[0],
            task.horizon.upper[0],
            task.horizon.upper[1],
            task.rolling.ceiling
        ),
    ];
    lines.extend(run.failures.iter().map(|f| format!("plan not used: {f}")));
    lines.push(format!(
        "{simulated:.1} s simulated in {:.1} s wall; highest pressure {:.3} bar; outputs: roll_aside.csv, trajectory.csv, path_xy, decisions, pressures, planner (.png and .svg)",
        run.wall_seconds, run.highest_pressure
    ));
    lines.push(run.statistics.line(run.period));
    let verdict = control_task_verdict(
        &mut lines,
        run.reached_at,
        run.final_distance,
        &run.statistics,
        run.period,
        simulated,
        "goal",
    );
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}
