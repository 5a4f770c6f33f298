//! Criterion benches of the optimal-control layer on the MPC tasks (`mpc-004-waypoint`,
//! `mpc-000-roll-aside`): for each, the simulated
//! system's exact Jacobian (what a knot's Newton matrix and derivative cost), one knot (an
//! implicit step with its Jacobians) and one plan (a real-time iteration over the horizon,
//! warm, from a state of the task's run); the planner rate a plan's time allows is 1 / plan.
//! For the valve planner of `mpc-001-goal`: one rollout and one plan (MPPI), from a state of
//! its run. For the stride planner of `mpc-002-goal`: one stride (a gait cycle of the
//! planner's model) and one plan (the stride in force to the decision 20 ms on, mid-cycle,
//! then a whole cycle of each candidate). For `mpc-003-goals`, one plan of each planner from the same state:
//! box-DDP's real-time iteration and MPPI's 32 rollouts.
//!
//! Run with `cargo bench --bench optimal_control`; README.md lists the figures.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nalgebra::{DVector, SMatrix};
use softgen::papers::underwater_snake::mpc::{run_waypoint, WaypointTask};
use softgen::papers::underwater_snake::{neutral_params, swimming_simulation};
use softgen_generated::UnderwaterSnake;
use softgen_runtime::{ControlInput, DdpSettings, KnotDynamics, RecedingHorizon, RobotKnots};

fn underwater_waypoint(c: &mut Criterion) {
    const N: usize = softgen_generated::underwater_snake::DOF;
    let p = neutral_params();
    let task = WaypointTask::new(&p).unwrap();
    let inputs = [ControlInput::Thrusts, ControlInput::MusclePressures];
    // The state 5 s into the task, cruising toward the waypoint.
    let run = run_waypoint(&WaypointTask { duration: 5.0, ..task.clone() }).unwrap();
    let last = run.samples.last().unwrap();
    let (q, qd) = (last.state.q, last.state.qd);
    let time_of_state = last.t;
    let mut simulation = swimming_simulation(&p, task.horizon.period).unwrap();
    simulation.set_thrusts(&last.commands[..6]).unwrap();
    simulation.set_muscle_pressures(&last.commands[6..]).unwrap();
    let (mut by_position, mut by_velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    c.bench_function("mpc-004-waypoint: system exact Jacobian", |b| {
        b.iter(|| simulation.exact_jacobian(0.0, black_box(&q), black_box(&qd), &mut by_position, &mut by_velocity))
    });
    let mut knots =
        RobotKnots::new(swimming_simulation(&p, task.horizon.period).unwrap(), &inputs, task.horizon.interval, 1)
            .unwrap();
    let x = RobotKnots::<UnderwaterSnake, N, 2>::state_vector(&q, &qd, &last.commands);
    let u = DVector::from_column_slice(&last.commands);
    let (n, m) = (knots.state_size(), knots.control_size());
    let (mut next, mut a, mut b_matrix) =
        (DVector::zeros(n), nalgebra::DMatrix::zeros(n, n), nalgebra::DMatrix::zeros(n, m));
    c.bench_function("mpc-004-waypoint: one knot (implicit step and its Jacobians)", |b| {
        b.iter(|| knots.step(0, black_box(&x), black_box(&u), &mut next, Some((&mut a, &mut b_matrix))).unwrap())
    });
    let weights = softgen_runtime::GoalWeights { goal: run.goal, ..task.weights.clone() };
    let mut planner = RecedingHorizon::new(
        swimming_simulation(&p, task.horizon.period).unwrap(),
        &inputs,
        task.horizon.clone(),
        weights,
        DdpSettings { line_search_steps: 4, ..DdpSettings::default() },
    )
    .unwrap();
    // Warm: a few plans first, as in the run.
    let mut current = last.commands.clone();
    let mut time = time_of_state;
    for _ in 0..20 {
        planner.plan(time, &q, &qd, &current);
        current.copy_from_slice(planner.command_at(time).as_slice());
        time += task.horizon.period;
    }
    c.bench_function("mpc-004-waypoint: one plan (real-time iteration, 4 knots)", |b| {
        b.iter(|| {
            time += task.horizon.period;
            let outcome = planner.plan(time, black_box(&q), black_box(&qd), &current);
            assert!(outcome.failure.is_none() || outcome.failure.as_deref().is_some_and(|f| f.contains("period")));
        })
    });
}

fn soft_snake_roll_aside(c: &mut Criterion) {
    use softgen::papers::soft_snake::mpc::{
        planning_simulation, roll_aside_knots, roll_aside_planner, rolling_schedule, run_roll_aside, RollAsideTask,
    };
    const N: usize = softgen_generated::soft_snake::DOF;
    const C: usize = softgen_generated::soft_snake::CONTACTS;
    let task = RollAsideTask::new();
    // The state 3 s into the task, rolling toward the goal on its skin.
    let run = run_roll_aside(&RollAsideTask { duration: 3.0, ..task.clone() }).unwrap();
    let last = run.samples.last().unwrap();
    let (q, qd) = (last.state.q, last.state.qd);
    let schedule = rolling_schedule(&task).unwrap();
    let decisions = [last.bend, last.plane_rate];
    let mut forces = nalgebra::SVector::<f64, N>::zeros();
    schedule.commands_into(&[last.phase], &decisions, forces.as_mut_slice());
    let mut simulation = planning_simulation(&task).unwrap();
    simulation.set_actuator_forces(&forces);
    let (mut by_position, mut by_velocity) = (SMatrix::<f64, N, N>::zeros(), SMatrix::<f64, N, N>::zeros());
    c.bench_function("mpc-000-roll-aside: system exact Jacobian", |b| {
        b.iter(|| simulation.exact_jacobian(0.0, black_box(&q), black_box(&qd), &mut by_position, &mut by_velocity))
    });
    let mut knots = roll_aside_knots(&task).unwrap();
    let x =
        RobotKnots::<softgen_generated::SoftSnake, N, C>::scheduled_state_vector(&q, &qd, &[last.phase], &decisions);
    let u = DVector::from_column_slice(&decisions);
    let (n, m) = (knots.state_size(), knots.control_size());
    let (mut next, mut a, mut b_matrix) =
        (DVector::zeros(n), nalgebra::DMatrix::zeros(n, n), nalgebra::DMatrix::zeros(n, m));
    c.bench_function("mpc-000-roll-aside: one knot (implicit step and its Jacobians)", |b| {
        b.iter(|| knots.step(0, black_box(&x), black_box(&u), &mut next, Some((&mut a, &mut b_matrix))).unwrap())
    });
    let mut planner = roll_aside_planner(&task, run.goal).unwrap();
    // Warm: a few plans first, as in the run.
    let mut current = decisions.to_vec();
    let mut time = last.t;
    for _ in 0..10 {
        planner.plan_from(time, &q, &qd, &[last.phase], &current);
        current.copy_from_slice(planner.command_at(time).as_slice());
        time += task.horizon.period;
    }
    c.bench_function("mpc-000-roll-aside: one plan (real-time iteration, 8 knots)", |b| {
        b.iter(|| {
            time += task.horizon.period;
            let outcome = planner.plan_from(time, black_box(&q), black_box(&qd), &[last.phase], &current);
            assert!(outcome.failure.is_none() || outcome.failure.as_deref().is_some_and(|f| f.contains("period")));
        })
    });
}

fn wpi_goal(c: &mut Criterion) {
    use softgen::papers::wpi_snake::mpc::{run_goal, simulation, GoalTask};
    use softgen_runtime::{ValvePlanner, ValveSnapshot};
    let task = GoalTask::new();
    // The state 2 s into the task, heading for the goal.
    let run = run_goal(&GoalTask { duration: 2.0, ..task.clone() }).unwrap();
    let last = run.samples.last().unwrap();
    let snapshot = ValveSnapshot { time: last.t, state: last.state, wave: last.wave };
    let config = softgen_runtime::ValvePlannerConfig { goal: run.goal, ..task.planner.clone() };
    let mut planner = ValvePlanner::new(simulation(config.step).unwrap(), config, last.decisions).unwrap();
    c.bench_function("mpc-001-goal: one rollout (1 s of the complex model through the valves' switches)", |b| {
        b.iter(|| planner.rollout(black_box(&snapshot), last.decisions).unwrap())
    });
    c.bench_function("mpc-001-goal: one plan (MPPI, 16 rollouts)", |b| b.iter(|| planner.plan(black_box(&snapshot))));
}

fn pinniped_goal(c: &mut Criterion) {
    use softgen::papers::pinniped::model::Crawler;
    use softgen::papers::pinniped::mpc::{GoalTask, Stride, StridePlanner};
    use softgen::papers::pinniped::Gait;
    use softgen_generated::pinniped::Params;
    let task = GoalTask::new();
    let goal = nalgebra::Vector2::new(0.25, 0.433);
    let mut planner = StridePlanner::new(Params::default(), task.planner.clone(), task.settle, 3.0, goal).unwrap();
    // The task's state a lead before a decision mid-way through its sixth cycle: turning in
    // place since the first.
    let turning = Stride { gait: Some(Gait::InPlace { counterclockwise: false }), radius: 0.10 };
    let mut plant = Crawler::new(Params::default(), task.plant_step, 1e-3, 3.0).unwrap();
    plant.advance_to(1.0).unwrap();
    plant.play(turning, 1.0).unwrap();
    let decision = 6.5;
    plant.advance_to(decision - task.lead).unwrap();
    let (t, x, reached) = (plant.t, plant.x, plant.drive.pressures);
    let backward = Stride { gait: Some(Gait::Backward), radius: 0.10 };
    let step = task.planner.step;
    let mut model = Crawler::new(Params::default(), step, step.max(1e-3), 3.0).unwrap();
    c.bench_function(
        &format!(
            "mpc-002-goal: one stride (a 1 s cycle of backward crawling, semi-implicit Euler at {} ms)",
            step * 1e3
        ),
        |b| {
            b.iter(|| {
                model.start_from(t, black_box(&x), &reached);
                model.play(backward, 1.0).unwrap();
                model.advance_to(t + 1.0).unwrap();
            })
        },
    );
    let strides = task.planner.strides.len();
    c.bench_function(
        &format!("mpc-002-goal: one plan ({} s ahead, then a cycle of each of {strides} strides)", task.lead),
        |b| b.iter(|| planner.plan(t, black_box(&x), &reached, turning, 6.0, decision)),
    );
}

fn rigid_snake_goals(c: &mut Criterion) {
    use softgen::papers::modular_snake::mpc::{ddp_planner, goal_of, run_goal, simulation, GoalsTask, Planner};
    use softgen_generated::SnakeLateralUndulation;
    use softgen_runtime::{GaitParameters, GaitPlanner, Model, PlanningSnapshot, SteeredGait};
    let task = GoalsTask::new().unwrap();
    // The state 3 s into box-DDP's run to the configured goal (45 degrees off), turning
    // toward it; both planners plan from it.
    let goal = goal_of(-45.0);
    let run = run_goal(&GoalsTask { duration: 3.0, ..task.clone() }, Planner::Ddp, "configured", -45.0).unwrap();
    let softgen::papers::modular_snake::mpc::RunEnd { t, state: x, phase, decisions } = run.end;
    let mut planner = ddp_planner(&task, goal).unwrap();
    let mut current = decisions.to_vec();
    let mut time = t;
    // Warm: a few plans first, as in the run.
    for _ in 0..10 {
        planner.plan_from(time, &x.q, &x.qd, &[phase], &current);
        current.copy_from_slice(planner.command_at(time).as_slice());
        time += task.horizon.period;
    }
    let name = format!(
        "mpc-003-goals: one plan, box-DDP (real-time iteration, {} knots of {} steps)",
        task.horizon.knots, task.horizon.substeps
    );
    c.bench_function(&name, |b| {
        b.iter(|| {
            time += task.horizon.period;
            let outcome = planner.plan_from(time, black_box(&x.q), black_box(&x.qd), &[phase], &current);
            assert!(outcome.failure.is_none() || outcome.failure.as_deref().is_some_and(|f| f.contains("period")));
        })
    });
    let parameters = GaitParameters { amplitude: decisions[0], temporal_frequency: decisions[1], offset: decisions[2] };
    use softgen_generated::snake_lateral_undulation::{CONTACTS, DOF};
    let gait = <SnakeLateralUndulation as Model<DOF, CONTACTS>>::GAIT.unwrap();
    let snapshot = PlanningSnapshot {
        time: t,
        state: x,
        gait: SteeredGait::new(gait.spatial_frequency, task.sampler.lag, parameters),
    };
    let mut sampler = GaitPlanner::new(simulation().unwrap(), task.sampler.planner(goal), parameters).unwrap();
    c.bench_function("mpc-003-goals: one plan, MPPI (32 rollouts of 1 s)", |b| {
        b.iter(|| sampler.plan(black_box(&snapshot)))
    });
}

criterion_group!(benches, underwater_waypoint, soft_snake_roll_aside, wpi_goal, pinniped_goal, rigid_snake_goals);
criterion_main!(benches);
