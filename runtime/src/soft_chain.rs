//! A chain of constant-curvature soft sections on a floating or fixed base: kinematics of
//! slices and skin points with exact Jacobians, and the integral Lagrangian's M, C qd, C,
//! G and damping (eqs 5-9 of the soft-snake paper), integrated over each section by
//! Gauss-Legendre quadrature.
//!
//! Coordinates: a floating base first (x, y, z, alpha, beta, gamma with
//! R = Rz(alpha) Ry(beta) Rx(gamma)), then three actuator length changes per section.
//! Everything is generic over [`Real`], so the same code gives values (`f64`), exact
//! derivatives with respect to q (`Dual<f64>`, for the Christoffel symbols and Jacobians of
//! the right-hand side) and bias accelerations (`Dual<Dual<f64>>` along qd).
//!
//! Each slice is a thin disc of the section's radius: mass m_i dxi, rotational inertia
//! m_i dxi diag(r^2 / 2, r^2 / 4, r^2 / 4) about its own axes (x along the neutral axis).
//! Without it M is singular for rolling about the body axis.

use crate::cc::SectionGeometry;
use crate::real::{Dual, Jet3, Real};
use crate::small_linalg::{add, cross, dot, lift, mat_mul, mat_mul_t, mat_vec, scale, vee, axis_rotation, M3, V3};

/// One soft section: geometry, mass, slice inertia, elasticity, damping and its mount.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftSection {
    pub geometry: SectionGeometry,
    /// Mass (kg), spread uniformly over xi.
    pub mass: f64,
    /// Radius of the slices' thin discs (m).
    pub disc_radius: f64,
    /// Elastic stiffness K of each actuator coordinate (N/m).
    pub stiffness: f64,
    /// Viscous damping D of each actuator coordinate (N s/m).
    pub damping: f64,
    /// Rotation from the previous section's tip frame (the base frame for the first
    /// section) to this section's base frame.
    pub mount: [[f64; 3]; 3],
}

/// A chain of `K` soft sections.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftChain<'a, const K: usize> {
    pub sections: [SoftSection; K],
    /// Six floating-base coordinates first, or a base fixed at the origin.
    pub floating: bool,
    /// Gravitational acceleration along -z (m/s^2).
    pub gravity: f64,
    /// Gauss-Legendre nodes and weights on [0, 1].
    pub quadrature: &'a [(f64, f64)],
}

/// A frame (or a point, whose rotation is that of the slice it sits on) in the world, with
/// the Jacobians of its position and orientation: `linear[k]` = dp/dq_k and `angular[k]` =
/// the angular velocity per unit qd_k.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameJacobian<S, const N: usize> {
    pub position: V3<S>,
    pub rotation: M3<S>,
    pub linear: [V3<S>; N],
    pub angular: [V3<S>; N],
}

/// A contact point on a section's skin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinPoint {
    /// Index of the section.
    pub section: usize,
    /// Position along the section, in [0, 1].
    pub xi: f64,
    /// Angle about the section's x axis, from +y (rad).
    pub angle: f64,
    /// Its cosine and sine, precomputed (every right-hand side places every point).
    pub cos_angle: f64,
    pub sin_angle: f64,
    /// Index into the robot's skin radii.
    pub radius: usize,
}

impl SkinPoint {
    /// A point at `xi` along section `section`, `angle` about its axis.
    pub fn new(section: usize, xi: f64, angle: f64, radius: usize) -> Self {
        let (sin_angle, cos_angle) = angle.sin_cos();
        SkinPoint { section, xi, angle, cos_angle, sin_angle, radius }
    }

    /// Offset from the neutral axis in the slice's frame.
    #[inline]
    pub fn offset(&self, radius: f64) -> V3<f64> {
        [0.0, radius * self.cos_angle, radius * self.sin_angle]
    }
}

/// Point kinematics along a motion: position, velocity, and acceleration at qdd = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    pub velocity: V3<f64>,
    pub angular_velocity: V3<f64>,
    pub bias_acceleration: V3<f64>,
    pub bias_angular_acceleration: V3<f64>,
}

/// Gauss-Legendre nodes and weights on [0, 1] (Newton on the Legendre polynomial).
pub fn gauss_legendre(order: usize) -> Vec<(f64, f64)> {
    let n = order;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut derivative = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let (p, pm1) = if n == 0 { (1.0, 0.0) } else if n == 1 { (x, 1.0) } else { (p1, p0) };
            derivative = n as f64 * (x * p - pm1) / (x * x - 1.0);
            let step = p / derivative;
            x -= step;
            if step.abs() < 1e-16 {
                break;
            }
        }
        let weight = 2.0 / ((1.0 - x * x) * derivative * derivative);
        out.push((0.5 * (1.0 - x), 0.5 * weight));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

impl<const K: usize> SoftChain<'_, K> {
    /// Number of generalized coordinates.
    pub const fn dof(&self) -> usize {
        if self.floating {
            6 + 3 * K
        } else {
            3 * K
        }
    }

    /// Index of the first coordinate of section `i`.
    #[inline]
    pub fn first_coordinate(&self, i: usize) -> usize {
        if self.floating {
            6 + 3 * i
        } else {
            3 * i
        }
    }

    /// The base frame and its Jacobian.
    fn base_frame<S: Real, const N: usize>(&self, q: &[S; N]) -> FrameJacobian<S, N> {
        let mut f = FrameJacobian {
            position: [S::zero(); 3],
            rotation: lift(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
            linear: [[S::zero(); 3]; N],
            angular: [[S::zero(); 3]; N],
        };
        if self.floating {
            f.position = [q[0], q[1], q[2]];
            let rz = axis_rotation(2, q[3]);
            let rzy = mat_mul(&rz, &axis_rotation(1, q[4]));
            f.rotation = mat_mul(&rzy, &axis_rotation(0, q[5]));
            for k in 0..3 {
                f.linear[k][k] = S::one();
            }
            f.angular[3] = [S::zero(), S::zero(), S::one()];
            f.angular[4] = [rz[0][1], rz[1][1], rz[2][1]];
            f.angular[5] = [rzy[0][0], rzy[1][0], rzy[2][0]];
        }
        f
    }

    /// Base frames of every section, with Jacobians.
    pub fn section_frames<S: Real, const N: usize>(&self, q: &[S; N]) -> [FrameJacobian<S, N>; K] {
        let base = self.base_frame(q);
        let mut frames = [base; K];
        for i in 0..K {
            let mut frame = if i == 0 { base } else { self.point_in(&frames[i - 1], q, i - 1, 1.0, None) };
            frame.rotation = mat_mul(&frame.rotation, &lift(&self.sections[i].mount));
            frames[i] = frame;
        }
        frames
    }

    /// Position, slice rotation and Jacobians of the point at `xi` on section `i`, offset by
    /// `offset` in the slice's cross-section (None: on the neutral axis), given the
    /// section's base frame.
    pub fn point_in<S: Real, const N: usize>(
        &self,
        base: &FrameJacobian<S, N>,
        q: &[S; N],
        i: usize,
        xi: f64,
        offset: Option<V3<f64>>,
    ) -> FrameJacobian<S, N> {
        let c0 = self.first_coordinate(i);
        let geometry = &self.sections[i].geometry;
        let l = [q[c0], q[c0 + 1], q[c0 + 2]];
        // Value and the derivatives by the section's three lengths, in one pass.
        let seeded: [Jet3<S>; 3] = std::array::from_fn(|m| Jet3::variable(l[m], m));
        let (dp, dr) = geometry.bending(seeded).pose(xi);
        let local_position: V3<S> = std::array::from_fn(|a| dp[a].re);
        let local_rotation: M3<S> = std::array::from_fn(|a| std::array::from_fn(|b| dr[a][b].re));
        let offset_s = offset.map(|o| [S::from_f64(o[0]), S::from_f64(o[1]), S::from_f64(o[2])]);
        let local_point = match &offset_s {
            Some(o) => add(&local_position, &mat_vec(&local_rotation, o)),
            None => local_position,
        };
        let relative = mat_vec(&base.rotation, &local_point);
        let mut out = FrameJacobian {
            position: add(&base.position, &relative),
            rotation: mat_mul(&base.rotation, &local_rotation),
            linear: [[S::zero(); 3]; N],
            angular: [[S::zero(); 3]; N],
        };
        for k in 0..c0 {
            out.linear[k] = add(&base.linear[k], &cross(&base.angular[k], &relative));
            out.angular[k] = base.angular[k];
        }
        // The section's own coordinates.
        for j in 0..3 {
            let mut d_point: V3<S> = std::array::from_fn(|a| dp[a].eps[j]);
            let d_rotation: M3<S> = std::array::from_fn(|a| std::array::from_fn(|b| dr[a][b].eps[j]));
            if let Some(o) = &offset_s {
                d_point = add(&d_point, &mat_vec(&d_rotation, o));
            }
            out.linear[c0 + j] = mat_vec(&base.rotation, &d_point);
            // dR R' = [w]x in the section's base frame.
            out.angular[c0 + j] = mat_vec(&base.rotation, &vee(&mat_mul_t(&d_rotation, &local_rotation)));
        }
        out
    }

    /// Base frame (position, rotation) of every section, without Jacobians, on any scalar.
    pub fn section_poses<S: Real, const N: usize>(&self, q: &[S; N]) -> [(V3<S>, M3<S>); K] {
        let (mut position, mut rotation) = ([S::zero(); 3], lift(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]));
        if self.floating {
            position = [q[0], q[1], q[2]];
            rotation = mat_mul(&mat_mul(&axis_rotation(2, q[3]), &axis_rotation(1, q[4])), &axis_rotation(0, q[5]));
        }
        let mut out = [(position, rotation); K];
        for s in 0..K {
            rotation = mat_mul(&rotation, &lift(&self.sections[s].mount));
            out[s] = (position, rotation);
            let c0 = self.first_coordinate(s);
            let (p, r) = self.sections[s].geometry.bending([q[c0], q[c0 + 1], q[c0 + 2]]).pose(1.0);
            position = add(&position, &mat_vec(&rotation, &p));
            rotation = mat_mul(&rotation, &r);
        }
        out
    }

    /// Pose of a point on section `i` given that section's base pose.
    #[inline]
    pub fn pose_in<S: Real, const N: usize>(
        &self,
        base: &(V3<S>, M3<S>),
        q: &[S; N],
        i: usize,
        xi: f64,
        offset: Option<V3<f64>>,
    ) -> (V3<S>, M3<S>) {
        let c0 = self.first_coordinate(i);
        let (p, r) = self.sections[i].geometry.bending([q[c0], q[c0 + 1], q[c0 + 2]]).pose(xi);
        let local = match offset {
            Some(o) => add(&p, &mat_vec(&r, &[S::from_f64(o[0]), S::from_f64(o[1]), S::from_f64(o[2])])),
            None => p,
        };
        (add(&base.0, &mat_vec(&base.1, &local)), mat_mul(&base.1, &r))
    }

    /// Pose of a point without Jacobians (for positions, and on dual numbers for motions).
    pub fn pose<S: Real, const N: usize>(&self, q: &[S; N], i: usize, xi: f64, offset: Option<V3<f64>>) -> (V3<S>, M3<S>) {
        let bases = self.section_poses(q);
        self.pose_in(&bases[i], q, i, xi, offset)
    }

    /// The state lifted to second-order dual numbers along qd: one pass on it gives
    /// positions, velocities and bias accelerations (qdd = 0).
    #[inline]
    pub fn along_motion<const N: usize>(q: &[f64; N], qd: &[f64; N]) -> [Dual<Dual<f64>>; N] {
        std::array::from_fn(|k| Dual::new(Dual::new(q[k], qd[k]), Dual::new(qd[k], 0.0)))
    }

    /// The motion of a pose computed on [`Self::along_motion`] numbers.
    pub fn motion_of(p: &V3<Dual<Dual<f64>>>, r: &M3<Dual<Dual<f64>>>) -> Motion {
        let rotation: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].re.re));
        let rate: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].re.eps));
        let second: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].eps.eps));
        // [w]x = Rdot R'; [alpha]x = Rddot R' + Rdot Rdot'.
        let omega = vee(&mat_mul_t(&rate, &rotation));
        let alpha_matrix = mat_mul_t(&second, &rotation);
        let rate_rate = mat_mul_t(&rate, &rate);
        let alpha = vee(&std::array::from_fn(|a| std::array::from_fn(|b| alpha_matrix[a][b] + rate_rate[a][b])));
        Motion {
            velocity: std::array::from_fn(|a| p[a].re.eps),
            angular_velocity: omega,
            bias_acceleration: std::array::from_fn(|a| p[a].eps.eps),
            bias_angular_acceleration: alpha,
        }
    }

    /// M, C qd and G in one pass: each slice's Jacobians are computed once and shared, the
    /// section frames' motions once per section.
    pub fn dynamics<const N: usize>(
        &self,
        q: &[f64; N],
        qd: &[f64; N],
        frames: &[FrameJacobian<f64, N>; K],
    ) -> ([[f64; N]; N], [f64; N], [f64; N]) {
        let mut m = [[0.0; N]; N];
        let mut c = [0.0; N];
        let mut g = [0.0; N];
        let moving = Self::along_motion(q, qd);
        let bases = self.section_poses(&moving);
        for i in 0..K {
            let active = self.first_coordinate(i) + 3;
            for &(xi, w) in self.quadrature {
                let dm = self.sections[i].mass * w;
                let f = self.point_in(&frames[i], q, i, xi, None);
                let (p2, r2) = self.pose_in(&bases[i], &moving, i, xi, None);
                let motion = Self::motion_of(&p2, &r2);
                let inertia = self.slice_inertia(i, &f.rotation, dm);
                let spin = mat_vec(&inertia, &motion.angular_velocity);
                let torque = add(&mat_vec(&inertia, &motion.bias_angular_acceleration), &cross(&motion.angular_velocity, &spin));
                let force = scale(&motion.bias_acceleration, dm);
                let weight = dm * self.gravity;
                for b in 0..active {
                    let inertia_wb = mat_vec(&inertia, &f.angular[b]);
                    for a in 0..=b {
                        m[a][b] += dm * dot(&f.linear[a], &f.linear[b]) + dot(&f.angular[a], &inertia_wb);
                    }
                    c[b] += dot(&f.linear[b], &force) + dot(&f.angular[b], &torque);
                    g[b] += weight * f.linear[b][2];
                }
            }
            let c0 = self.first_coordinate(i);
            for j in 0..3 {
                g[c0 + j] += self.sections[i].stiffness * q[c0 + j];
            }
        }
        for b in 0..N {
            for a in 0..b {
                m[b][a] = m[a][b];
            }
        }
        (m, c, g)
    }

    /// World inertia of a slice of mass `dm` with rotation `r`.
    fn slice_inertia<S: Real>(&self, i: usize, r: &M3<S>, dm: f64) -> M3<S> {
        let radius2 = self.sections[i].disc_radius * self.sections[i].disc_radius;
        let principal = [0.5 * radius2 * dm, 0.25 * radius2 * dm, 0.25 * radius2 * dm];
        let scaled: M3<S> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].scale(principal[b])));
        mat_mul_t(&scaled, r)
    }

    /// The mass matrix, on any scalar (row-major, full).
    pub fn mass_matrix<S: Real, const N: usize>(&self, q: &[S; N], frames: &[FrameJacobian<S, N>; K]) -> [[S; N]; N] {
        let mut m = [[S::zero(); N]; N];
        for i in 0..K {
            let active = self.first_coordinate(i) + 3;
            for &(xi, w) in self.quadrature {
                let dm = self.sections[i].mass * w;
                let f = self.point_in(&frames[i], q, i, xi, None);
                let inertia = self.slice_inertia(i, &f.rotation, dm);
                for b in 0..active {
                    let inertia_wb = mat_vec(&inertia, &f.angular[b]);
                    for a in 0..=b {
                        m[a][b] += dot(&f.linear[a], &f.linear[b]).scale(dm) + dot(&f.angular[a], &inertia_wb);
                    }
                }
            }
        }
        for b in 0..N {
            for a in 0..b {
                m[b][a] = m[a][b];
            }
        }
        m
    }

    /// G = dV/dq: gravity on every slice plus the actuators' elasticity K l.
    pub fn gravity_force<const N: usize>(&self, q: &[f64; N], frames: &[FrameJacobian<f64, N>; K]) -> [f64; N] {
        let mut g = [0.0; N];
        for i in 0..K {
            let active = self.first_coordinate(i) + 3;
            for &(xi, w) in self.quadrature {
                let weight = self.sections[i].mass * w * self.gravity;
                let f = self.point_in(&frames[i], q, i, xi, None);
                for a in 0..active {
                    g[a] += weight * f.linear[a][2];
                }
            }
            let c0 = self.first_coordinate(i);
            for j in 0..3 {
                g[c0 + j] += self.sections[i].stiffness * q[c0 + j];
            }
        }
        g
    }

    /// V: gravity plus elastic energy 1/2 K l^2.
    pub fn potential_energy<const N: usize>(&self, q: &[f64; N]) -> f64 {
        let mut v = 0.0;
        let bases = self.section_poses(q);
        for i in 0..K {
            for &(xi, w) in self.quadrature {
                let (p, _) = self.pose_in(&bases[i], q, i, xi, None);
                v += self.sections[i].mass * w * self.gravity * p[2];
            }
            let c0 = self.first_coordinate(i);
            for j in 0..3 {
                v += 0.5 * self.sections[i].stiffness * q[c0 + j] * q[c0 + j];
            }
        }
        v
    }

    /// C(q, qd) qd by Newton-Euler over the slices: sum of Jv' (dm a) + Jw' (I alpha + w x I w)
    /// with the bias accelerations at qdd = 0.
    pub fn coriolis_force<const N: usize>(&self, q: &[f64; N], qd: &[f64; N], frames: &[FrameJacobian<f64, N>; K]) -> [f64; N] {
        self.dynamics(q, qd, frames).1
    }

    /// The Coriolis matrix from the Christoffel symbols of M (eqs 7-8), with dM/dq_k exact
    /// from dual numbers: C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_k.
    pub fn coriolis_matrix<const N: usize>(&self, q: &[f64; N], qd: &[f64; N]) -> [[f64; N]; N] {
        let mut dm = [[[0.0; N]; N]; N];
        for k in 0..N {
            let seeded: [Dual<f64>; N] = std::array::from_fn(|m| Dual::new(q[m], if m == k { 1.0 } else { 0.0 }));
            let frames = self.section_frames(&seeded);
            let m = self.mass_matrix(&seeded, &frames);
            for a in 0..N {
                for b in 0..N {
                    dm[k][a][b] = m[a][b].eps;
                }
            }
        }
        let mut c = [[0.0; N]; N];
        for i in 0..N {
            for j in 0..N {
                let mut sum = 0.0;
                for k in 0..N {
                    sum += 0.5 * (dm[k][i][j] + dm[j][i][k] - dm[i][j][k]) * qd[k];
                }
                c[i][j] = sum;
            }
        }
        c
    }

    /// Damping D qd on the actuator coordinates.
    pub fn damping_force<const N: usize>(&self, qd: &[f64; N]) -> [f64; N] {
        let mut d = [0.0; N];
        for i in 0..K {
            let c0 = self.first_coordinate(i);
            for j in 0..3 {
                d[c0 + j] = self.sections[i].damping * qd[c0 + j];
            }
        }
        d
    }

    /// The actuators' elastic stiffness K on the diagonal of the length coordinates.
    pub fn elastic_stiffness<const N: usize>(&self) -> [f64; N] {
        let mut k = [0.0; N];
        for i in 0..K {
            let c0 = self.first_coordinate(i);
            for j in 0..3 {
                k[c0 + j] = self.sections[i].stiffness;
            }
        }
        k
    }

    /// Total mass.
    pub fn total_mass(&self) -> f64 {
        self.sections.iter().map(|s| s.mass).sum()
    }

    /// Centre of mass.
    pub fn center_of_mass<const N: usize>(&self, q: &[f64; N]) -> V3<f64> {
        let mut moment = [0.0; 3];
        let bases = self.section_poses(q);
        for i in 0..K {
            for &(xi, w) in self.quadrature {
                let (p, _) = self.pose_in(&bases[i], q, i, xi, None);
                for a in 0..3 {
                    moment[a] += self.sections[i].mass * w * p[a];
                }
            }
        }
        scale(&moment, 1.0 / self.total_mass())
    }

    /// Linear momentum and angular momentum about the world origin.
    pub fn momenta<const N: usize>(&self, q: &[f64; N], qd: &[f64; N]) -> (V3<f64>, V3<f64>) {
        let mut linear = [0.0; 3];
        let mut angular = [0.0; 3];
        let seeded: [Dual<f64>; N] = std::array::from_fn(|k| Dual::new(q[k], qd[k]));
        let bases = self.section_poses(&seeded);
        for i in 0..K {
            for &(xi, w) in self.quadrature {
                let dm = self.sections[i].mass * w;
                let (p, r) = self.pose_in(&bases[i], &seeded, i, xi, None);
                let position: V3<f64> = std::array::from_fn(|a| p[a].re);
                let velocity: V3<f64> = std::array::from_fn(|a| p[a].eps);
                let rotation: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].re));
                let rate: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].eps));
                let omega = vee(&mat_mul_t(&rate, &rotation));
                let momentum = scale(&velocity, dm);
                linear = add(&linear, &momentum);
                let spin = mat_vec(&self.slice_inertia(i, &rotation, dm), &omega);
                angular = add(&add(&angular, &cross(&position, &momentum)), &spin);
            }
        }
        (linear, angular)
    }
}

impl<const K: usize> SoftChain<'_, K> {
    /// World positions of skin points. Consecutive points on one ring share its pose.
    pub fn skin_positions_into<const N: usize>(
        &self,
        q: &[f64; N],
        frames: &[FrameJacobian<f64, N>; K],
        skin: &[SkinPoint],
        radii: &[f64],
        out: &mut [nalgebra::Vector3<f64>],
    ) {
        let mut ring: Option<(usize, f64, V3<f64>, M3<f64>)> = None;
        for (point, slot) in skin.iter().zip(out.iter_mut()) {
            let (position, rotation) = match ring {
                Some((s, xi, p, r)) if s == point.section && xi == point.xi => (p, r),
                _ => {
                    let frame = &frames[point.section];
                    let c0 = self.first_coordinate(point.section);
                    let (p, r) = self.sections[point.section].geometry.bending([q[c0], q[c0 + 1], q[c0 + 2]]).pose(point.xi);
                    let world = (add(&frame.position, &mat_vec(&frame.rotation, &p)), mat_mul(&frame.rotation, &r));
                    ring = Some((point.section, point.xi, world.0, world.1));
                    world
                }
            };
            let p = add(&position, &mat_vec(&rotation, &point.offset(radii[point.radius])));
            *slot = nalgebra::Vector3::new(p[0], p[1], p[2]);
        }
    }

    /// World velocities of skin points, one dual-number pass per ring.
    pub fn skin_velocities_into<const N: usize>(
        &self,
        q: &[f64; N],
        qd: &[f64; N],
        skin: &[SkinPoint],
        radii: &[f64],
        out: &mut [nalgebra::Vector3<f64>],
    ) {
        let seeded: [Dual<f64>; N] = std::array::from_fn(|k| Dual::new(q[k], qd[k]));
        let bases = self.section_poses(&seeded);
        let mut ring: Option<(usize, f64, V3<f64>, V3<f64>, M3<f64>)> = None;
        for (point, slot) in skin.iter().zip(out.iter_mut()) {
            let (velocity, omega, rotation) = match ring {
                Some((s, xi, v, w, r)) if s == point.section && xi == point.xi => (v, w, r),
                _ => {
                    let (p, r) = self.pose_in(&bases[point.section], &seeded, point.section, point.xi, None);
                    let rotation: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].re));
                    let rate: M3<f64> = std::array::from_fn(|a| std::array::from_fn(|b| r[a][b].eps));
                    let velocity: V3<f64> = std::array::from_fn(|a| p[a].eps);
                    let omega = vee(&mat_mul_t(&rate, &rotation));
                    ring = Some((point.section, point.xi, velocity, omega, rotation));
                    (velocity, omega, rotation)
                }
            };
            let arm = mat_vec(&rotation, &point.offset(radii[point.radius]));
            let v = add(&velocity, &cross(&omega, &arm));
            *slot = nalgebra::Vector3::new(v[0], v[1], v[2]);
        }
    }

    /// World direction of the neutral axis (the slice's x axis) at each skin point.
    pub fn skin_axes_into<const N: usize>(
        &self,
        q: &[f64; N],
        frames: &[FrameJacobian<f64, N>; K],
        skin: &[SkinPoint],
        out: &mut [nalgebra::Vector3<f64>],
    ) {
        let mut ring: Option<(usize, f64, nalgebra::Vector3<f64>)> = None;
        for (point, slot) in skin.iter().zip(out.iter_mut()) {
            *slot = match ring {
                Some((s, xi, axis)) if s == point.section && xi == point.xi => axis,
                _ => {
                    let frame = &frames[point.section];
                    let c0 = self.first_coordinate(point.section);
                    let (_, r) = self.sections[point.section].geometry.bending([q[c0], q[c0 + 1], q[c0 + 2]]).pose(point.xi);
                    let a = mat_vec(&frame.rotation, &[r[0][0], r[1][0], r[2][0]]);
                    let axis = nalgebra::Vector3::new(a[0], a[1], a[2]);
                    ring = Some((point.section, point.xi, axis));
                    axis
                }
            };
        }
    }

    /// Jacobians and neutral-axis directions of several skin points (`indices` into `skin`),
    /// sharing each ring's kinematics between its points: a point's Jacobian is its ring's
    /// linear Jacobian plus the ring's angular Jacobian crossed with the point's arm.
    pub fn skin_kinematics_into<const N: usize>(
        &self,
        q: &[f64; N],
        frames: &[FrameJacobian<f64, N>; K],
        skin: &[SkinPoint],
        radii: &[f64],
        indices: &[usize],
        jacobians: &mut [nalgebra::SMatrix<f64, 3, N>],
        axes: &mut [nalgebra::Vector3<f64>],
    ) {
        let mut ring: Option<(usize, f64, FrameJacobian<f64, N>)> = None;
        for ((&index, jacobian), axis) in indices.iter().zip(jacobians.iter_mut()).zip(axes.iter_mut()) {
            let point = &skin[index];
            let frame = match &ring {
                Some((s, xi, f)) if *s == point.section && *xi == point.xi => f,
                _ => {
                    let f = self.point_in(&frames[point.section], q, point.section, point.xi, None);
                    &ring.insert((point.section, point.xi, f)).2
                }
            };
            let arm = mat_vec(&frame.rotation, &point.offset(radii[point.radius]));
            let active = self.first_coordinate(point.section) + 3;
            for k in 0..N {
                let column = if k < active { add(&frame.linear[k], &cross(&frame.angular[k], &arm)) } else { [0.0; 3] };
                for a in 0..3 {
                    jacobian[(a, k)] = column[a];
                }
            }
            *axis = nalgebra::Vector3::new(frame.rotation[0][0], frame.rotation[1][0], frame.rotation[2][0]);
        }
    }

    /// Jacobian columns dp/dq_k of one skin point.
    pub fn skin_jacobian<const N: usize>(
        &self,
        q: &[f64; N],
        frames: &[FrameJacobian<f64, N>; K],
        point: &SkinPoint,
        radius: f64,
    ) -> [V3<f64>; N] {
        self.point_in(&frames[point.section], q, point.section, point.xi, Some(point.offset(radius))).linear
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        for order in [1, 2, 5, 8] {
            let rule = gauss_legendre(order);
            assert_eq!(rule.len(), order);
            for degree in 0..(2 * order) {
                let integral: f64 = rule.iter().map(|(x, w)| w * x.powi(degree as i32)).sum();
                assert!((integral - 1.0 / (degree as f64 + 1.0)).abs() < 1e-14, "order {order} degree {degree}");
            }
        }
    }
}
