//! `softgen experiment list | run NAME | table`: the seed papers' experiments, and the table of
//! their verdicts the front page shows.

use clap::{Args, Subcommand};
use std::io::Write;
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
    /// Run every experiment in turn and print the table of their verdicts (experiment,
    /// class, first reason), as the front page shows it.
    Table {
        /// Output folder (each experiment writes into NAME/ inside it).
        #[arg(long, default_value = "out")]
        output: PathBuf,
        /// Also put the table into this Markdown file, between its verdict marks
        /// (`<!-- verdicts: begin ... -->` and `<!-- verdicts: end -->`); the file is
        /// replaced only once every experiment has run.
        #[arg(long)]
        write: Option<PathBuf>,
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
        ExperimentAction::Table { output, write } => {
            // Read first, so a file without the marks is refused before minutes of runs.
            let document = match &write {
                Some(path) => {
                    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
                    softgen::with_verdict_table(&text, "").map_err(|e| format!("{}: {e}", path.display()))?;
                    Some(text)
                }
                None => None,
            };
            let mut verdicts = Vec::new();
            for e in softgen::experiments() {
                let start = Instant::now();
                let report = e.run(&output, false).map_err(|err| format!("{}: {err}", e.name))?;
                eprintln!("{} ({:.1} s): {}", e.name, start.elapsed().as_secs_f64(), report.verdict_line());
                verdicts.push((e.name, report.verdict));
            }
            let table = softgen::verdict_table(&verdicts);
            print!("{table}");
            if let (Some(path), Some(text)) = (write, document) {
                let updated =
                    softgen::with_verdict_table(&text, &table).map_err(|e| format!("{}: {e}", path.display()))?;
                let (pending, mut file) = softgen::PendingFile::create(&path)?;
                file.write_all(updated.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
                drop(file);
                pending.commit()?;
                eprintln!("table written into {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
