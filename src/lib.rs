//! softgen: run generated robot models. The library half of the `softgen` CLI: scenarios
//! (a robot, its environment and gait, an integrator) run to CSV and PNG, and `eval`.

mod eval;
mod hardware_run;
mod plot;
mod robots;
mod run_config;
mod scenario;
mod serial;

pub use eval::{eval_json, EvalInput};
pub use hardware_run::{run_on_device, ControllerChoice, MpcReport, RunOptions, RunReport, SNAKE_RUN_CONFIG, WHEELED_SNAKE_RUN_CONFIG};
pub use plot::{plot_run, Canvas};
pub use run_config::{EnvironmentOverride, MpcSettings, RunConfig};
pub use robots::{with_robot, RobotVisitor, ROBOTS};
pub use serial::SerialDevice;
pub use scenario::{run_scenario, IntegratorChoice, RunSummary, Scenario, TerrainChoice};
