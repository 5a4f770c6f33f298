//! The `softgen` command line: `simulate` (the default: the pedal-wave demo), `eval`, `run`,
//! `roll`, `experiment`, `sweep` and `list`. The arguments and handler of each live in
//! `cli/`, one file a subcommand; this file holds the command tree and the exit status.

mod cli;

use clap::{Parser, Subcommand};
use cli::eval::{eval, EvalArgs};
use cli::experiment::{experiment, ExperimentArgs};
use cli::roll::{roll, RollArgs};
use cli::run::{run, RunArgs};
use cli::simulate::{simulate, SimulateArgs};
use cli::sweep::{sweep, SweepArgs};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "softgen",
    version,
    about = "Equations of motion for soft and hybrid robots: simulate and evaluate generated models",
    long_about = "Equations of motion for soft and hybrid robots.\n\nWith no subcommand, runs `simulate` with its defaults: the modular snake's pedal wave on flat ground for 20 s (003_011ffa2a91e05fc5), writing its CSV, PNG and SVG under out/.",
    args_conflicts_with_subcommands = true,
    allow_negative_numbers = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    simulate: SimulateArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a robot (default: the paper's pedal wave on flat ground for 20 s).
    #[command(allow_negative_numbers = true)]
    Simulate(SimulateArgs),
    /// Print M, C qd, G and every contact point's position, velocity and Jacobian as JSON.
    #[command(allow_negative_numbers = true)]
    Eval(EvalArgs),
    /// Run a robot's gait through its output chain to a device at a fixed rate (default: the
    /// snake on the simulated plant, hardware in the loop, 1 kHz for 10 s).
    #[command(allow_negative_numbers = true)]
    Run(RunArgs),
    /// The soft snake (000_a2f8bdeafcf4372f): dropped from 0.6 m, then planar or spatial
    /// rolling driven by pressures; CSV, plots and travelling velocities beside Table I.
    #[command(allow_negative_numbers = true)]
    Roll(RollArgs),
    /// The seed papers' experiments: `experiment list` names them, `experiment run NAME`
    /// runs one, writes its CSV and figures under out/NAME/, compares with the paper and
    /// ends with `verdict: reproduced` or `verdict: differs: <reason>`.
    Experiment(ExperimentArgs),
    /// Run a sweep file on every core: one results table (Parquet, or CSV) with each run's
    /// inputs, figures and status. Interrupted, the same command resumes it; `--shard K/N`
    /// runs one of N slices (for array jobs) and `sweep merge` joins the slices.
    #[command(args_conflicts_with_subcommands = true)]
    Sweep(SweepArgs),
    /// List the robots and their generalized coordinates.
    List,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = |result: Result<ExitCode, String>| match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    };
    let result = match cli.command {
        None => return exit(simulate(cli.simulate)),
        Some(Command::Simulate(args)) => return exit(simulate(args)),
        Some(Command::Eval(args)) => eval(args),
        Some(Command::Run(args)) => return exit(run(args)),
        Some(Command::Roll(args)) => return exit(roll(args)),
        Some(Command::Experiment(args)) => return exit(experiment(args)),
        Some(Command::Sweep(args)) => return exit(sweep(args)),
        Some(Command::List) => cli::list::list(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
