//! What a plan decides at each knot and how that becomes the robot's commands: the commands
//! themselves, held over the knot; the parameters of a travelling wave of joint set
//! points (amplitude, temporal frequency, offset); or a soft body's bend and the rate at
//! which its bending plane turns (muscle forces on its sections' length coordinates). A
//! wave's or a bend's phase is carried from step to step as a state of the plan, and so is
//! the wave in effect when the wave follows its decisions through a lag.
//!
//! Why a wave: a snake on passive wheels moves by undulating, a second-order effect of its
//! joint motions. Held set points give a plan from rest no gradient toward travel (a
//! constant bend does not move it), so a gradient-based planner would never discover the
//! gait; the wave's parameters move the body at first order once it undulates, and the
//! commands stay the gait the robot was built for. The planner differentiates through the
//! wave by the chain rule (`knots.rs`). A soft snake rolls for the same reason only while
//! its bending plane turns: pressures held over a knot bend it but do not roll it, while
//! the plane's turning rate moves it sideways at first order (about 2 pi r per turn).

use nalgebra::DMatrix;

/// Most muscles a rotating bend drives.
pub const MAX_BENDING_MUSCLES: usize = 24;

/// One muscle of a rotating bend: at bend theta and plane phase phi it puts the force
/// `force_per_bend` theta (1 - cos(angle - phi)) on `coordinate` (a section's length),
/// zero when the plane points at it and the most opposite: a rolling gait's extension-only
/// muscle law, l = r theta (1 - cos(psi - phi)), through a linear pressure-to-force map.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BendingMuscle {
    /// The coordinate it forces.
    pub coordinate: usize,
    /// Force per radian of bend at (1 - cos) = 1 (N/rad).
    pub force_per_bend: f64,
    /// The plane phase at which the muscle is slack (rad).
    pub angle: f64,
}

/// How a knot's decisions become the robot's commands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CommandSchedule {
    /// The decisions are the commands, held over the knot.
    Held {
        /// The commands a knot.
        commands: usize,
    },
    /// Joint set points of a travelling wave, q_j = a sin(phi + eta j) + o for actuated
    /// joint j (0-based), with the decisions (a, omega, o) and the phase advancing as
    /// phi' = omega. The same wave as the gait samplers' `SteeredGait`.
    ///
    /// With `lag` > 0 (s) the wave in effect follows the decisions through a first-order
    /// lag, as `SteeredGait`'s parameters follow their targets: the states are then
    /// (phi, a, omega, o in effect), each step moves the three toward the decisions by
    /// 1 - exp(-h / lag) and the phase by the new omega. Why: decisions held over a knot
    /// and changed by every plan make set points that jump; through the lag they move
    /// smoothly, and the plan predicts the set points the loop sends. A lag of 0 applies
    /// the decisions at once, with the phase the only state.
    Wave {
        /// The actuated joints.
        joints: usize,
        /// eta (rad), fixed.
        spatial_frequency: f64,
        /// The lag's time constant (s); 0 for none.
        lag: f64,
    },
    /// Forces on `coordinates` generalized coordinates (every one; those no muscle drives
    /// stay zero) from `count` muscles of a soft body bent by theta in a plane at phase phi,
    /// with the decisions (theta, omega) and the plane turning as phi' = omega. Made by
    /// [`CommandSchedule::rotating_bend`].
    RotatingBend {
        /// The robot's coordinates.
        coordinates: usize,
        /// The muscles, the first `count` used.
        muscles: [BendingMuscle; MAX_BENDING_MUSCLES],
        /// How many muscles.
        count: usize,
    },
}

/// The wave's decisions, in order.
pub const WAVE_DECISIONS: [&str; 3] = ["amplitude", "temporal frequency", "offset"];
/// A rotating bend's decisions, in order.
pub const BEND_DECISIONS: [&str; 2] = ["bend", "bending plane rate"];

impl CommandSchedule {
    /// A rotating bend of `muscles` over a robot with `coordinates` generalized coordinates.
    pub fn rotating_bend(coordinates: usize, muscles: &[BendingMuscle]) -> Result<Self, String> {
        if muscles.is_empty() || muscles.len() > MAX_BENDING_MUSCLES {
            return Err(format!("a rotating bend drives 1 to {MAX_BENDING_MUSCLES} muscles, got {}", muscles.len()));
        }
        for (k, muscle) in muscles.iter().enumerate() {
            if muscle.coordinate >= coordinates {
                return Err(format!(
                    "bending muscle {k} acts on coordinate {} of a robot with {coordinates}",
                    muscle.coordinate
                ));
            }
            if !(muscle.force_per_bend.is_finite() && muscle.angle.is_finite()) {
                return Err(format!("bending muscle {k}: force per bend and angle must be finite"));
            }
        }
        let mut table = [BendingMuscle::default(); MAX_BENDING_MUSCLES];
        table[..muscles.len()].copy_from_slice(muscles);
        Ok(CommandSchedule::RotatingBend { coordinates, muscles: table, count: muscles.len() })
    }

    /// Decisions per knot.
    pub fn decisions(&self) -> usize {
        match *self {
            CommandSchedule::Held { commands } => commands,
            CommandSchedule::Wave { .. } => WAVE_DECISIONS.len(),
            CommandSchedule::RotatingBend { .. } => BEND_DECISIONS.len(),
        }
    }

    /// The robot's commands it sets.
    pub fn commands(&self) -> usize {
        match *self {
            CommandSchedule::Held { commands } => commands,
            CommandSchedule::Wave { joints, .. } => joints,
            CommandSchedule::RotatingBend { coordinates, .. } => coordinates,
        }
    }

    /// States it carries from step to step (the wave's or the bending plane's phase, and a
    /// lagged wave's parameters in effect).
    pub fn states(&self) -> usize {
        match *self {
            CommandSchedule::Held { .. } => 0,
            CommandSchedule::Wave { lag, .. } if lag > 0.0 => 1 + WAVE_DECISIONS.len(),
            CommandSchedule::Wave { .. } | CommandSchedule::RotatingBend { .. } => 1,
        }
    }

    /// The fraction of the way to the decisions a lagged wave moves in a step of `h`; 1
    /// without a lag.
    fn blend(&self, h: f64) -> f64 {
        match *self {
            CommandSchedule::Wave { lag, .. } => crate::optimal_control::gait_sampling::lag_blend(lag, h),
            _ => 1.0,
        }
    }

    /// Writes the commands at schedule state `state` under `decisions` into `commands`.
    pub fn commands_into(&self, state: &[f64], decisions: &[f64], commands: &mut [f64]) {
        match *self {
            CommandSchedule::Held { .. } => commands.copy_from_slice(decisions),
            CommandSchedule::Wave { spatial_frequency, .. } => {
                // A lagged wave's set points are those of the wave in effect.
                let wave = if state.len() > 1 { &state[1..] } else { decisions };
                let (amplitude, offset) = (wave[0], wave[2]);
                for (j, command) in commands.iter_mut().enumerate() {
                    *command = amplitude * (state[0] + spatial_frequency * j as f64).sin() + offset;
                }
            }
            CommandSchedule::RotatingBend { muscles, count, .. } => {
                commands.fill(0.0);
                for muscle in &muscles[..count] {
                    commands[muscle.coordinate] +=
                        muscle.force_per_bend * decisions[0] * (1.0 - (muscle.angle - state[0]).cos());
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
            CommandSchedule::Wave { joints, spatial_frequency, .. } => {
                let lagged = state.len() > 1;
                let amplitude = if lagged { state[1] } else { decisions[0] };
                // Without a lag the wave's parameters are the decisions (columns 0 to 2);
                // with one they are the states 1 to 3 and the decisions enter by the advance.
                for j in 0..joints {
                    let angle = state[0] + spatial_frequency * j as f64;
                    by_state[(j, 0)] = amplitude * angle.cos();
                    let by_wave = if lagged { &mut *by_state } else { &mut *by_decisions };
                    let first = lagged as usize;
                    by_wave[(j, first)] = angle.sin();
                    by_wave[(j, first + 2)] = 1.0;
                }
            }
            CommandSchedule::RotatingBend { muscles, count, .. } => {
                for muscle in &muscles[..count] {
                    let angle = muscle.angle - state[0];
                    by_state[(muscle.coordinate, 0)] -= muscle.force_per_bend * decisions[0] * angle.sin();
                    by_decisions[(muscle.coordinate, 0)] += muscle.force_per_bend * (1.0 - angle.cos());
                }
            }
        }
    }

    /// Advances the schedule's state by `h` under `decisions`. The phase is not wrapped,
    /// so that it stays differentiable along a plan.
    pub fn advance(&self, state: &mut [f64], decisions: &[f64], h: f64) {
        match self.states() {
            0 => {}
            // Both phased schedules keep their rate second among the decisions.
            1 => state[0] += decisions[1] * h,
            _ => {
                // A lagged wave: its parameters move first and the phase by the new rate,
                // as `SteeredGait::advance`.
                let blend = self.blend(h);
                for (applied, decision) in state[1..].iter_mut().zip(decisions) {
                    *applied += blend * (decision - *applied);
                }
                state[0] += state[2] * h;
            }
        }
    }

    /// The advance's derivatives by the state (states x states) and by the decisions
    /// (states x decisions).
    pub fn advance_jacobians(&self, h: f64, by_state: &mut DMatrix<f64>, by_decisions: &mut DMatrix<f64>) {
        by_state.fill(0.0);
        by_decisions.fill(0.0);
        match self.states() {
            0 => {}
            1 => {
                by_state[(0, 0)] = 1.0;
                by_decisions[(0, 1)] = h;
            }
            states => {
                let blend = self.blend(h);
                by_state[(0, 0)] = 1.0;
                for i in 1..states {
                    by_state[(i, i)] = 1.0 - blend;
                    by_decisions[(i, i - 1)] = blend;
                }
                // phi + h (omega + blend (omega_decided - omega))
                by_state[(0, 2)] = h * (1.0 - blend);
                by_decisions[(0, 1)] = h * blend;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schedule's command and advance Jacobians against central differences at `state`
    /// and `decisions`, the advance over 10 ms.
    fn check_against_central_differences(schedule: CommandSchedule, state: &[f64], decisions: &[f64]) {
        let (commands, count, states) = (schedule.commands(), schedule.decisions(), schedule.states());
        assert_eq!(state.len(), states);
        let h = 0.01;
        let mut by_state = DMatrix::zeros(commands, states);
        let mut by_decisions = DMatrix::zeros(commands, count);
        schedule.command_jacobians(state, decisions, &mut by_state, &mut by_decisions);
        let mut advance_by_state = DMatrix::zeros(states, states);
        let mut advance_by_decisions = DMatrix::zeros(states, count);
        schedule.advance_jacobians(h, &mut advance_by_state, &mut advance_by_decisions);
        // Commands and the advanced state, stacked.
        let outputs_at = |state: &[f64], decisions: &[f64]| {
            let mut out = vec![0.0; commands];
            schedule.commands_into(state, decisions, &mut out);
            let mut advanced = state.to_vec();
            schedule.advance(&mut advanced, decisions, h);
            out.extend(advanced);
            out
        };
        let eps = 1e-6;
        // Column k of the stacked Jacobians by the state (k < states) or decision k - states.
        let expected = |row: usize, k: usize| match (row < commands, k < states) {
            (true, true) => by_state[(row, k)],
            (true, false) => by_decisions[(row, k - states)],
            (false, true) => advance_by_state[(row - commands, k)],
            (false, false) => advance_by_decisions[(row - commands, k - states)],
        };
        for k in 0..states + count {
            let (mut state_up, mut state_down) = (state.to_vec(), state.to_vec());
            let (mut up, mut down) = (decisions.to_vec(), decisions.to_vec());
            if k < states {
                state_up[k] += eps;
                state_down[k] -= eps;
            } else {
                up[k - states] += eps;
                down[k - states] -= eps;
            }
            let (plus, minus) = (outputs_at(&state_up, &up), outputs_at(&state_down, &down));
            for row in 0..commands + states {
                let difference = (plus[row] - minus[row]) / (2.0 * eps);
                // Second-order truncation of trigonometric terms of order 1 at eps = 1e-6
                // leaves about 1e-10; 1e-8 catches any wrong entry.
                assert!((difference - expected(row, k)).abs() < 1e-8, "row {row} by column {k}");
            }
        }
    }

    #[test]
    fn wave_jacobians_match_central_differences() {
        let wave = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0, lag: 0.0 };
        check_against_central_differences(wave, &[0.7], &[0.6, 1.5, -0.2]);
        let lagged = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0, lag: 0.3 };
        check_against_central_differences(lagged, &[0.7, 0.2, -0.4, 0.1], &[0.6, 1.5, -0.2]);
    }

    #[test]
    fn a_lagged_wave_steps_as_the_samplers_gait() {
        // The loop's gait for the sampler (`SteeredGait`) and the plan's lagged wave take
        // the same path to the same decisions, so a plan predicts the set points it gets.
        use crate::optimal_control::gait_sampling::{GaitParameters, SteeredGait};
        let target = GaitParameters { amplitude: 0.8, temporal_frequency: 1.5, offset: -0.3 };
        let mut gait = SteeredGait::new(-1.0, 0.3, target);
        let wave = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0, lag: 0.3 };
        let mut state = [0.0, gait.applied.amplitude, gait.applied.temporal_frequency, gait.applied.offset];
        let (mut set_points, decisions) = ([0.0; 5], target.to_array());
        for _ in 0..500 {
            gait.advance(0.002);
            wave.advance(&mut state, &decisions, 0.002);
            wave.commands_into(&state, &decisions, &mut set_points);
            for (j, set_point) in set_points.iter().enumerate() {
                assert!((set_point - gait.joint_angle(j)).abs() < 1e-9, "joint {j}");
            }
        }
        // Without a lag the set points are the decisions' wave at once.
        let at_once = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0, lag: 0.0 };
        assert_eq!(at_once.states(), 1);
        at_once.commands_into(&[0.5], &decisions, &mut set_points);
        assert!((set_points[0] - (0.8 * 0.5_f64.sin() - 0.3)).abs() < 1e-15);
    }

    #[test]
    fn rotating_bend_jacobians_match_central_differences() {
        // Two sections of three muscles 120 degrees apart, the second section's plane shifted,
        // and a seventh muscle sharing a coordinate (forces add).
        let mut muscles: Vec<BendingMuscle> = (0..6)
            .map(|k| BendingMuscle {
                coordinate: 6 + k,
                force_per_bend: 40.0 + k as f64,
                angle: (k % 3) as f64 * std::f64::consts::TAU / 3.0 + (k / 3) as f64 * 0.4,
            })
            .collect();
        muscles.push(BendingMuscle { coordinate: 7, force_per_bend: 10.0, angle: 2.0 });
        let bend = CommandSchedule::rotating_bend(12, &muscles).unwrap();
        check_against_central_differences(bend, &[0.7], &[0.4, -3.0]);
        check_against_central_differences(bend, &[-5.1], &[0.0, 2.0]);
        // Slack where the plane points, the most force opposite it, shared coordinates
        // adding, the coordinates no muscle drives free.
        let mut forces = vec![0.0; 12];
        bend.commands_into(&[0.0], &[0.5, 1.0], &mut forces);
        assert_eq!(forces[6], 0.0);
        bend.commands_into(&[std::f64::consts::PI + 0.4], &[0.5, 1.0], &mut forces);
        assert!((forces[9] - 43.0 * 0.5 * 2.0).abs() < 1e-12);
        let shared = 41.0 * 0.5 * (1.0 - (2.0 * std::f64::consts::PI / 3.0 - 3.5416).cos())
            + 10.0 * 0.5 * (1.0 - (2.0 - 3.5416_f64).cos());
        assert!((forces[7] - shared).abs() < 1e-3);
        assert!(forces[..6].iter().all(|f| *f == 0.0));
    }

    #[test]
    fn rotating_bend_refuses_bad_muscles() {
        let muscle = BendingMuscle { coordinate: 3, force_per_bend: 1.0, angle: 0.0 };
        assert!(CommandSchedule::rotating_bend(3, &[muscle]).unwrap_err().contains("coordinate 3"));
        assert!(CommandSchedule::rotating_bend(4, &[]).is_err());
        let nan = BendingMuscle { force_per_bend: f64::NAN, ..muscle };
        assert!(CommandSchedule::rotating_bend(4, &[nan]).unwrap_err().contains("finite"));
        assert!(CommandSchedule::rotating_bend(40, &[muscle; MAX_BENDING_MUSCLES + 1]).is_err());
    }
}
