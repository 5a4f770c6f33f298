//! The snake on wheels' box-DDP plans of its wave, offline, toward goals 1 m away in every
//! direction: the in-loop settings (the DDP run configuration's lag on the wave sent, the
//! goal's terms scaled by the distance left, each plan applied a few milliseconds after its
//! measurement as the loop's planner thread does) or the experiment's, so a change to the
//! plans can be judged on many goals rather than four. Prints, per direction, when the goal
//! was reached or how far it was left, then the count and the mean time.
//!
//! cargo run --release --example wave_goal_sweep -- [--step DEG] [--offset DEG] [--lag S]
//!     [--delay MS] [--unscaled]
//!
//! Defaults: every 10 degrees from 0, lag 0.1 s, plans applied 4 ms late, scaled.

use nalgebra::{DVector, SVector, Vector2, Vector3};
use softgen::papers::modular_snake::mpc::{goal_of, simulation, GoalsTask};
use softgen_generated::SnakeLateralUndulation as R;
use softgen_runtime::{
    CommandSchedule, ControlInput, DdpSettings, GoalWeights, Integrator, Model, RecedingHorizon, RungeKutta4, State,
};

const N: usize = 8;
const JOINTS: usize = 5;
/// The plant's step, the loop's period (s).
const PLANT_STEP: f64 = 0.001;

struct Options {
    step: f64,
    offset: f64,
    lag: f64,
    delay_ms: usize,
    scaled: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options { step: 10.0, offset: 0.0, lag: 0.1, delay_ms: 4, scaled: true };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--unscaled" {
            o.scaled = false;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number: f64 = value.parse().map_err(|_| format!("{flag}: `{value}` is not a number"))?;
        match flag.as_str() {
            "--step" if number > 0.0 && number <= 360.0 => o.step = number,
            "--offset" if (0.0..360.0).contains(&number) => o.offset = number,
            "--lag" if number >= 0.0 => o.lag = number,
            "--delay" if (0.0..20.0).contains(&number) && number.fract() == 0.0 => o.delay_ms = number as usize,
            "--step" | "--offset" | "--lag" | "--delay" => return Err(format!("{flag}: {value} is out of range")),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(o)
}

fn com_xy(x: &State<N>) -> Vector2<f64> {
    let p = Default::default();
    let c = R::center_of_mass(&x.q, &p, &R::cache(&x.q, &p));
    Vector2::new(c.x, c.y)
}

/// One goal: (reached at, distance left at the end).
fn run(task: &GoalsTask, o: &Options, direction: f64) -> Result<(Option<f64>, f64), String> {
    let goal = goal_of(direction);
    let gait = R::GAIT.ok_or("the snake has no gait")?;
    let schedule = CommandSchedule::Wave { joints: JOINTS, spatial_frequency: gait.spatial_frequency, lag: o.lag };
    let weights = GoalWeights {
        goal: Vector3::new(goal.x, goal.y, 0.0),
        distance_scaled: o.scaled.then_some(task.sampler.arrival_radius),
        ..task.weights.clone()
    };
    let ddp = DdpSettings { line_search_steps: 4, ..DdpSettings::default() };
    let inputs = [ControlInput::JointTargets];
    let mut planner = RecedingHorizon::scheduled(simulation()?, &inputs, schedule, task.horizon.clone(), weights, ddp)?;
    planner.set_knot_integrator(task.knot_integrator);
    let mut plant = simulation()?;
    let mut rk4 = RungeKutta4::new(PLANT_STEP).map_err(|e| e.to_string())?;
    let mut x = State::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut t = 0.0;
    let resting = [0.0, gait.temporal_frequency, 0.0];
    let mut schedule_state = if o.lag > 0.0 { vec![0.0, resting[0], resting[1], resting[2]] } else { vec![0.0] };
    let mut decisions = resting.to_vec();
    let mut set_points = [0.0; JOINTS];
    let mut targets = SVector::<f64, N>::zeros();
    let per_plan = (task.horizon.period / PLANT_STEP).round() as usize;
    let interval = task.horizon.interval;
    // The plan in force until the new one arrives `delay_ms` periods after its measurement.
    let mut previous: Option<(f64, Vec<DVector<f64>>)> = None;
    let mut arrives = 0;
    for k in 0..(task.duration / PLANT_STEP).round() as usize {
        if k % per_plan == 0 {
            if (com_xy(&x) - goal).norm() < task.sampler.arrival_radius {
                return Ok((Some(t), (com_xy(&x) - goal).norm()));
            }
            previous = planner.kept_plan().map(|(start, knots)| (start, knots.to_vec()));
            planner.plan_from(t, &x.q, &x.qd, &schedule_state, &decisions);
            arrives = k + o.delay_ms;
        }
        let command = match (&previous, k < arrives) {
            (Some((start, knots)), true) => {
                knots[(((t - start) / interval).floor().max(0.0) as usize).min(knots.len() - 1)].clone()
            }
            (None, true) => DVector::from_column_slice(&resting),
            (_, false) => planner.command_at(t).clone(),
        };
        decisions.copy_from_slice(command.as_slice());
        schedule.commands_into(&schedule_state, &decisions, &mut set_points);
        schedule.advance(&mut schedule_state, &decisions, PLANT_STEP);
        targets.fixed_rows_mut::<JOINTS>(0).copy_from_slice(&set_points);
        plant.set_joint_targets(&targets);
        let end = t + PLANT_STEP;
        rk4.integrate_to(&mut plant, &mut t, &mut x, end).map_err(|e| format!("the plant failed at {t:.3} s: {e}"))?;
    }
    Ok((None, (com_xy(&x) - goal).norm()))
}

fn main() {
    let result = options().and_then(|o| {
        let task = GoalsTask::new()?;
        let (mut reached, mut goals, mut total, mut latest) = (0, 0, 0.0, 0.0f64);
        let mut direction = o.offset;
        while direction < 360.0 {
            let (at, left) = run(&task, &o, direction)?;
            goals += 1;
            match at {
                Some(at) => {
                    reached += 1;
                    total += at;
                    latest = latest.max(at);
                    println!("{direction:6.1} deg  reached at {at:6.2} s");
                }
                None => println!("{direction:6.1} deg  not in {} s ({left:.3} m left)", task.duration),
            }
            direction += o.step;
        }
        println!("reached {reached} of {goals}, mean {:.2} s, latest {latest:.2} s", total / f64::from(reached.max(1)));
        Ok(())
    });
    if let Err(e) = result {
        eprintln!("wave_goal_sweep: {e}");
        std::process::exit(2);
    }
}
