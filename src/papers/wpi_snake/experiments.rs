//! The experiments of 001_6780a70913e94322, the WPI snake: each runs the robot as the paper did, writes its
//! CSV and figures and ends with a computed verdict.

use super::model::{fit_circle, run_grid, run_snake, SnakeModel, SnakeOutcome, SnakeRun};
use crate::papers::experiment::{
    control_task_verdict, differs_if, plot_path_to_goal, plot_plan_times, write_csv, Experiment, ExperimentReport,
    Verdict, ViewedRun,
};
use std::path::Path;
use std::time::Instant;

/// The experiments of 001, in the order `experiment list` prints them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "001-calibration",
        what: "WPI snake: fit the curvature per kPa and eq 15's time constants to the paper's 220 mm/s peak (001, section 4.3)",
        run: wpi_calibration,
    },
    Experiment {
        name: "001-speed-map",
        what: "WPI snake, phi = 0: speed over 1-2 Hz x 41-55 kPa, both models (001, Fig 8)",
        run: wpi_speed_map,
    },
    Experiment {
        name: "001-turning-map",
        what: "WPI snake, phi = 0.4: speed and turning radius over the grid, both models (001, Fig 9)",
        run: wpi_turning_map,
    },
    Experiment {
        name: "001-trajectory",
        what: "WPI snake at 2 Hz, 54 kPa, phi = 0.4: both models' paths (001, Fig 10)",
        run: wpi_trajectory,
    },
    Experiment {
        name: "001-cost",
        what: "WPI snake: 500 s with each model, wall time (001, section 4.2)",
        run: wpi_cost,
    },
    Experiment {
        name: "mpc-001-goal",
        what: "WPI snake, MPC: reach a goal 1 m away at 45 degrees and stay (valve supply pressure, frequency and offset, sampled at 20 Hz)",
        run: mpc_goal,
    },
];

/// The paper's grid: f = 1 to 2 Hz, P = 41 to 55 kPa (its spacing is not given).
pub const FREQUENCIES: [f64; 6] = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0];
/// See `FREQUENCIES`: the supply pressures (kPa).
pub const PRESSURES: [f64; 8] = [41.0, 43.0, 45.0, 47.0, 49.0, 51.0, 53.0, 55.0];
/// The peak speed the paper reports on the phi = 0 grid (m/s).
pub const PAPER_PEAK_SPEED: f64 = 0.22;
/// Gap between chambers (m), for the paper's radius correction (l + L_o) / l; ours.
pub const GAP_LENGTH: f64 = 0.008;

/// Both models over the grid at `offset`: outcomes[model][j][i] at (FREQUENCIES[i], PRESSURES[j]).
fn grid(offset: f64, params: &softgen_generated::wpi_snake::Params) -> Result<[Vec<Vec<SnakeOutcome>>; 2], String> {
    let mut runs = Vec::new();
    for model in [SnakeModel::Complex, SnakeModel::Simplified] {
        for &p in &PRESSURES {
            for &f in &FREQUENCIES {
                let mut run = SnakeRun::new(model, f, p, offset);
                run.params = params.clone();
                runs.push(run);
            }
        }
    }
    let mut results = run_grid(&runs).into_iter();
    let mut take = || -> Result<Vec<Vec<SnakeOutcome>>, String> {
        let mut rows = Vec::new();
        for &p in &PRESSURES {
            let mut row = Vec::new();
            for &f in &FREQUENCIES {
                row.push(
                    results.next().ok_or("a run is missing")?.map_err(|e| format!("f = {f} Hz, P = {p} kPa: {e}"))?,
                );
            }
            rows.push(row);
        }
        Ok(rows)
    };
    Ok([take()?, take()?])
}

fn map_of(outcomes: &[Vec<SnakeOutcome>], f: impl Fn(&SnakeOutcome) -> f64) -> Vec<Vec<f64>> {
    outcomes.iter().map(|row| row.iter().map(&f).collect()).collect()
}

fn grid_csv(path: &Path, offset: f64, maps: &[Vec<Vec<SnakeOutcome>>; 2]) -> Result<(), String> {
    let mut rows = Vec::new();
    for (m, model) in [SnakeModel::Complex, SnakeModel::Simplified].iter().enumerate() {
        for (j, &p) in PRESSURES.iter().enumerate() {
            for (i, &f) in FREQUENCIES.iter().enumerate() {
                let o = &maps[m][j][i];
                let (radius, rms) = o.circle.unwrap_or((f64::INFINITY, f64::NAN));
                rows.push(format!("{},{f},{p},{offset},{},{radius},{rms}", model.name(), o.speed));
            }
        }
    }
    write_csv(path, "model,frequency_hz,pressure_kpa,offset,speed_m_s,radius_m,circle_rms_m", &rows)
}

fn contour(out: &Path, file: &str, title: &str, label: &str, values: &[Vec<f64>]) -> Result<(), String> {
    softgen_app::plot_contour(
        title,
        ("valve frequency f (Hz)", "supply pressure P (kPa)"),
        label,
        &FREQUENCIES,
        &PRESSURES,
        values,
        &out.join(file),
    )
}

/// The complex model's peak speed on a coarse grid (1, 1.5, 2 Hz x 41, 48, 55 kPa) with
/// `per_kpa` curvature per kPa and eq 15's time constants `time_scale` times the spec's.
fn coarse_peak(per_kpa: f64, time_scale: f64) -> Result<f64, String> {
    let mut runs = Vec::new();
    for p in [41.0, 48.0, 55.0] {
        for f in [1.0, 1.5, 2.0] {
            let mut run = SnakeRun::new(SnakeModel::Complex, f, p, 0.0);
            run.params.curvature_per_kpa = per_kpa;
            run.params.time_constant_1 *= time_scale;
            run.params.time_constant_2 *= time_scale;
            runs.push(run);
        }
    }
    let mut peak = 0.0_f64;
    for r in run_grid(&runs) {
        peak = peak.max(r?.speed);
    }
    Ok(peak)
}

/// "Around 220 mm/s": within this fraction of it. A number printed to two figures and read
/// off a contour map: 215 to 225 would round to it, and 5 % allows for the reading.
const AROUND: f64 = 0.05;

/// The curvature gains k the calibration scans (1/(m kPa)) with the spec's time constants;
/// with longer ones, these times the time constants' scale (a slower response bends less in
/// a valve period, so the same curvature takes a larger k).
const GAIN_SCAN: [f64; 9] = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5];

/// The gains scanned at `time_scale` (see `GAIN_SCAN`).
fn gains(time_scale: f64) -> [f64; 9] {
    GAIN_SCAN.map(|k| k * time_scale.max(1.0))
}

/// Eq 15's time constants as multiples of the spec's, both alike (the paper prints neither,
/// nor their ratio): the spec's first, then slower curvature responses, then faster ones.
const TIME_SCALES: [f64; 7] = [1.0, 1.5, 2.0, 3.0, 0.75, 0.5, 0.25];

/// The calibration's record: every (time scale, k, peak) it ran, and a line for each.
struct CalibrationLog {
    rows: Vec<String>,
    lines: Vec<String>,
}

impl CalibrationLog {
    fn peak(&mut self, k: f64, time_scale: f64) -> Result<f64, String> {
        let peak = coarse_peak(k, time_scale)?;
        self.rows.push(format!("{time_scale},{k},{peak}"));
        self.lines.push(format!("  time constants x {time_scale}, k = {k:.4} 1/(m kPa): peak {:.1} mm/s", 1e3 * peak));
        Ok(peak)
    }

    /// The fastest peak over the scanned k at `time_scale`, with the index of its k.
    fn scan(&mut self, time_scale: f64) -> Result<(Vec<f64>, usize), String> {
        let peaks = gains(time_scale).iter().map(|&k| self.peak(k, time_scale)).collect::<Result<Vec<_>, _>>()?;
        let best = (0..peaks.len()).max_by(|&a, &b| peaks[a].total_cmp(&peaks[b])).ok_or("empty scan")?;
        Ok((peaks, best))
    }

    /// The k at which the peak crosses `target` between the scanned gains `low` and `high`
    /// (the peak below it at `low`, at or above at `high`), by bisection.
    fn bisect(
        &mut self,
        time_scale: f64,
        target: f64,
        mut low: f64,
        mut high: f64,
        rounds: usize,
    ) -> Result<f64, String> {
        for _ in 0..rounds {
            let mid = 0.5 * (low + high);
            if self.peak(mid, time_scale)? < target {
                low = mid;
            } else {
                high = mid;
            }
        }
        Ok(high)
    }
}

fn wpi_calibration(out: &Path) -> Result<ExperimentReport, String> {
    let spec = softgen_generated::wpi_snake::Params::default();
    let mut log = CalibrationLog {
        rows: Vec::new(),
        lines: vec![
            "procedure: the threshold pressure P0 held at the spec's value; C0 = k (P - P0); the complex model's"
                .to_string(),
            "           peak speed over {1, 1.5, 2} Hz x {41, 48, 55} kPa at phi = 0 fitted to the paper's 220 mm/s:"
                .to_string(),
            "           k scanned with eq 15's time constants at the spec's (tau1 = tau2 x 2), then both lengthened"
                .to_string(),
            "           and shortened alike until a k reaches it; then bisection on k's rising side".to_string(),
            format!(
                "           (spec: tau1 = {} s, tau2 = {} s, P0 = {} kPa, k = {} 1/(m kPa))",
                spec.time_constant_1, spec.time_constant_2, spec.threshold_pressure, spec.curvature_per_kpa
            ),
        ],
    };
    let mut fastest = Vec::new();
    let mut reached = None;
    for &time_scale in &TIME_SCALES {
        let (peaks, best) = log.scan(time_scale)?;
        fastest.push((time_scale, peaks[best]));
        if let Some(first) = (0..=best).find(|&i| peaks[i] >= PAPER_PEAK_SPEED) {
            let gains = gains(time_scale);
            if first == 0 {
                return Err(format!(
                    "k = {} already exceeds 220 mm/s at time constants x {time_scale}; lower the scan",
                    gains[0]
                ));
            }
            let k = log.bisect(time_scale, PAPER_PEAK_SPEED, gains[first - 1], gains[first], 10)?;
            reached = Some((time_scale, k));
            break;
        }
    }
    let at_spec = log.peak(spec.curvature_per_kpa, 1.0)?;
    let CalibrationLog { rows, mut lines } = log;
    write_csv(&out.join("calibration.csv"), "time_scale,curvature_per_kpa,peak_speed_m_s", &rows)?;
    let saturation: Vec<String> =
        fastest.iter().map(|(scale, peak)| format!("x {scale}: {:.0} mm/s", 1e3 * peak)).collect();
    lines.push(format!("fastest peak over k by time-constant scale: {}", saturation.join(", ")));
    lines.push(format!(
        "spec:   k = {} with its time constants gives a peak of {:.1} mm/s (paper: around 220)",
        spec.curvature_per_kpa,
        1e3 * at_spec
    ));
    let verdict = match reached {
        Some((time_scale, k)) => {
            lines.push(format!(
                "result: tau1 = {:.4} s, tau2 = {:.4} s (x {time_scale}), k = {k:.3} 1/(m kPa): C0 = {:.1} to {:.1} 1/m over 41-55 kPa",
                time_scale * spec.time_constant_1,
                time_scale * spec.time_constant_2,
                k * (41.0 - spec.threshold_pressure),
                k * (55.0 - spec.threshold_pressure)
            ));
            if time_scale == 1.0 && (spec.curvature_per_kpa - k).abs() <= 0.05 * k {
                Verdict::Reproduced
            } else {
                Verdict::Differs(format!(
                    "220 mm/s takes tau1 = {:.4} s, tau2 = {:.4} s and k = {k:.3} 1/(m kPa); the spec's tau1 = {} s, tau2 = {} s and k = {} give a peak of {:.0} mm/s ({:.0} % short)",
                    time_scale * spec.time_constant_1,
                    time_scale * spec.time_constant_2,
                    spec.time_constant_1,
                    spec.time_constant_2,
                    spec.curvature_per_kpa,
                    1e3 * at_spec,
                    100.0 * (1.0 - at_spec / PAPER_PEAK_SPEED)
                ))
            }
        }
        None => {
            let best = fastest.iter().map(|(_, p)| *p).fold(0.0, f64::max);
            lines.push(format!(
                "        no k reaches 220 mm/s at any scale: the peak saturates near {:.0} mm/s (the wave itself travels 4 l f = {:.0} mm/s at 2 Hz)",
                1e3 * best,
                1e3 * 4.0 * spec.channel_length * 2.0
            ));
            // tau1, tau2 and C0(P) are what the peak depends on, and the paper prints none;
            // no choice of them over the scan reaches its peak, which makes it a difference
            // of the model, not a gap in the paper.
            let longest = TIME_SCALES.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Verdict::Differs(format!(
                "no curvature gain k up to {} 1/(m kPa) ({} with the time constants x {longest}) reaches 220 mm/s with eq 15's time constants from {} to {longest} times the spec's: the peak saturates at {:.0} mm/s ({:.0} % short), the spec's values give {:.0}",
                GAIN_SCAN[GAIN_SCAN.len() - 1],
                gains(longest)[GAIN_SCAN.len() - 1],
                TIME_SCALES.iter().copied().fold(f64::INFINITY, f64::min),
                1e3 * best,
                100.0 * (1.0 - best / PAPER_PEAK_SPEED),
                1e3 * at_spec
            ))
        }
    };
    Ok(ExperimentReport { lines, views: vec![], verdict })
}

fn wpi_speed_map(out: &Path) -> Result<ExperimentReport, String> {
    let params = softgen_generated::wpi_snake::Params::default();
    let maps = grid(0.0, &params)?;
    grid_csv(&out.join("speed_map.csv"), 0.0, &maps)?;
    let speeds = [map_of(&maps[0], |o| 1e3 * o.speed), map_of(&maps[1], |o| 1e3 * o.speed)];
    contour(out, "speed_complex.png", "WPI snake, phi = 0: complex model (Fig 8a)", "CoM speed (mm/s)", &speeds[0])?;
    contour(
        out,
        "speed_simplified.png",
        "WPI snake, phi = 0: simplified model (Fig 8b)",
        "CoM speed (mm/s)",
        &speeds[1],
    )?;
    let peak = |m: &Vec<Vec<f64>>| m.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    let low = |m: &Vec<Vec<f64>>| m.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let (peak_complex, peak_simplified) = (peak(&speeds[0]), peak(&speeds[1]));
    // Straight line: the cycle-averaged path fits no circle, or one far larger than the body.
    let straight = |m: &Vec<Vec<SnakeOutcome>>| {
        m.iter().flatten().map(|o| o.circle.map_or(f64::INFINITY, |c| c.0)).fold(f64::INFINITY, f64::min)
    };
    let (straight_complex, straight_simplified) = (straight(&maps[0]), straight(&maps[1]));
    let largest_gap = speeds[0]
        .iter()
        .flatten()
        .zip(speeds[1].iter().flatten())
        .map(|(a, b)| (a - b).abs() / a.max(*b))
        .fold(0.0, f64::max);
    let lines = vec![
        format!("paper: straight line at phi = 0; peak around 220 mm/s, ten times the old snake's 20 mm/s;"),
        format!("       both models similar to the experiment, the complex one slightly closer (no values printed)"),
        format!("complex:    {:.0} to {:.0} mm/s, peak {peak_complex:.0} mm/s; smallest circle radius fitting a path {straight_complex:.1} m", low(&speeds[0]), peak_complex),
        format!("simplified: {:.0} to {:.0} mm/s, peak {peak_simplified:.0} mm/s; smallest circle radius {straight_simplified:.1} m", low(&speeds[1]), peak_simplified),
        format!("models differ by at most {:.0} % at any grid point", 100.0 * largest_gap),
        format!(
            "speed rises with f at {:.0} % and with P at {:.0} % of neighbouring grid points (complex; simplified {:.0} %, {:.0} %)",
            100.0 * rising(&speeds[0], true),
            100.0 * rising(&speeds[0], false),
            100.0 * rising(&speeds[1], true),
            100.0 * rising(&speeds[1], false)
        ),
        format!("outputs: speed_map.csv, speed_complex.png, speed_simplified.png (and .svg)"),
    ];
    let mut reasons = Vec::new();
    if (peak_complex - 1e3 * PAPER_PEAK_SPEED).abs() > 1e3 * AROUND * PAPER_PEAK_SPEED {
        let off = peak_complex / (1e3 * PAPER_PEAK_SPEED) - 1.0;
        reasons.push(format!(
            "the complex model's peak is {peak_complex:.0} mm/s, {:.0} % {} the paper's around 220",
            100.0 * off.abs(),
            if off < 0.0 { "short of" } else { "above" }
        ));
    }
    if straight_complex < 5.0 || straight_simplified < 5.0 {
        reasons.push(format!("a phi = 0 path curves (radius {:.1} m)", straight_complex.min(straight_simplified)));
    }
    if largest_gap > 0.25 {
        reasons.push(format!("the models differ by {:.0} % somewhere", 100.0 * largest_gap));
    }
    Ok(ExperimentReport { lines, views: vec![], verdict: differs_if(reasons) })
}

/// Fraction of neighbouring grid points between which a value rises, along f or along P.
fn rising(values: &[Vec<f64>], along_frequency: bool) -> f64 {
    let mut pairs = Vec::new();
    for (j, row) in values.iter().enumerate() {
        for (i, v) in row.iter().enumerate() {
            if along_frequency && i + 1 < row.len() {
                pairs.push(row[i + 1] > *v);
            }
            if !along_frequency && j + 1 < values.len() {
                pairs.push(values[j + 1][i] > *v);
            }
        }
    }
    pairs.iter().filter(|r| **r).count() as f64 / pairs.len().max(1) as f64
}

/// Relative spread of the radius along one input, averaged over the other.
fn spread(radii: &[Vec<f64>], along_pressure: bool) -> f64 {
    let relative = |v: Vec<f64>| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)) / mean
    };
    if along_pressure {
        (0..FREQUENCIES.len()).map(|i| relative(radii.iter().map(|row| row[i]).collect())).sum::<f64>()
            / FREQUENCIES.len() as f64
    } else {
        radii.iter().map(|row| relative(row.clone())).sum::<f64>() / radii.len() as f64
    }
}

fn wpi_turning_map(out: &Path) -> Result<ExperimentReport, String> {
    let params = softgen_generated::wpi_snake::Params::default();
    let maps = grid(0.4, &params)?;
    grid_csv(&out.join("turning_map.csv"), 0.4, &maps)?;
    let correction = (params.channel_length + GAP_LENGTH) / params.channel_length;
    let speeds = [map_of(&maps[0], |o| 1e3 * o.speed), map_of(&maps[1], |o| 1e3 * o.speed)];
    let radii = [
        map_of(&maps[0], |o| o.circle.map_or(f64::NAN, |c| 1e3 * c.0 * correction)),
        map_of(&maps[1], |o| o.circle.map_or(f64::NAN, |c| 1e3 * c.0 * correction)),
    ];
    contour(out, "speed_complex.png", "WPI snake, phi = 0.4: complex model (Fig 9a)", "CoM speed (mm/s)", &speeds[0])?;
    contour(
        out,
        "speed_simplified.png",
        "WPI snake, phi = 0.4: simplified model (Fig 9b)",
        "CoM speed (mm/s)",
        &speeds[1],
    )?;
    contour(
        out,
        "radius_complex.png",
        "WPI snake, phi = 0.4: complex model, corrected radius (Fig 9d)",
        "turning radius (mm)",
        &radii[0],
    )?;
    contour(
        out,
        "radius_simplified.png",
        "WPI snake, phi = 0.4: simplified model, corrected radius (Fig 9e)",
        "turning radius (mm)",
        &radii[1],
    )?;
    let worst_fit =
        maps.iter().flatten().flatten().map(|o| o.circle.map_or(f64::INFINITY, |(r, rms)| rms / r)).fold(0.0, f64::max);
    let range = |m: &Vec<Vec<f64>>| {
        let v: Vec<f64> = m.iter().flatten().copied().collect();
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    };
    let mut lines = vec![
        "paper: both models capture the speed, the simplified one better; the radius depends strongly on".to_string(),
        "       pressure in every case; the experiment's radii exceed both models', the complex one closer".to_string(),
        format!(
            "radii are multiplied by (l + L_o) / l = {correction:.3} (L_o = {GAP_LENGTH} m, ours), as the paper does"
        ),
    ];
    let mut reasons = Vec::new();
    for (m, name) in ["complex", "simplified"].iter().enumerate() {
        let (s0, s1) = range(&speeds[m]);
        let (r0, r1) = range(&radii[m]);
        let (by_pressure, by_frequency) = (spread(&radii[m], true), spread(&radii[m], false));
        lines.push(format!(
            "{name:<11} speed {s0:.0} to {s1:.0} mm/s, radius {r0:.0} to {r1:.0} mm; radius spread {:.0} % along P, {:.0} % along f",
            100.0 * by_pressure,
            100.0 * by_frequency
        ));
        if !(by_pressure > by_frequency) {
            reasons.push(format!("the {name} model's radius varies more with frequency than with pressure"));
        }
    }
    lines.push(format!(
        "every path is a circle: worst RMS distance from its fitted circle {:.1} % of the radius",
        100.0 * worst_fit
    ));
    let complex_smaller = radii[0].iter().flatten().zip(radii[1].iter().flatten()).filter(|(a, b)| a < b).count();
    lines.push(format!(
        "the complex model turns tighter than the simplified one at {complex_smaller} of {} points (the experiment's radii, larger than both, are not printed)",
        FREQUENCIES.len() * PRESSURES.len()
    ));
    lines.push("outputs: turning_map.csv, speed_*.png, radius_*.png (and .svg)".to_string());
    if worst_fit > 0.1 {
        reasons.push(format!("a path is no circle (RMS {:.0} % of R)", 100.0 * worst_fit));
    }
    // The paper: experimental radii above both models', the complex one closer, so the
    // complex model's radii should be the larger. Whether ours are cannot hang on what the
    // paper leaves out if the ranking survives changing it.
    let points = FREQUENCIES.len() * PRESSURES.len();
    let variants = ranking_under_unprinted_parameters(&params)?;
    for (what, tighter, corners) in &variants {
        lines.push(format!("{what}: the complex model turns tighter at {tighter} of {corners} corners of the grid"));
    }
    let robust = variants.iter().all(|(_, tighter, corners)| 2 * tighter > *corners);
    // Section 4.3: the experiment's radii lie above both models', the complex model's
    // closer, so the complex model's radii are the larger of the two. The paper prints no
    // radius, so that ranking and the pressure dependence are all there is to hold the run to.
    let ranking = "section 4.3 has the experiment's radii above both models' with the complex closer, so the complex model's the larger";
    let verdict = match (reasons.is_empty(), 2 * complex_smaller > points) {
        (false, _) => differs_if(reasons),
        (true, true) if robust => Verdict::Differs(format!(
            "the complex model turns tighter than the simplified one at {complex_smaller} of {points} points, the reverse of the paper's ranking ({ranking}); the reversal holds at every grid corner with eq 15's time constants halved or doubled or the segments' mass halved or five times larger, so no parameter the paper leaves out explains it"
        )),
        (true, true) => Verdict::Unverifiable(format!(
            "the complex model turns tighter than the simplified one at {complex_smaller} of {points} points, the reverse of the paper's ranking ({ranking}), but a change of a parameter the paper does not print reverses it at some grid corners"
        )),
        (true, false) => Verdict::Qualitative(format!(
            "the complex model turns wider than the simplified one at {} of {points} points and the radius varies more with pressure than with frequency, as section 4.3 states with no radius printed",
            points - complex_smaller
        )),
    };
    Ok(ExperimentReport { lines, views: vec![], verdict })
}

/// For each change of a parameter the paper does not print (both of eq 15's time constants
/// halved and doubled, the segments' mass halved and five times larger): at how many of the
/// grid's four corners the complex model's turning radius is the smaller, out of how many.
fn ranking_under_unprinted_parameters(
    params: &softgen_generated::wpi_snake::Params,
) -> Result<Vec<(String, usize, usize)>, String> {
    let variants: [(&str, f64, f64); 4] = [
        ("time constants x 0.5", 0.5, 1.0),
        ("time constants x 2", 2.0, 1.0),
        ("segment mass x 0.5", 1.0, 0.5),
        ("segment mass x 5", 1.0, 5.0),
    ];
    let corners = [
        (FREQUENCIES[0], PRESSURES[0]),
        (FREQUENCIES[0], PRESSURES[7]),
        (FREQUENCIES[5], PRESSURES[0]),
        (FREQUENCIES[5], PRESSURES[7]),
    ];
    let mut runs = Vec::new();
    for &(_, time_scale, mass_scale) in &variants {
        let mut varied = params.clone();
        varied.time_constant_1 *= time_scale;
        varied.time_constant_2 *= time_scale;
        varied.segment_mass *= mass_scale;
        for model in [SnakeModel::Complex, SnakeModel::Simplified] {
            for &(f, p) in &corners {
                let mut run = SnakeRun::new(model, f, p, 0.4);
                run.params = varied.clone();
                runs.push(run);
            }
        }
    }
    let mut radii = Vec::with_capacity(runs.len());
    for (run, outcome) in runs.iter().zip(run_grid(&runs)) {
        let outcome = outcome
            .map_err(|e| format!("f = {} Hz, P = {} kPa, varied parameters: {e}", run.frequency, run.pressure))?;
        radii.push(outcome.circle.map_or(f64::NAN, |c| c.0));
    }
    Ok(variants
        .iter()
        .zip(radii.chunks(2 * corners.len()))
        .map(|((what, _, _), radii)| {
            let (complex, simplified) = radii.split_at(corners.len());
            let tighter = complex.iter().zip(simplified).filter(|(c, s)| c < s).count();
            (what.to_string(), tighter, corners.len())
        })
        .collect())
}

fn wpi_trajectory(out: &Path) -> Result<ExperimentReport, String> {
    let mut series = Vec::new();
    let mut lines = vec![
        "paper (Fig 10): at 2 Hz and 54 kPa the measured CoM path is fitted by a circle; both models' paths overlaid"
            .to_string(),
    ];
    let mut rows = Vec::new();
    let mut reasons = Vec::new();
    let mut view = None;
    let mut radii = Vec::new();
    for (model, colour) in [(SnakeModel::Complex, [20, 20, 20]), (SnakeModel::Simplified, [30, 160, 60])] {
        let mut run = SnakeRun::new(model, 2.0, 54.0, 0.4);
        run.duration = 20.0;
        let every = (0.01 / run.step).round() as usize;
        let outcome = run_snake(&run, every, |_| {})?;
        if matches!(model, SnakeModel::Complex) {
            view = Some(complex_trajectory(out, &run, &outcome.samples)?);
        }
        for s in &outcome.samples {
            let joint_forces: Vec<String> =
                s.joint_forces.iter().flat_map(|h| [h.x.to_string(), h.y.to_string()]).collect();
            rows.push(format!(
                "{},{},{},{},{},{},{},{}",
                model.name(),
                s.t,
                s.center_of_mass.x,
                s.center_of_mass.y,
                s.heading,
                s.curvatures.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(","),
                joint_forces.join(","),
                s.segment_torques.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",")
            ));
        }
        series.push(softgen_app::Series {
            name: format!("{} model", model.name()),
            colour,
            points: outcome.samples.iter().map(|s| (s.center_of_mass.x, s.center_of_mass.y)).collect(),
        });
        let circle = fit_circle(&outcome.cycle_centres[run.transient_cycles..]);
        match circle {
            Some((r, rms)) => lines.push(format!(
                "{:<11} speed {:.0} mm/s, circle radius {:.0} mm (RMS {:.2} mm)",
                model.name(),
                1e3 * outcome.speed,
                1e3 * r,
                1e3 * rms
            )),
            None => {
                lines.push(format!("{:<11} speed {:.0} mm/s, no circle fits", model.name(), 1e3 * outcome.speed));
                reasons.push(format!("the {} model's path is not a circle", model.name()));
            }
        }
        if let Some((r, rms)) = circle {
            if rms > 0.1 * r {
                reasons.push(format!("the {} model's path is a poor circle", model.name()));
            }
        }
        radii.push(circle.map(|(r, _)| r));
    }
    // Joint constraint forces h_i (on links i + 1.. through segment i, world axes) and the
    // segments' actuation torques: the complex model's; zero for the simplified one.
    let header = "model,t,com_x,com_y,heading,kappa_1,kappa_2,kappa_3,kappa_4,h1_x,h1_y,h2_x,h2_y,h3_x,h3_y,h4_x,h4_y,torque_1,torque_2,torque_3,torque_4";
    write_csv(&out.join("trajectory.csv"), header, &rows)?;
    softgen_app::plot_paths(
        "WPI snake at 2 Hz, 54 kPa, phi = 0.4: centre of mass (Fig 10)",
        &series,
        &out.join("trajectory.png"),
    )?;
    lines.push("outputs: trajectory.csv (with the complex model's joint constraint forces and segment torques), complex_model.csv (its coordinates), trajectory.png (and .svg)".to_string());
    // Fig 10 prints no radius; section 4.3 ranks them: the experiment's above both models',
    // the complex model's closer, so the larger of the two (the paper's gap correction scales
    // both alike).
    let verdict = match radii[..] {
        [Some(complex), Some(simplified)] if reasons.is_empty() && complex < simplified => Verdict::Differs(format!(
            "both paths are circles, but the complex model's ({:.0} mm) is tighter than the simplified one's ({:.0} mm), the reverse of section 4.3's ranking (the experiment's radius above both, the complex closer)",
            1e3 * complex,
            1e3 * simplified
        )),
        [Some(complex), Some(simplified)] if reasons.is_empty() => Verdict::Qualitative(format!(
            "both paths are circles, the complex model's ({:.0} mm) wider than the simplified one's ({:.0} mm), as Fig 10 and section 4.3 state with no radius printed",
            1e3 * complex,
            1e3 * simplified
        )),
        _ => differs_if(reasons),
    };
    Ok(ExperimentReport { lines, views: view.into_iter().collect(), verdict })
}

/// The complex model's samples as `complex_model.csv` (t and every coordinate by name), the
/// run `--view` draws.
fn complex_trajectory(
    out: &Path,
    run: &SnakeRun,
    samples: &[crate::papers::wpi_snake::model::SnakeSample],
) -> Result<ViewedRun, String> {
    use softgen_runtime::Model;
    let header: Vec<&str> =
        std::iter::once("t").chain(softgen_generated::WpiSnake::COORDINATES.iter().map(|c| c.name)).collect();
    let mut rows = Vec::with_capacity(samples.len());
    for s in samples {
        let q = s.coordinates.ok_or("a complex-model sample without its coordinates")?;
        let q: Vec<String> = q.iter().map(|v| v.to_string()).collect();
        rows.push(format!("{},{}", s.t, q.join(",")));
    }
    write_csv(&out.join("complex_model.csv"), &header.join(","), &rows)?;
    let params = crate::papers::wpi_snake::model::params_at(run)?;
    let title = format!(
        "WPI snake, complex model at {} Hz, {} kPa, phi = {} (001, Fig 10)",
        run.frequency, run.pressure, run.offset
    );
    Ok(ViewedRun {
        params: crate::papers::experiment::changed_params(&params),
        ..ViewedRun::new("complex_model.csv", softgen_generated::WpiSnake::NAME, title)
    })
}

/// The paper's cost ratio, simplified over complex: 69 s / 94 s (section 4.2).
const PAPER_COST_RATIO: f64 = 69.0 / 94.0;

fn wpi_cost(out: &Path) -> Result<ExperimentReport, String> {
    // Each model at its own default step (the longest within 0.1 % of 0.5 ms steps), then
    // both at the finer of the two, where the ratio of wall times is that of one right-hand
    // side's cost.
    let matched = SnakeRun::new(SnakeModel::Complex, 1.5, 48.0, 0.0)
        .step
        .min(SnakeRun::new(SnakeModel::Simplified, 1.5, 48.0, 0.0).step);
    // Each wall time the least of three rounds, the four runs interleaved in each, so that
    // what else the machine runs weighs on all of them alike.
    const ROUNDS: usize = 3;
    let mut seconds = [[f64::INFINITY; 2]; 2];
    let mut steps = [[0.0; 2]; 2];
    let mut rows = Vec::new();
    for round in 0..ROUNDS {
        for (k, same_step) in [false, true].into_iter().enumerate() {
            for (m, model) in [SnakeModel::Complex, SnakeModel::Simplified].into_iter().enumerate() {
                let mut run = SnakeRun::new(model, 1.5, 48.0, 0.0);
                run.duration = 500.0;
                if same_step {
                    run.step = matched;
                }
                steps[k][m] = run.step;
                let start = Instant::now();
                let outcome = run_snake(&run, 100_000, |_| {})?;
                let wall = start.elapsed().as_secs_f64();
                seconds[k][m] = seconds[k][m].min(wall);
                rows.push(format!("{round},{},{},{wall},{}", model.name(), run.step, outcome.evaluations));
            }
        }
    }
    write_csv(&out.join("cost.csv"), "round,model,step_s,wall_seconds,right_hand_sides", &rows)?;
    let ratio = |k: usize| seconds[k][1] / seconds[k][0];
    let lines = vec![
        format!("paper: 500 s of locomotion in Matlab took 94 s (complex) and 69 s (simplified), ratio {PAPER_COST_RATIO:.2}"),
        format!("softgen: each wall time the least of {ROUNDS} rounds"),
        format!(
            "softgen, each model's own RK4 step ({} ms and {} ms, each the longest within 0.1 % of 0.5 ms steps): {:.2} s and {:.2} s, ratio {:.2}",
            1e3 * steps[0][0],
            1e3 * steps[0][1],
            seconds[0][0],
            seconds[0][1],
            ratio(0)
        ),
        format!(
            "softgen, both at {} ms (the ratio of one right-hand side's cost): {:.2} s and {:.2} s, ratio {:.2}; 1.5 Hz, 48 kPa",
            1e3 * matched,
            seconds[1][0],
            seconds[1][1],
            ratio(1)
        ),
    ];
    // Wall times on another machine and language cannot be compared; their ratio at
    // matched steps can, within what timing one run on a shared machine allows.
    let verdict = if (ratio(1) - PAPER_COST_RATIO).abs() <= 0.1 {
        Verdict::Reproduced
    } else if ratio(1) < 1.0 {
        Verdict::Differs(format!(
            "the simplified model costs {:.1} of the complex one's time at matched {} ms steps ({:.1} at each model's own step), against the paper's {PAPER_COST_RATIO:.2} (69 s / 94 s)",
            ratio(1),
            1e3 * matched,
            ratio(0)
        ))
    } else {
        Verdict::Differs(format!(
            "the simplified model is not cheaper: {:.2} of the complex one's wall time at matched {} ms steps",
            ratio(1),
            1e3 * matched
        ))
    };
    Ok(ExperimentReport { lines, views: vec![], verdict })
}

/// `mpc-001-goal`: the task of `mpc.rs`, its path, decisions and planner timing.
fn mpc_goal(out: &Path) -> Result<ExperimentReport, String> {
    use super::mpc::{run_goal, GoalTask, GOAL_ANGLE_DEGREES, GOAL_DISTANCE};
    use softgen_app::{plot_time_series, Series};
    use softgen_runtime::Model;
    let task = GoalTask::new();
    let run = run_goal(&task)?;
    let rows: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            format!(
                "{:.3},{:.6},{:.6},{:.6},{:.4},{:.5},{:.5},{:.3},{:.6e},{}",
                s.t,
                s.center_of_mass.x,
                s.center_of_mass.y,
                s.distance,
                s.decisions.pressure,
                s.decisions.frequency,
                s.decisions.offset,
                s.plan_ms,
                s.best_cost,
                s.failed
            )
        })
        .collect();
    write_csv(
        &out.join("goal.csv"),
        "t_s,com_x_m,com_y_m,distance_m,supply_pressure_kpa,frequency_hz,offset,plan_ms,plan_cost,failed_rollouts",
        &rows,
    )?;
    // The plant's coordinates at every plan, for `--view`.
    let header: Vec<&str> =
        std::iter::once("t").chain(softgen_generated::WpiSnake::COORDINATES.iter().map(|c| c.name)).collect();
    let trajectory: Vec<String> = run
        .samples
        .iter()
        .map(|s| {
            let q: Vec<String> = s.state.q.iter().map(|v| v.to_string()).collect();
            format!("{},{}", s.t, q.join(","))
        })
        .collect();
    write_csv(&out.join("trajectory.csv"), &header.join(","), &trajectory)?;
    let view = ViewedRun::new("trajectory.csv", softgen_generated::WpiSnake::NAME, "WPI snake, MPC: to the goal");
    let path = run.samples.iter().map(|s| (s.center_of_mass.x, s.center_of_mass.y)).collect();
    plot_path_to_goal("WPI snake, MPC: path (top view)", path, (run.goal.x, run.goal.y), out)?;
    let decisions = vec![
        Series {
            name: "supply pressure / 50 kPa".into(),
            colour: [200, 40, 40],
            points: run.samples.iter().map(|s| (s.t, s.decisions.pressure / 50.0)).collect(),
        },
        Series {
            name: "frequency (Hz)".into(),
            colour: [40, 60, 200],
            points: run.samples.iter().map(|s| (s.t, s.decisions.frequency)).collect(),
        },
        Series {
            name: "offset".into(),
            colour: [120, 60, 160],
            points: run.samples.iter().map(|s| (s.t, s.decisions.offset)).collect(),
        },
        Series {
            name: "distance to goal (m)".into(),
            colour: [30, 150, 60],
            points: run.samples.iter().map(|s| (s.t, s.distance)).collect(),
        },
    ];
    plot_time_series("WPI snake, MPC: the plan's decisions", "value", &decisions, &out.join("decisions.png"))?;
    let times = run.samples.iter().map(|s| (s.t, s.plan_ms)).collect();
    plot_plan_times("WPI snake, MPC: planner time per plan", times, out)?;
    let simulated = run.samples.last().map_or(0.0, |s| s.t);
    let (planner, min, max) = (&task.planner, &task.planner.min, &task.planner.max);
    let mut lines = vec![
        format!(
            "task: from rest, bring the centre of mass to a goal {GOAL_DISTANCE} m away at {GOAL_ANGLE_DEGREES} degrees off the heading, ({:.3}, {:.3}) m, and keep it within {} m for {} s",
            run.goal.x, run.goal.y, task.arrival_radius, task.hold
        ),
        format!(
            "plans: MPPI, {} rollouts of {} s of the complex model (RK4 at {} ms, steps ending on every valve switch) every {} ms; supply pressure in [{}, {}] kPa, frequency in [{}, {}] Hz, offset in [{}, {}]",
            planner.samples,
            planner.horizon,
            planner.step * 1e3,
            task.period * 1e3,
            min.pressure,
            max.pressure,
            min.frequency,
            max.frequency,
            min.offset,
            max.offset
        ),
        format!(
            "{simulated:.2} s simulated in {:.2} s wall ({} plant right-hand sides); outputs: goal.csv, trajectory.csv, path_xy, decisions, planner (.png and .svg)",
            run.wall_seconds, run.evaluations
        ),
        run.statistics.line(task.period),
    ];
    let outside = run.samples.iter().filter(|s| {
        let (d, lo, hi) = (s.decisions.to_array(), min.to_array(), max.to_array());
        (0..3).any(|i| d[i] < lo[i] || d[i] > hi[i])
    });
    let outside = outside.count();
    let mut verdict = control_task_verdict(
        &mut lines,
        run.reached_at,
        run.final_distance,
        &run.statistics,
        task.period,
        simulated,
        "goal",
    );
    if outside > 0 {
        verdict = Verdict::Differs(format!("{outside} plans left the decisions' bounds"));
    }
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}
