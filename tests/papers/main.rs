//! The seed papers' robots against the papers and against independent models, one test
//! binary with a module per paper (the experiments themselves run as commands in the CLI
//! tests).

mod modular_snake;
mod panda_soft_finger;
mod pinniped;
mod soft_snake;
mod underwater_snake;
mod wpi_snake;

/// The front page's verdict row of an experiment a test ran, held to the verdict the run
/// gave: the table is the binary's output and must not disagree with it.
fn assert_front_page_row(report: &softgen::ExperimentReport, name: &str) {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    if let Err(e) = softgen::check_verdict_row(&readme, name, &report.verdict) {
        panic!("README.md: {e}");
    }
}

/// A run configuration's box-DDP against an experiment's planner: the same knots (count,
/// interval, substeps, iterations) and the same rate, effort and command-rate weights.
fn assert_ddp_knots_and_weights_are_the_tasks(
    settings: &softgen::DdpMpcSettings,
    horizon: &softgen_runtime::HorizonSettings,
    weights: &softgen_runtime::GoalWeights,
) {
    assert_eq!(
        (settings.knots, settings.interval, settings.substeps, settings.iterations),
        (horizon.knots, horizon.interval, horizon.substeps, horizon.iterations)
    );
    assert_eq!(
        (
            settings.velocity_weight,
            settings.terminal_velocity_weight,
            settings.effort_weight,
            settings.command_rate_weight
        ),
        (weights.rate, weights.terminal_rate, weights.effort, weights.command_rate)
    );
}

/// The experiments no other test runs, each held to its whole row of the front page's table:
/// its class and first reason, numbers included, so that a verdict or a figure that moves
/// fails here (`softgen experiment table --write README.md` rewrites the rows after a change
/// that is meant).
macro_rules! front_page_rows {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let dir = tempfile::tempdir().unwrap();
                let report = softgen::find_experiment($name).unwrap().run(dir.path(), false).unwrap();
                assert_front_page_row(&report, $name);
            }
        )*
    };
}

front_page_rows! {
    row_000_drop => "000-drop",
    row_001_speed_map => "001-speed-map",
    row_001_turning_map => "001-turning-map",
    row_002_kinematics => "002-kinematics",
    row_003_pedal_wave => "003-pedal-wave",
    row_004_yaw => "004-yaw",
    row_004_spiral => "004-spiral",
}

/// 001-cost's verdict rests on wall times, which no row can hold: its class and the side of
/// the paper's ratio it falls on.
#[test]
fn the_simplified_model_costs_less_than_the_papers_ratio_says() {
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("001-cost").unwrap().run(dir.path(), false).unwrap();
    let softgen::Verdict::Differs(why) = &report.verdict else { panic!("001-cost: {}", report.verdict_line()) };
    let ratio: f64 = why
        .strip_prefix("the simplified model costs ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("{why}"));
    assert!(ratio < 0.63, "the paper's 0.73 less its margin: {why}");
}
