//! A robot on its terrain under its gait, servos and admittance as one second-order system
//! (`Simulation`), the same with coordinates prescribed by actuator dynamics
//! (`PrescribedSimulation`), a valve-driven robot under its steered valve wave
//! (`valve_driven`), and the simulated system's exact Jacobian (`system_jacobian`), which
//! integrators, controllers and estimators linearise with; and, for a run that failed, the
//! input that most likely made it fail (`failure_diagnosis`). The planners that simulate it
//! to choose what to send are in `optimal_control`.

pub(crate) mod closed_loop;
pub(crate) mod failure_diagnosis;
pub(crate) mod jacobian_workspace;
pub(crate) mod prescribed;
pub(crate) mod system_jacobian;
pub(crate) mod valve_driven;
