//! One integrator type for a choice made at run time: it steps as the method it holds does,
//! so a run (a simulation, the simulated plant of a loop) is written once whichever was
//! chosen.

use crate::integration::dopri5::DormandPrince5;
use crate::integration::integrator::{IntegrationError, Integrator, SecondOrderSystem, StepReport};
use crate::integration::rk4::RungeKutta4;
use crate::integration::rosenbrock::Rosenbrock34;
use crate::integration::semi_implicit_euler::SemiImplicitEuler;
use crate::robot::state::State;

/// A built integrator of the run's choice.
#[derive(Clone, Debug)]
pub enum ChosenIntegrator<const N: usize> {
    /// Classical RK4 at a fixed step.
    RungeKutta4(RungeKutta4),
    /// Semi-implicit Euler at a fixed step.
    SemiImplicitEuler(SemiImplicitEuler),
    /// Adaptive Dormand-Prince 5(4).
    DormandPrince5(DormandPrince5),
    /// Adaptive, linearly implicit ROS34PW2.
    Rosenbrock34(Rosenbrock34<N>),
}

impl<const N: usize> Integrator<N> for ChosenIntegrator<N> {
    fn step<S: SecondOrderSystem<N>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
    ) -> Result<StepReport, IntegrationError> {
        match self {
            ChosenIntegrator::RungeKutta4(i) => i.step(system, t, x, t_end),
            ChosenIntegrator::SemiImplicitEuler(i) => i.step(system, t, x, t_end),
            ChosenIntegrator::DormandPrince5(i) => i.step(system, t, x, t_end),
            ChosenIntegrator::Rosenbrock34(i) => i.step(system, t, x, t_end),
        }
    }
}
