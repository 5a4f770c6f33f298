//! Generated models in simulation beyond the per-robot invariants, one test binary: located
//! contact onsets and soft sections in trees with rigid bodies.

mod contact_onsets;
mod soft_trees;
