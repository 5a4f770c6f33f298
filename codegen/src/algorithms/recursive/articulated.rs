//! Forward dynamics by the articulated-body algorithm, unrolled: articulated inertias child
//! to parent, accelerations parent to child, with the pivots that say M is positive definite.

// The passes' types and imports, shared by their files.
use super::*;

/// Forward dynamics by the articulated-body algorithm (Featherstone), in world coordinates:
/// child to parent, each link's articulated inertia I^A and bias force p^A (its body's
/// v x* I v, plus what its children pass on: I^a = I^A - U U'/D and
/// p^a = p^A + I^a c + U u / D, with U = I^A S, D = S . U, u = tau - S . p^A and c the joint's
/// velocity-product acceleration); then parent to child, a = a_parent + c,
/// qdd = (u - U . a) / D, a += S qdd, from the base's fictitious upward acceleration g.
/// O(n) with no matrix to factorise. The articulated inertias, U and 1/D depend on the
/// position only, so they are cached with the poses.
pub(super) fn articulated_body(
    dag: &mut Dag,
    links: &[Link],
    states: &[LinkState],
    gravity: NodeId,
    coordinates: usize,
) -> ArticulatedBody {
    let count = links.len();
    let mut inertia: Vec<Option<Articulated>> = vec![None; count];
    let mut bias: Vec<Option<Force>> = vec![None; count];
    for (index, state) in states.iter().enumerate() {
        if let Some(body) = &state.body {
            inertia[index] = Some(dag.articulated_from(&body.inertia));
            bias[index] = Some(body.gyroscopic);
        }
    }
    // Per link with a joint: (U, 1/D, u).
    let mut projected: Vec<Option<(Force, usize, usize)>> = vec![None; count];
    let mut pivots = Vec::new();
    for index in (0..count).rev() {
        let name = &links[index].name;
        let (Some(articulated), Some(force)) = (inertia[index].take(), bias[index].take()) else { continue };
        let articulated = dag.pin_articulated(articulated, &format!("{name}_articulated"));
        let force = dag.pin_force(force, &format!("{name}_articulated_bias"));
        let (passed_inertia, passed_force) = match states[index].joint {
            None => (articulated, force),
            Some((k, s, _)) => {
                let u_vector = dag.articulated_times(&articulated, &s);
                let u_vector = dag.pin_force(u_vector, &format!("{name}_articulated_subspace"));
                let pivot = dag.force_dot_motion(&u_vector, &s);
                let pivot = dag.pin_named(pivot, format!("{name}_pivot"));
                pivots.push(pivot);
                let inverse = dag.powi(pivot, -1);
                let inverse = dag.pin_named(inverse, format!("{name}_inverse_pivot"));
                let applied = dag.input(Input::Force(k));
                let along = dag.force_dot_motion(&force, &s);
                let remaining = dag.sub(applied, along);
                let remaining = dag.pin_named(remaining, format!("{name}_remaining_force"));
                projected[index] = Some((u_vector, inverse, remaining));
                let reduced = dag.articulated_reduce(&articulated, &u_vector, inverse);
                let reduced = dag.pin_articulated(reduced, &format!("{name}_articulated_passed"));
                let carried = dag.articulated_times(&reduced, &states[index].joint_bias);
                let share = dag.mul2(remaining, inverse);
                let pushed = dag.scale_force(&u_vector, share);
                let sum = dag.add_force(&force, &carried);
                (reduced, dag.add_force(&sum, &pushed))
            }
        };
        if let Some(p) = links[index].parent {
            inertia[p] = Some(match inertia[p].take() {
                None => passed_inertia,
                Some(existing) => dag.add_articulated(&existing, &passed_inertia),
            });
            bias[p] = Some(match bias[p].take() {
                None => passed_force,
                Some(existing) => dag.add_force(&existing, &passed_force),
            });
        }
    }
    let z = dag.number(0.0);
    let mut accelerations = vec![z; coordinates];
    let mut acceleration: Vec<Motion> = Vec::with_capacity(count);
    for (index, state) in states.iter().enumerate() {
        let name = &links[index].name;
        let parent = match links[index].parent {
            Some(p) => acceleration[p],
            // The base accelerates upward at g instead of gravity pulling every body down.
            None => Motion { w: [z, z, z], v: [z, z, gravity] },
        };
        let a = match (state.joint, projected[index]) {
            (Some((k, s, _)), Some((u_vector, inverse, remaining))) => {
                let a = dag.add_motion(&parent, &state.joint_bias);
                let resisted = dag.force_dot_motion(&u_vector, &a);
                let free = dag.sub(remaining, resisted);
                let qdd = dag.mul2(free, inverse);
                let qdd = dag.pin_named(qdd, format!("{name}_acceleration"));
                accelerations[k] = qdd;
                let driven = dag.scale_motion(&s, qdd);
                dag.add_motion(&a, &driven)
            }
            _ => parent,
        };
        acceleration.push(dag.pin_motion(a, &format!("{name}_spatial_acceleration")));
    }
    // The factorisation the runtime solves many right-hand sides with: each joint's S, U and
    // 1/D and the nearest joint above it.
    // A massless subtree has no pivots; then there is no factorisation to keep (the parents'
    // indices count every joint).
    let mut joints = Vec::new();
    for (index, k, parent) in joint_order(links, states) {
        let (Some((_, s, _)), Some((u_vector, inverse, _))) = (states[index].joint, projected[index]) else {
            joints.clear();
            break;
        };
        joints.push(ArticulatedJoint {
            coordinate: k,
            parent,
            subspace: motion_components(&s),
            projected: force_components(&u_vector),
            inverse_pivot: inverse,
        });
    }
    ArticulatedBody { accelerations, pivots, joints }
}
