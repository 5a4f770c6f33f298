//! Costs in a robot's terms for a plan over [`RobotKnots`](super::knots::RobotKnots)' state
//! (q, qd, z, u_prev), u the knot's decisions: the centre of mass against a goal (running and terminal), the body's
//! heading toward it (two tracked points' direction in the horizontal plane), the rates,
//! the effort of the commands away from their resting values, and the commands' rate of
//! change. Each term is a weighted square of a residual, with the Gauss-Newton Hessian
//! J' W J, so DDP's Q_xx stays positive semi-definite. The running terms are integrals over
//! the knot's interval (weights per second); the terminal one is a plain weight.
//!
//! The centre of mass's Jacobian is exact and costs no derivative code: the linear momentum
//! m J_com qd at a unit rate qd = e_j is m times column j.

use super::ddp::{CostDerivatives, KnotCost};
use crate::robot::model::Model;
use nalgebra::{DVector, SMatrix, SVector, Vector2, Vector3};
use std::marker::PhantomData;

/// The weights and goal of a [`GoalCost`].
#[derive(Clone, Debug, PartialEq)]
pub struct GoalWeights {
    /// Where the centre of mass should go (m, world frame).
    pub goal: Vector3<f64>,
    /// Per axis, on the squared distance of the centre of mass from the goal: running
    /// (1/(m^2 s)) and terminal (1/m^2). Zero on an axis leaves it free.
    pub position: Vector3<f64>,
    /// See `position`.
    pub terminal_position: Vector3<f64>,
    /// On the squared rates, running (per s) and terminal.
    pub rate: f64,
    /// See `rate`.
    pub terminal_rate: f64,
    /// On the squared commands away from `rest` (per s).
    pub effort: f64,
    /// On the squared change of the commands per second (per s): (u - u_prev)^2 / dt^2.
    pub command_rate: f64,
    /// The commands' resting values, one per command.
    pub rest: Vec<f64>,
    /// The body's heading in the horizontal plane: the direction from one tracked point
    /// (contact point) to another, `(from, to)`, with its running (per s) and terminal
    /// weights. The residual |g| h - g, with g the horizontal way from the centre of mass to
    /// the goal and h the heading's unit vector, is zero when the body points at the goal
    /// and fades as it arrives: its square is 2 |g|^2 (1 - cos angle). For robots that can
    /// only travel the way they face, whose plans over a short horizon would not turn
    /// otherwise (turning first costs distance).
    pub heading_points: Option<(usize, usize)>,
    /// See `heading_points`.
    pub heading: f64,
    /// See `heading_points`.
    pub terminal_heading: f64,
    /// For robots whose direction of travel flips with the sign of one command (a snake's
    /// wave travels toward its head or its tail with the sign of its temporal frequency):
    /// `(command, scale)` makes the heading h tanh(u / scale) times the tracked points'
    /// direction, u the command last applied (the state's u_prev), so the heading residual
    /// also says which sign takes the body to the goal, and has a gradient through zero.
    /// A second residual |g| sech(u / scale) = |g| sqrt(1 - tanh^2) makes the two together
    /// 2 |g|^2 (1 - tanh(u / scale) cos angle): standing still costs what travelling across
    /// the way to the goal does, so a body at right angles to it is not drawn to stop
    /// (which would leave it no way to turn) but to turn while it travels.
    pub travel_command: Option<(usize, f64)>,
    /// Coordinates held near a value: `(coordinate, value, weight)`, the weight on the
    /// squared difference running (per s) and at the horizon's end. For a limbed robot's
    /// base roll and pitch, without which the shortest way for its centre of mass to the
    /// goal can be to fall over.
    pub posture: Vec<(usize, f64, f64)>,
    /// `Some(floor)`: the goal's terms (position and heading, running and terminal) are
    /// divided by d^2, d the goal's distance (over the position's weighted axes) from where
    /// the plan starts, not less than `floor` (m), so their weights are those at 1 m and the
    /// terms weigh fractions of the distance left. Why: the goal's terms fade as d^2 and
    /// the effort and command-rate terms do not, so near the goal a plan would rather keep
    /// its commands than close the last tenths of the distance (the snake on wheels stalled
    /// its wave 0.11 to 0.18 m short). d is fixed for the plan
    /// ([`GoalCost::scale_for_start`]), so within it every term stays a weighted square.
    pub distance_scaled: Option<f64>,
}

impl GoalWeights {
    /// Checks the weights finite and non-negative and the points, commands and coordinates named
    /// within the robot's.
    pub fn validate(&self, commands: usize, points: usize, coordinates: usize) -> Result<(), String> {
        if let Some((from, to)) = self.heading_points {
            if from >= points || to >= points || from == to {
                return Err(format!(
                    "MPC heading points ({from}, {to}) must be two different tracked points of the {points}"
                ));
            }
        }
        if self.heading_points.is_none() && (self.heading > 0.0 || self.terminal_heading > 0.0) {
            return Err("MPC heading weights need the heading's points".into());
        }
        if let Some((command, scale)) = self.travel_command {
            if self.heading_points.is_none() {
                return Err("MPC travel command needs the heading's points".into());
            }
            if command >= commands {
                return Err(format!("MPC travel command {command} is not one of the {commands} commands"));
            }
            if !(scale.is_finite() && scale > 0.0) {
                return Err(format!("MPC travel command's scale must be finite and > 0, got {scale}"));
            }
        }
        for (name, v) in [
            ("goal", self.goal),
            ("position weight", self.position),
            ("terminal position weight", self.terminal_position),
        ] {
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("MPC {name} must be finite, got ({}, {}, {})", v.x, v.y, v.z));
            }
        }
        let weights = [
            ("position weight", self.position.min()),
            ("terminal position weight", self.terminal_position.min()),
            ("rate weight", self.rate),
            ("terminal rate weight", self.terminal_rate),
            ("effort weight", self.effort),
            ("command-rate weight", self.command_rate),
            ("heading weight", self.heading),
            ("terminal heading weight", self.terminal_heading),
        ];
        if let Some((name, value)) = weights.iter().find(|(_, w)| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!("MPC {name} must be finite and >= 0, got {value}"));
        }
        for &(i, value, weight) in &self.posture {
            if i >= coordinates {
                return Err(format!("MPC posture: coordinate {i} is not one of the {coordinates}"));
            }
            if !(value.is_finite() && weight.is_finite() && weight >= 0.0) {
                return Err(format!(
                    "MPC posture of coordinate {i}: value {value} must be finite, weight {weight} finite and >= 0"
                ));
            }
        }
        if let Some(floor) = self.distance_scaled {
            if !(floor.is_finite() && floor > 0.0) {
                return Err(format!(
                    "MPC distance-scaled goal terms need a floor that is finite and > 0 m, got {floor}"
                ));
            }
        }
        if self.rest.len() != commands {
            return Err(format!("MPC resting commands: {} given for {commands} commands", self.rest.len()));
        }
        if let Some(i) = self.rest.iter().position(|v| !v.is_finite()) {
            return Err(format!("MPC resting command {i} is {}; it must be finite", self.rest[i]));
        }
        Ok(())
    }
}

/// The cost of a plan of a robot, in its terms.
pub struct GoalCost<R: Model<N, C>, const N: usize, const C: usize> {
    /// The cost's weights.
    pub weights: GoalWeights,
    params: R::Params,
    interval: f64,
    commands: usize,
    /// What the goal's terms are multiplied by: 1, or with `distance_scaled` 1 / d^2 for the
    /// plan being made.
    goal_scale: f64,
    model: PhantomData<fn() -> R>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> GoalCost<R, N, C> {
    /// A cost for knots of `interval` seconds with `commands` commands, on the robot with
    /// `params`.
    pub fn new(params: R::Params, weights: GoalWeights, interval: f64, commands: usize) -> Result<Self, String> {
        weights.validate(commands, C, N)?;
        if !(interval.is_finite() && interval > 0.0) {
            return Err(format!("knot interval must be finite and > 0 s, got {interval}"));
        }
        Ok(GoalCost { weights, params, interval, commands, goal_scale: 1.0, model: PhantomData })
    }

    /// The centre of mass at q.
    pub fn center_of_mass(&self, q: &SVector<f64, N>) -> Vector3<f64> {
        R::center_of_mass(q, &self.params, &R::cache(q, &self.params))
    }

    /// Fixes the goal terms' scale for a plan starting at q: 1 / d^2 with d the goal's
    /// distance over the position's weighted axes (not less than the floor) when the
    /// weights ask for distance-scaled terms, 1 otherwise.
    pub fn scale_for_start(&mut self, q: &SVector<f64, N>) {
        self.goal_scale = match self.weights.distance_scaled {
            None => 1.0,
            Some(floor) => {
                let away = self.center_of_mass(q) - self.weights.goal;
                let weighted = self.weights.position + self.weights.terminal_position;
                let distance = (0..3).filter(|&i| weighted[i] > 0.0).map(|i| away[i] * away[i]).sum::<f64>().sqrt();
                1.0 / distance.max(floor).powi(2)
            }
        };
    }

    /// What the goal's terms are multiplied by in the plan being made.
    pub fn goal_scale(&self) -> f64 {
        self.goal_scale
    }

    /// The centre of mass and its Jacobian.
    fn center_of_mass_jacobian(&self, q: &SVector<f64, N>) -> (Vector3<f64>, SMatrix<f64, 3, N>) {
        let cache = R::cache(q, &self.params);
        let mass = R::total_mass(&self.params);
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        let mut unit = SVector::<f64, N>::zeros();
        for j in 0..N {
            unit[j] = 1.0;
            jacobian.set_column(j, &(R::linear_momentum(q, &unit, &self.params, &cache) / mass));
            unit[j] = 0.0;
        }
        (R::center_of_mass(q, &self.params, &cache), jacobian)
    }

    /// Adds w |com(q) - goal|^2 (per axis) and its derivatives.
    fn position_term(
        &self,
        state: &DVector<f64>,
        weight: &Vector3<f64>,
        derivatives: Option<&mut CostDerivatives>,
    ) -> f64 {
        if weight.iter().all(|w| *w == 0.0) {
            return 0.0;
        }
        let q = SVector::<f64, N>::from_iterator(state.rows(0, N).iter().copied());
        let Some(d) = derivatives else {
            let residual = self.center_of_mass(&q) - self.weights.goal;
            return residual.component_mul(weight).dot(&residual);
        };
        let (com, jacobian) = self.center_of_mass_jacobian(&q);
        let residual = com - self.weights.goal;
        let weighted = residual.component_mul(weight);
        for j in 0..N {
            d.x[j] += 2.0 * jacobian.column(j).dot(&weighted);
            for i in 0..N {
                let mut sum = 0.0;
                for axis in 0..3 {
                    sum += weight[axis] * jacobian[(axis, i)] * jacobian[(axis, j)];
                }
                d.xx[(i, j)] += 2.0 * sum;
            }
        }
        residual.dot(&weighted)
    }

    /// Adds w |r|^2 for the heading residual r = |g| s h - g (see [`GoalWeights`]; s is
    /// tanh(u / scale) of the travel command, or 1), with the travel command w (|g|
    /// sech(u / scale))^2 as well, and their Gauss-Newton derivatives.
    fn heading_term(&self, state: &DVector<f64>, weight: f64, derivatives: Option<&mut CostDerivatives>) -> f64 {
        let Some((from, to)) = self.weights.heading_points else { return 0.0 };
        if weight == 0.0 {
            return 0.0;
        }
        let q = SVector::<f64, N>::from_iterator(state.rows(0, N).iter().copied());
        let cache = R::cache(&q, &self.params);
        let mut points = [Vector3::zeros(); C];
        R::contact_positions_into(&q, &self.params, &cache, &mut points);
        let axis = Vector2::new(points[to].x - points[from].x, points[to].y - points[from].y);
        let length = axis.norm();
        if length < 1e-12 {
            return 0.0;
        }
        let heading = axis / length;
        // The travel command sits in u_prev, which ends the state.
        let travel = self.weights.travel_command.map(|(command, scale)| {
            let index = state.len() - self.commands + command;
            let sign = (state[index] / scale).tanh();
            (index, sign, scale)
        });
        let sign = travel.map_or(1.0, |(_, sign, _)| sign);
        // sech(u / scale) = sqrt(1 - sign^2): standing still costs as much as travelling
        // across the way to the goal (see `GoalWeights::travel_command`).
        let still = (1.0 - sign * sign).max(0.0).sqrt();
        let (com, com_jacobian) = self.center_of_mass_jacobian(&q);
        let way = Vector2::new(self.weights.goal.x - com.x, self.weights.goal.y - com.y);
        let distance = way.norm();
        let residual = heading * (sign * distance) - way;
        let standstill = if travel.is_some() { distance * still } else { 0.0 };
        let cost = weight * (residual.norm_squared() + standstill * standstill);
        let Some(d) = derivatives else { return cost };
        let mut from_jacobian = SMatrix::<f64, 3, N>::zeros();
        let mut to_jacobian = SMatrix::<f64, 3, N>::zeros();
        R::contact_jacobian_into(from, &q, &self.params, &cache, &mut from_jacobian);
        R::contact_jacobian_into(to, &q, &self.params, &cache, &mut to_jacobian);
        let direction = if distance > 1e-12 { way / distance } else { Vector2::zeros() };
        // Rows: the residual's two components, then the standstill residual's.
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        for j in 0..N {
            let axis_rate =
                Vector2::new(to_jacobian[(0, j)] - from_jacobian[(0, j)], to_jacobian[(1, j)] - from_jacobian[(1, j)]);
            let heading_rate = (axis_rate - heading * heading.dot(&axis_rate)) / length;
            let way_rate = -Vector2::new(com_jacobian[(0, j)], com_jacobian[(1, j)]);
            let column = (heading * direction.dot(&way_rate) + heading_rate * distance) * sign - way_rate;
            let standstill_rate = if travel.is_some() { still * direction.dot(&way_rate) } else { 0.0 };
            jacobian.set_column(j, &Vector3::new(column.x, column.y, standstill_rate));
        }
        let residuals = Vector3::new(residual.x, residual.y, standstill);
        for j in 0..N {
            d.x[j] += 2.0 * weight * jacobian.column(j).dot(&residuals);
            for i in 0..N {
                d.xx[(i, j)] += 2.0 * weight * jacobian.column(i).dot(&jacobian.column(j));
            }
        }
        if let Some((index, _, scale)) = travel {
            // d tanh / du = sech^2 / scale, d sech / du = -sech tanh / scale.
            let column = Vector3::new(heading.x, heading.y, 0.0) * (distance * still * still / scale)
                - Vector3::new(0.0, 0.0, distance * still * sign / scale);
            d.x[index] += 2.0 * weight * column.dot(&residuals);
            d.xx[(index, index)] += 2.0 * weight * column.norm_squared();
            for j in 0..N {
                let cross = 2.0 * weight * column.dot(&jacobian.column(j));
                d.xx[(index, j)] += cross;
                d.xx[(j, index)] += cross;
            }
        }
        cost
    }

    /// Adds the posture's sum of w (q_i - value)^2, each weight times `scale`, and its
    /// derivatives.
    fn posture_term(&self, state: &DVector<f64>, scale: f64, derivatives: Option<&mut CostDerivatives>) -> f64 {
        let mut cost = 0.0;
        let mut derivatives = derivatives;
        for &(i, value, weight) in &self.weights.posture {
            let w = weight * scale;
            let away = state[i] - value;
            cost += w * away * away;
            if let Some(d) = derivatives.as_deref_mut() {
                d.x[i] += 2.0 * w * away;
                d.xx[(i, i)] += 2.0 * w;
            }
        }
        cost
    }

    /// Adds w |qd|^2 and its derivatives.
    fn rate_term(state: &DVector<f64>, weight: f64, derivatives: Option<&mut CostDerivatives>) -> f64 {
        if weight == 0.0 {
            return 0.0;
        }
        let rates = state.rows(N, N);
        if let Some(d) = derivatives {
            for i in 0..N {
                d.x[N + i] += 2.0 * weight * rates[i];
                d.xx[(N + i, N + i)] += 2.0 * weight;
            }
        }
        weight * rates.norm_squared()
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> KnotCost for GoalCost<R, N, C> {
    fn running(
        &mut self,
        _knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        mut derivatives: Option<&mut CostDerivatives>,
    ) -> f64 {
        let dt = self.interval;
        let position_weight = self.weights.position * (dt * self.goal_scale);
        let mut cost = self.position_term(state, &position_weight, derivatives.as_deref_mut());
        cost += Self::rate_term(state, self.weights.rate * dt, derivatives.as_deref_mut());
        cost += self.heading_term(state, self.weights.heading * dt * self.goal_scale, derivatives.as_deref_mut());
        cost += self.posture_term(state, dt, derivatives.as_deref_mut());
        let effort = self.weights.effort * dt;
        let change = self.weights.command_rate / dt;
        // u_prev ends the state, after the schedule's own states.
        let previous = state.len() - self.commands;
        for k in 0..self.commands {
            let away = control[k] - self.weights.rest[k];
            let step = control[k] - state[previous + k];
            cost += effort * away * away + change * step * step;
            if let Some(d) = derivatives.as_deref_mut() {
                d.u[k] += 2.0 * (effort * away + change * step);
                d.uu[(k, k)] += 2.0 * (effort + change);
                d.x[previous + k] -= 2.0 * change * step;
                d.xx[(previous + k, previous + k)] += 2.0 * change;
                d.ux[(k, previous + k)] -= 2.0 * change;
            }
        }
        cost
    }

    fn terminal(&mut self, state: &DVector<f64>, mut derivatives: Option<&mut CostDerivatives>) -> f64 {
        let weight = self.weights.terminal_position * self.goal_scale;
        let mut cost = self.position_term(state, &weight, derivatives.as_deref_mut());
        let heading = self.weights.terminal_heading * self.goal_scale;
        cost += self.heading_term(state, heading, derivatives.as_deref_mut());
        cost += self.posture_term(state, 1.0, derivatives.as_deref_mut());
        cost + Self::rate_term(state, self.weights.terminal_rate, derivatives)
    }
}
