//! What sits between a command and a coordinate: actuator dynamics (first or second order,
//! solved in closed form over a held command), joint servos, the valve states of a travelling
//! wave, and pressure-driven muscles with their lag and generalized forces. A layer below
//! `robot`, because a generated robot states its spec's actuators in these types.

pub(crate) mod actuator_response;
pub(crate) mod muscle_drive;
pub(crate) mod pd;
pub(crate) mod valve_wave;
