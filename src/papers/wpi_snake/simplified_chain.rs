//! The simplified model of 001_6780a70913e94322 (eqs 10-12), for any planar chain of
//! point-mass links on wheels joined by constant-curvature segments whose curvatures are
//! prescribed by their actuators' dynamics: the joint constraint forces are dropped, so the
//! centre of mass moves under the total wheel friction (N m p'' = sum f_i) and the chain
//! turns under the friction torques that each wheel's force exerts on its neighbours through
//! the segment chords (the e' row of eq 12, where e' D' T = 0 removes the segment torques).
//!
//! Re-derived rather than transcribed (the printed eqs 6 and 9 do not type-check, and the
//! projection angles of eq 2 give the opposite sign to r x f): link k's friction f_k turns
//! link k - 1 by (X_k - X_(k-1)) x f_k and link k + 1 by (X_k - X_(k+1)) x f_k, the chord
//! vectors being the moment arms of eq 3. With theta_i = theta_1 + l sum_(k < i) kappa_k,
//! sum_i j_i theta_i'' = sum of those torques gives theta_1''.
//!
//! Coordinates: (p_x, p_y, theta_1), the centre of mass and the first link's heading; the
//! curvatures are not state (they follow the responses in closed form).

use nalgebra::{SVector, Vector2, Vector3};
use softgen_runtime::{
    ActuatorResponse, ContactLaw, FrictionLaw, HeldResponses, IntegrationError, ResponseState, SecondOrderSystem,
};

/// A chain of `L` links and `L - 1` segments.
#[derive(Clone, Debug)]
pub struct SimplifiedChain<const L: usize> {
    /// Link masses (kg) and rotational inertias about their wheel points (kg m^2).
    pub masses: [f64; L],
    /// See `masses`.
    pub inertias: [f64; L],
    /// Segment lengths along the arc (m); entry L - 1 is unused.
    pub lengths: [f64; L],
    /// The wheels' friction.
    pub friction: FrictionLaw,
    /// Gravitational acceleration (m/s^2), which with the friction sets the wheels' grip.
    pub gravity: f64,
    /// The segments' curvature responses with their held commands.
    responses: HeldResponses,
}

/// The chain's shape at an instant: wheel positions and velocities, and headings.
#[derive(Clone, Copy, Debug)]
pub struct ChainPose<const L: usize> {
    /// Each link's wheel point (m).
    pub positions: [Vector2<f64>; L],
    /// Their velocities (m/s).
    pub velocities: [Vector2<f64>; L],
    /// Each link's heading (rad).
    pub headings: [f64; L],
    /// The curvatures' accelerations' share of each heading's acceleration.
    pub heading_accelerations: [f64; L],
}

/// Chord length 2 sin(a / 2) / a (times the arc length) and its derivative by a, finite at a = 0.
fn chord_factor(a: f64) -> (f64, f64) {
    if a.abs() < 1e-4 {
        let a2 = a * a;
        (1.0 - a2 / 24.0, -a / 12.0 + a * a2 / 480.0)
    } else {
        let (s, c) = (0.5 * a).sin_cos();
        (2.0 * s / a, (c * a - 2.0 * s) / (a * a))
    }
}

impl<const L: usize> SimplifiedChain<L> {
    /// A chain with `responses` driving the L - 1 curvatures, all starting straight and at rest.
    pub fn new(
        masses: [f64; L],
        inertias: [f64; L],
        lengths: [f64; L],
        contact: &ContactLaw,
        gravity: f64,
        responses: &[ActuatorResponse],
    ) -> Result<Self, String> {
        if L < 2 {
            return Err("a chain needs at least two links".into());
        }
        if responses.len() != L - 1 {
            return Err(format!("{} responses for {} segments", responses.len(), L - 1));
        }
        for r in responses {
            r.validate()?;
        }
        for (name, values) in [("mass", &masses[..]), ("inertia", &inertias[..]), ("segment length", &lengths[..L - 1])]
        {
            if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                return Err(format!("every link {name} must be finite and > 0, got {v}"));
            }
        }
        if !(gravity.is_finite() && gravity >= 0.0) {
            return Err(format!("gravity must be finite and >= 0, got {gravity}"));
        }
        contact.validate()?;
        Ok(SimplifiedChain {
            masses,
            inertias,
            lengths,
            friction: contact.friction,
            gravity,
            responses: HeldResponses::new(responses, vec![ResponseState::default(); L - 1], 0.0),
        })
    }

    /// Holds new commands (valve states) from time t.
    pub fn command(&mut self, t: f64, commands: &[f64]) -> Result<(), String> {
        if commands.len() != L - 1 {
            return Err(format!("{} commands for {} segments", commands.len(), L - 1));
        }
        if let Some(bad) = commands.iter().position(|c| !c.is_finite()) {
            return Err(format!("command for segment {} is not finite: {}", bad + 1, commands[bad]));
        }
        self.responses.command(t, commands);
        Ok(())
    }

    /// Segment k's curvature, its rate and acceleration at t.
    pub fn curvature(&self, k: usize, t: f64) -> ResponseState {
        self.responses.state(k, t)
    }

    /// Wheel positions and velocities for centre of mass p, heading theta_1 and their rates.
    pub fn pose(&self, t: f64, q: &SVector<f64, 3>, qd: &SVector<f64, 3>) -> ChainPose<L> {
        let mut headings = [q[2]; L];
        let mut rates = [qd[2]; L];
        let mut heading_accelerations = [0.0; L];
        let mut relative = [Vector2::zeros(); L];
        let mut relative_rate = [Vector2::zeros(); L];
        for k in 0..L - 1 {
            let s = self.curvature(k, t);
            let l = self.lengths[k];
            let (bend, bend_rate) = (l * s.value, l * s.rate);
            headings[k + 1] = headings[k] + bend;
            rates[k + 1] = rates[k] + bend_rate;
            heading_accelerations[k + 1] = heading_accelerations[k] + l * s.acceleration;
            // Chord of eq 3 along the mean heading of its ends.
            let (factor, factor_rate) = chord_factor(bend);
            let chord = l * factor;
            let chord_rate = l * factor_rate * bend_rate;
            let direction = 0.5 * (headings[k] + headings[k + 1]);
            let direction_rate = 0.5 * (rates[k] + rates[k + 1]);
            let (sin, cos) = direction.sin_cos();
            relative[k + 1] = relative[k] + Vector2::new(cos, sin) * chord;
            relative_rate[k + 1] = relative_rate[k]
                + Vector2::new(cos, sin) * chord_rate
                + Vector2::new(-sin, cos) * (chord * direction_rate);
        }
        let total: f64 = self.masses.iter().sum();
        let mut mean = Vector2::zeros();
        let mut mean_rate = Vector2::zeros();
        for i in 0..L {
            mean += relative[i] * (self.masses[i] / total);
            mean_rate += relative_rate[i] * (self.masses[i] / total);
        }
        let centre = Vector2::new(q[0], q[1]);
        let centre_rate = Vector2::new(qd[0], qd[1]);
        ChainPose {
            positions: std::array::from_fn(|i| centre + relative[i] - mean),
            velocities: std::array::from_fn(|i| centre_rate + relative_rate[i] - mean_rate),
            headings,
            heading_accelerations,
        }
    }

    /// Each wheel's friction force at a pose.
    pub fn wheel_forces(&self, pose: &ChainPose<L>) -> [Vector2<f64>; L] {
        let law = ContactLaw { stiffness: 0.0, damping: 0.0, dissipation: 0.0, friction: self.friction };
        std::array::from_fn(|i| {
            let velocity = Vector3::new(pose.velocities[i].x, pose.velocities[i].y, 0.0);
            let (s, c) = pose.headings[i].sin_cos();
            let sample = law.with_normal_force(
                self.masses[i] * self.gravity,
                &Vector3::z(),
                &velocity,
                &Vector3::new(c, s, 0.0),
            );
            Vector2::new(sample.friction.x, sample.friction.y)
        })
    }
}

impl<const L: usize> SecondOrderSystem<3> for SimplifiedChain<L> {
    fn acceleration(
        &mut self,
        t: f64,
        q: &SVector<f64, 3>,
        qd: &SVector<f64, 3>,
        qdd: &mut SVector<f64, 3>,
    ) -> Result<(), IntegrationError> {
        let pose = self.pose(t, q, qd);
        let forces = self.wheel_forces(&pose);
        let cross = |a: Vector2<f64>, b: Vector2<f64>| a.x * b.y - a.y * b.x;
        let mut torque = 0.0;
        let mut total = Vector2::zeros();
        for k in 0..L {
            total += forces[k];
            if k > 0 {
                torque += cross(pose.positions[k] - pose.positions[k - 1], forces[k]);
            }
            if k + 1 < L {
                torque += cross(pose.positions[k] - pose.positions[k + 1], forces[k]);
            }
        }
        let inertia: f64 = self.inertias.iter().sum();
        let driven: f64 = (0..L).map(|i| self.inertias[i] * pose.heading_accelerations[i]).sum();
        let mass: f64 = self.masses.iter().sum();
        qdd[0] = total.x / mass;
        qdd[1] = total.y / mass;
        qdd[2] = (torque - driven) / inertia;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use softgen_runtime::FrictionAnisotropy;

    fn chain(along: f64, across: f64) -> SimplifiedChain<5> {
        let m = 0.03;
        let l = 0.037;
        let j = m * l * l / 3.0;
        let contact = ContactLaw {
            stiffness: 0.0,
            damping: 0.0,
            dissipation: 0.0,
            friction: FrictionLaw { along, across, anisotropy: FrictionAnisotropy::BodyAxis, regularisation: 0.005 },
        };
        let response = ActuatorResponse::SecondOrder { time_constants: [0.06, 0.015], gain: 30.0 };
        SimplifiedChain::new([m; 5], [j, 2.0 * j, 2.0 * j, 2.0 * j, j], [l; 5], &contact, 9.81, &[response; 4]).unwrap()
    }

    #[test]
    fn chord_factor_is_smooth_at_zero() {
        for a in [-1e-3, -1e-5, 0.0, 1e-5, 1e-3, 0.5, std::f64::consts::PI] {
            let (f, df) = chord_factor(a);
            let exact = if a == 0.0 { 1.0 } else { 2.0 * (0.5 * a).sin() / a };
            assert!((f - exact).abs() < 1e-12, "{a}");
            let h = 1e-6;
            let numeric = (chord_factor(a + h).0 - chord_factor(a - h).0) / (2.0 * h);
            assert!((df - numeric).abs() < 1e-8, "{a}: {df} vs {numeric}");
        }
        // Eq 3 checks of the seed notes (T4): pi / 2 and pi.
        assert!((0.037 * chord_factor(std::f64::consts::FRAC_PI_2).0 - 0.033312).abs() < 1e-6);
        assert!((0.037 * chord_factor(std::f64::consts::PI).0 - 0.023555).abs() < 1e-6);
    }

    #[test]
    fn the_centre_of_mass_is_the_mass_weighted_mean_and_velocities_are_derivatives() {
        let mut c = chain(0.043, 0.57);
        c.command(0.0, &[1.0, -1.0, 1.0, -1.0]).unwrap();
        let q = SVector::from([0.1, -0.2, 0.3]);
        let qd = SVector::from([0.05, 0.02, -0.4]);
        let t = 0.07;
        let pose = c.pose(t, &q, &qd);
        let mean: Vector2<f64> = pose.positions.iter().sum::<Vector2<f64>>() / 5.0;
        assert!((mean - Vector2::new(0.1, -0.2)).norm() < 1e-15);
        let h = 1e-6;
        let later = c.pose(t + h, &(q + qd * h), &qd);
        let earlier = c.pose(t - h, &(q - qd * h), &qd);
        for i in 0..5 {
            let numeric = (later.positions[i] - earlier.positions[i]) / (2.0 * h);
            assert!((numeric - pose.velocities[i]).norm() < 1e-7, "link {i}");
        }
    }

    #[test]
    fn without_anisotropy_the_chain_goes_nowhere() {
        // Seed notes T8: the wheels' anisotropy is what propels the chain.
        let run = |mut c: SimplifiedChain<5>| {
            let wave = softgen_runtime::ValveWave {
                temporal_frequency: std::f64::consts::TAU * 1.5,
                delay: std::f64::consts::FRAC_PI_2,
                offset: 0.0,
            };
            let mut x = softgen_runtime::State::<3>::new(SVector::zeros(), SVector::zeros());
            let mut rk4 = softgen_runtime::RungeKutta4 { step: 1e-3 };
            let mut t = 0.0;
            let mut settled = SVector::<f64, 3>::zeros();
            for k in 0..6000 {
                if k == 2000 {
                    settled = x.q;
                }
                let commands: Vec<f64> = (0..4).map(|i| wave.state(t, i)).collect();
                c.command(t, &commands).unwrap();
                let next = (k + 1) as f64 * 1e-3;
                softgen_runtime::Integrator::integrate_to(&mut rk4, &mut c, &mut t, &mut x, next).unwrap();
            }
            ((x.q[0] - settled[0]).powi(2) + (x.q[1] - settled[1]).powi(2)).sqrt()
        };
        let isotropic = run(chain(0.3, 0.3));
        let anisotropic = run(chain(0.043, 0.57));
        println!("from 2 s to 6 s: {anisotropic} m with the paper's friction, {isotropic} m isotropic");
        assert!(anisotropic > 0.2, "the paper's friction moves the chain: {anisotropic} m in 4 s");
        // Not exactly zero: with Coulomb friction at this amplitude a body can creep even on
        // isotropic ground (measured 16 % of the anisotropic distance); the anisotropy is
        // what propels it.
        assert!(isotropic < 0.25 * anisotropic, "isotropic {isotropic} m vs {anisotropic} m");
    }
}
