//! Soft-section kinematics the runtime still computes itself (the generated code derives its
//! own): the Stumpff functions, constant-curvature geometry finite through the straight pose,
//! and the dual numbers it is differentiated with.

pub(crate) mod cc;
pub(crate) mod real;
pub(crate) mod stumpff;
