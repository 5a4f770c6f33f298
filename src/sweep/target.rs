//! What one run of a sweep runs: a robot's simulation with any `simulate` setting, or the
//! run an experiment is made of (as the papers' registry lists them), and the figures each
//! gives.

use crate::papers::experiment::{deserialize, ExperimentRuns};
use crate::robots::{robot, run_scenario};
use softgen_app::RunSettings;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use toml::Table;

/// What each run of a sweep runs.
#[derive(Clone, Debug)]
pub enum Target {
    /// `softgen simulate --robot NAME` with the run's settings.
    Robot(String),
    /// The run an experiment is made of; its defaults are that experiment's.
    Experiment(&'static ExperimentRuns),
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        match (self, other) {
            (Target::Robot(a), Target::Robot(b)) => a == b,
            (Target::Experiment(a), Target::Experiment(b)) => a.experiment == b.experiment,
            _ => false,
        }
    }
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

impl Target {
    /// A robot's simulation; the robot must exist.
    pub fn robot(name: &str) -> Result<Target, String> {
        robot(name)?;
        Ok(Target::Robot(name.to_string()))
    }

    /// The run of a sweepable experiment.
    pub fn experiment(name: &str) -> Result<Target, String> {
        crate::papers::find_experiment(name)?;
        if let Some(runs) = crate::papers::sweep_runs().find(|r| r.experiment == name) {
            return Ok(Target::Experiment(runs));
        }
        let sweepable: Vec<&str> = crate::papers::sweep_runs().map(|r| r.experiment).collect();
        Err(format!(
            "experiment `{name}` is not made of runs a sweep can vary; sweep its robot instead (robot = \"...\" with `simulate`'s settings). Sweepable experiments: {}",
            sweepable.join(", ")
        ))
    }

    /// `robot NAME` or `experiment NAME`.
    pub fn describe(&self) -> String {
        match self {
            Target::Robot(name) => format!("robot {name}"),
            Target::Experiment(runs) => format!("experiment {}", runs.experiment),
        }
    }

    /// Every figure a run of this target gives, in table order.
    pub fn figures(&self) -> &'static [&'static str] {
        match self {
            Target::Robot(_) => ROBOT_FIGURES,
            Target::Experiment(runs) => runs.figures,
        }
    }

    /// Checks a run's settings: every key known, every value of the right type.
    pub fn check(&self, settings: &Table) -> Result<(), String> {
        match self {
            Target::Robot(robot) => {
                let s: RunSettings = deserialize(settings)?;
                let names: Vec<&str> = s.params.keys().map(String::as_str).collect();
                crate::robots::robot(robot)?.known_parameters(&names)
            }
            Target::Experiment(runs) => (runs.check)(runs.experiment, settings),
        }
    }

    /// Runs once with `settings` and returns every figure of [`Target::figures`] (None where a
    /// figure does not exist for this run, such as the radius of a straight path). `stop`
    /// set ends robot simulations and trials early, with an error.
    pub fn run(&self, settings: &Table, stop: &Arc<AtomicUsize>) -> Result<Vec<Option<f64>>, String> {
        match self {
            Target::Robot(robot) => {
                let settings: RunSettings = deserialize(settings)?;
                let mut scenario = crate::robots::robot(robot)?.scenario(&settings)?.scenario;
                scenario.stop = Some(Arc::clone(stop));
                scenario.snapshots = 0;
                let summary = run_scenario(&scenario, None, &mut |_| {})?;
                if let Some(e) = summary.error {
                    let cause = summary.likely_cause.map_or(String::new(), |c| format!("; {c}"));
                    return Err(format!("stopped at t = {:.6} s: {e}{cause}", summary.simulated));
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
            Target::Experiment(runs) => (runs.run)(runs.experiment, settings, stop),
        }
    }
}
