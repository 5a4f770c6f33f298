//! softgen's generic application: what every command does with any robot, named by none.
//! `simulate` (a scenario run to CSV, its settings by name, `eval`, a view page), `run`
//! (run configurations, the controllers, a controller through the output chain to a device,
//! the serial board, the robot emulator) and `support` (pending outputs, figures, 3D view pages,
//! parallel runs).
//!
//! A robot reaches these through [`RobotApp`]: its generated app crate (generated/apps/)
//! holds [`App`] for its model as a `&dyn RobotApp`, so the commands are compiled for each
//! robot in a crate of its own, in parallel with the others, and a robot added or changed
//! recompiles only its own. The softgen crate finds a robot's by name and holds the papers.
//!
//! Architecture Invariant: nothing here names a robot or a paper, or reads the registry of
//! robots; what a paper adds comes in as data ([`RunDriver`]).

// The public API is documented, and its doc links resolve: a missing doc or a broken link
// fails the build (`cargo doc` for the links), not a review.
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)]

mod robot_app;
mod run;
mod simulate;
mod support;

pub use robot_app::{known_parameters, App, RobotApp};
pub use run::config::{Drives, EnvironmentOverride, RunConfig};
pub use run::controllers::box_ddp::settings::{DdpMpcSettings, WaveDecisions};
pub use run::controllers::gait_steering::settings::MpcSettings;
pub use run::controllers::strides::settings::StrideMpcSettings;
pub use run::controllers::valve_steering::settings::ValveMpcSettings;
pub use run::controllers::PlannerSettings;
pub use run::driver::{
    Controller, HeldInputs, LimbController, LimbGaitRequest, RunDriver, ScheduledMpc, StrideMpc, StrideMpcRequest,
    StrideRequest,
};
pub use run::estimation::EstimatorReport;
pub use run::request::{ControllerChoice, MpcReport, PlantSetting, RunOptions, RunReport, StateSource};
pub use run::robot_emulator::{EmulatedRobot, RobotEmulatorOptions};
pub use run::serial::SerialDevice;
pub use run::session::parse_robot_run_config;
pub use simulate::eval::{read_stdin_input, EvalInput};
pub use simulate::scenario::{
    check_periods, AdmittanceForceChoice, CoordinatesChoice, IntegratorChoice, RunSummary, SampleRows, Scenario,
    TerrainChoice, MAX_CONTROL_PERIODS,
};
pub use simulate::settings::{
    AnisotropyName, IntegratorName, JacobianName, ResolvedRun, RunSettings, TerrainName, DOPRI5_TOLERANCES,
    ROS34_TOLERANCES,
};
pub use support::output::PendingFile;
pub use support::parallel::run_all;
pub use support::plot::{
    plot_contour, plot_paths, plot_paths_in, plot_run, plot_time_series, plot_track, RunView, Series,
};
pub use support::view::{page_from_csv, CsvTable, ViewSetup, DISPLAY_RATE};
