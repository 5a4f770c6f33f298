//! Admittance controller in gait-parameter space (eqs 22-24): contact forces bend the
//! spatial frequencies eta_j away from their nominal values.

use crate::robot::model::ForceCoordinates;
use nalgebra::SVector;

/// An admittance controller's configuration: its gains, the coordinates it reads the
/// contact force in (the paper's, where they are not the model's) and which contacts' force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Admittance {
    /// Its gains.
    pub gains: AdmittanceGains,
    /// The coordinates it reads the contact force in.
    pub coordinates: ForceCoordinates,
    /// Which contacts' normal forces drive it.
    pub force: AdmittanceForce,
}

/// Which normal contact forces drive the admittance controller (eq 23's Q_2^f).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdmittanceForce {
    /// Those of obstacles only (a stair's step, a pipe's wall: [`crate::Terrain::is_obstacle`]),
    /// not the ground the robot stands on. The paper's reading: eq 20 lists the contact forces
    /// apart from friction as Q_2^f, and eq 23 returns Pi_d to Pi_n "if there is no external
    /// force Q_2^f", which on flat ground, where the ground always pushes, only obstacles make
    /// true.
    #[default]
    Obstacles,
    /// Every normal contact force, the ground's included.
    AllContacts,
}

/// Desired inertia, damping and stiffness of eq 23 and the gain k_Pi of eq 24.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmittanceGains {
    /// M_d, the desired inertia (above 0).
    pub inertia: f64,
    /// D_d, the desired damping.
    pub damping: f64,
    /// K_d, the desired stiffness.
    pub stiffness: f64,
    /// k_Pi, the contact force's gain, of either sign: the filter's stability is M_d's, D_d's
    /// and K_d's, and k_Pi only scales the force that drives it (a negative one moves the
    /// spatial frequency against the force).
    pub feedback_gain: f64,
}

impl AdmittanceGains {
    /// Checks an inertia above 0, the desired damping and stiffness within the range of a
    /// controller gain, and k_Pi's magnitude within it.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.inertia > 0.0 && self.inertia.is_finite()) {
            return Err(format!("admittance inertia must be > 0, got {}", self.inertia));
        }
        // The filter's gains are in the gait's own units; bounded as coefficients so that
        // none can overflow the phase it integrates.
        use crate::quantities::physical_ranges::GAIN;
        GAIN.check("admittance inertia", self.inertia)?;
        GAIN.check("admittance damping", self.damping)?;
        GAIN.check("admittance stiffness", self.stiffness)?;
        // Either sign, its magnitude a controller gain's (NaN fails the comparison).
        let limit = GAIN.high;
        if !(self.feedback_gain.abs() <= limit) {
            use crate::quantities::physical_ranges::readable;
            return Err(format!(
                "admittance feedback gain = {} is outside the physical range of a controller gain of either sign, \
                 {} to {}",
                readable(self.feedback_gain),
                readable(-limit),
                readable(limit)
            ));
        }
        Ok(())
    }
}

/// M_d e'' + D_d e' + K_d e = S Q, with e = Pi_d - Pi_n and S = k_Pi * (superdiagonal
/// ones): joint j is driven by the contact generalized force at joint j + 1, the joint
/// ahead of it towards the head; the head joint keeps its nominal frequency.
///
/// Entries `0..joints` of the fixed-size vectors are used; `N` is the model's coordinate
/// count, an upper bound on the number of actuated joints.
#[derive(Clone, Copy, Debug)]
pub struct AdmittanceController<const N: usize> {
    /// Its gains.
    pub gains: AdmittanceGains,
    /// How many actuated joints it drives.
    pub joints: usize,
    /// Pi_n, the nominal spatial frequency (rad).
    pub nominal: f64,
    deviation: SVector<f64, N>,
    deviation_rate: SVector<f64, N>,
}

impl<const N: usize> AdmittanceController<N> {
    /// A controller at rest (every frequency nominal) for `joints` joints.
    pub fn new(gains: AdmittanceGains, joints: usize, nominal: f64) -> Self {
        AdmittanceController {
            gains,
            joints: joints.min(N),
            nominal,
            deviation: SVector::zeros(),
            deviation_rate: SVector::zeros(),
        }
    }

    /// Advances eq 23 by `dt` (semi-implicit Euler) under joint contact forces `joint_force`
    /// (entry j: contact generalized force on actuated joint j).
    pub fn update(&mut self, dt: f64, joint_force: &SVector<f64, N>) {
        let g = self.gains;
        for j in 0..self.joints {
            let feedback = if j + 1 < self.joints { g.feedback_gain * joint_force[j + 1] } else { 0.0 };
            let acceleration =
                (feedback - g.damping * self.deviation_rate[j] - g.stiffness * self.deviation[j]) / g.inertia;
            self.deviation_rate[j] += dt * acceleration;
            self.deviation[j] += dt * self.deviation_rate[j];
        }
    }

    /// Desired spatial frequency of joint j.
    #[inline]
    pub fn spatial_frequency(&self, j: usize) -> f64 {
        self.nominal + self.deviation[j]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_to_nominal_without_force_and_shifts_with_force() {
        let gains = AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: 2.2 };
        let mut c = AdmittanceController::<4>::new(gains, 3, -1.5);
        let mut force = SVector::<f64, 4>::zeros();
        force[1] = 1.0;
        for _ in 0..20000 {
            c.update(1e-3, &force);
        }
        // Steady state: K e = k_Pi Q  ->  e_0 = 2.2 / 4.
        assert!((c.spatial_frequency(0) - (-1.5 + 0.55)).abs() < 1e-6);
        assert!((c.spatial_frequency(1) + 1.5).abs() < 1e-12);
        assert!((c.spatial_frequency(2) + 1.5).abs() < 1e-12);
        force[1] = 0.0;
        for _ in 0..20000 {
            c.update(1e-3, &force);
        }
        assert!((c.spatial_frequency(0) + 1.5).abs() < 1e-6);
    }

    #[test]
    fn a_negative_gain_is_accepted_and_mirrors_the_response() {
        let gains = AdmittanceGains { inertia: 1.0, damping: 4.0, stiffness: 4.0, feedback_gain: -2.2 };
        assert_eq!(gains.validate(), Ok(()));
        let mut c = AdmittanceController::<4>::new(gains, 3, -1.5);
        let mut force = SVector::<f64, 4>::zeros();
        force[1] = 1.0;
        for _ in 0..20000 {
            c.update(1e-3, &force);
        }
        // Steady state: K e = k_Pi Q  ->  e_0 = -2.2 / 4.
        assert!((c.spatial_frequency(0) - (-1.5 - 0.55)).abs() < 1e-6);
        for bad in [f64::NAN, 1e12, -1e12, f64::INFINITY, f64::NEG_INFINITY] {
            let error = AdmittanceGains { feedback_gain: bad, ..gains }.validate().unwrap_err();
            assert!(error.contains("admittance feedback gain"), "{error}");
        }
        let error = AdmittanceGains { damping: -1.0, ..gains }.validate().unwrap_err();
        assert!(error.contains("admittance damping"), "{error}");
    }
}
