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
    /// The wave's amplitude and offset fade in over this time (s) with a smooth step, so a
    /// robot starting straight is not jerked into the gait's first shape; 0 starts at once.
    pub ramp: f64,
}

impl Serpenoid {
    /// Desired angle and rate of joint `j` (0-based, so j = 0 is the paper's joint 1) with
    /// spatial frequency `eta` for that joint.
    #[inline]
    pub fn joint(&self, t: f64, j: usize, eta: f64) -> (f64, f64) {
        let phase = self.temporal_frequency * t + eta * j as f64;
        let (s, c) = phase.sin_cos();
        let angle = self.amplitude * s + self.offset;
        let rate = self.amplitude * self.temporal_frequency * c;
        if self.ramp > 0.0 && t < self.ramp {
            // Smooth step 3u^2 - 2u^3 and its derivative.
            let u = (t / self.ramp).max(0.0);
            let weight = u * u * (3.0 - 2.0 * u);
            let weight_rate = 6.0 * u * (1.0 - u) / self.ramp;
            return (weight * angle, weight * rate + weight_rate * angle);
        }
        (angle, rate)
    }

    /// Gait period 2 pi / omega (s).
    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.temporal_frequency.abs()
    }

    /// Checks the amplitude, frequencies, offset and ramp within their ranges.
    pub fn validate(&self) -> Result<(), String> {
        use crate::quantities::physical_ranges::{ANGLE, FREQUENCY, TIME_CONSTANT};
        ANGLE.check("gait amplitude", self.amplitude)?;
        FREQUENCY.check("gait temporal frequency", self.temporal_frequency)?;
        ANGLE.check("gait spatial frequency (rad per joint)", self.spatial_frequency)?;
        ANGLE.check("gait offset", self.offset)?;
        TIME_CONSTANT.check("gait ramp", self.ramp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_derivative_of_angle() {
        let g = Serpenoid { amplitude: 1.1, temporal_frequency: 1.3, spatial_frequency: -1.5, offset: 0.1, ramp: 2.0 };
        let h = 1e-6;
        for t in [0.3, 0.7, 1.9, 2.5] {
            let (a0, rate) = g.joint(t, 3, -1.5);
            let (a1, _) = g.joint(t + h, 3, -1.5);
            assert!(((a1 - a0) / h - rate).abs() < 1e-5, "t = {t}");
        }
        assert_eq!(g.joint(0.0, 3, -1.5), (0.0, 0.0));
    }
}
