//! What a simulation keeps for its Jacobian between calls: which Jacobian it gives implicit
//! integrators, and the buffers of touching frames, segments and points the exact Jacobian
//! (`system_jacobian.rs`) fills, so that it does not allocate once they have grown.

use crate::environment::contact::ContactSlopes;
use crate::environment::terrain::SurfaceContact;
use nalgebra::{SMatrix, Vector3, Vector6};

/// Which Jacobian of the accelerations a simulation gives implicit integrators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SystemJacobian {
    /// The stiff part only (elasticity, damping, servos, contact J' dF J at fixed J and M):
    /// what a W-method needs to keep its order, and the cheapest.
    #[default]
    Stiff,
    /// The exact Jacobian ([`crate::Simulation::exact_jacobian`]).
    Exact,
}

impl std::str::FromStr for SystemJacobian {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stiff" => Ok(SystemJacobian::Stiff),
            "exact" => Ok(SystemJacobian::Exact),
            other => Err(format!("unknown Jacobian `{other}`: expected `stiff` or `exact`")),
        }
    }
}

/// A touching contact point, as the Jacobian needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TouchingPoint {
    pub(super) position: Vector3<f64>,
    /// `None` on the floor, whose load is fixed.
    pub(super) contact: Option<SurfaceContact>,
    /// The force the point carries (friction only on the floor).
    pub(super) force: Vector3<f64>,
    /// The force's slopes by its inputs: one evaluation of the law's tangent per point
    /// serves every direction.
    pub(super) slopes: ContactSlopes,
}

/// A contact frame with touching points: its columns and axis, and where its points are in
/// the workspace's point list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TouchingFrame<const N: usize> {
    pub(super) frame: usize,
    pub(super) columns: SMatrix<f64, 6, N>,
    /// The frame's twist, S qd.
    pub(super) twist: Vector6<f64>,
    pub(super) axis: Vector3<f64>,
    pub(super) wrench: Vector6<f64>,
    pub(super) points: (usize, usize),
}

/// The touching frames of one segment ([`crate::Model::CONTACT_FRAME_SEGMENT`]; each frame is a
/// segment of its own for models without segments): the columns they share (every column
/// of their paths but their own), the sum of their wrenches, and where its frames are in the
/// workspace's frame list (consecutive, as frames are visited in order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TouchingSegment<const N: usize> {
    /// The segment's index, or the frame's for models without segments.
    pub(super) index: usize,
    pub(super) columns: SMatrix<f64, 6, N>,
    /// The first frame's path and own coordinates: the shared columns are the path's others.
    pub(super) path: &'static [u16],
    pub(super) own: (usize, usize),
    pub(super) wrench: Vector6<f64>,
    pub(super) frames: (usize, usize),
}

impl<const N: usize> TouchingSegment<N> {
    /// The coordinates whose columns the segment's frames share, ascending.
    pub(super) fn shared_path(&self) -> impl Iterator<Item = usize> + '_ {
        let (first, count) = self.own;
        self.path.iter().map(|&c| c as usize).filter(move |&c| c < first || c >= first + count)
    }
}

/// Buffers the exact Jacobian reuses from call to call, so that it does not allocate once
/// they have grown to the most frames in touch.
#[derive(Clone, Debug, Default)]
pub(crate) struct JacobianWorkspace<const N: usize> {
    pub(super) frames: Vec<TouchingFrame<N>>,
    pub(super) segments: Vec<TouchingSegment<N>>,
    pub(super) points: Vec<TouchingPoint>,
    /// Per touching frame, its own columns' tangents along every unit direction.
    pub(super) own_tangents: Vec<[SMatrix<f64, 6, 3>; N]>,
}
