//! Located contact onsets (`Simulation::locate_contact_onsets`): within a step only the
//! points that penetrated its start carry force, and a step that takes another point deeper
//! than the tolerance is cut at that point's touchdown. For a soft robot (contact through
//! frames, with the broad phase) and a rigid one (contact point by point): at the state a
//! step starts from, the located simulation's accelerations are the unlocated ones; a point
//! that touches down during the step carries no force in it; the cut is where the earliest
//! such point's depth, linear over the step, reaches half the tolerance; reports show every
//! point in touch.

use nalgebra::{SVector, Vector3};
use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{SnakePedalWave, SoftSnake};
use softgen_runtime::{
    ContactLaw, CoordinateKind, JointPd, Model, SecondOrderSystem, Simulation, SimulationConfig, State, Terrain,
};

const TOLERANCE: f64 = 1e-6;

/// A robot without gait or servos on `terrain`.
fn passive(contact: ContactLaw, terrain: Terrain) -> SimulationConfig {
    SimulationConfig {
        contact,
        terrain,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    }
}

fn accelerations<R: Model<N, C>, const N: usize, const C: usize>(
    sim: &mut Simulation<R, N, C>,
    x: &State<N>,
) -> SVector<f64, N> {
    let mut qdd = SVector::zeros();
    sim.acceleration(0.0, &x.q, &x.qd, &mut qdd).unwrap();
    qdd
}

fn signed_depths<R: Model<N, C>, const N: usize, const C: usize>(
    p: &R::Params,
    terrain: &Terrain,
    q: &SVector<f64, N>,
) -> Vec<f64> {
    let mut positions = [Vector3::zeros(); C];
    R::contact_positions_into(q, p, &R::cache(q, p), &mut positions);
    positions.iter().map(|x| terrain.signed_depth(x)).collect()
}

fn located_onsets<R: Model<N, C>, const N: usize, const C: usize>() {
    let p = R::Params::default();
    let mut rng = StdRng::seed_from_u64(17);
    let mut law = R::ENVIRONMENT.contact_law();
    law.stiffness = 1000.0;
    law.damping = 130.0;
    law.friction.along = 0.5;
    law.friction.across = 0.5;
    law.friction.regularisation = 0.01;
    let (mut cuts, mut armed_points, mut landed) = (0, 0, 0);
    for _ in 0..20 {
        let start = State::new(
            SVector::<f64, N>::from_fn(|i, _| {
                R::INITIAL_POSITION[i]
                    + match R::COORDINATES[i].kind {
                        CoordinateKind::ActuatorLength => rng.gen_range(-0.02..0.02),
                        _ => rng.gen_range(-0.3..0.3),
                    }
            }),
            SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.5..0.5)),
        );
        // A short step's end: every coordinate moved a little.
        let end = State::new(
            start.q + SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-2e-3..2e-3)),
            start.qd + SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.05..0.05)),
        );
        // Ground through the middle of the robot at the start, just under the lowest point
        // of its upper half (0.1 mm, or half the way to the next point down), so that the
        // step brings points down.
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(&start.q, &p, &R::cache(&start.q, &p), &mut positions);
        let mut heights: Vec<f64> = positions.iter().map(|x| x.z).collect();
        heights.sort_by(f64::total_cmp);
        let below = (0.5 * (heights[C / 2] - heights[C / 2 - 1])).min(1e-4);
        let terrain = Terrain::Flat { height: heights[C / 2] - below };
        let config = passive(law, terrain);
        let mut unlocated = Simulation::<R, N, C>::new(p.clone(), config).unwrap();
        let mut located = Simulation::<R, N, C>::new(p.clone(), config).unwrap();
        located.locate_contact_onsets(TOLERANCE).unwrap();

        // The step starts: the points penetrating its start are armed, and with them the
        // accelerations are the unlocated ones.
        assert!(located.switch_modes(0.0, &start), "{}: points touch the start, so some are armed", R::NAME);
        assert!(!located.switch_modes(0.0, &start), "{}: switching again to the same state arms nothing new", R::NAME);
        let (a, b) = (accelerations(&mut located, &start), accelerations(&mut unlocated, &start));
        assert!((a - b).norm() <= 1e-12 * (1.0 + b.norm()), "{}: at the step's start {a} against {b}", R::NAME);

        // Within the step, a point that was not armed carries no force: with every touching
        // point of the end armed instead, the accelerations differ exactly when one has come
        // down.
        let (depth_start, depth_end) =
            (signed_depths::<R, N, C>(&p, &terrain, &start.q), signed_depths::<R, N, C>(&p, &terrain, &end.q));
        let came_down = (0..C).filter(|&i| depth_start[i] <= 0.0 && depth_end[i] > 0.0).count();
        armed_points += depth_start.iter().filter(|&&d| d > 0.0).count();
        landed += came_down;
        let mid_step = accelerations(&mut located, &end);
        let all_touching = accelerations(&mut unlocated, &end);
        if came_down == 0 {
            assert!(
                (mid_step - all_touching).norm() <= 1e-12 * (1.0 + all_touching.norm()),
                "{}: nobody came down, yet {mid_step} against {all_touching}",
                R::NAME
            );
        }

        // The cut: the earliest of the points that came down deeper than the tolerance, where
        // its depth, linear over the step, is half the tolerance.
        let expected = (0..C)
            .filter(|&i| depth_start[i] <= 0.0 && depth_end[i] > TOLERANCE)
            .map(|i| (0.5 * TOLERANCE - depth_start[i]) / (depth_end[i] - depth_start[i]))
            .min_by(f64::total_cmp);
        let cut = located.overshot_event(&start, &end);
        match (cut, expected) {
            (None, None) => {}
            (Some(cut), Some(expected)) => {
                assert!(
                    cut > 0.0 && cut < 1.0 && (cut - expected).abs() < 1e-9,
                    "{}: cut at {cut}, expected {expected}",
                    R::NAME
                );
                cuts += 1;
            }
            _ => panic!("{}: cut {cut:?}, expected {expected:?}", R::NAME),
        }

        // A report shows what a step from its state would see: every point in touch.
        let (shown, all) = (located.report(0.0, &end), unlocated.report(0.0, &end));
        assert_eq!(shown.active, all.active, "{}", R::NAME);
        assert!(
            (shown.normal_generalized - all.normal_generalized).norm() <= 1e-12 * (1.0 + all.normal_generalized.norm()),
            "{}",
            R::NAME
        );
    }
    println!("{}: {armed_points} points armed, {landed} came down in a step, {cuts} steps cut", R::NAME);
    assert!(
        cuts >= 5 && landed >= 5 && armed_points >= 20 * C / 4,
        "{}: {cuts} cuts, {landed} points came down, {armed_points} armed",
        R::NAME
    );
}

#[test]
fn located_onsets_for_a_soft_and_a_rigid_robot() {
    located_onsets::<SoftSnake, 15, 310>();
    located_onsets::<SnakePedalWave, 8, 13>();
}

#[test]
fn onset_tolerance_must_be_positive_and_finite() {
    let config = passive(SoftSnake::ENVIRONMENT.contact_law(), SoftSnake::ENVIRONMENT.terrain);
    let mut sim = Simulation::<SoftSnake, 15, 310>::new(Default::default(), config).unwrap();
    for bad in [0.0, -1e-6, f64::NAN, f64::INFINITY] {
        let message = sim.locate_contact_onsets(bad).unwrap_err();
        assert!(message.contains("contact onset tolerance"), "{message}");
    }
    sim.locate_contact_onsets(1e-6).unwrap();
    // Prescribed coordinates cannot place a touchdown: refused, not silently unlocated.
    let driven = [softgen_runtime::DrivenCoordinate {
        coordinate: 6,
        response: softgen_runtime::ActuatorResponse::FirstOrder { time_constant: 0.05, gain: 1.0 },
    }];
    let start = State::new(SVector::from_iterator(SoftSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let message = softgen_runtime::PrescribedSimulation::new(sim, &driven, 0.0, &start).err().expect("refused");
    assert!(message.contains("located contact onsets"), "{message}");
}
