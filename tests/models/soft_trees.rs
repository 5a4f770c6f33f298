//! Soft sections as joints of one tree with rigid bodies: the fixtures with a hub and four
//! soft limbs (the topology of 002_f355a977a209e7c9), a rigid - soft - rigid - soft - rigid
//! chain (004_4e5a2166b70a9520), a planar chain with curvature coordinates
//! (001_6780a70913e94322) and a fixed arm with inextensible and planar sections, in free
//! flight: energy conserved without damping, and without gravity linear and angular momentum
//! conserved too (the elastic forces are internal). The generic invariants run in
//! generated/tests/invariants.rs. For every soft robot, contact through frames and segments gives the
//! forces of the points' own Jacobians.

use nalgebra::{SMatrix, SVector, Vector3};
use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{Pinniped, PlanarSoftChain, RigidSoftChain, SoftKindsArm, SoftLimbedHub, SoftSnake};
use softgen_runtime::{
    DormandPrince5, Integrator, JointPd, Model, ParamSet, Simulation, SimulationConfig, State, Terrain, Tolerances,
};

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

fn integrate<R: Model<N, C>, const N: usize, const C: usize>(
    p: &R::Params,
    seconds: f64,
    mut check: impl FnMut(&State<N>),
) {
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
    let (l0, h0) =
        (R::linear_momentum(&start.q, &start.qd, &p, &k0), R::angular_momentum(&start.q, &start.qd, &p, &k0));
    let scale = 1.0 + l0.norm() + h0.norm();
    let mut worst: f64 = 0.0;
    integrate::<R, N, C>(&p, 1.0, |x| {
        let k = R::cache(&x.q, &p);
        let (l, h): (Vector3<f64>, Vector3<f64>) =
            (R::linear_momentum(&x.q, &x.qd, &p, &k), R::angular_momentum(&x.q, &x.qd, &p, &k));
        worst = worst.max(((l - l0).norm() + (h - h0).norm()) / scale);
    });
    println!(
        "{}: momentum |L| {:.4}, |H| {:.4}, largest relative change over 1 s {worst:.2e}",
        R::NAME,
        l0.norm(),
        h0.norm()
    );
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

/// A random state about the robot's initial one: curvature coordinates within 3 of it either
/// way, actuator lengths within 2 cm, other coordinates within 0.3.
fn bent_state<R: Model<N, C>, const N: usize, const C: usize>(rng: &mut StdRng) -> SVector<f64, N> {
    SVector::<f64, N>::from_fn(|i, _| {
        R::INITIAL_POSITION[i]
            + match R::COORDINATES[i].kind {
                softgen_runtime::CoordinateKind::ActuatorLength => rng.gen_range(-0.02..0.02),
                softgen_runtime::CoordinateKind::Curvature => rng.gen_range(-3.0..3.0),
                _ => rng.gen_range(-0.3..0.3),
            }
    })
}

/// The runtime serves soft robots' contact frame by frame: a segment's shared columns and
/// twist once, each touching frame's own columns, its points' forces into its wrench. At
/// bent, moving states against ground through the middle of the robot (so that about half
/// the points touch), that gives each point the force of the contact law at its own J qd,
/// and the generalized force sum J' F, with and without a report.
fn frame_contact_matches_point_jacobians<R: Model<N, C>, const N: usize, const C: usize>() {
    assert_eq!(R::CONTACT_FRAME_OF.len(), C, "{} serves contact through frames", R::NAME);
    let p = R::Params::default();
    let mut rng = StdRng::seed_from_u64(11);
    // The same stiff, damped, anisotropic law for every robot (some fixtures have none).
    let mut law = R::ENVIRONMENT.contact_law();
    law.stiffness = 1000.0;
    law.damping = 20.0;
    law.friction.along = 0.6;
    law.friction.across = 0.2;
    law.friction.anisotropy = softgen_runtime::FrictionAnisotropy::BodyAxis;
    law.friction.regularisation = 0.01;
    let mut touching = 0;
    for _ in 0..10 {
        let q = bent_state::<R, N, C>(&mut rng);
        let qd = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.5..0.5));
        let cache = R::cache(&q, &p);
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(&q, &p, &cache, &mut positions);
        let mut heights: Vec<f64> = positions.iter().map(|x| x.z).collect();
        heights.sort_by(f64::total_cmp);
        // Between two points' heights: a point within rounding of the ground would touch in
        // one placement and not in another (frame by frame or all at once agree to 1e-14).
        let terrain = Terrain::Flat { height: 0.5 * (heights[C / 2 - 1] + heights[C / 2]) };
        let config = SimulationConfig { contact: law, terrain, ..free_flight::<R, N, C>() };
        let sim = Simulation::<R, N, C>::new(p.clone(), config).unwrap();
        let mut report = softgen_runtime::ContactReport::default();
        let reported = sim.generalized_force(0.0, &q, &qd, &cache, Some(&mut report));
        let alone = sim.generalized_force(0.0, &q, &qd, &cache, None);
        let mut axes = [Vector3::zeros(); C];
        R::contact_axes_into(&q, &p, &cache, &mut axes);
        let mut expected = SVector::<f64, N>::zeros();
        for point in 0..C {
            let mut jacobian = SMatrix::<f64, 3, N>::zeros();
            R::contact_jacobian_into(point, &q, &p, &cache, &mut jacobian);
            let force = match terrain.contact(&positions[point]) {
                Some(contact) => law.force(&contact, &(jacobian * qd), &axes[point]).total(),
                None => Vector3::zeros(),
            };
            touching += usize::from(force != Vector3::zeros());
            let scale = 1.0 + force.norm();
            assert!(
                (report.forces[point] - force).norm() < 1e-9 * scale,
                "{}: point {point}: {} against {force}",
                R::NAME,
                report.forces[point]
            );
            expected += jacobian.tr_mul(&force);
        }
        let scale = 1.0 + expected.norm();
        assert!(
            (reported - expected).norm() < 1e-9 * scale,
            "{}: {reported} against the points' J' F {expected}",
            R::NAME
        );
        assert!((alone - expected).norm() < 1e-9 * scale, "{}: without a report {alone} against {expected}", R::NAME);
        let split = report.normal_generalized + report.friction_generalized;
        assert!(
            (split - expected).norm() < 1e-9 * scale,
            "{}: normal and friction parts add to {split}, not {expected}",
            R::NAME
        );
    }
    assert!(touching >= 10 * C / 4, "{}: {touching} points touched in 10 states", R::NAME);
}

#[test]
fn frame_contact_matches_point_jacobians_for_every_soft_robot() {
    frame_contact_matches_point_jacobians::<SoftSnake, 15, 310>();
    frame_contact_matches_point_jacobians::<Pinniped, 14, 55>();
    frame_contact_matches_point_jacobians::<SoftLimbedHub, 18, 37>();
    frame_contact_matches_point_jacobians::<RigidSoftChain, 12, 20>();
    frame_contact_matches_point_jacobians::<SoftKindsArm, 3, 10>();
}

/// Generated code computes neighbouring skin rings of a section together in SIMD lanes (a
/// chunk): at random bent states every chunk's points, own columns and axes are each frame's
/// own kernels' (to rounding: lanes may add a sum's terms in another order), and chunks are
/// runs of at most `CONTACT_CHUNK` consecutive frames of one segment.
fn chunks_match_frames<R: Model<N, C>, const N: usize, const C: usize>(expect_chunks: bool) {
    let frames = R::CONTACT_FRAME_START.len() - 1;
    // Without chunks the list is empty and every frame is its own chunk.
    assert!(matches!(R::CONTACT_FRAME_CHUNK.len(), 0) || R::CONTACT_FRAME_CHUNK.len() == frames, "{}", R::NAME);
    let chunk_of = R::contact_frame_chunk;
    let mut chunked = 0;
    for frame in 0..frames {
        let chunk = chunk_of(frame);
        assert!(chunk <= frame && frame - chunk < softgen_runtime::CONTACT_CHUNK, "{}: frame {frame}", R::NAME);
        assert!((chunk..=frame).all(|g| chunk_of(g) == chunk), "{}: frame {frame}", R::NAME);
        assert_eq!(R::CONTACT_FRAME_SEGMENT[chunk], R::CONTACT_FRAME_SEGMENT[frame], "{}: frame {frame}", R::NAME);
        chunked += usize::from(chunk != frame);
    }
    assert_eq!(chunked > 0, expect_chunks, "{}: {chunked} frames share a chunk with the frame before", R::NAME);
    let p = R::Params::default();
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..5 {
        let q = bent_state::<R, N, C>(&mut rng);
        let cache = R::cache(&q, &p);
        for chunk in (0..frames).filter(|&f| chunk_of(f) == f) {
            let mut by_chunk = [Vector3::new(f64::NAN, f64::NAN, f64::NAN); C];
            R::contact_chunk_positions_into(chunk, &q, &p, &cache, &mut by_chunk);
            let mut owns = [SMatrix::<f64, 6, 3>::from_element(f64::NAN); softgen_runtime::CONTACT_CHUNK];
            let mut axes = [Vector3::new(f64::NAN, f64::NAN, f64::NAN); softgen_runtime::CONTACT_CHUNK];
            R::contact_chunk_own_into(chunk, &q, &p, &cache, &mut owns, &mut axes);
            for frame in (chunk..frames).take_while(|&f| chunk_of(f) == chunk) {
                let mut alone = [Vector3::zeros(); C];
                R::contact_frame_positions_into(frame, &q, &p, &cache, &mut alone);
                for point in R::CONTACT_FRAME_START[frame] as usize..R::CONTACT_FRAME_START[frame + 1] as usize {
                    let error = (by_chunk[point] - alone[point]).norm();
                    assert!(error <= 1e-14 * (1.0 + alone[point].norm()), "{}: point {point}: {error:e}", R::NAME);
                }
                let mut own = SMatrix::<f64, 6, 3>::zeros();
                let mut axis = Vector3::zeros();
                R::contact_frame_own_into(frame, &q, &p, &cache, &mut own, &mut axis);
                let lane = frame - chunk;
                let error = (owns[lane] - own).norm() + (axes[lane] - axis).norm();
                assert!(
                    error <= 1e-13 * (1.0 + own.norm()),
                    "{}: frame {frame}: own columns off by {error:e}",
                    R::NAME
                );
            }
        }
    }
}

#[test]
fn skin_ring_chunks_match_their_frames_for_every_soft_robot() {
    chunks_match_frames::<SoftSnake, 15, 310>(true);
    chunks_match_frames::<Pinniped, 14, 55>(false);
    chunks_match_frames::<SoftLimbedHub, 18, 37>(false);
    chunks_match_frames::<RigidSoftChain, 12, 20>(false);
    chunks_match_frames::<SoftKindsArm, 3, 10>(false);
}
