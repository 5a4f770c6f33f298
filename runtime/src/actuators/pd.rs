//! Joint servo: PD tracking of desired joint angles with a torque limit.

/// tau = clamp(kp (phi_d - phi) + kd (phid_d - phid), -limit, limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPd {
    pub stiffness: f64,
    pub damping: f64,
    pub torque_limit: f64,
}

impl JointPd {
    #[inline]
    pub fn torque(&self, desired: f64, desired_rate: f64, angle: f64, rate: f64) -> f64 {
        let tau = self.stiffness * (desired - angle) + self.damping * (desired_rate - rate);
        tau.clamp(-self.torque_limit, self.torque_limit)
    }

    pub fn validate(&self) -> Result<(), String> {
        use crate::quantities::physical_ranges::{ELASTIC_DAMPING, ELASTIC_STIFFNESS, TORQUE};
        ELASTIC_STIFFNESS.check("servo stiffness", self.stiffness)?;
        ELASTIC_DAMPING.check("servo damping", self.damping)?;
        TORQUE.check("servo torque limit", self.torque_limit)
    }
}
