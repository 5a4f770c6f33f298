//! What a paper adds to `softgen run` for its robot ([`RunDriver`]): the open-loop gaits,
//! swimming inputs, stride planners and command schedules the generic controllers drive, as
//! data the paper fills in, so nothing generic names a paper.

use nalgebra::Vector2;
use softgen_runtime::ActuatorCommand;

/// One control period's commands: fills every actuator's command at time `t` (s).
pub type Controller = Box<dyn FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>>;

/// What `softgen run` asks of a limb gait: its name and settings as given on the command line
/// (None: the driver's defaults), and the index of the first muscle among the actuators.
#[derive(Clone, Debug)]
pub struct LimbGaitRequest<'a> {
    /// The gait's name.
    pub gait: Option<&'a str>,
    /// Its stride radius (m).
    pub stride: Option<f64>,
    /// Its frequency (Hz).
    pub frequency: Option<f64>,
    /// The index of the first muscle among the actuators.
    pub first_muscle: usize,
}

/// A limb gait's controller, with the line that describes it and the time (s) whose
/// commands a dry run prints.
pub struct LimbController {
    /// The controller.
    pub controller: Controller,
    /// The line that describes it.
    pub description: String,
    /// The time whose commands a dry run prints (s).
    pub dry_run_at: f64,
}

/// Inputs a swimming robot holds from the start: each thruster's thrust (N) and each
/// muscle's water pressure (MPa).
#[derive(Clone, Debug, PartialEq)]
pub struct HeldInputs {
    /// The inputs' name, as `--swim` takes it.
    pub name: String,
    /// Each thruster's thrust (N).
    pub thrusts: Vec<f64>,
    /// Each muscle's water pressure (MPa).
    pub pressures: Vec<f64>,
}

/// How a paper drives its robot in `softgen run` where the generic serpenoid gait does not
/// apply. The papers' registry lists these (`papers::RUN_DRIVERS`); generic code finds a
/// robot's by name and names no robot itself.
pub struct RunDriver {
    /// The robot it drives.
    pub robot: &'static str,
    /// A muscle-driven robot's limb gait (`--limb-gait`, `--stride`, `--gait-frequency`).
    pub limb_gait: Option<fn(&LimbGaitRequest) -> Result<LimbController, String>>,
    /// A swimming robot's named held inputs (`--swim NAME`; None: the default).
    pub held_inputs: Option<fn(Option<&str>) -> Result<HeldInputs, String>>,
    /// What the model-predictive controller decides for a robot whose actuators' own
    /// commands would not move it towards a goal at first order (None: the commands).
    pub scheduled_mpc: Option<fn() -> Result<ScheduledMpc, String>>,
    /// A limbed robot's strides, for the stride planner (`solver = "strides"`).
    pub stride_mpc: Option<fn(&StrideMpcRequest) -> Result<StrideMpc, String>>,
}

/// What `softgen run` asks of a stride planner: its goal for the centre of mass (m), the
/// run configuration's parameter values (by name, over the spec's), and the pressure
/// ceiling (bar).
#[derive(Clone, Debug)]
pub struct StrideMpcRequest<'a> {
    /// The goal for the centre of mass in the ground plane (m).
    pub goal: Vector2<f64>,
    /// The run configuration's parameter values, by name, over the spec's.
    pub parameters: &'a [(String, f64)],
    /// The pressure ceiling (bar).
    pub ceiling: f64,
}

/// The state a stride plan starts from, as slices of the robot's own (see
/// `softgen_runtime::StrideSnapshot`): measured at `time`, with the muscles' reached
/// pressures (bar), the stride in force and its cycle's start, and the start of the
/// cycle the plan is for.
pub struct StrideRequest<'a> {
    /// When the state was measured (s).
    pub time: f64,
    /// The coordinates then.
    pub q: &'a [f64],
    /// Their rates then.
    pub qd: &'a [f64],
    /// The muscles' reached pressures (bar, muscle order).
    pub reached: &'a [f64],
    /// The stride in force (its index in [`StrideMpc::strides`]).
    pub current: usize,
    /// When the stride in force began its cycle (s).
    pub current_start: f64,
    /// When the cycle the plan is for begins (s).
    pub boundary: f64,
}

/// Commanded pressures (bar, muscle order) of a stride `since` seconds into its cycle.
pub type StridePressures = Box<dyn Fn(usize, f64, &mut [f64]) -> Result<(), String> + Send>;

/// A stride planner: the stride for a request's cycle.
pub type StridePlanning = Box<dyn FnMut(&StrideRequest) -> Result<softgen_runtime::StrideChoice, String> + Send>;

/// A model-predictive controller that chooses a limbed robot's strides (whole cycles of its
/// gaits): the loop plays them, the planner thread chooses each a lead before it starts.
pub struct StrideMpc {
    /// The strides' names, in the planner's order.
    pub strides: Vec<String>,
    /// The stride played while the robot settles and wherever no plan came in time.
    pub initial: usize,
    /// One gait cycle (s).
    pub cycle: f64,
    /// The time before the first cycle, while the robot settles (s).
    pub settle: f64,
    /// How often the stride is decided (s, the cycle or a whole fraction of it).
    pub decision_period: f64,
    /// Each stride's commanded pressures.
    pub pressures: StridePressures,
    /// The planner that chooses each cycle's stride.
    pub planner: StridePlanning,
    /// What the planner does, for the run's header.
    pub description: String,
}

/// A model-predictive controller that decides a command schedule's parameters (a rolling
/// gait's bend and bending-plane rate) instead of each muscle's pressure: the schedule turns
/// decisions and its state (the plane's phase) into forces on the muscles' coordinates,
/// which the loop sends as each muscle's pressure.
#[derive(Clone, Debug)]
pub struct ScheduledMpc {
    /// The schedule that turns decisions and its state into forces on the muscles'
    /// coordinates.
    pub schedule: softgen_runtime::CommandSchedule,
    /// Lower bounds of the decisions.
    pub lower: Vec<f64>,
    /// Upper bounds of the decisions.
    pub upper: Vec<f64>,
    /// The decisions' resting values (the first plan's, and what the effort cost pulls
    /// to).
    pub rest: Vec<f64>,
    /// Time at zero pressure before the planner starts (s): the robot's drop onto the
    /// ground.
    pub settle: f64,
    /// What the decisions are, for the run's header.
    pub description: String,
}
