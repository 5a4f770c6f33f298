//! Gaits of robots with constant-curvature limbs (002_f355a977a209e7c9, section III): each
//! limb's tip runs a circle (eq 13) through inverse kinematics, holds a posture, or bends
//! and straightens once a cycle, sampled at a fixed number of points per cycle as the paper
//! does (100) and held between samples; muscle pressures follow through eq 1 and the
//! jointspace-to-pressure map.
//!
//! Eq 13's circle is x = rho sin(-2 pi t / tau), y = rho cos(-2 pi t / tau) in the limb frame:
//! here its start angle and sense are the limb's own, `sense` +1 turning anticlockwise about
//! the limb's outward axis (the paper's +Z_j), -1 clockwise.

use super::limb::{CurveParameters, Limb, OutOfReach};
use softgen_runtime::JointspaceToPressure;

/// What one limb does during a gait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimbMotion {
    /// Unactuated: straight.
    Rest,
    /// A constant bend.
    Hold(CurveParameters),
    /// Eq 13: the tip circles the limb axis at `radius` (m), starting at `start` (rad, from
    /// the limb's x axis) and turning with `sense` (+1 anticlockwise, -1 clockwise).
    Circle {
        /// The tip's circle's radius (m).
        radius: f64,
        /// Where it starts (rad, from the limb's x axis).
        start: f64,
        /// +1 anticlockwise, -1 clockwise.
        sense: f64,
    },
    /// Bends towards `theta` from straight to `phi` and back once a cycle (raised cosine),
    /// peaking at `peak` (fraction of the cycle).
    Nod {
        /// The bending plane's angle from the limb's x axis (rad).
        theta: f64,
        /// The arc's angle at the peak (rad, >= 0).
        phi: f64,
        /// When the bend peaks, as a fraction of the cycle.
        peak: f64,
    },
}

/// A gait of `L` limbs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbGait<const L: usize> {
    /// Cycles per second (Hz): 1 / tau.
    pub frequency: f64,
    /// Trajectory points per cycle, held between them (the paper: 100).
    pub samples_per_cycle: usize,
    /// Each limb's motion, in the robot's limb order.
    pub limbs: [LimbMotion; L],
}

impl<const L: usize> LimbGait<L> {
    /// Checks the frequency, the samples and each limb's motion against its limb.
    pub fn validate(&self, limbs: &[Limb; L]) -> Result<(), String> {
        if !(self.frequency.is_finite() && self.frequency > 0.0) {
            return Err(format!("gait frequency must be finite and > 0 Hz, got {}", self.frequency));
        }
        if self.samples_per_cycle == 0 {
            return Err("a gait needs at least one trajectory point per cycle".into());
        }
        for (j, m) in self.limbs.iter().enumerate() {
            match *m {
                LimbMotion::Rest => {}
                LimbMotion::Hold(c) => {
                    if !(c.theta.is_finite() && c.phi.is_finite() && c.phi >= 0.0) {
                        return Err(format!("limb {j}: held bend must be finite with phi >= 0, got {c:?}"));
                    }
                }
                LimbMotion::Circle { radius, start, sense } => {
                    if !(start.is_finite() && (sense == 1.0 || sense == -1.0)) {
                        return Err(format!(
                            "limb {j}: circle start must be finite and sense +1 or -1, got {start}, {sense}"
                        ));
                    }
                    if !(radius.is_finite() && radius >= 0.0) {
                        return Err(format!("limb {j}: circle radius must be finite and >= 0 m, got {radius}"));
                    }
                    limbs[j].inverse(radius, 0.0).map_err(|e| format!("limb {j}: stride radius {radius} m: {e}"))?;
                }
                LimbMotion::Nod { theta, phi, peak } => {
                    if !(theta.is_finite() && phi.is_finite() && phi >= 0.0 && (0.0..=1.0).contains(&peak)) {
                        return Err(format!(
                            "limb {j}: nod needs finite theta, phi >= 0 and peak in [0, 1], got {theta}, {phi}, {peak}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The trajectory point in force at time `t` (s since the gait started): points at
    /// k / (samples f), each held until the next.
    pub fn sample_time(&self, t: f64) -> f64 {
        let per_second = self.samples_per_cycle as f64 * self.frequency;
        (t * per_second + 1e-9).floor().max(0.0) / per_second
    }

    /// Every limb's curve parameters at time `t`, through inverse kinematics for circles.
    pub fn curves(&self, t: f64, limbs: &[Limb; L]) -> Result<[CurveParameters; L], OutOfReach> {
        let ts = self.sample_time(t);
        let cycle = (ts * self.frequency).fract();
        let mut out = [CurveParameters { theta: 0.0, phi: 0.0 }; L];
        for j in 0..L {
            out[j] = match self.limbs[j] {
                LimbMotion::Rest => CurveParameters { theta: 0.0, phi: 0.0 },
                LimbMotion::Hold(c) => c,
                LimbMotion::Circle { radius, start, sense } => {
                    let angle = start + sense * std::f64::consts::TAU * cycle;
                    limbs[j].inverse(radius * angle.cos(), radius * angle.sin())?
                }
                LimbMotion::Nod { theta, phi, peak } => {
                    // Raised cosine with its top at `peak`: 0 at the cycle's ends.
                    let u = if cycle <= peak {
                        if peak > 0.0 {
                            cycle / peak
                        } else {
                            1.0
                        }
                    } else if peak < 1.0 {
                        (1.0 - cycle) / (1.0 - peak)
                    } else {
                        1.0
                    };
                    CurveParameters { theta, phi: phi * 0.5 * (1.0 - (std::f64::consts::PI * u).cos()) }
                }
            };
        }
        Ok(out)
    }

    /// Commanded pressures (bar, before any ceiling) of every limb's three muscles at time
    /// `t`: eq 1 then the jointspace-to-pressure map.
    pub fn pressures(
        &self,
        t: f64,
        limbs: &[Limb; L],
        map: &JointspaceToPressure,
    ) -> Result<[[f64; 3]; L], OutOfReach> {
        let curves = self.curves(t, limbs)?;
        Ok(std::array::from_fn(|j| map.pressures(limbs[j].muscle_lengths(curves[j]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMB: Limb = Limb { length: 0.24, muscle_radius: 0.0125 };

    #[test]
    fn circles_hold_a_constant_bend_and_turn_the_plane_once_a_cycle() {
        let gait = LimbGait {
            frequency: 1.0,
            samples_per_cycle: 100,
            limbs: [LimbMotion::Circle { radius: 0.06, start: 0.5, sense: -1.0 }],
        };
        gait.validate(&[LIMB]).unwrap();
        for k in 0..100 {
            let t = k as f64 / 100.0 + 0.004;
            let c = gait.curves(t, &[LIMB]).unwrap()[0];
            assert!((c.phi - 0.5110).abs() < 5e-5, "{}", c.phi);
            let expected = 0.5 - std::f64::consts::TAU * k as f64 / 100.0;
            let d = (c.theta - expected).rem_euclid(std::f64::consts::TAU);
            assert!(d < 1e-9 || std::f64::consts::TAU - d < 1e-9, "{k}: {} {expected}", c.theta);
        }
    }

    #[test]
    fn out_of_reach_circles_are_refused() {
        let gait = LimbGait {
            frequency: 1.0,
            samples_per_cycle: 100,
            limbs: [LimbMotion::Circle { radius: 0.2, start: 0.0, sense: 1.0 }],
        };
        let e = gait.validate(&[LIMB]).unwrap_err();
        assert!(e.contains("stride radius 0.2 m") && e.contains("out of reach"), "{e}");
    }

    #[test]
    fn nods_start_and_end_straight() {
        let gait = LimbGait {
            frequency: 2.0,
            samples_per_cycle: 100,
            limbs: [LimbMotion::Nod { theta: 0.3, phi: 1.5, peak: 0.5 }],
        };
        assert_eq!(gait.curves(0.0, &[LIMB]).unwrap()[0].phi, 0.0);
        assert!((gait.curves(0.25, &[LIMB]).unwrap()[0].phi - 1.5).abs() < 1e-12);
    }
}
