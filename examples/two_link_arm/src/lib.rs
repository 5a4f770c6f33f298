//! An example of softgen used from a crate of one's own: the two-link arm of
//! `two_link_arm.toml`, generated into `src/two_link_arm.rs` by
//!
//! ```text
//! cargo run -p softgen-codegen -- --out examples/two_link_arm/src examples/two_link_arm/two_link_arm.toml
//! ```
//!
//! and driven by a computed-torque controller built on the generated mass matrix, Coriolis
//! and gravity terms. The crate depends on softgen-runtime alone.

// Written by softgen-codegen and laid out by prettyplease; rustfmt leaves it alone so the
// regeneration check compares like with like.
#[rustfmt::skip]
mod two_link_arm;

pub use self::two_link_arm::{Params, TwoLinkArm, CONTACTS, DOF};

use softgen_runtime::nalgebra::{SMatrix, SVector};
use softgen_runtime::{forward_dynamics, IntegrationError, Model, SecondOrderSystem};

/// Joint angles, rates and accelerations the arm should follow at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    pub position: SVector<f64, DOF>,
    pub velocity: SVector<f64, DOF>,
    pub acceleration: SVector<f64, DOF>,
}

/// A smooth reference: each joint swings as `centre + amplitude sin(omega t)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Swing {
    pub centre: [f64; DOF],
    pub amplitude: [f64; DOF],
    /// Angular frequency (rad/s).
    pub omega: f64,
}

impl Swing {
    pub fn at(&self, t: f64) -> Reference {
        let (s, c) = (self.omega * t).sin_cos();
        let w = self.omega;
        Reference {
            position: SVector::from_fn(|i, _| self.centre[i] + self.amplitude[i] * s),
            velocity: SVector::from_fn(|i, _| self.amplitude[i] * w * c),
            acceleration: SVector::from_fn(|i, _| -self.amplitude[i] * w * w * s),
        }
    }
}

/// Computed-torque control: tau = M(q) (qdd_ref + Kd e_dot + Kp e) + C(q, qd) qd + G(q), which
/// makes the tracking error obey e_dd + Kd e_d + Kp e = 0 when the model is the plant's.
/// `model` is the controller's belief about the arm (its payload, say), which may differ
/// from the plant's parameters.
#[derive(Clone, Debug)]
pub struct ComputedTorque {
    pub model: Params,
    /// Position gain (1/s^2).
    pub stiffness: f64,
    /// Velocity gain (1/s).
    pub damping: f64,
    /// The motors' torque limit (N m); commands are clamped to it.
    pub torque_limit: f64,
}

impl ComputedTorque {
    /// Gains for a critically damped error with natural frequency `omega` (rad/s).
    pub fn critically_damped(model: Params, omega: f64, torque_limit: f64) -> ComputedTorque {
        ComputedTorque { model, stiffness: omega * omega, damping: 2.0 * omega, torque_limit }
    }

    /// The joint torques for state (q, qd) and the reference, written into `torque`.
    pub fn torque_into(
        &self,
        q: &SVector<f64, DOF>,
        qd: &SVector<f64, DOF>,
        reference: &Reference,
        torque: &mut SVector<f64, DOF>,
    ) {
        let cache = TwoLinkArm::cache(q, &self.model);
        let mut mass_matrix = SMatrix::<f64, DOF, DOF>::zeros();
        let mut coriolis = SVector::<f64, DOF>::zeros();
        let mut gravity = SVector::<f64, DOF>::zeros();
        TwoLinkArm::mass_matrix_into(q, &self.model, &cache, &mut mass_matrix);
        TwoLinkArm::coriolis_into(q, qd, &self.model, &cache, &mut coriolis);
        TwoLinkArm::gravity_into(q, &self.model, &cache, &mut gravity);
        let error = reference.position - q;
        let error_rate = reference.velocity - qd;
        let commanded = reference.acceleration + error_rate * self.damping + error * self.stiffness;
        *torque = mass_matrix * commanded + coriolis + gravity;
        torque.apply(|t| *t = t.clamp(-self.torque_limit, self.torque_limit));
    }
}

/// The arm under a controller: the plant the integrators step. Its right-hand side is the
/// generated forward dynamics (articulated-body algorithm) with the controller's torques.
pub struct ControlledArm<'a> {
    pub plant: Params,
    pub controller: &'a ComputedTorque,
    pub reference: Swing,
}

impl SecondOrderSystem<DOF> for ControlledArm<'_> {
    fn acceleration(
        &mut self,
        t: f64,
        q: &SVector<f64, DOF>,
        qd: &SVector<f64, DOF>,
        qdd: &mut SVector<f64, DOF>,
    ) -> Result<(), IntegrationError> {
        let mut torque = SVector::<f64, DOF>::zeros();
        self.controller.torque_into(q, qd, &self.reference.at(t), &mut torque);
        let cache = TwoLinkArm::cache(q, &self.plant);
        forward_dynamics::<TwoLinkArm, DOF, CONTACTS>(q, qd, &self.plant, &cache, &torque, qdd)
            .map_err(|_| IntegrationError::SingularMassMatrix { time: t })
    }
}
