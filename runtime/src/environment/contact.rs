//! Spring-damper normal contact (eq 18 of the rigid-snake paper), optionally with
//! Hunt-Crossley's depth-proportional damping, and Coulomb friction (eq 19), isotropic or
//! anisotropic, exact or regularised.

use crate::environment::terrain::SurfaceContact;
use crate::quantities::physical_ranges::{
    CONTACT_DAMPING, CONTACT_DISSIPATION, CONTACT_STIFFNESS, FRICTION, FRICTION_REGULARISATION,
};
use nalgebra::{Matrix3, SMatrix, Vector3};

/// In which directions the two friction coefficients act.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrictionAnisotropy {
    /// One coefficient (`along`) in every tangent direction.
    Isotropic,
    /// `along` acts along the carrying body's x axis (projected into the surface), `across`
    /// perpendicular to it in the surface: passive wheels, scales.
    BodyAxis,
    /// `along` acts along the world x axis (projected into the surface), `across` along the
    /// in-surface perpendicular.
    WorldAxis,
}

/// Coulomb friction f_T = -mu f_N sign(v_t), per direction for anisotropic friction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionLaw {
    /// The coefficient along the axis (every direction when isotropic).
    pub along: f64,
    /// The coefficient across the axis.
    pub across: f64,
    /// Which axis, if any.
    pub anisotropy: FrictionAnisotropy,
    /// 0 gives the exact sign; a positive value replaces sign(v) by v / sqrt(v^2 + eps^2),
    /// which is smooth, so adaptive integrators need not resolve a discontinuity.
    pub regularisation: f64,
}

/// Spring-damper normal force
/// f_N = max(k * depth * (1 + h * depth_rate) + d * depth_rate, 0) and friction.
///
/// With h = 0 this is eq 18 of the seed papers, whose damper force d * depth_rate jumps
/// from zero as a point touches down at speed: an adaptive step across a touchdown is
/// rejected until it lands on the jump, and an implicit step across one may have no
/// solution. Hunt and Crossley's damper k * h * depth * depth_rate (d = 0, h > 0) grows
/// with the depth from zero, so the force is continuous in the state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactLaw {
    /// k (N/m).
    pub stiffness: f64,
    /// d (N s/m): the damper of eq 18.
    pub damping: f64,
    /// h (s/m): Hunt and Crossley's dissipation, the damper's force per unit of spring
    /// force and of approach speed.
    pub dissipation: f64,
    /// The friction at the points in contact.
    pub friction: FrictionLaw,
}

/// The force at one contact point, split into its parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSample {
    /// Magnitude of the normal force (N), >= 0.
    pub normal_force: f64,
    /// Normal force vector (N).
    pub normal: Vector3<f64>,
    /// Friction force vector (N).
    pub friction: Vector3<f64>,
}

impl ContactSample {
    /// The whole force: normal plus friction.
    pub fn total(&self) -> Vector3<f64> {
        self.normal + self.friction
    }
}

#[inline]
fn signum(v: f64, regularisation: f64) -> f64 {
    if regularisation > 0.0 {
        v / (v * v + regularisation * regularisation).sqrt()
    } else if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

impl ContactLaw {
    /// Checks that all constants are finite and within their physical ranges.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("contact stiffness", self.stiffness, CONTACT_STIFFNESS),
            ("contact damping", self.damping, CONTACT_DAMPING),
            ("contact dissipation", self.dissipation, CONTACT_DISSIPATION),
            ("friction along", self.friction.along, FRICTION),
            ("friction across", self.friction.across, FRICTION),
            ("friction regularisation", self.friction.regularisation, FRICTION_REGULARISATION),
        ];
        for (name, value, range) in fields {
            range.check(name, value)?;
        }
        Ok(())
    }

    /// The unclamped normal force at `depth` and `normal_velocity` (the velocity along the
    /// surface's outward normal: depth_rate = -normal_velocity).
    #[inline]
    fn spring_damper(&self, depth: f64, normal_velocity: f64) -> f64 {
        self.stiffness * depth * (1.0 - self.dissipation * normal_velocity) - self.damping * normal_velocity
    }

    /// Its derivatives with respect to the depth and to the normal velocity.
    #[inline]
    fn spring_damper_rates(&self, depth: f64, normal_velocity: f64) -> (f64, f64) {
        (
            self.stiffness * (1.0 - self.dissipation * normal_velocity),
            -self.damping - self.stiffness * self.dissipation * depth,
        )
    }

    /// Force on the robot at a point in contact moving with `velocity`; `body_axis` is the
    /// world direction of the carrying body's x axis.
    #[inline(always)]
    pub fn force(&self, contact: &SurfaceContact, velocity: &Vector3<f64>, body_axis: &Vector3<f64>) -> ContactSample {
        let n = contact.normal;
        let normal_force = self.spring_damper(contact.depth, velocity.dot(&n)).max(0.0);
        self.with_normal_force(normal_force, &n, velocity, body_axis)
    }

    /// Force at a point pressed on a surface of normal `n` with a given normal force (for
    /// supports whose load is known rather than computed from penetration).
    #[inline]
    pub fn with_normal_force(
        &self,
        normal_force: f64,
        n: &Vector3<f64>,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
    ) -> ContactSample {
        let n = *n;
        let normal = n * normal_force;
        if normal_force == 0.0 {
            return ContactSample { normal_force, normal, friction: Vector3::zeros() };
        }
        let tangential = velocity - n * velocity.dot(&n);
        let law = &self.friction;
        let reference = match law.anisotropy {
            FrictionAnisotropy::Isotropic => None,
            FrictionAnisotropy::BodyAxis => Some(*body_axis),
            FrictionAnisotropy::WorldAxis => Some(Vector3::x()),
        };
        let along_direction = reference.and_then(|axis| {
            let projected = axis - n * axis.dot(&n);
            let length = projected.norm();
            (length > 1e-9).then(|| projected / length)
        });
        let friction = match along_direction {
            Some(along) => {
                let across = n.cross(&along);
                let v_along = tangential.dot(&along);
                let v_across = tangential.dot(&across);
                -(along * (law.along * signum(v_along, law.regularisation))
                    + across * (law.across * signum(v_across, law.regularisation)))
                    * normal_force
            }
            None => {
                let speed = tangential.norm();
                if speed == 0.0 {
                    Vector3::zeros()
                } else {
                    -tangential / speed * (law.along * signum(speed, law.regularisation) * normal_force)
                }
            }
        };
        ContactSample { normal_force, normal, friction }
    }
}

/// How the inputs of a contact force move along a direction of the robot's state: the
/// directional derivatives of the contact's depth and normal (`Terrain::contact_tangent`),
/// of the point's velocity and of the carrying body's x axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactTangent {
    /// The depth's derivative.
    pub depth: f64,
    /// The normal's derivative.
    pub normal: Vector3<f64>,
    /// The point velocity's derivative.
    pub velocity: Vector3<f64>,
    /// The body axis's derivative.
    pub axis: Vector3<f64>,
}

/// The inputs' tangents along K directions at once, one column per direction: what a
/// Jacobian needs of a point, with the law's shared work (normal force, friction direction,
/// signs) done once for all K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactTangents<const K: usize> {
    /// The depth's derivatives.
    pub depth: SMatrix<f64, 1, K>,
    /// The normal's derivatives.
    pub normal: SMatrix<f64, 3, K>,
    /// The point velocity's derivatives.
    pub velocity: SMatrix<f64, 3, K>,
    /// The body axis's derivatives.
    pub axis: SMatrix<f64, 3, K>,
}

impl<const K: usize> ContactTangents<K> {
    /// No input moves.
    pub fn zeros() -> Self {
        ContactTangents {
            depth: SMatrix::zeros(),
            normal: SMatrix::zeros(),
            velocity: SMatrix::zeros(),
            axis: SMatrix::zeros(),
        }
    }
}

#[cfg(test)]
impl ContactTangents<10> {
    /// Each input alone moving at unit rate, one column each: the depth, the normal's three
    /// components, the velocity's and the axis'.
    fn each_input() -> Self {
        let mut units = ContactTangents::zeros();
        units.depth[0] = 1.0;
        for k in 0..3 {
            units.normal[(k, 1 + k)] = 1.0;
            units.velocity[(k, 4 + k)] = 1.0;
            units.axis[(k, 7 + k)] = 1.0;
        }
        units
    }
}

/// A contact force's slopes by its ten inputs at one state (columns: the depth, the normal's
/// three components, the velocity's, the body axis'): the force is linear in its inputs'
/// tangents, so these give its tangent along any direction as one product, where the law's
/// tangent redoes the normal force, the friction's direction and its signs each time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSlopes(SMatrix<f64, 3, 10>);

impl ContactSlopes {
    /// The force's tangent when its inputs move along `tangent`.
    #[inline]
    pub fn tangent(&self, tangent: &ContactTangent) -> Vector3<f64> {
        self.0.column(0) * tangent.depth
            + self.0.fixed_columns::<3>(1) * tangent.normal
            + self.0.fixed_columns::<3>(4) * tangent.velocity
            + self.0.fixed_columns::<3>(7) * tangent.axis
    }

    /// d(force)/d(velocity).
    #[inline]
    pub fn by_velocity(&self) -> Matrix3<f64> {
        self.0.fixed_columns::<3>(4).into_owned()
    }
}

impl From<&ContactTangent> for ContactTangents<1> {
    fn from(tangent: &ContactTangent) -> Self {
        ContactTangents {
            depth: SMatrix::<f64, 1, 1>::new(tangent.depth),
            normal: tangent.normal,
            velocity: tangent.velocity,
            axis: tangent.axis,
        }
    }
}

impl ContactLaw {
    /// The directional derivative of the total contact force ([`ContactLaw::force`]) when its
    /// inputs move along `tangent`: the spring-damper normal force, the direction of the
    /// friction reference (the projected axis, normalised), the regularised signs. Zero where
    /// the normal force is zero; at the clamp's kink the side `force` takes.
    pub fn force_tangent(
        &self,
        contact: &SurfaceContact,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
        tangent: &ContactTangent,
    ) -> Vector3<f64> {
        self.force_tangents(contact, velocity, body_axis, &tangent.into())
    }

    /// The friction's reference for the slopes: the axis (the body's, which moves with it,
    /// or the world's x, which does not), whether it moves, and its projection onto the
    /// surface of normal `n`, normalised, with the projection's length; none for isotropic
    /// friction or an axis along the normal.
    fn projected_reference(
        &self,
        n: &Vector3<f64>,
        body_axis: &Vector3<f64>,
    ) -> Option<(Vector3<f64>, bool, Vector3<f64>, f64)> {
        let (axis, moves) = match self.friction.anisotropy {
            FrictionAnisotropy::Isotropic => return None,
            FrictionAnisotropy::BodyAxis => (*body_axis, true),
            FrictionAnisotropy::WorldAxis => (Vector3::x(), false),
        };
        let projected = axis - n * axis.dot(n);
        let length = projected.norm();
        (length > 1e-9).then(|| (axis, moves, projected / length, length))
    }

    /// [`ContactLaw::force_tangent`]'s slopes by the force's inputs at this state.
    ///
    /// Written out block by block (the depth's column, then 3 x 3 blocks by the normal, the
    /// velocity and the axis): the same derivatives as [`ContactLaw::force_tangents`] along
    /// each input alone, equal to rounding (a test holds them so), without its products with
    /// the unit tangents' zeros (measured on the soft snake's system Jacobian: the ten-column
    /// form was 6 % of it).
    pub fn force_slopes(
        &self,
        contact: &SurfaceContact,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
    ) -> ContactSlopes {
        let (n, v) = (contact.normal, *velocity);
        let normal_velocity = v.dot(&n);
        let normal_force = self.spring_damper(contact.depth, normal_velocity);
        if normal_force <= 0.0 {
            return ContactSlopes(SMatrix::zeros());
        }
        let (by_depth, by_normal_velocity) = self.spring_damper_rates(contact.depth, normal_velocity);
        let identity = Matrix3::identity();
        // The tangential velocity t = v - n (v . n) by the normal and by the velocity.
        let tangential = v - n * normal_velocity;
        let tangential_by_normal = -identity * normal_velocity - n * v.transpose();
        let tangential_by_velocity = identity - n * n.transpose();
        let law = &self.friction;
        let eps = law.regularisation;
        // The friction reference (the projected axis, normalised) by the normal and the axis.
        let along_direction = self.projected_reference(&n, body_axis).map(|(axis, moves, along, length)| {
            let normalised = (identity - along * along.transpose()) / length;
            let projected_by_normal = -identity * axis.dot(&n) - n * axis.transpose();
            let projected_by_axis = if moves { tangential_by_velocity } else { Matrix3::zeros() };
            (along, normalised * projected_by_normal, normalised * projected_by_axis)
        });
        // Friction is -F_N g(t): g's blocks by the normal, the velocity and the axis.
        let (g, g_by_normal, g_by_velocity, g_by_axis) = match along_direction {
            Some((a, a_by_normal, a_by_axis)) => {
                let c = n.cross(&a);
                // dc = dn x a + n x da.
                let c_by_normal = n.cross_matrix() * a_by_normal - a.cross_matrix();
                let c_by_axis = n.cross_matrix() * a_by_axis;
                let (va, vc) = (tangential.dot(&a), tangential.dot(&c));
                let va_by_normal = a.transpose() * tangential_by_normal + tangential.transpose() * a_by_normal;
                let va_by_velocity = a.transpose() * tangential_by_velocity;
                let va_by_axis = tangential.transpose() * a_by_axis;
                let vc_by_normal = c.transpose() * tangential_by_normal + tangential.transpose() * c_by_normal;
                let vc_by_velocity = c.transpose() * tangential_by_velocity;
                let vc_by_axis = tangential.transpose() * c_by_axis;
                let (sa, sc) = (law.along * signum(va, eps), law.across * signum(vc, eps));
                let (ra, rc) = (law.along * signum_rate(va, eps), law.across * signum_rate(vc, eps));
                let g = a * sa + c * sc;
                let g_by_normal =
                    a_by_normal * sa + a * (va_by_normal * ra) + c_by_normal * sc + c * (vc_by_normal * rc);
                let g_by_velocity = a * (va_by_velocity * ra) + c * (vc_by_velocity * rc);
                let g_by_axis = a_by_axis * sa + a * (va_by_axis * ra) + c_by_axis * sc + c * (vc_by_axis * rc);
                (g, g_by_normal, g_by_velocity, g_by_axis)
            }
            None => {
                let speed = tangential.norm();
                let (g, to_g) = if speed == 0.0 {
                    (Vector3::zeros(), identity * (law.along * signum_rate(0.0, eps)))
                } else {
                    let d = tangential / speed;
                    let s = signum(speed, eps);
                    // dg = d (d . dt) rate + (dt - d (d . dt)) s / speed, linear in dt.
                    let across = (identity - d * d.transpose()) * (law.along * s / speed);
                    (d * (law.along * s), d * d.transpose() * (law.along * signum_rate(speed, eps)) + across)
                };
                (g, to_g * tangential_by_normal, to_g * tangential_by_velocity, Matrix3::zeros())
            }
        };
        // f = (n - g) F_N: df = (n - g) dF_N + (dn - dg) F_N.
        let lever = n - g;
        let mut slopes = SMatrix::<f64, 3, 10>::zeros();
        slopes.set_column(0, &(lever * by_depth));
        slopes
            .fixed_columns_mut::<3>(1)
            .copy_from(&(lever * (v.transpose() * by_normal_velocity) + (identity - g_by_normal) * normal_force));
        slopes
            .fixed_columns_mut::<3>(4)
            .copy_from(&(lever * (n.transpose() * by_normal_velocity) - g_by_velocity * normal_force));
        slopes.fixed_columns_mut::<3>(7).copy_from(&(-g_by_axis * normal_force));
        ContactSlopes(slopes)
    }

    /// [`ContactLaw::with_normal_force_tangent`]'s slopes by the force's inputs under a fixed
    /// normal force and a fixed normal (a floor's: the depth's and the normal's columns are
    /// zero). Written out as its two 3 x 3 blocks, by the velocity and by the axis, as
    /// [`ContactLaw::force_slopes`] is: equal to [`ContactLaw::with_normal_force_tangents`]
    /// along each moving input to rounding (a test holds them so), without that form's
    /// products with the unit tangents' zeros and with each sign's rate from its square root
    /// rather than a power (measured on the rigid snake's box-DDP plans, the six-column form
    /// and its powers were 16 % of a plan).
    pub fn with_normal_force_slopes(
        &self,
        normal_force: f64,
        n: &Vector3<f64>,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
    ) -> ContactSlopes {
        let mut slopes = SMatrix::<f64, 3, 10>::zeros();
        if normal_force == 0.0 {
            return ContactSlopes(slopes);
        }
        let (n, v) = (*n, *velocity);
        let identity = Matrix3::identity();
        let tangential = v - n * v.dot(&n);
        // The tangential velocity by the velocity: the projector onto the surface.
        let projector = identity - n * n.transpose();
        let law = &self.friction;
        let eps = law.regularisation;
        // The reference (the projected axis, normalised) and its block by the axis.
        let along_direction = self.projected_reference(&n, body_axis).map(|(_, moves, along, length)| {
            let by_axis =
                if moves { (identity - along * along.transpose()) * projector / length } else { Matrix3::zeros() };
            (along, by_axis)
        });
        // Friction is -F_N g(t): g's blocks by the velocity and the axis.
        let (g_by_velocity, g_by_axis) = match along_direction {
            Some((a, a_by_axis)) => {
                let c = n.cross(&a);
                let c_by_axis = n.cross_matrix() * a_by_axis;
                let (va, vc) = (tangential.dot(&a), tangential.dot(&c));
                let (sa, ra) = signum_and_rate(va, eps);
                let (sc, rc) = signum_and_rate(vc, eps);
                let (sa, ra, sc, rc) = (law.along * sa, law.along * ra, law.across * sc, law.across * rc);
                let g_by_velocity = a * (a.transpose() * projector * ra) + c * (c.transpose() * projector * rc);
                let g_by_axis = a_by_axis * sa
                    + a * (tangential.transpose() * a_by_axis * ra)
                    + c_by_axis * sc
                    + c * (tangential.transpose() * c_by_axis * rc);
                (g_by_velocity, g_by_axis)
            }
            None => {
                let speed = tangential.norm();
                let to_g = if speed == 0.0 {
                    identity * (law.along * signum_and_rate(0.0, eps).1)
                } else {
                    let d = tangential / speed;
                    let (s, rate) = signum_and_rate(speed, eps);
                    // dg = d (d . dt) rate + (dt - d (d . dt)) s / speed, linear in dt.
                    d * d.transpose() * (law.along * rate) + (identity - d * d.transpose()) * (law.along * s / speed)
                };
                (to_g * projector, Matrix3::zeros())
            }
        };
        slopes.fixed_columns_mut::<3>(4).copy_from(&(-g_by_velocity * normal_force));
        slopes.fixed_columns_mut::<3>(7).copy_from(&(-g_by_axis * normal_force));
        ContactSlopes(slopes)
    }

    /// [`ContactLaw::force_tangent`] along K directions at once, column by column.
    pub fn force_tangents<const K: usize>(
        &self,
        contact: &SurfaceContact,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
        tangents: &ContactTangents<K>,
    ) -> SMatrix<f64, 3, K> {
        let n = contact.normal;
        let normal_velocity = velocity.dot(&n);
        let normal_force = self.spring_damper(contact.depth, normal_velocity);
        if normal_force <= 0.0 {
            return SMatrix::zeros();
        }
        let (by_depth, by_normal_velocity) = self.spring_damper_rates(contact.depth, normal_velocity);
        let d_normal_velocity = n.transpose() * tangents.velocity + velocity.transpose() * tangents.normal;
        let d_normal_force = tangents.depth * by_depth + d_normal_velocity * by_normal_velocity;
        self.with_normal_force_tangents(normal_force, &d_normal_force, &n, velocity, body_axis, tangents)
    }

    /// The directional derivative of [`ContactLaw::with_normal_force`]'s total force, the
    /// normal force moving by `d_normal_force` and the rest along `tangent` (whose depth is
    /// not read).
    pub fn with_normal_force_tangent(
        &self,
        normal_force: f64,
        d_normal_force: f64,
        n: &Vector3<f64>,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
        tangent: &ContactTangent,
    ) -> Vector3<f64> {
        let d_normal_force = SMatrix::<f64, 1, 1>::new(d_normal_force);
        self.with_normal_force_tangents(normal_force, &d_normal_force, n, velocity, body_axis, &tangent.into())
    }

    /// [`ContactLaw::with_normal_force_tangent`] along K directions at once, column by
    /// column: the friction's direction and signs are the same for every column, and each
    /// column's derivative is linear in its tangents.
    pub fn with_normal_force_tangents<const K: usize>(
        &self,
        normal_force: f64,
        d_normal_force: &SMatrix<f64, 1, K>,
        n: &Vector3<f64>,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
        tangents: &ContactTangents<K>,
    ) -> SMatrix<f64, 3, K> {
        if normal_force == 0.0 {
            return SMatrix::zeros();
        }
        let (n, v) = (*n, *velocity);
        let (dn, dv) = (&tangents.normal, &tangents.velocity);
        let normal_velocity = v.dot(&n);
        let tangential = v - n * normal_velocity;
        let d_tangential = dv - dn * normal_velocity - n * (n.transpose() * dv + v.transpose() * dn);
        let law = &self.friction;
        let eps = law.regularisation;
        let reference = match law.anisotropy {
            FrictionAnisotropy::Isotropic => None,
            FrictionAnisotropy::BodyAxis => Some((*body_axis, tangents.axis)),
            FrictionAnisotropy::WorldAxis => Some((Vector3::x(), SMatrix::zeros())),
        };
        // The same reference `with_normal_force` uses, with its derivative.
        let along_direction = reference.and_then(|(axis, d_axis)| {
            let projected = axis - n * axis.dot(&n);
            let length = projected.norm();
            (length > 1e-9).then(|| {
                let d_projected = d_axis - dn * axis.dot(&n) - n * (n.transpose() * d_axis + axis.transpose() * dn);
                let along = projected / length;
                (along, (d_projected - along * (along.transpose() * d_projected)) / length)
            })
        });
        // Friction is -F_N g(v_t): its direction g and g's derivative.
        let (g, dg) = match along_direction {
            Some((a, da)) => {
                let c = n.cross(&a);
                // dn x a + n x da.
                let dc = n.cross_matrix() * da - a.cross_matrix() * dn;
                let (va, vc) = (tangential.dot(&a), tangential.dot(&c));
                let dva = a.transpose() * d_tangential + tangential.transpose() * da;
                let dvc = c.transpose() * d_tangential + tangential.transpose() * dc;
                let (sa, sc) = (signum(va, eps), signum(vc, eps));
                let g = a * (law.along * sa) + c * (law.across * sc);
                let dg = da * (law.along * sa)
                    + a * (dva * (law.along * signum_rate(va, eps)))
                    + dc * (law.across * sc)
                    + c * (dvc * (law.across * signum_rate(vc, eps)));
                (g, dg)
            }
            None => {
                let speed = tangential.norm();
                if speed == 0.0 {
                    (Vector3::zeros(), d_tangential * (law.along * signum_rate(0.0, eps)))
                } else {
                    let d = tangential / speed;
                    let d_speed = d.transpose() * d_tangential;
                    let s = signum(speed, eps);
                    let dg = d * (d_speed * (law.along * signum_rate(speed, eps)))
                        + (d_tangential - d * d_speed) * (law.along * s / speed);
                    (d * (law.along * s), dg)
                }
            }
        };
        (n - g) * d_normal_force + (dn - dg) * normal_force
    }
}

/// The regularised sign and its rate, from one square root: equal to [`signum`] and
/// [`signum_rate`] to rounding.
#[inline]
fn signum_and_rate(v: f64, regularisation: f64) -> (f64, f64) {
    if regularisation > 0.0 {
        let e2 = regularisation * regularisation;
        let w = v * v + e2;
        let root = w.sqrt();
        (v / root, e2 / (w * root))
    } else {
        (signum(v, 0.0), 0.0)
    }
}

/// d(signum)/dv of the regularised sign; 0 for the exact sign (its derivative is 0 or
/// infinite, neither of use to an implicit integrator).
#[inline]
fn signum_rate(v: f64, regularisation: f64) -> f64 {
    if regularisation > 0.0 {
        let e2 = regularisation * regularisation;
        e2 / (v * v + e2).powf(1.5)
    } else {
        0.0
    }
}

impl ContactLaw {
    /// Derivatives of the contact force with respect to the point's velocity and position,
    /// for a surface whose normal does not turn with the point (exact on flat ground): what
    /// the stiff part of an implicit integrator's Jacobian needs.
    pub fn force_derivatives(
        &self,
        contact: &SurfaceContact,
        velocity: &Vector3<f64>,
        body_axis: &Vector3<f64>,
    ) -> (nalgebra::Matrix3<f64>, nalgebra::Matrix3<f64>) {
        use nalgebra::Matrix3;
        let n = contact.normal;
        let normal_velocity = velocity.dot(&n);
        let normal_force = self.spring_damper(contact.depth, normal_velocity);
        if normal_force <= 0.0 {
            return (Matrix3::zeros(), Matrix3::zeros());
        }
        // F_N(depth, v.n) with depth = -(p.n) + const.
        let (by_depth, by_normal_velocity) = self.spring_damper_rates(contact.depth, normal_velocity);
        let dfn_dv = n.transpose() * by_normal_velocity;
        let dfn_dp = -n.transpose() * by_depth;
        let mut by_velocity = n * dfn_dv;
        let mut by_position = n * dfn_dp;
        let law = &self.friction;
        let tangential = velocity - n * normal_velocity;
        let projector = Matrix3::identity() - n * n.transpose();
        let reference = match law.anisotropy {
            FrictionAnisotropy::Isotropic => None,
            FrictionAnisotropy::BodyAxis => Some(*body_axis),
            FrictionAnisotropy::WorldAxis => Some(Vector3::x()),
        };
        let along = reference.and_then(|axis| (projector * axis).try_normalize(1e-9));
        // Friction f = -F_N g(v_t): d f/dv = -g dF_N/dv - F_N dg/dv, and through F_N for p.
        let (g, dg_dv) = match along {
            Some(a) => {
                let c = n.cross(&a);
                let (va, vc) = (tangential.dot(&a), tangential.dot(&c));
                let g = a * (law.along * signum(va, law.regularisation))
                    + c * (law.across * signum(vc, law.regularisation));
                let dg = a * a.transpose() * (law.along * signum_rate(va, law.regularisation))
                    + c * c.transpose() * (law.across * signum_rate(vc, law.regularisation));
                (g, dg)
            }
            None => {
                let speed = tangential.norm();
                if speed == 0.0 {
                    (Vector3::zeros(), projector * (law.along * signum_rate(0.0, law.regularisation)))
                } else {
                    let d = tangential / speed;
                    let s = signum(speed, law.regularisation);
                    let dg = d * d.transpose() * (law.along * signum_rate(speed, law.regularisation))
                        + (projector - d * d.transpose()) * (law.along * s / speed);
                    (d * (law.along * s), dg)
                }
            }
        };
        by_velocity -= g * dfn_dv + dg_dv * normal_force;
        by_position -= g * dfn_dp;
        (by_velocity, by_position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(anisotropy: FrictionAnisotropy, regularisation: f64) -> ContactLaw {
        ContactLaw {
            stiffness: 350.0,
            damping: 25.0,
            dissipation: 0.0,
            friction: FrictionLaw { along: 0.1, across: 0.5, anisotropy, regularisation },
        }
    }

    /// The same law with Hunt and Crossley's damper beside eq 18's, so the derivative
    /// tests reach both dampers' terms.
    fn laws(anisotropy: FrictionAnisotropy, regularisation: f64) -> [ContactLaw; 2] {
        let paper = law(anisotropy, regularisation);
        [paper, ContactLaw { dissipation: 3.0, ..paper }]
    }

    #[test]
    fn normal_force_is_spring_damper_clamped_at_zero() {
        let c = SurfaceContact { depth: 0.01, normal: Vector3::z() };
        let s = law(FrictionAnisotropy::Isotropic, 0.0).force(&c, &Vector3::new(0.0, 0.0, -0.1), &Vector3::x());
        assert!((s.normal_force - (3.5 + 2.5)).abs() < 1e-12);
        // Separating fast: the damper would pull, so the force is clamped to zero.
        let s = law(FrictionAnisotropy::Isotropic, 0.0).force(&c, &Vector3::new(0.0, 0.0, 1.0), &Vector3::x());
        assert_eq!(s.normal_force, 0.0);
        assert_eq!(s.friction, Vector3::zeros());
    }

    /// Hunt and Crossley's damper: no force at zero depth whatever the approach speed (eq
    /// 18's jumps to d times it), k depth (1 + h depth_rate) below, and still clamped.
    #[test]
    fn hunt_crossley_force_grows_from_zero_with_the_depth() {
        let hunt_crossley = ContactLaw { damping: 0.0, dissipation: 3.0, ..law(FrictionAnisotropy::Isotropic, 0.0) };
        let approach = Vector3::new(0.0, 0.0, -0.5);
        let at = |law: &ContactLaw, depth: f64| {
            law.force(&SurfaceContact { depth, normal: Vector3::z() }, &approach, &Vector3::x()).normal_force
        };
        let paper = law(FrictionAnisotropy::Isotropic, 0.0);
        assert!((at(&paper, 1e-12) - 25.0 * 0.5).abs() < 1e-9, "eq 18 jumps at touchdown");
        assert!(at(&hunt_crossley, 1e-12) < 1e-8, "Hunt-Crossley starts from zero");
        assert!((at(&hunt_crossley, 0.01) - 350.0 * 0.01 * (1.0 + 3.0 * 0.5)).abs() < 1e-12);
        let leaving = hunt_crossley.force(
            &SurfaceContact { depth: 0.01, normal: Vector3::z() },
            &Vector3::new(0.0, 0.0, 0.5),
            &Vector3::x(),
        );
        assert_eq!(leaving.normal_force, 0.0, "faster than 1/h out of the surface, the damper would pull");
        let bad = ContactLaw { dissipation: -1.0, ..hunt_crossley };
        assert!(bad.validate().unwrap_err().contains("contact dissipation"));
    }

    /// A mass dropped on Hunt and Crossley's contact at speed v leaves it at e v with
    /// e = 1 - (2/3) h v + O((h v)^2), whatever the mass and the stiffness (their paper's
    /// relation, from the energy the damper takes over the undamped half-period: (2/3) m h
    /// v^3).
    #[test]
    fn hunt_crossley_restitution_is_one_minus_two_thirds_h_v() {
        let restitution = |law: &ContactLaw, mass: f64, speed: f64| {
            // Depth and its rate; RK4 at 1/2000 of the contact's period.
            let rate = |depth: f64, depth_rate: f64| {
                let contact = SurfaceContact { depth, normal: Vector3::z() };
                let force = if depth > 0.0 {
                    law.force(&contact, &Vector3::new(0.0, 0.0, -depth_rate), &Vector3::x()).normal_force
                } else {
                    0.0
                };
                (depth_rate, -force / mass)
            };
            let step = 2.0 * std::f64::consts::PI * (mass / law.stiffness).sqrt() / 2000.0;
            let (mut depth, mut depth_rate) = (0.0, speed);
            while depth >= 0.0 {
                let k1 = rate(depth, depth_rate);
                let k2 = rate(depth + 0.5 * step * k1.0, depth_rate + 0.5 * step * k1.1);
                let k3 = rate(depth + 0.5 * step * k2.0, depth_rate + 0.5 * step * k2.1);
                let k4 = rate(depth + step * k3.0, depth_rate + step * k3.1);
                depth += step / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
                depth_rate += step / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
            }
            -depth_rate / speed
        };
        for (mass, stiffness, h, speed) in [(0.1, 1000.0, 0.05, 0.4), (2.0, 2e5, 0.01, 1.5), (0.5, 350.0, 0.02, 0.5)] {
            let law = ContactLaw { stiffness, damping: 0.0, dissipation: h, ..law(FrictionAnisotropy::Isotropic, 0.0) };
            let e = restitution(&law, mass, speed);
            let (expected, second_order) = (1.0 - 2.0 / 3.0 * h * speed, (h * speed).powi(2));
            assert!(
                (e - expected).abs() < second_order,
                "m {mass} k {stiffness} h {h} v {speed}: e = {e}, 1 - 2hv/3 = {expected}"
            );
        }
    }

    #[test]
    fn coulomb_friction_opposes_sliding() {
        let c = SurfaceContact { depth: 0.01, normal: Vector3::z() };
        let s = law(FrictionAnisotropy::Isotropic, 0.0).force(&c, &Vector3::new(0.2, 0.0, 0.0), &Vector3::x());
        assert!((s.friction - Vector3::new(-0.1 * 3.5, 0.0, 0.0)).norm() < 1e-12);
    }

    #[test]
    fn anisotropic_friction_uses_body_axis() {
        let c = SurfaceContact { depth: 0.01, normal: Vector3::z() };
        let axis = Vector3::new(0.0, 1.0, 0.0);
        // Sliding along world x = across the body: the larger coefficient.
        let s = law(FrictionAnisotropy::BodyAxis, 0.0).force(&c, &Vector3::new(0.2, 0.0, 0.0), &axis);
        assert!((s.friction.x + 0.5 * 3.5).abs() < 1e-12 && s.friction.y.abs() < 1e-12);
        let s = law(FrictionAnisotropy::BodyAxis, 0.0).force(&c, &Vector3::new(0.0, 0.2, 0.0), &axis);
        assert!((s.friction.y + 0.1 * 3.5).abs() < 1e-12);
    }

    #[test]
    fn force_derivatives_match_finite_differences() {
        for anisotropy in [FrictionAnisotropy::Isotropic, FrictionAnisotropy::BodyAxis, FrictionAnisotropy::WorldAxis] {
            for l in laws(anisotropy, 0.05) {
                let axis = Vector3::new(0.6, 0.8, 0.0);
                let contact = |p: &Vector3<f64>| SurfaceContact { depth: -p.z, normal: Vector3::z() };
                let p = Vector3::new(0.1, 0.2, -0.01);
                let v = Vector3::new(0.03, -0.02, -0.05);
                let (dv, dp) = l.force_derivatives(&contact(&p), &v, &axis);
                let h = 1e-7;
                for k in 0..3 {
                    let e = Vector3::ith(k, h);
                    let fv = (l.force(&contact(&p), &(v + e), &axis).total()
                        - l.force(&contact(&p), &(v - e), &axis).total())
                        / (2.0 * h);
                    let fp = (l.force(&contact(&(p + e)), &v, &axis).total()
                        - l.force(&contact(&(p - e)), &v, &axis).total())
                        / (2.0 * h);
                    assert!(
                        (fv - dv.column(k)).norm() < 1e-5 * (1.0 + fv.norm()),
                        "{anisotropy:?} dv column {k}: {fv} vs {}",
                        dv.column(k)
                    );
                    assert!(
                        (fp - dp.column(k)).norm() < 1e-5 * (1.0 + fp.norm()),
                        "{anisotropy:?} dp column {k}: {fp} vs {}",
                        dp.column(k)
                    );
                }
            }
        }
    }

    /// The force's directional derivative against central differences of `force` as the
    /// point moves through a pipe (whose normal turns with it), its velocity and the body
    /// axis move, for every friction law.
    #[test]
    fn force_tangent_matches_central_differences() {
        use crate::environment::terrain::Terrain;
        let terrains = [
            (Terrain::Pipe { diameter: 0.2 }, Vector3::new(0.3, 0.06, -0.085)),
            (Terrain::Flat { height: 0.0 }, Vector3::new(0.1, 0.2, -0.01)),
            (Terrain::Stair { position: 0.5, height: 0.1 }, Vector3::new(0.52, 0.0, 0.05)),
        ];
        for anisotropy in [FrictionAnisotropy::Isotropic, FrictionAnisotropy::BodyAxis, FrictionAnisotropy::WorldAxis] {
            for (terrain, p) in terrains {
                for l in laws(anisotropy, 0.05) {
                    let (v, axis) = (Vector3::new(0.03, -0.02, 0.01), Vector3::new(0.6, 0.7, 0.3));
                    let (dp, dv, d_axis) =
                        (Vector3::new(0.2, -0.5, 0.4), Vector3::new(-0.3, 0.1, 0.6), Vector3::new(0.1, -0.2, 0.5));
                    let contact = terrain.contact(&p).expect("the point penetrates");
                    let (depth, normal) = terrain.contact_tangent(&p, &dp);
                    let tangent = ContactTangent { depth, normal, velocity: dv, axis: d_axis };
                    let exact = l.force_tangent(&contact, &v, &axis, &tangent);
                    let h = 1e-6;
                    let at = |s: f64| {
                        let c = terrain.contact(&(p + dp * s)).expect("still penetrating");
                        l.force(&c, &(v + dv * s), &(axis + d_axis * s)).total()
                    };
                    let central = (at(h) - at(-h)) / (2.0 * h);
                    // Central differences are accurate to O(h^2) times the third derivative,
                    // which the 0.05 m/s regularisation keeps near 1e2: 1e-8 here.
                    assert!(
                        (exact - central).norm() < 1e-6 * (1.0 + central.norm()),
                        "{anisotropy:?} {terrain:?}: {exact} vs {central}"
                    );
                    // Along two directions at once (this one, and another made of the same
                    // parts), each column is its direction's tangent alone.
                    let other = ContactTangent { depth: 0.5 * depth, normal: -normal, velocity: d_axis, axis: dv };
                    let mut both = ContactTangents::<2>::zeros();
                    for (k, t) in [tangent, other].iter().enumerate() {
                        both.depth[k] = t.depth;
                        both.normal.set_column(k, &t.normal);
                        both.velocity.set_column(k, &t.velocity);
                        both.axis.set_column(k, &t.axis);
                    }
                    let batch = l.force_tangents(&contact, &v, &axis, &both);
                    let alone = l.force_tangent(&contact, &v, &axis, &other);
                    for (column, single) in [(0, exact), (1, alone)] {
                        // Only the summation order may differ between the two.
                        assert!((batch.column(column) - single).norm() < 1e-12 * (1.0 + single.norm()));
                    }
                }
            }
        }
    }

    /// The slopes written out block by block are the ten-column tangents along each input
    /// alone, to rounding, for every friction law, on ground and in a pipe, at rest, sliding
    /// and slipping slowly (within the regularisation), and where the reference axis is along
    /// the normal (no direction: isotropic).
    #[test]
    fn force_slopes_are_the_tangents_along_each_input() {
        use crate::environment::terrain::Terrain;
        let terrains = [
            (Terrain::Pipe { diameter: 0.2 }, Vector3::new(0.3, 0.06, -0.085)),
            (Terrain::Flat { height: 0.0 }, Vector3::new(0.1, 0.2, -0.01)),
        ];
        let velocities =
            [Vector3::new(0.03, -0.02, -0.01), Vector3::new(1e-4, -3e-4, 2e-4), Vector3::new(0.0, 0.0, -0.02)];
        let axes = [Vector3::new(0.6, 0.7, 0.3), Vector3::new(0.0, 0.0, 1.0)];
        let mut compared = 0;
        for anisotropy in [FrictionAnisotropy::Isotropic, FrictionAnisotropy::BodyAxis, FrictionAnisotropy::WorldAxis] {
            for regularisation in [0.0, 1e-3, 0.05] {
                for l in laws(anisotropy, regularisation) {
                    for (terrain, p) in terrains {
                        let contact = terrain.contact(&p).expect("the point penetrates");
                        for v in velocities {
                            for axis in axes {
                                let slopes = l.force_slopes(&contact, &v, &axis).0;
                                let tangents = l.force_tangents(&contact, &v, &axis, &ContactTangents::each_input());
                                let scale = 1.0 + tangents.amax();
                                assert!(
                                    (slopes - tangents).amax() < 1e-13 * scale,
                                    "{anisotropy:?} eps {regularisation} {terrain:?} v {v} axis {axis}: {slopes} vs {tangents}"
                                );
                                compared += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 216);
    }

    /// Under a fixed load and normal the slopes written out block by block are the moving
    /// inputs' columns of the ten-column tangents, to rounding, for every friction law, at
    /// rest, sliding and slipping slowly (within the regularisation), and where the
    /// reference axis is along the normal (no direction: isotropic).
    #[test]
    fn fixed_load_slopes_are_the_moving_inputs_columns() {
        let velocities = [
            Vector3::new(0.03, -0.02, 0.01),
            Vector3::new(1e-4, 2e-4, 0.0),
            Vector3::new(-2e-3, 5e-4, -1e-3),
            Vector3::zeros(),
        ];
        let mut compared = 0;
        for anisotropy in [FrictionAnisotropy::Isotropic, FrictionAnisotropy::BodyAxis, FrictionAnisotropy::WorldAxis] {
            for regularisation in [0.0, 1e-3, 0.05] {
                for l in laws(anisotropy, regularisation) {
                    for v in velocities {
                        for axis in [Vector3::new(0.6, 0.7, 0.3), Vector3::new(-0.2, 0.9, 0.0), Vector3::z()] {
                            let slopes = l.with_normal_force_slopes(2.5, &Vector3::z(), &v, &axis);
                            let all = l.with_normal_force_tangents(
                                2.5,
                                &SMatrix::zeros(),
                                &Vector3::z(),
                                &v,
                                &axis,
                                &ContactTangents::each_input(),
                            );
                            let moving = all.fixed_columns::<6>(4);
                            let scale = 1.0 + moving.amax();
                            assert!(
                                (slopes.0.fixed_columns::<6>(4) - moving).amax() < 1e-13 * scale,
                                "{anisotropy:?} eps {regularisation} v {v} axis {axis}: {} vs {moving}",
                                slopes.0
                            );
                            assert_eq!(slopes.0.fixed_columns::<4>(0), SMatrix::<f64, 3, 4>::zeros());
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 216);
    }

    #[test]
    fn sign_and_rate_from_one_root_are_the_two_functions() {
        for eps in [0.0, 1e-3, 0.05] {
            for v in [0.0, 1e-6, -3e-4, 2e-3, -0.7, 40.0] {
                let (s, r) = signum_and_rate(v, eps);
                assert!((s - signum(v, eps)).abs() <= 2.0 * f64::EPSILON, "eps {eps} v {v}");
                assert!((r - signum_rate(v, eps)).abs() <= 4.0 * f64::EPSILON * signum_rate(v, eps), "eps {eps} v {v}");
            }
        }
    }

    #[test]
    fn regularised_friction_is_smooth_through_zero() {
        let c = SurfaceContact { depth: 0.01, normal: Vector3::z() };
        let l = law(FrictionAnisotropy::BodyAxis, 1e-3);
        let slow = l.force(&c, &Vector3::new(1e-6, 0.0, 0.0), &Vector3::x());
        assert!(slow.friction.x.abs() < 0.1 * 3.5 * 2e-3);
        let fast = l.force(&c, &Vector3::new(1.0, 0.0, 0.0), &Vector3::x());
        assert!((fast.friction.x + 0.1 * 3.5).abs() < 1e-5);
    }
}
