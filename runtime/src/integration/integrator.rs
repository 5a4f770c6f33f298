//! The integrator interface: a second-order system and solvers that step it one step at a
//! time or run it to an end time.

use crate::robot::state::State;
use nalgebra::{SMatrix, SVector};
use std::fmt;

/// A mechanical system qdd = f(t, q, qd), written into a `&mut` output.
pub trait SecondOrderSystem<const N: usize> {
    /// Writes the generalized accelerations at (t, q, qd) into `qdd`.
    fn acceleration(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &mut SVector<f64, N>,
    ) -> Result<(), IntegrationError>;

    /// The Jacobians of the accelerations, d(qdd)/dq into `by_position` and d(qdd)/d(qd)
    /// into `by_velocity`, for implicit and linearly implicit integrators. Exact or an
    /// approximation holding the stiff part (W-methods keep their order with either).
    /// Returns `Ok(false)` when the system gives none; integrators then use finite
    /// differences.
    fn acceleration_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<bool, IntegrationError> {
        let _ = (t, q, qd, by_position, by_velocity);
        Ok(false)
    }

    /// Systems with discrete modes switched by events (contacts that carry force only once
    /// their touchdown is located) switch them here to the state a step starts from, so that
    /// the right-hand side is smooth within the step. Returns true if the right-hand side
    /// changed, so that a stored Jacobian is stale. Integrators call it before every step;
    /// the default has no modes.
    fn switch_modes(&mut self, t: f64, x: &State<N>) -> bool {
        let _ = (t, x);
        false
    }

    /// After a step from `from` to `to` that error control would accept: if an event the
    /// step's modes do not include happened in it and the step went past it by more than the
    /// system locates events to, the fraction of the step (in (0, 1)) at which to end it
    /// instead. Adaptive integrators then retry with the shorter step; fixed-step ones cannot,
    /// and locate events to within one step. The default has no events.
    fn overshot_event(&mut self, from: &State<N>, to: &State<N>) -> Option<f64> {
        let _ = (from, to);
        None
    }
}

/// What one accepted step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Size of the accepted step (s).
    pub step: f64,
    /// Right-hand-side evaluations used, rejected attempts included.
    pub evaluations: usize,
    /// Attempts rejected by error control before this step was accepted.
    pub rejected: usize,
}

/// Why integration stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum IntegrationError {
    /// The state or its derivative became NaN or infinite.
    NonFinite {
        /// When (s).
        time: f64,
    },
    /// The mass matrix was not positive definite.
    SingularMassMatrix {
        /// When (s).
        time: f64,
    },
    /// Adaptive step size fell below the minimum.
    StepTooSmall {
        /// When (s).
        time: f64,
        /// The step it fell to (s).
        step: f64,
    },
    /// An invalid solver setting.
    InvalidSetting(String),
    /// Stopped from outside (a signal handler set the stop flag to the signal's number).
    Stopped {
        /// When (s).
        time: f64,
        /// The signal's number.
        signal: usize,
    },
    /// A controller's coordinates could not be computed from the model's (their map was
    /// singular).
    SingularControllerCoordinates {
        /// When (s).
        time: f64,
    },
}

impl fmt::Display for IntegrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntegrationError::NonFinite { time } => write!(f, "state became non-finite at t = {time} s"),
            IntegrationError::SingularMassMatrix { time } => {
                write!(f, "mass matrix not positive definite at t = {time} s")
            }
            IntegrationError::StepTooSmall { time, step } => {
                write!(f, "step size {step:e} s fell below the minimum at t = {time} s (system too stiff?)")
            }
            IntegrationError::InvalidSetting(s) => write!(f, "invalid integrator setting: {s}"),
            IntegrationError::Stopped { time, signal } => write!(f, "stopped by signal {signal} at t = {time} s"),
            IntegrationError::SingularControllerCoordinates { time } => {
                write!(f, "the controller's coordinates are singular at t = {time} s (its heading points coincide)")
            }
        }
    }
}

impl std::error::Error for IntegrationError {}

/// A one-step method. `step` advances (t, x) by at most `t_end - t`; `integrate_to` repeats
/// it until `t_end` is reached exactly.
pub trait Integrator<const N: usize> {
    /// Advances (t, x) by one step of at most `t_end - t`.
    fn step<S: SecondOrderSystem<N>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
    ) -> Result<StepReport, IntegrationError>;

    /// Steps until `t_end` is reached exactly.
    fn integrate_to<S: SecondOrderSystem<N>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
    ) -> Result<usize, IntegrationError> {
        let mut evaluations = 0;
        // A relative guard so that round-off in t never causes a zero-length extra step.
        while t_end - *t > 1e-12 * t_end.abs().max(1.0) {
            evaluations += self.step(system, t, x, t_end)?.evaluations;
        }
        *t = t_end;
        Ok(evaluations)
    }
}

pub(crate) fn derivative<const N: usize, S: SecondOrderSystem<N>>(
    system: &mut S,
    t: f64,
    x: &State<N>,
) -> Result<State<N>, IntegrationError> {
    let mut qdd = SVector::<f64, N>::zeros();
    system.acceleration(t, &x.q, &x.qd, &mut qdd)?;
    Ok(State { q: x.qd, qd: qdd })
}

/// The step to retry with after an attempt of `h` from `t` went past an event (see
/// [`SecondOrderSystem::overshot_event`]): the part of it up to the event, unless that is
/// below `min_step`.
pub(crate) fn step_to_event(t: f64, h: f64, fraction: f64, min_step: f64) -> Result<f64, IntegrationError> {
    let step = h * fraction;
    if step < min_step {
        return Err(IntegrationError::StepTooSmall { time: t, step });
    }
    Ok(step)
}

pub(crate) fn check_step(h: f64) -> Result<(), IntegrationError> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(IntegrationError::InvalidSetting(format!("step size must be positive and finite, got {h}")))
    }
}
