//! The hybrid robot's task: the Panda arm (imported from its URDF) holds its soft finger
//! upright over the table it stands on, and the finger presses on the table with a set
//! force, its three muscles' pressure set by a force loop. The arm is a joint-impedance
//! servo with gravity compensation from the generated G(q); the finger is the extensible
//! section of the spec with its skin, its tip ring pressing on the table through the spec's
//! contact law; the plant is integrated by ROS34PW2 with the muscles' regulator lag.
//!
//! What the run checks is the statics of a straight extensible section (L = L0 + mean(l),
//! its mass spread along it): at rest, each muscle's pressure carries its spring, a third of
//! the table's push and minus a sixth of the finger's weight, p A = k l + F / 3 - m g / 6.
//! The force loop never sees that relation; the measured pressure has to meet it.

use nalgebra::{SMatrix, SVector, Vector3};
use softgen_generated::panda_soft_finger::{Params, CONTACTS, DOF};
use softgen_generated::PandaSoftFinger;
use softgen_runtime::{
    ContactReport, Integrator, Model, MuscleDrive, MuscleInfo, ParamSet, Rosenbrock34, Simulation, SimulationConfig,
    State, Tolerances,
};
use std::time::Instant;

/// The arm's joints (the first coordinates), the finger's muscle lengths after them.
pub const ARM_JOINTS: usize = 7;
/// The torque limits of the arm's joints (N m): the URDF's `<limit effort>`, as the spec's
/// actuators repeat them.
pub const TORQUE_LIMITS: [f64; ARM_JOINTS] = [87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0];
/// The skin ring at the finger's tip (the grid's `tip = true` ring), by its points' prefix.
const TIP_RING: &str = "finger_skin_4_";
/// The ring below it, for the finger's axis.
const RING_BELOW_TIP: &str = "finger_skin_3_";

/// One held force of the task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceStep {
    /// When it is set (s).
    pub from: f64,
    /// The table's push on the finger it asks for (N).
    pub force: f64,
}

/// The task's settings.
#[derive(Clone, Debug)]
pub struct PressTask {
    /// The robot's parameters.
    pub params: Params,
    /// Where the finger's tip presses, in the table plane (m, arm base frame).
    pub spot: [f64; 2],
    /// The tip ring's height over the table at the pose, with the muscles at 0 bar (m).
    pub gap: f64,
    /// The set forces, in time order, the first from 0 s.
    pub steps: Vec<ForceStep>,
    /// Simulated time (s).
    pub duration: f64,
    /// Each step is judged over this long before the next one (or the end) (s).
    pub judged: f64,
    /// The arm's joint servos: each joint critically damped at this frequency (Hz) on its
    /// own inertia at the pose (the mass matrix's diagonal entry), kp = M_jj w^2,
    /// kd = 2 M_jj w. Why not the gains of the arm maker's joint impedance example (600 to
    /// 50 N m/rad, 50 to 10 N m s/rad at 1 kHz): the URDF leaves out the motors' rotor
    /// inertia, which on the robot adds to every joint's; without it the wrist's joint 7
    /// (link 7 and the finger, about 0.01 kg m^2 about its axis) makes 10 N m s/rad over a
    /// 1 ms period an unstable discrete damper, and it chattered at its 12 N m limit.
    pub servo_frequency: f64,
    /// The force loop: bar per N and bar per N s.
    pub proportional: f64,
    /// See `proportional`.
    pub integral: f64,
    /// Pressure ceiling of the commands (bar), within the muscles' rating.
    pub ceiling: f64,
    /// Period of the arm servo and the force loop (s).
    pub control_period: f64,
    /// ROS34PW2 relative and absolute tolerances.
    pub relative_tolerance: f64,
    /// See `relative_tolerance`.
    pub absolute_tolerance: f64,
    /// Reached: each judged force within this fraction of its set value, and its pressure
    /// within it of the statics.
    pub force_tolerance: f64,
    /// Reached: the tip slides less than this on the table while pressing (m).
    pub slip_tolerance: f64,
}

impl PressTask {
    /// 1 N, then 2 N, each held 3 s, 5 mm above the table 0.5 m in front of the arm.
    ///
    /// The loop's gains: with the tip on the table, the table's push rises by 12.5 N per bar
    /// (three muscles of 5.03e-5 m^2, less what goes into the muscles' springs as the skin
    /// sinks into the table, 2400 N/m of muscle against 12,000 N/m of six contact points);
    /// an integral gain of 0.8 bar per N s closes the loop in about 0.1 s, and with the 50 ms
    /// regulator lag its poles are damped at 0.7.
    pub fn new() -> PressTask {
        PressTask {
            params: Params::default(),
            spot: [0.5, 0.0],
            gap: 0.005,
            steps: vec![ForceStep { from: 0.0, force: 1.0 }, ForceStep { from: 4.0, force: 2.0 }],
            duration: 7.0,
            judged: 1.0,
            servo_frequency: 8.0,
            proportional: 0.02,
            integral: 0.8,
            ceiling: 3.0,
            control_period: 1e-3,
            relative_tolerance: 1e-5,
            absolute_tolerance: 1e-8,
            force_tolerance: 0.02,
            slip_tolerance: 5e-4,
        }
    }

    /// The set force at `t`.
    pub fn force_at(&self, t: f64) -> f64 {
        self.steps.iter().take_while(|s| s.from <= t).last().map_or(0.0, |s| s.force)
    }

    /// Each step's judged window (start, end) and force.
    pub fn windows(&self) -> Vec<(f64, f64, f64)> {
        (0..self.steps.len())
            .map(|i| {
                let end = self.steps.get(i + 1).map_or(self.duration, |s| s.from);
                (end - self.judged, end, self.steps[i].force)
            })
            .collect()
    }

    fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("gap", self.gap),
            ("duration", self.duration),
            ("judged", self.judged),
            ("servo frequency", self.servo_frequency),
            ("proportional", self.proportional),
            ("integral", self.integral),
            ("ceiling", self.ceiling),
            ("control period", self.control_period),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("press task: {name} must be finite and >= 0, got {v}"));
            }
        }
        if self.steps.first().map(|s| s.from) != Some(0.0) {
            return Err("press task: the first force step must start at 0 s".into());
        }
        for w in self.steps.windows(2) {
            if !(w[1].from - w[0].from >= self.judged) {
                return Err(format!(
                    "press task: force steps at {} and {} s leave less than the {} s judged",
                    w[0].from, w[1].from, self.judged
                ));
            }
        }
        if let Some(s) = self.steps.iter().find(|s| !(s.force.is_finite() && s.force >= 0.0)) {
            return Err(format!("press task: set force {} N at {} s must be finite and >= 0", s.force, s.from));
        }
        self.params.check().map_err(|e| format!("press task: parameters: {e}"))
    }
}

impl Default for PressTask {
    fn default() -> Self {
        Self::new()
    }
}

/// One control period's record.
#[derive(Clone, Debug)]
pub struct PressSample {
    /// The period's time (s).
    pub t: f64,
    /// The state.
    pub state: State<DOF>,
    /// The force set then (N).
    pub set_force: f64,
    /// The table's push on the finger, along the table's normal (N), and along it (N).
    pub force: f64,
    /// See `force`.
    pub tangential_force: f64,
    /// Points of the skin touching.
    pub touching: usize,
    /// Commanded and reached pressures (bar).
    pub commanded: [f64; 3],
    /// See `commanded`.
    pub reached: [f64; 3],
    /// The centre of the tip ring (m).
    pub tip: Vector3<f64>,
    /// The arm's largest joint error from the pose (rad).
    pub arm_error: f64,
}

/// A run of the task.
#[derive(Clone, Debug)]
pub struct PressRun {
    /// The arm's pose over the spot.
    pub pose: SVector<f64, DOF>,
    /// The finger axis's tilt from straight down at the pose (rad).
    pub tilt: f64,
    /// One sample per control period.
    pub samples: Vec<PressSample>,
    /// Right-hand sides evaluated.
    pub evaluations: usize,
    /// Wall time of the run (s).
    pub wall_seconds: f64,
}

/// Indices of the contact points whose names start with `prefix`.
fn ring(prefix: &str) -> Vec<usize> {
    PandaSoftFinger::CONTACT_POINTS
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name.starts_with(prefix))
        .map(|(i, _)| i)
        .collect()
}

/// The mean of the points `indices` of `positions`.
fn centre(positions: &[Vector3<f64>; CONTACTS], indices: &[usize]) -> Vector3<f64> {
    indices.iter().map(|&i| positions[i]).sum::<Vector3<f64>>() / indices.len() as f64
}

/// The arm's pose for the task: joints 1, 3 and 5 at zero and 7 at pi / 4 (the arm's usual
/// upright flange), joints 2, 4 and 6 solved by Newton's method on the generated contact
/// Jacobians so that the tip ring's centre is `gap` above `spot` and the finger's axis
/// (from the ring below the tip to the tip) points straight down. Returns the pose and
/// the axis's remaining tilt (rad).
pub fn pressing_pose(task: &PressTask) -> Result<(SVector<f64, DOF>, f64), String> {
    let p = &task.params;
    let tip = ring(TIP_RING);
    let below = ring(RING_BELOW_TIP);
    if tip.is_empty() || below.is_empty() {
        return Err(format!(
            "robot `{}` has no skin rings `{TIP_RING}*` and `{RING_BELOW_TIP}*`",
            PandaSoftFinger::NAME
        ));
    }
    let mut q = SVector::<f64, DOF>::from_iterator(PandaSoftFinger::INITIAL_POSITION.iter().copied());
    // Start from the arm's usual ready pose, the flange pointing down.
    q[0] = 0.0;
    q[1] = -0.3;
    q[2] = 0.0;
    q[3] = -2.2;
    q[4] = 0.0;
    q[5] = 1.9;
    q[6] = std::f64::consts::FRAC_PI_4;
    let solved = [1, 3, 5];
    let mut positions = [Vector3::zeros(); CONTACTS];
    let mut point = SMatrix::<f64, 3, DOF>::zeros();
    let mut tilt = f64::INFINITY;
    for _ in 0..50 {
        let cache = PandaSoftFinger::cache(&q, p);
        PandaSoftFinger::contact_positions_into(&q, p, &cache, &mut positions);
        let tip_centre = centre(&positions, &tip);
        let axis = tip_centre - centre(&positions, &below);
        let length = axis.norm();
        let residual =
            Vector3::new(tip_centre.x - task.spot[0], tip_centre.z - (task.gap + TERRAIN_HEIGHT), axis.x / length);
        tilt = (axis.x.hypot(axis.y) / length).asin();
        if residual.norm() < 1e-12 {
            return Ok((q, tilt));
        }
        // d(tip centre)/dq and d(axis x / |axis|)/dq over the solved joints (the axis's
        // length held: it changes only at second order near the solution).
        let mut jacobian = SMatrix::<f64, 3, 3>::zeros();
        for (sign, indices) in [(1.0, &tip), (-1.0, &below)] {
            for &i in indices.iter() {
                PandaSoftFinger::contact_jacobian_into(i, &q, p, &cache, &mut point);
                for (column, &joint) in solved.iter().enumerate() {
                    if sign > 0.0 {
                        jacobian[(0, column)] += point[(0, joint)] / tip.len() as f64;
                        jacobian[(1, column)] += point[(2, joint)] / tip.len() as f64;
                        jacobian[(2, column)] += point[(0, joint)] / (tip.len() as f64 * length);
                    } else {
                        jacobian[(2, column)] -= point[(0, joint)] / (below.len() as f64 * length);
                    }
                }
            }
        }
        let step = jacobian
            .lu()
            .solve(&residual)
            .ok_or_else(|| format!("press task: no pose puts the finger over {:?} (singular arm)", task.spot))?;
        for (column, &joint) in solved.iter().enumerate() {
            q[joint] -= step[column];
        }
    }
    Err(format!(
        "press task: no arm pose puts the finger's tip {} m over {:?} pointing down (Newton did not converge; tilt {tilt})",
        task.gap, task.spot
    ))
}

/// The arm servos' stiffness and damping at `pose`: each joint critically damped at
/// `frequency` (Hz) on its own inertia there.
pub fn servo_gains(pose: &SVector<f64, DOF>, p: &Params, frequency: f64) -> ([f64; ARM_JOINTS], [f64; ARM_JOINTS]) {
    let mut mass_matrix = SMatrix::<f64, DOF, DOF>::zeros();
    PandaSoftFinger::mass_matrix_into(pose, p, &PandaSoftFinger::cache(pose, p), &mut mass_matrix);
    let w = std::f64::consts::TAU * frequency;
    (std::array::from_fn(|j| mass_matrix[(j, j)] * w * w), std::array::from_fn(|j| 2.0 * mass_matrix[(j, j)] * w))
}

/// The table's height: the spec's flat terrain.
const TERRAIN_HEIGHT: f64 = 0.0;

/// The muscle pressure (bar) the statics of the straight finger ask for at rest with
/// muscle length change `length` (m) and the table's push `force` (N):
/// (k l + F / 3 - m g / 6) / A.
pub fn static_pressure(p: &Params, length: f64, force: f64) -> f64 {
    (p.muscle_stiffness * length + force / 3.0 - p.finger_mass * p.gravity / 6.0) / (p.muscle_area * 1e5)
}

/// Runs the task, recording every control period.
pub fn run_press(task: &PressTask) -> Result<PressRun, String> {
    task.validate()?;
    let p = task.params.clone();
    match PandaSoftFinger::ENVIRONMENT.terrain {
        softgen_runtime::Terrain::Flat { height } if height == TERRAIN_HEIGHT => {}
        other => return Err(format!("press task: the spec's terrain is {other:?}, not the flat table at 0 m")),
    }
    let (pose, tilt) = pressing_pose(task)?;
    let config = SimulationConfig {
        contact: PandaSoftFinger::ENVIRONMENT.contact_law(),
        terrain: PandaSoftFinger::ENVIRONMENT.terrain,
        gait: None,
        servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: task.control_period,
    };
    let mut sim = Simulation::<PandaSoftFinger, DOF, CONTACTS>::new(p.clone(), config)?;
    let info: [MuscleInfo; 3] = PandaSoftFinger::MUSCLES
        .try_into()
        .map_err(|_| format!("robot `{}` has not the finger's three muscles", PandaSoftFinger::NAME))?;
    let muscle =
        |k: usize| PandaSoftFinger::muscle(k, &p).ok_or_else(|| format!("the finger's muscle {} has no values", k + 1));
    let mut drive = MuscleDrive::new(info, [muscle(0)?, muscle(1)?, muscle(2)?], task.ceiling)?;
    let mut integrator =
        Rosenbrock34::<DOF>::new(Tolerances { absolute: task.absolute_tolerance, relative: task.relative_tolerance })
            .map_err(|e| e.to_string())?;
    let (stiffness, damping) = servo_gains(&pose, &p, task.servo_frequency);
    let tip = ring(TIP_RING);
    let mut x = State::new(pose, SVector::zeros());
    let mut t = 0.0;
    let periods = (task.duration / task.control_period).round() as usize;
    let mut samples = Vec::with_capacity(periods + 1);
    let mut integral = 0.0;
    let mut evaluations = 0;
    let started = Instant::now();
    for period in 0..=periods {
        let report: ContactReport<DOF, CONTACTS> = sim.report(t, &x);
        let force: Vector3<f64> = report.forces.iter().sum();
        let set_force = task.force_at(t);
        let arm_error = (0..ARM_JOINTS).map(|j| (x.q[j] - pose[j]).abs()).fold(0.0, f64::max);
        samples.push(PressSample {
            t,
            state: x.clone(),
            set_force,
            force: force.z,
            tangential_force: force.xy().norm(),
            touching: report.forces.iter().filter(|f| f.norm() > 0.0).count(),
            commanded: drive.commands,
            reached: drive.pressures,
            tip: centre(&report.positions, &tip),
            arm_error,
        });
        if period == periods {
            break;
        }
        // The force loop: PI on the table's push, the integral held while the command is
        // at its bounds and pushing further out (no wind-up).
        let error = set_force - force.z;
        let unclamped = integral + task.integral * error * task.control_period + task.proportional * error;
        if (0.0..=task.ceiling).contains(&unclamped) || (unclamped > task.ceiling) != (error > 0.0) {
            integral += task.integral * error * task.control_period;
        }
        let command = (integral + task.proportional * error).clamp(0.0, task.ceiling);
        drive.command(&[command; 3])?;
        // The arm: joint impedance to the pose with gravity compensation at the measured
        // joints, within the URDF's torque limits.
        let cache = PandaSoftFinger::cache(&x.q, &p);
        let mut gravity = SVector::<f64, DOF>::zeros();
        PandaSoftFinger::gravity_into(&x.q, &p, &cache, &mut gravity);
        let mut start = SVector::<f64, DOF>::zeros();
        for j in 0..ARM_JOINTS {
            let torque = gravity[j] + stiffness[j] * (pose[j] - x.q[j]) - damping[j] * x.qd[j];
            start[j] = torque.clamp(-TORQUE_LIMITS[j], TORQUE_LIMITS[j]);
        }
        // The muscles' lagging pressures over the period, as a ramp between its ends (the
        // 50 ms lag is 50 periods: the ramp's error is below 1e-4 of the change).
        let mut end = start;
        drive.generalized_force_into(&mut start);
        drive.generalized_force_after_into(task.control_period, &mut end);
        let next = (period + 1) as f64 * task.control_period;
        sim.set_actuator_force_ramp(t, &start, next, &end)?;
        evaluations +=
            integrator.integrate_to(&mut sim, &mut t, &mut x, next).map_err(|e| format!("press task: {e}"))?;
        drive.advance(task.control_period);
        t = next;
    }
    Ok(PressRun { pose, tilt, samples, evaluations, wall_seconds: started.elapsed().as_secs_f64() })
}
