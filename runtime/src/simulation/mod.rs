//! A robot on its terrain under its gait, servos and admittance as one second-order system
//! (`Simulation`), and model-predictive gait planning, which simulates it to choose gaits.

pub(crate) mod closed_loop;
pub(crate) mod mpc;
