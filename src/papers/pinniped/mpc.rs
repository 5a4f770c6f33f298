//! Model-predictive control of the soft-limbed pinniped of 002: from rest on its carpet,
//! walk the centre of mass to a goal 0.5 m away at 60 degrees off the heading and stay
//! there. Not in the paper, which drives the robot open loop, one gait a trial.
//!
//! What the plan decides: which of the paper's gaits (section III) the robot walks for its
//! next stride, one gait cycle. Box-DDP over the twelve pressures, held over knots of 50 to
//! 125 ms, rolled the robot over within 5 to 20 s (the centre of mass's shortest way, with a
//! posture weight on base roll and pitch as well): the carpet's stick and slip at the
//! knots' lengths gives the pressures no gradient towards walking. The gaits are what
//! walks it. A stride's outcome depends on the whole cycle (the robot rocks and heaves
//! through several centimetres within one), so the planner compares strides, not instants.
//! Every 20 ms (50 Hz) it decides the stride from the next decision on: a lead before the
//! decision it carries the generated model, from the robot's state and the muscles'
//! reached pressures, to the decision with the stride in force, rolls one whole cycle of
//! every candidate gait out from there, played in step with the gait's clock (predictive
//! sampling over a finite set), and keeps the one whose end state has the least time to
//! go. A whole cycle ends at the phase it began, so the rocking within it is common to the
//! candidates and their ends compare. The planner's model steps at 1.25 ms where the plant
//! steps at 0.5 ms, so a plan (7 cycles rolled out) fits the 20 ms period.
//!
//! The time to go is the planner's terminal cost: the robot turns in place at a rate
//! `turn_rate` and crawls forward or backward at `forward_speed` and `backward_speed`, each
//! measured on the planner's own model when it is built, so the least time to go is
//! min over the two crawls of |angle off the crawl's direction| / turn rate + distance /
//! speed. Inside a stop radius (half the task's arrival radius) it is zero, and standing
//! (every muscle vented) comes first among equals, so the robot stops on the goal.

use super::model::{limb_gait, Crawler, Gait, MUSCLES};
use nalgebra::Vector2;
use softgen_generated::pinniped::{Params, DOF};
use softgen_runtime::{gait_cycle_start, GaitClock, PlannerStatistics, State};
use std::time::{Duration, Instant};

/// The goal's distance from the start's centre of mass (m) and its angle off the heading
/// (+x, the direction of forward crawling), anticlockwise seen from above.
pub const GOAL_DISTANCE: f64 = 0.5;
/// See `GOAL_DISTANCE` (degrees).
pub const GOAL_ANGLE_DEGREES: f64 = 60.0;

/// What the robot does for one gait cycle: one of the paper's gaits at a stride radius, or
/// standing with every muscle vented.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stride {
    /// `None`: standing.
    pub gait: Option<Gait>,
    /// Stride radius (m) of the circling limbs.
    pub radius: f64,
}

impl Stride {
    /// Standing, every muscle vented.
    pub const STAND: Stride = Stride { gait: None, radius: 0.0 };

    /// The stride in words: the gait and its radius, or standing.
    pub fn name(&self) -> String {
        match self.gait {
            Some(gait) => format!("{} at {} m", gait.name(), self.radius),
            None => "standing".into(),
        }
    }
}

/// The stride planner's strides on the trials' crawler.
impl Crawler {
    /// Plays `stride` at `frequency` (Hz) from now, its cycle starting now (circles at the
    /// top of their circles).
    pub fn play(&mut self, stride: Stride, frequency: f64) -> Result<(), String> {
        self.play_from(stride, frequency, self.t)
    }

    /// Plays `stride` at `frequency` (Hz) as from its cycle's start at `start` (s).
    pub fn play_from(&mut self, stride: Stride, frequency: f64, start: f64) -> Result<(), String> {
        match stride.gait {
            Some(gait) => self.play_gait(limb_gait(self.params(), gait, stride.radius, frequency)?, start),
            None => self.stand()?,
        }
        Ok(())
    }

    /// Stride `stride`'s commanded pressures (bar, muscle order) `since` s into its cycle
    /// at `frequency`, before any ceiling.
    pub fn stride_pressures(&self, stride: Stride, frequency: f64, since: f64) -> Result<[f64; MUSCLES], String> {
        let Some(gait) = stride.gait else { return Ok([0.0; MUSCLES]) };
        let gait = limb_gait(self.params(), gait, stride.radius, frequency)?;
        let commands = gait.pressures(since, &self.limbs, &self.map).map_err(|e| e.to_string())?;
        Ok(std::array::from_fn(|i| commands[i / 3][i % 3]))
    }
}

/// The planner's settings.
#[derive(Clone, Debug)]
pub struct StridePlannerConfig {
    /// What a plan may choose for the next cycle.
    pub strides: Vec<Stride>,
    /// The gait frequency (Hz): one cycle is the horizon and the planning period.
    pub frequency: f64,
    /// The planner model's semi-implicit Euler step (s).
    pub step: f64,
    /// Inside this distance of the goal (m) the time to go is zero.
    pub stop_radius: f64,
    /// Cycles each crawl and turn runs when the planner measures it.
    pub calibration_cycles: usize,
}

/// What the planner measured of its own model's gaits: the speeds the time to go assumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaitRates {
    /// m/s along +x and -x of the heading.
    pub forward_speed: f64,
    /// See `forward_speed`.
    pub backward_speed: f64,
    /// rad/s, the slower of the two senses.
    pub turn_rate: f64,
    /// The strides measured.
    pub forward: Stride,
    /// See `forward`.
    pub backward: Stride,
    /// See `forward`: the two senses of turning.
    pub turns: [Stride; 2],
}

/// Predictive sampling over strides: at each cycle's start, one cycle of each candidate from
/// the plant's state, the candidate with the least time to go at its end.
pub struct StridePlanner {
    /// The planner's settings.
    pub config: StridePlannerConfig,
    /// The strides' measured rates, which the time to go is read from.
    pub rates: GaitRates,
    crawler: Crawler,
    goal: Vector2<f64>,
}

/// One plan.
#[derive(Clone, Debug)]
pub struct StridePlan {
    /// The stride chosen.
    pub stride: Stride,
    /// The state the plan expects at its cycle's start (the measured one where the model
    /// failed on the way there).
    pub start: State<DOF>,
    /// Time to go (s) at the end of each candidate's cycle, in the candidates' order
    /// (infinite where its rollout failed).
    pub costs: Vec<f64>,
    /// Candidates whose rollout failed.
    pub failed: usize,
}

impl StridePlanner {
    /// The planner over `params`' model, measuring its gaits first: from rest, `settle` s
    /// standing, then `calibration_cycles` cycles of each crawl and turn of `strides`.
    pub fn new(
        params: Params,
        config: StridePlannerConfig,
        settle: f64,
        ceiling: f64,
        goal: Vector2<f64>,
    ) -> Result<Self, String> {
        if !(config.frequency.is_finite() && config.frequency > 0.0) {
            return Err(format!("gait frequency must be finite and > 0 Hz, got {}", config.frequency));
        }
        if config.calibration_cycles == 0 {
            return Err("the planner measures its gaits over at least one cycle".into());
        }
        if config.strides.is_empty() {
            return Err("the planner needs at least one stride to choose from".into());
        }
        if !(config.stop_radius.is_finite() && config.stop_radius >= 0.0) {
            return Err(format!("stop radius must be finite and >= 0 m, got {}", config.stop_radius));
        }
        if !(goal.x.is_finite() && goal.y.is_finite()) {
            return Err(format!("goal must be finite, got ({}, {})", goal.x, goal.y));
        }
        let mut crawler = Crawler::new(params, config.step, config.step.max(1e-3), ceiling)?;
        crawler.advance_to(settle)?;
        let (t0, x0, reached0) = (crawler.t, crawler.x, crawler.drive.pressures);
        let find = |wanted: &dyn Fn(Gait) -> bool, what: &str| {
            config
                .strides
                .iter()
                .find(|s| s.gait.is_some_and(wanted))
                .copied()
                .ok_or_else(|| format!("the planner's strides include no {what}"))
        };
        let forward = find(&|g| g == Gait::Forward, "forward crawling")?;
        let backward = find(&|g| g == Gait::Backward, "backward crawling")?;
        let turns = [
            find(&|g| g == Gait::InPlace { counterclockwise: true }, "counterclockwise in-place turn")?,
            find(&|g| g == Gait::InPlace { counterclockwise: false }, "clockwise in-place turn")?,
        ];
        let duration = config.calibration_cycles as f64 / config.frequency;
        let mut measure = |stride: Stride| -> Result<(Vector2<f64>, f64), String> {
            crawler.start_from(t0, &x0, &reached0);
            let (com, heading) = (crawler.center_of_mass(), crawler.heading());
            crawler.play(stride, config.frequency)?;
            crawler.advance_to(t0 + duration)?;
            let d = crawler.center_of_mass() - com;
            let along = Vector2::new(heading.cos(), heading.sin()).dot(&d);
            Ok((Vector2::new(along, d.norm()), crawler.heading() - heading))
        };
        let forward_speed = measure(forward)?.0.x / duration;
        let backward_speed = -measure(backward)?.0.x / duration;
        let turn_rate = (measure(turns[0])?.1).min(-measure(turns[1])?.1) / duration;
        for (what, value) in [
            ("forward crawling", forward_speed),
            ("backward crawling", backward_speed),
            ("in-place turning", turn_rate),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("{what} does not move the planner's model the gait's way ({value:.4})"));
            }
        }
        let rates = GaitRates { forward_speed, backward_speed, turn_rate, forward, backward, turns };
        Ok(StridePlanner { config, rates, crawler, goal })
    }

    /// The least time (s) from a centre of mass and heading to the goal: turn in place
    /// until one crawl faces it, then crawl; zero inside the stop radius.
    pub fn time_to_go(&self, com: Vector2<f64>, heading: f64) -> f64 {
        let to_goal = self.goal - com;
        let distance = to_goal.norm();
        if distance <= self.config.stop_radius {
            return 0.0;
        }
        let bearing = to_goal.y.atan2(to_goal.x);
        let off = |direction: f64| {
            let a = (bearing - direction).rem_euclid(std::f64::consts::TAU);
            a.min(std::f64::consts::TAU - a)
        };
        let r = &self.rates;
        let forward = off(heading) / r.turn_rate + distance / r.forward_speed;
        let backward = off(heading + std::f64::consts::PI) / r.turn_rate + distance / r.backward_speed;
        forward.min(backward)
    }

    /// One plan for the decision at `boundary` (s), from the state measured at `t` (not
    /// after it) and the muscles' reached pressures then: the stride in force (`current`,
    /// played as from its cycle's start at `current_start`) carries the model to the
    /// boundary, then each candidate runs one whole cycle from there, played in step with
    /// the gait's clock (as from the last cycle start at or before the boundary, so a
    /// stride chosen mid-cycle joins its circles where the cycle is). A whole cycle ends at
    /// the phase it began, so the rocking within a cycle is the same for every candidate and
    /// their ends compare.
    pub fn plan(
        &mut self,
        t: f64,
        x: &State<DOF>,
        reached: &[f64; MUSCLES],
        current: Stride,
        current_start: f64,
        boundary: f64,
    ) -> StridePlan {
        let cycle = 1.0 / self.config.frequency;
        let candidates = self.config.strides.len();
        let mut costs = vec![f64::INFINITY; candidates];
        self.crawler.start_from(t, x, reached);
        let ahead = self
            .crawler
            .play_from(current, self.config.frequency, current_start)
            .and_then(|_| self.crawler.advance_to(boundary).map_err(String::from));
        if ahead.is_err() {
            return StridePlan { stride: current, start: *x, costs, failed: candidates };
        }
        let (t0, x0, reached0) = (self.crawler.t, self.crawler.x, self.crawler.drive.pressures);
        let origin = gait_cycle_start(current_start, cycle, boundary);
        let (mut best, mut best_cost, mut failed) = (current, f64::INFINITY, 0);
        for (k, cost) in costs.iter_mut().enumerate() {
            let stride = self.config.strides[k];
            self.crawler.start_from(t0, &x0, &reached0);
            let outcome = self
                .crawler
                .play_from(stride, self.config.frequency, origin)
                .and_then(|_| self.crawler.advance_to(t0 + cycle).map_err(String::from));
            *cost = match outcome {
                Ok(()) => self.time_to_go(self.crawler.center_of_mass(), self.crawler.heading()),
                Err(_) => f64::INFINITY,
            };
            if !cost.is_finite() {
                failed += 1;
            }
            // Ties keep the earlier candidate: standing comes first.
            if *cost < best_cost {
                (best, best_cost) = (stride, *cost);
            }
        }
        StridePlan { stride: best, start: x0, costs, failed }
    }
}

/// The task's settings.
#[derive(Clone, Debug)]
pub struct GoalTask {
    /// Simulated time before giving up (s), from the start.
    pub duration: f64,
    /// Standing on the carpet before the first plan (s): the trials' settling.
    pub settle: f64,
    /// Reached: the centre of mass within this distance of the goal (m) for `hold` seconds.
    pub arrival_radius: f64,
    /// See `arrival_radius`.
    pub hold: f64,
    /// The plant's semi-implicit Euler step (s): the trials'.
    pub plant_step: f64,
    /// The paper's 3 bar ceiling.
    pub ceiling: f64,
    /// How often the planner decides the stride (s): a cycle, or a whole fraction of one,
    /// the strides then changing mid-cycle in step with the gait's clock.
    pub decision_period: f64,
    /// How long before a decision its plan begins (s), at most the decision period: the
    /// plan's deadline.
    pub lead: f64,
    /// The planner's settings.
    pub planner: StridePlannerConfig,
}

impl GoalTask {
    /// The paper's gaits at 1.00 Hz, and standing: the crawls and in-place turns at a 0.10
    /// m stride (backward crawling's fastest cell), crawl-and-turn with the back limb at
    /// 0.08 m (Table II's middle), decided every 20 ms, each plan given the whole period;
    /// the planner's model at 1.25 ms (the plant's 0.5 ms made a plan 31 ms, 1 ms 16 ms;
    /// 2 ms diverged). Deciding once a cycle (a 0.25 s lead, the model at 0.5 ms) the goal
    /// was reached at 14.65 s, and at 16.50 s without crawl-and-turn.
    pub fn new() -> Self {
        let at = |gait| Stride { gait: Some(gait), radius: 0.10 };
        GoalTask {
            duration: 60.0,
            settle: 1.0,
            arrival_radius: 0.05,
            hold: 2.0,
            plant_step: 5e-4,
            ceiling: 3.0,
            decision_period: 0.02,
            lead: 0.02,
            planner: StridePlannerConfig {
                strides: vec![
                    Stride::STAND,
                    at(Gait::Forward),
                    at(Gait::Backward),
                    at(Gait::InPlace { counterclockwise: true }),
                    at(Gait::InPlace { counterclockwise: false }),
                    Stride { gait: Some(Gait::CrawlTurn { left: true }), radius: 0.08 },
                    Stride { gait: Some(Gait::CrawlTurn { left: false }), radius: 0.08 },
                ],
                frequency: 1.0,
                step: 1.25e-3,
                stop_radius: 0.025,
                calibration_cycles: 3,
            },
        }
    }
}

impl Default for GoalTask {
    fn default() -> Self {
        Self::new()
    }
}

/// One sample per plan.
#[derive(Clone, Debug)]
pub struct GoalSample {
    /// The plan's time (s).
    pub t: f64,
    /// The plant's state the plan started from.
    pub state: State<DOF>,
    /// The centre of mass in the ground plane (m).
    pub center_of_mass: Vector2<f64>,
    /// The heading (rad, from +x).
    pub heading: f64,
    /// The centre of mass's distance from the goal (m).
    pub distance: f64,
    /// The stride chosen for the cycle from this sample on.
    pub stride: Stride,
    /// The plan's wall time (ms).
    pub plan_ms: f64,
    /// The chosen stride's time to go at its cycle's end (s).
    pub time_to_go: f64,
    /// Candidates whose rollout failed.
    pub failed: usize,
}

/// A run of the task.
#[derive(Clone, Debug)]
pub struct GoalRun {
    /// The centre of mass at the start (m).
    pub start: Vector2<f64>,
    /// The goal (m).
    pub goal: Vector2<f64>,
    /// The strides' measured rates.
    pub rates: GaitRates,
    /// One sample per plan.
    pub samples: Vec<GoalSample>,
    /// The planner's counts.
    pub statistics: PlannerStatistics,
    /// When the centre of mass came within the arrival radius to stay for the hold.
    pub reached_at: Option<f64>,
    /// The centre of mass's distance from the goal at the end (m).
    pub final_distance: f64,
    /// Wall time of the run (s).
    pub wall_seconds: f64,
    /// The plant's right-hand sides.
    pub evaluations: usize,
}

/// Runs the task offline in simulated time, as the loop times it: the robot settles
/// standing, then `lead` s before each decision the planner takes the plant's state and
/// chooses the stride from the decision on, played on the gait's clock (its compute time
/// is measured against the lead).
pub fn run_goal(task: &GoalTask) -> Result<GoalRun, String> {
    let wall = Instant::now();
    let params = Params::default();
    let mut plant = Crawler::new(params.clone(), task.plant_step, 1e-3, task.ceiling)?;
    let start = plant.center_of_mass();
    let angle = GOAL_ANGLE_DEGREES.to_radians() + plant.heading();
    let goal = start + GOAL_DISTANCE * Vector2::new(angle.cos(), angle.sin());
    let mut planner = StridePlanner::new(params, task.planner.clone(), task.settle, task.ceiling, goal)?;
    let cycle = 1.0 / task.planner.frequency;
    // Decisions fall on the gait's clock, as the loop's: its cycles start at the settle's
    // end.
    let clock = GaitClock::new(task.settle, cycle, task.decision_period)?;
    clock.check_lead(task.lead)?;
    let (mut samples, mut statistics) = (Vec::new(), PlannerStatistics::default());
    let (mut within_since, mut reached_at) = (None::<f64>, None);
    let (mut current, mut current_start, mut decision) = (Stride::STAND, task.settle, 0u64);
    let mut boundary = clock.decision(0);
    let mut chosen = None;
    let mut final_distance;
    let check_every = 0.05;
    loop {
        let com = plant.center_of_mass();
        final_distance = (com - goal).norm();
        if plant.t >= task.settle - 1e-9 && final_distance <= task.arrival_radius {
            let since = *within_since.get_or_insert(plant.t);
            if plant.t - since >= task.hold - 1e-9 {
                reached_at = Some(since);
                break;
            }
        } else {
            within_since = None;
        }
        if plant.t >= task.duration - 1e-9 {
            break;
        }
        if chosen.is_none() && plant.t >= boundary - task.lead - 1e-9 {
            let began = Instant::now();
            let plan = planner.plan(plant.t, &plant.x, &plant.drive.pressures, current, current_start, boundary);
            let spent = began.elapsed();
            statistics.plans += 1;
            statistics.total += spent;
            statistics.longest = statistics.longest.max(spent);
            if spent > Duration::from_secs_f64(task.lead) {
                statistics.overruns += 1;
            }
            if plan.failed == plan.costs.len() {
                statistics.failures += 1;
            }
            samples.push(GoalSample {
                t: plant.t,
                state: plant.x,
                center_of_mass: com,
                heading: plant.heading(),
                distance: final_distance,
                stride: plan.stride,
                plan_ms: spent.as_secs_f64() * 1e3,
                time_to_go: plan.costs.iter().copied().fold(f64::INFINITY, f64::min),
                failed: plan.failed,
            });
            chosen = Some(plan.stride);
        }
        if plant.t >= boundary - 1e-9 {
            // As the planner's model does at the decision: the stride played in step with
            // the gait's clock, whether it changed or not.
            current = chosen.take().unwrap_or(current);
            current_start = clock.cycle_start(boundary);
            plant.play_from(current, task.planner.frequency, current_start)?;
            decision += 1;
            boundary = clock.decision(decision);
        }
        let next_event = if chosen.is_none() { boundary - task.lead } else { boundary };
        plant.advance_to((plant.t + check_every).min(next_event).min(task.duration))?;
    }
    Ok(GoalRun {
        start,
        goal,
        rates: planner.rates,
        samples,
        statistics,
        reached_at,
        final_distance,
        wall_seconds: wall.elapsed().as_secs_f64(),
        evaluations: plant.evaluations,
    })
}
