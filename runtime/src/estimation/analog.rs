//! Sensors on a DAQ card's analog inputs (pressure transducers, bend and flex sensors): a
//! voltage turned into the sensor's unit by a linear map or a calibration table, each
//! sensor read at its own rate from the loop and its reading stamped at the loop's time.
//! The card is behind a closure (`read`), so this is tested without one.

use super::sensors::{Reading, ReadingQueue};
use std::sync::Arc;

/// Volts to the sensor's unit.
#[derive(Clone, Debug, PartialEq)]
pub enum Calibration {
    /// `values[0]` at `volts[0]` to `values[1]` at `volts[1]`, straight between and beyond
    /// (a transducer's 1-5 V for 0-10 bar; a broken wire's 0 V then reads out of range).
    Linear {
        /// Two voltages, rising.
        volts: [f64; 2],
        /// The values read at them, different.
        values: [f64; 2],
    },
    /// Measured (volts, value) points, volts strictly increasing, values strictly monotonic
    /// (a bend sensor's resistance falls as it bends), interpolated linearly and extended by
    /// the end segments.
    Table(Vec<(f64, f64)>),
}

impl Calibration {
    /// Checks finite points, volts rising and values monotonic.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Calibration::Linear { volts, values } => {
                if !volts.iter().chain(values).all(|v| v.is_finite()) || volts[1] <= volts[0] || values[0] == values[1]
                {
                    return Err(format!(
                        "a linear calibration needs finite volts rising ({} to {}) and two different values ({} and {})",
                        volts[0], volts[1], values[0], values[1]
                    ));
                }
                Ok(())
            }
            Calibration::Table(points) => {
                if points.len() < 2 {
                    return Err(format!("a calibration table needs at least 2 points, got {}", points.len()));
                }
                let rising = points[1].1 > points[0].1;
                for (i, w) in points.windows(2).enumerate() {
                    let ((v0, x0), (v1, x1)) = (w[0], w[1]);
                    if ![v0, x0, v1, x1].iter().all(|x| x.is_finite()) || v1 <= v0 || x1 == x0 || (x1 > x0) != rising {
                        return Err(format!(
                            "calibration points {} and {} must be finite, rising in volts and monotonic in value",
                            i + 1,
                            i + 2
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// The value a voltage reads.
    pub fn value(&self, volts: f64) -> f64 {
        let segment = |(v0, x0): (f64, f64), (v1, x1): (f64, f64)| x0 + (x1 - x0) * (volts - v0) / (v1 - v0);
        match self {
            Calibration::Linear { volts: v, values: x } => segment((v[0], x[0]), (v[1], x[1])),
            Calibration::Table(points) => {
                let i = points.partition_point(|p| p.0 <= volts).clamp(1, points.len() - 1) - 1;
                segment(points[i], points[i + 1])
            }
        }
    }

    /// The voltages the calibration spans: what the card's input range must cover.
    pub fn volts_span(&self) -> (f64, f64) {
        match self {
            Calibration::Linear { volts, .. } => (volts[0], volts[1]),
            Calibration::Table(points) => (points[0].0, points[points.len() - 1].0),
        }
    }

    /// Reads a calibration table: one `volts,value` pair a line; `#` comments and a header
    /// line of words are skipped. Errors name the file and line.
    pub fn table_from_csv(path: &str, text: &str) -> Result<Calibration, String> {
        let points = crate::quantities::tables::read_pairs(path, text, "volts,value")?;
        let table = Calibration::Table(points);
        table.validate().map_err(|e| format!("{path}: {e}"))?;
        Ok(table)
    }
}

/// One sensor on an analog input.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalogInput {
    /// The card's analog input channel.
    pub channel: u16,
    /// The sensor's index in the run's sensor list.
    pub sensor: u16,
    /// Volts to the sensor's unit.
    pub calibration: Calibration,
    /// Readings a second (Hz).
    pub rate_hz: f64,
}

/// The analog inputs of a run, read from the loop: each at its own rate, its reading on the
/// estimator's queue.
pub struct AnalogSampler {
    inputs: Vec<AnalogInput>,
    next_due: Vec<f64>,
    queue: Arc<ReadingQueue>,
    /// Readings taken.
    pub samples: u64,
}

impl AnalogSampler {
    /// A sampler of `inputs` posting to `queue`, once every calibration and rate validates.
    pub fn new(inputs: Vec<AnalogInput>, queue: Arc<ReadingQueue>) -> Result<AnalogSampler, String> {
        for input in &inputs {
            input.calibration.validate().map_err(|e| format!("analog input {}: {e}", input.channel))?;
            if !(input.rate_hz.is_finite() && input.rate_hz > 0.0) {
                return Err(format!("analog input {}: rate must be > 0 Hz, got {}", input.channel, input.rate_hz));
            }
        }
        let next_due = vec![0.0; inputs.len()];
        Ok(AnalogSampler { inputs, next_due, queue, samples: 0 })
    }

    /// The inputs read.
    pub fn inputs(&self) -> &[AnalogInput] {
        &self.inputs
    }

    /// At loop time `t`: reads every input that is due (`read` gives a channel's volts) and
    /// queues its value stamped `t`. An input slower than the loop is read at its rate; one
    /// faster, once a period.
    pub fn sample(&mut self, t: f64, mut read: impl FnMut(u16) -> Result<f64, String>) -> Result<(), String> {
        for (input, due) in self.inputs.iter().zip(&mut self.next_due) {
            if t + 1e-9 < *due {
                continue;
            }
            let volts = read(input.channel)?;
            let value = input.calibration.value(volts);
            self.queue.push(Reading { sensor: input.sensor, stamp: t, values: [value, 0.0, 0.0] });
            self.samples += 1;
            *due = (*due + 1.0 / input.rate_hz).max(t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrations_map_volts_to_values() {
        // A 1-5 V transducer for 0-10 bar.
        let transducer = Calibration::Linear { volts: [1.0, 5.0], values: [0.0, 10.0] };
        transducer.validate().unwrap();
        assert_eq!(transducer.value(3.0), 5.0);
        assert_eq!(transducer.value(0.0), -2.5, "a broken wire reads out of range, not clamped to it");
        // A bend sensor's table: the voltage rises as it bends, the angle falls.
        let bend =
            Calibration::table_from_csv("bend.csv", "volts,angle\n# divider at 3.3 V\n0.5,1.2\n1.5,0.4\n2.5,-0.2\n")
                .unwrap();
        assert!((bend.value(1.0) - 0.8).abs() < 1e-12);
        assert!((bend.value(2.0) - 0.1).abs() < 1e-12);
        assert!((bend.value(3.0) + 0.5).abs() < 1e-12, "extended by the last segment");
        assert_eq!(bend.volts_span(), (0.5, 2.5));
        for (text, message) in [
            ("0.5,1\n0.4,2\n", "rising in volts"),
            ("0.5,1\n0.7,2\n0.9,1.5\n", "monotonic in value"),
            ("0.5,1\n", "at least 2 points"),
            ("0.5;1\n", "bend.csv:1: expected `volts,value`"),
        ] {
            let e = Calibration::table_from_csv("bend.csv", text).unwrap_err();
            assert!(e.contains(message), "{text}: {e}");
        }
        assert!(Calibration::Linear { volts: [5.0, 1.0], values: [0.0, 10.0] }.validate().is_err());
    }

    /// Each input at its own rate, stamped at the loop's time, through the calibration.
    #[test]
    fn inputs_are_read_at_their_rates() {
        let queue = Arc::new(ReadingQueue::default());
        let linear = Calibration::Linear { volts: [0.0, 10.0], values: [0.0, 1.0] };
        let inputs = vec![
            AnalogInput { channel: 3, sensor: 0, calibration: linear.clone(), rate_hz: 1000.0 },
            AnalogInput { channel: 5, sensor: 1, calibration: linear, rate_hz: 250.0 },
        ];
        let mut sampler = AnalogSampler::new(inputs, Arc::clone(&queue)).unwrap();
        for k in 0..100 {
            let t = k as f64 * 1e-3;
            sampler.sample(t, |channel| Ok(f64::from(channel) + t)).unwrap();
        }
        let mut readings = Vec::new();
        queue.try_drain_into(&mut readings);
        let of = |s| readings.iter().filter(|r| r.sensor == s).collect::<Vec<_>>();
        assert_eq!((of(0).len(), of(1).len()), (100, 25));
        let r = of(1)[3];
        assert!((r.stamp - 0.012).abs() < 1e-12 && (r.values[0] - (5.0 + 0.012) / 10.0).abs() < 1e-12, "{r:?}");
        // A failing card is the run's error.
        let e = sampler.sample(1.0, |_| Err("comedi: read failed".into())).unwrap_err();
        assert!(e.contains("read failed"));
    }
}
