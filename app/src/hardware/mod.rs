//! `softgen run`: run configuration files, the serial board device, and a robot's
//! controller through the output chain to a device at a fixed rate.

pub(crate) mod config;
pub(crate) mod controllers;
pub(crate) mod driver;
pub(crate) mod estimation;
pub(crate) mod natnet;
pub(crate) mod outputs;
pub(crate) mod request;
pub(crate) mod robot_emulator;
pub(crate) mod run;
pub(crate) mod sensing;
pub(crate) mod serial;
