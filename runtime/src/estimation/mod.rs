//! Sensing and state estimation: what sensors measure and how their readings are judged,
//! sensors emulated from the simulated plant, and an extended Kalman filter on the
//! generated model.

pub(crate) mod emulated;
pub(crate) mod kalman;
pub(crate) mod sensors;
