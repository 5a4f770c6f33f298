//! The serpenoid gait phi_j = A sin(omega t + eta_j (j - 1)) + offset (eqs 1 and 22).

/// Serpenoid travelling wave over the actuated joints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serpenoid {
    /// Amplitude A (rad).
    pub amplitude: f64,
    /// Temporal frequency omega (rad/s).
    pub temporal_frequency: f64,
    /// Nominal spatial frequency eta (rad).
    pub spatial_frequency: f64,
    /// Constant offset added to every joint (rad); non-zero offsets turn the robot.
    pub offset: f64,
}

impl Serpenoid {
    /// Desired angle and rate of joint `j` (0-based, so j = 0 is the paper's joint 1) with
    /// spatial frequency `eta` for that joint.
    #[inline]
    pub fn joint(&self, t: f64, j: usize, eta: f64) -> (f64, f64) {
        let phase = self.temporal_frequency * t + eta * j as f64;
        let (s, c) = phase.sin_cos();
        (self.amplitude * s + self.offset, self.amplitude * self.temporal_frequency * c)
    }

    /// Gait period 2 pi / omega (s).
    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.temporal_frequency.abs()
    }

    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("amplitude", self.amplitude),
            ("temporal frequency", self.temporal_frequency),
            ("spatial frequency", self.spatial_frequency),
            ("offset", self.offset),
        ] {
            if !v.is_finite() {
                return Err(format!("gait {name} must be finite, got {v}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_derivative_of_angle() {
        let g = Serpenoid { amplitude: 1.1, temporal_frequency: 1.3, spatial_frequency: -1.5, offset: 0.1 };
        let h = 1e-6;
        let (a0, rate) = g.joint(0.7, 3, -1.5);
        let (a1, _) = g.joint(0.7 + h, 3, -1.5);
        assert!(((a1 - a0) / h - rate).abs() < 1e-5);
    }
}
