//! Per-point contact kinematics of models that serve contact through frames (soft robots: see
//! `Model::CONTACT_FRAME_OF`), from each frame's world columns and its points' positions: a
//! point p on a frame with columns (w_j, v_j) moves with v_j + w_j x p per unit rate of
//! coordinate j. Generated code keeps one kernel per frame (its columns, its points'
//! positions) instead of one per point, so a skin of 310 points costs no per-point code.

use crate::environment::contact_frame::{point_jacobian, point_velocity};
use crate::robot::model::Model;
use nalgebra::{SMatrix, SVector, Vector3};

/// The contact frames that carry points, each with the range of its points in the contact
/// list (`Model::CONTACT_FRAME_START`).
fn frames_with_points<R: Model<N, C>, const N: usize, const C: usize>(
) -> impl Iterator<Item = (usize, std::ops::Range<usize>)> {
    R::CONTACT_FRAME_START
        .windows(2)
        .enumerate()
        .map(|(frame, bounds)| (frame, bounds[0] as usize..bounds[1] as usize))
        .filter(|(_, points)| !points.is_empty())
}

/// Jacobian d(position)/dq of contact point `index` from its frame's columns
/// (`Model::contact_frame_into`) and its position; zeros past the last point.
pub fn frame_point_jacobian_into<R: Model<N, C>, const N: usize, const C: usize>(
    index: usize,
    q: &SVector<f64, N>,
    p: &R::Params,
    k: &R::Cache,
    out: &mut SMatrix<f64, 3, N>,
) {
    let Some(&frame) = R::CONTACT_FRAME_OF.get(index) else {
        *out = SMatrix::zeros();
        return;
    };
    let frame = frame as usize;
    let mut positions = [Vector3::zeros(); C];
    R::contact_frame_positions_into(frame, q, p, k, &mut positions);
    let mut columns = SMatrix::<f64, 6, N>::zeros();
    let mut axis = Vector3::zeros();
    R::contact_frame_into(frame, q, p, k, &mut columns, &mut axis);
    *out = point_jacobian(&columns, &positions[index]);
}

/// World velocities of every contact point: per frame its twist (its columns times qd), per
/// point the twist's velocity at the point.
pub fn frame_point_velocities_into<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
    p: &R::Params,
    k: &R::Cache,
    out: &mut [Vector3<f64>; C],
) {
    let mut positions = [Vector3::zeros(); C];
    R::contact_positions_into(q, p, k, &mut positions);
    let mut columns = SMatrix::<f64, 6, N>::zeros();
    let mut axis = Vector3::zeros();
    *out = [Vector3::zeros(); C];
    for (frame, points) in frames_with_points::<R, N, C>() {
        R::contact_frame_into(frame, q, p, k, &mut columns, &mut axis);
        let twist = columns * qd;
        for (velocity, position) in out[points.clone()].iter_mut().zip(&positions[points]) {
            *velocity = point_velocity(&twist, position);
        }
    }
}

/// World x axis of the frame carrying each contact point (`Model::contact_frame_own_into`'s
/// axis).
pub fn frame_point_axes_into<R: Model<N, C>, const N: usize, const C: usize>(
    q: &SVector<f64, N>,
    p: &R::Params,
    k: &R::Cache,
    out: &mut [Vector3<f64>; C],
) {
    let mut own = SMatrix::<f64, 6, 3>::zeros();
    let mut axis = Vector3::zeros();
    *out = [Vector3::zeros(); C];
    for (frame, points) in frames_with_points::<R, N, C>() {
        R::contact_frame_own_into(frame, q, p, k, &mut own, &mut axis);
        out[points].fill(axis);
    }
}
