//! Criterion benches of the 6-link snake (003_011ffa2a91e05fc5): the generated kernels, forward
//! dynamics, the full right-hand side with contact, and whole simulated runs.
//!
//! Run with `cargo bench --bench dynamics`; README.md lists the figures.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{SMatrix, SVector, Vector3};
use softgen::{run_scenario, Scenario, TerrainChoice};
use softgen_generated::SnakePedalWave;
use softgen_runtime::{
    forward_dynamics, Model, RungeKutta4, SecondOrderSystem, Serpenoid, Simulation,
    SimulationConfig, State, Terrain,
};
use std::time::Duration;

type R = SnakePedalWave;
const N: usize = 8;
const C: usize = 13;

fn config() -> SimulationConfig {
    let env = R::ENVIRONMENT;
    let g = R::GAIT.unwrap();
    SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: Some(Serpenoid {
            amplitude: g.amplitude,
            temporal_frequency: g.temporal_frequency,
            spatial_frequency: g.spatial_frequency,
            offset: g.offset,
            ramp: 2.0,
        }),
        servo: g.servo(),
        admittance: None,
        control_period: 0.002,
    }
}

/// A mid-gait state on the ground: 10.5 s into the pedal wave.
fn mid_gait() -> (Simulation<R, N, C>, State<N>) {
    let mut sim = Simulation::<R, N, C>::new(Default::default(), config()).unwrap();
    let mut x = State::new(SVector::zeros(), SVector::zeros());
    let mut t = 0.0;
    let mut rk4 = RungeKutta4::new(0.002).unwrap();
    sim.run(&mut rk4, &mut t, &mut x, 10.5, |_, _, _, _| {}).unwrap();
    (sim, x)
}

fn kernels(c: &mut Criterion) {
    let (mut sim, x) = mid_gait();
    let p = sim.params.clone();
    let (q, qd) = (x.q, x.qd);
    let report = sim.report(10.5, &x);
    println!("benchmark state: {} of {C} contact points active", report.active);
    let mut group = c.benchmark_group("snake_pedal_wave");
    group.bench_function("cache (sin/cos)", |b| b.iter(|| R::cache(black_box(&q), &p)));
    let k = R::cache(&q, &p);
    let mut m = SMatrix::<f64, N, N>::zeros();
    let mut v = SVector::<f64, N>::zeros();
    group.bench_function("mass_matrix", |b| b.iter(|| R::mass_matrix_into(black_box(&q), &p, &k, &mut m)));
    group.bench_function("coriolis (C qd)", |b| b.iter(|| R::coriolis_into(black_box(&q), &qd, &p, &k, &mut v)));
    group.bench_function("gravity", |b| b.iter(|| R::gravity_into(black_box(&q), &p, &k, &mut v)));
    let mut positions = [Vector3::zeros(); C];
    group.bench_function("contact positions (all 13)", |b| {
        b.iter(|| R::contact_positions_into(black_box(&q), &p, &k, &mut positions))
    });
    let mut jacobian = SMatrix::<f64, 3, N>::zeros();
    group.bench_function("contact jacobian (head tip)", |b| {
        b.iter(|| R::contact_jacobian_into(12, black_box(&q), &p, &k, &mut jacobian))
    });
    group.bench_function("contact force (terrain, laws, J'F)", |b| {
        b.iter(|| sim.generalized_force(10.5, black_box(&q), &qd, &k, None))
    });
    let zero = SVector::<f64, N>::zeros();
    group.bench_function("forward dynamics without contact (cache, M, C qd, G, solve)", |b| {
        b.iter(|| {
            let k = R::cache(black_box(&q), &p);
            forward_dynamics::<R, N, C>(&q, &qd, &p, &k, &zero, &mut v)
        })
    });
    group.bench_function("full right-hand side with contact and gait", |b| {
        b.iter(|| sim.acceleration(10.5, black_box(&q), &qd, &mut v))
    });
    group.finish();
}

fn runs(c: &mut Criterion) {
    let mut group = c.benchmark_group("snake_pedal_wave runs");
    group.sample_size(10);
    group.bench_function("pedal wave 20 s, RK4 dt 0.002 (paper Fig. 5)", |b| {
        let s = Scenario::new("snake_pedal_wave");
        b.iter(|| run_scenario(&s, None, &mut |_| {}).unwrap())
    });
    group.bench_function("stair 60 s with admittance, RK4 dt 0.002 (paper Fig. 8)", |b| {
        let mut s = Scenario::new("snake_pedal_wave");
        s.duration = 60.0;
        s.terrain = TerrainChoice::Override(Terrain::Stair { position: 0.9, height: 0.1 });
        s.admittance = Some(softgen_runtime::AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: 2.2 });
        b.iter(|| run_scenario(&s, None, &mut |_| {}).unwrap())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = kernels, runs
}
criterion_main!(benches);
