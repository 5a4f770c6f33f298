//! Actuator dynamics between a command and the coordinate it drives: a linear first- or
//! second-order response (the curvature of a valve-driven segment follows eq 15 of
//! 001_6780a70913e94322), solved in closed form for a command held over a control period,
//! so a prescribed coordinate needs no integrator state of its own.
//!
//! Second order: x'' = -(1/tau1 + 1/tau2) x' - x / (tau1 tau2) + gain u / (tau1 tau2), whose
//! response to a held u from (x0, v0) is x = gain u + A e^(-t/tau1) + B e^(-t/tau2) (eq 14),
//! or (A + B t) e^(-t/tau) when the time constants coincide. First order:
//! tau x' = gain u - x. `HeldResponses` keeps a set of them with their held commands.

/// How a driven coordinate responds to its actuator's command.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActuatorResponse {
    /// tau x' = gain u - x: the coordinate is set, its rate follows.
    FirstOrder {
        /// tau (s).
        time_constant: f64,
        /// The steady state per unit command.
        gain: f64,
    },
    /// Eq 15: two real poles -1/tau1, -1/tau2 and steady state gain u.
    SecondOrder {
        /// [tau1, tau2] (s).
        time_constants: [f64; 2],
        /// The steady state per unit command.
        gain: f64,
    },
}

/// A driven coordinate's value, rate and acceleration.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ResponseState {
    /// The coordinate.
    pub value: f64,
    /// Its rate.
    pub rate: f64,
    /// Its acceleration.
    pub acceleration: f64,
}

/// Time constants closer than this (relative) use the repeated-pole form, where the
/// distinct-pole coefficients would cancel catastrophically.
const REPEATED: f64 = 1e-6;

impl ActuatorResponse {
    /// Time constants positive and finite, gain finite.
    pub fn validate(&self) -> Result<(), String> {
        let (constants, gain): (&[f64], f64) = match self {
            ActuatorResponse::FirstOrder { time_constant, gain } => (std::slice::from_ref(time_constant), *gain),
            ActuatorResponse::SecondOrder { time_constants, gain } => (time_constants, *gain),
        };
        for t in constants {
            if !(t.is_finite() && *t > 0.0) {
                return Err(format!("actuator time constant must be finite and > 0 s, got {t}"));
            }
        }
        if !gain.is_finite() {
            return Err(format!("actuator gain must be finite, got {gain}"));
        }
        Ok(())
    }

    /// Steady state for a held command.
    pub fn steady_state(&self, command: f64) -> f64 {
        match self {
            ActuatorResponse::FirstOrder { gain, .. } | ActuatorResponse::SecondOrder { gain, .. } => gain * command,
        }
    }

    /// The state `elapsed` seconds after `start` with `command` held (closed form). For the
    /// first order, `start.rate` is ignored: the coordinate's rate is set by the equation.
    pub fn evolve(&self, start: &ResponseState, command: f64, elapsed: f64) -> ResponseState {
        let target = self.steady_state(command);
        match *self {
            ActuatorResponse::FirstOrder { time_constant, .. } => {
                let decay = (-elapsed / time_constant).exp();
                let offset = (start.value - target) * decay;
                let rate = -offset / time_constant;
                ResponseState { value: target + offset, rate, acceleration: -rate / time_constant }
            }
            ActuatorResponse::SecondOrder { time_constants: [tau1, tau2], .. } => {
                let x0 = start.value - target;
                let v0 = start.rate;
                if (tau1 - tau2).abs() <= REPEATED * tau1.max(tau2) {
                    // (a + b t) e^(-t/tau): a = x0, b = v0 + x0 / tau.
                    let tau = 0.5 * (tau1 + tau2);
                    let decay = (-elapsed / tau).exp();
                    let b = v0 + x0 / tau;
                    let value = (x0 + b * elapsed) * decay;
                    let rate = (b - (x0 + b * elapsed) / tau) * decay;
                    let acceleration = (-2.0 * b / tau + (x0 + b * elapsed) / (tau * tau)) * decay;
                    return ResponseState { value: target + value, rate, acceleration };
                }
                // A + B = x0, -A / tau1 - B / tau2 = v0.
                let (p1, p2) = (1.0 / tau1, 1.0 / tau2);
                let a = (v0 + p2 * x0) / (p2 - p1);
                let b = x0 - a;
                let (e1, e2) = ((-p1 * elapsed).exp(), (-p2 * elapsed).exp());
                ResponseState {
                    value: target + a * e1 + b * e2,
                    rate: -p1 * a * e1 - p2 * b * e2,
                    acceleration: p1 * p1 * a * e1 + p2 * p2 * b * e2,
                }
            }
        }
    }

    /// The right-hand side of the response's differential equation at a state: its
    /// acceleration (second order) or rate (first order) for a command.
    pub fn derivative(&self, value: f64, rate: f64, command: f64) -> f64 {
        let target = self.steady_state(command);
        match *self {
            ActuatorResponse::FirstOrder { time_constant, .. } => (target - value) / time_constant,
            ActuatorResponse::SecondOrder { time_constants: [tau1, tau2], .. } => {
                -(1.0 / tau1 + 1.0 / tau2) * rate - (value - target) / (tau1 * tau2)
            }
        }
    }
}

/// A set of driven coordinates, each with its response, the command it holds and its state
/// when that command began: what a prescribed coordinate needs instead of integrator state.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldResponses {
    responses: Vec<ActuatorResponse>,
    starts: Vec<ResponseState>,
    commands: Vec<f64>,
    command_time: f64,
}

impl HeldResponses {
    /// `responses` (validated by the caller, which knows what to call each) from `starts`
    /// (one each) at time `t`, holding zero commands.
    pub fn new(responses: &[ActuatorResponse], starts: Vec<ResponseState>, t: f64) -> Self {
        debug_assert_eq!(starts.len(), responses.len());
        HeldResponses { responses: responses.to_vec(), starts, commands: vec![0.0; responses.len()], command_time: t }
    }

    /// Starts every response afresh at time `t` from `starts` (one each, in order), holding
    /// zero commands; in place, so a planner's rollouts allocate nothing.
    pub fn restart(&mut self, t: f64, starts: impl Iterator<Item = ResponseState>) {
        for (slot, start) in self.starts.iter_mut().zip(starts) {
            *slot = start;
        }
        self.commands.fill(0.0);
        self.command_time = t;
    }

    /// Holds `commands` from time `t` on: one finite value per response, which the caller
    /// has checked (it knows what to call each).
    pub fn command(&mut self, t: f64, commands: &[f64]) {
        for k in 0..self.responses.len() {
            self.starts[k] = self.state(k, t);
        }
        self.commands.copy_from_slice(commands);
        self.command_time = t;
    }

    /// Response `k`'s state at time `t` (at or after the last command).
    #[inline]
    pub fn state(&self, k: usize, t: f64) -> ResponseState {
        self.responses[k].evolve(&self.starts[k], self.commands[k], (t - self.command_time).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq 14 with the coefficients of a zero-state step (seed notes, T3).
    fn eq14(c0: f64, tau1: f64, tau2: f64, t: f64) -> f64 {
        let c1 = -c0 * tau1 / (tau1 - tau2);
        let c2 = c0 * tau2 / (tau1 - tau2);
        c1 * (-t / tau1).exp() + c2 * (-t / tau2).exp() + c0
    }

    #[test]
    fn zero_state_step_is_eq_14() {
        let response = ActuatorResponse::SecondOrder { time_constants: [0.08, 0.02], gain: 30.0 };
        for k in 0..=100 {
            let t = 0.005 * k as f64;
            let s = response.evolve(&ResponseState::default(), 1.0, t);
            let exact = eq14(30.0, 0.08, 0.02, t);
            assert!((s.value - exact).abs() <= 1e-6 * 30.0, "t = {t}: {} vs {exact}", s.value);
        }
        // Steady state C0 S, for both signs.
        let far = response.evolve(&ResponseState::default(), -1.0, 5.0);
        assert!((far.value + 30.0).abs() < 1e-9 && far.rate.abs() < 1e-9);
    }

    #[test]
    fn closed_form_satisfies_the_equation_and_composes() {
        for response in [
            ActuatorResponse::SecondOrder { time_constants: [0.08, 0.02], gain: 30.0 },
            ActuatorResponse::SecondOrder { time_constants: [0.05, 0.05], gain: -2.0 },
            ActuatorResponse::FirstOrder { time_constant: 0.03, gain: 4.0 },
        ] {
            let start = ResponseState { value: 3.0, rate: -40.0, acceleration: 0.0 };
            let start = match response {
                ActuatorResponse::FirstOrder { .. } => {
                    ResponseState { rate: response.derivative(3.0, 0.0, 1.0), ..start }
                }
                _ => start,
            };
            let h = 1e-6;
            for t in [0.001, 0.013, 0.07, 0.2] {
                let s = response.evolve(&start, 1.0, t);
                // Rate and acceleration are the derivatives of the value and the rate.
                let later = response.evolve(&start, 1.0, t + h);
                let earlier = response.evolve(&start, 1.0, t - h);
                let span = 2.0 * h;
                assert!(
                    ((later.value - earlier.value) / span - s.rate).abs() < 1e-4 * (1.0 + s.rate.abs()),
                    "{response:?} rate at {t}"
                );
                assert!(
                    ((later.rate - earlier.rate) / span - s.acceleration).abs() < 1e-3 * (1.0 + s.acceleration.abs()),
                    "{response:?} acceleration at {t}"
                );
                // And they satisfy the differential equation.
                let rhs = match response {
                    ActuatorResponse::FirstOrder { .. } => (response.derivative(s.value, 0.0, 1.0), s.rate),
                    ActuatorResponse::SecondOrder { .. } => (response.derivative(s.value, s.rate, 1.0), s.acceleration),
                };
                assert!((rhs.0 - rhs.1).abs() < 1e-9 * (1.0 + rhs.1.abs()), "{response:?} equation at {t}");
                // Two held periods equal one of their sum.
                let split = response.evolve(&response.evolve(&start, 1.0, t / 2.0), 1.0, t / 2.0);
                assert!((split.value - s.value).abs() < 1e-12 * (1.0 + s.value.abs()));
            }
        }
    }

    #[test]
    fn slower_or_weaker_actuators_respond_less() {
        // The friction trend of Fig 6: larger time constants or a smaller C0 give a smaller
        // value at every time of the step.
        let base = ActuatorResponse::SecondOrder { time_constants: [0.08, 0.02], gain: 30.0 };
        let slower = ActuatorResponse::SecondOrder { time_constants: [0.12, 0.03], gain: 30.0 };
        let weaker = ActuatorResponse::SecondOrder { time_constants: [0.08, 0.02], gain: 25.0 };
        for k in 1..50 {
            let t = 0.01 * k as f64;
            let v = base.evolve(&ResponseState::default(), 1.0, t).value;
            assert!(slower.evolve(&ResponseState::default(), 1.0, t).value < v);
            assert!(weaker.evolve(&ResponseState::default(), 1.0, t).value < v);
        }
    }

    #[test]
    fn bad_constants_are_named() {
        let e = ActuatorResponse::SecondOrder { time_constants: [0.0, 0.02], gain: 1.0 }.validate().unwrap_err();
        assert!(e.contains("time constant"), "{e}");
        let e = ActuatorResponse::FirstOrder { time_constant: 0.1, gain: f64::NAN }.validate().unwrap_err();
        assert!(e.contains("gain"), "{e}");
    }
}
