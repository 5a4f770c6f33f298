//! What the view draws: each section's centre line and the bodies' and thrusters' frames.

// The passes' types and imports, shared by their files.
use super::*;

/// What a viewer draws: each spec body's world frames, parents first (a rigid body's own
/// frame; a soft section's frames along its centre line at xi = k / CENTRE_LINE_SEGMENTS,
/// base to tip, whose positions are also the centre line), and each thruster's point.
pub(super) fn drawing(dag: &mut Dag, tree: &Tree) -> Result<(Vec<Vec3>, Drawing), String> {
    let (robot, links, states, pieces) = (tree.robot, tree.links, tree.states, tree.pieces);
    let mut centre_line = Vec::new();
    let mut drawing = Drawing::default();
    // The drawn body of each link (virtual links draw nothing).
    let mut drawn_of_link: Vec<Option<usize>> = vec![None; links.len()];
    for (index, (link, state)) in links.iter().zip(states).enumerate() {
        // A virtual link's parent chain is followed up to the nearest drawn body.
        let mut above = link.parent;
        let parent = loop {
            match above {
                None => break None,
                Some(a) => match drawn_of_link[a] {
                    Some(d) => break Some(d),
                    None => above = links[a].parent,
                },
            }
        };
        let Some(body) = link.body else {
            continue;
        };
        let first_frame = drawing.frames.len();
        let section = match &state.section {
            Some(section) => {
                let pieces = pieces.as_ref().ok_or("a soft section without its local pieces")?;
                for k in 0..=CENTRE_LINE_SEGMENTS {
                    let xi = k as f64 / CENTRE_LINE_SEGMENTS as f64;
                    let label = format!("{}_centre{k}", link.name);
                    let station = section.frame.station(dag, pieces, xi, &label, false)?;
                    centre_line.push(station.position);
                    drawing.frames.push((station.rotation, station.position));
                }
                // Its index among the spec's sections, as `SOFT_SECTIONS` lists them.
                Some(robot.bodies[..body].iter().filter(|b| b.section.is_some()).count())
            }
            None => {
                drawing.frames.push((state.rotation, state.position));
                None
            }
        };
        drawn_of_link[index] = Some(drawing.bodies.len());
        drawing.bodies.push(DrawnBody {
            body,
            parent,
            section,
            first_frame,
            frames: drawing.frames.len() - first_frame,
        });
    }
    for thruster in &robot.thrusters {
        let (index, point) = thruster_point(dag, tree, thruster)?;
        let drawn = drawn_of_link[index].ok_or("a thruster on a body that is not drawn")?;
        drawing.thruster_points.push((drawn, point));
    }

    Ok((centre_line, drawing))
}
