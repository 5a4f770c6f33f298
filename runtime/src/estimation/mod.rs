//! Sensing and state estimation: what sensors measure and how their readings are judged,
//! sensors emulated from the simulated plant, and an extended Kalman filter on the
//! generated model (for valve robots, on their
//! prescribed model); sensors on a DAQ card's analog inputs; the motion-capture protocol (NatNet) its readers and emulators speak.

pub(crate) mod analog;
pub(crate) mod emulated;
pub(crate) mod kalman;
pub mod natnet_messages;
pub(crate) mod sensors;
pub(crate) mod valve_process;
