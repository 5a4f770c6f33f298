//! Sensors emulated from the simulated plant's true state: each samples at its own rate,
//! adds Gaussian noise of its stated deviation, loses its stated fraction of frames, and
//! delivers each frame its latency after the time stamp, so every estimator path can run in
//! the loop without the robot. Seeded: a run repeats exactly.

use super::sensors::{Measurement, Reading, ReadingQueue, Sensor, QUEUE_CAPACITY};
use crate::optimal_control::sampling::SplitMix64;
use crate::robot::model::Model;
use crate::robot::state::State;
use nalgebra::Vector3;
use std::collections::VecDeque;
use std::sync::Arc;

/// The plant's sensors: call [`EmulatedSensors::next_sample`] to find where to stop the
/// integration, [`EmulatedSensors::sample`] there, and [`EmulatedSensors::deliver`] at each
/// period's end.
pub struct EmulatedSensors<R: Model<N, C>, const N: usize, const C: usize> {
    sensors: Vec<Sensor>,
    params: R::Params,
    /// Per sensor: its next frame's time stamp.
    next: Vec<f64>,
    rng: SplitMix64,
    /// Frames sampled, waiting for their arrival time.
    in_flight: VecDeque<(f64, Reading)>,
    arrived: Vec<(f64, Reading)>,
    queue: Arc<ReadingQueue>,
    /// Frames taken and lost, per sensor.
    pub frames: Vec<u64>,
    /// See `frames`.
    pub lost: Vec<u64>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> EmulatedSensors<R, N, C> {
    /// `sensors` of a robot with `params`, delivering into `queue`, the first frames at
    /// time `start`, with noise from `seed`.
    pub fn new(
        sensors: &[Sensor],
        params: R::Params,
        queue: Arc<ReadingQueue>,
        start: f64,
        seed: u64,
    ) -> Result<Self, String> {
        for s in sensors {
            s.validate()?;
            s.check_target(R::NAME, C + R::MARKERS.len(), N, R::MUSCLES.len())?;
        }
        Ok(EmulatedSensors {
            sensors: sensors.to_vec(),
            params,
            next: vec![start; sensors.len()],
            rng: SplitMix64(seed),
            in_flight: VecDeque::with_capacity(QUEUE_CAPACITY),
            arrived: Vec::with_capacity(QUEUE_CAPACITY),
            queue,
            frames: vec![0; sensors.len()],
            lost: vec![0; sensors.len()],
        })
    }

    /// The earliest frame due at or before `t`, if any.
    pub fn next_sample(&self, t: f64) -> Option<f64> {
        self.next.iter().copied().filter(|&s| s <= t + 1e-12).min_by(f64::total_cmp)
    }

    /// Takes the frames due at `t` from the true state and the muscles' true pressures
    /// (bar, in `Model::MUSCLES` order; empty without muscles).
    pub fn sample(&mut self, t: f64, state: &State<N>, pressures: &[f64]) {
        let mut positions = None;
        for k in 0..self.sensors.len() {
            if self.next[k] > t + 1e-12 {
                continue;
            }
            let sensor = &self.sensors[k];
            self.next[k] += 1.0 / sensor.rate_hz;
            if sensor.silent_after.is_some_and(|s| t >= s) {
                continue;
            }
            self.frames[k] += 1;
            // A lost frame still draws its noise, so losing frames does not change the
            // noise the others get.
            let noise = [self.rng.normal(), self.rng.normal(), self.rng.normal()];
            if self.rng.uniform() <= sensor.lost {
                self.lost[k] += 1;
                continue;
            }
            let mut values = [0.0; 3];
            match sensor.measures {
                Measurement::Marker { point } if point < C => {
                    let positions = positions.get_or_insert_with(|| {
                        let cache = R::cache(&state.q, &self.params);
                        let mut out = [Vector3::zeros(); C];
                        R::contact_positions_into(&state.q, &self.params, &cache, &mut out);
                        out
                    });
                    values.copy_from_slice(positions[point].as_slice());
                }
                Measurement::Marker { point } => {
                    let cache = R::cache(&state.q, &self.params);
                    let position = R::tracked_point_position(point, &state.q, &self.params, &cache);
                    values.copy_from_slice(position.as_slice());
                }
                Measurement::Coordinate { coordinate, scale, offset } => {
                    values[0] = scale * state.q[coordinate] + offset;
                }
                Measurement::Pressure { muscle } => values[0] = pressures.get(muscle).copied().unwrap_or(0.0),
            }
            for (v, n) in values.iter_mut().zip(noise).take(sensor.measures.values()) {
                *v += sensor.noise * n;
            }
            let reading = Reading { sensor: k as u16, stamp: t, values };
            self.in_flight.push_back((t + sensor.latency, reading));
        }
    }

    /// Hands every frame that has arrived by `t` to the queue, in arrival order.
    pub fn deliver(&mut self, t: f64) {
        // Latencies differ between sensors, so arrivals are not in sampling order: take
        // every arrived frame, oldest arrival first.
        self.arrived.clear();
        let mut k = 0;
        while k < self.in_flight.len() {
            if self.in_flight[k].0 <= t + 1e-12 {
                self.arrived.extend(self.in_flight.remove(k));
            } else {
                k += 1;
            }
        }
        self.arrived.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        for (_, reading) in self.arrived.drain(..) {
            self.queue.push(reading);
        }
    }
}
