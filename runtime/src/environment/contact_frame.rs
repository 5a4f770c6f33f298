//! Contact through the frames that carry contact points: a point p on a frame whose world
//! Plücker columns are (w_j, v_j) moves with v_j + w_j x p per coordinate, and a force f on it
//! is the wrench (p x f, f) on the frame. Soft robots' skin rings carry ten points each; the
//! ring's columns are computed once however many of its points touch, and its points' forces
//! reach the coordinates through one wrench.

use nalgebra::{SMatrix, SVector, Vector3, Vector6};

/// The Jacobian d(position)/dq of the point at world position `point` on a frame with world
/// columns `columns` (rows 0-2 angular, 3-5 linear about the world origin).
#[inline]
pub fn point_jacobian<const N: usize>(columns: &SMatrix<f64, 6, N>, point: &Vector3<f64>) -> SMatrix<f64, 3, N> {
    let mut out = SMatrix::<f64, 3, N>::zeros();
    for j in 0..N {
        out.set_column(j, &point_jacobian_column(columns, j, point));
    }
    out
}

/// Column `j` of [`point_jacobian`]: the point's velocity per unit rate of coordinate j.
#[inline]
pub fn point_jacobian_column<const N: usize>(
    columns: &SMatrix<f64, 6, N>,
    j: usize,
    point: &Vector3<f64>,
) -> Vector3<f64> {
    let w = Vector3::new(columns[(0, j)], columns[(1, j)], columns[(2, j)]);
    let v = Vector3::new(columns[(3, j)], columns[(4, j)], columns[(5, j)]);
    v + w.cross(point)
}

/// Velocity of the point at world position `point` on a frame moving with spatial velocity
/// `twist` (angular, then linear about the world origin).
#[inline]
pub fn point_velocity(twist: &Vector6<f64>, point: &Vector3<f64>) -> Vector3<f64> {
    let w = Vector3::new(twist[0], twist[1], twist[2]);
    let v = Vector3::new(twist[3], twist[4], twist[5]);
    v + w.cross(point)
}

/// The wrench (moment about the world origin, then force) of force `force` at `point`.
#[inline]
pub fn point_wrench(force: &Vector3<f64>, point: &Vector3<f64>) -> Vector6<f64> {
    let moment = point.cross(force);
    Vector6::new(moment[0], moment[1], moment[2], force[0], force[1], force[2])
}

/// The generalized force of wrench `wrench` on a frame with world columns `columns`.
#[inline]
pub fn frame_generalized_force<const N: usize>(columns: &SMatrix<f64, 6, N>, wrench: &Vector6<f64>) -> SVector<f64, N> {
    columns.tr_mul(wrench)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame path agrees with the point Jacobian: J qd is the point's velocity and J' f
    /// the generalized force of the wrench.
    #[test]
    fn frame_path_matches_point_jacobian() {
        let columns = SMatrix::<f64, 6, 4>::from_fn(|i, j| ((3 * i + 7 * j) as f64).sin());
        let point = Vector3::new(0.3, -1.2, 0.7);
        let qd = SVector::<f64, 4>::new(0.5, -0.25, 2.0, 1.5);
        let force = Vector3::new(-2.0, 0.4, 9.0);
        let jacobian = point_jacobian(&columns, &point);
        let twist = columns * qd;
        assert!((jacobian * qd - point_velocity(&twist, &point)).norm() < 1e-14);
        let direct = jacobian.tr_mul(&force);
        let through_wrench = frame_generalized_force(&columns, &point_wrench(&force, &point));
        assert!((direct - through_wrench).norm() < 1e-13);
    }
}
