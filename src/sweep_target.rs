//! What one run of a sweep runs: a robot's simulation with any `simulate` setting, or the
//! run an experiment is made of (the WPI snake's valve-wave run of 001, the pinniped's gait
//! trial of 002), and the figures each gives.

use crate::pinniped::{run_trial, Gait, Trial};
use crate::robots::{known_parameters, with_robot};
use crate::run_settings::RunSettings;
use crate::scenario::run_scenario;
use crate::wpi_snake::{run_snake, SnakeModel, SnakeRun};
use serde::Deserialize;
use softgen_runtime::ParamSet;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::{Table, Value};

/// What each run of a sweep runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// `softgen simulate --robot NAME` with the run's settings.
    Robot(String),
    /// The WPI snake run of a 001 experiment; its defaults are that experiment's.
    WpiSnake { experiment: &'static str, frequency: f64, pressure: f64, offset: f64, duration: f64 },
    /// One pinniped gait trial of 002-protocol.
    PinnipedTrial,
}

/// The figures of a robot's simulation.
const ROBOT_FIGURES: &[&str] = &[
    "displacement_x",
    "displacement_y",
    "displacement_z",
    "mean_velocity_x",
    "mean_velocity_y",
    "mean_velocity_z",
    "com_end_x",
    "com_end_y",
    "com_end_z",
    "max_depth",
    "evaluations",
];

/// The figures of a WPI snake run: the cycle-averaged centre of mass's speed after the
/// transient (m/s) and the circle it fits (m; empty when the path is straight).
const SNAKE_FIGURES: &[&str] = &["speed", "radius", "radius_rms", "evaluations"];

/// The figures of a pinniped trial over its gait time: hub displacement (m), heading change
/// (rad, anticlockwise), path length (m), mean speed = path length / gait time (m/s) and
/// turn rate = heading change / gait time (rad/s).
const TRIAL_FIGURES: &[&str] =
    &["displacement_x", "displacement_y", "heading_change", "distance", "speed", "turn_rate", "evaluations"];

/// The sweepable experiments and their runs' defaults (the values the experiment uses).
const SNAKE_EXPERIMENTS: &[(&str, f64, f64, f64, f64)] = &[
    // (name, frequency Hz, pressure kPa, offset phi, duration s)
    ("001-speed-map", 1.5, 48.0, 0.0, 12.0),
    ("001-turning-map", 1.5, 48.0, 0.4, 12.0),
    ("001-trajectory", 2.0, 54.0, 0.4, 20.0),
    ("001-cost", 1.5, 48.0, 0.0, 500.0),
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

fn deserialize<T: for<'de> Deserialize<'de>>(settings: &Table) -> Result<T, String> {
    Value::Table(settings.clone()).try_into().map_err(|e: toml::de::Error| e.message().trim_end().to_string())
}

impl Target {
    /// A robot's simulation; the robot must exist.
    pub fn robot(name: &str) -> Result<Target, String> {
        with_robot(name, crate::robots::RobotName)?;
        Ok(Target::Robot(name.to_string()))
    }

    /// The run of a sweepable experiment.
    pub fn experiment(name: &str) -> Result<Target, String> {
        crate::experiment::find_experiment(name)?;
        if let Some(&(experiment, frequency, pressure, offset, duration)) =
            SNAKE_EXPERIMENTS.iter().find(|e| e.0 == name)
        {
            return Ok(Target::WpiSnake { experiment, frequency, pressure, offset, duration });
        }
        if name == "002-protocol" {
            return Ok(Target::PinnipedTrial);
        }
        let sweepable: Vec<&str> = SNAKE_EXPERIMENTS.iter().map(|e| e.0).chain(["002-protocol"]).collect();
        Err(format!(
            "experiment `{name}` is not made of runs a sweep can vary; sweep its robot instead (robot = \"...\" with `simulate`'s settings). Sweepable experiments: {}",
            sweepable.join(", ")
        ))
    }

    /// `robot NAME` or `experiment NAME`.
    pub fn describe(&self) -> String {
        match self {
            Target::Robot(name) => format!("robot {name}"),
            Target::WpiSnake { experiment, .. } => format!("experiment {experiment}"),
            Target::PinnipedTrial => "experiment 002-protocol".into(),
        }
    }

    /// Every figure a run of this target gives, in table order.
    pub fn figures(&self) -> &'static [&'static str] {
        match self {
            Target::Robot(_) => ROBOT_FIGURES,
            Target::WpiSnake { .. } => SNAKE_FIGURES,
            Target::PinnipedTrial => TRIAL_FIGURES,
        }
    }

    /// Checks a run's settings: every key known, every value of the right type.
    pub fn check(&self, settings: &Table) -> Result<(), String> {
        match self {
            Target::Robot(robot) => {
                let s: RunSettings = deserialize(settings)?;
                let names: Vec<&str> = s.params.keys().map(String::as_str).collect();
                with_robot(robot, crate::robots::KnownParameters(&names))?
            }
            Target::WpiSnake { .. } => {
                let s: SnakeSettings = deserialize(settings)?;
                snake_model(s.model.as_deref())?;
                known_parameters::<softgen_generated::wpi_snake::Params>(
                    "wpi_snake",
                    s.params.keys().map(String::as_str),
                )
            }
            Target::PinnipedTrial => {
                let s: TrialSettings = deserialize(settings)?;
                gait(s.gait.as_deref())?;
                known_parameters::<softgen_generated::pinniped::Params>("pinniped", s.params.keys().map(String::as_str))
            }
        }
    }

    /// Runs once with `settings` and returns every figure of [`Target::figures`] (None where a
    /// figure does not exist for this run, such as the radius of a straight path). `stop`
    /// set ends robot simulations and trials early, with an error.
    pub fn run(&self, settings: &Table, stop: &Arc<AtomicUsize>) -> Result<Vec<Option<f64>>, String> {
        match self {
            Target::Robot(robot) => {
                let settings: RunSettings = deserialize(settings)?;
                let mut scenario = settings.scenario(robot)?.scenario;
                scenario.stop = Some(Arc::clone(stop));
                scenario.snapshots = 0;
                let summary = run_scenario(&scenario, None, &mut |_| {})?;
                if let Some(e) = summary.error {
                    return Err(format!("stopped at t = {:.6} s: {e}", summary.simulated));
                }
                let start = summary.com_start();
                let end = summary.com_end();
                let d = end - start;
                let v = if summary.simulated > 0.0 { d / summary.simulated } else { nalgebra::Vector3::zeros() };
                Ok(vec![
                    d.x,
                    d.y,
                    d.z,
                    v.x,
                    v.y,
                    v.z,
                    end.x,
                    end.y,
                    end.z,
                    summary.max_depth,
                    summary.evaluations as f64,
                ]
                .into_iter()
                .map(Some)
                .collect())
            }
            Target::WpiSnake { frequency, pressure, offset, duration, .. } => {
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
            Target::PinnipedTrial => {
                let s: TrialSettings = deserialize(settings)?;
                let mut trial =
                    Trial::new(gait(s.gait.as_deref())?, s.stride.unwrap_or(0.08), s.frequency.unwrap_or(1.0));
                trial.duration = s.duration.unwrap_or(trial.duration);
                trial.settle = s.settle.unwrap_or(trial.settle);
                trial.ceiling = s.ceiling.unwrap_or(trial.ceiling);
                trial.step = s.step.unwrap_or(trial.step);
                trial.control_period = s.control_period.unwrap_or(trial.control_period);
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
        }
    }
}

fn snake_model(name: Option<&str>) -> Result<SnakeModel, String> {
    match name.unwrap_or("complex") {
        "complex" => Ok(SnakeModel::Complex),
        "simplified" => Ok(SnakeModel::Simplified),
        other => Err(format!("model `{other}`: expected `complex` or `simplified`")),
    }
}

fn gait(name: Option<&str>) -> Result<Gait, String> {
    let name = name.unwrap_or("backward");
    GAITS
        .iter()
        .find(|g| g.0 == name)
        .map(|g| g.1)
        .ok_or_else(|| format!("gait `{name}`: expected one of {}", GAITS.map(|g| g.0).join(", ")))
}

fn set_params<P: ParamSet>(params: &mut P, values: &BTreeMap<String, f64>) -> Result<(), String> {
    for (name, value) in values {
        if !value.is_finite() {
            return Err(format!("parameter `{name}` must be finite, got {value}"));
        }
        params.set(name, *value).map_err(|e| e.to_string())?;
    }
    params.check().map_err(|e| format!("parameters: {e}"))
}
