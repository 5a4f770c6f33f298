//! Box-DDP model-predictive control: over the actuators' commands (pressures and thrusts),
//! or over the wave of a gait the joints follow.

use crate::run::config::RunConfig;
use crate::run::controllers::steering::SteeredTask;
use crate::run::driver::ScheduledMpc;
use crate::run::request::{RunReport, StateSource};
use crate::run::sensing::Sensing;
use crate::run::session::{
    actuators, configured_params, dry_run, loop_config, no_servo, planned_inputs, plant_inputs,
    plant_simulation_config, print_estimator, print_header, simulated_plant, state_estimator, try_realtime, Run,
};
use nalgebra::{SVector, Vector3};
use settings::DdpMpcSettings;
use softgen_runtime::{
    run_horizon_planner, run_scheduled_planner, ActuatorCommand, CommandPlan, CommandSchedule, CommandSnapshot,
    ControlInput, DdpSettings, GoalWeights, HorizonSettings, KnotIntegrator, LoopConfig, Model, OutputChain,
    PlanFollower, PlanLink, PlaneOfMotion, RecedingHorizon, Serpenoid, SimulatedPlant, Simulation, SimulationConfig,
    State, Steering, SteeringPhase, SteeringProgress, MAX_SCHEDULE_STATES,
};
use std::sync::Arc;

pub(crate) mod settings;

impl Run<'_> {
    /// Box-DDP model-predictive control of a robot driven by pressures and thrusts (muscles,
    /// then thrusters, the actuators' order), or with `wave`, of a robot whose servo joints
    /// follow its gait's travelling wave, whose parameters the plans decide: the planner
    /// re-plans over the same model in its own thread, the loop follows the newest plan on
    /// the simulated plant. The plant is stepped by RK4 at the loop's period or
    /// `plant_step`, whichever is shorter.
    pub(crate) fn run_horizon_mpc<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: DdpMpcSettings,
        plant_step: f64,
        wave: Option<ScheduledMpc>,
    ) -> Result<RunReport, String> {
        let o = self.options;
        // On the robot the state can only be estimated.
        let on_robot = o.on_robot();
        let (muscles, thrusters) = (R::MUSCLES.len(), R::THRUSTERS.len());
        let (joints, servo) = planned_joints::<R, N, C>(wave.is_some())?;
        let scheduled = match (wave, self.driver.and_then(|d| d.scheduled_mpc)) {
            (Some(wave), _) => Some(wave),
            (None, Some(make)) => Some(make()?),
            (None, None) => None,
        };
        let loop_config = loop_config(o, &config)?;
        let plant_config = plant_simulation_config::<R, N, C>(&config, &loop_config, servo);
        let params = configured_params::<R, N, C>(&config)?;
        let start = State::<N>::new(SVector::from_iterator(R::INITIAL_POSITION.iter().copied()), SVector::zeros());
        let start_com = R::center_of_mass(&start.q, &params, &R::cache(&start.q, &params));
        let goal = Vector3::new(settings.goal.x, settings.goal.y, settings.goal_height.unwrap_or(start_com.z));
        let estimated = on_robot || o.state == StateSource::Estimated;
        let (sensors, sources, filter) = match estimated {
            true => {
                let (sensors, sources, filter) = state_estimator::<R, N, C>(&config, &path, &loop_config, on_robot)?;
                (sensors, sources, Some(filter))
            }
            false => (Vec::new(), Vec::new(), None),
        };
        let mut planner = horizon_planner::<R, N, C>(
            &config,
            &settings,
            goal,
            params.clone(),
            plant_config.clone(),
            scheduled.as_ref(),
        )
        .map_err(|e| format!("{path}: mpc: {e}"))?;
        // A scheduled plan's decisions become each muscle's pressure through the schedule's
        // forces on the muscles' own coordinates (a wave's, the joints' set points).
        let muscle_forces = match &scheduled {
            Some(_) if joints == 0 => Some(muscle_force_map::<R, N, C>(&params)?),
            _ => None,
        };
        let initial: Vec<f64> = planner.command_at(0.0).iter().copied().collect();
        let follower = PlanFollower::<R, N, C>::new(params, goal, settings.arrival_radius, settings.hold, &initial)?
            .with_goal_axes(settings.goal_axes);
        let mut chain = OutputChain::new(config.channels.clone(), config.safety)?;
        let actuators: Vec<&str> = actuators::<R, N, C>().iter().map(|a| a.0).collect();
        let controller_line = controller_line(&settings, &start_com, &goal, scheduled.as_ref());
        print_header(R::NAME, &path, &loop_config, &controller_line, &config.channels, &actuators);
        if let Some(filter) = &filter {
            print_estimator(&sensors, filter.step(), on_robot);
        }
        let to_commands =
            move |values: &[f64], commands: &mut [ActuatorCommand]| planned_commands(values, commands, joints, muscles);
        let period = 1.0 / loop_config.rate_hz;
        let scheduled_commands =
            ScheduledCommands::<N> { scheduled: scheduled.as_ref(), muscle_forces, joints, forces: SVector::zeros() };
        if o.dry_run {
            return scheduled_commands.dry_run(&mut chain, period, &initial, to_commands);
        }
        if o.realtime {
            try_realtime();
        }
        let link = Arc::new(PlanLink::<N>::new());
        let measured = Arc::clone(&link);
        let estimation = filter.map(|filter| (sensors, sources, filter));
        let plant = || wired_planned_plant::<R, N, C>(&config, &loop_config, (servo, plant_step), joints, &path);
        let (device, mut sensing) =
            Sensing::new(o, &config, &path, estimation, joints + muscles + thrusters, plant, move |t, x| {
                measured.measured.try_post((t, *x));
            })?;
        if joints > 0 {
            // A wave's first set points lie anywhere on it; moved to from the starting pose
            // at the joints' rate limit, they do not slam the servos (a step of 1.1 rad rang
            // through the joint, 0.5 rad past its set point, faster than the estimator's
            // implicit steps follow).
            sensing.start_servos_from_rest(&mut chain);
        }
        let link = &*link;
        let settle = scheduled.as_ref().map_or(0.0, |s| s.settle);
        // The estimate is scored over the task, from the plan's start.
        sensing.score_from(settle);
        let mut followed = FollowedPlan {
            follower,
            commands: scheduled_commands,
            muscles,
            settle,
            period,
            count: initial.len(),
            values: [0.0; softgen_runtime::MAX_PLANNED_COMMANDS],
            states: scheduled.as_ref().map_or(0, |s| s.schedule.states()),
            schedule_state: [0.0; MAX_SCHEDULE_STATES],
            sent_state: [0.0; MAX_SCHEDULE_STATES],
        };
        let plan = || match scheduled.is_some() {
            true => run_scheduled_planner(&mut planner, link, settings.replan_hz),
            false => run_horizon_planner(&mut planner, link, settings.replan_hz),
        };
        let start_distance = followed.follower.distance_of(&start_com);
        let task = SteeredTask { goal: settings.goal, goal_height: Some(goal.z), start_distance };
        let steered = self.steer(&loop_config, &mut chain, (device, sensing), link, plan, &mut followed, task)?;
        print_plant_base::<R, N, C>(steered.end.as_ref());
        Ok(steered.report())
    }
}

/// A schedule's commands for its decisions and state: the muscles' pressures through the
/// schedule's forces on the muscles' own coordinates, or a wave's joint set points.
struct ScheduledCommands<'a, const N: usize> {
    /// The schedule, if the plans decide one.
    scheduled: Option<&'a ScheduledMpc>,
    /// Each muscle's coordinate and its force per bar, for a schedule of forces.
    muscle_forces: Option<Vec<(usize, f64)>>,
    /// The planned servo joints (a wave's).
    joints: usize,
    /// The schedule's output.
    forces: SVector<f64, N>,
}

impl<const N: usize> ScheduledCommands<'_, N> {
    /// The commands of `decisions` from the schedule's `state`.
    fn write(&mut self, state: &[f64], decisions: &[f64], commands: &mut [ActuatorCommand]) {
        match (self.scheduled, &self.muscle_forces) {
            (Some(s), Some(map)) => {
                s.schedule.commands_into(state, decisions, self.forces.as_mut_slice());
                for (command, (coordinate, newtons_per_bar)) in commands.iter_mut().zip(map) {
                    *command = ActuatorCommand::Pressure(self.forces[*coordinate] / newtons_per_bar);
                }
            }
            (Some(s), None) => {
                let angles = &mut self.forces.as_mut_slice()[..self.joints];
                s.schedule.commands_into(state, decisions, angles);
                for (command, angle) in commands.iter_mut().zip(angles.iter()) {
                    *command = ActuatorCommand::JointAngle(*angle);
                }
            }
            (None, _) => {}
        }
    }

    /// A dry run: the mpc controller needs the plant's state, so the commands printed are
    /// those of the resting decisions (`initial`), through the schedule or, without one,
    /// `to_commands`.
    fn dry_run(
        mut self,
        chain: &mut OutputChain,
        period: f64,
        initial: &[f64],
        to_commands: impl Fn(&[f64], &mut [ActuatorCommand]),
    ) -> Result<RunReport, String> {
        let (what, rest) = match self.scheduled {
            Some(_) => ("the commands of the resting decisions", ActuatorCommand::Pressure(0.0)),
            None => ("the commands before the first plan", ActuatorCommand::Thrust(0.0)),
        };
        println!("dry run: the mpc controller needs the plant's state, so these are {what}");
        let scheduled = self.scheduled.is_some();
        let mut controller = |_t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
            match scheduled {
                true => self.write(&[0.0], initial, commands),
                false => to_commands(initial, commands),
            }
            Ok(())
        };
        dry_run(chain, &mut controller, &[0.0, period], period, rest)
    }
}

/// Box-DDP's plan following with what turns its plans into commands: the controller the
/// loop drives.
struct FollowedPlan<'a, R: Model<N, C>, const N: usize, const C: usize> {
    follower: PlanFollower<R, N, C>,
    /// The schedule the plans decide, if they decide one, and its commands.
    commands: ScheduledCommands<'a, N>,
    /// The planned muscles (the commands after the planned joints).
    muscles: usize,
    /// When a scheduled plan starts: the drop before it, every muscle vented (s).
    settle: f64,
    /// The loop's period (s).
    period: f64,
    /// This period's planned commands (or decisions), `count` of them.
    values: [f64; softgen_runtime::MAX_PLANNED_COMMANDS],
    count: usize,
    /// A scheduled plan's state (the bending plane's phase) at this period and at the last
    /// one, whose measurement the follower hands to the planner: `states` of each.
    schedule_state: [f64; MAX_SCHEDULE_STATES],
    sent_state: [f64; MAX_SCHEDULE_STATES],
    states: usize,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Steering<N> for FollowedPlan<'_, R, N, C> {
    type Snapshot = CommandSnapshot<N>;
    type Plan = CommandPlan;

    fn command(
        &mut self,
        link: &PlanLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        let (count, states) = (self.count, self.states);
        let Some(schedule) = self.commands.scheduled.map(|s| s.schedule) else {
            let phase = self.follower.command(link, t, &mut self.values[..count])?;
            planned_commands(&self.values[..count], commands, self.commands.joints, self.muscles);
            return Ok(phase);
        };
        if t < self.settle - 1e-9 {
            // The drop: every muscle vented, nothing for the planner yet (a wave settles for
            // no time).
            commands.iter_mut().for_each(|c| *c = ActuatorCommand::Pressure(0.0));
            return Ok(self.follower.phase);
        }
        self.follower.set_schedule_state(&self.sent_state[..states])?;
        let phase = self.follower.command(link, t, &mut self.values[..count])?;
        self.commands.write(&self.schedule_state[..states], &self.values[..count], commands);
        self.sent_state = self.schedule_state;
        schedule.advance(&mut self.schedule_state[..states], &self.values[..count], self.period);
        Ok(phase)
    }

    /// The last safe commands held, as the plan's commands.
    fn hold(&self, held: &[f64], commands: &mut [ActuatorCommand]) {
        planned_commands(held, commands, self.commands.joints, self.muscles);
    }

    fn progress(&self) -> SteeringProgress {
        let follower = &self.follower;
        SteeringProgress { phase: follower.phase, distance: follower.distance, plans_applied: follower.plans_applied }
    }
}

/// The servo joints box-DDP plans (a gait's wave's, or none: a robot with servo joints
/// besides its muscles and thrusters is refused) and the servo they follow.
fn planned_joints<R: Model<N, C>, const N: usize, const C: usize>(
    wave: bool,
) -> Result<(usize, softgen_runtime::JointPd), String> {
    match wave {
        true => {
            Ok((R::ACTUATED.len(), R::GAIT.ok_or_else(|| format!("`{}` declares no gait to plan", R::NAME))?.servo()))
        }
        false if R::ACTUATED.is_empty() => Ok((0, no_servo())),
        false => Err(format!(
            "`{}` has servo joints besides its muscles and thrusters, which box-DDP does not plan",
            R::NAME
        )),
    }
}

/// The run's header line: box-DDP's start, goal, horizon and rate, and what a schedule decides.
fn controller_line(
    settings: &DdpMpcSettings,
    start_com: &Vector3<f64>,
    goal: &Vector3<f64>,
    scheduled: Option<&ScheduledMpc>,
) -> String {
    let decided = match scheduled {
        Some(s) if s.settle > 0.0 => format!("; deciding {}, after {} s at 0 bar", s.description, s.settle),
        Some(s) => format!("; deciding {}", s.description),
        None => String::new(),
    };
    let bound: String = ["x", "y", "z"].iter().zip(settings.goal_axes).filter(|a| a.1).map(|a| *a.0).collect();
    let along = if bound.len() < 3 { format!(" along {bound} only") } else { String::new() };
    format!(
        "mpc: box-DDP from ({:.3}, {:.3}, {:.3}) to ({:.3}, {:.3}, {:.3}) m (centre of mass){along}, {} knots of {} s, {} iteration(s) a plan every {} ms ({} Hz){decided}",
        start_com.x,
        start_com.y,
        start_com.z,
        goal.x,
        goal.y,
        goal.z,
        settings.knots,
        settings.interval,
        settings.iterations,
        1e3 / settings.replan_hz,
        settings.replan_hz
    )
}

/// A plan's values as the actuators' commands: the joints' set points, or the muscles'
/// pressures (the first `muscles` values) then the thrusts.
fn planned_commands(values: &[f64], commands: &mut [ActuatorCommand], joints: usize, muscles: usize) {
    for (j, (c, v)) in commands.iter_mut().zip(values).enumerate() {
        *c = match j {
            _ if joints > 0 => ActuatorCommand::JointAngle(*v),
            _ if j < muscles => ActuatorCommand::Pressure(*v),
            _ => ActuatorCommand::Thrust(*v),
        };
    }
}

/// Hardware in the loop: the simulated plant with `servo` on its joints, stepped at most
/// `plant_step`; without planned joints, its regulators' voltages become the muscles'
/// pressures and its thruster channels' values the thrusts.
fn wired_planned_plant<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    loop_config: &LoopConfig,
    (servo, plant_step): (softgen_runtime::JointPd, f64),
    joints: usize,
    path: &str,
) -> Result<SimulatedPlant<R, N, C>, String> {
    let (_, mut plant) = simulated_plant::<R, N, C>(config, loop_config, servo, plant_step)?;
    if joints == 0 {
        let (muscles, thrusters) = (R::MUSCLES.len(), R::THRUSTERS.len());
        let actuators: Vec<&str> = actuators::<R, N, C>().iter().map(|a| a.0).collect();
        let (regulators, thruster_channels) = plant_inputs(&config.channels, 0, muscles, &actuators, path)?;
        debug_assert_eq!(regulators.len() + thruster_channels.len(), muscles + thrusters);
        plant.connect_muscles(&regulators).map_err(|e| e.0)?;
        plant.connect_thrusters(&thruster_channels).map_err(|e| e.0)?;
    }
    Ok(plant)
}

/// The plant's base at the run's end (a robot in the horizontal plane has its heading third).
fn print_plant_base<R: Model<N, C>, const N: usize, const C: usize>(end: Option<&SVector<f64, N>>) {
    match end.map(|q| (q[0], q[1], q[2])) {
        Some((x, y, _)) if R::PLANE == PlaneOfMotion::Xy => println!("plant       base at ({x:.3}, {y:.3}) m"),
        Some((x, y, z)) => println!("plant       base at ({x:.3}, {y:.3}, {z:.3}) m"),
        None => {}
    }
}

fn horizon_planner<R: Model<N, C>, const N: usize, const C: usize>(
    config: &RunConfig,
    settings: &DdpMpcSettings,
    goal: Vector3<f64>,
    params: R::Params,
    mut plant_config: SimulationConfig,
    scheduled: Option<&ScheduledMpc>,
) -> Result<RecedingHorizon<R, N, C>, String> {
    let (muscles, thrusters) = (R::MUSCLES.len(), R::THRUSTERS.len());
    let inputs = planned_inputs::<R, N, C>();
    // A plan carries its decisions: a schedule's, or each muscle's and thruster's command.
    let decided = scheduled.map_or(muscles + thrusters, |s| s.schedule.decisions());
    softgen_runtime::check_plan_fits(settings.knots, decided)?;
    let mut lower = vec![0.0; muscles];
    let mut upper = vec![config.safety.pressure_ceiling; muscles];
    for channel in &config.channels[muscles..] {
        let rating = match channel {
            softgen_runtime::Channel::Thruster { max_thrust, .. } => *max_thrust,
            _ => f64::INFINITY,
        };
        let limit = config.safety.thrust_limit.min(rating);
        lower.push(-limit);
        upper.push(limit);
    }
    let heading_points = match &settings.heading {
        None => None,
        Some((from, to)) => {
            let index = |name: &str| {
                R::CONTACT_POINTS.iter().position(|p| p.name == name).ok_or_else(|| {
                    let names: Vec<&str> = R::CONTACT_POINTS.iter().map(|p| p.name).collect();
                    format!(
                        "heading: `{name}` is not a tracked point of `{}` (points: {})",
                        R::NAME,
                        crate::run::config::listed(&names)
                    )
                })
            };
            Some((index(from)?, index(to)?))
        }
    };
    let mut posture = Vec::new();
    for (name, weight) in &settings.posture {
        let i = R::COORDINATES.iter().position(|c| c.name == name).ok_or_else(|| {
            let names: Vec<&str> = R::COORDINATES.iter().map(|c| c.name).collect();
            format!("posture: `{name}` is not a coordinate of `{}` (coordinates: {})", R::NAME, names.join(", "))
        })?;
        posture.push((i, R::INITIAL_POSITION[i], *weight));
    }
    let weights = GoalWeights {
        goal,
        posture,
        position: settings.goal_axis_weights() * settings.position_weight,
        terminal_position: settings.goal_axis_weights() * settings.terminal_position_weight,
        rate: settings.velocity_weight,
        terminal_rate: settings.terminal_velocity_weight,
        effort: settings.effort_weight,
        command_rate: settings.command_rate_weight,
        rest: vec![0.0; muscles + thrusters],
        heading_points,
        // A wave's heading is signed by its direction of travel, its temporal frequency
        // being the second decision.
        travel_command: settings.wave.and_then(|w| w.travel_scale).map(|scale| (1, scale)),
        heading: if heading_points.is_some() { settings.heading_weight } else { 0.0 },
        terminal_heading: if heading_points.is_some() { settings.terminal_heading_weight } else { 0.0 },
        distance_scaled: settings.scale_by_distance.then_some(settings.arrival_radius),
    };
    let horizon = HorizonSettings {
        knots: settings.knots,
        interval: settings.interval,
        substeps: settings.substeps,
        iterations: settings.iterations,
        period: 1.0 / settings.replan_hz,
        deadline: Some(settings.deadline),
        lower,
        upper,
    };
    if let Some(damping) = settings.contact_damping {
        plant_config.contact.damping = damping;
    }
    let simulation = Simulation::<R, N, C>::new(params, plant_config)?;
    // A real-time iteration tries few steps: a plan that finds none keeps the last one.
    let ddp = DdpSettings { line_search_steps: 4, ..DdpSettings::default() };
    let mut planner = match scheduled {
        None => RecedingHorizon::new(simulation, &inputs, horizon, weights, ddp)?,
        Some(s) => {
            let horizon = HorizonSettings { lower: s.lower.clone(), upper: s.upper.clone(), ..horizon };
            let weights = GoalWeights { rest: s.rest.clone(), ..weights };
            // A wave sets the servos' targets, and its knots step as the sampler's rollouts
            // do: the wheels' regularised friction needs steps of a few milliseconds anyway,
            // and an explicit step takes one Jacobian where Newton's takes several.
            let input = match settings.wave {
                Some(_) => ControlInput::JointTargets,
                None => ControlInput::ActuatorForces,
            };
            let mut planner = RecedingHorizon::scheduled(simulation, &[input], s.schedule, horizon, weights, ddp)?;
            if settings.wave.is_some() {
                planner.set_knot_integrator(KnotIntegrator::SemiImplicitEuler);
            }
            planner
        }
    };
    planner.lead_knots = settings.lead_knots;
    planner.set_newton(settings.newton_tolerance, settings.retry_from_fresh)?;
    Ok(planner)
}

/// Each muscle's coordinate and its force per bar (N): the coordinate its length is (its
/// gradient a unit vector), where a schedule's forces on the muscles are read back as
/// pressures.
fn muscle_force_map<R: Model<N, C>, const N: usize, const C: usize>(
    params: &R::Params,
) -> Result<Vec<(usize, f64)>, String> {
    (0..R::MUSCLES.len())
        .map(|m| {
            let info = &R::MUSCLES[m];
            let muscle = R::muscle(m, params).ok_or_else(|| format!("muscle `{}` has no values", info.name))?;
            let own = (0..info.coordinates).filter(|&k| muscle.gradient[k] != 0.0).collect::<Vec<_>>();
            match own.as_slice() {
                [k] if muscle.gradient[*k] == 1.0 => Ok((info.first_coordinate + k, muscle.area * 1e5)),
                _ => Err(format!(
                    "muscle `{}` is not one length coordinate of its section (gradient {:?}): a schedule's forces cannot be read back as its pressure",
                    info.name, muscle.gradient
                )),
            }
        })
        .collect()
}

impl Run<'_> {
    /// Box-DDP deciding the wave of `gait` for a robot whose joints follow a serpenoid gait.
    pub(crate) fn run_gait_wave_mpc<R: Model<N, C>, const N: usize, const C: usize>(
        self,
        config: RunConfig,
        path: String,
        settings: DdpMpcSettings,
        gait: Serpenoid,
    ) -> Result<RunReport, String> {
        let wave = gait_wave::<R, N, C>(&path, &settings, &gait)?;
        self.run_horizon_mpc::<R, N, C>(config, path, settings, 0.001, Some(wave))
    }
}

/// The schedule of box-DDP deciding the wave of `gait` (a robot whose joints follow a
/// serpenoid gait): its amplitude, temporal frequency and offset within the bounds in
/// `settings`, its spatial frequency kept.
fn gait_wave<R: Model<N, C>, const N: usize, const C: usize>(
    path: &str,
    settings: &DdpMpcSettings,
    gait: &Serpenoid,
) -> Result<ScheduledMpc, String> {
    let bounds = settings.wave.ok_or_else(|| format!("{path}: mpc: box-DDP plans `{}`'s gait's wave", R::NAME))?;
    Ok(ScheduledMpc {
        schedule: CommandSchedule::Wave {
            joints: R::ACTUATED.len(),
            spatial_frequency: gait.spatial_frequency,
            lag: bounds.lag,
        },
        lower: bounds.min.to_vec(),
        upper: bounds.max.to_vec(),
        rest: vec![gait.amplitude, gait.temporal_frequency, gait.offset],
        settle: 0.0,
        description: match bounds.lag {
            0.0 => "the gait's amplitude, temporal frequency and offset".into(),
            lag => format!("the gait's amplitude, temporal frequency and offset, sent through a {lag} s lag"),
        },
    })
}
