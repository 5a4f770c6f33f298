//! 001_6780a70913e94322, the WPI snake: its valve-driven runs with either of the paper's
//! models, model-predictive control of its valve wave, and their experiments.

pub mod experiments;
pub mod model;
pub mod mpc;
pub mod sweep;

pub use experiments::{FREQUENCIES, PRESSURES};
pub use model::*;
