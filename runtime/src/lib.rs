//! Runtime for softgen robots: the `Model` trait that generated code implements, forward
//! dynamics, integrators, contact and friction laws, terrains, gaits and controllers.
//!
//! Everything on the per-step path works on fixed-size nalgebra types and does not allocate.
//!
//! One folder per layer, each using only the layers before it, with no exception (the tidy
//! test checks it): `soft` (soft-section kinematics), `environment` (plane of motion,
//! terrain, contact and friction), `actuators` (actuator dynamics, servos, valve waves,
//! muscles), `robot` (the `Model` trait, which states its spec's defaults in the two
//! layers before it, forward dynamics, parameters, state), `integration` (integrators),
//! `control` (gaits, admittance), `simulation` (a robot in its environment under control as
//! one system), `optimal_control` (the planners: box-DDP over a horizon of the simulation, and
//! MPPI over a gait's or a valve wave's parameters), `estimation` (sensors,
//! emulated sensors and a Kalman filter on the generated model) and `hardware` (actuation, safety, devices, protocol, the real-time loop, steering).
//! Everything public is re-exported here, flat.

// The public API is documented, and its doc links resolve: a missing doc or a broken link
// fails the build (`cargo doc` for the links), not a review.
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)]

mod actuators;
mod control;
mod environment;
mod estimation;
mod hardware;
mod integration;
mod optimal_control;
mod quantities;
mod robot;
mod simulation;
mod soft;

/// The serial board protocol (frames, CRC, decoder), for devices outside this crate.
pub use hardware::protocol;

/// The linear algebra generated modules are written in, re-exported so that a crate holding
/// a generated module depends on softgen-runtime alone.
pub use nalgebra;

// The robot model.
pub use quantities::physical_ranges;
pub use robot::articulated::{ArticulatedFactor, InverseDynamicsFactors, Solve};
pub use robot::dense::{multiply_into, solve_spd_in_place, spd_inverse_in_place, ForwardDynamicsError};
pub use robot::dynamics::{
    forward_dynamics, forward_dynamics_derivatives, forward_dynamics_derivatives_by, reciprocal_or_zero,
    DerivativesRoute, ForwardDynamicsDerivatives, ARTICULATED_SOLVE_FROM,
};
pub use robot::frame_points::{frame_point_axes_into, frame_point_jacobian_into, frame_point_velocities_into};
pub use robot::lanes::{LaneValue, Lanes2, Lanes4, NO_COLUMN};
pub use robot::model::ForceCoordinates;
pub use robot::model::{
    tracked_point_names, BodyDrawing, BodyGeometry, ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults,
    FramePose, GaitDefaults, Model, ParamSet, SoftSectionInfo, ThrusterInfo, UnknownParameter, CONTACT_CHUNK,
};
pub use robot::parameter_rules::{check_rule, physical_inertia, RuleKind};
pub use robot::registry::{RobotInfo, RobotVisitor, RunConfigFile};
pub use robot::state::State;

// Terrain and contact.
pub use environment::contact::{
    ContactLaw, ContactSample, ContactSlopes, ContactTangent, ContactTangents, FrictionAnisotropy, FrictionLaw,
};
pub use environment::contact_frame::{frame_generalized_force, point_jacobian, point_velocity, point_wrench};
pub use environment::plane::PlaneOfMotion;
pub use environment::terrain::{StepFace, SurfaceContact, Terrain};

// Integration.
pub use integration::chosen::ChosenIntegrator;
pub use integration::dopri5::{DormandPrince5, Tolerances};
pub use integration::integrator::{IntegrationError, Integrator, SecondOrderSystem, StepReport};
pub use integration::rk4::RungeKutta4;
pub use integration::rosenbrock::{Blocks, Ros2, Ros34pw2, Rosenbrock2, Rosenbrock34, RosenbrockMethod, RosenbrockW};
pub use integration::semi_implicit_euler::SemiImplicitEuler;

// Soft-section kinematics.
pub use soft::cc::{sinc_sqrt, versine_sqrt, Bending, SectionGeometry};
pub use soft::real::{Dual, Real};
pub use soft::stumpff::{stumpff, STUMPFF_FUNCTIONS};

// Actuators.
pub use actuators::actuator_response::{ActuatorResponse, HeldResponses, ResponseState};
pub use actuators::muscle_drive::{JointspaceToPressure, Muscle, MuscleDrive, MuscleInfo};
pub use actuators::pd::JointPd;
pub use actuators::valve_wave::ValveWave;

// Control laws.
pub use control::admittance::{Admittance, AdmittanceController, AdmittanceForce, AdmittanceGains};
pub use control::gait::Serpenoid;
pub use control::gait_clock::{gait_cycle_start, GaitClock};

// Simulation and planning.
pub use optimal_control::box_qp::{BoxQp, BoxQpError, BoxQpSettings, BoxQpStatus};
pub use optimal_control::cost::{GoalCost, GoalWeights};
pub use optimal_control::ddp::{BoxDdp, CostDerivatives, DdpError, DdpReport, DdpSettings, KnotCost, KnotDynamics};
pub use optimal_control::gait_sampling::{
    GaitParameters, GaitPlanner, Plan, PlannerConfig, PlanningSnapshot, SteeredGait,
};
pub use optimal_control::knots::{
    check_newton_tolerance, KnotIntegrator, RobotKnots, DEFAULT_NEWTON_TOLERANCE, MAX_NEWTON_TOLERANCE, MAX_SUBSTEPS,
};
pub use optimal_control::receding::{HorizonSettings, PlanOutcome, PlannerStatistics, RecedingHorizon, MAX_KNOTS};
pub use optimal_control::schedule::{
    BendingMuscle, CommandSchedule, BEND_DECISIONS, MAX_BENDING_MUSCLES, WAVE_DECISIONS,
};
pub use optimal_control::valve_sampling::{ValvePlan, ValvePlanner, ValvePlannerConfig, ValveSnapshot};
pub use simulation::closed_loop::{ContactReport, Simulation, SimulationConfig};
pub use simulation::failure_diagnosis::{likely_cause, LargestContactForce};
pub use simulation::jacobian_workspace::SystemJacobian;
pub use simulation::prescribed::{DrivenCoordinate, PrescribedSimulation};
pub use simulation::system_jacobian::{ControlInput, FactoredState};
pub use simulation::valve_driven::{
    integrate_through_switches, next_valve_switch, SteeredValveWave, ValveDecisions, ValveDriven, ValveGains,
    MAX_VALVES, VALVE_DECISIONS,
};

// Hardware.
// Sensing and state estimation.
pub use estimation::analog::{AnalogInput, AnalogSampler, Calibration};
pub use estimation::emulated::EmulatedSensors;
pub use estimation::kalman::{EstimatorFault, EstimatorSettings, EstimatorStats, StateEstimator};
pub use estimation::natnet_messages as natnet;
pub use estimation::sensors::{
    Measurement, Reading, ReadingQueue, Sensor, SensorFault, SensorWatch, MAX_SENSORS, QUEUE_CAPACITY,
};

pub use hardware::actuation::{ActuatorCommand, ChainError, Channel, DeviceValue, LengthToPressure, PressureMap};
pub use hardware::device::{Device, DeviceError, EmulatingPlant, Recorder, Recording, SimulatedPlant};
pub use hardware::mailbox::Mailbox;
pub use hardware::plan_following::{
    check_plan_fits, run_horizon_planner, run_scheduled_planner, CommandPlan, CommandSnapshot, PlanFollower, PlanLink,
    MAX_PLANNED_COMMANDS, MAX_SCHEDULE_STATES, PLAN_CAPACITY,
};
pub use hardware::realtime::{run_fixed_rate, LoopConfig, LoopOutcome, LoopStats, STOP_FINISHED, STOP_REQUESTED};
pub use hardware::safe_run::{run_hardware, OutputChain};
pub use hardware::safety::{SafetyFault, SafetyFilter, SafetyLimits, Watchdog};
pub use hardware::steering::{
    run_planner, run_planning_thread, GoalSteering, PlannerStats, PlanningStep, Steering, SteeringConfig, SteeringLink,
    SteeringPhase, SteeringProgress,
};
pub use hardware::stride_loop::{
    run_stride_planner, StrideChoice, StrideLink, StrideSnapshot, StrideSteering, StrideSteeringConfig,
};
pub use hardware::valve_loop::{
    run_valve_planner, write_valve_commands, ValveLink, ValvePlant, ValveSteering, ValveSteeringConfig, ValveWiring,
};
