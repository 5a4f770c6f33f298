//! A robot on its terrain under its gait, servos and admittance as one second-order system
//! (`Simulation`), the same with coordinates prescribed by actuator dynamics
//! (`PrescribedSimulation`), model-predictive gait planning, which simulates it to choose gaits, the same for a valve
//! wave's pressure, frequency and offset (`valve_steering`), and the simulated
//! system's exact Jacobian (`system_jacobian`), which integrators, controllers and
//! estimators linearise with; and, for a run that failed, the input that most likely made
//! it fail (`failure_diagnosis`).

pub(crate) mod closed_loop;
pub(crate) mod failure_diagnosis;
pub(crate) mod jacobian_workspace;
pub(crate) mod mpc;
pub(crate) mod prescribed;
pub(crate) mod system_jacobian;
pub(crate) mod valve_steering;
