//! The generated robots this binary knows, and dispatch from a name to generic code.

use softgen_generated::{DoublePendulum, PlanarSoftChain, RigidSoftChain, SnakeLateralUndulation, SnakePedalWave, SoftKindsArm, SoftLimbedHub, SoftSnake, SpatialTree};
use softgen_runtime::Model;

/// Robot names accepted on the command line.
pub const ROBOTS: &[&str] = &["snake_pedal_wave", "snake_lateral_undulation", "soft_snake", "double_pendulum", "spatial_tree", "soft_limbed_hub", "rigid_soft_chain", "planar_soft_chain", "soft_kinds_arm"];

/// Generic code to run for one robot type.
pub trait RobotVisitor {
    type Output;
    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output;
}

/// Calls `visitor` with the robot named `name`, or says which names exist.
pub fn with_robot<V: RobotVisitor>(name: &str, visitor: V) -> Result<V::Output, String> {
    Ok(match name {
        "snake_pedal_wave" => visitor.visit::<SnakePedalWave, { softgen_generated::snake_pedal_wave::DOF }, { softgen_generated::snake_pedal_wave::CONTACTS }>(),
        "snake_lateral_undulation" => visitor.visit::<SnakeLateralUndulation, { softgen_generated::snake_lateral_undulation::DOF }, { softgen_generated::snake_lateral_undulation::CONTACTS }>(),
        "soft_snake" => visitor.visit::<SoftSnake, { softgen_generated::soft_snake::DOF }, { softgen_generated::soft_snake::CONTACTS }>(),
        "double_pendulum" => visitor.visit::<DoublePendulum, { softgen_generated::double_pendulum::DOF }, { softgen_generated::double_pendulum::CONTACTS }>(),
        "spatial_tree" => visitor.visit::<SpatialTree, { softgen_generated::spatial_tree::DOF }, { softgen_generated::spatial_tree::CONTACTS }>(),
        "soft_limbed_hub" => visitor.visit::<SoftLimbedHub, { softgen_generated::soft_limbed_hub::DOF }, { softgen_generated::soft_limbed_hub::CONTACTS }>(),
        "rigid_soft_chain" => visitor.visit::<RigidSoftChain, { softgen_generated::rigid_soft_chain::DOF }, { softgen_generated::rigid_soft_chain::CONTACTS }>(),
        "planar_soft_chain" => visitor.visit::<PlanarSoftChain, { softgen_generated::planar_soft_chain::DOF }, { softgen_generated::planar_soft_chain::CONTACTS }>(),
        "soft_kinds_arm" => visitor.visit::<SoftKindsArm, { softgen_generated::soft_kinds_arm::DOF }, { softgen_generated::soft_kinds_arm::CONTACTS }>(),
        other => return Err(format!("unknown robot `{other}`; known robots: {}", ROBOTS.join(", "))),
    })
}
