//! softgen: run generated robot models. The library half of the `softgen` CLI: scenarios
//! (a robot, its environment and gait, an integrator) run to CSV and PNG, `eval`, and the
//! seed papers' experiments.

mod eval;
mod experiment;
mod hardware_run;
mod output;
mod parallel;
mod pinniped;
mod plot;
mod robots;
mod rolling_run;
mod run_config;
mod run_settings;
mod scenario;
mod serial;
mod sweep;
mod sweep_run;
mod sweep_table;
mod sweep_target;
mod underwater_snake;
mod wpi_snake;

pub use eval::{eval_json, read_stdin_input, EvalInput};
pub use experiment::{find_experiment, Experiment, ExperimentReport, Verdict, EXPERIMENTS, FREQUENCIES, PRESSURES};
pub use hardware_run::{
    run_on_device, ControllerChoice, MpcReport, RunOptions, RunReport, PINNIPED_RUN_CONFIG, SNAKE_RUN_CONFIG,
    UNDERWATER_SNAKE_RUN_CONFIG, WHEELED_SNAKE_RUN_CONFIG,
};
pub use output::PendingFile;
pub use pinniped::{
    limb_gait, limbs, model_centre_of_mass, muscle_drive, pressure_controller, pressure_map, run_trial, Gait,
    RestGeometry, Trial, TrialOutcome, TrialSample, LIMB_NAMES, MUSCLES,
};
pub use plot::{plot_contour, plot_paths, plot_run, plot_time_series, plot_track, Series};
pub use robots::{has_soft_sections, with_robot, RobotInfo, RobotVisitor, ROBOTS};
pub use rolling_run::{run_rolling, write_rolling_outputs, Rolling, RollingRun, RollingSample, RollingSummary};
pub use run_config::{Drives, EnvironmentOverride, MpcSettings, RunConfig};
pub use run_settings::{
    AnisotropyName, IntegratorName, ResolvedRun, RunSettings, TerrainName, DOPRI5_TOLERANCES, ROS34_TOLERANCES,
};
pub use scenario::{
    run_scenario, run_scenario_rows, IntegratorChoice, RunSummary, SampleRows, Scenario, TerrainChoice,
};
pub use serial::SerialDevice;
pub use sweep::{Cell, CellKind, Shard, Sweep, MAX_RUNS};
pub use sweep_run::{default_output, format_of, journal_path, run_sweep, sweep_to_file, SweepOptions, SweepOutcome};
pub use sweep_table::{RunRecord, SweepTable, TableFormat, TableHeader};
pub use sweep_target::Target;
pub use underwater_snake::{
    joint_configuration, mean_speed, neutral_params, pitch_conditions, spiral_conditions, straight_conditions, swim,
    swimming_simulation, turning_circle, yaw_conditions, SwimCondition, SwimRun, SwimSample, FORWARD,
};
pub use wpi_snake::{
    fit_circle, run_grid, run_snake, valve_wave, SnakeModel, SnakeOutcome, SnakeRun, SnakeSample, LINKS,
};
