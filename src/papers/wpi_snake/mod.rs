//! 001_6780a70913e94322, the WPI snake: its valve-driven runs with either of the paper's
//! models (the simplified one, eqs 10-12, in `simplified_chain.rs`), model-predictive
//! control of its valve wave, and their experiments.

pub mod experiments;
pub mod model;
pub mod mpc;
pub mod simplified_chain;
pub mod sweep;

pub use experiments::{FREQUENCIES, PRESSURES};
pub use model::*;
pub use simplified_chain::{ChainPose, SimplifiedChain};
