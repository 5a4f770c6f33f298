//! 000_a2f8bdeafcf4372f, the soft snake: its drop and rolling runs on the carpet, and
//! their experiments.

pub mod experiments;
pub mod rolling;

pub use rolling::*;
