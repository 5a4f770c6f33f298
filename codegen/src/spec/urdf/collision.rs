//! Contact points seeded from the links' `<collision>` primitives: a box's corners, points
//! on a sphere and on a cylinder's rims.

use super::*;

impl<'a> Reader<'a> {
    /// Contact points on the collision primitives `seeds` asks for, in each link's body frame.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn collision_points(
        &mut self,
        tree: &Tree,
        bodies: &Bodies,
        order: &[usize],
        seeds: &CollisionSeeds,
        prefix: &str,
        span: &std::ops::Range<usize>,
    ) -> Result<Vec<(String, spec::ContactPoints)>, Stop> {
        let Tree { links, index_of, .. } = tree;
        let Bodies { body_links, body_of, place, .. } = bodies;
        let name = |link: usize| format!("{prefix}{}", links[link].name);
        let number = |x: f64| Spanned::new(span.clone(), Value::Number(x));
        let mut contact_points = Vec::new();
        let mut chosen: Vec<(usize, bool)> = Vec::new();
        if seeds.links.is_empty() {
            chosen.extend(order.iter().map(|&l| (l, false)));
        } else {
            for link in &seeds.links {
                match index_of.get(*link).filter(|i| order.contains(i)) {
                    Some(&i) => chosen.push((i, true)),
                    None => {
                        return Err(Stop::Import(format!(
                            "[import] collision_points: no link named `{link}` among the imported links"
                        )))
                    }
                }
            }
        }
        for (link, named) in chosen {
            let what = format!("link `{}` <collision>", links[link].name);
            let mut positions = Vec::new();
            let mut names = Vec::new();
            let collisions =
                links[link].node.children().filter(|c| c.is_element() && c.tag_name().name() == "collision");
            for (k, collision) in collisions.enumerate() {
                let Some(local) = self.seed_points(collision, &what, seeds) else { continue };
                let (origin, rpy) = self.origin(collision, &what);
                let turn = rotation_from_rpy(rpy);
                let (p, r) = place[link];
                for (i, v) in local.iter().enumerate() {
                    let in_link = add(origin, mat_vec(&turn, *v));
                    positions.push(add(p, mat_vec(&r, in_link)).map(number));
                    names.push(Spanned::new(span.clone(), format!("{}_collision{k}_{i}", name(link))));
                }
            }
            if positions.is_empty() {
                if named {
                    let shapes: Vec<&str> = seeds.shapes.iter().map(|s| s.name()).collect();
                    self.error(
                        links[link].node,
                        format!("link `{}`", links[link].name),
                        format!(
                            "[import] collision_points names it, but it has no <collision> {} to seed contact points from (meshes are not read)",
                            shapes.join(", ")
                        ),
                    );
                }
                continue;
            }
            let body = name(body_links[body_of[link].expect("every imported link is in a body")]);
            contact_points.push((
                format!("import.collision_points ({})", links[link].name),
                spec::ContactPoints {
                    body: Spanned::new(span.clone(), body),
                    kind: Spanned::new(span.clone(), spec::ContactKind::Points),
                    positions,
                    names,
                    grid: None,
                    repeat: None,
                },
            ));
        }
        Ok(contact_points)
    }

    /// The points one `<collision>`'s shape seeds, in its own frame: a box's corners, points
    /// on a sphere or a cylinder; none for a mesh or a shape `seeds` leaves out.
    pub(super) fn seed_points(
        &mut self,
        collision: roxmltree::Node,
        what: &str,
        seeds: &CollisionSeeds,
    ) -> Option<Vec<[f64; 3]>> {
        let Some(geometry) = child(collision, "geometry") else {
            self.error(collision, format!("{what} <geometry>"), "missing");
            return None;
        };
        let Some(shape) = geometry.children().find(|c| c.is_element()) else {
            self.error(geometry, format!("{what} <geometry>"), "empty: expected a box, sphere, cylinder or mesh");
            return None;
        };
        let kind = match shape.tag_name().name() {
            "box" => spec::CollisionShape::Box,
            "sphere" => spec::CollisionShape::Sphere,
            "cylinder" => spec::CollisionShape::Cylinder,
            // Meshes (and shapes URDF does not define) seed nothing: they are not read.
            _ => return None,
        };
        if !seeds.shapes.contains(&kind) {
            return None;
        }
        let positive = |attribute: &str, reader: &mut Reader| -> Option<f64> {
            let [v] = reader.numbers::<1>(shape, &what, attribute, None)?;
            if v > 0.0 {
                Some(v)
            } else {
                let field = format!("{what} <{}> {attribute}", shape.tag_name().name());
                reader.error(shape, field, format!("must be > 0 m, got {v}"));
                None
            }
        };
        let local = match kind {
            spec::CollisionShape::Box => {
                let Some(size) = self.numbers::<3>(shape, &what, "size", None) else { return None };
                if let Some(v) = size.iter().find(|v| **v <= 0.0) {
                    self.error(shape, format!("{what} <box> size"), format!("must be > 0 m, got {v}"));
                    return None;
                }
                box_corners(size)
            }
            spec::CollisionShape::Sphere => {
                let Some(radius) = positive("radius", self) else { return None };
                sphere_points(radius)
            }
            spec::CollisionShape::Cylinder => {
                let (Some(radius), Some(length)) = (positive("radius", self), positive("length", self)) else {
                    return None;
                };
                cylinder_points(radius, length)
            }
        };
        Some(local)
    }
}

/// A box's eight corners, about its centre.
fn box_corners([x, y, z]: [f64; 3]) -> Vec<[f64; 3]> {
    let mut corners = Vec::with_capacity(8);
    for sx in [1.0, -1.0] {
        for sy in [1.0, -1.0] {
            for sz in [1.0, -1.0] {
                corners.push([sx * x / 2.0, sy * y / 2.0, sz * z / 2.0]);
            }
        }
    }
    corners
}

/// Points around a cylinder's two rims (its axis z, centred).
const CYLINDER_RIM_POINTS: usize = 8;

/// A cylinder's two rims, `CYLINDER_RIM_POINTS` points each: lying on its side, its lowest
/// point is at most r (1 - cos(pi / 8)) = 0.076 r under the lowest seeded one.
fn cylinder_points(radius: f64, length: f64) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(2 * CYLINDER_RIM_POINTS);
    for z in [length / 2.0, -length / 2.0] {
        for k in 0..CYLINDER_RIM_POINTS {
            let angle = std::f64::consts::TAU * k as f64 / CYLINDER_RIM_POINTS as f64;
            points.push([radius * angle.cos(), radius * angle.sin(), z]);
        }
    }
    points
}

/// A sphere's 42 points: the vertices of an icosahedron with each face cut into four, on
/// the sphere. Whatever its orientation, the sphere's lowest point is at most 0.066 r under
/// the lowest seeded one (12 vertices alone leave 0.20 r).
fn sphere_points(radius: f64) -> Vec<[f64; 3]> {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut vertices: Vec<[f64; 3]> = vec![
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ];
    let unit = |v: [f64; 3]| {
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|x| x / n)
    };
    for v in vertices.iter_mut() {
        *v = unit(*v);
    }
    const FACES: [[usize; 3]; 20] = [
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    // Each edge's midpoint once, in the order the faces meet them.
    let mut midpoints: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for face in FACES {
        for k in 0..3 {
            let (a, b) = (face[k], face[(k + 1) % 3]);
            let edge = (a.min(b), a.max(b));
            if !midpoints.contains_key(&edge) {
                let m = unit(add(vertices[a], vertices[b]));
                midpoints.insert(edge, vertices.len());
                vertices.push(m);
            }
        }
    }
    vertices.into_iter().map(|v| v.map(|x| radius * x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowest of `points` (on a shape about its centre) over the shape's lowest point,
    /// as a fraction of `radius`, worst over many directions of gravity.
    fn worst_lift(points: &[[f64; 3]], radius: f64, support: impl Fn([f64; 3]) -> f64) -> f64 {
        let mut worst: f64 = 0.0;
        // Directions on a fine latitude-longitude grid.
        for i in 0..=180 {
            let polar = std::f64::consts::PI * i as f64 / 180.0;
            for j in 0..360 {
                let azimuth = std::f64::consts::TAU * j as f64 / 360.0;
                let d = [polar.sin() * azimuth.cos(), polar.sin() * azimuth.sin(), polar.cos()];
                let lowest = points.iter().map(|p| p[0] * d[0] + p[1] * d[1] + p[2] * d[2]).fold(f64::MIN, f64::max);
                worst = worst.max((support(d) - lowest) / radius);
            }
        }
        worst
    }

    #[test]
    fn seeded_points_lie_on_their_shapes_and_stay_near_its_lowest_point() {
        let sphere = sphere_points(0.03);
        assert_eq!(sphere.len(), 42);
        for p in &sphere {
            assert!(((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt() - 0.03).abs() < 1e-15);
        }
        let lift = worst_lift(&sphere, 0.03, |_| 0.03);
        assert!(lift < 0.066, "a sphere's lowest seeded point is {lift} r up");
        // Twelve vertices alone would leave 0.20 r: the subdivision is what the figure is for.
        assert!(worst_lift(&sphere[..12], 0.03, |_| 0.03) > 0.19);

        let (r, l) = (0.02, 0.3);
        let cylinder = cylinder_points(r, l);
        assert_eq!(cylinder.len(), 2 * CYLINDER_RIM_POINTS);
        for p in &cylinder {
            assert!(((p[0] * p[0] + p[1] * p[1]).sqrt() - r).abs() < 1e-15 && (p[2].abs() - l / 2.0).abs() < 1e-15);
        }
        // The cylinder's support in direction d: r |d_xy| + l/2 |d_z|.
        let lift = worst_lift(&cylinder, r, |d| r * d[0].hypot(d[1]) + l / 2.0 * d[2].abs());
        let bound = 1.0 - (std::f64::consts::PI / CYLINDER_RIM_POINTS as f64).cos();
        assert!(lift <= bound + 1e-12 && lift > 0.9 * bound, "{lift} against {bound}");

        let corners = box_corners([0.58, 0.14, 0.18]);
        assert_eq!(corners.len(), 8);
        assert!(corners.iter().all(|c| c[0].abs() == 0.29 && c[1].abs() == 0.07 && c[2].abs() == 0.09));
        let lift = worst_lift(&corners, 0.09, |d| 0.29 * d[0].abs() + 0.07 * d[1].abs() + 0.09 * d[2].abs());
        assert!(lift < 1e-15, "a box's corners are its extreme points: {lift}");
    }
}
