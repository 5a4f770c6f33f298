//! The extended Kalman filter on the underwater snake against a plant it cannot see: the
//! plant (RK4 at 0.25 ms, its own regulators' lag) under held thrusts and pressures, read by
//! sensors emulated with noise, latency and lost frames. The filter, started 2 cm and 0.05
//! rad off, must converge to within its reported covariance; frames arriving late must
//! correct the past (an estimate with 50 ms latency as good as with none, to a stated
//! factor); and every fault must be named: a sensor that falls silent, values that are
//! non-finite, out of range or stamped backwards, and a sensor whose readings disagree with
//! the model (divergence).

use nalgebra::SVector;
use softgen_generated::UnderwaterSnake;
use softgen_runtime::{
    ControlInput, DeviceValue, EmulatedSensors, EstimatorFault, EstimatorSettings, JointPd, Measurement, Model,
    ParamSet, PressureMap, Reading, ReadingQueue, Sensor, SensorFault, SimulatedPlant, Simulation, SimulationConfig,
    State, StateEstimator,
};
use std::sync::Arc;

const N: usize = 12;
const C: usize = 2;
type Robot = UnderwaterSnake;
/// The loop's period (s).
const PERIOD: f64 = 0.01;
const OFFSET: f64 = 0.02;

fn coordinate(name: &str) -> usize {
    Robot::COORDINATES.iter().position(|c| c.name == name).unwrap()
}

/// A sensor with a 0.1 s timeout and a +-100 range.
pub(super) fn sensor(name: &str, measures: Measurement, rate_hz: f64, noise: f64, latency: f64, lost: f64) -> Sensor {
    Sensor {
        name: name.into(),
        measures,
        rate_hz,
        noise,
        latency,
        lost,
        timeout: 0.1,
        range: [-100.0, 100.0],
        silent_after: None,
    }
}

/// Motion capture on both ends, the IMU's pitch and roll, the six joint strokes and the six
/// pressures: the committed run configuration's set.
fn sensors(latency: f64) -> Vec<Sensor> {
    let mut out = vec![
        sensor("mocap_tail", Measurement::Marker { point: 0 }, 120.0, 1e-3, latency, 0.125),
        sensor("mocap_nose", Measurement::Marker { point: 1 }, 120.0, 1e-3, latency, 0.125),
    ];
    for name in ["base_pitch", "base_roll"] {
        let measures = Measurement::Coordinate { coordinate: coordinate(name), scale: 1.0, offset: 0.0 };
        out.push(sensor(name, measures, 200.0, 0.005, 0.0, 0.0));
    }
    for j in 1..=2 {
        for l in 1..=3 {
            let name = format!("joint{j}_l{l}");
            let measures = Measurement::Coordinate { coordinate: coordinate(&name), scale: 1.0, offset: 0.0 };
            out.push(sensor(&name, measures, 500.0, 1e-4, 0.0, 0.0));
        }
    }
    for m in 0..6 {
        out.push(sensor(&format!("pressure{m}"), Measurement::Pressure { muscle: m }, 1000.0, 0.01, 0.0, 0.0));
    }
    out
}

fn params() -> <Robot as Model<N, C>>::Params {
    let mut p = <Robot as Model<N, C>>::Params::default();
    // The run configuration's neutral set: every body as heavy as the water it displaces.
    p.set("module_mass", 5.0894).unwrap();
    p.set("joint_mass", 5.0894).unwrap();
    p
}

/// Robot `R`'s spec environment, no servos, the loop's period.
pub(super) fn spec_config<R: Model<N, C>, const N: usize, const C: usize>(period: f64) -> SimulationConfig {
    let env = R::ENVIRONMENT;
    SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: period,
    }
}

/// The spec's environment (water, no terrain), no servos, the loop's period.
fn config() -> SimulationConfig {
    spec_config::<Robot, N, C>(PERIOD)
}

fn start() -> State<N> {
    State::new(SVector::from_iterator(Robot::INITIAL_POSITION.iter().copied()), SVector::zeros())
}

const INPUTS: [ControlInput; 2] = [ControlInput::MusclePressures, ControlInput::Thrusts];

/// Pressures (bar) on one side of each joint and forward thrust: the snake bends, swims
/// and turns.
const COMMANDS: [f64; 12] = [3.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0];

/// The plant with regulators on analog 0-5 and thrusters on board 0-5, and its sensors.
fn plant(sensors: &[Sensor], queue: &Arc<ReadingQueue>) -> SimulatedPlant<Robot, N, C> {
    let simulation = Simulation::<Robot, N, C>::new(params(), config()).unwrap();
    let mut plant = SimulatedPlant::new(simulation, start(), 0.00025).unwrap();
    let map = PressureMap::Linear { full_scale_bar: 10.0, volts_min: 0.0, volts_max: 10.0 };
    let regulators: Vec<(u16, usize, PressureMap)> = (0..6).map(|m| (m as u16, m, map.clone())).collect();
    plant.connect_muscles(&regulators).unwrap();
    plant.connect_thrusters(&[0, 1, 2, 3, 4, 5]).unwrap();
    plant.attach_sensors(EmulatedSensors::new(sensors, params(), Arc::clone(queue), 0.0, 7).unwrap());
    plant
}

fn values() -> Vec<DeviceValue> {
    (0..12)
        .map(|k| match k < 6 {
            true => DeviceValue::Analog { channel: k as u16, volts: COMMANDS[k] },
            false => DeviceValue::Board { channel: (k - 6) as u16, value: COMMANDS[k] },
        })
        .collect()
}

fn filter(sensors: &[Sensor], settings: EstimatorSettings, from: &State<N>) -> StateEstimator<Robot, N, C> {
    let model = Simulation::<Robot, N, C>::new(params(), config()).unwrap();
    StateEstimator::new(model, &INPUTS, sensors, settings, from, 0.0, PERIOD).unwrap()
}

/// Runs plant and filter side by side for `seconds` (the filter one period behind, as in
/// the loop) and returns the RMS base position error (m) over the last half, the largest
/// normalised error of any coordinate there (error / reported standard deviation), and
/// the filter.
fn run(latency: f64, seconds: f64) -> (f64, f64, StateEstimator<Robot, N, C>) {
    run_with(latency, seconds, EstimatorSettings { acceleration_noise: 0.1, ..EstimatorSettings::default() })
}

fn run_with(latency: f64, seconds: f64, settings: EstimatorSettings) -> (f64, f64, StateEstimator<Robot, N, C>) {
    use softgen_runtime::Device;
    let sensors = sensors(latency);
    let queue = Arc::new(ReadingQueue::default());
    let mut plant = plant(&sensors, &queue);
    let mut from = start();
    from.q[0] += OFFSET;
    from.q[1] -= OFFSET;
    from.q[3] += 2.5 * OFFSET;
    let mut estimator = filter(&sensors, settings, &from);
    let values = values();
    let (mut squared, mut scored, mut worst) = (0.0, 0, 0.0f64);
    let mut readings = Vec::new();
    let periods = (seconds / PERIOD).round() as usize;
    for k in 0..=periods {
        let t = k as f64 * PERIOD;
        readings.clear();
        queue.try_drain_into(&mut readings);
        estimator.take(&readings, t).unwrap();
        estimator.advance_to(t).unwrap();
        estimator.set_commands(&COMMANDS);
        plant.write(t, &values).unwrap();
        if t >= 0.5 * seconds {
            let estimate = estimator.estimate();
            let error = (estimate.q - plant.state.q).fixed_rows::<3>(0).norm_squared();
            squared += error;
            scored += 1;
            for i in 0..N {
                let e = (estimate.q[i] - plant.state.q[i]).abs() / estimator.coordinate_std(i);
                worst = worst.max(e);
            }
        }
    }
    ((squared / scored as f64).sqrt(), worst, estimator)
}

#[test]
fn the_filter_converges_from_a_wrong_start_to_within_its_covariance() {
    let (rms, worst, estimator) = run(0.01, 3.0);
    println!("position RMS {:.3} mm, worst normalised error {worst:.2}, {:?}", rms * 1e3, estimator.stats);
    // Markers of 1 mm noise per axis on the base at 120 Hz: the estimate, a period ahead
    // of its newest frame, beats one frame (sqrt(3) mm).
    assert!(rms < 3f64.sqrt() * 1e-3, "position RMS {rms}");
    // The covariance it reports is honest: no coordinate strays past 5 of its standard
    // deviations over 150 periods.
    assert!(worst < 5.0, "an error of {worst:.2} standard deviations");
    assert_eq!(estimator.stats.outliers, 0);
    assert_eq!(estimator.stats.late, 0);
    assert!(estimator.stats.pressures > 0);
}

#[test]
fn late_frames_correct_the_past() {
    let (prompt, _, _) = run(0.0, 2.0);
    let (late, worst, estimator) = run(0.05, 2.0);
    // The same frames with a history too short for them: dropped, the position dead-reckoned
    // from the joints, the IMU and the model.
    let short = EstimatorSettings { acceleration_noise: 0.1, history: 0.02, ..EstimatorSettings::default() };
    let (dropped, _, without) = run_with(0.05, 2.0, short);
    println!(
        "position RMS: prompt {:.3} mm, 50 ms late {:.3} mm, late frames dropped {:.3} mm",
        prompt * 1e3,
        late * 1e3,
        dropped * 1e3
    );
    assert_eq!(estimator.stats.late, 0);
    assert!(without.stats.late > 300, "{:?}", without.stats);
    // Frames 50 ms old correct the past and reach the present through the model: a third
    // of the error without them at most, and the present 50 ms further from the newest
    // frame costs at most 3x the error of frames with no delay.
    assert!(late < dropped / 3.0, "late {late}, dropped {dropped}");
    assert!(late < 3.0 * prompt, "late {late}, prompt {prompt}");
    assert!(worst < 5.0, "an error of {worst:.2} standard deviations");
}

/// The filter's cheaper process steps: the step's Jacobian kept for five steps (50 ms) and
/// Newton's iterations stopped at 1e-6 of the rates, a kept Newton matrix kept while it
/// lowers the residual at all. The state is still each implicit step's solution (to the
/// looser tolerance), only the covariance goes through an older Jacobian.
#[test]
fn kept_jacobians_estimate_as_well_for_fewer_system_jacobians() {
    let (exact, _, every_step) = run(0.01, 3.0);
    let kept = EstimatorSettings {
        acceleration_noise: 0.1,
        jacobian_every: 5,
        newton_tolerance: 1e-6,
        newton_contraction: 0.9,
        ..EstimatorSettings::default()
    };
    let (rms, worst, estimator) = run_with(0.01, 3.0, kept);
    println!(
        "position RMS: every step {:.3} mm {:?}, kept {:.3} mm {:?}",
        exact * 1e3,
        every_step.stats,
        rms * 1e3,
        estimator.stats
    );
    assert_eq!(estimator.stats.predictions, every_step.stats.predictions);
    assert_eq!(every_step.stats.linearisations, every_step.stats.predictions);
    assert_eq!(estimator.stats.linearisations, estimator.stats.predictions.div_ceil(5));
    assert!(
        2 * estimator.stats.system_jacobians < every_step.stats.system_jacobians,
        "{} system Jacobians kept, {} every step",
        estimator.stats.system_jacobians,
        every_step.stats.system_jacobians
    );
    // As good as the exact filter to a tenth, and as honest about its covariance.
    assert!(rms < 1.1 * exact, "kept {rms}, every step {exact}");
    assert!(worst < 5.0, "an error of {worst:.2} standard deviations");
}

/// A kind's own process noise reaches its coordinates' covariance and no other's: with no
/// readings, from a certain start, after a second of predictions, the joints' strokes with a
/// tenth of the noise are ten times more certain, the base about as uncertain as with the
/// same noise for all. A kind given twice is refused.
#[test]
fn a_kind_of_coordinate_takes_its_own_process_noise() {
    use softgen_runtime::CoordinateKind;
    let sensors = sensors(0.0);
    // Started certain, so what the covariance holds is the process noise's.
    let uniform = EstimatorSettings {
        acceleration_noise: 0.1,
        initial_position_std: 1e-9,
        initial_velocity_std: 1e-9,
        ..EstimatorSettings::default()
    };
    let by_kind = EstimatorSettings {
        acceleration_noise_by_kind: vec![(CoordinateKind::ActuatorLength, 0.01)],
        ..uniform.clone()
    };
    let stds = |settings: EstimatorSettings| {
        let mut estimator = filter(&sensors, settings, &start());
        estimator.set_commands(&COMMANDS);
        estimator.advance_to(1.0).unwrap();
        (estimator.coordinate_std(coordinate("joint1_l1")), estimator.coordinate_std(coordinate("base_x")))
    };
    let (stroke_uniform, base_uniform) = stds(uniform.clone());
    let (stroke_by_kind, base_by_kind) = stds(by_kind);
    println!("stroke std {stroke_uniform:e} -> {stroke_by_kind:e}, base {base_uniform:e} -> {base_by_kind:e}");
    assert!(stroke_by_kind < 0.5 * stroke_uniform, "{stroke_by_kind} against {stroke_uniform}");
    // The base's own noise is unchanged; what the strokes' noise carried to it through the
    // dynamics is less (measured: 0.91 of it).
    assert!(base_by_kind > 0.8 * base_uniform, "{base_by_kind} against {base_uniform}");
    let twice = EstimatorSettings {
        acceleration_noise_by_kind: vec![
            (CoordinateKind::ActuatorLength, 0.01),
            (CoordinateKind::ActuatorLength, 0.02),
        ],
        ..uniform
    };
    let model = Simulation::<Robot, N, C>::new(params(), config()).unwrap();
    let e = StateEstimator::new(model, &INPUTS, &sensors, twice, &start(), 0.0, PERIOD).err().unwrap();
    assert!(e.contains("acceleration_noise_by_kind.actuator_length is given twice"), "{e}");
}

fn one_marker(settings: EstimatorSettings) -> (Vec<Sensor>, StateEstimator<Robot, N, C>) {
    let sensors = vec![sensor("mocap_tail", Measurement::Marker { point: 0 }, 120.0, 1e-3, 0.0, 0.0)];
    let estimator = filter(&sensors, settings, &start());
    (sensors, estimator)
}

fn tail(stamp: f64, shift: f64) -> Reading {
    let q = start().q;
    Reading { sensor: 0, stamp, values: [q[0] + shift, q[1], q[2]] }
}

#[test]
fn faulty_readings_are_named() {
    let (_, mut estimator) = one_marker(EstimatorSettings::default());
    estimator.take(&[tail(0.0, 0.0)], 0.0).unwrap();
    estimator.advance_to(0.05).unwrap();
    estimator.take(&[tail(0.04, 0.0)], 0.05).unwrap();
    let cases: [(Reading, f64, &str); 4] = [
        (tail(0.03, 0.0), 0.06, "went backwards: t = 0.0300 s after t = 0.0400 s"),
        (Reading { sensor: 0, stamp: 0.05, values: [f64::NAN, 0.0, 0.0] }, 0.06, "non-finite"),
        (tail(0.05, 500.0), 0.06, "outside its range [-100, 100]"),
        // Further ahead than the sensor may stay silent (0.1 s): a clock out of step.
        (tail(0.17, 0.0), 0.06, "stamped t = 0.1700 s, ahead of the loop's clock at 0.0600 s"),
    ];
    for (reading, now, expected) in cases {
        let e = estimator.take(&[reading], now).unwrap_err();
        assert!(matches!(e, EstimatorFault::Sensor(_)) && e.to_string().contains(expected), "{e}");
    }
    // Silent past its timeout (0.1 s after its last frame, at 0.04 s).
    estimator.take(&[], 0.14).unwrap();
    let e = estimator.take(&[], 0.1401).unwrap_err();
    assert_eq!(
        e,
        EstimatorFault::Sensor(SensorFault::Silent { sensor: "mocap_tail".into(), since: 0.04, timeout: 0.1 })
    );
}

/// A loop running late is behind its sensors' clock: a reading stamped after the loop's
/// time waits until the loop passes it, then counts as it would have on time, bit for bit.
#[test]
fn a_reading_ahead_of_a_late_loop_waits_for_it() {
    let (_, mut late) = one_marker(EstimatorSettings::default());
    let (_, mut prompt) = one_marker(EstimatorSettings::default());
    for estimator in [&mut late, &mut prompt] {
        estimator.take(&[tail(0.0, 0.0)], 0.0).unwrap();
        estimator.advance_to(0.01).unwrap();
    }
    late.take(&[tail(0.015, 0.002)], 0.01).unwrap();
    assert_eq!(late.stats.updates, 1, "{:?}", late.stats);
    prompt.take(&[], 0.01).unwrap();
    for estimator in [&mut late, &mut prompt] {
        estimator.advance_to(0.02).unwrap();
    }
    late.take(&[], 0.02).unwrap();
    prompt.take(&[tail(0.015, 0.002)], 0.02).unwrap();
    assert_eq!((late.stats.updates, prompt.stats.updates), (2, 2));
    assert_eq!(late.estimate().q, prompt.estimate().q);
    assert!(late.estimate().q[0] > start().q[0] + 1e-4, "the reading moved the estimate");
}

#[test]
fn readings_the_model_cannot_explain_are_gated_then_called_divergence() {
    let settings = EstimatorSettings { outlier_streak: 5, ..EstimatorSettings::default() };
    let (_, mut estimator) = one_marker(settings);
    // One reading 0.5 m off is an outlier, dropped: the estimate does not move.
    estimator.take(&[tail(0.0, 0.5)], 0.0).unwrap();
    assert_eq!(estimator.stats.outliers, 1);
    assert!((estimator.estimate().q[0] - start().q[0]).abs() < 1e-12);
    // A good one resets the streak; five bad in a row are divergence.
    estimator.take(&[tail(0.001, 0.0)], 0.001).unwrap();
    for k in 0..4 {
        estimator.take(&[tail(0.002 + 1e-3 * k as f64, 0.5)], 0.01).unwrap();
    }
    let e = estimator.take(&[tail(0.009, 0.5)], 0.01).unwrap_err();
    assert!(e.to_string().contains("diverged: 5 readings in a row from sensor `mocap_tail` lie past the gate"), "{e}");
}

#[test]
fn bad_estimator_settings_are_refused() {
    let sensors = sensors(0.0);
    let model = || Simulation::<Robot, N, C>::new(params(), config()).unwrap();
    for (settings, expected) in [
        (EstimatorSettings { step: 0.0, ..EstimatorSettings::default() }, "estimator step must be finite and > 0"),
        (EstimatorSettings { step: 0.2, ..EstimatorSettings::default() }, "at most 0.05 s"),
        (EstimatorSettings { gate: f64::NAN, ..EstimatorSettings::default() }, "estimator gate"),
        (EstimatorSettings { outlier_streak: 0, ..EstimatorSettings::default() }, "outlier_streak"),
        (EstimatorSettings { fault_hold: -1.0, ..EstimatorSettings::default() }, "fault_hold"),
        (EstimatorSettings { jacobian_every: 0, ..EstimatorSettings::default() }, "jacobian_every must be in 1..=1000"),
        (EstimatorSettings { newton_tolerance: 0.0, ..EstimatorSettings::default() }, "newton_tolerance must be in"),
        (
            EstimatorSettings { newton_contraction: 1.0, ..EstimatorSettings::default() },
            "newton_contraction must be in",
        ),
    ] {
        let e = StateEstimator::new(model(), &INPUTS, &sensors, settings, &start(), 0.0, PERIOD).err().unwrap();
        assert!(e.contains(expected), "{e}");
    }
    let pressures_only: Vec<Sensor> = sensors[10..].to_vec();
    let e = StateEstimator::new(model(), &INPUTS, &pressures_only, EstimatorSettings::default(), &start(), 0.0, PERIOD)
        .err()
        .unwrap();
    assert!(e.contains("at least one marker or coordinate sensor"), "{e}");
    let e = StateEstimator::new(
        model(),
        &[ControlInput::ActuatorForces],
        &sensors,
        EstimatorSettings::default(),
        &start(),
        0.0,
        PERIOD,
    )
    .err()
    .unwrap();
    assert!(
        e.contains("takes the commands a robot is sent (servo set points, muscle pressures, thrusts), not forces"),
        "{e}"
    );
    // A pressure sensor needs the muscles' pressures among the inputs.
    let e = StateEstimator::new(
        model(),
        &[ControlInput::Thrusts],
        &sensors,
        EstimatorSettings::default(),
        &start(),
        0.0,
        PERIOD,
    )
    .err()
    .unwrap();
    assert!(e.contains("has 0 muscles (or muscle pressures among the inputs)"), "{e}");
}
