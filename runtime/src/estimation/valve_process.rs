//! The state estimator's process model for a valve-driven robot: its valves' coordinates
//! prescribed by their responses to the valve states and the supply pressure sent (as the
//! plant and the robot's pneumatics give them), the free coordinates stepped by RK4 as the
//! simulated plant steps them, and the step's transition from the generated Jacobian of the
//! free accelerations.
//!
//! Why not the planner's implicit knots: a valve's coordinate is not a state the dynamics
//! move but a function of time and the valves' commands, so it has no place in an implicit
//! step's unknowns, and the WPI snake's wheels (friction regularised over 5 mm/s) are stable
//! under RK4 at the loop's 1 ms. Why the transition R(hA) of the Jacobian A at the step's
//! start (R the RK4 polynomial): it is RK4's own transition on the linearised system, so the
//! covariance is carried by the same step the state is, at one Jacobian a step.

use crate::integration::integrator::Integrator;
use crate::integration::rk4::RungeKutta4;
use crate::robot::model::Model;
use crate::robot::state::State;
use crate::simulation::closed_loop::Simulation;
use crate::simulation::prescribed::PrescribedSimulation;
use crate::simulation::valve_driven::{ValveDriven, ValveGains, MAX_VALVES};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// A valve robot's process model: one call of [`ValveProcess::step`] per filter step.
pub struct ValveProcess<R: Model<N, C>, const N: usize, const C: usize> {
    system: PrescribedSimulation<R, N, C>,
    gains: ValveGains<R, N, C>,
    /// The supply parameter's units per bar (the supply is commanded in bar).
    units_per_bar: f64,
    integrator: RungeKutta4,
    /// RK4 steps a filter step takes, each `substep` long.
    substeps: usize,
    substep: f64,
    commands: [f64; MAX_VALVES],
    /// Which coordinates the valves drive.
    driven: [bool; N],
    /// Work space, sized once: the linearised system's matrix (h times it), its powers and
    /// the RK4 polynomial of one substep.
    scaled: DMatrix<f64>,
    power: DMatrix<f64>,
    next_power: DMatrix<f64>,
    polynomial: DMatrix<f64>,
    product: DMatrix<f64>,
    /// Jacobians of the free accelerations evaluated.
    pub jacobians: usize,
}

impl<R: Model<N, C>, const N: usize, const C: usize> ValveProcess<R, N, C> {
    /// The model of `simulation` with its valves driven from `start` at `t0`, the supply
    /// being the spec's parameter `supply_parameter` in units of `units_per_bar` per bar;
    /// filter steps of `step` s cut into RK4 steps no longer than `plant_step`.
    pub fn new(
        simulation: Simulation<R, N, C>,
        supply_parameter: &str,
        units_per_bar: f64,
        step: f64,
        plant_step: f64,
        start: &State<N>,
        t0: f64,
    ) -> Result<Self, String> {
        if const { R::VALVES.is_empty() } {
            return Err(format!("robot `{}` has no valves", R::NAME));
        }
        if !(units_per_bar.is_finite() && units_per_bar > 0.0) {
            return Err(format!("the supply parameter's units per bar must be > 0, got {units_per_bar}"));
        }
        if !(plant_step.is_finite() && plant_step > 0.0) {
            return Err(format!("the process model's RK4 step must be > 0 s, got {plant_step}"));
        }
        let gains = ValveGains::new(&simulation.params, supply_parameter)?;
        let system = ValveDriven::prescribed(simulation, t0, start)?;
        let substeps = (step / plant_step - 1e-9).ceil().max(1.0) as usize;
        let substep = step / substeps as f64;
        let integrator = RungeKutta4::new(substep).map_err(|e| e.to_string())?;
        let mut driven = [false; N];
        for &coordinate in R::VALVES {
            driven[coordinate] = true;
        }
        let motion = 2 * N;
        Ok(ValveProcess {
            system,
            gains,
            units_per_bar,
            integrator,
            substeps,
            substep,
            commands: [0.0; MAX_VALVES],
            driven,
            scaled: DMatrix::zeros(motion, motion),
            power: DMatrix::zeros(motion, motion),
            next_power: DMatrix::zeros(motion, motion),
            polynomial: DMatrix::zeros(motion, motion),
            product: DMatrix::zeros(motion, motion),
            jacobians: 0,
        })
    }

    /// Which coordinates are the valves' (functions of time and the commands, not estimated).
    pub fn driven(&self) -> &[bool; N] {
        &self.driven
    }

    /// The commands' count: one state (+1 or -1) per valve pair, then the supply (bar).
    pub fn control_size(&self) -> usize {
        R::VALVES.len() + 1
    }

    /// One filter step from `x` (q then qd) at time `t` under `input` for `step` s into the
    /// first 2N rows of `next`, with its transition d x(t + step) / d x(t) into `transition`
    /// when given (the driven coordinates' rows and columns zero).
    pub fn step(
        &mut self,
        t: f64,
        step: f64,
        x: &DVector<f64>,
        input: &[f64],
        next: &mut DVector<f64>,
        transition: Option<&mut DMatrix<f64>>,
    ) -> Result<(), String> {
        let valves = R::VALVES.len();
        if input.len() != valves + 1 {
            return Err(format!("{} commands for {valves} valves and the supply", input.len()));
        }
        // The plant's rule: each valve pair's state times its gain at the supply pressure,
        // no bend below the pressure where the gain reaches zero.
        let supply = input[valves] * self.units_per_bar;
        for k in 0..valves {
            self.commands[k] = input[k] * self.gains.scale(supply, k)?.max(0.0);
        }
        let mut state = State::new(
            SVector::<f64, N>::from_iterator(x.rows(0, N).iter().copied()),
            SVector::<f64, N>::from_iterator(x.rows(N, N).iter().copied()),
        );
        self.system.command(t, &self.commands[..valves], &mut state)?;
        if let Some(transition) = transition {
            self.transition(t, &state, transition)?;
        }
        let mut time = t;
        self.integrator.integrate_to(&mut self.system, &mut time, &mut state, t + step).map_err(|e| e.to_string())?;
        let state = self.system.exact_state(t + step, &state);
        next.rows_mut(0, N).copy_from(&state.q);
        next.rows_mut(N, N).copy_from(&state.qd);
        Ok(())
    }

    /// R(h A)^m for the m RK4 steps of h: A the linearised system [[0, I_f], [dqdd/dq,
    /// dqdd/dqd]] at (t, state), the driven coordinates' rows and columns zero.
    fn transition(&mut self, t: f64, state: &State<N>, transition: &mut DMatrix<f64>) -> Result<(), String> {
        let mut by_position = SMatrix::<f64, N, N>::zeros();
        let mut by_velocity = SMatrix::<f64, N, N>::zeros();
        self.system
            .free_jacobian(t, &state.q, &state.qd, &mut by_position, &mut by_velocity)
            .map_err(|e| e.to_string())?;
        self.jacobians += 1;
        let h = self.substep;
        self.scaled.fill(0.0);
        for i in 0..N {
            if !self.driven[i] {
                self.scaled[(i, N + i)] = h;
            }
            for j in 0..N {
                self.scaled[(N + i, j)] = h * by_position[(i, j)];
                self.scaled[(N + i, N + j)] = h * by_velocity[(i, j)];
            }
        }
        // I + Z + Z^2/2 + Z^3/6 + Z^4/24.
        self.polynomial.fill_with_identity();
        self.power.fill_with_identity();
        let mut factorial = 1.0;
        for order in 1..=4 {
            self.next_power.gemm(1.0, &self.power, &self.scaled, 0.0);
            std::mem::swap(&mut self.power, &mut self.next_power);
            factorial *= order as f64;
            self.polynomial.zip_apply(&self.power, |p, z| *p += z / factorial);
        }
        transition.copy_from(&self.polynomial);
        for _ in 1..self.substeps {
            self.product.gemm(1.0, &self.polynomial, transition, 0.0);
            transition.copy_from(&self.product);
        }
        for i in 0..N {
            if self.driven[i] {
                transition.row_mut(i).fill(0.0);
                transition.row_mut(N + i).fill(0.0);
            }
        }
        Ok(())
    }
}
