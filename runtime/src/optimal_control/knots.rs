//! A robot's simulation as a horizon's dynamics: each knot holds the commands for one
//! interval and steps the simulated system (contact, water, servos, thrusters, the same
//! models as the plant) by implicit Euler, with the step's exact Jacobians from the system's
//! exact Jacobian and its input Jacobian.
//!
//! The state is x = (q, qd, z, u_prev): z the [`CommandSchedule`]'s states (a wave's or
//! a bending plane's phase; none for held commands), and the previous knot's decisions ride along so that a
//! command-rate cost is a cost on states (u_prev of the next knot is u). Each implicit step
//! holds the commands the schedule gives at its start; the step's Jacobians by those
//! commands are chained through the schedule's own (d commands / d(z, u)).
//!
//! Why implicit Euler: the soft robots' elasticity and viscosity, the contact penalties and
//! the servos are stiff, so an explicit step at a knot interval of tens of milliseconds
//! would diverge. Implicit Euler is stable at any step, and its derivative needs only first
//! derivatives: by the implicit function theorem it is (dF/dx')^-1 with the Jacobians at the
//! step's end, the same matrices Newton's method factors. A linearly implicit step (one
//! Newton iteration) was tried first: its derivative leaves out h^2 (dJ/dx) k, which the
//! swimmer's power-law viscosity makes large, 96 % of the step's Jacobian at 20 ms.
//! With J = [[0, I], [A_q, A_v]] each Newton system reduces to N unknowns:
//! S dv' = -r, S = I - h A_v - h^2 A_q.

use super::ddp::KnotDynamics;
use super::schedule::CommandSchedule;
use crate::integration::integrator::SecondOrderSystem;
use crate::integration::rosenbrock::Factored;
use crate::robot::model::Model;
use crate::simulation::closed_loop::Simulation;
use crate::simulation::system_jacobian::ControlInput;
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// A robot's simulation stepped knot by knot under its commands: one or more kinds, in
/// the order given, each kind's commands in the model's order.
pub struct RobotKnots<R: Model<N, C>, const N: usize, const C: usize> {
    simulation: Simulation<R, N, C>,
    /// The kinds of command and where each starts in the robot's command vector.
    inputs: Vec<(ControlInput, usize)>,
    /// What the plan decides, and the robot's commands it makes.
    schedule: CommandSchedule,
    /// How each step is integrated.
    pub integrator: KnotIntegrator,
    robot_commands: Vec<f64>,
    schedule_state: Vec<f64>,
    /// Knot interval (s) and the steps it is cut into.
    interval: f64,
    substeps: usize,
    /// Newton's method of each implicit step: its most iterations, and the update (relative
    /// to the rates) below which it has converged.
    pub newton_iterations: usize,
    /// See `newton_iterations`.
    pub newton_tolerance: f64,
    /// How far an iteration with a kept Newton matrix must lower the residual for the
    /// matrix to be kept (`STALE_CONTRACTION` unless set).
    pub stale_contraction: f64,
    /// Whether a step that fails from the knot's kept Newton matrix is tried once more from a
    /// fresh one before it is halved (true unless set). Where the step's iterations refresh
    /// the matrix anyway, as on the soft snake's skin (310 points, a penalty with a kink at
    /// touchdown, friction regularised over 1 cm/s: 10 to 19 damped iterations a step),
    /// the retry differs from the first attempt in its first iterate only and most often
    /// fails the same way.
    pub retry_from_fresh: bool,
    /// System Jacobians evaluated so far (the knots' main cost).
    pub jacobians: usize,
    /// Each knot's last Newton matrix and the step it was made for: the next plan's same
    /// knot starts its Newton iterations with it (plans follow each other closely), so a
    /// knot most often evaluates the system's Jacobian once, at the end of its step, where
    /// the derivative needs it.
    newton_matrices: Vec<Option<(f64, Factored<N>)>>,
    /// d qdd/du, one column per command.
    input_columns: Vec<SVector<f64, N>>,
    thrusts: Vec<f64>,
    pressures: Vec<f64>,
    /// One semi-implicit step's rows of the rates: h d qdd/dq and I + h d qdd/dqd (the
    /// coordinates' rows are the identity's plus h times these, so the chain needs only
    /// these: [`RobotKnots::chain_semi_implicit`]).
    rate_by_coordinate: SMatrix<f64, N, N>,
    rate_by_rate: SMatrix<f64, N, N>,
    /// That chain's column through the commands (C_z m_z, one per command) and through the
    /// schedule's advance (G_z m_z, one per schedule state).
    chain_through_commands: Vec<f64>,
    chain_through_schedule: Vec<f64>,
    /// One implicit step's Jacobians of (q, qd) by (q, qd) and by the robot's commands.
    substep_by_state: DMatrix<f64>,
    substep_by_control: DMatrix<f64>,
    /// The same over a step whose commands are held (chained over its halvings).
    held_by_state: DMatrix<f64>,
    held_by_commands: DMatrix<f64>,
    held_product_by_state: DMatrix<f64>,
    held_product_by_commands: DMatrix<f64>,
    /// The schedule's Jacobians: commands by (z, u), z' by (z, u).
    command_by_state: DMatrix<f64>,
    command_by_decisions: DMatrix<f64>,
    advance_by_state: DMatrix<f64>,
    advance_by_decisions: DMatrix<f64>,
    /// One step's Jacobians of (q, qd, z) by (q, qd, z) and by the decisions, and their
    /// chain over the knot.
    step_by_state: DMatrix<f64>,
    step_by_control: DMatrix<f64>,
    motion_by_state: DMatrix<f64>,
    motion_by_control: DMatrix<f64>,
    product_by_state: DMatrix<f64>,
    product_by_control: DMatrix<f64>,
}

/// How a knot's steps are integrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnotIntegrator {
    /// Implicit Euler by Newton's method: stable at any step, for stiff robots.
    ImplicitEuler,
    /// Semi-implicit (symplectic) Euler, v' = v + h a(q, v), q' = q + h v': one system
    /// Jacobian per step and no iterations, for robots whose steps must be short anyway.
    SemiImplicitEuler,
}

/// Most substeps per knot.
pub const MAX_SUBSTEPS: usize = 1000;

/// Newton's default tolerance in the knots' implicit steps, relative to the rates
/// ([`RobotKnots::set_newton`]).
pub const DEFAULT_NEWTON_TOLERANCE: f64 = 1e-10;

/// The loosest Newton tolerance the knots' implicit steps take (relative to the rates): a
/// step converged only to a per cent of them no longer follows the plant.
pub const MAX_NEWTON_TOLERANCE: f64 = 1e-2;

/// `Err` naming `what` unless `tolerance` is one the knots' Newton takes, in (0,
/// [`MAX_NEWTON_TOLERANCE`]]: the one check of the planner, the run configuration and the
/// estimator.
pub fn check_newton_tolerance(what: &str, tolerance: f64) -> Result<(), String> {
    if tolerance.is_finite() && tolerance > 0.0 && tolerance <= MAX_NEWTON_TOLERANCE {
        Ok(())
    } else {
        Err(format!("{what} must be in (0, {MAX_NEWTON_TOLERANCE}], got {tolerance}"))
    }
}

/// How far an iteration with a kept Newton matrix must lower the residual to keep it (a
/// refresh costs less than the further iterations a slower contraction would take). On the
/// underwater snake's waypoint task: 5.5 Jacobians a plan at 0.1, 4.95 at 0.3, the same
/// trajectory to the last digit; 0.5 and 0.7 hit the iteration cap more and change it.
const STALE_CONTRACTION: f64 = 0.3;
/// How many times a failed implicit step is halved before the knot fails.
const MAX_HALVINGS: usize = 4;

impl<R: Model<N, C>, const N: usize, const C: usize> RobotKnots<R, N, C> {
    /// Knots of `interval` seconds, each cut into `substeps` steps, over `simulation` (whose
    /// gait must be unset: the plan sets the commands), commanded by `inputs`, the plan
    /// deciding the commands themselves.
    pub fn new(
        simulation: Simulation<R, N, C>,
        inputs: &[ControlInput],
        interval: f64,
        substeps: usize,
    ) -> Result<Self, String> {
        let commands = inputs.iter().map(|input| input.count::<R, N, C>()).sum();
        Self::scheduled(simulation, inputs, CommandSchedule::Held { commands }, interval, substeps)
    }

    /// As [`RobotKnots::new`], the plan deciding what `schedule` turns into the commands.
    pub fn scheduled(
        simulation: Simulation<R, N, C>,
        inputs: &[ControlInput],
        schedule: CommandSchedule,
        interval: f64,
        substeps: usize,
    ) -> Result<Self, String> {
        if simulation.config.gait.is_some() {
            return Err("the planner's simulation must have no gait: the plan sets the commands".into());
        }
        if !(interval.is_finite() && interval > 0.0) {
            return Err(format!("knot interval must be finite and > 0 s, got {interval}"));
        }
        if !(1..=MAX_SUBSTEPS).contains(&substeps) {
            return Err(format!("substeps per knot must be in 1..={MAX_SUBSTEPS}, got {substeps}"));
        }
        let mut groups = Vec::with_capacity(inputs.len());
        let mut commands = 0;
        for (i, &input) in inputs.iter().enumerate() {
            if inputs[..i].contains(&input) {
                return Err(format!("the command kind {input:?} is listed twice"));
            }
            let count = input.count::<R, N, C>();
            if count == 0 {
                return Err(format!("robot `{}` has no commands of kind {input:?}", R::NAME));
            }
            groups.push((input, commands));
            commands += count;
        }
        let forces = [ControlInput::ActuatorForces, ControlInput::MusclePressures];
        if forces.iter().all(|f| inputs.contains(f)) {
            return Err("actuator forces and muscle pressures both set the actuator forces: plan one of them".into());
        }
        if commands == 0 {
            return Err("a plan needs at least one kind of command".into());
        }
        if schedule.commands() != commands {
            return Err(format!("the plan's schedule sets {} commands; the robot has {commands}", schedule.commands()));
        }
        if matches!(schedule, CommandSchedule::Wave { .. }) && inputs != [ControlInput::JointTargets] {
            return Err("a wave schedule sets joint targets only".into());
        }
        if matches!(schedule, CommandSchedule::RotatingBend { .. }) && inputs != [ControlInput::ActuatorForces] {
            return Err("a rotating bend sets actuator forces only".into());
        }
        let motion = 2 * N;
        let (states, decisions) = (schedule.states(), schedule.decisions());
        let augmented = motion + states;
        Ok(RobotKnots {
            simulation,
            inputs: groups,
            schedule,
            integrator: KnotIntegrator::ImplicitEuler,
            robot_commands: vec![0.0; commands],
            schedule_state: vec![0.0; states],
            interval,
            substeps,
            newton_iterations: 20,
            newton_tolerance: DEFAULT_NEWTON_TOLERANCE,
            stale_contraction: STALE_CONTRACTION,
            retry_from_fresh: true,
            jacobians: 0,
            newton_matrices: Vec::new(),
            input_columns: vec![SVector::zeros(); commands],
            thrusts: vec![0.0; R::THRUSTERS.len()],
            pressures: vec![0.0; R::MUSCLES.len()],
            rate_by_coordinate: SMatrix::zeros(),
            rate_by_rate: SMatrix::zeros(),
            chain_through_commands: vec![0.0; commands],
            chain_through_schedule: vec![0.0; states],
            substep_by_state: DMatrix::zeros(motion, motion),
            substep_by_control: DMatrix::zeros(motion, commands),
            held_by_state: DMatrix::zeros(motion, motion),
            held_by_commands: DMatrix::zeros(motion, commands),
            held_product_by_state: DMatrix::zeros(motion, motion),
            held_product_by_commands: DMatrix::zeros(motion, commands),
            command_by_state: DMatrix::zeros(commands, states),
            command_by_decisions: DMatrix::zeros(commands, decisions),
            advance_by_state: DMatrix::zeros(states, states),
            advance_by_decisions: DMatrix::zeros(states, decisions),
            step_by_state: DMatrix::zeros(augmented, augmented),
            step_by_control: DMatrix::zeros(augmented, decisions),
            motion_by_state: DMatrix::zeros(augmented, augmented),
            motion_by_control: DMatrix::zeros(augmented, decisions),
            product_by_state: DMatrix::zeros(augmented, augmented),
            product_by_control: DMatrix::zeros(augmented, decisions),
        })
    }

    /// Newton's settings: converged once an update is below `tolerance` relative to the
    /// rates (1 + their largest), and whether a step failing from a kept matrix is retried
    /// from a fresh one before it is halved (`retry_from_fresh`). Defaults: [`DEFAULT_NEWTON_TOLERANCE`], a retry.
    pub fn set_newton(&mut self, tolerance: f64, retry_from_fresh: bool) -> Result<(), String> {
        check_newton_tolerance("the planner's Newton tolerance", tolerance)?;
        self.newton_tolerance = tolerance;
        self.retry_from_fresh = retry_from_fresh;
        Ok(())
    }

    /// The knot interval (s).
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// The kinds of command, in the control vector's order.
    pub fn inputs(&self) -> impl Iterator<Item = ControlInput> + '_ {
        self.inputs.iter().map(|(input, _)| *input)
    }

    /// The robot's model in its environment, as the knots step it.
    pub fn simulation(&self) -> &Simulation<R, N, C> {
        &self.simulation
    }

    /// How a knot's decisions become the robot's commands.
    pub fn schedule(&self) -> CommandSchedule {
        self.schedule
    }

    /// The state vector (q, qd, u_prev) of a robot state and the commands in effect, for
    /// held commands.
    pub fn state_vector(q: &SVector<f64, N>, qd: &SVector<f64, N>, commands: &[f64]) -> DVector<f64> {
        Self::scheduled_state_vector(q, qd, &[], commands)
    }

    /// The state vector (q, qd, z, u_prev) of a robot state, the schedule's state and the
    /// decisions in effect.
    pub fn scheduled_state_vector(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        schedule_state: &[f64],
        decisions: &[f64],
    ) -> DVector<f64> {
        let states = schedule_state.len();
        let mut x = DVector::zeros(2 * N + states + decisions.len());
        x.rows_mut(0, N).copy_from(q);
        x.rows_mut(N, N).copy_from(qd);
        x.rows_mut(2 * N, states).copy_from_slice(schedule_state);
        x.rows_mut(2 * N + states, decisions.len()).copy_from_slice(decisions);
        x
    }

    /// Sets the robot's commands on the simulation.
    fn apply(&mut self, commands: &[f64]) -> Result<(), String> {
        for &(input, start) in &self.inputs {
            let values = &commands[start..start + input.count::<R, N, C>()];
            match input {
                ControlInput::ActuatorForces => {
                    let forces = SVector::<f64, N>::from_iterator(values.iter().copied());
                    self.simulation.set_actuator_forces(&forces);
                }
                ControlInput::JointTargets => {
                    let mut targets = SVector::<f64, N>::zeros();
                    targets.rows_mut(0, values.len()).copy_from_slice(values);
                    self.simulation.set_joint_targets(&targets);
                }
                ControlInput::Thrusts => {
                    self.thrusts.copy_from_slice(values);
                    self.simulation.set_thrusts(&self.thrusts)?;
                }
                ControlInput::MusclePressures => {
                    self.pressures.copy_from_slice(values);
                    self.simulation.set_muscle_pressures(&self.pressures)?;
                }
            }
        }
        Ok(())
    }

    /// The system's Jacobian at the end of a step to rate `rate` (into the two blocks) and
    /// the factored Newton matrix S = I - h A_v - h^2 A_q there.
    fn iteration_matrix(
        &mut self,
        end: f64,
        h: f64,
        q: &SVector<f64, N>,
        rate: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<Factored<N>, String> {
        let position = *q + rate * h;
        self.jacobians += 1;
        self.simulation.exact_jacobian(end, &position, rate, by_position, by_velocity).map_err(|e| e.to_string())?;
        let system = SMatrix::<f64, N, N>::identity() - *by_velocity * h - *by_position * (h * h);
        Factored::new(system)
            .ok_or_else(|| format!("the implicit step's matrix I - h A_v - h^2 A_q is singular (h = {h} s)"))
    }

    /// One implicit Euler step of `h` from (q, v) at `t`, q' = q + h v', v' = v + h a(q',
    /// v'), solved for v' by Newton's method; with `derivatives`, the step's Jacobians into
    /// the substep buffers.
    #[allow(clippy::too_many_arguments)]
    fn substep(
        &mut self,
        slot: usize,
        t: f64,
        h: f64,
        q: &mut SVector<f64, N>,
        v: &mut SVector<f64, N>,
        derivatives: bool,
    ) -> Result<(), String> {
        let singular = || format!("the implicit step's matrix I - h A_v - h^2 A_q is singular (h = {h} s)");
        let mut acceleration = SVector::<f64, N>::zeros();
        let mut by_position = SMatrix::<f64, N, N>::zeros();
        let mut by_velocity = SMatrix::<f64, N, N>::zeros();
        // Newton on r(v') = v' - v - h a(q + h v', v'), whose Jacobian is S, from v' = v (so
        // the first update is the linearly implicit step). The system's Jacobian is the
        // expensive part, so S is kept while the residual falls by `stale_contraction` per
        // iteration and refreshed only when it does not; a step that fails even with a fresh S is halved
        // until the residual falls, because the materials' power-law viscosity (a rate to a
        // power below 1, regularised at rest) makes undamped Newton overshoot from rates
        // near rest. The derivative needs S at the end of the step, so a kept S is
        // refreshed there once more.
        let end = t + h;
        let mut rate = *v;
        self.simulation.acceleration(end, &(*q + rate * h), &rate, &mut acceleration).map_err(|e| e.to_string())?;
        let mut residual = rate - *v - acceleration * h;
        let (mut factor, mut fresh) = match self.newton_matrices.get(slot) {
            Some(Some((made_for, factor))) if *made_for == h => (*factor, false),
            _ => (self.iteration_matrix(end, h, q, &rate, &mut by_position, &mut by_velocity)?, true),
        };
        let mut converged = false;
        for _ in 0..self.newton_iterations {
            let update = factor.solve(residual).ok_or_else(singular)?;
            if update.amax() <= self.newton_tolerance * (1.0 + rate.amax()) {
                rate -= update;
                converged = true;
                break;
            }
            let norm = residual.norm();
            let mut fraction = 1.0;
            let accepted = loop {
                let trial = rate - update * fraction;
                self.simulation
                    .acceleration(end, &(*q + trial * h), &trial, &mut acceleration)
                    .map_err(|e| e.to_string())?;
                let trial_residual = trial - *v - acceleration * h;
                let trial_norm = trial_residual.norm();
                // A kept S must contract fast; a fresh one only has to lower the residual.
                let enough = if fresh { (1.0 - 1e-4 * fraction) * norm } else { self.stale_contraction * norm };
                if trial_norm <= enough {
                    rate = trial;
                    residual = trial_residual;
                    break true;
                }
                if !fresh {
                    break false;
                }
                fraction *= 0.5;
                if fraction < 1.0 / 1024.0 {
                    return Err(format!(
                        "the implicit step stalled: no Newton step lowers its residual {norm:.3e} (h = {h} s)"
                    ));
                }
            };
            if accepted {
                fresh = false;
            } else {
                factor = self.iteration_matrix(end, h, q, &rate, &mut by_position, &mut by_velocity)?;
                fresh = true;
            }
        }
        if !converged {
            return Err(format!(
                "the implicit step did not converge in {} Newton iterations (h = {h} s)",
                self.newton_iterations
            ));
        }
        if derivatives && !fresh {
            factor = self.iteration_matrix(end, h, q, &rate, &mut by_position, &mut by_velocity)?;
        }
        if self.newton_matrices.len() <= slot {
            self.newton_matrices.resize(slot + 1, None);
        }
        self.newton_matrices[slot] = Some((h, factor));
        if derivatives {
            // The implicit function theorem on F(x', x, u) = 0 with the Jacobians at the
            // end of the step (the last iterate, within the tolerance of it): for a right-hand
            // side (r_q, r_v), S v' = r_v + h A_q r_q and q' = r_q + h v'. So d v'/dq =
            // h S^-1 A_q, d q'/dq = I + h d v'/dq, d v'/dv = S^-1, d q'/dv = h S^-1, and the
            // commands enter as r_v = h d a/du.
            self.fill_input_columns(&(*q + rate * h), &rate, None)?;
            let a = &mut self.substep_by_state;
            for c in 0..N {
                let mut unit = SVector::<f64, N>::zeros();
                unit[c] = 1.0;
                let by_rate = factor.solve(unit).ok_or_else(singular)?;
                let by_coordinate = factor.solve(by_position.column(c) * h).ok_or_else(singular)?;
                for r in 0..N {
                    let identity = if r == c { 1.0 } else { 0.0 };
                    a[(r, c)] = identity + h * by_coordinate[r];
                    a[(N + r, c)] = by_coordinate[r];
                    a[(r, N + c)] = h * by_rate[r];
                    a[(N + r, N + c)] = by_rate[r];
                }
            }
            for (k, column) in self.input_columns.iter().enumerate() {
                let response = factor.solve(*column * h).ok_or_else(singular)?;
                for r in 0..N {
                    self.substep_by_control[(r, k)] = h * response[r];
                    self.substep_by_control[(N + r, k)] = response[r];
                }
            }
        }
        *q += rate * h;
        *v = rate;
        Ok(())
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> RobotKnots<R, N, C> {
    /// d qdd/du at (q, v), one column per command, into `input_columns`; `factor` is M's
    /// Cholesky factor at q where the caller has it.
    fn fill_input_columns(
        &mut self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        factor: Option<&SMatrix<f64, N, N>>,
    ) -> Result<(), String> {
        for &(input, start) in &self.inputs {
            let columns = &mut self.input_columns[start..start + input.count::<R, N, C>()];
            match factor {
                Some(factor) => self.simulation.factored_input_jacobian(q, v, input, factor, columns)?,
                None => self.simulation.input_jacobian(q, v, input, columns)?,
            }
        }
        Ok(())
    }

    /// One semi-implicit Euler step of `h` from (q, v) at `t`; with `derivatives`, its
    /// Jacobians into the substep buffers: with A_q, A_v, B the system's at (q, v),
    /// d v'/d(q, v, u) = h (A_q, I/h + A_v, B) and d q' = h d v' plus the identity on q.
    fn explicit_substep(
        &mut self,
        t: f64,
        h: f64,
        q: &mut SVector<f64, N>,
        v: &mut SVector<f64, N>,
        derivatives: bool,
    ) -> Result<(), String> {
        let mut acceleration = SVector::<f64, N>::zeros();
        // The Jacobian computes the accelerations and M's factor on its way: for models whose
        // accelerations it gives to the last bit (closed-form factors) the step takes them
        // from it, and the commands' columns are solved with its factor either way.
        let from_jacobian = derivatives && R::INVERSE_DYNAMICS_FACTORS;
        if !from_jacobian {
            self.simulation.acceleration(t, q, v, &mut acceleration).map_err(|e| e.to_string())?;
        }
        if derivatives {
            let mut by_position = SMatrix::<f64, N, N>::zeros();
            let mut by_velocity = SMatrix::<f64, N, N>::zeros();
            self.jacobians += 1;
            let factored = self
                .simulation
                .factored_exact_jacobian(t, q, v, &mut by_position, &mut by_velocity)
                .map_err(|e| e.to_string())?;
            if from_jacobian {
                acceleration = factored.acceleration;
            }
            self.fill_input_columns(q, v, Some(&factored.factor))?;
            self.rate_by_coordinate = by_position * h;
            self.rate_by_rate = by_velocity * h;
            for r in 0..N {
                self.rate_by_rate[(r, r)] += 1.0;
            }
        }
        *v += acceleration * h;
        *q += *v * h;
        if v.iter().chain(q.iter()).any(|x| !x.is_finite()) {
            return Err(format!("the semi-implicit step diverged (h = {h} s): shorten the knots' steps"));
        }
        Ok(())
    }

    /// An implicit step of `h`, or, where Newton's method fails on it (a touchdown or a
    /// stick-slip change inside a long step), two of `h / 2`, down to `halvings` times;
    /// each step's Jacobians are chained into the knot's.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        slot: usize,
        t: f64,
        h: f64,
        q: &mut SVector<f64, N>,
        v: &mut SVector<f64, N>,
        derivatives: bool,
        first: &mut bool,
        halvings: usize,
    ) -> Result<(), String> {
        // A step that fails from the knot's kept Newton matrix is tried once more from fresh
        // ones (the kept matrix can lead the iterates onto a kink of the friction law that
        // the fresh start avoids) unless `retry_from_fresh` is off, then halved.
        if self.integrator == KnotIntegrator::SemiImplicitEuler {
            // Its Jacobians go straight into the knot's (`chain_semi_implicit`).
            return self.explicit_substep(t, h, q, v, derivatives);
        } else {
            let mut result = self.substep(slot, t, h, q, v, derivatives);
            if result.is_err() && self.retry_from_fresh && self.newton_matrices.get(slot).is_some_and(|m| m.is_some()) {
                self.newton_matrices[slot] = None;
                result = self.substep(slot, t, h, q, v, derivatives);
            }
            match result {
                Ok(()) => {}
                Err(_) if halvings > 0 => {
                    self.advance(slot, t, h / 2.0, q, v, derivatives, first, halvings - 1)?;
                    return self.advance(slot, t + h / 2.0, h / 2.0, q, v, derivatives, first, halvings - 1);
                }
                Err(e) => return Err(e),
            }
        }
        if !derivatives {
            return Ok(());
        }
        if *first {
            self.held_by_state.copy_from(&self.substep_by_state);
            self.held_by_commands.copy_from(&self.substep_by_control);
            *first = false;
        } else {
            // Chain: d x_(s+1) / d x_0 = Phi_s d x_s / d x_0, and the commands' part gains
            // the step's own.
            self.held_product_by_state.gemm(1.0, &self.substep_by_state, &self.held_by_state, 0.0);
            self.held_product_by_commands.gemm(1.0, &self.substep_by_state, &self.held_by_commands, 0.0);
            self.held_product_by_commands += &self.substep_by_control;
            std::mem::swap(&mut self.held_by_state, &mut self.held_product_by_state);
            std::mem::swap(&mut self.held_by_commands, &mut self.held_product_by_commands);
        }
        Ok(())
    }

    /// [`KnotDynamics::step`] with semi-implicit Euler in `substeps` steps, whatever the knots'
    /// own integrator and steps: what a state estimator falls back on where Newton's method
    /// cannot solve an implicit step (short explicit steps need no solve; too long for the
    /// robot's stiffness, they diverge and say so).
    pub fn step_semi_implicit(
        &mut self,
        knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
        substeps: usize,
    ) -> Result<(), String> {
        if !(1..=MAX_SUBSTEPS).contains(&substeps) {
            return Err(format!("substeps must be in 1..={MAX_SUBSTEPS}, got {substeps}"));
        }
        let kept = (self.integrator, self.substeps);
        self.integrator = KnotIntegrator::SemiImplicitEuler;
        self.substeps = substeps;
        let result = self.step(knot, state, control, next, jacobians);
        (self.integrator, self.substeps) = kept;
        result
    }

    /// The schedule's Jacobians at the step's start: the commands' by the schedule's state
    /// and the decisions (C_z, C_u), and the schedule's advance over `h` (G_z, G_u).
    fn schedule_jacobians(&mut self, h: f64, decisions: &[f64]) {
        self.schedule.command_jacobians(
            &self.schedule_state,
            decisions,
            &mut self.command_by_state,
            &mut self.command_by_decisions,
        );
        self.schedule.advance_jacobians(h, &mut self.advance_by_state, &mut self.advance_by_decisions);
    }

    /// [`RobotKnots::chain_schedule`] for a semi-implicit step, column by column in place.
    /// With A_q = h d qdd/dq, A_v = I + h d qdd/dqd and B = h d qdd/du (the rates' rows of
    /// the step by q, qd and the commands), the coordinates' rows are the identity's plus h
    /// times the rates' (q' = q + h v'), so a column (m_q, m_v, m_z) of the chain maps to
    /// w = A_q m_q + A_v m_v + B (C_z m_z [+ C_u's column]), (m_q + h w, w, G_z m_z [+ G_u's
    /// column]): two N x N products a column where the step's full matrix took a product
    /// of twice the rows and columns (measured on the rigid snake's box-DDP plans: the
    /// chain 16 % of a plan as dense products). Equal to the dense chain to rounding.
    fn chain_semi_implicit(&mut self, first: bool, h: f64, decisions: &[f64]) {
        let motion = 2 * N;
        let states = self.schedule.states();
        let commands = self.input_columns.len();
        self.schedule_jacobians(h, decisions);
        if first {
            // The chain starts from the identity (and no dependence on the decisions): the
            // update below then gives the step's own matrices.
            self.motion_by_state.fill_with_identity();
            self.motion_by_control.fill(0.0);
        }
        let through_commands = &mut self.chain_through_commands;
        let schedule_column = &mut self.chain_through_schedule;
        for (chain, by_decisions) in [(&mut self.motion_by_state, false), (&mut self.motion_by_control, true)] {
            for c in 0..chain.ncols() {
                let coordinate = SVector::<f64, N>::from_iterator(chain.view((0, c), (N, 1)).iter().copied());
                let rate = SVector::<f64, N>::from_iterator(chain.view((N, c), (N, 1)).iter().copied());
                // The commands' and the schedule's moves: C_z m_z (+ C_u's column), G_z m_z
                // (+ G_u's column).
                for k in 0..commands {
                    let mut sum = if by_decisions { self.command_by_decisions[(k, c)] } else { 0.0 };
                    for z in 0..states {
                        sum += self.command_by_state[(k, z)] * chain[(motion + z, c)];
                    }
                    through_commands[k] = sum;
                }
                for (r, entry) in schedule_column.iter_mut().enumerate() {
                    let mut sum = if by_decisions { self.advance_by_decisions[(r, c)] } else { 0.0 };
                    for z in 0..states {
                        sum += self.advance_by_state[(r, z)] * chain[(motion + z, c)];
                    }
                    *entry = sum;
                }
                let mut moved = self.rate_by_coordinate * coordinate + self.rate_by_rate * rate;
                for (k, column) in self.input_columns.iter().enumerate() {
                    moved += column * (h * through_commands[k]);
                }
                for r in 0..N {
                    chain[(r, c)] = coordinate[r] + h * moved[r];
                    chain[(N + r, c)] = moved[r];
                }
                for (r, &entry) in schedule_column.iter().enumerate() {
                    chain[(motion + r, c)] = entry;
                }
            }
        }
    }

    /// Chains one held-command step into the knot's Jacobians through the schedule, at the
    /// schedule's state of the step's start: with B the step's Jacobian by the commands,
    /// C_z, C_u the commands' by (z, u) and G_z, G_u the schedule's advance, the step maps
    /// (x, z) by [[Phi, B C_z], [0, G_z]] and u by [[B C_u], [G_u]].
    fn chain_schedule(&mut self, first: bool, h: f64, decisions: &[f64]) {
        let motion = 2 * N;
        let states = self.schedule.states();
        self.schedule_jacobians(h, decisions);
        let step = &mut self.step_by_state;
        step.fill(0.0);
        step.view_mut((0, 0), (motion, motion)).copy_from(&self.held_by_state);
        if states > 0 {
            step.view_mut((0, motion), (motion, states)).gemm(1.0, &self.held_by_commands, &self.command_by_state, 0.0);
            step.view_mut((motion, motion), (states, states)).copy_from(&self.advance_by_state);
        }
        let control = &mut self.step_by_control;
        match self.schedule {
            CommandSchedule::Held { .. } => control.copy_from(&self.held_by_commands),
            CommandSchedule::Wave { .. } | CommandSchedule::RotatingBend { .. } => {
                control.view_mut((0, 0), (motion, decisions.len())).gemm(
                    1.0,
                    &self.held_by_commands,
                    &self.command_by_decisions,
                    0.0,
                );
                control.view_mut((motion, 0), (states, decisions.len())).copy_from(&self.advance_by_decisions);
            }
        }
        if first {
            self.motion_by_state.copy_from(&self.step_by_state);
            self.motion_by_control.copy_from(&self.step_by_control);
        } else {
            self.product_by_state.gemm(1.0, &self.step_by_state, &self.motion_by_state, 0.0);
            self.product_by_control.gemm(1.0, &self.step_by_state, &self.motion_by_control, 0.0);
            self.product_by_control += &self.step_by_control;
            std::mem::swap(&mut self.motion_by_state, &mut self.product_by_state);
            std::mem::swap(&mut self.motion_by_control, &mut self.product_by_control);
        }
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> KnotDynamics for RobotKnots<R, N, C> {
    fn state_size(&self) -> usize {
        2 * N + self.schedule.states() + self.schedule.decisions()
    }

    fn control_size(&self) -> usize {
        self.schedule.decisions()
    }

    fn step(
        &mut self,
        knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
    ) -> Result<(), String> {
        let states = self.schedule.states();
        let decisions = control.as_slice();
        let mut q = SVector::<f64, N>::from_iterator(state.rows(0, N).iter().copied());
        let mut v = SVector::<f64, N>::from_iterator(state.rows(N, N).iter().copied());
        self.schedule_state.copy_from_slice(state.rows(2 * N, states).as_slice());
        let h = self.interval / self.substeps as f64;
        let derivatives = jacobians.is_some();
        for s in 0..self.substeps {
            let mut commands = std::mem::take(&mut self.robot_commands);
            self.schedule.commands_into(&self.schedule_state, decisions, &mut commands);
            let applied = self.apply(&commands);
            self.robot_commands = commands;
            applied?;
            let t = knot as f64 * self.interval + s as f64 * h;
            let mut first = true;
            self.advance(knot * self.substeps + s, t, h, &mut q, &mut v, derivatives, &mut first, MAX_HALVINGS)?;
            if derivatives {
                match self.integrator {
                    KnotIntegrator::SemiImplicitEuler => self.chain_semi_implicit(s == 0, h, decisions),
                    KnotIntegrator::ImplicitEuler => self.chain_schedule(s == 0, h, decisions),
                }
            }
            let mut schedule_state = std::mem::take(&mut self.schedule_state);
            self.schedule.advance(&mut schedule_state, decisions, h);
            self.schedule_state = schedule_state;
        }
        next.rows_mut(0, N).copy_from(&q);
        next.rows_mut(N, N).copy_from(&v);
        next.rows_mut(2 * N, states).copy_from_slice(&self.schedule_state);
        next.rows_mut(2 * N + states, decisions.len()).copy_from(control);
        if let Some((by_state, by_control)) = jacobians {
            let augmented = 2 * N + states;
            by_state.fill(0.0);
            by_state.view_mut((0, 0), (augmented, augmented)).copy_from(&self.motion_by_state);
            by_control.fill(0.0);
            by_control.view_mut((0, 0), (augmented, decisions.len())).copy_from(&self.motion_by_control);
            for k in 0..decisions.len() {
                by_control[(augmented + k, k)] = 1.0;
            }
        }
        Ok(())
    }
}
