//! The robots this binary knows, by name: the generated registry ([`ROBOTS`]) and each
//! robot's application (its generic commands, compiled in its own generated crate), and the
//! commands that take a robot's name, for the CLI, the papers and the sweeps.

use softgen_app::{EmulatedRobot, EvalInput, RobotApp, RobotEmulatorOptions, RunDriver, RunOptions, RunReport};
use softgen_app::{RunSummary, SampleRows, Scenario, ViewSetup};
pub use softgen_generated::ROBOTS;
use softgen_runtime::RunConfigFile;
pub use softgen_runtime::{RobotInfo, RobotVisitor};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The application of the robot named `name`, or an error saying which names exist.
pub fn robot(name: &str) -> Result<&'static dyn RobotApp, String> {
    softgen_apps::app(name).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> String {
    let known: Vec<&str> = ROBOTS.iter().map(|robot| robot.name).collect();
    format!("unknown robot `{name}`; known robots: {}", known.join(", "))
}

/// Calls `visitor` with the robot named `name`, or says which names exist. The visitor is
/// compiled for every robot where this is called: the commands go through [`robot`]
/// instead, compiled once per robot in its own crate.
pub fn with_robot<V: RobotVisitor>(name: &str, visitor: V) -> Result<V::Output, String> {
    softgen_generated::visit_robot(name, visitor).ok_or_else(|| unknown(name))
}

/// The run configuration the robot named `name` comes with (its spec's sibling
/// `<name>.run.toml`), if it has one.
pub fn run_config_of(name: &str) -> Option<RunConfigFile> {
    softgen_apps::app(name).and_then(|app| app.run_config())
}

/// Whether the robot named `name` has soft sections whose coordinates the dynamics move (see
/// [`RobotApp::has_soft_sections`]).
pub fn has_soft_sections(name: &str) -> Result<bool, String> {
    Ok(robot(name)?.has_soft_sections())
}

/// Runs a scenario of the robot it names, writing CSV rows to `csv` as it goes (the header
/// first) and reporting progress in simulated seconds to `progress`.
pub fn run_scenario(
    scenario: &Scenario,
    csv: Option<&mut dyn Write>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunSummary, String> {
    robot(&scenario.robot)?.run_scenario(scenario, csv, progress)
}

/// Runs a scenario of the robot it names, giving every `csv_every`-th sample to `rows` as it
/// goes.
pub fn run_scenario_rows(
    scenario: &Scenario,
    rows: Option<&mut dyn SampleRows>,
    progress: &mut dyn FnMut(f64),
) -> Result<RunSummary, String> {
    robot(&scenario.robot)?.run_scenario_rows(scenario, rows, progress)
}

/// Evaluates the robot named `name` at `input` and returns pretty JSON.
pub fn eval_json(name: &str, input: &EvalInput) -> Result<String, String> {
    robot(name)?.eval_json(input)
}

/// Writes `page` (HTML) from the run's CSV `csv` of the robot named `name` (see
/// [`page_from_csv`](crate::page_from_csv) for the columns it reads); returns the number of
/// frames written. A page that cannot be made leaves an earlier one as it was.
pub fn write_view_from_csv(csv: &Path, name: &str, setup: &ViewSetup, page: &Path) -> Result<usize, String> {
    robot(name)?.write_view_from_csv(csv, setup, page)
}

/// As [`write_view_from_csv`], from the CSV's text (`origin` names it in messages).
pub fn write_view_from_csv_text(
    text: &str,
    origin: &Path,
    name: &str,
    setup: &ViewSetup,
    page: &Path,
) -> Result<usize, String> {
    robot(name)?.write_view_from_csv_text(text, origin, setup, page)
}

/// The robot of `options`, its plant wired as `softgen run --device sim` wires it.
pub fn emulated_robot(options: &RobotEmulatorOptions) -> Result<Box<dyn EmulatedRobot>, String> {
    robot(&options.robot)?.emulated_robot(options)
}

/// Runs `options` with the robots' own drivers; `stop` is set by signal handlers (the signal
/// number) to end the run.
pub fn run_with_drivers(
    options: &RunOptions,
    stop: Arc<AtomicUsize>,
    drivers: &[RunDriver],
) -> Result<RunReport, String> {
    robot(&options.robot)?.run_with_drivers(options, stop, drivers)
}
