//! Optimal control over a horizon of knots on the generated derivatives: box-constrained
//! DDP (`ddp`, its per-knot box QP in `box_qp`), a robot's simulation as the horizon's
//! dynamics (`knots`) under what the plan decides (`schedule`: the commands, or a wave's
//! parameters), costs in the robot's terms (`cost`) and receding-horizon control with them
//! (`receding`); and the planners that sample (`sampling`, MPPI): over a serpenoid gait's
//! parameters (`gait_sampling`) and over a valve wave's (`valve_sampling`).

pub(crate) mod box_qp;
pub(crate) mod cost;
pub(crate) mod ddp;
pub(crate) mod gait_sampling;
pub(crate) mod knots;
pub(crate) mod receding;
pub(crate) mod sampling;
pub(crate) mod schedule;
pub(crate) mod valve_sampling;
