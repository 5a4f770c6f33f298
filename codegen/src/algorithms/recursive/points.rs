//! Points fixed to the tree: contact points (positions, velocities, axes, Jacobians and
//! their frames), markers, and where each point is placed on its link or skin ring.

// The passes' types and imports, shared by their files.
use super::*;

/// Where points sit on their links: the skin rings of soft sections already laid out (one
/// station per distinct xi) and their y and z axes scaled by a skin radius, shared by every
/// point on them; `label` keeps the pinned names of two sets of points apart.
pub(super) struct Placements {
    pub(super) label: &'static str,
    pub(super) link_of_body: Vec<usize>,
    pub(super) rings: HashMap<(usize, u64), Station>,
    pub(super) labels: HashMap<(usize, u64), String>,
    pub(super) scaled_axes: HashMap<(usize, u64, NodeId), (Vec3, Vec3)>,
}

/// A point placed on its link: the frame carrying it (rotation, origin, velocity), its offset
/// from that origin in world axes, the frame's own columns (a ring's section coordinates) and
/// the ring's radius (`None` on a rigid body).
pub(super) struct Placement {
    pub(super) link: usize,
    pub(super) rotation: Mat3,
    pub(super) origin: Vec3,
    pub(super) frame_velocity: Motion,
    pub(super) local: Vec3,
    pub(super) own: Vec<(usize, Motion)>,
    pub(super) bound: Option<NodeId>,
    /// The ring's label (`section1_ring3`), which its intermediates' names start with; `None`
    /// on a rigid body.
    pub(super) label: Option<String>,
}

impl Placements {
    pub(super) fn new(tree: &Tree, label: &'static str) -> Self {
        let mut link_of_body = vec![0; tree.robot.bodies.len()];
        for (index, link) in tree.links.iter().enumerate() {
            if let Some(b) = link.body {
                link_of_body[b] = index;
            }
        }
        Placements { label, link_of_body, rings: HashMap::new(), labels: HashMap::new(), scaled_axes: HashMap::new() }
    }

    pub(super) fn place(&mut self, dag: &mut Dag, tree: &Tree, point: &ContactPoint) -> Result<Placement, String> {
        let (links, states, reader, pieces) = (tree.links, tree.states, &tree.reader, tree.pieces);
        let index = self.link_of_body[point.body];
        let state = &states[index];
        let tag = self.label;
        match (&point.skin, &state.section) {
            (Some(skin), Some(section)) => {
                let key = (index, skin.xi.to_bits());
                // Skin points sit on rings: stations along their section, one per distinct xi.
                if !self.rings.contains_key(&key) {
                    let pieces = pieces.as_ref().ok_or("a soft section without its local pieces")?;
                    let label = format!(
                        "{}_{tag}{}",
                        links[index].name,
                        self.rings.keys().filter(|(l, _)| *l == index).count()
                    );
                    let station = section.frame.station(dag, pieces, skin.xi, &label, false)?;
                    self.rings.insert(key, station);
                    self.labels.insert(key, label);
                }
                let ring = &self.rings[&key];
                let radius = reader.node(dag, &from_expr(&skin.radius))?;
                // The ring's y and z axes scaled by the skin radius, pinned: each point around
                // it is then origin + cos a y + sin a z, six products instead of the radius
                // times every product.
                let axes = match self.scaled_axes.get(&(key.0, key.1, radius)) {
                    Some(axes) => *axes,
                    None => {
                        let label = format!(
                            "{}_{tag}{}",
                            links[index].name,
                            self.scaled_axes.keys().filter(|(l, _, _)| *l == index).count()
                        );
                        let y = dag.scale3(&Dag::column3(&ring.rotation, 1), radius);
                        let z = dag.scale3(&Dag::column3(&ring.rotation, 2), radius);
                        let axes = (dag.pin3(y, &format!("{label}_skin_y")), dag.pin3(z, &format!("{label}_skin_z")));
                        self.scaled_axes.insert((key.0, key.1, radius), axes);
                        axes
                    }
                };
                let (sin, cos) = skin.angle.sin_cos();
                let (cos, sin) = (dag.number(snap_unit(cos)), dag.number(snap_unit(sin)));
                let along_y = dag.scale3(&axes.0, cos);
                let along_z = dag.scale3(&axes.1, sin);
                let local = dag.add3(&along_y, &along_z);
                let own: Vec<(usize, Motion)> =
                    section.frame.coordinates.iter().copied().zip(ring.columns.iter().copied()).collect();
                Ok(Placement {
                    link: index,
                    rotation: ring.rotation,
                    origin: ring.position,
                    frame_velocity: ring.velocity,
                    local,
                    own,
                    bound: Some(radius),
                    label: self.labels.get(&key).cloned(),
                })
            }
            _ => {
                let local = reader.vec3(dag, &contact_point_offset(point))?;
                Ok(Placement {
                    link: index,
                    rotation: state.rotation,
                    origin: state.position,
                    frame_velocity: state.velocity,
                    local: dag.mat_vec3(&state.rotation, &local),
                    own: Vec::new(),
                    bound: None,
                    label: None,
                })
            }
        }
    }

    /// The motion subspace columns on the placed point's path: a ring's own where it has
    /// them, the joints' elsewhere.
    pub(super) fn path_columns(tree: &Tree, placement: &Placement) -> Result<Vec<(usize, Motion)>, String> {
        let state = &tree.states[placement.link];
        let mut path_columns = Vec::with_capacity(state.path.len());
        for &j in &state.path {
            let s_j = match placement.own.iter().find(|(k, _)| *k == j) {
                Some((_, column)) => *column,
                None => tree.subspace(j)?.0,
            };
            path_columns.push((j, s_j));
        }
        Ok(path_columns)
    }
}

/// The Jacobian columns S_j.v + S_j.w x p of a point at `at` moved by `path_columns`.
pub(super) fn point_columns(dag: &mut Dag, n: usize, path_columns: &[(usize, Motion)], at: &Vec3) -> Vec<Vec3> {
    let mut columns = vec![dag.zero3(); n];
    for &(j, s_j) in path_columns {
        let turn = dag.cross3(&s_j.w, at);
        columns[j] = dag.add3(&s_j.v, &turn);
    }
    columns
}

/// Markers: their world positions and Jacobian columns, placed as contact points are.
pub(super) fn markers(dag: &mut Dag, tree: &Tree) -> Result<(Vec<Vec3>, Vec<Vec<Vec3>>), String> {
    let n = tree.coordinates();
    let mut placements = Placements::new(tree, "marker_ring");
    let (mut positions, mut jacobians) = (Vec::new(), Vec::new());
    for marker in &tree.robot.markers {
        let placement = placements.place(dag, tree, marker)?;
        let position = dag.add3(&placement.origin, &placement.local);
        let position = dag.pin3(position, &format!("{}_marker_position", marker.name));
        let path_columns = Placements::path_columns(tree, &placement)?;
        jacobians.push(point_columns(dag, n, &path_columns, &position));
        positions.push(position);
    }
    Ok((positions, jacobians))
}

/// Contact points: positions, velocities, axes and Jacobian columns from their link's pose,
/// velocity and the motion subspaces on its path, and the frames they share.
pub(super) fn contact_points(dag: &mut Dag, tree: &Tree) -> Result<ContactOutputs, String> {
    let n = tree.coordinates();
    let links = tree.links;
    let mut placements = Placements::new(tree, "ring");
    let mut contact_positions = Vec::new();
    let mut contact_velocities = Vec::new();
    let mut contact_axes = Vec::new();
    let mut contact_jacobians = Vec::new();
    let mut frame_keys: Vec<(usize, Option<u64>)> = Vec::new();
    let mut contact_frames: Vec<ContactFrame> = Vec::new();
    let mut contact_frame_of: Vec<usize> = Vec::new();
    for point in &tree.robot.contact_points {
        let placement = placements.place(dag, tree, point)?;
        let index = placement.link;
        let path_columns = Placements::path_columns(tree, &placement)?;
        let Placement { rotation, origin, frame_velocity, local, own, bound, label, .. } = placement;
        let position = dag.add3(&origin, &local);
        let position = dag.pin3(position, &format!("{}_position", point.name));
        let spin = dag.cross3(&frame_velocity.w, &position);
        let velocity = dag.add3(&frame_velocity.v, &spin);
        // The Jacobian column of coordinate j at a point p is S_j.v + S_j.w x p: once for
        // this point (the oracle compares these), once for any point of its frame.
        let columns_at = |dag: &mut Dag, at: &Vec3| point_columns(dag, n, &path_columns, at);
        let frame_key = (index, point.skin.as_ref().map(|s| s.xi.to_bits()));
        // A point joins the frame of the point before it when both ride the same body (and
        // ring); otherwise it opens a frame. A frame's points are then consecutive, which the
        // runtime relies on (`CONTACT_FRAME_START`); a body listed twice apart gets two frames.
        let frame = match frame_keys.last() {
            Some(last) if *last == frame_key => frame_keys.len() - 1,
            _ => {
                let name = match &point.skin {
                    Some(skin) => format!("{} ring at xi = {}", links[index].name, skin.xi),
                    None => links[index].name.clone(),
                };
                let at = [dag.input(Input::Point(0)), dag.input(Input::Point(1)), dag.input(Input::Point(2))];
                let columns = columns_at(dag, &at);
                let motion = path_columns.clone();
                let axis = Dag::column3(&rotation, 0);
                frame_keys.push(frame_key);
                let mut own: Vec<usize> = own.iter().map(|(j, _)| *j).collect();
                own.sort_unstable();
                contact_frames.push(ContactFrame { name, columns, motion, own, axis, origin, radius: bound, label });
                contact_frames.len() - 1
            }
        };
        // A ring's points lie on a circle of their radius about its origin; a ring with two
        // radii, or a rigid frame, has no bound.
        if contact_frames[frame].radius != bound {
            contact_frames[frame].radius = None;
        }
        contact_frame_of.push(frame);
        let columns = columns_at(dag, &position);
        contact_positions.push(position);
        contact_velocities.push(velocity);
        contact_axes.push(Dag::column3(&rotation, 0));
        contact_jacobians.push(columns);
    }

    Ok(ContactOutputs {
        positions: contact_positions,
        velocities: contact_velocities,
        axes: contact_axes,
        jacobians: contact_jacobians,
        frames: contact_frames,
        frame_of: contact_frame_of,
    })
}

/// A sine or cosine of a skin angle with its round-off at the multiples of pi / 2 removed
/// (cos(pi / 2) is 6e-17, not 0), so that the products it would scale fold away.
pub(super) fn snap_unit(x: f64) -> f64 {
    let nearest = x.round();
    if (x - nearest).abs() < 1e-15 {
        nearest
    } else {
        x
    }
}
