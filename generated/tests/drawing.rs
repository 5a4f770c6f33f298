//! The frames every generated robot gives a viewer, checked against the robot's own
//! kinematics at random states: rotations are rotations, a rigid body's contact points and
//! thruster points stay fixed in its frame, a soft section's frames along its centre line
//! are equally spaced chords of one arc (constant curvature), a body hangs from its parent's
//! last frame at a fixed point (joints that turn, section mounts), and every spec body is
//! drawn once. Every robot of the registry runs through them (`every_robot::<name>`); the
//! pinniped's markers are checked against its frames.

use rand::{rngs::StdRng, Rng, SeedableRng};
use softgen_runtime::nalgebra::{Matrix3, SVector, Vector3};
use softgen_runtime::{BodyGeometry, CoordinateKind, FramePose, Model};

const STATES: usize = 12;

/// A random state: base and joint coordinates within +-1.5, actuator length changes within
/// +-4 cm, curvatures within +-8 /m (the physical ranges the invariants use), every fourth
/// with the sections straight.
fn random_position<R: Model<N, C>, const N: usize, const C: usize>(rng: &mut StdRng, k: usize) -> SVector<f64, N> {
    SVector::<f64, N>::from_fn(|i, _| match R::COORDINATES[i].kind {
        CoordinateKind::ActuatorLength if k % 4 != 0 => rng.gen_range(-0.04..0.04),
        CoordinateKind::Curvature if k % 4 != 0 => rng.gen_range(-8.0..8.0),
        CoordinateKind::ActuatorLength | CoordinateKind::Curvature => 0.0,
        _ => rng.gen_range(-1.5..1.5),
    })
}

fn frames<R: Model<N, C>, const N: usize, const C: usize>(q: &SVector<f64, N>, p: &R::Params) -> Vec<FramePose> {
    let mut frames =
        vec![FramePose { position: Vector3::repeat(f64::NAN), rotation: Matrix3::repeat(f64::NAN) }; R::DRAWING_FRAMES];
    R::drawing_frames_into(q, p, &R::cache(q, p), &mut frames);
    frames
}

/// `point` in the frame's own axes, about its origin.
fn local(frame: &FramePose, point: &Vector3<f64>) -> Vector3<f64> {
    frame.rotation.transpose() * (point - frame.position)
}

fn check_drawing<R: Model<N, C>, const N: usize, const C: usize>(seed: u64) {
    let name = R::NAME;
    let p = R::Params::default();
    let mut rng = StdRng::seed_from_u64(seed);

    // Every body drawn, with frames that tile the drawing frames before the thrusters'.
    assert!(!R::BODIES.is_empty(), "{name}: no bodies to draw");
    let mut next = 0;
    for (index, body) in R::BODIES.iter().enumerate() {
        assert_eq!(body.first_frame, next, "{name}: body {} frames out of order", body.name);
        assert!(body.frames >= 1, "{name}: body {} without frames", body.name);
        assert!(body.parent.is_none_or(|parent| parent < index), "{name}: body {} before its parent", body.name);
        next += body.frames;
    }
    assert_eq!(next + R::THRUSTER_DRAWING_FRAMES.len(), R::DRAWING_FRAMES, "{name}: frame count");
    assert_eq!(R::THRUSTER_DRAWING_FRAMES.len(), R::THRUSTERS.len(), "{name}: a frame per thruster");
    for point in R::CONTACT_POINTS {
        assert!(
            R::BODIES.iter().any(|b| b.name == point.body),
            "{name}: contact point {} on a body not drawn",
            point.name
        );
    }
    let mut geometry = vec![BodyGeometry { radius: f64::NAN, chambers: None }; R::BODIES.len()];
    R::drawing_geometry_into(&p, &mut geometry);
    for (body, geometry) in R::BODIES.iter().zip(&geometry) {
        assert!(
            geometry.radius.is_finite() && geometry.radius >= 0.0,
            "{name}: {} radius {}",
            body.name,
            geometry.radius
        );
        if body.section.is_some() {
            assert!(geometry.radius > 0.0, "{name}: section {} drawn without a radius", body.name);
        }
    }

    let prismatic = R::COORDINATES.iter().any(|c| c.kind == CoordinateKind::PrismaticJoint);
    let positions = |q: &SVector<f64, N>| {
        let mut out = [Vector3::zeros(); C];
        R::contact_positions_into(q, &p, &R::cache(q, &p), &mut out);
        out
    };
    // What must not change with the state, from the first state on.
    let mut fixed: Option<Vec<f64>> = None;
    for k in 0..STATES {
        let q = random_position::<R, N, C>(&mut rng, k);
        let frames = frames::<R, N, C>(&q, &p);
        for (f, frame) in frames.iter().enumerate() {
            let orthogonal = (frame.rotation.transpose() * frame.rotation - Matrix3::identity()).norm();
            assert!(orthogonal < 1e-12, "{name}: frame {f} not orthonormal ({orthogonal:e})");
            assert!((frame.rotation.determinant() - 1.0).abs() < 1e-12, "{name}: frame {f} not a rotation");
            assert!(frame.position.iter().all(|v| v.is_finite()), "{name}: frame {f} position");
        }
        let points = positions(&q);
        let mut observed = Vec::new();
        for body in R::BODIES {
            let first = &frames[body.first_frame];
            if body.section.is_some() {
                // Constant curvature: equal xi steps are equal chords.
                let chords: Vec<f64> = (1..body.frames)
                    .map(|j| (frames[body.first_frame + j].position - frames[body.first_frame + j - 1].position).norm())
                    .collect();
                for chord in &chords {
                    assert!(
                        (chord - chords[0]).abs() < 1e-9 * (1.0 + chords[0]),
                        "{name}: {} chords {chords:?}",
                        body.name
                    );
                }
                assert!(chords[0] > 0.0, "{name}: section {} has no length", body.name);
            } else {
                // A rigid body's points ride with its frame.
                for (point, info) in points.iter().zip(R::CONTACT_POINTS) {
                    if info.body == body.name {
                        observed.extend(local(first, point).iter());
                    }
                }
            }
            if let (Some(parent), false) = (body.parent, prismatic) {
                let parent = &R::BODIES[parent];
                let parent_last = &frames[parent.first_frame + parent.frames - 1];
                observed.extend(local(parent_last, &first.position).iter());
            }
        }
        for (&frame, thruster) in R::THRUSTER_DRAWING_FRAMES.iter().zip(R::THRUSTERS) {
            let body = R::BODIES.iter().find(|b| b.name == thruster.body);
            let body = body.unwrap_or_else(|| panic!("{name}: thruster {} on a body not drawn", thruster.name));
            let body_frame = &frames[body.first_frame];
            assert!(
                (frames[frame].rotation - body_frame.rotation).norm() < 1e-12,
                "{name}: {} frame's rotation",
                thruster.name
            );
            observed.extend(local(body_frame, &frames[frame].position).iter());
        }
        match &fixed {
            None => fixed = Some(observed),
            Some(expected) => {
                for (i, (a, b)) in observed.iter().zip(expected).enumerate() {
                    assert!((a - b).abs() < 1e-9, "{name}: fixed offset {i} moved from {b} to {a}");
                }
            }
        }
    }
}

/// A fixed seed per robot from its name (FNV-1a).
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// One test per robot of the generated registry: a spec added to model-specs/ is checked
/// here once codegen has run, with no edit to this file.
macro_rules! drawing_tests {
    ($($module:ident => $robot:ident,)*) => {
        mod every_robot {
            $(
                #[test]
                fn $module() {
                    super::check_drawing::<softgen_generated::$robot, { softgen_generated::$module::DOF }, { softgen_generated::$module::CONTACTS }>(
                        super::seed(stringify!($module)),
                    );
                }
            )*
        }
    };
}

softgen_generated::for_each_robot!(drawing_tests);

/// The frames against a closed form: the lower link hangs one upper length from the upper
/// link's joint.
#[test]
fn the_double_pendulum_hangs_its_lower_link_from_the_upper() {
    use softgen_generated::double_pendulum::Params;
    let p = Params::default();
    let q = SVector::<f64, 2>::new(0.3, -0.7);
    let frames = frames::<softgen_generated::DoublePendulum, 2, 1>(&q, &p);
    let names: Vec<&str> = softgen_generated::DoublePendulum::BODIES.iter().map(|b| b.name).collect();
    assert_eq!(names.len(), frames.len());
    let upper = names.iter().position(|n| *n == "upper").expect("an upper link");
    let lower = names.iter().position(|n| *n == "lower").expect("a lower link");
    let distance = (frames[lower].position - frames[upper].position).norm();
    assert!((distance - p.upper_length).abs() < 1e-12, "the lower link hangs {distance} m from the upper's joint");
}

/// The pinniped's markers where its spec puts them, against the drawn frames: `hub_left`
/// one hub radius along the hub's y axis from its origin, and each limb's tip marker one
/// limb radius along the y axis of the limb's last frame (its tip, xi = 1).
#[test]
fn the_pinnipeds_markers_sit_where_its_spec_places_them() {
    use softgen_generated::pinniped::{Params, CONTACTS, DOF};
    use softgen_generated::Pinniped;
    let p = Params::default();
    let mut rng = StdRng::seed_from_u64(seed("pinniped markers"));
    let names: Vec<&str> = Pinniped::MARKERS.iter().map(|m| m.name).collect();
    assert_eq!(names, ["hub_left", "head_tip", "back_tip", "front_right_tip", "front_left_tip"]);
    for k in 0..STATES {
        let q = random_position::<Pinniped, DOF, CONTACTS>(&mut rng, k);
        let frames = frames::<Pinniped, DOF, CONTACTS>(&q, &p);
        let cache = Pinniped::cache(&q, &p);
        for (marker, info) in Pinniped::MARKERS.iter().enumerate() {
            let body = Pinniped::BODIES.iter().find(|b| b.name == info.body).expect("the marker's body is drawn");
            let tip = &frames[body.first_frame + body.frames - 1];
            let radius = if info.body == "hub" { p.hub_radius } else { p.limb_radius };
            let expected = tip.position + radius * tip.rotation.column(1);
            let position = Pinniped::marker_position(marker, &q, &p, &cache);
            assert!(
                (position - expected).norm() < 1e-12,
                "state {k}: marker {} at {position:?}, not {expected:?}",
                info.name
            );
        }
    }
}
