//! What a sensor measures and how its readings are judged before an estimator takes them:
//! a marker's position (a named point of the robot: motion capture), a coordinate through a
//! linear calibration (an encoder, a bend sensor, an IMU's attitude angle on a base
//! rotation coordinate), or a muscle's pressure (a transducer); each with its rate, noise,
//! latency, lost frames, timeout and physical range. Faults (silent past the timeout,
//! non-finite or out-of-range values, time stamps going backwards) are found here, once,
//! for every source of readings.

use std::sync::Mutex;

/// What a sensor measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measurement {
    /// The world position (m) of the robot's tracked point `point` (an index among its
    /// contact points, then its markers: `Model::tracked_point_position`): motion capture.
    Marker {
        /// The tracked point's index.
        point: usize,
    },
    /// `scale * q[coordinate] + offset`, in the sensor's own unit.
    Coordinate {
        /// The coordinate's index in q.
        coordinate: usize,
        /// The reading per unit of the coordinate.
        scale: f64,
        /// The reading at q = 0.
        offset: f64,
    },
    /// The pressure (bar) of muscle `muscle` (an index in `Model::MUSCLES`).
    Pressure {
        /// The muscle's index.
        muscle: usize,
    },
}

impl Measurement {
    /// Values in one reading.
    pub fn values(&self) -> usize {
        match self {
            Measurement::Marker { .. } => 3,
            Measurement::Coordinate { .. } | Measurement::Pressure { .. } => 1,
        }
    }
}

/// One sensor of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Sensor {
    /// Its name, unique among the run's sensors; faults and logs name it.
    pub name: String,
    /// What it measures.
    pub measures: Measurement,
    /// Frames per second it delivers.
    pub rate_hz: f64,
    /// Standard deviation of each value's noise, in the reading's unit.
    pub noise: f64,
    /// Delay from a frame's time stamp to its arrival (s).
    pub latency: f64,
    /// Fraction of frames lost (a marker occluded), in [0, 1).
    pub lost: f64,
    /// Longest the sensor may stay silent (s) before it counts as failed.
    pub timeout: f64,
    /// The values it can report; one outside is a failed sensor, not a measurement.
    pub range: [f64; 2],
    /// Emulation only: the time (s) at which the emulated sensor falls silent, to rehearse
    /// the fault.
    pub silent_after: Option<f64>,
}

/// Most sensors one run reads.
pub const MAX_SENSORS: usize = 64;

impl Sensor {
    /// Checks that what it measures exists on robot `robot`: a tracked point among `points`, a
    /// coordinate among `coordinates`, a muscle among `muscles`.
    pub fn check_target(&self, robot: &str, points: usize, coordinates: usize, muscles: usize) -> Result<(), String> {
        match self.measures {
            Measurement::Marker { point } if point >= points => Err(format!(
                "sensor `{}`: `{robot}` has {points} tracked points (contact points and markers), not {}",
                self.name,
                point + 1
            )),
            Measurement::Coordinate { coordinate, .. } if coordinate >= coordinates => {
                Err(format!("sensor `{}`: `{robot}` has {coordinates} coordinates", self.name))
            }
            Measurement::Pressure { muscle } if muscle >= muscles => Err(format!(
                "sensor `{}`: `{robot}` has {muscles} muscles (or muscle pressures among the inputs)",
                self.name
            )),
            _ => Ok(()),
        }
    }

    /// Checks its rate, noise, latency, lost fraction, timeout and range, naming the sensor.
    pub fn validate(&self) -> Result<(), String> {
        let name = &self.name;
        if !(self.rate_hz.is_finite() && (0.1..=100_000.0).contains(&self.rate_hz)) {
            return Err(format!("sensor `{name}`: rate_hz must be in [0.1, 100000] Hz, got {}", self.rate_hz));
        }
        if !(self.noise.is_finite() && self.noise > 0.0) {
            return Err(format!(
                "sensor `{name}`: noise must be finite and > 0 (the estimator weighs a reading by it), got {}",
                self.noise
            ));
        }
        if !(self.latency.is_finite() && (0.0..=1.0).contains(&self.latency)) {
            return Err(format!("sensor `{name}`: latency must be in [0, 1] s, got {}", self.latency));
        }
        if !(self.lost.is_finite() && (0.0..1.0).contains(&self.lost)) {
            return Err(format!("sensor `{name}`: lost must be a fraction in [0, 1), got {}", self.lost));
        }
        let period = 1.0 / self.rate_hz;
        if !(self.timeout.is_finite() && self.timeout > period) {
            return Err(format!(
                "sensor `{name}`: timeout must be longer than one frame ({period} s at {} Hz), got {}",
                self.rate_hz, self.timeout
            ));
        }
        let [low, high] = self.range;
        if !(low.is_finite() && high.is_finite() && low < high) {
            return Err(format!("sensor `{name}`: range [{low}, {high}] is not a finite interval"));
        }
        if let Measurement::Coordinate { scale, offset, .. } = self.measures {
            if !(scale.is_finite() && scale != 0.0 && offset.is_finite()) {
                return Err(format!(
                    "sensor `{name}`: calibration needs a finite, non-zero scale and a finite offset, got {scale} and {offset}"
                ));
            }
        }
        if let Some(t) = self.silent_after {
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("sensor `{name}`: silent_after must be >= 0 s, got {t}"));
            }
        }
        Ok(())
    }
}

/// One frame of one sensor: its time stamp (s, the loop's clock) and values (the first
/// `Measurement::values` used).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// The sensor's index among the run's sensors.
    pub sensor: u16,
    /// When it was measured (s, the loop's clock).
    pub stamp: f64,
    /// Its values, the first `Measurement::values` of them used.
    pub values: [f64; 3],
}

/// Readings from their sources (the simulated plant, a network or board reader) to the
/// loop: pushed by the source, drained by the loop with `try_lock`, so the loop never waits
/// (readings left behind a held lock are taken the next period).
pub struct ReadingQueue {
    readings: Mutex<Vec<Reading>>,
}

/// Most readings waiting at once; a source that outruns the loop by more loses the oldest.
pub const QUEUE_CAPACITY: usize = 4096;

impl Default for ReadingQueue {
    fn default() -> Self {
        ReadingQueue { readings: Mutex::new(Vec::with_capacity(QUEUE_CAPACITY)) }
    }
}

impl ReadingQueue {
    /// Adds a reading; at capacity the oldest is dropped (returns false).
    pub fn push(&self, reading: Reading) -> bool {
        let mut readings = self.readings.lock().unwrap_or_else(|e| e.into_inner());
        let room = readings.len() < QUEUE_CAPACITY;
        if !room {
            readings.remove(0);
        }
        readings.push(reading);
        room
    }

    /// Moves every waiting reading into `out` (which keeps its capacity), unless the source
    /// holds the lock this instant.
    pub fn try_drain_into(&self, out: &mut Vec<Reading>) {
        if let Ok(mut readings) = self.readings.try_lock() {
            out.extend_from_slice(&readings);
            readings.clear();
        }
    }
}

/// A sensor failure: the run holds its last safe command, then goes to its safe state.
#[derive(Clone, Debug, PartialEq)]
pub enum SensorFault {
    /// No reading for longer than the sensor's timeout.
    Silent {
        /// The sensor's name.
        sensor: String,
        /// Its newest stamp, or the watch's start (s).
        since: f64,
        /// Its timeout (s).
        timeout: f64,
    },
    /// A reading with a value that is not finite.
    NonFinite {
        /// The sensor's name.
        sensor: String,
        /// The reading's stamp (s).
        stamp: f64,
    },
    /// A reading outside the sensor's range.
    OutOfRange {
        /// The sensor's name.
        sensor: String,
        /// The reading's stamp (s).
        stamp: f64,
        /// The value read.
        value: f64,
        /// The sensor's range.
        range: [f64; 2],
    },
    /// A reading stamped before the sensor's previous one.
    Backwards {
        /// The sensor's name.
        sensor: String,
        /// The reading's stamp (s).
        stamp: f64,
        /// The previous reading's stamp (s).
        last: f64,
    },
    /// A reading stamped further ahead of the loop's clock than the sensor's timeout.
    Ahead {
        /// The sensor's name.
        sensor: String,
        /// The reading's stamp (s).
        stamp: f64,
        /// The loop's time when it arrived (s).
        now: f64,
    },
}

impl std::fmt::Display for SensorFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SensorFault::Silent { sensor, since, timeout } => {
                write!(f, "sensor `{sensor}` silent since t = {since:.3} s, past its timeout of {timeout} s")
            }
            SensorFault::NonFinite { sensor, stamp } => {
                write!(f, "sensor `{sensor}` sent a non-finite value stamped t = {stamp:.4} s")
            }
            SensorFault::OutOfRange { sensor, stamp, value, range } => write!(
                f,
                "sensor `{sensor}` read {value} at t = {stamp:.4} s, outside its range [{}, {}]",
                range[0], range[1]
            ),
            SensorFault::Backwards { sensor, stamp, last } => {
                write!(f, "sensor `{sensor}`'s time stamps went backwards: t = {stamp:.4} s after t = {last:.4} s")
            }
            SensorFault::Ahead { sensor, stamp, now } => write!(
                f,
                "sensor `{sensor}` sent a frame stamped t = {stamp:.4} s, ahead of the loop's clock at {now:.4} s"
            ),
        }
    }
}

/// Judges each sensor's readings as they arrive and its silence between them.
#[derive(Clone, Debug)]
pub struct SensorWatch {
    sensors: Vec<Sensor>,
    /// Per sensor: the newest stamp seen (or the watch's start) and readings taken.
    last_stamp: Vec<f64>,
    /// Per sensor: the readings it has passed.
    pub readings: Vec<u64>,
}

impl SensorWatch {
    /// Watches `sensors` from time `start` (each has its timeout from then to send a first
    /// frame).
    pub fn new(sensors: &[Sensor], start: f64) -> Result<Self, String> {
        if sensors.len() > MAX_SENSORS {
            return Err(format!("a run reads at most {MAX_SENSORS} sensors, got {}", sensors.len()));
        }
        for (i, s) in sensors.iter().enumerate() {
            s.validate()?;
            if sensors[..i].iter().any(|o| o.name == s.name) {
                return Err(format!("two sensors are named `{}`", s.name));
            }
        }
        Ok(SensorWatch {
            sensors: sensors.to_vec(),
            last_stamp: vec![start; sensors.len()],
            readings: vec![0; sensors.len()],
        })
    }

    /// The sensors watched, in the run's order.
    pub fn sensors(&self) -> &[Sensor] {
        &self.sensors
    }

    /// Checks one reading that arrived by the loop's time `now` (its stamp may be ahead of
    /// `now` by up to the sensor's timeout).
    pub fn check(&mut self, reading: &Reading, now: f64) -> Result<(), SensorFault> {
        let k = reading.sensor as usize;
        let Some(sensor) = self.sensors.get(k) else {
            return Err(SensorFault::NonFinite { sensor: format!("#{k} (no such sensor)"), stamp: reading.stamp });
        };
        let name = || sensor.name.clone();
        let values = &reading.values[..sensor.measures.values()];
        if !reading.stamp.is_finite() || values.iter().any(|v| !v.is_finite()) {
            return Err(SensorFault::NonFinite { sensor: name(), stamp: reading.stamp });
        }
        if reading.stamp < self.last_stamp[k] && self.readings[k] > 0 {
            return Err(SensorFault::Backwards { sensor: name(), stamp: reading.stamp, last: self.last_stamp[k] });
        }
        // A loop running late is behind its sensors' clock, and the reading waits for it
        // (`StateEstimator::take`); one further ahead than the sensor may stay silent is a
        // clock out of step, not lateness.
        if reading.stamp > now + sensor.timeout {
            return Err(SensorFault::Ahead { sensor: name(), stamp: reading.stamp, now });
        }
        let [low, high] = sensor.range;
        if let Some(&value) = values.iter().find(|v| !(low..=high).contains(*v)) {
            return Err(SensorFault::OutOfRange { sensor: name(), stamp: reading.stamp, value, range: sensor.range });
        }
        self.last_stamp[k] = reading.stamp;
        self.readings[k] += 1;
        Ok(())
    }

    /// Checks every sensor's silence at `now`: the newest frame (or the start) must be
    /// within its timeout plus its latency.
    pub fn check_silence(&self, now: f64) -> Result<(), SensorFault> {
        for (k, sensor) in self.sensors.iter().enumerate() {
            if now - self.last_stamp[k] > sensor.timeout + sensor.latency {
                return Err(SensorFault::Silent {
                    sensor: sensor.name.clone(),
                    since: self.last_stamp[k],
                    timeout: sensor.timeout,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker() -> Sensor {
        Sensor {
            name: "nose".into(),
            measures: Measurement::Marker { point: 0 },
            rate_hz: 120.0,
            noise: 1e-3,
            latency: 0.01,
            lost: 0.125,
            timeout: 0.1,
            range: [-100.0, 100.0],
            silent_after: None,
        }
    }

    fn reading(stamp: f64, values: [f64; 3]) -> Reading {
        Reading { sensor: 0, stamp, values }
    }

    #[test]
    fn each_fault_is_found_and_named() {
        let mut watch = SensorWatch::new(&[marker()], 0.0).unwrap();
        watch.check(&reading(0.05, [0.0; 3]), 0.06).unwrap();
        let e = watch.check(&reading(0.04, [0.0; 3]), 0.07).unwrap_err();
        assert!(e.to_string().contains("went backwards: t = 0.0400 s after t = 0.0500 s"), "{e}");
        let e = watch.check(&reading(0.06, [0.0, f64::NAN, 0.0]), 0.07).unwrap_err();
        assert!(e.to_string().contains("`nose` sent a non-finite value"), "{e}");
        let e = watch.check(&reading(0.06, [0.0, 0.0, 250.0]), 0.07).unwrap_err();
        assert!(e.to_string().contains("read 250 at t = 0.0600 s, outside its range [-100, 100]"), "{e}");
        watch.check_silence(0.159).unwrap();
        let e = watch.check_silence(0.05 + 0.1 + 0.011).unwrap_err();
        assert!(e.to_string().contains("`nose` silent since t = 0.050 s, past its timeout of 0.1 s"), "{e}");
        // Ahead of a late loop by up to the timeout waits; further is a fault.
        let e = watch.check(&reading(0.171 + 0.1001, [0.0; 3]), 0.171).unwrap_err();
        assert!(e.to_string().contains("stamped t = 0.2711 s, ahead of the loop's clock at 0.1710 s"), "{e}");
        watch.check(&reading(0.171 + 0.0999, [0.0; 3]), 0.171).unwrap();
    }

    #[test]
    fn bad_settings_are_refused() {
        let cases: [(fn(&mut Sensor), &str); 6] = [
            (|s| s.rate_hz = 0.0, "rate_hz"),
            (|s| s.noise = 0.0, "noise"),
            (|s| s.lost = 1.0, "lost"),
            (|s| s.timeout = 0.005, "longer than one frame"),
            (|s| s.range = [1.0, 1.0], "range"),
            (|s| s.latency = -0.1, "latency"),
        ];
        for (spoil, expected) in cases {
            let mut s = marker();
            spoil(&mut s);
            let e = s.validate().unwrap_err();
            assert!(e.contains(expected), "{e}");
        }
        let e = SensorWatch::new(&[marker(), marker()], 0.0).unwrap_err();
        assert!(e.contains("two sensors are named `nose`"), "{e}");
    }

    #[test]
    fn the_queue_keeps_order_and_bounds_its_length() {
        let queue = ReadingQueue::default();
        for k in 0..QUEUE_CAPACITY + 3 {
            queue.push(reading(k as f64, [0.0; 3]));
        }
        let mut out = Vec::new();
        queue.try_drain_into(&mut out);
        assert_eq!(out.len(), QUEUE_CAPACITY);
        assert_eq!(out[0].stamp, 3.0);
        queue.try_drain_into(&mut out);
        assert_eq!(out.len(), QUEUE_CAPACITY);
    }
}
