//! 000_a2f8bdeafcf4372f, the soft snake: its drop and rolling runs on the carpet, their
//! experiments, and the rolling planner's task.

pub mod experiments;
pub mod mpc;
pub mod rolling;

pub use rolling::*;
