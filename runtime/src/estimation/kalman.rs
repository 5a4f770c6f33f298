//! An extended Kalman filter on the generated model: the state (q, qd), predicted by the
//! robot's simulated dynamics (the planner's implicit Euler step with its exact Jacobian,
//! `optimal_control::knots`) under the commands actually sent, with the muscles' measured
//! pressures in place of the commanded ones where pressure sensors exist (elsewhere the
//! commanded pressures through each muscle's regulator lag, as the plant applies them); corrected by
//! markers (generated point positions and Jacobians) and coordinate sensors. A valve-driven
//! robot's process model is its own (`valve_process`): its valves' coordinates prescribed by
//! their responses, known from the commands and never estimated.
//!
//! Why the knots' step: it is the planner's own model, stable at any step for the stiff
//! soft joints and contacts, and its Jacobian is exact, so the covariance follows the
//! dynamics the planner plans with. Why a history: a marker frame arrives its latency after
//! it was taken; the filter goes back to the state at the frame's time stamp (to the
//! nearest step), corrects it there and re-predicts to now with the commands recorded, so
//! late frames correct the past instead of being read as the present. Outliers (a reading
//! farther than the gate in Mahalanobis distance) are dropped and counted; a streak of them
//! from one sensor, a non-finite estimate or a failed prediction is divergence.

use super::sensors::{Measurement, Reading, Sensor, SensorFault, SensorWatch};
use super::valve_process::ValveProcess;
use crate::actuators::muscle_drive::Muscle;
use crate::optimal_control::ddp::KnotDynamics;
use crate::optimal_control::knots::{check_newton_tolerance, KnotIntegrator, RobotKnots, MAX_SUBSTEPS};
use crate::robot::model::{CoordinateKind, Model};
use crate::robot::state::State;
use crate::simulation::closed_loop::Simulation;
use crate::simulation::system_jacobian::ControlInput;
use nalgebra::{DMatrix, DVector, Matrix3, SMatrix, SVector, Vector3};
use std::collections::VecDeque;

/// Readings a step holds without growing its list (more are kept, at the cost of an
/// allocation).
const READINGS_PER_STEP: usize = 256;

/// The filter's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EstimatorSettings {
    /// Longest step of the process model (s); the loop's period is cut into equal steps no
    /// longer than this.
    pub step: f64,
    /// Standard deviation of the accelerations the model misses, per coordinate (its unit
    /// per s^2): the process noise.
    pub acceleration_noise: f64,
    /// In its place for the coordinates of these kinds: a coordinate's unit sets what a
    /// missed acceleration means (a metre per s^2 is a base's jolt and a soft section's
    /// actuator torn), so the kinds may differ.
    pub acceleration_noise_by_kind: Vec<(CoordinateKind, f64)>,
    /// Standard deviations of the first estimate: coordinates (their units) and rates.
    pub initial_position_std: f64,
    /// See `initial_position_std`.
    pub initial_velocity_std: f64,
    /// Mahalanobis distance past which a reading is an outlier, dropped.
    pub gate: f64,
    /// Outliers in a row from one sensor that mean the estimate has diverged.
    pub outlier_streak: usize,
    /// How far back (s) a late frame may correct the estimate: the history kept.
    pub history: f64,
    /// How long (s) the last safe command is held after a fault before the safe state.
    pub fault_hold: f64,
    /// The process model's step Jacobian (the covariance's transition) is evaluated every
    /// this many steps and kept in between; 1 evaluates it at every step.
    pub jacobian_every: usize,
    /// The process step's Newton iterations: the update (relative to the rates) below which
    /// they have converged, and how far an iteration with the kept Newton matrix must lower
    /// the residual for the matrix to be kept (a fresh one costs a system Jacobian).
    pub newton_tolerance: f64,
    /// See `newton_tolerance`.
    pub newton_contraction: f64,
}

impl Default for EstimatorSettings {
    fn default() -> Self {
        EstimatorSettings {
            step: 0.01,
            acceleration_noise: 0.5,
            acceleration_noise_by_kind: Vec::new(),
            initial_position_std: 0.01,
            initial_velocity_std: 0.05,
            gate: 6.0,
            outlier_streak: 12,
            history: 0.1,
            fault_hold: 0.2,
            jacobian_every: 1,
            newton_tolerance: 1e-10,
            newton_contraction: 0.3,
        }
    }
}

impl EstimatorSettings {
    /// Checks every setting finite and in its range.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("step", self.step),
            ("acceleration_noise", self.acceleration_noise),
            ("initial_position_std", self.initial_position_std),
            ("initial_velocity_std", self.initial_velocity_std),
            ("gate", self.gate),
            ("history", self.history),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("estimator {name} must be finite and > 0, got {value}"));
            }
        }
        for (k, (kind, noise)) in self.acceleration_noise_by_kind.iter().enumerate() {
            if !(noise.is_finite() && *noise > 0.0) {
                return Err(format!(
                    "estimator acceleration_noise_by_kind.{} must be finite and > 0, got {noise}",
                    kind.key()
                ));
            }
            if self.acceleration_noise_by_kind[..k].iter().any(|(other, _)| other == kind) {
                return Err(format!("estimator acceleration_noise_by_kind.{} is given twice", kind.key()));
            }
        }
        if self.step > 0.05 {
            return Err(format!("estimator step must be at most 0.05 s, got {}", self.step));
        }
        if self.history > 2.0 {
            return Err(format!("estimator history must be at most 2 s, got {}", self.history));
        }
        if !(self.fault_hold.is_finite() && (0.0..=10.0).contains(&self.fault_hold)) {
            return Err(format!("estimator fault_hold must be in [0, 10] s, got {}", self.fault_hold));
        }
        if self.outlier_streak == 0 {
            return Err("estimator outlier_streak must be at least 1".into());
        }
        check_newton_tolerance("estimator newton_tolerance", self.newton_tolerance)?;
        if !(self.newton_contraction.is_finite() && self.newton_contraction > 0.0 && self.newton_contraction < 1.0) {
            return Err(format!("estimator newton_contraction must be in (0, 1), got {}", self.newton_contraction));
        }
        if !(1..=1000).contains(&self.jacobian_every) {
            return Err(format!("estimator jacobian_every must be in 1..=1000, got {}", self.jacobian_every));
        }
        Ok(())
    }
}

/// Why the estimate cannot be trusted.
#[derive(Clone, Debug, PartialEq)]
pub enum EstimatorFault {
    /// A sensor failed.
    Sensor(SensorFault),
    /// The estimate diverged (a streak of outliers, a non-finite estimate), and why.
    Diverged(String),
}

impl std::fmt::Display for EstimatorFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EstimatorFault::Sensor(fault) => fault.fmt(f),
            EstimatorFault::Diverged(why) => write!(f, "the state estimate diverged: {why}"),
        }
    }
}

/// Counts of what the filter did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EstimatorStats {
    /// Prediction steps taken.
    pub predictions: u64,
    /// Predictions that evaluated the step's Jacobian (the others kept the last one), and
    /// the system Jacobians evaluated in all (with Newton's fresh matrices).
    pub linearisations: u64,
    /// See `linearisations`.
    pub system_jacobians: u64,
    /// Readings used, dropped as outliers, and too old for the history.
    pub updates: u64,
    /// See `updates`.
    pub outliers: u64,
    /// See `updates`.
    pub late: u64,
    /// Pressure readings taken as the process model's inputs.
    pub pressures: u64,
    /// Predictions whose implicit step Newton's method could not solve, taken instead by
    /// semi-implicit Euler in steps of at most `FALLBACK_STEP`.
    pub explicit_fallbacks: u64,
}

/// The longest semi-implicit Euler step (s) a prediction takes where its implicit step
/// fails (short explicit steps need no solve). Measured on a limbed robot's filter with every
/// step forced to fall back (tests/models/marker_estimation.rs, 10 ms steps): in 16 pieces
/// of 0.625 ms the estimate left its gate after 1.74 s; in 100 of 0.1 ms the hub was 0.54
/// mm RMS, as with the implicit steps. In a 1 kHz loop: ten steps, ten system Jacobians.
pub const FALLBACK_STEP: f64 = 1e-4;

/// The estimate at one step of the history, and the commands in effect from it to the next.
#[derive(Clone, Debug)]
struct Snapshot {
    time: f64,
    /// The prediction of this step, before any reading: kept, so readings that arrive late
    /// are applied with those already taken, in the order they were taken.
    prior_state: DVector<f64>,
    prior_covariance: DMatrix<f64>,
    /// The estimate after this step's readings.
    state: DVector<f64>,
    covariance: DMatrix<f64>,
    /// The readings taken within this step (from its time to the next's).
    readings: Vec<Reading>,
    input: Vec<f64>,
    /// d x_(i+1) / d x_i of the step from here, once predicted: how a correction here
    /// carries to the next snapshot.
    transition: DMatrix<f64>,
}

/// The most Newton iterations of the process model's implicit steps. A planner's knot that
/// fails costs one plan (the last one stands); a filter's step that fails ends the run, so
/// the filter gives Newton's method more room than a planner's 20. On the soft snake rolling
/// on its carpet, a step whose first stale Newton matrices kept failing to contract (each
/// failure a fresh matrix and one iteration lost) reached a residual of 2e-7 at its 20th
/// iteration, contracting seven-fold an iteration, and was refused; halved four times, each
/// half did the same, and the estimate was reported diverged 0.06 s after the goal was
/// reached.
const NEWTON_ITERATIONS: usize = 60;

/// What predicts the state from one step to the next.
enum Process<R: Model<N, C>, const N: usize, const C: usize> {
    /// The planner's implicit step with its exact Jacobian.
    Knots(RobotKnots<R, N, C>),
    /// A valve robot: its valves' coordinates prescribed, the rest stepped by RK4.
    Valves(ValveProcess<R, N, C>),
}

impl<R: Model<N, C>, const N: usize, const C: usize> Process<R, N, C> {
    fn control_size(&self) -> usize {
        match self {
            Process::Knots(knots) => knots.control_size(),
            Process::Valves(valves) => valves.control_size(),
        }
    }

    fn jacobians(&self) -> u64 {
        match self {
            Process::Knots(knots) => knots.jacobians as u64,
            Process::Valves(valves) => valves.jacobians as u64,
        }
    }
}

/// What every filter is built from besides its process model.
struct Filter<'a, R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
    sensors: &'a [Sensor],
    settings: EstimatorSettings,
    start: &'a State<N>,
    t0: f64,
    step: f64,
    first_muscle: usize,
    muscles: usize,
    lags: Vec<Muscle>,
}

/// The filter's step: equal steps that divide the loop's `period`, so every period ends on
/// a step; the settings and the period checked.
fn filter_step(settings: &EstimatorSettings, period: f64) -> Result<f64, String> {
    settings.validate()?;
    if !(period.is_finite() && period > 0.0) {
        return Err(format!("loop period must be > 0 s, got {period}"));
    }
    let steps = (period / settings.step).ceil().max(1.0);
    Ok(period / steps)
}

/// The extended Kalman filter of one robot.
pub struct StateEstimator<R: Model<N, C>, const N: usize, const C: usize> {
    process: Process<R, N, C>,
    /// Coordinates the process model knows exactly (a valve's, prescribed by its
    /// response): no variance, no process noise, never corrected.
    known: [bool; N],
    /// Each coordinate's process noise, a variance (its unit per s^2, squared).
    noise_variance: [f64; N],
    params: R::Params,
    settings: EstimatorSettings,
    watch: SensorWatch,
    step: f64,
    /// Index of the first pressure command (after any servo set points) and their count.
    first_muscle: usize,
    muscles: usize,
    /// The commands sent last.
    input: Vec<f64>,
    /// Each muscle (its regulator's lag) and the pressure it has reached at the newest step
    /// (bar): every muscle gets its commanded pressure through the lag, as the plant's and
    /// the robot's regulators give it; a pressure sensor's reading resets the lag's state
    /// at the reading's time (the newest reading of each muscle, by its stamp).
    lags: Vec<Muscle>,
    reached: Vec<f64>,
    pressure_stamps: Vec<f64>,
    /// What the step from the newest snapshot applies: `input`, with lagged pressures.
    applied: Vec<f64>,
    history: VecDeque<Snapshot>,
    capacity: usize,
    /// The step's Jacobian d x_(i+1) / d x_i evaluated last, and the steps predicted since:
    /// it is evaluated again every `jacobian_every` steps.
    kept_transition: DMatrix<f64>,
    since_linearised: usize,
    /// Readings stamped after the loop's time when they arrived, and those a call applies
    /// (new, or waiting until then).
    waiting: Vec<Reading>,
    due: Vec<Reading>,
    /// Work space, sized once.
    augmented: DVector<f64>,
    next: DVector<f64>,
    by_state: DMatrix<f64>,
    by_control: DMatrix<f64>,
    transition_t: DMatrix<f64>,
    product: DMatrix<f64>,
    /// A replay's work space: a step's estimate before the replay, and how much the replay
    /// moved it.
    old_state: DVector<f64>,
    change: DVector<f64>,
    carried: DVector<f64>,
    control: DVector<f64>,
    gain: DMatrix<f64>,
    covariance_by_h: DMatrix<f64>,
    outlier_run: Vec<usize>,
    /// What the filter did so far.
    pub stats: EstimatorStats,
}

impl<R: Model<N, C>, const N: usize, const C: usize> StateEstimator<R, N, C> {
    /// A filter over `simulation` (the plant's model, no gait) driven by `inputs` (the
    /// commands' kinds in the loop's order), reading `sensors`, starting at `start` at time
    /// `t0` with a loop of `period` seconds.
    pub fn new(
        simulation: Simulation<R, N, C>,
        inputs: &[ControlInput],
        sensors: &[Sensor],
        settings: EstimatorSettings,
        start: &State<N>,
        t0: f64,
        period: f64,
    ) -> Result<Self, String> {
        let step = filter_step(&settings, period)?;
        if inputs.contains(&ControlInput::ActuatorForces) {
            return Err(
                "the estimator takes the commands a robot is sent (servo set points, muscle pressures, thrusts), not forces"
                    .into(),
            );
        }
        // The muscles' pressures follow any servo set points in the commands.
        let first_muscle = inputs
            .iter()
            .take_while(|i| **i != ControlInput::MusclePressures)
            .map(|i| i.count::<R, N, C>())
            .sum::<usize>();
        let muscles = if inputs.contains(&ControlInput::MusclePressures) { R::MUSCLES.len() } else { 0 };
        let params = simulation.params.clone();
        let lags = (0..muscles)
            .map(|m| R::muscle(m, &params).ok_or_else(|| format!("muscle `{}` has no values", R::MUSCLES[m].name)))
            .collect::<Result<Vec<Muscle>, String>>()?;
        let mut knots = RobotKnots::new(simulation, inputs, step, 1)?;
        knots.newton_iterations = NEWTON_ITERATIONS;
        knots.newton_tolerance = settings.newton_tolerance;
        knots.stale_contraction = settings.newton_contraction;
        let filter = Filter { params, sensors, settings, start, t0, step, first_muscle, muscles, lags };
        Self::assemble(Process::Knots(knots), [false; N], filter)
    }

    /// A filter over a valve-driven robot's `simulation` (the plant's model), whose process
    /// model prescribes the valves' coordinates by their responses to the commands (one
    /// state, +1 or -1, per valve pair, then the supply in bar; the supply is the spec's
    /// parameter `supply_parameter`, in `units_per_bar` per bar) and steps the rest by RK4
    /// at `plant_step` at most, as the simulated plant does. Sensors on the valves'
    /// coordinates are refused: the model knows them from the commands.
    #[allow(clippy::too_many_arguments)]
    pub fn for_valves(
        simulation: Simulation<R, N, C>,
        supply_parameter: &str,
        units_per_bar: f64,
        plant_step: f64,
        sensors: &[Sensor],
        settings: EstimatorSettings,
        start: &State<N>,
        t0: f64,
        period: f64,
    ) -> Result<Self, String> {
        let step = filter_step(&settings, period)?;
        let params = simulation.params.clone();
        let process = ValveProcess::new(simulation, supply_parameter, units_per_bar, step, plant_step, start, t0)?;
        let known = *process.driven();
        for s in sensors {
            if let Measurement::Coordinate { coordinate, .. } = s.measures {
                if coordinate < N && known[coordinate] {
                    return Err(format!(
                        "sensor `{}` reads `{}`, which its valve's response prescribes: the estimator knows it from the commands sent, so the reading would inform nothing",
                        s.name,
                        R::COORDINATES[coordinate].name
                    ));
                }
            }
        }
        let filter =
            Filter { params, sensors, settings, start, t0, step, first_muscle: 0, muscles: 0, lags: Vec::new() };
        Self::assemble(Process::Valves(process), known, filter)
    }

    /// The filter around `process`, `known` coordinates exact.
    fn assemble(process: Process<R, N, C>, known: [bool; N], filter: Filter<'_, R, N, C>) -> Result<Self, String> {
        let Filter { params, sensors, settings, start, t0, step, first_muscle, muscles, lags } = filter;
        let watch = SensorWatch::new(sensors, t0)?;
        if !sensors.iter().any(|s| !matches!(s.measures, Measurement::Pressure { .. })) {
            return Err("the estimator needs at least one marker or coordinate sensor".into());
        }
        for s in sensors {
            s.check_target(R::NAME, C + R::MARKERS.len(), N, muscles)?;
        }
        let mut noise_variance = [settings.acceleration_noise.powi(2); N];
        for (kind, noise) in &settings.acceleration_noise_by_kind {
            let mut any = false;
            for (j, coordinate) in R::COORDINATES.iter().enumerate() {
                if coordinate.kind == *kind && !known[j] {
                    noise_variance[j] = noise * noise;
                    any = true;
                }
            }
            if !any {
                return Err(format!(
                    "estimator acceleration_noise_by_kind.{}: `{}` has no {} coordinate to estimate",
                    kind.key(),
                    R::NAME,
                    kind.key()
                ));
            }
        }
        let commands = process.control_size();
        let motion = 2 * N;
        let augmented = motion + commands;
        let mut state = DVector::zeros(motion);
        state.rows_mut(0, N).copy_from(&start.q);
        state.rows_mut(N, N).copy_from(&start.qd);
        let mut covariance = DMatrix::zeros(motion, motion);
        for i in (0..N).filter(|i| !known[*i]) {
            covariance[(i, i)] = settings.initial_position_std.powi(2);
            covariance[(N + i, N + i)] = settings.initial_velocity_std.powi(2);
        }
        let capacity = (settings.history / step).ceil() as usize + 2;
        let mut history = VecDeque::with_capacity(capacity);
        history.push_back(Snapshot {
            time: t0,
            prior_state: state.clone(),
            prior_covariance: covariance.clone(),
            state,
            covariance,
            readings: Vec::with_capacity(READINGS_PER_STEP),
            input: vec![0.0; commands],
            transition: DMatrix::identity(motion, motion),
        });
        Ok(StateEstimator {
            process,
            known,
            noise_variance,
            params,
            watch,
            step,
            first_muscle,
            muscles,
            input: vec![0.0; commands],
            pressure_stamps: vec![f64::NEG_INFINITY; muscles],
            lags,
            reached: vec![0.0; muscles],
            applied: vec![0.0; commands],
            history,
            capacity,
            kept_transition: DMatrix::identity(motion, motion),
            since_linearised: 0,
            waiting: Vec::with_capacity(READINGS_PER_STEP),
            due: Vec::with_capacity(READINGS_PER_STEP),
            augmented: DVector::zeros(augmented),
            next: DVector::zeros(augmented),
            by_state: DMatrix::zeros(augmented, augmented),
            by_control: DMatrix::zeros(augmented, commands),
            transition_t: DMatrix::zeros(motion, motion),
            old_state: DVector::zeros(motion),
            change: DVector::zeros(motion),
            carried: DVector::zeros(motion),
            control: DVector::zeros(commands),
            product: DMatrix::zeros(motion, motion),
            gain: DMatrix::zeros(motion, 3),
            covariance_by_h: DMatrix::zeros(motion, 3),
            outlier_run: vec![0; sensors.len()],
            settings,
            stats: EstimatorStats::default(),
        })
    }

    /// The process model's step (s).
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The time of the newest estimate (s).
    pub fn time(&self) -> f64 {
        self.newest().time
    }

    fn newest(&self) -> &Snapshot {
        self.history.back().expect("the history always holds the current estimate")
    }

    /// The current estimate.
    pub fn estimate(&self) -> State<N> {
        let x = &self.newest().state;
        State::new(
            SVector::from_iterator(x.rows(0, N).iter().copied()),
            SVector::from_iterator(x.rows(N, N).iter().copied()),
        )
    }

    /// Standard deviation of coordinate `i`'s estimate (its unit).
    pub fn coordinate_std(&self, i: usize) -> f64 {
        self.newest().covariance[(i, i)].max(0.0).sqrt()
    }

    /// Per sensor: the readings it has passed.
    pub fn sensor_readings(&self) -> &[u64] {
        &self.watch.readings
    }

    /// The sensors read, in the run's order.
    pub fn sensors(&self) -> &[Sensor] {
        self.watch.sensors()
    }

    /// How many commands [`StateEstimator::set_commands`] takes: the process's inputs
    /// (servo set points, then muscle pressures and thrusts; or each valve pair's state,
    /// then the supply).
    pub fn command_count(&self) -> usize {
        self.input.len()
    }

    /// The commands sent now, in effect until the next call (muscle pressures reached
    /// through each muscle's lag, from its measured pressure where a sensor reads it).
    pub fn set_commands(&mut self, commands: &[f64]) {
        for (slot, value) in self.input.iter_mut().zip(commands) {
            *slot = *value;
        }
        self.apply_to_newest();
    }

    /// The newest snapshot's step applies the commands and the lags' pressures as they are.
    fn apply_to_newest(&mut self) {
        self.update_applied();
        let applied = std::mem::take(&mut self.applied);
        self.history.back_mut().expect("never empty").input.copy_from_slice(&applied);
        self.applied = applied;
    }

    /// `applied` from `input`: a commanded pressure as its lag gives it at the middle of the
    /// step from the newest snapshot (the plant's own rule for a period).
    fn update_applied(&mut self) {
        self.applied.copy_from_slice(&self.input);
        for muscle in 0..self.muscles {
            let k = self.first_muscle + muscle;
            self.applied[k] = self.lags[muscle].pressure_after(self.input[k], self.reached[muscle], 0.5 * self.step);
        }
    }

    /// Takes the readings that arrived by `now` (any order), checks every sensor, keeps
    /// those stamped after `now` for a later call, files
    /// each under the step of its time stamp, and filters again from the earliest step that
    /// got one: each step's prediction moved by the change of the step before through the
    /// step's Jacobian, its covariance propagated again, then all of its readings applied
    /// in time order.
    pub fn take(&mut self, readings: &[Reading], now: f64) -> Result<(), EstimatorFault> {
        let first_time = self.history[0].time;
        let last = self.history.len() - 1;
        let step = self.step;
        // The step a stamp falls in; the reading is applied at its own time within it.
        let index_of =
            |stamp: f64| (((stamp - first_time) / step + 1e-9).floor().max(-1.0) as isize).min(last as isize);
        // Readings stamped after `now` (the loop running late behind its sensors' clock)
        // wait until it has passed them; they were checked as they arrived.
        self.due.clear();
        let due = &mut self.due;
        self.waiting.retain(|r| {
            let waits = r.stamp > now + 1e-9;
            if !waits {
                due.push(*r);
            }
            waits
        });
        for reading in readings {
            self.watch.check(reading, now).map_err(EstimatorFault::Sensor)?;
            if reading.stamp > now + 1e-9 {
                self.waiting.push(*reading);
            } else {
                self.due.push(*reading);
            }
        }
        let mut from = usize::MAX;
        let mut pressure_read = false;
        let newest_time = self.newest().time;
        for reading in &self.due {
            let sensor = &self.watch.sensors()[reading.sensor as usize];
            if let Measurement::Pressure { muscle } = sensor.measures {
                self.stats.pressures += 1;
                // The muscle's pressure at the newest step: the measured one, carried to
                // the step's time through the lag under the newest command. Held as the
                // process model's input instead, a reading is one to two periods old by the
                // step it drives, and the model's bend lags the robot's: on the soft snake's
                // rolling gait (pressures at 100 Hz in a 100 Hz loop) the estimate matched
                // the plant's state 30 ms earlier best, 7 mm RMS at the tail against 2.2 mm
                // with the commands alone through the lag.
                if reading.stamp > self.pressure_stamps[muscle] {
                    self.pressure_stamps[muscle] = reading.stamp;
                    let command = self.input[self.first_muscle + muscle];
                    let since = (newest_time - reading.stamp).max(0.0);
                    self.reached[muscle] = self.lags[muscle].pressure_after(command, reading.values[0], since);
                    pressure_read = true;
                }
                continue;
            }
            let index = index_of(reading.stamp);
            if index < 0 {
                self.stats.late += 1;
                continue;
            }
            let index = index as usize;
            self.history[index].readings.push(*reading);
            from = from.min(index);
        }
        self.watch.check_silence(now).map_err(EstimatorFault::Sensor)?;
        if pressure_read {
            self.apply_to_newest();
        }
        if from == usize::MAX {
            return Ok(());
        }
        self.change.fill(0.0);
        for i in from..=last {
            if i > from {
                // The prediction moves with the step before, through the step's Jacobian,
                // and its covariance is propagated again from the new one.
                self.carried.gemv(1.0, &self.history[i - 1].transition, &self.change, 0.0);
                self.history[i].prior_state += &self.carried;
                self.propagate_covariance(i - 1);
            }
            self.old_state.copy_from(&self.history[i].state);
            let snapshot = &mut self.history[i];
            snapshot.state.copy_from(&snapshot.prior_state);
            snapshot.covariance.copy_from(&snapshot.prior_covariance);
            snapshot.readings.sort_unstable_by(|a, b| a.stamp.total_cmp(&b.stamp));
            for r in 0..self.history[i].readings.len() {
                let reading = self.history[i].readings[r];
                // Only new readings count in the statistics and the outlier streaks.
                let first = self.due.iter().any(|n| n == &reading);
                self.update(i, &reading, first)?;
            }
            self.change.copy_from(&self.history[i].state);
            self.change -= &self.old_state;
        }
        let newest = self.newest();
        if newest.state.iter().chain(newest.covariance.iter()).any(|v| !v.is_finite()) {
            return Err(EstimatorFault::Diverged(format!("the estimate is not finite at t = {:.4} s", newest.time)));
        }
        Ok(())
    }

    /// Predicts from the current step to `now` (on the steps' grid), with the commands set.
    pub fn advance_to(&mut self, now: f64) -> Result<(), EstimatorFault> {
        while self.time() + 0.5 * self.step < now {
            self.predict()?;
        }
        Ok(())
    }

    /// Snapshot `i + 1`'s predicted covariance from snapshot `i`'s through its step's Jacobian, plus
    /// white acceleration noise over the step ([h^3/3, h^2/2; h^2/2, h] times the
    /// coordinate's variance).
    fn propagate_covariance(&mut self, i: usize) {
        self.product.gemm(1.0, &self.history[i].transition, &self.history[i].covariance, 0.0);
        self.history[i].transition.transpose_to(&mut self.transition_t);
        let h = self.step;
        let covariance = &mut self.history[i + 1].prior_covariance;
        covariance.gemm(1.0, &self.product, &self.transition_t, 0.0);
        for j in (0..N).filter(|j| !self.known[*j]) {
            let noise = self.noise_variance[j];
            covariance[(j, j)] += noise * h * h * h / 3.0;
            covariance[(j, N + j)] += noise * h * h / 2.0;
            covariance[(N + j, j)] += noise * h * h / 2.0;
            covariance[(N + j, N + j)] += noise * h;
        }
    }

    /// Predicts a new newest snapshot from the newest one, under the commands in effect.
    fn predict(&mut self) -> Result<(), EstimatorFault> {
        let motion = 2 * N;
        let i = self.history.len() - 1;
        let diverged = |e: String| EstimatorFault::Diverged(format!("the process model's step failed: {e}"));
        // The step's Jacobian is most of a prediction's cost (on the soft snake rolling on
        // its carpet, 70 % of one): with `jacobian_every` above 1 the covariance is carried
        // through the one evaluated last, while the state itself is always the implicit
        // step's solution.
        let linearise = self.since_linearised == 0;
        let snapshot = &self.history[i];
        match &mut self.process {
            Process::Knots(knots) => {
                self.augmented.rows_mut(0, motion).copy_from(&snapshot.state);
                self.augmented.rows_mut(motion, snapshot.input.len()).copy_from_slice(&snapshot.input);
                self.control.copy_from_slice(&snapshot.input);
                let derivatives = if linearise { Some((&mut self.by_state, &mut self.by_control)) } else { None };
                if let Err(implicit) = knots.step(0, &self.augmented, &self.control, &mut self.next, derivatives) {
                    // A state a correction has just moved (a limb tip pressed into the
                    // carpet) can leave the implicit step with no Newton step that lowers its
                    // residual at any of its halvings; the explicit pieces still step it.
                    // Seen once in CI on a limbed robot through the board and NatNet, 14.4 s in.
                    if knots.integrator != KnotIntegrator::ImplicitEuler {
                        return Err(diverged(implicit));
                    }
                    let derivatives = if linearise { Some((&mut self.by_state, &mut self.by_control)) } else { None };
                    let substeps = ((self.step / FALLBACK_STEP).ceil() as usize).clamp(1, MAX_SUBSTEPS);
                    knots
                        .step_semi_implicit(0, &self.augmented, &self.control, &mut self.next, derivatives, substeps)
                        .map_err(|explicit| {
                            diverged(format!("{implicit}; semi-implicit Euler in {substeps} steps: {explicit}"))
                        })?;
                    self.stats.explicit_fallbacks += 1;
                }
                if linearise {
                    self.kept_transition.copy_from(&self.by_state.view((0, 0), (motion, motion)));
                }
            }
            Process::Valves(valves) => {
                let transition = if linearise { Some(&mut self.kept_transition) } else { None };
                valves
                    .step(snapshot.time, self.step, &snapshot.state, &snapshot.input, &mut self.next, transition)
                    .map_err(diverged)?;
            }
        }
        if linearise {
            self.stats.linearisations += 1;
        }
        self.since_linearised = (self.since_linearised + 1) % self.settings.jacobian_every;
        let time = self.history[i].time + self.step;
        self.history[i].transition.copy_from(&self.kept_transition);
        // Reuse the oldest snapshot's storage once the history is full.
        let mut snapshot = if self.history.len() >= self.capacity {
            self.history.pop_front().expect("full")
        } else {
            self.history[i].clone()
        };
        snapshot.time = time;
        snapshot.prior_state.copy_from(&self.next.rows(0, motion));
        // The commanded pressures reached over the step, then what the next step applies.
        for muscle in 0..self.muscles {
            let command = self.input[self.first_muscle + muscle];
            self.reached[muscle] = self.lags[muscle].pressure_after(command, self.reached[muscle], self.step);
        }
        self.update_applied();
        snapshot.input.copy_from_slice(&self.applied);
        snapshot.transition.fill_with_identity();
        snapshot.readings.clear();
        self.history.push_back(snapshot);
        let newest = self.history.len() - 1;
        self.propagate_covariance(newest - 1);
        let snapshot = &mut self.history[newest];
        snapshot.state.copy_from(&snapshot.prior_state);
        snapshot.covariance.copy_from(&snapshot.prior_covariance);
        if snapshot.state.iter().chain(snapshot.covariance.iter()).any(|v| !v.is_finite()) {
            return Err(EstimatorFault::Diverged(format!("the estimate is not finite at t = {time:.4} s")));
        }
        self.stats.predictions += 1;
        self.stats.system_jacobians = self.process.jacobians();
        Ok(())
    }

    /// Corrects snapshot `i` with one reading taken `tau` seconds after it (the state at
    /// the reading's time is q + tau qd to first order, so H has tau J on the rates);
    /// `first` when the reading is new (then it counts in the statistics).
    fn update(&mut self, i: usize, reading: &Reading, first: bool) -> Result<(), EstimatorFault> {
        let k = reading.sensor as usize;
        let sensor = &self.watch.sensors()[k];
        let motion = 2 * N;
        let snapshot = &mut self.history[i];
        let tau = (reading.stamp - snapshot.time).max(0.0);
        let q = SVector::<f64, N>::from_iterator((0..N).map(|j| snapshot.state[j] + tau * snapshot.state[N + j]));
        // The reading's prediction and its rows of H on q (tau times them on qd), padded to
        // three rows so one and three values take the same path (padding: unit variance,
        // zero innovation, zero gain).
        let mut innovation = Vector3::zeros();
        let mut rows = SMatrix::<f64, 3, N>::zeros();
        let values = sensor.measures.values();
        match sensor.measures {
            Measurement::Marker { point } => {
                let cache = R::cache(&q, &self.params);
                let position = R::tracked_point_position(point, &q, &self.params, &cache);
                R::tracked_point_jacobian_into(point, &q, &self.params, &cache, &mut rows);
                for a in 0..3 {
                    innovation[a] = reading.values[a] - position[a];
                }
            }
            Measurement::Coordinate { coordinate, scale, offset } => {
                rows[(0, coordinate)] = scale;
                let mut residual = reading.values[0] - (scale * q[coordinate] + offset);
                if matches!(
                    R::COORDINATES[coordinate].kind,
                    CoordinateKind::BaseRotation | CoordinateKind::RevoluteJoint
                ) {
                    // An angle's residual is its shortest turn, in the sensor's unit.
                    let turn = std::f64::consts::TAU * scale.abs();
                    residual -= turn * (residual / turn).round();
                }
                innovation[0] = residual;
            }
            Measurement::Pressure { .. } => return Ok(()),
        }
        // P H^T, H = [rows, tau rows].
        self.covariance_by_h.fill(0.0);
        for r in 0..values {
            for j in 0..N {
                let h = rows[(r, j)];
                if h != 0.0 {
                    for a in 0..motion {
                        self.covariance_by_h[(a, r)] +=
                            (snapshot.covariance[(a, j)] + tau * snapshot.covariance[(a, N + j)]) * h;
                    }
                }
            }
        }
        let variance = sensor.noise * sensor.noise;
        let mut innovation_covariance = Matrix3::identity();
        for r in 0..values {
            for c in 0..values {
                let mut sum = if r == c { variance } else { 0.0 };
                for j in 0..N {
                    sum += rows[(r, j)] * (self.covariance_by_h[(j, c)] + tau * self.covariance_by_h[(N + j, c)]);
                }
                innovation_covariance[(r, c)] = sum;
            }
        }
        let Some(inverse) = innovation_covariance.try_inverse() else {
            return Err(EstimatorFault::Diverged(format!(
                "sensor `{}`'s innovation covariance is singular at t = {:.4} s",
                sensor.name, reading.stamp
            )));
        };
        let distance2 = (innovation.transpose() * inverse * innovation)[0];
        if !(distance2.is_finite() && distance2 <= self.settings.gate * self.settings.gate) {
            if !first {
                return Ok(());
            }
            self.stats.outliers += 1;
            self.outlier_run[k] += 1;
            if self.outlier_run[k] >= self.settings.outlier_streak {
                return Err(EstimatorFault::Diverged(format!(
                    "{} readings in a row from sensor `{}` lie past the gate ({} standard deviations; the last {:.1} at t = {:.4} s)",
                    self.outlier_run[k],
                    sensor.name,
                    self.settings.gate,
                    distance2.max(0.0).sqrt(),
                    reading.stamp
                )));
            }
            return Ok(());
        }
        if first {
            self.outlier_run[k] = 0;
            self.stats.updates += 1;
        }
        // K = P H^T S^-1; x += K y; P -= K S K^T (= P H^T K^T, symmetric).
        for a in 0..motion {
            for c in 0..3 {
                let mut sum = 0.0;
                for r in 0..values {
                    sum += self.covariance_by_h[(a, r)] * inverse[(r, c)];
                }
                self.gain[(a, c)] = sum;
            }
        }
        for a in 0..motion {
            let mut change = 0.0;
            for r in 0..values {
                change += self.gain[(a, r)] * innovation[r];
            }
            snapshot.state[a] += change;
        }
        for a in 0..motion {
            for b in 0..=a {
                let mut sum = 0.0;
                for r in 0..values {
                    sum += self.covariance_by_h[(a, r)] * self.gain[(b, r)];
                }
                snapshot.covariance[(a, b)] -= sum;
                if a != b {
                    snapshot.covariance[(b, a)] = snapshot.covariance[(a, b)];
                }
            }
        }
        Ok(())
    }
}
