//! Constant-curvature soft sections driven by three actuator length changes, in a form that
//! is finite and smooth through the straight pose.
//!
//! A section's neutral axis runs along its base frame's x axis. Actuator j sits at radius r
//! and angle psi_j in the y-z plane. With length changes l_j, the section's length is
//! L = L0 + mean(l), and its bending-angle vector Theta = theta n (n the direction of the
//! centre of curvature in the y-z plane) is linear in l:
//! Theta_y = -2 / (3 r) sum l_j cos psi_j, Theta_z = -2 / (3 r) sum l_j sin psi_j.
//! The point at xi in [0, 1] is p = L (xi S(s), xi^2 V(s) Theta_y, xi^2 V(s) Theta_z) and the
//! frame there is R = I + xi S(s) [w]x + xi^2 V(s) [w]x^2 with w = (0, -Theta_z, Theta_y),
//! s = xi^2 |Theta|^2, S(s) = sin(sqrt s) / sqrt s and V(s) = (1 - cos sqrt s) / s. Both
//! functions are entire in s, so nothing divides by the curvature: at the straight pose the
//! section is a straight segment of length L, and every derivative is continuous there.

use crate::soft::real::Real;
/// A 3-vector and a row-major 3x3 matrix over any [`Real`] scalar.
pub type V3<S> = [S; 3];
pub type M3<S> = [[S; 3]; 3];

/// Below this s the series are used; nine terms leave a truncation error below 1e-17 there.
const SERIES_BELOW: f64 = 1.0;
const SERIES_TERMS: usize = 9;

/// sin(sqrt s) / sqrt s, for s >= 0.
#[inline]
pub fn sinc_sqrt<S: Real>(s: S) -> S {
    if s.value() < SERIES_BELOW {
        // sum_k (-s)^k / (2k + 1)!, by Horner from the highest term.
        let mut sum = S::zero();
        for k in (0..SERIES_TERMS).rev() {
            let factor = 1.0 / ((2 * k + 2) as f64 * (2 * k + 3) as f64);
            sum = S::one() - s * sum.scale(factor);
        }
        sum
    } else {
        let root = s.sqrt();
        root.sin() / root
    }
}

/// (1 - cos sqrt s) / s, for s >= 0.
#[inline]
pub fn versine_sqrt<S: Real>(s: S) -> S {
    if s.value() < SERIES_BELOW {
        // sum_k (-s)^k / (2k + 2)!.
        let mut sum = S::zero();
        for k in (0..SERIES_TERMS).rev() {
            let factor = 1.0 / ((2 * k + 3) as f64 * (2 * k + 4) as f64);
            sum = S::one() - s * sum.scale(factor);
        }
        sum.scale(0.5)
    } else {
        let root = s.sqrt();
        (S::one() - root.cos()) / s
    }
}

/// The geometry of one extensible section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SectionGeometry {
    /// Length L0 of the unactuated section (m).
    pub rest_length: f64,
    /// Distance r of the actuators from the neutral axis (m).
    pub actuator_radius: f64,
    /// Angles psi_j of the three actuators about the section's x axis, from +y (rad).
    pub actuator_angles: [f64; 3],
}

/// Length and bending-angle vector of a section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bending<S> {
    /// The section's length (m).
    pub length: S,
    /// The bending angle towards +y (rad).
    pub theta_y: S,
    /// The bending angle towards +z (rad).
    pub theta_z: S,
}

impl SectionGeometry {
    /// Length and bending of the section with actuator length changes `l`.
    #[inline]
    pub fn bending<S: Real>(&self, l: [S; 3]) -> Bending<S> {
        let k = -2.0 / (3.0 * self.actuator_radius);
        let mut theta_y = S::zero();
        let mut theta_z = S::zero();
        for j in 0..3 {
            let (s, c) = self.actuator_angles[j].sin_cos();
            theta_y += l[j].scale(k * c);
            theta_z += l[j].scale(k * s);
        }
        let length = S::from_f64(self.rest_length) + (l[0] + l[1] + l[2]).scale(1.0 / 3.0);
        Bending { length, theta_y, theta_z }
    }
}

impl<S: Real> Bending<S> {
    /// Position and frame at `xi` in [0, 1] along the section, in its base frame.
    #[inline]
    pub fn pose(&self, xi: f64) -> (V3<S>, M3<S>) {
        let (ty, tz) = (self.theta_y, self.theta_z);
        let s = (ty * ty + tz * tz).scale(xi * xi);
        let a = sinc_sqrt(s).scale(xi);
        let b = versine_sqrt(s).scale(xi * xi);
        let position = [self.length * a, self.length * b * ty, self.length * b * tz];
        // R = I + a [w]x + b [w]x^2, w = (0, -tz, ty); [w]x^2 = w w' - |w|^2 I.
        let (wy, wz) = (-tz, ty);
        let w2 = wy * wy + wz * wz;
        let one = S::one();
        let rotation = [
            [one - b * w2, -(a * wz), a * wy],
            [a * wz, one + b * (wy * wy - w2), b * wy * wz],
            [-(a * wy), b * wy * wz, one + b * (wz * wz - w2)],
        ];
        (position, rotation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soft::real::Dual;

    fn geometry() -> SectionGeometry {
        let third = std::f64::consts::TAU / 3.0;
        SectionGeometry { rest_length: 0.15, actuator_radius: 0.0125, actuator_angles: [0.0, third, 2.0 * third] }
    }

    #[test]
    fn series_and_closed_forms_agree_at_the_switch() {
        for s in [0.999_999, 1.0, 1.000_001] {
            let r: f64 = f64::sqrt(s);
            assert!((sinc_sqrt(s) - r.sin() / r).abs() < 1e-15);
            assert!((versine_sqrt(s) - (1.0 - r.cos()) / s).abs() < 1e-15);
        }
        assert_eq!(sinc_sqrt(0.0), 1.0);
        assert_eq!(versine_sqrt(0.0), 0.5);
        // Derivatives continuous across the switch too.
        let d = |s: f64| (sinc_sqrt(Dual::new(s, 1.0)).eps, versine_sqrt(Dual::new(s, 1.0)).eps);
        let (below, above) = (d(1.0 - 1e-12), d(1.0 + 1e-12));
        assert!((below.0 - above.0).abs() < 1e-12 && (below.1 - above.1).abs() < 1e-12);
    }

    #[test]
    fn matches_the_exact_trigonometric_formula_away_from_straight() {
        let g = geometry();
        for l in [[0.03, -0.01, 0.0], [0.05, 0.06, 0.0], [-0.02, 0.01, 0.04]] {
            let b = g.bending(l);
            let theta = (b.theta_y * b.theta_y + b.theta_z * b.theta_z).sqrt();
            let phi = b.theta_z.atan2(b.theta_y);
            let kappa = theta / b.length;
            for xi in [0.0, 0.3, 1.0] {
                let (p, r) = b.pose(xi);
                let exact = [
                    (theta * xi).sin() / kappa,
                    (1.0 - (theta * xi).cos()) / kappa * phi.cos(),
                    (1.0 - (theta * xi).cos()) / kappa * phi.sin(),
                ];
                for k in 0..3 {
                    assert!((p[k] - exact[k]).abs() < 1e-14, "{l:?} xi {xi}: {p:?} vs {exact:?}");
                }
                // The tangent (first column) is (cos, sin n).
                let t = [(theta * xi).cos(), (theta * xi).sin() * phi.cos(), (theta * xi).sin() * phi.sin()];
                for k in 0..3 {
                    assert!((r[k][0] - t[k]).abs() < 1e-14);
                }
                // Orthonormal.
                for i in 0..3 {
                    for j in 0..3 {
                        let d: f64 = (0..3).map(|k| r[k][i] * r[k][j]).sum();
                        assert!((d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
                    }
                }
            }
        }
    }

    #[test]
    fn each_actuator_line_has_its_commanded_length() {
        // The definition of the model: the curve at actuator j (offset r in the section's
        // cross-section) is L0 + l_j long. Integrate |dp/dxi| along it.
        let g = geometry();
        for l in [[0.03, -0.01, 0.0], [0.05, 0.06, 0.01], [0.0, 0.0, 0.0], [1e-9, 0.0, 0.0]] {
            let b = g.bending(l);
            for j in 0..3 {
                let offset = [
                    0.0,
                    g.actuator_radius * g.actuator_angles[j].cos(),
                    g.actuator_radius * g.actuator_angles[j].sin(),
                ];
                let point = |xi: f64| {
                    let (p, r) = b.pose(xi);
                    let mut out = p;
                    for k in 0..3 {
                        out[k] += r[k][1] * offset[1] + r[k][2] * offset[2];
                    }
                    out
                };
                // Polyline error is about L theta^2 / (24 n^2): 1e-10 here.
                let n = 20_000;
                let mut length = 0.0;
                for i in 0..n {
                    let (a, c) = (point(i as f64 / n as f64), point((i + 1) as f64 / n as f64));
                    length += ((a[0] - c[0]).powi(2) + (a[1] - c[1]).powi(2) + (a[2] - c[2]).powi(2)).sqrt();
                }
                assert!((length - (g.rest_length + l[j])).abs() < 1e-9, "{l:?} actuator {j}: {length}");
            }
        }
    }

    #[test]
    fn smooth_through_the_straight_pose() {
        // Derivatives of the tip position and frame with respect to l_1, at and around
        // l = 0, are finite and continuous.
        let g = geometry();
        let tip_derivative = |l: [f64; 3]| {
            let dl = [Dual::new(l[0], 1.0), Dual::new(l[1], 0.0), Dual::new(l[2], 0.0)];
            let (p, r) = g.bending(dl).pose(1.0);
            [p[0].eps, p[1].eps, p[2].eps, r[0][0].eps, r[1][0].eps, r[2][0].eps, r[1][2].eps]
        };
        let at = tip_derivative([0.0, 0.0, 0.0]);
        assert!(at.iter().all(|v| v.is_finite()));
        // Lipschitz: second derivatives are bounded by about (2 / (3 r))^2 L = 430 per metre
        // of length change, so first derivatives move by less than 5000 eps.
        for eps in [1e-4, 1e-8, 1e-12] {
            let near = tip_derivative([eps, -eps / 3.0, eps / 2.0]);
            for k in 0..at.len() {
                assert!((near[k] - at[k]).abs() < 5e3 * eps + 1e-14, "{k}: {} vs {} at {eps}", near[k], at[k]);
            }
        }
        // Straight: a segment of length L0 along x.
        let (p, r) = g.bending([0.0; 3]).pose(1.0);
        assert_eq!(p, [0.15, 0.0, 0.0]);
        assert_eq!(r, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    }
}
