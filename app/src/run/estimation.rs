//! The state estimator in the loop (`softgen run --state estimated`): each period it takes
//! the readings that arrived, corrects and predicts the state to the period's time, hands
//! the estimate to the planner, and scores it against the plant's truth where a truth
//! exists. A sensor or estimator fault holds the last safe command for the configured time,
//! then ends the run in the safe state with the fault's message.

use crate::run::config::{RunConfig, SensorEntry, SensorSource};
use softgen_runtime::{
    ActuatorCommand, CoordinateKind, EstimatorFault, EstimatorStats, Mailbox, Model, Reading, ReadingQueue,
    SafetyFilter, SafetyLimits, Sensor, State, StateEstimator,
};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sensors a run configuration lists, resolved against robot `R`'s names, with their
/// sources; `on_robot`: only those with a source on the robot (NatNet or the board).
pub(crate) fn configured_sensors<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    path: &str,
    on_robot: bool,
) -> Result<(Vec<Sensor>, Vec<SensorEntry>), String> {
    if config.sensors.is_empty() {
        return Err(format!(
            "{path} lists no [[sensors]]: --state estimated reads them (markers, coordinates, pressures)"
        ));
    }
    let points = softgen_runtime::tracked_point_names::<R, N, C>();
    let coordinates: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
    let muscles: Vec<&str> = R::MUSCLES.iter().map(|m| m.name).collect();
    let read = config.sensors.iter().filter(|s| !on_robot || s.source != SensorSource::Plant);
    let sensors = read.clone().map(|s| s.resolve(&points, &coordinates, &muscles)).collect::<Result<Vec<_>, _>>()?;
    if sensors.is_empty() {
        return Err(format!(
            "{path}: no sensor has a source on the robot (source = \"natnet\" with a rigid_body or marker, \"board\" or \"comedi\" with a channel), so the robot's state cannot be estimated"
        ));
    }
    Ok((sensors, read.cloned().collect()))
}

/// What the estimator did over a run, and how far it was from the plant's truth.
#[derive(Clone, Debug, PartialEq)]
pub struct EstimatorReport {
    /// What the filter did.
    pub stats: EstimatorStats,
    /// Readings taken per sensor, by name.
    pub readings: Vec<(String, u64)>,
    /// RMS error against the truth per kind of coordinate present (kind, RMS in the
    /// coordinate's unit; base translation as the 3D distance), over `scored` periods from
    /// `scored_from`.
    pub rms: Vec<(CoordinateKind, f64)>,
    /// See `rms`.
    pub scored: u64,
    /// When the scoring starts (s, the loop's clock): the controller's task start (a
    /// scheduled plan's settling time, the drop of a body landing), 0 otherwise. Why: the
    /// figures are the task's, as the targets are stated; a body falling onto its contact is
    /// the filter's hardest moment and not part of the task.
    pub scored_from: f64,
    /// With a later `scored_from`: the same figures over the whole run (kinds' RMS, marked
    /// points' RMS, periods).
    pub whole_run: Option<(Vec<(CoordinateKind, f64)>, Vec<(String, f64)>, u64)>,
    /// RMS error of each coordinate against the truth (its unit), by name.
    pub coordinate_rms: Vec<(&'static str, f64)>,
    /// RMS distance (m) between the estimated and the true world position of each point a
    /// marker sensor tracks (rigid bodies' points and soft sections' tips), by sensor name.
    pub marker_rms: Vec<(String, f64)>,
    /// Time the estimator took per period: mean and longest.
    pub mean_time: Duration,
    /// See `mean_time`.
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
                // A valve robot's curvatures are prescribed, the plant's to rounding.
                CoordinateKind::Curvature if *rms < 1e-4 => format!("curvatures RMS {rms:.1e} 1/m"),
                CoordinateKind::Curvature => format!("curvatures RMS {:.4} 1/m", rms),
            })
            .collect();
        if !self.marker_rms.is_empty() {
            let largest = self.marker_rms.iter().map(|m| m.1).fold(0.0, f64::max);
            let mean_square = self.marker_rms.iter().map(|m| m.1 * m.1).sum::<f64>() / self.marker_rms.len() as f64;
            parts.push(format!(
                "marked points RMS {:.2} mm (largest {:.2} mm)",
                mean_square.sqrt() * 1e3,
                largest * 1e3
            ));
        }
        if self.scored == 0 && self.whole_run.is_some() {
            parts.push(format!("nothing scored from t = {:.2} s, the task's start", self.scored_from));
        } else if self.scored == 0 {
            parts.push("no truth to score against".into());
        } else if self.scored_from > 0.0 {
            let last = parts.pop().unwrap_or_default();
            let mut whole = Vec::new();
            if let Some((rms, markers, _)) = &self.whole_run {
                if let Some((_, position)) = rms.iter().find(|(k, _)| *k == CoordinateKind::BaseTranslation) {
                    whole.push(format!("position RMS {:.2} mm", position * 1e3));
                }
                if let Some(largest) = markers.iter().map(|m| m.1).reduce(f64::max) {
                    whole.push(format!("marked points largest {:.2} mm", largest * 1e3));
                }
            }
            let whole = match whole.is_empty() {
                true => String::new(),
                false => format!("; the whole run: {}", whole.join(", ")),
            };
            parts.push(format!("{last} (from t = {:.2} s, the task's start{whole})", self.scored_from));
        }
        let readings: u64 = self.readings.iter().map(|r| r.1).sum();
        let fallbacks = match self.stats.explicit_fallbacks {
            0 => String::new(),
            n => format!(", {n} by semi-implicit Euler where the implicit step failed"),
        };
        format!(
            "estimator: {}; {readings} readings ({} corrections, {} outliers, {} too late, {} pressures), {} predictions ({} system Jacobians{fallbacks}), {:.0} us a period (longest {:.0} us)",
            parts.join(", "),
            self.stats.updates,
            self.stats.outliers,
            self.stats.late,
            self.stats.pressures,
            self.stats.predictions,
            self.stats.system_jacobians,
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
    /// The sensor log: each period's readings, estimate and the commands passed.
    log: Option<std::io::BufWriter<std::fs::File>>,
    /// The current period's time (the loop's clock).
    period_time: f64,
    /// The model's values, to score the marked points' positions against the truth (set
    /// where a truth exists), and each marker sensor's tracked point and summed squared
    /// distance.
    params: Option<R::Params>,
    marker_errors: Vec<(usize, usize, f64)>,
    /// Scoring window: from when, and the sums as they stood when it opened (marker sums
    /// sized with `marker_errors`, so opening it does not allocate in the loop).
    score_from: f64,
    window: Option<u64>,
    squared_at_window: [f64; 6],
    per_coordinate_at_window: [f64; N],
    markers_at_window: Vec<f64>,
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
        // The loop's count and the filter's come from two places (the loop's actuators, the
        // process model's inputs); a replay of the log trusts the filter's, so they must agree.
        if commands != estimator.command_count() {
            return Err(format!(
                "robot `{}`: the loop sends {commands} commands a period, its estimator takes {}",
                R::NAME,
                estimator.command_count()
            ));
        }
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
            log: None,
            period_time: 0.0,
            params: None,
            marker_errors: Vec::new(),
            score_from: 0.0,
            window: None,
            squared_at_window: [0.0; 6],
            per_coordinate_at_window: [0.0; N],
            markers_at_window: Vec::new(),
        })
    }

    /// Scores the points the marker sensors track as well as the coordinates, on the
    /// model's values `params` (a run with a truth: the simulated plant).
    pub(crate) fn score_markers(&mut self, params: R::Params) {
        self.marker_errors = (self.estimator.sensors().iter().enumerate())
            .filter_map(|(k, s)| match s.measures {
                softgen_runtime::Measurement::Marker { point } => Some((k, point, 0.0)),
                _ => None,
            })
            .collect();
        self.markers_at_window = vec![0.0; self.marker_errors.len()];
        self.params = Some(params);
    }

    /// Reports the errors from `t` (s) on, where the controller's task starts, and those
    /// of the whole run beside them.
    pub(crate) fn score_from(&mut self, t: f64) {
        self.score_from = t.max(0.0);
    }

    /// Starts command `actuator`'s rate limit from `value`, as the output chain's (see
    /// `SafetyFilter::start_from`): the estimator's inputs are what the chain passes.
    pub(crate) fn start_command_from(&mut self, actuator: usize, value: f64) {
        self.filter.start_from(actuator, value);
    }

    /// Writes the sensor log (`t,kind,name,stamp,values...`, see [`SensorLog`]) to `file`.
    pub(crate) fn log_to(&mut self, file: std::fs::File) -> Result<(), String> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "t,kind,name,stamp,values").map_err(|e| e.to_string())?;
        self.log = Some(out);
        Ok(())
    }

    /// Flushes the sensor log.
    pub(crate) fn finish_log(&mut self) -> Result<(), String> {
        match &mut self.log {
            Some(out) => out.flush().map_err(|e| format!("sensor log: {e}")),
            None => Ok(()),
        }
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
        self.period_time = t;
        self.readings.clear();
        self.queue.try_drain_into(&mut self.readings);
        if let Some(out) = &mut self.log {
            for r in &self.readings {
                // Shortest round-trip formatting: a replay reproduces the estimates bit for bit.
                let name = &self.estimator.sensors()[r.sensor as usize].name;
                let _ = write!(out, "{t},reading,{name},{}", r.stamp);
                let count = self.estimator.sensors()[r.sensor as usize].measures.values();
                for v in &r.values[..count] {
                    let _ = write!(out, ",{v}");
                }
                let _ = writeln!(out);
            }
        }
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
        if let Some(out) = &mut self.log {
            let _ = write!(out, "{t},estimate,,");
            for v in estimate.q.iter().chain(estimate.qd.iter()) {
                let _ = write!(out, ",{v}");
            }
            let _ = writeln!(out);
        }
        self.last_estimate = Some((t, estimate));
        Ok(Some(estimate))
    }

    /// The commands of this period, `dt` after the last: the estimator takes them, and a
    /// fault holds them, as the output chain's safety filter will pass them (a copy of
    /// the filter, fed the same commands, clamps and rate-limits them the same way).
    pub(crate) fn sent(&mut self, commands: &[ActuatorCommand], dt: f64) -> Result<(), String> {
        for (k, command) in commands.iter().enumerate() {
            self.passed[k] = match self.filter.apply(k, *command, dt).map_err(|e| e.to_string())? {
                ActuatorCommand::Pressure(v) | ActuatorCommand::Thrust(v) | ActuatorCommand::JointAngle(v) => v,
                // A valve pair's state, as its response takes it.
                ActuatorCommand::Valve(open) => match open {
                    true => 1.0,
                    false => -1.0,
                },
                other => {
                    return Err(format!(
                        "the estimator takes joint set points, pressures, thrusts and valve states, got {other:?}"
                    ))
                }
            };
        }
        // What went out is what a fault holds.
        self.held.copy_from_slice(&self.passed);
        self.estimator.set_commands(&self.passed);
        if let Some(out) = &mut self.log {
            let t = self.period_time;
            let _ = write!(out, "{t},sent,,");
            for v in &self.passed {
                let _ = write!(out, ",{v}");
            }
            let _ = writeln!(out);
        }
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
        if self.window.is_none() && time >= self.score_from - 1e-9 {
            self.window = Some(self.scored);
            self.squared_at_window = self.squared_errors;
            self.per_coordinate_at_window = self.per_coordinate;
            for (at, (_, _, sum)) in self.markers_at_window.iter_mut().zip(&self.marker_errors) {
                *at = *sum;
            }
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
        if let (Some(params), false) = (&self.params, self.marker_errors.is_empty()) {
            let (estimated_cache, true_cache) = (R::cache(&estimate.q, params), R::cache(&truth.q, params));
            for (_, point, sum) in &mut self.marker_errors {
                let estimated = R::tracked_point_position(*point, &estimate.q, params, &estimated_cache);
                let actual = R::tracked_point_position(*point, &truth.q, params, &true_cache);
                *sum += (estimated - actual).norm_squared();
            }
        }
        self.scored += 1;
    }

    /// RMS figures from running sums: each kind's, each coordinate's, each marker's.
    #[allow(clippy::type_complexity)]
    fn figures(
        &self,
        squared: &[f64; 6],
        per_coordinate: &[f64; N],
        markers: &[f64],
        scored: u64,
    ) -> (Vec<(CoordinateKind, f64)>, Vec<(&'static str, f64)>, Vec<(String, f64)>) {
        let mut rms = Vec::new();
        for (k, kind) in KINDS.iter().enumerate() {
            let count = R::COORDINATES.iter().filter(|c| c.kind == *kind).count();
            if count == 0 || scored == 0 {
                continue;
            }
            // Base translation: the RMS distance; other kinds: per coordinate.
            let per = if *kind == CoordinateKind::BaseTranslation { 1 } else { count };
            rms.push((*kind, (squared[k] / (scored * per as u64) as f64).sqrt()));
        }
        let coordinate_rms = R::COORDINATES
            .iter()
            .zip(per_coordinate)
            .map(|(c, e)| (c.name, (e / scored.max(1) as f64).sqrt()))
            .collect();
        let marker_rms = match scored {
            0 => Vec::new(),
            scored => (self.marker_errors.iter().zip(markers))
                .map(|((k, _, _), sum)| (self.estimator.sensors()[*k].name.clone(), (sum / scored as f64).sqrt()))
                .collect(),
        };
        (rms, coordinate_rms, marker_rms)
    }

    pub(crate) fn report(&self) -> EstimatorReport {
        let totals: Vec<f64> = self.marker_errors.iter().map(|m| m.2).collect();
        // The task's sums are the totals less those when the window opened; a window that
        // never opened (the run ended first, or nothing was scored) holds nothing.
        let opened = self.window.is_some();
        let at = |total: f64, at_window: f64| if opened { total - at_window } else { 0.0 };
        let squared: [f64; 6] = std::array::from_fn(|k| at(self.squared_errors[k], self.squared_at_window[k]));
        let per: [f64; N] = std::array::from_fn(|i| at(self.per_coordinate[i], self.per_coordinate_at_window[i]));
        let markers: Vec<f64> = totals.iter().zip(&self.markers_at_window).map(|(t, a)| at(*t, *a)).collect();
        let scored = self.scored - self.window.unwrap_or(self.scored);
        let (rms, coordinate_rms, marker_rms) = self.figures(&squared, &per, &markers, scored);
        let whole_run = (self.score_from > 0.0).then(|| {
            let (rms, _, markers) = self.figures(&self.squared_errors, &self.per_coordinate, &totals, self.scored);
            (rms, markers, self.scored)
        });
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
            scored,
            scored_from: self.score_from,
            whole_run,
            coordinate_rms,
            marker_rms,
            mean_time: Duration::from_secs_f64(self.time_total.as_secs_f64() / self.periods.max(1) as f64),
            longest_time: self.time_longest,
            fault: self.fault.as_ref().map(|f| f.1.clone()),
        }
    }
}

/// One period of a sensor log: the readings taken, the estimate posted (none while a fault
/// held the commands) and the commands the safety filter passed (none in a fault's hold).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoggedPeriod {
    pub t: f64,
    pub readings: Vec<Reading>,
    pub estimate: Option<Vec<f64>>,
    pub sent: Option<Vec<f64>>,
}

/// A sensor log (`t,kind,name,stamp,values...`, rows of kind `reading`, `estimate` and
/// `sent`), read back period by period.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SensorLog {
    pub periods: Vec<LoggedPeriod>,
}

impl SensorLog {
    /// Parses a log of `sensors` for a robot of `coordinates` coordinates and `commands`
    /// commands; errors name the line.
    pub fn parse(
        path: &str,
        text: &str,
        sensors: &[Sensor],
        coordinates: usize,
        commands: usize,
    ) -> Result<SensorLog, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, "t,kind,name,stamp,values")) => {}
            _ => return Err(format!("{path}:1: not a sensor log: the header must be `t,kind,name,stamp,values`")),
        }
        let mut periods: Vec<LoggedPeriod> = Vec::new();
        for (n, line) in lines {
            let at = |why: String| format!("{path}:{}: {why}", n + 1);
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() < 5 {
                return Err(at(format!("{} fields, at least 5 expected", fields.len())));
            }
            let number = |text: &str, what: &str| {
                text.parse::<f64>().map_err(|_| at(format!("{what} `{text}` is not a number")))
            };
            let t = number(fields[0], "time")?;
            if !t.is_finite() {
                return Err(at(format!("time {t} is not finite")));
            }
            let values = fields[4..].iter().map(|v| number(v, "value")).collect::<Result<Vec<f64>, String>>()?;
            if periods.last().is_none_or(|p| p.t != t) {
                if let Some(last) = periods.last() {
                    if t < last.t {
                        return Err(at(format!("time {t} s goes back from {} s", last.t)));
                    }
                }
                periods.push(LoggedPeriod { t, ..LoggedPeriod::default() });
            }
            let period = periods.last_mut().expect("pushed");
            match fields[1] {
                "reading" => {
                    let k = sensors
                        .iter()
                        .position(|s| s.name == fields[2])
                        .ok_or_else(|| at(format!("`{}` is not a sensor of the run configuration", fields[2])))?;
                    let count = sensors[k].measures.values();
                    if values.len() != count {
                        return Err(at(format!(
                            "sensor `{}` reads {count} values, the row has {}",
                            fields[2],
                            values.len()
                        )));
                    }
                    let mut reading =
                        Reading { sensor: k as u16, stamp: number(fields[3], "stamp")?, values: [0.0; 3] };
                    reading.values[..count].copy_from_slice(&values);
                    period.readings.push(reading);
                }
                "estimate" if values.len() == 2 * coordinates => period.estimate = Some(values),
                "sent" if values.len() == commands => period.sent = Some(values),
                "estimate" | "sent" => {
                    return Err(at(format!("a `{}` row with {} values", fields[1], values.len())));
                }
                other => return Err(at(format!("unknown row kind `{other}` (reading, estimate, sent)"))),
            }
        }
        Ok(SensorLog { periods })
    }
}

/// Runs `log`'s readings and commands through `estimator` period by period, as the loop
/// did, writing the same log again into `out`; returns the periods replayed and the
/// largest difference from the logged estimates (zero when the replay is exact), or the
/// fault that stopped it (with the time).
pub(crate) fn replay_log<R: Model<N, C>, const N: usize, const C: usize>(
    mut estimator: StateEstimator<R, N, C>,
    log: &SensorLog,
    out: &mut impl Write,
) -> Result<(usize, f64, Option<String>), String> {
    let io = |e: std::io::Error| e.to_string();
    writeln!(out, "t,kind,name,stamp,values").map_err(io)?;
    let mut largest = 0.0f64;
    for (k, period) in log.periods.iter().enumerate() {
        let t = period.t;
        for r in &period.readings {
            let sensor = &estimator.sensors()[r.sensor as usize];
            write!(out, "{t},reading,{},{}", sensor.name, r.stamp).map_err(io)?;
            for v in &r.values[..sensor.measures.values()] {
                write!(out, ",{v}").map_err(io)?;
            }
            writeln!(out).map_err(io)?;
        }
        if let Err(fault) = estimator.take(&period.readings, t).and_then(|()| estimator.advance_to(t)) {
            return Ok((k, largest, Some(format!("{fault} (at t = {t:.3} s)"))));
        }
        let estimate = estimator.estimate();
        write!(out, "{t},estimate,,").map_err(io)?;
        for (i, v) in estimate.q.iter().chain(estimate.qd.iter()).enumerate() {
            write!(out, ",{v}").map_err(io)?;
            if let Some(logged) = &period.estimate {
                largest = largest.max((logged[i] - v).abs());
            }
        }
        writeln!(out).map_err(io)?;
        if let Some(sent) = &period.sent {
            estimator.set_commands(sent);
            write!(out, "{t},sent,,").map_err(io)?;
            for v in sent {
                write!(out, ",{v}").map_err(io)?;
            }
            writeln!(out).map_err(io)?;
        }
    }
    Ok((log.periods.len(), largest, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use softgen_runtime::Measurement;

    fn sensors() -> Vec<Sensor> {
        let sensor = |name: &str, measures| Sensor {
            name: name.into(),
            measures,
            rate_hz: 100.0,
            noise: 1e-3,
            latency: 0.0,
            lost: 0.0,
            timeout: 0.1,
            range: [-1.0, 1.0],
            silent_after: None,
        };
        vec![
            sensor("mocap", Measurement::Marker { point: 0 }),
            sensor("encoder", Measurement::Coordinate { coordinate: 1, scale: 1.0, offset: 0.0 }),
        ]
    }

    #[test]
    fn a_sensor_log_reads_back_period_by_period() {
        let text = "t,kind,name,stamp,values\n0,estimate,,,1,2,3,4\n0,sent,,,0.5\n0.01,reading,mocap,0.005,1,2,3\n0.01,reading,encoder,0.01,0.25\n0.01,estimate,,,1,2,3,4\n";
        let log = SensorLog::parse("log.csv", text, &sensors(), 2, 1).unwrap();
        assert_eq!(log.periods.len(), 2);
        assert_eq!(log.periods[0].sent, Some(vec![0.5]));
        assert_eq!(log.periods[1].readings[0], Reading { sensor: 0, stamp: 0.005, values: [1.0, 2.0, 3.0] });
        assert_eq!(log.periods[1].readings[1].values[0], 0.25);
        assert!(log.periods[1].sent.is_none());
    }

    #[test]
    fn bad_sensor_logs_name_the_line() {
        let header = "t,kind,name,stamp,values\n";
        for (body, expected) in [
            ("0,estimate,,,1,2,3,4\n", "log.csv:1: not a sensor log"),
            ("0,reading,sonar,0,1\n", "log.csv:2: `sonar` is not a sensor of the run configuration"),
            ("0,reading,mocap,0,1\n", "log.csv:2: sensor `mocap` reads 3 values, the row has 1"),
            ("0,estimate,,,1,2\n", "log.csv:2: a `estimate` row with 2 values"),
            ("0,guess,,,1\n", "log.csv:2: unknown row kind `guess`"),
            ("x,sent,,,1\n", "log.csv:2: time `x` is not a number"),
            ("0.1,sent,,,1\n0.05,sent,,,1\n", "log.csv:3: time 0.05 s goes back from 0.1 s"),
            ("0,sent\n", "log.csv:2: 2 fields, at least 5 expected"),
        ] {
            let text = if expected.contains(":1:") { body.to_string() } else { format!("{header}{body}") };
            let e = SensorLog::parse("log.csv", &text, &sensors(), 2, 1).unwrap_err();
            assert!(e.contains(expected), "expected `{expected}` in `{e}`");
        }
    }
}
