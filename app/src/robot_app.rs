//! A robot as the generic commands see it: [`RobotApp`], every command compiled for one model
//! ([`App`]), and the commands on it. Each robot's generated app crate holds its one `App` as
//! a `&dyn RobotApp`, so the commands are compiled for it there, beside the other robots' and
//! not in the binary's crate; the binary finds a robot's by name in the generated table of
//! them.

use crate::run::driver::RunDriver;
use crate::run::request::{RunOptions, RunReport};
use crate::run::robot_emulator::{EmulatedRobot, RobotEmulatorOptions};
use crate::simulate::eval::EvalInput;
use crate::simulate::scenario::{check, check_periods, CsvRows, RunSummary, SampleRows, Scenario};
use crate::simulate::settings::{ResolvedRun, RunSettings};
use crate::support::view::{write_page, ViewSetup};
use softgen_runtime::{CoordinateKind, Model, RobotVisitor, RunConfigFile};
use std::io::Write;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// What the generic commands do with one robot. Its one implementation is [`App`]; the
/// trait is what lets the binary hold every robot's in one table.
pub trait RobotApp: Sync {
    /// The robot's name (its spec's file name).
    fn name(&self) -> &'static str;
    /// The run configuration the robot comes with (its spec's sibling `<name>.run.toml`),
    /// if it has one.
    fn run_config(&self) -> Option<RunConfigFile>;
    /// Whether the robot has soft sections whose coordinates the dynamics move (an actuator
    /// length or a curvature not prescribed by a valve): their elastic forces make it stiff,
    /// which picks the integrator `auto` chooses. Valve-driven sections follow their
    /// responses in closed form and are not stiff.
    fn has_soft_sections(&self) -> bool;
    /// Checks that every name in `names` is a parameter of the robot.
    fn known_parameters(&self, names: &[&str]) -> Result<(), String>;
    /// Runs `scenario` (already checked by `run_scenario_rows`),
    /// giving its samples to `rows`.
    fn simulate(
        &self,
        scenario: &Scenario,
        rows: Option<&mut dyn SampleRows>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary, String>;
    /// The robot's quantities at `input`, as JSON.
    fn eval(&self, input: &EvalInput) -> Result<serde_json::Value, String>;
    /// A view page (HTML) of the run whose CSV is `text` (read from `csv`), with its number
    /// of frames.
    fn view_page(&self, text: &str, csv: &Path, setup: &ViewSetup) -> Result<(String, usize), String>;
    /// The robot's side of an emulated serial board.
    fn emulated(&self, options: &RobotEmulatorOptions) -> Result<Box<dyn EmulatedRobot>, String>;
    /// Runs `options` (`softgen run`), with the robot's own driver if a paper gives one;
    /// `stop` is set by signal handlers (the signal number) to end the run.
    fn run(
        &self,
        options: &RunOptions,
        stop: Arc<AtomicUsize>,
        driver: Option<&RunDriver>,
    ) -> Result<RunReport, String>;
}

/// Every generic command compiled for the model `R`, with the run configuration it comes
/// with.
pub struct App<R, const N: usize, const C: usize> {
    run_config: Option<RunConfigFile>,
    model: PhantomData<fn() -> R>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> App<R, N, C> {
    /// The robot `R`'s application, `run_config` its run configuration.
    pub const fn new(run_config: Option<RunConfigFile>) -> Self {
        App { run_config, model: PhantomData }
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> RobotApp for App<R, N, C> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn run_config(&self) -> Option<RunConfigFile> {
        self.run_config
    }

    fn has_soft_sections(&self) -> bool {
        R::COORDINATES.iter().enumerate().any(|(i, c)| {
            matches!(c.kind, CoordinateKind::ActuatorLength | CoordinateKind::Curvature) && !R::VALVES.contains(&i)
        })
    }

    fn known_parameters(&self, names: &[&str]) -> Result<(), String> {
        known_parameters::<R::Params>(R::NAME, names.iter().copied())
    }

    fn simulate(
        &self,
        scenario: &Scenario,
        rows: Option<&mut dyn SampleRows>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary, String> {
        crate::simulate::scenario::Runner { scenario, csv: rows, progress }.visit::<R, N, C>()
    }

    fn eval(&self, input: &EvalInput) -> Result<serde_json::Value, String> {
        crate::simulate::eval::Eval { input }.visit::<R, N, C>()
    }

    fn view_page(&self, text: &str, csv: &Path, setup: &ViewSetup) -> Result<(String, usize), String> {
        crate::support::view::page_from_csv::<R, N, C>(text, csv, setup)
    }

    fn emulated(&self, options: &RobotEmulatorOptions) -> Result<Box<dyn EmulatedRobot>, String> {
        crate::run::robot_emulator::Build { options, run_config: self.run_config }.visit::<R, N, C>()
    }

    fn run(
        &self,
        options: &RunOptions,
        stop: Arc<AtomicUsize>,
        driver: Option<&RunDriver>,
    ) -> Result<RunReport, String> {
        crate::run::session::Run { options, stop, driver, run_config: self.run_config }.visit::<R, N, C>()
    }
}

impl dyn RobotApp + '_ {
    /// Runs a scenario of this robot, writing CSV rows to `csv` as it goes (the header
    /// first) and reporting progress in simulated seconds to `progress`.
    pub fn run_scenario(
        &self,
        scenario: &Scenario,
        csv: Option<&mut dyn Write>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary, String> {
        match csv {
            Some(writer) => {
                self.run_scenario_rows(scenario, Some(&mut CsvRows { writer, count_column: usize::MAX }), progress)
            }
            None => self.run_scenario_rows(scenario, None, progress),
        }
    }

    /// Runs a scenario of this robot, giving every `csv_every`-th sample to `rows` as it
    /// goes.
    pub fn run_scenario_rows(
        &self,
        scenario: &Scenario,
        rows: Option<&mut dyn SampleRows>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary, String> {
        check("duration", scenario.duration, false)?;
        check("control period", scenario.control_period, true)?;
        check_periods(scenario.duration, scenario.control_period)?;
        if scenario.csv_every == 0 {
            return Err("csv sampling interval must be at least 1".into());
        }
        self.simulate(scenario, rows, progress)
    }

    /// Evaluates this robot at `input` and returns pretty JSON.
    pub fn eval_json(&self, input: &EvalInput) -> Result<String, String> {
        let value = self.eval(input)?;
        serde_json::to_string_pretty(&value).map_err(|e| e.to_string())
    }

    /// This robot, its plant wired as `softgen run --device sim` wires it.
    pub fn emulated_robot(&self, options: &RobotEmulatorOptions) -> Result<Box<dyn EmulatedRobot>, String> {
        self.emulated(options)
    }

    /// Runs `options` on this robot with the robots' own drivers; `stop` is set by signal
    /// handlers (the signal number) to end the run.
    pub fn run_with_drivers(
        &self,
        options: &RunOptions,
        stop: Arc<AtomicUsize>,
        drivers: &[RunDriver],
    ) -> Result<RunReport, String> {
        let driver = drivers.iter().find(|d| d.robot == self.name());
        self.run(options, stop, driver)
    }

    /// Writes `page` (HTML) from the run's CSV `csv` of this robot (see
    /// [`page_from_csv`](crate::page_from_csv) for the columns it reads); returns the number
    /// of frames written. A page that cannot be made leaves an earlier one as it was.
    pub fn write_view_from_csv(&self, csv: &Path, setup: &ViewSetup, page: &Path) -> Result<usize, String> {
        let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
        self.write_view_from_csv_text(&text, csv, setup, page)
    }

    /// As `write_view_from_csv`, from the CSV's text (`origin`
    /// names it in messages).
    pub fn write_view_from_csv_text(
        &self,
        text: &str,
        origin: &Path,
        setup: &ViewSetup,
        page: &Path,
    ) -> Result<usize, String> {
        let (html, frames) = self.view_page(text, origin, setup)?;
        write_page(page, &html)?;
        Ok(frames)
    }

    /// The scenario that runs this robot with `settings`.
    pub fn scenario(&self, settings: &RunSettings) -> Result<ResolvedRun, String> {
        settings.scenario(self.name(), self.has_soft_sections())
    }
}

/// Checks that every name is one of `P`'s parameters; the error names the robot and lists
/// them.
pub fn known_parameters<'a, P: softgen_runtime::ParamSet>(
    robot: &str,
    mut names: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let known = P::names();
    match names.find(|n| !known.contains(n)) {
        None => Ok(()),
        Some(name) => Err(format!("`{name}` is not a parameter of {robot}; its parameters are {}", known.join(", "))),
    }
}
