//! `softgen run` for the underwater snake: the swimming inputs of Sec 3.2 by name, held
//! through its thrusters' channels and its joints' regulators.

use super::model::{pitch_conditions, spiral_conditions, straight_conditions, yaw_conditions, SwimCondition};
use softgen_app::{HeldInputs, RunDriver};

/// The driver the papers' registry lists for the underwater snake.
pub(crate) const DRIVER: RunDriver = RunDriver {
    robot: "underwater_snake",
    limb_gait: None,
    held_inputs: Some(held_inputs),
    scheduled_mpc: None,
    stride_mpc: None,
};

/// The command-line names of the inputs, in the paper's order.
pub const INPUT_NAMES: [&str; 8] =
    ["forward", "backward", "two-propellers", "yaw-0.3", "yaw-0.1", "pitch-1", "pitch-2", "spiral"];

/// The paper's condition called `name` on the command line.
pub fn condition(name: &str) -> Option<SwimCondition> {
    let all: Vec<SwimCondition> = [straight_conditions(), yaw_conditions(), pitch_conditions(), spiral_conditions()]
        .into_iter()
        .flatten()
        .collect();
    INPUT_NAMES.iter().position(|n| *n == name).map(|i| all[i].clone())
}

/// The inputs called `name` (default forward swimming), as the run holds them.
fn held_inputs(name: Option<&str>) -> Result<HeldInputs, String> {
    let name = name.unwrap_or("forward");
    let c = condition(name)
        .ok_or_else(|| format!("--swim `{name}`: the underwater snake's inputs are {}", INPUT_NAMES.join(", ")))?;
    Ok(HeldInputs { name: c.name.to_string(), thrusts: c.thrusts.to_vec(), pressures: c.pressures.to_vec() })
}
