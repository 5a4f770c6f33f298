//! Control laws that turn time and state into set points or forces: serpenoid, rolling and
//! valve-wave gaits (with the pneumatic muscles' length-to-pressure map), actuator dynamics,
//! joint servos, and admittance on contact.

pub(crate) mod actuator_response;
pub(crate) mod admittance;
pub(crate) mod gait;
pub(crate) mod pd;
pub(crate) mod rolling;
pub(crate) mod valve_wave;
