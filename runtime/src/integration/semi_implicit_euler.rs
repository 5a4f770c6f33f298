//! Semi-implicit (symplectic) Euler: velocity first, then position with the new velocity.

use crate::integration::integrator::{check_step, IntegrationError, Integrator, SecondOrderSystem, StepReport};
use crate::robot::state::State;
use nalgebra::SVector;

/// Fixed-step semi-implicit Euler (one right-hand side per step). First order, but
/// symplectic: energy of a conservative system oscillates instead of drifting.
#[derive(Clone, Copy, Debug)]
pub struct SemiImplicitEuler {
    /// The fixed step (s).
    pub step: f64,
}

impl SemiImplicitEuler {
    /// An integrator of fixed `step` (s), once the step is in its range.
    pub fn new(step: f64) -> Result<Self, IntegrationError> {
        check_step(step)?;
        Ok(SemiImplicitEuler { step })
    }
}

impl<const N: usize> Integrator<N> for SemiImplicitEuler {
    fn step<S: SecondOrderSystem<N>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
    ) -> Result<StepReport, IntegrationError> {
        let h = self.step.min(t_end - *t);
        // Fixed steps cannot end at an event: modes switch at the step after it.
        system.switch_modes(*t, x);
        let mut qdd = SVector::<f64, N>::zeros();
        system.acceleration(*t, &x.q, &x.qd, &mut qdd)?;
        let qd = x.qd + qdd * h;
        let next = State { q: x.q + qd * h, qd };
        if !next.is_finite() {
            return Err(IntegrationError::NonFinite { time: *t });
        }
        *x = next;
        *t += h;
        Ok(StepReport { step: h, evaluations: 1, rejected: 0 })
    }
}
