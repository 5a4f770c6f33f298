//! Rolling gaits of a soft snake (000_a2f8bdeafcf4372f, section II-C) as actuator length
//! trajectories, and the pneumatic muscles' length-to-pressure map with its ceiling.
//!
//! Every section bends by a constant angle in a plane that turns about the body axis at the
//! gait frequency. The plane's direction is measured in the base frame: section i bends
//! towards omega t + i * section_phase, so planar rolling (phase 0) keeps all sections in
//! one plane, and spatial rolling (pi / 3) winds them into a helix. Each section's own
//! frame is rolled by its mounts (pi / 3 per joint on the seed robot), which the
//! trajectories subtract, so "planar" is planar in the body whatever the mounting.
//!
//! Extension-only muscles: actuator j of a section bent by theta towards d has
//! l_j = r theta (1 - cos(psi_j - d)), between 0 and 2 r theta.

use softgen_runtime::SectionGeometry;

/// A rolling gait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RollingGait {
    /// Turns of the bending plane per second (Hz).
    pub frequency: f64,
    /// Bending angle of every section (rad).
    pub bend: f64,
    /// Shift of the bending plane from one section to the next (rad): 0 planar, pi / 3
    /// spatial.
    pub section_phase: f64,
    /// The bend fades in over this time (s), so the body is not jerked; 0 starts at once.
    pub ramp: f64,
}

impl RollingGait {
    /// Checks every setting finite and in its range.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("frequency", self.frequency),
            ("bend", self.bend),
            ("section phase", self.section_phase),
            ("ramp", self.ramp),
        ] {
            if !v.is_finite() {
                return Err(format!("rolling gait {name} must be finite, got {v}"));
            }
        }
        if self.bend < 0.0 || self.ramp < 0.0 {
            return Err(format!("rolling gait bend and ramp must be >= 0, got {} and {}", self.bend, self.ramp));
        }
        Ok(())
    }

    /// Actuator length changes of section `i` at time `t` (since the gait started), for a
    /// section whose frame is rolled by `mount_roll` about the body axis relative to the base.
    pub fn lengths(&self, t: f64, i: usize, geometry: &SectionGeometry, mount_roll: f64) -> [f64; 3] {
        let weight = if self.ramp > 0.0 && t < self.ramp {
            let u = (t / self.ramp).max(0.0);
            u * u * (3.0 - 2.0 * u)
        } else {
            1.0
        };
        let theta = self.bend * weight;
        let direction = std::f64::consts::TAU * self.frequency * t + i as f64 * self.section_phase - mount_roll;
        std::array::from_fn(|j| {
            geometry.actuator_radius * theta * (1.0 - (geometry.actuator_angles[j] - direction).cos())
        })
    }
}

/// From muscle extension to pressure to force: p = l / metres_per_bar, clamped to
/// [0, ceiling]; the force on the length coordinate is p x area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PneumaticMuscles {
    /// Static extension per bar (m/bar): 0.01875 for the seed PMAs (50 % of 0.15 m at 4 bar).
    pub metres_per_bar: f64,
    /// Effective cross-section area (m^2).
    pub area: f64,
    /// Pressure ceiling (bar).
    pub ceiling: f64,
    /// The highest pressure the muscles are rated for (bar); the ceiling may not exceed it.
    pub rated: f64,
}

impl PneumaticMuscles {
    /// Checks every setting finite and in its range, and the ceiling within the rating.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value, strictly) in [
            ("extension per bar (m/bar)", self.metres_per_bar, true),
            ("area (m^2)", self.area, true),
            ("pressure ceiling (bar)", self.ceiling, false),
        ] {
            let in_range = if strictly { value > 0.0 } else { value >= 0.0 };
            if !(value.is_finite() && in_range) {
                return Err(format!(
                    "muscle {name} must be finite and {} 0, got {value}",
                    if strictly { ">" } else { ">=" }
                ));
            }
        }
        if !(self.rated > 0.0 && self.rated.is_finite()) {
            return Err(format!("the muscles' rated pressure must be > 0 bar, got {}", self.rated));
        }
        if self.ceiling > self.rated {
            return Err(format!(
                "pressure ceiling {} bar exceeds the {} bar the muscles are rated for",
                self.ceiling, self.rated
            ));
        }
        Ok(())
    }

    /// Pressure (bar) commanded for an extension (m).
    #[inline]
    pub fn pressure(&self, extension: f64) -> f64 {
        (extension / self.metres_per_bar).clamp(0.0, self.ceiling)
    }

    /// Force (N) of a pressure (bar).
    #[inline]
    pub fn force(&self, pressure_bar: f64) -> f64 {
        pressure_bar * 1e5 * self.area
    }

    /// The largest bend (rad) whose extensions stay within the ceiling.
    pub fn largest_bend(&self, geometry: &SectionGeometry) -> f64 {
        self.ceiling * self.metres_per_bar / (2.0 * geometry.actuator_radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry() -> SectionGeometry {
        let third = std::f64::consts::TAU / 3.0;
        SectionGeometry { rest_length: 0.15, actuator_radius: 0.0125, actuator_angles: [0.0, third, 2.0 * third] }
    }

    #[test]
    fn lengths_bend_the_section_as_asked() {
        let g = geometry();
        let gait = RollingGait { frequency: 0.5, bend: 1.2, section_phase: std::f64::consts::FRAC_PI_3, ramp: 0.0 };
        for t in [0.0, 0.3, 1.7] {
            for i in 0..3 {
                let l = gait.lengths(t, i, &g, 0.4 * i as f64);
                assert!(l.iter().all(|v| *v >= -1e-15 && *v <= 2.0 * 0.0125 * 1.2 + 1e-15), "{l:?}");
                let b = g.bending(l);
                let theta = b.theta_y.hypot(b.theta_z);
                assert!((theta - 1.2).abs() < 1e-12, "{theta}");
                let direction = b.theta_z.atan2(b.theta_y);
                let expected = std::f64::consts::PI * t + i as f64 * std::f64::consts::FRAC_PI_3 - 0.4 * i as f64;
                assert!(
                    ((direction - expected).rem_euclid(std::f64::consts::TAU))
                        .min((expected - direction).rem_euclid(std::f64::consts::TAU))
                        < 1e-9
                );
            }
        }
    }

    #[test]
    fn pressures_respect_the_ceiling() {
        let m = PneumaticMuscles { metres_per_bar: 0.01875, area: 3.5625e-4, ceiling: 3.0, rated: 4.0 };
        assert_eq!(m.pressure(-0.01), 0.0);
        assert!((m.pressure(0.0375) - 2.0).abs() < 1e-12);
        assert_eq!(m.pressure(0.2), 3.0);
        assert!(m.validate().is_ok());
        let over = PneumaticMuscles { ceiling: 100.0, ..m };
        assert!(over.validate().unwrap_err().contains("exceeds the 4 bar the muscles are rated for"));
        assert!((m.largest_bend(&geometry()) - 2.25).abs() < 1e-12);
        // With K = 1900 N/m the area makes the static extension at 4 bar 50 % of 0.15 m.
        assert!((m.force(4.0) / 1900.0 - 0.075).abs() < 1e-12);
    }
}
