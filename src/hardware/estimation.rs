//! The state estimator in the loop (`softgen run --state estimated`): each period it takes
//! the readings that arrived, corrects and predicts the state to the period's time, hands
//! the estimate to the planner, and scores it against the plant's truth where a truth
//! exists. A sensor or estimator fault holds the last safe command for the configured time,
//! then ends the run in the safe state with the fault's message.

use crate::hardware::config::RunConfig;
use softgen_runtime::{
    ActuatorCommand, CoordinateKind, EstimatorFault, EstimatorStats, Mailbox, Model, Reading, ReadingQueue,
    SafetyFilter, SafetyLimits, Sensor, State, StateEstimator,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sensors a run configuration lists, resolved against robot `R`'s names.
pub(crate) fn configured_sensors<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    path: &str,
) -> Result<Vec<Sensor>, String> {
    if config.sensors.is_empty() {
        return Err(format!(
            "{path} lists no [[sensors]]: --state estimated reads them (markers, coordinates, pressures)"
        ));
    }
    let points: Vec<&str> = R::CONTACT_POINTS.iter().map(|p| p.name).collect();
    let coordinates: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
    let muscles: Vec<&str> = R::MUSCLES.iter().map(|m| m.name).collect();
    config.sensors.iter().map(|s| s.resolve(&points, &coordinates, &muscles)).collect()
}

/// What the estimator did over a run, and how far it was from the plant's truth.
#[derive(Clone, Debug, PartialEq)]
pub struct EstimatorReport {
    pub stats: EstimatorStats,
    /// Readings taken per sensor, by name.
    pub readings: Vec<(String, u64)>,
    /// RMS error against the truth per kind of coordinate present (kind, RMS in the
    /// coordinate's unit; base translation as the 3D distance), over `scored` periods.
    pub rms: Vec<(CoordinateKind, f64)>,
    pub scored: u64,
    /// RMS error of each coordinate against the truth (its unit), by name.
    pub coordinate_rms: Vec<(&'static str, f64)>,
    /// Time the estimator took per period: mean and longest.
    pub mean_time: Duration,
    pub longest_time: Duration,
    /// The fault that ended the run, if one did.
    pub fault: Option<String>,
}

impl EstimatorReport {
    /// `estimator: position RMS 0.8 mm, orientation RMS 0.3 deg, ...`.
    pub fn line(&self) -> String {
        let mut parts: Vec<String> = self
            .rms
            .iter()
            .map(|(kind, rms)| match kind {
                CoordinateKind::BaseTranslation => format!("position RMS {:.2} mm", rms * 1e3),
                CoordinateKind::BaseRotation => format!("orientation RMS {:.2} deg", rms.to_degrees()),
                CoordinateKind::RevoluteJoint => format!("joint angles RMS {:.2} deg", rms.to_degrees()),
                CoordinateKind::PrismaticJoint => format!("joint travel RMS {:.2} mm", rms * 1e3),
                CoordinateKind::ActuatorLength => format!("actuator lengths RMS {:.3} mm", rms * 1e3),
                CoordinateKind::Curvature => format!("curvatures RMS {:.4} 1/m", rms),
            })
            .collect();
        if self.scored == 0 {
            parts.push("no truth to score against".into());
        }
        let readings: u64 = self.readings.iter().map(|r| r.1).sum();
        format!(
            "estimator: {}; {readings} readings ({} corrections, {} outliers, {} too late, {} pressures), {} predictions, {:.0} us a period (longest {:.0} us)",
            parts.join(", "),
            self.stats.updates,
            self.stats.outliers,
            self.stats.late,
            self.stats.pressures,
            self.stats.predictions,
            self.mean_time.as_secs_f64() * 1e6,
            self.longest_time.as_secs_f64() * 1e6
        )
    }
}

/// The estimator's half of the loop.
pub(crate) struct InLoopEstimator<R: Model<N, C>, const N: usize, const C: usize> {
    estimator: StateEstimator<R, N, C>,
    queue: Arc<ReadingQueue>,
    /// The plant's true state at each period's end, where one exists.
    truth: Arc<Mailbox<(f64, State<N>)>>,
    readings: Vec<Reading>,
    fault_hold: f64,
    fault: Option<(f64, String)>,
    held: Vec<f64>,
    filter: SafetyFilter,
    passed: Vec<f64>,
    last_estimate: Option<(f64, State<N>)>,
    squared_errors: [f64; 6],
    per_coordinate: [f64; N],
    scored: u64,
    time_total: Duration,
    time_longest: Duration,
    periods: u64,
}

const KINDS: [CoordinateKind; 6] = [
    CoordinateKind::BaseTranslation,
    CoordinateKind::BaseRotation,
    CoordinateKind::RevoluteJoint,
    CoordinateKind::PrismaticJoint,
    CoordinateKind::ActuatorLength,
    CoordinateKind::Curvature,
];

impl<R: Model<N, C>, const N: usize, const C: usize> InLoopEstimator<R, N, C> {
    pub(crate) fn new(
        estimator: StateEstimator<R, N, C>,
        queue: Arc<ReadingQueue>,
        truth: Arc<Mailbox<(f64, State<N>)>>,
        fault_hold: f64,
        commands: usize,
        limits: SafetyLimits,
    ) -> Result<Self, String> {
        Ok(InLoopEstimator {
            estimator,
            queue,
            truth,
            readings: Vec::with_capacity(softgen_runtime::QUEUE_CAPACITY),
            fault_hold,
            fault: None,
            held: vec![0.0; commands],
            filter: SafetyFilter::new(limits, commands)?,
            passed: vec![0.0; commands],
            last_estimate: None,
            squared_errors: [0.0; 6],
            per_coordinate: [0.0; N],
            scored: 0,
            time_total: Duration::ZERO,
            time_longest: Duration::ZERO,
            periods: 0,
        })
    }

    /// The period at `t`: the estimate at `t`, or `Ok(None)` while a fault holds the last
    /// commands (then `held` has them), or the fault once its hold is over.
    pub(crate) fn estimate(&mut self, t: f64) -> Result<Option<State<N>>, String> {
        if let Some((at, message)) = &self.fault {
            if t - at >= self.fault_hold {
                return Err(format!(
                    "{message} (at t = {at:.3} s; the last command was held for {} s)",
                    self.fault_hold
                ));
            }
            return Ok(None);
        }
        let started = Instant::now();
        self.readings.clear();
        self.queue.try_drain_into(&mut self.readings);
        let outcome = self.estimator.take(&self.readings, t).and_then(|()| self.estimator.advance_to(t));
        let elapsed = started.elapsed();
        self.time_total += elapsed;
        self.time_longest = self.time_longest.max(elapsed);
        self.periods += 1;
        if let Err(fault) = outcome {
            let message = match fault {
                EstimatorFault::Sensor(f) => f.to_string(),
                diverged => diverged.to_string(),
            };
            println!(
                "estimator   FAULT at t = {t:.3} s: {message}; holding the last command for {} s",
                self.fault_hold
            );
            self.fault = Some((t, message));
            return Ok(None);
        }
        self.score();
        let estimate = self.estimator.estimate();
        self.last_estimate = Some((t, estimate));
        Ok(Some(estimate))
    }

    /// The commands of this period, `dt` after the last: the estimator takes them, and a
    /// fault holds them, as the output chain's safety filter will pass them (a copy of
    /// the filter, fed the same commands, clamps and rate-limits them the same way).
    pub(crate) fn sent(&mut self, commands: &[ActuatorCommand], dt: f64) -> Result<(), String> {
        for (k, command) in commands.iter().enumerate() {
            self.passed[k] = match self.filter.apply(k, *command, dt).map_err(|e| e.to_string())? {
                ActuatorCommand::Pressure(v) | ActuatorCommand::Thrust(v) => v,
                other => return Err(format!("the estimator takes pressures and thrusts, got {other:?}")),
            };
        }
        // What went out is what a fault holds.
        self.held.copy_from_slice(&self.passed);
        self.estimator.set_commands(&self.passed);
        Ok(())
    }

    pub(crate) fn held(&self) -> &[f64] {
        &self.held
    }

    /// Compares the estimate of the last period with the plant's state at that time.
    fn score(&mut self) {
        let (Some((time, estimate)), Some((_, (truth_time, truth)))) = (self.last_estimate, self.truth.try_latest())
        else {
            return;
        };
        if (time - truth_time).abs() > 1e-9 {
            return;
        }
        for (i, coordinate) in R::COORDINATES.iter().enumerate() {
            let k = KINDS.iter().position(|k| *k == coordinate.kind).unwrap_or(0);
            let mut error = estimate.q[i] - truth.q[i];
            if matches!(coordinate.kind, CoordinateKind::BaseRotation | CoordinateKind::RevoluteJoint) {
                error -= std::f64::consts::TAU * (error / std::f64::consts::TAU).round();
            }
            self.squared_errors[k] += error * error;
            self.per_coordinate[i] += error * error;
        }
        self.scored += 1;
    }

    pub(crate) fn report(&self) -> EstimatorReport {
        let mut rms = Vec::new();
        for (k, kind) in KINDS.iter().enumerate() {
            let count = R::COORDINATES.iter().filter(|c| c.kind == *kind).count();
            if count == 0 || self.scored == 0 {
                continue;
            }
            // Base translation: the RMS distance; other kinds: per coordinate.
            let per = if *kind == CoordinateKind::BaseTranslation { 1 } else { count };
            rms.push((*kind, (self.squared_errors[k] / (self.scored * per as u64) as f64).sqrt()));
        }
        EstimatorReport {
            stats: self.estimator.stats.clone(),
            readings: self
                .estimator
                .sensors()
                .iter()
                .zip(self.estimator.sensor_readings())
                .map(|(s, n)| (s.name.clone(), *n))
                .collect(),
            rms,
            scored: self.scored,
            coordinate_rms: R::COORDINATES
                .iter()
                .zip(&self.per_coordinate)
                .map(|(c, e)| (c.name, (e / self.scored.max(1) as f64).sqrt()))
                .collect(),
            mean_time: Duration::from_secs_f64(self.time_total.as_secs_f64() / self.periods.max(1) as f64),
            longest_time: self.time_longest,
            fault: self.fault.as_ref().map(|f| f.1.clone()),
        }
    }
}
