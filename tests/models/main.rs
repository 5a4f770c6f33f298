//! Generated models in simulation beyond the per-robot invariants, one test binary: located
//! contact onsets, soft sections in trees with rigid bodies, the simulated system's exact
//! Jacobian, the likely cause named for a run that failed, a soft robot estimated from
//! markers on its sections, and a valve-driven robot estimated on its prescribed model.

mod contact_onsets;
mod estimation;
mod failure_diagnosis;
mod marker_estimation;
mod soft_trees;
mod system_jacobian;
mod valve_estimation;
