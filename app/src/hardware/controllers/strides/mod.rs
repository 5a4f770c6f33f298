//! The stride planner: a limbed robot's gait cycles, chosen whole by rolling each out.

pub(crate) mod settings;
