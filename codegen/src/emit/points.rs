//! The contact points' kernels: positions, velocities, axes and Jacobians (rigid robots'
//! per point, soft robots' from their frames in the runtime).

// The emitter's types, helpers and imports, shared by its files.
use super::*;

/// Rigid robots' per-point Jacobians (through their frame's Jacobian where a frame carries
/// several points) and the arms of `contact_jacobian_into` that call them.
pub(super) fn contact_jacobians(kernels: &Kernels, robot: &Robot, equations: &Equations) -> (TokenStream, TokenStream) {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let column_outputs = |cols: &[Vec<NodeId>]| kernels.column_outputs(cols);
    let positions: Vec<Vec<NodeId>> = equations.contact_positions.iter().map(|v| v.to_vec()).collect();
    let jacobians: Vec<Vec<Vec<NodeId>>> =
        equations.contact_jacobians.iter().map(|cols| cols.iter().map(|col| col.to_vec()).collect()).collect();
    let mut jacobian_fns = TokenStream::new();
    let mut jacobian_arms = TokenStream::new();
    // Frames carrying more than one point (skin rings, bodies with several points) get one
    // Jacobian function of the point's position, which each point's function calls.
    let points_on_frame = equations.points_on_frame();

    for (f, frame) in equations.contact_frames.iter().enumerate() {
        if points_on_frame[f] < 2 || equations.frame_motion {
            continue;
        }
        let name = format_ident!("frame_jacobian_{}", f);
        let cols: Vec<Vec<NodeId>> = frame.columns.iter().map(|c| c.to_vec()).collect();
        let body = kernel(&column_outputs(&cols));
        let d = doc(&format!("Jacobian of the point at world position `point` fixed to `{}`.", frame.name));
        jacobian_fns.extend(quote! {
            #d
            #[inline]
            #[allow(unused_variables)]
            pub fn #name(point: &Vector3<f64>, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
                *out = SMatrix::zeros();
                #body
            }
        });
    }
    // Soft robots' points take their Jacobians, velocities and axes from their frames in the
    // runtime (`softgen_runtime::frame_point_jacobian_into` and its kin): no per-point code.
    for (k, cols) in jacobians.iter().enumerate().filter(|_| !equations.frame_motion) {
        let name = format_ident!("contact_jacobian_{}", k);
        let point = &robot.contact_points[k];
        let d = doc(&format!("Jacobian of contact point `{}` (on `{}`).", point.name, robot.bodies[point.body].name));
        let frame = equations.contact_frame_of[k];
        let body = if points_on_frame[frame] < 2 {
            let body = kernel(&column_outputs(cols));
            quote!(*out = SMatrix::zeros(); #body)
        } else {
            let at = &positions[k];
            let body = kernel(&[(quote!(let x), at[0]), (quote!(let y), at[1]), (quote!(let z), at[2])]);
            let frame_fn = format_ident!("frame_jacobian_{}", frame);
            quote!(#body #frame_fn(&Vector3::new(x, y, z), q, p, cache, out);)
        };
        jacobian_fns.extend(quote! {
            #d
            #[inline]
            #[allow(unused_variables)]
            pub fn #name(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
                #body
            }
        });
        let lk = idx(k);
        jacobian_arms.extend(quote!(#lk => #name(q, p, cache, out),));
    }
    (jacobian_fns, jacobian_arms)
}

/// The contact points' velocities, axes and Jacobians: rigid robots' kernels, or soft
/// robots' from their frames in the runtime.
pub(super) fn contact_point_kernels(
    kernels: &Kernels,
    robot: &Robot,
    equations: &Equations,
) -> (TokenStream, TokenStream) {
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let velocities: Vec<Vec<NodeId>> = equations.contact_velocities.iter().map(|v| v.to_vec()).collect();
    let axes: Vec<Vec<NodeId>> = equations.contact_axes.iter().map(|v| v.to_vec()).collect();

    if equations.frame_motion {
        (
            TokenStream::new(),
            quote! {
                fn contact_velocities_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { softgen_runtime::frame_point_velocities_into::<Self, DOF, CONTACTS>(q, qd, p, k, out) }
                fn contact_axes_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { softgen_runtime::frame_point_axes_into::<Self, DOF, CONTACTS>(q, p, k, out) }
                fn contact_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 3, DOF>) { softgen_runtime::frame_point_jacobian_into::<Self, DOF, CONTACTS>(index, q, p, k, out) }
            },
        )
    } else {
        let (jacobian_fns, jacobian_arms) = contact_jacobians(kernels, robot, equations);
        let velocities_body = kernel(&per_point(&velocities));
        let axes_body = kernel(&per_point(&axes));
        (
            quote! {
                /// World velocities of the contact points.
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_velocities_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                    #velocities_body
                }

                /// World x axis of the body carrying each contact point.
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_axes_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                    #axes_body
                }

                #jacobian_fns

                /// Jacobian of contact point `index`; an index past the last point gives zeros.
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
                    match index {
                        #jacobian_arms
                        _ => *out = SMatrix::zeros(),
                    }
                }
            },
            quote! {
                fn contact_velocities_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_velocities_into(q, qd, p, k, out) }
                fn contact_axes_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_axes_into(q, p, k, out) }
                fn contact_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 3, DOF>) { contact_jacobian_into(index, q, p, k, out) }
            },
        )
    }
}

/// With frames shared by several points (skin rings), the points in contact ask for their
/// own axes instead of every point's.
pub(super) fn contact_axis(kernels: &Kernels, equations: &Equations) -> (TokenStream, TokenStream) {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let axes: Vec<Vec<NodeId>> = equations.contact_axes.iter().map(|v| v.to_vec()).collect();
    let points_on_frame = equations.points_on_frame();

    if points_on_frame.iter().all(|&c| c < 2) || equations.frame_motion {
        (TokenStream::new(), TokenStream::new())
    } else {
        let mut arms = TokenStream::new();
        for (k, axis) in axes.iter().enumerate() {
            let body = kernel(&[(quote!(let x), axis[0]), (quote!(let y), axis[1]), (quote!(let z), axis[2])]);
            let lk = idx(k);
            arms.extend(quote!(#lk => { #body Vector3::new(x, y, z) }));
        }
        (
            quote! {
                /// The x axis of the frame carrying contact point `index` (zero past the last).
                #[inline]
                #[allow(unused_variables)]
                pub fn contact_axis(index: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> Vector3<f64> {
                    match index {
                        #arms
                        _ => Vector3::zeros(),
                    }
                }
            },
            quote! {
                fn contact_kinematics_into(indices: &[usize], q: &SVector<f64, DOF>, p: &Params, k: &Cache, jacobians: &mut [SMatrix<f64, 3, DOF>], axes: &mut [Vector3<f64>]) {
                    for ((&index, jacobian), axis) in indices.iter().zip(jacobians.iter_mut()).zip(axes.iter_mut()) {
                        contact_jacobian_into(index, q, p, k, jacobian);
                        *axis = contact_axis(index, q, p, k);
                    }
                }
            },
        )
    }
}
