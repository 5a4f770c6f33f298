//! `softgen run` for the pinniped: its limb gaits by name, through the jointspace-to-pressure
//! map, to the output chain.

use super::model::{pressure_controller, Gait};
use crate::hardware::run::{LimbController, LimbGaitRequest, RunDriver};

/// The driver the papers' registry lists for the pinniped.
pub(crate) const DRIVER: RunDriver =
    RunDriver { robot: "pinniped", limb_gait: Some(limb_gait), held_inputs: None, scheduled_mpc: None };

/// The gaits of section III by their command-line names.
const GAITS: [(&str, Gait); 6] = [
    ("forward", Gait::Forward),
    ("backward", Gait::Backward),
    ("turn-left", Gait::CrawlTurn { left: true }),
    ("turn-right", Gait::CrawlTurn { left: false }),
    ("in-place-cw", Gait::InPlace { counterclockwise: false }),
    ("in-place-ccw", Gait::InPlace { counterclockwise: true }),
];

/// The requested gait (default backward crawling at a 0.10 m stride radius and 1.00 Hz)
/// after 1 s at 0 bar.
fn limb_gait(request: &LimbGaitRequest) -> Result<LimbController, String> {
    let name = request.gait.unwrap_or("backward");
    let gait =
        GAITS.iter().find(|g| g.0 == name).map(|g| g.1).ok_or_else(|| {
            format!("--limb-gait `{name}`: the pinniped's gaits are {}", GAITS.map(|g| g.0).join(", "))
        })?;
    let stride = request.stride.unwrap_or(0.10);
    let frequency = request.frequency.unwrap_or(1.0);
    let settle = 1.0;
    let controller = pressure_controller(gait, stride, frequency, settle, request.first_muscle)?;
    Ok(LimbController {
        controller: Box::new(controller),
        description: format!("{}: stride radius {stride} m, {frequency} Hz, after {settle} s at 0 bar", gait.name()),
        dry_run_at: settle + 0.25 / frequency,
    })
}
