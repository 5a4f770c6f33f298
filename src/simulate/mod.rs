//! One robot simulated or evaluated: the robots this binary knows (through the generated
//! registry), a scenario run to CSV and a summary, a run's settings by name, `eval`, and a
//! run's CSV as a 3D view page.

pub(crate) mod eval;
pub(crate) mod robots;
pub(crate) mod scenario;
pub(crate) mod settings;
pub(crate) mod view;
