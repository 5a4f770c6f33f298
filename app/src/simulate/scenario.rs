//! A scenario: one robot, its terrain, gait and controllers, an integrator and a duration;
//! run to a CSV trajectory and a summary with what the plot needs.

use crate::support::plot::{plot_run, RunView};
use nalgebra::{SVector, Vector3};
use softgen_runtime::RobotVisitor;
use softgen_runtime::{
    likely_cause, Admittance, AdmittanceGains, ChosenIntegrator, ContactLaw, DormandPrince5, ForceCoordinates,
    FrictionLaw, IntegrationError, JointPd, Model, ParamSet, PlaneOfMotion, Rosenbrock34, RungeKutta4,
    SemiImplicitEuler, Serpenoid, Simulation, SimulationConfig, State, SystemJacobian, Terrain, Tolerances, ValveWave,
};
use std::io::Write;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

/// Which integrator steps the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntegratorChoice {
    /// Classical RK4 at a fixed step.
    RungeKutta4 {
        /// The step (s).
        step: f64,
    },
    /// Semi-implicit Euler at a fixed step.
    SemiImplicitEuler {
        /// The step (s).
        step: f64,
    },
    /// Adaptive Dormand-Prince 5(4).
    DormandPrince5 {
        /// The relative tolerance.
        relative: f64,
        /// The absolute tolerance.
        absolute: f64,
    },
    /// ROS34PW2, linearly implicit, for stiff robots (soft sections, stiff contact).
    Rosenbrock34 {
        /// The relative tolerance.
        relative: f64,
        /// The absolute tolerance.
        absolute: f64,
        /// Its Jacobian: the stiff part or the exact one.
        jacobian: SystemJacobian,
    },
}

impl IntegratorChoice {
    /// A fixed-step integrator's step (s); `None` for an adaptive one.
    pub(crate) fn fixed_step(&self) -> Option<f64> {
        match *self {
            IntegratorChoice::RungeKutta4 { step } | IntegratorChoice::SemiImplicitEuler { step } => Some(step),
            IntegratorChoice::DormandPrince5 { .. } | IntegratorChoice::Rosenbrock34 { .. } => None,
        }
    }

    /// The integrator for `N` coordinates; adaptive ones step at most one control period.
    pub(crate) fn build<const N: usize>(&self, control_period: f64) -> Result<ChosenIntegrator<N>, String> {
        Ok(match *self {
            IntegratorChoice::RungeKutta4 { step } => {
                ChosenIntegrator::RungeKutta4(RungeKutta4::new(step).map_err(|e| e.to_string())?)
            }
            IntegratorChoice::SemiImplicitEuler { step } => {
                ChosenIntegrator::SemiImplicitEuler(SemiImplicitEuler::new(step).map_err(|e| e.to_string())?)
            }
            IntegratorChoice::DormandPrince5 { relative, absolute } => ChosenIntegrator::DormandPrince5(
                DormandPrince5::new(Tolerances { relative, absolute })
                    .map_err(|e| e.to_string())?
                    .with_max_step(control_period),
            ),
            IntegratorChoice::Rosenbrock34 { relative, absolute, .. } => {
                let mut i = Rosenbrock34::new(Tolerances { relative, absolute })
                    .map_err(|e| e.to_string())?
                    .with_max_step(control_period);
                i.jacobian_every = 20;
                ChosenIntegrator::Rosenbrock34(i)
            }
        })
    }
}

/// Terrain override; `SpecDefault` keeps the spec's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TerrainChoice {
    /// The spec's terrain.
    SpecDefault,
    /// This terrain instead.
    Override(Terrain),
}

impl TerrainChoice {
    /// The overriding terrain, None for the spec's.
    pub fn terrain(self) -> Option<Terrain> {
        match self {
            TerrainChoice::SpecDefault => None,
            TerrainChoice::Override(terrain) => Some(terrain),
        }
    }
}

/// Which coordinates the admittance controller reads the contact force in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CoordinatesChoice {
    /// The ones the robot's spec states (`[controller_coordinates]`, the paper's), else the
    /// model's.
    #[default]
    Spec,
    /// The model's own, whatever the spec states.
    Model,
}

/// Which contacts' normal forces drive the admittance controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AdmittanceForceChoice {
    /// Obstacles' only (a stair's step, a pipe's wall), not the ground's: the paper's eq 23,
    /// whose desired frequencies return to the nominal ones when nothing but the ground is
    /// touched.
    #[default]
    Obstacles,
    /// Every normal contact force, the ground's included.
    All,
}

impl AdmittanceForceChoice {
    /// The runtime's name for it.
    pub fn force(self) -> softgen_runtime::AdmittanceForce {
        match self {
            AdmittanceForceChoice::Obstacles => softgen_runtime::AdmittanceForce::Obstacles,
            AdmittanceForceChoice::All => softgen_runtime::AdmittanceForce::AllContacts,
        }
    }
}

/// Everything a run needs besides the robot's generated code.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The robot's name.
    pub robot: String,
    /// Simulated time (s).
    pub duration: f64,
    /// The integrator and its settings.
    pub integrator: IntegratorChoice,
    /// Controller and sample period (s).
    pub control_period: f64,
    /// The terrain, the spec's or another.
    pub terrain: TerrainChoice,
    /// Disable the gait: joints are passive (no torque).
    pub passive: bool,
    /// The gait's amplitude (rad), in place of the spec's.
    pub amplitude: Option<f64>,
    /// The gait's temporal frequency (rad/s), in place of the spec's.
    pub temporal_frequency: Option<f64>,
    /// The gait's spatial frequency (rad), in place of the spec's.
    pub spatial_frequency: Option<f64>,
    /// The gait's offset (rad), in place of the spec's.
    pub offset: Option<f64>,
    /// Gait fade-in time (s).
    pub ramp: f64,
    /// The admittance controller's gains; None runs without it.
    pub admittance: Option<AdmittanceGains>,
    /// The coordinates the admittance controller reads the contact force in.
    pub admittance_coordinates: CoordinatesChoice,
    /// Which contacts' normal forces drive the admittance controller.
    pub admittance_force: AdmittanceForceChoice,
    /// The contact stiffness (N/m), in place of the spec's.
    pub contact_stiffness: Option<f64>,
    /// The contact damping (N s/m), in place of the spec's.
    pub contact_damping: Option<f64>,
    /// Hunt and Crossley's dissipation (s/m), in place of the spec's.
    pub contact_dissipation: Option<f64>,
    /// The friction coefficient along the axis, in place of the spec's.
    pub friction_along: Option<f64>,
    /// The friction coefficient across the axis, in place of the spec's.
    pub friction_across: Option<f64>,
    /// The friction's regularisation speed (m/s), in place of the spec's.
    pub friction_regularisation: Option<f64>,
    /// The friction's anisotropy, in place of the spec's.
    pub friction_anisotropy: Option<softgen_runtime::FrictionAnisotropy>,
    /// The joint servos' stiffness (N m/rad), in place of the spec's controller's.
    pub servo_stiffness: Option<f64>,
    /// The joint servos' torque limit (N m), in place of the spec's actuators'.
    pub servo_torque_limit: Option<f64>,
    /// Parameter overrides by name.
    pub params: Vec<(String, f64)>,
    /// Write every k-th sample to the CSV.
    pub csv_every: usize,
    /// Number of body snapshots kept for the plot.
    pub snapshots: usize,
    /// Set non-zero (a signal's number) to end the run at the next control period.
    pub stop: Option<Arc<AtomicUsize>>,
}

impl Scenario {
    /// The paper's pedal-wave demo: the default of `softgen simulate`.
    pub fn new(robot: &str) -> Scenario {
        Scenario {
            robot: robot.to_string(),
            duration: 20.0,
            integrator: IntegratorChoice::RungeKutta4 { step: 0.002 },
            control_period: 0.002,
            terrain: TerrainChoice::SpecDefault,
            passive: false,
            amplitude: None,
            temporal_frequency: None,
            spatial_frequency: None,
            offset: None,
            ramp: 2.0,
            admittance: None,
            admittance_coordinates: CoordinatesChoice::Spec,
            admittance_force: AdmittanceForceChoice::Obstacles,
            contact_stiffness: None,
            contact_damping: None,
            contact_dissipation: None,
            friction_along: None,
            friction_across: None,
            friction_regularisation: None,
            friction_anisotropy: None,
            servo_stiffness: None,
            servo_torque_limit: None,
            params: Vec::new(),
            csv_every: 5,
            snapshots: 8,
            stop: None,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// The robot's name.
    pub robot: String,
    /// The plane it moves in, or spatial motion.
    pub plane: PlaneOfMotion,
    /// The terrain it ran on.
    pub terrain: Terrain,
    /// Simulated time reached (s).
    pub simulated: f64,
    /// Wall time the run took (s).
    pub wall_seconds: f64,
    /// Right-hand sides evaluated.
    pub evaluations: usize,
    /// Samples kept.
    pub samples: usize,
    /// (t, centre of mass) at every sample.
    pub com_path: Vec<(f64, Vector3<f64>)>,
    /// (t, contact point positions) at evenly spaced times, for drawing the body.
    pub snapshots: Vec<(f64, Vec<Vector3<f64>>)>,
    /// Deepest penetration seen (m).
    pub max_depth: f64,
    /// Highest point of any contact point at the end (m, world z).
    pub final_points: Vec<Vector3<f64>>,
    /// The integration error that ended the run early, if any.
    pub error: Option<String>,
    /// For a run that failed: the input that most likely made it fail, as a sentence.
    pub likely_cause: Option<String>,
}

impl RunSummary {
    /// Draws the run (terrain, body snapshots, centre-of-mass path) to `path` (PNG) and the
    /// SVG beside it.
    pub fn plot(&self, path: &std::path::Path) -> Result<(), String> {
        let view = RunView {
            robot: &self.robot,
            simulated: self.simulated,
            terrain: self.terrain,
            plane: self.plane,
            com_path: &self.com_path,
            snapshots: &self.snapshots,
        };
        plot_run(&view, path)
    }

    /// The centre of mass at the first sample.
    pub fn com_start(&self) -> Vector3<f64> {
        self.com_path.first().map_or(Vector3::zeros(), |c| c.1)
    }
    /// The centre of mass at the last sample.
    pub fn com_end(&self) -> Vector3<f64> {
        self.com_path.last().map_or(Vector3::zeros(), |c| c.1)
    }
    /// Centre of mass at the last sample at or before `t`.
    pub fn com_at(&self, t: f64) -> Vector3<f64> {
        let mut last = self.com_start();
        for (time, c) in &self.com_path {
            if *time > t + 1e-9 {
                break;
            }
            last = *c;
        }
        last
    }
}

pub(crate) fn check(name: &str, v: f64, positive: bool) -> Result<(), String> {
    if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
        return Err(format!("{name} must be a finite number {} 0, got {v}", if positive { ">" } else { ">=" }));
    }
    Ok(())
}

/// The most control periods one run may take: 1e8 (about a day of simulated time at 1 kHz,
/// minutes of wall time), so that a duration of 1e12 s or a period of 1e-300 s is refused at
/// once instead of running for ever.
pub const MAX_CONTROL_PERIODS: f64 = 1e8;

/// Refuses runs of more than [`MAX_CONTROL_PERIODS`] periods.
pub fn check_periods(duration: f64, control_period: f64) -> Result<(), String> {
    let periods = duration / control_period;
    if !(periods <= MAX_CONTROL_PERIODS) {
        return Err(format!(
            "duration / control period = {duration} s / {control_period} s = {periods:.3e} control periods, more than the limit of {MAX_CONTROL_PERIODS:.0e}: shorten the run or lengthen the period"
        ));
    }
    Ok(())
}

/// Where a run's samples go, one row of numbers per kept sample: t, q, the centre of mass,
/// the active contacts, the deepest penetration, then each contact point's force.
pub trait SampleRows {
    /// The column names, before the first row.
    fn header(&mut self, columns: &[String]) -> Result<(), String>;
    /// One sample's values, in the header's order.
    fn row(&mut self, values: &[f64]) -> Result<(), String>;
    /// After the last row: flushes what was written.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// Rows as CSV text: t to the microsecond, positions to the nanometre, forces to the
/// micronewton.
pub(crate) struct CsvRows<'c, 'w> {
    pub(crate) writer: &'c mut (dyn Write + 'w),
    /// Columns before the contact forces, the contact count's column.
    pub(crate) count_column: usize,
}

impl SampleRows for CsvRows<'_, '_> {
    fn header(&mut self, columns: &[String]) -> Result<(), String> {
        self.count_column = columns.iter().position(|c| c == "active_contacts").unwrap_or(usize::MAX);
        writeln!(self.writer, "{}", columns.join(",")).map_err(|e| format!("writing CSV: {e}"))
    }
    fn row(&mut self, values: &[f64]) -> Result<(), String> {
        let mut row = String::with_capacity(16 * values.len());
        for (i, v) in values.iter().enumerate() {
            use std::fmt::Write as _;
            let _ = match i {
                0 => write!(row, "{v:.6}"),
                i if i == self.count_column => write!(row, ",{v}"),
                i if i > self.count_column + 1 => write!(row, ",{v:.6}"),
                _ => write!(row, ",{v:.9}"),
            };
        }
        writeln!(self.writer, "{row}").map_err(|e| format!("writing CSV: {e}"))
    }
    fn finish(&mut self) -> Result<(), String> {
        self.writer.flush().map_err(|e| format!("writing CSV: {e}"))
    }
}

/// A scenario's run, compiled for each robot by [`App`](crate::App).
pub(crate) struct Runner<'a, 'c, 'b> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) csv: Option<&'c mut dyn SampleRows>,
    pub(crate) progress: &'b mut dyn FnMut(f64),
}

impl RobotVisitor for Runner<'_, '_, '_> {
    type Output = Result<RunSummary, String>;

    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        let s = self.scenario;
        let params = scenario_params::<R, N, C>(s)?;
        let (config, contact) = scenario_config::<R, N, C>(s)?;
        let terrain = config.terrain;
        let mut simulation = Simulation::<R, N, C>::new(params.clone(), config)?;
        if let IntegratorChoice::Rosenbrock34 { jacobian, .. } = s.integrator {
            simulation.use_jacobian(jacobian);
        }
        if let Some(flag) = &s.stop {
            simulation.stop_on(Arc::clone(flag));
        }
        let mut x = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let mut t = 0.0;
        let mut csv = self.csv;
        if let Some(w) = csv.as_deref_mut() {
            w.header(&csv_header::<R, N, C>())?;
        }
        let mut recorder = SampleRecorder::<N, C>::new(s, R::NAME, R::PLANE, terrain, csv, self.progress);
        let start = Instant::now();
        let result = match scenario_valve_wave::<R, N, C>(s)? {
            // Valve-driven robots: the spec's valve wave commands the valves, whose
            // coordinates follow their responses; the rest of the robot follows the dynamics.
            Some(wave) => {
                let mut driven = Vec::new();
                for (k, &coordinate) in R::VALVES.iter().enumerate() {
                    let response = R::valve_response(k, &params)
                        .ok_or_else(|| format!("valve {k} of `{}` has no response", R::NAME))?;
                    driven.push(softgen_runtime::DrivenCoordinate { coordinate, response });
                }
                let mut system = softgen_runtime::PrescribedSimulation::new(simulation, &driven, t, &x)?;
                let commands = |t: f64, out: &mut [f64]| {
                    for (i, c) in out.iter_mut().enumerate() {
                        *c = wave.state(t, i);
                    }
                };
                let mut sample = |t: f64, x: &State<N>, system: &softgen_runtime::PrescribedSimulation<R, N, C>| {
                    recorder.record::<R>(&params, t, x, &system.report(t, x));
                    Ok(())
                };
                let mut integrator = s.integrator.build::<N>(s.control_period)?;
                let result = system.run(&mut integrator, &mut t, &mut x, s.duration, commands, &mut sample);
                let stopped = s.stop.as_ref().is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed) != 0);
                result.map_err(|e| (e, stopped))
            }
            None => {
                let mut integrator = s.integrator.build::<N>(s.control_period)?;
                let mut sample = |t: f64, x: &State<N>, report: &softgen_runtime::ContactReport<N, C>, _: &_| {
                    recorder.record::<R>(&params, t, x, report)
                };
                simulation
                    .run(&mut integrator, &mut t, &mut x, s.duration, &mut sample)
                    .map_err(|e| (e.to_string(), matches!(e, IntegrationError::Stopped { .. })))
            }
        };
        recorder.wall_seconds = start.elapsed().as_secs_f64();
        recorder.finish(result, |largest_force| {
            likely_cause::<R, N, C>(&params, &contact, s.integrator.fixed_step(), largest_force)
        })
    }
}

/// The scenario's parameters over the robot's defaults, each finite and the set checked.
fn scenario_params<R: Model<N, C>, const N: usize, const C: usize>(s: &Scenario) -> Result<R::Params, String> {
    let mut params = R::Params::default();
    for (name, value) in &s.params {
        if !value.is_finite() {
            return Err(format!("parameter `{name}` must be finite, got {value}"));
        }
        params.set(name, *value).map_err(|e| e.to_string())?;
    }
    params.check().map_err(|e| format!("parameters: {e}"))?;
    Ok(params)
}

/// The simulation's settings for the scenario (the spec's environment, gait and servo under
/// the scenario's overrides), and its contact law.
fn scenario_config<R: Model<N, C>, const N: usize, const C: usize>(
    s: &Scenario,
) -> Result<(SimulationConfig, ContactLaw), String> {
    let env = R::ENVIRONMENT;
    let contact = ContactLaw {
        stiffness: s.contact_stiffness.unwrap_or(env.contact_stiffness),
        damping: s.contact_damping.unwrap_or(env.contact_damping),
        dissipation: s.contact_dissipation.unwrap_or(env.contact_dissipation),
        friction: FrictionLaw {
            along: s.friction_along.unwrap_or(env.friction_along),
            across: s.friction_across.or(s.friction_along).unwrap_or(env.friction_across),
            anisotropy: s.friction_anisotropy.unwrap_or(env.friction_anisotropy),
            regularisation: s.friction_regularisation.unwrap_or(env.friction_regularisation),
        },
    };
    let terrain = match s.terrain {
        TerrainChoice::SpecDefault => env.terrain,
        TerrainChoice::Override(t) => t,
    };
    let gait = match (R::GAIT, s.passive) {
        (Some(g), false) => Some(Serpenoid {
            amplitude: s.amplitude.unwrap_or(g.amplitude),
            temporal_frequency: s.temporal_frequency.unwrap_or(g.temporal_frequency),
            spatial_frequency: s.spatial_frequency.unwrap_or(g.spatial_frequency),
            offset: s.offset.unwrap_or(g.offset),
            ramp: s.ramp,
        }),
        (None, false) if (s.amplitude.is_some() && R::VALVE_GAIT.is_none()) || s.admittance.is_some() => {
            return Err(format!("robot `{}` declares no gait ([gait] in its spec)", R::NAME));
        }
        _ => None,
    };
    let mut servo = R::GAIT.map_or(JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 }, |g| g.servo());
    servo.stiffness = s.servo_stiffness.unwrap_or(servo.stiffness);
    servo.torque_limit = s.servo_torque_limit.unwrap_or(servo.torque_limit);
    let config = SimulationConfig {
        contact,
        terrain,
        gait,
        servo,
        admittance: s.admittance.map(|gains| Admittance {
            gains,
            coordinates: match s.admittance_coordinates {
                CoordinatesChoice::Spec => R::CONTROLLER_COORDINATES,
                CoordinatesChoice::Model => ForceCoordinates::Model,
            },
            force: s.admittance_force.force(),
        }),
        control_period: s.control_period,
    };
    Ok((config, contact))
}

/// The trajectory CSV's columns: time, the coordinates, the centre of mass, the contacts'
/// count and deepest depth, every contact point's force.
fn csv_header<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<String> {
    let mut header = vec!["t".to_string()];
    header.extend(R::COORDINATES.iter().map(|c| c.name.to_string()));
    header.extend(["com_x", "com_y", "com_z", "active_contacts", "max_depth"].map(String::from));
    for p in R::CONTACT_POINTS {
        for axis in ["fx", "fy", "fz"] {
            header.push(format!("{}_{axis}", p.name));
        }
    }
    header
}

/// A valve-driven robot's wave for the scenario (the spec's, under the scenario's
/// frequency, delay and offset), checked; none for other robots and passive runs.
fn scenario_valve_wave<R: Model<N, C>, const N: usize, const C: usize>(
    s: &Scenario,
) -> Result<Option<ValveWave>, String> {
    let wave = match (R::VALVE_GAIT, s.passive) {
        (Some(w), false) if const { !R::VALVES.is_empty() } => ValveWave {
            temporal_frequency: s.temporal_frequency.unwrap_or(w.temporal_frequency),
            delay: s.spatial_frequency.unwrap_or(w.delay),
            offset: s.offset.unwrap_or(w.offset),
        },
        _ => return Ok(None),
    };
    wave.validate()?;
    if s.amplitude.is_some() {
        return Err(format!("robot `{}` is driven by valves: its wave has no amplitude (the valves' response gain sets it; change it with --set)", R::NAME));
    }
    Ok(Some(wave))
}

/// What a run keeps of its samples: the summary (centre-of-mass path, snapshots, deepest
/// contact), the largest contact force, and every `csv_every`-th sample as a CSV row.
struct SampleRecorder<'c, 'p, const N: usize, const C: usize> {
    summary: RunSummary,
    largest_force: softgen_runtime::LargestContactForce,
    snapshot_period: f64,
    next_snapshot: f64,
    csv: Option<&'c mut dyn SampleRows>,
    csv_every: usize,
    /// The row being written (allocated once).
    row: Vec<f64>,
    /// The first error writing a row: the run goes on, and fails at its end.
    write_error: Option<String>,
    progress: &'p mut dyn FnMut(f64),
    /// The run's wall time (s), set when it ends.
    wall_seconds: f64,
}

impl<'c, 'p, const N: usize, const C: usize> SampleRecorder<'c, 'p, N, C> {
    fn new(
        s: &Scenario,
        robot: &str,
        plane: PlaneOfMotion,
        terrain: Terrain,
        csv: Option<&'c mut dyn SampleRows>,
        progress: &'p mut dyn FnMut(f64),
    ) -> Self {
        let summary = RunSummary {
            robot: robot.to_string(),
            plane,
            terrain,
            simulated: 0.0,
            wall_seconds: 0.0,
            evaluations: 0,
            samples: 0,
            com_path: Vec::new(),
            snapshots: Vec::new(),
            max_depth: 0.0,
            final_points: Vec::new(),
            error: None,
            likely_cause: None,
        };
        SampleRecorder {
            summary,
            largest_force: softgen_runtime::LargestContactForce::default(),
            snapshot_period: if s.snapshots > 1 { s.duration / (s.snapshots - 1) as f64 } else { f64::INFINITY },
            next_snapshot: 0.0,
            csv,
            csv_every: s.csv_every,
            row: Vec::with_capacity(1 + N + 5 + 3 * C),
            write_error: None,
            progress,
            wall_seconds: 0.0,
        }
    }

    /// One sample at time `t`.
    fn record<R: Model<N, C>>(
        &mut self,
        params: &R::Params,
        t: f64,
        x: &State<N>,
        report: &softgen_runtime::ContactReport<N, C>,
    ) {
        let summary = &mut self.summary;
        let cache = R::cache(&x.q, params);
        let com = R::center_of_mass(&x.q, params, &cache);
        summary.com_path.push((t, com));
        summary.max_depth = summary.max_depth.max(report.max_depth);
        self.largest_force.observe(t, &report.forces);
        if t >= self.next_snapshot - 1e-9 {
            summary.snapshots.push((t, report.positions.to_vec()));
            self.next_snapshot += self.snapshot_period;
        }
        summary.final_points = report.positions.to_vec();
        if let Some(w) = self.csv.as_deref_mut() {
            if summary.samples % self.csv_every == 0 && self.write_error.is_none() {
                let row = &mut self.row;
                row.clear();
                row.push(t);
                row.extend(x.q.iter().chain(com.iter()));
                row.extend([report.active as f64, report.max_depth]);
                row.extend(report.forces.iter().flat_map(|f| [f.x, f.y, f.z]));
                if let Err(e) = w.row(row) {
                    self.write_error = Some(e);
                }
            }
        }
        summary.samples += 1;
        summary.simulated = t;
        (self.progress)(t);
    }

    /// The run's summary once it ended with `result` (its evaluations, or its error and
    /// whether a stop request ended it): the CSV flushed, and where the run failed on its
    /// own, the likely cause from the largest contact force. A row that could not be
    /// written fails the run.
    fn finish(
        self,
        result: Result<usize, (String, bool)>,
        likely_cause: impl FnOnce(&softgen_runtime::LargestContactForce) -> Option<String>,
    ) -> Result<RunSummary, String> {
        let mut summary = self.summary;
        let _ = summary_flush(self.csv);
        summary.wall_seconds = self.wall_seconds;
        match result {
            Ok(evaluations) => summary.evaluations = evaluations,
            Err((e, stopped)) => {
                if !stopped {
                    summary.likely_cause = likely_cause(&self.largest_force);
                }
                summary.error = Some(e)
            }
        }
        if let Some(e) = self.write_error {
            return Err(e);
        }
        Ok(summary)
    }
}

fn summary_flush(rows: Option<&mut dyn SampleRows>) -> Result<(), String> {
    match rows {
        Some(w) => w.finish(),
        None => Ok(()),
    }
}
