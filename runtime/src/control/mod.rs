//! Control laws that turn time and state into set points or forces: serpenoid, rolling,
//! limb (tip circles) and valve-wave gaits (with the pneumatic muscles' length-to-pressure map), pressure-driven
//! muscles with their lag, actuator dynamics,
//! joint servos, and admittance on contact.

pub(crate) mod actuator_response;
pub(crate) mod admittance;
pub(crate) mod gait;
pub(crate) mod limb_gait;
pub(crate) mod muscle_drive;
pub(crate) mod pd;
pub(crate) mod rolling;
pub(crate) mod valve_wave;
