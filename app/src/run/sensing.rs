//! Where a model-predictive run gets its state and sends its commands: the simulated plant
//! (its true state, or the estimator on sensors emulated from it) or the robot on the
//! serial board (the estimator on the board's READINGS and NatNet motion capture), with the
//! recording, trajectory and sensor log each keeps; or the robot on a comedi card (the
//! estimator on the card's analog inputs and NatNet). Both MPC controllers (the gait sampler
//! and box-DDP) run through it, so the state source is chosen in one place.

use crate::run::config::{RunConfig, SensorEntry, SensorSource};
use crate::run::estimation::{EstimatorReport, InLoopEstimator};
use crate::run::natnet::NatNetReader;
use crate::run::outputs::{finish, keep_output, open_comedi_card, recorded_plant, ComediCard};
use crate::run::request::{RunOptions, RunReport};
use crate::run::serial::{BoardSensors, SerialDevice};
use crate::support::output::PendingFile;
use nalgebra::SVector;
use softgen_runtime::{
    ActuatorCommand, AnalogInput, AnalogSampler, Channel, Device, DeviceError, DeviceValue, EmulatedSensors,
    EmulatingPlant, LoopOutcome, Mailbox, Model, OutputChain, ReadingQueue, Recorder, SafetyFault, Sensor, State,
    StateEstimator,
};
use std::sync::Arc;

/// Either device of a run: the simulated plant or the robot.
pub(crate) enum Either<P, D> {
    Plant(P),
    Robot(D),
}

impl<P: Device, D: Device> Device for Either<P, D> {
    fn name(&self) -> &str {
        match self {
            Either::Plant(p) => p.name(),
            Either::Robot(d) => d.name(),
        }
    }
    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        match self {
            Either::Plant(p) => p.write(t, values),
            Either::Robot(d) => d.write(t, values),
        }
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        match self {
            Either::Plant(p) => p.flush(),
            Either::Robot(d) => d.flush(),
        }
    }
}

/// The robot's device: the serial board or the comedi card.
pub(crate) enum RobotDevice {
    Board(SerialDevice),
    Card(ComediCard),
}

impl Device for RobotDevice {
    fn name(&self) -> &str {
        match self {
            RobotDevice::Board(b) => b.name(),
            RobotDevice::Card(c) => c.name(),
        }
    }
    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        match self {
            RobotDevice::Board(b) => b.write(t, values),
            RobotDevice::Card(c) => c.write(t, values),
        }
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        match self {
            RobotDevice::Board(b) => b.flush(),
            RobotDevice::Card(c) => c.flush(),
        }
    }
}

/// The estimator a run reads its state from: its sensors, their entries in the run
/// configuration (sources, calibrations) and the filter.
pub(crate) type Estimation<R, const N: usize, const C: usize> =
    (Vec<Sensor>, Vec<SensorEntry>, StateEstimator<R, N, C>);

/// A run's device: the recorded plant `P` (the simulated plant, or a valve robot's) or the
/// recorded board or card.
pub(crate) type RunDevice<P> = Either<Recorder<P, std::fs::File>, Recorder<RobotDevice, std::fs::File>>;

/// A run's state source and the files it keeps (its device apart, for the loop to own).
pub(crate) struct Sensing<R: Model<N, C>, const N: usize, const C: usize> {
    pending_record: PendingFile,
    pending_trajectory: Option<PendingFile>,
    estimator: Option<InLoopEstimator<R, N, C>>,
    pending_log: Option<PendingFile>,
    natnet: Option<NatNetReader>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Sensing<R, N, C> {
    /// The robot on the serial board or comedi card of `o` (state estimated from its
    /// sensors), or the
    /// plant `plant` builds: its true state goes to `post_measured`, or, with `estimation`,
    /// its emulated sensors to the estimator (whose truth it then scores against).
    /// `commands` is the number of actuator commands a period sends.
    pub(crate) fn new<P: EmulatingPlant<R, N, C>>(
        o: &RunOptions,
        config: &RunConfig,
        path: &str,
        estimation: Option<Estimation<R, N, C>>,
        commands: usize,
        plant: impl FnOnce() -> Result<P, String>,
        mut post_measured: impl FnMut(f64, &State<N>) + Send + 'static,
    ) -> Result<(RunDevice<P>, Self), String> {
        let truth = Arc::new(Mailbox::<(f64, State<N>)>::new());
        let queue = Arc::new(ReadingQueue::default());
        let estimated = estimation.is_some();
        let mut truth_params = None;
        let on_robot = o.on_robot();
        let (filter, natnet, device, pending_record, pending_trajectory) = match (on_robot, estimation) {
            (true, None) => {
                return Err("on the robot the mpc controller's state is estimated: the run needs sensors".into())
            }
            (true, Some((sensors, entries, filter))) => {
                let (robot, natnet) = robot_sensors(o, config, &sensors, &entries, &queue)?;
                let (pending_record, record) = PendingFile::create(&o.record)?;
                let device = Either::Robot(Recorder::new(robot, record, 100).map_err(|e| e.0)?);
                (Some(filter), natnet, device, pending_record, None)
            }
            (false, estimation) => {
                let mut plant = plant()?;
                let filter = match estimation {
                    Some((sensors, _, filter)) => {
                        let emulated = EmulatedSensors::new(
                            &sensors,
                            plant.params().clone(),
                            Arc::clone(&queue),
                            0.0,
                            config.sensor_seed,
                        )
                        .map_err(|e| format!("{path}: {e}"))?;
                        plant.attach_sensors(emulated);
                        truth_params = Some(plant.params().clone());
                        Some(filter)
                    }
                    None => None,
                };
                let truth_post = Arc::clone(&truth);
                let (device, pending_record, pending_trajectory) = recorded_plant(plant, o, move |t, x| {
                    if estimated {
                        truth_post.try_post((t, *x));
                    } else {
                        post_measured(t, x);
                    }
                })?;
                (filter, None, Either::Plant(device), pending_record, Some(pending_trajectory))
            }
        };
        let mut pending_log = None;
        let estimator = match filter {
            Some(filter) => {
                let mut estimator =
                    InLoopEstimator::new(filter, queue, truth, config.estimator.fault_hold, commands, config.safety)?;
                if let Some(params) = truth_params {
                    estimator.score_markers(params);
                }
                let (pending, file) = PendingFile::create(&o.sensor_log)?;
                estimator.log_to(file)?;
                pending_log = Some(pending);
                Some(estimator)
            }
            None => None,
        };
        Ok((device, Sensing { pending_record, pending_trajectory, estimator, pending_log, natnet }))
    }

    /// The period at `t`: takes the readings that arrived and posts the estimate to
    /// `measured`, the planner's state (on the plant's truth the plant posts it). After an
    /// estimator fault, returns the commands to hold (the last the safety filter passed).
    pub(crate) fn sense(&mut self, t: f64, measured: &Mailbox<(f64, State<N>)>) -> Result<Option<&[f64]>, String> {
        if let Some(reader) = &mut self.natnet {
            reader.align_clock(t);
            if let Some(e) = reader.failure() {
                return Err(e);
            }
        }
        let Some(estimator) = &mut self.estimator else { return Ok(None) };
        match estimator.estimate(t)? {
            Some(state) => {
                measured.try_post((t, state));
                Ok(None)
            }
            None => Ok(Some(estimator.held())),
        }
    }

    /// Scores the estimate from `t` on (the controller's task start), the whole run beside.
    pub(crate) fn score_from(&mut self, t: f64) {
        if let Some(estimator) = &mut self.estimator {
            estimator.score_from(t);
        }
    }

    /// Starts the servo set points' rate limit from the robot's starting pose, in the output
    /// chain's safety filter and in the estimator's copy of it, which must pass the same
    /// commands.
    pub(crate) fn start_servos_from_rest(&mut self, chain: &mut OutputChain) {
        for (k, channel) in chain.channels.iter().enumerate() {
            let (Channel::ServoBoard { .. }, Some(&coordinate)) = (channel, R::ACTUATED.get(k)) else { continue };
            let angle = R::INITIAL_POSITION[coordinate];
            chain.filter.start_from(k, angle);
            if let Some(estimator) = &mut self.estimator {
                estimator.start_command_from(k, angle);
            }
        }
    }

    /// The commands the period sends, `dt` after the last: the estimator's inputs.
    pub(crate) fn sent(&mut self, commands: &[ActuatorCommand], dt: f64) -> Result<(), String> {
        match &mut self.estimator {
            Some(estimator) => estimator.sent(commands, dt),
            None => Ok(()),
        }
    }

    /// Ends the run: the devices closed, the files kept (as `.failed.csv` after a fault),
    /// the readers' lines printed. Returns the run's report, the plant's last coordinates
    /// (on the plant) and the estimator's report (when it estimated).
    pub(crate) fn finish<P: EmulatingPlant<R, N, C>>(
        mut self,
        device: RunDevice<P>,
        outcome: LoopOutcome,
        safe: Result<(), SafetyFault>,
        chain: &OutputChain,
    ) -> Result<(RunReport, Option<SVector<f64, N>>, Option<EstimatorReport>), String> {
        let natnet_line = self.natnet.take().map(|reader| reader.line());
        let (end, closed, board_line) = match device {
            Either::Plant(device) => {
                let plant = device.into_inner();
                (plant.as_ref().ok().map(|p| p.coordinates()), plant.map(drop), None)
            }
            Either::Robot(device) => {
                let robot = device.into_inner();
                let line = robot.as_ref().ok().map(|robot| match robot {
                    RobotDevice::Board(b) => {
                        let c = b.counts;
                        format!(
                            "board: protocol version {}, {} readings taken, {} of channels no sensor reads, {} unstamped",
                            b.version(),
                            c.taken,
                            c.unread,
                            c.unstamped
                        )
                    }
                    RobotDevice::Card(card) => format!("comedi: {} analog input readings", card.samples()),
                });
                (None, robot.map(drop), line)
            }
        };
        let logged = self.estimator.as_mut().map_or(Ok(()), |e| e.finish_log());
        let run = finish(outcome, safe, chain, closed, self.pending_record, self.pending_trajectory)?;
        for line in natnet_line.iter().chain(board_line.iter()) {
            println!("{line}");
        }
        if let Some(pending) = self.pending_log {
            logged?;
            let failed = run.fault.as_ref().is_some_and(|f| !matches!(f, SafetyFault::Signal(_)));
            keep_output(pending, "sensor log", failed)?;
        }
        Ok((run, end, self.estimator.as_ref().map(|e| e.report())))
    }
}

/// The robot and its sensors: the serial board of `o`, reading the board's sensor channels,
/// or its comedi card, reading the card's analog inputs through their calibrations; and the
/// NatNet server of the configuration if any sensor is a rigid body or labelled marker it
/// streams. Every
/// reading goes to `queue`.
fn robot_sensors(
    o: &RunOptions,
    config: &RunConfig,
    sensors: &[Sensor],
    entries: &[SensorEntry],
    queue: &Arc<ReadingQueue>,
) -> Result<(RobotDevice, Option<NatNetReader>), String> {
    let mut channels = Vec::new();
    let mut names = Vec::new();
    let mut targets = Vec::new();
    let mut inputs = Vec::new();
    for (k, (sensor, entry)) in sensors.iter().zip(entries).enumerate() {
        match (entry.source, &entry.calibration) {
            (SensorSource::Board { channel }, _) => {
                channels.push((channel, k as u16));
                names.push(sensor.name.clone());
            }
            (SensorSource::Comedi { channel }, Some(calibration)) => inputs.push(AnalogInput {
                channel,
                sensor: k as u16,
                calibration: calibration.clone(),
                rate_hz: sensor.rate_hz,
            }),
            (SensorSource::NatNet { target }, _) => targets.push((target, k as u16)),
            (SensorSource::Comedi { .. }, None) | (SensorSource::Plant, _) => {}
        }
    }
    let robot = match (&o.serial_port, &o.comedi_device) {
        (Some(port), _) => {
            if let Some(input) = inputs.first() {
                return Err(format!(
                    "sensor `{}` is on a comedi analog input, and the run drives the serial board",
                    sensors[input.sensor as usize].name
                ));
            }
            let board_sensors =
                (!channels.is_empty()).then(|| BoardSensors { channels, names, queue: Arc::clone(queue) });
            RobotDevice::Board(SerialDevice::open(port, o.ack_timeout, board_sensors)?)
        }
        (None, Some(path)) => {
            if let Some(name) = names.first() {
                return Err(format!("sensor `{name}` is on the serial board, and the run drives a comedi card"));
            }
            let sampler = match inputs.is_empty() {
                true => None,
                false => Some(AnalogSampler::new(inputs, Arc::clone(queue))?),
            };
            RobotDevice::Card(open_comedi_card(path, &config.channels, sampler)?)
        }
        (None, None) => return Err("the robot's sensors need a device: --device serial or comedi".into()),
    };
    let natnet = match targets.is_empty() {
        true => None,
        false => Some(NatNetReader::connect(&config.natnet, targets, Arc::clone(queue))?),
    };
    Ok((robot, natnet))
}
