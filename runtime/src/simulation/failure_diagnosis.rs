//! Why a run that started failed, in the user's terms: which input (the contact stiffness,
//! the contact damping) most likely made the integration break down, judged from the
//! robot's mass, its contact points, the step and the largest contact force the run saw, so
//! a message does not blame the integrator for a number the user typed.

use crate::environment::contact::ContactLaw;
use crate::quantities::physical_ranges::readable;
use crate::robot::model::Model;
use std::f64::consts::PI;

/// Standard gravity (m/s^2): the robot's weight on Earth is the scale a contact force is
/// judged against, whatever the robot's own environment.
const STANDARD_GRAVITY: f64 = 9.80665;

/// A contact force this many times the robot's weight is no plausible contact: it is the
/// contact law's spring or damper ringing against the step.
const IMPLAUSIBLE_WEIGHTS: f64 = 1e4;

/// The largest contact force a run saw, where and when.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LargestContactForce {
    /// Magnitude (N); infinite when a force was not finite.
    pub force: f64,
    /// Index of the contact point (into `Model::CONTACT_POINTS`).
    pub point: usize,
    /// When (s).
    pub time: f64,
}

impl LargestContactForce {
    /// Takes in the forces at the contact points at time `t`.
    pub fn observe(&mut self, t: f64, forces: &[nalgebra::Vector3<f64>]) {
        for (point, f) in forces.iter().enumerate() {
            let magnitude = if f.iter().all(|c| c.is_finite()) { f.norm() } else { f64::INFINITY };
            if magnitude > self.force {
                *self = LargestContactForce { force: magnitude, point, time: t };
            }
        }
    }
}

/// The input most likely to have made a run fail, as a sentence for its error message, or
/// `None` when nothing points at one. `step` is a fixed-step integrator's step (s), `None`
/// for an adaptive one.
///
/// Judged, in order: a contact force of more than 10^4 times the robot's weight; then, with
/// a fixed step, the contact spring's period and the damper's time constant on the mass that
/// one contact point carries (the robot's mass over its contact points), which an explicit
/// step must resolve (RK4 is stable for h w < 2.8 and h c / m < 2.8). The mass per point is
/// a lower bound of what a touching point carries (seen here: the soft snake's RK4 limit is
/// about ten times the step it gives), so a too-fast contact is a likely cause, not a proof.
/// Where the blamed value is the spec's own, which its robot runs with, the step is named
/// instead (and an adaptive run gets no blame).
pub fn likely_cause<R: Model<N, C>, const N: usize, const C: usize>(
    params: &R::Params,
    contact: &ContactLaw,
    step: Option<f64>,
    largest: &LargestContactForce,
) -> Option<String> {
    let mass = R::total_mass(params);
    if C == 0 || !(mass.is_finite() && mass > 0.0) {
        return None;
    }
    let weight = mass * STANDARD_GRAVITY;
    let point_mass = mass / C as f64;
    let spring_rate = (contact.stiffness / point_mass).sqrt();
    let damper_rate = contact.damping / point_mass;
    let explicit_limit = 2.8;
    let stiffness_outruns = step.is_some_and(|h| h * spring_rate > explicit_limit);
    let damping_outruns = step.is_some_and(|h| h * damper_rate > explicit_limit);
    // The damper is the suspect where it alone outruns the step, or both do and it is the
    // faster; otherwise the spring, unless neither outruns it and the damper is faster.
    let damper_suspected = if stiffness_outruns || damping_outruns {
        damping_outruns && (!stiffness_outruns || damper_rate > spring_rate)
    } else {
        damper_rate > spring_rate
    };
    let why = if largest.force > IMPLAUSIBLE_WEIGHTS * weight {
        let name = R::CONTACT_POINTS.get(largest.point).map_or("?", |p| p.name);
        let force =
            if largest.force.is_finite() { format!("{:.3e} N", largest.force) } else { "a non-finite value".into() };
        format!(
            "the contact force at `{name}` reached {force} at t = {} s, more than {IMPLAUSIBLE_WEIGHTS:e} times the robot's weight ({weight:.3} N)",
            largest.time
        )
    } else if let (Some(h), true) = (step, stiffness_outruns || damping_outruns) {
        let carried = format!("with {point_mass:.3e} kg on each of its {C} contact points");
        if damper_suspected {
            format!(
                "{carried}, the contact damper relaxes in {:.3e} s, faster than a step of {} s can follow",
                1.0 / damper_rate,
                readable(h)
            )
        } else {
            format!(
                "{carried}, the contact spring rings with a period of {:.3e} s, which a step of {} s cannot follow",
                2.0 * PI / spring_rate,
                readable(h)
            )
        }
    } else {
        return None;
    };
    let spec = R::ENVIRONMENT.contact_law();
    let (what, value, spec_value, unit, option) = if damper_suspected {
        ("damping", contact.damping, spec.damping, "N s/m", "--contact-damping")
    } else {
        ("stiffness", contact.stiffness, spec.stiffness, "N/m", "--contact-stiffness")
    };
    let is_the_specs = value == spec_value;
    let value = readable(value);
    if is_the_specs {
        // The spec's own contact, which its robot runs with: what the user chose is the step.
        let h = step?;
        return Some(format!(
            "{why}: the step ({} s) is the likely cause, too long for the spec's contact {what} ({value} {unit}); take smaller steps or use --integrator ros34",
            readable(h)
        ));
    }
    Some(format!(
        "{why}: the contact {what} ({value} {unit}) is the likely cause; lower it ({option}, the run configuration or the spec's environment) or take smaller steps"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    #[test]
    fn the_largest_force_keeps_its_point_and_time_and_counts_non_finite_as_infinite() {
        let mut largest = LargestContactForce::default();
        largest.observe(0.1, &[Vector3::new(0.0, 0.0, 3.0), Vector3::new(4.0, 0.0, 3.0)]);
        assert_eq!(largest, LargestContactForce { force: 5.0, point: 1, time: 0.1 });
        largest.observe(0.2, &[Vector3::new(0.0, 0.0, 1.0), Vector3::new(0.0, 0.0, 2.0)]);
        assert_eq!(largest.time, 0.1);
        largest.observe(0.3, &[Vector3::new(f64::NAN, 0.0, 0.0), Vector3::zeros()]);
        assert_eq!((largest.force, largest.point, largest.time), (f64::INFINITY, 0, 0.3));
    }
}
