//! The coordinates a controller reads generalized forces in when they are not the model's:
//! a force Q on the model's coordinates q acts as Q_c = T' Q on coordinates c, T = dq/dc,
//! because both do the same virtual work (Q' dq = Q' T dc).

use crate::environment::plane::PlaneOfMotion;
use crate::robot::model::{ForceCoordinates, Model};
use nalgebra::{SMatrix, SVector};

impl ForceCoordinates {
    /// Refuses coordinates that do not fit robot `R`.
    pub fn validate<R: Model<N, C>, const N: usize, const C: usize>(&self) -> Result<(), String> {
        let ForceCoordinates::PlanarChain { joint_sign, heading: (from, to) } = *self else { return Ok(()) };
        let robot = R::NAME;
        if joint_sign != 1.0 && joint_sign != -1.0 {
            return Err(format!("controller coordinates: the joint sign must be 1 or -1, got {joint_sign}"));
        }
        if plane_axes(R::PLANE).is_none() {
            return Err(format!(
                "controller coordinates: a planar chain's coordinates need a planar robot; `{robot}` moves in 3D"
            ));
        }
        if N != R::ACTUATED.len() + 3 {
            return Err(format!(
                "controller coordinates: a planar chain's coordinates replace a planar base's three; `{robot}` has {N} coordinates and {} actuated joints",
                R::ACTUATED.len()
            ));
        }
        if from >= C || to >= C {
            return Err(format!(
                "controller coordinates: heading point {} is not one of `{robot}`'s {C} contact points",
                from.max(to)
            ));
        }
        let (first, second) = (&R::CONTACT_POINTS[from], &R::CONTACT_POINTS[to]);
        if from == to || first.body != second.body {
            return Err(format!(
                "controller coordinates: the heading needs two different points of one body; `{}` is on `{}` and `{}` on `{}`",
                first.name, first.body, second.name, second.body
            ));
        }
        Ok(())
    }

    /// Entry j of `out`: the generalized force `force` (on the model's coordinates) acting
    /// on actuated joint j in these coordinates. `None` where the map from the model's
    /// coordinates is singular (the heading points at one place), which validated
    /// coordinates of a rigid body never are.
    pub fn joint_forces<R: Model<N, C>, const N: usize, const C: usize>(
        &self,
        q: &SVector<f64, N>,
        params: &R::Params,
        cache: &R::Cache,
        force: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) -> Option<()> {
        out.fill(0.0);
        let ForceCoordinates::PlanarChain { joint_sign, heading: (from, to) } = *self else {
            for (j, &i) in R::ACTUATED.iter().enumerate() {
                out[j] = force[i];
            }
            return Some(());
        };
        let (a, b) = plane_axes(R::PLANE)?;
        // Rows of dc/dq: the joints, the heading's angle, the centre of mass.
        let mut map = SMatrix::<f64, N, N>::zeros();
        let joints = R::ACTUATED.len();
        for (j, &i) in R::ACTUATED.iter().enumerate() {
            map[(j, i)] = joint_sign;
        }
        let mut positions = [nalgebra::Vector3::zeros(); C];
        R::contact_positions_into(q, params, cache, &mut positions);
        let direction = positions[to] - positions[from];
        let length_squared = direction[a] * direction[a] + direction[b] * direction[b];
        if !(length_squared > 0.0) {
            return None;
        }
        let (mut jacobian_from, mut jacobian_to) = (SMatrix::<f64, 3, N>::zeros(), SMatrix::<f64, 3, N>::zeros());
        R::contact_jacobian_into(from, q, params, cache, &mut jacobian_from);
        R::contact_jacobian_into(to, q, params, cache, &mut jacobian_to);
        let direction_jacobian = jacobian_to - jacobian_from;
        let mass = R::total_mass(params);
        let mut unit = SVector::<f64, N>::zeros();
        for k in 0..N {
            // d atan2(d_b, d_a) = (d_a dd_b - d_b dd_a) / |d|^2.
            map[(joints, k)] = (direction[a] * direction_jacobian[(b, k)] - direction[b] * direction_jacobian[(a, k)])
                / length_squared;
            // The centre of mass moves with qd as the linear momentum over the mass.
            unit[k] = 1.0;
            let rate = R::linear_momentum(q, &unit, params, cache) / mass;
            unit[k] = 0.0;
            map[(joints + 1, k)] = rate[a];
            map[(joints + 2, k)] = rate[b];
        }
        // Q_c = T' Q with T = (dc/dq)^-1: solve (dc/dq)' Q_c = Q.
        let mut in_coordinates = *force;
        solve_in_place(map.transpose(), &mut in_coordinates)?;
        for j in 0..joints {
            out[j] = in_coordinates[j];
        }
        Some(())
    }
}

/// Solves A x = b in place by Gaussian elimination with partial pivoting, on the stack;
/// `None` if A is singular to working precision.
fn solve_in_place<const N: usize>(mut a: SMatrix<f64, N, N>, b: &mut SVector<f64, N>) -> Option<()> {
    let scale = a.amax();
    for column in 0..N {
        let pivot = (column..N).max_by(|&i, &k| a[(i, column)].abs().total_cmp(&a[(k, column)].abs()))?;
        if !(a[(pivot, column)].abs() > 1e-14 * scale) {
            return None;
        }
        a.swap_rows(column, pivot);
        b.swap_rows(column, pivot);
        for row in column + 1..N {
            let factor = a[(row, column)] / a[(column, column)];
            for k in column..N {
                a[(row, k)] -= factor * a[(column, k)];
            }
            b[row] -= factor * b[column];
        }
    }
    for row in (0..N).rev() {
        let known: f64 = (row + 1..N).map(|k| a[(row, k)] * b[k]).sum();
        b[row] = (b[row] - known) / a[(row, row)];
    }
    Some(())
}

/// The two world axes of a planar robot's plane.
fn plane_axes(plane: PlaneOfMotion) -> Option<(usize, usize)> {
    match plane {
        PlaneOfMotion::Xz => Some((0, 2)),
        PlaneOfMotion::Xy => Some((0, 1)),
        PlaneOfMotion::Spatial => None,
    }
}
