//! 002_f355a977a209e7c9, the soft-limbed pinniped: its gaits and trials, and their
//! experiments.

pub mod experiments;
pub mod model;
pub mod mpc;
pub mod run_driver;
pub mod sweep;

pub use model::*;
