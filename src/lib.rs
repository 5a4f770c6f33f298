//! softgen: run generated robot models. The library half of the `softgen` CLI: `robots` (the
//! robots this binary knows and the commands that take a robot's name), `sweep` (sweep
//! files, runs on every core, results tables) and `papers` (one folder per seed paper: its
//! runs and experiments, and the registry the generic code reads them from). The generic
//! commands themselves (a scenario run, eval, view pages, `softgen run`, the board emulator)
//! are softgen-app's, compiled for each robot in its generated app crate; they are
//! re-exported here.
//!
//! Generic items are re-exported here flat; a paper's items are reached through its folder
//! (`softgen::papers::<robot>::...`), so no robot-specific item has a generic name.

// The public API is documented, and its doc links resolve: a missing doc or a broken link
// fails the build (`cargo doc` for the links), not a review.
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)]

pub mod papers;
mod robots;
pub mod signals;
mod sweep;

pub use papers::{
    check_verdict_row, experiments, find_experiment, run_on_device, sweep_runs, verdict_table, verdict_table_rows,
    with_verdict_table, Experiment, ExperimentReport, ExperimentRuns, Verdict, ViewedRun, DEFAULT_ROBOT, PAPERS,
    RUN_DRIVERS, VERDICT_TABLE_BEGIN, VERDICT_TABLE_END,
};
pub use robots::{
    emulated_robot, eval_json, has_soft_sections, robot, run_config_of, run_scenario, run_scenario_rows,
    run_with_drivers, with_robot, write_view_from_csv, write_view_from_csv_text, RobotInfo, RobotVisitor, ROBOTS,
};
pub use softgen_app::{
    page_from_csv, parse_robot_run_config, plot_contour, plot_paths, plot_run, plot_time_series, plot_track,
    read_stdin_input, AdmittanceForceChoice, AnisotropyName, App, Controller, ControllerChoice, CoordinatesChoice,
    DdpMpcSettings, Drives, EmulatedRobot, EnvironmentOverride, EstimatorReport, EvalInput, HeldInputs,
    IntegratorChoice, IntegratorName, JacobianName, LimbController, LimbGaitRequest, MpcReport, MpcSettings,
    PendingFile, PlannerSettings, PlantSetting, ResolvedRun, RobotApp, RobotEmulatorOptions, RunConfig, RunDriver,
    RunOptions, RunReport, RunSettings, RunSummary, RunView, SampleRows, Scenario, SerialDevice, Series, StateSource,
    TerrainChoice, TerrainName, ViewSetup, WaveDecisions, DISPLAY_RATE, DOPRI5_TOLERANCES, ROS34_TOLERANCES,
};
pub use sweep::file::{Cell, CellKind, Shard, Sweep, MAX_RUNS};
pub use sweep::runner::{
    default_output, format_of, journal_path, run_sweep, sweep_to_file, SweepOptions, SweepOutcome,
};
pub use sweep::table::{RunRecord, SweepTable, TableFormat, TableHeader};
pub use sweep::target::Target;
