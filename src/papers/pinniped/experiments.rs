//! The experiments of 002_f355a977a209e7c9, the soft-limbed pinniped: each runs the robot as the paper did, writes its
//! CSV and figures and ends with a computed verdict.

use crate::papers::experiment::{differs_if, write_csv, Experiment, ExperimentReport, Verdict, ViewedRun};
use crate::papers::pinniped::model::{
    measured_value, paper_value, protocol_cells, run_trials, Cell as ProtocolCell, Gait, Trial, TrialOutcome,
    CRAWL_STRIDES, LIMB_NAMES, TURN_STRIDES,
};
use std::path::Path;
use std::time::Instant;

/// The experiments of 002, in the order `experiment list` prints them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[
    Experiment { name: "002-kinematics", what: "pinniped: limb inverse kinematics, reach, rest pose and centre of gravity (002, eqs 1-16)", run: pinniped_kinematics },
    Experiment { name: "002-crawling", what: "pinniped: forward and backward crawling, 18 trials (3 stride radii x 0.75/1.00/1.25 Hz, 15 s each) run dynamically, Table I (002, section IV)", run: crawling },
    Experiment { name: "002-crawl-and-turn", what: "pinniped: leftward and rightward crawling-and-turning, 18 trials run dynamically, Table II (002, section IV)", run: crawl_and_turn },
    Experiment { name: "002-turn-in-place", what: "pinniped: clockwise and counterclockwise in-place turning, 18 trials run dynamically, Table III (002, section IV)", run: turn_in_place },
    Experiment { name: "mpc-002-goal", what: "pinniped: walk to a goal 0.5 m away at 60 degrees off the heading, the stride over the paper's gaits decided at 50 Hz (MPC task)", run: mpc_goal },
];

fn pinniped_kinematics(out: &Path) -> Result<ExperimentReport, String> {
    use crate::papers::pinniped::model::{limbs, model_centre_of_mass, RestGeometry};
    use crate::papers::pinniped::{robot_centre_of_gravity, CurveParameters};
    use softgen_generated::pinniped::Params;
    let p = Params::default();
    let limb = limbs(&p)[0];
    let mut lines = Vec::new();
    let mut reasons = Vec::new();
    let mut rows = Vec::new();
    // Eq 7 for the gait circles: the bend the geometry implies (the notes' values).
    for (rho, expected) in [(0.04, 0.3365), (0.06, 0.5110), (0.08, 0.6941), (0.10, 0.8907)] {
        let c = limb.inverse(rho, 0.0).map_err(|e| e.to_string())?;
        let tip = limb.tip(c);
        lines.push(format!(
            "stride radius {rho:.2} m: bend {:.4} rad (expected {expected:.4}), tip height d = {:.4} m",
            c.phi, tip.z
        ));
        rows.push(format!("{rho},{},{}", c.phi, tip.z));
        if (c.phi - expected).abs() > 5e-5 {
            reasons.push(format!("the bend for {rho} m is {:.4} rad, not {expected}", c.phi));
        }
    }
    let reach = limb.reach();
    let refused = limb.inverse(reach * 1.01, 0.0).is_err();
    lines.push(format!(
        "reach {:.4} m = {:.5} L; a target 1 % beyond it is {}",
        reach,
        reach / limb.length,
        if refused { "refused" } else { "ACCEPTED" }
    ));
    if !refused {
        reasons.push("a target beyond the reach was accepted".into());
    }
    // The generated robot at rest: the lower tips on one circle.
    let rest = RestGeometry::new(&p);
    let radii: Vec<f64> = (1..4).map(|i| rest.tips[i].xy().norm()).collect();
    let heights: Vec<f64> = (1..4).map(|i| rest.tips[i].z).collect();
    let spread = (0..3).map(|i| (radii[i] - radii[0]).abs().max((heights[i] - heights[0]).abs())).fold(0.0, f64::max);
    lines.push(format!(
        "rest: lower tips {:.4} m from the hub axis at z = {:.4} m (eq 8 without a hub: 0.2263 and -0.0800; here the limbs start {:.3} m out), spread {:.1e} m",
        radii[0], heights[0], p.hub_radius, spread
    ));
    if spread > 1e-9 {
        reasons.push("the lower tips are not on one circle at rest".into());
    }
    // Eq 16 against the generated model's centre of mass, at rest and with H bent 90 degrees
    // towards +x.
    let mounted = rest.mounted_limbs(&p);
    let straight = CurveParameters { theta: 0.0, phi: 0.0 };
    let head_bent =
        CurveParameters { theta: rest.theta_towards(0, nalgebra::Vector3::x()), phi: std::f64::consts::FRAC_PI_2 };
    let mut worst: f64 = 0.0;
    for (name, curves) in
        [("rest", [straight; 4]), ("H bent 90 degrees towards +x", [head_bent, straight, straight, straight])]
    {
        let eq16 = robot_centre_of_gravity(&mounted, &curves, p.hub_mass);
        let limbs_only = robot_centre_of_gravity(&mounted, &curves, 0.0);
        let model = model_centre_of_mass(&p, &curves);
        worst = worst.max((eq16 - model).norm());
        lines.push(format!(
            "{name}: eq 16 with the hub ({:.4}, {:.4}, {:.4}) m, limbs only ({:.4}, {:.4}, {:.4}); generated model ({:.4}, {:.4}, {:.4})",
            eq16.x, eq16.y, eq16.z, limbs_only.x, limbs_only.y, limbs_only.z, model.x, model.y, model.z
        ));
    }
    let shift = robot_centre_of_gravity(&mounted, &[head_bent, straight, straight, straight], 0.0)
        - robot_centre_of_gravity(&mounted, &[straight; 4], 0.0);
    lines.push(format!(
        "bending H by 90 degrees moves the limbs' centre of gravity {:.4} m towards the bend (the notes: 0.0139 m without a hub offset), the generated model agrees to {:.1e} m",
        shift.x, worst
    ));
    if (shift.x - 0.0139).abs() > 2e-4 {
        reasons.push(format!("the head's 90-degree bend moves the centre of gravity {:.4} m, not 0.0139 m", shift.x));
    }
    if worst > 1e-4 {
        reasons.push(format!("eq 16 and the generated model's centre of mass differ by {worst:.1e} m"));
    }
    write_csv(&out.join("gait_circles.csv"), "stride_radius_m,bend_rad,tip_height_m", &rows)?;
    lines.push("outputs: gait_circles.csv".into());
    Ok(ExperimentReport { lines, views: vec![], verdict: differs_if(reasons) })
}

/// The trials of the paper's table `table` (0, 1, 2 for Tables I, II, III) run as its
/// protocol has them, with their outputs written and the table's lines: softgen's values,
/// the paper's, and the trends and directions the paper's data shows.
struct TableRun {
    lines: Vec<String>,
    views: Vec<ViewedRun>,
    /// Reasons to differ from the trends and directions.
    trends: Trends,
    /// softgen's value in each of the table's 18 cells, in protocol order (row, stride,
    /// frequency), and its ratio to the paper's.
    values: Vec<f64>,
    /// See `values`.
    ratios: Vec<f64>,
}

fn run_table(
    out: &Path,
    table: usize,
) -> Result<(TableRun, Vec<ProtocolCell>, Vec<Trial>, Vec<Result<TrialOutcome, String>>), String> {
    let (title, names, first, strides) = PROTOCOL_TABLES[table];
    let cells: Vec<ProtocolCell> = protocol_cells()[9 * first..9 * first + 18].to_vec();
    let trials: Vec<Trial> = cells.iter().map(|c| Trial::new(c.gait, c.stride, c.frequency)).collect();
    let start = Instant::now();
    let results = run_trials(&trials);
    let wall = start.elapsed().as_secs_f64();
    let (values, views) = protocol_outputs(out, &cells, &trials, &results)?;
    // values[row * 9 + stride * 3 + frequency], the table's two rows.
    let at = |row: usize, s: usize, f: usize| values[9 * row + 3 * s + f];
    let paper_at = |row: usize, s: usize, f: usize| paper_value(&cells[9 * row + 3 * s + f]);
    let mut lines = vec![
        format!(
            "18 trials of 15 s (after 1 s settling) in {wall:.1} s wall on {} threads",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ),
        format!(
            "{title}: softgen / paper, stride radius {:.2} / {:.2} / {:.2} m, each at 0.75 / 1.00 / 1.25 Hz",
            strides[0], strides[1], strides[2]
        ),
    ];
    for (row, name) in names.iter().enumerate() {
        let cells: Vec<String> = (0..3)
            .map(|s| {
                (0..3).map(|f| format!("{:.2}/{:.2}", at(row, s, f), paper_at(row, s, f))).collect::<Vec<_>>().join(" ")
            })
            .collect();
        lines.push(format!("  {name:<17} {}", cells.join(" | ")));
    }
    let trends = protocol_trends(table, &at, &mut lines);
    let ratios: Vec<f64> = (0..18).map(|i| values[i] / paper_value(&cells[i])).collect();
    let (low, high) = ratios.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| (a.min(*r), b.max(*r)));
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    lines.push(format!("magnitudes: softgen / paper from {low:.2} to {high:.2}, mean {mean:.2}"));
    Ok((TableRun { lines, views, trends, values, ratios }, cells, trials, results))
}

/// The lines listing the outputs a table's experiment writes.
const TABLE_OUTPUTS: &str = "outputs: protocol.csv (every trial, with each circling limb's sense about its own axis), <gait>.csv (the coordinates of each trial Fig 9 draws), paths.png (and .svg)";

/// Table I, mean speeds: numbers with a unit, held to the paper's within 30 % on average.
fn crawling(out: &Path) -> Result<ExperimentReport, String> {
    let (mut run, ..) = run_table(out, 0)?;
    let mean = run.ratios.iter().sum::<f64>() / run.ratios.len() as f64;
    // Backward crawling (the second row) at 0.10 m and 1.00 Hz.
    run.lines.extend(table_one_sensitivities(run.values[9 + 3 * 2 + 1])?);
    run.lines.push(TABLE_OUTPUTS.into());
    let mut reasons = Vec::new();
    if !(0.7..=1.3).contains(&mean) {
        reasons.push(format!(
            "Table I's mean speeds are {mean:.2} of the paper's on average (cell by cell {:.2} to {:.2})",
            run.ratios.iter().copied().fold(f64::INFINITY, f64::min),
            run.ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        ));
    }
    reasons.extend(run.trends.all());
    Ok(ExperimentReport { lines: run.lines, views: run.views, verdict: differs_if(reasons) })
}

/// Table II, "angular speed per unit distance" in rad/(m s), which the paper never defines:
/// its magnitudes cannot be held to; the turns' senses and their rise with the turning limb's
/// stride radius (the paper's own reading of the table) can.
fn crawl_and_turn(out: &Path) -> Result<ExperimentReport, String> {
    let (mut run, ..) = run_table(out, 1)?;
    let mean = run.ratios.iter().sum::<f64>() / run.ratios.len() as f64;
    run.lines.push(TABLE_OUTPUTS.into());
    // The senses and the stride trend hold whatever the unit means; the other trends
    // compare magnitudes across frequencies, which a definition with f in it would change.
    let Trends { stride, senses, magnitudes } = run.trends;
    let decisive: Vec<String> = senses.into_iter().chain(stride).collect();
    let verdict = if decisive.is_empty() {
        let besides = magnitudes.iter().map(|r| format!("; {r}")).collect::<String>();
        Verdict::Unverifiable(format!(
            "the paper never defines Table II's unit, rad/(m s) (a turn per path length is rad/m, a turn rate rad/s), so its magnitudes cannot be held to: the turns go the paper's way and grow with the turning limb's stride in every row, and softgen's turn rate over the hub's path length is {mean:.2} of its values on average{besides}"
        ))
    } else {
        Verdict::Differs(decisive.join("; "))
    };
    Ok(ExperimentReport { lines: run.lines, views: run.views, verdict })
}

/// Table III, in-place turn rates, held against what circling tips can give at all.
fn turn_in_place(out: &Path) -> Result<ExperimentReport, String> {
    let (mut run, cells, trials, results) = run_table(out, 2)?;
    let values = run.values.clone();
    let at = |row: usize, s: usize, f: usize| values[9 * row + 3 * s + f];
    let paper_at = |row: usize, s: usize, f: usize| paper_value(&cells[9 * row + 3 * s + f]);
    let bound = TurnRateBound::of(&cells, &trials, &results, &at, &paper_at)?;
    run.lines.push(format!(
        "Table III against the bound 2 rho f / R ({:.2} to {:.2} rad/s; R = {:.3} to {:.3} m, the nearest a tip came to the hub's axis): the paper's rates are {:.1} to {:.1} times it, softgen's at most {:.2}",
        bound.bounds.0, bound.bounds.1, bound.nearest.0, bound.nearest.1, bound.paper_over.0, bound.paper_over.1, bound.softgen_over
    ));
    run.lines.push(TABLE_OUTPUTS.into());
    let verdict = if bound.paper_over.0 > 1.0 {
        // Table III's magnitudes cannot be compared with a rate no tip motion can give.
        let reasons = run.trends.all();
        let besides = if reasons.is_empty() { String::new() } else { format!("; besides, {}", reasons.join("; ")) };
        Verdict::PaperInconsistent(format!(
            "Table III's in-place turn rates are {:.1} to {:.1} times the most circling tips can give (2 rho f / R, R = {:.2} to {:.2} m){besides}",
            bound.paper_over.0, bound.paper_over.1, bound.nearest.0, bound.nearest.1
        ))
    } else {
        let mean = run.ratios.iter().sum::<f64>() / run.ratios.len() as f64;
        let mut reasons = Vec::new();
        if !(0.7..=1.3).contains(&mean) {
            reasons.push(format!("Table III's turn rates are {mean:.2} of the paper's on average"));
        }
        reasons.extend(run.trends.all());
        differs_if(reasons)
    };
    Ok(ExperimentReport { lines: run.lines, views: run.views, verdict })
}

/// The paper's three tables: title, their two rows' gaits, the first row's index in the
/// protocol's order, and their stride radii.
const PROTOCOL_TABLES: [(&str, [&str; 2], usize, [f64; 3]); 3] = [
    ("Table I, mean speed (cm/s)", ["forward", "backward"], 0, CRAWL_STRIDES),
    ("Table II, turn rate per path length (rad/(m s))", ["leftward", "rightward"], 2, TURN_STRIDES),
    ("Table III, turn rate (rad/s)", ["clockwise", "counterclockwise"], 4, CRAWL_STRIDES),
];

/// Every trial's measured value (protocol order), written with its run's figures to
/// protocol.csv, and the trials Fig 9 draws as hub paths (paths.png) and views.
fn protocol_outputs(
    out: &Path,
    cells: &[ProtocolCell],
    trials: &[Trial],
    results: &[Result<TrialOutcome, String>],
) -> Result<(Vec<f64>, Vec<ViewedRun>), String> {
    let mut values = Vec::new();
    let mut rows = Vec::new();
    let mut paths = Vec::new();
    let mut views = Vec::new();
    for ((cell, trial), result) in cells.iter().zip(trials).zip(results) {
        let outcome = result
            .as_ref()
            .map_err(|e| format!("{} at {} m, {} Hz: {e}", cell.gait.name(), cell.stride, cell.frequency))?;
        if let Some(e) = &outcome.error {
            return Err(format!("{} at {} m, {} Hz stopped early: {e}", cell.gait.name(), cell.stride, cell.frequency));
        }
        let value = measured_value(cell, outcome, trial.duration);
        let senses: Vec<String> = outcome
            .senses
            .iter()
            .zip(LIMB_NAMES)
            .filter_map(|(s, n)| s.map(|s| format!("{n} {}", if s > 0.0 { "anticlockwise" } else { "clockwise" })))
            .collect();
        rows.push(format!(
            "{},{},{},{},{},{},{},{},{},{}",
            cell.gait.slug(),
            cell.stride,
            cell.frequency,
            value,
            paper_value(cell),
            outcome.displacement.0,
            outcome.displacement.1,
            outcome.heading_change,
            outcome.distance,
            senses.join(" / ")
        ));
        values.push(value);
        let fig9 = match cell.gait {
            Gait::CrawlTurn { .. } => (cell.stride - 0.08).abs() < 1e-9,
            _ => (cell.stride - 0.10).abs() < 1e-9,
        };
        if fig9 && (cell.frequency - 1.0).abs() < 1e-9 {
            views.push(trial_trajectory(out, cell.gait, trial, outcome)?);
            let colour = [[200, 40, 40], [40, 60, 200], [30, 150, 60], [230, 140, 20], [120, 40, 160], [20, 160, 170]]
                [paths.len() % 6];
            paths.push(softgen_app::Series {
                name: cell.gait.name().to_string(),
                colour,
                points: outcome.samples.iter().map(|s| (s.q[0], s.q[1])).collect(),
            });
        }
    }
    write_csv(
        &out.join("protocol.csv"),
        "gait,stride_radius_m,frequency_hz,value,paper_value,dx_m,dy_m,heading_change_rad,path_length_m,circling_limbs",
        &rows,
    )?;
    softgen_app::plot_paths(
        "pinniped: hub paths at 1.00 Hz, 0.10 m (B at 0.08 m in crawl-and-turn), 15 s",
        &paths,
        &out.join("paths.png"),
    )?;
    Ok((values, views))
}

/// What a table's trials show against the paper's reading of its data: each a reason to
/// differ, kept apart by what it depends on.
#[derive(Default)]
struct Trends {
    /// A row whose value does not rise with the stride radius (the paper: "the effectiveness
    /// of turning increases with the stride radius"; every cell of its tables does).
    stride: Vec<String>,
    /// A gait that goes the wrong way.
    senses: Vec<String>,
    /// The trends that compare magnitudes across frequencies or gaits.
    magnitudes: Vec<String>,
}

impl Trends {
    fn all(self) -> Vec<String> {
        self.senses.into_iter().chain(self.stride).chain(self.magnitudes).collect()
    }
}

/// The trends the paper's data shows in every cell of table `table` (0, 1, 2), and each
/// row's direction, checked on `at(row, stride, frequency)` over the table's two rows: a line
/// each, and a reason where one does not hold.
fn protocol_trends(table: usize, at: &dyn Fn(usize, usize, usize) -> f64, lines: &mut Vec<String>) -> Trends {
    let mut trends = Trends::default();
    let count = |f: &dyn Fn(usize, usize) -> bool| -> (usize, usize) {
        let cases: Vec<bool> = (0..2).flat_map(|row| (0..3).map(move |i| (row, i))).map(|(row, i)| f(row, i)).collect();
        (cases.iter().filter(|c| **c).count(), cases.len())
    };
    let (rising, total) = count(&|row, f| at(row, 0, f) < at(row, 1, f) && at(row, 1, f) < at(row, 2, f));
    lines.push(format!("trend (i), the value rises with the stride radius: {rising} of {total} gait-frequency rows"));
    if rising < total {
        trends.stride.push(format!("the value rises with the stride radius in {rising} of {total} rows, not all"));
    }
    let (peaks, total) = count(&|row, s| at(row, s, 1) > at(row, s, 0) && at(row, s, 1) > at(row, s, 2));
    lines.push(format!("trend (ii), 1.00 Hz is the fastest: {peaks} of {total} gait-stride rows"));
    if peaks < total {
        trends.magnitudes.push(format!("1.00 Hz is the fastest in {peaks} of {total} rows"));
    }
    if table == 0 {
        let backward_wins = (0..9).filter(|&c| at(1, c / 3, c % 3) > at(0, c / 3, c % 3)).count();
        lines.push(format!("trend (iii), backward beats forward: {backward_wins} of 9 cells"));
        if backward_wins < 9 {
            trends.magnitudes.push(format!("backward beats forward in {backward_wins} of 9 cells"));
        }
    }
    if table == 1 {
        let worst_lr = (0..9)
            .map(|c| {
                (at(0, c / 3, c % 3) - at(1, c / 3, c % 3)).abs()
                    / (0.5 * (at(0, c / 3, c % 3) + at(1, c / 3, c % 3))).abs().max(1e-9)
            })
            .fold(0.0, f64::max);
        lines.push(format!(
            "trend (iv), left and right turns agree: largest difference {:.0} % of their mean (paper: 6 %)",
            100.0 * worst_lr
        ));
        if worst_lr > 0.2 {
            trends.magnitudes.push(format!("left and right turns differ by up to {:.0} %", 100.0 * worst_lr));
        }
    }
    let directions = [
        ["forward crawling moves +x", "backward crawling moves -x"],
        ["the leftward gait turns left", "the rightward gait turns right"],
        ["the clockwise gait turns clockwise", "the counterclockwise gait turns counterclockwise"],
    ][table];
    for (row, what) in directions.into_iter().enumerate() {
        let right_way = (0..9).filter(|&c| at(row, c / 3, c % 3) > 0.0).count();
        lines.push(format!("direction: {what} in {right_way} of 9 cells"));
        if right_way < 9 {
            trends.senses.push(format!("{what} in only {right_way} of 9 cells"));
        }
    }
    trends
}

/// Table III against kinematics: a tip circling with radius rho at f Hz moves at most 2 rho
/// per cycle along the ground, so a turn it drives gains at most 2 rho / R per cycle, R the
/// tip's distance from the turning axis (the hub's vertical axis). R is the nearest any tip
/// below the hub came to it in the trial (the head points up), which makes the bound the
/// most generous the run allows. Each pair is (lowest, highest) over the table's cells.
struct TurnRateBound {
    /// The bound 2 rho f / R (rad/s).
    bounds: (f64, f64),
    /// R (m).
    nearest: (f64, f64),
    /// The paper's rates over the bound.
    paper_over: (f64, f64),
    /// The largest of softgen's rates over the bound.
    softgen_over: f64,
}

impl TurnRateBound {
    fn of(
        cells: &[ProtocolCell],
        trials: &[Trial],
        results: &[Result<TrialOutcome, String>],
        at: &dyn Fn(usize, usize, usize) -> f64,
        paper_at: &dyn Fn(usize, usize, usize) -> f64,
    ) -> Result<TurnRateBound, String> {
        let mut paper_over = (f64::INFINITY, 0.0_f64);
        let mut softgen_over = 0.0_f64;
        let mut bounds = (f64::INFINITY, 0.0_f64);
        let mut nearest_all = (f64::INFINITY, 0.0_f64);
        for row in [0, 1] {
            for i in 0..9 {
                let k = 9 * row + i;
                let (cell, trial) = (&cells[k], &trials[k]);
                let samples = &results[k].as_ref().map_err(|e| e.to_string())?.samples;
                let mut nearest = f64::INFINITY;
                for sample in samples {
                    let hub = nalgebra::Vector3::new(sample.q[0], sample.q[1], sample.q[2]);
                    for tip in crate::papers::pinniped::model::tips(&sample.q, &trial.params) {
                        if tip.z < hub.z {
                            nearest = nearest.min((tip.x - hub.x).hypot(tip.y - hub.y));
                        }
                    }
                }
                nearest_all = (nearest_all.0.min(nearest), nearest_all.1.max(nearest));
                let bound = 2.0 * cell.stride * cell.frequency / nearest;
                bounds = (bounds.0.min(bound), bounds.1.max(bound));
                let paper = paper_at(row, i / 3, i % 3).abs() / bound;
                paper_over = (paper_over.0.min(paper), paper_over.1.max(paper));
                softgen_over = softgen_over.max(at(row, i / 3, i % 3).abs() / bound);
            }
        }
        Ok(TurnRateBound { bounds, nearest: nearest_all, paper_over, softgen_over })
    }
}

/// Table I's best cell (backward crawling, 0.10 m, 1.00 Hz: 16.9 cm/s in the paper, 95 % of
/// the 1.764 rho f a no-slip stride gives) rerun with each parameter the paper does not
/// print halved and doubled: which of them moves the speed, and how far. `nominal` is the
/// protocol's own value at that cell (cm/s).
fn table_one_sensitivities(nominal: f64) -> Result<Vec<String>, String> {
    use crate::papers::pinniped::model::{run_trials, Gait, Trial};
    let (stride, frequency) = (0.10, 1.0);
    let no_slip = 100.0 * 1.764 * stride * frequency;
    type Change = fn(&mut Trial, f64);
    let parameters: [(&str, Change); 5] = [
        ("carpet friction (traction, 0.6)", |t, k| t.friction = Some(0.6 * k)),
        ("pneumatic lag (0.08 s)", |t, k| t.params.pneumatic_lag *= k),
        ("limb stiffness (posture: the sag under the weight)", |t, k| t.params.limb_stiffness *= k),
        ("muscle area (force per pressure)", |t, k| t.params.muscle_area *= k),
        ("limb damping (drag of the limbs' bending)", |t, k| t.params.limb_damping *= k),
    ];
    let mut trials = Vec::new();
    for (_, change) in &parameters {
        for scale in [0.5, 2.0] {
            let mut trial = Trial::new(Gait::Backward, stride, frequency);
            change(&mut trial, scale);
            trials.push(trial);
        }
    }
    let results = run_trials(&trials);
    let mut lines = vec![format!(
        "Table I sensitivity, backward at {stride:.2} m and {frequency:.2} Hz: {nominal:.2} cm/s ({:.0} % of the no-slip {no_slip:.2}; paper 16.9, {:.0} %); each unprinted parameter halved / doubled:",
        100.0 * nominal / no_slip,
        100.0 * 16.9 / no_slip
    )];
    for ((name, _), pair) in parameters.iter().zip(trials.chunks(2).zip(results.chunks(2))) {
        let mut speeds = [0.0; 2];
        for (k, (trial, result)) in pair.0.iter().zip(pair.1).enumerate() {
            let outcome = result.as_ref().map_err(|e| format!("{name} varied: {e}"))?;
            if let Some(e) = &outcome.error {
                return Err(format!("{name} varied: the trial stopped early: {e}"));
            }
            speeds[k] = -outcome.speed_x_cm_s(trial.duration);
        }
        lines.push(format!(
            "  {name:<52} {:.2} / {:.2} cm/s ({:+.0} % / {:+.0} %)",
            speeds[0],
            speeds[1],
            100.0 * (speeds[0] / nominal - 1.0),
            100.0 * (speeds[1] / nominal - 1.0)
        ));
    }
    Ok(lines)
}

/// A trial's samples as `<gait>.csv` (t, every coordinate by name, centre of mass, contacts
/// and each muscle's reached pressure), the run `--view` draws.
fn trial_trajectory(
    out: &Path,
    gait: crate::papers::pinniped::model::Gait,
    trial: &crate::papers::pinniped::model::Trial,
    outcome: &crate::papers::pinniped::model::TrialOutcome,
) -> Result<ViewedRun, String> {
    use softgen_generated::Pinniped;
    use softgen_runtime::Model;
    let header: Vec<String> = std::iter::once("t".to_string())
        .chain(Pinniped::COORDINATES.iter().map(|c| c.name.to_string()))
        .chain(["com_x", "com_y", "com_z", "contacts"].map(String::from))
        .chain(Pinniped::MUSCLES.iter().map(|m| format!("{}_bar", m.name)))
        .collect();
    let rows: Vec<String> = outcome
        .samples
        .iter()
        .map(|s| {
            let com = s.center_of_mass;
            let values: Vec<String> =
                s.q.iter()
                    .chain([com.x, com.y, com.z].iter())
                    .map(|v| v.to_string())
                    .chain(std::iter::once(s.contacts.to_string()))
                    .chain(s.pressures.iter().map(|v| v.to_string()))
                    .collect();
            format!("{},{}", s.t, values.join(","))
        })
        .collect();
    let file = format!("{}.csv", gait.slug());
    write_csv(&out.join(&file), &header.join(","), &rows)?;
    let title = format!("pinniped, {} at {} m, {} Hz (002, Fig 9)", gait.name(), trial.stride, trial.frequency);
    Ok(ViewedRun {
        params: crate::papers::experiment::changed_params(&trial.params),
        ..ViewedRun::new(file, Pinniped::NAME, title)
    })
}

/// `mpc-002-goal`: the task of `mpc.rs`, its path, strides and planner timing.
fn mpc_goal(out: &Path) -> Result<ExperimentReport, String> {
    use super::mpc::{run_goal, GoalTask, GOAL_ANGLE_DEGREES, GOAL_DISTANCE};
    use crate::papers::experiment::{control_task_verdict, plot_path_to_goal, plot_plan_times};
    use softgen_generated::Pinniped;
    use softgen_runtime::Model;
    let task = GoalTask::new();
    let run = run_goal(&task)?;
    let rows: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            format!(
                "{:.3},{:.6},{:.6},{:.5},{:.6},{},{},{:.3},{:.4},{}",
                s.t,
                s.center_of_mass.x,
                s.center_of_mass.y,
                s.heading,
                s.distance,
                s.stride.gait.map_or("standing", |g| g.slug()),
                s.stride.radius,
                s.plan_ms,
                s.time_to_go,
                s.failed
            )
        })
        .collect();
    write_csv(
        &out.join("goal.csv"),
        "t_s,com_x_m,com_y_m,heading_rad,distance_m,gait,stride_radius_m,plan_ms,time_to_go_s,failed_rollouts",
        &rows,
    )?;
    // The plant's coordinates at every plan, for `--view`.
    let header: Vec<&str> = std::iter::once("t").chain(Pinniped::COORDINATES.iter().map(|c| c.name)).collect();
    let trajectory: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            let q: Vec<String> = s.state.q.iter().map(|v| v.to_string()).collect();
            format!("{},{}", s.t, q.join(","))
        })
        .collect();
    write_csv(&out.join("trajectory.csv"), &header.join(","), &trajectory)?;
    let view = ViewedRun::new("trajectory.csv", Pinniped::NAME, "pinniped, MPC: to the goal a stride at a time");
    let path = run.samples.iter().map(|s| (s.center_of_mass.x, s.center_of_mass.y)).collect();
    plot_path_to_goal("pinniped, MPC: path (top view)", path, (run.goal.x, run.goal.y), out)?;
    let times = run.samples.iter().map(|s| (s.t, s.plan_ms)).collect();
    plot_plan_times("pinniped, MPC: planner time per plan", times, out)?;
    let simulated = run.samples.last().map_or(0.0, |s| s.t);
    let cycle = 1.0 / task.planner.frequency;
    let period = task.decision_period;
    let planner = &task.planner;
    let rates = &run.rates;
    let mut counts: Vec<(String, usize)> = Vec::new();
    for s in &run.samples {
        match counts.iter_mut().find(|(n, _)| *n == s.stride.name()) {
            Some((_, k)) => *k += 1,
            None => counts.push((s.stride.name(), 1)),
        }
    }
    let mut lines = vec![
        format!(
            "task: from rest, after {} s settling, bring the centre of mass to a goal {GOAL_DISTANCE} m away at {GOAL_ANGLE_DEGREES} degrees off the heading, ({:.3}, {:.3}) m, and keep it within {} m for {} s",
            task.settle, run.goal.x, run.goal.y, task.arrival_radius, task.hold
        ),
        format!(
            "plans: a stride decided every {period} s ({:.0} Hz) on the {cycle} s gait cycle's clock, each plan {} s before its decision, from the plant's state: the stride in force to the decision, then one whole cycle of each of {} (semi-implicit Euler at {} ms); the least time to go at its end",
            1.0 / period,
            task.lead,
            planner.strides.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
            planner.step * 1e3
        ),
        format!(
            "time to go: the planner's model measured over {} cycles: forward {:.2} cm/s, backward {:.2} cm/s, in-place turn {:.3} rad/s",
            planner.calibration_cycles,
            100.0 * rates.forward_speed,
            100.0 * rates.backward_speed,
            rates.turn_rate
        ),
        format!(
            "strides chosen (seconds played): {}",
            counts.iter().map(|(n, k)| format!("{n} {:.2}", *k as f64 * period)).collect::<Vec<_>>().join(", ")
        ),
        format!(
            "{simulated:.2} s simulated in {:.2} s wall ({} plant right-hand sides); outputs: goal.csv, trajectory.csv, path_xy, planner (.png and .svg)",
            run.wall_seconds, run.evaluations
        ),
        run.statistics.line(period).replace(" overruns", &format!(" past the {} s lead", task.lead)),
    ];
    let verdict = control_task_verdict(
        &mut lines,
        run.reached_at,
        run.final_distance,
        &run.statistics,
        task.lead,
        simulated,
        "goal",
    );
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}
