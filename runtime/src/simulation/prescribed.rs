//! A simulation whose actuated coordinates are prescribed by their actuators' dynamics (a
//! valve-driven segment's curvature follows eq 15 of 001_6780a70913e94322 whatever the
//! load): the remaining coordinates follow from the partitioned equations of motion, and
//! the generalized forces the actuators must deliver to realise the prescribed motion (the
//! constraint forces) are reported.
//!
//! With d the driven coordinates and f the free ones, M qdd + C qd + G = tau + J' F gives
//! M_ff qdd_f = (tau + J' F - C qd - G)_f - M_fd qdd_d for the free coordinates, and the
//! actuators' generalized force lambda_d = (M qdd + C qd + G - tau - J' F)_d. The driven
//! coordinates' value, rate and acceleration come from the closed-form response of
//! `ActuatorResponse` to the command held over the control period, so they need no
//! integrator state: the integrated copies are overwritten with the exact values at every
//! period, and the right-hand side uses the exact values throughout.

use crate::actuators::actuator_response::{ActuatorResponse, HeldResponses, ResponseState};
use crate::integration::integrator::{IntegrationError, Integrator, SecondOrderSystem};
use crate::robot::dense::{cholesky_in_place, solve_cholesky_columns, solve_spd_in_place};
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::closed_loop::{ContactReport, Simulation};
use nalgebra::{SMatrix, SVector};

/// A coordinate driven through an actuator's dynamics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrivenCoordinate {
    /// The coordinate's index.
    pub coordinate: usize,
    /// How it responds to its actuator's command.
    pub response: ActuatorResponse,
}

/// A [`Simulation`] with prescribed coordinates.
pub struct PrescribedSimulation<R: Model<N, C>, const N: usize, const C: usize> {
    /// The robot in its environment: contacts, friction, open-loop forces.
    pub simulation: Simulation<R, N, C>,
    driven: Vec<DrivenCoordinate>,
    /// Their responses with the held commands.
    responses: HeldResponses,
}

impl<R: Model<N, C>, const N: usize, const C: usize> PrescribedSimulation<R, N, C> {
    /// Drives `driven` from the state `x` at time `t`, with zero commands until the first
    /// [`PrescribedSimulation::command`].
    pub fn new(
        simulation: Simulation<R, N, C>,
        driven: &[DrivenCoordinate],
        t: f64,
        x: &State<N>,
    ) -> Result<Self, String> {
        for (k, d) in driven.iter().enumerate() {
            if d.coordinate >= N {
                return Err(format!("driven coordinate {} does not exist: robot `{}` has {N}", d.coordinate, R::NAME));
            }
            if driven[..k].iter().any(|e| e.coordinate == d.coordinate) {
                return Err(format!("coordinate `{}` is driven twice", R::COORDINATES[d.coordinate].name));
            }
            d.response.validate().map_err(|e| format!("coordinate `{}`: {e}", R::COORDINATES[d.coordinate].name))?;
        }
        if driven.len() == N {
            return Err(format!("every coordinate of `{}` is driven: nothing is left for the dynamics", R::NAME));
        }
        // The integrator's states hold the driven coordinates only approximately, and the
        // events interface passes states without their times, so a touchdown could not be
        // placed where the prescribed coordinates put it.
        if simulation.locates_contact_onsets() {
            return Err(format!(
                "robot `{}`: located contact onsets are not supported with prescribed coordinates",
                R::NAME
            ));
        }
        let responses: Vec<ActuatorResponse> = driven.iter().map(|d| d.response).collect();
        let starts = driven
            .iter()
            .map(|d| ResponseState { value: x.q[d.coordinate], rate: x.qd[d.coordinate], acceleration: 0.0 })
            .collect();
        let responses = HeldResponses::new(&responses, starts, t);
        Ok(PrescribedSimulation { simulation, driven: driven.to_vec(), responses })
    }

    /// Starts the driven coordinates' responses afresh from `x` at time `t`, holding zero
    /// commands until the next [`PrescribedSimulation::command`]: a rollout from a measured
    /// state, whatever this simulation ran before.
    pub fn restart(&mut self, t: f64, x: &State<N>) {
        let starts = self.driven.iter().map(|d| ResponseState {
            value: x.q[d.coordinate],
            rate: x.qd[d.coordinate],
            acceleration: 0.0,
        });
        self.responses.restart(t, starts);
    }

    /// The driven coordinates.
    pub fn driven(&self) -> &[DrivenCoordinate] {
        &self.driven
    }

    /// Holds new commands (one per driven coordinate) from time `t` on. The driven
    /// coordinates of `x` are set to their exact values at `t`.
    pub fn command(&mut self, t: f64, commands: &[f64], x: &mut State<N>) -> Result<(), String> {
        if commands.len() != self.driven.len() {
            return Err(format!("{} commands for {} driven coordinates", commands.len(), self.driven.len()));
        }
        if let Some(bad) = commands.iter().position(|c| !c.is_finite()) {
            return Err(format!(
                "command for `{}` is not finite: {}",
                R::COORDINATES[self.driven[bad].coordinate].name,
                commands[bad]
            ));
        }
        self.responses.command(t, commands);
        for (k, d) in self.driven.iter().enumerate() {
            let now = self.responses.state(k, t);
            x.q[d.coordinate] = now.value;
            x.qd[d.coordinate] = now.rate;
        }
        Ok(())
    }

    /// Driven coordinate `k`'s exact state at time `t` (at or after the last command).
    #[inline]
    pub fn driven_state(&self, k: usize, t: f64) -> ResponseState {
        self.responses.state(k, t)
    }

    /// The state with the driven coordinates at their exact values at time `t`.
    pub fn exact_state(&self, t: f64, x: &State<N>) -> State<N> {
        let (q, qd, _) = self.exact(t, &x.q, &x.qd);
        State::new(q, qd)
    }

    /// The state with the driven coordinates at their exact values, and their accelerations.
    #[inline]
    fn exact(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
    ) -> (SVector<f64, N>, SVector<f64, N>, SVector<f64, N>) {
        let (mut q, mut qd) = (*q, *qd);
        let mut driven_acceleration = SVector::<f64, N>::zeros();
        for (k, d) in self.driven.iter().enumerate() {
            let s = self.responses.state(k, t);
            q[d.coordinate] = s.value;
            qd[d.coordinate] = s.rate;
            driven_acceleration[d.coordinate] = s.acceleration;
        }
        (q, qd, driven_acceleration)
    }

    /// Accelerations of every coordinate, with M and the net force M qdd balances (what the
    /// actuators' forces are computed from).
    #[inline]
    fn accelerations(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
    ) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>, SVector<f64, N>), IntegrationError> {
        let (q, qd, driven_acceleration) = self.exact(t, q, qd);
        let cache = R::cache(&q, &self.simulation.params);
        self.exact_accelerations(t, &q, &qd, &driven_acceleration, &cache)
    }

    /// [`Self::accelerations`] at a state whose driven coordinates are already exact, with
    /// their accelerations and the model's cache there.
    #[inline]
    fn exact_accelerations(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        driven_acceleration: &SVector<f64, N>,
        cache: &R::Cache,
    ) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>, SVector<f64, N>), IntegrationError> {
        let p = &self.simulation.params;
        let mut force = self.simulation.generalized_force(t, q, qd, cache, None);
        let mut damping = SVector::<f64, N>::zeros();
        R::damping_into(qd, p, &mut damping);
        force -= damping;
        let mut mass_matrix = SMatrix::<f64, N, N>::zeros();
        let mut coriolis = SVector::<f64, N>::zeros();
        let mut gravity = SVector::<f64, N>::zeros();
        R::dynamics_into(q, qd, p, cache, &mut mass_matrix, &mut coriolis, &mut gravity);
        let net = force - coriolis - gravity;
        // The free block with the driven rows and columns replaced by the identity: still
        // symmetric positive definite, and its driven rows return the prescribed values.
        let mut reduced = mass_matrix;
        let mut rhs = net - mass_matrix * driven_acceleration;
        for d in &self.driven {
            let i = d.coordinate;
            reduced.row_mut(i).fill(0.0);
            reduced.column_mut(i).fill(0.0);
            reduced[(i, i)] = 1.0;
            rhs[i] = driven_acceleration[i];
        }
        solve_spd_in_place(&mut reduced, &mut rhs).map_err(|_| IntegrationError::SingularMassMatrix { time: t })?;
        Ok((rhs, mass_matrix, net))
    }

    /// Accelerations of every coordinate and the actuators' generalized forces (non-zero on
    /// the driven coordinates only) at time t.
    pub fn solve(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), IntegrationError> {
        let (acceleration, mass_matrix, net) = self.accelerations(t, q, qd)?;
        let all = mass_matrix * acceleration - net;
        let mut actuation = SVector::<f64, N>::zeros();
        for d in &self.driven {
            actuation[d.coordinate] = all[d.coordinate];
        }
        Ok((acceleration, actuation))
    }

    /// The exact Jacobian of the free coordinates' accelerations at (t, q, qd), the driven
    /// coordinates at their exact values there: d(qdd)/dq into `by_position` and d(qdd)/d(qd)
    /// into `by_velocity`. The driven coordinates are functions of time, not of the state,
    /// so their rows and columns are zero. With the driven accelerations held, the free rows
    /// of M qdd + C qd + G = F give d qdd_f = M_ff^-1 (dF - dID)_f along the free
    /// directions, dID at the full accelerations (as [`Simulation::exact_jacobian`], on the
    /// free block).
    pub fn free_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<(), IntegrationError> {
        let (q, qd, driven_acceleration) = self.exact(t, q, qd);
        let cache = R::cache(&q, &self.simulation.params);
        let (acceleration, mut reduced, _) = self.exact_accelerations(t, &q, &qd, &driven_acceleration, &cache)?;
        self.simulation.force_jacobian_less_inverse_dynamics(
            t,
            &q,
            &qd,
            &cache,
            &acceleration,
            None,
            by_position,
            by_velocity,
        );
        for d in &self.driven {
            let i = d.coordinate;
            for matrix in [&mut *by_position, &mut *by_velocity] {
                matrix.row_mut(i).fill(0.0);
                matrix.column_mut(i).fill(0.0);
            }
            reduced.row_mut(i).fill(0.0);
            reduced.column_mut(i).fill(0.0);
            reduced[(i, i)] = 1.0;
        }
        cholesky_in_place(&mut reduced).map_err(|_| IntegrationError::SingularMassMatrix { time: t })?;
        solve_cholesky_columns(&reduced, by_position);
        solve_cholesky_columns(&reduced, by_velocity);
        Ok(())
    }

    /// Contact report at (t, x) with the driven coordinates at their exact values.
    pub fn report(&self, t: f64, x: &State<N>) -> ContactReport<N, C> {
        self.simulation.report(t, &self.exact_state(t, x))
    }

    /// Runs from (t, x) to `t_end`: at every control period asks `commands` for the new
    /// commands (from t), reports the sample, and integrates to the next period. Returns
    /// the right-hand-side evaluations used.
    pub fn run<I: Integrator<N>>(
        &mut self,
        integrator: &mut I,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
        mut commands: impl FnMut(f64, &mut [f64]),
        mut on_sample: impl FnMut(f64, &State<N>, &Self) -> Result<(), String>,
    ) -> Result<usize, String> {
        let period = self.simulation.config.control_period;
        let start = *t;
        let mut tick: u64 = 0;
        let mut evaluations = 0;
        let mut held = vec![0.0; self.driven.len()];
        loop {
            commands(*t, &mut held);
            self.command(*t, &held, x)?;
            on_sample(*t, x, self)?;
            if *t >= t_end - 1e-12 * t_end.abs().max(1.0) {
                return Ok(evaluations);
            }
            if let Some(signal) = self.simulation.stop_signal() {
                return Err(IntegrationError::Stopped { time: *t, signal }.to_string());
            }
            tick += 1;
            let next = (start + tick as f64 * period).min(t_end);
            evaluations += integrator.integrate_to(self, t, x, next).map_err(|e| e.to_string())?;
        }
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> SecondOrderSystem<N> for PrescribedSimulation<R, N, C> {
    #[inline]
    fn acceleration(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &mut SVector<f64, N>,
    ) -> Result<(), IntegrationError> {
        // The actuators' forces are not needed to step: only the accelerations.
        *qdd = self.accelerations(t, q, qd)?.0;
        Ok(())
    }
}
