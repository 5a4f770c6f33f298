//! The valve-driven soft snake of 001_6780a70913e94322 (the WPI SRS): one run of either of
//! the paper's models at a valve frequency, supply pressure and offset, the figures the
//! paper reports of it (cycle-averaged centre-of-mass speed, turning radius by a
//! least-squares circle fit), and grids of runs over every core.
//!
//! The complex model is the generated `wpi_snake` with its curvatures prescribed by the
//! valves' response (eq 15) and the base moved by the equations of motion, so the joint
//! constraint forces are those of the Lagrangian model; the simplified model is eqs 10-12
//! (`SimplifiedChain`). Both use the same parameters, valve wave and wheel friction.

use super::simplified_chain::SimplifiedChain;
use nalgebra::{SVector, Vector2};
use softgen_generated::wpi_snake::{Params, CONTACTS, DOF};
use softgen_generated::WpiSnake;
use softgen_runtime::{
    integrate_through_switches, ActuatorResponse, ContactLaw, DrivenCoordinate, FrictionLaw, JointPd, Model, ParamSet,
    PrescribedSimulation, RungeKutta4, Simulation, SimulationConfig, State, ValveWave,
};

/// Links of the snake.
pub const LINKS: usize = 5;

/// Which of the paper's models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnakeModel {
    /// Section 2.1: all forces, the joint constraint forces included (here: the Lagrangian
    /// model of the spec with prescribed curvatures).
    Complex,
    /// Section 2.2, eqs 10-12: the joint constraint forces dropped.
    Simplified,
}

impl SnakeModel {
    /// The model's name: `complex` or `simplified`.
    pub fn name(self) -> &'static str {
        match self {
            SnakeModel::Complex => "complex",
            SnakeModel::Simplified => "simplified",
        }
    }
}

/// One run.
#[derive(Clone, Debug)]
pub struct SnakeRun {
    /// Which of the paper's two models.
    pub model: SnakeModel,
    /// Valve frequency f (Hz); eq 13's omega is 2 pi f.
    pub frequency: f64,
    /// Supply pressure (kPa): sets the curvature amplitude C0 through the spec's map.
    pub pressure: f64,
    /// Eq 13's offset phi.
    pub offset: f64,
    /// Simulated time (s).
    pub duration: f64,
    /// Cycles left out of the speed and radius at the start (the transient).
    pub transient_cycles: usize,
    /// RK4's longest step (s): the run takes the longest that divides the valve period
    /// into whole steps, and samples the centre of mass for the cycle averages at every
    /// one. The valves switch at the wave's own times (a step ends at each switch), so the
    /// step sets only the integration's accuracy. Each model's default is the longest whose
    /// speeds and radii stay within 0.1 % of 0.5 ms steps over the paper's grid (README).
    pub step: f64,
    /// The robot's parameters.
    pub params: Params,
    /// Wheel friction (the spec's by default).
    pub friction: FrictionLaw,
}

impl SnakeRun {
    /// A run of `model` at valve frequency `frequency` (Hz), supply `pressure` (kPa) and
    /// `offset`: 12 s, 4 transient cycles, the model's default step, the spec's parameters
    /// and friction.
    pub fn new(model: SnakeModel, frequency: f64, pressure: f64, offset: f64) -> SnakeRun {
        SnakeRun {
            model,
            frequency,
            pressure,
            offset,
            duration: 12.0,
            transient_cycles: 4,
            // Measured over the paper's grid against 0.5 ms steps with the same exact
            // switches: the complex model at 3.5 ms within 0.032 % (speed) and 0.022 %
            // (radius) at phi = 0.4 and 0.062 % (speed) at phi = 0, 5 ms 0.80 %; the
            // simplified model at 2.5 ms within 0.095 %, 0.054 % and 0.10 %, 5 ms
            // 1.1 % (radius).
            step: match model {
                SnakeModel::Complex => 3.5e-3,
                SnakeModel::Simplified => 2.5e-3,
            },
            params: Params::default(),
            friction: WpiSnake::ENVIRONMENT.contact_law().friction,
        }
    }

    fn validate(&self) -> Result<(), String> {
        for (name, v, unit) in [
            ("frequency", self.frequency, "Hz"),
            ("pressure", self.pressure, "kPa"),
            ("duration", self.duration, "s"),
            ("step", self.step, "s"),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be finite and > 0 {unit}, got {v}"));
            }
        }
        if !self.offset.is_finite() {
            return Err(format!("offset must be finite, got {}", self.offset));
        }
        let cycles = self.duration * self.frequency;
        if cycles < (self.transient_cycles + 2) as f64 {
            return Err(format!(
                "{} s at {} Hz is {cycles:.1} cycles; the figures need at least {} (the first {} are the transient)",
                self.duration,
                self.frequency,
                self.transient_cycles + 2,
                self.transient_cycles
            ));
        }
        if self.duration / self.step > 1e8 {
            return Err(format!("{} s in steps of {} s is more than 1e8 steps", self.duration, self.step));
        }
        Ok(())
    }
}

/// One sample of a run.
#[derive(Clone, Copy, Debug)]
pub struct SnakeSample {
    /// The sample's time (s).
    pub t: f64,
    /// The centre of mass (m).
    pub center_of_mass: Vector2<f64>,
    /// The head's heading (rad, from +x).
    pub heading: f64,
    /// Each segment's curvature (1/m).
    pub curvatures: [f64; LINKS - 1],
    /// Each wheel's position (m).
    pub wheels: [Vector2<f64>; LINKS],
    /// Each wheel's friction force (N).
    pub wheel_forces: [Vector2<f64>; LINKS],
    /// Complex model: the force the links up to segment i exert on the rest through it
    /// (world frame, N), and each segment's actuation torque (N m); zero for the simplified.
    pub joint_forces: [Vector2<f64>; LINKS - 1],
    /// See `joint_forces`.
    pub segment_torques: [f64; LINKS - 1],
    /// Complex model: the generated model's coordinates (with the driven ones exact); None
    /// for the simplified model, whose state is not the spec's.
    pub coordinates: Option<SVector<f64, DOF>>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct SnakeOutcome {
    /// The samples, in time order.
    pub samples: Vec<SnakeSample>,
    /// Centre of mass averaged over each valve cycle.
    pub cycle_centres: Vec<Vector2<f64>>,
    /// Mean speed of the cycle-averaged centre of mass after the transient (m/s).
    pub speed: f64,
    /// Least-squares circle through the cycle-averaged path after the transient: radius (m)
    /// and the RMS distance of the points from it (m); None when the path is straight.
    pub circle: Option<(f64, f64)>,
    /// Right-hand sides evaluated.
    pub evaluations: usize,
}

/// The valve wave of a run.
pub fn valve_wave(run: &SnakeRun) -> Result<ValveWave, String> {
    let spec = WpiSnake::VALVE_GAIT
        .ok_or("the wpi_snake spec declares no valve wave ([gait] kind = \"travelling_wave_valves\")")?;
    Ok(ValveWave { temporal_frequency: std::f64::consts::TAU * run.frequency, delay: spec.delay, offset: run.offset })
}

pub(crate) fn params_at(run: &SnakeRun) -> Result<Params, String> {
    let mut p = run.params.clone();
    p.set("supply_pressure", run.pressure).map_err(|e| e.to_string())?;
    p.check()?;
    Ok(p)
}

fn responses(p: &Params) -> Result<[ActuatorResponse; LINKS - 1], String> {
    let mut out = [ActuatorResponse::FirstOrder { time_constant: 1.0, gain: 0.0 }; LINKS - 1];
    for (k, r) in out.iter_mut().enumerate() {
        *r = WpiSnake::valve_response(k, p).ok_or("the wpi_snake spec has a valve on every segment")?;
        r.validate()?;
    }
    Ok(out)
}

/// Runs one model at one operating point, calling `on_sample` every `sample_every` steps.
pub fn run_snake(
    run: &SnakeRun,
    sample_every: usize,
    mut on_sample: impl FnMut(&SnakeSample),
) -> Result<SnakeOutcome, String> {
    run.validate()?;
    let p = params_at(run)?;
    let responses = responses(&p)?;
    let wave = valve_wave(run)?;
    wave.validate()?;
    // Whole steps a valve period, so that every cycle average covers exactly one period
    // (with 111.1 samples a cycle at 1.8 Hz and 5 ms, the averages wobble and a straight
    // path at phi = 0 fits a 1.3 m circle).
    let period = 1.0 / run.frequency;
    let per_cycle = (period / run.step * (1.0 - 1e-12)).ceil().max(1.0) as usize;
    let step = period / per_cycle as f64;
    let steps = (run.duration / step).round() as usize;
    let mut samples = Vec::new();
    let mut record = |s: SnakeSample, samples: &mut Vec<SnakeSample>| {
        on_sample(&s);
        samples.push(s);
    };
    let sample_every = sample_every.max(1);
    let evaluations;
    // Every step's centre of mass, for the cycle averages.
    let mut centres = Vec::with_capacity(steps + 1);
    match run.model {
        SnakeModel::Complex => {
            let mut contact = WpiSnake::ENVIRONMENT.contact_law();
            contact.friction = run.friction;
            let config = SimulationConfig {
                contact,
                terrain: WpiSnake::ENVIRONMENT.terrain,
                gait: None,
                servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
                admittance: None,
                control_period: step,
            };
            let simulation = Simulation::<WpiSnake, DOF, CONTACTS>::new(p.clone(), config)?;
            let driven: Vec<DrivenCoordinate> = WpiSnake::VALVES
                .iter()
                .zip(&responses)
                .map(|(&coordinate, &response)| DrivenCoordinate { coordinate, response })
                .collect();
            let mut x =
                State::new(SVector::from_iterator(WpiSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
            let mut system = PrescribedSimulation::new(simulation, &driven, 0.0, &x)?;
            let mut rk4 = RungeKutta4::new(step).map_err(|e| e.to_string())?;
            let mut t = 0.0;
            let mut used = 0;
            let mut held: [f64; LINKS - 1] = std::array::from_fn(|i| wave.state(t, i));
            system.command(t, &held, &mut x)?;
            for k in 0..=steps {
                let cache = WpiSnake::cache(&x.q, &p);
                let com = WpiSnake::center_of_mass(&x.q, &p, &cache);
                centres.push(Vector2::new(com.x, com.y));
                if k % sample_every == 0 || k == steps {
                    let sample = complex_sample(&system, t, &x, &p)?;
                    record(sample, &mut samples);
                }
                if k == steps {
                    break;
                }
                if let Some(signal) = system.simulation.stop_signal() {
                    return Err(softgen_runtime::IntegrationError::Stopped { time: t, signal }.to_string());
                }
                let next = ((k + 1) as f64 * step).min(run.duration);
                used += integrate_through_switches(
                    &mut rk4,
                    &mut system,
                    (&mut t, &mut x),
                    next,
                    (|t, i| wave.state(t, i), &mut held),
                    |system, t, held, x| system.command(t, held, x),
                )?;
            }
            evaluations = used;
        }
        SnakeModel::Simplified => {
            let masses = [p.link_mass; LINKS];
            let end = p.link_mass * p.channel_length.powi(2) / 3.0;
            let inertias = [end, 2.0 * end, 2.0 * end, 2.0 * end, end];
            let mut contact: ContactLaw = WpiSnake::ENVIRONMENT.contact_law();
            contact.friction = run.friction;
            let mut chain = SimplifiedChain::<LINKS>::new(
                masses,
                inertias,
                [p.channel_length; LINKS],
                &contact,
                p.gravity,
                &responses,
            )?;
            // Start as the complex model does: straight along x with the first link at the
            // origin, so the centre of mass is the body's middle.
            let length = 4.0 * p.channel_length;
            let mut x = State::<3>::new(SVector::from([0.5 * length, 0.0, 0.0]), SVector::zeros());
            let mut rk4 = RungeKutta4::new(step).map_err(|e| e.to_string())?;
            let mut t = 0.0;
            let mut used = 0;
            let mut states: [f64; LINKS - 1] = std::array::from_fn(|i| wave.state(t, i));
            chain.command(t, &states)?;
            for k in 0..=steps {
                centres.push(Vector2::new(x.q[0], x.q[1]));
                if k % sample_every == 0 || k == steps {
                    let pose = chain.pose(t, &x.q, &x.qd);
                    let sample = SnakeSample {
                        t,
                        center_of_mass: Vector2::new(x.q[0], x.q[1]),
                        heading: x.q[2],
                        curvatures: std::array::from_fn(|i| chain.curvature(i, t).value),
                        wheels: pose.positions,
                        wheel_forces: chain.wheel_forces(&pose),
                        joint_forces: [Vector2::zeros(); LINKS - 1],
                        segment_torques: [0.0; LINKS - 1],
                        coordinates: None,
                    };
                    record(sample, &mut samples);
                }
                if k == steps {
                    break;
                }
                let next = ((k + 1) as f64 * step).min(run.duration);
                used += integrate_through_switches(
                    &mut rk4,
                    &mut chain,
                    (&mut t, &mut x),
                    next,
                    (|t, i| wave.state(t, i), &mut states),
                    |chain, t, states, _| chain.command(t, states),
                )?;
                if !x.is_finite() {
                    return Err(format!("the simplified model diverged at t = {t:.4} s"));
                }
            }
            evaluations = used;
        }
    }
    let cycle_centres: Vec<Vector2<f64>> =
        centres.chunks_exact(per_cycle).map(|c| c.iter().sum::<Vector2<f64>>() / c.len() as f64).collect();
    let settled = &cycle_centres[run.transient_cycles.min(cycle_centres.len())..];
    let speed = if settled.len() >= 2 {
        settled.windows(2).map(|w| (w[1] - w[0]).norm()).sum::<f64>() / ((settled.len() - 1) as f64 / run.frequency)
    } else {
        f64::NAN
    };
    Ok(SnakeOutcome { circle: fit_circle(settled), samples, cycle_centres, speed, evaluations })
}

/// A complex-model sample: the state with the joint constraint forces, from the links'
/// accelerations (wheel points: J qdd + Jdot qd, the second by a central difference along
/// the motion) and the wheel forces: the force through segment i onto links i + 1.. is
/// sum over them of (m a - f).
fn complex_sample(
    system: &PrescribedSimulation<WpiSnake, DOF, CONTACTS>,
    t: f64,
    x: &State<DOF>,
    p: &Params,
) -> Result<SnakeSample, String> {
    let (acceleration, actuation) = system.solve(t, &x.q, &x.qd).map_err(|e| e.to_string())?;
    // The state with the driven coordinates exact, as the solve used.
    let exact = system.exact_state(t, x);
    let (q, qd) = (exact.q, exact.qd);
    let cache = WpiSnake::cache(&q, p);
    let report = system.simulation.report(t, &exact);
    let velocities = |q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>| {
        let cache = WpiSnake::cache(q, p);
        let mut v = [nalgebra::Vector3::zeros(); CONTACTS];
        WpiSnake::contact_velocities_into(q, qd, p, &cache, &mut v);
        v
    };
    let h = 1e-6;
    let ahead = velocities(&(q + qd * h), &qd);
    let behind = velocities(&(q - qd * h), &qd);
    let driven = velocities(&q, &acceleration);
    let mut joint_forces = [Vector2::zeros(); LINKS - 1];
    let mut through = Vector2::zeros();
    for link in (1..LINKS).rev() {
        let a = driven[link] + (ahead[link] - behind[link]) / (2.0 * h);
        let f = report.forces[link];
        through += Vector2::new(a.x, a.y) * p.link_mass - Vector2::new(f.x, f.y);
        joint_forces[link - 1] = through;
    }
    let com = WpiSnake::center_of_mass(&q, p, &cache);
    Ok(SnakeSample {
        t,
        center_of_mass: Vector2::new(com.x, com.y),
        heading: q[2],
        curvatures: std::array::from_fn(|i| q[WpiSnake::VALVES[i]]),
        wheels: std::array::from_fn(|i| Vector2::new(report.positions[i].x, report.positions[i].y)),
        wheel_forces: std::array::from_fn(|i| Vector2::new(report.forces[i].x, report.forces[i].y)),
        joint_forces,
        // lambda on a curvature is N m per 1/m; the torque at the segment is lambda / l.
        segment_torques: std::array::from_fn(|i| actuation[WpiSnake::VALVES[i]] / p.channel_length),
        coordinates: Some(q),
    })
}

/// Least-squares circle (algebraic fit, then the geometric residual): radius and RMS
/// distance of the points from the circle; None for fewer than 3 points or a straight path
/// (radius above 1000 times the path's extent).
pub fn fit_circle(points: &[Vector2<f64>]) -> Option<(f64, f64)> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let mean = points.iter().sum::<Vector2<f64>>() / n;
    // Kasa: minimise sum (u^2 + v^2 - 2 a u - 2 b v - c)^2 about the mean.
    let (mut suu, mut svv, mut suv, mut suuu, mut svvv, mut suvv, mut svuu) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for p in points {
        let (u, v) = (p.x - mean.x, p.y - mean.y);
        suu += u * u;
        svv += v * v;
        suv += u * v;
        suuu += u * u * u;
        svvv += v * v * v;
        suvv += u * v * v;
        svuu += v * u * u;
    }
    let det = suu * svv - suv * suv;
    let extent = points.iter().map(|p| (p - mean).norm()).fold(0.0, f64::max);
    if !(det.abs() > 1e-30 && extent > 0.0) {
        return None;
    }
    let rhs_u = 0.5 * (suuu + suvv);
    let rhs_v = 0.5 * (svvv + svuu);
    let a = (rhs_u * svv - rhs_v * suv) / det;
    let b = (suu * rhs_v - suv * rhs_u) / det;
    let radius = (a * a + b * b + (suu + svv) / n).sqrt();
    if !(radius.is_finite() && radius < 1000.0 * extent) {
        return None;
    }
    let centre = mean + Vector2::new(a, b);
    let rms = (points.iter().map(|p| ((p - centre).norm() - radius).powi(2)).sum::<f64>() / n).sqrt();
    Some((radius, rms))
}

/// Runs `runs` on every core (in order of the input in the result).
pub fn run_grid(runs: &[SnakeRun]) -> Vec<Result<SnakeOutcome, String>> {
    // Only the figures are kept: samples every 0.1 s.
    softgen_app::run_all(runs, |run| run_snake(run, ((0.1 / run.step).round() as usize).max(1), |_| {}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circle_fit_recovers_a_circle_and_rejects_a_line() {
        let points: Vec<Vector2<f64>> = (0..20)
            .map(|k| {
                let a = 0.3 * k as f64;
                Vector2::new(1.0 + 0.4 * a.cos(), -2.0 + 0.4 * a.sin())
            })
            .collect();
        let (r, rms) = fit_circle(&points).unwrap();
        assert!((r - 0.4).abs() < 1e-12 && rms < 1e-12, "{r} {rms}");
        let line: Vec<Vector2<f64>> = (0..20).map(|k| Vector2::new(0.1 * k as f64, 0.05 * k as f64)).collect();
        assert!(fit_circle(&line).is_none());
    }
}
