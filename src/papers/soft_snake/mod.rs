//! 000_a2f8bdeafcf4372f, the soft snake: its drop and rolling runs on the carpet, their
//! experiments, the rolling planner's task, its rolling gaits in `softgen run`, and `softgen
//! roll`, the command it adds; the paper's rolling gaits and pneumatic muscles themselves are
//! in `gait.rs`.

pub mod experiments;
pub mod gait;
pub mod mpc;
pub mod roll_command;
pub mod rolling;
pub(crate) mod run_driver;

pub use gait::{PneumaticMuscles, RollingGait};
pub use roll_command::{roll, RollArgs, RollingName};
pub use rolling::*;
