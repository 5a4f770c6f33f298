//! Runtime for softgen robots: the `Model` trait that generated code implements, forward
//! dynamics, integrators, contact and friction laws, terrains, gaits and controllers.
//!
//! Everything on the per-step path works on fixed-size nalgebra types and does not allocate.

mod actuation;
mod admittance;
mod cc;
mod contact;
mod contact_frame;
mod device;
mod dopri5;
mod dynamics;
mod gait;
mod hardware;
mod integrator;
mod mailbox;
mod model;
mod mpc;
mod parameter_rules;
mod pd;
pub mod protocol;
mod real;
mod realtime;
mod registry;
mod rk4;
mod rolling;
mod rosenbrock;
mod safety;
mod semi_implicit_euler;
mod simulation;
mod state;
mod steering;
mod stumpff;
mod terrain;

/// The linear algebra generated modules are written in, re-exported so that a crate holding
/// a generated module depends on softgen-runtime alone.
pub use nalgebra;
pub use actuation::{ActuatorCommand, ChainError, Channel, DeviceValue, LengthToPressure, PressureMap};
pub use admittance::{AdmittanceController, AdmittanceGains};
pub use device::{Device, DeviceError, Recorder, Recording, SimulatedPlant};
pub use cc::{sinc_sqrt, versine_sqrt, Bending, SectionGeometry};
pub use contact::{ContactLaw, ContactSample, FrictionAnisotropy, FrictionLaw};
pub use contact_frame::{frame_generalized_force, point_jacobian, point_velocity, point_wrench};
pub use dopri5::{DormandPrince5, Tolerances};
pub use dynamics::{forward_dynamics, solve_spd_in_place, ForwardDynamicsError};
pub use gait::Serpenoid;
pub use hardware::{run_hardware, OutputChain};
pub use mailbox::Mailbox;
pub use integrator::{IntegrationError, Integrator, SecondOrderSystem, StepReport};
pub use model::{
    ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, GaitDefaults, Model,
    ParamSet, PlaneOfMotion, SoftSectionInfo, UnknownParameter,
};
pub use mpc::{GaitParameters, GaitPlanner, Plan, PlannerConfig, PlanningSnapshot, SteeredGait};
pub use parameter_rules::{check_rule, physical_inertia, RuleKind};
pub use pd::JointPd;
pub use real::{Dual, Real};
pub use realtime::{run_fixed_rate, LoopConfig, LoopOutcome, LoopStats, STOP_FINISHED, STOP_REQUESTED};
pub use registry::{RobotInfo, RobotVisitor};
pub use rk4::RungeKutta4;
pub use rolling::{PneumaticMuscles, RollingGait};
pub use rosenbrock::{Blocks, Ros2, Ros34pw2, Rosenbrock2, Rosenbrock34, RosenbrockMethod, RosenbrockW};
pub use safety::{SafetyFault, SafetyFilter, SafetyLimits, Watchdog};
pub use semi_implicit_euler::SemiImplicitEuler;
pub use simulation::{ContactReport, Simulation, SimulationConfig};
pub use state::State;
pub use stumpff::stumpff;
pub use steering::{run_planner, GoalSteering, PlannerStats, SteeringConfig, SteeringLink, SteeringPhase};
pub use terrain::{SurfaceContact, Terrain};
