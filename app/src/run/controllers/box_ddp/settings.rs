//! The settings of box-DDP model-predictive control (over the actuators' commands, or over a
//! gait's wave), read from the run configuration's `[mpc]` table.

use crate::run::controllers::gait_steering::settings::MpcSettings;
use crate::run::controllers::MpcFile;
use nalgebra::{Vector2, Vector3};

/// Settings of box-DDP model-predictive control (see `softgen_runtime::RecedingHorizon`):
/// the commands' bounds are the safety limits' (thrusts within the thrust limit either way,
/// pressures from 0 to the ceiling).
#[derive(Clone, Debug, PartialEq)]
pub struct DdpMpcSettings {
    /// Where the centre of mass should go (m, world frame); the height, when not given, is
    /// the start's.
    pub goal: Vector2<f64>,
    /// See `goal`.
    pub goal_height: Option<f64>,
    /// Re-planning rate (Hz), and the time (s) past which a plan is dropped for the last
    /// good one.
    pub replan_hz: f64,
    /// See `replan_hz`.
    pub deadline: f64,
    /// Knots over the horizon, the interval of each (s), implicit steps per knot and DDP
    /// iterations per plan.
    pub knots: usize,
    /// See `knots`.
    pub interval: f64,
    /// See `knots`.
    pub substeps: usize,
    /// See `knots`.
    pub iterations: usize,
    /// Running weight (per s) on the squared distance of the centre of mass from the goal.
    pub position_weight: f64,
    /// That weight at the horizon's end.
    pub terminal_position_weight: f64,
    /// Running weight on the squared rates.
    pub velocity_weight: f64,
    /// That weight at the horizon's end.
    pub terminal_velocity_weight: f64,
    /// Weight on the squared commands.
    pub effort_weight: f64,
    /// Weight on the commands' squared change per second.
    pub command_rate_weight: f64,
    /// The heading: from one tracked point to another (names), and its weights.
    pub heading: Option<(String, String)>,
    /// See `heading`: running.
    pub heading_weight: f64,
    /// See `heading`: at the horizon's end.
    pub terminal_heading_weight: f64,
    /// Coordinates (by name) held near their starting values, with their weights.
    pub posture: Vec<(String, f64)>,
    /// Arrival: the centre of mass within this distance (m), held for `hold` s.
    pub arrival_radius: f64,
    /// See `arrival_radius`.
    pub hold: f64,
    /// The contact damping of the planner's model (N s/m) in place of the plant's: a damper
    /// that switches on at touchdown leaves an implicit knot step across it with no
    /// solution.
    pub contact_damping: Option<f64>,
    /// Knots a plan starts after its measurement: the planner predicts the state there
    /// under the commands in effect, and the loop follows the plan before until then.
    pub lead_knots: usize,
    /// The world axes (x, y, z) the goal binds: the cost's position terms and the arrival
    /// distance count only these. A robot that cannot move along an axis (the soft snake
    /// rolls across its body only) leaves it out, or the plan spends its effort against
    /// a drift it cannot undo and the arrival waits for it.
    pub goal_axes: [bool; 3],
    /// For a robot whose joints follow a gait: the plans decide its wave (amplitude,
    /// temporal frequency, offset) within these bounds; None for the actuators' own
    /// commands.
    pub wave: Option<WaveDecisions>,
    /// Newton's iterations in the knots' implicit steps (`RecedingHorizon::set_newton`):
    /// converged once an update is below this tolerance relative to the rates, and whether a
    /// step failing from the Newton matrix an earlier plan left is retried from a fresh one
    /// before it is halved. The runtime's defaults (1e-10, a retry) unless the run
    /// configuration says otherwise; a wave's knots step explicitly and have no Newton.
    pub newton_tolerance: f64,
    /// See `newton_tolerance`.
    pub retry_from_fresh: bool,
    /// The goal's terms weighed as fractions of the distance left: divided by the square of
    /// the goal's distance where each plan starts, not less than the arrival radius
    /// (`softgen_runtime::GoalWeights::distance_scaled`); their weights are then those at
    /// 1 m from the goal.
    pub scale_by_distance: bool,
}

/// Box-DDP's decisions for a robot whose joints follow its spec's gait: the travelling wave's
/// amplitude (rad), temporal frequency (rad/s) and offset (rad), each knot stepped by
/// semi-implicit Euler at `interval / substeps` with the joints' servos tracking the wave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaveDecisions {
    /// The wave's lower bounds: amplitude, temporal frequency, offset.
    pub min: [f64; 3],
    /// Its upper bounds.
    pub max: [f64; 3],
    /// The heading's sign follows the wave's direction of travel, tanh(omega / scale), with
    /// this scale (rad/s), and standing still costs what travelling across the way does (see
    /// `softgen_runtime::GoalWeights::travel_command`). None: the heading is unsigned.
    pub travel_scale: Option<f64>,
    /// Time constant (s) of the lag through which the wave sent follows the plan's
    /// decisions, modelled in the plan (`CommandSchedule::Wave`); 0 sends each plan's wave
    /// at once.
    pub lag: f64,
}

impl Default for DdpMpcSettings {
    /// Tuned on the underwater snake: 100 Hz plans of four 125 ms knots, one real-time
    /// iteration each (about 4 ms of one core).
    fn default() -> Self {
        DdpMpcSettings {
            goal: Vector2::zeros(),
            goal_height: None,
            replan_hz: 100.0,
            deadline: 0.02,
            knots: 4,
            interval: 0.125,
            substeps: 1,
            iterations: 1,
            position_weight: 1.0,
            terminal_position_weight: 50.0,
            velocity_weight: 0.1,
            terminal_velocity_weight: 1.0,
            effort_weight: 1e-3,
            command_rate_weight: 1e-4,
            heading: None,
            heading_weight: 1.0,
            terminal_heading_weight: 10.0,
            posture: Vec::new(),
            arrival_radius: 0.1,
            hold: 2.0,
            contact_damping: None,
            lead_knots: 0,
            goal_axes: [true; 3],
            wave: None,
            newton_tolerance: softgen_runtime::DEFAULT_NEWTON_TOLERANCE,
            retry_from_fresh: true,
            scale_by_distance: false,
        }
    }
}

impl DdpMpcSettings {
    /// For a robot whose joints follow a gait, tuned on the rigid snake on passive wheels
    /// (`mpc-003-goals`): 50 Hz plans of five 0.1 s knots, each 50 semi-implicit steps of
    /// 2 ms, one iteration; the goal in the floor's plane; the sampler's default bounds.
    /// The wave sent follows the plans through a lag of one knot (0.1 s), which the
    /// experiment, planning on the plant's state, does without: with the decisions applied at
    /// once the set points jumped at every plan, the servos rang, and a state estimated from
    /// motion capture and servo readings diverged on two goals of four (2026-12-01: with the
    /// lag all four goals reached on the estimate in one run each, at 0.1 s and at 0.3 s;
    /// 0.1 s reached three of them sooner). The goal's terms are scaled by the distance left
    /// (`scale_by_distance`): with the lag, and plans applied 0, 4 or 10 ms after their
    /// measurement, the plans reached 180 goals of 180 in five sweeps of 36 directions
    /// (examples/wave_goal_sweep.rs), 10.2 to 11.0 s on average, against 174 at 12.7 to
    /// 15.6 s unscaled.
    pub fn wave_default() -> Self {
        let sampler = MpcSettings::default();
        DdpMpcSettings {
            replan_hz: 50.0,
            deadline: 0.04,
            knots: 5,
            interval: 0.1,
            substeps: 50,
            position_weight: 1.0,
            terminal_position_weight: 20.0,
            velocity_weight: 0.0,
            terminal_velocity_weight: 0.0,
            effort_weight: 1e-3,
            command_rate_weight: 10.0,
            heading_weight: 8.0,
            terminal_heading_weight: 80.0,
            hold: 0.0,
            goal_axes: [true, true, false],
            wave: Some(WaveDecisions {
                min: sampler.min.to_array(),
                max: sampler.max.to_array(),
                travel_scale: None,
                lag: 0.1,
            }),
            scale_by_distance: true,
            ..DdpMpcSettings::default()
        }
    }
}

/// Box-DDP's settings from `m`, aimed at `goal` ([x, y] or [x, y, z]), replanning at most at
/// `rate_hz`; `wave`: over a gait's wave, with its own defaults.
pub(crate) fn parse_ddp_mpc(m: &MpcFile, goal: &[f64], rate_hz: f64, wave: bool) -> Result<DdpMpcSettings, String> {
    let d = if wave { DdpMpcSettings::wave_default() } else { DdpMpcSettings::default() };
    let replan_hz = m.replan_hz.unwrap_or(d.replan_hz);
    if !(replan_hz.is_finite() && replan_hz > 0.0 && replan_hz <= rate_hz) {
        return Err(format!("replan_hz must be in (0, rate_hz = {rate_hz}], got {replan_hz}"));
    }
    let heading = m.heading.clone().map(|[from, to]| (from, to));
    if heading.is_none() {
        if let Some(key) =
            [("heading_weight", m.heading_weight), ("terminal_heading_weight", m.terminal_heading_weight)]
                .iter()
                .find_map(|(k, v)| v.map(|_| *k))
        {
            return Err(format!("`{key}` needs `heading = [\"from point\", \"to point\"]`"));
        }
    }
    let settings = DdpMpcSettings {
        goal: Vector2::new(goal[0], goal[1]),
        goal_height: goal.get(2).copied(),
        replan_hz,
        // Two periods: a plan a little late is still the newest.
        deadline: m.deadline.unwrap_or(2.0 / replan_hz),
        knots: m.knots.unwrap_or(d.knots),
        interval: m.interval.unwrap_or(d.interval),
        substeps: m.substeps.unwrap_or(d.substeps),
        iterations: m.iterations.unwrap_or(d.iterations),
        position_weight: m.position_weight.unwrap_or(d.position_weight),
        terminal_position_weight: m.terminal_position_weight.unwrap_or(d.terminal_position_weight),
        velocity_weight: m.velocity_weight.unwrap_or(d.velocity_weight),
        terminal_velocity_weight: m.terminal_velocity_weight.unwrap_or(d.terminal_velocity_weight),
        effort_weight: m.effort_weight.unwrap_or(d.effort_weight),
        command_rate_weight: m.command_rate_weight.unwrap_or(d.command_rate_weight),
        heading_weight: m.heading_weight.unwrap_or(d.heading_weight),
        terminal_heading_weight: m.terminal_heading_weight.unwrap_or(d.terminal_heading_weight),
        heading,
        posture: m.posture.clone().map_or(d.posture, |p| p.into_iter().collect()),
        arrival_radius: m.arrival_radius.unwrap_or(d.arrival_radius),
        hold: m.hold.unwrap_or(d.hold),
        contact_damping: m.contact_damping,
        lead_knots: m.lead_knots.unwrap_or(d.lead_knots),
        goal_axes: match &m.goal_axes {
            None => d.goal_axes,
            Some(names) => goal_axes(names)?,
        },
        wave: d.wave.map(|w| WaveDecisions {
            min: m.min.unwrap_or(w.min),
            max: m.max.unwrap_or(w.max),
            travel_scale: m.travel_scale.or(w.travel_scale),
            lag: m.lag.unwrap_or(w.lag),
        }),
        newton_tolerance: m.newton_tolerance.unwrap_or(d.newton_tolerance),
        retry_from_fresh: m.retry_from_fresh.unwrap_or(d.retry_from_fresh),
        scale_by_distance: m.scale_by_distance.unwrap_or(d.scale_by_distance),
    };
    if let Some(damping) = settings.contact_damping {
        if !(damping.is_finite() && damping >= 0.0) {
            return Err(format!("contact_damping must be finite and >= 0 N s/m, got {damping}"));
        }
    }
    settings.validate()?;
    Ok(settings)
}

/// `goal_axes = ["x", "y", "z"]`: which world axes the goal binds (at least one, each once).
fn goal_axes(names: &[String]) -> Result<[bool; 3], String> {
    let mut axes = [false; 3];
    for name in names {
        let axis = match name.as_str() {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            other => return Err(format!("goal_axes: `{other}` is not an axis: expected \"x\", \"y\" or \"z\"")),
        };
        if axes[axis] {
            return Err(format!("goal_axes: `{name}` is given twice"));
        }
        axes[axis] = true;
    }
    if axes == [false; 3] {
        return Err("goal_axes: give at least one of \"x\", \"y\" and \"z\"".into());
    }
    Ok(axes)
}

impl DdpMpcSettings {
    /// The goal's axes as weights: 1 on an axis the goal binds, 0 elsewhere.
    pub fn goal_axis_weights(&self) -> Vector3<f64> {
        Vector3::from_fn(|i, _| if self.goal_axes[i] { 1.0 } else { 0.0 })
    }

    /// Checks every setting finite and in its range (the rate, the knots and their steps, the
    /// lead, the weights, a wave's scale and lag).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.replan_hz.is_finite() && self.replan_hz > 0.0) {
            return Err(format!("replan_hz must be finite and > 0, got {}", self.replan_hz));
        }
        if !(self.deadline.is_finite() && self.deadline >= 1.0 / self.replan_hz) {
            return Err(format!(
                "deadline must be at least the re-planning period {} s, got {}",
                1.0 / self.replan_hz,
                self.deadline
            ));
        }
        if !(1..=softgen_runtime::MAX_KNOTS).contains(&self.knots) {
            return Err(format!("knots must be in 1..={}, got {}", softgen_runtime::MAX_KNOTS, self.knots));
        }
        if !(1..=100).contains(&self.substeps) {
            return Err(format!("substeps must be in 1..=100, got {}", self.substeps));
        }
        if !(1..=100).contains(&self.iterations) {
            return Err(format!("iterations must be in 1..=100, got {}", self.iterations));
        }
        if self.lead_knots >= self.knots {
            return Err(format!("lead_knots must be fewer than the {} knots, got {}", self.knots, self.lead_knots));
        }
        softgen_runtime::check_newton_tolerance("newton_tolerance", self.newton_tolerance)?;
        if !(self.interval.is_finite() && self.interval > 0.0) {
            return Err(format!("interval must be finite and > 0 s, got {}", self.interval));
        }
        for (name, value) in [
            ("position_weight", self.position_weight),
            ("terminal_position_weight", self.terminal_position_weight),
            ("velocity_weight", self.velocity_weight),
            ("terminal_velocity_weight", self.terminal_velocity_weight),
            ("effort_weight", self.effort_weight),
            ("command_rate_weight", self.command_rate_weight),
            ("heading_weight", self.heading_weight),
            ("terminal_heading_weight", self.terminal_heading_weight),
            ("arrival_radius", self.arrival_radius),
            ("hold", self.hold),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {value}"));
            }
        }
        if self.scale_by_distance && self.arrival_radius <= 0.0 {
            return Err(format!(
                "scale_by_distance divides the goal's terms by the distance left, down to the arrival radius: \
                 arrival_radius must be > 0 m, got {}",
                self.arrival_radius
            ));
        }
        if let Some((name, weight)) = self.posture.iter().find(|(_, w)| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!("posture.{name} must be finite and >= 0, got {weight}"));
        }
        if let Some(wave) = &self.wave {
            let names = ["amplitude", "temporal frequency", "offset"];
            for (i, name) in names.iter().enumerate() {
                let (min, max) = (wave.min[i], wave.max[i]);
                if !(min.is_finite() && max.is_finite() && min <= max) {
                    return Err(format!(
                        "min and max: the {name}'s bounds must be finite with min <= max, got [{min}, {max}]"
                    ));
                }
            }
            if let Some(scale) = wave.travel_scale {
                if !(scale.is_finite() && scale > 0.0) {
                    return Err(format!("travel_scale must be finite and > 0 rad/s, got {scale}"));
                }
            }
            if !(wave.lag.is_finite() && wave.lag >= 0.0) {
                return Err(format!("lag must be finite and >= 0 s, got {}", wave.lag));
            }
        }
        Ok(())
    }
}
