//! softgen: run generated robot models. The library half of the `softgen` CLI: scenarios
//! (a robot, its environment and gait, an integrator) run to CSV and PNG, and `eval`.

mod eval;
mod hardware_run;
mod output;
mod plot;
mod robots;
mod rolling_run;
mod run_config;
mod scenario;
mod serial;

pub use eval::{eval_json, read_stdin_input, EvalInput};
pub use hardware_run::{run_on_device, ControllerChoice, MpcReport, RunOptions, RunReport, SNAKE_RUN_CONFIG, WHEELED_SNAKE_RUN_CONFIG};
pub use output::PendingFile;
pub use plot::{plot_run, plot_time_series, plot_track, Series};
pub use run_config::{EnvironmentOverride, MpcSettings, RunConfig};
pub use rolling_run::{run_rolling, Rolling, RollingRun, RollingSample, RollingSummary};
pub use robots::{has_soft_sections, with_robot, RobotInfo, RobotVisitor, ROBOTS};
pub use serial::SerialDevice;
pub use scenario::{run_scenario, IntegratorChoice, RunSummary, Scenario, TerrainChoice};
