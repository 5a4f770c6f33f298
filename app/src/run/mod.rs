//! `softgen run`: run configuration files, the controllers (one module each), and a robot's
//! controller through the output chain to a device at a fixed rate: the serial board, a
//! comedi card, the simulated plant; sensing and estimation on the way back.

pub(crate) mod config;
pub(crate) mod controllers;
pub(crate) mod driver;
pub(crate) mod estimation;
pub(crate) mod natnet;
pub(crate) mod outputs;
pub(crate) mod request;
pub(crate) mod robot_emulator;
pub(crate) mod sensing;
pub(crate) mod serial;
pub(crate) mod session;
