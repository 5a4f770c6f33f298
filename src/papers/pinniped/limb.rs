//! Kinematics of an inextensible constant-curvature limb driven by three muscles, in the
//! paper's curve parameters (002_f355a977a209e7c9, eqs 1-7 and 14-16): bending angle phi
//! and bending-plane angle theta, muscle length changes, the backbone, the tip, inverse
//! kinematics of the tip and the centre of gravity. General: any limb of length L whose
//! muscles sit at radius r, 120 degrees apart.
//!
//! Frames: the paper's limb frame has z along the backbone and x towards PMA1; a soft
//! section's frame here has x along the backbone and y towards its first muscle, so the
//! paper's (x, y, z) is the section's (y, z, x). Curvature coordinates of an inextensible
//! section are kappa = (phi / L) (cos theta, sin theta).
//!
//! Every function is finite at the straight pose (phi = 0), where theta is undefined and
//! taken as 0: the functions of phi are the Stumpff functions of phi^2 that the soft sections'
//! generated code uses. Nothing allocates; inverse kinematics is a bracketed Newton iteration that
//! converges to 1e-14 in a handful of steps, well inside a 1 kHz loop.

use nalgebra::Vector3;
use softgen_runtime::stumpff;
use std::fmt;

/// The curve's functions of the bend phi, from the Stumpff functions of s = phi^2 (finite
/// and smooth through phi = 0): [sin phi / phi, (1 - cos phi) / phi^2, (phi - sin phi) / phi^3].
fn bend_functions(phi: f64) -> [f64; 3] {
    let c = stumpff(phi * phi);
    [c[1], c[2], c[3]]
}

/// (1 - cos phi) / phi, the tip's distance from the axis per unit length.
fn versine_over(phi: f64) -> f64 {
    phi * bend_functions(phi)[1]
}

/// The largest bend of the reach (rad): (1 - cos phi) / phi peaks here (tan(phi / 2) = phi
/// / 2 ... solved: 2.3311 rad), so the tip's distance from the limb axis cannot exceed
/// 0.72461 L.
pub const MAX_REACH_BEND: f64 = 2.331_122_370_414_422_8;

/// Curve parameters of one limb.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurveParameters {
    /// Angle of the bending plane from the limb's x axis (the paper's +X_j), rad.
    pub theta: f64,
    /// Angle subtended by the arc, rad, >= 0.
    pub phi: f64,
}

/// A tip target the limb cannot reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutOfReach {
    /// Distance of the target from the limb axis (m).
    pub distance: f64,
    /// The farthest the tip gets from the axis (m): 0.72461 L.
    pub reach: f64,
}

impl fmt::Display for OutOfReach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.distance.is_finite() {
            write!(
                f,
                "tip target {:.4} m from the limb axis is out of reach: the tip gets at most {:.4} m from it",
                self.distance, self.reach
            )
        } else {
            write!(f, "tip target is not finite ({} m from the limb axis)", self.distance)
        }
    }
}

impl std::error::Error for OutOfReach {}

/// An inextensible three-muscle limb.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb {
    /// Neutral-axis length L (m).
    pub length: f64,
    /// The muscles' distance from the neutral axis, r (m).
    pub muscle_radius: f64,
}

impl Limb {
    /// Eq 1: muscle length changes l_i = -r phi cos(2 pi (i - 1) / 3 - theta); they sum to 0.
    pub fn muscle_lengths(&self, c: CurveParameters) -> [f64; 3] {
        std::array::from_fn(|i| -self.muscle_radius * c.phi * (std::f64::consts::TAU * i as f64 / 3.0 - c.theta).cos())
    }

    /// Eq 2: curve parameters from muscle length changes (the inverse of eq 1 on lengths
    /// that sum to 0).
    pub fn curve_parameters(&self, l: [f64; 3]) -> CurveParameters {
        let sum: f64 = (0..3).map(|i| l[i] * l[i] - l[i] * l[(i + 1) % 3]).sum();
        let phi = 2.0 / (3.0 * self.muscle_radius) * sum.max(0.0).sqrt();
        let y = 3f64.sqrt() * (l[2] - l[1]);
        let x = l[1] + l[2] - 2.0 * l[0];
        let theta = if phi == 0.0 { 0.0 } else { y.atan2(x) };
        CurveParameters { theta, phi }
    }

    /// Eq 5: the backbone point at xi in [0, 1], in the paper's limb frame (z along the
    /// unbent limb).
    pub fn backbone(&self, c: CurveParameters, xi: f64) -> Vector3<f64> {
        let a = xi * c.phi;
        let [sinc, versine, _] = bend_functions(a);
        let radial = self.length * xi * a * versine;
        Vector3::new(c.theta.cos() * radial, c.theta.sin() * radial, self.length * xi * sinc)
    }

    /// Eq 6: the tip (xi = 1).
    pub fn tip(&self, c: CurveParameters) -> Vector3<f64> {
        self.backbone(c, 1.0)
    }

    /// The tip's greatest distance from the limb axis, 0.72461 L.
    pub fn reach(&self) -> f64 {
        self.length * versine_over(MAX_REACH_BEND)
    }

    /// Eq 7: the curve parameters that put the tip at (x, y) across the axis; z follows (two
    /// degrees of freedom). The bend is the unique root of (1 - cos phi) / phi = rho / L on
    /// [0, 2.3311], found by Newton's method kept inside a bisection bracket.
    pub fn inverse(&self, x: f64, y: f64) -> Result<CurveParameters, OutOfReach> {
        let distance = x.hypot(y);
        let reach = self.reach();
        if !distance.is_finite() || distance > reach * (1.0 + 1e-12) {
            return Err(OutOfReach { distance, reach });
        }
        let target = (distance / self.length).min(versine_over(MAX_REACH_BEND));
        let theta = if distance == 0.0 { 0.0 } else { y.atan2(x) };
        // g(phi) = (1 - cos phi) / phi rises monotonically on the bracket.
        let (mut low, mut high) = (0.0, MAX_REACH_BEND);
        let mut phi = 2.0 * target; // g(phi) ~ phi / 2 near 0
        phi = phi.clamp(low, high);
        for _ in 0..60 {
            let g = versine_over(phi) - target;
            if g.abs() < 1e-15 {
                break;
            }
            if g > 0.0 {
                high = phi;
            } else {
                low = phi;
            }
            // g'(phi) = sin phi / phi - (1 - cos phi) / phi^2, 1/2 at 0.
            let [sinc, versine, _] = bend_functions(phi);
            let slope = sinc - versine;
            let newton = phi - g / slope;
            phi = if slope > 0.0 && newton > low && newton < high { newton } else { 0.5 * (low + high) };
            if high - low < 1e-16 {
                break;
            }
        }
        Ok(CurveParameters { theta, phi })
    }

    /// Eq 15: the centre of gravity of a limb of mass spread evenly along its backbone.
    pub fn centre_of_gravity(&self, c: CurveParameters) -> Vector3<f64> {
        let [_, versine, lateral] = bend_functions(c.phi);
        let radial = self.length * c.phi * lateral;
        Vector3::new(c.theta.cos() * radial, c.theta.sin() * radial, self.length * versine)
    }

    /// Curvature coordinates (kappa_y, kappa_z) of an inextensible section for these curve
    /// parameters.
    pub fn curvatures(&self, c: CurveParameters) -> [f64; 2] {
        let k = c.phi / self.length;
        [k * c.theta.cos(), k * c.theta.sin()]
    }

    /// Curve parameters of an inextensible section's curvature coordinates.
    pub fn from_curvatures(&self, kappa: [f64; 2]) -> CurveParameters {
        let k = kappa[0].hypot(kappa[1]);
        CurveParameters { theta: if k == 0.0 { 0.0 } else { kappa[1].atan2(kappa[0]) }, phi: k * self.length }
    }
}

/// A limb mounted on a hub: its frame's origin and rotation in the hub frame (the paper's
/// limb frame: z along the limb), and its mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MountedLimb {
    /// The limb.
    pub limb: Limb,
    /// Its frame's origin in the hub frame (m).
    pub origin: Vector3<f64>,
    /// Its frame's rotation in the hub frame.
    pub rotation: nalgebra::Rotation3<f64>,
    /// Its mass (kg).
    pub mass: f64,
}

impl MountedLimb {
    /// Eq 14-15 mapped through eq 8: the limb's centre of gravity in the hub frame.
    pub fn centre_of_gravity(&self, c: CurveParameters) -> Vector3<f64> {
        self.origin + self.rotation * self.limb.centre_of_gravity(c)
    }

    /// The tip in the hub frame.
    pub fn tip(&self, c: CurveParameters) -> Vector3<f64> {
        self.origin + self.rotation * self.limb.tip(c)
    }
}

/// Eq 16: the robot's centre of gravity in the hub frame from its limbs' curve parameters;
/// `hub_mass` (at the hub's origin) is added to eq 16's limb-only sum when non-zero.
pub fn robot_centre_of_gravity(limbs: &[MountedLimb], curves: &[CurveParameters], hub_mass: f64) -> Vector3<f64> {
    let mut weighted = Vector3::zeros();
    let mut total = hub_mass;
    for (m, c) in limbs.iter().zip(curves) {
        weighted += m.mass * m.centre_of_gravity(*c);
        total += m.mass;
    }
    weighted / total
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMB: Limb = Limb { length: 0.24, muscle_radius: 0.0125 };

    #[test]
    fn straight_pose_is_finite() {
        let c = CurveParameters { theta: 0.0, phi: 0.0 };
        assert_eq!(LIMB.tip(c), Vector3::new(0.0, 0.0, 0.24));
        assert!((LIMB.centre_of_gravity(c) - Vector3::new(0.0, 0.0, 0.12)).norm() < 1e-15);
        assert_eq!(LIMB.curve_parameters([0.0; 3]), c);
        assert_eq!(LIMB.inverse(0.0, 0.0).unwrap(), c);
    }

    #[test]
    fn centre_of_gravity_is_the_mean_of_the_backbone() {
        for (theta, phi) in [(0.3, 0.5), (-2.0, 1.6), (1.0, 1e-5)] {
            let c = CurveParameters { theta, phi };
            let n = 4000;
            let mean = (0..n).map(|k| LIMB.backbone(c, (k as f64 + 0.5) / n as f64)).sum::<Vector3<f64>>() / n as f64;
            assert!((mean - LIMB.centre_of_gravity(c)).norm() < 1e-8, "{theta} {phi}");
        }
    }

    #[test]
    fn reach_is_the_peak_of_the_versine_ratio() {
        let g = |x: f64| (1.0 - x.cos()) / x;
        assert!(g(MAX_REACH_BEND) > g(MAX_REACH_BEND - 1e-6) && g(MAX_REACH_BEND) > g(MAX_REACH_BEND + 1e-6));
        assert!((LIMB.reach() / 0.24 - 0.72461).abs() < 1e-5);
    }
}
