//! What a generated robot is to the runtime: the `Model` trait its module implements, with its
//! metadata (coordinates, contact points, the spec's defaults), forward dynamics through it
//! and the dense linear algebra under it,
//! the parameter set and its rules, the registry types a generated crate lists its robots
//! with, the mechanical state (q, qd), and the coordinates a controller may read forces in.

pub(crate) mod articulated;
pub(crate) mod dense;
pub(crate) mod dynamics;
pub(crate) mod force_coordinates;
pub(crate) mod frame_points;
pub(crate) mod lanes;
pub(crate) mod model;
pub(crate) mod parameter_rules;
pub(crate) mod registry;
pub(crate) mod state;
