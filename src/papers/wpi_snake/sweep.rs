//! The runs 001's experiments are made of, for sweeps: one WPI snake run at a valve frequency,
//! supply pressure and offset with either model, its defaults those of the experiment swept.

use super::model::{run_snake, SnakeModel, SnakeRun};
use crate::papers::experiment::{deserialize, set_params, ExperimentRuns};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::Table;

/// The figures of a WPI snake run: the cycle-averaged centre of mass's speed after the
/// transient (m/s) and the circle it fits (m; empty when the path is straight).
const SNAKE_FIGURES: &[&str] = &["speed", "radius", "radius_rms", "evaluations"];

/// The sweepable experiments and their runs' defaults (the values the experiment uses).
const SNAKE_EXPERIMENTS: &[(&str, f64, f64, f64, f64)] = &[
    // (name, frequency Hz, pressure kPa, offset phi, duration s)
    ("001-speed-map", 1.5, 48.0, 0.0, 12.0),
    ("001-turning-map", 1.5, 48.0, 0.4, 12.0),
    ("001-trajectory", 2.0, 54.0, 0.4, 20.0),
    ("001-cost", 1.5, 48.0, 0.0, 500.0),
];

/// The sweepable experiments of 001, as the papers' registry lists them.
pub(crate) const SWEEP_RUNS: [ExperimentRuns; 4] = [
    ExperimentRuns { experiment: "001-speed-map", figures: SNAKE_FIGURES, check, run },
    ExperimentRuns { experiment: "001-turning-map", figures: SNAKE_FIGURES, check, run },
    ExperimentRuns { experiment: "001-trajectory", figures: SNAKE_FIGURES, check, run },
    ExperimentRuns { experiment: "001-cost", figures: SNAKE_FIGURES, check, run },
];

/// The settings of a WPI snake run (keys of a sweep file).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnakeSettings {
    /// `complex` or `simplified`.
    model: Option<String>,
    frequency: Option<f64>,
    pressure: Option<f64>,
    offset: Option<f64>,
    duration: Option<f64>,
    transient_cycles: Option<usize>,
    step: Option<f64>,
    #[serde(default)]
    params: BTreeMap<String, f64>,
}

/// Checks a run's settings: every key known, every value of the right type.
fn check(_experiment: &str, settings: &Table) -> Result<(), String> {
    let s: SnakeSettings = deserialize(settings)?;
    snake_model(s.model.as_deref())?;
    softgen_app::known_parameters::<softgen_generated::wpi_snake::Params>(
        "wpi_snake",
        s.params.keys().map(String::as_str),
    )
}

/// One run of `experiment` with `settings` in place of its defaults: speed, radius, radius
/// RMS and evaluations.
fn run(experiment: &str, settings: &Table, _stop: &Arc<AtomicUsize>) -> Result<Vec<Option<f64>>, String> {
    let &(_, frequency, pressure, offset, duration) = SNAKE_EXPERIMENTS
        .iter()
        .find(|e| e.0 == experiment)
        .ok_or_else(|| format!("experiment `{experiment}` is not one of 001's sweepable runs"))?;
    let (frequency, pressure, offset, duration) = (&frequency, &pressure, &offset, &duration);
    let s: SnakeSettings = deserialize(settings)?;
    let mut run = SnakeRun::new(
        snake_model(s.model.as_deref())?,
        s.frequency.unwrap_or(*frequency),
        s.pressure.unwrap_or(*pressure),
        s.offset.unwrap_or(*offset),
    );
    run.duration = s.duration.unwrap_or(*duration);
    run.transient_cycles = s.transient_cycles.unwrap_or(run.transient_cycles);
    run.step = s.step.unwrap_or(run.step);
    set_params(&mut run.params, &s.params)?;
    // Only the figures are kept: samples every 0.1 s, as the experiments take them.
    let outcome = run_snake(&run, ((0.1 / run.step).round() as usize).max(1), |_| {})?;
    Ok(vec![
        Some(outcome.speed),
        outcome.circle.map(|c| c.0),
        outcome.circle.map(|c| c.1),
        Some(outcome.evaluations as f64),
    ])
}

fn snake_model(name: Option<&str>) -> Result<SnakeModel, String> {
    match name.unwrap_or("complex") {
        "complex" => Ok(SnakeModel::Complex),
        "simplified" => Ok(SnakeModel::Simplified),
        other => Err(format!("model `{other}`: expected `complex` or `simplified`")),
    }
}
