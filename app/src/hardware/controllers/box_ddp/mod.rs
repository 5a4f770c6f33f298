//! Box-DDP model-predictive control: over the actuators' commands (pressures and thrusts),
//! or over the wave of a gait the joints follow.

pub(crate) mod settings;
