//! What every command uses and no robot shapes: output files that replace earlier ones only
//! once a run has produced them, figures, 3D view pages, and independent runs over every core.

pub(crate) mod output;
pub(crate) mod parallel;
pub(crate) mod plot;
pub(crate) mod view;
