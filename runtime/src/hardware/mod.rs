//! The path to a real robot: actuator commands to device values (channel maps, pressure
//! maps), the safety filter and watchdog, devices and the serial board protocol, the
//! fixed-rate real-time loop, the lock-free mailbox, the planners' steering and plan
//! following through it, valve-driven robots' plant and steering, limbed robots' strides, and `run_hardware`, which ties them together.

pub(crate) mod actuation;
pub(crate) mod device;
pub(crate) mod mailbox;
pub(crate) mod plan_following;
pub mod protocol;
pub(crate) mod realtime;
pub(crate) mod safe_run;
pub(crate) mod safety;
pub(crate) mod steering;
pub(crate) mod stride_loop;
pub(crate) mod valve_loop;
