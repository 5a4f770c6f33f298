//! The soft-limbed pinniped of 002_f355a977a209e7c9 run dynamically: the paper's gaits
//! (section III) drive the twelve muscles through inverse kinematics, eq 1 and the
//! jointspace-to-pressure map, the pressures reach the muscles through the pneumatic lag,
//! and the generated model with carpet contact says how far and which way the robot goes.
//!
//! Limb order is the spec's: head H, back B, front right FR, front left FL. Which way a
//! limb's tip circles (eq 13 leaves the limb frames' roll undefined, so its clockwise and
//! anticlockwise labels fix nothing in the world) follows the physical rule: at the lowest
//! point of its circle the tip moves against the motion it is to give the body.

use super::limb::{CurveParameters, Limb, MountedLimb};
use super::limb_gait::{LimbGait, LimbMotion};
use nalgebra::{SVector, Vector3};
use softgen_generated::pinniped::{
    centre_line_into, Params, CENTRE_LINE_POINTS, CONTACTS, DOF, SECTIONS, SOFT_SECTIONS,
};
use softgen_generated::Pinniped;
use softgen_runtime::{
    ContactLaw, IntegrationError, Integrator, JointPd, JointspaceToPressure, Model, MuscleDrive, MuscleInfo, ParamSet,
    SemiImplicitEuler, Simulation, SimulationConfig, State,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Muscles: three per limb.
pub const MUSCLES: usize = 3 * SECTIONS;
/// The limbs' names in spec order.
pub const LIMB_NAMES: [&str; SECTIONS] = ["H", "B", "FR", "FL"];
const HEAD: usize = 0;
const BACK: usize = 1;
const FRONT_RIGHT: usize = 2;
const FRONT_LEFT: usize = 3;

/// The head's bend towards the direction of travel in forward crawling, peaking once a
/// cycle (section III-C: "from phi = 0 to phi = 90 degrees").
pub const HEAD_NOD: f64 = std::f64::consts::FRAC_PI_2;
/// The back limb's bend down against the floor in forward crawling, once a cycle (the
/// paper gives no amount).
pub const BACK_PRESS: f64 = 0.35;
/// Backward crawling's held postures (the paper gives no amounts): the head bent over the
/// front limbs, the back limb bent up off the floor.
pub const HEAD_BACKWARD: f64 = 1.0;
/// The back limb's bend in backward crawling (rad); `HEAD_BACKWARD` is the head's.
pub const BACK_UP: f64 = 0.6;

/// One of the paper's gaits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gait {
    /// Section III-C: FR and FL circle to push the body +x; H nods forward, B presses down.
    Forward,
    /// Section III-D: FR and FL circle the other way; H held back, B held up.
    Backward,
    /// Section III-E: backward crawling with FR and FL at 0.10 m, and B circling so the
    /// robot turns left (anticlockwise seen from above) or right.
    CrawlTurn {
        /// Turning left (anticlockwise seen from above).
        left: bool,
    },
    /// Section III-F: FR, FL and B circle in one sense about their own axes, H with them.
    InPlace {
        /// Circling anticlockwise.
        counterclockwise: bool,
    },
}

impl Gait {
    /// The gait's name as the paper's tables give it.
    pub fn name(&self) -> &'static str {
        match self {
            Gait::Forward => "forward crawling",
            Gait::Backward => "backward crawling",
            Gait::CrawlTurn { left: true } => "leftward crawl-and-turn",
            Gait::CrawlTurn { left: false } => "rightward crawl-and-turn",
            Gait::InPlace { counterclockwise: true } => "counterclockwise in-place turning",
            Gait::InPlace { counterclockwise: false } => "clockwise in-place turning",
        }
    }

    /// A file-name slug.
    pub fn slug(&self) -> &'static str {
        match self {
            Gait::Forward => "forward",
            Gait::Backward => "backward",
            Gait::CrawlTurn { left: true } => "turn_left",
            Gait::CrawlTurn { left: false } => "turn_right",
            Gait::InPlace { counterclockwise: true } => "in_place_ccw",
            Gait::InPlace { counterclockwise: false } => "in_place_cw",
        }
    }
}

/// The robot at rest, level, as the gaits see it: each limb's frame axes and tip in the hub
/// frame.
#[derive(Clone, Copy, Debug)]
pub struct RestGeometry {
    /// Columns of each limb's mount: x along the limb, y towards muscle 1 (the paper's
    /// X_j), z (the paper's Y_j).
    pub axes: [[Vector3<f64>; 3]; SECTIONS],
    /// Each limb's tip at rest (m, world frame).
    pub tips: [Vector3<f64>; SECTIONS],
}

/// The four limb tips (world frame) at coordinates `q`.
pub fn tips(q: &SVector<f64, DOF>, p: &Params) -> [Vector3<f64>; SECTIONS] {
    let cache = Pinniped::cache(q, p);
    let mut line = [Vector3::zeros(); CENTRE_LINE_POINTS];
    centre_line_into(q, p, &cache, &mut line);
    let per = CENTRE_LINE_POINTS / SECTIONS;
    std::array::from_fn(|i| line[per * (i + 1) - 1])
}

impl RestGeometry {
    /// The rest geometry of a robot with parameters `p`: straight limbs, hub at the origin, level.
    pub fn new(p: &Params) -> Self {
        let axes = std::array::from_fn(|i| {
            let m = SOFT_SECTIONS[i].mount;
            std::array::from_fn(|c| Vector3::new(m[0][c], m[1][c], m[2][c]))
        });
        // Straight limbs, hub at the origin, level.
        RestGeometry { axes, tips: tips(&SVector::zeros(), p) }
    }

    /// The limbs in eq 16's terms: each in the paper's limb frame (z along the limb, x towards
    /// muscle 1) at its mount in the hub frame, with its mass.
    pub fn mounted_limbs(&self, p: &Params) -> [MountedLimb; SECTIONS] {
        let limb = limbs(p)[0];
        std::array::from_fn(|i| {
            let [x, y, z] = self.axes[i];
            let rotation = nalgebra::Rotation3::from_matrix_unchecked(nalgebra::Matrix3::from_columns(&[y, z, x]));
            MountedLimb { limb, origin: p.hub_radius * x, rotation, mass: p.limb_mass }
        })
    }

    /// The bending-plane angle theta of limb `i` that points its bend along `direction`
    /// (hub frame), projected onto the limb's cross-section.
    pub fn theta_towards(&self, i: usize, direction: Vector3<f64>) -> f64 {
        direction.dot(&self.axes[i][2]).atan2(direction.dot(&self.axes[i][1]))
    }

    /// A tip circle of `radius` on limb `i` whose lowest point moves against `push` (the
    /// body velocity it is to give there): it starts at the top, and its sense is +1
    /// (anticlockwise about the limb's outward axis) or -1.
    pub fn circle(&self, i: usize, radius: f64, push: Vector3<f64>) -> LimbMotion {
        let down = -Vector3::z();
        let lowest = self.theta_towards(i, down);
        let (y, z) = (self.axes[i][1], self.axes[i][2]);
        let anticlockwise_velocity = -lowest.sin() * y + lowest.cos() * z;
        let sense = if anticlockwise_velocity.dot(&push) > 0.0 { -1.0 } else { 1.0 };
        LimbMotion::Circle { radius, start: lowest + std::f64::consts::PI, sense }
    }

    /// The body velocity at limb `i`'s tip of a turn about +z (anticlockwise when `sign` > 0).
    fn turning(&self, i: usize, sign: f64) -> Vector3<f64> {
        sign * Vector3::z().cross(&self.tips[i])
    }

    /// The limb motions of a gait with stride radius `stride` (FR and FL; B in crawl-and-turn).
    pub fn motions(&self, gait: Gait, stride: f64) -> [LimbMotion; SECTIONS] {
        let mut m = [LimbMotion::Rest; SECTIONS];
        let forward = Vector3::x();
        match gait {
            Gait::Forward => {
                m[FRONT_RIGHT] = self.circle(FRONT_RIGHT, stride, forward);
                m[FRONT_LEFT] = self.circle(FRONT_LEFT, stride, forward);
                // Peaks mid-stance: the circles start at the top, so their lowest point is
                // half a cycle in.
                m[HEAD] = LimbMotion::Nod { theta: self.theta_towards(HEAD, forward), phi: HEAD_NOD, peak: 0.5 };
                m[BACK] =
                    LimbMotion::Nod { theta: self.theta_towards(BACK, -Vector3::z()), phi: BACK_PRESS, peak: 0.5 };
            }
            Gait::Backward | Gait::CrawlTurn { .. } => {
                let (radius, turn) = match gait {
                    Gait::CrawlTurn { left } => (0.10, Some(if left { 1.0 } else { -1.0 })),
                    _ => (stride, None),
                };
                m[FRONT_RIGHT] = self.circle(FRONT_RIGHT, radius, -forward);
                m[FRONT_LEFT] = self.circle(FRONT_LEFT, radius, -forward);
                m[HEAD] =
                    LimbMotion::Hold(CurveParameters { theta: self.theta_towards(HEAD, -forward), phi: HEAD_BACKWARD });
                m[BACK] = match turn {
                    Some(sign) => self.circle(BACK, stride, self.turning(BACK, sign)),
                    None => LimbMotion::Hold(CurveParameters {
                        theta: self.theta_towards(BACK, Vector3::z()),
                        phi: BACK_UP,
                    }),
                };
            }
            Gait::InPlace { counterclockwise } => {
                let sign = if counterclockwise { 1.0 } else { -1.0 };
                for i in [BACK, FRONT_RIGHT, FRONT_LEFT] {
                    m[i] = self.circle(i, stride, self.turning(i, sign));
                }
                // The head circles with them, in the same sense about its own axis.
                let sense = match m[FRONT_RIGHT] {
                    LimbMotion::Circle { sense, .. } => sense,
                    _ => 1.0,
                };
                m[HEAD] = LimbMotion::Circle { radius: stride, start: 0.0, sense };
            }
        }
        m
    }
}

/// One trial.
#[derive(Clone, Debug)]
pub struct Trial {
    /// The gait played.
    pub gait: Gait,
    /// Stride radius (m): FR and FL, or B in crawl-and-turn, or every circling limb in place.
    pub stride: f64,
    /// Gait frequency 1 / tau (Hz).
    pub frequency: f64,
    /// Gait time (s): the paper's 15.
    pub duration: f64,
    /// Time to settle on the carpet before the gait (s).
    pub settle: f64,
    /// Pressure ceiling (bar): the paper's 3.
    pub ceiling: f64,
    /// Integration step (s), semi-implicit Euler: at 0.5 ms the displacements and turns agree
    /// with RK4 at 0.5 ms within 0.8 % (sideways drift 2.6 %) at a quarter of the cost; RK4
    /// at 1 ms is 3 % off in forward crawling, where the tips stick and slip.
    pub step: f64,
    /// Pressure command period (s).
    pub control_period: f64,
    /// The robot's parameters.
    pub params: Params,
    /// The carpet's (isotropic) friction coefficient; `None` keeps the spec's 0.6.
    pub friction: Option<f64>,
    /// The carpet's normal damping d (N s/m) and Hunt-Crossley dissipation h (s/m)
    /// (`ContactLaw`); `None` keeps the spec's (eq 18, d = 20 N s/m, h = 0).
    pub contact_damping: Option<f64>,
    /// See `contact_damping`.
    pub contact_dissipation: Option<f64>,
    /// Set non-zero (a signal's number) to end the trial at the next control period.
    pub stop: Option<Arc<AtomicUsize>>,
}

impl Trial {
    /// The paper's protocol for one cell: 15 s at a 3 bar ceiling, after 1 s of settling.
    pub fn new(gait: Gait, stride: f64, frequency: f64) -> Self {
        Trial {
            gait,
            stride,
            frequency,
            duration: 15.0,
            settle: 1.0,
            ceiling: 3.0,
            step: 5e-4,
            control_period: 1e-3,
            params: Params::default(),
            friction: None,
            contact_damping: None,
            contact_dissipation: None,
            stop: None,
        }
    }
}

/// One recorded sample.
#[derive(Clone, Debug)]
pub struct TrialSample {
    /// The sample's time (s).
    pub t: f64,
    /// The coordinates.
    pub q: SVector<f64, DOF>,
    /// The centre of mass (m).
    pub center_of_mass: Vector3<f64>,
    /// Reached pressures (bar), muscle order.
    pub pressures: [f64; MUSCLES],
    /// Contact points touching the carpet.
    pub contacts: usize,
}

/// What a trial measured.
#[derive(Clone, Debug)]
pub struct TrialOutcome {
    /// The samples, in time order.
    pub samples: Vec<TrialSample>,
    /// Hub displacement over the gait (m), world x and y.
    pub displacement: (f64, f64),
    /// Heading change over the gait (rad), anticlockwise positive.
    pub heading_change: f64,
    /// Path length of the hub over the gait, sampled once a cycle (m).
    pub distance: f64,
    /// Limbs' senses (+1 anticlockwise about their own axes, -1 clockwise) for circling limbs.
    pub senses: [Option<f64>; SECTIONS],
    /// Right-hand sides evaluated.
    pub evaluations: usize,
    /// Wall time the trial took (s).
    pub wall_seconds: f64,
    /// The integration error that ended it early, if any.
    pub error: Option<IntegrationError>,
}

impl TrialOutcome {
    /// Mean speed (cm/s) along +x over the gait's `duration`.
    pub fn speed_x_cm_s(&self, duration: f64) -> f64 {
        100.0 * self.displacement.0 / duration
    }

    /// Mean turn rate (rad/s), anticlockwise positive.
    pub fn turn_rate(&self, duration: f64) -> f64 {
        self.heading_change / duration
    }
}

/// The muscles with their values at `p`, under `ceiling`.
pub fn muscle_drive(p: &Params, ceiling: f64) -> Result<MuscleDrive<MUSCLES>, String> {
    let info: [MuscleInfo; MUSCLES] =
        Pinniped::MUSCLES.try_into().map_err(|_| "the pinniped spec must give every limb its muscles")?;
    let mut muscles = Vec::with_capacity(MUSCLES);
    for i in 0..MUSCLES {
        muscles.push(Pinniped::muscle(i, p).ok_or_else(|| format!("muscle {i} missing from the generated pinniped"))?);
    }
    MuscleDrive::new(info, muscles.try_into().map_err(|_| "muscle count")?, ceiling)
}

/// The limbs' geometry at `p`.
pub fn limbs(p: &Params) -> [Limb; SECTIONS] {
    [Limb { length: p.limb_length, muscle_radius: p.muscle_radius }; SECTIONS]
}

/// The jointspace-to-pressure map at `p`: unloaded limbs bend as the gait asks.
pub fn pressure_map(p: &Params) -> Result<JointspaceToPressure, String> {
    JointspaceToPressure::unit_static_gain(p.limb_stiffness, p.muscle_area, p.muscle_radius, p.limb_length)
}

/// The generated model's centre of mass in the hub frame (hub at the origin, level) with the
/// limbs bent as `curves` say.
pub fn model_centre_of_mass(p: &Params, curves: &[CurveParameters; SECTIONS]) -> Vector3<f64> {
    let limbs = limbs(p);
    let mut q = SVector::<f64, DOF>::zeros();
    for (i, c) in curves.iter().enumerate() {
        let first = SOFT_SECTIONS[i].first_coordinate;
        let kappa = limbs[i].curvatures(*c);
        q[first] = kappa[0];
        q[first + 1] = kappa[1];
    }
    let cache = Pinniped::cache(&q, p);
    Pinniped::center_of_mass(&q, p, &cache)
}

/// The paper's `gait` for these limbs at `stride` (m) and `frequency` (Hz), 100 trajectory
/// points a cycle, checked against the limbs' reach.
pub fn limb_gait(p: &Params, gait: Gait, stride: f64, frequency: f64) -> Result<LimbGait<SECTIONS>, String> {
    let limb_gait = LimbGait { frequency, samples_per_cycle: 100, limbs: RestGeometry::new(p).motions(gait, stride) };
    limb_gait.validate(&limbs(p))?;
    Ok(limb_gait)
}

/// The yaw of the hub's x axis seen from above (rad), from the base's Z-Y-X angles.
fn heading(q: &SVector<f64, DOF>) -> f64 {
    q[3]
}

/// The pinniped on its carpet as the trials step it: semi-implicit Euler, the playing gait's
/// pressures commanded at its trajectory points (100 a cycle), each control period's force
/// from the muscles' lag at the period's middle. A trial plays one gait after settling; the
/// stride planner (`mpc.rs`) plays one stride after another.
pub struct Crawler {
    simulation: Simulation<Pinniped, DOF, CONTACTS>,
    integrator: SemiImplicitEuler,
    /// The muscles with their reached pressures.
    pub drive: MuscleDrive<MUSCLES>,
    pub(super) limbs: [Limb; SECTIONS],
    pub(super) map: JointspaceToPressure,
    control_period: f64,
    /// The crawler's time (s).
    pub t: f64,
    /// Its state.
    pub x: State<DOF>,
    /// The gait being played and the time its cycle started.
    playing: Option<(LimbGait<SECTIONS>, f64)>,
    /// The trajectory point last commanded (time since the gait's start).
    last_sample: f64,
    forces: SVector<f64, DOF>,
    /// Right-hand sides evaluated.
    pub evaluations: usize,
}

/// Why a crawl stopped: a command the gait or the muscles refused, or the integration (which
/// a trial records in its outcome).
#[derive(Clone, Debug)]
pub enum CrawlError {
    /// A gait command the muscles cannot take.
    Command(String),
    /// The integration failed.
    Integration(IntegrationError),
}

impl From<CrawlError> for String {
    fn from(error: CrawlError) -> String {
        match error {
            CrawlError::Command(message) => message,
            CrawlError::Integration(error) => error.to_string(),
        }
    }
}

impl Crawler {
    /// At rest at the spec's initial position on the spec's carpet, every muscle vented,
    /// stepping by `step` (s).
    pub fn new(params: Params, step: f64, control_period: f64, ceiling: f64) -> Result<Self, String> {
        Self::on(params, Pinniped::ENVIRONMENT.contact_law(), step, control_period, ceiling)
    }

    /// As [`Crawler::new`], on the carpet `contact`.
    pub fn on(
        params: Params,
        contact: ContactLaw,
        step: f64,
        control_period: f64,
        ceiling: f64,
    ) -> Result<Self, String> {
        params.check().map_err(|e| format!("parameters: {e}"))?;
        if !(step.is_finite() && step > 0.0 && control_period.is_finite() && control_period > 0.0) {
            return Err(format!("step and control period must be finite and > 0 s, got {step} and {control_period}"));
        }
        let config = SimulationConfig {
            contact,
            terrain: Pinniped::ENVIRONMENT.terrain,
            gait: None,
            servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
            admittance: None,
            control_period,
        };
        Ok(Crawler {
            drive: muscle_drive(&params, ceiling)?,
            limbs: limbs(&params),
            map: pressure_map(&params)?,
            simulation: Simulation::new(params, config)?,
            integrator: SemiImplicitEuler::new(step.min(control_period)).map_err(|e| e.to_string())?,
            control_period,
            t: 0.0,
            x: State::new(SVector::from_iterator(Pinniped::INITIAL_POSITION.iter().copied()), SVector::zeros()),
            playing: None,
            last_sample: f64::NAN,
            forces: SVector::zeros(),
            evaluations: 0,
        })
    }

    /// The robot's parameters.
    pub fn params(&self) -> &Params {
        &self.simulation.params
    }

    /// Starts from a time, state and the muscles' reached pressures (bar), standing until
    /// told otherwise.
    pub fn start_from(&mut self, t: f64, x: &State<DOF>, reached: &[f64; MUSCLES]) {
        self.t = t;
        self.x = *x;
        self.drive.pressures = *reached;
        self.drive.commands = [0.0; MUSCLES];
        self.playing = None;
        self.last_sample = f64::NAN;
    }

    /// Plays `gait` as from its cycle's start at `start` (s): its first trajectory point is
    /// commanded at the next period.
    pub fn play_gait(&mut self, gait: LimbGait<SECTIONS>, start: f64) {
        self.playing = Some((gait, start));
        self.last_sample = f64::NAN;
    }

    /// Stands from now: every muscle vented.
    pub fn stand(&mut self) -> Result<(), String> {
        self.drive.command(&[0.0; MUSCLES])?;
        self.playing = None;
        self.last_sample = f64::NAN;
        Ok(())
    }

    /// Steps to `end` (s) period by period: a new trajectory point only every 1 / (100 f) s,
    /// the reached pressures over each period from the lag's closed form at its middle.
    pub fn advance_to(&mut self, end: f64) -> Result<(), CrawlError> {
        while self.t < end - 1e-12 {
            let next = (((self.t / self.control_period).round() + 1.0) * self.control_period).min(end);
            if let Some((gait, start)) = &self.playing {
                let since = self.t - start;
                let sample = gait.sample_time(since);
                if sample != self.last_sample {
                    self.last_sample = sample;
                    let commands = gait
                        .pressures(since, &self.limbs, &self.map)
                        .map_err(|e| CrawlError::Command(e.to_string()))?;
                    self.drive
                        .command(&std::array::from_fn(|i| commands[i / 3][i % 3]))
                        .map_err(CrawlError::Command)?;
                }
            }
            self.drive.generalized_force_after_into(0.5 * (next - self.t), &mut self.forces);
            self.simulation.set_actuator_forces(&self.forces);
            self.drive.advance(next - self.t);
            self.evaluations += self
                .integrator
                .integrate_to(&mut self.simulation, &mut self.t, &mut self.x, next)
                .map_err(CrawlError::Integration)?;
        }
        Ok(())
    }

    /// The points touching the carpet now.
    pub fn contacts(&self) -> usize {
        self.simulation.report(self.t, &self.x).active
    }

    /// The centre of mass in the ground plane (m).
    pub fn center_of_mass(&self) -> nalgebra::Vector2<f64> {
        let p = self.params();
        Pinniped::center_of_mass(&self.x.q, p, &Pinniped::cache(&self.x.q, p)).xy()
    }

    /// The hub's heading: the yaw of its x axis seen from above (rad).
    pub fn heading(&self) -> f64 {
        heading(&self.x.q)
    }
}

/// Runs one trial; `on_sample` sees every recorded sample (30 a second).
pub fn run_trial(trial: &Trial, mut on_sample: impl FnMut(&TrialSample)) -> Result<TrialOutcome, String> {
    let p = trial.params.clone();
    p.check().map_err(|e| format!("parameters: {e}"))?;
    for (name, v) in [
        ("settle", trial.settle),
        ("duration", trial.duration),
        ("step", trial.step),
        ("control period", trial.control_period),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} must be finite and >= 0, got {v}"));
        }
    }
    if !(trial.step > 0.0 && trial.control_period > 0.0) {
        return Err("step and control period must be > 0".into());
    }
    softgen_app::check_periods(trial.settle + trial.duration, trial.control_period)?;
    let gait = limb_gait(&p, trial.gait, trial.stride, trial.frequency)?;
    let mut contact = Pinniped::ENVIRONMENT.contact_law();
    if let Some(friction) = trial.friction {
        contact.friction.along = friction;
        contact.friction.across = friction;
    }
    contact.damping = trial.contact_damping.unwrap_or(contact.damping);
    contact.dissipation = trial.contact_dissipation.unwrap_or(contact.dissipation);
    let mut crawler = Crawler::on(p.clone(), contact, trial.step, trial.control_period, trial.ceiling)?;
    let end = trial.settle + trial.duration;
    let steps = (end / trial.control_period).round() as usize;
    let sample_every = ((1.0 / 30.0) / trial.control_period).round().max(1.0) as usize;
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut error = None;
    let mut per_cycle = Vec::new();
    let mut next_cycle = trial.settle;
    let mut start_pose = None;
    for k in 0..=steps {
        let (t, q) = (crawler.t, crawler.x.q);
        if t >= trial.settle - 1e-12 && start_pose.is_none() {
            start_pose = Some(q);
            crawler.play_gait(gait, trial.settle);
        }
        if t >= next_cycle - 1e-9 {
            per_cycle.push((q[0], q[1]));
            next_cycle += 1.0 / trial.frequency;
        }
        if k % sample_every == 0 || k == steps {
            let cache = Pinniped::cache(&q, &p);
            let sample = TrialSample {
                t,
                q,
                center_of_mass: Pinniped::center_of_mass(&q, &p, &cache),
                pressures: crawler.drive.pressures,
                contacts: crawler.contacts(),
            };
            on_sample(&sample);
            samples.push(sample);
        }
        if k == steps {
            break;
        }
        if let Some(signal) = trial.stop.as_ref().map(|s| s.load(Ordering::Relaxed)).filter(|s| *s != 0) {
            error = Some(IntegrationError::Stopped { time: t, signal });
            break;
        }
        match crawler.advance_to(((k + 1) as f64 * trial.control_period).min(end)) {
            Ok(()) => {}
            Err(CrawlError::Integration(e)) => {
                error = Some(e);
                break;
            }
            Err(CrawlError::Command(message)) => return Err(message),
        }
    }
    let (x, evaluations) = (crawler.x, crawler.evaluations);
    let first = start_pose.unwrap_or(x.q);
    let distance = per_cycle.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum();
    let senses = std::array::from_fn(|i| match gait.limbs[i] {
        LimbMotion::Circle { sense, .. } => Some(sense),
        _ => None,
    });
    Ok(TrialOutcome {
        samples,
        displacement: (x.q[0] - first[0], x.q[1] - first[1]),
        heading_change: heading(&x.q) - heading(&first),
        distance,
        senses,
        evaluations,
        wall_seconds: start.elapsed().as_secs_f64(),
        error,
    })
}

/// The protocol's frequencies (Hz), section IV-B.
pub const PROTOCOL_FREQUENCIES: [f64; 3] = [0.75, 1.00, 1.25];
/// Stride radii of Tables I and III (FR and FL, or every circling limb) and of Table II (B).
pub const CRAWL_STRIDES: [f64; 3] = [0.06, 0.08, 0.10];
/// Stride radii of the crawl-and-turn tables (B's) (m).
pub const TURN_STRIDES: [f64; 3] = [0.04, 0.06, 0.08];

/// One cell of the protocol: a gait at a stride radius and frequency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// The gait.
    pub gait: Gait,
    /// The stride radius (m).
    pub stride: f64,
    /// The gait frequency (Hz).
    pub frequency: f64,
}

/// The paper's 54 trials (18 gaits x 3 frequencies), in table order: Table I rows forward and
/// backward, Table II left and right, Table III clockwise and counterclockwise; within a
/// row, stride radius then frequency.
pub fn protocol_cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    let rows: [(Gait, [f64; 3]); 6] = [
        (Gait::Forward, CRAWL_STRIDES),
        (Gait::Backward, CRAWL_STRIDES),
        (Gait::CrawlTurn { left: true }, TURN_STRIDES),
        (Gait::CrawlTurn { left: false }, TURN_STRIDES),
        (Gait::InPlace { counterclockwise: false }, CRAWL_STRIDES),
        (Gait::InPlace { counterclockwise: true }, CRAWL_STRIDES),
    ];
    for (gait, strides) in rows {
        for stride in strides {
            for frequency in PROTOCOL_FREQUENCIES {
                cells.push(Cell { gait, stride, frequency });
            }
        }
    }
    cells
}

/// The paper's value for a cell's table entry: Table I mean speed (cm/s), Table II angular
/// speed per unit distance (rad/(m s)), Table III angular speed (rad/s).
pub fn paper_value(cell: &Cell) -> f64 {
    let row: [f64; 9] = match cell.gait {
        Gait::Forward => [5.34, 7.57, 7.21, 7.53, 10.2, 9.81, 9.41, 11.9, 10.9],
        Gait::Backward => [7.21, 10.1, 9.83, 9.52, 13.5, 13.0, 11.9, 16.9, 16.1],
        Gait::CrawlTurn { left: true } => [1.13, 1.72, 1.70, 1.59, 2.24, 2.06, 2.22, 2.89, 2.41],
        Gait::CrawlTurn { left: false } => [1.15, 1.68, 1.65, 1.62, 2.31, 2.11, 2.35, 2.92, 2.49],
        Gait::InPlace { counterclockwise: false } => [2.75, 3.29, 3.09, 3.01, 3.55, 3.41, 3.35, 3.76, 3.51],
        Gait::InPlace { counterclockwise: true } => [2.81, 3.35, 3.12, 3.08, 3.69, 3.53, 3.42, 3.82, 3.59],
    };
    let strides = if matches!(cell.gait, Gait::CrawlTurn { .. }) { TURN_STRIDES } else { CRAWL_STRIDES };
    let s = strides.iter().position(|r| (r - cell.stride).abs() < 1e-9).unwrap_or(0);
    let f = PROTOCOL_FREQUENCIES.iter().position(|v| (v - cell.frequency).abs() < 1e-9).unwrap_or(0);
    row[3 * s + f]
}

/// A cell's measured table entry, as the README defines it: straight gaits, the mean speed
/// along the gait's direction (cm/s; negative when the robot went the other way); in-place
/// turning, the mean turn rate in the gait's sense (rad/s); crawl-and-turn, that turn rate
/// divided by the hub's path length over the trial, sampled once a cycle (rad/(m s)).
pub fn measured_value(cell: &Cell, outcome: &TrialOutcome, duration: f64) -> f64 {
    let rate = outcome.turn_rate(duration);
    match cell.gait {
        Gait::Forward => outcome.speed_x_cm_s(duration),
        Gait::Backward => -outcome.speed_x_cm_s(duration),
        Gait::CrawlTurn { left } => (if left { rate } else { -rate }) / outcome.distance.max(1e-9),
        Gait::InPlace { counterclockwise } => {
            if counterclockwise {
                rate
            } else {
                -rate
            }
        }
    }
}

/// Runs trials on every core, results in the trials' order.
pub fn run_trials(trials: &[Trial]) -> Vec<Result<TrialOutcome, String>> {
    softgen_app::run_all(trials, |trial| run_trial(trial, |_| {}))
}

/// The gait as pressure commands for the output chain: before `settle` seconds every muscle
/// at 0 bar, then the gait's pressures (bar, before the chain's ceiling) in muscle order on
/// the commands from `first` on. For hardware runs and hardware in the loop.
pub fn pressure_controller(
    gait: Gait,
    stride: f64,
    frequency: f64,
    settle: f64,
    first: usize,
) -> Result<impl FnMut(f64, &mut [softgen_runtime::ActuatorCommand]) -> Result<(), String>, String> {
    let p = Params::default();
    let limbs = limbs(&p);
    let map = pressure_map(&p)?;
    if !(stride.is_finite() && stride >= 0.0) {
        return Err(format!("--stride must be a finite radius >= 0 m, got {stride}"));
    }
    if !(frequency.is_finite() && frequency > 0.0 && frequency <= 100.0) {
        return Err(format!("--gait-frequency must be in (0, 100] Hz, got {frequency}"));
    }
    let limb_gait = limb_gait(&p, gait, stride, frequency)?;
    Ok(move |t: f64, commands: &mut [softgen_runtime::ActuatorCommand]| -> Result<(), String> {
        if commands.len() < first + MUSCLES {
            return Err(format!("{} commands for {} muscles from command {first}", commands.len(), MUSCLES));
        }
        let pressures = if t < settle {
            [[0.0; 3]; SECTIONS]
        } else {
            limb_gait.pressures(t - settle, &limbs, &map).map_err(|e| e.to_string())?
        };
        for i in 0..MUSCLES {
            commands[first + i] = softgen_runtime::ActuatorCommand::Pressure(pressures[i / 3][i % 3]);
        }
        Ok(())
    })
}
