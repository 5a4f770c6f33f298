//! The underwater rigid-soft snake of 004_4e5a2166b70a9520 swimming: the four cases of
//! Sec 3.2 (straight, yaw, pitch, spiral), each a set of propeller thrusts u_T (N) and joint
//! pressures u_J (MPa, through eq 35's K = pi r_a^2 per actuator) held from the start, run
//! through the generated model in water with ROS34PW2 (the actuators' power-law viscosity is
//! stiff), and the quantities the paper plots: base pose and velocity, the nose (the end
//! frame F_e), and each soft joint's length, bending angle and orientation (eq 3).

use nalgebra::{SVector, Vector2, Vector3};
use softgen_generated::underwater_snake::{Params, CONTACTS, DOF, THRUSTER_COUNT};
use softgen_generated::UnderwaterSnake;
use softgen_runtime::{
    Integrator, JointPd, Model, ParamSet, Rosenbrock34, Simulation, SimulationConfig, State, SystemJacobian, Terrain,
    Tolerances,
};
use std::time::Instant;

/// The joints' actuators: three per soft joint, u_J(1..3) on joint 1 (tail side), as the
/// paper numbers them (checked against the spec's muscles when a swim starts).
pub const JOINT_ACTUATORS: usize = 6;
/// The propellers u_T(1..6).
pub const PROPELLERS: usize = THRUSTER_COUNT;
/// Where the nose is among the robot's tracked points.
const NOSE: usize = 1;

/// One condition of a case: what the paper sets, held from t = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SwimCondition {
    /// The condition's name, as the paper's figure labels it.
    pub name: &'static str,
    /// u_T(1..6): each propeller's thrust (N; the paper's unit input is taken as 1 N).
    pub thrusts: [f64; PROPELLERS],
    /// u_J(1..6): each joint actuator's water pressure (MPa).
    pub pressures: [f64; JOINT_ACTUATORS],
}

/// Propellers 1, 3, 4 and 6 at +1: the paper's forward input.
pub const FORWARD: [f64; PROPELLERS] = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0];

/// Sec 3.2's conditions, case by case.
pub fn straight_conditions() -> Vec<SwimCondition> {
    vec![
        SwimCondition { name: "forward (condition 1)", thrusts: FORWARD, pressures: [0.0; 6] },
        SwimCondition { name: "backward (condition 1)", thrusts: FORWARD.map(|u| -u), pressures: [0.0; 6] },
        SwimCondition {
            name: "propellers 1 and 3 (condition 2)",
            thrusts: [1.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            pressures: [0.0; 6],
        },
    ]
}

/// The yaw case's conditions.
pub fn yaw_conditions() -> Vec<SwimCondition> {
    vec![
        SwimCondition {
            name: "u_J(1) = u_J(4) = 0.3 (condition 1)",
            thrusts: FORWARD,
            pressures: [0.3, 0.0, 0.0, 0.3, 0.0, 0.0],
        },
        SwimCondition {
            name: "u_J(1) = u_J(4) = 0.1 (condition 2)",
            thrusts: FORWARD,
            pressures: [0.1, 0.0, 0.0, 0.1, 0.0, 0.0],
        },
    ]
}

/// The pitch case's conditions.
pub fn pitch_conditions() -> Vec<SwimCondition> {
    vec![
        SwimCondition {
            name: "u_J(1) = 0.2, u_J(2) = 0.3 (condition 1)",
            thrusts: FORWARD,
            pressures: [0.2, 0.3, 0.0, 0.0, 0.0, 0.0],
        },
        SwimCondition {
            name: "u_J(1) = 0.2, u_J(3) = 0.1 (condition 2)",
            thrusts: FORWARD,
            pressures: [0.2, 0.0, 0.1, 0.0, 0.0, 0.0],
        },
    ]
}

/// The spiral case's conditions.
pub fn spiral_conditions() -> Vec<SwimCondition> {
    vec![SwimCondition {
        name: "u_J(1) = u_J(2) = 0.2, u_J(3) = u_J(4) = 0.3",
        thrusts: FORWARD,
        pressures: [0.2, 0.2, 0.3, 0.3, 0.0, 0.0],
    }]
}

/// The neutral parameter set: every body as heavy as the water its hull displaces (the
/// paper: "the density design of the robot is close to water"); the hulls as printed.
pub fn neutral_params() -> Params {
    let mut p = Params::default();
    let get = |p: &Params, name: &str| p.get(Params::names().iter().position(|n| *n == name).unwrap_or(0));
    let displaced = |radius: f64, length: f64, density: f64| density * std::f64::consts::PI * radius * radius * length;
    let density = get(&p, "water_density");
    let module = displaced(get(&p, "module_radius"), get(&p, "module_length"), density);
    let joint = displaced(get(&p, "joint_radius"), get(&p, "joint_length"), density);
    // Both names are the spec's own parameters.
    let _ = p.set("module_mass", module);
    let _ = p.set("joint_mass", joint);
    p
}

/// How the experiments read the paper's joint inputs: eq 35 (tau_J = K u_J) with the
/// actuators in the order of eq 3, which the paper does not spell out for six inputs.
pub const JOINT_INPUT_MAPPING: &str = "u_J(1..3) read as joint 1's actuators at 0, 120 and 240 degrees, u_J(4..6) as joint 2's, each pressing its actuator's length coordinate";

/// The orientation phi (rad) eq 3 gives a joint whose three actuators' length changes are in
/// the proportion of `inputs` (its three u_J): what the paper's inputs ask of the bend.
pub fn input_orientation(inputs: [f64; 3]) -> f64 {
    joint_configuration(inputs, 0.0, 1.0).2
}

/// One soft joint's configuration by eq 3: length L (m), bending angle theta (rad) and
/// orientation phi (rad, atan2(sqrt 3 (L3 - L2), L2 + L3 - 2 L1)), from its actuator
/// length changes.
pub fn joint_configuration(changes: [f64; 3], rest_length: f64, actuator_radius: f64) -> (f64, f64, f64) {
    let [l1, l2, l3] = changes.map(|c| rest_length + c);
    let length = (l1 + l2 + l3) / 3.0;
    let spread = (l1 * l1 + l2 * l2 + l3 * l3 - l1 * l2 - l1 * l3 - l3 * l2).max(0.0);
    let bending = 2.0 * spread.sqrt() / (3.0 * actuator_radius);
    let orientation = (3f64.sqrt() * (l3 - l2)).atan2(l2 + l3 - 2.0 * l1);
    (length, bending, orientation)
}

/// One sample of a run.
#[derive(Clone, Debug)]
pub struct SwimSample {
    /// The sample's time (s).
    pub t: f64,
    /// The coordinates.
    pub q: SVector<f64, DOF>,
    /// Their rates.
    pub qd: SVector<f64, DOF>,
    /// The nose (the end frame's origin) and its velocity, world frame.
    pub nose: Vector3<f64>,
    /// See `nose`.
    pub nose_velocity: Vector3<f64>,
    /// (L, theta, phi) of joints 1 and 2.
    pub joints: [(f64, f64, f64); 2],
}

/// A run of one condition.
#[derive(Clone, Debug)]
pub struct SwimRun {
    /// The samples, in time order.
    pub samples: Vec<SwimSample>,
    /// Wall time (s) and right-hand sides evaluated.
    pub wall: f64,
    /// See `wall`.
    pub evaluations: usize,
    /// ROS34PW2's Jacobians, accepted steps and rejected attempts.
    pub jacobians: usize,
    /// See `jacobians`.
    pub accepted: usize,
    /// See `jacobians`.
    pub rejected: usize,
}

/// The robot in open water (no floor, no servos), sampled every `period` s: no input until
/// thrusts and joint forces are set.
pub fn swimming_simulation(p: &Params, period: f64) -> Result<Simulation<UnderwaterSnake, DOF, CONTACTS>, String> {
    let config = SimulationConfig {
        contact: UnderwaterSnake::ENVIRONMENT.contact_law(),
        terrain: Terrain::None,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: period,
    };
    Simulation::new(p.clone(), config)
}

/// Runs `condition` for `duration` s from rest (straight, at the origin, along +x),
/// sampled every `period` s.
pub fn swim(p: &Params, condition: &SwimCondition, duration: f64, period: f64) -> Result<SwimRun, String> {
    // The stiff part: measured against the exact Jacobian (README, "The simulated system's
    // Jacobian").
    swim_with(p, condition, duration, period, SystemJacobian::Stiff)
}

/// [`swim`] with the Jacobian ROS34PW2 gets chosen.
pub fn swim_with(
    p: &Params,
    condition: &SwimCondition,
    duration: f64,
    period: f64,
    jacobian: SystemJacobian,
) -> Result<SwimRun, String> {
    if UnderwaterSnake::MUSCLES.len() != JOINT_ACTUATORS {
        return Err(format!(
            "the swimming inputs set {JOINT_ACTUATORS} joint pressures; the spec has {} muscles",
            UnderwaterSnake::MUSCLES.len()
        ));
    }
    let mut sim = swimming_simulation(p, period)?;
    sim.set_thrusts(&condition.thrusts)?;
    sim.use_jacobian(jacobian);
    let mut forces = SVector::<f64, DOF>::zeros();
    for (k, info) in UnderwaterSnake::MUSCLES.iter().enumerate() {
        let muscle = UnderwaterSnake::muscle(k, p).ok_or_else(|| format!("no muscle {k}"))?;
        // MPa to bar.
        muscle.add_force(info, 10.0 * condition.pressures[k], &mut forces);
    }
    sim.set_actuator_forces(&forces);
    let geometry = softgen_generated::underwater_snake::section_geometry(p);
    let sections = softgen_generated::underwater_snake::SOFT_SECTIONS;
    let mut integrator =
        Rosenbrock34::<DOF>::new(Tolerances { relative: 1e-6, absolute: 1e-8 }).map_err(|e| e.to_string())?;
    let mut x = State::new(SVector::from_iterator(UnderwaterSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut t = 0.0;
    let steps = (duration / period).round() as usize;
    let mut samples = Vec::with_capacity(steps + 1);
    let start = Instant::now();
    let mut evaluations = 0;
    for k in 0..=steps {
        if k > 0 {
            evaluations += integrator
                .integrate_to(&mut sim, &mut t, &mut x, k as f64 * period)
                .map_err(|e| format!("{} at t = {t:.3} s: {e}", condition.name))?;
        }
        let cache = UnderwaterSnake::cache(&x.q, p);
        let mut points = [Vector3::zeros(); CONTACTS];
        let mut velocities = [Vector3::zeros(); CONTACTS];
        UnderwaterSnake::contact_positions_into(&x.q, p, &cache, &mut points);
        UnderwaterSnake::contact_velocities_into(&x.q, &x.qd, p, &cache, &mut velocities);
        let mut joints = [(0.0, 0.0, 0.0); 2];
        for (j, (section, geometry)) in sections.iter().zip(geometry).enumerate() {
            let g = geometry.ok_or("a soft joint without its actuator geometry")?;
            let first = section.first_coordinate;
            joints[j] =
                joint_configuration([x.q[first], x.q[first + 1], x.q[first + 2]], g.rest_length, g.actuator_radius);
        }
        samples.push(SwimSample { t, q: x.q, qd: x.qd, nose: points[NOSE], nose_velocity: velocities[NOSE], joints });
    }
    Ok(SwimRun {
        samples,
        wall: start.elapsed().as_secs_f64(),
        evaluations,
        jacobians: integrator.jacobians,
        accepted: integrator.accepted,
        rejected: integrator.rejected,
    })
}

/// A turn's radius (m) and the RMS distance of the path from its circle: the least-squares
/// circle through the base's horizontal path over the samples from `from` s on.
pub fn turning_circle(run: &SwimRun, from: f64) -> Option<(f64, f64)> {
    let points: Vec<Vector2<f64>> =
        run.samples.iter().filter(|s| s.t >= from).map(|s| Vector2::new(s.q[0], s.q[1])).collect();
    crate::papers::wpi_snake::model::fit_circle(&points)
}

/// The base's speed (m/s) averaged over the samples from `from` s on.
pub fn mean_speed(run: &SwimRun, from: f64) -> f64 {
    let late: Vec<f64> =
        run.samples.iter().filter(|s| s.t >= from).map(|s| Vector3::new(s.qd[0], s.qd[1], s.qd[2]).norm()).collect();
    late.iter().sum::<f64>() / late.len().max(1) as f64
}
