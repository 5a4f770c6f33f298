//! Terrains the robot touches: flat ground, a stair step, a pipe; signed penetration depth
//! and surface normal at a point, and a stair's top edge pressing on the chord between two
//! points.

use crate::environment::plane::PlaneOfMotion;
use nalgebra::Vector3;
use std::fmt;

/// How far from the origin terrain geometry may reach (m).
pub const TERRAIN_EXTENT: f64 = 1e3;

/// Environment geometry. World z is up; x is the direction of travel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Terrain {
    /// No contact anywhere.
    None,
    /// Flat ground at z = `height`.
    Flat {
        /// The ground's height (m).
        height: f64,
    },
    /// Flat ground at z = 0 with a step of `height` whose face is at x = `position`
    /// (the solid step fills x >= position, z < height).
    Stair {
        /// The step face's x (m).
        position: f64,
        /// The step's height (m).
        height: f64,
    },
    /// A straight pipe of inner `diameter` along the x axis, centred on y = z = 0.
    Pipe {
        /// The inner diameter (m).
        diameter: f64,
    },
    /// The floor under a robot that moves in the horizontal x-y plane: every contact point
    /// rests on it with an equal share of the robot's weight (passive wheels, belly scales),
    /// and only friction acts in the plane. Not a penetration contact: `contact` is `None`.
    Floor,
}

/// A face of a stair's step: the face a point that went inside it entered through, which
/// is the one it is pushed back out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepFace {
    /// The step's top, entered from above.
    Top,
    /// The step's front face, entered from before it.
    Front,
}

/// A point inside a surface: how deep, and the unit normal pointing out of the solid (the
/// direction in which the normal force pushes the robot).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceContact {
    /// How deep (m, > 0).
    pub depth: f64,
    /// The unit normal, out of the solid.
    pub normal: Vector3<f64>,
}

/// A stair's top edge pressing on the chord between two contact points of a body: the
/// contact (its depth is the edge's distance from the chord, its normal the chord's normal
/// away from the step), and where along the chord it acts (0 at the chord's first point, 1
/// at its second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChordContact {
    /// How deep the edge is in the chord, and the normal it pushes the chord along.
    pub contact: SurfaceContact,
    /// Where along the chord the edge is, from its first point (0) to its second (1).
    pub along: f64,
}

impl Terrain {
    /// The contact of a point with the terrain, if it penetrates; inside a stair's step,
    /// through its nearer face (see [`Terrain::contact_entered`]).
    #[inline]
    pub fn contact(&self, p: &Vector3<f64>) -> Option<SurfaceContact> {
        self.contact_entered(p, None)
    }

    /// The face of a stair's step that a point at `p`, outside the step, would enter it
    /// through: the top from above the step's height, the front face from before it. None
    /// off a stair, inside the step, and above and before the step's edge at once (where a
    /// point may enter through either).
    #[inline]
    pub fn entry_face(&self, p: &Vector3<f64>) -> Option<StepFace> {
        match *self {
            Terrain::Stair { position, height } => match (p.z >= height, p.x < position) {
                (true, false) => Some(StepFace::Top),
                (false, true) => Some(StepFace::Front),
                _ => None,
            },
            _ => None,
        }
    }

    /// As [`Terrain::contact`], with a point inside a stair's step pushed out through the
    /// face it `entered` through, when known: a point that crosses the step's top edge lands
    /// on the top however far it sinks, instead of being pushed out through the front face
    /// once that is the nearer. Without, through the nearer face.
    #[inline(always)]
    pub fn contact_entered(&self, p: &Vector3<f64>, entered: Option<StepFace>) -> Option<SurfaceContact> {
        match *self {
            Terrain::None | Terrain::Floor => None,
            Terrain::Flat { height } => {
                let depth = height - p.z;
                (depth > 0.0).then(|| SurfaceContact { depth, normal: Vector3::z() })
            }
            Terrain::Stair { position, height } => {
                if p.x < position {
                    let depth = -p.z;
                    (depth > 0.0).then(|| SurfaceContact { depth, normal: Vector3::z() })
                } else if p.z < height {
                    // Inside the step: push out through the face it entered, else the nearer.
                    let top = height - p.z;
                    let front = p.x - position;
                    let through_top = match entered {
                        Some(StepFace::Top) => true,
                        Some(StepFace::Front) => false,
                        None => top <= front,
                    };
                    if through_top {
                        Some(SurfaceContact { depth: top, normal: Vector3::z() })
                    } else {
                        Some(SurfaceContact { depth: front, normal: -Vector3::x() })
                    }
                } else {
                    None
                }
            }
            Terrain::Pipe { diameter } => {
                let radial = (p.y * p.y + p.z * p.z).sqrt();
                let depth = radial - 0.5 * diameter;
                (depth > 0.0 && radial > 0.0)
                    .then(|| SurfaceContact { depth, normal: Vector3::new(0.0, -p.y / radial, -p.z / radial) })
            }
        }
    }

    /// Whether the chord from `a` to `b` passes above a stair's top edge, or, if it does not
    /// reach past the step's face, would reach past it above the edge: its end nearer the
    /// face is at least as high as the step, or is to enter the step, or has entered it,
    /// through the top (the faces `a` and `b` are given, as [`Terrain::contact_entered`]
    /// takes them: a point before the face held up by the edge on its other chord enters
    /// through the top; without a face, the nearer face of the step decides for a point
    /// inside it). The side the chord comes from when it next meets the edge. False off a
    /// stair.
    #[inline]
    pub fn chord_over_edge(&self, a: &Vector3<f64>, b: &Vector3<f64>, entered: [Option<StepFace>; 2]) -> bool {
        let Terrain::Stair { position, height } = *self else { return false };
        let ((front, front_face), (back, back_face)) =
            if a.x <= b.x { ((a, entered[0]), (b, entered[1])) } else { ((b, entered[1]), (a, entered[0])) };
        if front.x < position && position <= back.x {
            front.z + (back.z - front.z) * (position - front.x) / (back.x - front.x) >= height
        } else {
            let (nearer, face) = if back.x < position { (back, back_face) } else { (front, front_face) };
            nearer.z >= height
                || match face {
                    Some(face) => face == StepFace::Top,
                    None => nearer.x >= position && height - nearer.z <= nearer.x - position,
                }
        }
    }

    /// The contact of a stair's top edge with the chord from `a` to `b` (two points of one
    /// body, the body's surface between them taken straight), if the chord reaches past the
    /// step's face below the edge and came `over` it ([`Terrain::chord_over_edge`] where the
    /// edge last did not press on it): the edge then pushes the chord back over itself,
    /// along the chord's normal in the x-z plane, by the edge's distance from the chord. A
    /// chord that came from before the face (a head pushed into it) meets the face through
    /// its points instead. None off a stair.
    ///
    /// The depth is continuous: zero as the chord's crossing of the face's plane reaches the
    /// edge. Its gradient by the points' positions is the normal weighted by `1 - along` and
    /// `along`, so a force along the normal shared that way is the one of a spring on the
    /// depth.
    #[inline]
    pub fn edge_contact(&self, a: &Vector3<f64>, b: &Vector3<f64>, over: bool) -> Option<ChordContact> {
        let Terrain::Stair { position, height } = *self else { return None };
        if !over {
            return None;
        }
        let flipped = a.x > b.x;
        let (front, back) = if flipped { (b, a) } else { (a, b) };
        if !(front.x < position && position <= back.x) {
            return None;
        }
        let (dx, dz) = (back.x - front.x, back.z - front.z);
        let length = (dx * dx + dz * dz).sqrt();
        // The chord's normal in the x-z plane with an upward part (dx > 0): up and away from
        // the step for a chord that rises over the edge.
        let normal = Vector3::new(-dz / length, 0.0, dx / length);
        let (to_edge_x, to_edge_z) = (position - front.x, height - front.z);
        let depth = normal.x * to_edge_x + normal.z * to_edge_z;
        if depth <= 0.0 {
            return None;
        }
        let along = ((to_edge_x * dx + to_edge_z * dz) / (length * length)).clamp(0.0, 1.0);
        let along = if flipped { 1.0 - along } else { along };
        Some(ChordContact { contact: SurfaceContact { depth, normal }, along })
    }

    /// Whether what a penetrating point at `p` touches is an obstacle rather than the ground
    /// the robot stands on: a stair's step (its face and its top), a pipe's wall. Flat ground
    /// and the floor are no obstacle.
    #[inline]
    pub fn is_obstacle(&self, p: &Vector3<f64>) -> bool {
        match *self {
            Terrain::None | Terrain::Floor | Terrain::Flat { .. } => false,
            Terrain::Stair { position, .. } => p.x >= position,
            Terrain::Pipe { .. } => true,
        }
    }

    /// How a penetrating point's contact ([`Terrain::contact`] at `p`) changes when the point
    /// moves along `dp`: the directional derivatives of its depth and of its normal (the
    /// system Jacobian's). Within one face of the terrain, as the contact is; zero for
    /// terrains without penetration.
    #[inline]
    pub fn contact_tangent(&self, p: &Vector3<f64>, dp: &Vector3<f64>) -> (f64, Vector3<f64>) {
        match self.contact(p) {
            Some(contact) => self.tangent_of(&contact, p, dp),
            None => (0.0, Vector3::zeros()),
        }
    }

    /// As [`Terrain::contact_tangent`], within the face of `contact`, the contact of the
    /// point at `p` (as [`Terrain::contact_entered`] gave it).
    #[inline]
    pub fn tangent_of(&self, contact: &SurfaceContact, p: &Vector3<f64>, dp: &Vector3<f64>) -> (f64, Vector3<f64>) {
        match *self {
            Terrain::None | Terrain::Floor => (0.0, Vector3::zeros()),
            Terrain::Flat { .. } => (-dp.z, Vector3::zeros()),
            Terrain::Stair { .. } => {
                // The face the contact pushes out through: the ground's and the top's
                // normals are up, the front face's is -x.
                if contact.normal.x < 0.0 {
                    (dp.x, Vector3::zeros())
                } else {
                    (-dp.z, Vector3::zeros())
                }
            }
            Terrain::Pipe { .. } => {
                let radial = (p.y * p.y + p.z * p.z).sqrt();
                if radial == 0.0 {
                    return (0.0, Vector3::zeros());
                }
                let d_radial = (p.y * dp.y + p.z * dp.z) / radial;
                let d_normal = Vector3::new(
                    0.0,
                    -dp.y / radial + p.y * d_radial / (radial * radial),
                    -dp.z / radial + p.z * d_radial / (radial * radial),
                );
                (d_radial, d_normal)
            }
        }
    }

    /// Signed penetration depth of a point: positive exactly where [`Terrain::contact`] gives a
    /// contact (and then equal to its depth), negative outside, where it is minus the distance
    /// to the surface the point would cross first, near that surface. Continuous across the
    /// surface, so that a step's end points bracket the moment a point touches down; minus
    /// infinity for terrains that are never penetrated.
    #[inline]
    pub fn signed_depth(&self, p: &Vector3<f64>) -> f64 {
        match *self {
            Terrain::None | Terrain::Floor => f64::NEG_INFINITY,
            Terrain::Flat { height } => height - p.z,
            Terrain::Stair { position, height } => {
                // Inside the step: its nearer face, as `contact`. Before it: the ground or,
                // nearer the face than the ground is below, the face.
                let step = (height - p.z).min(p.x - position);
                if p.x < position {
                    (-p.z).max(step)
                } else {
                    step
                }
            }
            Terrain::Pipe { diameter } => (p.y * p.y + p.z * p.z).sqrt() - 0.5 * diameter,
        }
    }

    /// Whether any point within `radius` of `centre` may touch the terrain (conservative:
    /// `false` means none does). A broad phase for groups of points such as a skin ring.
    #[inline]
    pub fn may_touch(&self, centre: &Vector3<f64>, radius: f64) -> bool {
        match *self {
            Terrain::None => false,
            Terrain::Floor => true,
            Terrain::Flat { height } => centre.z - radius < height,
            Terrain::Stair { height, .. } => centre.z - radius < height.max(0.0),
            Terrain::Pipe { diameter } => (centre.y * centre.y + centre.z * centre.z).sqrt() + radius > 0.5 * diameter,
        }
    }

    /// Checks that the geometry is physically meaningful.
    pub fn validate(&self) -> Result<(), String> {
        // Geometry beyond a kilometre is no terrain a robot of this kind meets; bounding it
        // keeps every later computation (plots, depths) in a sane range.
        let bounded = |name: &str, v: f64| {
            if !v.is_finite() {
                Err(format!("terrain {name} must be finite, got {v}"))
            } else if v.abs() > TERRAIN_EXTENT {
                Err(format!("terrain {name} must be within {TERRAIN_EXTENT} m, got {v}"))
            } else {
                Ok(())
            }
        };
        match *self {
            Terrain::None | Terrain::Floor => Ok(()),
            Terrain::Flat { height } => bounded("height", height),
            Terrain::Stair { position, height } => {
                bounded("position", position)?;
                bounded("height", height)?;
                if height < 0.0 {
                    return Err(format!("stair height must be >= 0, got {height}"));
                }
                Ok(())
            }
            Terrain::Pipe { diameter } => {
                bounded("diameter", diameter)?;
                if diameter <= 0.0 {
                    return Err(format!("pipe diameter must be > 0, got {diameter}"));
                }
                Ok(())
            }
        }
    }
}

impl Terrain {
    /// Whether the terrain can carry a robot moving in `plane`: the floor is the weight of a
    /// robot in the horizontal plane and carries nothing else (a robot in the vertical plane
    /// or in 3D would fall through it); flat ground and the stair push along z, which a robot
    /// in the horizontal plane cannot move along (it would neither rest on them nor feel
    /// them: the floor is its ground).
    pub fn fits(&self, plane: PlaneOfMotion) -> Result<(), String> {
        match (self, plane) {
            (Terrain::Floor, PlaneOfMotion::Xz | PlaneOfMotion::Spatial) => Err(format!(
                "the floor carries robots that move in the horizontal x-y plane; this one moves {}, so it would fall through: use flat ground",
                plane_words(plane)
            )),
            (Terrain::Flat { .. } | Terrain::Stair { .. }, PlaneOfMotion::Xy) => Err(format!(
                "{self} pushes along z, which a robot in the horizontal x-y plane cannot move along: use the floor"
            )),
            _ => Ok(()),
        }
    }
}

fn plane_words(plane: PlaneOfMotion) -> &'static str {
    match plane {
        PlaneOfMotion::Xz => "in the vertical x-z plane",
        PlaneOfMotion::Xy => "in the horizontal x-y plane",
        PlaneOfMotion::Spatial => "in 3D",
    }
}

impl fmt::Display for Terrain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Terrain::None => write!(f, "none"),
            Terrain::Floor => write!(f, "floor under the horizontal plane, weight shared by every contact point"),
            Terrain::Flat { height } => write!(f, "flat ground at z = {height} m"),
            Terrain::Stair { position, height } => write!(f, "stair {height} m high at x = {position} m"),
            Terrain::Pipe { diameter } => write!(f, "pipe of diameter {diameter} m along x"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stair_pushes_out_through_nearer_face() {
        let stair = Terrain::Stair { position: 1.0, height: 0.1 };
        let top = stair.contact(&Vector3::new(1.5, 0.0, 0.09)).unwrap();
        assert!((top.depth - 0.01).abs() < 1e-12 && top.normal == Vector3::z());
        let front = stair.contact(&Vector3::new(1.005, 0.0, 0.02)).unwrap();
        assert!((front.depth - 0.005).abs() < 1e-12 && front.normal == -Vector3::x());
        assert!(stair.contact(&Vector3::new(0.5, 0.0, 0.01)).is_none());
        assert!(stair.contact(&Vector3::new(0.5, 0.0, -0.01)).is_some());
    }

    #[test]
    fn a_point_that_crossed_the_top_edge_is_pushed_out_through_the_top() {
        // 7 mm past the edge and 10 mm deep: the front face is the nearer, but a point that
        // came from above lands on the top.
        let stair = Terrain::Stair { position: 1.0, height: 0.1 };
        let inside = Vector3::new(1.007, 0.0, 0.09);
        assert_eq!(stair.contact(&inside).unwrap().normal, -Vector3::x());
        assert_eq!(stair.entry_face(&Vector3::new(1.007, 0.0, 0.101)), Some(StepFace::Top));
        let landed = stair.contact_entered(&inside, Some(StepFace::Top)).unwrap();
        assert!((landed.depth - 0.01).abs() < 1e-12 && landed.normal == Vector3::z());
        let (depth, _) = stair.tangent_of(&landed, &inside, &Vector3::new(0.3, 0.0, -0.2));
        assert_eq!(depth, 0.2, "the top's depth grows as the point sinks, whatever it does along x");
        // From before the face it is pushed back out of the face, however near the top.
        assert_eq!(stair.entry_face(&Vector3::new(0.999, 0.0, 0.099)), Some(StepFace::Front));
        let pushed = stair.contact_entered(&Vector3::new(1.02, 0.0, 0.099), Some(StepFace::Front)).unwrap();
        assert!((pushed.depth - 0.02).abs() < 1e-12 && pushed.normal == -Vector3::x());
        // Above and before the edge at once, either face may come: no face is remembered.
        assert_eq!(stair.entry_face(&Vector3::new(0.99, 0.0, 0.11)), None);
        assert_eq!(Terrain::Flat { height: 0.0 }.entry_face(&Vector3::new(0.0, 0.0, 0.1)), None);
    }

    #[test]
    fn the_step_edge_holds_up_a_chord_that_came_over_it() {
        let stair = Terrain::Stair { position: 1.0, height: 0.1 };
        // A link lying over the edge, its rear before the step's face and its front above the
        // top, crossing the face 1.6 mm below the edge: neither point touches anything.
        let (rear, front) = (Vector3::new(0.97, 0.0, 0.09), Vector3::new(1.02, 0.0, 0.104));
        assert!(stair.contact(&rear).is_none() && stair.contact(&front).is_none());
        let crossing = 0.09 + 0.014 * 0.03 / 0.05;
        assert!(crossing < 0.1);
        let edge = stair.edge_contact(&rear, &front, true).expect("the edge presses on the chord");
        let length = (0.05f64 * 0.05 + 0.014 * 0.014).sqrt();
        assert!((edge.contact.depth - (0.1 - crossing) * 0.05 / length).abs() < 1e-15);
        assert!((edge.contact.normal - Vector3::new(-0.014, 0.0, 0.05) / length).norm() < 1e-15);
        assert!((edge.contact.normal.norm() - 1.0).abs() < 1e-15);
        assert!(edge.along > 0.5 && edge.along < 0.7, "{}", edge.along);
        // The same chord taken the other way round: the same contact, along measured from b.
        let back = stair.edge_contact(&front, &rear, true).unwrap();
        assert!(
            (back.contact.depth - edge.contact.depth).abs() < 1e-15 && (back.along + edge.along - 1.0).abs() < 1e-15
        );
        // A chord driven into the face from before it is not lifted over the edge.
        assert!(stair.edge_contact(&rear, &front, false).is_none());
        // The gradient by the two points is the normal shared by `along`.
        let step = 1e-6;
        let depth = |a: Vector3<f64>, b: Vector3<f64>| stair.edge_contact(&a, &b, true).unwrap().contact.depth;
        for (k, direction) in [Vector3::x(), Vector3::z(), Vector3::new(0.3, 0.0, -0.7)].iter().enumerate() {
            let d = direction * step;
            let by_rear = (depth(rear + d, front) - depth(rear - d, front)) / (2.0 * step);
            let by_front = (depth(rear, front + d) - depth(rear, front - d)) / (2.0 * step);
            let normal = edge.contact.normal.dot(direction);
            assert!((by_rear + (1.0 - edge.along) * normal).abs() < 1e-9, "direction {k}: {by_rear}");
            assert!((by_front + edge.along * normal).abs() < 1e-9, "direction {k}: {by_front}");
        }
        // Raised to the edge, the chord is free: the depth goes to zero, with no jump.
        let lifted = Vector3::new(0.0, 0.0, 0.1 - crossing);
        let past = lifted * (1.0 + 1e-9);
        assert!(stair.edge_contact(&(rear + past), &(front + past), true).is_none());
        let almost = lifted * (1.0 - 1e-9);
        assert!(stair.edge_contact(&(rear + almost), &(front + almost), true).unwrap().contact.depth < 1e-11);
    }

    #[test]
    fn a_chord_remembers_the_side_of_the_edge_it_comes_from() {
        let stair = Terrain::Stair { position: 1.0, height: 0.1 };
        let on = |x: f64, z: f64| Vector3::new(x, 0.0, z);
        // Across the face: above the edge or below it.
        let none = [None, None];
        assert!(stair.chord_over_edge(&on(0.97, 0.12), &on(1.02, 0.11), none));
        assert!(!stair.chord_over_edge(&on(0.97, 0.05), &on(1.02, 0.06), none));
        // Before the face: by the end nearer it, a head above the step's height or not.
        assert!(stair.chord_over_edge(&on(0.9, 0.0), &on(0.98, 0.11), none));
        assert!(!stair.chord_over_edge(&on(0.9, 0.0), &on(0.98, 0.05), none));
        // On the top: over; either way round.
        assert!(stair.chord_over_edge(&on(1.1, 0.1), &on(1.05, 0.1), none));
        // Its nearer end sunk into the top near the edge: over if it came from above, not if
        // it was pushed in through the face.
        let (sunk, far) = (on(1.003, 0.096), on(1.05, 0.1));
        assert!(stair.chord_over_edge(&sunk, &far, [Some(StepFace::Top), None]));
        assert!(stair.chord_over_edge(&far, &sunk, [None, Some(StepFace::Top)]));
        assert!(!stair.chord_over_edge(&sunk, &far, [Some(StepFace::Front), None]));
        assert!(!stair.chord_over_edge(&sunk, &far, none), "without a face, the nearer (the front) decides");
        // Its nearer end before the face, below the step's height: over if that end is held
        // up by the edge (on its chord beyond), to enter through the top.
        let (held, rear) = (on(0.995, 0.097), on(0.95, 0.09));
        assert!(stair.chord_over_edge(&rear, &held, [Some(StepFace::Front), Some(StepFace::Top)]));
        assert!(!stair.chord_over_edge(&rear, &held, [None, Some(StepFace::Front)]));
        assert!(!Terrain::Flat { height: 0.0 }.chord_over_edge(&on(0.0, 0.1), &on(0.1, 0.1), none));
    }

    #[test]
    fn no_edge_presses_where_no_edge_is_near() {
        // Chords on flat ground, against a pipe's wall, and on a stair away from its edge (on
        // the ground before it, on its top, in the air) meet no edge, whatever side they came
        // from: these terrains act through the points alone.
        let terrains = [
            Terrain::Flat { height: 0.0 },
            Terrain::Pipe { diameter: 0.2 },
            Terrain::Stair { position: 1.0, height: 0.1 },
            Terrain::None,
            Terrain::Floor,
        ];
        let chords = [
            (Vector3::new(0.2, 0.0, -0.01), Vector3::new(0.25, 0.0, -0.005)),
            (Vector3::new(0.2, 0.11, 0.0), Vector3::new(0.25, 0.12, 0.01)),
            (Vector3::new(1.2, 0.0, 0.095), Vector3::new(1.25, 0.0, 0.099)),
            (Vector3::new(0.95, 0.0, 0.3), Vector3::new(1.05, 0.0, 0.35)),
            (Vector3::new(0.5, 0.0, 0.0), Vector3::new(0.55, 0.0, 0.0)),
        ];
        for terrain in terrains {
            for (a, b) in &chords {
                for over in [false, true] {
                    assert_eq!(terrain.edge_contact(a, b, over), None, "{terrain}: {a} to {b}");
                }
            }
        }
    }

    #[test]
    fn only_a_step_or_a_wall_is_an_obstacle() {
        // The ground before the step is no obstacle; the step's face and top are.
        let stair = Terrain::Stair { position: 1.0, height: 0.1 };
        assert!(!stair.is_obstacle(&Vector3::new(0.5, 0.0, -0.01)));
        assert!(stair.is_obstacle(&Vector3::new(1.005, 0.0, 0.02)));
        assert!(stair.is_obstacle(&Vector3::new(1.5, 0.0, 0.09)));
        assert!(!Terrain::Flat { height: 0.0 }.is_obstacle(&Vector3::new(0.0, 0.0, -0.01)));
        assert!(Terrain::Pipe { diameter: 0.2 }.is_obstacle(&Vector3::new(0.0, 0.12, 0.0)));
        assert!(!Terrain::Floor.is_obstacle(&Vector3::zeros()));
    }

    #[test]
    fn pipe_normal_points_inward() {
        let pipe = Terrain::Pipe { diameter: 0.2 };
        let c = pipe.contact(&Vector3::new(0.0, 0.12, 0.0)).unwrap();
        assert!((c.depth - 0.02).abs() < 1e-12);
        assert!((c.normal - Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-12);
        assert!(pipe.contact(&Vector3::new(3.0, 0.05, 0.0)).is_none());
    }

    #[test]
    fn signed_depth_is_the_contact_depth_inside_and_negative_outside() {
        let terrains = [
            Terrain::Flat { height: 0.1 },
            Terrain::Stair { position: 0.5, height: 0.2 },
            Terrain::Pipe { diameter: 0.3 },
        ];
        for terrain in terrains {
            let (mut inside, mut outside) = (0, 0);
            for i in 0..2000 {
                let k = i as f64;
                let point =
                    Vector3::new(0.3 + 0.4 * (0.37 * k).sin(), 0.25 * (0.73 * k).cos(), 0.05 + 0.25 * (1.31 * k).sin());
                let depth = terrain.signed_depth(&point);
                match terrain.contact(&point) {
                    Some(contact) => {
                        inside += 1;
                        assert!(
                            (depth - contact.depth).abs() < 1e-15,
                            "{terrain}: {point}: {depth} vs {}",
                            contact.depth
                        );
                        assert!(depth >= 0.0);
                    }
                    None => {
                        outside += 1;
                        assert!(depth <= 0.0, "{terrain}: {point} does not touch, signed depth {depth}");
                    }
                }
                // Continuous near the surface: a small move changes it by at most the move.
                let moved = point + Vector3::new(1e-7, -1e-7, 1e-7);
                assert!((terrain.signed_depth(&moved) - depth).abs() < 2e-7, "{terrain}: jump at {point}");
            }
            assert!(inside > 100 && outside > 100, "{terrain}: {inside} points inside, {outside} outside");
        }
        assert_eq!(Terrain::None.signed_depth(&Vector3::zeros()), f64::NEG_INFINITY);
        assert_eq!(Terrain::Floor.signed_depth(&Vector3::zeros()), f64::NEG_INFINITY);
    }

    #[test]
    fn may_touch_is_never_wrong_about_a_ball() {
        // Points on spheres about centres near each terrain: whenever one touches, the
        // broad phase must have said the ball may touch.
        let terrains = [
            Terrain::Flat { height: 0.1 },
            Terrain::Stair { position: 0.5, height: 0.2 },
            Terrain::Pipe { diameter: 0.3 },
        ];
        let radius = 0.05;
        for terrain in terrains {
            let mut skipped = 0;
            for i in 0..40 {
                let centre = Vector3::new(0.3 + 0.01 * i as f64, 0.02 * (i % 7) as f64, -0.05 + 0.01 * i as f64);
                let may = terrain.may_touch(&centre, radius);
                skipped += usize::from(!may);
                for k in 0..64 {
                    let (a, b) = (k as f64 * 0.7, k as f64 * 1.3);
                    let point = centre + Vector3::new(a.cos() * b.sin(), a.sin() * b.sin(), b.cos()) * radius;
                    assert!(
                        may || terrain.contact(&point).is_none(),
                        "{terrain}: {point} touches, ball at {centre} ruled out"
                    );
                }
            }
            assert!(skipped > 0, "{terrain}: some balls are ruled out");
        }
        assert!(!Terrain::None.may_touch(&Vector3::zeros(), 1.0));
    }
}
