//! A soft robot's sections: their data, centre lines, damping and elastic stiffness.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// A robot's soft sections: what they are (coordinates, mount, geometry) for gaits and
/// drawings, their centre lines, and the damping and elasticity of their coordinates. Empty
/// for rigid robots.
pub(super) fn soft_sections(
    robot: &Robot,
    equations: &Equations,
    params: &[Ident],
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let sections: Vec<_> = robot.bodies.iter().filter_map(|b| b.section.as_ref().map(|s| (b, s))).collect();
    if sections.is_empty() {
        return (TokenStream::new(), TokenStream::new());
    }
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let empty = HashMap::new();
    let infos = sections.iter().map(|(body, section)| {
        let name = &body.name;
        let first = idx(section.first_coordinate);
        let count = idx(section.coordinates);
        // The rotation the tree uses, rounding residue (cos(pi / 2)) shown as the zero it is.
        let mount = crate::symbolic::local::fixed_rotation(body.rotation, robot.plane_normal()).map(|row| {
            let row = row.map(|v| float(if v.abs() < 1e-15 { 0.0 } else { v }));
            quote!([#(#row),*])
        });
        quote!(SoftSectionInfo { name: #name, first_coordinate: #first, coordinates: #count, mount: [#(#mount),*] },)
    });
    let geometries = sections.iter().map(|(_, s)| match &s.kind {
        SectionKind::Extensible { actuator_radius, actuator_angles } => {
            let (l0, r) = (spec_expression(&s.rest_length), spec_expression(actuator_radius));
            let angles = actuator_angles.iter().map(spec_expression);
            quote!(Some(SectionGeometry { rest_length: #l0, actuator_radius: #r, actuator_angles: [#(#angles),*] }),)
        }
        _ => quote!(None,),
    });
    let count = idx(sections.len());
    let points = idx(equations.centre_line.len());
    let mut centre_outputs = Vec::new();
    for (k, point) in equations.centre_line.iter().enumerate() {
        for (a, &id) in point.iter().enumerate() {
            let (lk, la) = (idx(k), idx(a));
            centre_outputs.push((quote!(out[#lk][#la]), id));
        }
    }
    let centre_body = kernel(&centre_outputs);
    let segments = crate::algorithms::recursive::CENTRE_LINE_SEGMENTS;
    let centre_doc = doc(&format!(
        "Points along each soft section's centre line at xi = k / {segments}, k = 0 ..= {segments}, section by section (for drawing)."
    ));
    let damping_body = body(dag, params, &empty, &per_coordinate(dag, &equations.damping, false), CacheUse::Read);
    let slope_body = body(dag, params, &empty, &per_coordinate(dag, &equations.damping_slope, true), CacheUse::Read);
    let stiffness_body = body(dag, params, &empty, &per_coordinate(dag, &equations.stiffness, true), CacheUse::Read);
    let items = quote! {
        /// Number of soft sections.
        pub const SECTIONS: usize = #count;

        /// The soft sections: coordinates and mount on their parent.
        pub const SOFT_SECTIONS: [SoftSectionInfo; SECTIONS] = [#(#infos)*];

        /// Each soft section's actuator geometry (extensible sections), for gaits that set
        /// actuator lengths.
        #[inline]
        #[allow(unused_variables)]
        pub fn section_geometry(p: &Params) -> [Option<SectionGeometry>; SECTIONS] {
            [#(#geometries)*]
        }

        /// Number of points [`centre_line_into`] writes.
        pub const CENTRE_LINE_POINTS: usize = #points;

        #centre_doc
        #[inline]
        #[allow(unused_variables)]
        pub fn centre_line_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CENTRE_LINE_POINTS]) {
            #centre_body
        }

        /// Viscous damping force of the soft sections' coordinates: D qd, plus the actuator
        /// material's power-law viscosity where it has one.
        #[inline]
        #[allow(unused_variables)]
        pub fn damping_into(qd: &SVector<f64, DOF>, p: &Params, out: &mut SVector<f64, DOF>) {
            *out = SVector::zeros();
            #damping_body
        }

        /// d(damping)/d(qd): the damping's Jacobian (diagonal), for implicit integrators.
        #[inline]
        #[allow(unused_variables)]
        pub fn damping_jacobian_into(qd: &SVector<f64, DOF>, p: &Params, out: &mut SMatrix<f64, DOF, DOF>) {
            *out = SMatrix::zeros();
            #slope_body
        }

        /// Elastic stiffness (the elastic part of dG/dq, diagonal).
        #[inline]
        #[allow(unused_variables)]
        pub fn elastic_stiffness_into(q: &SVector<f64, DOF>, p: &Params, out: &mut SMatrix<f64, DOF, DOF>) {
            *out = SMatrix::zeros();
            #stiffness_body
        }
    };
    let implementation = quote! {
        fn damping_into(qd: &SVector<f64, DOF>, p: &Params, out: &mut SVector<f64, DOF>) { damping_into(qd, p, out) }
        fn elastic_stiffness_into(q: &SVector<f64, DOF>, p: &Params, out: &mut SMatrix<f64, DOF, DOF>) { elastic_stiffness_into(q, p, out) }
        fn damping_jacobian_into(qd: &SVector<f64, DOF>, p: &Params, out: &mut SMatrix<f64, DOF, DOF>) { damping_jacobian_into(qd, p, out) }
    };
    (items, implementation)
}
