//! 004_4e5a2166b70a9520, the underwater snake: its swimming inputs and runs, and their
//! experiments.

pub mod experiments;
pub mod model;
pub mod mpc;
pub mod run_driver;

pub use model::*;
