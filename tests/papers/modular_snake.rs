//! The seed paper's experiments (003_011ffa2a91e05fc5) and the conservation laws, run
//! through the same runtime the CLI uses.

use nalgebra::SVector;
use softgen::{run_scenario, IntegratorChoice, Scenario, TerrainChoice};
use softgen_generated::{DoublePendulum, SnakeLateralUndulation, SnakePedalWave, SpatialTree};
use softgen_runtime::{
    ContactLaw, DormandPrince5, ForceCoordinates, FrictionAnisotropy, FrictionLaw, Integrator, JointPd, Model,
    Serpenoid, Simulation, SimulationConfig, State, Terrain, Tolerances,
};

fn free_config(gait: Option<Serpenoid>, servo: JointPd) -> SimulationConfig {
    SimulationConfig {
        contact: ContactLaw {
            stiffness: 0.0,
            damping: 0.0,
            dissipation: 0.0,
            friction: FrictionLaw {
                along: 0.0,
                across: 0.0,
                anisotropy: FrictionAnisotropy::Isotropic,
                regularisation: 0.0,
            },
        },
        terrain: Terrain::None,
        gait,
        servo,
        admittance: None,
        control_period: 0.01,
    }
}

fn tight() -> DormandPrince5 {
    DormandPrince5::new(Tolerances { relative: 1e-12, absolute: 1e-12 }).unwrap()
}

fn energy<R: Model<N, C>, const N: usize, const C: usize>(x: &State<N>, p: &R::Params) -> f64 {
    R::kinetic_energy(&x.q, &x.qd, p) + R::potential_energy(&x.q, p, &R::cache(&x.q, p))
}

/// Integrates a passive, contact-free model for 10 s and returns the largest relative energy
/// drift, relative to the initial kinetic energy plus |initial potential energy|.
fn energy_drift<R: Model<N, C>, const N: usize, const C: usize>(params: R::Params, x0: State<N>) -> f64 {
    let servo = JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    let mut sim = Simulation::<R, N, C>::new(params.clone(), free_config(None, servo)).unwrap();
    let mut integrator = tight();
    let (mut t, mut x) = (0.0, x0);
    let e0 = energy::<R, N, C>(&x, &params);
    let reference =
        R::kinetic_energy(&x.q, &x.qd, &params) + R::potential_energy(&x.q, &params, &R::cache(&x.q, &params)).abs();
    let mut worst: f64 = 0.0;
    while t < 10.0 {
        let next = (t + 0.1f64).min(10.0);
        integrator.integrate_to(&mut sim, &mut t, &mut x, next).unwrap();
        worst = worst.max((energy::<R, N, C>(&x, &params) - e0).abs() / reference);
    }
    worst
}

#[test]
fn energy_is_conserved_without_damping_contact_or_torque() {
    // Double pendulum under gravity, released from a chaotic state.
    let x0 = State::new(SVector::from([-1.0, 0.5]), SVector::from([2.0, -3.0]));
    let drift = energy_drift::<DoublePendulum, 2, 1>(Default::default(), x0);
    assert!(drift < 1e-6, "double pendulum energy drift {drift:e}");

    // Free-floating snake tumbling under gravity (free fall plus internal motion).
    let q0 = SVector::from([0.0, 0.5, 0.2, 0.4, -0.3, 0.8, -0.6, 0.2]);
    let qd0 = SVector::from([0.1, 0.5, 1.0, -2.0, 1.5, 0.5, -1.0, 2.0]);
    let drift = energy_drift::<SnakePedalWave, 8, 13>(Default::default(), State::new(q0, qd0));
    assert!(drift < 1e-6, "snake energy drift {drift:e}");
}

/// The rigid snake dropped straight across a stair's edge, its face between two points (no
/// point over the edge), with springs but no damping or friction in the contact and passive
/// joints: the edge holds the link up, and energy (kinetic, gravity's, and every spring's,
/// the edge's on its chord included) is conserved while the contacts persist, which it is
/// only if the edge's force on the chord is shared between the chord's points as the
/// gradient of its depth. For 0.13 s: then a point sunk into the top slides back over the
/// edge, and its spring hands on to the edge's on the chord beyond it, the point's depth d
/// becoming the edge's d cos(theta) (theta the chord's slope), which changes the energy by
/// k d^2 sin^2(theta) / 2 (1.3 mJ here).
#[test]
fn the_stair_edge_holds_a_link_and_conserves_energy() {
    const N: usize = softgen_generated::snake_pedal_wave::DOF;
    const C: usize = softgen_generated::snake_pedal_wave::CONTACTS;
    let params = <SnakePedalWave as Model<N, C>>::Params::default();
    let servo = JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    let mut config = free_config(None, servo);
    config.contact.stiffness = 350.0;
    // Points at x = 0, 0.05, ..., 0.6: the face at 0.28 lies between 0.25 and 0.30.
    config.terrain = Terrain::Stair { position: 0.28, height: 0.1 };
    let mut sim = Simulation::<SnakePedalWave, N, C>::new(params.clone(), config).unwrap();
    assert_eq!(sim.chords(), (0..C - 1).map(|i| (i, i + 1)).collect::<Vec<_>>(), "one chord per neighbouring pair");
    let mut q = SVector::<f64, N>::zeros();
    q[1] = 0.103;
    let mut x = State::new(q, SVector::zeros());
    // A pure spring's energy from its force: |f|^2 / 2 k.
    let stiffness = sim.config.contact.stiffness;
    let total = |sim: &Simulation<SnakePedalWave, N, C>, x: &State<N>| {
        let report = sim.report(0.0, x);
        let springs: f64 = report.forces.iter().chain(&report.edge_forces).map(|f| f.norm_squared()).sum();
        (energy::<SnakePedalWave, N, C>(x, &params) + springs / (2.0 * stiffness), report)
    };
    let (e0, _) = total(&sim, &x);
    let mut integrator = tight();
    let (mut t, mut worst, mut pressed, mut lowest_edge_chord) = (0.0, 0.0f64, 0, f64::INFINITY);
    while t < 0.13 {
        let next = t + 0.005;
        integrator.integrate_to(&mut sim, &mut t, &mut x, next).unwrap();
        let (e, report) = total(&sim, &x);
        worst = worst.max((e - e0).abs());
        for (k, force) in report.edge_forces.iter().enumerate().filter(|(_, f)| f.norm() > 0.0) {
            pressed += 1;
            let (a, b) = (report.positions[k], report.positions[k + 1]);
            lowest_edge_chord = lowest_edge_chord.min(a.z + (b.z - a.z) * (0.28 - a.x) / (b.x - a.x));
            assert!(force.z > 0.0 && force.x < 0.0, "the edge pushes its chord up and back: {force}");
        }
    }
    // The snake lands at 0.025 s: from then on the edge alone holds link 3 up, sinking into
    // it by millimetres, where without it the link would swing down about its front joint.
    assert!(pressed >= 20, "the edge pressed on a chord in {pressed} of 26 samples");
    assert!(lowest_edge_chord > 0.09, "the chord sank to {lowest_edge_chord} m at the edge");
    assert!(worst < 1e-9, "energy drift {worst:e} J");
}

/// Away from the step's edge the stair is flat ground: the pedal wave 20 s before a step 50 m
/// ahead runs as on flat ground to the last bit (the chords are watched, and never pressed).
#[test]
fn a_stair_far_ahead_changes_nothing() {
    let run = |terrain: Terrain| {
        let mut s = scenario("snake_pedal_wave", 20.0);
        s.terrain = TerrainChoice::Override(terrain);
        let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
        assert!(summary.error.is_none());
        summary
    };
    let (flat, stair) = (run(Terrain::Flat { height: 0.0 }), run(Terrain::Stair { position: 50.0, height: 0.1 }));
    assert!(flat.com_end().x - flat.com_start().x > 0.1, "the snake moves: {}", flat.com_end());
    assert_eq!(flat.com_end(), stair.com_end());
    assert_eq!(flat.final_points, stair.final_points);
    assert_eq!(flat.max_depth, stair.max_depth);
}

#[test]
fn spatial_tree_conserves_energy_and_momenta_in_free_flight() {
    type R = SpatialTree;
    let mut params = <R as Model<10, 3>>::Params::default();
    softgen_runtime::ParamSet::set(&mut params, "gravity", 0.0).unwrap();
    let q0 = SVector::from_iterator(R::INITIAL_POSITION.iter().copied());
    let qd0 = SVector::from([0.2, -0.1, 0.3, 0.5, -0.4, 0.8, 1.5, -2.0, 1.0, 0.3]);
    let drift = energy_drift::<R, 10, 3>(params.clone(), State::new(q0, qd0));
    assert!(drift < 1e-6, "energy drift {drift:e}");
    let servo = JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    let mut sim = Simulation::<R, 10, 3>::new(params.clone(), free_config(None, servo)).unwrap();
    let mut x = State::new(q0, qd0);
    let k0 = R::cache(&x.q, &params);
    let (p0, l0) = (R::linear_momentum(&x.q, &x.qd, &params, &k0), R::angular_momentum(&x.q, &x.qd, &params, &k0));
    let mut t = 0.0;
    tight().integrate_to(&mut sim, &mut t, &mut x, 5.0).unwrap();
    let k = R::cache(&x.q, &params);
    assert!((R::linear_momentum(&x.q, &x.qd, &params, &k) - p0).norm() < 1e-8 * (1.0 + p0.norm()));
    assert!((R::angular_momentum(&x.q, &x.qd, &params, &k) - l0).norm() < 1e-8 * (1.0 + l0.norm()));
}

#[test]
fn horizontal_plane_conserves_momentum_without_external_force() {
    type R = SnakeLateralUndulation;
    let params = <R as Model<8, 13>>::Params::default();
    // The gait's servo torques are internal: they must neither move the centre of mass nor
    // create angular momentum.
    let gait =
        Serpenoid { amplitude: 1.1, temporal_frequency: 1.2566, spatial_frequency: -1.5708, offset: 0.3, ramp: 1.0 };
    let servo = JointPd { stiffness: 5.0, damping: 0.02, torque_limit: 2.0 };
    let mut sim = Simulation::<R, 8, 13>::new(params.clone(), free_config(Some(gait), servo)).unwrap();
    let mut integrator = DormandPrince5::new(Tolerances { relative: 1e-10, absolute: 1e-12 }).unwrap();
    let mut x = State::new(SVector::from([0.0, 0.0, 0.3, 0.1, -0.2, 0.3, 0.1, -0.1]), SVector::zeros());
    let mut t = 0.0;
    let k0 = R::cache(&x.q, &params);
    let com0 = R::center_of_mass(&x.q, &params, &k0);
    let mut moved: f64 = 0.0;
    let mut spin: f64 = 0.0;
    let mut shape_change: f64 = 0.0;
    while t < 10.0 {
        let next = t + 0.05;
        integrator.integrate_to(&mut sim, &mut t, &mut x, next).unwrap();
        let k = R::cache(&x.q, &params);
        moved = moved.max((R::center_of_mass(&x.q, &params, &k) - com0).norm());
        spin = spin.max(R::angular_momentum(&x.q, &x.qd, &params, &k).norm());
        shape_change = shape_change.max(x.q[4].abs());
    }
    assert!(shape_change > 0.5, "the gait should really move the joints");
    assert!(moved < 1e-7, "centre of mass moved {moved:e} m");
    assert!(spin < 1e-7, "angular momentum reached {spin:e}");

    // Passive, with arbitrary initial velocities: momenta stay constant.
    let servo = JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 };
    let mut sim = Simulation::<R, 8, 13>::new(params.clone(), free_config(None, servo)).unwrap();
    let mut x = State::new(
        SVector::from([0.1, -0.2, 0.3, 0.5, -0.4, 0.3, 0.2, -0.6]),
        SVector::from([0.3, -0.1, 0.5, 1.0, -2.0, 1.5, 0.5, 1.0]),
    );
    let k0 = R::cache(&x.q, &params);
    let (p0, l0) = (R::linear_momentum(&x.q, &x.qd, &params, &k0), R::angular_momentum(&x.q, &x.qd, &params, &k0));
    let mut t = 0.0;
    integrator.integrate_to(&mut sim, &mut t, &mut x, 10.0).unwrap();
    let k = R::cache(&x.q, &params);
    assert!((R::linear_momentum(&x.q, &x.qd, &params, &k) - p0).norm() < 1e-8 * (1.0 + p0.norm()));
    assert!((R::angular_momentum(&x.q, &x.qd, &params, &k) - l0).norm() < 1e-8 * (1.0 + l0.norm()));
}

fn scenario(robot: &str, duration: f64) -> Scenario {
    let mut s = Scenario::new(robot);
    s.duration = duration;
    s.integrator = IntegratorChoice::RungeKutta4 { step: 0.002 };
    s
}

/// CoM x at the end of each gait period after the fade-in.
fn per_cycle_progress(summary: &softgen::RunSummary, period: f64, cycles: usize) -> Vec<f64> {
    (0..cycles).map(|c| summary.com_at((c + 1) as f64 * period).x - summary.com_at(c as f64 * period).x).collect()
}

#[test]
fn pedal_wave_moves_forward_every_cycle() {
    // The paper's values: 6 links, k = 350, d = 25, A = 1.1, omega = 2 pi / 5, eta = -pi / 2,
    // dt = 0.002 s with RK4.
    let s = scenario("snake_pedal_wave", 25.0);
    let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
    assert!(summary.error.is_none(), "{:?}", summary.error);
    let progress = per_cycle_progress(&summary, 5.0, 5);
    for (cycle, dx) in progress.iter().enumerate().skip(1) {
        assert!(*dx > 0.03, "cycle {cycle} advanced only {dx} m: {progress:?}");
    }
    // With the paper's soft ground (350 N/m) the robot's whole weight often rests on one or
    // two points: they sink up to about 17 mm (measured 16.7). Recorded, not hidden.
    assert!(summary.max_depth < 0.02, "deepest point {} m", summary.max_depth);
    // On ground stiff enough for the load (1000 N/m) nothing sinks more than 1 cm and the
    // gait still advances every cycle.
    let mut stiff = scenario("snake_pedal_wave", 25.0);
    stiff.contact_stiffness = Some(1000.0);
    let summary = run_scenario(&stiff, None, &mut |_| {}).unwrap();
    assert!(summary.max_depth < 0.01, "deepest point {} m", summary.max_depth);
    for dx in per_cycle_progress(&summary, 5.0, 5).iter().skip(1) {
        assert!(*dx > 0.03);
    }
}

#[test]
fn lateral_undulation_progresses_along_a_pipe() {
    // With the paper's eta = -pi/2 the six-link body swings only about +-6 cm, so it never
    // touches the walls of a 20 cm pipe and cannot progress: the paper's Fig. 6 does not
    // reproduce with the stated values.
    let s = scenario("snake_lateral_undulation", 10.0);
    let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
    assert_eq!(summary.max_depth, 0.0, "no wall contact with the paper's gait");
    assert!((summary.com_end() - summary.com_start()).norm() < 1e-6);

    // A longer body wave (eta = -1.0 rad) reaches the walls and pushes the snake along.
    let mut s = scenario("snake_lateral_undulation", 25.0);
    s.spatial_frequency = Some(-1.0);
    let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
    assert!(summary.max_depth > 0.0);
    let progress = per_cycle_progress(&summary, 5.0, 5);
    for dx in progress.iter().skip(1) {
        assert!(*dx > 0.05, "{progress:?}");
    }
    // It stays in the pipe.
    for (_, com) in &summary.com_path {
        assert!(com.y.abs() < 0.1);
    }
}

#[test]
fn stair_crossing_with_and_without_admittance_control() {
    // A 10 cm step whose face is at x = 0.9 m; the snake starts with its tail at x = 0.
    let run = |admittance: bool| {
        let mut s = scenario("snake_pedal_wave", 90.0);
        s.terrain = TerrainChoice::Override(Terrain::Stair { position: 0.9, height: 0.1 });
        if admittance {
            s.admittance = Some(softgen_runtime::AdmittanceGains {
                inertia: 1.0,
                damping: 4.0,
                stiffness: 4.0,
                feedback_gain: 2.2,
            });
        }
        let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
        assert!(summary.error.is_none());
        let crossed = summary.final_points.iter().all(|p| p.x > 0.9 && p.z > 0.05);
        (crossed, summary.com_end())
    };
    let (without, com_without) = run(false);
    let (with, com_with) = run(true);
    // Measured: the head reaches the face and the snake stalls there in both cases (CoM
    // x about 0.64 m). The paper reports crossing with the controller; that does not
    // reproduce here (see README).
    assert!(!without, "crossed without the controller: {com_without}");
    assert!(!with, "crossed with the controller: {com_with}");
    assert!(com_without.x > 0.6 && com_with.x > 0.6, "both reach the step: {com_without} {com_with}");
}

#[test]
fn in_the_papers_coordinates_gravity_has_no_joint_component() {
    // 003's eq 15: with the head angle and the centre of mass as coordinates, uniform
    // gravity acts on the centre of mass alone (V' A = 0). Read in the model's coordinates
    // (tail-link pose), it carries the weight of the links ahead of each joint.
    type R = SnakePedalWave;
    let params = <R as Model<8, 13>>::Params::default();
    let paper = <R as Model<8, 13>>::CONTROLLER_COORDINATES;
    assert!(matches!(paper, ForceCoordinates::PlanarChain { joint_sign: -1.0, .. }), "{paper:?}");
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..50 {
        let q = SVector::<f64, 8>::from_fn(|_, _| 4.0 * uniform() - 2.0);
        let cache = R::cache(&q, &params);
        let mut gravity = SVector::<f64, 8>::zeros();
        R::gravity_into(&q, &params, &cache, &mut gravity);
        let (mut in_paper, mut in_model) = (SVector::<f64, 8>::zeros(), SVector::<f64, 8>::zeros());
        paper.joint_forces::<R, 8, 13>(&q, &params, &cache, &gravity, &mut in_paper).unwrap();
        ForceCoordinates::Model.joint_forces::<R, 8, 13>(&q, &params, &cache, &gravity, &mut in_model).unwrap();
        let weight = 0.6 * 9.81;
        for j in 0..5 {
            assert!(in_paper[j].abs() < 1e-12 * weight, "joint {j}: {} at {q}", in_paper[j]);
        }
        // The weight of the links ahead of the first joint, at a lever of up to 0.5 m.
        assert!(in_model.amax() > 1e-3 * weight, "{in_model} at {q}");
    }
}

#[test]
fn the_stair_admittance_experiment_sweeps_what_the_paper_leaves_out_and_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("003-stair-admittance").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "003-stair-admittance");
    let text = report.lines.join("\n");
    // Measured: fed the step's forces only, the controller leaves the gait on flat ground as
    // it is (1.10 cm/s with it and without); fed the ground's as well it changes it (1.19).
    // None of the 38 variations of what the paper does not print gets the snake over the
    // 10 cm step: every run stalls at the face (x = 0.64-0.66 m).
    let speeds: Vec<f64> =
        text.split("cm/s").filter_map(|piece| piece.rsplit(' ').nth(1).and_then(|v| v.parse().ok())).collect();
    let [alone, obstacles, all] = speeds[..] else { panic!("{text}") };
    assert_eq!(alone, obstacles, "{text}");
    assert!((all - alone).abs() > 0.05, "{text}");
    assert!(text.contains("0 of 38 cross with the controller"), "{text}");
    let softgen::Verdict::Differs(why) = &report.verdict else { panic!("{}", report.verdict_line()) };
    assert!(why.starts_with("stalls at the step face for every one of 38 variations"), "{why}");
}

/// The pedal-wave snake's gait and servos on `terrain`, with the admittance controller of
/// the experiments (M_d = 1, D_d = 4, K_d = 4, k_Pi = 2.2) fed the forces `force` names.
fn pedal_wave_with_admittance(terrain: Terrain, force: softgen_runtime::AdmittanceForce) -> SimulationConfig {
    type R = SnakePedalWave;
    let g = R::GAIT.unwrap();
    SimulationConfig {
        contact: R::ENVIRONMENT.contact_law(),
        terrain,
        gait: Some(Serpenoid {
            amplitude: g.amplitude,
            temporal_frequency: g.temporal_frequency,
            spatial_frequency: g.spatial_frequency,
            offset: 0.0,
            ramp: 2.0,
        }),
        servo: g.servo(),
        admittance: Some(softgen_runtime::Admittance {
            gains: softgen_runtime::AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: 2.2 },
            coordinates: <R as Model<8, 13>>::CONTROLLER_COORDINATES,
            force,
        }),
        control_period: 0.002,
    }
}

#[test]
fn the_admittance_controller_fed_obstacles_only_keeps_the_nominal_gait_on_flat_ground() {
    // Eq 23: without an external force Pi_d returns to Pi_n. Fed the step's forces only, the
    // controller leaves every spatial frequency nominal on flat ground, and moves them at
    // the step; fed every contact, the ground's weight moves them on flat ground too.
    type R = SnakePedalWave;
    let nominal = R::GAIT.unwrap().spatial_frequency;
    let largest_deviation = |terrain: Terrain, force: softgen_runtime::AdmittanceForce| {
        let config = pedal_wave_with_admittance(terrain, force);
        let mut sim = Simulation::<R, 8, 13>::new(<R as Model<8, 13>>::Params::default(), config).unwrap();
        let mut integrator = softgen_runtime::RungeKutta4::new(0.002).unwrap();
        // The body laid out from x = 0, its head at 0.6 m.
        let mut x = State::new(SVector::zeros(), SVector::zeros());
        let mut t = 0.0;
        let mut deviation: f64 = 0.0;
        sim.run(&mut integrator, &mut t, &mut x, 10.0, |_, _, _, s| {
            for joint in 0..4 {
                deviation = deviation.max((s.spatial_frequency(joint) - nominal).abs());
            }
        })
        .unwrap();
        deviation
    };
    use softgen_runtime::AdmittanceForce::{AllContacts, Obstacles};
    let flat = Terrain::Flat { height: 0.0 };
    assert_eq!(largest_deviation(flat, Obstacles), 0.0);
    assert!(largest_deviation(flat, AllContacts) > 0.01);
    // The head 2 cm from a 10 cm step: it pushes on the face within the first gait cycle
    // (measured: 0.016 rad at most, against 0.118 from the ground's force on flat ground).
    let stair = Terrain::Stair { position: 0.62, height: 0.1 };
    assert!(largest_deviation(stair, Obstacles) > 0.01);
}

#[test]
fn admittance_controller_adapts_spatial_frequencies_from_contact() {
    type R = SnakePedalWave;
    let params = <R as Model<8, 13>>::Params::default();
    let g = R::GAIT.unwrap();
    // Twenty seconds do not bring the head to the step: the ground's force drives it.
    let config = pedal_wave_with_admittance(
        Terrain::Stair { position: 0.9, height: 0.1 },
        softgen_runtime::AdmittanceForce::AllContacts,
    );
    let mut sim = Simulation::<R, 8, 13>::new(params, config).unwrap();
    let mut integrator = softgen_runtime::RungeKutta4::new(0.002).unwrap();
    let mut x = State::new(SVector::zeros(), SVector::zeros());
    let mut t = 0.0;
    let mut deviation: f64 = 0.0;
    let mut head_joint_deviation: f64 = 0.0;
    sim.run(&mut integrator, &mut t, &mut x, 20.0, |_, _, _, s| {
        deviation = deviation.max((s.spatial_frequency(0) - g.spatial_frequency).abs());
        head_joint_deviation = head_joint_deviation.max((s.spatial_frequency(4) - g.spatial_frequency).abs());
    })
    .unwrap();
    assert!(deviation > 0.01, "contact forces should bend eta_1, got {deviation}");
    assert_eq!(head_joint_deviation, 0.0, "the head joint keeps its nominal eta (eq 24)");
}

#[test]
fn wheeled_lateral_undulation_on_the_floor_needs_anisotropic_friction() {
    // The passive-wheel coefficients of 001_6780a70913e94322 (0.043 along the link, 0.57
    // across), each contact point carrying an equal share of the weight, regularised
    // Coulomb friction, the paper's gait. The body slides opposite to the travelling wave.
    let run = |along: f64, across: f64, anisotropy| {
        let mut s = scenario("snake_lateral_undulation", 25.0);
        s.terrain = TerrainChoice::Override(Terrain::Floor);
        s.friction_along = Some(along);
        s.friction_across = Some(across);
        s.friction_anisotropy = Some(anisotropy);
        s.friction_regularisation = Some(1e-3);
        let summary = run_scenario(&s, None, &mut |_| {}).unwrap();
        assert!(summary.error.is_none());
        summary
    };
    let wheels = run(0.043, 0.57, FrictionAnisotropy::BodyAxis);
    let progress = per_cycle_progress(&wheels, 5.0, 5);
    for dx in progress.iter().skip(1) {
        assert!(*dx < -0.15, "every cycle moves the snake back along x: {progress:?}");
    }
    let isotropic = run(0.3, 0.3, FrictionAnisotropy::Isotropic);
    let wheeled_distance = (wheels.com_end() - wheels.com_start()).norm();
    let isotropic_distance = (isotropic.com_end() - isotropic.com_start()).norm();
    assert!(wheeled_distance > 10.0 * isotropic_distance, "{wheeled_distance} vs {isotropic_distance}");
}

#[test]
fn the_pipe_experiment_finds_the_paper_inconsistent_and_the_stair_no_contrast_at_10_cm() {
    // 003-pipe: with the printed 0.1 m links no contact point gets 6.1 cm off the pipe's
    // axis, so the 20 cm pipe is never touched; with 0.2 m links (the other reading) the
    // snake reaches the wall and advances, and stalls at the stair with no controller, as
    // Fig 8 has it (it climbed it while the step's edge let links pass through it).
    let dir = tempfile::tempdir().unwrap();
    let pipe = softgen::find_experiment("003-pipe").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&pipe, "003-pipe");
    let softgen::Verdict::PaperInconsistent(why) = &pipe.verdict else { panic!("003-pipe: {}", pipe.verdict_line()) };
    assert!(why.contains("more than 6.1 cm off the pipe's axis (10 cm to its wall)"), "{why}");
    assert!(
        why.contains(
            "advances 57.4 cm, and with no controller stalls at the 10 cm stair as Fig 8 has it (centre of mass at x = 1.09 m after 90 s, step face at 1.5 m)"
        ),
        "{why}"
    );
    assert_eq!(pipe.views.len(), 3, "the printed reading, the other reading and its stair run");
    // 003-stair tests the paper's contrast: both runs stall at the step face (x = 0.64 m),
    // and the verdict names the measured cause: the gait lifts the head tip 8.4 cm, but the
    // highest step crossed is 2 cm without the controller and 3 cm with it, so the body does
    // not get over the edge of steps the head reaches; at 3 cm the controller makes the
    // crossing, the paper's contrast at a lower step.
    let stair = softgen::find_experiment("003-stair").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&stair, "003-stair");
    let softgen::Verdict::Differs(why) = &stair.verdict else { panic!("003-stair: {}", stair.verdict_line()) };
    assert!(why.starts_with("no contrast: it stalls at the 10 cm step with the controller too (x = 0.64 m"), "{why}");
    assert!(
        why.contains("the body not getting over the step's edge, not the gait's reach: the head tip rises at most 8.4 cm on flat ground, and the highest step crossed is 2 cm without the controller and 3 cm with it; the paper's contrast (crossed with the controller, not without) holds at 3 cm"),
        "{why}"
    );
}

/// The MPC head to head (`mpc-003-goals`): the sampler's runs are those of tests/mpc.rs (the
/// goal behind at 8.40 s), and box-DDP's plans keep the wave within the sampler's bounds
/// without failing. The goal behind is the one the body reaches only by reversing its wave: its
/// heading term signed by the wave's direction of travel must make the plans reverse the
/// wave within the first second (at 0.5 s in the measured run) and keep it reversed, so
/// that the body moves toward the goal (0.118 m closer after 5 s in that run at 20 Hz over
/// 1 s; 0.298 m at the task's 50 Hz over 0.5 s, reversed at 0.1 s).
#[test]
fn the_mpc_head_to_head_runs_the_samplers_goals_and_keeps_ddp_in_bounds() {
    use softgen::papers::modular_snake::mpc::{run_goal, GoalsTask, Planner};
    let task = GoalsTask::new().unwrap();
    let sampled = run_goal(&task, Planner::Mppi, "behind", 0.0).unwrap();
    let at = sampled.reached_at.expect("MPPI reaches the goal behind, as in tests/mpc.rs");
    assert!((at - 8.40).abs() < 1e-6, "reached at {at} s");
    let short = GoalsTask { duration: 5.0, ..task.clone() };
    let planned = run_goal(&short, Planner::Ddp, "behind", 0.0).unwrap();
    assert_eq!(planned.plans, (short.duration / short.horizon.period).round() as usize);
    assert_eq!(planned.failed, 0);
    for (t, _, wave) in &planned.samples[1..] {
        for (i, v) in wave.iter().enumerate() {
            assert!(
                *v >= short.horizon.lower[i] && *v <= short.horizon.upper[i],
                "t = {t}: decision {i} is {v}, outside [{}, {}]",
                short.horizon.lower[i],
                short.horizon.upper[i]
            );
        }
    }
    assert!(planned.compute_per_second() > 0.0);
    for (t, _, wave) in planned.samples.iter().filter(|(t, _, _)| *t >= 1.0) {
        assert!(wave[1] < 0.0, "t = {t}: the wave's temporal frequency is {}, not reversed", wave[1]);
    }
    let (start, end) = (planned.samples[0].1, planned.samples.last().unwrap().1);
    let goal = softgen::papers::modular_snake::mpc::goal_of(0.0);
    let closer = (start - goal).norm() - (end - goal).norm();
    assert!(closer > 0.1, "5 s of plans brought the body only {closer} m closer to the goal behind");
}

/// The box-DDP run configuration (`model-specs/snake_lateral_undulation.ddp.run.toml`, for
/// `softgen run --controller mpc --config ...`) is the robot's own but for its [mpc] table,
/// and that table sets up the loop's planner as mpc-003-goals plans offline: the same
/// knots, steps, rate, bounds, weights, heading and arrival.
#[test]
fn the_ddp_run_configuration_plans_as_the_goals_task_does() {
    use softgen::papers::modular_snake::mpc::{parse_run_config, GoalsTask};
    type R = SnakeLateralUndulation;
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("model-specs");
    let read = |name: &str| std::fs::read_to_string(folder.join(name)).unwrap();
    let (own, ddp) = (read("snake_lateral_undulation.run.toml"), read("snake_lateral_undulation.ddp.run.toml"));
    let without_mpc = |text: &str| {
        let mut table: toml::Table = text.parse().unwrap();
        assert!(table.remove("mpc").is_some());
        table
    };
    assert_eq!(without_mpc(&own), without_mpc(&ddp), "the two differ outside their [mpc] tables");
    let config = parse_run_config("snake_lateral_undulation.ddp.run.toml", &ddp).unwrap();
    let Some(softgen::PlannerSettings::BoxDdp(settings)) = config.planner else { panic!("solver = \"ddp\"") };
    let wave = settings.wave.expect("the wave's bounds");
    let task = GoalsTask::new().unwrap();
    let (horizon, weights) = (&task.horizon, &task.weights);
    crate::assert_ddp_knots_and_weights_are_the_tasks(&settings, horizon, weights);
    assert_eq!(1.0 / settings.replan_hz, horizon.period);
    assert_eq!((wave.min.to_vec(), wave.max.to_vec()), (horizon.lower.clone(), horizon.upper.clone()));
    let axes = settings.goal_axis_weights();
    assert_eq!(axes * settings.position_weight, weights.position);
    assert_eq!(axes * settings.terminal_position_weight, weights.terminal_position);
    assert_eq!(
        (settings.heading_weight, settings.terminal_heading_weight),
        (weights.heading, weights.terminal_heading)
    );
    let (from, to) = weights.heading_points.unwrap();
    let names = (R::CONTACT_POINTS[from].name.to_string(), R::CONTACT_POINTS[to].name.to_string());
    assert_eq!(settings.heading, Some(names));
    assert_eq!(wave.travel_scale.map(|scale| (1, scale)), weights.travel_command);
    assert!(settings.posture.is_empty() && weights.posture.is_empty());
    assert_eq!(settings.arrival_radius, task.sampler.arrival_radius);
    let gait = R::GAIT.unwrap();
    assert_eq!(weights.rest, vec![gait.amplitude, gait.temporal_frequency, gait.offset]);
    // The two settings the experiment does without: the lag through which the loop's wave
    // follows the plans (the experiment plans on the plant's state, not an estimate), and
    // the goal's terms scaled by the distance left (without the lag they reached every
    // goal of a sweep, but later; README, "The snake on wheels' plans near the goal").
    assert_eq!(task_schedule_lag(), 0.0);
    assert_eq!(wave.lag, softgen::DdpMpcSettings::wave_default().wave.unwrap().lag);
    assert_eq!(weights.distance_scaled, None);
    assert!(settings.scale_by_distance);
}

fn task_schedule_lag() -> f64 {
    match softgen::papers::modular_snake::mpc::wave_schedule().unwrap() {
        softgen_runtime::CommandSchedule::Wave { lag, .. } => lag,
        other => panic!("the task's schedule is not a wave: {other:?}"),
    }
}
