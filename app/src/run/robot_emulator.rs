//! The robot behind the board emulator (`softgen-board-emulator --robot R`): the simulated
//! plant the run configuration wires, stepped one control period per SET frame, whose
//! sensors are emulated as the robot's would be read: those on the board come back in
//! READINGS frames, the motion-capture markers go out as NatNet frames over UDP. With it a
//! host run reads its state only from sensors, as on the robot, through real processes.

use crate::run::config::{NatNetSettings, NatNetTarget, RunConfig, SensorSource};
use crate::run::natnet::NatNetServer;
use crate::support::output::PendingFile;
use softgen_runtime::natnet::{Frame, LabelledMarker, RigidBodyPose};
use softgen_runtime::protocol::BoardReading;
use softgen_runtime::RobotVisitor;
use softgen_runtime::{
    DeviceValue, EmulatedSensors, EmulatingPlant, LoopConfig, Model, Reading, ReadingQueue, RunConfigFile,
};
use std::sync::Arc;

/// Ticks a second of the emulated cameras' clock (Motive's is the host's performance counter).
const CLOCK_FREQUENCY: u64 = 10_000_000;

/// What the robot emulator was asked to emulate.
#[derive(Clone, Debug)]
pub struct RobotEmulatorOptions {
    /// The robot's name.
    pub robot: String,
    /// Run configuration file (None: the robot's own).
    pub config: Option<std::path::PathBuf>,
    /// SET frames a second (None: the configuration's rate).
    pub rate_hz: Option<f64>,
    /// The NatNet version its server speaks.
    pub natnet_version: [u8; 4],
    /// Where the plant's true state is written at every SET (CSV `t,<coordinates>`).
    pub truth: Option<std::path::PathBuf>,
}

/// The robot's side of the board: what a SET does to it, and what it reads back.
pub trait EmulatedRobot {
    /// Applies a SET's values for the next control period and appends the board sensors'
    /// readings that arrived by then (offsets relative to this frame's receipt) to `readings`.
    fn set(&mut self, values: &[DeviceValue], readings: &mut Vec<BoardReading>) -> Result<(), String>;
    /// One line on what was emulated; the truth file written and put in place.
    fn finish(self: Box<Self>) -> Result<String, String>;
}

/// The emulated robot, compiled for each robot by [`App`](crate::App).
pub(crate) struct Build<'a> {
    pub(crate) options: &'a RobotEmulatorOptions,
    /// The robot's own run configuration, if it has one.
    pub(crate) run_config: Option<RunConfigFile>,
}

impl RobotVisitor for Build<'_> {
    type Output = Result<Box<dyn EmulatedRobot>, String>;

    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        let o = self.options;
        let (config, path) = crate::run::session::configured::<R, N, C>(o.config.as_deref(), self.run_config)?;
        let rate_hz = o.rate_hz.unwrap_or(config.rate_hz);
        let loop_config = LoopConfig { rate_hz, duration: 1.0, command_timeout: config.safety.command_timeout };
        loop_config.validate()?;
        // A valve robot's plant reads its valve lines and supply; every other robot's, its
        // servos, regulators and thrusters.
        match R::VALVES.is_empty() {
            true => {
                let plant = crate::run::session::wired_plant::<R, N, C>(&config, &loop_config, &path)?;
                behind_board(plant, &config, &path, o, rate_hz)
            }
            false => {
                let plant = crate::run::session::valve_plant::<R, N, C>(&config, &loop_config, &path)?;
                behind_board(plant, &config, &path, o, rate_hz)
            }
        }
    }
}

/// `plant` behind the board: its sensors emulated, the NatNet server bound if any is a
/// marker or rigid body, its truth written where `o` says.
fn behind_board<R: Model<N, C>, P: EmulatingPlant<R, N, C> + 'static, const N: usize, const C: usize>(
    mut plant: P,
    config: &RunConfig,
    path: &str,
    o: &RobotEmulatorOptions,
    rate_hz: f64,
) -> Result<Box<dyn EmulatedRobot>, String> {
    let (sensors, sources) = robot_sensors::<R, N, C>(config, path)?;
    let queue = Arc::new(ReadingQueue::default());
    let emulated = EmulatedSensors::new(&sensors, plant.params().clone(), Arc::clone(&queue), 0.0, config.sensor_seed)
        .map_err(|e| format!("{path}: {e}"))?;
    plant.attach_sensors(emulated);
    let natnet = match sources.iter().any(|s| matches!(s, SensorSource::NatNet { .. })) {
        true => Some(NatNetServer::bind(config.natnet.server, o.natnet_version, CLOCK_FREQUENCY)?),
        false => None,
    };
    // The plant's true state at every SET, as `softgen run` writes a plant's trajectory.
    let truth = match &o.truth {
        Some(file) => {
            let (pending, write_row) = crate::run::outputs::trajectory_writer::<R, N, C>(file)?;
            plant.observe(Box::new(write_row));
            Some(pending)
        }
        None => None,
    };
    Ok(Box::new(PlantBehindBoard::<P, R, N, C> {
        plant,
        period: 1.0 / rate_hz,
        frames: 0,
        queue,
        arrived: Vec::with_capacity(softgen_runtime::QUEUE_CAPACITY),
        sources,
        natnet,
        natnet_settings: config.natnet.clone(),
        natnet_frames: 0,
        board_readings: 0,
        truth,
        robot: std::marker::PhantomData,
    }))
}

/// The run configuration's sensors that exist on the robot (a NatNet or board source), and
/// their sources.
fn robot_sensors<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    path: &str,
) -> Result<(Vec<softgen_runtime::Sensor>, Vec<SensorSource>), String> {
    let points = softgen_runtime::tracked_point_names::<R, N, C>();
    let coordinates: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
    let muscles: Vec<&str> = R::MUSCLES.iter().map(|m| m.name).collect();
    let mut sensors = Vec::new();
    let mut sources = Vec::new();
    // The board's and the motion capture's: a comedi card is not emulated here.
    let emulated = |s: &SensorSource| matches!(s, SensorSource::NatNet { .. } | SensorSource::Board { .. });
    for entry in config.sensors.iter().filter(|s| emulated(&s.source)) {
        sensors.push(entry.resolve(&points, &coordinates, &muscles)?);
        sources.push(entry.source);
    }
    if sensors.is_empty() {
        return Err(format!(
            "{path}: no sensor has a source on the robot (source = \"natnet\" or \"board\"), so the emulated robot reads nothing"
        ));
    }
    Ok((sensors, sources))
}

struct PlantBehindBoard<P, R, const N: usize, const C: usize> {
    plant: P,
    period: f64,
    /// SET frames taken: the plant's clock is frames * period.
    frames: u64,
    queue: Arc<ReadingQueue>,
    arrived: Vec<Reading>,
    sources: Vec<SensorSource>,
    natnet: Option<NatNetServer>,
    natnet_settings: NatNetSettings,
    natnet_frames: i32,
    board_readings: u64,
    truth: Option<PendingFile>,
    robot: std::marker::PhantomData<R>,
}

impl<R: Model<N, C>, P: EmulatingPlant<R, N, C>, const N: usize, const C: usize> EmulatedRobot
    for PlantBehindBoard<P, R, N, C>
{
    fn set(&mut self, values: &[DeviceValue], readings: &mut Vec<BoardReading>) -> Result<(), String> {
        let t = self.frames as f64 * self.period;
        self.frames += 1;
        self.plant.write(t, values).map_err(|e| e.0)?;
        self.queue.try_drain_into(&mut self.arrived);
        // Markers sampled at one instant are one camera frame.
        let mut frame: Option<Frame> = None;
        let mut arrived = std::mem::take(&mut self.arrived);
        for r in &arrived {
            match self.sources[r.sensor as usize] {
                SensorSource::Board { channel } => {
                    readings.push(BoardReading {
                        channel,
                        offset_us: ((r.stamp - t) * 1e6).round() as i32,
                        value: r.values[0] as f32,
                    });
                    self.board_readings += 1;
                }
                SensorSource::NatNet { target } => {
                    if frame.as_ref().is_some_and(|f| f.timestamp != r.stamp) {
                        self.send_frame(frame.take(), t)?;
                    }
                    let f = frame.get_or_insert_with(|| Frame { timestamp: r.stamp, ..Frame::default() });
                    let position = self.natnet_settings.from_world([r.values[0], r.values[1], r.values[2]]);
                    match target {
                        NatNetTarget::RigidBody(id) => f.rigid_bodies.push(RigidBodyPose {
                            id,
                            position,
                            orientation: [0.0, 0.0, 0.0, 1.0],
                            error: 0.0,
                            tracked: true,
                        }),
                        NatNetTarget::Marker(id) => f.labelled_markers.push(LabelledMarker {
                            id,
                            position,
                            size: 0.014,
                            occluded: false,
                            residual: 0.0,
                        }),
                    }
                }
                SensorSource::Plant | SensorSource::Comedi { .. } => {}
            }
        }
        arrived.clear();
        self.arrived = arrived;
        self.send_frame(frame, t)
    }

    fn finish(self: Box<Self>) -> Result<String, String> {
        let line = format!(
            "robot emulator: {} periods of `{}` ({:.3} s), {} board readings, {} NatNet frames",
            self.frames,
            R::NAME,
            self.frames as f64 * self.period,
            self.board_readings,
            self.natnet_frames
        );
        let PlantBehindBoard { plant, truth, .. } = *self;
        // The plant owns the truth's writer: dropping it writes the last rows.
        drop(plant);
        if let Some(pending) = truth {
            pending.commit()?;
        }
        Ok(line)
    }
}

impl<R: Model<N, C>, P: EmulatingPlant<R, N, C>, const N: usize, const C: usize> PlantBehindBoard<P, R, N, C> {
    /// A camera frame sampled at its time stamp, sent at plant time `now`: its latency is
    /// the time between.
    fn send_frame(&mut self, frame: Option<Frame>, now: f64) -> Result<(), String> {
        let (Some(mut frame), Some(server)) = (frame, &mut self.natnet) else { return Ok(()) };
        self.natnet_frames += 1;
        frame.number = self.natnet_frames;
        let ticks = |s: f64| (s.max(0.0) * CLOCK_FREQUENCY as f64).round() as u64;
        frame.mid_exposure = ticks(frame.timestamp);
        frame.data_received = ticks(now);
        frame.transmit = ticks(now);
        server.send(&frame)?;
        Ok(())
    }
}
