//! The generated derivatives of the dynamics against differences of the generated inverse
//! dynamics M qdd + C qd + G, and the forward dynamics' derivatives against the identities
//! that define them, for every robot of the registry (`every_robot::<name>`) and the scaling
//! fixtures, at random states in each coordinate's physical range, soft sections straight
//! (exactly, and within 1e-9) in every fifth state.
//!
//! The reference is Richardson's extrapolation of central differences, (4 D(h/2) - D(h)) / 3,
//! whose truncation error is O(h^4): with h = 1e-3 of a coordinate's scale it is near 1e-12
//! of the derivative. Rounding adds the inverse dynamics' own relative error (world-frame
//! sums, about 1e-13 of its size) divided by h, about 1e-10 of |ID|. So each column is
//! compared to 1e-6 of its largest entry, but never to less than 1e-6 of 1e-2 (1 + |ID|) =
//! 1e-8 (1 + |ID|), a hundred times that rounding, which is what a column that is zero (a
//! base translation's: the dynamics do not depend on where the robot is) is compared to. A
//! wrong term (a missing link, a sign, a Stumpff slope) is off by its own size, orders of
//! magnitude above either.
//!
//! Differences of the forward dynamics are no reference for soft robots: their M is stiff
//! (light slices, heavy base), and the solve's rounding over h reaches 1e-6 of a column. The
//! forward dynamics' derivatives are instead checked against the identities that define
//! them, M dq = -dID/dq, M dqd = -dID/dqd and M dtau = 1 at qdd = FD(q, qd, tau), to the
//! solve's backward error.

use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_generated::{SnakeLinks12, SnakeLinks20, SnakeLinks6, SnakeLinks60};
use softgen_runtime::nalgebra::{SMatrix, SVector};
use softgen_runtime::{
    forward_dynamics_derivatives, forward_dynamics_derivatives_by, ArticulatedFactor, CoordinateKind, DerivativesRoute,
    ForwardDynamicsDerivatives, InverseDynamicsFactors, Model, Solve,
};

const STATES: usize = 10;
/// Allowed error of each derivative, relative to the largest entry of its column (or, where
/// that is small, 1e-2 of the inverse dynamics' size), per unit of the coordinate's scale.
const TOLERANCE: f64 = 1e-6;

/// A coordinate's scale: the size of a step that changes the robot visibly (1 rad, 1 /m of
/// curvature, 1 cm of an actuator's length).
fn scale(kind: CoordinateKind) -> f64 {
    match kind {
        CoordinateKind::ActuatorLength => 0.01,
        _ => 1.0,
    }
}

/// A random state and generalized force: angles within +-1.5 rad, actuator lengths within
/// +-4 cm, curvatures within +-8 /m; every fifth state with the sections straight, every
/// fifth but one within 1e-9 of it.
fn random_state<R: Model<N, C>, const N: usize, const C: usize>(
    rng: &mut StdRng,
    k: usize,
) -> (SVector<f64, N>, SVector<f64, N>, SVector<f64, N>) {
    let mut q = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.5..1.5));
    let mut qd = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-2.0..2.0));
    let tau = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.0..1.0));
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
    (q, qd, tau)
}

/// ID(q, qd, qdd) = M qdd + C qd + G from the generated M, C qd and G.
fn inverse_dynamics<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    qdd: &SVector<f64, N>,
    p: &R::Params,
) -> SVector<f64, N> {
    let k = R::cache(q, p);
    let (mut mass_matrix, mut coriolis, mut gravity) = (SMatrix::zeros(), SVector::zeros(), SVector::zeros());
    R::dynamics_into(q, qd, p, &k, &mut mass_matrix, &mut coriolis, &mut gravity);
    mass_matrix * qdd + coriolis + gravity
}

/// d ID / d(argument j) by Richardson-extrapolated central differences, `at(x)` giving ID
/// with the argument moved by x.
fn difference<const N: usize>(h: f64, at: &dyn Fn(f64) -> SVector<f64, N>) -> SVector<f64, N> {
    let central = |h: f64| (at(h) - at(-h)) / (2.0 * h);
    (central(h / 2.0) * 4.0 - central(h)) / 3.0
}

fn check_columns<const N: usize>(
    robot: &str,
    what: &str,
    state: usize,
    analytic: &SMatrix<f64, N, N>,
    numeric: &SMatrix<f64, N, N>,
    floor: f64,
) {
    for j in 0..N {
        let column = numeric.column(j).amax().max(floor);
        for i in 0..N {
            let error = (analytic[(i, j)] - numeric[(i, j)]).abs();
            assert!(
                error <= TOLERANCE * column,
                "{robot}, state {state}: d ID_{i} / d {what}_{j} = {:e} generated, {:e} by differences (column scale {column:e})",
                analytic[(i, j)],
                numeric[(i, j)],
            );
        }
    }
}

fn check_model<R: Model<N, C>, const N: usize, const C: usize>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let p = R::Params::default();
    for state in 0..STATES {
        let (q, qd, tau) = random_state::<R, N, C>(&mut rng, state);
        let k = R::cache(&q, &p);
        let at = Point::<R, N, C> { state, q, qd, tau, p: &p, k: &k };
        check_inverse_dynamics_derivatives(&at, &mut rng);
        check_contact_frame_tangents(&at, &mut rng);
        let solved = check_forward_dynamics_derivatives(&at);
        if R::ARTICULATED_FACTOR {
            check_articulated_factor(&at, &solved);
        }
    }
}

/// A random state of a robot, the generalized force there and the model's cache: where the
/// checks below compare.
struct Point<'a, R: Model<N, C>, const N: usize, const C: usize> {
    /// The state's number, for the messages.
    state: usize,
    q: SVector<f64, N>,
    qd: SVector<f64, N>,
    tau: SVector<f64, N>,
    p: &'a R::Params,
    k: &'a R::Cache,
}

/// The generated part: the inverse dynamics' derivatives and tangents against differences
/// of M qdd + C qd + G, at accelerations of each coordinate's scale.
fn check_inverse_dynamics_derivatives<R: Model<N, C>, const N: usize, const C: usize>(
    at: &Point<R, N, C>,
    rng: &mut StdRng,
) {
    let Point { state, q, qd, p, k, .. } = *at;
    let qdd = SVector::<f64, N>::from_fn(|i, _| scale(R::COORDINATES[i].kind) * rng.gen_range(-10.0..10.0));
    let (mut position, mut velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    R::inverse_dynamics_derivatives_into(&q, &qd, &qdd, &p, &k, &mut position, &mut velocity);
    let (mut numeric_position, mut numeric_velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    for j in 0..N {
        let h = 1e-3 * scale(R::COORDINATES[j].kind);
        let moved = |v: &SVector<f64, N>, x: f64| {
            let mut v = *v;
            v[j] += x;
            v
        };
        let column = difference(h, &|x| inverse_dynamics::<R, N, C>(&moved(&q, x), &qd, &qdd, &p));
        numeric_position.set_column(j, &column);
        let column = difference(h, &|x| inverse_dynamics::<R, N, C>(&q, &moved(&qd, x), &qdd, &p));
        numeric_velocity.set_column(j, &column);
    }
    // Per unit of each coordinate's scale, so that columns of different units meet one
    // tolerance.
    let scaled = |m: &SMatrix<f64, N, N>| {
        let mut m = *m;
        for j in 0..N {
            m.column_mut(j).scale_mut(scale(R::COORDINATES[j].kind));
        }
        m
    };
    let size = inverse_dynamics::<R, N, C>(&q, &qd, &qdd, &p).amax();
    let floor = 1e-2 * (1.0 + size);
    check_columns(R::NAME, "q", state, &scaled(&position), &scaled(&numeric_position), floor);
    check_columns(R::NAME, "qd", state, &scaled(&velocity), &scaled(&numeric_velocity), floor);
    // `velocity` is 2 C(q, qd), the Christoffel C doubled (C qd is the quadratic form of
    // the Christoffel symbols, symmetric in their last two indices), so the line above
    // checks that identity; the generated velocity tangents (the Jacobian-vector
    // products) are checked here.
    let mut tangents = SMatrix::<f64, N, N>::zeros();
    let mut column = SVector::<f64, N>::zeros();
    for j in 0..N {
        let direction = SVector::<f64, N>::from_fn(|i, _| if i == j { 1.0 } else { 0.0 });
        R::inverse_dynamics_velocity_tangent_into(&q, &qd, &direction, &p, &k, &mut column);
        tangents.set_column(j, &column);
    }
    check_columns(R::NAME, "qd (tangents)", state, &scaled(&tangents), &scaled(&numeric_velocity), floor);
    // Rigid trees override the matrices with their closed form (the analytical
    // derivatives of Newton-Euler), so the position tangents are checked on their own.
    for j in 0..N {
        let direction = SVector::<f64, N>::from_fn(|i, _| if i == j { 1.0 } else { 0.0 });
        R::inverse_dynamics_position_tangent_into(&q, &qd, &qdd, &direction, &p, &k, &mut column);
        tangents.set_column(j, &column);
    }
    check_columns(R::NAME, "q (tangents)", state, &scaled(&tangents), &scaled(&numeric_position), floor);
}

/// Each contact frame's own columns' tangents along every direction (loops per group of
/// coordinates, what they share computed once) against Richardson differences of the own
/// columns, per unit of each coordinate's scale, to the tolerance above of the largest column
/// entry (or 1e-2 where the columns are smaller than that). The tangent along a direction
/// (`contact_frame_own_tangent_into`) is their weighted sum, checked along a random direction.
fn check_contact_frame_tangents<R: Model<N, C>, const N: usize, const C: usize>(at: &Point<R, N, C>, rng: &mut StdRng) {
    let Point { state, q, p, k, .. } = *at;
    for frame in 0..R::CONTACT_FRAME_OWN.len() {
        let mut all = [SMatrix::<f64, 6, 3>::zeros(); N];
        R::contact_frame_own_tangents_into(frame, &q, &p, &k, &mut all);
        let own_at = |q: &SVector<f64, N>| {
            let (mut own, mut axis) = (SMatrix::<f64, 6, 3>::zeros(), Default::default());
            R::contact_frame_own_into(frame, q, &p, &R::cache(q, &p), &mut own, &mut axis);
            own
        };
        let size = own_at(&q).amax().max(1e-2);
        for (j, tangent) in all.iter().enumerate() {
            let h = 1e-3 * scale(R::COORDINATES[j].kind);
            let central = |h: f64| {
                let (mut plus, mut minus) = (q, q);
                plus[j] += h;
                minus[j] -= h;
                (own_at(&plus) - own_at(&minus)) / (2.0 * h)
            };
            let numeric = (central(h / 2.0) * 4.0 - central(h)) / 3.0;
            let error = (tangent - numeric).amax() * scale(R::COORDINATES[j].kind);
            assert!(
                error <= TOLERANCE * size,
                "{}, state {state}: frame {frame}'s own columns' tangents along q{j} differ from differences by {error:e} (columns' size {size:e})",
                R::NAME,
            );
        }
        let direction = SVector::<f64, N>::from_fn(|_, _| rng.gen_range(-1.0..1.0));
        let mut along = SMatrix::<f64, 6, 3>::zeros();
        R::contact_frame_own_tangent_into(frame, &q, &direction, &p, &k, &mut along);
        let summed = all.iter().zip(direction.iter()).fold(SMatrix::<f64, 6, 3>::zeros(), |sum, (t, &d)| sum + t * d);
        assert!(
            (along - summed).amax() <= 1e-12 * summed.amax().max(1e-300),
            "{}, state {state}: frame {frame}'s own columns' tangent along a direction is not the partials' sum",
            R::NAME
        );
    }
}

/// What the forward dynamics' check leaves for the articulated factor's: M, the forward
/// dynamics' accelerations, and dID/dq and dID/dqd at them.
struct Solved<const N: usize> {
    mass_matrix: SMatrix<f64, N, N>,
    accelerations: SVector<f64, N>,
    position: SMatrix<f64, N, N>,
    velocity: SMatrix<f64, N, N>,
}

/// M times the solved derivatives against their right-hand side: either factorisation's
/// backward error (articulated-body passes or Gauss-Jordan and Cholesky) is a few eps times
/// |M| |x|, relative to which the residuals are compared.
fn check_residual<const N: usize>(
    robot: &str,
    state: usize,
    mass_matrix: &SMatrix<f64, N, N>,
    target: SMatrix<f64, N, N>,
    solved: &SMatrix<f64, N, N>,
) {
    let product = mass_matrix * solved;
    let bound = 1e-10 * (mass_matrix.abs() * solved.abs()).amax().max(target.amax());
    assert!(
        (product - target).amax() <= bound,
        "{robot}, state {state}: M times the solved derivatives is off by {:e} (bound {bound:e})",
        (product - target).amax()
    );
}

/// The runtime's part: the forward dynamics' derivatives against the identities that
/// define them, by every route the model has.
fn check_forward_dynamics_derivatives<R: Model<N, C>, const N: usize, const C: usize>(
    at: &Point<R, N, C>,
) -> Solved<N> {
    let Point { state, q, qd, tau, p, k } = *at;
    let (mut position, mut velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    // The runtime's part: the forward dynamics' derivatives are the implicit function
    // theorem's, M dq = -dID/dq and M dqd = -dID/dqd at qdd = FD(q, qd, tau), M dtau = 1.
    // By the route the size picks, and for rigid trees by both routes (the threshold
    // between them is a measured speed, so either may serve any size); a model without
    // the articulated factor gets an error for it, not a wrong answer. The size's own
    // route goes last, so dID below is at its qdd, as the factors' check after the loop
    // expects.
    let mut routes = vec![];
    if R::ARTICULATED_FACTOR {
        routes.extend([Some(DerivativesRoute::ArticulatedFactor), Some(DerivativesRoute::InverseMatrix)]);
    } else {
        let mut unused = ForwardDynamicsDerivatives::<N>::default();
        let route = DerivativesRoute::ArticulatedFactor;
        assert!(
            forward_dynamics_derivatives_by::<R, N, C>(route, &q, &qd, &tau, &p, &k, &mut unused).is_err(),
            "{}: the articulated route answered for a model without the factor",
            R::NAME
        );
    }
    routes.push(None);
    let mut accelerations = SVector::zeros();
    assert!(R::forward_dynamics_into(&q, &qd, &tau, &p, &k, &mut accelerations));
    let mut mass_matrix = SMatrix::<f64, N, N>::zeros();
    R::mass_matrix_into(&q, &p, &k, &mut mass_matrix);
    for route in routes {
        let mut derivatives = ForwardDynamicsDerivatives::<N>::default();
        match route {
            None => forward_dynamics_derivatives::<R, N, C>(&q, &qd, &tau, &p, &k, &mut derivatives),
            Some(route) => forward_dynamics_derivatives_by::<R, N, C>(route, &q, &qd, &tau, &p, &k, &mut derivatives),
        }
        .expect("M positive definite");
        // The articulated route takes qdd from the pass that also factorises M (a rigid
        // tree's forward dynamics itself); the other from M^-1 (tau - C qd - G), which
        // agrees with the forward dynamics to rounding: within the same backward-error
        // bound as the solved derivatives below.
        let bound = 1e-10 * (mass_matrix.abs() * accelerations.abs()).amax().max(tau.amax());
        assert!(
            (mass_matrix * (derivatives.acceleration - accelerations)).amax() <= bound,
            "{}, state {state}: qdd differs from the forward dynamics by {:e}",
            R::NAME,
            (derivatives.acceleration - accelerations).amax()
        );
        R::inverse_dynamics_derivatives_into(&q, &qd, &derivatives.acceleration, &p, &k, &mut position, &mut velocity);
        check_residual(R::NAME, state, &mass_matrix, -position, &derivatives.position);
        check_residual(R::NAME, state, &mass_matrix, -velocity, &derivatives.velocity);
        check_residual(R::NAME, state, &mass_matrix, SMatrix::identity(), &derivatives.force);
    }

    Solved { mass_matrix, accelerations, position, velocity }
}

/// A rigid tree's articulated-body factor and its solves, and the inverse dynamics' factors
/// against the model's matrices.
fn check_articulated_factor<R: Model<N, C>, const N: usize, const C: usize>(
    at: &Point<R, N, C>,
    solved_by: &Solved<N>,
) {
    let Point { state, q, qd, tau, p, k } = *at;
    let Solved { mass_matrix, accelerations, position, velocity } = *solved_by;
    // Rigid trees' articulated-body factor, whichever route the size took: the same
    // accelerations as the forward dynamics (one pass computes both), and solves that M
    // multiplies back to their right-hand sides within the same bound.
    let mut factor = ArticulatedFactor::<N>::default();
    let mut factored = SVector::zeros();
    assert!(R::articulated_factor_into(&q, &qd, &tau, &p, &k, &mut factor, &mut factored));
    assert_eq!(factored, accelerations, "{}, state {state}: the factor's pass differs", R::NAME);
    let mut solved = [SMatrix::<f64, N, N>::zeros(); 3];
    let [by_position, by_velocity, inverse] = &mut solved;
    factor.solve_into(&mut [
        Solve { scale: -1.0, b: Some(&position), out: by_position },
        Solve { scale: -1.0, b: Some(&velocity), out: by_velocity },
        Solve { scale: 1.0, b: None, out: inverse },
    ]);
    check_residual(R::NAME, state, &mass_matrix, -position, &solved[0]);
    check_residual(R::NAME, state, &mass_matrix, -velocity, &solved[1]);
    check_residual(R::NAME, state, &mass_matrix, SMatrix::identity(), &solved[2]);
    // And from the inverse dynamics' factors, whose rows a chain forms inside the
    // solve without the dID matrices.
    assert!(R::INVERSE_DYNAMICS_FACTORS, "{}: a rigid tree without dID factors", R::NAME);
    let mut factors = InverseDynamicsFactors::<N>::default();
    R::inverse_dynamics_factors_into(&q, &qd, &factored, &p, &k, &mut factors);
    let [by_position, by_velocity, inverse] = &mut solved;
    factor.solve_derivatives_into(&factors, by_position, by_velocity, inverse);
    check_residual(R::NAME, state, &mass_matrix, -position, &solved[0]);
    check_residual(R::NAME, state, &mass_matrix, -velocity, &solved[1]);
    check_residual(R::NAME, state, &mass_matrix, SMatrix::identity(), &solved[2]);
    // The runtime's products of the factors (row loops on a chain, a walk up each
    // joint's path on a tree) against the model's matrices (unrolled entries on the
    // smaller robots, the same products on the larger): the same sums in another
    // order, and the unrolled entries also reassociate the sums inside the factors (a
    // column is four 6-vector products that cancel), so the rounding is relative to
    // the terms, not to the entry: compared to 1e-9 of the larger of the entry's
    // products' magnitudes (the factors' absolute values multiplied out) and its
    // column's largest entry; measured between 3e-12 and 6e-12 of it, so the margin is
    // over 100 (a wrong term in a product is of the order of the entry itself).
    let (mut assembled_position, mut assembled_velocity) = (SMatrix::zeros(), SMatrix::zeros());
    factors.assemble_into(&mut assembled_position, &mut assembled_velocity);
    let mut magnitudes = factors;
    for vectors in [
        &mut magnitudes.subspace,
        &mut magnitudes.rate,
        &mut magnitudes.shift,
        &mut magnitudes.projected,
        &mut magnitudes.position_row,
        &mut magnitudes.position_column,
        &mut magnitudes.coriolis_row,
        &mut magnitudes.coriolis_column,
    ] {
        vectors.iter_mut().flatten().for_each(|x| *x = x.abs());
    }
    let (mut position_scale, mut velocity_scale) = (SMatrix::zeros(), SMatrix::zeros());
    magnitudes.assemble_into(&mut position_scale, &mut velocity_scale);
    for (assembled, model, scale, what) in [
        (assembled_position, position, position_scale, "dID/dq"),
        (assembled_velocity, velocity, velocity_scale, "dID/dqd"),
    ] {
        for i in 0..N {
            for j in 0..N {
                let bound = 1e-9 * scale[(i, j)].max(model.column(j).amax());
                assert!(
                    (assembled[(i, j)] - model[(i, j)]).abs() <= bound,
                    "{}, state {state}: {what} ({i}, {j}) from the factors is {:e}, the model's {:e}",
                    R::NAME,
                    assembled[(i, j)],
                    model[(i, j)]
                );
            }
        }
    }
}

/// A fixed seed per robot from its name (FNV-1a).
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// One test per robot of the generated registry: a spec added to model-specs/ is checked here
/// once codegen has run, with no edit to this file.
macro_rules! derivative_tests {
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

softgen_generated::for_each_robot!(derivative_tests);

/// The scaling fixtures, at every size the benches time.
#[test]
fn scaling_fixture_derivatives() {
    check_model::<SnakeLinks6, 8, 13>(6);
    check_model::<SnakeLinks12, 14, 25>(7);
    check_model::<SnakeLinks20, 22, 41>(8);
    check_model::<SnakeLinks60, 62, 121>(9);
}
