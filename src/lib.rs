//! softgen: run generated robot models. The library half of the `softgen` CLI, by purpose:
//! `simulate` (a scenario of one robot run to CSV, its settings by name, `eval`), `sweep`
//! (sweep files, runs on every core, results tables), `hardware` (run configurations, the
//! serial board, a controller through the output chain to a device), `support` (pending
//! outputs, figures, parallel runs) and `papers` (one folder per seed paper: its runs and
//! experiments, and the registry the generic code reads them from).
//!
//! Generic items are re-exported here flat; a paper's items are reached through its folder
//! (`softgen::papers::<robot>::...`), so no robot-specific item has a generic name.

// The public API is documented, and its doc links resolve: a missing doc or a broken link
// fails the build (`cargo doc` for the links), not a review.
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)]

mod hardware;
pub mod papers;
mod simulate;
mod support;
mod sweep;

pub use hardware::config::{DdpMpcSettings, Drives, EnvironmentOverride, MpcSettings, RunConfig, WaveDecisions};
pub use hardware::estimation::EstimatorReport;
pub use hardware::request::{ControllerChoice, MpcReport, PlantSetting, RunOptions, RunReport, StateSource};
pub use hardware::robot_emulator::{emulated_robot, EmulatedRobot, RobotEmulatorOptions};
pub use hardware::run::{
    parse_robot_run_config, run_with_drivers, Controller, HeldInputs, LimbController, LimbGaitRequest, RunDriver,
};
pub use hardware::serial::SerialDevice;
pub use papers::{
    check_verdict_row, experiments, find_experiment, run_on_device, sweep_runs, verdict_table, verdict_table_rows,
    with_verdict_table, Experiment, ExperimentReport, ExperimentRuns, Verdict, ViewedRun, DEFAULT_ROBOT, PAPERS,
    RUN_DRIVERS, VERDICT_TABLE_BEGIN, VERDICT_TABLE_END,
};
pub use simulate::eval::{eval_json, read_stdin_input, EvalInput};
pub use simulate::robots::{has_soft_sections, run_config_of, with_robot, RobotInfo, RobotVisitor, ROBOTS};
pub use simulate::scenario::{
    run_scenario, run_scenario_rows, CoordinatesChoice, IntegratorChoice, RunSummary, SampleRows, Scenario,
    TerrainChoice,
};
pub use simulate::settings::{
    AnisotropyName, IntegratorName, JacobianName, ResolvedRun, RunSettings, TerrainName, DOPRI5_TOLERANCES,
    ROS34_TOLERANCES,
};
pub use simulate::view::{write_view_from_csv, write_view_from_csv_text};
pub use support::output::PendingFile;
pub use support::plot::{plot_contour, plot_paths, plot_run, plot_time_series, plot_track, RunView, Series};
pub use support::view::{page_from_csv, ViewSetup, DISPLAY_RATE};
pub use sweep::file::{Cell, CellKind, Shard, Sweep, MAX_RUNS};
pub use sweep::run::{default_output, format_of, journal_path, run_sweep, sweep_to_file, SweepOptions, SweepOutcome};
pub use sweep::table::{RunRecord, SweepTable, TableFormat, TableHeader};
pub use sweep::target::Target;
