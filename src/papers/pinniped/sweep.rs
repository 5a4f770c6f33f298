//! The runs the 002 tables' experiments are made of, for sweeps: one pinniped gait trial.

use super::model::{run_trial, Gait, Trial};
use crate::papers::experiment::{deserialize, set_params, ExperimentRuns};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::Table;

/// The figures of a pinniped trial over its gait time: hub displacement (m), heading change
/// (rad, anticlockwise), path length (m), mean speed = path length / gait time (m/s) and
/// turn rate = heading change / gait time (rad/s).
const TRIAL_FIGURES: &[&str] =
    &["displacement_x", "displacement_y", "heading_change", "distance", "speed", "turn_rate", "evaluations"];

/// The tables' trials, as the papers' registry lists them: a sweep of one varies any gait,
/// its `gait` key saying which (by default the table's first: Table I backward crawling, as
/// the sensitivities run it, Table II leftward, Table III counterclockwise).
pub(crate) const SWEEP_RUNS: [ExperimentRuns; 3] = [
    ExperimentRuns { experiment: "002-crawling", figures: TRIAL_FIGURES, check, run },
    ExperimentRuns { experiment: "002-crawl-and-turn", figures: TRIAL_FIGURES, check, run },
    ExperimentRuns { experiment: "002-turn-in-place", figures: TRIAL_FIGURES, check, run },
];

/// The settings of a pinniped trial (keys of a sweep file).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrialSettings {
    /// forward, backward, turn_left, turn_right, in_place_ccw, in_place_cw.
    gait: Option<String>,
    stride: Option<f64>,
    frequency: Option<f64>,
    duration: Option<f64>,
    settle: Option<f64>,
    ceiling: Option<f64>,
    step: Option<f64>,
    control_period: Option<f64>,
    contact_damping: Option<f64>,
    contact_dissipation: Option<f64>,
    #[serde(default)]
    params: BTreeMap<String, f64>,
}

const GAITS: [(&str, Gait); 6] = [
    ("forward", Gait::Forward),
    ("backward", Gait::Backward),
    ("turn_left", Gait::CrawlTurn { left: true }),
    ("turn_right", Gait::CrawlTurn { left: false }),
    ("in_place_ccw", Gait::InPlace { counterclockwise: true }),
    ("in_place_cw", Gait::InPlace { counterclockwise: false }),
];

/// Checks a run's settings: every key known, every value of the right type.
fn check(experiment: &str, settings: &Table) -> Result<(), String> {
    let s: TrialSettings = deserialize(settings)?;
    gait(experiment, s.gait.as_deref())?;
    softgen_app::known_parameters::<softgen_generated::pinniped::Params>(
        "pinniped",
        s.params.keys().map(String::as_str),
    )
}

/// One trial with `settings` in place of the protocol's: displacement, heading change,
/// distance, speed, turn rate and evaluations.
fn run(experiment: &str, settings: &Table, stop: &Arc<AtomicUsize>) -> Result<Vec<Option<f64>>, String> {
    let s: TrialSettings = deserialize(settings)?;
    let mut trial =
        Trial::new(gait(experiment, s.gait.as_deref())?, s.stride.unwrap_or(0.08), s.frequency.unwrap_or(1.0));
    trial.duration = s.duration.unwrap_or(trial.duration);
    trial.settle = s.settle.unwrap_or(trial.settle);
    trial.ceiling = s.ceiling.unwrap_or(trial.ceiling);
    trial.step = s.step.unwrap_or(trial.step);
    trial.control_period = s.control_period.unwrap_or(trial.control_period);
    trial.contact_damping = s.contact_damping;
    trial.contact_dissipation = s.contact_dissipation;
    trial.stop = Some(Arc::clone(stop));
    set_params(&mut trial.params, &s.params)?;
    let outcome = run_trial(&trial, |_| {})?;
    if let Some(e) = outcome.error {
        return Err(e.to_string());
    }
    let time = trial.duration;
    let rate = |x: f64| if time > 0.0 { x / time } else { 0.0 };
    Ok(vec![
        outcome.displacement.0,
        outcome.displacement.1,
        outcome.heading_change,
        outcome.distance,
        rate(outcome.distance),
        rate(outcome.heading_change),
        outcome.evaluations as f64,
    ]
    .into_iter()
    .map(Some)
    .collect())
}

/// The gait called `name`; by default the first of `experiment`'s table.
fn gait(experiment: &str, name: Option<&str>) -> Result<Gait, String> {
    let name = name.unwrap_or(match experiment {
        "002-crawl-and-turn" => "turn_left",
        "002-turn-in-place" => "in_place_ccw",
        _ => "backward",
    });
    GAITS
        .iter()
        .find(|g| g.0 == name)
        .map(|g| g.1)
        .ok_or_else(|| format!("gait `{name}`: expected one of {}", GAITS.map(|g| g.0).join(", ")))
}
