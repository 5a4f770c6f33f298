//! Adaptive Dormand-Prince 5(4) with embedded error estimate and step-size control.

use crate::integration::integrator::{
    derivative, step_to_event, IntegrationError, Integrator, SecondOrderSystem, StepReport,
};
use crate::robot::state::State;

/// Absolute and relative error tolerances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// The absolute tolerance, in each state entry's unit.
    pub absolute: f64,
    /// The relative tolerance.
    pub relative: f64,
}

/// Dormand-Prince 5(4): fifth-order solution, fourth-order error estimate, per-step error
/// control in the weighted RMS norm `|err_i| / (atol + rtol * max(|y0_i|, |y1_i|))`.
///
/// Each step uses seven right-hand sides. The last stage is not reused as the next step's
/// first (no FSAL): a controller may change the system between steps, which would make a
/// cached derivative stale.
#[derive(Clone, Copy, Debug)]
pub struct DormandPrince5 {
    /// The error tolerances.
    pub tolerances: Tolerances,
    /// Step to try next (s); adapted after every attempt.
    pub next_step: f64,
    /// The smallest step (s): below it the integration fails.
    pub min_step: f64,
    /// The largest step (s).
    pub max_step: f64,
}

impl Tolerances {
    /// Checks finite, non-negative tolerances, not both zero.
    pub fn validate(&self) -> Result<(), IntegrationError> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !ok(self.absolute) || !ok(self.relative) || self.absolute + self.relative <= 0.0 {
            return Err(IntegrationError::InvalidSetting(format!(
                "tolerances must be finite, non-negative and not both zero, got {self:?}"
            )));
        }
        Ok(())
    }
}

impl DormandPrince5 {
    /// An integrator with these tolerances and a first step of 1 ms.
    pub fn new(tolerances: Tolerances) -> Result<Self, IntegrationError> {
        tolerances.validate()?;
        Ok(DormandPrince5 { tolerances, next_step: 1e-3, min_step: 1e-12, max_step: f64::INFINITY })
    }

    /// Limits the step size (for instance to a controller's sample period).
    pub fn with_max_step(mut self, max_step: f64) -> Self {
        self.max_step = max_step;
        self.next_step = self.next_step.min(max_step);
        self
    }
}

const C2: f64 = 1.0 / 5.0;
const C3: f64 = 3.0 / 10.0;
const C4: f64 = 4.0 / 5.0;
const C5: f64 = 8.0 / 9.0;
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const B1: f64 = 35.0 / 384.0;
const B3: f64 = 500.0 / 1113.0;
const B4: f64 = 125.0 / 192.0;
const B5: f64 = -2187.0 / 6784.0;
const B6: f64 = 11.0 / 84.0;
// Fifth-order minus fourth-order weights.
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;

/// Weighted RMS norm of a step's error estimate: `|err_i| / (atol + rtol * max(|y0_i|, |y1_i|))`.
pub(crate) fn error_norm<const N: usize>(x0: &State<N>, x1: &State<N>, error: &State<N>, tol: Tolerances) -> f64 {
    let mut sum = 0.0;
    let pairs = x0.q.iter().zip(x1.q.iter()).chain(x0.qd.iter().zip(x1.qd.iter()));
    let errors = error.q.iter().chain(error.qd.iter());
    for ((y0, y1), e) in pairs.zip(errors) {
        let scale = tol.absolute + tol.relative * y0.abs().max(y1.abs());
        sum += (e / scale).powi(2);
    }
    (sum / (2 * N) as f64).sqrt()
}

fn combine<const N: usize>(x: &State<N>, h: f64, terms: &[(f64, &State<N>)]) -> State<N> {
    let mut out = *x;
    for (weight, k) in terms {
        out.q += k.q * (h * weight);
        out.qd += k.qd * (h * weight);
    }
    out
}

impl<const N: usize> Integrator<N> for DormandPrince5 {
    fn step<S: SecondOrderSystem<N>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
    ) -> Result<StepReport, IntegrationError> {
        let mut evaluations = 0;
        let mut rejected = 0;
        system.switch_modes(*t, x);
        let k1 = derivative(system, *t, x)?;
        evaluations += 1;
        loop {
            let remaining = t_end - *t;
            let h = self.next_step.min(self.max_step).min(remaining);
            if h < self.min_step && h < remaining {
                return Err(IntegrationError::StepTooSmall { time: *t, step: h });
            }
            let k2 = derivative(system, *t + C2 * h, &combine(x, h, &[(A21, &k1)]))?;
            let k3 = derivative(system, *t + C3 * h, &combine(x, h, &[(A31, &k1), (A32, &k2)]))?;
            let k4 = derivative(system, *t + C4 * h, &combine(x, h, &[(A41, &k1), (A42, &k2), (A43, &k3)]))?;
            let k5 =
                derivative(system, *t + C5 * h, &combine(x, h, &[(A51, &k1), (A52, &k2), (A53, &k3), (A54, &k4)]))?;
            let k6 = derivative(
                system,
                *t + h,
                &combine(x, h, &[(A61, &k1), (A62, &k2), (A63, &k3), (A64, &k4), (A65, &k5)]),
            )?;
            let next = combine(x, h, &[(B1, &k1), (B3, &k3), (B4, &k4), (B5, &k5), (B6, &k6)]);
            let k7 = derivative(system, *t + h, &next)?;
            evaluations += 6;
            let error =
                combine(&State::zeros(), h, &[(E1, &k1), (E3, &k3), (E4, &k4), (E5, &k5), (E6, &k6), (E7, &k7)]);
            let norm = error_norm(x, &next, &error, self.tolerances);
            if !norm.is_finite() || !next.is_finite() {
                // Treat as a failed attempt: shrink hard and retry, unless already tiny.
                self.next_step = h * 0.1;
                rejected += 1;
                if self.next_step < self.min_step {
                    return Err(IntegrationError::NonFinite { time: *t });
                }
                continue;
            }
            let factor = if norm == 0.0 { 5.0 } else { (0.9 * norm.powf(-0.2)).clamp(0.2, 5.0) };
            if norm <= 1.0 {
                // A step that went past an event by more than it is located to ends at the
                // event instead.
                if let Some(fraction) = system.overshot_event(x, &next) {
                    self.next_step = step_to_event(*t, h, fraction, self.min_step)?;
                    rejected += 1;
                    continue;
                }
                *x = next;
                *t += h;
                // Do not let the clamp to `t_end` shrink the step for the next call.
                if h < remaining || self.next_step <= h {
                    self.next_step = h * factor;
                } else {
                    self.next_step = self.next_step.max(h * factor);
                }
                return Ok(StepReport { step: h, evaluations, rejected });
            }
            self.next_step = h * factor.min(1.0);
            rejected += 1;
        }
    }
}
