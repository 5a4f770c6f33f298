//! Model-predictive steering of a serpenoid gait: MPPI (model-predictive path integral) over
//! the gait's amplitude, temporal frequency and offset, every candidate scored by a rollout
//! of the generated model on its terrain.
//!
//! Why sampling and not gradients: the rollouts run through Coulomb friction whose direction
//! flips with every stroke, so the cost is a rough function of the gait parameters, and
//! three parameters are few enough that tens of rollouts per plan cover them. The planner
//! is warm-started: each plan shifts the previous mean by a cost-weighted average of
//! perturbed candidates, so successive plans refine one another at the re-planning rate.

use crate::integration::integrator::{IntegrationError, Integrator};
use crate::integration::semi_implicit_euler::SemiImplicitEuler;
use crate::optimal_control::sampling::{validate_parameters, validate_sampling, ParameterSampler};
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::closed_loop::Simulation;
use nalgebra::{SVector, Vector2};

/// The gait parameters the planner chooses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaitParameters {
    /// Amplitude A (rad).
    pub amplitude: f64,
    /// Temporal frequency omega (rad/s); its sign sets the direction of the travelling wave.
    pub temporal_frequency: f64,
    /// Offset added to every joint (rad); turns the robot.
    pub offset: f64,
}

impl GaitParameters {
    /// (amplitude, temporal frequency, offset): the order of the DDP wave's decisions.
    pub fn to_array(self) -> [f64; 3] {
        [self.amplitude, self.temporal_frequency, self.offset]
    }

    fn from_array(a: [f64; 3]) -> Self {
        GaitParameters { amplitude: a[0], temporal_frequency: a[1], offset: a[2] }
    }

    fn is_finite(&self) -> bool {
        self.to_array().iter().all(|v| v.is_finite())
    }
}

/// A serpenoid wave `A sin(phase + eta j) + offset` whose phase is accumulated, so changing
/// the frequency never makes the joints jump, and whose parameters follow their targets
/// through a first-order lag, so a new plan blends in. The controller in the loop and the
/// planner's rollouts step the same gait, so the rollouts predict what the robot is sent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteeredGait {
    /// Spatial frequency eta (rad), fixed.
    pub spatial_frequency: f64,
    /// Time constant of the lag (s); 0 applies targets at once.
    pub lag: f64,
    /// Wave phase (rad), kept in [0, 2 pi).
    pub phase: f64,
    /// Parameters in effect now.
    pub applied: GaitParameters,
    /// Parameters the applied ones are heading for.
    pub target: GaitParameters,
}

impl SteeredGait {
    /// A gait starting straight (zero amplitude and offset) and fading into `target`.
    pub fn new(spatial_frequency: f64, lag: f64, target: GaitParameters) -> Self {
        let applied = GaitParameters { amplitude: 0.0, temporal_frequency: target.temporal_frequency, offset: 0.0 };
        SteeredGait { spatial_frequency, lag, phase: 0.0, applied, target }
    }

    /// Desired angle of actuated joint `j` (0-based) now.
    #[inline]
    pub fn joint_angle(&self, j: usize) -> f64 {
        self.applied.amplitude * (self.phase + self.spatial_frequency * j as f64).sin() + self.applied.offset
    }

    /// Advances time by `dt`.
    #[inline]
    pub fn advance(&mut self, dt: f64) {
        let blend = lag_blend(self.lag, dt);
        let applied = self.applied.to_array();
        let target = self.target.to_array();
        self.applied =
            GaitParameters::from_array(std::array::from_fn(|i| applied[i] + blend * (target[i] - applied[i])));
        self.phase = (self.phase + self.applied.temporal_frequency * dt).rem_euclid(std::f64::consts::TAU);
    }
}

/// The fraction of the way to its target a first-order lag of time constant `lag` (s) moves
/// in `dt` (exact for a target held over the step); 1 for no lag. Shared by the sampler's
/// gait and box-DDP's lagged wave (`CommandSchedule::Wave`), so the two step alike.
pub(crate) fn lag_blend(lag: f64, dt: f64) -> f64 {
    if lag > 0.0 {
        1.0 - (-dt / lag).exp()
    } else {
        1.0
    }
}

/// What the planner starts from: the measured state and the gait as it is at that instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanningSnapshot<const N: usize> {
    /// The measurement's time (s).
    pub time: f64,
    /// The measured state.
    pub state: State<N>,
    /// The gait then.
    pub gait: SteeredGait,
}

/// Planner settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlannerConfig {
    /// Rollouts per plan, the current mean included.
    pub samples: usize,
    /// Rollout length (s).
    pub horizon: f64,
    /// Rollout integrator step (s), semi-implicit Euler.
    pub step: f64,
    /// Standard deviation of the perturbations of each parameter.
    pub noise: GaitParameters,
    /// Lower bounds of the parameters.
    pub min: GaitParameters,
    /// Upper bounds of the parameters.
    pub max: GaitParameters,
    /// MPPI temperature relative to the spread of the costs (mean minus best): small values
    /// follow the best candidate, large ones average them all.
    pub temperature: f64,
    /// Where the centre of mass should go, in the plane of motion (m).
    pub goal: Vector2<f64>,
    /// Weight of the terminal heading error: the final distance counts (1 + w (1 - cos a))
    /// times, a the angle between the direction of travel and the direction to the goal;
    /// 0 plans on distances alone.
    pub heading_weight: f64,
    /// Seed of the perturbations, so a plan can be repeated.
    pub seed: u64,
}

impl PlannerConfig {
    /// Checks the sampling settings, the bounds and the total model steps per plan.
    pub fn validate(&self) -> Result<(), String> {
        let bounds = (self.noise.to_array(), self.min.to_array(), self.max.to_array());
        let names = ["amplitude", "temporal frequency", "offset"];
        validate_sampling(self.samples, (self.horizon, self.step), self.temperature, self.heading_weight, self.goal)?;
        validate_parameters(names, bounds)
    }
}

/// One plan and what it cost to make.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// The new gait target.
    pub parameters: GaitParameters,
    /// Cost of the best rollout.
    pub best_cost: f64,
    /// Cost of the rollout of the previous mean (the plan that was being followed).
    pub nominal_cost: f64,
    /// Rollouts run.
    pub rollouts: usize,
    /// Rollouts that failed (non-finite state); they get no weight.
    pub failed: usize,
    /// The snapshot's time.
    pub time: f64,
}

/// MPPI over the gait parameters with rollouts of `model` (its gait must be unset: the
/// planner drives the joint servos' set points itself, as the controller on the robot does).
pub struct GaitPlanner<R: Model<N, C>, const N: usize, const C: usize> {
    rollouts: GaitRollouts<R, N, C>,
    sampler: ParameterSampler,
}

/// The gait planner's model and settings: what a rollout needs.
struct GaitRollouts<R: Model<N, C>, const N: usize, const C: usize> {
    model: Simulation<R, N, C>,
    config: PlannerConfig,
}

impl<R: Model<N, C>, const N: usize, const C: usize> GaitPlanner<R, N, C> {
    /// A planner whose first mean is `initial`.
    pub fn new(model: Simulation<R, N, C>, config: PlannerConfig, initial: GaitParameters) -> Result<Self, String> {
        config.validate()?;
        if model.config.gait.is_some() {
            return Err("the planner's model must have no gait: the planner sets the joint targets".into());
        }
        if !initial.is_finite() {
            return Err(format!("initial gait parameters must be finite, got {initial:?}"));
        }
        let bounds = (config.noise.to_array(), config.min.to_array(), config.max.to_array());
        let sampler =
            ParameterSampler::new(config.samples, bounds, config.temperature, config.seed, initial.to_array());
        Ok(GaitPlanner { rollouts: GaitRollouts { model, config }, sampler })
    }

    /// The planner's settings.
    pub fn config(&self) -> &PlannerConfig {
        &self.rollouts.config
    }

    /// Moves the goal; the plan's mean is kept.
    pub fn set_goal(&mut self, goal: Vector2<f64>) {
        self.rollouts.config.goal = goal;
    }

    /// The current mean, the gait the last plan chose.
    pub fn mean(&self) -> GaitParameters {
        GaitParameters::from_array(self.sampler.mean)
    }

    /// Plans from `snapshot`: rolls out the current mean and `samples - 1` perturbations of
    /// it, and moves the mean to their cost-weighted average.
    pub fn plan(&mut self, snapshot: &PlanningSnapshot<N>) -> Plan {
        let rollouts = &mut self.rollouts;
        let sampled = self.sampler.plan(|candidate| rollouts.rollout(snapshot, GaitParameters::from_array(candidate)));
        Plan {
            parameters: self.mean(),
            best_cost: sampled.best_cost,
            nominal_cost: sampled.nominal_cost,
            rollouts: self.rollouts.config.samples,
            failed: sampled.failed,
            time: snapshot.time,
        }
    }

    /// Cost of following `parameters` from `snapshot` for one horizon: the mean distance of
    /// the centre of mass from the goal over the horizon, plus its distance at the end
    /// weighted up by how far the body's direction of travel points away from the goal.
    pub fn rollout(
        &mut self,
        snapshot: &PlanningSnapshot<N>,
        parameters: GaitParameters,
    ) -> Result<f64, IntegrationError> {
        self.rollouts.rollout(snapshot, parameters)
    }

    /// The state one horizon after `snapshot` when following `parameters`: what a rollout
    /// predicts.
    pub fn predict(
        &mut self,
        snapshot: &PlanningSnapshot<N>,
        parameters: GaitParameters,
    ) -> Result<State<N>, IntegrationError> {
        self.rollouts.simulate(snapshot, parameters, |_, _, _| {}).map(|(x, _)| x)
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> GaitRollouts<R, N, C> {
    fn rollout(&mut self, snapshot: &PlanningSnapshot<N>, parameters: GaitParameters) -> Result<f64, IntegrationError> {
        let mut running = 0.0;
        let mut previous = (snapshot.time, self.distance(&snapshot.state));
        let (end, gait) = self.simulate(snapshot, parameters, |rollouts, t, x| {
            let distance = rollouts.distance(x);
            running += 0.5 * (previous.1 + distance) * (t - previous.0);
            previous = (t, distance);
        })?;
        let heading = self.heading_error(&end, &gait);
        Ok(running / self.config.horizon + previous.1 * (1.0 + self.config.heading_weight * heading))
    }

    /// Integrates the model from `snapshot` for one horizon with the gait heading for
    /// `parameters`, calling `visit` after every step; returns the final state and gait.
    fn simulate(
        &mut self,
        snapshot: &PlanningSnapshot<N>,
        parameters: GaitParameters,
        mut visit: impl FnMut(&Self, f64, &State<N>),
    ) -> Result<(State<N>, SteeredGait), IntegrationError> {
        let mut integrator = SemiImplicitEuler::new(self.config.step)?;
        let mut gait = snapshot.gait;
        gait.target = parameters;
        let mut x = snapshot.state;
        let mut t = snapshot.time;
        let end = snapshot.time + self.config.horizon;
        let mut targets = SVector::<f64, N>::zeros();
        while end - t > 1e-9 {
            // The servo set points are held over each step, as the loop holds them over
            // each period.
            for j in 0..R::ACTUATED.len() {
                targets[j] = gait.joint_angle(j);
            }
            self.model.set_joint_targets(&targets);
            let before = t;
            integrator.step(&mut self.model, &mut t, &mut x, end)?;
            gait.advance(t - before);
            visit(self, t, &x);
        }
        Ok((x, gait))
    }

    fn distance(&self, x: &State<N>) -> f64 {
        let cache = R::cache(&x.q, &self.model.params);
        let com = R::center_of_mass(&x.q, &self.model.params, &cache);
        (Vector2::new(com.x, com.y) - self.config.goal).norm()
    }

    /// 1 - cos of the angle between the way the body travels and the way to the goal: a
    /// terminal cost standing for the turning still to come after the horizon. The body
    /// travels along its mean axis, against the travelling wave (wheels, scales: the
    /// anisotropic friction of lateral undulation), so the direction flips with the sign of
    /// omega / eta.
    fn heading_error(&self, x: &State<N>, gait: &SteeredGait) -> f64 {
        let cache = R::cache(&x.q, &self.model.params);
        let mut axes = [nalgebra::Vector3::zeros(); C];
        R::contact_axes_into(&x.q, &self.model.params, &cache, &mut axes);
        let mean_axis = axes.iter().fold(Vector2::zeros(), |sum, a| sum + Vector2::new(a.x, a.y));
        let com = R::center_of_mass(&x.q, &self.model.params, &cache);
        let to_goal = self.config.goal - Vector2::new(com.x, com.y);
        let wave = gait.applied.temporal_frequency * gait.spatial_frequency;
        let travel = if wave < 0.0 { -mean_axis } else { mean_axis };
        match (travel.try_normalize(1e-12), to_goal.try_normalize(1e-9)) {
            (Some(travel), Some(to_goal)) => travel.dot(&to_goal).clamp(-1.0, 1.0).acos() / std::f64::consts::PI,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steered_gait_blends_without_jumps() {
        let target = GaitParameters { amplitude: 1.0, temporal_frequency: 2.0, offset: 0.3 };
        let mut gait = SteeredGait::new(-1.0, 0.2, target);
        assert_eq!(gait.joint_angle(2), 0.0, "starts straight");
        let dt = 1e-3;
        let mut previous = gait.joint_angle(2);
        for k in 0..5000 {
            if k == 2500 {
                // A new plan: the wave reverses and turns the other way.
                gait.target = GaitParameters { amplitude: 0.5, temporal_frequency: -3.0, offset: -0.3 };
            }
            gait.advance(dt);
            let angle = gait.joint_angle(2);
            // Rate bound: A |omega| + the lag's blending of amplitude and offset.
            assert!((angle - previous).abs() < 0.02, "jump at step {k}: {previous} -> {angle}");
            previous = angle;
        }
        assert!((gait.applied.temporal_frequency + 3.0).abs() < 1e-4);
        assert!((gait.applied.offset + 0.3).abs() < 1e-4);
        assert!((0.0..std::f64::consts::TAU).contains(&gait.phase));
    }

    #[test]
    fn config_errors_name_the_setting() {
        let p = GaitParameters { amplitude: 1.0, temporal_frequency: 1.0, offset: 0.0 };
        let good = PlannerConfig {
            samples: 16,
            horizon: 1.0,
            step: 0.002,
            noise: p,
            min: GaitParameters { amplitude: 0.0, temporal_frequency: -2.0, offset: -0.5 },
            max: GaitParameters { amplitude: 1.2, temporal_frequency: 2.0, offset: 0.5 },
            temperature: 0.5,
            goal: Vector2::new(1.0, 0.0),
            heading_weight: 0.5,
            seed: 1,
        };
        assert!(good.validate().is_ok());
        let e = PlannerConfig { samples: 1, ..good }.validate().unwrap_err();
        assert!(e.contains("samples"), "{e}");
        let e = PlannerConfig { min: GaitParameters { offset: 0.6, ..good.min }, ..good }.validate().unwrap_err();
        assert!(e.contains("offset"), "{e}");
        let e = PlannerConfig { goal: Vector2::new(f64::NAN, 0.0), ..good }.validate().unwrap_err();
        assert!(e.contains("goal"), "{e}");
    }
}
