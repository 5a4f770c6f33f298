//! What `softgen run` is asked to do and what it reports: the options, which controller
//! drives the robot and where its state comes from, and how the run ended.

use crate::run::estimation::EstimatorReport;
use nalgebra::Vector2;
use softgen_runtime::{LoopStats, PlannerStats, SafetyFault};
use std::path::PathBuf;

/// Which controller drives the actuators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerChoice {
    /// The robot's gait, open loop.
    Gait,
    /// The model-predictive controller re-planning towards a goal from the robot's state:
    /// the simulated plant's (true or estimated) or, on the serial board, estimated from the
    /// board's sensors and motion capture.
    Mpc,
}

/// Where the model-predictive controller's state comes from on the simulated plant (on the
/// robot it is always estimated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateSource {
    /// The plant's true state.
    #[default]
    True,
    /// The state estimator, reading the run configuration's sensors emulated from the plant.
    Estimated,
}

/// What `softgen run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The robot's name.
    pub robot: String,
    /// The serial board's port; `None` runs the simulated plant.
    pub serial_port: Option<String>,
    /// A comedi DAQ device (e.g. /dev/comedi0); needs the `comedi` build feature.
    pub comedi_device: Option<String>,
    /// How long the board may take to acknowledge a frame.
    pub ack_timeout: std::time::Duration,
    /// Run configuration file; `None` uses the robot's own (its spec's sibling
    /// `<robot>.run.toml`, carried by the generated registry).
    pub config: Option<PathBuf>,
    /// Print the first commands and stop, reaching no device.
    pub dry_run: bool,
    /// The loop's rate (Hz), in place of the run configuration's.
    pub rate_hz: Option<f64>,
    /// How long the loop runs (s).
    pub duration: f64,
    /// Every value sent to the device, with its time (CSV).
    pub record: PathBuf,
    /// The simulated plant's trajectory (CSV).
    pub trajectory: PathBuf,
    /// Try real-time scheduling and memory locking.
    pub realtime: bool,
    /// The gait's amplitude (rad), in place of the spec's.
    pub amplitude: Option<f64>,
    /// The gait's temporal frequency (rad/s), in place of the spec's.
    pub temporal_frequency: Option<f64>,
    /// The gait's spatial frequency (rad), in place of the spec's.
    pub spatial_frequency: Option<f64>,
    /// The gait's offset (rad), in place of the spec's.
    pub offset: Option<f64>,
    /// Which controller drives the robot.
    pub controller: ControllerChoice,
    /// The model-predictive controller's goal (m), in place of the run configuration's, and
    /// its height for robots that move in space (None: the start's).
    pub goal: Option<Vector2<f64>>,
    /// See `goal`.
    pub goal_height: Option<f64>,
    /// Muscle-driven robots: the limb gait by name, its stride radius (m) and frequency
    /// (Hz); defaults are the robot's driver's.
    pub limb_gait: Option<String>,
    /// See `limb_gait`.
    pub stride: Option<f64>,
    /// See `limb_gait`.
    pub gait_frequency: Option<f64>,
    /// Swimming robots: the named inputs to hold; default the robot's driver's.
    pub swim: Option<String>,
    /// A recorder CSV (`t,kind,channel,value`, as `record` writes, from the robot or the
    /// simulated plant) to feed to the simulated plant in place of a controller: the plant's
    /// trajectory under the recorded values, with no loop, device or controller.
    pub replay: Option<PathBuf>,
    /// The mpc controller's state: the plant's truth or the estimator's.
    pub state: StateSource,
    /// Where `--state estimated` writes each period's readings, estimate and commands (CSV).
    pub sensor_log: PathBuf,
    /// A sensor log to replay through the estimator offline, with no loop or plant.
    pub estimate_from: Option<PathBuf>,
}

impl RunOptions {
    /// Whether the run drives the robot (a serial board or a comedi card), not the simulated
    /// plant: its state can then only be estimated.
    pub(crate) fn on_robot(&self) -> bool {
        self.serial_port.is_some() || self.comedi_device.is_some()
    }

    /// Whether a serpenoid gait's option is given (--amplitude, --temporal-frequency,
    /// --spatial-frequency, --offset).
    pub(crate) fn sets_serpenoid(&self) -> bool {
        self.amplitude.is_some()
            || self.temporal_frequency.is_some()
            || self.spatial_frequency.is_some()
            || self.offset.is_some()
    }

    /// Whether a limb gait's option is given (--limb-gait, --stride, --gait-frequency).
    pub(crate) fn sets_limb_gait(&self) -> bool {
        self.limb_gait.is_some() || self.stride.is_some() || self.gait_frequency.is_some()
    }

    /// The open-loop controller takes no goal: `--goal` without `--controller mpc` is an error.
    pub(crate) fn check_open_loop_goal(&self) -> Result<(), String> {
        match self.goal {
            Some(_) => Err("--goal is the mpc controller's: add --controller mpc".into()),
            None => Ok(()),
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct RunReport {
    /// What the loop measured; None where no loop ran.
    pub stats: Option<LoopStats>,
    /// Why the run stopped early, if it did.
    pub fault: Option<SafetyFault>,
    /// What the model-predictive controller did, on `ControllerChoice::Mpc` runs.
    pub mpc: Option<MpcReport>,
    /// What the state estimator did, on `StateSource::Estimated` runs.
    pub estimator: Option<EstimatorReport>,
    /// The run configuration's terrain and parameters (the plant's, on the simulated plant).
    pub plant: Option<PlantSetting>,
    /// Why the safe state could not be sent, or its sending not confirmed, at the end of
    /// the loop: the outputs may still be driven. None where it was sent or no loop ran.
    pub safe_state_failure: Option<SafetyFault>,
    /// Why the recording of every value sent could not be completed, if it could not.
    pub recording_failure: Option<String>,
}

impl RunReport {
    /// The report of a run that ran no loop (a dry run, a replay, an offline estimate).
    pub fn without_loop() -> RunReport {
        RunReport {
            stats: None,
            fault: None,
            mpc: None,
            estimator: None,
            plant: None,
            safe_state_failure: None,
            recording_failure: None,
        }
    }

    /// How the run left the robot and its files, as its last line says it: the outputs in
    /// their safe state or not, the logs complete or not.
    pub fn ending(&self) -> String {
        let outputs = match &self.safe_state_failure {
            None => "outputs in their safe state".to_string(),
            Some(e) => {
                format!("the SAFE STATE FAILED ({e}): the outputs may still be driven; make the hardware safe by hand")
            }
        };
        let logs = match &self.recording_failure {
            None => "logs complete".to_string(),
            Some(e) => format!("the recording is incomplete ({e})"),
        };
        format!("{outputs}, {logs}")
    }
}

/// The run configuration's terrain (None: the spec's) and parameters by name.
#[derive(Clone, Debug, Default)]
pub struct PlantSetting {
    /// The terrain.
    pub terrain: Option<softgen_runtime::Terrain>,
    /// The parameters by name.
    pub params: Vec<(String, f64)>,
}

/// The model-predictive controller's side of a run.
#[derive(Clone, Debug)]
pub struct MpcReport {
    /// The goal in the ground plane (m).
    pub goal: Vector2<f64>,
    /// The goal's height (m), for robots that move in space.
    pub goal_height: Option<f64>,
    /// What the planner thread did.
    pub planner: PlannerStats,
    /// Plans the gait took over.
    pub plans_applied: u64,
    /// When the centre of mass came within the arrival radius (s), if it did (and, for
    /// box-DDP, stayed there to the end).
    pub arrived_at: Option<f64>,
    /// Whether the run ended because the task was done (arrived and settled, or held).
    pub held: bool,
    /// Distance of the centre of mass from the goal at the last measurement (m).
    pub final_distance: f64,
    /// Distance at the start (m).
    pub start_distance: f64,
}

impl MpcReport {
    /// The run's closing lines: `planner: N plans at X Hz, longest Y ms, overruns Z, ...`
    /// and `goal: reached at t = T s (distance D m)` or `goal: not reached (distance D m)`.
    pub fn print(&self) {
        println!("planner: {}", self.planner);
        println!("{}", self.goal_line());
    }

    /// The goal's closing line. The planner measures the distance when it plans, so a run
    /// that ended before its first plan has none: it says so rather than print NaN.
    pub fn goal_line(&self) -> String {
        let distance = match self.final_distance.is_finite() {
            true => format!("distance {:.3} m", self.final_distance),
            false => "distance not measured: the planner made no plan".to_string(),
        };
        match self.arrived_at {
            Some(at) => {
                format!("goal: reached at t = {at:.2} s ({distance}; {:.3} m at the start)", self.start_distance)
            }
            None => format!("goal: not reached ({distance}; {:.3} m at the start)", self.start_distance),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(final_distance: f64, arrived_at: Option<f64>) -> MpcReport {
        MpcReport {
            goal: Vector2::new(1.0, 0.0),
            goal_height: None,
            planner: PlannerStats::default(),
            plans_applied: 0,
            arrived_at,
            held: false,
            final_distance,
            start_distance: 1.25,
        }
    }

    /// A run that ended before its first plan has no distance: its goal line says so instead
    /// of printing NaN; a measured one prints it.
    #[test]
    fn the_goal_line_never_prints_nan() {
        let unplanned = report(f64::NAN, None).goal_line();
        assert_eq!(
            unplanned,
            "goal: not reached (distance not measured: the planner made no plan; 1.250 m at the start)"
        );
        assert_eq!(report(0.5, None).goal_line(), "goal: not reached (distance 0.500 m; 1.250 m at the start)");
        assert_eq!(
            report(0.04, Some(3.0)).goal_line(),
            "goal: reached at t = 3.00 s (distance 0.040 m; 1.250 m at the start)"
        );
    }
}
