//! Pneumatic muscles driving soft sections by pressure: the commanded pressure reaches the
//! muscle through a first-order lag (regulator and tube), and the reached pressure pulls on
//! the section's coordinates through the gradient of the muscle's length change.
//!
//! A muscle of area A at pressure p does work p A dl, so its generalized force is
//! p A (dl/dq). On an extensible section the coordinates are the muscles' length changes
//! (dl/dq a unit vector); on an inextensible one a muscle at distance r and angle psi from
//! the neutral axis changes length by l = -r L0 (kappa_y cos psi + kappa_z sin psi) (eq 1 of
//! 002_f355a977a209e7c9 with phi = L0 |kappa|), so dl/dkappa = -r L0 (cos psi, sin psi).
//!
//! The commands come from desired length changes through a jointspace-to-pressure map that
//! makes the static bend of an unloaded section equal the desired one: with extension-only
//! muscles, p_i = c (l_i - min_j l_j), and for three muscles 120 degrees apart on an
//! inextensible section of bending stiffness K the static balance K kappa = sum p_i A dl_i
//! gives kappa = kappa_desired when c = 2 K / (3 A r^2 L0^2).

use nalgebra::SVector;

/// One muscle as the generated code names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MuscleInfo {
    /// `<section>_muscle<k>`, k = 1, 2, 3.
    pub name: &'static str,
    /// The section it drives.
    pub body: &'static str,
    /// The section's first coordinate and coordinate count.
    pub first_coordinate: usize,
    /// See `first_coordinate`.
    pub coordinates: usize,
}

/// A muscle's values at the parameters in use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Muscle {
    /// Force per pressure (m^2).
    pub area: f64,
    /// The highest pressure it is rated for (bar).
    pub rated_pressure: f64,
    /// Time constant of the lag from commanded to reached pressure (s); 0 for none.
    pub pressure_lag: f64,
    /// Its length change's gradient with respect to the section's coordinates (entries past
    /// the section's coordinate count are zero).
    pub gradient: [f64; 3],
}

impl Muscle {
    /// Checks a positive area and rating and a non-negative lag, all finite.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.area.is_finite() && self.area > 0.0) {
            return Err(format!("muscle area must be finite and > 0 m^2, got {}", self.area));
        }
        if !(self.rated_pressure.is_finite() && self.rated_pressure > 0.0) {
            return Err(format!("muscle rated pressure must be finite and > 0 bar, got {}", self.rated_pressure));
        }
        if !(self.pressure_lag.is_finite() && self.pressure_lag >= 0.0) {
            return Err(format!("muscle pressure lag must be finite and >= 0 s, got {}", self.pressure_lag));
        }
        if !self.gradient.iter().all(|g| g.is_finite()) {
            return Err(format!("muscle length gradient must be finite, got {:?}", self.gradient));
        }
        Ok(())
    }

    /// The pressure (bar) `elapsed` seconds on from `reached` with `commanded` held: the lag
    /// in closed form.
    #[inline]
    pub fn pressure_after(&self, commanded: f64, reached: f64, elapsed: f64) -> f64 {
        if self.pressure_lag > 0.0 {
            commanded + (reached - commanded) * (-elapsed / self.pressure_lag).exp()
        } else {
            commanded
        }
    }

    /// Adds the generalized force of `pressure` (bar), p A dl/dq, to the coordinates of the
    /// section `info` names.
    #[inline]
    pub fn add_force<const N: usize>(&self, info: &MuscleInfo, pressure: f64, out: &mut SVector<f64, N>) {
        let force = pressure * 1e5 * self.area;
        for k in 0..info.coordinates {
            out[info.first_coordinate + k] += force * self.gradient[k];
        }
    }
}

/// The muscles of a robot with their reached pressures: commands go in, held over a control
/// period, and the lag is solved in closed form over it.
#[derive(Clone, Debug)]
pub struct MuscleDrive<const M: usize> {
    /// Which section each muscle drives.
    pub info: [MuscleInfo; M],
    /// Each muscle's geometry and rating.
    pub muscles: [Muscle; M],
    /// Pressure ceiling of the commands (bar), at most every muscle's rating.
    pub ceiling: f64,
    /// Reached pressures (bar).
    pub pressures: [f64; M],
    /// Commands in force (bar), after the ceiling.
    pub commands: [f64; M],
}

impl<const M: usize> MuscleDrive<M> {
    /// Muscles at rest (0 bar) under `ceiling`, refused above any muscle's rating.
    pub fn new(info: [MuscleInfo; M], muscles: [Muscle; M], ceiling: f64) -> Result<Self, String> {
        if !(ceiling.is_finite() && ceiling >= 0.0) {
            return Err(format!("pressure ceiling must be finite and >= 0 bar, got {ceiling}"));
        }
        for (i, m) in muscles.iter().enumerate() {
            m.validate().map_err(|e| format!("{}: {e}", info[i].name))?;
            if ceiling > m.rated_pressure {
                return Err(format!(
                    "pressure ceiling {ceiling} bar exceeds the {} bar muscle `{}` is rated for",
                    m.rated_pressure, info[i].name
                ));
            }
        }
        Ok(MuscleDrive { info, muscles, ceiling, pressures: [0.0; M], commands: [0.0; M] })
    }

    /// Sets the commanded pressures (bar), clamped to [0, ceiling]; a non-finite command is
    /// an error naming the muscle.
    pub fn command(&mut self, pressures: &[f64; M]) -> Result<(), String> {
        for (i, p) in pressures.iter().enumerate() {
            if !p.is_finite() {
                return Err(format!("commanded pressure of muscle `{}` is {p}", self.info[i].name));
            }
            self.commands[i] = p.clamp(0.0, self.ceiling);
        }
        Ok(())
    }

    /// Muscle `i`'s pressure `elapsed` seconds on under its held command.
    fn pressure_after(&self, i: usize, elapsed: f64) -> f64 {
        self.muscles[i].pressure_after(self.commands[i], self.pressures[i], elapsed)
    }

    /// Advances the reached pressures by `elapsed` seconds under the held commands.
    pub fn advance(&mut self, elapsed: f64) {
        for i in 0..M {
            self.pressures[i] = self.pressure_after(i, elapsed);
        }
    }

    /// Generalized force of the reached pressures, written into `out` (other entries
    /// untouched but for the sections' coordinates, which are overwritten).
    pub fn generalized_force_into<const N: usize>(&self, out: &mut SVector<f64, N>) {
        self.generalized_force_after_into(0.0, out);
    }

    /// Generalized force of the pressures `elapsed` seconds on under the held commands
    /// (the reached pressures are not advanced), written as [`generalized_force_into`]
    /// writes it.
    ///
    /// [`generalized_force_into`]: MuscleDrive::generalized_force_into
    pub fn generalized_force_after_into<const N: usize>(&self, elapsed: f64, out: &mut SVector<f64, N>) {
        for i in 0..M {
            let info = &self.info[i];
            for k in 0..info.coordinates {
                out[info.first_coordinate + k] = 0.0;
            }
        }
        for i in 0..M {
            self.muscles[i].add_force(&self.info[i], self.pressure_after(i, elapsed), out);
        }
    }
}

/// Extension-only jointspace-to-pressure map: p_i = (l_i - min_j l_j) / metres_per_bar for
/// the three muscles of one section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointspaceToPressure {
    /// Extension per bar (m/bar).
    pub metres_per_bar: f64,
}

impl JointspaceToPressure {
    /// The map under which three muscles of area `area` at `radius` on an inextensible section
    /// of length `length` and bending stiffness `stiffness` (energy K kappa^2 / 2 per
    /// curvature) bend the unloaded section to the desired curvature: 1 bar per
    /// 1e5 3 A r^2 L^2 / (2 K) metres.
    pub fn unit_static_gain(stiffness: f64, area: f64, radius: f64, length: f64) -> Result<Self, String> {
        let metres_per_bar = 1e5 * 3.0 * area * radius * radius * length * length / (2.0 * stiffness);
        if !(metres_per_bar.is_finite() && metres_per_bar > 0.0) {
            return Err(format!(
                "no jointspace-to-pressure map for stiffness {stiffness}, area {area}, radius {radius}, length {length}"
            ));
        }
        Ok(JointspaceToPressure { metres_per_bar })
    }

    /// Pressures (bar) for three muscles' desired length changes (m), before any ceiling.
    pub fn pressures(&self, lengths: [f64; 3]) -> [f64; 3] {
        let least = lengths.iter().copied().fold(f64::INFINITY, f64::min);
        lengths.map(|l| (l - least) / self.metres_per_bar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank(lag: f64) -> MuscleDrive<3> {
        let third = std::f64::consts::TAU / 3.0;
        let (r, length) = (0.0125, 0.24);
        let info = |name| MuscleInfo { name, body: "limb", first_coordinate: 0, coordinates: 2 };
        let muscle = |psi: f64| Muscle {
            area: 1e-4,
            rated_pressure: 4.0,
            pressure_lag: lag,
            gradient: [-r * length * psi.cos(), -r * length * psi.sin(), 0.0],
        };
        MuscleDrive::new(
            [info("limb_muscle1"), info("limb_muscle2"), info("limb_muscle3")],
            [muscle(0.0), muscle(third), muscle(2.0 * third)],
            3.0,
        )
        .unwrap()
    }

    #[test]
    fn unit_gain_map_bends_the_unloaded_section_as_desired() {
        let (stiffness, r, length) = (0.05, 0.0125, 0.24);
        let map = JointspaceToPressure::unit_static_gain(stiffness, 1e-4, r, length).unwrap();
        let mut drive = bank(0.0);
        // Bends whose pressures stay under the 3 bar ceiling.
        for (kappa_y, kappa_z) in [(1.5, 0.0), (-0.7, 1.2), (0.3, -0.4)] {
            let lengths: [f64; 3] = std::array::from_fn(|j| {
                drive.muscles[j].gradient[0] * kappa_y + drive.muscles[j].gradient[1] * kappa_z
            });
            drive.command(&map.pressures(lengths)).unwrap();
            drive.advance(1.0);
            let mut force = SVector::<f64, 2>::zeros();
            drive.generalized_force_into(&mut force);
            // Static balance: K kappa = Q.
            assert!((force[0] / stiffness - kappa_y).abs() < 1e-9, "{force}");
            assert!((force[1] / stiffness - kappa_z).abs() < 1e-9, "{force}");
        }
    }

    #[test]
    fn lag_is_first_order_and_commands_respect_the_ceiling() {
        let mut drive = bank(0.1);
        drive.command(&[5.0, 1.0, -1.0]).unwrap();
        assert_eq!(drive.commands, [3.0, 1.0, 0.0]);
        drive.advance(0.1);
        assert!((drive.pressures[0] - 3.0 * (1.0 - (-1.0f64).exp())).abs() < 1e-12);
        drive.advance(0.05);
        drive.advance(0.05);
        assert!((drive.pressures[1] - (1.0 - (-2.0f64).exp())).abs() < 1e-12);
        assert!(drive.command(&[f64::NAN, 0.0, 0.0]).unwrap_err().contains("limb_muscle1"));
        let info = drive.info;
        let over = MuscleDrive::new(info, drive.muscles, 5.0).unwrap_err();
        assert!(over.contains("exceeds the 4 bar muscle `limb_muscle1`"), "{over}");
    }
}
