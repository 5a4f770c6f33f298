//! The run's model-predictive controllers. A run configuration's `[mpc]` table is read into
//! one [`PlannerSettings`] in one place ([`parse_planner`]), for the planner its `solver` and the
//! robot's drive choose; each planner is a module of its own holding its settings, their
//! parsing and its run (the planner built, the loop it runs in, its report).

use box_ddp::settings::{parse_ddp_mpc, DdpMpcSettings};
use gait_steering::settings::{parse_mpc, MpcSettings};
use nalgebra::Vector2;
use serde::Deserialize;
use strides::settings::{parse_stride_mpc, StrideMpcSettings};
use toml::Spanned;
use valve_steering::settings::{parse_valve_mpc, ValveMpcSettings};

pub(crate) mod box_ddp;
pub(crate) mod gait_steering;
pub(crate) mod open_loop;
pub(crate) mod steering;
pub(crate) mod strides;
pub(crate) mod valve_steering;
/// Which model-predictive controller plans.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MpcSolver {
    /// Sampling of a serpenoid gait's amplitude, frequency and offset (robots whose joints
    /// follow a gait).
    Sampling,
    /// Box-DDP over the actuators' own commands (robots driven by pressures and thrusts), or
    /// over the travelling wave of a robot whose joints follow a gait.
    Ddp,
    /// A whole gait cycle at a time, chosen from the robot's gaits by rolling each out
    /// (limbed robots driven by muscles whose paper registers its strides).
    Strides,
}

/// Model-predictive control settings: shared, then the gait sampler's (parameter triples
/// are amplitude, temporal frequency, offset), then box-DDP's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MpcFile {
    /// Which planner plans.
    /// Default: by the robot: `ddp` for robots driven by pressures and thrusts, `strides` for
    /// muscle-driven robots whose paper registers strides, `sampling` otherwise.
    solver: Option<MpcSolver>,
    /// [x, y] (m, world frame): where the centre of mass should go; box-DDP also takes [x, y, z]
    /// (without z, the start's height).
    goal: Spanned<Vec<f64>>,
    /// The stride planner's only: how long before each cycle its plan starts (s).
    lead: Option<f64>,
    /// Plans a second, at most `rate_hz`; for strides, the gait's frequency or a whole multiple of
    /// it.
    /// Default: 20 (sampling), 100 (ddp; 50 for a gait's wave), the robot's paper's (strides).
    replan_hz: Option<f64>,
    /// Sampling: the final distance counts (1 + w a / pi) times, a the angle between the body's
    /// direction of travel and the direction to the goal; ddp: the running weight of the heading
    /// (see `heading`).
    /// Default: 2.0 (sampling; a valve robot's 1.0), 1.0 (ddp; a wave's 8).
    heading_weight: Option<f64>,
    /// Arrival: the centre of mass within this distance of the goal (m).
    /// Default: 0.1 (a valve robot's and the strides' 0.05).
    arrival_radius: Option<f64>,
    /// Sampling: the rollouts' length (s).
    /// Default: 1.0.
    horizon: Option<f64>,
    /// Sampling: the rollouts' step (s), semi-implicit Euler (a valve robot's: RK4's longest step,
    /// also ending at every valve switch).
    /// Default: 0.002 (a valve robot's 0.005).
    step: Option<f64>,
    /// Sampling: rollouts per plan, the current plan included.
    /// Default: 32 (a valve robot's 16).
    samples: Option<usize>,
    /// Sampling: the MPPI temperature, relative to the spread of the costs (mean minus best).
    /// Default: 0.3.
    temperature: Option<f64>,
    /// Sampling: the standard deviations of the perturbations of (amplitude rad, temporal frequency
    /// rad/s, offset rad); a valve robot's, required, of (supply pressure in `supply_parameter`'s
    /// unit, frequency Hz, offset).
    /// Default: [0.15, 0.4, 0.15].
    noise: Option<[f64; 3]>,
    /// The decisions' lower bounds, as `noise` (a negative frequency reverses the wave); box-DDP's
    /// over a gait's wave too.
    /// Default: [0.2, -2.5, -0.6].
    min: Option<[f64; 3]>,
    /// The decisions' upper bounds, as `min`.
    /// Default: [1.2, 2.5, 0.6].
    max: Option<[f64; 3]>,
    /// The time constant with which the gait follows a new plan (s); box-DDP over a gait's wave
    /// models it in its plans (0 sends each plan's wave at once).
    /// Default: 0.3 (sampling), 0.1 (a wave's box-DDP).
    lag: Option<f64>,
    /// Sampling: after arrival the gait fades out this long (s), then the run ends.
    /// Default: 1.0.
    settle: Option<f64>,
    /// Sampling: the perturbations' seed.
    /// Default: 1.
    seed: Option<u64>,
    /// Box-DDP: knots over the horizon; knots times commands at most 1024.
    /// Default: 4 (a wave's 5).
    knots: Option<usize>,
    /// Box-DDP: each knot's length (s).
    /// Default: 0.125 (a wave's 0.1).
    interval: Option<f64>,
    /// Box-DDP: implicit Euler steps per knot (a wave's: semi-implicit).
    /// Default: 1 (a wave's 50).
    substeps: Option<usize>,
    /// Box-DDP: DDP iterations per plan (one: real-time iteration).
    /// Default: 1.
    iterations: Option<usize>,
    /// Box-DDP: a plan ready later than this after its measurement (s) is not used; the loop keeps
    /// the last one.
    /// Default: two plan periods (0.02 s at 100 Hz, a wave's 0.04 s).
    deadline: Option<f64>,
    /// Box-DDP: the running weight (per s) on the squared distance of the centre of mass from the
    /// goal.
    /// Default: 1.
    position_weight: Option<f64>,
    /// Box-DDP: that weight at the horizon's end.
    /// Default: 50 (a wave's 20).
    terminal_position_weight: Option<f64>,
    /// Box-DDP: the running weight on the squared rates.
    /// Default: 0.1 (a wave's 0).
    velocity_weight: Option<f64>,
    /// Box-DDP: that weight at the horizon's end.
    /// Default: 1 (a wave's 0).
    terminal_velocity_weight: Option<f64>,
    /// Box-DDP: the weight on the squared commands.
    /// Default: 0.001.
    effort_weight: Option<f64>,
    /// Box-DDP: the weight on the commands' squared change per second.
    /// Default: 0.0001 (a wave's 10).
    command_rate_weight: Option<f64>,
    /// Box-DDP: the heading's weight at the horizon's end.
    /// Default: 10 (a wave's 80).
    terminal_heading_weight: Option<f64>,
    /// Box-DDP: [from point, to point], two of the robot's tracked points whose direction should
    /// face the goal (the heading weights need it).
    /// Default: none.
    heading: Option<[String; 2]>,
    /// Box-DDP: `{ coordinate = weight, ... }`, coordinates held near their starting values, the
    /// weight on the squared difference running (per s) and at the horizon's end (a limbed robot's
    /// `base_roll` and `base_pitch`, so that falling over is not its shortest way to the goal).
    /// Default: none.
    posture: Option<std::collections::BTreeMap<String, f64>>,
    /// The run ends once the centre of mass has stayed within `arrival_radius` this long (s);
    /// box-DDP, a valve robot's sampler and the strides.
    /// Default: 2.0 (a wave's 0: the run ends on arrival).
    hold: Option<f64>,
    /// Box-DDP: the planner's model's contact damping (N s/m): 0 where the contact's damper
    /// switches on at touchdown, which leaves an implicit knot step across it with no solution (the
    /// soft snake's carpet).
    /// Default: the plant's.
    contact_damping: Option<f64>,
    /// Box-DDP: knots a plan starts after its measurement; the planner first steps its model that
    /// far under the commands in effect, which the loop keeps sending until the plan starts.
    /// Default: 0.
    lead_knots: Option<usize>,
    /// Box-DDP: the world axes the goal binds, of `"x"`, `"y"`, `"z"`: the position weights and the
    /// arrival distance count only these (the soft snake's `["y"]`).
    /// Default: ["x", "y", "z"] (a wave's ["x", "y"]).
    goal_axes: Option<Vec<String>>,
    /// Box-DDP over a gait's wave only: the heading is signed by tanh(omega / this) (rad/s), omega
    /// the wave's temporal frequency, and standing still costs what travelling across the way to
    /// the goal does.
    /// Default: none (the heading unsigned).
    travel_scale: Option<f64>,
    /// Box-DDP's implicit knot steps (not a wave's): Newton's iterations stop once an update is
    /// below this relative to the rates (at most 0.01).
    /// Default: 1e-10.
    newton_tolerance: Option<f64>,
    /// Box-DDP's implicit knot steps: a step that fails from the Newton matrix an earlier plan left
    /// is tried once more from a fresh one before it is halved; `false` halves it at once.
    /// Default: `true`.
    retry_from_fresh: Option<bool>,
    /// Box-DDP: the goal's position and heading terms divided by the squared distance to the goal
    /// where each plan starts (not less than the arrival radius), so their weights are those at 1 m
    /// from the goal.
    /// Default: `false` (a wave's `true`).
    scale_by_distance: Option<bool>,
}

impl MpcFile {
    /// Where the goal is in the file.
    pub(crate) fn goal_span(&self) -> std::ops::Range<usize> {
        self.goal.span()
    }

    /// The keys given that belong to the gait sampler, and those that belong to box-DDP.
    fn solver_keys(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let sampling = [
            ("horizon", self.horizon.is_some()),
            ("step", self.step.is_some()),
            ("samples", self.samples.is_some()),
            ("temperature", self.temperature.is_some()),
            ("noise", self.noise.is_some()),
            ("min", self.min.is_some()),
            ("max", self.max.is_some()),
            ("lag", self.lag.is_some()),
            ("settle", self.settle.is_some()),
            ("seed", self.seed.is_some()),
        ];
        let ddp = [
            ("knots", self.knots.is_some()),
            ("interval", self.interval.is_some()),
            ("substeps", self.substeps.is_some()),
            ("iterations", self.iterations.is_some()),
            ("deadline", self.deadline.is_some()),
            ("position_weight", self.position_weight.is_some()),
            ("terminal_position_weight", self.terminal_position_weight.is_some()),
            ("velocity_weight", self.velocity_weight.is_some()),
            ("terminal_velocity_weight", self.terminal_velocity_weight.is_some()),
            ("effort_weight", self.effort_weight.is_some()),
            ("command_rate_weight", self.command_rate_weight.is_some()),
            ("terminal_heading_weight", self.terminal_heading_weight.is_some()),
            ("heading", self.heading.is_some()),
            ("posture", self.posture.is_some()),
            ("hold", self.hold.is_some()),
            ("contact_damping", self.contact_damping.is_some()),
            ("lead_knots", self.lead_knots.is_some()),
            ("goal_axes", self.goal_axes.is_some()),
            ("travel_scale", self.travel_scale.is_some()),
            ("newton_tolerance", self.newton_tolerance.is_some()),
            ("retry_from_fresh", self.retry_from_fresh.is_some()),
            ("scale_by_distance", self.scale_by_distance.is_some()),
        ];
        let given = |keys: &[(&'static str, bool)]| keys.iter().filter(|k| k.1).map(|k| k.0).collect();
        (given(&sampling), given(&ddp))
    }
}

/// What drives a robot, as far as choosing and checking its planner goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RobotDrive {
    /// Pressures or thrusts drive it (box-DDP plans them; the default planner).
    pub continuous: bool,
    /// Valves drive it (the valve sampler steers them).
    pub valved: bool,
    /// Muscles drive it, and no valves or thrusters (the stride planner's robots).
    pub muscles_only: bool,
}

/// Where in the `[mpc]` table a planner's setting is wrong: the table, or its goal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PlannerError {
    /// A setting of the table (the message names it).
    Table(String),
    /// The goal.
    Goal(String),
}

/// The run's planner: the `[mpc]` table read for the planner its `solver` chooses (by
/// default, by the robot's drive), every setting checked.
#[derive(Clone, Debug, PartialEq)]
pub enum PlannerSettings {
    /// MPPI over a serpenoid gait's amplitude, temporal frequency and offset
    /// (`solver = "sampling"` for a robot whose joints follow a gait).
    GaitSampling(MpcSettings),
    /// MPPI over a valve wave's supply pressure, frequency and offset (`solver = "sampling"`
    /// for a valve-driven robot).
    ValveSampling(ValveMpcSettings),
    /// Box-DDP over the actuators' commands, or over a gait's wave (`solver = "ddp"`).
    BoxDdp(DdpMpcSettings),
    /// Whole gait cycles chosen by rolling each out (`solver = "strides"`).
    Strides(StrideMpcSettings),
}

impl PlannerSettings {
    /// What plans, as a run's errors name it.
    pub fn description(&self) -> &'static str {
        match self {
            PlannerSettings::GaitSampling(_) => "the gait sampler",
            PlannerSettings::ValveSampling(_) => "the valve sampler",
            PlannerSettings::BoxDdp(settings) if settings.wave.is_some() => "box-DDP over a gait's wave",
            PlannerSettings::BoxDdp(_) => "box-DDP",
            PlannerSettings::Strides(_) => "the stride planner",
        }
    }

    /// Whether the goal has a height: box-DDP over pressures and thrusts plans in space; the
    /// others plan in the ground plane.
    pub(crate) fn takes_height(&self) -> bool {
        matches!(self, PlannerSettings::BoxDdp(settings) if settings.wave.is_none())
    }

    /// How the command line gives this planner's goal.
    pub(crate) fn goal_form(&self) -> &'static str {
        match self.takes_height() {
            true => "X,Y[,Z]",
            false => "X,Y",
        }
    }

    /// This planner aimed at the command line's goal (`--goal X,Y[,Z]`, `height` its Z) for
    /// `robot`; unchanged without one.
    pub(crate) fn aimed(
        mut self,
        goal: Option<Vector2<f64>>,
        height: Option<f64>,
        robot: &str,
    ) -> Result<PlannerSettings, String> {
        if height.is_some() && !self.takes_height() {
            return Err(match self {
                PlannerSettings::Strides(_) => format!("`{robot}` walks on the ground: give --goal X,Y"),
                _ => format!("`{robot}` moves in the plane: give --goal X,Y"),
            });
        }
        let Some(goal) = goal else { return Ok(self) };
        match &mut self {
            PlannerSettings::GaitSampling(settings) => settings.goal = goal,
            PlannerSettings::ValveSampling(settings) => settings.goal = goal,
            PlannerSettings::Strides(settings) => settings.goal = goal,
            PlannerSettings::BoxDdp(settings) => {
                settings.goal = goal;
                settings.goal_height = height;
            }
        }
        Ok(self)
    }
}

/// The planner `table` sets for `robot`, driven as `drive` says, in a loop at `rate_hz`.
pub(crate) fn parse_planner(
    table: &MpcFile,
    robot: &str,
    drive: RobotDrive,
    rate_hz: f64,
) -> Result<PlannerSettings, PlannerError> {
    let at = PlannerError::Table;
    let goal = table.goal.get_ref();
    let goal_at = PlannerError::Goal;
    if !(2..=3).contains(&goal.len()) || goal.iter().any(|g| !g.is_finite()) {
        return Err(goal_at(format!(
            "must be [x, y] or [x, y, z] in metres, finite, got {} values {goal:?}",
            goal.len()
        )));
    }
    let (sampling_keys, ddp_keys) = table.solver_keys();
    let solver = table.solver.unwrap_or(if drive.continuous { MpcSolver::Ddp } else { MpcSolver::Sampling });
    if table.lead.is_some() && solver != MpcSolver::Strides {
        return Err(at("`lead` is a setting of the stride planner (solver = \"strides\") only".into()));
    }
    Ok(match solver {
        MpcSolver::Strides => {
            if !drive.muscles_only {
                return Err(at(format!("solver = \"strides\" chooses a limbed robot's gait cycles; `{robot}` is not driven by muscles alone")));
            }
            let allowed = ["hold"];
            let key = sampling_keys.iter().chain(ddp_keys.iter()).find(|k| !allowed.contains(*k));
            if let Some(key) = key.or(table.heading_weight.map(|_| &"heading_weight")) {
                return Err(at(format!(
                    "`{key}` is not a setting of the stride planner (goal, arrival_radius, hold, replan_hz, lead)"
                )));
            }
            if goal.len() == 3 {
                return Err(goal_at(format!("`{robot}` walks on the ground: give [x, y]")));
            }
            PlannerSettings::Strides(parse_stride_mpc(table, Vector2::new(goal[0], goal[1])).map_err(at)?)
        }
        MpcSolver::Sampling if drive.valved => {
            // The gait's lag and settling do not apply; of box-DDP's, only the hold.
            let foreign = sampling_keys.iter().filter(|k| ["lag", "settle"].contains(*k));
            if let Some(key) = foreign.chain(ddp_keys.iter().filter(|k| **k != "hold")).next() {
                return Err(at(format!("`{key}` is not a setting of the valve sampler")));
            }
            if goal.len() == 3 {
                return Err(goal_at(format!("`{robot}` moves in the plane: give [x, y]")));
            }
            PlannerSettings::ValveSampling(parse_valve_mpc(table, Vector2::new(goal[0], goal[1]), rate_hz).map_err(at)?)
        }
        MpcSolver::Ddp if drive.valved => {
            return Err(at(format!("solver = \"ddp\" plans pressures and thrusts; `{robot}`'s valves only open and shut, which solver = \"sampling\" steers")));
        }
        MpcSolver::Sampling => {
            if drive.continuous {
                return Err(at(format!("solver = \"sampling\" steers a serpenoid gait; `{robot}` is driven by pressures or thrusts, which solver = \"ddp\" plans")));
            }
            if let Some(key) = ddp_keys.first() {
                return Err(at(format!("`{key}` is a setting of box-DDP (solver = \"ddp\"), not of the gait sampler")));
            }
            if goal.len() == 3 {
                return Err(goal_at(format!("`{robot}` moves in the plane: give [x, y]")));
            }
            PlannerSettings::GaitSampling(parse_mpc(table, Vector2::new(goal[0], goal[1]), rate_hz).map_err(at)?)
        }
        MpcSolver::Ddp => {
            // A robot whose joints follow a gait: box-DDP decides the gait's wave,
            // whose bounds are `min` and `max` and whose lag is `lag`, as the sampler's.
            let wave_keys = ["min", "max", "lag"];
            let foreign = sampling_keys.iter().find(|k| drive.continuous || !wave_keys.contains(*k));
            if let Some(key) = foreign {
                return Err(at(format!(
                    "`{key}` is a setting of the gait sampler (solver = \"sampling\"), not of box-DDP"
                )));
            }
            if drive.continuous && table.travel_scale.is_some() {
                return Err(at(format!("`travel_scale` signs the heading of a gait's wave; `{robot}` is driven by pressures or thrusts, which have none")));
            }
            let newton = ddp_keys.iter().find(|k| ["newton_tolerance", "retry_from_fresh"].contains(*k));
            if let (false, Some(key)) = (drive.continuous, newton) {
                return Err(at(format!("`{key}` sets Newton's iterations in implicit knot steps; the knots of `{robot}`'s wave step by semi-implicit Euler, without them")));
            }
            if !drive.continuous && goal.len() == 3 {
                return Err(goal_at(format!("`{robot}` moves in the plane: give [x, y]")));
            }
            PlannerSettings::BoxDdp(parse_ddp_mpc(table, goal, rate_hz, !drive.continuous).map_err(at)?)
        }
    })
}
