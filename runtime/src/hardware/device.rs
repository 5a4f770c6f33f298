//! Devices behind one trait: the simulated plant (hardware in the loop), a recorder that
//! logs every value with its time to CSV around any device, and a replayer that feeds a
//! recording back to any device.

use crate::actuators::muscle_drive::{Muscle, MuscleInfo};
use crate::estimation::emulated::EmulatedSensors;
use crate::hardware::actuation::{DeviceValue, PressureMap};
use crate::integration::chosen::ChosenIntegrator;
use crate::integration::dopri5::Tolerances;
use crate::integration::integrator::{IntegrationError, Integrator};
use crate::integration::rk4::RungeKutta4;
use crate::integration::rosenbrock::Rosenbrock34;
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::closed_loop::Simulation;
use nalgebra::SVector;
use std::fmt;
use std::io::{BufWriter, Write};

/// A device failure: the run goes to its safe state.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceError(pub String);

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeviceError {}

/// An output device. `write` is called once per control period with that period's values
/// and must not allocate; `flush` makes everything sent so far durable (a log on disk, an
/// acknowledged frame).
pub trait Device {
    /// The device's name, for messages.
    fn name(&self) -> &str;
    /// Sends one period's values at time `t` (s).
    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError>;
    /// Makes everything sent so far durable.
    fn flush(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }
}

/// A simulated plant as a run drives it in the robot's place: a device that reports its
/// true state after every period and can emulate the robot's sensors from it.
/// [`SimulatedPlant`] and the valve robots' [`crate::ValvePlant`] are both.
pub trait EmulatingPlant<R: Model<N, C>, const N: usize, const C: usize>: Device + Send {
    /// Calls `observer` with (t, state) after every period.
    fn observe(&mut self, observer: Box<dyn FnMut(f64, &State<N>) + Send>);
    /// Reads `sensors` from the true state, each frame at its own time within a period.
    fn attach_sensors(&mut self, sensors: EmulatedSensors<R, N, C>);
    /// The model's values the plant runs on.
    fn params(&self) -> &R::Params;
    /// The plant's coordinates now.
    fn coordinates(&self) -> SVector<f64, N>;
}

impl<R: Model<N, C>, const N: usize, const C: usize> EmulatingPlant<R, N, C> for SimulatedPlant<R, N, C> {
    fn observe(&mut self, observer: Box<dyn FnMut(f64, &State<N>) + Send>) {
        SimulatedPlant::observe(self, observer)
    }
    fn attach_sensors(&mut self, sensors: EmulatedSensors<R, N, C>) {
        SimulatedPlant::attach_sensors(self, sensors)
    }
    fn params(&self) -> &R::Params {
        &self.simulation.params
    }
    fn coordinates(&self) -> SVector<f64, N> {
        self.state.q
    }
}

/// A pressure regulator of the plant: the analog channel it listens on, the map that turns
/// its voltage back into pressure, and the muscle it feeds with its lag.
#[derive(Clone, Debug)]
struct RegulatedMuscle {
    channel: u16,
    map: PressureMap,
    muscle: Muscle,
    info: MuscleInfo,
    /// Its index in `Model::MUSCLES`.
    index: usize,
    /// Commanded and reached pressure (bar).
    commanded: f64,
    reached: f64,
}

impl RegulatedMuscle {
    /// The reached pressure `elapsed` seconds on, under the held command.
    fn after(&self, elapsed: f64) -> f64 {
        self.muscle.pressure_after(self.commanded, self.reached, elapsed)
    }
}

/// Hardware in the loop: the generated model integrated in step with the commands it is
/// sent, so the controller cannot tell it from the robot. Servo board values (channel j =
/// actuated joint j) become the set points of the model's joint servos; analog values on
/// the channels of [`SimulatedPlant::connect_muscles`] become the pressures of the robot's
/// muscles, which reach them through each muscle's lag; board values on the channels of
/// [`SimulatedPlant::connect_thrusters`] become its thrusters' thrusts.
pub struct SimulatedPlant<R: Model<N, C>, const N: usize, const C: usize> {
    /// The robot in its environment.
    pub simulation: Simulation<R, N, C>,
    /// Its state now.
    pub state: State<N>,
    /// The plant's time (s).
    pub time: f64,
    /// RK4 at a fixed step, or ROS34PW2 for a stiff robot (soft sections on a carpet), whose
    /// stable RK4 steps would be microseconds.
    integrator: ChosenIntegrator<N>,
    targets: SVector<f64, N>,
    muscles: Vec<RegulatedMuscle>,
    /// Board channel of each thruster (in R::THRUSTERS order) and the thrusts it was sent.
    thruster_channels: Vec<u16>,
    thrusts: Vec<f64>,
    /// Called after each period with (t, state): where the plant's trajectory is recorded.
    observer: Option<Box<dyn FnMut(f64, &State<N>) + Send>>,
    /// Sensors read from the true state at their own times within each period.
    sensors: Option<EmulatedSensors<R, N, C>>,
    /// The muscles' true pressures at a sensor's frame (bar, `Model::MUSCLES` order).
    sampled_pressures: Vec<f64>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> SimulatedPlant<R, N, C> {
    /// A plant starting at `state`, integrated with RK4 at `step` seconds.
    pub fn new(simulation: Simulation<R, N, C>, state: State<N>, step: f64) -> Result<Self, IntegrationError> {
        Ok(SimulatedPlant {
            simulation,
            state,
            time: 0.0,
            integrator: ChosenIntegrator::RungeKutta4(RungeKutta4::new(step)?),
            targets: SVector::zeros(),
            muscles: Vec::new(),
            thruster_channels: Vec::new(),
            thrusts: Vec::new(),
            observer: None,
            sensors: None,
            sampled_pressures: vec![0.0; R::MUSCLES.len()],
        })
    }

    /// Integrates with ROS34PW2 at `tolerances` from now on, its Jacobian refreshed every
    /// `jacobian_every` accepted steps (the simulation's own Jacobian choice and contact
    /// onsets apply), in place of RK4.
    pub fn use_rosenbrock(&mut self, tolerances: Tolerances, jacobian_every: usize) -> Result<(), IntegrationError> {
        let mut integrator = Rosenbrock34::new(tolerances)?;
        integrator.jacobian_every = jacobian_every.max(1);
        self.integrator = ChosenIntegrator::Rosenbrock34(integrator);
        Ok(())
    }

    /// Connects regulators to the robot's muscles: `(analog channel, muscle index in
    /// R::MUSCLES, the regulator's map)`. Refuses unknown muscles and channels used twice.
    pub fn connect_muscles(&mut self, regulators: &[(u16, usize, PressureMap)]) -> Result<(), DeviceError> {
        let mut muscles = Vec::with_capacity(regulators.len());
        for (channel, index, map) in regulators {
            let info = R::MUSCLES
                .get(*index)
                .ok_or_else(|| DeviceError(format!("simulated plant: robot `{}` has no muscle {index}", R::NAME)))?;
            let muscle = R::muscle(*index, &self.simulation.params)
                .ok_or_else(|| DeviceError(format!("simulated plant: muscle `{}` has no values", info.name)))?;
            muscle.validate().map_err(|e| DeviceError(format!("simulated plant: muscle `{}`: {e}", info.name)))?;
            if muscles.iter().any(|m: &RegulatedMuscle| m.channel == *channel) {
                return Err(DeviceError(format!("simulated plant: analog channel {channel} feeds two muscles")));
            }
            muscles.push(RegulatedMuscle {
                channel: *channel,
                map: map.clone(),
                muscle,
                info: *info,
                index: *index,
                commanded: 0.0,
                reached: 0.0,
            });
        }
        self.muscles = muscles;
        Ok(())
    }

    /// Connects the robot's thrusters to board channels: entry k is the channel of thruster
    /// k of R::THRUSTERS, whose value (N) becomes its thrust. Refuses a wrong count and
    /// channels used twice.
    pub fn connect_thrusters(&mut self, channels: &[u16]) -> Result<(), DeviceError> {
        if channels.len() != R::THRUSTERS.len() {
            return Err(DeviceError(format!(
                "simulated plant: robot `{}` has {} thrusters, {} channels were given",
                R::NAME,
                R::THRUSTERS.len(),
                channels.len()
            )));
        }
        for (k, c) in channels.iter().enumerate() {
            if channels[..k].contains(c) {
                return Err(DeviceError(format!("simulated plant: board channel {c} drives two thrusters")));
            }
        }
        self.thruster_channels = channels.to_vec();
        self.thrusts = vec![0.0; channels.len()];
        Ok(())
    }

    /// The thrusts (N) the thrusters were last sent, in R::THRUSTERS order.
    pub fn thrusts(&self) -> &[f64] {
        &self.thrusts
    }

    /// The muscles' reached pressures (bar), in the order they were connected.
    pub fn muscle_pressures(&self) -> impl Iterator<Item = f64> + '_ {
        self.muscles.iter().map(|m| m.reached)
    }

    /// The muscles' generalized force with their pressures `elapsed` seconds on.
    fn muscle_forces(&self, elapsed: f64) -> SVector<f64, N> {
        let mut force = SVector::zeros();
        for m in &self.muscles {
            m.muscle.add_force(&m.info, m.after(elapsed), &mut force);
        }
        force
    }

    /// Calls `observer` with (t, state) after every period.
    pub fn observe(&mut self, observer: Box<dyn FnMut(f64, &State<N>) + Send>) {
        self.observer = Some(observer);
    }

    /// Reads `sensors` from the plant's true state: each frame at its own time within a
    /// period (the integration stops there), delivered at the period's end once its latency
    /// has passed.
    pub fn attach_sensors(&mut self, sensors: EmulatedSensors<R, N, C>) {
        self.sensors = Some(sensors);
    }

    /// The attached sensors (their frame and loss counts).
    pub fn sensors(&self) -> Option<&EmulatedSensors<R, N, C>> {
        self.sensors.as_ref()
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> Device for SimulatedPlant<R, N, C> {
    fn name(&self) -> &str {
        "simulated plant"
    }

    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        // The commands of period k act from t_k on; first bring the plant up to t_k under the
        // previous commands (zero-order hold), then apply the new ones.
        if t > self.time {
            let elapsed = t - self.time;
            if !self.muscles.is_empty() {
                // The muscles' pressures over the period, from the lag at its middle.
                let forces = self.muscle_forces(0.5 * elapsed);
                self.simulation.set_actuator_forces(&forces);
            }
            let start = self.time;
            if let Some(sensors) = &mut self.sensors {
                while let Some(frame) = sensors.next_sample(t) {
                    if frame > self.time {
                        self.integrator
                            .integrate_to(&mut self.simulation, &mut self.time, &mut self.state, frame)
                            .map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
                    }
                    for m in &self.muscles {
                        self.sampled_pressures[m.index] = m.after(frame - start);
                    }
                    sensors.sample(frame, &self.state, &self.sampled_pressures);
                }
            }
            self.integrator
                .integrate_to(&mut self.simulation, &mut self.time, &mut self.state, t)
                .map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
            if let Some(sensors) = &mut self.sensors {
                sensors.deliver(t);
            }
            for m in &mut self.muscles {
                m.reached = m.after(elapsed);
            }
        }
        let mut switched_off = false;
        for v in values {
            let j = v.channel() as usize;
            match *v {
                DeviceValue::Analog { channel, volts } => {
                    let m = self.muscles.iter_mut().find(|m| m.channel == channel).ok_or_else(|| {
                        DeviceError(format!("simulated plant: no muscle on analog channel {channel}"))
                    })?;
                    if !volts.is_finite() {
                        return Err(DeviceError(format!("simulated plant: analog channel {channel} got {volts} V")));
                    }
                    m.commanded = m.map.bar(volts);
                }
                DeviceValue::Board { channel, value } if self.thruster_channels.contains(&channel) => {
                    if !value.is_finite() {
                        return Err(DeviceError(format!("simulated plant: thruster channel {channel} got {value} N")));
                    }
                    let k = self.thruster_channels.iter().position(|c| *c == channel).unwrap_or(0);
                    self.thrusts[k] = value;
                }
                DeviceValue::Board { value, .. } if j < R::ACTUATED.len() => self.targets[j] = value,
                DeviceValue::Off { .. } if j < R::ACTUATED.len() => switched_off = true,
                _ => {
                    return Err(DeviceError(format!("simulated plant: no actuated joint on {} channel {j}", v.kind())))
                }
            }
        }
        if !self.thruster_channels.is_empty() {
            self.simulation.set_thrusts(&self.thrusts).map_err(DeviceError)?;
        }
        if switched_off {
            // Servos off: the joints go limp.
            self.simulation.clear_joint_targets();
        } else {
            self.simulation.set_joint_targets(&self.targets);
        }
        if let Some(observer) = &mut self.observer {
            observer(self.time, &self.state);
        }
        Ok(())
    }
}

/// Wraps any device and writes every value it is sent, with its time, to CSV
/// (`t,kind,channel,value`). The log is flushed every `flush_every` periods and whenever the
/// device is flushed, so a run stopped midway leaves a complete, readable file.
pub struct Recorder<D: Device, W: Write> {
    /// The device recorded.
    pub inner: D,
    out: BufWriter<W>,
    periods: u64,
    flush_every: u64,
}

impl<D: Device, W: Write> Recorder<D, W> {
    /// Records what `inner` is sent into `out`, flushed every `flush_every` periods.
    pub fn new(inner: D, out: W, flush_every: u64) -> Result<Self, DeviceError> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "t,kind,channel,value").map_err(|e| DeviceError(format!("recorder: {e}")))?;
        Ok(Recorder { inner, out, periods: 0, flush_every: flush_every.max(1) })
    }

    /// Flushes the log and gives the device back.
    pub fn into_inner(mut self) -> Result<D, DeviceError> {
        self.out.flush().map_err(|e| DeviceError(format!("recorder: {e}")))?;
        Ok(self.inner)
    }
}

impl<D: Device, W: Write> Device for Recorder<D, W> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        for v in values {
            // Shortest round-trip formatting: a replay reproduces the run bit for bit.
            writeln!(self.out, "{t},{},{},{}", v.kind(), v.channel(), v.number())
                .map_err(|e| DeviceError(format!("recorder: {e}")))?;
        }
        self.periods += 1;
        if self.periods % self.flush_every == 0 {
            self.out.flush().map_err(|e| DeviceError(format!("recorder: {e}")))?;
        }
        self.inner.write(t, values)
    }

    fn flush(&mut self) -> Result<(), DeviceError> {
        self.out.flush().map_err(|e| DeviceError(format!("recorder: {e}")))?;
        self.inner.flush()
    }
}

/// A recording read back: periods of (t, values) in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// Each period's time (s) and values.
    pub periods: Vec<(f64, Vec<DeviceValue>)>,
}

impl Recording {
    /// Parses a recorder CSV; errors name the line.
    pub fn parse(path: &str, text: &str) -> Result<Recording, DeviceError> {
        let mut periods: Vec<(f64, Vec<DeviceValue>)> = Vec::new();
        for (n, line) in text.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let bad = || DeviceError(format!("{path}:{}: expected `t,kind,channel,value`, got `{line}`", n + 1));
            let fields: Vec<&str> = line.split(',').collect();
            let [t, kind, channel, value] = fields.as_slice() else { return Err(bad()) };
            let t: f64 = t.parse().map_err(|_| bad())?;
            let channel: u16 = channel.parse().map_err(|_| bad())?;
            let value: f64 = value.parse().map_err(|_| bad())?;
            if !t.is_finite() || !value.is_finite() {
                return Err(bad());
            }
            let v = match *kind {
                "analog" => DeviceValue::Analog { channel, volts: value },
                "digital" => DeviceValue::Digital { line: channel, high: value != 0.0 },
                "board" => DeviceValue::Board { channel, value },
                "off" => DeviceValue::Off { channel },
                _ => return Err(bad()),
            };
            match periods.last_mut() {
                Some((last, values)) if *last == t => values.push(v),
                Some((last, _)) if t < *last => {
                    return Err(DeviceError(format!("{path}:{}: time goes backwards", n + 1)));
                }
                _ => periods.push((t, vec![v])),
            }
        }
        Ok(Recording { periods })
    }

    /// Feeds every period to `device` as fast as it takes them.
    pub fn replay(&self, device: &mut dyn Device) -> Result<(), DeviceError> {
        for (t, values) in &self.periods {
            device.write(*t, values)?;
        }
        device.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Sink(Vec<(f64, Vec<DeviceValue>)>);
    impl Device for Sink {
        fn name(&self) -> &str {
            "sink"
        }
        fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
            self.0.push((t, values.to_vec()));
            Ok(())
        }
    }

    #[test]
    fn recording_round_trips_through_the_replayer() {
        let mut buffer = Vec::new();
        {
            let mut recorder = Recorder::new(Sink(Vec::new()), &mut buffer, 1).unwrap();
            recorder
                .write(
                    0.0,
                    &[DeviceValue::Analog { channel: 0, volts: 1.5 }, DeviceValue::Digital { line: 3, high: true }],
                )
                .unwrap();
            recorder.write(0.001, &[DeviceValue::Board { channel: 2, value: -0.25 }]).unwrap();
            recorder.flush().unwrap();
        }
        let text = String::from_utf8(buffer).unwrap();
        let recording = Recording::parse("run.csv", &text).unwrap();
        let mut sink = Sink(Vec::new());
        recording.replay(&mut sink).unwrap();
        assert_eq!(sink.0, recording.periods);
        assert_eq!(sink.0[0].1[1], DeviceValue::Digital { line: 3, high: true });
        assert_eq!(sink.0[1], (0.001, vec![DeviceValue::Board { channel: 2, value: -0.25 }]));
        let e = Recording::parse("run.csv", "t,kind,channel,value\n0.0,analog,x,1\n").unwrap_err();
        assert!(e.0.starts_with("run.csv:2:"), "{e}");
    }
}
