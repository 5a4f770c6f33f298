//! What an experiment is: one command (`softgen experiment run NAME`) that runs a robot as a
//! paper did, writes its CSV and figures under `out/<name>/`, prints its comparison with what
//! the paper states, and ends with a verdict: reproduced, reproduced (qualitative), differs,
//! paper inconsistent or unverifiable, all but the first with a line of measured evidence.
//! The papers' folders list their experiments; `papers::experiments()` lists them all.

use serde::Deserialize;
use softgen_runtime::ParamSet;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::{Table, Value};

/// What an experiment concluded: each reason is a line of measured evidence, never a
/// statement made without it.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The run does what the paper reports, in the numbers the paper prints.
    Reproduced,
    /// The run does what the paper says in words, where it prints no number to hold the
    /// run to: the statement matched, and the run's figures that match it.
    Qualitative(String),
    /// A control task (`mpc-...`) reached its goal.
    Reached,
    /// The run does not do what the paper reports, for the measured cause given.
    Differs(String),
    /// The paper contradicts itself or a bound: the contradiction, with its numbers.
    PaperInconsistent(String),
    /// The paper does not print what deciding it would take: what is missing, and what the
    /// run shows either way.
    Unverifiable(String),
}

/// An experiment's printed comparison and its verdict.
#[derive(Clone, Debug)]
pub struct ExperimentReport {
    /// The comparison, line by line: the paper's figure and softgen's.
    pub lines: Vec<String>,
    /// The runs whose trajectories it wrote, which `--view` draws.
    pub views: Vec<ViewedRun>,
    /// What it concluded.
    pub verdict: Verdict,
}

/// A trajectory an experiment wrote (a CSV of `t` and the robot's coordinates by name, as
/// every command writes them) and what its page needs besides.
#[derive(Clone, Debug)]
pub struct ViewedRun {
    /// The CSV's file name in the experiment's folder; the page goes beside it
    /// (`<stem>.view.html`).
    pub csv: String,
    /// The robot's name.
    pub robot: String,
    /// The page's title.
    pub title: String,
    /// The run's terrain (None: the spec's) and parameter overrides by name.
    pub terrain: Option<softgen_runtime::Terrain>,
    /// See `terrain`.
    pub params: Vec<(String, f64)>,
}

impl ViewedRun {
    /// A run of `robot` on its spec's terrain with its spec's parameters.
    pub(crate) fn new(csv: impl Into<String>, robot: &str, title: impl Into<String>) -> ViewedRun {
        ViewedRun { csv: csv.into(), robot: robot.into(), title: title.into(), terrain: None, params: Vec::new() }
    }

    /// Writes its page into `folder` beside its CSV; returns the page's file name and frames.
    fn write_page(&self, folder: &Path, experiment: &str) -> Result<(String, usize), String> {
        let csv = folder.join(&self.csv);
        let page = csv.with_extension("view.html");
        let summary = format!("softgen experiment run {experiment}, {}", self.csv);
        let setup = softgen_app::ViewSetup {
            title: &self.title,
            summary: &summary,
            terrain: self.terrain,
            params: &self.params,
        };
        let frames = crate::write_view_from_csv(&csv, &self.robot, &setup, &page)
            .map_err(|e| format!("{experiment}: view of {}: {e}", self.csv))?;
        let name = page.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok((name, frames))
    }
}

impl Verdict {
    /// Every class [`Verdict::class`] prints, in the order the variants are declared.
    pub const CLASSES: [&'static str; 6] =
        ["reproduced", "reproduced (qualitative)", "reached", "differs", "paper inconsistent", "unverifiable"];

    /// The verdict's class as the command prints it: `reproduced`, `reproduced
    /// (qualitative)`, `reached`, `differs`, `paper inconsistent` or `unverifiable`.
    pub fn class(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Qualitative(_) => "reproduced (qualitative)",
            Verdict::Reached => "reached",
            Verdict::Differs(_) => "differs",
            Verdict::PaperInconsistent(_) => "paper inconsistent",
            Verdict::Unverifiable(_) => "unverifiable",
        }
    }

    /// The evidence the verdict gives, empty for `reproduced` and `reached`.
    pub fn evidence(&self) -> &str {
        match self {
            Verdict::Reproduced | Verdict::Reached => "",
            Verdict::Qualitative(why)
            | Verdict::Differs(why)
            | Verdict::PaperInconsistent(why)
            | Verdict::Unverifiable(why) => why,
        }
    }

    /// The evidence's first reason: the text up to its first `; ` (a verdict's reasons are
    /// joined that way), which is what a one-line table of verdicts shows.
    pub fn short_reason(&self) -> &str {
        let evidence = self.evidence();
        evidence.split("; ").next().unwrap_or(evidence)
    }
}

/// The front page's table of verdicts: one row an experiment, its class and its first
/// reason, in the order `experiments()` lists them. `verdicts` pairs each experiment's name
/// with its verdict; `softgen experiment table` writes it from the runs it makes.
pub fn verdict_table(verdicts: &[(&str, Verdict)]) -> String {
    let mut table = String::from("| experiment | verdict | first reason |\n| --- | --- | --- |\n");
    for (name, verdict) in verdicts {
        let reason = verdict.short_reason().replace('|', "\\|");
        table.push_str(&format!("| {name} | {} | {reason} |\n", verdict.class()));
    }
    table
}

/// The marks around the verdict table in a Markdown file (README.md): `softgen experiment
/// table --write FILE` replaces what lies between them, and a test reads it from there.
pub const VERDICT_TABLE_BEGIN: &str =
    "<!-- verdicts: begin (written by `softgen experiment table --write README.md`) -->";
/// See `VERDICT_TABLE_BEGIN`.
pub const VERDICT_TABLE_END: &str = "<!-- verdicts: end -->";

/// Where the verdict table lies in `document`: the text between its marks, which must stand
/// once each, in order; an error naming what is missing otherwise.
fn verdict_table_span(document: &str) -> Result<std::ops::Range<usize>, String> {
    let begin = document.find(VERDICT_TABLE_BEGIN).ok_or_else(|| format!("no line `{VERDICT_TABLE_BEGIN}`"))?;
    let start = begin + VERDICT_TABLE_BEGIN.len();
    let end = document[start..]
        .find(VERDICT_TABLE_END)
        .map(|i| start + i)
        .ok_or_else(|| format!("no line `{VERDICT_TABLE_END}` after `{VERDICT_TABLE_BEGIN}`"))?;
    if document[end + VERDICT_TABLE_END.len()..].contains(VERDICT_TABLE_BEGIN) {
        return Err(format!("`{VERDICT_TABLE_BEGIN}` stands more than once"));
    }
    Ok(start..end)
}

/// `document` with the text between the verdict table's marks replaced by `table`; an error
/// naming what is missing when the marks are not there once each, in order.
pub fn with_verdict_table(document: &str, table: &str) -> Result<String, String> {
    let span = verdict_table_span(document)?;
    Ok(format!("{}\n{table}{}", &document[..span.start], &document[span.end..]))
}

/// The rows of the verdict table between the marks in `document`: (experiment, class, first
/// reason) each, as [`verdict_table`] wrote them.
pub fn verdict_table_rows(document: &str) -> Result<Vec<(String, String, String)>, String> {
    let span = verdict_table_span(document)?;
    let mut rows = Vec::new();
    for line in document[span].lines().map(str::trim).filter(|l| l.starts_with('|')).skip(2) {
        // Cells split on `|` not escaped as `\\|`.
        let cells: Vec<String> =
            line.trim_matches('|').replace("\\|", "\u{0}").split('|').map(|c| c.trim().replace('\u{0}', "|")).collect();
        let [name, class, reason] = <[String; 3]>::try_from(cells)
            .map_err(|cells| format!("a verdict row has {} cells, not 3: {line}", cells.len()))?;
        rows.push((name, class, reason));
    }
    Ok(rows)
}

/// Whether the verdict table in `document` (README.md) gives `name` the class and first
/// reason of `verdict`, which a test computed by running the experiment: an error saying
/// how they differ and the command that rewrites the table.
pub fn check_verdict_row(document: &str, name: &str, verdict: &Verdict) -> Result<(), String> {
    let rows = verdict_table_rows(document)?;
    let (_, class, reason) =
        rows.iter().find(|(n, _, _)| n == name).ok_or_else(|| format!("the verdict table has no row `{name}`"))?;
    if (class.as_str(), reason.as_str()) == (verdict.class(), verdict.short_reason()) {
        return Ok(());
    }
    Err(format!(
        "the verdict table says `{name}`: {class}: {reason}; the run says {}: {} \
         (`softgen experiment table --write README.md` rewrites the table)",
        verdict.class(),
        verdict.short_reason()
    ))
}

impl ExperimentReport {
    /// The verdict line the command ends with.
    pub fn verdict_line(&self) -> String {
        match self.verdict.evidence() {
            "" => format!("verdict: {}", self.verdict.class()),
            why => format!("verdict: {}: {why}", self.verdict.class()),
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
    /// Runs it with outputs under `out/<name>/`, with a 3D page beside each trajectory it
    /// wrote when `view` is set (a line of the report names each, or says there is none).
    /// They are written into `out/<name>.partial/` and replace the folder only once the
    /// experiment has given its report and its pages: one that fails leaves an earlier
    /// folder as it was.
    pub fn run(&self, out: &Path, view: bool) -> Result<ExperimentReport, String> {
        let folder = out.join(self.name);
        let partial = out.join(format!("{}.partial", self.name));
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        let report = match (self.run)(&partial).and_then(|r| if view { self.add_pages(r, &partial) } else { Ok(r) }) {
            Ok(report) => report,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&partial);
                return Err(e);
            }
        };
        replace_folder(&partial, &folder)?;
        Ok(report)
    }

    /// Writes the page of every trajectory `report` names into `folder`, with a line for each.
    fn add_pages(&self, mut report: ExperimentReport, folder: &Path) -> Result<ExperimentReport, String> {
        if report.views.is_empty() {
            report.lines.push(format!("view: {} writes no trajectory to draw", self.name));
        }
        for run in &report.views {
            let (page, frames) = run.write_page(folder, self.name)?;
            report.lines.push(format!("view: {page} ({frames} frames of {})", run.csv));
        }
        Ok(report)
    }
}

/// Puts the folder `partial` in place of `folder`: the old one is moved aside first, and
/// put back if the move fails, so one of the two is always whole.
fn replace_folder(partial: &Path, folder: &Path) -> Result<(), String> {
    let aside = folder.with_file_name(format!(
        "{}.replaced",
        folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let _ = std::fs::remove_dir_all(&aside);
    let had_one = folder.exists();
    if had_one {
        std::fs::rename(folder, &aside).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    if let Err(e) = std::fs::rename(partial, folder) {
        if had_one {
            let _ = std::fs::rename(&aside, folder);
        }
        return Err(format!("{}: {e}", folder.display()));
    }
    if had_one {
        let _ = std::fs::remove_dir_all(&aside);
    }
    Ok(())
}

/// The parameters of `params` that differ from the spec's, by name: what a page of a run
/// with them needs.
pub(crate) fn changed_params<P: ParamSet>(params: &P) -> Vec<(String, f64)> {
    let spec = P::default();
    (0..P::names().len())
        .filter(|&i| params.get(i) != spec.get(i))
        .map(|i| (P::names()[i].to_string(), params.get(i)))
        .collect()
}

/// Reproduced when no reason to differ was found.
pub(crate) fn differs_if(reasons: Vec<String>) -> Verdict {
    if reasons.is_empty() {
        Verdict::Reproduced
    } else {
        Verdict::Differs(reasons.join("; "))
    }
}

/// Reproduced in the words of `matched` (what the paper states with no number, and the
/// run's figures that match it) when no reason to differ was found.
pub(crate) fn qualitative_unless(reasons: Vec<String>, matched: String) -> Verdict {
    if reasons.is_empty() {
        Verdict::Qualitative(matched)
    } else {
        Verdict::Differs(reasons.join("; "))
    }
}

/// A CSV file with its header, replacing an earlier one only once complete.
pub(crate) fn write_csv(path: &Path, header: &str, rows: &[String]) -> Result<(), String> {
    let (pending, file) = softgen_app::PendingFile::create(path)?;
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
    /// The experiment's name.
    pub experiment: &'static str,
    /// The figures one run gives, by name.
    pub figures: &'static [&'static str],
    /// Checks a run's settings: every key known, every value of the right type.
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

#[cfg(test)]
mod tests {
    use super::{Experiment, ExperimentReport, Verdict};
    use std::path::Path;

    fn writes_then_succeeds(folder: &Path) -> Result<ExperimentReport, String> {
        super::write_csv(&folder.join("run.csv"), "t", &["2".into()])?;
        Ok(ExperimentReport { lines: vec![], views: vec![], verdict: Verdict::Reproduced })
    }

    fn writes_then_fails(folder: &Path) -> Result<ExperimentReport, String> {
        super::write_csv(&folder.join("run.csv"), "t", &["3".into()])?;
        std::fs::write(folder.join("extra.txt"), "from the failed run").map_err(|e| e.to_string())?;
        Err("the run stopped early".into())
    }

    #[test]
    fn a_failed_experiment_leaves_the_earlier_folder_as_it_was() {
        let out = tempfile::tempdir().unwrap();
        let good = Experiment { name: "scratch", what: "", run: writes_then_succeeds };
        let bad = Experiment { name: "scratch", what: "", run: writes_then_fails };
        let folder = out.path().join("scratch");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("stale.txt"), "from an older version").unwrap();
        good.run(out.path(), false).unwrap();
        assert_eq!(std::fs::read_to_string(folder.join("run.csv")).unwrap(), "t\n2\n");
        assert!(!folder.join("stale.txt").exists(), "a finished experiment replaces the whole folder");
        assert!(bad.run(out.path(), false).is_err());
        assert_eq!(std::fs::read_to_string(folder.join("run.csv")).unwrap(), "t\n2\n");
        assert!(!folder.join("extra.txt").exists());
        let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["scratch"], "nothing else is left in the output folder");
    }
}

/// A control task's path seen from above, `path_xy.png` (and .svg) in `out`: the centre of
/// mass at each plan and the goal.
pub(crate) fn plot_path_to_goal(
    title: &str,
    path: Vec<(f64, f64)>,
    goal: (f64, f64),
    out: &std::path::Path,
) -> Result<(), String> {
    use softgen_app::{plot_paths_in, Series};
    // The goal as a cross (a series of one point draws no line), 2 % of the path's extent.
    let extent = path
        .iter()
        .chain(std::iter::once(&goal))
        .fold(0.0_f64, |e, p| e.max((p.0 - goal.0).abs()).max((p.1 - goal.1).abs()));
    let d = (0.02 * extent).max(1e-3);
    let (x, y) = goal;
    let cross = vec![(x - d, y), (x + d, y), (x, y), (x, y - d), (x, y + d)];
    let series = vec![
        Series { name: "centre of mass".into(), colour: [40, 60, 200], points: path },
        Series { name: "goal".into(), colour: [200, 40, 40], points: cross },
    ];
    plot_paths_in(title, ("x (m)", "y (m)"), &series, &out.join("path_xy.png"))
}

/// A control task's planner time per plan (ms) against time, `planner.png` (and .svg) in `out`.
pub(crate) fn plot_plan_times(title: &str, times: Vec<(f64, f64)>, out: &std::path::Path) -> Result<(), String> {
    use softgen_app::{plot_time_series, Series};
    let series = vec![Series { name: "plan".into(), colour: [30, 150, 60], points: times }];
    plot_time_series(title, "ms", &series, &out.join("planner.png"))
}

/// A control task's closing lines and verdict: `goal: reached at t = T s (distance D m)` or
/// `goal: not reached (distance D m)`; `reached` only with no plan past its period.
pub(crate) fn control_task_verdict(
    lines: &mut Vec<String>,
    reached_at: Option<f64>,
    final_distance: f64,
    statistics: &softgen_runtime::PlannerStatistics,
    period: f64,
    simulated: f64,
    goal: &str,
) -> Verdict {
    match reached_at {
        Some(at) => {
            lines.push(format!("goal: reached at t = {at:.2} s (distance {final_distance:.3} m)"));
            if statistics.overruns > 0 {
                Verdict::Differs(format!(
                    "reached at t = {at:.2} s, but {} of {} plans overran the {:.0} ms period",
                    statistics.overruns,
                    statistics.plans,
                    period * 1e3
                ))
            } else {
                Verdict::Reached
            }
        }
        None => {
            lines.push(format!("goal: not reached (distance {final_distance:.3} m)"));
            Verdict::Differs(format!(
                "the {goal} was not reached and held within {simulated:.0} s: {final_distance:.3} m from it at the end"
            ))
        }
    }
}
