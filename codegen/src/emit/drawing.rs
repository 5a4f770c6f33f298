//! What a viewer draws of a robot: its bodies, their world frames and their radii.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// The robot as a viewer draws it: `BODIES` (parents first), `DRAWING_FRAMES` world frames
/// (a rigid body's own frame; a soft section's along its centre line; each thruster's point
/// with its body's rotation), and each body's drawing radius. Every robot has them.
pub(super) fn drawing(
    robot: &Robot,
    equations: &Equations,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let drawing = &equations.drawing;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let option = |i: Option<usize>| match i {
        None => quote!(None),
        Some(i) => {
            let i = idx(i);
            quote!(Some(#i))
        }
    };
    let infos = drawing.bodies.iter().map(|b| {
        let name = &robot.bodies[b.body].name;
        let (parent, section) = (option(b.parent), option(b.section));
        let (first, frames) = (idx(b.first_frame), idx(b.frames));
        quote!(softgen_runtime::BodyDrawing { name: #name, parent: #parent, section: #section, first_frame: #first, frames: #frames },)
    });
    let mut outputs = Vec::new();
    let mut push_frame = |k: usize, rotation: &[[NodeId; 3]; 3], position: &[NodeId; 3]| {
        let lk = idx(k);
        for (a, row) in rotation.iter().enumerate() {
            for (b, &id) in row.iter().enumerate() {
                let (la, lb) = (idx(a), idx(b));
                outputs.push((quote!(out[#lk].rotation[(#la, #lb)]), id));
            }
        }
        for (a, &id) in position.iter().enumerate() {
            let la = idx(a);
            outputs.push((quote!(out[#lk].position[#la]), id));
        }
    };
    for (k, (rotation, position)) in drawing.frames.iter().enumerate() {
        push_frame(k, rotation, position);
    }
    let mut thruster_frames = Vec::new();
    for (drawn, point) in &drawing.thruster_points {
        let k = drawing.frames.len() + thruster_frames.len();
        let body_frame = drawing.bodies[*drawn].first_frame;
        push_frame(k, &drawing.frames[body_frame].0, point);
        thruster_frames.push(idx(k));
    }
    let frames_body = kernel(&outputs);
    let frame_count = idx(drawing.frames.len() + thruster_frames.len());
    let geometries = drawing.bodies.iter().map(|b| {
        let radius = radius(robot, b.body);
        let chambers = match chambers(robot, b.body) {
            None => quote!(None),
            Some((r, angles)) => {
                let angles = angles.iter().map(spec_expression);
                quote!(Some((#r, [#(#angles),*])))
            }
        };
        quote!(softgen_runtime::BodyGeometry { radius: #radius, chambers: #chambers })
    });
    let body_count = idx(drawing.bodies.len());
    let items = quote! {
        /// Number of bodies [`BODIES`] lists.
        pub const BODY_COUNT: usize = #body_count;

        /// The robot's bodies, parents first, as a viewer draws them: a rigid body by its
        /// frame, a soft section by frames along its centre line, base to tip.
        pub const BODIES: [softgen_runtime::BodyDrawing; BODY_COUNT] = [#(#infos)*];

        /// Number of frames [`drawing_frames_into`] writes.
        pub const DRAWING_FRAMES: usize = #frame_count;

        /// The frame of each thruster's point of attack (its body's rotation).
        pub const THRUSTER_DRAWING_FRAMES: &[usize] = &[#(#thruster_frames),*];

        /// World frames for drawing: each body's (see [`BODIES`]), then each thruster's point.
        #[inline]
        #[allow(unused_variables)]
        pub fn drawing_frames_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [softgen_runtime::FramePose; DRAWING_FRAMES]) {
            #frames_body
        }

        /// Each body's drawn size as the spec gives it: its radius (a section's skin, a
        /// hull, a section's slices as discs; 0 where the spec gives none, and a rigid body
        /// is then drawn to reach its joints and contact points) and a section's chambers.
        #[inline]
        #[allow(unused_variables)]
        pub fn drawing_geometry(p: &Params) -> [softgen_runtime::BodyGeometry; BODY_COUNT] {
            [#(#geometries),*]
        }
    };
    let implementation = quote! {
        const BODIES: &'static [softgen_runtime::BodyDrawing] = &BODIES;
        const DRAWING_FRAMES: usize = DRAWING_FRAMES;
        const THRUSTER_DRAWING_FRAMES: &'static [usize] = THRUSTER_DRAWING_FRAMES;
        fn drawing_frames_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [softgen_runtime::FramePose]) {
            if let Ok(out) = <&mut [softgen_runtime::FramePose; DRAWING_FRAMES]>::try_from(out) {
                drawing_frames_into(q, p, k, out);
            }
        }
        fn drawing_geometry_into(p: &Params, out: &mut [softgen_runtime::BodyGeometry]) {
            for (out, geometry) in out.iter_mut().zip(drawing_geometry(p)) {
                *out = geometry;
            }
        }
    };
    (items, implementation)
}

/// A body's drawing radius: a section's skin radius (its first skin point's), else its
/// hull's, else its slices' disc radius (slice inertia r^2 / 2 per unit mass about the
/// centre line); a rigid body's hull radius, else 0.
fn radius(robot: &Robot, body: usize) -> TokenStream {
    let skin = robot.contact_points.iter().filter(|c| c.body == body).find_map(|c| c.skin.as_ref());
    let spec = &robot.bodies[body];
    match (skin, &spec.hull, &spec.section) {
        (Some(skin), _, _) => spec_expression(&skin.radius),
        (None, Some(hull), _) => spec_expression(&hull.radius),
        (None, None, Some(section)) => {
            let inertia = spec_expression(&section.slice_inertia[0]);
            quote!((2.0 * (#inertia)).max(0.0).sqrt())
        }
        (None, None, None) => float(0.0),
    }
}

/// A section's chambers: their distance from the centre line and their angles about its x
/// axis from +y (an extensible section's actuators, or the muscles of a bank on it).
fn chambers(robot: &Robot, body: usize) -> Option<(TokenStream, [Expr; 3])> {
    let spec = &robot.bodies[body];
    if let Some(SectionKind::Extensible { actuator_radius, actuator_angles }) = spec.section.as_ref().map(|s| &s.kind) {
        return Some((spec_expression(actuator_radius), actuator_angles.clone()));
    }
    robot
        .muscles
        .iter()
        .filter(|bank| bank.body == spec.name)
        .find_map(|bank| bank.placement.as_ref())
        .map(|(radius, angles)| (spec_expression(radius), angles.clone()))
}
