//! The soft-limbed pinniped of 002_f355a977a209e7c9: limb kinematics (eqs 1-7), the centre
//! of gravity (eqs 14-16) against the generated model, the gaits' inverse kinematics, and
//! short dynamic trials that must move the way the paper's gaits do.

use nalgebra::Vector3;
use softgen::papers::pinniped::{model_centre_of_mass, run_trial, Gait, RestGeometry, Trial};
use softgen::papers::pinniped::{robot_centre_of_gravity, CurveParameters, Limb, MAX_REACH_BEND};
use softgen_generated::pinniped::Params;

const LIMB: Limb = Limb { length: 0.24, muscle_radius: 0.0125 };

/// A small deterministic generator (xorshift) for the random bends.
fn random_bends(n: usize) -> Vec<CurveParameters> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| CurveParameters {
            theta: std::f64::consts::PI * (2.0 * next() - 1.0),
            phi: 1e-6 + (MAX_REACH_BEND - 1e-6) * next(),
        })
        .collect()
}

fn angle_gap(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

#[test]
fn forward_then_inverse_kinematics_round_trip() {
    for c in random_bends(2000) {
        // Eq 1 then eq 2.
        let l = LIMB.muscle_lengths(c);
        assert!(l.iter().sum::<f64>().abs() < 1e-15, "{l:?}");
        let back = LIMB.curve_parameters(l);
        assert!((back.phi - c.phi).abs() < 1e-9 && angle_gap(back.theta, c.theta) < 1e-9, "{c:?} -> {back:?}");
        // Eq 6 then eq 7.
        let tip = LIMB.tip(c);
        let back = LIMB.inverse(tip.x, tip.y).unwrap();
        assert!((back.phi - c.phi).abs() < 1e-9 && angle_gap(back.theta, c.theta) < 1e-9, "{c:?} -> {back:?}");
        // Eq 5 at xi = 1 is eq 6 written out.
        let (s, v) = (c.phi.sin(), 1.0 - c.phi.cos());
        let eq6 = Vector3::new(
            LIMB.length * c.theta.cos() * v / c.phi,
            LIMB.length * c.theta.sin() * v / c.phi,
            LIMB.length * s / c.phi,
        );
        assert!((tip - eq6).norm() < 1e-12 * (1.0 + 1.0 / c.phi), "{tip} {eq6}");
    }
    // Finite limits at the straight pose and just off it.
    for phi in [0.0, 1e-12, 1e-8, 1e-5] {
        let c = CurveParameters { theta: 0.7, phi };
        let tip = LIMB.tip(c);
        assert!(tip.iter().all(|v| v.is_finite()) && (tip.z - 0.24).abs() < 1e-9, "{tip}");
        assert!((LIMB.centre_of_gravity(c) - Vector3::new(0.0, 0.0, 0.12)).norm() < 1e-6);
    }
}

#[test]
fn gait_circles_give_the_bend_the_geometry_implies_and_unreachable_targets_are_refused() {
    for (rho, expected) in [(0.04, 0.3365), (0.06, 0.5110), (0.08, 0.6941), (0.10, 0.8907)] {
        for k in 0..100 {
            let a = std::f64::consts::TAU * k as f64 / 100.0;
            let c = LIMB.inverse(rho * a.cos(), rho * a.sin()).unwrap();
            assert!((c.phi - expected).abs() < 5e-5, "{rho}: {}", c.phi);
            assert!(angle_gap(c.theta, a) < 1e-12);
        }
    }
    let reach = 0.72461 * 0.24;
    assert!(LIMB.inverse(reach * 0.999, 0.0).is_ok());
    let e = LIMB.inverse(0.18, 0.0).unwrap_err();
    assert!(e.to_string().contains("out of reach"), "{e}");
    assert!(LIMB.inverse(f64::NAN, 0.0).is_err());
}

#[test]
fn rest_pose_and_centre_of_gravity_follow_eqs_8_and_16() {
    let p = Params::default();
    let rest = RestGeometry::new(&p);
    // The corrected eq 8: limb axes 109.47 degrees apart, the head straight up.
    for i in 0..4 {
        for j in 0..i {
            let angle = rest.axes[i][0].dot(&rest.axes[j][0]).acos().to_degrees();
            assert!((angle - 109.4712).abs() < 1e-3, "{i} {j}: {angle}");
        }
    }
    assert!((rest.axes[0][0] - Vector3::z()).norm() < 1e-12);
    // The three lower tips on one circle: L + hub offset along each axis.
    let along = p.limb_length + p.hub_radius;
    for i in 1..4 {
        assert!((rest.tips[i].xy().norm() - along * (8f64 / 9.0).sqrt()).abs() < 1e-9, "{}", rest.tips[i]);
        assert!((rest.tips[i].z + along / 3.0).abs() < 1e-9, "{}", rest.tips[i]);
    }
    let limbs = rest.mounted_limbs(&p);
    let straight = CurveParameters { theta: 0.0, phi: 0.0 };
    let at_rest = robot_centre_of_gravity(&limbs, &[straight; 4], p.hub_mass);
    assert!(at_rest.norm() < 1e-12 && model_centre_of_mass(&p, &[straight; 4]).norm() < 1e-12);
    // Random bends of every limb: eq 16 (with the hub) against the generated model.
    let bends = random_bends(40);
    for k in 0..10 {
        let curves = [bends[4 * k], bends[4 * k + 1], bends[4 * k + 2], bends[4 * k + 3]];
        let eq16 = robot_centre_of_gravity(&limbs, &curves, p.hub_mass);
        let model = model_centre_of_mass(&p, &curves);
        assert!((eq16 - model).norm() < 1e-6, "{eq16} {model}");
    }
}

#[test]
fn bending_the_head_90_degrees_moves_the_centre_of_gravity_as_eqs_15_and_16_say() {
    let p = Params::default();
    let rest = RestGeometry::new(&p);
    let limbs = rest.mounted_limbs(&p);
    let straight = CurveParameters { theta: 0.0, phi: 0.0 };
    let bent = CurveParameters { theta: rest.theta_towards(0, Vector3::x()), phi: std::f64::consts::FRAC_PI_2 };
    // Eq 15 in the head's own frame: (L / phi^2) (phi - sin phi, 0, 1 - cos phi).
    let c = LIMB.centre_of_gravity(CurveParameters { theta: 0.0, phi: std::f64::consts::FRAC_PI_2 });
    assert!((c - Vector3::new(0.0555, 0.0, 0.0973)).norm() < 1e-4, "{c}");
    let shift = robot_centre_of_gravity(&limbs, &[bent, straight, straight, straight], 0.0)
        - robot_centre_of_gravity(&limbs, &[straight; 4], 0.0);
    assert!((shift.x - 0.0139).abs() < 1e-4 && shift.y.abs() < 1e-12, "{shift}");
    let with_hub = model_centre_of_mass(&p, &[bent, straight, straight, straight]);
    assert!((with_hub.x - 0.0128).abs() < 1e-4, "{with_hub}");
}

/// Short trials (2 s of gait after 1 s settling) at 0.10 m and 1.00 Hz.
fn short(gait: Gait) -> softgen::papers::pinniped::TrialOutcome {
    let mut trial = Trial::new(gait, 0.10, 1.0);
    trial.duration = 2.0;
    let outcome = run_trial(&trial, |_| {}).unwrap();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    outcome
}

#[test]
fn crawling_moves_the_way_the_gait_says() {
    let forward = short(Gait::Forward);
    let backward = short(Gait::Backward);
    assert!(forward.displacement.0 > 0.01, "forward {:?}", forward.displacement);
    assert!(backward.displacement.0 < -0.01, "backward {:?}", backward.displacement);
    // FR and FL mirror each other: straight gaits hardly turn or drift sideways.
    for o in [&forward, &backward] {
        assert!(
            o.heading_change.abs() < 0.02 && o.displacement.1.abs() < 0.005,
            "{:?} {}",
            o.displacement,
            o.heading_change
        );
    }
}

#[test]
fn turning_in_place_changes_heading_with_little_translation_and_reverses() {
    let ccw = short(Gait::InPlace { counterclockwise: true });
    let cw = short(Gait::InPlace { counterclockwise: false });
    assert!(ccw.heading_change > 0.2, "{}", ccw.heading_change);
    // Reversing every limb turns the other way about as fast (the head's circle starts at
    // its own +y in both, so the two are not exact mirror images).
    assert!(
        (cw.heading_change + ccw.heading_change).abs() < 0.02 * ccw.heading_change.abs(),
        "{} {}",
        cw.heading_change,
        ccw.heading_change
    );
    for o in [&ccw, &cw] {
        let moved = o.displacement.0.hypot(o.displacement.1);
        // Less than 10 cm per radian turned.
        assert!(moved < 0.1 * o.heading_change.abs(), "{moved} m for {} rad", o.heading_change);
    }
}

#[test]
fn table_three_exceeds_what_circling_tips_can_give_and_softgen_does_not() {
    // An in-place turn driven by tips circling with radius rho at f Hz gains at most
    // 2 rho f / R rad/s (R the tip's distance from the turning axis); the paper's Table III
    // is several times that, softgen's runs stay under it.
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("002-turn-in-place").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "002-turn-in-place");
    let softgen::Verdict::PaperInconsistent(why) = &report.verdict else {
        panic!("002-turn-in-place: {}", report.verdict_line())
    };
    assert!(why.starts_with("Table III's in-place turn rates are 2.9 to 7.3 times"), "{why}");
    let line = report.lines.iter().find(|l| l.starts_with("Table III against the bound")).expect("the bound's line");
    let softgen_at_most: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(softgen_at_most < 1.0, "softgen's turn rates exceed the bound: {line}");
    assert_eq!(report.views.len(), 2, "the two trials of Table III Fig 9 draws");
}

#[test]
fn table_one_crawls_the_papers_way_at_a_quarter_of_its_speed() {
    // Table I's speeds are numbers with a unit: softgen's are 0.27 of them on average,
    // whichever way every gait goes (the right one in 18 of 18 trials).
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("002-crawling").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "002-crawling");
    let softgen::Verdict::Differs(why) = &report.verdict else { panic!("002-crawling: {}", report.verdict_line()) };
    assert!(why.starts_with("Table I's mean speeds are 0.27 of the paper's on average"), "{why}");
    assert!(!why.contains("moves"), "every gait goes the paper's way: {why}");
    // Table I's sensitivities at its best cell (backward, 0.10 m, 1.00 Hz; the paper's 16.9
    // cm/s is 96 % of the no-slip stride): no unprinted parameter halved or doubled brings
    // softgen past 40 % of it. Measured: 5.30 cm/s (30 %), at most 5.95 (lag halved).
    let first = report.lines.iter().position(|l| l.starts_with("Table I sensitivity")).expect("the sensitivity lines");
    assert!(report.lines[first].contains("paper 16.9, 96 %"), "{}", report.lines[first]);
    let speeds: Vec<f64> = report.lines[first + 1..first + 6]
        .iter()
        .flat_map(|l| {
            let figures = l.split("cm/s").next().unwrap().rsplit(' ').take(4).collect::<Vec<_>>();
            [figures[1].parse::<f64>().unwrap(), figures[3].parse::<f64>().unwrap()]
        })
        .collect();
    assert_eq!(speeds.len(), 10, "five parameters, each halved and doubled");
    assert!(speeds.iter().all(|v| *v > 0.0 && *v < 0.4 * 17.64), "{speeds:?}");
    assert!(speeds.iter().any(|v| *v < 0.75 * 5.3), "some parameter moves the speed by a quarter: {speeds:?}");
}

#[test]
fn table_two_turns_the_papers_way_in_a_unit_it_never_defines() {
    // Table II's "rad/(m s)" is defined nowhere, so only the senses and the rise with the
    // turning limb's stride (which hold whatever the unit) can be held to, and they hold.
    let dir = tempfile::tempdir().unwrap();
    let report = softgen::find_experiment("002-crawl-and-turn").unwrap().run(dir.path(), false).unwrap();
    super::assert_front_page_row(&report, "002-crawl-and-turn");
    let softgen::Verdict::Unverifiable(why) = &report.verdict else {
        panic!("002-crawl-and-turn: {}", report.verdict_line())
    };
    assert!(why.starts_with("the paper never defines Table II's unit, rad/(m s)"), "{why}");
    assert!(why.contains("is 0.08 of its values on average"), "{why}");
}

#[test]
fn eq_16_and_the_generated_centre_of_mass_agree_to_1e_9_m_up_to_90_degrees_of_bend() {
    // The README's claim, measured: one limb at a time bent towards +x by phi, the others
    // straight. The gap grows with the bend (the spec integrates a limb's mass along its arc
    // by 4-point quadrature, eq 16 in closed form), to 7e-8 m at 3 rad.
    let p = Params::default();
    let rest = RestGeometry::new(&p);
    let limbs = rest.mounted_limbs(&p);
    let straight = CurveParameters { theta: 0.0, phi: 0.0 };
    let gap_at = |phi: f64| {
        (0..4)
            .map(|limb| {
                let mut curves = [straight; 4];
                curves[limb] = CurveParameters { theta: rest.theta_towards(limb, Vector3::x()), phi };
                (robot_centre_of_gravity(&limbs, &curves, p.hub_mass) - model_centre_of_mass(&p, &curves)).norm()
            })
            .fold(0.0_f64, f64::max)
    };
    let up_to =
        |last: f64| (1..=300).map(|k| 0.01 * k as f64).filter(|&phi| phi <= last).map(gap_at).fold(0.0, f64::max);
    let (quarter, reach, three) = (up_to(std::f64::consts::FRAC_PI_2), up_to(MAX_REACH_BEND), up_to(3.0));
    println!("eq 16 against the generated model: {quarter:.1e} m to pi/2, {reach:.1e} m to the reach bend, {three:.1e} m to 3 rad");
    assert!(quarter < 1e-9, "{quarter:e} m up to pi/2");
    assert!(reach < 3e-8 && three < 1e-7, "{reach:e} m to the reach bend, {three:e} m to 3 rad");
}

/// The MPC task (`mpc-002-goal`): deciding the stride 50 times a second, the planner turns
/// the robot in place until its backward crawl faces the goal 0.5 m away at 60 degrees,
/// crawls there and stays, no rollout failing (the plans' timing is the experiment's to
/// report).
#[test]
fn the_stride_planner_walks_the_pinniped_to_the_goal_at_60_degrees() {
    use softgen::papers::pinniped::mpc::{run_goal, GoalTask};
    let task = GoalTask::new();
    let run = run_goal(&task).unwrap();
    let at = run.reached_at.unwrap_or_else(|| panic!("not reached: {:.3} m from the goal", run.final_distance));
    println!("reached at {at:.2} s, {}", run.statistics.line(task.decision_period));
    // Measured: 12.70 s at 50 Hz (14.65 s deciding once a cycle).
    assert!(at < 30.0, "{at}");
    assert!(run.final_distance <= task.arrival_radius);
    let offset = run.goal - run.start;
    assert!((offset.norm() - 0.5).abs() < 1e-12 && (offset.y.atan2(offset.x) - 60f64.to_radians()).abs() < 1e-4);
    // Seconds each gait was played, a decision period at a time.
    let played = |wanted: Gait| {
        run.samples.iter().filter(|s| s.stride.gait == Some(wanted)).count() as f64 * task.decision_period
    };
    assert!(played(Gait::Backward) >= 1.0, "{:?}", run.samples.iter().map(|s| s.stride).collect::<Vec<_>>());
    assert!(
        played(Gait::InPlace { counterclockwise: false }) + played(Gait::InPlace { counterclockwise: true }) >= 3.0
    );
    // A plan a decision, on the gait's clock.
    let decisions = (run.samples.last().unwrap().t - run.samples[0].t) / task.decision_period;
    assert!((run.samples.len() as f64 - decisions - 1.0).abs() < 1.5, "{} plans", run.samples.len());
    for s in &run.samples {
        assert!(task.planner.strides.contains(&s.stride), "t = {}: {:?}", s.t, s.stride);
        assert_eq!(s.failed, 0, "t = {}", s.t);
    }
    assert_eq!(run.statistics.failures, 0);
    // The model's gaits as the planner measured them: backward crawling the fastest way.
    let rates = run.rates;
    assert!(rates.backward_speed > rates.forward_speed && rates.turn_rate > 0.2, "{rates:?}");
}

/// The planner's model is the plant's: at the plant's step, a plan made a lead before a
/// decision expects there the state the plant reaches to the last digit, and the time to go
/// it gives its stride is the plant's after playing that stride for a cycle, whether the
/// decision falls on a cycle's start or mid-cycle (the stride then joining the gait's
/// clock where the cycle is).
#[test]
fn a_stride_plan_predicts_the_plant_to_the_last_digit() {
    use softgen::papers::pinniped::model::Crawler;
    use softgen::papers::pinniped::mpc::{GoalTask, Stride, StridePlanner, StridePlannerConfig};
    use softgen_runtime::gait_cycle_start;
    let task = GoalTask::new();
    let goal = nalgebra::Vector2::new(-0.3, 0.2);
    let config = StridePlannerConfig { step: task.plant_step, ..task.planner.clone() };
    let mut planner = StridePlanner::new(Params::default(), config, 1.0, 3.0, goal).unwrap();
    for (decision, lead) in [(3.0, 0.25), (2.62, 0.02)] {
        let mut plant = Crawler::new(Params::default(), task.plant_step, 1e-3, 3.0).unwrap();
        plant.advance_to(1.0).unwrap();
        let current = Stride { gait: Some(Gait::Forward), radius: 0.10 };
        plant.play(current, 1.0).unwrap();
        plant.advance_to(decision - lead).unwrap();
        let plan = planner.plan(plant.t, &plant.x, &plant.drive.pressures, current, 1.0, decision);
        plant.advance_to(decision).unwrap();
        assert_eq!(plan.start.q, plant.x.q, "decision at {decision} s");
        assert_eq!(plan.start.qd, plant.x.qd, "decision at {decision} s");
        let k = task.planner.strides.iter().position(|s| *s == plan.stride).unwrap();
        plant.play_from(plan.stride, 1.0, gait_cycle_start(1.0, 1.0, decision)).unwrap();
        plant.advance_to(decision + 1.0).unwrap();
        assert_eq!(plan.costs[k], planner.time_to_go(plant.center_of_mass(), plant.heading()), "at {decision} s");
        assert_eq!(plan.failed, 0);
        println!("decision at {decision} s: chose {} with costs {:?}", plan.stride.name(), plan.costs);
    }
}

/// The planner's own model steps coarser than the plant (the task's 1.25 ms against 0.5
/// ms) so that a plan fits a 20 ms decision period: over a cycle of every stride, from a
/// state of a walk, it stays finite and ends within a few millimetres and degrees of the
/// plant.
#[test]
fn the_planners_coarser_model_follows_the_plant_over_a_cycle_of_every_stride() {
    use softgen::papers::pinniped::model::Crawler;
    use softgen::papers::pinniped::mpc::{GoalTask, Stride};
    let task = GoalTask::new();
    let step = task.planner.step;
    assert!(step > task.plant_step);
    let mut plant = Crawler::new(Params::default(), task.plant_step, 1e-3, 3.0).unwrap();
    plant.advance_to(1.0).unwrap();
    plant.play(Stride { gait: Some(Gait::InPlace { counterclockwise: false }), radius: 0.10 }, 1.0).unwrap();
    plant.advance_to(3.5).unwrap();
    let (t, x, reached) = (plant.t, plant.x, plant.drive.pressures);
    let mut model = Crawler::new(Params::default(), step, step.max(1e-3), 3.0).unwrap();
    let (mut worst_position, mut worst_heading) = (0.0f64, 0.0f64);
    for stride in &task.planner.strides {
        let end = |crawler: &mut Crawler| {
            crawler.start_from(t, &x, &reached);
            crawler.play_from(*stride, 1.0, 3.0).unwrap();
            crawler.advance_to(t + 1.0).unwrap();
            (crawler.center_of_mass(), crawler.heading(), crawler.x.q.iter().all(|v| v.is_finite()))
        };
        let (plant_com, plant_heading, _) = end(&mut plant);
        let (model_com, model_heading, finite) = end(&mut model);
        assert!(finite, "{}", stride.name());
        let position = (model_com - plant_com).norm();
        let heading = (model_heading - plant_heading).abs();
        println!("{}: {:.2} mm, {:.3} degrees", stride.name(), position * 1e3, heading.to_degrees());
        (worst_position, worst_heading) = (worst_position.max(position), worst_heading.max(heading));
    }
    // Measured (2026-12-04): 1.5 to 5.3 mm (forward crawling the worst) and 0.07 to 0.36
    // degrees, against 2 to 6 cm a cycle of crawling; each plan starts again from the
    // measured state 20 ms later.
    assert!(worst_position < 8e-3 && worst_heading < 0.6f64.to_radians(), "{worst_position} m, {worst_heading} rad");
}

/// The time to go: zero inside the stop radius; straight behind the robot, the distance
/// at the backward crawl's speed; off both crawls' directions, the turn to the nearer one
/// first.
#[test]
fn the_time_to_go_turns_to_the_nearer_crawl_then_crawls() {
    use softgen::papers::pinniped::mpc::{GoalTask, StridePlanner};
    use std::f64::consts::FRAC_PI_2;
    let task = GoalTask::new();
    let goal = nalgebra::Vector2::new(1.0, 0.0);
    let planner = StridePlanner::new(Params::default(), task.planner.clone(), 1.0, 3.0, goal).unwrap();
    let r = planner.rates;
    let at = nalgebra::Vector2::new(0.0, 0.0);
    assert_eq!(planner.time_to_go(goal + nalgebra::Vector2::new(0.01, 0.0), 0.3), 0.0);
    // Facing away: the goal is straight behind, where backward crawling goes.
    assert!((planner.time_to_go(at, std::f64::consts::PI) - 1.0 / r.backward_speed).abs() < 1e-12);
    assert!(
        (planner.time_to_go(at, 0.0)
            - (1.0 / r.forward_speed).min(std::f64::consts::PI / r.turn_rate + 1.0 / r.backward_speed))
        .abs()
            < 1e-12
    );
    let sideways = planner.time_to_go(at, FRAC_PI_2);
    let expected = FRAC_PI_2 / r.turn_rate + 1.0 / r.forward_speed.max(r.backward_speed);
    assert!((sideways - expected).abs() < 1e-9, "{sideways} {expected}");
}
