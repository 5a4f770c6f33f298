//! 003_011ffa2a91e05fc5, the modular rigid snake: pedal wave, pipe and stair with and
//! without admittance control, run as scenarios of the generic simulation; and its wheeled
//! lateral-undulation robot's control task, box-DDP against MPPI.

pub mod experiments;
pub mod mpc;
