//! `softgen experiment list | run NAME`: the seed papers' experiments.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
#[derive(Args)]
pub(crate) struct ExperimentArgs {
    #[command(subcommand)]
    action: ExperimentAction,
}

#[derive(Subcommand)]
pub(crate) enum ExperimentAction {
    /// Print every experiment's name, one a line.
    List {
        /// Also say what each runs.
        #[arg(long)]
        verbose: bool,
    },
    /// Run one experiment.
    Run {
        /// Its name, as `experiment list` prints it.
        name: String,
        /// Output folder (the experiment writes into NAME/ inside it).
        #[arg(long, default_value = "out")]
        output: PathBuf,
        /// Also write a 3D animation page beside each trajectory the experiment writes
        /// (`<trajectory>.view.html`).
        #[arg(long)]
        view: bool,
    },
}

pub(crate) fn experiment(args: ExperimentArgs) -> Result<ExitCode, String> {
    match args.action {
        ExperimentAction::List { verbose } => {
            for e in softgen::experiments() {
                if verbose {
                    println!("{:<22} {}", e.name, e.what);
                } else {
                    println!("{}", e.name);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ExperimentAction::Run { name, output, view } => {
            let e = softgen::find_experiment(&name)?;
            println!("{}: {}", e.name, e.what);
            let start = Instant::now();
            let report = e.run(&output, view)?;
            for line in &report.lines {
                println!("{line}");
            }
            println!("outputs in {} ({:.1} s)", output.join(e.name).display(), start.elapsed().as_secs_f64());
            println!("{}", report.verdict_line());
            Ok(ExitCode::SUCCESS)
        }
    }
}
