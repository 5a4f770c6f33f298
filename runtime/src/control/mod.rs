//! Control laws that turn time and state into set points or forces: serpenoid and rolling
//! gaits (with the pneumatic muscles' length-to-pressure map), joint servos, and admittance
//! on contact.

pub(crate) mod admittance;
pub(crate) mod gait;
pub(crate) mod pd;
pub(crate) mod rolling;
