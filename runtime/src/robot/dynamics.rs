//! Forward dynamics: solve M(q) qdd = tau - C(q, qd) qd - G(q) on fixed-size types.

use crate::robot::articulated::{ArticulatedFactor, InverseDynamicsFactors, Solve};
use crate::robot::dense::{multiply_into, spd_inverse_in_place, ForwardDynamicsError};
use crate::robot::model::Model;
use nalgebra::{SMatrix, SVector};

/// Generalized accelerations for generalized force `force` (actuator torques plus J' F), by
/// the model's own forward dynamics (the articulated-body algorithm for generated rigid
/// robots, M, C qd, G and a Cholesky solve otherwise). Does not allocate.
#[inline]
pub fn forward_dynamics<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    params: &R::Params,
    cache: &R::Cache,
    force: &SVector<f64, N>,
    qdd: &mut SVector<f64, N>,
) -> Result<(), ForwardDynamicsError> {
    if R::forward_dynamics_into(q, qd, force, params, cache, qdd) {
        Ok(())
    } else {
        Err(ForwardDynamicsError)
    }
}

/// 1 / x, and 0 at x = 0: generated derivative code's slope of a fractional power (a speed
/// sqrt(u . u) at rest), where the product it multiplies vanishes too.
#[inline]
pub fn reciprocal_or_zero(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        1.0 / x
    }
}

/// Partial derivatives of the forward dynamics qdd = FD(q, qd, tau) at one state, row i
/// being qdd_i: what gradient-based control and estimation linearise with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForwardDynamicsDerivatives<const N: usize> {
    /// qdd itself.
    pub acceleration: SVector<f64, N>,
    /// d qdd / dq.
    pub position: SMatrix<f64, N, N>,
    /// d qdd / dqd.
    pub velocity: SMatrix<f64, N, N>,
    /// d qdd / dtau = M^-1.
    pub force: SMatrix<f64, N, N>,
}

impl<const N: usize> Default for ForwardDynamicsDerivatives<N> {
    fn default() -> Self {
        ForwardDynamicsDerivatives {
            acceleration: SVector::zeros(),
            position: SMatrix::zeros(),
            velocity: SMatrix::zeros(),
            force: SMatrix::zeros(),
        }
    }
}

/// Coordinates past which rigid trees apply M^-1 through their articulated-body factor (with
/// dID's rows formed from its factors inside the solve on the snakes' chains) rather than
/// forming M^-1 and multiplying. Both routes of the whole derivatives in one run of the
/// derivatives bench (`-- route`, 2026-12-03), the factor's against M^-1's: 2.71 against
/// 1.14 us at 8 coordinates, 4.65 against 6.50 at 14, 8.76 against 19.1 at 22 (the snakes'
/// chains); the Panda arm (7) 7.3 against 6.4, ANYmal (18, a branched tree) 22.2 against
/// 20.5. The line between 8 and 14 crosses at about 11. (It was 16 before the chain solve's
/// blocked rows: 3.8 against 3.6 us at 14 then.)
pub const ARTICULATED_SOLVE_FROM: usize = 10;

/// The forward dynamics' partial derivatives from the model's generated inverse-dynamics
/// derivatives, differentiating M qdd + C qd + G = tau at fixed tau: d qdd/dtau = M^-1,
/// d qdd/dq = -M^-1 dID/dq and d qdd/dqd = -M^-1 dID/dqd. Rigid trees
/// ([`Model::ARTICULATED_FACTOR`]) past [`ARTICULATED_SOLVE_FROM`] coordinates take qdd and
/// the articulated-body factorisation of M from one generated kernel and apply M^-1 to the
/// 3 n columns through it ([`ArticulatedFactor::solve_into`], O(n^2) in all). Otherwise M,
/// C qd and G come from one kernel (closed-form rigid trees) or C qd from the C that dID/dqd
/// = 2 C needs anyway, M^-1 from [`spd_inverse_in_place`], qdd = M^-1 (tau - C qd - G) with
/// it (the model's own forward dynamics to rounding, without a second pass over the tree)
/// and the two products from register tiles ([`multiply_into`]): measured at
/// 22 and 62 coordinates, 3 to 5 times faster than solving the 3 n columns with a Cholesky
/// factor, whose substitutions are bound by loads and stores. Does not allocate.
pub fn forward_dynamics_derivatives<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: &SVector<f64, N>,
    params: &R::Params,
    cache: &R::Cache,
    out: &mut ForwardDynamicsDerivatives<N>,
) -> Result<(), ForwardDynamicsError> {
    let route = if R::ARTICULATED_FACTOR && N > ARTICULATED_SOLVE_FROM {
        DerivativesRoute::ArticulatedFactor
    } else {
        DerivativesRoute::InverseMatrix
    };
    forward_dynamics_derivatives_by::<R, N, C>(route, q, qd, tau, params, cache, out)
}

/// How the forward dynamics' derivatives apply M^-1 (see [`forward_dynamics_derivatives`],
/// which picks by [`ARTICULATED_SOLVE_FROM`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DerivativesRoute {
    /// Through the articulated-body factor, O(n^2); only rigid trees
    /// ([`Model::ARTICULATED_FACTOR`]) have it, others get an error.
    ArticulatedFactor,
    /// M^-1 formed and multiplied, O(n^3); every model.
    InverseMatrix,
}

/// [`forward_dynamics_derivatives`] by the given route, so the routes can be timed against
/// each other at every size (the derivatives bench does) and the threshold kept true.
#[allow(clippy::too_many_arguments)]
pub fn forward_dynamics_derivatives_by<R: Model<N, C>, const N: usize, const C: usize>(
    route: DerivativesRoute,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    tau: &SVector<f64, N>,
    params: &R::Params,
    cache: &R::Cache,
    out: &mut ForwardDynamicsDerivatives<N>,
) -> Result<(), ForwardDynamicsError> {
    if route == DerivativesRoute::ArticulatedFactor {
        let mut factor = ArticulatedFactor::<N>::default();
        if !R::articulated_factor_into(q, qd, tau, params, cache, &mut factor, &mut out.acceleration) {
            return Err(ForwardDynamicsError);
        }
        if R::INVERSE_DYNAMICS_FACTORS {
            let mut factors = InverseDynamicsFactors::<N>::default();
            R::inverse_dynamics_factors_into(q, qd, &out.acceleration, params, cache, &mut factors);
            factor.solve_derivatives_into(&factors, &mut out.position, &mut out.velocity, &mut out.force);
            return Ok(());
        }
        let (mut by_position, mut by_velocity) = (SMatrix::zeros(), SMatrix::zeros());
        R::inverse_dynamics_derivatives_into(
            q,
            qd,
            &out.acceleration,
            params,
            cache,
            &mut by_position,
            &mut by_velocity,
        );
        factor.solve_into(&mut [
            Solve { scale: -1.0, b: Some(&by_position), out: &mut out.position },
            Solve { scale: -1.0, b: Some(&by_velocity), out: &mut out.velocity },
            Solve { scale: 1.0, b: None, out: &mut out.force },
        ]);
        return Ok(());
    }
    let mut gravity = SVector::<f64, N>::zeros();
    let (mut by_position, mut by_velocity) = (SMatrix::zeros(), SMatrix::zeros());
    if R::INVERSE_DYNAMICS_FACTORS {
        let mut coriolis = SVector::<f64, N>::zeros();
        R::dynamics_into(q, qd, params, cache, &mut out.force, &mut coriolis, &mut gravity);
        spd_inverse_in_place(&mut out.force)?;
        out.acceleration = out.force * (tau - coriolis - gravity);
    } else {
        // dID/dqd is 2 C: C qd is C's product with the rates, not a kernel of its own.
        R::mass_matrix_into(q, params, cache, &mut out.force);
        R::coriolis_matrix_into(q, qd, params, cache, &mut by_velocity);
        R::gravity_into(q, params, cache, &mut gravity);
        spd_inverse_in_place(&mut out.force)?;
        out.acceleration = out.force * (tau - by_velocity * qd - gravity);
    }
    if !out.acceleration.iter().all(|a| a.is_finite()) {
        return Err(ForwardDynamicsError);
    }
    if R::INVERSE_DYNAMICS_FACTORS {
        R::inverse_dynamics_derivatives_into(
            q,
            qd,
            &out.acceleration,
            params,
            cache,
            &mut by_position,
            &mut by_velocity,
        );
    } else {
        R::inverse_dynamics_position_derivatives_into(q, qd, &out.acceleration, params, cache, &mut by_position);
        by_velocity *= 2.0;
    }
    multiply_into(-1.0, &out.force, &by_position, &mut out.position, false);
    multiply_into(-1.0, &out.force, &by_velocity, &mut out.velocity, false);
    Ok(())
}
