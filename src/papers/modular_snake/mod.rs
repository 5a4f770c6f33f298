//! 003_011ffa2a91e05fc5, the modular rigid snake: pedal wave, pipe and stair with and
//! without admittance control, run as scenarios of the generic simulation.

pub mod experiments;
