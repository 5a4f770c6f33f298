//! One robot simulated or evaluated: a scenario run to CSV and a summary, a run's settings by
//! name, and `eval`.

pub(crate) mod eval;
pub(crate) mod scenario;
pub(crate) mod settings;
