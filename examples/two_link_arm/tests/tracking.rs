//! The example crate's checks: the generated module against the arm's textbook mass matrix,
//! and the computed-torque controller tracking a swing with an exact and with a wrong model.

use softgen_runtime::nalgebra::{SMatrix, SVector};
use softgen_runtime::{Integrator, Model, ParamSet, RungeKutta4, State};
use two_link_arm::{ComputedTorque, ControlledArm, Params, Swing, TwoLinkArm, DOF};

/// The generated M against the closed form for two uniform rods and a tip payload.
#[test]
fn mass_matrix_is_the_textbook_one() {
    let p = Params::default();
    let get = |name: &str| p.get(Params::names().iter().position(|n| *n == name).unwrap());
    let (l1, l2, m1, m2, mp) =
        (get("upper_length"), get("lower_length"), get("upper_mass"), get("lower_mass"), get("payload"));
    let (i1, i2, c1, c2) = (m1 * l1 * l1 / 12.0, m2 * l2 * l2 / 12.0, l1 / 2.0, l2 / 2.0);
    for (a, b) in [(0.0, 0.0), (-0.8, 0.6), (1.3, -2.1), (3.0, 3.0)] {
        let q = SVector::<f64, DOF>::new(a, b);
        let mut m = SMatrix::<f64, DOF, DOF>::zeros();
        TwoLinkArm::mass_matrix_into(&q, &p, &TwoLinkArm::cache(&q, &p), &mut m);
        let cos = b.cos();
        let m22 = i2 + m2 * c2 * c2 + mp * l2 * l2;
        let m12 = m22 + (m2 * c2 + mp * l2) * l1 * cos;
        let m11 = i1 + m1 * c1 * c1 + (m2 + mp) * l1 * l1 + 2.0 * (m12 - m22) + m22;
        let expected = SMatrix::<f64, DOF, DOF>::new(m11, m12, m12, m22);
        assert!((m - expected).norm() < 1e-12, "q = ({a}, {b}): {m} vs {expected}");
    }
}

/// Runs the arm for `duration` s from 0.1 rad off the swing and returns the largest joint
/// error over the last second.
fn tracking_error(controller: &ComputedTorque, duration: f64) -> f64 {
    let swing = Swing { centre: [-0.8, 0.6], amplitude: [0.5, 0.7], omega: 2.0 * std::f64::consts::PI };
    let mut arm = ControlledArm { plant: Params::default(), controller, reference: swing };
    let start = swing.at(0.0).position + SVector::<f64, DOF>::new(0.1, -0.1);
    let mut x = State::new(start, SVector::zeros());
    let mut t = 0.0;
    let mut integrator = RungeKutta4::new(1e-3).unwrap();
    let mut worst: f64 = 0.0;
    while t < duration - 1e-9 {
        let next = t + 0.01;
        integrator.integrate_to(&mut arm, &mut t, &mut x, next).unwrap();
        if t > duration - 1.0 {
            worst = worst.max((swing.at(t).position - x.q).abs().max());
        }
    }
    worst
}

/// With the plant's own parameters the error obeys e'' + 2w e' + w^2 e = 0 and is gone
/// after a second (w = 20 rad/s: (1 + w t) e^(-w t) ~ 4e-8 of the start at 1 s), down to
/// the integrator's error.
#[test]
fn exact_model_tracks_the_swing() {
    let controller = ComputedTorque::critically_damped(Params::default(), 20.0, 20.0);
    let error = tracking_error(&controller, 3.0);
    assert!(error < 1e-6, "largest error over the last second {error} rad");
}

/// A controller that does not know about the 0.2 kg payload leaves an error the feedback
/// must carry. At the forearm the payload more than doubles the inertia (believed 0.010,
/// true 0.023 kg m^2) and adds about 0.5 N m of gravity and 0.35 N m of inertial torque, so
/// the error is of order 0.8 / (0.010 w^2) ~ 0.2 rad at w = 20 rad/s, and falls as 1/w^2
/// with stiffer gains.
#[test]
fn unknown_payload_leaves_an_error_that_falls_with_the_gains() {
    let mut believed = Params::default();
    believed.set("payload", 0.0).unwrap();
    let soft = tracking_error(&ComputedTorque::critically_damped(believed.clone(), 20.0, 20.0), 3.0);
    let stiff = tracking_error(&ComputedTorque::critically_damped(believed, 40.0, 20.0), 3.0);
    println!("unknown payload: {soft:.4} rad at w = 20 rad/s, {stiff:.4} rad at w = 40 rad/s");
    assert!(soft > 0.05 && soft < 0.5, "largest error over the last second {soft} rad at w = 20 rad/s");
    let ratio = stiff / soft;
    assert!(
        ratio > 0.15 && ratio < 0.4,
        "doubling w scaled the error by {ratio} ({stiff} / {soft} rad), not about 1/4"
    );
}
