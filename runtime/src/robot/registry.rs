//! What a registry of generated robots lists about each robot, and the visitor through which
//! generic code (the CLI, the generic tests) reaches a robot type from its name.

use crate::robot::model::Model;

/// One generated robot as its crate's registry lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RobotInfo {
    /// The robot's name: its spec's file stem and its module's name.
    pub name: &'static str,
    /// The spec's description.
    pub description: &'static str,
    /// The spec it was generated from.
    pub spec: &'static str,
    /// Number of generalized coordinates.
    pub dof: usize,
    /// Number of contact points.
    pub contacts: usize,
}

/// A run configuration file as a robot's app carries it: the spec's sibling
/// `<spec>.run.toml`, whose channels, safety limits and environment `softgen run` uses for
/// the robot by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfigFile {
    /// Its path relative to the workspace, for messages.
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// Generic code to run for one robot type, called by a registry's `visit_robot` with the
/// type the name stands for.
pub trait RobotVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the robot's model type.
    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output;
}
