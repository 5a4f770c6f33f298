//! The extended Kalman filter on a valve-driven robot (`StateEstimator::for_valves`): the
//! WPI snake of 001 on its passive wheels, its four segments' curvatures prescribed by their
//! valves' responses, the plant (`ValvePlant`, RK4 at 1 ms) under the paper's valve wave
//! and read by motion capture on three wheels only (120 Hz, 1 mm, 10 ms late, one frame in
//! eight lost). Started 2 cm and 0.05 rad off, the filter must find the base from the
//! markers, keep the valves' coordinates exactly where their responses put them (the
//! commands known, no variance), and stay within its covariance; a sensor on a valve's
//! coordinate is refused by name.

use super::estimation::{sensor, spec_config};
use nalgebra::SVector;
use softgen_generated::WpiSnake;
use softgen_runtime::{
    Device, DeviceValue, EmulatedSensors, EmulatingPlant, EstimatorSettings, Measurement, Model, PressureMap,
    ReadingQueue, Sensor, Simulation, State, StateEstimator, SteeredValveWave, ValveDecisions, ValvePlant, ValveWiring,
};
use std::sync::Arc;

const N: usize = softgen_generated::wpi_snake::DOF;
const C: usize = softgen_generated::wpi_snake::CONTACTS;
type Robot = WpiSnake;
/// The loop's period (s): the run configuration's 1 kHz.
const PERIOD: f64 = 0.001;
/// The filter's start is this far off in x and y (m), and 2.5 times it in yaw (rad).
const OFFSET: f64 = 0.02;
/// The supply parameter's unit (kPa) per bar.
const UNITS_PER_BAR: f64 = 100.0;

fn point(name: &str) -> usize {
    softgen_runtime::tracked_point_names::<Robot, N, C>().iter().position(|n| *n == name).unwrap()
}

fn markers() -> Vec<Sensor> {
    ["wheel1", "wheel3", "wheel5"]
        .iter()
        .map(|m| sensor(m, Measurement::Marker { point: point(m) }, 120.0, 1e-3, 0.01, 0.125))
        .collect()
}

fn start() -> State<N> {
    State::new(SVector::from_iterator(Robot::INITIAL_POSITION.iter().copied()), SVector::zeros())
}

fn simulation() -> Simulation<Robot, N, C> {
    Simulation::new(<Robot as Model<N, C>>::Params::default(), spec_config::<Robot, N, C>(PERIOD)).unwrap()
}

/// The valve lines 0-3 (active high) and the supply regulator on analog 0 (1 bar at 10 V).
fn wiring() -> ValveWiring {
    ValveWiring {
        lines: (0..4).map(|l| (l, true)).collect(),
        supply_channel: 0,
        supply_map: PressureMap::Linear { full_scale_bar: 1.0, volts_min: 0.0, volts_max: 10.0 },
        units_per_bar: UNITS_PER_BAR,
    }
}

fn filter(
    sensors: &[Sensor],
    settings: EstimatorSettings,
    from: &State<N>,
) -> Result<StateEstimator<Robot, N, C>, String> {
    StateEstimator::for_valves(
        simulation(),
        "supply_pressure",
        UNITS_PER_BAR,
        PERIOD,
        sensors,
        settings,
        from,
        0.0,
        PERIOD,
    )
}

/// Runs plant and filter side by side for `seconds` on the paper's wave (1.5 Hz, 54 kPa),
/// the filter started off; returns the RMS base position error (m) over the last half, the
/// largest normalised error of a free coordinate there, the largest error of a valve's
/// coordinate over the whole run, and the filter.
fn run(seconds: f64) -> (f64, f64, f64, StateEstimator<Robot, N, C>) {
    let sensors = markers();
    let queue = Arc::new(ReadingQueue::default());
    let mut plant = ValvePlant::<Robot, N, C>::new(simulation(), start(), PERIOD, "supply_pressure", wiring()).unwrap();
    plant.attach_sensors(EmulatedSensors::new(&sensors, Default::default(), Arc::clone(&queue), 0.0, 5).unwrap());
    let mut from = start();
    from.q[0] += OFFSET;
    from.q[1] -= OFFSET;
    from.q[2] += 2.5 * OFFSET;
    let settings = EstimatorSettings { acceleration_noise: 0.5, ..EstimatorSettings::default() };
    let mut estimator = filter(&sensors, settings, &from).unwrap();
    let decisions = ValveDecisions { pressure: 54.0, frequency: 1.5, offset: 0.0 };
    let wave = SteeredValveWave::new(Robot::VALVE_GAIT.unwrap().delay, 0.0, decisions);
    let (mut squared, mut scored, mut worst, mut driven_worst) = (0.0, 0, 0.0f64, 0.0f64);
    let mut readings = Vec::new();
    let periods = (seconds / PERIOD).round() as usize;
    let mut values = Vec::new();
    let mut commands = [0.0; 5];
    for k in 0..=periods {
        let t = k as f64 * PERIOD;
        readings.clear();
        queue.try_drain_into(&mut readings);
        estimator.take(&readings, t).unwrap();
        estimator.advance_to(t).unwrap();
        values.clear();
        for v in 0..4 {
            let high = wave.state(t, v) > 0.0;
            values.push(DeviceValue::Digital { line: v as u16, high });
            commands[v] = if high { 1.0 } else { -1.0 };
        }
        commands[4] = decisions.pressure / UNITS_PER_BAR;
        values.push(DeviceValue::Analog { channel: 0, volts: 10.0 * commands[4] });
        estimator.set_commands(&commands);
        plant.write(t, &values).unwrap();
        let estimate = estimator.estimate();
        let truth = plant.state;
        for &d in Robot::VALVES {
            driven_worst =
                driven_worst.max((estimate.q[d] - truth.q[d]).abs()).max((estimate.qd[d] - truth.qd[d]).abs());
            assert_eq!(estimator.coordinate_std(d), 0.0, "a valve's coordinate has no variance");
        }
        if t >= 0.5 * seconds {
            squared += (estimate.q - truth.q).fixed_rows::<2>(0).norm_squared();
            scored += 1;
            for i in (0..N).filter(|i| !Robot::VALVES.contains(i)) {
                worst = worst.max((estimate.q[i] - truth.q[i]).abs() / estimator.coordinate_std(i));
            }
        }
    }
    ((squared / scored as f64).sqrt(), worst, driven_worst, estimator)
}

#[test]
fn markers_on_three_wheels_find_the_valve_snakes_base() {
    let (rms, worst, driven_worst, estimator) = run(4.0);
    println!(
        "wpi_snake on its valve wave: base RMS {:.3} mm over the last 2 s, worst {worst:.2} sigma, valves' coordinates within {driven_worst:e}, {} predictions, {} Jacobians, {} updates, {} outliers",
        rms * 1e3,
        estimator.stats.predictions,
        estimator.stats.system_jacobians,
        estimator.stats.updates,
        estimator.stats.outliers
    );
    // Three markers of 1 mm noise at 120 Hz: the base within a millimetre, from 20 mm off.
    assert!(rms < 1e-3, "base RMS {rms} m");
    assert!(worst < 5.0, "an error of {worst} standard deviations");
    // The valves' coordinates follow the same responses to the same commands as the plant's;
    // only the response restarted at every step (the plant: every period) rounds differently.
    assert!(driven_worst < 1e-9, "valve coordinates off by {driven_worst}");
    assert_eq!(estimator.stats.outliers, 0);
    assert!(estimator.stats.updates > 1000);
}

#[test]
fn a_sensor_on_a_valves_coordinate_is_refused() {
    let coordinate = Robot::VALVES[1];
    let mut sensors = markers();
    sensors.push(sensor(
        "bend2",
        Measurement::Coordinate { coordinate, scale: 1.0, offset: 0.0 },
        100.0,
        0.1,
        0.0,
        0.0,
    ));
    let error = filter(&sensors, EstimatorSettings::default(), &start()).err().unwrap();
    assert!(
        error.contains("`bend2`") && error.contains("segment2_curvature") && error.contains("prescribes"),
        "{error}"
    );
    let pressure = sensor("pressure", Measurement::Pressure { muscle: 0 }, 100.0, 0.1, 0.0, 0.0);
    let error = filter(&[markers()[0].clone(), pressure], EstimatorSettings::default(), &start()).err().unwrap();
    assert!(error.contains("pressure"), "{error}");
}
