//! Water on a robot's hulls: the drag, its dissipation function, each rigid hull's added
//! mass and linear drag.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// A swimming robot's water terms beyond M, C and G: the drag's generalized force and its
/// dissipation function, and each rigid hull's added mass and linear drag. Empty for robots
/// in air.
pub(super) fn water(
    equations: &Equations,
    params: &[Ident],
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let Some(dissipation) = equations.hydrodynamic_dissipation else { return (TokenStream::new(), TokenStream::new()) };
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let force_body = kernel(&per_coordinate(dag, &equations.hydrodynamic_force, false));
    let dissipation_body = kernel(&[(quote!(let dissipation), dissipation)]);
    // The drag's tangents, for the system Jacobian (once the derivative stage has run).
    let (tangent_fns, tangent_impl) = match &equations.derivatives {
        None => (TokenStream::new(), TokenStream::new()),
        Some(derivatives) => {
            let position_body = kernel(&per_coordinate(dag, &derivatives.hydrodynamic_position, false));
            let velocity_body = kernel(&per_coordinate(dag, &derivatives.hydrodynamic_velocity, false));
            (
                quote! {
                    /// The drag's generalized force along a direction `dq` of the coordinates
                    /// (its Jacobian-vector product), differentiated in the expression DAG.
                    #[inline]
                    #[allow(unused_variables)]
                    pub fn hydrodynamic_force_position_tangent_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) {
                        *out = SVector::zeros();
                        #position_body
                    }

                    /// The drag's generalized force along a direction `dqd` of the rates.
                    #[inline]
                    #[allow(unused_variables)]
                    pub fn hydrodynamic_force_velocity_tangent_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, dqd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) {
                        *out = SVector::zeros();
                        #velocity_body
                    }
                },
                quote! {
                    fn hydrodynamic_force_position_tangent_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { hydrodynamic_force_position_tangent_into(q, qd, dq, p, k, out) }
                    fn hydrodynamic_force_velocity_tangent_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, dqd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { hydrodynamic_force_velocity_tangent_into(q, qd, dqd, p, k, out) }
                },
            )
        }
    };
    let empty = HashMap::new();
    // Marine order (surge, sway, heave, roll, pitch, yaw) from the [w; v] of the DAG.
    let marine = [3, 4, 5, 0, 1, 2];
    let matrix_body = |pick: &dyn Fn(&(String, Articulated, Articulated)) -> Articulated| {
        let arms = equations.hulls.iter().enumerate().map(|(h, hull)| {
            let m = pick(hull);
            let mut outputs = Vec::new();
            for (r, &a) in marine.iter().enumerate() {
                for (c, &b) in marine.iter().enumerate() {
                    if dag.constant(m.e[a][b]) != Some(0.0) {
                        let (lr, lc) = (idx(r), idx(c));
                        outputs.push((quote!(out[(#lr, #lc)]), m.e[a][b]));
                    }
                }
            }
            let statements = body(dag, params, &empty, &outputs, CacheUse::Read);
            let lh = idx(h);
            quote!(#lh => { #statements })
        });
        quote! {
            let mut out = SMatrix::<f64, 6, 6>::zeros();
            match index {
                #(#arms)*
                _ => return None,
            }
            Some(out)
        }
    };
    let added_body = matrix_body(&|h| h.1);
    let drag_body = matrix_body(&|h| h.2);
    let names = equations.hulls.iter().map(|h| h.0.as_str());
    let count = idx(equations.hulls.len());
    let items = quote! {
        /// The rigid bodies with a hull, in the order [`hull_added_mass`] and
        /// [`hull_linear_drag`] index them.
        pub const HULLS: [&str; #count] = [#(#names),*];

        /// Added mass of a rigid body's hull about its frame's origin, in its axes, in the
        /// marine order (surge, sway, heave, roll, pitch, yaw): eq 30 of 004, symmetric.
        #[inline]
        #[allow(unused_variables, unused_mut)]
        pub fn hull_added_mass(index: usize, p: &Params) -> Option<SMatrix<f64, 6, 6>> {
            #added_body
        }

        /// Linear drag of a rigid body's hull (force per velocity, same frame and order):
        /// eq 32 of 004.
        #[inline]
        #[allow(unused_variables, unused_mut)]
        pub fn hull_linear_drag(index: usize, p: &Params) -> Option<SMatrix<f64, 6, 6>> {
            #drag_body
        }

        /// Generalized force of the water's drag on every hull, linear and quadratic
        /// cross-flow (add it to the applied forces).
        #[inline]
        #[allow(unused_variables)]
        pub fn hydrodynamic_force_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) {
            *out = SVector::zeros();
            #force_body
        }

        /// The drag's dissipation function R(q, qd) >= 0, whose -dR/dqd is
        /// [`hydrodynamic_force_into`]: 1/2 v' D v per hull and k |u|^3 / 3 per strip.
        #[inline]
        #[allow(unused_variables)]
        pub fn hydrodynamic_dissipation(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> f64 {
            #dissipation_body
            dissipation
        }

        #tangent_fns
    };
    let implementation = quote! {
        const IN_WATER: bool = true;
        fn hydrodynamic_force_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { hydrodynamic_force_into(q, qd, p, k, out) }
        fn hydrodynamic_dissipation(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> f64 { hydrodynamic_dissipation(q, qd, p, k) }
        #tangent_impl
    };
    (items, implementation)
}
