//! Sweep files: a robot or an experiment, the settings every run shares, the settings that
//! vary (a grid, a list of points, or random samples with a seed) and the figures to keep,
//! turned into a numbered list of runs that is the same on every machine.
//!
//! ```toml
//! name = "pedal_wave_gait"          # optional: the file's stem
//! robot = "<name>"                 # a spec's file stem, or experiment = "001-speed-map"
//! figures = ["mean_velocity_x"]     # optional: every figure of the target
//! [base]                            # shared by every run: any key the target accepts
//! duration = 5.0
//! [grid]                            # every combination, the last key fastest
//! amplitude = [0.3, 0.5, 0.7]
//! temporal_frequency = { from = 1.0, to = 3.0, count = 3 }
//! [grid.params]                     # model parameters by name
//! link_mass = [0.1, 0.2]
//! ```
//! Instead of `[grid]`: `[[points]]` tables (one run each, all with the same keys), or
//! `[random]` with `count`, `seed` and `uniform` / `log_uniform` ranges `[low, high]` and
//! `choice` lists.

use crate::sweep::target::Target;
use serde::Serialize;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// One input of a run as the results table holds it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// A boolean.
    Flag(bool),
}

impl Cell {
    fn from_toml(value: &Value, at: &str) -> Result<Cell, String> {
        match value {
            Value::Float(x) => Ok(Cell::Number(*x)),
            Value::Integer(i) => Ok(Cell::Number(*i as f64)),
            Value::String(s) => Ok(Cell::Text(s.clone())),
            Value::Boolean(b) => Ok(Cell::Flag(*b)),
            other => Err(format!("{at}: expected a number, a string or a boolean, got {}", other.type_str())),
        }
    }

    /// The kind of column a cell goes in.
    pub fn kind(&self) -> CellKind {
        match self {
            Cell::Number(_) => CellKind::Number,
            Cell::Text(_) => CellKind::Text,
            Cell::Flag(_) => CellKind::Flag,
        }
    }
}

/// The type of an input column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CellKind {
    /// Numbers.
    Number,
    /// Strings.
    Text,
    /// Booleans.
    Flag,
}

/// A parsed sweep: every run's settings, ready to run.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep's name (its file stem).
    pub name: String,
    /// What each run runs: a robot's simulation or an experiment.
    pub target: Target,
    /// The varied keys (`params.NAME` for parameters), the table's input columns.
    pub inputs: Vec<(String, CellKind)>,
    /// The figures kept per run, the table's figure columns.
    pub figures: Vec<&'static str>,
    /// Each run's varied values, in `inputs` order.
    pub points: Vec<Vec<Cell>>,
    /// Each run's full settings table (base with the point's values), already checked
    /// against the target's keys.
    pub settings: Vec<Table>,
    /// A hash of everything that decides the results: a journal or shard of another sweep
    /// is refused by it.
    pub fingerprint: String,
}

const TOP_KEYS: [&str; 8] = ["name", "robot", "experiment", "figures", "base", "grid", "points", "random"];

impl Sweep {
    /// Parses a sweep file's text; `origin` names it in messages and its stem is the default
    /// name.
    pub fn parse(text: &str, origin: &str) -> Result<Sweep, String> {
        let table: Table =
            text.parse().map_err(|e: toml::de::Error| format!("{origin}: {}", e.to_string().trim_end()))?;
        Sweep::from_table(&table, origin).map_err(|e| format!("{origin}: {e}"))
    }

    fn from_table(table: &Table, origin: &str) -> Result<Sweep, String> {
        if let Some(key) = table.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            return Err(format!("unknown key `{key}`; a sweep has {}", TOP_KEYS.map(|k| format!("`{k}`")).join(", ")));
        }
        let name = match table.get("name") {
            None => std::path::Path::new(origin).file_stem().and_then(|s| s.to_str()).unwrap_or("sweep").to_string(),
            Some(Value::String(s))
                if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
            {
                s.clone()
            }
            Some(other) => {
                return Err(format!(
                    "`name` must be a non-empty string of letters, digits, `-`, `_` and `.`, got {other}"
                ))
            }
        };
        let target = match (table.get("robot"), table.get("experiment")) {
            (Some(Value::String(robot)), None) => Target::robot(robot)?,
            (None, Some(Value::String(experiment))) => Target::experiment(experiment)?,
            (Some(_), Some(_)) => return Err("give `robot` or `experiment`, not both".into()),
            (None, None) => {
                return Err("missing `robot = \"NAME\"` or `experiment = \"NAME\"`: what each run runs".into())
            }
            (Some(v), None) | (None, Some(v)) => {
                return Err(format!("`robot` / `experiment` must be a string, got {}", v.type_str()))
            }
        };
        let figures: Vec<&'static str> = match table.get("figures") {
            None => target.figures().to_vec(),
            Some(Value::Array(list)) if !list.is_empty() => list
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let name =
                        v.as_str().ok_or_else(|| format!("figures[{i}] must be a string, got {}", v.type_str()))?;
                    target.figures().iter().copied().find(|f| *f == name).ok_or_else(|| {
                        format!(
                            "figures[{i}]: `{name}` is not a figure of {}; its figures are {}",
                            target.describe(),
                            target.figures().join(", ")
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(format!("`figures` must be a non-empty list of names, got {other}")),
        };
        let base = match table.get("base") {
            None => Table::new(),
            Some(Value::Table(t)) => t.clone(),
            Some(other) => return Err(format!("`base` must be a table of settings, got {}", other.type_str())),
        };
        target.check(&base).map_err(|e| format!("base: {e}"))?;
        let plans = ["grid", "points", "random"].into_iter().filter(|k| table.contains_key(*k)).collect::<Vec<_>>();
        let (inputs, points) = match plans.as_slice() {
            ["grid"] => grid(table_at(table, "grid")?)?,
            ["points"] => listed(table.get("points").expect("checked"))?,
            ["random"] => random(table_at(table, "random")?)?,
            [] => return Err("nothing varies: add a `[grid]`, `[[points]]` or `[random]` table".into()),
            _ => return Err(format!("give one of `grid`, `points` and `random`, not {}", plans.join(" and "))),
        };
        if points.is_empty() {
            return Err("the sweep has no runs".into());
        }
        let mut settings = Vec::with_capacity(points.len());
        for (i, point) in points.iter().enumerate() {
            let mut merged = base.clone();
            for ((key, _), cell) in inputs.iter().zip(point) {
                insert_path(&mut merged, key, cell);
            }
            target.check(&merged).map_err(|e| format!("run {i} ({}): {e}", describe_point(&inputs, point)))?;
            settings.push(merged);
        }
        let fingerprint = fingerprint(&target, &inputs, &figures, &points, &settings);
        Ok(Sweep { name, target, inputs, figures, points, settings, fingerprint })
    }

    /// The runs of shard `index` of `count`: every run whose number is `index` modulo
    /// `count`, so shards are balanced along every axis of a grid.
    pub fn shard_runs(&self, shard: Option<Shard>) -> Vec<usize> {
        match shard {
            None => (0..self.points.len()).collect(),
            Some(s) => (0..self.points.len()).filter(|i| i % s.count == s.index).collect(),
        }
    }

    /// `key = value, ...` for run `i`, for messages and the progress line.
    pub fn describe_run(&self, i: usize) -> String {
        describe_point(&self.inputs, &self.points[i])
    }
}

/// One of `count` deterministic slices of a sweep (`index` from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This slice's index, from 0.
    pub index: usize,
    /// How many slices.
    pub count: usize,
}

impl Shard {
    /// Reads `K/N` (K from 0 to N - 1, as Slurm array and Kubernetes indexed jobs number
    /// their tasks).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text.split_once('/').ok_or_else(|| format!("--shard `{text}`: expected K/N, e.g. 0/4"))?;
        let index: usize = k.trim().parse().map_err(|_| format!("--shard `{text}`: `{k}` is not a whole number"))?;
        let count: usize = n.trim().parse().map_err(|_| format!("--shard `{text}`: `{n}` is not a whole number"))?;
        if count == 0 || index >= count {
            return Err(format!("--shard `{text}`: needs 0 <= K < N (shards are numbered from 0)"));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

fn describe_point(inputs: &[(String, CellKind)], point: &[Cell]) -> String {
    inputs
        .iter()
        .zip(point)
        .map(|((k, _), c)| match c {
            Cell::Number(x) => format!("{k} = {x}"),
            Cell::Text(s) => format!("{k} = \"{s}\""),
            Cell::Flag(b) => format!("{k} = {b}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn table_at<'a>(table: &'a Table, key: &str) -> Result<&'a Table, String> {
    table.get(key).and_then(Value::as_table).ok_or_else(|| format!("`{key}` must be a table"))
}

fn cell_to_toml(cell: &Cell) -> Value {
    match cell {
        // Whole numbers go in as integers, so counts (`transient_cycles`) take them; real
        // settings take integers as well.
        Cell::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Value::Integer(*x as i64),
        Cell::Number(x) => Value::Float(*x),
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Flag(b) => Value::Boolean(*b),
    }
}

/// Sets `a.b = cell` in `table`, making `a` a table if needed.
fn insert_path(table: &mut Table, key: &str, cell: &Cell) {
    match key.split_once('.') {
        Some((head, rest)) => {
            let entry = table.entry(head.to_string()).or_insert_with(|| Value::Table(Table::new()));
            if !entry.is_table() {
                *entry = Value::Table(Table::new());
            }
            insert_path(entry.as_table_mut().expect("made a table"), rest, cell);
        }
        None => {
            table.insert(key.to_string(), cell_to_toml(cell));
        }
    }
}

/// The leaves of `table` with dotted keys (`params.mass`), sorted by key.
fn leaves<'a>(table: &'a Table, prefix: &str, out: &mut Vec<(String, &'a Value)>) {
    // Sorted here, not by the map: the order is the table's columns and must not depend on
    // how the TOML crate was built.
    let mut entries: Vec<(&String, &Value)> = table.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in entries {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            // A table is a group (`params`) unless it is a `{ from, to, count }` range.
            Value::Table(t) if !t.contains_key("from") => leaves(t, &key, out),
            _ => out.push((key, v)),
        }
    }
}

/// One column's kind, checked the same for all its cells.
fn column_kind(key: &str, cells: &[Cell]) -> Result<CellKind, String> {
    let kind = cells.first().map(Cell::kind).ok_or_else(|| format!("`{key}` has no values"))?;
    if let Some(other) = cells.iter().find(|c| c.kind() != kind) {
        return Err(format!("`{key}` mixes {:?} and {:?} values; a column holds one kind", kind, other.kind()));
    }
    Ok(kind)
}

fn grid(table: &Table) -> Result<(Vec<(String, CellKind)>, Vec<Vec<Cell>>), String> {
    let mut axes = Vec::new();
    let mut found = Vec::new();
    leaves(table, "", &mut found);
    for (key, value) in found {
        let at = format!("grid.{key}");
        let cells: Vec<Cell> = match value {
            Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(i, v)| Cell::from_toml(v, &format!("{at}[{i}]")))
                .collect::<Result<_, _>>()?,
            Value::Table(range) => linspace(range, &at)?,
            other => {
                return Err(format!(
                    "{at}: expected a list of values or {{ from, to, count }}, got {}",
                    other.type_str()
                ))
            }
        };
        if cells.is_empty() {
            return Err(format!("{at}: no values"));
        }
        let kind = column_kind(&at, &cells)?;
        axes.push((key, kind, cells));
    }
    if axes.is_empty() {
        return Err("`grid` varies nothing".into());
    }
    let total: usize = axes.iter().map(|a| a.2.len()).product();
    if total > MAX_RUNS {
        return Err(format!("the grid has {total} runs, more than the limit of {MAX_RUNS}"));
    }
    let mut points = Vec::with_capacity(total);
    for mut i in 0..total {
        let mut point = vec![Cell::Flag(false); axes.len()];
        for (slot, axis) in point.iter_mut().zip(&axes).rev() {
            *slot = axis.2[i % axis.2.len()].clone();
            i /= axis.2.len();
        }
        points.push(point);
    }
    Ok((axes.into_iter().map(|(k, kind, _)| (k, kind)).collect(), points))
}

/// The most runs one sweep may have.
pub const MAX_RUNS: usize = 10_000_000;

fn number(table: &Table, key: &str, at: &str) -> Result<f64, String> {
    match table.get(key) {
        Some(Value::Float(x)) if x.is_finite() => Ok(*x),
        Some(Value::Integer(i)) => Ok(*i as f64),
        Some(other) => Err(format!("{at}.{key} must be a finite number, got {other}")),
        None => Err(format!("{at}: missing `{key}`")),
    }
}

/// `{ from, to, count }`: `count` evenly spaced values, both ends included.
fn linspace(range: &Table, at: &str) -> Result<Vec<Cell>, String> {
    if let Some(k) = range.keys().find(|k| !["from", "to", "count"].contains(&k.as_str())) {
        return Err(format!("{at}: unknown key `{k}` in a range; a range is {{ from, to, count }}"));
    }
    let from = number(range, "from", at)?;
    let to = number(range, "to", at)?;
    let count = match range.get("count") {
        Some(Value::Integer(n)) if *n >= 1 && (*n as usize) <= MAX_RUNS => *n as usize,
        Some(other) => return Err(format!("{at}.count must be a whole number from 1 to {MAX_RUNS}, got {other}")),
        None => return Err(format!("{at}: missing `count`")),
    };
    Ok((0..count)
        .map(|i| if count == 1 { from } else { from + (to - from) * i as f64 / (count - 1) as f64 })
        .map(Cell::Number)
        .collect())
}

fn listed(value: &Value) -> Result<(Vec<(String, CellKind)>, Vec<Vec<Cell>>), String> {
    let list = value.as_array().ok_or("`points` must be a list of tables ([[points]])")?;
    let mut keys: Option<Vec<String>> = None;
    let mut points = Vec::new();
    for (i, point) in list.iter().enumerate() {
        let table = point.as_table().ok_or_else(|| format!("points[{i}] must be a table, got {}", point.type_str()))?;
        let mut found = Vec::new();
        leaves(table, "", &mut found);
        let these: Vec<String> = found.iter().map(|(k, _)| k.clone()).collect();
        match &keys {
            None => keys = Some(these),
            Some(first) if *first != these => {
                return Err(format!(
                    "points[{i}] sets {} but points[0] sets {}; every point sets the same keys",
                    these.join(", "),
                    first.join(", ")
                ));
            }
            _ => {}
        }
        points.push(
            found
                .iter()
                .map(|(k, v)| Cell::from_toml(v, &format!("points[{i}].{k}")))
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    let keys = keys.ok_or("`points` is empty")?;
    if keys.is_empty() {
        return Err("points[0] varies nothing".into());
    }
    let inputs = keys
        .into_iter()
        .enumerate()
        .map(|(j, k)| {
            let column: Vec<Cell> = points.iter().map(|p: &Vec<Cell>| p[j].clone()).collect();
            column_kind(&format!("points.{k}"), &column).map(|kind| (k, kind))
        })
        .collect::<Result<_, _>>()?;
    Ok((inputs, points))
}

/// How a random input is drawn.
enum Draw {
    Uniform(f64, f64),
    LogUniform(f64, f64),
    Choice(Vec<Cell>),
}

fn random(table: &Table) -> Result<(Vec<(String, CellKind)>, Vec<Vec<Cell>>), String> {
    const KEYS: [&str; 5] = ["count", "seed", "uniform", "log_uniform", "choice"];
    if let Some(k) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("random: unknown key `{k}`; expected {}", KEYS.join(", ")));
    }
    let count = match table.get("count") {
        Some(Value::Integer(n)) if *n >= 1 && (*n as usize) <= MAX_RUNS => *n as usize,
        Some(other) => return Err(format!("random.count must be a whole number from 1 to {MAX_RUNS}, got {other}")),
        None => return Err("random: missing `count`".into()),
    };
    let seed = match table.get("seed") {
        Some(Value::Integer(n)) if *n >= 0 => *n as u64,
        Some(other) => return Err(format!("random.seed must be a whole number >= 0, got {other}")),
        None => return Err("random: missing `seed` (the same seed draws the same runs on every machine)".into()),
    };
    let mut draws: BTreeMap<String, Draw> = BTreeMap::new();
    for kind in ["uniform", "log_uniform", "choice"] {
        let Some(group) = table.get(kind) else { continue };
        let group = group.as_table().ok_or_else(|| format!("random.{kind} must be a table of key = [...]"))?;
        let mut found = Vec::new();
        leaves(group, "", &mut found);
        for (key, value) in found {
            let at = format!("random.{kind}.{key}");
            let list = value.as_array().ok_or_else(|| format!("{at} must be a list, got {}", value.type_str()))?;
            let draw = if kind == "choice" {
                let cells = list
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Cell::from_toml(v, &format!("{at}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?;
                if cells.is_empty() {
                    return Err(format!("{at}: no values to choose from"));
                }
                column_kind(&at, &cells)?;
                Draw::Choice(cells)
            } else {
                let bounds: Vec<f64> =
                    list.iter().filter_map(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).collect();
                let [low, high] = bounds[..] else {
                    return Err(format!("{at} must be [low, high], two numbers"));
                };
                if list.len() != 2 || !(low.is_finite() && high.is_finite() && low <= high) {
                    return Err(format!("{at} must be [low, high] with low <= high, finite, got [{low}, {high}]"));
                }
                if kind == "log_uniform" {
                    if low <= 0.0 {
                        return Err(format!("{at}: a log-uniform range needs low > 0, got {low}"));
                    }
                    Draw::LogUniform(low, high)
                } else {
                    Draw::Uniform(low, high)
                }
            };
            if draws.insert(key.clone(), draw).is_some() {
                return Err(format!("random: `{key}` is drawn twice"));
            }
        }
    }
    if draws.is_empty() {
        return Err("`random` varies nothing: add `uniform`, `log_uniform` or `choice`".into());
    }
    // Run i's value of input j depends only on (seed, i, j): any shard draws its runs alone.
    let points: Vec<Vec<Cell>> = (0..count)
        .map(|i| {
            draws
                .values()
                .enumerate()
                .map(|(j, draw)| {
                    let u = unit_interval(seed, i as u64, j as u64);
                    match draw {
                        Draw::Uniform(a, b) => Cell::Number(a + (b - a) * u),
                        Draw::LogUniform(a, b) => Cell::Number((a.ln() + (b.ln() - a.ln()) * u).exp().clamp(*a, *b)),
                        Draw::Choice(cells) => cells[((u * cells.len() as f64) as usize).min(cells.len() - 1)].clone(),
                    }
                })
                .collect()
        })
        .collect();
    let inputs = draws
        .iter()
        .map(|(k, d)| {
            let kind = match d {
                Draw::Choice(cells) => cells[0].kind(),
                _ => CellKind::Number,
            };
            (k.clone(), kind)
        })
        .collect();
    Ok((inputs, points))
}

/// SplitMix64's output function: a stable, well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) from (seed, run, input), the same on every machine and
/// version (53 random bits).
fn unit_interval(seed: u64, run: u64, input: u64) -> f64 {
    let h = mix(mix(mix(seed.wrapping_add(0x9e3779b97f4a7c15)) ^ run) ^ input.wrapping_mul(0x9e3779b97f4a7c15));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// FNV-1a over the canonical JSON of what decides the results.
fn fingerprint(
    target: &Target,
    inputs: &[(String, CellKind)],
    figures: &[&str],
    points: &[Vec<Cell>],
    settings: &[Table],
) -> String {
    let canonical = serde_json::json!({
        "target": target.describe(),
        "inputs": inputs,
        "figures": figures,
        "points": points,
        "settings": settings,
        "version": env!("CARGO_PKG_VERSION"),
    });
    let mut h: u64 = 0xcbf29ce484222325;
    for b in canonical.to_string().bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_draws_depend_on_seed_run_and_input_only() {
        let a = unit_interval(7, 3, 1);
        assert_eq!(a, unit_interval(7, 3, 1));
        assert_ne!(a, unit_interval(8, 3, 1));
        assert_ne!(a, unit_interval(7, 4, 1));
        let mean: f64 = (0..10_000).map(|i| unit_interval(1, i, 0)).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }

    #[test]
    fn shards_partition_the_runs() {
        for n in 1..5 {
            let mut all: Vec<usize> = (0..n).flat_map(|k| (0..11).filter(move |i| i % n == k)).collect();
            all.sort();
            assert_eq!(all, (0..11).collect::<Vec<_>>());
        }
        assert!(Shard::parse("4/4").is_err());
        assert!(Shard::parse("0/0").is_err());
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
    }
}
