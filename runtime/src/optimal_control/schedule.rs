//! What a plan decides at each knot and how that becomes the robot's commands: the commands
//! themselves, held over the knot; the parameters of a travelling wave of joint set
//! points (amplitude, temporal frequency, offset); or a soft body's bend and the rate at
//! which its bending plane turns (muscle forces on its sections' length coordinates). A
//! wave's or a bend's phase is carried from step to step as a state of the plan.
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
/// zero when the plane points at it and the most opposite. The rolling gaits' law
/// (`RollingGait::lengths`) through a linear pressure-to-force map.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BendingMuscle {
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
    Held { commands: usize },
    /// Joint set points of a travelling wave, q_j = a sin(phi + eta j) + o for actuated
    /// joint j (0-based), with the decisions (a, omega, o) and the phase advancing as
    /// phi' = omega. The same wave as the gait samplers' `SteeredGait`.
    Wave { joints: usize, spatial_frequency: f64 },
    /// Forces on `coordinates` generalized coordinates (every one; those no muscle drives
    /// stay zero) from `count` muscles of a soft body bent by theta in a plane at phase phi,
    /// with the decisions (theta, omega) and the plane turning as phi' = omega. Made by
    /// [`CommandSchedule::rotating_bend`].
    RotatingBend { coordinates: usize, muscles: [BendingMuscle; MAX_BENDING_MUSCLES], count: usize },
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

    /// States it carries from step to step (the wave's or the bending plane's phase).
    pub fn states(&self) -> usize {
        match self {
            CommandSchedule::Held { .. } => 0,
            CommandSchedule::Wave { .. } | CommandSchedule::RotatingBend { .. } => 1,
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
            CommandSchedule::Wave { joints, spatial_frequency } => {
                for j in 0..joints {
                    let angle = state[0] + spatial_frequency * j as f64;
                    by_state[(j, 0)] = decisions[0] * angle.cos();
                    by_decisions[(j, 0)] = angle.sin();
                    by_decisions[(j, 2)] = 1.0;
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
        // Both phased schedules keep their rate second among the decisions.
        if self.states() == 1 {
            state[0] += decisions[1] * h;
        }
    }

    /// The advance's derivatives by the state (states x states) and by the decisions
    /// (states x decisions).
    pub fn advance_jacobians(&self, h: f64, by_state: &mut DMatrix<f64>, by_decisions: &mut DMatrix<f64>) {
        by_state.fill(0.0);
        by_decisions.fill(0.0);
        if self.states() == 1 {
            by_state[(0, 0)] = 1.0;
            by_decisions[(0, 1)] = h;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schedule's command Jacobians against central differences at `phase` and
    /// `decisions`, and one advance of 10 ms.
    fn check_against_central_differences(schedule: CommandSchedule, phase: f64, decisions: &[f64]) {
        let (commands, count) = (schedule.commands(), schedule.decisions());
        let mut by_state = DMatrix::zeros(commands, 1);
        let mut by_decisions = DMatrix::zeros(commands, count);
        schedule.command_jacobians(&[phase], decisions, &mut by_state, &mut by_decisions);
        let eps = 1e-6;
        let commands_at = |phase: f64, decisions: &[f64]| {
            let mut out = vec![0.0; commands];
            schedule.commands_into(&[phase], decisions, &mut out);
            out
        };
        let (up, down) = (commands_at(phase + eps, decisions), commands_at(phase - eps, decisions));
        for j in 0..commands {
            assert!(((up[j] - down[j]) / (2.0 * eps) - by_state[(j, 0)]).abs() < 1e-8, "{j} by phase");
        }
        for i in 0..count {
            let (mut plus, mut minus) = (decisions.to_vec(), decisions.to_vec());
            plus[i] += eps;
            minus[i] -= eps;
            let (up, down) = (commands_at(phase, &plus), commands_at(phase, &minus));
            for j in 0..commands {
                assert!(((up[j] - down[j]) / (2.0 * eps) - by_decisions[(j, i)]).abs() < 1e-8, "{j} {i}");
            }
        }
        let mut state = [phase];
        schedule.advance(&mut state, decisions, 0.01);
        assert!((state[0] - (phase + 0.01 * decisions[1])).abs() < 1e-15);
        let mut advance_by_state = DMatrix::zeros(1, 1);
        let mut advance_by_decisions = DMatrix::zeros(1, count);
        schedule.advance_jacobians(0.01, &mut advance_by_state, &mut advance_by_decisions);
        assert_eq!((advance_by_state[(0, 0)], advance_by_decisions[(0, 1)]), (1.0, 0.01));
    }

    #[test]
    fn wave_jacobians_match_central_differences() {
        let wave = CommandSchedule::Wave { joints: 5, spatial_frequency: -1.0 };
        check_against_central_differences(wave, 0.7, &[0.6, 1.5, -0.2]);
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
        check_against_central_differences(bend, 0.7, &[0.4, -3.0]);
        check_against_central_differences(bend, -5.1, &[0.0, 2.0]);
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
