//! What a robot touches: terrains with their penetration depth and normal, the plane of
//! motion a terrain must fit, the contact and friction laws, and the maps between contact
//! forces and generalized forces.

pub(crate) mod contact;
pub(crate) mod contact_frame;
pub(crate) mod plane;
pub(crate) mod terrain;
