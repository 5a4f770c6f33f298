//! The forward pass, parent to child: each link's world pose, joint motion subspace and its
//! rate, velocity, bias acceleration and body state; and each coordinate's subspace.

// The passes' types and imports, shared by their files.
use super::*;

/// Parent to child: each link's world pose, its joint's world motion subspace S and rate
/// v_parent x S, velocity and bias acceleration (at qdd = 0), and its body's inertia about the
/// world origin with momentum, Newton-Euler force, gyroscopic force and inertia rate.
pub(super) fn forward_pass(
    dag: &mut Dag,
    reader: &AtomReader,
    links: &[Link],
    pieces: Option<&Pieces>,
    accelerations: bool,
) -> Result<Vec<LinkState>, String> {
    let mut states: Vec<LinkState> = Vec::with_capacity(links.len());
    for link in links {
        let name = &link.name;
        let mut local_rotation = [[0; 3]; 3];
        for (row, atoms) in local_rotation.iter_mut().zip(&link.rotation) {
            *row = reader.vec3(dag, atoms)?;
        }
        let local_translation = reader.vec3(dag, &link.translation)?;
        let (rotation, position, velocity, bias, mut path, parent_rotation) = match link.parent {
            None => {
                let zero = dag.zero_motion();
                (local_rotation, local_translation, zero, zero, Vec::new(), None)
            }
            Some(p) => {
                let parent = &states[p];
                let rotation = dag.mat_mul3(&parent.rotation, &local_rotation);
                let offset = dag.mat_vec3(&parent.rotation, &local_translation);
                let position = dag.add3(&parent.position, &offset);
                (
                    rotation,
                    position,
                    parent.velocity,
                    parent.bias_acceleration,
                    parent.path.clone(),
                    Some(parent.rotation),
                )
            }
        };
        let rotation = dag.pin_mat3(rotation, &format!("{name}_rotation"));
        let position = dag.pin3(position, &format!("{name}_position"));
        if let Some(section) = &link.section {
            let pieces = pieces.ok_or("a soft section without its local pieces")?;
            let base = Frame { rotation, position, velocity, bias };
            let state = section_state(dag, reader, pieces, link, section, base, accelerations)?;
            path.extend(section.coordinates.iter().copied());
            let zero = dag.zero_motion();
            states.push(LinkState {
                rotation: state.tip.rotation,
                position: state.tip.position,
                velocity: state.tip.velocity,
                bias_acceleration: state.tip.bias,
                joint: None,
                joint_bias: zero,
                path,
                body: None,
                section: Some(state),
            });
            continue;
        }
        let (velocity, bias, joint, joint_bias) = match &link.joint {
            None => (velocity, bias, None, dag.zero_motion()),
            Some(j) => {
                let local_axis = dag.constant3(j.axis);
                let axis = match parent_rotation {
                    Some(r) => dag.mat_vec3(&r, &local_axis),
                    None => local_axis,
                };
                let axis = dag.pin3(axis, &format!("{name}_axis"));
                let subspace = match j.kind {
                    LinkJointKind::Revolute => Motion { w: axis, v: dag.cross3(&position, &axis) },
                    LinkJointKind::Prismatic => Motion { w: dag.zero3(), v: axis },
                };
                let subspace = dag.pin_motion(subspace, &format!("{name}_subspace"));
                // A joint axis fixed in the parent moves with it: dS/dt = v_parent x S.
                let subspace_rate = dag.motion_cross(&velocity, &subspace);
                let subspace_rate = dag.pin_motion(subspace_rate, &format!("{name}_subspace_rate"));
                let rate = dag.input(Input::Qd(j.coordinate));
                let joint_velocity = dag.scale_motion(&subspace, rate);
                let velocity = dag.add_motion(&velocity, &joint_velocity);
                let joint_bias = dag.scale_motion(&subspace_rate, rate);
                let mut bias = dag.add_motion(&bias, &joint_bias);
                if accelerations {
                    let acceleration = dag.input(Input::Acceleration(j.coordinate));
                    let joint_acceleration = dag.scale_motion(&subspace, acceleration);
                    bias = dag.add_motion(&bias, &joint_acceleration);
                }
                path.push(j.coordinate);
                (
                    dag.pin_motion(velocity, &format!("{name}_velocity")),
                    dag.pin_motion(bias, &format!("{name}_{}", if accelerations { "acceleration" } else { "bias" })),
                    Some((j.coordinate, subspace, subspace_rate)),
                    joint_bias,
                )
            }
        };
        let body = match &link.inertia {
            None => None,
            Some(inertia) => {
                let mass = reader.node(dag, &inertia.mass)?;
                let local_com = reader.vec3(dag, &inertia.center_of_mass)?;
                let mut local_inertia = [[0; 3]; 3];
                for a in 0..3 {
                    for b in 0..3 {
                        local_inertia[a][b] = reader.node(dag, &inertia.inertia[a][b])?;
                    }
                }
                let frame = Frame { rotation, position, velocity, bias };
                Some(body_state(dag, name, mass, &local_com, &local_inertia, &frame))
            }
        };
        states.push(LinkState {
            rotation,
            position,
            velocity,
            bias_acceleration: bias,
            joint,
            joint_bias,
            path,
            body,
            section: None,
        });
    }
    Ok(states)
}

/// Each coordinate's world motion subspace and rate: a joint's own, and below a section its
/// coordinates' columns at the tip (which move everything beyond it).
pub(super) fn subspaces(states: &[LinkState], n: usize) -> Vec<Option<(Motion, Motion)>> {
    let mut subspaces: Vec<Option<(Motion, Motion)>> = vec![None; n];
    for state in states {
        if let Some((k, s, sd)) = state.joint {
            subspaces[k] = Some((s, sd));
        }
        // Below a section, its coordinates move everything along the tip's columns.
        if let Some(section) = &state.section {
            for (a, &k) in section.frame.coordinates.iter().enumerate() {
                subspaces[k] = Some((section.tip.columns[a], section.tip.column_rates[a]));
            }
        }
    }
    subspaces
}
