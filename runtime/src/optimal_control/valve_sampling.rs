//! Model-predictive steering of a valve-driven robot (the WPI snake of 001): MPPI over its
//! valve wave's supply pressure, frequency and offset, every candidate scored by a rollout
//! of the generated model with its valves' closed-form response (`simulation::valve_driven`).
//!
//! Why sampling and not box-DDP: a valve is open or shut (eq 13's sign), so a plan over the
//! valve states has no gradient to follow, and over the wave's parameters only the switching
//! times move with them. Three decisions are few enough that tens of rollouts cover them,
//! as the gait sampler covers the rigid snake's three.

use crate::integration::integrator::IntegrationError;
use crate::optimal_control::sampling::{validate_parameters, validate_sampling, ParameterSampler};
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::valve_driven::{SteeredValveWave, ValveDecisions, ValveDriven, VALVE_DECISIONS};
use nalgebra::Vector2;

/// The valve planner's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ValvePlannerConfig {
    /// Rollouts per plan, the current mean included.
    pub samples: usize,
    /// Rollout length (s).
    pub horizon: f64,
    /// RK4's longest step in a rollout (s); steps also end on every valve switch.
    pub step: f64,
    /// Standard deviation of the perturbations of pressure, frequency and offset.
    pub noise: ValveDecisions,
    /// The decisions' lower bounds.
    pub min: ValveDecisions,
    /// The decisions' upper bounds.
    pub max: ValveDecisions,
    /// MPPI temperature relative to the costs' spread.
    pub temperature: f64,
    /// Where the centre of mass should go, in the ground plane (m).
    pub goal: Vector2<f64>,
    /// Weight of the terminal heading error (see [`ValvePlanner::rollout`]); 0 plans on
    /// distances alone.
    pub heading_weight: f64,
    /// Seed of the perturbations.
    pub seed: u64,
    /// The spec's parameter the supply pressure is (`supply_pressure` for 001's snake).
    pub pressure_parameter: String,
}

impl ValvePlannerConfig {
    /// Checks the sampling settings and bounds, and a lowest frequency above 0 Hz.
    pub fn validate(&self) -> Result<(), String> {
        validate_sampling(self.samples, (self.horizon, self.step), self.temperature, self.heading_weight, self.goal)?;
        validate_parameters(VALVE_DECISIONS, (self.noise.to_array(), self.min.to_array(), self.max.to_array()))?;
        if self.min.frequency <= 0.0 {
            return Err(format!(
                "planner bounds of the frequency must be above 0 Hz (a wave that stops holds its valves), got {}",
                self.min.frequency
            ));
        }
        Ok(())
    }
}

/// What the valve planner starts from: the measured state and the wave as it is then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValveSnapshot<const N: usize> {
    /// The measurement's time (s).
    pub time: f64,
    /// The measured state.
    pub state: State<N>,
    /// The wave then.
    pub wave: SteeredValveWave,
}

/// One valve plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValvePlan {
    /// The wave's new decisions.
    pub decisions: ValveDecisions,
    /// Cost of the best rollout.
    pub best_cost: f64,
    /// Cost of the rollout of the previous mean (the wave that was being followed).
    pub nominal_cost: f64,
    /// Rollouts run.
    pub rollouts: usize,
    /// Rollouts that failed; they get no weight.
    pub failed: usize,
}

/// MPPI over a valve wave's decisions with rollouts of the robot it drives.
pub struct ValvePlanner<R: Model<N, C>, const N: usize, const C: usize> {
    model: ValveDriven<R, N, C>,
    config: ValvePlannerConfig,
    sampler: ParameterSampler,
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValvePlanner<R, N, C> {
    /// A planner over `simulation` (the robot in its environment; its valves are driven by
    /// their responses) whose first mean is `initial`.
    pub fn new(
        simulation: crate::simulation::closed_loop::Simulation<R, N, C>,
        config: ValvePlannerConfig,
        initial: ValveDecisions,
    ) -> Result<Self, String> {
        config.validate()?;
        if !initial.to_array().iter().all(|v| v.is_finite()) {
            return Err(format!("initial valve decisions must be finite, got {initial:?}"));
        }
        let delay = R::VALVE_GAIT
            .ok_or_else(|| {
                format!("robot `{}` declares no valve wave ([gait] kind = \"travelling_wave_valves\")", R::NAME)
            })?
            .delay;
        let start = State::new(
            nalgebra::SVector::from_iterator(R::INITIAL_POSITION.iter().copied()),
            nalgebra::SVector::zeros(),
        );
        let system = ValveDriven::prescribed(simulation, 0.0, &start)?;
        let model = ValveDriven::new(
            system,
            SteeredValveWave::new(delay, 0.0, initial),
            &config.pressure_parameter,
            config.step,
        )?;
        let bounds = (config.noise.to_array(), config.min.to_array(), config.max.to_array());
        let sampler =
            ParameterSampler::new(config.samples, bounds, config.temperature, config.seed, initial.to_array());
        Ok(ValvePlanner { model, config, sampler })
    }

    /// The planner's settings.
    pub fn config(&self) -> &ValvePlannerConfig {
        &self.config
    }

    /// The decisions the last plan chose.
    pub fn mean(&self) -> ValveDecisions {
        ValveDecisions::from_array(self.sampler.mean)
    }

    /// Plans from `snapshot`.
    pub fn plan(&mut self, snapshot: &ValveSnapshot<N>) -> ValvePlan {
        let (model, config) = (&mut self.model, &self.config);
        let sampled =
            self.sampler.plan(|candidate| rollout(model, config, snapshot, ValveDecisions::from_array(candidate)));
        ValvePlan {
            decisions: self.mean(),
            best_cost: sampled.best_cost,
            nominal_cost: sampled.nominal_cost,
            rollouts: self.config.samples,
            failed: sampled.failed,
        }
    }

    /// Cost of `decisions` from `snapshot` over one horizon: the mean distance of the centre
    /// of mass from the goal over the horizon, plus its distance at the end counted (1 + w a)
    /// times, a the angle (over pi) between the way the centre of mass moved over the
    /// horizon's second half and the way to the goal: the turning still to come.
    pub fn rollout(&mut self, snapshot: &ValveSnapshot<N>, decisions: ValveDecisions) -> Result<f64, String> {
        rollout(&mut self.model, &self.config, snapshot, decisions)
    }
}

fn rollout<R: Model<N, C>, const N: usize, const C: usize>(
    model: &mut ValveDriven<R, N, C>,
    config: &ValvePlannerConfig,
    snapshot: &ValveSnapshot<N>,
    decisions: ValveDecisions,
) -> Result<f64, String> {
    let (mut t, mut x) = (snapshot.time, snapshot.state);
    model.system.restart(t, &x);
    model.wave = snapshot.wave;
    model.apply(t, decisions, &mut x)?;
    let distance = |com: Vector2<f64>| (com - config.goal).norm();
    let mut com = model.ground_center_of_mass(&x);
    let (mut running, mut previous) = (0.0, distance(com));
    let end = snapshot.time + config.horizon;
    let steps = (config.horizon / config.step).ceil().max(1.0) as usize;
    let mut halfway = com;
    for k in 1..=steps {
        let to = if k == steps { end } else { snapshot.time + k as f64 * config.step };
        let before = t;
        model.advance(&mut t, &mut x, to)?;
        if !x.is_finite() {
            return Err(IntegrationError::NonFinite { time: t }.to_string());
        }
        com = model.ground_center_of_mass(&model.exact_state(t, &x));
        let now = distance(com);
        running += 0.5 * (previous + now) * (t - before);
        previous = now;
        if k == steps / 2 {
            halfway = com;
        }
    }
    let heading = match ((com - halfway).try_normalize(1e-9), (config.goal - com).try_normalize(1e-9)) {
        (Some(travel), Some(to_goal)) => travel.dot(&to_goal).clamp(-1.0, 1.0).acos() / std::f64::consts::PI,
        _ => 0.0,
    };
    Ok(running / config.horizon + previous * (1.0 + config.heading_weight * heading))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_name_the_setting() {
        let good = ValvePlannerConfig {
            samples: 8,
            horizon: 1.0,
            step: 0.005,
            noise: ValveDecisions { pressure: 3.0, frequency: 0.2, offset: 0.2 },
            min: ValveDecisions { pressure: 20.0, frequency: 1.0, offset: -0.8 },
            max: ValveDecisions { pressure: 55.0, frequency: 2.0, offset: 0.8 },
            temperature: 0.3,
            goal: Vector2::new(1.0, 0.0),
            heading_weight: 1.0,
            seed: 1,
            pressure_parameter: "supply_pressure".into(),
        };
        assert!(good.validate().is_ok());
        let e = ValvePlannerConfig { min: ValveDecisions { frequency: 0.0, ..good.min }, ..good.clone() }
            .validate()
            .unwrap_err();
        assert!(e.contains("frequency"), "{e}");
        let e = ValvePlannerConfig { max: ValveDecisions { offset: -1.0, ..good.max }, ..good.clone() }
            .validate()
            .unwrap_err();
        assert!(e.contains("offset"), "{e}");
        let e = ValvePlannerConfig { step: 2.0, ..good }.validate().unwrap_err();
        assert!(e.contains("step"), "{e}");
    }
}
