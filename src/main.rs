//! The `softgen` command line: `simulate` (the default: the pedal-wave demo), `eval`, `run`,
//! the papers' own commands (`roll`), `experiment`, `sweep` and `list`. The arguments and
//! handler of each live in `cli/`, one file a subcommand, the papers' in their folders
//! (`softgen::papers::PaperCommand`); this file holds the command tree and the exit status.

mod cli;

use clap::{Parser, Subcommand};
use cli::eval::{eval, EvalArgs};
use cli::experiment::{experiment, ExperimentArgs};
use cli::run::{run, RunArgs};
use cli::simulate::{simulate, SimulateArgs};
use cli::sweep::{sweep, SweepArgs};
use cli::view::{view, ViewArgs};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "softgen",
    version,
    about = "Equations of motion for soft and hybrid robots: simulate and evaluate generated models",
    long_about = format!(
        "Equations of motion for soft and hybrid robots.\n\nWith no subcommand, runs `simulate` with its defaults: {}, writing its CSV, PNG and SVG under out/.",
        softgen::papers::DEFAULT_RUN
    ),
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
    /// The papers' own commands.
    #[command(flatten)]
    Paper(softgen::papers::PaperCommand),
    /// The seed papers' experiments: `experiment list` names them, `experiment run NAME`
    /// runs one, writes its CSV and figures under out/NAME/, compares with the paper and
    /// ends with `verdict: reproduced` (`reached` for a control task), or `differs`, `paper
    /// inconsistent` or `unverifiable` with its evidence.
    Experiment(ExperimentArgs),
    /// Run a sweep file on every core: one results table (Parquet, or CSV) with each run's
    /// inputs, figures and status. Interrupted, the same command resumes it; `--shard K/N`
    /// runs one of N slices (for array jobs) and `sweep merge` joins the slices.
    #[command(args_conflicts_with_subcommands = true)]
    Sweep(SweepArgs),
    /// A run's CSV as a 3D animation page (soft sections as tubes, contacts and their
    /// forces, terrain, the centre-of-mass trail) that opens from disk in any browser.
    #[command(allow_negative_numbers = true)]
    View(ViewArgs),
    /// List the robots and their generalized coordinates.
    List,
}

fn main() -> ExitCode {
    quiet_on_closed_pipes();
    match std::panic::catch_unwind(run_command) {
        Ok(code) => code,
        Err(payload) if closed_pipe(payload_text(&*payload)) => ExitCode::from(CLOSED_PIPE_STATUS),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// The status a command ends with when the reader of its output went away (`softgen list |
/// head -1`): 128 + SIGPIPE, what a shell reports for a command that signal ended.
const CLOSED_PIPE_STATUS: u8 = 141;

/// Whether a panic's message is the one `print!` or `eprint!` raise when the reader of stdout
/// or stderr closed its end of the pipe.
fn closed_pipe(message: Option<&str>) -> bool {
    message.is_some_and(|m| m.starts_with("failed printing to std") && m.contains("Broken pipe"))
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Rust ignores SIGPIPE, so a write to a closed pipe fails and `print!` panics. A command-line
/// tool should end quietly then, as the signal would end it: this hook says nothing for that
/// panic (the unwinding that follows drops pending outputs, so earlier files stay as they
/// were, and `main` gives status 141) and reports every other panic as before.
fn quiet_on_closed_pipes() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !closed_pipe(info.payload_as_str()) {
            report(info);
        }
    }));
}

fn run_command() -> ExitCode {
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
        Some(Command::Paper(command)) => return exit(command.run()),
        Some(Command::Experiment(args)) => return exit(experiment(args)),
        Some(Command::Sweep(args)) => return exit(sweep(args)),
        Some(Command::View(args)) => return exit(view(args)),
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
