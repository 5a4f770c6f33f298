//! Running a sweep (or one shard of it) on every local core. Each finished run is appended
//! to a journal beside the output at once, so an interrupted sweep loses nothing: the same
//! command again reads the journal and runs only what is left. A run that fails, or
//! panics, is a row with its error, never a lost sweep.

use crate::sweep::file::{Shard, Sweep};
use crate::sweep::table::{RunRecord, SweepTable, TableFormat, TableHeader};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Run one slice only; None runs them all.
    pub shard: Option<Shard>,
    /// Where finished runs are recorded as they finish; None keeps them in memory only.
    pub journal: Option<PathBuf>,
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// Set non-zero (a signal's number) to stop taking runs and end the running ones early;
    /// runs ended this way are not recorded, so a resumed sweep runs them again.
    pub stop: Arc<AtomicUsize>,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions { shard: None, journal: None, workers: 0, stop: Arc::new(AtomicUsize::new(0)) }
    }
}

/// What running a sweep gave.
#[derive(Clone, Debug)]
pub struct SweepOutcome {
    /// The finished runs' rows, in run order (all of the shard's runs when `complete`).
    pub table: SweepTable,
    /// Whether every run of the sweep (or shard) finished.
    pub complete: bool,
    /// Runs read back from the journal rather than run.
    pub resumed: usize,
    /// Runs run now.
    pub ran: usize,
    /// Wall time (s).
    pub wall_seconds: f64,
}

/// The journal's first line.
#[derive(Serialize, Deserialize, PartialEq)]
struct JournalHeader {
    sweep: String,
    fingerprint: String,
    shard: Option<String>,
}

/// One finished run in the journal; figures as their bit patterns, so a resumed sweep's
/// table equals an uninterrupted one bit for bit.
#[derive(Serialize, Deserialize)]
struct JournalLine {
    run: usize,
    figures: Vec<Option<u64>>,
    error: Option<String>,
}

/// The journal of the sweep whose table goes to `output`.
pub fn journal_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".journal");
    output.with_file_name(name)
}

/// What an earlier, interrupted start of the same sweep left: the runs it finished, and the
/// length of the journal up to its last whole line (a kill mid-write leaves a cut line,
/// which must go before new lines are appended, or the next one would join it).
#[derive(Default)]
struct JournalSoFar {
    done: Vec<JournalLine>,
    /// The bytes to keep: all of them, or up to the cut last line.
    whole_bytes: u64,
    /// The last record is whole but the kill cut off its newline: end it before appending.
    unended: bool,
}

/// Reads the runs an earlier, interrupted start of the same sweep finished.
fn read_journal(path: &Path, header: &JournalHeader, runs: &[usize]) -> Result<JournalSoFar, String> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
            format!("{}: not a sweep journal (byte {} is not UTF-8)", path.display(), e.utf8_error().valid_up_to())
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JournalSoFar::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(first) = lines.first() else { return Ok(JournalSoFar::default()) };
    if lines.len() == 1 && !text.ends_with('\n') {
        // Killed while writing its header: nothing was run yet.
        return Ok(JournalSoFar::default());
    }
    let found: JournalHeader = serde_json::from_str(first)
        .map_err(|e| format!("{}: line 1 is not a sweep journal's header ({e})", path.display()))?;
    if found != *header {
        return Err(format!(
            "{} is the journal of sweep `{}` ({}, shard {}), not of this one (`{}`, {}, shard {}): the sweep file changed since it was started, or another sweep writes here. Remove the journal to start afresh, or write elsewhere with --output",
            path.display(),
            found.sweep,
            found.fingerprint,
            found.shard.as_deref().unwrap_or("none"),
            header.sweep,
            header.fingerprint,
            header.shard.as_deref().unwrap_or("none"),
        ));
    }
    let mut done: Vec<JournalLine> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut whole_bytes = text.len() as u64;
    for (i, line) in lines.iter().enumerate().skip(1) {
        match serde_json::from_str::<JournalLine>(line) {
            Ok(record) if runs.binary_search(&record.run).is_ok() && seen.insert(record.run) => done.push(record),
            Ok(record) => {
                return Err(format!(
                    "{}: line {}: run {} is not one of this shard's runs, or is there twice",
                    path.display(),
                    i + 1,
                    record.run
                ))
            }
            // A line cut short by a kill is the last one; it is run again.
            Err(_) if i + 1 == lines.len() => whole_bytes = text.rfind(line).unwrap_or(text.len()) as u64,
            Err(e) => return Err(format!("{}: line {}: {e}", path.display(), i + 1)),
        }
    }
    let unended = !text.ends_with('\n') && whole_bytes == text.len() as u64;
    Ok(JournalSoFar { done, whole_bytes, unended })
}

/// Runs `sweep` (the shard of `options`), skipping runs its journal already holds, and
/// calls `progress(done, total)` after each run.
pub fn run_sweep(
    sweep: &Sweep,
    options: &SweepOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<SweepOutcome, String> {
    let start = Instant::now();
    let runs = sweep.shard_runs(options.shard);
    let header = JournalHeader {
        sweep: sweep.name.clone(),
        fingerprint: sweep.fingerprint.clone(),
        shard: options.shard.map(|s| s.to_string()),
    };
    let so_far = match &options.journal {
        Some(path) => read_journal(path, &header, &runs)?,
        None => JournalSoFar::default(),
    };
    let previous = so_far.done;
    let journal = match &options.journal {
        Some(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            let fresh = previous.is_empty();
            let mut file =
                if fresh { std::fs::File::create(path) } else { std::fs::OpenOptions::new().append(true).open(path) }
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            if !fresh {
                let at = |e: std::io::Error| format!("{}: {e}", path.display());
                file.set_len(so_far.whole_bytes).map_err(at)?;
                if so_far.unended {
                    writeln!(file).map_err(at)?;
                }
            }
            if fresh {
                let line = serde_json::to_string(&header).map_err(|e| e.to_string())?;
                writeln!(file, "{line}").and_then(|_| file.flush()).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Some(Mutex::new(file))
        }
        None => None,
    };
    let resumed = previous.len();
    let mut records: Vec<RunRecord> = previous
        .into_iter()
        .map(|line| RunRecord {
            run: line.run,
            inputs: sweep.points[line.run].clone(),
            figures: line.figures.into_iter().map(|f| f.map(f64::from_bits)).collect(),
            error: line.error,
        })
        .collect();
    let done_already: std::collections::HashSet<usize> = records.iter().map(|r| r.run).collect();
    let todo: Vec<usize> = runs.iter().copied().filter(|i| !done_already.contains(i)).collect();
    let total = runs.len();
    let finished = AtomicUsize::new(resumed);
    progress(resumed, total);

    let figure_columns: Vec<usize> = sweep
        .figures
        .iter()
        .map(|f| sweep.target.figures().iter().position(|g| g == f).expect("checked when parsed"))
        .collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let journal_error = Mutex::new(None::<String>);
    let workers = match options.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(todo.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                if options.stop.load(Ordering::Relaxed) != 0 || journal_error.lock().map_or(true, |e| e.is_some()) {
                    return;
                }
                let Some(&run) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else { return };
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    sweep.target.run(&sweep.settings[run], &options.stop)
                }))
                .unwrap_or_else(|panic| Err(format!("the run panicked: {}", panic_message(&panic))));
                if options.stop.load(Ordering::Relaxed) != 0 {
                    // Possibly cut short: not a result. A resumed sweep runs it again.
                    return;
                }
                let record = match outcome {
                    Ok(all) => RunRecord {
                        run,
                        inputs: sweep.points[run].clone(),
                        figures: figure_columns.iter().map(|&j| all[j]).collect(),
                        error: None,
                    },
                    Err(e) => RunRecord {
                        run,
                        inputs: sweep.points[run].clone(),
                        figures: vec![None; figure_columns.len()],
                        error: Some(e),
                    },
                };
                if let Some(journal) = &journal {
                    let line = JournalLine {
                        run,
                        figures: record.figures.iter().map(|f| f.map(f64::to_bits)).collect(),
                        error: record.error.clone(),
                    };
                    let written = serde_json::to_string(&line).map_err(|e| e.to_string()).and_then(|text| {
                        let mut file = journal.lock().map_err(|_| "journal lock poisoned".to_string())?;
                        writeln!(file, "{text}").and_then(|_| file.flush()).map_err(|e| e.to_string())
                    });
                    if let Err(e) = written {
                        if let Ok(mut slot) = journal_error.lock() {
                            *slot = Some(format!(
                                "{}: {e}",
                                options.journal.as_ref().map_or(String::new(), |p| p.display().to_string())
                            ));
                        }
                        return;
                    }
                }
                if let Ok(mut all) = results.lock() {
                    all.push(record);
                }
                progress(finished.fetch_add(1, Ordering::Relaxed) + 1, total);
            });
        }
    });
    if let Some(e) = journal_error.into_inner().unwrap_or(Some("journal lock poisoned".into())) {
        return Err(format!("writing the journal: {e}"));
    }
    let new = results.into_inner().map_err(|_| "results lock poisoned".to_string())?;
    let ran = new.len();
    records.extend(new);
    records.sort_by_key(|r| r.run);
    let complete = records.len() == total;
    let table = SweepTable {
        header: TableHeader {
            sweep: sweep.name.clone(),
            fingerprint: sweep.fingerprint.clone(),
            runs: sweep.points.len(),
            inputs: sweep.inputs.iter().map(|(k, _)| k.clone()).collect(),
            figures: sweep.figures.iter().map(|f| f.to_string()).collect(),
            shard: options.shard.map(|s| s.to_string()),
        },
        input_kinds: sweep.inputs.iter().map(|(_, kind)| *kind).collect(),
        rows: records,
    };
    Ok(SweepOutcome { table, complete, resumed, ran, wall_seconds: start.elapsed().as_secs_f64() })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Where a sweep's table goes unless told: `out/sweeps/<name>.<ext>`, and
/// `<name>.shard-K-of-N.parquet` for a shard.
pub fn default_output(sweep: &Sweep, shard: Option<Shard>, format: TableFormat) -> PathBuf {
    let extension = match format {
        TableFormat::Parquet => "parquet",
        TableFormat::Csv => "csv",
    };
    let file = match shard {
        Some(s) => format!("{}.shard-{}-of-{}.{extension}", sweep.name, s.index, s.count),
        None => format!("{}.{extension}", sweep.name),
    };
    Path::new("out").join("sweeps").join(file)
}

/// Runs a sweep with its journal beside `output` and, once every run is done, writes the
/// table there and removes the journal. Interrupted, it leaves the journal for a resume.
pub fn sweep_to_file(
    sweep: &Sweep,
    output: &Path,
    format: TableFormat,
    options: &SweepOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<SweepOutcome, String> {
    if options.shard.is_some() && format != TableFormat::Parquet {
        return Err("a shard's table is Parquet, so that `softgen sweep merge` can join the shards; merge them into CSV with `merge --output results.csv`".into());
    }
    let journal = journal_path(output);
    let options = SweepOptions { journal: Some(journal.clone()), ..options.clone() };
    let outcome = run_sweep(sweep, &options, progress)?;
    if outcome.complete {
        outcome.table.write(output, format)?;
        std::fs::remove_file(&journal).map_err(|e| format!("{}: {e}", journal.display()))?;
    }
    Ok(outcome)
}

/// The format a path's extension names: `.csv` is CSV, anything else Parquet.
pub fn format_of(path: &Path) -> TableFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("csv") => TableFormat::Csv,
        _ => TableFormat::Parquet,
    }
}
