//! Generated models in simulation beyond the per-robot invariants, one test binary: located
//! contact onsets, soft sections in trees with rigid bodies, and the simulated system's
//! exact Jacobian.

mod contact_onsets;
mod soft_trees;
mod system_jacobian;
