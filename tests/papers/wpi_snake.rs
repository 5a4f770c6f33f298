//! The valve-driven soft snake of 001_6780a70913e94322 (WPI SRS): both models against the
//! seed notes' checks and the paper's statements. T6: consecutive wheels one chord (eq 3)
//! apart; the driven curvatures follow eq 15 exactly; the joint constraint forces balance.
//! T7: straight at phi = 0, mirrored by -phi. T8: the wheels' anisotropy propels the
//! snake. T10: the two models agree. T11: the turning radius depends on pressure.

use softgen::papers::wpi_snake::{run_snake, valve_wave, SnakeModel, SnakeRun};
use softgen_generated::wpi_snake::Params;
use softgen_generated::WpiSnake;
use softgen_runtime::{ActuatorResponse, Model, ResponseState};

fn chord(l: f64, kappa: f64) -> f64 {
    let a = kappa * l;
    if a.abs() < 1e-9 {
        l
    } else {
        2.0 * l * (0.5 * a).sin() / a
    }
}

#[test]
fn the_spec_holds_the_papers_values() {
    // T1 and T5.
    let p = Params::default();
    assert_eq!((p.link_mass, p.channel_length), (0.03, 0.037));
    let env = WpiSnake::ENVIRONMENT;
    assert_eq!((env.friction_along, env.friction_across), (0.043, 0.57));
    let wave = WpiSnake::VALVE_GAIT.unwrap();
    assert!((wave.delay - std::f64::consts::TAU / 4.0).abs() < 1e-15);
    assert_eq!(WpiSnake::VALVES.len(), 4);
    let end = p.link_mass * p.channel_length.powi(2) / 3.0;
    assert!((end - 1.369e-5).abs() < 1e-8);
    match WpiSnake::valve_response(0, &p).unwrap() {
        ActuatorResponse::SecondOrder { time_constants, gain } => {
            assert_eq!(time_constants, [p.time_constant_1, p.time_constant_2]);
            assert!((gain - p.curvature_per_kpa * (p.supply_pressure - p.threshold_pressure)).abs() < 1e-12);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn complex_model_keeps_chords_and_follows_eq_15() {
    let run = SnakeRun { duration: 6.0, ..SnakeRun::new(SnakeModel::Complex, 1.5, 50.0, 0.0) };
    let p = run.params.clone();
    let wave = valve_wave(&run).unwrap();
    let mut p_at = p.clone();
    p_at.supply_pressure = 50.0;
    let response = WpiSnake::valve_response(0, &p_at).unwrap();
    // Eq 15 integrated independently, switching each valve at the wave's crossings solved
    // in closed form: sin(omega t + beta_i) + phi = 0 at omega t + beta_i = asin(-phi) or
    // pi - asin(-phi), modulo 2 pi.
    let crossings = |i: usize, from: f64, to: f64| {
        let (omega, beta) = (wave.temporal_frequency, wave.delay * (i + 1) as f64);
        let mut times = Vec::new();
        for root in [(-wave.offset).asin(), std::f64::consts::PI - (-wave.offset).asin()] {
            let first = ((omega * from + beta - root) / std::f64::consts::TAU).floor() as i64;
            for n in first..first + 3 {
                let t = (root + std::f64::consts::TAU * n as f64 - beta) / omega;
                if t > from && t <= to {
                    times.push(t);
                }
            }
        }
        times.sort_by(f64::total_cmp);
        times
    };
    let mut reference = [ResponseState::default(); 4];
    // Pair 2 starts on a crossing (sin(pi) rounds to +1e-16): its state is the one that
    // follows t = 0.
    let mut command: [f64; 4] = std::array::from_fn(|i| wave.state(1e-12, i));
    let mut last_t = 0.0;
    let mut worst_chord: f64 = 0.0;
    let mut worst_curvature: f64 = 0.0;
    let outcome = run_snake(&run, 1, |s| {
        for i in 0..4 {
            let mut at = last_t;
            for switch in crossings(i, last_t, s.t) {
                reference[i] = response.evolve(&reference[i], command[i], switch - at);
                command[i] = -command[i];
                at = switch;
            }
            reference[i] = response.evolve(&reference[i], command[i], s.t - at);
            worst_curvature = worst_curvature.max((reference[i].value - s.curvatures[i]).abs());
            let distance = (s.wheels[i + 1] - s.wheels[i]).norm();
            worst_chord = worst_chord.max((distance - chord(p.channel_length, s.curvatures[i])).abs());
        }
        last_t = s.t;
    })
    .unwrap();
    println!("chord error {worst_chord:e} m, curvature error {worst_curvature:e} 1/m");
    assert!(worst_chord < 1e-9, "T6: wheels one chord apart, worst {worst_chord:e} m");
    assert!(worst_curvature < 1e-9, "curvatures follow eq 15, worst {worst_curvature:e}");
    assert!(outcome.speed > 0.05, "{}", outcome.speed);
}

#[test]
fn joint_constraint_forces_obey_newton_on_the_tail_link() {
    // h_1 is the force links 2..5 receive through segment 1, so the whole robot's momentum
    // balance leaves m a_1 = f_1 - h_1 for the tail link, up to the segments' own 1 g each
    // (their inertial forces are in neither side).
    // Samples 0.5 ms apart, for central differences of the wheels' positions.
    let run = SnakeRun { duration: 3.0, step: 5e-4, ..SnakeRun::new(SnakeModel::Complex, 2.0, 54.0, 0.4) };
    let mut samples = Vec::new();
    run_snake(&run, 1, |s| samples.push(*s)).unwrap();
    let p = Params::default();
    let dt = run.step;
    let (mut worst, mut scale, mut acceleration): (f64, f64, f64) = (0.0, 0.0, 0.0);
    let wave = valve_wave(&run).unwrap();
    for w in samples.windows(3).skip(200).step_by(7) {
        // Central differences need a smooth acceleration: skip a valve switching within the
        // window (the curvatures' acceleration jumps there).
        if (0..4).any(|i| {
            wave.state(w[0].t, i) != wave.state(w[1].t, i) || wave.state(w[1].t, i) != wave.state(w[2].t + 0.5 * dt, i)
        }) {
            continue;
        }
        // The tail wheel's acceleration by central differences of its positions.
        let a = (w[2].wheels[0] - 2.0 * w[1].wheels[0] + w[0].wheels[0]) / (dt * dt);
        let residual = a * p.link_mass - w[1].wheel_forces[0] + w[1].joint_forces[0];
        worst = worst.max(residual.norm());
        scale = scale.max(w[1].joint_forces[0].norm());
        acceleration = acceleration.max(a.norm());
    }
    let segments = 4.0 * p.segment_mass * acceleration;
    println!(
        "largest |h_1| {scale:.4} N, tail balance residual {worst:.2e} N, segments' inertia bound {segments:.2e} N"
    );
    assert!(scale > 0.05, "the joint forces are not trivially zero: {scale} N");
    assert!(worst < segments.max(1e-4), "the tail link's balance is off by {worst} N (segments bound {segments} N)");
}

#[test]
fn straight_at_zero_offset_and_mirrored_by_its_negative() {
    for model in [SnakeModel::Complex, SnakeModel::Simplified] {
        let straight = run_snake(&SnakeRun::new(model, 1.5, 48.0, 0.0), 1000, |_| {}).unwrap();
        assert!(straight.circle.map_or(true, |c| c.0 > 5.0), "T7 {model:?}: {:?}", straight.circle);
        let left = run_snake(&SnakeRun::new(model, 1.5, 48.0, 0.4), 1000, |_| {}).unwrap();
        let right = run_snake(&SnakeRun::new(model, 1.5, 48.0, -0.4), 1000, |_| {}).unwrap();
        let (rl, rr) = (left.circle.unwrap().0, right.circle.unwrap().0);
        assert!((rl - rr).abs() < 0.02 * rl, "{model:?}: radii {rl} and {rr}");
        assert!(
            (left.speed - right.speed).abs() < 0.02 * left.speed,
            "{model:?}: speeds {} and {}",
            left.speed,
            right.speed
        );
        // Opposite turns: the headings change in opposite directions.
        let turn =
            |o: &softgen::papers::wpi_snake::SnakeOutcome| o.samples.last().unwrap().heading - o.samples[0].heading;
        assert!(turn(&left) * turn(&right) < 0.0, "{model:?}: {} and {}", turn(&left), turn(&right));
    }
}

#[test]
fn the_wheels_anisotropy_propels_the_snake_towards_its_head() {
    // T8 with the complex model: forward is +x, where the head points at the start (the
    // wave runs head to tail); with isotropic wheels the snake hardly moves.
    let advance =
        |o: &softgen::papers::wpi_snake::SnakeOutcome| (o.cycle_centres.last().unwrap() - o.cycle_centres[4]).x;
    let paper = run_snake(&SnakeRun::new(SnakeModel::Complex, 1.5, 48.0, 0.0), 1000, |_| {}).unwrap();
    let mut isotropic = SnakeRun::new(SnakeModel::Complex, 1.5, 48.0, 0.0);
    isotropic.friction.across = isotropic.friction.along;
    let isotropic = run_snake(&isotropic, 1000, |_| {}).unwrap();
    println!("advance over 7 s: {} m with the paper's wheels, {} m isotropic", advance(&paper), advance(&isotropic));
    assert!(advance(&paper) > 0.3, "{}", advance(&paper));
    assert!(paper.cycle_centres.iter().all(|c| c.y.abs() < 0.05 * advance(&paper)));
    assert!(advance(&isotropic).abs() < 0.1 * advance(&paper), "{}", advance(&isotropic));
}

#[test]
fn both_models_agree_and_radius_falls_with_pressure() {
    for offset in [0.0, 0.4] {
        for (f, p) in [(1.0, 41.0), (2.0, 55.0)] {
            let complex = run_snake(&SnakeRun::new(SnakeModel::Complex, f, p, offset), 1000, |_| {}).unwrap();
            let simplified = run_snake(&SnakeRun::new(SnakeModel::Simplified, f, p, offset), 1000, |_| {}).unwrap();
            let gap = (complex.speed - simplified.speed).abs() / complex.speed;
            assert!(gap < 0.25, "T10 at {f} Hz, {p} kPa, phi {offset}: {} vs {}", complex.speed, simplified.speed);
        }
    }
    for model in [SnakeModel::Complex, SnakeModel::Simplified] {
        let radius = |p: f64| run_snake(&SnakeRun::new(model, 1.5, p, 0.4), 1000, |_| {}).unwrap().circle.unwrap().0;
        let (low, high) = (radius(41.0), radius(55.0));
        assert!(high < 0.8 * low, "T11 {model:?}: radius {low} m at 41 kPa, {high} m at 55 kPa");
    }
}

#[test]
fn bad_runs_are_refused_with_their_reason() {
    let mut run = SnakeRun::new(SnakeModel::Complex, 1.5, 48.0, 0.0);
    run.duration = 1.0;
    let e = run_snake(&run, 1, |_| {}).unwrap_err();
    assert!(e.contains("cycles"), "{e}");
    let e = run_snake(&SnakeRun::new(SnakeModel::Simplified, f64::NAN, 48.0, 0.0), 1, |_| {}).unwrap_err();
    assert!(e.contains("frequency"), "{e}");
    let mut run = SnakeRun::new(SnakeModel::Complex, 1.5, 48.0, 0.0);
    run.params.time_constant_1 = -1.0;
    let e = run_snake(&run, 1, |_| {}).unwrap_err();
    assert!(e.contains("time_constant"), "{e}");
}

#[test]
fn no_fit_of_the_curvature_gain_and_time_constants_reaches_the_papers_peak() {
    // The paper's "around 220 mm/s" depends on tau1, tau2 and C0(P), none of which it
    // prints. Fitted together over k up to 2.5 (7.5 with the time constants tripled) and time
    // constants from a quarter to three times the spec's, the peak flattens out at 201 mm/s:
    // a difference of the model, not of what the paper leaves out.
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("001-calibration").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "001-calibration");
    let softgen::Verdict::Differs(why) = &report.verdict else { panic!("001-calibration: {}", report.verdict_line()) };
    assert!(why.contains("the peak saturates at 201 mm/s (9 % short), the spec's values give 192"), "{why}");
}

#[test]
fn the_complex_model_turns_tighter_whatever_the_unprinted_time_constants_and_segment_mass() {
    // 001-turning-map's evidence that its reversal of the paper's ranking of the two
    // models' radii (section 4.3: the complex model's the larger) is the model's, not a
    // parameter's the paper leaves out: at phi = 0.4 the complex model turns tighter at
    // every point of the nominal grid, and still with eq 15's time constants halved or
    // doubled or the segments' mass five times larger.
    for (what, time_scale, mass_scale) in
        [("nominal", 1.0, 1.0), ("tau x 0.5", 0.5, 1.0), ("tau x 2", 2.0, 1.0), ("mass x 5", 1.0, 5.0)]
    {
        for (f, p) in [(1.0, 41.0), (2.0, 55.0)] {
            let radius = |model| {
                let mut run = SnakeRun::new(model, f, p, 0.4);
                run.params.time_constant_1 *= time_scale;
                run.params.time_constant_2 *= time_scale;
                run.params.segment_mass *= mass_scale;
                run_snake(&run, 1000, |_| {}).unwrap().circle.unwrap().0
            };
            let (complex, simplified) = (radius(SnakeModel::Complex), radius(SnakeModel::Simplified));
            assert!(complex < simplified, "{what} at {f} Hz, {p} kPa: complex {complex} m, simplified {simplified} m");
        }
    }
}

/// The valve planner's model, held at one setting, is the paper's complex-model run: the
/// supply pressure through the valves' gain ratio (built at the spec's pressure) against the
/// spec's parameter set to it, the steered wave against eq 13, the same steps and switches.
#[test]
fn a_steered_valve_wave_held_constant_is_the_papers_complex_run() {
    use nalgebra::SVector;
    use softgen::papers::wpi_snake::mpc::{simulation, PRESSURE_PARAMETER};
    use softgen_runtime::{State, SteeredValveWave, ValveDecisions, ValveDriven};
    let (frequency, pressure, offset) = (1.5, 44.0, 0.4);
    let mut run = SnakeRun::new(SnakeModel::Complex, frequency, pressure, offset);
    run.duration = 4.0;
    let paper = run_snake(&run, 1, |_| {}).unwrap();
    // The paper's run's step: the longest up to 3.5 ms that divides the valve period.
    let per_cycle = (1.0 / frequency / run.step * (1.0 - 1e-12)).ceil();
    let step = 1.0 / frequency / per_cycle;
    let decisions = ValveDecisions { pressure, frequency, offset };
    assert_ne!(Params::default().supply_pressure, pressure, "the gain ratio must be exercised");
    let mut x = State::new(SVector::from_iterator(WpiSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let system = ValveDriven::prescribed(simulation(step).unwrap(), 0.0, &x).unwrap();
    let delay = WpiSnake::VALVE_GAIT.unwrap().delay;
    let mut steered =
        ValveDriven::new(system, SteeredValveWave::new(delay, 0.0, decisions), PRESSURE_PARAMETER, step).unwrap();
    steered.apply(0.0, decisions, &mut x).unwrap();
    let mut t = 0.0;
    let mut largest: f64 = 0.0;
    for (k, sample) in paper.samples.iter().enumerate().skip(1) {
        steered.advance(&mut t, &mut x, (k as f64 * step).min(run.duration)).unwrap();
        let com = steered.ground_center_of_mass(&steered.exact_state(t, &x));
        assert!((t - sample.t).abs() < 1e-12, "{t} against {}", sample.t);
        largest = largest.max((com - sample.center_of_mass).norm());
    }
    println!("largest centre-of-mass difference over {} s: {largest:e} m", run.duration);
    assert!(largest < 1e-10, "{largest}");
}

/// The MPC task (`mpc-001-goal`): the plans bring the snake to the goal 1 m away at 45
/// degrees and keep it there, every plan within the decisions' bounds and none failing
/// (the plans' timing is the experiment's and the bench's to report, not a test's).
#[test]
fn mpc_brings_the_wpi_snake_to_the_goal_at_45_degrees_within_its_bounds() {
    use softgen::papers::wpi_snake::mpc::{run_goal, GoalTask};
    let task = GoalTask::new();
    let run = run_goal(&task).unwrap();
    let at = run.reached_at.unwrap_or_else(|| panic!("not reached: {:.3} m from the goal", run.final_distance));
    println!("reached at {at:.2} s, {}", run.statistics.line(task.period));
    assert!(run.final_distance <= task.arrival_radius);
    assert!(((run.goal - run.start).norm() - 1.0).abs() < 1e-12);
    assert!(((run.goal - run.start).y - (run.goal - run.start).x).abs() < 1e-12, "45 degrees");
    let (min, max) = (task.planner.min.to_array(), task.planner.max.to_array());
    for s in &run.samples {
        let d = s.decisions.to_array();
        assert!((0..3).all(|i| (min[i]..=max[i]).contains(&d[i])), "t = {}: {:?}", s.t, s.decisions);
        assert_eq!(s.failed, 0, "t = {}", s.t);
    }
    assert_eq!(run.statistics.failures, 0);
    // The snake slows to hold: the last plans lower the supply pressure from the start's.
    let last = run.samples.last().unwrap();
    assert!(last.decisions.pressure < task.initial.pressure, "{:?}", last.decisions);
}

/// A plan whose every rollout fails (here a state gone non-finite) keeps the last plan's
/// decisions and says so, and bad planner settings are refused by name.
#[test]
fn a_valve_plan_that_fails_keeps_the_last_decisions() {
    use nalgebra::SVector;
    use softgen::papers::wpi_snake::mpc::{simulation, GoalTask};
    use softgen_runtime::{State, SteeredValveWave, ValvePlanner, ValvePlannerConfig, ValveSnapshot};
    let task = GoalTask::new();
    let config = ValvePlannerConfig { goal: nalgebra::Vector2::new(1.0, 0.5), ..task.planner.clone() };
    let mut planner = ValvePlanner::new(simulation(config.step).unwrap(), config.clone(), task.initial).unwrap();
    let mut state = State::new(SVector::from_iterator(WpiSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    state.qd[0] = f64::NAN;
    let wave = SteeredValveWave::new(WpiSnake::VALVE_GAIT.unwrap().delay, 0.0, task.initial);
    let plan = planner.plan(&ValveSnapshot { time: 0.0, state, wave });
    assert_eq!(plan.failed, plan.rollouts);
    assert_eq!(plan.decisions, task.initial);
    assert!(!plan.best_cost.is_finite());
    let wrong = ValvePlannerConfig { pressure_parameter: "supply".into(), ..config.clone() };
    let e = ValvePlanner::new(simulation(config.step).unwrap(), wrong, task.initial).err().unwrap();
    assert!(e.contains("supply pressure parameter"), "{e}");
    let unmoved = ValvePlannerConfig { pressure_parameter: "link_mass".into(), ..config };
    let e = ValvePlanner::new(simulation(0.005).unwrap(), unmoved, task.initial).err().unwrap();
    assert!(e.contains("does not change"), "{e}");
}

/// The loop's simulated plant reads a valve robot as its pneumatics would: a line high or
/// low is the pair's state +1 or -1, the regulator's volts the supply, whose spec gain sets
/// the curvature's steady state; a supply at or below the threshold bends nothing (the safe
/// state's vented supply lets the segments relax); a value on an unwired output is refused
/// by name.
#[test]
fn the_valve_plant_reads_lines_and_supply_into_the_specs_responses() {
    use nalgebra::SVector;
    use softgen::papers::wpi_snake::mpc::{simulation, PRESSURE_PARAMETER};
    use softgen_runtime::{Device, DeviceValue, PressureMap, State, ValvePlant, ValveWiring};
    let p = Params::default();
    let wiring = ValveWiring {
        lines: vec![(0, true), (1, true), (2, false), (3, true)],
        supply_channel: 5,
        supply_map: PressureMap::Linear { full_scale_bar: 1.0, volts_min: 0.0, volts_max: 10.0 },
        units_per_bar: 100.0,
    };
    let start = State::new(SVector::from_iterator(WpiSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut plant =
        ValvePlant::<WpiSnake, _, _>::new(simulation(1e-3).unwrap(), start, 1e-3, PRESSURE_PARAMETER, wiring).unwrap();
    let digital = |line, high| DeviceValue::Digital { line, high };
    // 44 kPa: lines 0 and 2 say +1 (line 2 is active low), 1 and 3 say -1.
    let values = [
        digital(0, true),
        digital(1, false),
        digital(2, false),
        digital(3, false),
        DeviceValue::Analog { channel: 5, volts: 4.4 },
    ];
    plant.write(0.0, &values).unwrap();
    assert_eq!(plant.valve_states(), &[1.0, -1.0, 1.0, -1.0]);
    assert!((plant.supply_pressure() - 44.0).abs() < 1e-12);
    // Ten seconds on: each curvature at its steady state, +-C0 at 44 kPa.
    plant.write(10.0, &values).unwrap();
    let steady = p.curvature_per_kpa * (44.0 - p.threshold_pressure);
    for (k, sign) in [1.0, -1.0, 1.0, -1.0].iter().enumerate() {
        let curvature = plant.state.q[WpiSnake::VALVES[k]];
        assert!(
            (curvature - sign * steady).abs() < 1e-9 * steady,
            "segment {k}: {curvature} against {}",
            sign * steady
        );
    }
    // The supply vented (0 V, below the 20 kPa threshold): the segments relax to straight.
    let vented = [
        digital(0, true),
        digital(1, false),
        digital(2, false),
        digital(3, false),
        DeviceValue::Analog { channel: 5, volts: 0.0 },
    ];
    plant.write(10.0, &vented).unwrap();
    plant.write(20.0, &vented).unwrap();
    for k in 0..4 {
        let curvature = plant.state.q[WpiSnake::VALVES[k]];
        assert!(curvature.abs() < 1e-9 * steady, "segment {k} at {curvature} with the supply vented");
    }
    let unwired = plant.write(20.001, &[digital(9, true)]).unwrap_err();
    assert!(unwired.0.contains("no valve on digital line 9"), "{unwired}");
    let other = plant.write(20.002, &[DeviceValue::Analog { channel: 1, volts: 1.0 }]).unwrap_err();
    assert!(other.0.contains("analog channel 1"), "{other}");
}
