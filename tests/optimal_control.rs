//! The optimal-control layer on generated robots: every knot's Jacobians against central
//! differences of the knot step itself, and box-DDP planning a robot's commands toward a
//! goal within their bounds, the receding-horizon controller's fallback and settings, and
//! the loop's side of it: plans followed at their own times, arrival and hold.

use nalgebra::{DMatrix, DVector, SVector, Vector3};
use softgen_generated::{SnakeLateralUndulation, UnderwaterSnake};
use softgen_runtime::{
    BoxDdp, CommandSchedule, ControlInput, CostDerivatives, DdpSettings, GoalCost, GoalWeights, HorizonSettings,
    JointPd, KnotCost, KnotDynamics, KnotIntegrator, Model, PlanFollower, PlanLink, RecedingHorizon, RobotKnots,
    Simulation, SimulationConfig, State, SteeringPhase, Terrain,
};

type Swimmer = UnderwaterSnake;
const SWIMMER_N: usize = 12;
const SWIMMER_C: usize = 2;
type Crawler = SnakeLateralUndulation;
const CRAWLER_N: usize = 8;
const CRAWLER_C: usize = 13;

/// The underwater snake in open water, commanded by its six thrusters and six muscles.
fn swimmer(interval: f64) -> RobotKnots<Swimmer, SWIMMER_N, SWIMMER_C> {
    RobotKnots::new(swimmer_simulation(), &[ControlInput::Thrusts, ControlInput::MusclePressures], interval, 1).unwrap()
}

/// The snake on passive wheels on its floor, with its servos.
/// The wave again, the knots' steps semi-implicit Euler of at most 2 ms.
fn undulating_crawler_semi_implicit(interval: f64) -> RobotKnots<Crawler, CRAWLER_N, CRAWLER_C> {
    lagged_crawler_semi_implicit(interval, 0.0, (interval / 0.002).ceil() as usize)
}

/// The wave with its parameters following the decisions with `lag` s (the schedule's state
/// then the phase and the three lagged parameters), semi-implicit in `substeps` steps.
fn lagged_crawler_semi_implicit(interval: f64, lag: f64, substeps: usize) -> RobotKnots<Crawler, CRAWLER_N, CRAWLER_C> {
    let schedule =
        CommandSchedule::Wave { joints: 5, spatial_frequency: Crawler::GAIT.unwrap().spatial_frequency, lag };
    let mut knots =
        RobotKnots::scheduled(crawler_simulation(), &[ControlInput::JointTargets], schedule, interval, substeps)
            .unwrap();
    knots.integrator = KnotIntegrator::SemiImplicitEuler;
    knots
}

fn crawler_simulation() -> Simulation<Crawler, CRAWLER_N, CRAWLER_C> {
    let env = Crawler::ENVIRONMENT;
    let config = SimulationConfig {
        contact: env.contact_law(),
        terrain: env.terrain,
        gait: None,
        servo: Crawler::GAIT.unwrap().servo(),
        admittance: None,
        control_period: 0.001,
    };
    Simulation::new(Default::default(), config).unwrap()
}

/// The snake on wheels commanded by its servos' set points.
fn crawler(interval: f64) -> RobotKnots<Crawler, CRAWLER_N, CRAWLER_C> {
    RobotKnots::new(crawler_simulation(), &[ControlInput::JointTargets], interval, 1).unwrap()
}

/// The same snake, the plan deciding its gait's wave (amplitude, frequency, offset), each
/// knot cut into three implicit steps whose set points follow the wave's phase.
fn undulating_crawler(interval: f64) -> RobotKnots<Crawler, CRAWLER_N, CRAWLER_C> {
    let schedule =
        CommandSchedule::Wave { joints: 5, spatial_frequency: Crawler::GAIT.unwrap().spatial_frequency, lag: 0.0 };
    RobotKnots::scheduled(crawler_simulation(), &[ControlInput::JointTargets], schedule, interval, 3).unwrap()
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
    let commands = [1.0, 0.3, 0.8, 0.9, -0.2, 1.1, 0.5, 0.0, 1.0, 2.0, 0.1, 0.0];
    let x = state::<SWIMMER_N>(Swimmer::INITIAL_POSITION, 6, 0.01, &commands);
    let u = DVector::from_row_slice(&[0.5, -0.4, 1.2, 0.7, 0.3, -0.6, 1.0, 0.2, 0.0, 0.5, 3.0, 0.3]);
    check_knot_jacobians("underwater snake, thrusts and pressures", swimmer, &x, &u);
    // On its wheels, touching the floor: contact, friction and the servos in the step.
    let targets = [0.3, -0.2, 0.1, 0.25, -0.3];
    let x = state::<CRAWLER_N>(Crawler::INITIAL_POSITION, 3, 0.2, &targets);
    let u = DVector::from_row_slice(&[0.35, -0.1, 0.2, 0.15, -0.25]);
    check_knot_jacobians("snake on wheels, joint targets", crawler, &x, &u);
    // Its wave: the phase a state, the decisions reaching the set points through it.
    let wave_state = [0.9, 0.6, 1.8, 0.1];
    let x = state::<CRAWLER_N>(Crawler::INITIAL_POSITION, 3, 0.2, &wave_state);
    let u = DVector::from_row_slice(&[0.7, 2.0, -0.15]);
    check_knot_jacobians("snake on wheels, its wave", undulating_crawler, &x, &u);
    check_knot_jacobians("snake on wheels, its wave, semi-implicit", undulating_crawler_semi_implicit, &x, &u);
    // The wave's parameters lagging the decisions by 0.1 s: the schedule's state is the
    // phase and the lagged parameters.
    let lagged_state = [0.9, 0.6, 1.8, 0.1, 0.5, 1.5, 0.05];
    let x = state::<CRAWLER_N>(Crawler::INITIAL_POSITION, 3, 0.2, &lagged_state);
    let lagged = |h: f64| lagged_crawler_semi_implicit(h, 0.1, (h / 0.002).ceil() as usize);
    check_knot_jacobians("snake on wheels, its lagged wave, semi-implicit", lagged, &x, &u);
}

/// A knot's Jacobians chain its steps': over two semi-implicit steps they are the product
/// of two one-step knots' (the second from where the first ended, at its time), to
/// rounding, with the wave's parameters following the decisions at once and lagged. The
/// chain works column by column on the step's rate rows alone
/// (`RobotKnots::chain_semi_implicit`); this holds it to the dense product of the steps'
/// whole matrices.
#[test]
fn semi_implicit_knots_chain_their_steps_jacobians() {
    let u = DVector::from_row_slice(&[0.7, 2.0, -0.15]);
    for (lag, schedule_state) in [(0.0, vec![0.9, 0.6, 1.8, 0.1]), (0.1, vec![0.9, 0.6, 1.8, 0.1, 0.5, 1.5, 0.05])] {
        let x = state::<CRAWLER_N>(Crawler::INITIAL_POSITION, 3, 0.2, &schedule_state);
        let n = x.len();
        let jacobians = || (DMatrix::<f64>::zeros(n, n), DMatrix::<f64>::zeros(n, u.len()));
        let mut two = lagged_crawler_semi_implicit(0.004, lag, 2);
        let (mut by_state, mut by_control) = jacobians();
        let mut end = DVector::zeros(n);
        two.step(0, &x, &u, &mut end, Some((&mut by_state, &mut by_control))).unwrap();
        let mut one = lagged_crawler_semi_implicit(0.002, lag, 1);
        let ((mut first_state, mut first_control), (mut second_state, mut second_control)) = (jacobians(), jacobians());
        let (mut middle, mut end_by_steps) = (DVector::zeros(n), DVector::zeros(n));
        one.step(0, &x, &u, &mut middle, Some((&mut first_state, &mut first_control))).unwrap();
        one.step(1, &middle, &u, &mut end_by_steps, Some((&mut second_state, &mut second_control))).unwrap();
        assert_eq!(end, end_by_steps, "lag {lag}: two steps in one knot end where two knots do");
        let chained_state = &second_state * &first_state;
        // The decisions are carried in the state, so the second knot's dependence on them is
        // through its state's decision rows and its own control.
        let chained_control = &second_state * &first_control + &second_control;
        for (name, knot, chained) in
            [("state", &by_state, &chained_state), ("decisions", &by_control, &chained_control)]
        {
            let error = (knot - chained).amax() / chained.amax();
            eprintln!("lag {lag}: by {name}, relative difference {error:.1e}");
            assert!(error < 1e-12, "lag {lag}: the knot's Jacobian by {name} is {error} off its steps' product");
        }
    }
}

/// The soft snake, the plan deciding its bend and its bending plane's rate
/// (`mpc-000-roll-aside`): the muscles' forces through the plane's phase and the sections'
/// elasticity and damping in one implicit step. Lifted 5 cm off its carpet: lying on it,
/// some skin point is always within the differences' 1e-6 m of the surface, where the
/// normal force has its kink, and central differences across it disagree with either side's
/// derivative by up to 0.4 % (measured at four heights); the contact's own derivatives are
/// checked point by point in tests/models/system_jacobian.rs.
#[test]
fn knot_jacobians_through_a_rotating_bend() {
    use softgen::papers::soft_snake::mpc::{planning_simulation, rolling_schedule, RollAsideTask};
    use softgen::papers::soft_snake::{run_rolling, Rolling, RollingRun};
    const N: usize = 15;
    let task = RollAsideTask::new();
    let mut drop = RollingRun::new(Rolling::Planar);
    drop.duration = 0.0;
    let mut lifted = run_rolling(&drop, |_| {}).unwrap().samples.last().unwrap().q;
    lifted[2] += 0.05;
    let touching = planning_simulation(&task).unwrap().report(0.0, &State::new(lifted, SVector::zeros())).active;
    assert_eq!(touching, 0, "5 cm up, no point should touch");
    let qd = SVector::<f64, N>::from_fn(|i, _| 0.02 * (0.7 * i as f64).cos());
    // The plane's phase 0.7 rad, the decisions in effect (0.4 rad, 1 rad/s).
    let x: DVector<f64> = lifted.iter().chain(qd.iter()).chain(&[0.7, 0.4, 1.0]).copied().collect::<Vec<_>>().into();
    let u = DVector::from_row_slice(&[0.45, 2.5]);
    let schedule = rolling_schedule(&task).unwrap();
    let knots = |interval: f64| {
        RobotKnots::scheduled(
            planning_simulation(&task).unwrap(),
            &[ControlInput::ActuatorForces],
            schedule,
            interval,
            1,
        )
        .unwrap()
    };
    check_knot_jacobians("soft snake, rotating bend", knots, &x, &u);
}

#[test]
fn ddp_plans_the_thrusts_toward_a_waypoint_within_their_bounds() {
    let interval = 0.05;
    let knots = 10;
    let mut dynamics = swimmer(interval);
    let commands = dynamics.control_size();
    let params = dynamics.simulation().params.clone();
    let q0 = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let x0 = RobotKnots::<Swimmer, SWIMMER_N, SWIMMER_C>::state_vector(&q0, &SVector::zeros(), &[0.0; 12]);
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
        heading_points: Some((0, 1)),
        travel_command: None,
        heading: 0.5,
        terminal_heading: 2.0,
        posture: Vec::new(),
        distance_scaled: None,
    };
    let mut cost = GoalCost::<Swimmer, SWIMMER_N, SWIMMER_C>::new(params, weights, interval, commands).unwrap();
    // Thrusts within 2 N either way, pressures from 0 to each muscle's rating.
    let bound = 2.0;
    let rated = |k: usize| Swimmer::muscle(k, &Default::default()).unwrap().rated_pressure;
    let lower = DVector::from_fn(commands, |i, _| if i < 6 { -bound } else { 0.0 });
    let upper = DVector::from_fn(commands, |i, _| if i < 6 { bound } else { rated(i - 6) });
    let mut ddp = BoxDdp::new(
        dynamics.state_size(),
        knots,
        lower.clone(),
        upper.clone(),
        DdpSettings { max_iterations: 10, ..Default::default() },
    )
    .unwrap();
    let report = ddp.solve(&mut dynamics, &mut cost, &x0).unwrap();
    eprintln!("{report:?}");
    assert!(report.cost < 0.999 * report.initial_cost, "{report:?}");
    for u in ddp.controls() {
        assert!((0..commands).all(|i| u[i] >= lower[i] && u[i] <= upper[i]), "a plan exceeds its bounds: {u}");
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

/// The cost's gradients are exact: central differences of the running and terminal costs
/// (every term on: position, heading, rates, effort, command rate) at a state off every
/// symmetry, to 1e-6 of the largest entry (their truncation at steps of 1e-6 is 1e-12);
/// with the heading's direction as tracked and signed by a travel command, and with the
/// goal's terms scaled by the distance where the plan starts.
#[test]
fn goal_cost_gradients_match_central_differences() {
    for travel_command in [None, Some((2, 0.5))] {
        goal_cost_gradients_at(travel_command, None);
    }
    goal_cost_gradients_at(Some((2, 0.5)), Some(0.1));
}

/// The goal weights of the cost tests, on the swimmer's 12 commands.
fn test_goal_weights(travel_command: Option<(usize, f64)>, distance_scaled: Option<f64>) -> GoalWeights {
    GoalWeights {
        goal: Vector3::new(1.5, -0.7, 0.4),
        position: Vector3::new(1.0, 2.0, 0.5),
        terminal_position: Vector3::from_element(10.0),
        rate: 0.3,
        terminal_rate: 2.0,
        effort: 0.01,
        command_rate: 0.02,
        rest: vec![0.1; 12],
        heading_points: Some((0, 1)),
        heading: 0.7,
        terminal_heading: 3.0,
        travel_command,
        posture: vec![(4, 0.1, 2.0), (5, -0.2, 1.5)],
        distance_scaled,
    }
}

fn goal_cost_gradients_at(travel_command: Option<(usize, f64)>, distance_scaled: Option<f64>) {
    let params = Default::default();
    let commands = 12;
    let weights = test_goal_weights(travel_command, distance_scaled);
    let mut cost = GoalCost::<Swimmer, SWIMMER_N, SWIMMER_C>::new(params, weights, 0.05, commands).unwrap();
    let previous: Vec<f64> = (0..commands).map(|k| 0.3 * (k as f64).sin()).collect();
    let mut x = state::<SWIMMER_N>(Swimmer::INITIAL_POSITION, 6, 0.01, &previous);
    x[3] = 0.4; // yawed, so the heading term is far from zero
                // The plan's scale is fixed where it starts (the swimmer's initial pose, 1.7 m away), not
                // at the state differentiated.
    cost.scale_for_start(&SVector::from_column_slice(Swimmer::INITIAL_POSITION));
    if distance_scaled.is_some() {
        assert!(cost.goal_scale() != 1.0, "the scale moved: {}", cost.goal_scale());
    }
    let u = DVector::from_fn(commands, |k, _| 0.5 * (1.3 * k as f64).cos());
    let mut derivatives = CostDerivatives::zeros(x.len(), commands);
    cost.running(0, &x, &u, Some(&mut derivatives));
    let mut terminal = CostDerivatives::zeros(x.len(), commands);
    cost.terminal(&x, Some(&mut terminal));
    let check = |name: &str, exact: &DVector<f64>, f: &mut dyn FnMut(&DVector<f64>) -> f64, at: &DVector<f64>| {
        let scale = exact.amax().max(1e-12);
        for j in 0..at.len() {
            let epsilon = 1e-6 * (1.0 + at[j].abs());
            let (mut plus, mut minus) = (at.clone(), at.clone());
            plus[j] += epsilon;
            minus[j] -= epsilon;
            let difference = (f(&plus) - f(&minus)) / (2.0 * epsilon);
            assert!(
                (difference - exact[j]).abs() < 1e-6 * scale,
                "{name}: entry {j}: {} exact, {difference} by differences",
                exact[j]
            );
        }
    };
    let mut by_state = |point: &DVector<f64>| cost.running(0, point, &u, None);
    check("running cost by state", &derivatives.x, &mut by_state, &x);
    let mut by_control = |point: &DVector<f64>| cost.running(0, &x, point, None);
    check("running cost by command", &derivatives.u, &mut by_control, &u);
    let mut final_cost = |point: &DVector<f64>| cost.terminal(point, None);
    check("terminal cost by state", &terminal.x, &mut final_cost, &x);
    assert!(derivatives.x.rows(0, 6).amax() > 0.0 && terminal.x.rows(0, 6).amax() > 0.0);
    if let Some((command, _)) = travel_command {
        let index = x.len() - commands + command;
        assert!(terminal.x[index].abs() > 1e-3 * terminal.x.amax(), "the travel command moves the heading term");
    }
}

/// Distance-scaled goal terms are the goal's terms divided by the squared distance (over
/// the position's weighted axes) from where the plan starts, never by less than the floor;
/// every other term is as it was.
#[test]
fn distance_scaled_goal_terms_are_the_goal_terms_over_the_distance_squared() {
    let commands = 12;
    let interval = 0.05;
    let plain = test_goal_weights(Some((2, 0.5)), None);
    let new_cost = |weights: GoalWeights| {
        GoalCost::<Swimmer, SWIMMER_N, SWIMMER_C>::new(Default::default(), weights, interval, commands).unwrap()
    };
    let previous: Vec<f64> = (0..commands).map(|k| 0.3 * (k as f64).sin()).collect();
    let mut x = state::<SWIMMER_N>(Swimmer::INITIAL_POSITION, 6, 0.01, &previous);
    x[3] = 0.4;
    let u = DVector::from_fn(commands, |k, _| 0.5 * (1.3 * k as f64).cos());
    let start = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    // Only x and y weighted: z's distance must not count.
    let planar = GoalWeights {
        position: Vector3::new(1.0, 2.0, 0.0),
        terminal_position: Vector3::new(10.0, 10.0, 0.0),
        ..plain.clone()
    };
    let away = new_cost(planar.clone()).center_of_mass(&start) - planar.goal;
    let distance = (away.x * away.x + away.y * away.y).sqrt();
    assert!(distance > 0.5 && away.z.abs() > 0.1, "{away}");
    for (floor, expected) in [(0.1, distance), (10.0, 10.0)] {
        let mut scaled = new_cost(GoalWeights { distance_scaled: Some(floor), ..planar.clone() });
        scaled.scale_for_start(&start);
        let factor = 1.0 / (expected * expected);
        assert!((scaled.goal_scale() - factor).abs() < 1e-15 * factor, "{} vs {factor}", scaled.goal_scale());
        // The same cost with the goal's four weights divided by hand.
        let mut by_hand = new_cost(GoalWeights {
            position: planar.position * factor,
            terminal_position: planar.terminal_position * factor,
            heading: planar.heading * factor,
            terminal_heading: planar.terminal_heading * factor,
            ..planar.clone()
        });
        by_hand.scale_for_start(&start);
        assert_eq!(by_hand.goal_scale(), 1.0);
        let (a, b) = (scaled.running(0, &x, &u, None), by_hand.running(0, &x, &u, None));
        assert!((a - b).abs() < 1e-12 * a.abs(), "running: {a} vs {b}");
        let (a, b) = (scaled.terminal(&x, None), by_hand.terminal(&x, None));
        assert!((a - b).abs() < 1e-12 * a.abs(), "terminal: {a} vs {b}");
    }
    // A floor that is not a distance is refused.
    for floor in [0.0, -1.0, f64::NAN] {
        let error = GoalCost::<Swimmer, SWIMMER_N, SWIMMER_C>::new(
            Default::default(),
            GoalWeights { distance_scaled: Some(floor), ..plain.clone() },
            interval,
            commands,
        )
        .err()
        .unwrap();
        assert!(error.contains("distance-scaled goal terms need a floor"), "{error}");
    }
}

fn swimmer_horizon() -> HorizonSettings {
    let rated: Vec<f64> = (0..6).map(|k| Swimmer::muscle(k, &Default::default()).unwrap().rated_pressure).collect();
    HorizonSettings {
        knots: 4,
        interval: 0.125,
        substeps: 1,
        iterations: 1,
        period: 0.01,
        deadline: None,
        lower: [vec![-2.0; 6], vec![0.0; 6]].concat(),
        upper: [vec![2.0; 6], rated].concat(),
    }
}

fn swimmer_weights(goal: Vector3<f64>) -> GoalWeights {
    GoalWeights {
        goal,
        position: Vector3::from_element(1.0),
        terminal_position: Vector3::from_element(50.0),
        rate: 0.1,
        terminal_rate: 1.0,
        effort: 1e-3,
        command_rate: 1e-4,
        rest: vec![0.0; 12],
        heading_points: Some((0, 1)),
        travel_command: None,
        heading: 1.0,
        terminal_heading: 10.0,
        posture: Vec::new(),
        distance_scaled: None,
    }
}

/// The underwater snake in open water, no input until one is set.
fn swimmer_simulation() -> Simulation<Swimmer, SWIMMER_N, SWIMMER_C> {
    let config = SimulationConfig {
        contact: Swimmer::ENVIRONMENT.contact_law(),
        terrain: Terrain::None,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: 0.01,
    };
    Simulation::new(Default::default(), config).unwrap()
}

/// The swimmer's commands: thrusts, then pressures.
const SWIMMER_INPUTS: [ControlInput; 2] = [ControlInput::Thrusts, ControlInput::MusclePressures];

/// The swimmer's planner toward a waypoint 2 m ahead, 1 m aside and 0.5 m up.
fn swimmer_planner() -> RecedingHorizon<Swimmer, SWIMMER_N, SWIMMER_C> {
    RecedingHorizon::new(
        swimmer_simulation(),
        &SWIMMER_INPUTS,
        swimmer_horizon(),
        swimmer_weights(Vector3::new(2.0, 1.0, 0.5)),
        DdpSettings::default(),
    )
    .unwrap()
}

/// A plan that cannot be made (a measured state that is not finite, the wrong number of
/// current commands) is reported and the last good plan is followed: finite, inside the box.
#[test]
fn a_failed_plan_falls_back_to_the_last_good_one() {
    let settings = swimmer_horizon();
    let mut planner = swimmer_planner();
    let q = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let rest = SVector::zeros();
    let mut current = vec![0.0; 12];
    for k in 0..3 {
        let outcome = planner.plan(0.01 * k as f64, &q, &rest, &current);
        assert!(outcome.failure.is_none(), "{outcome:?}");
        current.copy_from_slice(planner.command_at(0.01 * k as f64).as_slice());
    }
    let good = planner.command_at(0.03).clone();
    let mut broken = q;
    broken[2] = f64::NAN;
    let outcome = planner.plan(0.03, &broken, &rest, &current);
    assert!(outcome.failure.as_deref().is_some_and(|f| f.contains("not finite")), "{outcome:?}");
    assert_eq!(planner.command_at(0.03), &good, "the last good plan is followed");
    let outcome = planner.plan(0.04, &q, &rest, &current[..3]);
    assert!(outcome.failure.as_deref().is_some_and(|f| f.contains("current commands")), "{outcome:?}");
    let statistics = planner.statistics();
    assert_eq!((statistics.plans, statistics.failures), (5, 2));
    for i in 0..12 {
        assert!(good[i] >= settings.lower[i] && good[i] <= settings.upper[i]);
    }
    // And planning goes on from there.
    assert!(planner.plan(0.05, &q, &rest, &current).failure.is_none());
    // A plan past its deadline is not used either (no plan takes a nanosecond).
    let kept = planner.command_at(0.06).clone();
    planner.settings.period = 1e-9;
    planner.settings.deadline = Some(1e-9);
    let outcome = planner.plan(0.06, &q, &rest, &current);
    assert!(outcome.failure.as_deref().is_some_and(|f| f.contains("past its deadline")), "{outcome:?}");
    assert_eq!(planner.command_at(0.06), &kept, "the last good plan is followed");
    let statistics = planner.statistics();
    assert_eq!((statistics.plans, statistics.failures), (7, 3));
    assert!(statistics.overruns >= 1);
}

/// With a lead, a plan starts `lead_knots` knots after its measurement, from the state the
/// knots predict there under the commands in effect (those the loop keeps sending until
/// the plan starts).
#[test]
fn a_plan_with_a_lead_starts_from_the_state_predicted_under_the_commands_in_effect() {
    let (inputs, settings) = (SWIMMER_INPUTS, swimmer_horizon());
    let mut planner = swimmer_planner();
    planner.lead_knots = 1;
    let q = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let rest = SVector::zeros();
    let current = [vec![1.0, 1.0, 0.0, 0.0, 0.5, 0.5], vec![2.0, 0.0, 0.0, 0.0, 0.0, 0.0]].concat();
    let outcome = planner.plan(0.3, &q, &rest, &current);
    assert!(outcome.failure.is_none(), "{outcome:?}");
    let (start, _) = planner.kept_plan().unwrap();
    assert!((start - (0.3 + settings.interval)).abs() < 1e-12, "the plan starts at {start} s");
    // The knot the lead predicted, stepped separately.
    let mut knots = RobotKnots::new(swimmer_simulation(), &inputs, settings.interval, settings.substeps).unwrap();
    let measured = RobotKnots::<Swimmer, SWIMMER_N, SWIMMER_C>::state_vector(&q, &rest, &current);
    let mut predicted = DVector::zeros(measured.len());
    knots.step(0, &measured, &DVector::from_column_slice(&current), &mut predicted, None).unwrap();
    let from = &planner.predicted_states()[0];
    let moved = (predicted.rows(0, SWIMMER_N) - measured.rows(0, SWIMMER_N)).amax();
    assert!(moved > 1e-4, "the thrusts moved the snake ({moved} over the knot)");
    let error = (from - &predicted).amax();
    assert!(error <= 1e-9 * (1.0 + predicted.amax()), "the plan starts {error} from the predicted state");
    // A prediction that cannot be made is a failed plan: the last good one stands.
    let mut broken = q;
    broken[2] = 1e300;
    let outcome = planner.plan(0.4, &broken, &rest, &current);
    assert!(outcome.failure.is_some(), "{outcome:?}");
    assert_eq!(planner.kept_plan().unwrap().0, start);
}

/// Bad settings are refused, naming the setting.
#[test]
fn bad_horizon_settings_name_what_is_wrong() {
    let inputs = [ControlInput::Thrusts, ControlInput::MusclePressures];
    let weights = swimmer_weights(Vector3::zeros());
    let make = |settings: HorizonSettings, weights: GoalWeights| {
        RecedingHorizon::new(swimmer_simulation(), &inputs, settings, weights, DdpSettings::default()).err().unwrap()
    };
    let good = swimmer_horizon();
    for (settings, expected) in [
        (HorizonSettings { knots: 0, ..good.clone() }, "knots"),
        (HorizonSettings { interval: -0.1, ..good.clone() }, "knot interval"),
        (HorizonSettings { period: f64::NAN, ..good.clone() }, "planning period"),
        (HorizonSettings { iterations: 0, ..good.clone() }, "iterations"),
        (HorizonSettings { lower: vec![0.0; 3], ..good.clone() }, "bounds"),
        (HorizonSettings { upper: vec![-5.0; 12], ..good.clone() }, "not a finite interval"),
        (HorizonSettings { substeps: 0, ..good.clone() }, "substeps"),
        (HorizonSettings { deadline: Some(0.001), ..good.clone() }, "deadline 0.001 s is shorter"),
        (HorizonSettings { deadline: Some(f64::INFINITY), ..good.clone() }, "plan deadline"),
    ] {
        let error = make(settings, weights.clone());
        assert!(error.contains(expected), "expected `{expected}` in: {error}");
    }
    let error = make(good.clone(), GoalWeights { heading_points: Some((0, 7)), ..weights.clone() });
    assert!(error.contains("heading points"), "{error}");
    let error = make(good.clone(), GoalWeights { posture: vec![(12, 0.0, 1.0)], ..weights.clone() });
    assert!(error.contains("coordinate 12 is not one of the 12"), "{error}");
    let error = make(good.clone(), GoalWeights { posture: vec![(4, 0.0, -1.0)], ..weights.clone() });
    assert!(error.contains("weight -1 finite and >= 0"), "{error}");
    let error = make(good.clone(), GoalWeights { effort: -1.0, ..weights.clone() });
    assert!(error.contains("effort"), "{error}");
    let error = make(good.clone(), GoalWeights { travel_command: Some((20, 1.0)), ..weights.clone() });
    assert!(error.contains("travel command 20 is not one of the"), "{error}");
    let error = make(good.clone(), GoalWeights { travel_command: Some((0, 0.0)), ..weights.clone() });
    assert!(error.contains("scale must be finite and > 0, got 0"), "{error}");
    let error = make(
        good.clone(),
        GoalWeights {
            heading_points: None,
            heading: 0.0,
            terminal_heading: 0.0,
            travel_command: Some((0, 1.0)),
            ..weights.clone()
        },
    );
    assert!(error.contains("travel command needs the heading's points"), "{error}");
    let error = make(good, GoalWeights { rest: vec![0.0; 2], ..weights });
    assert!(error.contains("resting commands"), "{error}");
    let error =
        RobotKnots::new(swimmer_simulation(), &[ControlInput::Thrusts, ControlInput::Thrusts], 0.1, 1).err().unwrap();
    assert!(error.contains("twice"), "{error}");
    let error =
        RobotKnots::new(swimmer_simulation(), &[ControlInput::ActuatorForces, ControlInput::MusclePressures], 0.1, 1)
            .err()
            .unwrap();
    assert!(error.contains("both set the actuator forces"), "{error}");
}

/// The loop's side: commands before the first plan, then the newest plan's at each time; the
/// measured state goes to the planner with the commands in effect; arrival, hold and
/// leaving the goal; bad plans and measurements are errors, never panics.
/// A plan that starts after it arrives (a planner with a lead) leaves the plan the loop
/// follows in effect until its start; a plan that is superseded before it starts never
/// takes over.
#[test]
fn a_plan_that_starts_after_it_arrives_takes_over_at_its_start() {
    let p: softgen_generated::underwater_snake::Params = Default::default();
    let link = PlanLink::<SWIMMER_N>::new();
    let mut follower =
        PlanFollower::<Swimmer, SWIMMER_N, SWIMMER_C>::new(p, Vector3::zeros(), 0.1, 1.0, &[0.0]).unwrap();
    let plan = |start: f64, values: &[f64]| {
        let knots: Vec<DVector<f64>> = values.iter().map(|v| DVector::from_vec(vec![*v])).collect();
        softgen_runtime::CommandPlan::new(start, 0.1, &knots).unwrap()
    };
    let mut commands = [0.0];
    let mut at = |follower: &mut PlanFollower<Swimmer, SWIMMER_N, SWIMMER_C>, t: f64| {
        follower.command(&link, t, &mut commands).unwrap();
        commands[0]
    };
    link.plans.post(plan(0.0, &[1.0, 2.0, 3.0]));
    assert_eq!(at(&mut follower, 0.05), 1.0);
    link.plans.post(plan(0.2, &[10.0, 20.0]));
    assert_eq!(at(&mut follower, 0.12), 2.0, "the plan before, until the new one starts");
    assert_eq!(at(&mut follower, 0.2), 10.0);
    assert_eq!(at(&mut follower, 0.31), 20.0);
    link.plans.post(plan(0.5, &[7.0]));
    assert_eq!(at(&mut follower, 0.35), 20.0);
    link.plans.post(plan(0.6, &[8.0]));
    assert_eq!(at(&mut follower, 0.45), 20.0);
    assert_eq!(at(&mut follower, 0.55), 20.0, "the plan of 0.5 s was superseded before it started");
    assert_eq!(at(&mut follower, 0.6), 8.0);
    assert_eq!(follower.plans_applied, 4);
    // A plan that arrives once the one before has started: that one stays until it starts.
    link.plans.post(plan(0.9, &[5.0]));
    assert_eq!(at(&mut follower, 0.8), 8.0);
    link.plans.post(plan(1.0, &[6.0]));
    assert_eq!(at(&mut follower, 0.95), 5.0);
    assert_eq!(at(&mut follower, 1.0), 6.0);
}

/// A goal that binds some axes only: the distance and the arrival ignore the others (the
/// soft snake's goal binds the side, which rolling moves, not the body's axis).
#[test]
fn a_goal_on_some_axes_is_reached_whatever_the_others() {
    let p: softgen_generated::underwater_snake::Params = Default::default();
    let q = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let com = Swimmer::center_of_mass(&q, &p, &Swimmer::cache(&q, &p));
    let goal = com + Vector3::new(0.5, 0.02, -0.3);
    let link = PlanLink::<SWIMMER_N>::new();
    let make = |axes| {
        PlanFollower::<Swimmer, SWIMMER_N, SWIMMER_C>::new(p.clone(), goal, 0.1, 1.0, &[0.0])
            .unwrap()
            .with_goal_axes(axes)
    };
    let mut all = make([true; 3]);
    let mut side = make([false, true, false]);
    assert!((all.distance_of(&com) - (0.25f64 + 0.0004 + 0.09).sqrt()).abs() < 1e-12);
    assert!((side.distance_of(&com) - 0.02).abs() < 1e-12);
    link.measured.post((0.5, State::new(q, SVector::zeros())));
    let mut commands = [0.0];
    assert_eq!(all.command(&link, 0.5, &mut commands).unwrap(), SteeringPhase::Travelling);
    assert_eq!(side.command(&link, 0.5, &mut commands).unwrap(), SteeringPhase::Arrived { at: 0.5 });
    assert!((side.distance - 0.02).abs() < 1e-12);
}

#[test]
fn the_loop_follows_the_newest_plan_and_tracks_arrival_and_hold() {
    let p: softgen_generated::underwater_snake::Params = Default::default();
    let q = SVector::<f64, SWIMMER_N>::from_column_slice(Swimmer::INITIAL_POSITION);
    let com = Swimmer::center_of_mass(&q, &p, &Swimmer::cache(&q, &p));
    let goal = com + Vector3::new(0.05, 0.0, 0.0);
    let link = PlanLink::<SWIMMER_N>::new();
    let mut follower =
        PlanFollower::<Swimmer, SWIMMER_N, SWIMMER_C>::new(p.clone(), goal, 0.1, 1.0, &[0.5, -0.5]).unwrap();
    let mut commands = [0.0; 2];
    assert_eq!(follower.command(&link, 0.0, &mut commands).unwrap(), SteeringPhase::Travelling);
    assert_eq!(commands, [0.5, -0.5], "the initial commands before any plan");
    // A plan of three knots of 0.1 s from t = 1 s.
    let knots: Vec<DVector<f64>> = (0..3).map(|k| DVector::from_vec(vec![k as f64, -(k as f64)])).collect();
    link.plans.post(softgen_runtime::CommandPlan::new(1.0, 0.1, &knots).unwrap());
    for (t, expected) in [(0.5, 0.0), (1.0, 0.0), (1.15, 1.0), (1.25, 2.0), (9.0, 2.0)] {
        follower.command(&link, t, &mut commands).unwrap();
        assert_eq!(commands, [expected, -expected], "t = {t}");
    }
    assert_eq!(follower.plans_applied, 1);
    // A measurement within reach: arrived; the snapshot carries the commands in effect then.
    let at_rest = State::new(q, SVector::zeros());
    link.measured.post((1.15, at_rest));
    assert_eq!(follower.command(&link, 1.2, &mut commands).unwrap(), SteeringPhase::Arrived { at: 1.15 });
    let (_, snapshot) = link.snapshots.latest().unwrap();
    assert_eq!((snapshot.time, snapshot.commands()), (1.15, &[1.0, -1.0][..]));
    assert!((follower.distance - 0.05).abs() < 1e-12);
    // Held for the hold time: finished.
    link.measured.post((2.2, at_rest));
    assert_eq!(follower.command(&link, 2.2, &mut commands).unwrap(), SteeringPhase::Finished { at: 1.15 });
    // Leaving the goal starts over.
    let mut away = q;
    away[0] += 1.0;
    link.measured.post((2.3, State::new(away, SVector::zeros())));
    assert_eq!(follower.command(&link, 2.3, &mut commands).unwrap(), SteeringPhase::Travelling);
    // A non-finite measurement or plan is an error.
    let mut broken = at_rest;
    broken.qd[3] = f64::NAN;
    link.measured.post((2.4, broken));
    assert!(follower.command(&link, 2.4, &mut commands).unwrap_err().contains("not finite"));
    let bad: Vec<DVector<f64>> = vec![DVector::from_vec(vec![f64::NAN, 0.0])];
    link.plans.post(softgen_runtime::CommandPlan::new(3.0, 0.1, &bad).unwrap());
    assert!(follower.command(&link, 3.0, &mut commands).unwrap_err().contains("non-finite"));
    let wider: Vec<DVector<f64>> = vec![DVector::from_vec(vec![0.0; 3])];
    link.plans.post(softgen_runtime::CommandPlan::new(3.0, 0.1, &wider).unwrap());
    assert!(follower.command(&link, 3.0, &mut commands).unwrap_err().contains("3 commands for 2"));
    assert!(follower.command(&link, 3.0, &mut [0.0; 5]).unwrap_err().contains("5 commands"));
    // Plans that would not fit the loop's fixed-size slot are refused when made.
    let long: Vec<DVector<f64>> = vec![DVector::zeros(12); 100];
    assert!(softgen_runtime::CommandPlan::new(0.0, 0.1, &long).unwrap_err().contains("at most 1024"));
    assert!(PlanFollower::<Swimmer, SWIMMER_N, SWIMMER_C>::new(p, goal, -1.0, 1.0, &[0.0]).is_err());
}
