//! Markers: the world positions and Jacobians of the tracked points a spec declares
//! (`[[markers]]`), each its own kernel, so a measurement model pays for the markers it
//! reads and nothing else does.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// `MARKERS`, `marker_position` and `marker_jacobian_into`, and their `Model` items; nothing
/// for a robot without markers (the trait's defaults say it has none).
pub(super) fn markers(
    robot: &Robot,
    equations: &Equations,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> Result<(TokenStream, TokenStream), String> {
    if robot.markers.is_empty() {
        return Ok((TokenStream::new(), TokenStream::new()));
    }
    if equations.marker_positions.len() != robot.markers.len() {
        return Err(format!(
            "{} markers in the spec but {} derived (the expanded oracle derives none)",
            robot.markers.len(),
            equations.marker_positions.len()
        ));
    }
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let infos = robot.markers.iter().map(|m| {
        let (name, body) = (&m.name, &robot.bodies[m.body].name);
        quote!(ContactPointInfo { name: #name, body: #body },)
    });
    let count = idx(robot.markers.len());
    let mut position_arms = TokenStream::new();
    let mut jacobian_fns = TokenStream::new();
    let mut jacobian_arms = TokenStream::new();
    for (k, marker) in robot.markers.iter().enumerate() {
        let lk = idx(k);
        let at = &equations.marker_positions[k];
        let body = kernel(&[(quote!(let x), at[0]), (quote!(let y), at[1]), (quote!(let z), at[2])]);
        position_arms.extend(quote!(#lk => { #body Vector3::new(x, y, z) }));
        let mut outputs = Vec::new();
        for (j, column) in equations.marker_jacobians[k].iter().enumerate() {
            for (row, &id) in column.iter().enumerate() {
                if equations.dag.constant(id) != Some(0.0) {
                    let (lr, lj) = (idx(row), idx(j));
                    outputs.push((quote!(out[(#lr, #lj)]), id));
                }
            }
        }
        let body = kernel(&outputs);
        let name = format_ident!("marker_jacobian_{}", k);
        let d = doc(&format!("Jacobian of marker `{}` (on `{}`).", marker.name, robot.bodies[marker.body].name));
        jacobian_fns.extend(quote! {
            #d
            #[inline]
            #[allow(unused_variables)]
            pub fn #name(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
                *out = SMatrix::zeros();
                #body
            }
        });
        jacobian_arms.extend(quote!(#lk => #name(q, p, cache, out),));
    }
    let items = quote! {
        /// Number of markers.
        pub const MARKER_COUNT: usize = #count;

        /// The markers in spec order: tracked points that never touch anything.
        pub const MARKERS: [ContactPointInfo; MARKER_COUNT] = [#(#infos)*];

        /// World position of marker `index`; an index past the last marker gives zeros.
        #[inline]
        #[allow(unused_variables)]
        pub fn marker_position(index: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> Vector3<f64> {
            match index {
                #position_arms
                _ => Vector3::zeros(),
            }
        }

        #jacobian_fns

        /// Jacobian of marker `index`; an index past the last marker gives zeros.
        #[inline]
        #[allow(unused_variables)]
        pub fn marker_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
            match index {
                #jacobian_arms
                _ => *out = SMatrix::zeros(),
            }
        }
    };
    let implementation = quote! {
        const MARKERS: &'static [ContactPointInfo] = &MARKERS;
        fn marker_position(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { marker_position(index, q, p, k) }
        fn marker_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 3, DOF>) { marker_jacobian_into(index, q, p, k, out) }
    };
    Ok((items, implementation))
}
