//! Box-DDP's unit tests: a linear-quadratic problem against its condensed optimum, a
//! shifted plan's warm start, a pendulum's swing-up within its torque bound, and failures
//! and sizes refused.

use super::*;

/// x_(k+1) = A x + B u: a damped double integrator per axis (two axes, one control each).
struct Linear {
    a: DMatrix<f64>,
    b: DMatrix<f64>,
}

impl Linear {
    fn new(h: f64) -> Self {
        let mut a = DMatrix::identity(4, 4);
        let mut b = DMatrix::zeros(4, 2);
        for axis in 0..2 {
            a[(axis, 2 + axis)] = h;
            a[(2 + axis, 2 + axis)] = 1.0 - 0.1 * h;
            b[(axis, axis)] = 0.5 * h * h;
            b[(2 + axis, axis)] = h;
        }
        Linear { a, b }
    }
}

impl KnotDynamics for Linear {
    fn state_size(&self) -> usize {
        4
    }
    fn control_size(&self) -> usize {
        2
    }
    fn step(
        &mut self,
        _knot: usize,
        state: &DVector<f64>,
        control: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
    ) -> Result<(), String> {
        next.copy_from(&(&self.a * state + &self.b * control));
        if let Some((a, b)) = jacobians {
            a.copy_from(&self.a);
            b.copy_from(&self.b);
        }
        Ok(())
    }
}

/// 1/2 (x - goal)' Q (x - goal) + 1/2 r |u|^2 per knot, terminal 1/2 q_f |x - goal|^2.
struct Quadratic {
    goal: DVector<f64>,
    q: f64,
    r: f64,
    terminal: f64,
}

impl KnotCost for Quadratic {
    fn running(
        &mut self,
        _knot: usize,
        x: &DVector<f64>,
        u: &DVector<f64>,
        derivatives: Option<&mut CostDerivatives>,
    ) -> f64 {
        let e = x - &self.goal;
        if let Some(d) = derivatives {
            d.x.copy_from(&(&e * self.q));
            d.u.copy_from(&(u * self.r));
            d.xx.fill_diagonal(self.q);
            d.uu.fill_diagonal(self.r);
        }
        0.5 * self.q * e.norm_squared() + 0.5 * self.r * u.norm_squared()
    }
    fn terminal(&mut self, x: &DVector<f64>, derivatives: Option<&mut CostDerivatives>) -> f64 {
        let e = x - &self.goal;
        if let Some(d) = derivatives {
            d.x.copy_from(&(&e * self.terminal));
            d.xx.fill_diagonal(self.terminal);
        }
        0.5 * self.terminal * e.norm_squared()
    }
}

/// The same problem condensed into one QP in the stacked controls (x_k = A^k x0 + sum
/// A^(k-1-j) B u_j), solved by the box QP: an independent route to the optimum.
fn condensed(system: &Linear, cost: &Quadratic, x0: &DVector<f64>, knots: usize, bound: f64) -> (DVector<f64>, f64) {
    let (n, m) = (4, 2);
    let size = knots * m;
    let mut hessian = DMatrix::zeros(size, size);
    let mut gradient = DVector::zeros(size);
    // State k as free part + map applied to the stacked controls.
    let mut free = x0.clone();
    let mut map = DMatrix::<f64>::zeros(n, size);
    for k in 1..=knots {
        let mut next_map = &system.a * &map;
        next_map.view_mut((0, (k - 1) * m), (n, m)).copy_from(&system.b);
        map = next_map;
        free = &system.a * free;
        let weight = if k == knots { cost.terminal } else { cost.q };
        hessian += map.transpose() * &map * weight;
        gradient += map.transpose() * (&free - &cost.goal) * weight;
    }
    hessian += DMatrix::identity(size, size) * cost.r;
    let mut qp = BoxQp::new(size);
    let mut u = DVector::zeros(size);
    let lower = DVector::from_element(size, -bound);
    let upper = DVector::from_element(size, bound);
    qp.solve(&hessian, &gradient, &lower, &upper, &mut u).unwrap();
    // The constant part: the cost of u = 0.
    let mut constant = 0.5 * cost.q * (x0 - &cost.goal).norm_squared();
    let mut x = x0.clone();
    for k in 1..=knots {
        x = &system.a * x;
        let weight = if k == knots { cost.terminal } else { cost.q };
        constant += 0.5 * weight * (&x - &cost.goal).norm_squared();
    }
    let value = 0.5 * u.dot(&(&hessian * &u)) + gradient.dot(&u) + constant;
    (u, value)
}

fn problem() -> (Linear, Quadratic, DVector<f64>) {
    let goal = DVector::from_row_slice(&[1.0, -0.5, 0.0, 0.0]);
    (Linear::new(0.05), Quadratic { goal, q: 1.0, r: 0.01, terminal: 100.0 }, DVector::zeros(4))
}

#[test]
fn linear_quadratic_problem_meets_its_condensed_optimum() {
    for (bound, label) in [(1e3, "unconstrained"), (0.8, "bounded")] {
        let (mut system, mut cost, x0) = problem();
        let knots = 30;
        let lower = DVector::from_element(2, -bound);
        let upper = DVector::from_element(2, bound);
        // Solved to the end: at the default tolerance (a predicted reduction of 1e-7 of the
        // cost) the controls can still differ by 1e-3 along the flat directions of the
        // small effort weight, though the cost agrees to 1e-8.
        let settings = DdpSettings { tolerance: 1e-12, ..Default::default() };
        let mut ddp = BoxDdp::new(4, knots, lower, upper, settings).unwrap();
        let report = ddp.solve(&mut system, &mut cost, &x0).unwrap();
        assert!(report.converged, "{label}: {report:?}");
        let (expected, optimum) = condensed(&system, &cost, &x0, knots, bound);
        assert!(
            (report.cost - optimum).abs() < 1e-6 * optimum.abs(),
            "{label}: DDP cost {} against the condensed optimum {optimum}",
            report.cost
        );
        for (k, u) in ddp.controls().iter().enumerate() {
            for i in 0..2 {
                assert!(u[i].abs() <= bound, "{label}: control {i} at knot {k} is {} past {bound}", u[i]);
                assert!(
                    (u[i] - expected[2 * k + i]).abs() < 1e-3,
                    "{label}: knot {k}: {} vs {}",
                    u[i],
                    expected[2 * k + i]
                );
            }
        }
        if bound < 1.0 {
            let saturated = ddp.controls().iter().filter(|u| u.iter().any(|v| v.abs() == bound)).count();
            assert!(saturated > 0, "the bounded case must hit its bounds");
        }
        // Unconstrained LQ: Newton's step is exact, so one step converges.
        if bound > 1.0 {
            assert!(report.iterations <= 3, "{report:?}");
        }
    }
}

#[test]
fn shifted_plan_warm_starts_the_next_solve() {
    let (mut system, mut cost, x0) = problem();
    let bounds = (DVector::from_element(2, -2.0), DVector::from_element(2, 2.0));
    let mut ddp = BoxDdp::new(4, 20, bounds.0, bounds.1, DdpSettings::default()).unwrap();
    ddp.solve(&mut system, &mut cost, &x0).unwrap();
    let predicted = ddp.states()[1].clone();
    let second = ddp.controls()[1].clone();
    ddp.shift(1);
    assert_eq!(ddp.controls()[0], second);
    assert_eq!(ddp.controls()[19], ddp.controls()[18], "the last control is repeated");
    // From the state the plan predicted, the shifted plan is nearly optimal already.
    let mut one = ddp.clone();
    one.settings.max_iterations = 1;
    let report = one.solve(&mut system, &mut cost, &predicted).unwrap();
    let mut cold =
        BoxDdp::new(4, 20, DVector::from_element(2, -2.0), DVector::from_element(2, 2.0), DdpSettings::default())
            .unwrap();
    cold.settings.max_iterations = 1;
    let cold_report = cold.solve(&mut system, &mut cost, &predicted).unwrap();
    assert!(report.initial_cost < 0.5 * cold_report.initial_cost, "{report:?} vs cold {cold_report:?}");
}

/// A pendulum swung to upright by a bounded torque: nonlinear, so several iterations,
/// each one lowering the cost.
struct Pendulum;

impl KnotDynamics for Pendulum {
    fn state_size(&self) -> usize {
        2
    }
    fn control_size(&self) -> usize {
        1
    }
    fn step(
        &mut self,
        _knot: usize,
        x: &DVector<f64>,
        u: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
    ) -> Result<(), String> {
        let h = 0.02;
        let acceleration = -9.81 * x[0].sin() - 0.1 * x[1] + u[0];
        next[1] = x[1] + h * acceleration;
        next[0] = x[0] + h * next[1];
        if let Some((a, b)) = jacobians {
            let (dq, dv) = (-9.81 * x[0].cos(), -0.1);
            a.copy_from_slice(&[1.0 + h * h * dq, h * dq, h + h * h * dv, 1.0 + h * dv]);
            b.copy_from_slice(&[h * h, h]);
        }
        Ok(())
    }
}

#[test]
fn pendulum_swings_up_within_its_torque_bound() {
    let goal = DVector::from_row_slice(&[std::f64::consts::PI, 0.0]);
    let mut cost = Quadratic { goal, q: 0.0, r: 0.01, terminal: 1000.0 };
    let knots = 250;
    let bound = 3.0;
    let mut ddp = BoxDdp::new(
        2,
        knots,
        DVector::from_element(1, -bound),
        DVector::from_element(1, bound),
        DdpSettings::default(),
    )
    .unwrap();
    ddp.settings.max_iterations = 1;
    let x0 = DVector::zeros(2);
    let mut previous = f64::INFINITY;
    for _ in 0..200 {
        let report = ddp.solve(&mut Pendulum, &mut cost, &x0).unwrap();
        assert!(report.cost <= previous, "an iteration raised the cost: {previous} -> {}", report.cost);
        previous = report.cost;
        if report.converged {
            break;
        }
    }
    let end = &ddp.states()[knots];
    assert!((end[0] - std::f64::consts::PI).abs() < 0.05 && end[1].abs() < 0.2, "ends at {end}");
    assert!(ddp.controls().iter().all(|u| u[0].abs() <= bound));
    assert!(ddp.controls().iter().any(|u| u[0].abs() == bound), "a torque below the weight must saturate");
}

struct Failing;

impl KnotDynamics for Failing {
    fn state_size(&self) -> usize {
        1
    }
    fn control_size(&self) -> usize {
        1
    }
    fn step(
        &mut self,
        knot: usize,
        x: &DVector<f64>,
        u: &DVector<f64>,
        next: &mut DVector<f64>,
        jacobians: Option<(&mut DMatrix<f64>, &mut DMatrix<f64>)>,
    ) -> Result<(), String> {
        next[0] = if knot == 3 { f64::NAN } else { x[0] + u[0] };
        if let Some((a, b)) = jacobians {
            a[(0, 0)] = 1.0;
            b[(0, 0)] = 1.0;
        }
        Ok(())
    }
}

#[test]
fn failures_are_errors_and_sizes_are_checked() {
    let mut cost = Quadratic { goal: DVector::zeros(1), q: 1.0, r: 1.0, terminal: 1.0 };
    let bounds = || (DVector::from_element(1, -1.0), DVector::from_element(1, 1.0));
    let (lower, upper) = bounds();
    let mut ddp = BoxDdp::new(1, 5, lower, upper, DdpSettings::default()).unwrap();
    let error = ddp.solve(&mut Failing, &mut cost, &DVector::zeros(1)).unwrap_err();
    assert_eq!(error, DdpError::Rollout { knot: 3, reason: "the state is not finite".into() });
    let error = ddp.solve(&mut Pendulum, &mut cost, &DVector::zeros(1)).unwrap_err();
    assert!(matches!(error, DdpError::Size(_)), "{error}");
    let (lower, _) = bounds();
    let e = BoxDdp::new(1, 5, lower, DVector::from_element(1, -2.0), DdpSettings::default()).unwrap_err();
    assert!(e.contains("not an interval"), "{e}");
    let (lower, upper) = bounds();
    let e = BoxDdp::new(1, 5, lower, upper, DdpSettings { line_search_factor: 1.5, ..Default::default() }).unwrap_err();
    assert!(e.contains("line-search"), "{e}");
}
