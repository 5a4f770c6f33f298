//! `softgen sweep FILE` and `softgen sweep merge`: a sweep file run on every core, resumable
//! and sharded, and shards' tables merged.

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use softgen::signals::{signal_exit, stop_flag};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
#[derive(Args)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepAction>,
    /// The sweep file (TOML; see docs/src/sweeps-and-python/sweep-files.md).
    file: Option<PathBuf>,
    /// Run only shard K of N (K = 0 .. N-1), the runs whose number is K modulo N.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Results table (default: out/sweeps/<name>.parquet, or .shard-K-of-N.parquet).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Table format (default: from --output's extension, else Parquet).
    #[arg(long, value_enum)]
    format: Option<softgen::TableFormat>,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
}

#[derive(Subcommand)]
pub(crate) enum SweepAction {
    /// Join the shards' tables into the table the whole sweep gives on one machine.
    Merge {
        /// The merged table (.parquet or .csv).
        #[arg(long)]
        output: PathBuf,
        /// Every shard's table.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
}

pub(crate) fn sweep(args: SweepArgs) -> Result<ExitCode, String> {
    if let Some(SweepAction::Merge { output, shards }) = args.action {
        let mut tables = Vec::new();
        for path in &shards {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            tables.push((
                path.display().to_string(),
                softgen::SweepTable::from_parquet(bytes, &path.display().to_string())?,
            ));
        }
        let merged = softgen::SweepTable::merge(tables)?;
        merged.write(&output, softgen::format_of(&output))?;
        println!(
            "merged {} shards: {} runs ({} failed) -> {}",
            shards.len(),
            merged.rows.len(),
            merged.failed(),
            output.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let file = args.file.ok_or("give a sweep file (softgen sweep FILE) or `softgen sweep merge`")?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let sweep = softgen::Sweep::parse(&text, &file.display().to_string())?;
    let shard = args.shard.as_deref().map(softgen::Shard::parse).transpose()?;
    let format =
        args.format.or(args.output.as_deref().map(softgen::format_of)).unwrap_or(softgen::TableFormat::Parquet);
    let output = args.output.unwrap_or_else(|| softgen::default_output(&sweep, shard, format));
    let stop = stop_flag()?;
    let options = softgen::SweepOptions { shard, journal: None, workers: args.workers, stop: Arc::clone(&stop) };
    let runs = sweep.shard_runs(shard).len();
    println!(
        "sweep {}: {} of {} runs ({}){}",
        sweep.name,
        runs,
        sweep.points.len(),
        sweep.target.describe(),
        shard.map_or(String::new(), |s| format!(", shard {s}"))
    );
    let bar = ProgressBar::new(runs as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed, {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let progress = |done: usize, _: usize| bar.set_position(done as u64);
    let outcome = softgen::sweep_to_file(&sweep, &output, format, &options, &progress);
    bar.finish_and_clear();
    let outcome = outcome?;
    if !outcome.complete {
        let signal = stop.load(Ordering::Relaxed);
        eprintln!(
            "interrupted: {} of {runs} runs done, kept in {}; the same command resumes the sweep",
            outcome.table.rows.len(),
            softgen::journal_path(&output).display()
        );
        return Ok(if signal != 0 { signal_exit(signal) } else { ExitCode::FAILURE });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = if args.workers == 0 { cores } else { args.workers };
    let rate = outcome.ran as f64 / outcome.wall_seconds.max(1e-9);
    println!(
        "{} runs ({} failed; {} from the journal, {} run now in {:.2} s: {:.3} runs/s, {:.3} per worker on {workers})",
        outcome.table.rows.len(),
        outcome.table.failed(),
        outcome.resumed,
        outcome.ran,
        outcome.wall_seconds,
        rate,
        rate / workers.min(outcome.ran.max(1)) as f64
    );
    if outcome.table.failed() > 0 {
        println!("failed runs have their error in the `error` column");
    }
    println!("table          {}", output.display());
    Ok(ExitCode::SUCCESS)
}
