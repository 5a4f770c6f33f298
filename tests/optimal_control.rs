//! The optimal-control layer on generated robots: every knot's Jacobians against central
//! differences of the knot step itself, and box-DDP planning a robot's commands toward a
//! goal within their bounds.

use nalgebra::{DMatrix, DVector, SVector, Vector3};
use softgen_generated::{SnakeLateralUndulation, UnderwaterSnake};
use softgen_runtime::{
    BoxDdp, ControlInput, DdpSettings, GoalCost, GoalWeights, JointPd, KnotCost, KnotDynamics, Model, RobotKnots,
    Simulation, SimulationConfig, Terrain,
};

type Swimmer = UnderwaterSnake;
const SWIMMER_N: usize = 12;
const SWIMMER_C: usize = 2;
type Crawler = SnakeLateralUndulation;
const CRAWLER_N: usize = 8;
const CRAWLER_C: usize = 13;

/// The underwater snake in open water, commanded by its six thrusters.
fn swimmer(interval: f64) -> RobotKnots<Swimmer, SWIMMER_N, SWIMMER_C> {
    let config = SimulationConfig {
        contact: Swimmer::ENVIRONMENT.contact_law(),
        terrain: Terrain::None,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    };
    let simulation = Simulation::new(Default::default(), config).unwrap();
    RobotKnots::new(simulation, ControlInput::Thrusts, interval, 1).unwrap()
}

/// The snake on passive wheels on its floor, commanded by its servos' set points.
fn crawler(interval: f64) -> RobotKnots<Crawler, CRAWLER_N, CRAWLER_C> {
    let env = Crawler::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: Crawler::GAIT.unwrap().servo(),
        admittance: None,
        control_period: 0.001,
    };
    let simulation = Simulation::new(Default::default(), config).unwrap();
    RobotKnots::new(simulation, ControlInput::JointTargets, interval, 1).unwrap()
}

/// A state off every symmetry: the initial pose moved by `bend` on every coordinate past
/// the base's, rates of a few units per second, and the previous commands.
fn state<const N: usize>(initial: &[f64], first_shape: usize, bend: f64, commands: &[f64]) -> DVector<f64> {
    let q = SVector::<f64, N>::from_fn(|i, _| {
        initial[i] + if i >= first_shape { bend * (1.0 + 0.3 * i as f64).sin() } else { 0.0 }
    });
    let qd = SVector::<f64, N>::from_fn(|i, _| 0.2 * (0.7 * i as f64).cos());
    q.iter().chain(qd.iter()).chain(commands).copied().collect::<Vec<_>>().into()
}

/// The largest difference between the knot's Jacobians and central differences of its
/// step, relative to the largest entry of the differenced (A - I, B): (by state, by control).
fn jacobian_errors<D: KnotDynamics>(dynamics: &mut D, x: &DVector<f64>, u: &DVector<f64>) -> (f64, f64) {
    let (n, m) = (dynamics.state_size(), dynamics.control_size());
    let mut by_state = DMatrix::zeros(n, n);
    let mut by_control = DMatrix::zeros(n, m);
    let mut next = DVector::zeros(n);
    dynamics.step(0, x, u, &mut next, Some((&mut by_state, &mut by_control))).unwrap();
    let mut difference = |point: &DVector<f64>, control: &DVector<f64>| {
        let mut out = DVector::zeros(n);
        dynamics.step(0, point, control, &mut out, None).unwrap();
        out
    };
    let mut errors = (0.0_f64, 0.0_f64);
    let mut scales = (0.0_f64, 0.0_f64);
    for j in 0..n {
        let epsilon = 1e-6 * (1.0 + x[j].abs());
        let (mut plus, mut minus) = (x.clone(), x.clone());
        plus[j] += epsilon;
        minus[j] -= epsilon;
        let column = (difference(&plus, u) - difference(&minus, u)) / (2.0 * epsilon);
        for i in 0..n {
            let shifted = column[i] - if i == j { 1.0 } else { 0.0 };
            scales.0 = scales.0.max(shifted.abs());
            errors.0 = errors.0.max((column[i] - by_state[(i, j)]).abs());
        }
    }
    for k in 0..m {
        let epsilon = 1e-6 * (1.0 + u[k].abs());
        let (mut plus, mut minus) = (u.clone(), u.clone());
        plus[k] += epsilon;
        minus[k] -= epsilon;
        let column = (difference(x, &plus) - difference(x, &minus)) / (2.0 * epsilon);
        for i in 0..n {
            scales.1 = scales.1.max(column[i].abs());
            errors.1 = errors.1.max((column[i] - by_control[(i, k)]).abs());
        }
    }
    (errors.0 / scales.0, errors.1 / scales.1)
}

/// The knot's Jacobians are the implicit step's exact derivative (to Newton's tolerance,
/// 1e-10 of the rates, which central differences with steps of 1e-6 see as 1e-4 at worst;
/// their own truncation is 1e-12 relative): they must agree to 1e-4 of the largest entry
/// of (A - I, B), at knot intervals from 5 to 50 ms (the longest halve their implicit steps
/// where Newton's method fails across a wheel's change of contact).
fn check_knot_jacobians<D: KnotDynamics>(
    name: &str,
    mut make: impl FnMut(f64) -> D,
    x: &DVector<f64>,
    u: &DVector<f64>,
) {
    for h in [0.005, 0.01, 0.02, 0.05] {
        let (by_state, by_control) = jacobian_errors(&mut make(h), x, u);
        eprintln!("{name}, h = {h} s: relative errors {by_state:.2e} (state), {by_control:.2e} (commands)");
        assert!(by_state < 1e-4, "{name}: the knot's Jacobian by state is {by_state} off at h = {h} s");
        assert!(by_control < 1e-4, "{name}: the knot's Jacobian by command is {by_control} off at h = {h} s");
    }
}

#[test]
fn knot_jacobians_are_the_implicit_steps_derivatives() {
    let thrusts = [1.0, 0.3, 0.8, 0.9, -0.2, 1.1];
    let x = state::<SWIMMER_N>(Swimmer::INITIAL_POSITION, 6, 0.01, &thrusts);
    let u = DVector::from_row_slice(&[0.5, -0.4, 1.2, 0.7, 0.3, -0.6]);
    check_knot_jacobians("underwater snake, thrusts", swimmer, &x, &u);
    // On its wheels, touching the floor: contact, friction and the servos in the step.
    let targets = [0.3, -0.2, 0.1, 0.25, -0.3];
    let x = state::<CRAWLER_N>(Crawler::INITIAL_POSITION, 3, 0.2, &targets);
    let u = DVector::from_row_slice(&[0.35, -0.1, 0.2, 0.15, -0.25]);
    check_knot_jacobians("snake on wheels, joint targets", crawler, &x, &u);
}

#[test]
fn ddp_plans_the_thrusts_toward_a_waypoint_within_their_bounds() {
    let interval = 0.05;
    let knots = 10;
    let mut dynamics = swimmer(interval);
    let commands = dynamics.control_size();
    let params = dynamics.simulation().params.clone();
    let q0 = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let x0 = RobotKnots::<Swimmer, SWIMMER_N, SWIMMER_C>::state_vector(&q0, &SVector::zeros(), &[0.0; 6]);
    let start = Swimmer::center_of_mass(&q0, &params, &Swimmer::cache(&q0, &params));
    let goal = start + Vector3::new(2.0, 1.0, 0.5);
    let weights = GoalWeights {
        goal,
        position: Vector3::from_element(1.0),
        terminal_position: Vector3::from_element(10.0),
        rate: 0.01,
        terminal_rate: 0.0,
        effort: 1e-3,
        command_rate: 1e-4,
        rest: vec![0.0; commands],
    };
    let mut cost = GoalCost::<Swimmer, SWIMMER_N, SWIMMER_C>::new(params, weights, interval, commands).unwrap();
    let bound = 2.0;
    let mut ddp = BoxDdp::new(
        dynamics.state_size(),
        knots,
        DVector::from_element(commands, -bound),
        DVector::from_element(commands, bound),
        DdpSettings { max_iterations: 10, ..Default::default() },
    )
    .unwrap();
    let report = ddp.solve(&mut dynamics, &mut cost, &x0).unwrap();
    eprintln!("{report:?}");
    assert!(report.cost < 0.999 * report.initial_cost, "{report:?}");
    for u in ddp.controls() {
        assert!(u.iter().all(|v| v.abs() <= bound), "a plan exceeds its bounds: {u}");
    }
    // The plan pushes toward the goal: the predicted centre of mass ends nearer to it.
    let end = ddp.states()[knots].rows(0, SWIMMER_N).into_owned();
    let end = SVector::<f64, SWIMMER_N>::from_column_slice(end.as_slice());
    let predicted = cost.center_of_mass(&end);
    assert!((predicted - goal).norm() < (start - goal).norm(), "{predicted} vs start {start}");
    // Its terminal cost alone agrees with what the solver counted.
    let x_end = &ddp.states()[knots];
    assert!(cost.terminal(x_end, None).is_finite());
}
