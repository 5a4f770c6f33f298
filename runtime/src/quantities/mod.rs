//! What the numbers a robot, its environment and a run take may be: the physical range of
//! each kind, and tables of measured pairs. The first layer: every later one checks its
//! inputs against it.

pub mod physical_ranges;
pub mod tables;
