//! The simulated system's exact Jacobian (`Simulation::exact_jacobian`) against central
//! differences of its right-hand side, robot by robot with everything that acts on it: points
//! in contact with flat ground, a pipe (whose normal turns with the point), a stair's top
//! edge pressing on the chord between two points, or the floor (fixed load, friction only),
//! servos tracking set points, actuator forces, thrusters and
//! water; and the commands' Jacobian (`Simulation::input_jacobian`) against differences of
//! the accelerations in the commands. One state of each is at rest.

use nalgebra::{SMatrix, SVector, Vector3};
use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{Pinniped, SnakeLateralUndulation, SnakePedalWave, SoftSnake, UnderwaterSnake, WpiSnake};
use softgen_runtime::{
    ContactLaw, ControlInput, CoordinateKind, JointPd, Model, PlaneOfMotion, SecondOrderSystem, Simulation,
    SimulationConfig, SystemJacobian, Terrain,
};

/// Which surface the robot touches.
#[derive(Clone, Copy, Debug)]
enum Surface {
    /// Flat ground through the middle of the robot's points.
    Ground,
    /// A pipe along x whose wall passes through the middle of the points.
    Pipe,
    /// The floor (robots in the horizontal plane).
    Floor,
    /// A stair whose top edge presses on the chord between the two neighbouring points (of
    /// one body) farthest apart along x in the middle of the robot, 2 mm deep, the chord
    /// having come from above it.
    StairEdge,
}

/// Where a surface through the middle of `values` (heights, or distances from the pipe's
/// axis) lies: halfway across the widest gap between neighbouring points in the middle
/// third, so that no point is within a difference step of it.
fn middle_gap(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let c = values.len();
    let (lo, hi) = (c / 3, (2 * c / 3).max(c / 3 + 1).min(c - 1));
    let i =
        (lo.max(1)..=hi).max_by(|&a, &b| (values[a] - values[a - 1]).total_cmp(&(values[b] - values[b - 1]))).unwrap();
    0.5 * (values[i] + values[i - 1])
}

fn accelerations<R: Model<N, C>, const N: usize, const C: usize>(
    sim: &mut Simulation<R, N, C>,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
) -> SVector<f64, N> {
    let mut qdd = SVector::zeros();
    sim.acceleration(0.0, q, qd, &mut qdd).unwrap();
    qdd
}

/// Entry by entry against central differences with step h, on the scale of the whole
/// matrix, allowing for the differences' own error as the same differences with step 2h
/// measure it. With h = 1e-6 the truncation error is about 1e-12 |d3 qdd| and the rounding
/// error about 1e-16 cond(M) |qdd| / h: below 1e-7 of the scale for most robots, but the
/// valve-driven snake's mass matrix is ill-conditioned enough that rounding reaches 1e-3
/// of it, which C(h) - C(2h) shows (it holds the same rounding, and three times the
/// truncation).
fn assert_close<const N: usize, const K: usize>(
    what: &str,
    exact: &SMatrix<f64, N, K>,
    central: &SMatrix<f64, N, K>,
    coarser: &SMatrix<f64, N, K>,
) {
    let scale = 1.0 + central.amax();
    let worst = (exact - central).amax();
    let noise = (central - coarser).amax();
    assert!(
        worst <= 1e-6 * scale + 4.0 * noise,
        "{what}: differs from central differences by {worst:e} (scale {scale:e}, their own error {noise:e})\nexact {exact}\ncentral {central}"
    );
}

/// Central differences of `f` along each unit direction with step `h`, as columns.
fn central_differences<const N: usize, const K: usize>(
    h: f64,
    mut f: impl FnMut(usize, f64) -> SVector<f64, N>,
) -> SMatrix<f64, N, K> {
    let mut out = SMatrix::<f64, N, K>::zeros();
    for j in 0..K {
        out.set_column(j, &((f(j, h) - f(j, -h)) / (2.0 * h)));
    }
    out
}

/// `dissipation`: Hunt and Crossley's h (s/m) beside eq 18's damper.
fn exact_jacobian_matches<R: Model<N, C>, const N: usize, const C: usize>(
    surface: Surface,
    seed: u64,
    dissipation: f64,
) {
    let p = R::Params::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut law = R::ENVIRONMENT.contact_law();
    law.stiffness = 1000.0;
    law.damping = 5.0;
    law.dissipation = dissipation;
    law.friction.along = 0.3;
    law.friction.across = 0.8;
    law.friction.regularisation = 0.01;
    let mut touching_states = 0;
    for state in 0..3 {
        let mut at = JacobianState::<R, N, C>::new(&p, law, surface, state, &mut rng);
        let report = at.sim.report(0.0, &softgen_runtime::State::new(at.q, at.qd));
        touching_states += (report.active > 0) as usize;
        if let Surface::StairEdge = surface {
            assert_eq!(report.edges_pressed, 1, "{}: the edge presses on one chord", R::NAME);
        }
        at.check_state_jacobians(surface);
        at.check_input_jacobians(&mut rng);
    }
    if matches!(surface, Surface::Ground | Surface::Pipe) && C > 0 {
        assert!(touching_states > 0, "{}: no state had a point in touch", R::NAME);
    }
}

/// A random state near the robot's initial one (the first at rest, where a speed's slope is
/// singular: water's cross-flow drag -k |u| u, while the drag's is zero), on a surface placed
/// among its contact points, with random commands.
struct JacobianState<R: Model<N, C>, const N: usize, const C: usize> {
    sim: Simulation<R, N, C>,
    q: SVector<f64, N>,
    qd: SVector<f64, N>,
    thrusts: Vec<f64>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> JacobianState<R, N, C> {
    fn new(p: &R::Params, law: ContactLaw, surface: Surface, state: usize, rng: &mut StdRng) -> Self {
        let q = SVector::<f64, N>::from_fn(|i, _| {
            R::INITIAL_POSITION[i]
                + match R::COORDINATES[i].kind {
                    CoordinateKind::ActuatorLength => rng.gen_range(-0.01..0.01),
                    _ => rng.gen_range(-0.3..0.3),
                }
        });
        // The first state at rest, where a speed's slope is singular (water's cross-flow
        // drag -k |u| u) while the drag's is zero.
        let qd = SVector::<f64, N>::from_fn(|_, _| if state == 0 { 0.0 } else { rng.gen_range(-0.05..0.05) });
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(&q, p, &R::cache(&q, p), &mut positions);
        let terrain = match surface {
            Surface::Ground => Terrain::Flat { height: middle_gap(positions.iter().map(|x| x.z).collect()) },
            Surface::Pipe => Terrain::Pipe {
                diameter: 2.0 * middle_gap(positions.iter().map(|x| (x.y * x.y + x.z * x.z).sqrt()).collect()),
            },
            Surface::Floor => Terrain::Floor,
            Surface::StairEdge => Terrain::None,
        };
        let config = SimulationConfig {
            contact: law,
            terrain,
            gait: None,
            servo: JointPd { stiffness: 2.0, damping: 0.1, torque_limit: 1e3 },
            admittance: None,
            control_period: 0.01,
        };
        let mut sim = Simulation::<R, N, C>::new(p.clone(), config).unwrap();
        if let Surface::StairEdge = surface {
            // The chord's crossing of the face's plane midway between its points, the edge
            // 2 mm above it; the chord remembers coming from above (a step of the
            // integration beginning with the edge 2 mm below).
            let chords = sim.chords().to_vec();
            let middle = &chords[chords.len() / 4..chords.len() - chords.len() / 4];
            let (a, b) = *middle
                .iter()
                .max_by(|x, y| {
                    let gap = |&(a, b): &(usize, usize)| (positions[a].x - positions[b].x).abs();
                    gap(x).total_cmp(&gap(y))
                })
                .expect("the robot has chords");
            let (front, back) = if positions[a].x < positions[b].x { (a, b) } else { (b, a) };
            let face = 0.5 * (positions[front].x + positions[back].x);
            let crossing = 0.5 * (positions[front].z + positions[back].z);
            sim.config.terrain = Terrain::Stair { position: face, height: crossing - 0.002 };
            sim.switch_modes(0.0, &softgen_runtime::State::new(q, qd));
            sim.config.terrain = Terrain::Stair { position: face, height: crossing + 0.002 };
        }
        if !R::ACTUATED.is_empty() {
            sim.set_joint_targets(&SVector::from_fn(|_, _| rng.gen_range(-0.5..0.5)));
        }
        sim.set_actuator_forces(&SVector::from_fn(|_, _| rng.gen_range(-0.2..0.2)));
        let thrusts: Vec<f64> = R::THRUSTERS.iter().map(|_| rng.gen_range(-2.0..2.0)).collect();
        sim.set_thrusts(&thrusts).unwrap();
        JacobianState { sim, q, qd, thrusts }
    }

    /// The exact d qdd/dq and d qdd/dqd against central differences.
    fn check_state_jacobians(&mut self, surface: Surface) {
        let JacobianState { sim, q, qd, .. } = self;
        let (q, qd) = (*q, *qd);
        let (mut by_position, mut by_velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        sim.use_jacobian(SystemJacobian::Exact);
        assert!(sim.acceleration_jacobian(0.0, &q, &qd, &mut by_position, &mut by_velocity).unwrap());
        let by_coordinate = |sim: &mut Simulation<R, N, C>, h: f64| {
            central_differences::<N, N>(h, |j, s| {
                let moved = SVector::<f64, N>::from_fn(|i, _| if i == j { q[i] + s } else { q[i] });
                accelerations(sim, &moved, &qd)
            })
        };
        let by_rate = |sim: &mut Simulation<R, N, C>, h: f64| {
            central_differences::<N, N>(h, |j, s| {
                let moved = SVector::<f64, N>::from_fn(|i, _| if i == j { qd[i] + s } else { qd[i] });
                accelerations(sim, &q, &moved)
            })
        };
        let (central, coarser) = (by_coordinate(sim, 1e-6), by_coordinate(sim, 2e-6));
        assert_close(&format!("{} on {surface:?}: d qdd/dq", R::NAME), &by_position, &central, &coarser);
        let (central, coarser) = (by_rate(sim, 1e-6), by_rate(sim, 2e-6));
        assert_close(&format!("{} on {surface:?}: d qdd/dqd", R::NAME), &by_velocity, &central, &coarser);
    }

    /// The commands' Jacobians (actuator forces, thrusts, joint targets, muscle pressures)
    /// against differences of qdd in each command, and a wrong number of columns refused.
    fn check_input_jacobians(&mut self, rng: &mut StdRng) {
        let JacobianState { sim, q, qd, thrusts } = self;
        let (q, qd) = (*q, *qd);
        let columns_matrix = |columns: &[SVector<f64, N>]| {
            let mut m = SMatrix::<f64, N, N>::zeros();
            for (k, c) in columns.iter().enumerate() {
                m.set_column(k, c);
            }
            m
        };
        let forces = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.2..0.2));
        let mut columns = vec![SVector::<f64, N>::zeros(); N];
        sim.input_jacobian(&q, &qd, ControlInput::ActuatorForces, &mut columns).unwrap();
        let mut by_force = |h: f64| {
            central_differences::<N, N>(h, |k, s| {
                sim.set_actuator_forces(&SVector::from_fn(|i, _| if i == k { forces[i] + s } else { forces[i] }));
                accelerations(sim, &q, &qd)
            })
        };
        let (central, coarser) = (by_force(1e-4), by_force(2e-4));
        assert_close(&format!("{}: d qdd/d actuator forces", R::NAME), &columns_matrix(&columns), &central, &coarser);
        if !R::THRUSTERS.is_empty() {
            let mut columns = vec![SVector::<f64, N>::zeros(); N];
            sim.input_jacobian(&q, &qd, ControlInput::Thrusts, &mut columns[..R::THRUSTERS.len()]).unwrap();
            let mut by_thrust = |h: f64| {
                central_differences::<N, N>(h, |k, s| {
                    let mut moved = thrusts.clone();
                    if k < moved.len() {
                        moved[k] += s;
                    } else {
                        // Past the thrusters: no command moves, and the column is zero.
                        return SVector::zeros();
                    }
                    sim.set_thrusts(&moved).unwrap();
                    accelerations(sim, &q, &qd)
                })
            };
            let (central, coarser) = (by_thrust(1e-4), by_thrust(2e-4));
            assert_close(&format!("{}: d qdd/d thrusts", R::NAME), &columns_matrix(&columns), &central, &coarser);
            sim.set_thrusts(&thrusts).unwrap();
        }
        if !R::ACTUATED.is_empty() {
            let targets = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.5..0.5));
            let mut columns = vec![SVector::<f64, N>::zeros(); N];
            sim.set_joint_targets(&targets);
            sim.input_jacobian(&q, &qd, ControlInput::JointTargets, &mut columns[..R::ACTUATED.len()]).unwrap();
            let mut by_target = |h: f64| {
                central_differences::<N, N>(h, |k, s| {
                    if k >= R::ACTUATED.len() {
                        return SVector::zeros();
                    }
                    sim.set_joint_targets(&SVector::from_fn(|i, _| if i == k { targets[i] + s } else { targets[i] }));
                    accelerations(sim, &q, &qd)
                })
            };
            let (central, coarser) = (by_target(1e-4), by_target(2e-4));
            assert_close(&format!("{}: d qdd/d joint targets", R::NAME), &columns_matrix(&columns), &central, &coarser);
        }
        if !R::MUSCLES.is_empty() {
            let pressures: Vec<f64> = (0..R::MUSCLES.len()).map(|_| rng.gen_range(0.0..1.0)).collect();
            let mut columns = vec![SVector::<f64, N>::zeros(); N];
            sim.input_jacobian(&q, &qd, ControlInput::MusclePressures, &mut columns[..R::MUSCLES.len()]).unwrap();
            let mut by_pressure = |h: f64| {
                central_differences::<N, N>(h, |k, s| {
                    if k >= R::MUSCLES.len() {
                        return SVector::zeros();
                    }
                    let mut moved = pressures.clone();
                    moved[k] += s;
                    sim.set_muscle_pressures(&moved).unwrap();
                    accelerations(sim, &q, &qd)
                })
            };
            let (central, coarser) = (by_pressure(1e-4), by_pressure(2e-4));
            assert_close(
                &format!("{}: d qdd/d muscle pressures", R::NAME),
                &columns_matrix(&columns),
                &central,
                &coarser,
            );
            let error = sim.set_muscle_pressures(&pressures[1..]).unwrap_err();
            assert!(error.contains("muscles"), "{error}");
            sim.set_actuator_forces(&forces);
        }
        // Bad input: the wrong number of columns is refused, naming the robot.
        let mut short = vec![SVector::<f64, N>::zeros(); N + 1];
        let error = sim.input_jacobian(&q, &qd, ControlInput::ActuatorForces, &mut short).unwrap_err();
        assert!(error.contains(R::NAME), "{error}");
    }
}

#[test]
fn soft_snake_on_ground() {
    exact_jacobian_matches::<
        SoftSnake,
        { softgen_generated::soft_snake::DOF },
        { softgen_generated::soft_snake::CONTACTS },
    >(Surface::Ground, 1, 0.0);
}

/// Hunt and Crossley's damper (k h depth depth_rate) adds a depth-times-rate term to the
/// normal force's derivatives.
#[test]
fn soft_bodies_on_ground_with_hunt_crossley_damping() {
    exact_jacobian_matches::<
        SoftSnake,
        { softgen_generated::soft_snake::DOF },
        { softgen_generated::soft_snake::CONTACTS },
    >(Surface::Ground, 8, 40.0);
    exact_jacobian_matches::<Pinniped, { softgen_generated::pinniped::DOF }, { softgen_generated::pinniped::CONTACTS }>(
        Surface::Ground,
        9,
        40.0,
    );
}

#[test]
fn pinniped_on_ground() {
    exact_jacobian_matches::<Pinniped, { softgen_generated::pinniped::DOF }, { softgen_generated::pinniped::CONTACTS }>(
        Surface::Ground,
        2,
        0.0,
    );
}

#[test]
fn underwater_snake_with_thrusters_and_water() {
    exact_jacobian_matches::<
        UnderwaterSnake,
        { softgen_generated::underwater_snake::DOF },
        { softgen_generated::underwater_snake::CONTACTS },
    >(Surface::Ground, 3, 0.0);
}

#[test]
fn rigid_snake_with_servos_on_ground_in_a_pipe_and_on_a_stair_edge() {
    exact_jacobian_matches::<
        SnakePedalWave,
        { softgen_generated::snake_pedal_wave::DOF },
        { softgen_generated::snake_pedal_wave::CONTACTS },
    >(Surface::Ground, 4, 0.0);
    exact_jacobian_matches::<
        SnakePedalWave,
        { softgen_generated::snake_pedal_wave::DOF },
        { softgen_generated::snake_pedal_wave::CONTACTS },
    >(Surface::Pipe, 5, 0.0);
    exact_jacobian_matches::<
        SnakePedalWave,
        { softgen_generated::snake_pedal_wave::DOF },
        { softgen_generated::snake_pedal_wave::CONTACTS },
    >(Surface::StairEdge, 6, 0.0);
}

#[test]
fn snakes_on_the_floor() {
    assert_eq!(SnakeLateralUndulation::PLANE, PlaneOfMotion::Xy);
    exact_jacobian_matches::<
        SnakeLateralUndulation,
        { softgen_generated::snake_lateral_undulation::DOF },
        { softgen_generated::snake_lateral_undulation::CONTACTS },
    >(Surface::Floor, 6, 0.0);
    exact_jacobian_matches::<WpiSnake, { softgen_generated::wpi_snake::DOF }, { softgen_generated::wpi_snake::CONTACTS }>(
        Surface::Floor,
        7,
        0.0,
    );
}

/// The valve-driven snake with its valves' coordinates prescribed
/// (`PrescribedSimulation::free_jacobian`): the free coordinates' accelerations against
/// central differences along the free directions, at moving states in mid-response, with
/// the driven coordinates' rows and columns zero (functions of time, not of the state).
#[test]
fn valve_snake_with_prescribed_valve_coordinates() {
    use softgen_runtime::{State, ValveDriven};
    const N: usize = softgen_generated::wpi_snake::DOF;
    const C: usize = softgen_generated::wpi_snake::CONTACTS;
    let p = <WpiSnake as Model<N, C>>::Params::default();
    let mut rng = StdRng::seed_from_u64(11);
    let driven: Vec<usize> = <WpiSnake as Model<N, C>>::VALVES.to_vec();
    for state in 0..3 {
        let q = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-0.3..0.3));
        let qd = SVector::<f64, N>::from_fn(|_, _| if state == 0 { 0.0 } else { rng.gen_range(-0.05..0.05) });
        let config = SimulationConfig {
            contact: WpiSnake::ENVIRONMENT.contact_law(),
            terrain: Terrain::Floor,
            gait: None,
            servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
            admittance: None,
            control_period: 0.01,
        };
        let simulation = Simulation::<WpiSnake, N, C>::new(p.clone(), config).unwrap();
        let mut system = ValveDriven::prescribed(simulation, 0.0, &State::new(q, qd)).unwrap();
        let commands: Vec<f64> = driven.iter().map(|_| rng.gen_range(-20.0..20.0)).collect();
        let mut x = State::new(q, qd);
        system.command(0.0, &commands, &mut x).unwrap();
        // Some way into the responses, where the driven rates and accelerations are not zero.
        let t = 0.05;
        let (mut by_position, mut by_velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        system.free_jacobian(t, &x.q, &x.qd, &mut by_position, &mut by_velocity).unwrap();
        let mut accelerations = |q: &SVector<f64, N>, qd: &SVector<f64, N>| {
            let mut qdd = SVector::zeros();
            system.acceleration(t, q, qd, &mut qdd).unwrap();
            qdd
        };
        let free_only = |f: &mut dyn FnMut(usize, f64) -> SVector<f64, N>, h: f64| {
            central_differences::<N, N>(h, |j, s| if driven.contains(&j) { SVector::zeros() } else { f(j, s) })
        };
        let mut by_coordinate =
            |j: usize, s: f64| accelerations(&SVector::from_fn(|i, _| if i == j { x.q[i] + s } else { x.q[i] }), &x.qd);
        let (mut central, mut coarser) = (free_only(&mut by_coordinate, 1e-6), free_only(&mut by_coordinate, 2e-6));
        for d in &driven {
            for m in [&mut central, &mut coarser] {
                m.row_mut(*d).fill(0.0);
            }
            assert!(by_position.row(*d).amax() == 0.0 && by_position.column(*d).amax() == 0.0);
            assert!(by_velocity.row(*d).amax() == 0.0 && by_velocity.column(*d).amax() == 0.0);
        }
        assert_close("wpi_snake prescribed: d qdd_free/dq_free", &by_position, &central, &coarser);
        let mut by_rate = |j: usize, s: f64| {
            accelerations(&x.q, &SVector::from_fn(|i, _| if i == j { x.qd[i] + s } else { x.qd[i] }))
        };
        let (mut central, mut coarser) = (free_only(&mut by_rate, 1e-6), free_only(&mut by_rate, 2e-6));
        for d in &driven {
            for m in [&mut central, &mut coarser] {
                m.row_mut(*d).fill(0.0);
            }
        }
        assert_close("wpi_snake prescribed: d qdd_free/dqd_free", &by_velocity, &central, &coarser);
        // Not a zero matrix: the free block carries the wheels' friction and the coupling.
        assert!(by_velocity.amax() > 1.0, "{by_velocity}");
    }
}
