//! Integration in time: the `SecondOrderSystem` interface and its one-step methods (RK4,
//! semi-implicit Euler, Dormand-Prince, Rosenbrock-W), each steppable one step at a time or
//! run to an end time; `ChosenIntegrator`, one type for a choice made at run time.

pub(crate) mod chosen;
pub(crate) mod dopri5;
pub(crate) mod integrator;
pub(crate) mod rk4;
pub(crate) mod rosenbrock;
pub(crate) mod semi_implicit_euler;
