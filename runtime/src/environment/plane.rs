//! The plane a planar robot moves in, or spatial motion: what a terrain must fit.

/// The plane a planar robot moves in, or spatial motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaneOfMotion {
    /// Vertical plane: x forward, z up (pedal wave).
    Xz,
    /// Horizontal plane: x forward, y left (lateral undulation).
    Xy,
    /// Full 3D motion.
    Spatial,
}
