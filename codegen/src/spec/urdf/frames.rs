//! Merged links as frames: spec bodies, contact points and markers that name one moved onto
//! its body; and the rotations and small matrix algebra the import composes places with.

use super::*;

/// Spec bodies, contact points and markers that name a merged link: moved onto the body it
/// was merged into, their positions and rotations composed with the link's place in it.
/// Expressions stay expressions (the sum is written out), so parameters still reach them.
pub fn apply_frames(
    frames: &BTreeMap<String, Frame>,
    bodies: &mut [Spanned<spec::Body>],
    contact_points: &mut [Spanned<spec::ContactPoints>],
    markers: &mut [Spanned<spec::Marker>],
) {
    for body in bodies.iter_mut() {
        let span = body.span();
        let b = body.get_mut();
        let Some(frame) = b.parent.as_ref().and_then(|p| frames.get(p.get_ref())) else { continue };
        let parent_span = b.parent.as_ref().map_or(span.clone(), |p| p.span());
        b.parent = Some(Spanned::new(parent_span.clone(), frame.body.clone()));
        let origin = b
            .origin
            .clone()
            .unwrap_or_else(|| std::array::from_fn(|_| Spanned::new(parent_span.clone(), Value::Number(0.0))));
        b.origin = Some(moved(frame, &origin));
        let rpy = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
        let rotation_span = b.rotation.as_ref().map_or(parent_span.clone(), |r| r.span());
        // A non-finite rotation is left for validation to name.
        if rpy.iter().all(|v| v.is_finite()) {
            let composed = rpy_from_rotation(&mat_mul(&frame.rotation, &rotation_from_rpy(rpy)));
            b.rotation = Some(Spanned::new(rotation_span, composed));
        }
    }
    for points in contact_points.iter_mut() {
        let c = points.get_mut();
        let Some(frame) = frames.get(c.body.get_ref()) else { continue };
        c.body = Spanned::new(c.body.span(), frame.body.clone());
        for position in c.positions.iter_mut() {
            *position = moved(frame, position);
        }
    }
    for marker in markers.iter_mut() {
        let m = marker.get_mut();
        let Some(frame) = frames.get(m.body.get_ref()) else { continue };
        m.body = Spanned::new(m.body.span(), frame.body.clone());
        // Only a rigid body's position moves; a merged link is never a soft section.
        if let Some(position) = m.position.as_mut() {
            *position = moved(frame, position);
        }
    }
}

/// p + R v, for values that may be expressions.
fn moved(frame: &Frame, v: &spec::Vector) -> spec::Vector {
    let numbers: Option<Vec<f64>> =
        v.iter().map(|x| if let Value::Number(n) = x.get_ref() { Some(*n) } else { None }).collect();
    if let Some(n) = numbers {
        let out = add(frame.position, mat_vec(&frame.rotation, [n[0], n[1], n[2]]));
        return std::array::from_fn(|i| Spanned::new(v[i].span(), Value::Number(out[i])));
    }
    let text = |x: &Spanned<Value>| match x.get_ref() {
        Value::Number(n) => format!("({n:?})"),
        Value::Expression(e) => format!("({e})"),
    };
    std::array::from_fn(|i| {
        let mut sum = format!("{:?}", frame.position[i]);
        for (k, component) in v.iter().enumerate() {
            let coefficient = frame.rotation[i][k];
            if coefficient != 0.0 {
                sum.push_str(&format!(" + {coefficient:?} * {}", text(component)));
            }
        }
        Spanned::new(v[i].span(), Value::Expression(sum))
    })
}

pub(super) fn identity() -> Matrix3 {
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
}

pub(super) fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(super) fn mat_vec(m: &Matrix3, v: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

pub(super) fn mat_mul(a: &Matrix3, b: &Matrix3) -> Matrix3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))
}

pub(super) fn transpose(m: &Matrix3) -> Matrix3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

/// R = Rz(yaw) Ry(pitch) Rx(roll), URDF's and the spec's convention.
pub fn rotation_from_rpy([roll, pitch, yaw]: [f64; 3]) -> Matrix3 {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

/// The [roll, pitch, yaw] of a rotation matrix (pitch in [-pi/2, pi/2]).
pub fn rpy_from_rotation(r: &Matrix3) -> [f64; 3] {
    let pitch = (-r[2][0]).atan2((r[0][0] * r[0][0] + r[1][0] * r[1][0]).sqrt());
    if (r[0][0] * r[0][0] + r[1][0] * r[1][0]).sqrt() < 1e-12 {
        // Gimbal lock: roll and yaw turn about the same axis; put it all in roll.
        let roll = if pitch > 0.0 { r[0][1].atan2(r[1][1]) } else { (-r[0][1]).atan2(r[1][1]) };
        return [roll, pitch, 0.0];
    }
    [r[2][1].atan2(r[2][2]), pitch, r[1][0].atan2(r[0][0])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpy_round_trips_through_the_rotation_matrix() {
        for rpy in [[0.1, -0.4, 2.5], [-3.0, 1.2, -0.3], [0.0, 0.0, 0.0], [1.0, std::f64::consts::FRAC_PI_2, 0.0]] {
            let r = rotation_from_rpy(rpy);
            let back = rotation_from_rpy(rpy_from_rotation(&r));
            for i in 0..3 {
                for j in 0..3 {
                    assert!((r[i][j] - back[i][j]).abs() < 1e-14, "{rpy:?}: {r:?} vs {back:?}");
                }
            }
        }
    }
}
