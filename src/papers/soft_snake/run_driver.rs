//! `softgen run` for the soft snake: its rolling gaits by name, each muscle's pressure from
//! the rotating bend through the paper's length-to-pressure map, to the output chain; and
//! what its model-predictive controller decides there (mpc-000's rotating bend).

use super::gait::RollingGait;
use super::mpc::{rolling_schedule, RollAsideTask};
use super::rolling::{geometries, mount_rolls, rolling_muscles, Rolling, RollingRun};
use softgen_app::{LimbController, LimbGaitRequest, RunDriver, ScheduledMpc};
use softgen_generated::soft_snake::SECTIONS;
use softgen_runtime::ActuatorCommand;

/// The driver the papers' registry lists for the soft snake.
pub(crate) const DRIVER: RunDriver = RunDriver {
    robot: "soft_snake",
    limb_gait: Some(rolling_gait),
    held_inputs: None,
    scheduled_mpc: Some(roll_aside),
    stride_mpc: None,
};

/// The rolling gaits of section II-C by their command-line names.
const GAITS: [(&str, Rolling); 2] = [("planar", Rolling::Planar), ("spatial", Rolling::Spatial)];

/// The requested rolling gait (default planar at the rolling runs' 0.5 Hz and 0.4 rad a
/// section, under the paper's 3 bar ceiling) after the runs' 2 s drop at 0 bar, its bend
/// faded in over 1 s.
fn rolling_gait(request: &LimbGaitRequest) -> Result<LimbController, String> {
    let name = request.gait.unwrap_or("planar");
    let rolling = GAITS
        .iter()
        .find(|g| g.0 == name)
        .map(|g| g.1)
        .ok_or_else(|| format!("--limb-gait `{name}`: the soft snake rolls {}", GAITS.map(|g| g.0).join(" or ")))?;
    if request.stride.is_some() {
        return Err("--stride sets a limbed robot's stride; the soft snake's rolling gait has none".into());
    }
    let run = RollingRun::new(rolling);
    let frequency = request.frequency.unwrap_or(run.frequency);
    if !(frequency.is_finite() && frequency.abs() <= 10.0) {
        return Err(format!("--gait-frequency must be within +-10 Hz (turns of the bending plane), got {frequency}"));
    }
    let muscles = rolling_muscles(&run)?;
    let geometry = geometries(&run.params)?;
    let rolls = mount_rolls();
    let bend = run.bend.unwrap_or_else(|| muscles.largest_bend(&geometry[0]));
    let gait = RollingGait {
        frequency,
        bend,
        section_phase: if rolling == Rolling::Planar { 0.0 } else { std::f64::consts::FRAC_PI_3 },
        ramp: 1.0,
    };
    gait.validate()?;
    let (settle, first) = (run.settle, request.first_muscle);
    let controller = move |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
        if commands.len() < first + 3 * SECTIONS {
            return Err(format!("{} commands for {} muscles from command {first}", commands.len(), 3 * SECTIONS));
        }
        for i in 0..SECTIONS {
            let lengths = if t < settle { [0.0; 3] } else { gait.lengths(t - settle, i, &geometry[i], rolls[i]) };
            for (j, length) in lengths.iter().enumerate() {
                commands[first + 3 * i + j] = ActuatorCommand::Pressure(muscles.pressure(*length));
            }
        }
        Ok(())
    };
    Ok(LimbController {
        controller: Box::new(controller),
        description: format!(
            "{name} rolling: the bending plane at {frequency} turns/s, {bend} rad a section (up to {:.2} bar), after {settle} s at 0 bar",
            muscles.pressure(2.0 * geometry[0].actuator_radius * bend)
        ),
        dry_run_at: settle + 1.0 + 0.25 / frequency.abs().max(1e-3),
    })
}

/// What the loop's model-predictive controller decides for the soft snake: mpc-000's
/// rotating bend (each section's bend and the bending plane's rate), since its nine pressures
/// held over a knot bend the body but do not roll it; after the runs' 2 s drop.
fn roll_aside() -> Result<ScheduledMpc, String> {
    let task = RollAsideTask::new();
    Ok(ScheduledMpc {
        schedule: rolling_schedule(&task)?,
        lower: task.horizon.lower.clone(),
        upper: task.horizon.upper.clone(),
        rest: task.weights.rest.clone(),
        settle: task.rolling.settle,
        description: format!(
            "the rolling gait's bend ({} to {} rad a section) and bending-plane rate (within {:.2} rad/s)",
            task.horizon.lower[0], task.horizon.upper[0], task.horizon.upper[1]
        ),
    })
}
