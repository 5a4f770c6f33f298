//! The settings of the stride planner (whole gait cycles chosen by rolling each out), read
//! from the run configuration's `[mpc]` table.

use crate::run::controllers::MpcFile;
use nalgebra::Vector2;

/// Settings of the stride planner (`solver = "strides"`): where the centre of mass should
/// go and when it counts as there, and optionally how far ahead of a cycle its plan starts.
/// What the strides are, and that lead by default, are the robot's (its paper's run driver).
#[derive(Clone, Debug, PartialEq)]
pub struct StrideMpcSettings {
    /// Where the centre of mass should go, in the ground plane (m, world frame).
    pub goal: Vector2<f64>,
    /// Arrival: the centre of mass within this distance (m), held for `hold` s.
    pub arrival_radius: f64,
    /// See `arrival_radius`.
    pub hold: f64,
    /// Decisions a second, when not the robot's: the gait's frequency or a whole multiple
    /// of it. Checked against the cycle when the run starts.
    pub replan_hz: Option<f64>,
    /// How long before each decision its plan starts (s), when not the whole decision
    /// period (a quarter cycle at most): a plan not back by its decision leaves the stride
    /// in force until the next. Checked against the decision period when the run starts.
    pub lead: Option<f64>,
}

/// The stride planner's settings from `m`, aimed at `goal`.
pub(crate) fn parse_stride_mpc(m: &MpcFile, goal: Vector2<f64>) -> Result<StrideMpcSettings, String> {
    let settings = StrideMpcSettings {
        goal,
        arrival_radius: m.arrival_radius.unwrap_or(0.05),
        hold: m.hold.unwrap_or(2.0),
        replan_hz: m.replan_hz,
        lead: m.lead,
    };
    for (name, value) in [("arrival_radius", settings.arrival_radius), ("hold", settings.hold)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!("{name} must be finite and >= 0, got {value}"));
        }
    }
    if let Some(lead) = settings.lead {
        if !(lead.is_finite() && lead > 0.0) {
            return Err(format!("lead must be finite and > 0 s, got {lead}"));
        }
    }
    if let Some(rate) = settings.replan_hz {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!("replan_hz must be finite and > 0, got {rate}"));
        }
    }
    if settings.arrival_radius == 0.0 {
        return Err("arrival_radius must be > 0 m: a robot that walks never stops exactly on a point".into());
    }
    Ok(settings)
}
