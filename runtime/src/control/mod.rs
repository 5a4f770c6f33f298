//! Control laws that turn time and state into set points: serpenoid gaits, the clock of gaits
//! played and decided a cycle at a time, and admittance on contact.

pub(crate) mod admittance;
pub(crate) mod gait;
pub(crate) mod gait_clock;
