//! The seed papers, one folder each: the robot's runs as the paper made them (drivers, gaits,
//! figures) and its experiments, each a `softgen experiment run` command with a computed
//! verdict; and, after them, the robots of no paper whose tasks are experiments too (the
//! hybrid robot imported from URDF). This module is the registry the generic code reads them from; robot names appear
//! in the library only below it.

pub mod experiment;
pub mod modular_snake;
pub mod panda_soft_finger;
pub mod pinniped;
pub mod soft_snake;
pub mod underwater_snake;
pub mod wpi_snake;

pub use experiment::{
    check_verdict_row, verdict_table, verdict_table_rows, with_verdict_table, Experiment, ExperimentReport,
    ExperimentRuns, Verdict, ViewedRun, VERDICT_TABLE_BEGIN, VERDICT_TABLE_END,
};

use crate::run_with_drivers;
use softgen_app::RunDriver;
use softgen_app::{RunOptions, RunReport};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The robot `softgen simulate` and `softgen run` drive when no robot is named: the modular
/// snake's pedal wave of 003, on flat ground.
pub const DEFAULT_ROBOT: &str = "snake_pedal_wave";

/// What `softgen` with no subcommand runs, for its help: [`DEFAULT_ROBOT`] with `simulate`'s
/// defaults.
pub const DEFAULT_RUN: &str = "the modular snake's pedal wave on flat ground for 20 s (003_011ffa2a91e05fc5)";

/// What one seed paper adds to softgen.
pub struct Paper {
    /// The seed's number and file stem (`000_a2f8bdeafcf4372f`).
    pub seed: &'static str,
    /// Its experiments, in the order `experiment list` prints them.
    pub experiments: &'static [Experiment],
    /// The runs of those of its experiments that a sweep can vary.
    pub sweep_runs: &'static [ExperimentRuns],
}

/// Every seed paper, in seed order.
pub const PAPERS: &[Paper] = &[
    Paper { seed: "000_a2f8bdeafcf4372f", experiments: soft_snake::experiments::EXPERIMENTS, sweep_runs: &[] },
    Paper {
        seed: "001_6780a70913e94322",
        experiments: wpi_snake::experiments::EXPERIMENTS,
        sweep_runs: &wpi_snake::sweep::SWEEP_RUNS,
    },
    Paper {
        seed: "002_f355a977a209e7c9",
        experiments: pinniped::experiments::EXPERIMENTS,
        sweep_runs: &pinniped::sweep::SWEEP_RUNS,
    },
    Paper { seed: "003_011ffa2a91e05fc5", experiments: modular_snake::experiments::EXPERIMENTS, sweep_runs: &[] },
    Paper { seed: "004_4e5a2166b70a9520", experiments: underwater_snake::experiments::EXPERIMENTS, sweep_runs: &[] },
];

/// The commands the papers add to `softgen`, beside the generic ones (the command line
/// flattens them into its own): each runs its paper's robot its own way, with that run's
/// settings on the command line.
#[derive(clap::Subcommand)]
pub enum PaperCommand {
    /// The soft snake (000_a2f8bdeafcf4372f): dropped from 0.6 m, then planar or spatial
    /// rolling driven by pressures; CSV, plots and travelling velocities beside Table I.
    #[command(allow_negative_numbers = true)]
    Roll(soft_snake::RollArgs),
}

impl PaperCommand {
    /// Runs the command; the exit status it ends with (a signal's, when one stopped it).
    pub fn run(self) -> Result<std::process::ExitCode, String> {
        match self {
            PaperCommand::Roll(args) => soft_snake::roll(args),
        }
    }
}

/// The experiments of robots from no seed paper (tasks that show an imported robot at
/// work), listed after the papers'.
pub const TASKS: &[&[Experiment]] = &[panda_soft_finger::experiments::EXPERIMENTS];

/// The experiments a sweep can vary, made of runs (`experiment = "..."` in a sweep file).
pub fn sweep_runs() -> impl Iterator<Item = &'static ExperimentRuns> {
    PAPERS.iter().flat_map(|p| p.sweep_runs.iter())
}

/// Every experiment, in seed order, then the tasks of robots from no paper.
pub fn experiments() -> impl Iterator<Item = &'static Experiment> {
    PAPERS.iter().flat_map(|p| p.experiments.iter()).chain(TASKS.iter().flat_map(|t| t.iter()))
}

/// The experiment called `name`, or an error listing them.
pub fn find_experiment(name: &str) -> Result<&'static Experiment, String> {
    experiments().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = experiments().map(|e| e.name).collect();
        format!("no experiment named `{name}`; the experiments are: {}", names.join(", "))
    })
}

/// How `softgen run` drives the robots whose papers drive them their own way (a limb gait,
/// held swimming inputs); every other robot runs its spec's serpenoid gait.
pub const RUN_DRIVERS: &[RunDriver] =
    &[pinniped::run_driver::DRIVER, soft_snake::run_driver::DRIVER, underwater_snake::run_driver::DRIVER];

/// `softgen run`: runs `options` on its device with the robot's driver; `stop` is set by
/// signal handlers (the signal number) to end the run.
pub fn run_on_device(options: &RunOptions, stop: Arc<AtomicUsize>) -> Result<RunReport, String> {
    run_with_drivers(options, stop, RUN_DRIVERS)
}
