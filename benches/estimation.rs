//! Criterion benches of the state estimator on the underwater snake with the committed run
//! configuration's sixteen sensors (motion capture at 120 Hz, 10 ms late, one frame in
//! eight lost; IMU, joint strokes, pressures): one prediction (the implicit step with its
//! Jacobian and the covariance through it), and one second of the loop's periods (every
//! reading taken, late frames re-filtered, the estimate predicted to each period), the
//! readings recorded once from the simulated plant under held commands. A period's cost is
//! the second's over 100; once with the configuration's filter settings (the step's
//! Jacobian kept for five steps), once with the defaults (a Jacobian every step, Newton's
//! iterations to 1e-10).
//!
//! The soft snake rolling on its carpet (the state of `mpc-000-roll-aside` 3 s in, its nine
//! muscles at that instant's pressures), at the estimation issue's 1 kHz: one prediction of
//! 1 ms, and a tenth of a second of the loop's periods with motion capture on its three
//! markers (120 Hz, 1 mm, 10 ms late, one frame in eight lost), an IMU's pitch and roll
//! (200 Hz) and the nine pressures (1 kHz), a period's cost being that over 100; the plant
//! with the paper's contact damping, the filter's model with Hunt and Crossley's; once with
//! the step's Jacobian and Newton's iterations as in a 100 Hz loop, once with the Jacobian
//! kept for ten steps and Newton stopped at 1e-4, and with that and the configuration's
//! process noise per kind of coordinate.
//!
//! The valve-driven WPI snake at its 1 kHz on the paper's valve wave, its curvatures
//! prescribed by the valves (`StateEstimator::for_valves`), motion capture on three wheels.
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
    let filter = |settings: softgen_runtime::EstimatorSettings| {
        let model = swimming_simulation(&p, PERIOD).unwrap();
        let mut filter =
            StateEstimator::<R, N, C>::new(model, &inputs, &sensors, settings, &start, 0.0, PERIOD).unwrap();
        filter.set_commands(&COMMANDS);
        filter
    };
    let names = (
        "estimator (underwater snake): one prediction",
        "estimator (underwater snake): one second of sensors, 100 periods",
    );
    bench_filter(c, names, || filter(config.estimator.clone()), &periods, &COMMANDS, PERIOD);
    // The same with the step's Jacobian at every step and Newton's iterations to 1e-10 (the
    // defaults), against the configuration's kept Jacobians.
    let every_step = softgen_runtime::EstimatorSettings {
        jacobian_every: 1,
        newton_tolerance: 1e-10,
        newton_contraction: 0.3,
        ..config.estimator.clone()
    };
    let names = (
        "estimator (underwater snake, Jacobian every step): one prediction",
        "estimator (underwater snake, Jacobian every step): one second of sensors, 100 periods",
    );
    bench_filter(c, names, || filter(every_step.clone()), &periods, &COMMANDS, PERIOD);
}

/// One prediction of `period` (`names.0`), and `periods`' readings taken period by period
/// under the held `commands` (`names.1`), each run from a fresh `filter`.
fn bench_filter<R: Model<N, C>, const N: usize, const C: usize>(
    c: &mut Criterion,
    names: (&str, &str),
    filter: impl Fn() -> StateEstimator<R, N, C>,
    periods: &[Vec<Reading>],
    commands: &[f64],
    period: f64,
) {
    let mut predicting = filter();
    let mut t = 0.0;
    c.bench_function(names.0, |b| {
        b.iter(|| {
            t += period;
            predicting.advance_to(t).unwrap();
        })
    });
    c.bench_function(names.1, |b| {
        b.iter_batched(
            &filter,
            |mut filter| {
                for (k, readings) in periods.iter().enumerate() {
                    let t = k as f64 * period;
                    filter.take(readings, t).unwrap();
                    filter.advance_to(t).unwrap();
                    filter.set_commands(commands);
                }
                if std::env::var("STATS").is_ok() {
                    eprintln!("{:?}", filter.stats);
                }
                filter
            },
            BatchSize::LargeInput,
        )
    });
}

fn soft_snake_estimation(c: &mut Criterion) {
    use softgen::papers::soft_snake::mpc::{planning_simulation, run_roll_aside, RollAsideTask};
    use softgen::papers::soft_snake::rolling::rolling_simulation;
    use softgen_generated::SoftSnake as R;
    use softgen_runtime::{EstimatorSettings, Measurement};
    const N: usize = softgen_generated::soft_snake::DOF;
    const C: usize = softgen_generated::soft_snake::CONTACTS;
    const PERIOD: f64 = 0.001;
    let task = RollAsideTask::new();
    let run = run_roll_aside(&RollAsideTask { duration: 3.0, ..task.clone() }).unwrap();
    let last = run.samples.last().unwrap();
    let start = last.state;
    let pressures = last.pressures;
    let sensor = |name: &str, measures, rate_hz, noise, latency, lost| Sensor {
        name: name.to_string(),
        measures,
        rate_hz,
        noise,
        latency,
        lost,
        timeout: 0.1,
        range: [-100.0, 100.0],
        silent_after: None,
    };
    let tracked = softgen_runtime::tracked_point_names::<R, N, C>();
    let mut sensors: Vec<Sensor> = ["section1_tip", "section2_tip", "head"]
        .iter()
        .map(|m| {
            let point = tracked.iter().position(|n| n == m).expect("the spec's markers");
            sensor(m, Measurement::Marker { point }, 120.0, 1e-3, 0.01, 0.125)
        })
        .collect();
    for name in ["base_pitch", "base_roll"] {
        let coordinate = R::COORDINATES.iter().position(|c| c.name == name).unwrap();
        sensors.push(sensor(
            name,
            Measurement::Coordinate { coordinate, scale: 1.0, offset: 0.0 },
            200.0,
            0.005,
            0.0,
            0.0,
        ));
    }
    for m in 0..R::MUSCLES.len() {
        let mut pressure = sensor(R::MUSCLES[m].name, Measurement::Pressure { muscle: m }, 1000.0, 0.01, 0.0, 0.0);
        pressure.range = [-1.0, 100.0];
        sensors.push(pressure);
    }
    // A tenth of a second of readings, period by period, from the plant under the held
    // pressures (RK4 at 0.1 ms on the rolling runs' model, the paper's contact damping).
    let queue = Arc::new(ReadingQueue::default());
    let mut plant = SimulatedPlant::new(rolling_simulation(&task.rolling).unwrap(), start, 1e-4).unwrap();
    let map = PressureMap::Linear { full_scale_bar: 10.0, volts_min: 0.0, volts_max: 10.0 };
    plant.connect_muscles(&(0..9).map(|m| (m as u16, m, map.clone())).collect::<Vec<_>>()).unwrap();
    let params = plant.simulation.params.clone();
    plant.attach_sensors(EmulatedSensors::new(&sensors, params, Arc::clone(&queue), 0.0, 1).unwrap());
    let values: Vec<DeviceValue> =
        (0..9).map(|k| DeviceValue::Analog { channel: k as u16, volts: pressures[k] }).collect();
    let mut periods: Vec<Vec<Reading>> = Vec::new();
    for k in 0..=100 {
        let mut readings = Vec::new();
        queue.try_drain_into(&mut readings);
        periods.push(readings);
        plant.write(k as f64 * PERIOD, &values).unwrap();
    }
    // The filter's model: the planner's, its contact damped by Hunt and Crossley's law
    // (h = 100 s/m) in place of the paper's damper. Undamped, a filter of 1 ms steps keeps
    // the carpet's stiffness ringing and diverges at the landing after the drop; the
    // paper's damper, which switches on at touchdown, stalls its Newton iterations there.
    let model = || {
        let mut simulation = planning_simulation(&task).unwrap();
        simulation.config.contact.damping = 0.0;
        simulation.config.contact.dissipation = 100.0;
        simulation
    };
    let filter = |settings: EstimatorSettings| {
        let mut filter = StateEstimator::<R, N, C>::new(
            model(),
            &[ControlInput::MusclePressures],
            &sensors,
            settings,
            &start,
            0.0,
            PERIOD,
        )
        .unwrap();
        filter.set_commands(&pressures);
        filter
    };
    let exact = EstimatorSettings { step: PERIOD, ..EstimatorSettings::default() };
    let names = (
        "estimator (soft snake, 1 kHz): one prediction of 1 ms",
        "estimator (soft snake, 1 kHz): 0.1 s of sensors, 100 periods",
    );
    bench_filter(c, names, || filter(exact.clone()), &periods, &pressures, PERIOD);
    // The step's Jacobian once every 10 ms, as a filter in a 100 Hz loop evaluates it, and
    // Newton's iterations to 1e-4 of the rates, keeping a matrix that lowers the residual
    // at all.
    let fast =
        EstimatorSettings { jacobian_every: 10, newton_tolerance: 1e-4, newton_contraction: 0.9, ..exact.clone() };
    let names = (
        "estimator (soft snake, 1 kHz, kept Jacobians): one prediction of 1 ms",
        "estimator (soft snake, 1 kHz, kept Jacobians): 0.1 s of sensors, 100 periods",
    );
    bench_filter(c, names, || filter(fast.clone()), &periods, &pressures, PERIOD);
    // With the run configuration's process noise as well (0.2, the muscles' lengths 0.02 and
    // the tail's position 0.1): smaller corrections of the lengths.
    let configured = EstimatorSettings {
        acceleration_noise: 0.2,
        acceleration_noise_by_kind: vec![
            (CoordinateKind::ActuatorLength, 0.02),
            (CoordinateKind::BaseTranslation, 0.1),
        ],
        ..fast.clone()
    };
    let names = (
        "estimator (soft snake, 1 kHz, kept Jacobians, process noise by kind): one prediction of 1 ms",
        "estimator (soft snake, 1 kHz, kept Jacobians, process noise by kind): 0.1 s of sensors, 100 periods",
    );
    bench_filter(c, names, || filter(configured.clone()), &periods, &pressures, PERIOD);
}

/// The valve-driven WPI snake at its 1 kHz on the paper's valve wave (1.5 Hz, 54 kPa): its
/// filter's process model prescribes the curvatures by the valves' responses and steps the
/// base by RK4 (`StateEstimator::for_valves`), with the committed configuration's motion
/// capture on three wheels; one prediction of 1 ms, and a tenth of a second of periods with
/// each period's valve states as the loop sends them.
fn wpi_snake_estimation(c: &mut Criterion) {
    use softgen::{Drives, RunConfig};
    use softgen_generated::WpiSnake as R;
    use softgen_runtime::{Simulation, SimulationConfig, SteeredValveWave, ValveDecisions, ValvePlant, ValveWiring};
    const N: usize = softgen_generated::wpi_snake::DOF;
    const C: usize = softgen_generated::wpi_snake::CONTACTS;
    const PERIOD: f64 = 0.001;
    // Each valve pair by the segment it bends, then the supply: the channels' order.
    let actuated: Vec<(&str, Drives)> = R::VALVES
        .iter()
        .map(|&i| (R::COORDINATES[i].name.strip_suffix("_curvature").unwrap(), Drives::Valve))
        .chain(std::iter::once(("supply", Drives::Supply)))
        .collect();
    let file = softgen::run_config_of(R::NAME).expect("the WPI snake has a run configuration");
    let config = RunConfig::parse(file.path, file.text, R::NAME, &actuated).unwrap();
    let points = softgen_runtime::tracked_point_names::<R, N, C>();
    let coordinates: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
    let sensors: Vec<Sensor> = config.sensors.iter().map(|s| s.resolve(&points, &coordinates, &[]).unwrap()).collect();
    let env = R::ENVIRONMENT;
    let simulation = || {
        let config = SimulationConfig {
            contact: env.contact_law(),
            terrain: env.terrain,
            gait: None,
            servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
            admittance: None,
            control_period: PERIOD,
        };
        Simulation::<R, N, C>::new(Default::default(), config).unwrap()
    };
    let start = State::<N>::new(SVector::zeros(), SVector::zeros());
    let wiring = ValveWiring {
        lines: (0..4).map(|l| (l, true)).collect(),
        supply_channel: 0,
        supply_map: PressureMap::Linear { full_scale_bar: 1.0, volts_min: 0.0, volts_max: 10.0 },
        units_per_bar: 100.0,
    };
    let queue = Arc::new(ReadingQueue::default());
    let mut plant = ValvePlant::<R, N, C>::new(simulation(), start, PERIOD, "supply_pressure", wiring).unwrap();
    softgen_runtime::EmulatingPlant::attach_sensors(
        &mut plant,
        EmulatedSensors::new(&sensors, Default::default(), Arc::clone(&queue), 0.0, 1).unwrap(),
    );
    let decisions = ValveDecisions { pressure: 54.0, frequency: 1.5, offset: 0.0 };
    let wave = SteeredValveWave::new(R::VALVE_GAIT.unwrap().delay, 0.0, decisions);
    // A second of the wave first, so the tenth benched is one of walking, then its periods.
    let mut periods: Vec<(Vec<Reading>, [f64; 5])> = Vec::new();
    // The configuration's filter from `from` at `t0`: the supply in kPa, RK4 at the period.
    let filter = |from: &State<N>, t0: f64| {
        let settings = config.estimator.clone();
        StateEstimator::<R, N, C>::for_valves(
            simulation(),
            "supply_pressure",
            100.0,
            PERIOD,
            &sensors,
            settings,
            from,
            t0,
            PERIOD,
        )
        .unwrap()
    };
    let mut warm = filter(&start, 0.0);
    for k in 0..=1100 {
        let t = k as f64 * PERIOD;
        let mut readings = Vec::new();
        queue.try_drain_into(&mut readings);
        let mut commands = [0.0; 5];
        let mut values = Vec::new();
        for v in 0..4 {
            let high = wave.state(t, v) > 0.0;
            commands[v] = if high { 1.0 } else { -1.0 };
            values.push(DeviceValue::Digital { line: v as u16, high });
        }
        commands[4] = 0.54;
        values.push(DeviceValue::Analog { channel: 0, volts: 5.4 });
        plant.write(t, &values).unwrap();
        if k < 1000 {
            warm.take(&readings, t).unwrap();
            warm.advance_to(t).unwrap();
            warm.set_commands(&commands);
        } else {
            periods.push((readings, commands));
        }
    }
    c.bench_function("estimator (wpi snake, 1 kHz): 0.1 s of sensors, 100 periods", |b| {
        b.iter_batched(
            || {
                let mut filter = filter(&warm.estimate(), 1.0);
                filter.set_commands(&periods[0].1);
                filter
            },
            |mut filter| {
                for (k, (readings, commands)) in periods.iter().enumerate() {
                    let t = 1.0 + k as f64 * PERIOD;
                    filter.take(readings, t).unwrap();
                    filter.advance_to(t).unwrap();
                    filter.set_commands(commands);
                }
                filter
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = estimation, soft_snake_estimation, wpi_snake_estimation
}
criterion_main!(benches);
