//! What a plan decides at each knot and how that becomes the robot's commands: the commands
//! themselves, held over the knot, or the parameters of a travelling wave of joint set
//! points (amplitude, temporal frequency, offset), the wave's phase carried from step to
//! step as a state of the plan.
//!
//! Why a wave: a snake on passive wheels moves by undulating, a second-order effect of its
//! joint motions. Held set points give a plan from rest no gradient toward travel (a
//! constant bend does not move it), so a gradient-based planner would never discover the
//! gait; the wave's parameters move the body at first order once it undulates, and the
//! commands stay the gait the robot was built for. The planner differentiates through the
//! wave by the chain rule (`knots.rs`).

use nalgebra::DMatrix;

/// How a knot's decisions become the robot's commands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CommandSchedule {
    /// The decisions are the commands, held over the knot.
    Held { commands: usize },
    /// Joint set points of a travelling wave, q_j = a sin(phi + eta j) + o for actuated
    /// joint j (0-based), with the decisions (a, omega, o) and the phase advancing as
    /// phi' = omega. The same wave as the gait samplers' `SteeredGait`.
    Wave { joints: usize, spatial_frequency: f64 },
}

/// The wave's decisions, in order.
pub const WAVE_DECISIONS: [&str; 3] = ["amplitude", "temporal frequency", "offset"];

impl CommandSchedule {
    /// Decisions per knot.
    pub fn decisions(&self) -> usize {
        match *self {
            CommandSchedule::Held { commands } => commands,
            CommandSchedule::Wave { .. } => WAVE_DECISIONS.len(),
        }
    }

    /// The robot's commands it sets.
    pub fn commands(&self) -> usize {
        match *self {
            CommandSchedule::Held { commands } => commands,
            CommandSchedule::Wave { joints, .. } => joints,
        }
    }

    /// States it carries from step to step (the wave's phase).
    pub fn states(&self) -> usize {
        match self {
            CommandSchedule::Held { .. } => 0,
            CommandSchedule::Wave { .. } => 1,
        }
    }

    /// Writes the commands at schedule state `state` under `decisions` into `commands`.
    pub fn commands_into(&self, state: &[f64], decisions: &[f64], commands: &mut [f64]) {
        match *self {
            CommandSchedule::Held { .. } => commands.copy_from_slice(decisions),
            CommandSchedule::Wave { spatial_frequency, .. } => {
                let (amplitude, offset) = (decisions[0], decisions[2]);
                for (j, command) in commands.iter_mut().enumerate() {
                    *command = amplitude * (state[0] + spatial_frequency * j as f64).sin() + offset;
                }
            }
        }
    }

    /// The commands' derivatives by the schedule's state (commands x states) and by the
    /// decisions (commands x decisions).
    pub fn command_jacobians(
        &self,
        state: &[f64],
        decisions: &[f64],
        by_state: &mut DMatrix<f64>,
        by_decisions: &mut DMatrix<f64>,
    ) {
        by_state.fill(0.0);
        by_decisions.fill(0.0);
        match *self {
            CommandSchedule::Held { commands } => {
                for k in 0..commands {
                    by_decisions[(k, k)] = 1.0;
                }
            }
            CommandSchedule::Wave { joints, spatial_frequency } => {
                for j in 0..joints {
                    let angle = state[0] + spatial_frequency * j as f64;
                    by_state[(j, 0)] = decisions[0] * angle.cos();
                    by_decisions[(j, 0)] = angle.sin();
                    by_decisions[(j, 2)] = 1.0;
                }
            }
        }
    }

    /// Advances the schedule's state by `h` under `decisions`. The phase is not wrapped,
    /// so that it stays differentiable along a plan.
    pub fn advance(&self, state: &mut [f64], decisions: &[f64], h: f64) {
        if let CommandSchedule::Wave { .. } = self {
            state[0] += decisions[1] * h;
        }
    }

    /// The advance's derivatives by the state (states x states) and by the decisions
    /// (states x decisions).
    pub fn advance_jacobians(&self, h: f64, by_state: &mut DMatrix<f64>, by_decisions: &mut DMatrix<f64>) {
        by_state.fill(0.0);
        by_decisions.fill(0.0);
        if let CommandSchedule::Wave { .. } = self {
            by_state[(0, 0)] = 1.0;
            by_decisions[(0, 1)] = h;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_jacobians_match_central_differences() {
        let wave = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0 };
        let (phase, decisions) = ([0.7], [0.6, 1.5, -0.2]);
        let mut by_state = DMatrix::zeros(5, 1);
        let mut by_decisions = DMatrix::zeros(5, 3);
        wave.command_jacobians(&phase, &decisions, &mut by_state, &mut by_decisions);
        let eps = 1e-6;
        let commands_at = |phase: f64, decisions: [f64; 3]| {
            let mut out = [0.0; 5];
            wave.commands_into(&[phase], &decisions, &mut out);
            out
        };
        let (up, down) = (commands_at(phase[0] + eps, decisions), commands_at(phase[0] - eps, decisions));
        for j in 0..5 {
            assert!(((up[j] - down[j]) / (2.0 * eps) - by_state[(j, 0)]).abs() < 1e-8);
        }
        for i in 0..3 {
            let (mut plus, mut minus) = (decisions, decisions);
            plus[i] += eps;
            minus[i] -= eps;
            let (up, down) = (commands_at(phase[0], plus), commands_at(phase[0], minus));
            for j in 0..5 {
                assert!(((up[j] - down[j]) / (2.0 * eps) - by_decisions[(j, i)]).abs() < 1e-8, "{j} {i}");
            }
        }
        let mut state = phase;
        wave.advance(&mut state, &decisions, 0.01);
        assert!((state[0] - (0.7 + 0.015)).abs() < 1e-15);
        let mut advance_by_state = DMatrix::zeros(1, 1);
        let mut advance_by_decisions = DMatrix::zeros(1, 3);
        wave.advance_jacobians(0.01, &mut advance_by_state, &mut advance_by_decisions);
        assert_eq!((advance_by_state[(0, 0)], advance_by_decisions[(0, 1)]), (1.0, 0.01));
    }
}
