//! The dynamics' kernels: M, C qd, C and G, forward dynamics (by the articulated-body
//! algorithm or M's solve), the articulated factorisation, the inverse dynamics'
//! derivatives, the potential energy and the whole-robot quantities.

// The emitter's types, helpers and imports, shared by its files.
use super::*;

/// M, C qd, C and G, and the three together.
pub(super) fn dynamics(kernels: &Kernels, equations: &Equations) -> TokenStream {
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let (mass_matrix, coriolis) = (&equations.mass_matrix, &equations.coriolis);
    let (coriolis_matrix, gravity) = (&equations.coriolis_matrix, &equations.gravity);
    let mass_body = kernel(&kernels.matrix_outputs(quote!(out), mass_matrix, true));
    let coriolis_body = kernel(&kernels.vector_outputs(quote!(out), coriolis));
    let coriolis_matrix_body = kernel(&kernels.matrix_outputs(quote!(out), coriolis_matrix, false));
    let gravity_body = kernel(&kernels.vector_outputs(quote!(out), gravity));
    quote! {
        /// Mass matrix M(q).
        #[inline]
        #[allow(unused_variables)]
        pub fn mass_matrix_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, DOF, DOF>) {
            *out = SMatrix::zeros();
            #mass_body
        }

        /// Coriolis and centrifugal force C(q, qd) qd.
        #[inline]
        #[allow(unused_variables)]
        pub fn coriolis_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) {
            *out = SVector::zeros();
            #coriolis_body
        }

        /// Coriolis matrix C(q, qd) from the Christoffel symbols of M.
        #[inline]
        #[allow(unused_variables)]
        pub fn coriolis_matrix_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, DOF, DOF>) {
            *out = SMatrix::zeros();
            #coriolis_matrix_body
        }

        /// Generalized gravity force G(q) = dV/dq.
        #[inline]
        #[allow(unused_variables)]
        pub fn gravity_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) {
            *out = SVector::zeros();
            #gravity_body
        }

        /// M, C qd and G together, all three from the one cache.
        #[inline]
        #[allow(unused_variables)]
        pub fn dynamics_into(
            q: &SVector<f64, DOF>,
            qd: &SVector<f64, DOF>,
            p: &Params,
            cache: &Cache,
            mass_matrix: &mut SMatrix<f64, DOF, DOF>,
            coriolis: &mut SVector<f64, DOF>,
            gravity: &mut SVector<f64, DOF>,
        ) {
            // Everything the three share is in the cache, so calling them loses nothing.
            mass_matrix_into(q, p, cache, mass_matrix);
            coriolis_into(q, qd, p, cache, coriolis);
            gravity_into(q, p, cache, gravity);
        }
    }
}

/// Forward dynamics by the articulated-body algorithm, where the equations have it.
pub(super) fn forward_dynamics(kernels: &Kernels, equations: &Equations, n: usize) -> (TokenStream, TokenStream) {
    let (dag, mass_matrix) = (kernels.dag, &equations.mass_matrix);
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let vector_outputs = |target: TokenStream, v: &[NodeId]| kernels.vector_outputs(target, v);
    let without_cache = |outputs: &[(TokenStream, NodeId)]| kernels.without_cache(outputs);

    match &equations.articulated {
        // Without the articulated-body algorithm, forward dynamics solves with M: by its
        // factorisation unrolled for the robot's zeros, where that is not too long.
        None => mass_matrix_solve(n, |i, j| {
            dag.constant(mass_matrix[i][j]) != Some(0.0) || dag.constant(mass_matrix[j][i]) != Some(0.0)
        }),
        Some(articulated) => {
            let mut outputs = vector_outputs(quote!(out), &articulated.accelerations);
            for (k, &pivot) in articulated.pivots.iter().enumerate() {
                let lk = idx(k);
                outputs.push((quote!(pivots[#lk]), pivot));
            }
            let forward_body = kernel(&outputs);
            let pivot_count = idx(articulated.pivots.len());
            let (alone_fn, alone_impl) = match without_cache(&outputs) {
                None => (TokenStream::new(), TokenStream::new()),
                Some(alone_body) => (
                    quote! {
                        /// [`forward_dynamics_into`] from the state alone, with no cache: the sines
                        /// and cosines it reads are computed here and the poses and inertias inline,
                        /// so nothing only other kernels read is computed or stored. For forward
                        /// dynamics on its own (a rollout without contact); where contact kernels
                        /// share the state's cache, [`cache`] and [`forward_dynamics_into`] are the
                        /// faster pair. Same expressions, same results.
                        #[inline]
                        #[allow(unused_variables)]
                        pub fn forward_dynamics_without_cache_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, out: &mut SVector<f64, DOF>) -> bool {
                            *out = SVector::zeros();
                            let mut pivots = [0.0f64; #pivot_count];
                            #alone_body
                            pivots.iter().all(|&d| d > 0.0 && d.is_finite()) && out.iter().all(|v| v.is_finite())
                        }
                    },
                    quote! {
                        fn forward_dynamics_without_cache_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, out: &mut SVector<f64, DOF>) -> bool { forward_dynamics_without_cache_into(q, qd, tau, p, out) }
                    },
                ),
            };
            (
                quote! {
                    /// Forward dynamics qdd = M^-1 (tau - C qd - G) by the articulated-body
                    /// algorithm, unrolled for this robot: O(n), nothing to factorise. Returns
                    /// false (and `out` is meaningless) where M is not positive definite, i.e. where
                    /// an articulated pivot is not positive.
                    #[inline]
                    #[allow(unused_variables)]
                    pub fn forward_dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SVector<f64, DOF>) -> bool {
                        *out = SVector::zeros();
                        let mut pivots = [0.0f64; #pivot_count];
                        #forward_body
                        pivots.iter().all(|&d| d > 0.0 && d.is_finite()) && out.iter().all(|v| v.is_finite())
                    }
                    #alone_fn
                },
                quote! {
                    fn forward_dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) -> bool { forward_dynamics_into(q, qd, tau, p, k, out) }
                    #alone_impl
                },
            )
        }
    }
}

/// The articulated-body factorisation of M beside the accelerations, where every
/// coordinate is a joint of a rigid tree: the runtime applies M^-1 to many columns with it.
pub(super) fn articulated_factor(kernels: &Kernels, equations: &Equations) -> (TokenStream, TokenStream) {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let vector_outputs = |target: TokenStream, v: &[NodeId]| kernels.vector_outputs(target, v);

    match &equations.articulated {
        Some(articulated) if articulated.joints.len() == articulated.accelerations.len() => {
            let mut outputs = vector_outputs(quote!(out), &articulated.accelerations);
            for (k, &pivot) in articulated.pivots.iter().enumerate() {
                let lk = idx(k);
                outputs.push((quote!(pivots[#lk]), pivot));
            }
            for (t, joint) in articulated.joints.iter().enumerate() {
                let lt = idx(t);
                outputs.extend(vector_outputs(quote!(factor.subspace[#lt]), &joint.subspace));
                outputs.extend(vector_outputs(quote!(factor.projected[#lt]), &joint.projected));
                outputs.push((quote!(factor.inverse_pivot[#lt]), joint.inverse_pivot));
            }
            let factor_body = kernel(&outputs);
            let pivot_count = idx(articulated.pivots.len());
            let (coordinates, parents) = joint_order(articulated.joints.iter().map(|j| (j.coordinate, j.parent)));
            (
                quote! {
                    /// [`forward_dynamics_into`] that also keeps the articulated-body
                    /// factorisation of M (each joint's S, U = I^A S and 1 / (S . U), parents
                    /// before children), with which the runtime applies M^-1 to many columns in
                    /// O(n) each. Returns false (and both outputs are meaningless) where M is not
                    /// positive definite.
                    #[inline]
                    #[allow(unused_variables)]
                    pub fn articulated_factor_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, cache: &Cache, factor: &mut softgen_runtime::ArticulatedFactor<DOF>, out: &mut SVector<f64, DOF>) -> bool {
                        *out = SVector::zeros();
                        factor.coordinate = [#(#coordinates),*];
                        factor.parent = [#(#parents),*];
                        factor.subspace = [[0.0; 6]; DOF];
                        factor.projected = [[0.0; 6]; DOF];
                        let mut pivots = [0.0f64; #pivot_count];
                        #factor_body
                        pivots.iter().all(|&d| d > 0.0 && d.is_finite()) && out.iter().all(|v| v.is_finite())
                    }
                },
                quote! {
                    const ARTICULATED_FACTOR: bool = true;
                    fn articulated_factor_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, k: &Cache, factor: &mut softgen_runtime::ArticulatedFactor<DOF>, out: &mut SVector<f64, DOF>) -> bool { articulated_factor_into(q, qd, tau, p, k, factor, out) }
                },
            )
        }
        _ => (TokenStream::new(), TokenStream::new()),
    }
}

/// The inverse dynamics' partial derivatives (the runtime's `Model` requires dID/dq), once
/// the derivative stage has run.
pub(super) fn inverse_dynamics_derivatives(
    kernels: &Kernels,
    equations: &Equations,
) -> Result<(TokenStream, TokenStream), String> {
    let Some(derivatives) = &equations.derivatives else {
        return Err("the derivative stage has not run: no inverse dynamics' derivatives to emit".into());
    };
    // Trees of rigid links: both matrices in closed form, in one kernel that shares
    // the composites between them.
    match (&equations.inverse_dynamics_derivatives, &derivatives.position_groups) {
        (Some(factored), _) => Ok(factored_derivatives(kernels, factored)),
        (None, None) => Err("the derivative stage gave neither dID/dq's closed form nor its groups".into()),
        // Soft robots: dID/dq in one kernel, a loop over each group's coordinates
        // (zeros of the other coordinates folded away), the values no direction
        // moves computed once, where a tangent per direction recomputes them n times.
        (None, Some(groups)) => Ok(position_derivative_groups(kernels, groups)),
    }
}

/// A soft robot's dID/dq, a loop over each group of coordinates that move the same bodies.
#[allow(clippy::type_complexity)]
pub(super) fn position_derivative_groups(
    kernels: &Kernels,
    groups: &[(Vec<usize>, Vec<NodeId>)],
) -> (TokenStream, TokenStream) {
    let (dag, params, cache, moves) = (kernels.dag, kernels.params, kernels.cache, &kernels.moves);
    let idx = |i: usize| Literal::usize_unsuffixed(i);

    let groups: Vec<DirectionGroup> = groups
        .iter()
        .map(|(coordinates, rows)| {
            let outputs = rows
                .iter()
                .enumerate()
                .filter(|&(_, &id)| dag.constant(id) != Some(0.0))
                .map(|(i, &id)| {
                    let li = idx(i);
                    (quote!(position[(#li, j)]), id)
                })
                .collect();
            (coordinates.clone(), outputs)
        })
        .collect();
    // Each group a function of its own where the kernel is large (see
    // `body_in_loops`): this is the longest kernel of a soft robot.
    let arguments = Arguments {
        function: format_ident!("inverse_dynamics_position_derivatives_into"),
        declarations: quote!(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, cache: &Cache, position: &mut SMatrix<f64, DOF, DOF>),
        names: quote!(q, qd, qdd, p, cache, position),
    };
    let (body, groups_fns) = body_in_loops(dag, &params, &cache, &moves, &groups, &HashMap::new(), Some(&arguments));
    (
        quote! {
            /// dID/dq at the given accelerations, row i being ID_i: column j
            /// the tangent of the Newton-Euler pass along q_j (differentiated in
            /// the expression DAG, in one loop per group of coordinates that
            /// move the same bodies).
            #[inline]
            #[allow(unused_variables)]
            pub fn inverse_dynamics_position_derivatives_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, cache: &Cache, position: &mut SMatrix<f64, DOF, DOF>) {
                *position = SMatrix::zeros();
                #body
            }

            #groups_fns
        },
        // dID/dqd = 2 C and the pair come from the trait's default
        // `inverse_dynamics_derivatives_into` around this kernel.
        quote! {
            fn inverse_dynamics_position_derivatives_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, k: &Cache, position: &mut SMatrix<f64, DOF, DOF>) { inverse_dynamics_position_derivatives_into(q, qd, qdd, p, k, position) }
        },
    )
}

/// A rigid tree's inverse dynamics derivatives in closed form: per-joint factors, and both
/// matrices unrolled (small trees) or multiplied out by the runtime.
pub(super) fn factored_derivatives(
    kernels: &Kernels,
    factored: &InverseDynamicsDerivatives,
) -> (TokenStream, TokenStream) {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let vector_outputs = |target: TokenStream, v: &[NodeId]| kernels.vector_outputs(target, v);
    let matrix_outputs =
        |target: TokenStream, m: &[Vec<NodeId>], symmetric: bool| kernels.matrix_outputs(target, m, symmetric);

    let mut outputs = Vec::new();
    for (t, joint) in factored.joints.iter().enumerate() {
        let lt = idx(t);
        let vectors = [
            (quote!(subspace), &joint.subspace),
            (quote!(rate), &joint.rate),
            (quote!(shift), &joint.shift),
            (quote!(projected), &joint.projected),
            (quote!(position_row), &joint.position_row),
            (quote!(position_column), &joint.position_column),
            (quote!(coriolis_row), &joint.coriolis_row),
            (quote!(coriolis_column), &joint.coriolis_column),
        ];
        for (field, nodes) in vectors {
            outputs.extend(vector_outputs(quote!(out.#field[#lt]), nodes));
        }
    }
    let body = kernel(&outputs);
    // Small trees: the entries unrolled; larger ones: the runtime multiplies out
    // the factors.
    let matrices_body = match &factored.matrices {
        Some((position, velocity)) => {
            let mut outputs = matrix_outputs(quote!(position), position, false);
            outputs.extend(matrix_outputs(quote!(velocity), velocity, false));
            let body = kernel(&outputs);
            quote! {
                *position = SMatrix::zeros();
                *velocity = SMatrix::zeros();
                #body
            }
        }
        None => quote! {
            let mut factors = softgen_runtime::InverseDynamicsFactors::default();
            inverse_dynamics_factors_into(q, qd, qdd, p, cache, &mut factors);
            factors.assemble_into(position, velocity);
        },
    };
    let (coordinates, parents) = joint_order(factored.joints.iter().map(|j| (j.coordinate, j.parent)));
    (
        quote! {
            /// The factors of the inverse dynamics' partial derivatives at the
            /// given accelerations, per joint: dID/dq by the analytical
            /// derivatives of Newton-Euler (Carpentier and Mansard 2018) over the
            /// composite quantities and dID/dqd = 2 C(q, qd), each entry two
            /// 6-vector products of these
            /// ([`softgen_runtime::InverseDynamicsFactors`]).
            #[inline]
            #[allow(unused_variables)]
            pub fn inverse_dynamics_factors_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut softgen_runtime::InverseDynamicsFactors<DOF>) {
                *out = softgen_runtime::InverseDynamicsFactors::default();
                out.coordinate = [#(#coordinates),*];
                out.parent = [#(#parents),*];
                #body
            }

            /// The partial derivatives of the inverse dynamics at the given
            /// accelerations, row i being ID_i: `position` = dID/dq and
            /// `velocity` = dID/dqd = 2 C(q, qd), the products of
            /// [`inverse_dynamics_factors_into`]'s factors.
            #[inline]
            #[allow(unused_variables)]
            pub fn inverse_dynamics_derivatives_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, cache: &Cache, position: &mut SMatrix<f64, DOF, DOF>, velocity: &mut SMatrix<f64, DOF, DOF>) {
                #matrices_body
            }
        },
        quote! {
            const INVERSE_DYNAMICS_FACTORS: bool = true;
            fn inverse_dynamics_position_derivatives_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, k: &Cache, position: &mut SMatrix<f64, DOF, DOF>) {
                let mut velocity = SMatrix::<f64, DOF, DOF>::zeros();
                inverse_dynamics_derivatives_into(q, qd, qdd, p, k, position, &mut velocity)
            }
            fn inverse_dynamics_factors_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut softgen_runtime::InverseDynamicsFactors<DOF>) { inverse_dynamics_factors_into(q, qd, qdd, p, k, out) }
            fn inverse_dynamics_derivatives_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, qdd: &SVector<f64, DOF>, p: &Params, k: &Cache, position: &mut SMatrix<f64, DOF, DOF>, velocity: &mut SMatrix<f64, DOF, DOF>) { inverse_dynamics_derivatives_into(q, qd, qdd, p, k, position, velocity) }
        },
    )
}

/// A per-joint factorisation's order as array literals' items: each joint's coordinate, and
/// the index of the joint above it (`None` at a root).
pub(super) fn joint_order(joints: impl Iterator<Item = (usize, Option<usize>)>) -> (Vec<Literal>, Vec<TokenStream>) {
    joints
        .map(|(coordinate, parent)| {
            let parent = match parent {
                None => quote!(None),
                Some(p) => {
                    let p = Literal::usize_unsuffixed(p);
                    quote!(Some(#p))
                }
            };
            (Literal::usize_unsuffixed(coordinate), parent)
        })
        .unzip()
}

/// Whole-robot quantities: the centre of mass, the total mass and the momenta.
pub(super) fn whole_robot(kernels: &Kernels, equations: &Equations) -> TokenStream {
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let (com, total_mass) = (equations.center_of_mass, equations.total_mass);
    let (linear_momentum, angular_momentum) = (equations.linear_momentum, equations.angular_momentum);
    let empty = HashMap::new();

    let com_body = kernel(&[(quote!(let x), com[0]), (quote!(let y), com[1]), (quote!(let z), com[2])]);
    // `total_mass(p)` has no cache: it is computed from the parameters alone.
    let total_mass_body = body(kernels.dag, kernels.params, &empty, &[(quote!(let mass), total_mass)], CacheUse::Read);
    let linear_body = kernel(&[
        (quote!(let x), linear_momentum[0]),
        (quote!(let y), linear_momentum[1]),
        (quote!(let z), linear_momentum[2]),
    ]);
    let angular_body = kernel(&[
        (quote!(let x), angular_momentum[0]),
        (quote!(let y), angular_momentum[1]),
        (quote!(let z), angular_momentum[2]),
    ]);
    quote! {
        /// Whole-robot centre of mass.
        #[inline]
        #[allow(unused_variables)]
        pub fn center_of_mass(q: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> Vector3<f64> {
            #com_body
            Vector3::new(x, y, z)
        }

        /// Total mass.
        #[inline]
        pub fn total_mass(p: &Params) -> f64 {
            #total_mass_body
            mass
        }

        /// Total linear momentum.
        #[inline]
        #[allow(unused_variables)]
        pub fn linear_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> Vector3<f64> {
            #linear_body
            Vector3::new(x, y, z)
        }

        /// Total angular momentum about the world origin.
        #[inline]
        #[allow(unused_variables)]
        pub fn angular_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> Vector3<f64> {
            #angular_body
            Vector3::new(x, y, z)
        }
    }
}
