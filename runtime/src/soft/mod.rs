//! Soft-section kinematics the runtime still computes itself (the generated code derives its
//! own): the Stumpff functions, constant-curvature geometry finite through the straight pose,
//! the dual numbers it is differentiated with, and the curve-parameter kinematics of a
//! three-muscle limb (forward, inverse, centre of gravity).

pub(crate) mod cc;
pub(crate) mod limb;
pub(crate) mod real;
pub(crate) mod stumpff;
