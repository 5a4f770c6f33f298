//! Water and thrusters on the tree: the hulls' buoyancy, added mass and drag immersed in the
//! rows, and each thruster's generalized force columns.

// The passes' types and imports, shared by their files.
use super::*;

/// Water: buoyancy, added mass and drag of every hull, added to the rows; the drag and its
/// dissipation function, and each rigid hull's added mass and linear drag.
pub(super) fn immerse_hulls(
    dag: &mut Dag,
    tree: &Tree,
    water: &crate::model::Water,
    rows: &mut CoordinateRows,
) -> Result<WaterOutputs, String> {
    let (n, zero, gravity) = (tree.coordinates(), tree.zero, tree.gravity);
    let (robot, links, states, reader) = (tree.robot, tree.links, tree.states, &tree.reader);
    let mut hulls = Vec::new();
    {
        let node = |dag: &mut Dag, e: &crate::spec::expr::Expr| reader.node(dag, &from_expr(e));
        let nodes = WaterNodes {
            density: node(dag, &water.density)?,
            added_mass_coefficient: node(dag, &water.added_mass_coefficient)?,
            surge_added_mass: node(dag, &water.surge_added_mass)?,
            drag_coefficient: node(dag, &water.drag_coefficient)?,
            surge_linear_drag: node(dag, &water.surge_linear_drag)?,
            roll_linear_drag: node(dag, &water.roll_linear_drag)?,
            reference_speed: node(dag, &water.reference_speed)?,
            gravity,
        };
        let mut drag = vec![zero; n];
        let mut dissipation = Vec::new();
        let mut water_potential = Vec::new();
        for (index, state) in states.iter().enumerate() {
            let Some(hull) = links[index].body.and_then(|b| robot.bodies[b].hull.as_ref()) else { continue };
            let name = &links[index].name;
            let radius = node(dag, &hull.radius)?;
            let mut water_rows = WaterRows {
                mass_matrix: &mut rows.mass_matrix,
                coriolis: &mut rows.coriolis,
                coriolis_matrix: &mut rows.coriolis_matrix,
                gravity: &mut rows.gravity,
                potential: &mut water_potential,
                drag: &mut drag,
                dissipation: &mut dissipation,
            };
            match &state.section {
                Some(section) => {
                    let rest_length = node(dag, &hull.length)?;
                    let own = &section.frame.coordinates;
                    let mut above = Vec::new();
                    for &j in state.path.iter().filter(|j| !own.contains(j)) {
                        let (s_j, sd_j) = tree.subspace(j)?;
                        above.push((j, s_j, sd_j));
                    }
                    let quadrature = links[index].section.as_ref().map(|s| s.quadrature.clone()).unwrap_or_default();
                    for (k, (slice, &(_, weight))) in section.slices.iter().zip(&quadrature).enumerate() {
                        let mut columns = above.clone();
                        for (a, &j) in own.iter().enumerate() {
                            columns.push((j, slice.columns[a], slice.column_rates[a]));
                        }
                        let slice_hull = hydrodynamics::slice(dag, &nodes, radius, rest_length, weight);
                        hydrodynamics::immerse(
                            dag,
                            &format!("{name}_slice{k}"),
                            &slice_hull,
                            &nodes,
                            &slice.frame,
                            &columns,
                            &mut water_rows,
                        );
                    }
                }
                None => {
                    let length = node(dag, &hull.length)?;
                    let start = node(dag, &hull.start)?;
                    let centre = [
                        node(dag, &hull.center_of_buoyancy[0])?,
                        node(dag, &hull.center_of_buoyancy[1])?,
                        node(dag, &hull.center_of_buoyancy[2])?,
                    ];
                    let rigid_hull = hydrodynamics::cylinder(dag, &nodes, radius, length, start, centre);
                    hulls.push((name.clone(), rigid_hull.added_mass, rigid_hull.linear_drag));
                    let mut columns = Vec::new();
                    for &j in &state.path {
                        let (s_j, sd_j) = tree.subspace(j)?;
                        columns.push((j, s_j, sd_j));
                    }
                    let frame = Frame {
                        rotation: state.rotation,
                        position: state.position,
                        velocity: state.velocity,
                        bias: state.bias_acceleration,
                    };
                    hydrodynamics::immerse(dag, name, &rigid_hull, &nodes, &frame, &columns, &mut water_rows);
                }
            }
        }
        rows.elastic_energy.extend(water_potential);
        let dissipation = dag.add(dissipation);
        Ok(WaterOutputs { force: drag, dissipation: Some(dissipation), hulls })
    }
}

/// Thrusters: the generalized force of a unit thrust, S_j . (c x d; d) along the path of the
/// carrying body, with c the point of attack and d the direction in the world (the
/// configuration matrix of eqs 35-37).
pub(super) fn thruster_columns(dag: &mut Dag, tree: &Tree) -> Result<Vec<Vec<NodeId>>, String> {
    let (n, zero) = (tree.coordinates(), tree.zero);
    let (robot, states) = (tree.robot, tree.states);
    let mut thruster_columns = Vec::new();
    for thruster in &robot.thrusters {
        let (index, point) = thruster_point(dag, tree, thruster)?;
        let state = &states[index];
        let point = dag.pin3(point, &format!("{}_point", thruster.name));
        let along = dag.constant3(thruster.direction);
        let direction = dag.mat_vec3(&state.rotation, &along);
        let direction = dag.pin3(direction, &format!("{}_direction", thruster.name));
        let wrench = Force { n: dag.cross3(&point, &direction), f: direction };
        let mut column = vec![zero; n];
        for &j in &state.path {
            let (s_j, _) = tree.subspace(j)?;
            column[j] = dag.force_dot_motion(&wrench, &s_j);
        }
        thruster_columns.push(column);
    }

    Ok(thruster_columns)
}

/// A thruster's carrying link (its index) and its point of attack in the world.
pub(super) fn thruster_point(dag: &mut Dag, tree: &Tree, thruster: &Thruster) -> Result<(usize, Vec3), String> {
    let index = tree
        .links
        .iter()
        .position(|l| l.body == Some(thruster.body))
        .ok_or("a thruster on a body that is not a link")?;
    let state = &tree.states[index];
    let mut local = [tree.zero; 3];
    for (a, e) in thruster.position.iter().enumerate() {
        local[a] = tree.reader.node(dag, &from_expr(e))?;
    }
    let offset = dag.mat_vec3(&state.rotation, &local);
    Ok((index, dag.add3(&state.position, &offset)))
}
