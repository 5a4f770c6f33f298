//! Valve-driven robots through the fixed-rate loop: the simulated plant that reads valve
//! lines and the supply regulator as a robot's pneumatics would, and the in-loop half of
//! valve steering (the newest valve plan into valve states and a supply pressure, the
//! measured state handed to the planner without ever waiting).

use crate::estimation::emulated::EmulatedSensors;
use crate::hardware::actuation::{ActuatorCommand, DeviceValue, PressureMap};
use crate::hardware::device::{Device, DeviceError, EmulatingPlant};
use crate::hardware::steering::{
    arrival_phase, new_measurement, run_planning_thread, PlannerStats, PlanningStep, Steering, SteeringLink,
    SteeringPhase, SteeringProgress,
};
use crate::optimal_control::valve_sampling::{ValvePlan, ValvePlanner, ValveSnapshot};
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::closed_loop::Simulation;
use crate::simulation::prescribed::PrescribedSimulation;
use crate::simulation::valve_driven::{SteeredValveWave, ValveDecisions, ValveDriven, ValveGains, MAX_VALVES};
use crate::{Integrator, RungeKutta4};
use nalgebra::Vector2;

/// What the loop and the valve planner exchange.
pub type ValveLink<const N: usize> = SteeringLink<N, ValveSnapshot<N>, ValvePlan>;

/// How the simulated plant reads a valve robot's outputs: each valve pair's digital line
/// (in `Model::VALVES` order; `active_high`: a high line is state +1) and the supply
/// regulator's analog channel, its map and the supply parameter's units per bar.
#[derive(Clone, Debug, PartialEq)]
pub struct ValveWiring {
    /// Each valve pair's line and whether it is active high.
    pub lines: Vec<(u16, bool)>,
    /// The supply regulator's analog channel.
    pub supply_channel: u16,
    /// The regulator's pressure-to-volts map.
    pub supply_map: PressureMap,
    /// The supply parameter's units per bar.
    pub units_per_bar: f64,
}

/// Hardware in the loop for a valve-driven robot: the generated model with its valves'
/// coordinates prescribed by their responses, stepped by RK4 in step with the commands.
/// Each valve pair's digital line sets its state (+1 or -1), the supply regulator's voltage
/// the supply pressure, which scales every valve's response as the spec's gain says. A
/// supply below the pressure where that gain reaches zero bends no segment (the gain, linear
/// in the supply, would change sign there, which no chamber does): the vented supply of
/// the safe state leaves the segments to relax.
pub struct ValvePlant<R: Model<N, C>, const N: usize, const C: usize> {
    /// The robot with its valve-driven coordinates prescribed.
    pub system: PrescribedSimulation<R, N, C>,
    /// The state at `time`, the driven coordinates exact.
    pub state: State<N>,
    /// The plant's time (s).
    pub time: f64,
    gains: ValveGains<R, N, C>,
    integrator: RungeKutta4,
    wiring: ValveWiring,
    states: [f64; MAX_VALVES],
    /// The supply pressure in the spec parameter's unit.
    pressure: f64,
    commands: [f64; MAX_VALVES],
    observer: Option<Box<dyn FnMut(f64, &State<N>) + Send>>,
    /// Sensors read from the true state at their own times within each period.
    sensors: Option<EmulatedSensors<R, N, C>>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValvePlant<R, N, C> {
    /// `simulation` from `start` at t = 0, RK4 steps of at most `step` s, the supply
    /// pressure being the spec's parameter `supply_parameter`.
    pub fn new(
        simulation: Simulation<R, N, C>,
        start: State<N>,
        step: f64,
        supply_parameter: &str,
        wiring: ValveWiring,
    ) -> Result<Self, String> {
        let valves = R::VALVES.len();
        if wiring.lines.len() != valves {
            return Err(format!("{} valve lines for the {valves} valves of `{}`", wiring.lines.len(), R::NAME));
        }
        if !(wiring.units_per_bar.is_finite() && wiring.units_per_bar > 0.0) {
            return Err(format!("the supply parameter's units per bar must be > 0, got {}", wiring.units_per_bar));
        }
        let gains = ValveGains::new(&simulation.params, supply_parameter)?;
        let system = ValveDriven::prescribed(simulation, 0.0, &start)?;
        let integrator = RungeKutta4::new(step).map_err(|e| e.to_string())?;
        Ok(ValvePlant {
            system,
            state: start,
            time: 0.0,
            gains,
            integrator,
            wiring,
            states: [0.0; MAX_VALVES],
            pressure: 0.0,
            commands: [0.0; MAX_VALVES],
            observer: None,
            sensors: None,
        })
    }

    /// Calls `observer` with (t, state) after every period: where the trajectory is recorded
    /// and the measured state published.
    pub fn observe(&mut self, observer: Box<dyn FnMut(f64, &State<N>) + Send>) {
        self.observer = Some(observer);
    }

    /// The supply pressure now, in the spec parameter's unit.
    pub fn supply_pressure(&self) -> f64 {
        self.pressure
    }

    /// Each valve pair's state now (+1, -1; 0 before the first period).
    pub fn valve_states(&self) -> &[f64] {
        &self.states[..R::VALVES.len()]
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> Device for ValvePlant<R, N, C> {
    fn name(&self) -> &str {
        "simulated plant"
    }

    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        // The commands of period k act from t_k on: first bring the plant up to t_k under
        // the previous ones (held), then apply the new ones.
        if t > self.time {
            if let Some(sensors) = &mut self.sensors {
                while let Some(frame) = sensors.next_sample(t) {
                    if frame > self.time {
                        self.integrator
                            .integrate_to(&mut self.system, &mut self.time, &mut self.state, frame)
                            .map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
                    }
                    // The driven coordinates as they are at the frame (the integrated copies
                    // are only approximate); a valve robot has no muscles to read.
                    sensors.sample(frame, &self.system.exact_state(self.time, &self.state), &[]);
                }
            }
            self.integrator
                .integrate_to(&mut self.system, &mut self.time, &mut self.state, t)
                .map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
            self.state = self.system.exact_state(self.time, &self.state);
            if !self.state.is_finite() {
                return Err(DeviceError(format!("simulated plant: the state became non-finite at t = {t} s")));
            }
            if let Some(sensors) = &mut self.sensors {
                sensors.deliver(t);
            }
        }
        for v in values {
            match *v {
                DeviceValue::Digital { line, high } => {
                    let k = self.wiring.lines.iter().position(|(l, _)| *l == line).ok_or_else(|| {
                        DeviceError(format!("simulated plant: no valve on digital line {line}"))
                    })?;
                    self.states[k] = if high == self.wiring.lines[k].1 { 1.0 } else { -1.0 };
                }
                DeviceValue::Analog { channel, volts } if channel == self.wiring.supply_channel => {
                    if !volts.is_finite() {
                        return Err(DeviceError(format!("simulated plant: analog channel {channel} got {volts} V")));
                    }
                    self.pressure = self.wiring.supply_map.bar(volts) * self.wiring.units_per_bar;
                }
                _ => {
                    return Err(DeviceError(format!(
                        "simulated plant: a valve robot reads its valves' digital lines and its supply regulator, not {} channel {}",
                        v.kind(),
                        v.channel()
                    )))
                }
            }
        }
        let valves = R::VALVES.len();
        for k in 0..valves {
            let scale = self.gains.scale(self.pressure, k).map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
            self.commands[k] = self.states[k] * scale.max(0.0);
        }
        self.system
            .command(self.time, &self.commands[..valves], &mut self.state)
            .map_err(|e| DeviceError(format!("simulated plant: {e}")))?;
        if let Some(observer) = &mut self.observer {
            observer(self.time, &self.state);
        }
        Ok(())
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> EmulatingPlant<R, N, C> for ValvePlant<R, N, C> {
    fn observe(&mut self, observer: Box<dyn FnMut(f64, &State<N>) + Send>) {
        ValvePlant::observe(self, observer)
    }
    fn attach_sensors(&mut self, sensors: EmulatedSensors<R, N, C>) {
        self.sensors = Some(sensors);
    }
    fn params(&self) -> &R::Params {
        &self.system.simulation.params
    }
    fn coordinates(&self) -> nalgebra::SVector<f64, N> {
        self.state.q
    }
}

/// The valve steering's in-loop settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValveSteeringConfig {
    /// Where the centre of mass should go (m, ground plane).
    pub goal: Vector2<f64>,
    /// Arrival: the centre of mass within this distance of the goal (m)...
    pub arrival_radius: f64,
    /// ...for this long (s), the plans holding it there; then the task is finished.
    pub hold: f64,
    /// The wave sent before the first plan arrives.
    pub initial: ValveDecisions,
    /// The supply parameter's units per bar (the regulator is commanded in bar).
    pub units_per_bar: f64,
}

/// The in-loop half of valve steering: one call per period.
pub struct ValveSteering<R: Model<N, C>, const N: usize, const C: usize> {
    /// The wave the valves follow now.
    pub wave: SteeredValveWave,
    /// The wave as it was when the last command was computed: the planner starts from the
    /// state measured at that command's time, so it must start from this wave too.
    sent: SteeredValveWave,
    sent_time: f64,
    params: R::Params,
    config: ValveSteeringConfig,
    period: f64,
    last_plan: u64,
    last_measurement: u64,
    within_since: Option<f64>,
    /// Travelling, arrived or finished.
    pub phase: SteeringPhase,
    /// Distance of the measured centre of mass from the goal (m), NaN before the first
    /// measurement.
    pub distance: f64,
    /// Plans taken into the wave.
    pub plans_applied: u64,
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValveSteering<R, N, C> {
    /// Steers as `config` says, one call every `period` s, the wave's delay the spec's.
    pub fn new(params: R::Params, config: ValveSteeringConfig, period: f64) -> Result<Self, String> {
        let delay = R::VALVE_GAIT
            .ok_or_else(|| {
                format!("robot `{}` declares no valve wave ([gait] kind = \"travelling_wave_valves\")", R::NAME)
            })?
            .delay;
        if !(config.goal.x.is_finite() && config.goal.y.is_finite()) {
            return Err(format!("goal must be finite, got ({}, {})", config.goal.x, config.goal.y));
        }
        for (name, value) in [("arrival radius", config.arrival_radius), ("hold", config.hold)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {value}"));
            }
        }
        if !(config.units_per_bar.is_finite() && config.units_per_bar > 0.0) {
            return Err(format!("the supply parameter's units per bar must be > 0, got {}", config.units_per_bar));
        }
        if !config.initial.to_array().iter().all(|v| v.is_finite()) {
            return Err(format!("the initial valve decisions must be finite, got {:?}", config.initial));
        }
        let wave = SteeredValveWave::new(delay, 0.0, config.initial);
        Ok(ValveSteering {
            wave,
            sent: wave,
            sent_time: 0.0,
            params,
            config,
            period,
            last_plan: 0,
            last_measurement: 0,
            within_since: None,
            phase: SteeringPhase::Travelling,
            distance: f64::NAN,
            plans_applied: 0,
        })
    }

    /// This period's commands: one valve state per valve pair (`Valve(true)` for +1), then
    /// the supply pressure (bar). Takes the newest plan, hands the newest measurement to the
    /// planner and tracks arrival. Never blocks and never allocates.
    pub fn command(
        &mut self,
        link: &ValveLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        let valves = R::VALVES.len();
        if commands.len() != valves + 1 {
            return Err(format!("{} commands for {valves} valves and the supply", commands.len()));
        }
        if let Some((sequence, plan)) = link.plans.try_latest() {
            if sequence != self.last_plan {
                if !plan.decisions.to_array().iter().all(|v| v.is_finite()) {
                    return Err(format!("the planner returned non-finite valve decisions {:?}", plan.decisions));
                }
                self.wave.retarget(t, plan.decisions);
                self.plans_applied += 1;
            }
            self.last_plan = sequence;
        }
        if let Some((time, state, com)) =
            new_measurement::<R, N, C>(&link.measured, &mut self.last_measurement, &self.params)?
        {
            self.distance = (Vector2::new(com.x, com.y) - self.config.goal).norm();
            self.phase = arrival_phase(
                &mut self.within_since,
                time,
                self.distance,
                self.config.arrival_radius,
                self.config.hold,
            );
            let wave = if (time - self.sent_time).abs() < 0.5 * self.period { self.sent } else { self.wave };
            link.snapshots.try_post(ValveSnapshot { time, state, wave });
        }
        write_valve_commands(&self.wave, t, self.config.units_per_bar, commands);
        self.sent = self.wave;
        self.sent_time = t;
        Ok(self.phase)
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> Steering<N> for ValveSteering<R, N, C> {
    type Snapshot = ValveSnapshot<N>;
    type Plan = ValvePlan;

    fn command(
        &mut self,
        link: &ValveLink<N>,
        t: f64,
        commands: &mut [ActuatorCommand],
    ) -> Result<SteeringPhase, String> {
        ValveSteering::command(self, link, t, commands)
    }

    /// Each valve pair's state held (open for a positive one), then the supply (bar).
    fn hold(&self, held: &[f64], commands: &mut [ActuatorCommand]) {
        let Some((supply, states)) = commands.split_last_mut() else { return };
        for (command, state) in states.iter_mut().zip(held) {
            *command = ActuatorCommand::Valve(*state > 0.0);
        }
        if let Some(pressure) = held.get(states.len()) {
            *supply = ActuatorCommand::Pressure(*pressure);
        }
    }

    fn progress(&self) -> SteeringProgress {
        SteeringProgress { phase: self.phase, distance: self.distance, plans_applied: self.plans_applied }
    }
}

/// A valve wave's commands at time `t`: each valve pair's state (`Valve(true)` for +1), then
/// the supply pressure in bar (`units_per_bar`: the decisions' pressure unit per bar).
pub fn write_valve_commands(wave: &SteeredValveWave, t: f64, units_per_bar: f64, commands: &mut [ActuatorCommand]) {
    let (supply, valves) = commands.split_last_mut().expect("valve commands end with the supply");
    for (k, command) in valves.iter_mut().enumerate() {
        *command = ActuatorCommand::Valve(wave.state(t, k) > 0.0);
    }
    *supply = ActuatorCommand::Pressure(wave.decisions.pressure / units_per_bar);
}

/// The valve planner's thread (see [`run_planning_thread`]): a plan whose every rollout
/// failed is not posted, and the loop keeps the wave it has.
pub fn run_valve_planner<R: Model<N, C>, const N: usize, const C: usize>(
    planner: &mut ValvePlanner<R, N, C>,
    link: &ValveLink<N>,
    rate_hz: f64,
) -> PlannerStats {
    run_planning_thread(link, rate_hz, |snapshot| {
        let plan = planner.plan(snapshot);
        PlanningStep {
            plan: (plan.failed < plan.rollouts).then_some(plan),
            rollouts: plan.rollouts as u64,
            failed_rollouts: plan.failed as u64,
            jacobians: 0,
        }
    })
}
