//! Model-predictive control of the lateral-undulation snake on passive wheels, offline:
//! the planner's rollouts against the plant they stand for, the closed loop reaching goals
//! in every direction (turning, and reversing the wave for a goal behind), and the in-loop
//! controller's hand-over of plans, measurements and arrival.

use nalgebra::{SVector, Vector2};
use softgen::{MpcSettings, PlannerSettings, RunConfig};
use softgen_generated::SnakeLateralUndulation;
use softgen_runtime::{
    ActuatorCommand, GaitParameters, GaitPlanner, GoalSteering, Integrator, Model, Plan, PlanningSnapshot, RungeKutta4,
    SimulatedPlant, Simulation, State, SteeredGait, SteeringConfig, SteeringLink, SteeringPhase,
};

type R = SnakeLateralUndulation;
const N: usize = 8;
const C: usize = 13;

/// The run configuration the robot comes with (its spec's sibling `.run.toml`).
fn run_config() -> RunConfig {
    softgen::papers::modular_snake::mpc::run_config().unwrap()
}

/// The plant of the run configuration: the floor under the wheels, servos tracking set points.
fn simulation() -> Simulation<R, N, C> {
    softgen::papers::modular_snake::mpc::simulation().unwrap()
}

fn initial_gait() -> GaitParameters {
    let g = R::GAIT.unwrap();
    GaitParameters { amplitude: g.amplitude, temporal_frequency: g.temporal_frequency, offset: g.offset }
}

fn start() -> State<N> {
    State::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros())
}

fn com_xy(x: &State<N>) -> Vector2<f64> {
    let p = Default::default();
    let c = R::center_of_mass(&x.q, &p, &R::cache(&x.q, &p));
    Vector2::new(c.x, c.y)
}

/// Steps the plant one period with the gait's set points held (as the loop holds them).
fn plant_period(
    plant: &mut Simulation<R, N, C>,
    rk4: &mut RungeKutta4,
    gait: &mut SteeredGait,
    t: &mut f64,
    x: &mut State<N>,
    dt: f64,
) {
    let mut targets = SVector::<f64, N>::zeros();
    for j in 0..R::ACTUATED.len() {
        targets[j] = gait.joint_angle(j);
    }
    plant.set_joint_targets(&targets);
    let end = *t + dt;
    rk4.integrate_to(plant, t, x, end).unwrap();
    gait.advance(dt);
}

/// The run configuration's gait sampler.
fn gait_sampler() -> MpcSettings {
    match run_config().planner {
        Some(PlannerSettings::GaitSampling(settings)) => settings,
        other => panic!("the run configuration's planner is not the gait sampler: {other:?}"),
    }
}

#[test]
fn rollouts_predict_the_plant() {
    // The planner integrates with semi-implicit Euler at 2 ms; the plant with RK4 at 1 ms.
    // Over one horizon from mid-gait, the predicted centre of mass must land where the
    // plant's does, to a small fraction of the distance travelled.
    let settings = gait_sampler();
    let mut planner = GaitPlanner::new(simulation(), settings.planner(settings.goal), initial_gait()).unwrap();
    let mut plant = simulation();
    let mut rk4 = RungeKutta4::new(0.001).unwrap();
    let (mut t, mut x) = (0.0, start());
    let mut gait = SteeredGait::new(R::GAIT.unwrap().spatial_frequency, settings.lag, initial_gait());
    for _ in 0..5000 {
        plant_period(&mut plant, &mut rk4, &mut gait, &mut t, &mut x, 0.001);
    }
    for turn in [
        GaitParameters { offset: 0.4, ..initial_gait() },
        GaitParameters { temporal_frequency: -2.0, ..initial_gait() },
    ] {
        let snapshot = PlanningSnapshot { time: t, state: x, gait };
        let predicted = planner.predict(&snapshot, turn).unwrap();
        let (mut t1, mut x1, mut gait1) = (t, x, gait);
        gait1.target = turn;
        for _ in 0..1000 {
            plant_period(&mut plant, &mut rk4, &mut gait1, &mut t1, &mut x1, 0.001);
        }
        let travelled = (com_xy(&x1) - com_xy(&x)).norm();
        let error = (com_xy(&predicted) - com_xy(&x1)).norm();
        println!("{turn:?}: travelled {travelled:.4} m, prediction error {error:.2e} m");
        assert!(travelled > 0.01, "the plant moves: {travelled}");
        assert!(error < 0.05 * travelled, "prediction error {error} over {travelled}");
    }
}

#[test]
fn closed_loop_reaches_goals_in_every_direction() {
    // Offline and deterministic: the planner runs every 50 ms of simulated time on the
    // state of that instant, the plant runs at 1 kHz. Goals 1 m from the start: ahead of
    // the tail (the natural direction of travel), to the side, behind (the planner reverses
    // the wave) and the run configuration's, 45 degrees off.
    let settings = gait_sampler();
    let start_com = com_xy(&start());
    for (name, direction) in [("left", 90.0_f64), ("behind", 0.0), ("ahead", 180.0), ("configured", -45.0)] {
        let goal = start_com + Vector2::new(direction.to_radians().cos(), direction.to_radians().sin());
        let mut planner = GaitPlanner::new(simulation(), settings.planner(goal), initial_gait()).unwrap();
        let mut plant = simulation();
        let mut rk4 = RungeKutta4::new(0.001).unwrap();
        let (mut t, mut x) = (0.0, start());
        let mut gait = SteeredGait::new(R::GAIT.unwrap().spatial_frequency, settings.lag, initial_gait());
        let mut arrived = None;
        for k in 0..40_000 {
            if k % 50 == 0 {
                let plan = planner.plan(&PlanningSnapshot { time: t, state: x, gait });
                assert_eq!(plan.failed, 0);
                gait.target = plan.parameters;
                if (com_xy(&x) - goal).norm() < settings.arrival_radius {
                    arrived = Some(t);
                    break;
                }
            }
            plant_period(&mut plant, &mut rk4, &mut gait, &mut t, &mut x, 0.001);
        }
        println!("goal {name}: arrived at {arrived:?} s, final distance {:.3} m", (com_xy(&x) - goal).norm());
        let at = arrived
            .unwrap_or_else(|| panic!("goal {name} not reached in 40 s: {:.3} m away", (com_xy(&x) - goal).norm()));
        assert!(at < 35.0, "{name}: {at}");
    }
}

#[test]
fn steering_takes_plans_hands_over_measurements_and_finishes_on_arrival() {
    let link = SteeringLink::<N>::new();
    let goal = Vector2::new(0.3, 0.5);
    let config = SteeringConfig {
        goal,
        arrival_radius: 0.1,
        settle: 0.01,
        lag: 0.05,
        initial: initial_gait(),
        spatial_frequency: -1.0,
    };
    let mut steering = GoalSteering::<R, N, C>::new(Default::default(), &config, 0.001).unwrap();
    let mut commands = [ActuatorCommand::JointAngle(0.0); 5];
    // Nothing measured, nothing planned: the gait fades in on its own, from straight.
    assert_eq!(steering.command(&link, 0.0, &mut commands).unwrap(), SteeringPhase::Travelling);
    assert_eq!(commands[2], ActuatorCommand::JointAngle(0.0));
    assert!(link.snapshots.latest().is_none());
    // A plan is taken over once.
    let turn = GaitParameters { amplitude: 0.8, temporal_frequency: 2.0, offset: 0.3 };
    link.plans.post(Plan { parameters: turn, best_cost: 1.0, nominal_cost: 1.0, rollouts: 4, failed: 0, time: 0.0 });
    steering.command(&link, 0.001, &mut commands).unwrap();
    steering.command(&link, 0.002, &mut commands).unwrap();
    assert_eq!((steering.plans_applied, steering.gait().target), (1, turn));
    // A measurement at the time of the last command goes to the planner with that
    // command's gait.
    let sent = *steering.gait();
    let x = start();
    link.measured.post((0.002, x));
    steering.command(&link, 0.003, &mut commands).unwrap();
    let (_, snapshot) = link.snapshots.latest().unwrap();
    assert_eq!(snapshot.time, 0.002);
    assert_eq!(snapshot.state, x);
    assert!(snapshot.gait.phase < sent.phase, "the gait of t = 0.002, before it advanced");
    assert!((steering.distance - 0.5).abs() < 1e-12, "{}", steering.distance);
    // At the goal: the gait fades out, later plans are ignored, then the task finishes.
    let mut at_goal = x;
    at_goal.q[1] = 0.45;
    link.measured.post((0.003, at_goal));
    assert_eq!(steering.command(&link, 0.004, &mut commands).unwrap(), SteeringPhase::Arrived { at: 0.003 });
    assert_eq!(steering.gait().target.amplitude, 0.0);
    link.plans.post(Plan { parameters: turn, best_cost: 1.0, nominal_cost: 1.0, rollouts: 4, failed: 0, time: 0.003 });
    steering.command(&link, 0.005, &mut commands).unwrap();
    assert_eq!(steering.gait().target.amplitude, 0.0);
    let mut phase = SteeringPhase::Travelling;
    for k in 6..20 {
        phase = steering.command(&link, k as f64 * 0.001, &mut commands).unwrap();
    }
    assert_eq!(phase, SteeringPhase::Finished { at: 0.003 });
    // A measurement that is not finite is a controller error, not a command.
    let mut broken = x;
    broken.qd[0] = f64::NAN;
    link.measured.post((0.02, broken));
    let e = steering.command(&link, 0.021, &mut commands).unwrap_err();
    assert!(e.contains("not finite"), "{e}");
}

#[test]
fn simulated_plant_publishes_its_state_for_the_controller() {
    use softgen_runtime::{Device, DeviceValue};
    use std::sync::Arc;
    let link = Arc::new(SteeringLink::<N>::new());
    let mut plant = SimulatedPlant::new(simulation(), start(), 0.001).unwrap();
    let measured = Arc::clone(&link);
    plant.observe(Box::new(move |t, x| {
        measured.measured.try_post((t, *x));
    }));
    let values: Vec<DeviceValue> = (0..5).map(|j| DeviceValue::Board { channel: j, value: 0.2 }).collect();
    plant.write(0.0, &values).unwrap();
    plant.write(0.01, &values).unwrap();
    let (sequence, (t, x)) = link.measured.latest().unwrap();
    assert_eq!((sequence, t), (2, 0.01));
    assert_eq!(x, plant.state);
    assert!(x.q[3] > 0.0, "the servos pull towards 0.2 rad: {}", x.q[3]);
}
