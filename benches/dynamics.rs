//! Criterion benches of the 6-link snake (003_011ffa2a91e05fc5): the generated kernels, forward
//! dynamics, the full right-hand side with contact, and whole simulated runs; the soft snake's
//! kernels; the valve-driven snake's two models; the pinniped's kernels and one trial; the underwater snake's kernels and swimming runs; and forward dynamics of the scaling fixtures (planar snakes of 6 to 60 links).
//!
//! Run with `cargo bench --bench dynamics`; README.md lists the figures.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{SMatrix, SVector, Vector3};
use softgen::{run_scenario, Scenario, TerrainChoice};
use softgen_generated::{SnakeLinks12, SnakeLinks20, SnakeLinks6, SnakeLinks60, SnakePedalWave};
use softgen_runtime::{
    forward_dynamics, solve_spd_in_place, Model, RungeKutta4, SecondOrderSystem, Serpenoid, Simulation,
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
        s.admittance =
            Some(softgen_runtime::AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: 2.2 });
        b.iter(|| run_scenario(&s, None, &mut |_| {}).unwrap())
    });
    group.finish();
}

/// The model-predictive controller's work on the lateral-undulation snake on passive wheels
/// (the run configuration's floor and friction): one rollout of the 1 s horizon, and one
/// plan of 32 rollouts, from a mid-gait state.
fn model_predictive_control(c: &mut Criterion) {
    use softgen::RunConfig;
    use softgen_generated::SnakeLateralUndulation as W;
    use softgen_runtime::{GaitParameters, GaitPlanner, PlanningSnapshot, SteeredGait};
    let actuated = ["link2", "link3", "link4", "link5", "link6"]
        .map(|name| (name, softgen::Drives::Coordinate(softgen_runtime::CoordinateKind::RevoluteJoint)));
    let run = RunConfig::parse(
        "snake_lateral_undulation.run.toml",
        softgen::run_config_of(W::NAME).expect("the wheeled snake has a run configuration").text,
        W::NAME,
        &actuated,
    )
    .unwrap();
    let Some(softgen::PlannerSettings::GaitSampling(settings)) = run.planner else { panic!("the gait sampler") };
    let env = W::ENVIRONMENT;
    let g = W::GAIT.unwrap();
    let (contact, terrain) = run.environment.apply(env.contact_law(), env.terrain);
    let plant =
        SimulationConfig { contact, terrain, gait: None, servo: g.servo(), admittance: None, control_period: 0.001 };
    let initial = GaitParameters { amplitude: g.amplitude, temporal_frequency: g.temporal_frequency, offset: g.offset };
    let mut planner = GaitPlanner::new(
        Simulation::<W, N, C>::new(Default::default(), plant).unwrap(),
        settings.planner(settings.goal),
        initial,
    )
    .unwrap();
    // Mid-gait: 5 s of the initial gait, rolled out by the planner itself.
    let mut gait = SteeredGait::new(g.spatial_frequency, settings.lag, initial);
    let mut state = State::new(SVector::from_iterator(W::INITIAL_POSITION.iter().copied()), SVector::zeros());
    for k in 0..5 {
        let snapshot = PlanningSnapshot { time: k as f64, state, gait };
        state = planner.predict(&snapshot, initial).unwrap();
        for _ in 0..1000 {
            gait.advance(0.001);
        }
    }
    let snapshot = PlanningSnapshot { time: 5.0, state, gait };
    let mut group = c.benchmark_group("model-predictive control (snake_lateral_undulation on wheels)");
    group.bench_function("one rollout: 1 s horizon, semi-implicit Euler dt 0.002", |b| {
        b.iter(|| planner.rollout(black_box(&snapshot), initial).unwrap())
    });
    group.sample_size(20);
    group
        .bench_function("one plan: 32 rollouts and the MPPI update", |b| b.iter(|| planner.plan(black_box(&snapshot))));
    group.finish();
}

/// M x = b two ways in one group: the model's own solve (generated: M's L'L factorisation
/// unrolled for the robot's zeros) and the dense Cholesky of the trait's default.
fn solve_with_mass_matrix<R: Model<N, C>, const N: usize, const C: usize>(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    mass_matrix: &SMatrix<f64, N, N>,
) {
    let rhs = SVector::<f64, N>::from_fn(|i, _| (i as f64).sin());
    group.bench_function("solve with M (the model's, unrolled for its zeros)", |b| {
        b.iter(|| {
            let mut x = rhs;
            assert!(R::mass_matrix_solve_into(black_box(mass_matrix), &mut x));
            x
        })
    });
    group.bench_function("solve with M (dense Cholesky)", |b| {
        b.iter(|| {
            let (mut factor, mut x) = (*black_box(mass_matrix), rhs);
            solve_spd_in_place(&mut factor, &mut x).unwrap();
            x
        })
    });
}

/// The soft snake of 000_a2f8bdeafcf4372f (15 coordinates, 310 skin points) on the carpet
/// where the drop test settles (30 points in contact), moving.
fn soft_snake(c: &mut Criterion) {
    use softgen_generated::SoftSnake as S;
    const SN: usize = 15;
    const SC: usize = 310;
    let p = <S as Model<SN, SC>>::Params::default();
    let mut q = SVector::<f64, SN>::zeros();
    // Where the drop test settles: straight on its skin, 30 points a fraction of a
    // millimetre deep.
    q[2] = 0.01894;
    let qd = SVector::<f64, SN>::from_fn(|i, _| 0.01 * (i as f64 - 7.0));
    let env = S::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    };
    let mut sim = Simulation::<S, SN, SC>::new(p.clone(), config).unwrap();
    let report = sim.report(0.0, &State::new(q, qd));
    println!("soft snake bench state: {} of {SC} points in contact", report.active);
    let k = S::cache(&q, &p);
    let mut m = SMatrix::<f64, SN, SN>::zeros();
    let mut v = SVector::<f64, SN>::zeros();
    let mut group = c.benchmark_group("soft_snake kernels");
    group.bench_function("cache (section frames and Jacobians)", |b| b.iter(|| S::cache(black_box(&q), &p)));
    group.bench_function("mass_matrix (3 x 6 disc slices)", |b| {
        b.iter(|| S::mass_matrix_into(black_box(&q), &p, &k, &mut m))
    });
    group.bench_function("coriolis (C qd)", |b| b.iter(|| S::coriolis_into(black_box(&q), &qd, &p, &k, &mut v)));
    S::mass_matrix_into(&q, &p, &k, &mut m);
    solve_with_mass_matrix::<S, SN, SC>(&mut group, &m);
    group.bench_function("gravity and elasticity", |b| b.iter(|| S::gravity_into(black_box(&q), &p, &k, &mut v)));
    group.bench_function("contact positions (all 310)", |b| {
        let mut out = [Vector3::zeros(); SC];
        b.iter(|| S::contact_positions_into(black_box(&q), &p, &k, &mut out))
    });
    group.bench_function(format!("contact force (terrain, laws, J'F, {} active)", report.active), |b| {
        b.iter(|| sim.generalized_force(0.0, black_box(&q), &qd, &k, None))
    });
    group.bench_function("full right-hand side with contact", |b| {
        let mut qdd = SVector::<f64, SN>::zeros();
        b.iter(|| sim.acceleration(0.0, black_box(&q), &qd, &mut qdd).unwrap())
    });
    group.finish();
}

/// The valve-driven snake of 001 mid-stroke: the complex model's right-hand side (prescribed
/// curvatures, the base from the partitioned equations), the simplified model's, and one
/// point of the speed map (12 s simulated) with each.
fn wpi_snake(c: &mut Criterion) {
    use softgen::papers::wpi_snake::{run_snake, SimplifiedChain, SnakeModel, SnakeRun};
    use softgen_generated::WpiSnake as W;
    use softgen_runtime::{ActuatorResponse, ContactLaw, DrivenCoordinate, PrescribedSimulation};
    const WN: usize = 7;
    const WC: usize = 5;
    let p = <W as Model<WN, WC>>::Params::default();
    let env = W::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 5e-4,
    };
    let responses: Vec<ActuatorResponse> = (0..4).map(|k| W::valve_response(k, &p).unwrap()).collect();
    let driven: Vec<DrivenCoordinate> = W::VALVES
        .iter()
        .zip(&responses)
        .map(|(&coordinate, &response)| DrivenCoordinate { coordinate, response })
        .collect();
    let mut x = State::<WN>::new(SVector::zeros(), SVector::zeros());
    let mut complex =
        PrescribedSimulation::new(Simulation::<W, WN, WC>::new(p.clone(), config).unwrap(), &driven, 0.0, &x).unwrap();
    complex.command(0.0, &[1.0, -1.0, 1.0, -1.0], &mut x).unwrap();
    let (t, q, qd) = (
        0.05,
        SVector::<f64, WN>::from_fn(|i, _| 0.3 * (i as f64).sin()),
        SVector::<f64, WN>::from_fn(|i, _| 0.1 * (i as f64).cos()),
    );
    let contact: ContactLaw = env.contact_law();
    let end = p.link_mass * p.channel_length.powi(2) / 3.0;
    let mut simplified = SimplifiedChain::<5>::new(
        [p.link_mass; 5],
        [end, 2.0 * end, 2.0 * end, 2.0 * end, end],
        [p.channel_length; 5],
        &contact,
        p.gravity,
        &responses,
    )
    .unwrap();
    simplified.command(0.0, &[1.0, -1.0, 1.0, -1.0]).unwrap();
    let mut group = c.benchmark_group("wpi_snake");
    group.bench_function("complex model right-hand side (prescribed curvatures)", |b| {
        let mut qdd = SVector::<f64, WN>::zeros();
        b.iter(|| complex.acceleration(black_box(t), &q, &qd, &mut qdd).unwrap())
    });
    group.bench_function("simplified model right-hand side (eqs 10-12)", |b| {
        let mut qdd = SVector::<f64, 3>::zeros();
        let (q3, qd3) = (SVector::<f64, 3>::new(0.05, 0.01, 0.3), SVector::<f64, 3>::new(0.1, 0.02, -0.4));
        b.iter(|| simplified.acceleration(black_box(t), &q3, &qd3, &mut qdd).unwrap())
    });
    group.sample_size(10);
    for model in [SnakeModel::Complex, SnakeModel::Simplified] {
        group.bench_function(format!("{} model, 12 s at 1.5 Hz, 48 kPa (one map point)", model.name()), |b| {
            b.iter(|| run_snake(&SnakeRun::new(model, 1.5, 48.0, 0.0), 1000, |_| {}).unwrap())
        });
    }
    group.finish();
}

/// The pinniped (002) mid-gait: its kernels, the right-hand side with contact and muscle
/// forces, and one 15 s trial of the protocol.
fn pinniped(c: &mut Criterion) {
    use softgen::papers::pinniped::{run_trial, Gait, Trial};
    use softgen_generated::Pinniped as P;
    const PN: usize = 14;
    const PC: usize = 55;
    let p = <P as Model<PN, PC>>::Params::default();
    // The state 1.5 s into backward crawling at 0.10 m, 1 Hz.
    let mut trial = Trial::new(Gait::Backward, 0.10, 1.0);
    trial.duration = 0.5;
    let outcome = run_trial(&trial, |_| {}).unwrap();
    let (q, qd) = {
        let s = outcome.samples.last().unwrap();
        (s.q, SVector::<f64, PN>::from_fn(|i, _| 0.05 * (i as f64).cos()))
    };
    let env = P::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 1e-3,
    };
    let mut sim = Simulation::<P, PN, PC>::new(p.clone(), config).unwrap();
    let k = P::cache(&q, &p);
    let (mut m, mut v) = (SMatrix::<f64, PN, PN>::zeros(), SVector::<f64, PN>::zeros());
    let active = sim.report(0.0, &State::new(q, qd)).active;
    let mut group = c.benchmark_group("pinniped");
    group.bench_function("cache (limb slices and skin rings)", |b| b.iter(|| P::cache(black_box(&q), &p)));
    group.bench_function("mass_matrix (4 x 4 disc slices)", |b| {
        b.iter(|| P::mass_matrix_into(black_box(&q), &p, &k, &mut m))
    });
    group.bench_function("coriolis (C qd)", |b| b.iter(|| P::coriolis_into(black_box(&q), &qd, &p, &k, &mut v)));
    P::mass_matrix_into(&q, &p, &k, &mut m);
    solve_with_mass_matrix::<P, PN, PC>(&mut group, &m);
    group.bench_function(format!("full right-hand side with contact ({active} of 55 points touching)"), |b| {
        let mut qdd = SVector::<f64, PN>::zeros();
        b.iter(|| sim.acceleration(0.0, black_box(&q), &qd, &mut qdd).unwrap())
    });
    let limb = softgen::papers::pinniped::Limb { length: p.limb_length, muscle_radius: p.muscle_radius };
    group.bench_function("limb inverse kinematics (eq 7, one tip target)", |b| {
        b.iter(|| limb.inverse(black_box(0.061), black_box(-0.079)).unwrap())
    });
    let gait = softgen::papers::pinniped::LimbGait {
        frequency: 1.0,
        samples_per_cycle: 100,
        limbs: softgen::papers::pinniped::RestGeometry::new(&p).motions(Gait::InPlace { counterclockwise: true }, 0.10),
    };
    let map = softgen::papers::pinniped::pressure_map(&p).unwrap();
    let limbs = softgen::papers::pinniped::limbs(&p);
    group.bench_function("gait pressures of all 12 muscles (4 circles through eq 7, eq 1, the map)", |b| {
        b.iter(|| gait.pressures(black_box(0.37), &limbs, &map).unwrap())
    });
    group.sample_size(10);
    group.bench_function("one trial: 1 s settling and 15 s of backward crawling, semi-implicit Euler 0.5 ms", |b| {
        b.iter(|| run_trial(&Trial::new(Gait::Backward, 0.10, 1.0), |_| {}).unwrap())
    });
    group.finish();
}

/// The underwater snake of 004 mid-turn (case 2, 0.3 MPa, 20 s in): the kernels with water
/// (added mass in M and C qd, buoyancy in G, the drag), the right-hand side, and each case's
/// longest run with ROS34PW2.
fn underwater_snake(c: &mut Criterion) {
    use softgen_generated::UnderwaterSnake as U;
    const UN: usize = 12;
    const UC: usize = 2;
    let p = softgen::papers::underwater_snake::neutral_params();
    let turn = &softgen::papers::underwater_snake::yaw_conditions()[0];
    let run = softgen::papers::underwater_snake::swim(&p, turn, 20.0, 1.0).unwrap();
    let s = run.samples.last().unwrap();
    let (q, qd) = (s.q, s.qd);
    let config = SimulationConfig {
        contact: U::ENVIRONMENT.contact_law(),
        terrain: Terrain::None,
        gait: None,
        servo: softgen_runtime::JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.05,
    };
    let mut sim = Simulation::<U, UN, UC>::new(p.clone(), config).unwrap();
    sim.set_thrusts(&turn.thrusts).unwrap();
    let k = U::cache(&q, &p);
    let (mut m, mut v) = (SMatrix::<f64, UN, UN>::zeros(), SVector::<f64, UN>::zeros());
    let mut group = c.benchmark_group("underwater_snake");
    group.bench_function("cache (poses, slices, hull columns)", |b| b.iter(|| U::cache(black_box(&q), &p)));
    group.bench_function("mass_matrix with added mass", |b| {
        b.iter(|| U::mass_matrix_into(black_box(&q), &p, &k, &mut m))
    });
    group.bench_function("coriolis (C qd, with Kirchhoff terms)", |b| {
        b.iter(|| U::coriolis_into(black_box(&q), &qd, &p, &k, &mut v))
    });
    group.bench_function("gravity, buoyancy and Yeoh elasticity", |b| {
        b.iter(|| U::gravity_into(black_box(&q), &p, &k, &mut v))
    });
    group.bench_function("drag (linear and cross-flow strips)", |b| {
        b.iter(|| U::hydrodynamic_force_into(black_box(&q), &qd, &p, &k, &mut v))
    });
    group.bench_function("full right-hand side (thrusters, drag, viscosity)", |b| {
        let mut qdd = SVector::<f64, UN>::zeros();
        b.iter(|| sim.acceleration(0.0, black_box(&q), &qd, &mut qdd).unwrap())
    });
    group.sample_size(10);
    for (name, condition, duration) in [
        ("004-straight forward, 20 s", softgen::papers::underwater_snake::straight_conditions()[0].clone(), 20.0),
        ("004-yaw 0.3 MPa, 60 s", softgen::papers::underwater_snake::yaw_conditions()[0].clone(), 60.0),
        ("004-pitch condition 1, 40 s", softgen::papers::underwater_snake::pitch_conditions()[0].clone(), 40.0),
        ("004-spiral, 180 s", softgen::papers::underwater_snake::spiral_conditions()[0].clone(), 180.0),
    ] {
        group.bench_function(format!("{name}, ROS34PW2 sampled at 20 Hz"), |b| {
            b.iter(|| softgen::papers::underwater_snake::swim(&p, &condition, duration, 0.05).unwrap())
        });
    }
    group.finish();
}

/// One scaling fixture at a bent, moving state (q_j = 0.4 sin j, qd_j = 0.3 cos j): forward
/// dynamics without contact both ways (the generated articulated-body algorithm, which the
/// runtime uses, and M, C qd, G with a Cholesky solve), and the kernels apart.
fn scaling_fixture<R: Model<N, C>, const N: usize, const C: usize>(c: &mut Criterion) {
    let p = R::Params::default();
    let q = SVector::<f64, N>::from_fn(|j, _| 0.4 * (j as f64).sin());
    let qd = SVector::<f64, N>::from_fn(|j, _| 0.3 * (j as f64).cos());
    let zero = SVector::<f64, N>::zeros();
    let mut group = c.benchmark_group(format!("scaling {} ({N} coordinates)", R::NAME));
    group.bench_function("forward dynamics without contact (cache + articulated body)", |b| {
        let mut qdd = SVector::<f64, N>::zeros();
        b.iter(|| {
            let k = R::cache(black_box(&q), &p);
            forward_dynamics::<R, N, C>(&q, &qd, &p, &k, &zero, &mut qdd)
        })
    });
    group.bench_function("forward dynamics without contact (cache + M, C qd, G + Cholesky)", |b| {
        let (mut m, mut cqd, mut g) =
            (SMatrix::<f64, N, N>::zeros(), SVector::<f64, N>::zeros(), SVector::<f64, N>::zeros());
        b.iter(|| {
            let k = R::cache(black_box(&q), &p);
            R::dynamics_into(&q, &qd, &p, &k, &mut m, &mut cqd, &mut g);
            let mut qdd = zero - cqd - g;
            solve_spd_in_place(&mut m, &mut qdd).map(|_| qdd)
        })
    });
    group.bench_function("cache (poses, composite inertias, contact positions)", |b| {
        b.iter(|| R::cache(black_box(&q), &p))
    });
    let k = R::cache(&q, &p);
    group.bench_function("dynamics_into (M, C qd, G from the cache)", |b| {
        let (mut m, mut cqd, mut g) =
            (SMatrix::<f64, N, N>::zeros(), SVector::<f64, N>::zeros(), SVector::<f64, N>::zeros());
        b.iter(|| R::dynamics_into(black_box(&q), &qd, &p, &k, &mut m, &mut cqd, &mut g))
    });
    group.finish();
}

fn scaling(c: &mut Criterion) {
    scaling_fixture::<SnakeLinks6, 8, 13>(c);
    scaling_fixture::<SnakeLinks12, 14, 25>(c);
    scaling_fixture::<SnakeLinks20, 22, 41>(c);
    scaling_fixture::<SnakeLinks60, 62, 121>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = kernels, runs, model_predictive_control, soft_snake, wpi_snake, pinniped, underwater_snake, scaling
}
criterion_main!(benches);
