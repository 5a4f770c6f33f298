//! Joint servo: PD tracking of desired joint angles with a torque limit.

/// tau = clamp(kp (phi_d - phi) + kd (phid_d - phid), -limit, limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPd {
    /// kp (N m/rad, or N/m).
    pub stiffness: f64,
    /// kd (N m s/rad, or N s/m).
    pub damping: f64,
    /// The saturation (N m, or N).
    pub torque_limit: f64,
}

impl JointPd {
    /// The torque tracking (desired, desired_rate) from (angle, rate).
    #[inline]
    pub fn torque(&self, desired: f64, desired_rate: f64, angle: f64, rate: f64) -> f64 {
        let tau = self.stiffness * (desired - angle) + self.damping * (desired_rate - rate);
        tau.clamp(-self.torque_limit, self.torque_limit)
    }

    /// Checks the gains and the limit within their physical ranges.
    pub fn validate(&self) -> Result<(), String> {
        use crate::quantities::physical_ranges::{ELASTIC_DAMPING, ELASTIC_STIFFNESS, TORQUE};
        ELASTIC_STIFFNESS.check("servo stiffness", self.stiffness)?;
        ELASTIC_DAMPING.check("servo damping", self.damping)?;
        TORQUE.check("servo torque limit", self.torque_limit)
    }
}
