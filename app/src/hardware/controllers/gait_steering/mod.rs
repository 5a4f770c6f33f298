//! The gait sampler: MPPI steering a serpenoid gait to a goal.

pub(crate) mod settings;
