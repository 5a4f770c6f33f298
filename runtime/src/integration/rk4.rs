//! Classical fixed-step fourth-order Runge-Kutta.

use crate::integration::integrator::{
    check_step, derivative, IntegrationError, Integrator, SecondOrderSystem, StepReport,
};
use crate::robot::state::State;

/// Fixed-step RK4 (four right-hand sides per step).
#[derive(Clone, Copy, Debug)]
pub struct RungeKutta4 {
    /// The fixed step (s).
    pub step: f64,
}

impl RungeKutta4 {
    /// An integrator of fixed `step` (s), once the step is in its range.
    pub fn new(step: f64) -> Result<Self, IntegrationError> {
        check_step(step)?;
        Ok(RungeKutta4 { step })
    }
}

impl<const N: usize> Integrator<N> for RungeKutta4 {
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
        let k1 = derivative(system, *t, x)?;
        let k2 = derivative(system, *t + 0.5 * h, &x.add_scaled(0.5 * h, &k1))?;
        let k3 = derivative(system, *t + 0.5 * h, &x.add_scaled(0.5 * h, &k2))?;
        let k4 = derivative(system, *t + h, &x.add_scaled(h, &k3))?;
        let next = State {
            q: x.q + (k1.q + (k2.q + k3.q) * 2.0 + k4.q) * (h / 6.0),
            qd: x.qd + (k1.qd + (k2.qd + k3.qd) * 2.0 + k4.qd) * (h / 6.0),
        };
        if !next.is_finite() {
            return Err(IntegrationError::NonFinite { time: *t });
        }
        *x = next;
        *t += h;
        Ok(StepReport { step: h, evaluations: 4, rejected: 0 })
    }
}
