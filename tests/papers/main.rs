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
