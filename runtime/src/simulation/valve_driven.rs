//! A valve-driven robot (the WPI snake of 001) as a system: its valve wave steered by
//! three decisions (supply pressure, frequency, offset), the valves' closed-form response
//! scaled to the supply pressure, and the integration that ends a step on every valve
//! switch, which the valve sampler's rollouts, a plant and the paper's runs share.
//!
//! Why the supply pressure is a decision: it sets every valve's curvature amplitude (C0 =
//! k (P - P0) in 001's spec), and at the threshold pressure P0 the segments stop bending, so
//! the plan can stop the robot at its goal. It reaches the model through the spec's
//! parameter (named by the caller) and the valves' generated responses: the command sent to
//! a response is the valve state times the ratio of its gain at that pressure to its gain at
//! the model's own parameters, exact because each response is linear in its command.

use crate::integration::integrator::{Integrator, SecondOrderSystem};
use crate::integration::rk4::RungeKutta4;
use crate::robot::model::{Model, ParamSet};
use crate::robot::state::State;
use crate::simulation::prescribed::{DrivenCoordinate, PrescribedSimulation};
use nalgebra::Vector2;
use std::f64::consts::TAU;

/// The valve planner's decisions, in order.
pub const VALVE_DECISIONS: [&str; 3] = ["supply pressure", "frequency", "offset"];
/// Most valve pairs a steered wave drives.
pub const MAX_VALVES: usize = 16;

/// The earliest time in (from, to] at which a valve leaves the state `held` gives it, to
/// rounding (bisection on the valves' states, `states(t, i)` for valve i); None if every
/// valve still holds at `to`. A valve that switches twice within (from, to] is missed: steps
/// are far shorter than a wave's shortest half-period.
pub fn next_valve_switch(states: impl Fn(f64, usize) -> f64, held: &[f64], from: f64, to: f64) -> Option<f64> {
    let differs = |t: f64| held.iter().enumerate().any(|(i, h)| states(t, i) != *h);
    if !differs(to) {
        return None;
    }
    let (mut low, mut high) = (from, to);
    while high - low > 4.0 * f64::EPSILON * high.abs().max(1.0) {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high {
            break;
        }
        if differs(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

/// Integrates `system` from (t, x) to `to`, ending a step on every valve switch, where
/// `command` gives the system the valves' new states (`held`, updated from `states`).
/// Returns the right-hand sides used.
pub fn integrate_through_switches<const N: usize, S: SecondOrderSystem<N>, I: Integrator<N>>(
    integrator: &mut I,
    system: &mut S,
    (t, x): (&mut f64, &mut State<N>),
    to: f64,
    (states, held): (impl Fn(f64, usize) -> f64, &mut [f64]),
    mut command: impl FnMut(&mut S, f64, &[f64], &mut State<N>) -> Result<(), String>,
) -> Result<usize, String> {
    let mut used = 0;
    while *t < to {
        let end = next_valve_switch(&states, held, *t, to).unwrap_or(to);
        used += integrator.integrate_to(system, t, x, end).map_err(|e| e.to_string())?;
        *t = end;
        let mut switched = false;
        for (i, h) in held.iter_mut().enumerate() {
            let now = states(*t, i);
            switched |= now != *h;
            *h = now;
        }
        if switched {
            command(system, *t, held, x)?;
        }
    }
    Ok(used)
}

/// A valve wave's three decisions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValveDecisions {
    /// Supply pressure (the unit of the spec's parameter; kPa for 001's snake).
    pub pressure: f64,
    /// Valve frequency f (Hz); eq 13's omega is 2 pi f.
    pub frequency: f64,
    /// Eq 13's offset phi: 0 goes straight, its sign picks the way the robot turns.
    pub offset: f64,
}

impl ValveDecisions {
    /// [pressure, frequency, offset], in `VALVE_DECISIONS` order.
    pub fn to_array(self) -> [f64; 3] {
        [self.pressure, self.frequency, self.offset]
    }

    /// From [pressure, frequency, offset].
    pub fn from_array([pressure, frequency, offset]: [f64; 3]) -> Self {
        ValveDecisions { pressure, frequency, offset }
    }
}

/// Eq 13's wave S_i = sign(sin(psi + beta_i) + phi) with its phase psi accumulated, so a
/// new frequency never makes the valves jump, and its decisions changed by a plan at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteeredValveWave {
    /// beta_i = delay * i for valve pair i = 1, 2, ... (the spec's wave).
    pub delay: f64,
    /// The decisions in effect.
    pub decisions: ValveDecisions,
    /// The phase at `phase_time` (rad, in [0, 2 pi)).
    phase: f64,
    phase_time: f64,
}

impl SteeredValveWave {
    /// A wave with phase 0 at time `t`: from t = 0 it is the spec's `ValveWave` at the same
    /// frequency and offset.
    pub fn new(delay: f64, t: f64, decisions: ValveDecisions) -> Self {
        SteeredValveWave { delay, decisions, phase: 0.0, phase_time: t }
    }

    /// Valve pair `i`'s state (0-based, +1 or -1) at time `t` (at or after the last change).
    #[inline]
    pub fn state(&self, t: f64, i: usize) -> f64 {
        let phase = self.phase + TAU * self.decisions.frequency * (t - self.phase_time);
        if (phase + self.delay * (i + 1) as f64).sin() + self.decisions.offset >= 0.0 {
            1.0
        } else {
            -1.0
        }
    }

    /// New decisions from time `t` on, the phase carried through.
    pub fn retarget(&mut self, t: f64, decisions: ValveDecisions) {
        self.phase = (self.phase + TAU * self.decisions.frequency * (t - self.phase_time)).rem_euclid(TAU);
        self.phase_time = t;
        self.decisions = decisions;
    }
}

/// The valves' commands at a supply pressure: each valve's gain there over its gain at the
/// model's own parameters (the responses a `PrescribedSimulation` was built with).
#[derive(Clone, Debug)]
pub struct ValveGains<R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
    parameter: String,
    reference: [f64; MAX_VALVES],
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValveGains<R, N, C> {
    /// The gains of `R`'s valves as `parameter` (the supply pressure) varies from `params`.
    pub fn new(params: &R::Params, parameter: &str) -> Result<Self, String> {
        let valves = R::VALVES.len();
        if valves == 0 || valves > MAX_VALVES {
            return Err(format!("robot `{}` has {valves} valves; valve steering drives 1 to {MAX_VALVES}", R::NAME));
        }
        let mut reference = [0.0; MAX_VALVES];
        for (k, gain) in reference.iter_mut().take(valves).enumerate() {
            let response = R::valve_response(k, params)
                .ok_or_else(|| format!("robot `{}`: valve {k} has no response", R::NAME))?;
            *gain = response.steady_state(1.0);
            if !(gain.is_finite() && *gain != 0.0) {
                return Err(format!(
                    "robot `{}`: valve {k}'s gain at the model's parameters is {gain}; it must be finite and non-zero to scale the others by",
                    R::NAME
                ));
            }
        }
        let mut params = params.clone();
        let current = reference[0];
        params.set(parameter, 1.0).map_err(|e| format!("the supply pressure parameter: {e}"))?;
        let mut gains = ValveGains { params, parameter: parameter.to_string(), reference };
        // The parameter must move the gains: otherwise the pressure decides nothing.
        let at_one = gains.scale(1.0, 0)?;
        let at_two = gains.scale(2.0, 0)?;
        if at_one == at_two {
            return Err(format!(
                "parameter `{parameter}` does not change `{}`'s valve responses (gain {current} either way)",
                R::NAME
            ));
        }
        Ok(gains)
    }

    /// Valve `k`'s command per unit valve state at supply pressure `pressure`.
    pub fn scale(&mut self, pressure: f64, k: usize) -> Result<f64, String> {
        self.params.set(&self.parameter, pressure).map_err(|e| e.to_string())?;
        let response = R::valve_response(k, &self.params)
            .ok_or_else(|| format!("robot `{}`: valve {k} has no response", R::NAME))?;
        Ok(response.steady_state(1.0) / self.reference[k])
    }

    /// Every valve's command per unit state at `pressure`, into `scales`.
    pub fn scales_into(&mut self, pressure: f64, scales: &mut [f64]) -> Result<(), String> {
        for (k, s) in scales.iter_mut().enumerate() {
            *s = self.scale(pressure, k)?;
        }
        Ok(())
    }
}

/// A valve-driven robot stepped through its wave's switches: the prescribed simulation, the
/// wave, and the commands each switch sends (state times gain scale). The plant of a steered
/// run and each of the planner's rollouts are one of these.
pub struct ValveDriven<R: Model<N, C>, const N: usize, const C: usize> {
    /// The robot with its valve-driven coordinates prescribed.
    pub system: PrescribedSimulation<R, N, C>,
    /// The wave that drives the valves.
    pub wave: SteeredValveWave,
    gains: ValveGains<R, N, C>,
    integrator: RungeKutta4,
    held: [f64; MAX_VALVES],
    scales: [f64; MAX_VALVES],
    commands: [f64; MAX_VALVES],
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValveDriven<R, N, C> {
    /// `system` (its driven coordinates `R::VALVES`, in order) under `wave`, integrated by RK4
    /// with steps of at most `step` s ending on every switch.
    pub fn new(
        system: PrescribedSimulation<R, N, C>,
        wave: SteeredValveWave,
        pressure_parameter: &str,
        step: f64,
    ) -> Result<Self, String> {
        let valves: Vec<usize> = system.driven().iter().map(|d| d.coordinate).collect();
        if valves != R::VALVES {
            return Err(format!("the simulation of `{}` must drive its valves' coordinates, in order", R::NAME));
        }
        let gains = ValveGains::new(&system.simulation.params, pressure_parameter)?;
        let integrator = RungeKutta4::new(step).map_err(|e| e.to_string())?;
        Ok(ValveDriven {
            system,
            wave,
            gains,
            integrator,
            held: [0.0; MAX_VALVES],
            scales: [0.0; MAX_VALVES],
            commands: [0.0; MAX_VALVES],
        })
    }

    /// The prescribed simulation for `R`'s valves from `simulation`, at state `x` at time `t`.
    pub fn prescribed(
        simulation: crate::simulation::closed_loop::Simulation<R, N, C>,
        t: f64,
        x: &State<N>,
    ) -> Result<PrescribedSimulation<R, N, C>, String> {
        let mut driven = Vec::with_capacity(R::VALVES.len());
        for (k, &coordinate) in R::VALVES.iter().enumerate() {
            let response = R::valve_response(k, &simulation.params)
                .ok_or_else(|| format!("robot `{}`: valve {k} has no response", R::NAME))?;
            driven.push(DrivenCoordinate { coordinate, response });
        }
        PrescribedSimulation::new(simulation, &driven, t, x)
    }

    /// Applies `decisions` from time `t` (the wave retargeted, the valves' commands sent for
    /// the states at `t`); `x`'s driven coordinates are set to their exact values.
    pub fn apply(&mut self, t: f64, decisions: ValveDecisions, x: &mut State<N>) -> Result<(), String> {
        let valves = R::VALVES.len();
        self.wave.retarget(t, decisions);
        self.gains.scales_into(decisions.pressure, &mut self.scales[..valves])?;
        for i in 0..valves {
            self.held[i] = self.wave.state(t, i);
            self.commands[i] = self.held[i] * self.scales[i];
        }
        self.system.command(t, &self.commands[..valves], x)
    }

    /// Integrates from (t, x) to `to` through the valves' switches. Returns the right-hand
    /// sides used.
    pub fn advance(&mut self, t: &mut f64, x: &mut State<N>, to: f64) -> Result<usize, String> {
        let valves = R::VALVES.len();
        let wave = self.wave;
        let scales = self.scales;
        let commands = &mut self.commands;
        integrate_through_switches(
            &mut self.integrator,
            &mut self.system,
            (t, x),
            to,
            (|t, i| wave.state(t, i), &mut self.held[..valves]),
            |system, t, held, x| {
                for i in 0..held.len() {
                    commands[i] = held[i] * scales[i];
                }
                system.command(t, &commands[..held.len()], x)
            },
        )
    }

    /// The state with the driven coordinates at their exact values at time `t`.
    pub fn exact_state(&self, t: f64, x: &State<N>) -> State<N> {
        self.system.exact_state(t, x)
    }

    /// The centre of mass in the ground plane at (the exact) state `x`.
    pub fn ground_center_of_mass(&self, x: &State<N>) -> Vector2<f64> {
        let p = &self.system.simulation.params;
        let com = R::center_of_mass(&x.q, p, &R::cache(&x.q, p));
        Vector2::new(com.x, com.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steered_wave_from_zero_is_eq_13_and_keeps_its_phase_through_a_change() {
        let spec =
            crate::actuators::valve_wave::ValveWave { temporal_frequency: TAU * 1.5, delay: TAU / 4.0, offset: 0.4 };
        let decisions = ValveDecisions { pressure: 50.0, frequency: 1.5, offset: 0.4 };
        let mut steered = SteeredValveWave::new(spec.delay, 0.0, decisions);
        for k in 0..1000 {
            let t = k as f64 * 1.37e-3;
            for i in 0..4 {
                assert_eq!(steered.state(t, i), spec.state(t, i), "t = {t}, valve {i}");
            }
        }
        // At 1 s the frequency doubles: the phase there is kept, then runs twice as fast.
        steered.retarget(1.0, ValveDecisions { frequency: 3.0, ..decisions });
        let phase_at_one = (TAU * 1.5_f64).rem_euclid(TAU);
        for k in 0..500 {
            let t = 1.0 + k as f64 * 0.9e-3;
            let expected =
                if (phase_at_one + TAU * 3.0 * (t - 1.0) + spec.delay * 2.0).sin() + 0.4 >= 0.0 { 1.0 } else { -1.0 };
            assert_eq!(steered.state(t, 1), expected, "t = {t}");
        }
    }

    #[test]
    fn a_switch_is_found_to_rounding_and_none_where_nothing_switches() {
        let wave = SteeredValveWave::new(TAU / 4.0, 0.0, ValveDecisions { pressure: 1.0, frequency: 2.0, offset: 0.0 });
        let held: Vec<f64> = (0..4).map(|i| wave.state(0.01, i)).collect();
        let switch = next_valve_switch(|t, i| wave.state(t, i), &held, 0.01, 0.3).unwrap();
        // Valve i switches where 4 pi t + (i + 1) pi / 2 crosses a multiple of pi.
        let exact = (1..=4)
            .flat_map(|i| (0..4).map(move |m| (m as f64 * std::f64::consts::PI - (i as f64) * TAU / 4.0) / (2.0 * TAU)))
            .filter(|t| *t > 0.01)
            .fold(f64::INFINITY, f64::min);
        assert!((switch - exact).abs() < 1e-14, "{switch} against {exact}");
        assert_eq!(next_valve_switch(|t, i| wave.state(t, i), &held, 0.01, 0.011), None);
    }
}
