//! The valve sampler: MPPI steering a valve-driven robot's wave to a goal.

pub(crate) mod settings;
