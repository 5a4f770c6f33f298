//! softgen: run generated robot models. The library half of the `softgen` CLI: scenarios
//! (a robot, its environment and gait, an integrator) run to CSV and PNG, and `eval`.

mod eval;
mod plot;
mod robots;
mod scenario;

pub use eval::{eval_json, EvalInput};
pub use plot::{plot_run, Canvas};
pub use robots::{with_robot, RobotVisitor, ROBOTS};
pub use scenario::{run_scenario, IntegratorChoice, RunSummary, Scenario, TerrainChoice};
