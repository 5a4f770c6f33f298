//! Criterion benches of the state estimator on the underwater snake with the committed run
//! configuration's sixteen sensors (motion capture at 120 Hz, 10 ms late, one frame in
//! eight lost; IMU, joint strokes, pressures): one prediction (the implicit step with its
//! Jacobian and the covariance through it), and one second of the loop's periods (every
//! reading taken, late frames re-filtered, the estimate predicted to each period), the
//! readings recorded once from the simulated plant under held commands. A period's cost is
//! the second's over 100.
//!
//! Run with `cargo bench --bench estimation`; README.md lists the figures.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use nalgebra::SVector;
use softgen::papers::underwater_snake::{neutral_params, swimming_simulation};
use softgen::RunConfig;
use softgen_generated::UnderwaterSnake;
use softgen_runtime::{
    ControlInput, CoordinateKind, Device, DeviceValue, EmulatedSensors, Model, PressureMap, Reading, ReadingQueue,
    Sensor, SimulatedPlant, State, StateEstimator,
};
use std::sync::Arc;

const N: usize = softgen_generated::underwater_snake::DOF;
const C: usize = softgen_generated::underwater_snake::CONTACTS;
const PERIOD: f64 = 0.01;
/// Pressures (bar) and thrusts (N): the snake bends, swims and turns.
const COMMANDS: [f64; 12] = [3.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0];

fn estimation(c: &mut Criterion) {
    type R = UnderwaterSnake;
    let actuated: Vec<(&str, softgen::Drives)> = R::MUSCLES
        .iter()
        .map(|m| (m.name, softgen::Drives::Coordinate(CoordinateKind::ActuatorLength)))
        .chain(R::THRUSTERS.iter().map(|t| (t.name, softgen::Drives::Thrust)))
        .collect();
    let file = softgen::run_config_of(R::NAME).expect("the swimmer has a run configuration");
    let config = RunConfig::parse(file.path, file.text, R::NAME, &actuated).unwrap();
    let points: Vec<&str> = R::CONTACT_POINTS.iter().map(|p| p.name).collect();
    let coordinates: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
    let muscles: Vec<&str> = R::MUSCLES.iter().map(|m| m.name).collect();
    let sensors: Vec<Sensor> =
        config.sensors.iter().map(|s| s.resolve(&points, &coordinates, &muscles).unwrap()).collect();
    let p = neutral_params();
    let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    // One second of readings, period by period, from the plant under the held commands.
    let queue = Arc::new(ReadingQueue::default());
    let mut plant = SimulatedPlant::new(swimming_simulation(&p, PERIOD).unwrap(), start, 0.00025).unwrap();
    let map = PressureMap::Linear { full_scale_bar: 10.0, volts_min: 0.0, volts_max: 10.0 };
    plant.connect_muscles(&(0..6).map(|m| (m as u16, m, map.clone())).collect::<Vec<_>>()).unwrap();
    plant.connect_thrusters(&[0, 1, 2, 3, 4, 5]).unwrap();
    plant.attach_sensors(EmulatedSensors::new(&sensors, p.clone(), Arc::clone(&queue), 0.0, 1).unwrap());
    let values: Vec<DeviceValue> = (0..12)
        .map(|k| match k < 6 {
            true => DeviceValue::Analog { channel: k as u16, volts: COMMANDS[k] },
            false => DeviceValue::Board { channel: (k - 6) as u16, value: COMMANDS[k] },
        })
        .collect();
    let mut periods: Vec<Vec<Reading>> = Vec::new();
    for k in 0..=100 {
        let mut readings = Vec::new();
        queue.try_drain_into(&mut readings);
        periods.push(readings);
        plant.write(k as f64 * PERIOD, &values).unwrap();
    }
    let inputs = [ControlInput::MusclePressures, ControlInput::Thrusts];
    let filter = || {
        let model = swimming_simulation(&p, PERIOD).unwrap();
        let mut filter =
            StateEstimator::<R, N, C>::new(model, &inputs, &sensors, config.estimator.clone(), &start, 0.0, PERIOD)
                .unwrap();
        filter.set_commands(&COMMANDS);
        filter
    };
    let mut predicting = filter();
    let mut t = 0.0;
    c.bench_function("estimator (underwater snake): one prediction", |b| {
        b.iter(|| {
            t += PERIOD;
            predicting.advance_to(t).unwrap();
        })
    });
    c.bench_function("estimator (underwater snake): one second of sensors, 100 periods", |b| {
        b.iter_batched(
            filter,
            |mut filter| {
                for (k, readings) in periods.iter().enumerate() {
                    let t = k as f64 * PERIOD;
                    filter.take(readings, t).unwrap();
                    filter.advance_to(t).unwrap();
                    filter.set_commands(&COMMANDS);
                }
                filter
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, estimation);
criterion_main!(benches);
