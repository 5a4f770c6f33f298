//! Soft sections as joints of one tree with rigid bodies: the fixtures with a hub and four
//! soft limbs (the topology of 002_f355a977a209e7c9), a rigid - soft - rigid - soft - rigid
//! chain (004_4e5a2166b70a9520), a planar chain with curvature coordinates
//! (001_6780a70913e94322) and a fixed arm with inextensible and planar sections, in free
//! flight: energy conserved without damping, and without gravity linear and angular momentum
//! conserved too (the elastic forces are internal). The generic invariants run in
//! tests/invariants.rs.

use nalgebra::{SVector, Vector3};
use softgen_generated::{PlanarSoftChain, RigidSoftChain, SoftKindsArm, SoftLimbedHub};
use softgen_runtime::{DormandPrince5, Integrator, JointPd, Model, ParamSet, Simulation, SimulationConfig, State, Terrain, Tolerances};

fn free_flight<R: Model<N, C>, const N: usize, const C: usize>() -> SimulationConfig {
    SimulationConfig {
        contact: R::ENVIRONMENT.contact_law(),
        terrain: Terrain::None,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    }
}

/// Parameters with every damping of the robot set to zero (and gravity too, `weightless`).
fn undamped<R: Model<N, C>, const N: usize, const C: usize>(weightless: bool) -> R::Params {
    let mut p = R::Params::default();
    for (index, name) in R::Params::names().iter().enumerate() {
        if name.ends_with("damping") || (weightless && *name == "gravity") {
            p.set_index(index, 0.0);
        }
    }
    p
}

/// The initial state with every coordinate moving.
fn moving<R: Model<N, C>, const N: usize, const C: usize>() -> State<N> {
    let q = SVector::<f64, N>::from_iterator(R::INITIAL_POSITION.iter().copied());
    let qd = SVector::<f64, N>::from_fn(|i, _| match R::COORDINATES[i].kind {
        softgen_runtime::CoordinateKind::ActuatorLength => 0.05 * ((i as f64).sin()),
        softgen_runtime::CoordinateKind::Curvature => 3.0 * ((i as f64).cos()),
        _ => 0.4 * ((i as f64 + 1.0).sin()),
    });
    State::new(q, qd)
}

fn integrate<R: Model<N, C>, const N: usize, const C: usize>(p: &R::Params, seconds: f64, mut check: impl FnMut(&State<N>)) {
    let mut sim = Simulation::<R, N, C>::new(p.clone(), free_flight::<R, N, C>()).unwrap();
    let mut x = moving::<R, N, C>();
    let mut integrator = DormandPrince5::new(Tolerances { relative: 1e-11, absolute: 1e-13 }).unwrap();
    let mut t = 0.0;
    check(&x);
    for k in 1..=10 {
        integrator.integrate_to(&mut sim, &mut t, &mut x, seconds * k as f64 / 10.0).unwrap();
        check(&x);
    }
}

fn energy_is_conserved<R: Model<N, C>, const N: usize, const C: usize>() {
    let p = undamped::<R, N, C>(false);
    let energy = |x: &State<N>| R::kinetic_energy(&x.q, &x.qd, &p) + R::potential_energy(&x.q, &p, &R::cache(&x.q, &p));
    let start = moving::<R, N, C>();
    let e0 = energy(&start);
    let scale = R::kinetic_energy(&start.q, &start.qd, &p).abs() + e0.abs();
    let mut worst: f64 = 0.0;
    integrate::<R, N, C>(&p, 1.0, |x| worst = worst.max((energy(x) - e0).abs() / scale));
    println!("{}: energy {e0:.6} J, largest relative drift over 1 s {worst:.2e}", R::NAME);
    assert!(worst < 1e-7, "{}: energy drifts by {worst:e}", R::NAME);
}

fn momentum_is_conserved<R: Model<N, C>, const N: usize, const C: usize>() {
    let p = undamped::<R, N, C>(true);
    let start = moving::<R, N, C>();
    let k0 = R::cache(&start.q, &p);
    let (l0, h0) = (R::linear_momentum(&start.q, &start.qd, &p, &k0), R::angular_momentum(&start.q, &start.qd, &p, &k0));
    let scale = 1.0 + l0.norm() + h0.norm();
    let mut worst: f64 = 0.0;
    integrate::<R, N, C>(&p, 1.0, |x| {
        let k = R::cache(&x.q, &p);
        let (l, h): (Vector3<f64>, Vector3<f64>) = (R::linear_momentum(&x.q, &x.qd, &p, &k), R::angular_momentum(&x.q, &x.qd, &p, &k));
        worst = worst.max(((l - l0).norm() + (h - h0).norm()) / scale);
    });
    println!("{}: momentum |L| {:.4}, |H| {:.4}, largest relative change over 1 s {worst:.2e}", R::NAME, l0.norm(), h0.norm());
    assert!(worst < 1e-7, "{}: momentum changes by {worst:e}", R::NAME);
}

#[test]
fn hub_with_four_soft_limbs_conserves_energy_and_momentum() {
    energy_is_conserved::<SoftLimbedHub, 18, 37>();
    momentum_is_conserved::<SoftLimbedHub, 18, 37>();
}

#[test]
fn rigid_soft_chain_conserves_energy_and_momentum() {
    energy_is_conserved::<RigidSoftChain, 12, 20>();
    momentum_is_conserved::<RigidSoftChain, 12, 20>();
}

#[test]
fn planar_soft_chain_conserves_energy_and_momentum() {
    energy_is_conserved::<PlanarSoftChain, 5, 7>();
    momentum_is_conserved::<PlanarSoftChain, 5, 7>();
}

#[test]
fn fixed_arm_with_inextensible_and_planar_sections_conserves_energy() {
    energy_is_conserved::<SoftKindsArm, 3, 10>();
}
