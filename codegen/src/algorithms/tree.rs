//! The bodies of the robot's tree as the recursive passes share them: a frame moving with a
//! body (pose, velocity, bias acceleration), a rigid body's inertia quantities about the
//! world origin, and a subtree's composite sums. The rigid-link pass (`recursive.rs`), the
//! section pass (`section_pass.rs`) and the water (`hydrodynamics.rs`) build on these and
//! never on each other's internals.

use crate::algorithms::spatial::{Force, Inertia, InertiaRate, Mat3, Motion, Vec3};
use crate::dag::{Dag, NodeId};

/// A frame moving with a body: world pose, spatial velocity and bias acceleration.
#[derive(Clone, Copy)]
pub(crate) struct Frame {
    pub rotation: Mat3,
    pub position: Vec3,
    pub velocity: Motion,
    pub bias: Motion,
}

/// A rigid body's inertia quantities about the world origin, from its mass, centre of mass
/// and rotational inertia (about the centre of mass) in the frame it moves with.
pub(crate) fn body_state(
    dag: &mut Dag,
    name: &str,
    mass: NodeId,
    local_com: &Vec3,
    local_inertia: &Mat3,
    frame: &Frame,
) -> BodyState {
    let Frame { rotation, position, velocity, bias } = frame;
    let com_offset = dag.mat_vec3(rotation, local_com);
    let com = dag.add3(position, &com_offset);
    let com = dag.pin3(com, &format!("{name}_com"));
    let world_inertia = rotated_inertia(dag, rotation, local_inertia);
    let world_inertia = dag.pin_symmetric3(world_inertia, &format!("{name}_inertia_com"));
    let inertia = dag.body_inertia(mass, &com, &world_inertia);
    let inertia = dag.pin_inertia(inertia, &format!("{name}_inertia"));
    let momentum = dag.inertia_times(&inertia, velocity);
    let momentum = dag.pin_force(momentum, &format!("{name}_momentum"));
    let inertial = dag.inertia_times(&inertia, bias);
    let gyroscopic = dag.force_cross(velocity, &momentum);
    let force = dag.add_force(&inertial, &gyroscopic);
    let spin = dag.cross3(&velocity.w, &com);
    let com_velocity = dag.add3(&velocity.v, &spin);
    let rate = dag.body_inertia_rate(mass, &com, &com_velocity, &velocity.w, &world_inertia);
    BodyState { inertia, momentum, force, gyroscopic, rate }
}

/// R I R' about the centre of mass, in world axes. A body symmetric about one of its axes
/// (a disc slice of a soft section, a cylinder, a sphere) has I = d 1 + (d_a - d) a a' in
/// the world, with `a` that axis's world direction: 16 operations instead of about 40, and
/// shorter expressions where the rotation is long (measured on the soft snake, whose 36 disc
/// slices have I_yy = I_zz: its cache lost ops in proportion).
fn rotated_inertia(dag: &mut Dag, rotation: &Mat3, local_inertia: &Mat3) -> Mat3 {
    let zero = dag.number(0.0);
    let diagonal = [local_inertia[0][0], local_inertia[1][1], local_inertia[2][2]];
    let off_diagonal_zero = (0..3).all(|a| (0..3).all(|b| a == b || local_inertia[a][b] == zero));
    // The axis whose moment differs from the other two equal ones.
    let symmetric_axis = if !off_diagonal_zero {
        None
    } else if diagonal[1] == diagonal[2] {
        Some(0)
    } else if diagonal[0] == diagonal[2] {
        Some(1)
    } else if diagonal[0] == diagonal[1] {
        Some(2)
    } else {
        None
    };
    let mut world_inertia = [[zero; 3]; 3];
    match symmetric_axis {
        Some(axis) => {
            let across = diagonal[(axis + 1) % 3];
            let excess = dag.sub(diagonal[axis], across);
            let direction = [rotation[0][axis], rotation[1][axis], rotation[2][axis]];
            for a in 0..3 {
                for b in a..3 {
                    let product = dag.mul(vec![excess, direction[a], direction[b]]);
                    world_inertia[a][b] = if a == b { dag.add2(across, product) } else { product };
                    world_inertia[b][a] = world_inertia[a][b];
                }
            }
        }
        None => {
            let rotated = dag.mat_mul3(rotation, local_inertia);
            for a in 0..3 {
                for b in a..3 {
                    let row = rotated[a];
                    let column = [rotation[b][0], rotation[b][1], rotation[b][2]];
                    world_inertia[a][b] = dag.dot3(&row, &column);
                    world_inertia[b][a] = world_inertia[a][b];
                }
            }
        }
    }
    world_inertia
}

/// A body's inertia quantities, about the world origin.
pub(crate) struct BodyState {
    pub inertia: Inertia,
    pub momentum: Force,
    /// Newton-Euler force at zero joint acceleration: I a + v x* I v.
    pub force: Force,
    /// The velocity-product force v x* I v.
    pub gyroscopic: Force,
    pub rate: InertiaRate,
}

/// A subtree's sums, about the world origin.
#[derive(Clone, Copy)]
pub(crate) struct Composite {
    pub inertia: Inertia,
    /// Newton-Euler force at zero joint acceleration.
    pub force: Force,
    pub momentum: Force,
    pub rate: InertiaRate,
}
