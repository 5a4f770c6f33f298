//! What an experiment is: one command (`softgen experiment run NAME`) that runs a robot as a
//! paper did, writes its CSV and figures under `out/<name>/`, prints its comparison with what
//! the paper states, and ends with a verdict: reproduced, or differs with a one-line reason.
//! The papers' folders list their experiments; `papers::experiments()` lists them all.

use serde::Deserialize;
use softgen_runtime::ParamSet;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::{Table, Value};

/// What an experiment concluded.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Reproduced,
    /// A control task (`mpc-...`) reached its goal.
    Reached,
    Differs(String),
}

/// An experiment's printed comparison and its verdict.
#[derive(Clone, Debug)]
pub struct ExperimentReport {
    pub lines: Vec<String>,
    pub verdict: Verdict,
}

impl ExperimentReport {
    /// The verdict line the command ends with.
    pub fn verdict_line(&self) -> String {
        match &self.verdict {
            Verdict::Reproduced => "verdict: reproduced".into(),
            Verdict::Reached => "verdict: reached".into(),
            Verdict::Differs(why) => format!("verdict: differs: {why}"),
        }
    }
}

/// One experiment of a seed paper.
pub struct Experiment {
    /// `<seed number>-<short name>`.
    pub name: &'static str,
    /// What it runs, one line.
    pub what: &'static str,
    pub(crate) run: fn(&Path) -> Result<ExperimentReport, String>,
}

impl Experiment {
    /// Runs it with outputs under `out/<name>/`.
    pub fn run(&self, out: &Path) -> Result<ExperimentReport, String> {
        let folder = out.join(self.name);
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        (self.run)(&folder)
    }
}

/// Reproduced when no reason to differ was found.
pub(crate) fn differs_if(reasons: Vec<String>) -> Verdict {
    if reasons.is_empty() {
        Verdict::Reproduced
    } else {
        Verdict::Differs(reasons.join("; "))
    }
}

/// A CSV file with its header, replacing an earlier one only once complete.
pub(crate) fn write_csv(path: &Path, header: &str, rows: &[String]) -> Result<(), String> {
    let (pending, file) = crate::support::output::PendingFile::create(path)?;
    let mut w = std::io::BufWriter::new(file);
    writeln!(w, "{header}").map_err(|e| format!("{}: {e}", path.display()))?;
    for r in rows {
        writeln!(w, "{r}").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))?;
    drop(w);
    pending.commit()
}

/// The run an experiment is made of, as a sweep varies it: the figures one run gives, a
/// check of a run's settings (every key known, every value of the right type) and the run.
/// Both functions get the experiment's name, whose defaults the run starts from.
#[derive(Debug)]
pub struct ExperimentRuns {
    pub experiment: &'static str,
    pub figures: &'static [&'static str],
    pub check: fn(&str, &Table) -> Result<(), String>,
    /// Runs once with the settings and returns every figure (None where a figure does not
    /// exist for this run); `stop` set ends the run early, with an error.
    pub run: fn(&str, &Table, &Arc<AtomicUsize>) -> Result<Vec<Option<f64>>, String>,
}

/// A run's settings (a table of a sweep file) as `T`, with serde's message on a bad key or
/// value.
pub(crate) fn deserialize<T: for<'de> Deserialize<'de>>(settings: &Table) -> Result<T, String> {
    Value::Table(settings.clone()).try_into().map_err(|e: toml::de::Error| e.message().trim_end().to_string())
}

/// Sets every parameter by name and checks the set.
pub(crate) fn set_params<P: ParamSet>(params: &mut P, values: &BTreeMap<String, f64>) -> Result<(), String> {
    for (name, value) in values {
        if !value.is_finite() {
            return Err(format!("parameter `{name}` must be finite, got {value}"));
        }
        params.set(name, *value).map_err(|e| e.to_string())?;
    }
    params.check().map_err(|e| format!("parameters: {e}"))
}
