//! panda_soft_finger, the hybrid robot imported from the Panda's URDF with a soft finger on
//! its flange (no seed paper): its pressing task and the experiment that runs it.

pub mod experiments;
pub mod press;
