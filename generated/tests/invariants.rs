//! Physics invariants of every generated model at random states: M symmetric positive
//! definite, Mdot - 2C skew-symmetric, C qd and G against finite differences of the energies,
//! contact Jacobians and velocities against finite differences of positions, markers'
//! Jacobians likewise, momenta against
//! the mass matrix, forward dynamics against M, C qd and G. The checks are generic, and every
//! robot of the generated registry runs through them (`every_robot::<name>`), as do the
//! scaling fixtures.

use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{DoublePendulum, SnakeLinks12, SnakeLinks20, SnakeLinks6, SnakeLinks60, SnakePedalWave};
use softgen_runtime::nalgebra::{SMatrix, SVector, Vector3};
use softgen_runtime::{CoordinateKind, Model};

const STATES: usize = 25;

fn random_state<const N: usize>(rng: &mut StdRng) -> (SVector<f64, N>, SVector<f64, N>) {
    let q = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.5..1.5));
    let qd = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-2.0..2.0));
    (q, qd)
}

/// A random state in each coordinate's physical range: soft sections' actuator length
/// changes within +-4 cm (the PMAs extend by up to 7.5 cm) and curvatures within +-8 /m,
/// and every fifth state with the sections straight (all zero) or within 1e-9 of it.
fn physical_state<R: Model<N, C>, const N: usize, const C: usize>(
    rng: &mut StdRng,
    k: usize,
) -> (SVector<f64, N>, SVector<f64, N>) {
    let (mut q, mut qd) = random_state::<N>(rng);
    for (i, c) in R::COORDINATES.iter().enumerate() {
        let (range, rate) = match c.kind {
            CoordinateKind::ActuatorLength => (0.04, 0.2),
            CoordinateKind::Curvature => (8.0, 20.0),
            _ => continue,
        };
        q[i] = match k % 5 {
            0 => 0.0,
            1 => rng.gen_range(-1e-9..1e-9),
            _ => rng.gen_range(-range..range),
        };
        qd[i] = rng.gen_range(-rate..rate);
    }
    (q, qd)
}

fn mass_matrix<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    p: &R::Params,
) -> SMatrix<f64, N, N> {
    let mut m = SMatrix::zeros();
    R::mass_matrix_into(q, p, &R::cache(q, p), &mut m);
    m
}

fn kinetic<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    p: &R::Params,
) -> f64 {
    0.5 * qd.dot(&(mass_matrix::<R, N, C>(q, p) * qd))
}

fn potential<R: Model<N, C>, const N: usize, const C: usize>(q: &SVector<f64, N>, p: &R::Params) -> f64 {
    R::potential_energy(q, p, &R::cache(q, p))
}

fn check_model<R: Model<N, C>, const N: usize, const C: usize>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let p = R::Params::default();
    for state in 0..STATES {
        let (q, qd) = physical_state::<R, N, C>(&mut rng, state);
        let k = R::cache(&q, &p);
        let at = Point::<R, N, C> { q, qd, p: &p, k: &k };
        let dynamics = check_dynamics(&at);
        check_forward_dynamics(&at, &dynamics, &mut rng);
        check_contact_kinematics(&at);
        check_momentum(&at, dynamics.mass_matrix.norm());
    }
}

/// Finite differences' step.
const H: f64 = 1e-6;

/// A random state of a robot and the model's cache there: where the checks below compare.
struct Point<'a, R: Model<N, C>, const N: usize, const C: usize> {
    q: SVector<f64, N>,
    qd: SVector<f64, N>,
    p: &'a R::Params,
    k: &'a R::Cache,
}

/// The generated M, C qd and G at a state, checked.
struct Dynamics<const N: usize> {
    mass_matrix: SMatrix<f64, N, N>,
    coriolis: SVector<f64, N>,
    gravity: SVector<f64, N>,
}

/// M symmetric positive definite, Mdot - 2C skew-symmetric, C qd and G against the
/// energies' differences, and the combined kernel against the separate ones.
fn check_dynamics<R: Model<N, C>, const N: usize, const C: usize>(at: &Point<R, N, C>) -> Dynamics<N> {
    let Point { q, qd, p, k } = *at;
    let h = H;
    let m = mass_matrix::<R, N, C>(&q, p);
    let scale = m.norm();
    // Symmetric positive definite.
    assert_eq!(m, m.transpose(), "{}: M not symmetric", R::NAME);
    let eigen = softgen_runtime::nalgebra::DMatrix::from_iterator(N, N, m.iter().copied()).symmetric_eigenvalues();
    assert!(eigen.min() > 1e-9 * scale, "{}: M not positive definite, eigenvalues {eigen}", R::NAME);

    // Mdot along qd by central differences; C from the generated Christoffel symbols.
    let mdot = (mass_matrix::<R, N, C>(&(q + qd * h), &p) - mass_matrix::<R, N, C>(&(q - qd * h), &p)) / (2.0 * h);
    let mut c = SMatrix::<f64, N, N>::zeros();
    R::coriolis_matrix_into(&q, &qd, &p, &k, &mut c);
    let skew = mdot - c * 2.0;
    let asym = (skew + skew.transpose()).norm();
    assert!(asym < 1e-6 * (1.0 + mdot.norm()), "{}: Mdot - 2C not skew, |S + S'| = {asym:e}", R::NAME);

    // C qd equals C(q, qd) qd, and the Lagrangian C qd = Mdot qd - dT/dq.
    let mut cqd = SVector::<f64, N>::zeros();
    R::coriolis_into(&q, &qd, &p, &k, &mut cqd);
    assert!((c * qd - cqd).norm() < 1e-9 * (1.0 + cqd.norm()), "{}: C qd != C(q, qd) qd", R::NAME);
    let mut dt_dq = SVector::<f64, N>::zeros();
    let mut dv_dq = SVector::<f64, N>::zeros();
    for i in 0..N {
        let mut e = SVector::<f64, N>::zeros();
        e[i] = h;
        dt_dq[i] = (kinetic::<R, N, C>(&(q + e), &qd, &p) - kinetic::<R, N, C>(&(q - e), &qd, &p)) / (2.0 * h);
        dv_dq[i] = (potential::<R, N, C>(&(q + e), &p) - potential::<R, N, C>(&(q - e), &p)) / (2.0 * h);
    }
    let lagrange = mdot * qd - dt_dq;
    assert!(
        (lagrange - cqd).norm() < 1e-5 * (1.0 + cqd.norm()),
        "{}: C qd {cqd} != Mdot qd - dT/dq {lagrange}",
        R::NAME
    );
    let mut g = SVector::<f64, N>::zeros();
    R::gravity_into(&q, &p, &k, &mut g);
    assert!((g - dv_dq).norm() < 1e-5 * (1.0 + g.norm()), "{}: G != dV/dq", R::NAME);

    // The combined kernel agrees with the separate ones.
    let (mut m2, mut c2, mut g2) =
        (SMatrix::<f64, N, N>::zeros(), SVector::<f64, N>::zeros(), SVector::<f64, N>::zeros());
    R::dynamics_into(&q, &qd, &p, &k, &mut m2, &mut c2, &mut g2);
    assert!(
        (m2 - m).norm() < 1e-12 * scale
            && (c2 - cqd).norm() < 1e-9 * (1.0 + cqd.norm())
            && (g2 - g).norm() < 1e-9 * (1.0 + g.norm())
    );

    Dynamics { mass_matrix: m, coriolis: cqd, gravity: g }
}

/// The model's forward dynamics and its solve with M against M, C qd and G.
fn check_forward_dynamics<R: Model<N, C>, const N: usize, const C: usize>(
    at: &Point<R, N, C>,
    dynamics: &Dynamics<N>,
    rng: &mut StdRng,
) {
    let Point { q, qd, p, k } = *at;
    let Dynamics { mass_matrix: m, coriolis: cqd, gravity: g } = *dynamics;
    // The model's forward dynamics (the articulated-body algorithm for generated rigid
    // robots) solves M qdd = tau - C qd - G.
    let tau = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.0..1.0));
    let mut qdd = SVector::<f64, N>::zeros();
    assert!(R::forward_dynamics_into(&q, &qd, &tau, &p, &k, &mut qdd), "{}: forward dynamics failed", R::NAME);
    let residual = m * qdd - (tau - cqd - g);
    let size = (m * qdd).norm() + tau.norm() + cqd.norm() + g.norm();
    assert!(
        residual.norm() < 1e-9 * size,
        "{}: M qdd != tau - C qd - G, residual {:e}",
        R::NAME,
        residual.norm() / size
    );
    // The model's own solve with M (generated soft robots: the factorisation unrolled for
    // their zeros) solves it too, and refuses a matrix that is not positive definite: the
    // first coordinate's pivot is the last it takes, the dense Cholesky's first.
    let rhs = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.0..1.0));
    let mut solution = rhs;
    assert!(R::mass_matrix_solve_into(&m, &mut solution), "{}: solve with M failed", R::NAME);
    let residual = m * solution - rhs;
    assert!(
        residual.norm() < 1e-9 * ((m * solution).norm() + rhs.norm()),
        "{}: M x != b, residual {:e}",
        R::NAME,
        residual.norm()
    );
    let mut indefinite = m;
    indefinite[(0, 0)] = -indefinite[(0, 0)];
    assert!(!R::mass_matrix_solve_into(&indefinite, &mut solution), "{}: solved with an indefinite M", R::NAME);
    // From the state alone (no cache): the same expressions, so the same numbers.
    let mut alone = SVector::<f64, N>::zeros();
    assert!(
        R::forward_dynamics_without_cache_into(&q, &qd, &tau, &p, &mut alone),
        "{}: forward dynamics from the state alone failed",
        R::NAME
    );
    assert!(
        (alone - qdd).norm() <= 1e-14 * (1.0 + qdd.norm()),
        "{}: forward dynamics from the state alone differs by {:e}",
        R::NAME,
        (alone - qdd).norm()
    );
}

/// Contact points' and markers' Jacobians against differences of their positions, the
/// broad phase's frames, and the points-in-contact path against the single points'.
fn check_contact_kinematics<R: Model<N, C>, const N: usize, const C: usize>(at: &Point<R, N, C>) {
    let Point { q, qd, p, k } = *at;
    let h = H;
    // Contact Jacobians against finite differences of positions; velocities = J qd.
    let mut positions = [Vector3::zeros(); C];
    let mut velocities = [Vector3::zeros(); C];
    R::contact_positions_into(&q, &p, &k, &mut positions);
    R::contact_velocities_into(&q, &qd, &p, &k, &mut velocities);
    for point in 0..C {
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        R::contact_jacobian_into(point, &q, &p, &k, &mut jacobian);
        for i in 0..N {
            let mut e = SVector::<f64, N>::zeros();
            e[i] = h;
            let (mut plus, mut minus) = ([Vector3::zeros(); C], [Vector3::zeros(); C]);
            R::contact_positions_into(&(q + e), &p, &R::cache(&(q + e), &p), &mut plus);
            R::contact_positions_into(&(q - e), &p, &R::cache(&(q - e), &p), &mut minus);
            let column = (plus[point] - minus[point]) / (2.0 * h);
            assert!((column - jacobian.column(i)).norm() < 1e-6, "{}: Jacobian of point {point}, column {i}", R::NAME);
        }
        assert!((jacobian * qd - velocities[point]).norm() < 1e-9, "{}: velocity of point {point}", R::NAME);
    }

    // Markers: Jacobians against central differences of their positions; as tracked
    // points they come after the contact points.
    for marker in 0..R::MARKERS.len() {
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        R::marker_jacobian_into(marker, &q, &p, &k, &mut jacobian);
        for i in 0..N {
            let mut e = SVector::<f64, N>::zeros();
            e[i] = h;
            let plus = R::marker_position(marker, &(q + e), &p, &R::cache(&(q + e), &p));
            let minus = R::marker_position(marker, &(q - e), &p, &R::cache(&(q - e), &p));
            let column = (plus - minus) / (2.0 * h);
            assert!(
                (column - jacobian.column(i)).norm() < 1e-6,
                "{}: Jacobian of marker {marker}, column {i}",
                R::NAME
            );
        }
        let position = R::marker_position(marker, &q, &p, &k);
        assert_eq!(R::tracked_point_position(C + marker, &q, &p, &k), position, "{}: marker {marker}", R::NAME);
        let mut tracked = SMatrix::<f64, 3, N>::zeros();
        R::tracked_point_jacobian_into(C + marker, &q, &p, &k, &mut tracked);
        assert_eq!(tracked, jacobian, "{}: tracked Jacobian of marker {marker}", R::NAME);
    }
    assert_eq!(R::marker_position(R::MARKERS.len(), &q, &p, &k), Vector3::zeros(), "{}: past the last marker", R::NAME);

    // The broad phase: each frame's points, placed alone, are where all are placed, and
    // lie in the frame's ball; frames cover the points in order.
    let frames = R::CONTACT_FRAME_START.len().saturating_sub(1);
    if frames > 0 {
        assert_eq!(R::CONTACT_FRAME_START[frames] as usize, C, "{}: frames cover every point", R::NAME);
    }
    for frame in 0..frames {
        let mut alone = [Vector3::new(f64::NAN, f64::NAN, f64::NAN); C];
        R::contact_frame_positions_into(frame, &q, &p, &k, &mut alone);
        let mut centre = Vector3::zeros();
        let radius = R::contact_frame_sphere(frame, &q, &p, &k, &mut centre);
        for point in R::CONTACT_FRAME_START[frame] as usize..R::CONTACT_FRAME_START[frame + 1] as usize {
            assert_eq!(R::CONTACT_FRAME_OF[point] as usize, frame, "{}: point {point} in frame {frame}", R::NAME);
            // Equal to rounding: the kernel of one frame may group the same products differently.
            let difference = (alone[point] - positions[point]).norm();
            assert!(
                difference <= 1e-14 * (1.0 + positions[point].norm()),
                "{}: point {point} placed with its frame {frame} moves by {difference:e}",
                R::NAME
            );
            let distance = (positions[point] - centre).norm();
            assert!(
                distance <= radius * (1.0 + 1e-12),
                "{}: point {point} is {distance} from its frame's origin, beyond {radius}",
                R::NAME
            );
        }
    }

    // The points-in-contact path gives the same Jacobians and axes.
    let indices: Vec<usize> = (0..C).collect();
    let mut jacobians = vec![SMatrix::<f64, 3, N>::zeros(); C];
    let mut axes = vec![Vector3::zeros(); C];
    let mut all_axes = [Vector3::zeros(); C];
    R::contact_kinematics_into(&indices, &q, &p, &k, &mut jacobians, &mut axes);
    R::contact_axes_into(&q, &p, &k, &mut all_axes);
    for point in 0..C {
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        R::contact_jacobian_into(point, &q, &p, &k, &mut jacobian);
        assert_eq!(jacobians[point], jacobian, "{}: contact kinematics Jacobian of point {point}", R::NAME);
        assert_eq!(axes[point], all_axes[point], "{}: contact kinematics axis of point {point}", R::NAME);
    }
}

/// Linear momentum = total mass * d(com)/dt; kinetic energy from the generated M (`scale`
/// its norm).
fn check_momentum<R: Model<N, C>, const N: usize, const C: usize>(at: &Point<R, N, C>, scale: f64) {
    let Point { q, qd, p, k } = *at;
    let h = H;
    let com_rate = (R::center_of_mass(&(q + qd * h), &p, &R::cache(&(q + qd * h), &p))
        - R::center_of_mass(&(q - qd * h), &p, &R::cache(&(q - qd * h), &p)))
        / (2.0 * h);
    let momentum = R::linear_momentum(&q, &qd, &p, &k);
    assert!((momentum - com_rate * R::total_mass(&p)).norm() < 1e-6 * (1.0 + momentum.norm()), "{}: momentum", R::NAME);
    assert!((R::kinetic_energy(&q, &qd, &p) - kinetic::<R, N, C>(&q, &qd, &p)).abs() < 1e-12 * (1.0 + scale));
}

/// A fixed seed per robot from its name (FNV-1a), so each robot sees its own states and a
/// robot added later does not move the states of the others.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// One test per robot of the generated registry (`every_robot::<name>`): a spec added to
/// model-specs/ is checked here once codegen has run, with no edit to this file.
macro_rules! invariant_tests {
    ($($module:ident => $robot:ident,)*) => {
        mod every_robot {
            $(
                #[test]
                fn $module() {
                    super::check_model::<softgen_generated::$robot, { softgen_generated::$module::DOF }, { softgen_generated::$module::CONTACTS }>(
                        super::seed(stringify!($module)),
                    );
                }
            )*
        }
    };
}

softgen_generated::for_each_robot!(invariant_tests);

/// The scaling fixtures: the recursive emission stays right as the tree grows.
#[test]
fn scaling_fixture_invariants() {
    check_model::<SnakeLinks6, 8, 13>(6);
    check_model::<SnakeLinks12, 14, 25>(7);
    check_model::<SnakeLinks20, 22, 41>(8);
}

#[test]
fn scaling_fixture_60_links_invariants() {
    check_model::<SnakeLinks60, 62, 121>(9);
}

/// The generated double pendulum against its textbook closed form (point masses).
#[test]
fn double_pendulum_matches_closed_form() {
    use softgen_generated::double_pendulum::Params;
    let p = Params::default();
    let (l1, l2, m1, m2, g) = (p.upper_length, p.lower_length, p.upper_mass, p.lower_mass, p.gravity);
    let mut rng = StdRng::seed_from_u64(9);
    for _ in 0..STATES {
        let (q, qd) = random_state::<2>(&mut rng);
        let k = DoublePendulum::cache(&q, &p);
        let mut m = SMatrix::<f64, 2, 2>::zeros();
        DoublePendulum::mass_matrix_into(&q, &p, &k, &mut m);
        let c2 = q[1].cos();
        let s2 = q[1].sin();
        let m11 = (m1 + m2) * l1 * l1 + m2 * l2 * l2 + 2.0 * m2 * l1 * l2 * c2;
        let m12 = m2 * l2 * l2 + m2 * l1 * l2 * c2;
        let m22 = m2 * l2 * l2;
        assert!((m[(0, 0)] - m11).abs() < 1e-12 && (m[(0, 1)] - m12).abs() < 1e-12 && (m[(1, 1)] - m22).abs() < 1e-12);
        let mut cqd = SVector::<f64, 2>::zeros();
        DoublePendulum::coriolis_into(&q, &qd, &p, &k, &mut cqd);
        let h = m2 * l1 * l2 * s2;
        let expected = SVector::<f64, 2>::new(-h * (2.0 * qd[0] * qd[1] + qd[1] * qd[1]), h * qd[0] * qd[0]);
        assert!((cqd - expected).norm() < 1e-12, "{cqd} vs {expected}");
        // Angles from +x towards +z, gravity along -z: V = g (m1 z1 + m2 z2).
        let mut gv = SVector::<f64, 2>::zeros();
        DoublePendulum::gravity_into(&q, &p, &k, &mut gv);
        let a = q[0];
        let b = q[0] + q[1];
        let expected =
            SVector::<f64, 2>::new(g * ((m1 + m2) * l1 * a.cos() + m2 * l2 * b.cos()), g * m2 * l2 * b.cos());
        assert!((gv - expected).norm() < 1e-12, "{gv} vs {expected}");
    }
}

/// Straight and folded poses are covered by the random states; a pose with all joints at
/// zero (the snake lying straight) must give a finite, positive definite M too.
#[test]
fn straight_snake_is_regular() {
    let p = <SnakePedalWave as Model<8, 13>>::Params::default();
    let q = SVector::<f64, 8>::zeros();
    let m = mass_matrix::<SnakePedalWave, 8, 13>(&q, &p);
    assert!(m.iter().all(|v| v.is_finite()));
    assert!(
        softgen_runtime::nalgebra::DMatrix::from_iterator(8, 8, m.iter().copied()).symmetric_eigenvalues().min() > 0.0
    );
    assert!((m[(0, 0)] - 0.6).abs() < 1e-12, "total mass 0.6 kg");
}
