//! 002_f355a977a209e7c9, the soft-limbed pinniped: its gaits and trials, and their
//! experiments.

pub mod experiments;
pub mod limb;
pub mod limb_gait;
pub mod model;
pub mod mpc;
pub mod run_driver;
pub mod sweep;

pub use limb::{robot_centre_of_gravity, CurveParameters, Limb, MountedLimb, OutOfReach, MAX_REACH_BEND};
pub use limb_gait::{LimbGait, LimbMotion};
pub use model::*;
