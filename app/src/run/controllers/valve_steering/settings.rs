//! The settings of the valve sampler (MPPI over a valve wave's supply pressure, frequency and
//! offset), read from the run configuration's `[mpc]` table.

use crate::run::controllers::MpcFile;
use nalgebra::Vector2;
use softgen_runtime::{ValveDecisions, ValvePlannerConfig};

/// Settings of the valve sampler's model-predictive control (see
/// `softgen_runtime::ValvePlanner`): triples are (supply pressure in the supply parameter's
/// unit, frequency in Hz, offset).
#[derive(Clone, Debug, PartialEq)]
pub struct ValveMpcSettings {
    /// Where the centre of mass should go, in the ground plane (m, world frame).
    pub goal: Vector2<f64>,
    /// Re-planning rate (Hz).
    pub replan_hz: f64,
    /// Rollout length (s).
    pub horizon: f64,
    /// RK4's longest step in a rollout (s); steps also end on every valve switch.
    pub step: f64,
    /// Rollouts per plan, the current mean included.
    pub samples: usize,
    /// MPPI temperature relative to the spread of the costs.
    pub temperature: f64,
    /// Weight of the terminal heading error.
    pub heading_weight: f64,
    /// Standard deviations of the perturbations of the decisions.
    pub noise: ValveDecisions,
    /// Lower bounds of the decisions.
    pub min: ValveDecisions,
    /// Upper bounds of the decisions.
    pub max: ValveDecisions,
    /// Arrival: the centre of mass within this distance (m), held for `hold` s.
    pub arrival_radius: f64,
    /// See `arrival_radius`.
    pub hold: f64,
    /// Seed of the perturbations.
    pub seed: u64,
}

impl ValveMpcSettings {
    /// The planner's configuration for a goal, the supply being `supply_parameter`.
    pub fn planner(&self, goal: Vector2<f64>, supply_parameter: &str) -> ValvePlannerConfig {
        ValvePlannerConfig {
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
            pressure_parameter: supply_parameter.to_string(),
        }
    }
}

/// The valve sampler's settings: `noise`, `min` and `max` are the robot's own (its supply's
/// range has no default); the rest default to the settings the WPI snake's task measured
/// best (16 rollouts of 1 s at 5 ms steps, 20 Hz).
pub(crate) fn parse_valve_mpc(m: &MpcFile, goal: Vector2<f64>, rate_hz: f64) -> Result<ValveMpcSettings, String> {
    let decisions = |key: &str, triple: Option<[f64; 3]>| {
        triple
            .map(ValveDecisions::from_array)
            .ok_or_else(|| format!("`{key}` is required for a valve robot: [supply pressure, frequency (Hz), offset]"))
    };
    let settings = ValveMpcSettings {
        goal,
        replan_hz: m.replan_hz.unwrap_or(20.0),
        horizon: m.horizon.unwrap_or(1.0),
        step: m.step.unwrap_or(5e-3),
        samples: m.samples.unwrap_or(16),
        temperature: m.temperature.unwrap_or(0.3),
        heading_weight: m.heading_weight.unwrap_or(1.0),
        noise: decisions("noise", m.noise)?,
        min: decisions("min", m.min)?,
        max: decisions("max", m.max)?,
        arrival_radius: m.arrival_radius.unwrap_or(0.05),
        hold: m.hold.unwrap_or(2.0),
        seed: m.seed.unwrap_or(1),
    };
    if !(settings.replan_hz.is_finite() && settings.replan_hz > 0.0 && settings.replan_hz <= rate_hz) {
        return Err(format!("replan_hz must be in (0, rate_hz = {rate_hz}], got {}", settings.replan_hz));
    }
    for (name, value) in [("arrival_radius", settings.arrival_radius), ("hold", settings.hold)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!("{name} must be finite and >= 0, got {value}"));
        }
    }
    settings.planner(goal, "supply").validate()?;
    Ok(settings)
}
