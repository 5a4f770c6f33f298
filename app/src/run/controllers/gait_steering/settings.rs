//! The settings of the gait sampler (MPPI over a serpenoid gait's amplitude, temporal frequency
//! and offset), read from the run configuration's `[mpc]` table.

use crate::run::controllers::MpcFile;
use nalgebra::Vector2;
use softgen_runtime::GaitParameters;

/// Settings of the model-predictive controller (see `softgen_runtime::GaitPlanner`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpcSettings {
    /// Where the centre of mass should go, in the ground plane (m).
    pub goal: Vector2<f64>,
    /// Re-planning rate (Hz).
    pub replan_hz: f64,
    /// Rollout length (s).
    pub horizon: f64,
    /// Rollout step (s), semi-implicit Euler.
    pub step: f64,
    /// Rollouts per plan, the current plan included.
    pub samples: usize,
    /// MPPI temperature relative to the costs' spread.
    pub temperature: f64,
    /// The final distance counts (1 + w a / pi) times, a the angle between the direction of travel
    /// and the way to the goal.
    pub heading_weight: f64,
    /// Standard deviations of the perturbations of (amplitude, temporal frequency, offset).
    pub noise: GaitParameters,
    /// The gait's lower bounds.
    pub min: GaitParameters,
    /// The gait's upper bounds.
    pub max: GaitParameters,
    /// Time constant with which the gait follows a new plan (s).
    pub lag: f64,
    /// Arrival: the centre of mass within this distance of the goal (m).
    pub arrival_radius: f64,
    /// After arrival the gait fades out this long (s), then the run ends.
    pub settle: f64,
    /// Seed of the perturbations.
    pub seed: u64,
}

impl Default for MpcSettings {
    /// Tuned on the lateral-undulation snake on passive wheels: 32 rollouts of 1 s at 2 ms
    /// take about 20 ms on one core, inside the 50 ms of 20 Hz re-planning.
    fn default() -> Self {
        MpcSettings {
            goal: Vector2::zeros(),
            replan_hz: 20.0,
            horizon: 1.0,
            step: 0.002,
            samples: 32,
            temperature: 0.3,
            heading_weight: 2.0,
            noise: GaitParameters { amplitude: 0.15, temporal_frequency: 0.4, offset: 0.15 },
            min: GaitParameters { amplitude: 0.2, temporal_frequency: -2.5, offset: -0.6 },
            max: GaitParameters { amplitude: 1.2, temporal_frequency: 2.5, offset: 0.6 },
            lag: 0.3,
            arrival_radius: 0.1,
            settle: 1.0,
            seed: 1,
        }
    }
}

/// An (amplitude, temporal frequency, offset) triple as gait parameters.
fn triple([amplitude, temporal_frequency, offset]: [f64; 3]) -> GaitParameters {
    GaitParameters { amplitude, temporal_frequency, offset }
}

/// The gait sampler's settings from `m`, aimed at `goal`, replanning at most at `rate_hz`.
pub(crate) fn parse_mpc(m: &MpcFile, goal: Vector2<f64>, rate_hz: f64) -> Result<MpcSettings, String> {
    let d = MpcSettings::default();
    let settings = MpcSettings {
        goal,
        replan_hz: m.replan_hz.unwrap_or(d.replan_hz),
        horizon: m.horizon.unwrap_or(d.horizon),
        step: m.step.unwrap_or(d.step),
        samples: m.samples.unwrap_or(d.samples),
        temperature: m.temperature.unwrap_or(d.temperature),
        heading_weight: m.heading_weight.unwrap_or(d.heading_weight),
        noise: m.noise.map_or(d.noise, triple),
        min: m.min.map_or(d.min, triple),
        max: m.max.map_or(d.max, triple),
        lag: m.lag.unwrap_or(d.lag),
        arrival_radius: m.arrival_radius.unwrap_or(d.arrival_radius),
        settle: m.settle.unwrap_or(d.settle),
        seed: m.seed.unwrap_or(d.seed),
    };
    if !(settings.replan_hz.is_finite() && settings.replan_hz > 0.0 && settings.replan_hz <= rate_hz) {
        return Err(format!("replan_hz must be in (0, rate_hz = {rate_hz}], got {}", settings.replan_hz));
    }
    settings.planner(settings.goal).validate()?;
    Ok(settings)
}

impl MpcSettings {
    /// The planner's configuration for a goal.
    pub fn planner(&self, goal: Vector2<f64>) -> softgen_runtime::PlannerConfig {
        softgen_runtime::PlannerConfig {
            samples: self.samples,
            horizon: self.horizon,
            step: self.step,
            noise: self.noise,
            min: self.min,
            max: self.max,
            temperature: self.temperature,
            goal,
            heading_weight: self.heading_weight,
            seed: self.seed,
        }
    }
}
