//! The experiments of 003_011ffa2a91e05fc5, the modular rigid snake: each runs the robot as the paper did, writes its
//! CSV and figures and ends with a computed verdict.

use crate::papers::experiment::{Experiment, ExperimentReport, Verdict, ViewedRun};
use crate::simulate::scenario::{run_scenario, Scenario, TerrainChoice};
use softgen_runtime::{AdmittanceGains, Terrain};
use std::io::Write;
use std::path::Path;

/// The experiments of 003, in the order `experiment list` prints them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "003-pedal-wave",
        what: "rigid snake, pedal wave on flat ground for 20 s (003, Fig 5)",
        run: pedal_wave,
    },
    Experiment {
        name: "003-pipe",
        what: "rigid snake, lateral undulation in a 20 cm pipe for 20 s (003, Fig 6)",
        run: pipe,
    },
    Experiment {
        name: "003-stair",
        what: "rigid snake at a 10 cm stair without admittance control, 90 s (003, Fig 8)",
        run: stair,
    },
    Experiment {
        name: "003-stair-admittance",
        what: "rigid snake at a 10 cm stair with admittance control, 90 s (003, Fig 8)",
        run: stair_admittance,
    },
];

/// Runs `scenario`, writing `<file>.csv` and its figure; returns its summary and the run as
/// `--view` draws it (titled `title`).
fn rigid_snake(
    out: &Path,
    mut scenario: Scenario,
    file: &str,
    title: &str,
) -> Result<(crate::simulate::scenario::RunSummary, ViewedRun), String> {
    let csv = out.join(format!("{file}.csv"));
    let (pending, handle) = crate::support::output::PendingFile::create(&csv)?;
    let mut writer = std::io::BufWriter::new(handle);
    scenario.csv_every = 5;
    let summary = run_scenario(&scenario, Some(&mut writer), &mut |_| {})?;
    writer.flush().map_err(|e| format!("{}: {e}", csv.display()))?;
    drop(writer);
    pending.commit()?;
    summary.plot(&out.join(format!("{file}.png")))?;
    if let Some(e) = &summary.error {
        return Err(format!("the run stopped early: {e}"));
    }
    let view = ViewedRun {
        terrain: scenario.terrain.terrain(),
        params: scenario.params.clone(),
        ..ViewedRun::new(format!("{file}.csv"), &scenario.robot, title)
    };
    Ok((summary, view))
}

fn pedal_wave(out: &Path) -> Result<ExperimentReport, String> {
    let (summary, view) =
        rigid_snake(out, Scenario::new("snake_pedal_wave"), "pedal_wave", "rigid snake, pedal wave (003, Fig 5)")?;
    let period = 5.0;
    let cycles: Vec<f64> =
        (0..4).map(|c| summary.com_at((c + 1) as f64 * period).x - summary.com_at(c as f64 * period).x).collect();
    let lines = vec![
        "paper (Fig 5): the pedal wave moves the snake forward on flat ground".to_string(),
        format!(
            "softgen: per 5 s cycle {} cm; deepest contact {:.1} mm",
            cycles.iter().map(|d| format!("{:.1}", 100.0 * d)).collect::<Vec<_>>().join(", "),
            1e3 * summary.max_depth
        ),
    ];
    let verdict = if cycles.iter().all(|d| *d > 0.0) {
        Verdict::Reproduced
    } else {
        Verdict::Differs("a gait cycle does not move the snake forward".into())
    };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}

fn pipe(out: &Path) -> Result<ExperimentReport, String> {
    let (summary, view) = rigid_snake(
        out,
        Scenario::new("snake_lateral_undulation"),
        "pipe",
        "rigid snake, lateral undulation in a 20 cm pipe (003, Fig 6)",
    )?;
    let advance = summary.com_end().x - summary.com_start().x;
    let lines = vec![
        "paper (Fig 6): lateral undulation progresses along the pipe".to_string(),
        format!("softgen: {:.1} cm in 20 s; deepest wall contact {:.1} mm", 100.0 * advance, 1e3 * summary.max_depth),
    ];
    let verdict = if advance > 0.05 {
        Verdict::Reproduced
    } else {
        Verdict::Differs(format!(
            "with eta = -pi/2 the six-link body swings +-6 cm and never touches the 20 cm pipe ({:.1} cm in 20 s)",
            100.0 * advance
        ))
    };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}

fn stair_run(out: &Path, admittance: bool) -> Result<(f64, ViewedRun), String> {
    let mut s = Scenario::new("snake_pedal_wave");
    s.duration = 90.0;
    s.terrain = TerrainChoice::Override(Terrain::Stair { position: 0.9, height: 0.1 });
    if admittance {
        s.admittance = Some(AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: 2.2 });
    }
    let (file, title) = match admittance {
        true => ("stair_admittance", "rigid snake at a 10 cm stair, admittance control (003, Fig 8)"),
        false => ("stair", "rigid snake at a 10 cm stair, no admittance control (003, Fig 8)"),
    };
    let (summary, view) = rigid_snake(out, s, file, title)?;
    Ok((summary.com_end().x, view))
}

fn stair(out: &Path) -> Result<ExperimentReport, String> {
    let (com, view) = stair_run(out, false)?;
    let crossed = com > 0.9;
    let lines = vec![
        "paper (Fig 8): without admittance control the snake does not cross the 10 cm stair".to_string(),
        format!("softgen: centre of mass at x = {com:.2} m after 90 s (step face at 0.90 m)"),
    ];
    let verdict =
        if crossed { Verdict::Differs("the snake crossed without the controller".into()) } else { Verdict::Reproduced };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}

fn stair_admittance(out: &Path) -> Result<ExperimentReport, String> {
    let (com, view) = stair_run(out, true)?;
    let crossed = com > 0.9;
    let lines = vec![
        "paper (Fig 8): with admittance control the snake crosses the 10 cm stair".to_string(),
        format!("softgen: centre of mass at x = {com:.2} m after 90 s (step face at 0.90 m)"),
    ];
    let verdict = if crossed {
        Verdict::Reproduced
    } else {
        Verdict::Differs(
            "stalls at the step face: the paper gives neither M_d, D_d, K_d nor the friction coefficient".into(),
        )
    };
    Ok(ExperimentReport { lines, views: vec![view], verdict })
}
