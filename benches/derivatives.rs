//! Criterion benches of the generated derivatives of the dynamics: for the scaling fixtures
//! (planar snakes of 8, 14, 22 and 62 coordinates, the sizes of the Pinocchio comparison) and
//! every robot of the registry, at one random state: the forward dynamics, the inverse
//! dynamics' generated derivatives alone, the forward dynamics' full derivatives (dq, dqd,
//! dtau) from them, and for scale the 4N + 1 forward dynamics that central differences of
//! dq and dqd cost; and the soft snake's simulated system Jacobian (contact included), exact
//! against its stiff part and differences of the right-hand side.
//!
//! Run with `cargo bench --bench derivatives`; README.md lists the figures.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{SMatrix, SVector, Vector3};
use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{SnakeLinks12, SnakeLinks20, SnakeLinks6, SnakeLinks60};
use softgen_runtime::{
    forward_dynamics_derivatives, forward_dynamics_derivatives_by, multiply_into, spd_inverse_in_place,
    ArticulatedFactor, DerivativesRoute, ForwardDynamicsDerivatives, InverseDynamicsFactors, Model,
};

/// A state within each coordinate's range (angles 0.5 rad, soft coordinates small).
fn state<R: Model<N, C>, const N: usize, const C: usize>() -> (SVector<f64, N>, SVector<f64, N>, SVector<f64, N>) {
    let mut rng = StdRng::seed_from_u64(5);
    let initial = SVector::<f64, N>::from_iterator(R::INITIAL_POSITION.iter().copied());
    let scale = |i: usize| match R::COORDINATES[i].kind {
        softgen_runtime::CoordinateKind::ActuatorLength => 0.01,
        softgen_runtime::CoordinateKind::Curvature => 2.0,
        _ => 0.5,
    };
    let q = initial + SVector::<f64, N>::from_fn(|i, _| scale(i) * rng.gen_range(-1.0..1.0));
    let qd = SVector::<f64, N>::from_fn(|i, _| scale(i) * rng.gen_range(-1.0..1.0));
    let tau = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.0..1.0));
    (q, qd, tau)
}

fn bench_robot<R: Model<N, C>, const N: usize, const C: usize>(c: &mut Criterion, label: &str) {
    let p = R::Params::default();
    let (q, qd, tau) = state::<R, N, C>();
    let k = R::cache(&q, &p);
    let mut qdd = SVector::<f64, N>::zeros();
    assert!(R::forward_dynamics_into(&q, &qd, &tau, &p, &k, &mut qdd));
    let mut group = c.benchmark_group(format!("derivatives {label} ({N} coordinates)"));
    group.bench_function("forward dynamics (cache included)", |b| {
        b.iter(|| {
            let k = R::cache(black_box(&q), &p);
            R::forward_dynamics_into(&q, &qd, &tau, &p, &k, &mut qdd)
        })
    });
    // What a peer's forward dynamics computes from the state: generated rigid trees compute
    // only what the articulated-body algorithm reads, and store no cache.
    group.bench_function("forward dynamics (from the state alone)", |b| {
        b.iter(|| R::forward_dynamics_without_cache_into(black_box(&q), &qd, &tau, &p, &mut qdd))
    });
    // Each part's inputs are computed before its bench, not left by the bench before it, so a
    // part measured alone (`cargo bench --bench derivatives -- "part: M^-1"`) does the same
    // work as in the whole group (it timed zero matrices before).
    let (mut position, mut velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    R::inverse_dynamics_derivatives_into(&q, &qd, &qdd, &p, &k, &mut position, &mut velocity);
    group.bench_function("inverse dynamics derivatives (generated kernel)", |b| {
        b.iter(|| R::inverse_dynamics_derivatives_into(black_box(&q), &qd, &qdd, &p, &k, &mut position, &mut velocity))
    });
    // The parts of the full derivatives below, beside the kernel above: rigid trees solve with
    // their articulated-body factor, the others with a formed M^-1.
    if R::ARTICULATED_FACTOR {
        let mut factor = ArticulatedFactor::<N>::default();
        assert!(R::articulated_factor_into(&q, &qd, &tau, &p, &k, &mut factor, &mut qdd));
        group.bench_function("part: qdd and the articulated-body factor (generated kernel)", |b| {
            b.iter(|| R::articulated_factor_into(black_box(&q), &qd, &tau, &p, &k, &mut factor, &mut qdd))
        });
        let mut factors = InverseDynamicsFactors::<N>::default();
        R::inverse_dynamics_factors_into(&q, &qd, &qdd, &p, &k, &mut factors);
        group.bench_function("part: dID/dq and dID/dqd factors (generated kernel)", |b| {
            b.iter(|| R::inverse_dynamics_factors_into(black_box(&q), &qd, &qdd, &p, &k, &mut factors))
        });
        let mut solved = [SMatrix::<f64, N, N>::zeros(); 3];
        group.bench_function("part: -M^-1 dID/dq, -M^-1 dID/dqd and M^-1 through the factors", |b| {
            b.iter(|| {
                let [by_position, by_velocity, inverse] = &mut solved;
                black_box(&factor).solve_derivatives_into(&factors, by_position, by_velocity, inverse)
            })
        });
    }
    let (mut mass_matrix, mut coriolis, mut gravity) = (SMatrix::zeros(), SVector::zeros(), SVector::zeros());
    R::dynamics_into(&q, &qd, &p, &k, &mut mass_matrix, &mut coriolis, &mut gravity);
    group.bench_function("part: M, C qd and G (generated kernel)", |b| {
        b.iter(|| R::dynamics_into(black_box(&q), &qd, &p, &k, &mut mass_matrix, &mut coriolis, &mut gravity))
    });
    let mut inverse = mass_matrix;
    assert!(spd_inverse_in_place(&mut inverse).is_ok(), "{}: M not positive definite", R::NAME);
    group.bench_function("part: M^-1", |b| {
        b.iter(|| {
            inverse = black_box(mass_matrix);
            spd_inverse_in_place(&mut inverse)
        })
    });
    let mut product = SMatrix::<f64, N, N>::zeros();
    group.bench_function("part: -M^-1 dID/dq and -M^-1 dID/dqd", |b| {
        b.iter(|| {
            multiply_into(-1.0, black_box(&inverse), &position, &mut product, false);
            multiply_into(-1.0, black_box(&inverse), &velocity, &mut product, false);
        })
    });
    let mut derivatives = ForwardDynamicsDerivatives::<N>::default();
    group.bench_function("forward dynamics derivatives dq, dqd, dtau (cache included)", |b| {
        b.iter(|| {
            let k = R::cache(black_box(&q), &p);
            forward_dynamics_derivatives::<R, N, C>(&q, &qd, &tau, &p, &k, &mut derivatives)
        })
    });
    // Both routes at every size of a rigid tree, so ARTICULATED_SOLVE_FROM is read off one run.
    if R::ARTICULATED_FACTOR {
        for (route, name) in [
            (DerivativesRoute::ArticulatedFactor, "through the articulated factor"),
            (DerivativesRoute::InverseMatrix, "through M^-1 formed"),
        ] {
            group.bench_function(format!("route: forward dynamics derivatives {name} (cache included)"), |b| {
                b.iter(|| {
                    let k = R::cache(black_box(&q), &p);
                    forward_dynamics_derivatives_by::<R, N, C>(route, &q, &qd, &tau, &p, &k, &mut derivatives)
                })
            });
        }
    }
    group.bench_function("central differences of dq and dqd (4N + 1 forward dynamics)", |b| {
        b.iter(|| {
            let mut out = SMatrix::<f64, N, N>::zeros();
            let h = 1e-6;
            for j in 0..N {
                let (mut up, mut down) = (q, q);
                up[j] += h;
                down[j] -= h;
                let (mut a, mut b) = (SVector::zeros(), SVector::zeros());
                R::forward_dynamics_into(&up, &qd, &tau, &p, &R::cache(&up, &p), &mut a);
                R::forward_dynamics_into(&down, &qd, &tau, &p, &R::cache(&down, &p), &mut b);
                out.set_column(j, &((a - b) / (2.0 * h)));
                let (mut up, mut down) = (qd, qd);
                up[j] += h;
                down[j] -= h;
                R::forward_dynamics_into(&q, &up, &tau, &p, &k, &mut a);
                R::forward_dynamics_into(&q, &down, &tau, &p, &k, &mut b);
                out.set_column(j, &(out.column(j) + (a - b) / (2.0 * h)));
            }
            let k = R::cache(black_box(&q), &p);
            R::forward_dynamics_into(&q, &qd, &tau, &p, &k, &mut qdd);
            out
        })
    });
    group.finish();
}

fn scaling(c: &mut Criterion) {
    bench_robot::<SnakeLinks6, 8, 13>(c, "snake_links_6");
    bench_robot::<SnakeLinks12, 14, 25>(c, "snake_links_12");
    bench_robot::<SnakeLinks20, 22, 41>(c, "snake_links_20");
    bench_robot::<SnakeLinks60, 62, 121>(c, "snake_links_60");
}

/// Every robot of the registry, so a robot added to model-specs/ is timed with no edit here.
macro_rules! registry_benches {
    ($($module:ident => $robot:ident,)*) => {
        fn registry(c: &mut Criterion) {
            $(
                bench_robot::<softgen_generated::$robot, { softgen_generated::$module::DOF }, { softgen_generated::$module::CONTACTS }>(
                    c,
                    stringify!($module),
                );
            )*
        }
    };
}

softgen_generated::for_each_robot!(registry_benches);

/// The soft snake's simulated system Jacobian d qdd/d(q, qd) on the carpet where the drop
/// test settles (the state of `dynamics`' soft snake bench): exact, its stiff part (what
/// ROS34PW2 uses by default), and by differences of the right-hand side: forward (2N + 1
/// right-hand sides) and central (4N).
fn soft_snake_system(c: &mut Criterion) {
    use softgen_generated::SoftSnake as S;
    use softgen_runtime::{JointPd, SecondOrderSystem, Simulation, SimulationConfig, State, SystemJacobian};
    const SN: usize = 15;
    const SC: usize = 310;
    let p = <S as Model<SN, SC>>::Params::default();
    let mut q = SVector::<f64, SN>::zeros();
    q[2] = 0.01894;
    let qd = SVector::<f64, SN>::from_fn(|i, _| 0.01 * (i as f64 - 7.0));
    let env = S::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    };
    let mut sim = Simulation::<S, SN, SC>::new(p, config).unwrap();
    let active = sim.report(0.0, &State::new(q, qd)).active;
    let mut group =
        c.benchmark_group(format!("system Jacobian soft_snake ({SN} coordinates, {active} points touching)"));
    let (mut by_position, mut by_velocity) = (SMatrix::<f64, SN, SN>::zeros(), SMatrix::<f64, SN, SN>::zeros());
    group.bench_function("exact (generated tangents)", |b| {
        sim.use_jacobian(SystemJacobian::Exact);
        b.iter(|| sim.acceleration_jacobian(0.0, black_box(&q), &qd, &mut by_position, &mut by_velocity).unwrap())
    });
    group.bench_function("stiff part (ROS34PW2's default)", |b| {
        sim.use_jacobian(SystemJacobian::Stiff);
        b.iter(|| sim.acceleration_jacobian(0.0, black_box(&q), &qd, &mut by_position, &mut by_velocity).unwrap())
    });
    let mut differences = |b: &mut criterion::Bencher, central: bool| {
        let h = 1e-7;
        let mut base = SVector::<f64, SN>::zeros();
        let (mut up, mut down) = (SVector::<f64, SN>::zeros(), SVector::<f64, SN>::zeros());
        b.iter(|| {
            if !central {
                sim.acceleration(0.0, black_box(&q), &qd, &mut base).unwrap();
            }
            for j in 0..SN {
                let mut moved = q;
                moved[j] += h;
                sim.acceleration(0.0, &moved, &qd, &mut up).unwrap();
                if central {
                    moved[j] -= 2.0 * h;
                    sim.acceleration(0.0, &moved, &qd, &mut down).unwrap();
                } else {
                    down = base;
                }
                by_position.set_column(j, &((up - down) / if central { 2.0 * h } else { h }));
                let mut moved = qd;
                moved[j] += h;
                sim.acceleration(0.0, &q, &moved, &mut up).unwrap();
                if central {
                    moved[j] -= 2.0 * h;
                    sim.acceleration(0.0, &q, &moved, &mut down).unwrap();
                }
                by_velocity.set_column(j, &((up - down) / if central { 2.0 * h } else { h }));
            }
        })
    };
    group.bench_function("forward differences (2N + 1 right-hand sides)", |b| differences(b, false));
    group.bench_function("central differences (4N right-hand sides)", |b| differences(b, true));
    group.finish();
}

/// The contact law's tangent at one touching point of the soft snake's carpet (friction along
/// its body axis, so every input moves the force) along 15 directions: the law's tangent per
/// direction, against its ten slopes found once (`ContactLaw::force_slopes`) and a product
/// per direction, as the system Jacobian now does.
fn contact_law_tangents(c: &mut Criterion) {
    use softgen_runtime::{ContactTangent, SurfaceContact};
    let law = softgen_generated::SoftSnake::ENVIRONMENT.contact_law();
    let contact = SurfaceContact { depth: 2e-4, normal: Vector3::z() };
    let (velocity, axis) = (Vector3::new(0.01, -0.02, -0.001), Vector3::new(0.8, 0.6, 0.01));
    let directions: Vec<ContactTangent> = (0..15)
        .map(|j| {
            let x = j as f64;
            ContactTangent {
                depth: -0.1 * x.sin(),
                normal: Vector3::zeros(),
                velocity: Vector3::new(x.cos(), x.sin(), 0.3 * x),
                axis: Vector3::new(0.1, -0.2 * x, 0.05),
            }
        })
        .collect();
    let mut group = c.benchmark_group("contact law tangent at a point (15 directions)");
    group.bench_function("the law's tangent per direction", |b| {
        b.iter(|| {
            directions.iter().map(|t| law.force_tangent(black_box(&contact), &velocity, &axis, t)).sum::<Vector3<f64>>()
        })
    });
    group.bench_function("its slopes once, a product per direction", |b| {
        b.iter(|| {
            let slopes = law.force_slopes(black_box(&contact), &velocity, &axis);
            directions.iter().map(|t| slopes.tangent(t)).sum::<Vector3<f64>>()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(300)).measurement_time(std::time::Duration::from_secs(1));
    targets = scaling, registry, soft_snake_system, contact_law_tangents
}
criterion_main!(benches);
