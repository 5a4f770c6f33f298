//! The recursive algorithms of rigid-body dynamics over the robot's tree, unrolled into the
//! expression DAG: the tree of links and sections (`tree.rs`), spatial algebra on DAG nodes
//! (`spatial.rs`), a section's slices (`section_pass.rs`, `quadrature.rs`), water
//! (`hydrodynamics.rs`) and the passes themselves (`recursive/`).

pub(crate) mod hydrodynamics;
pub(crate) mod quadrature;
pub(crate) mod recursive;
pub(crate) mod section_pass;
pub(crate) mod spatial;
pub(crate) mod tree;
