//! A swimming robot's thrusters: `THRUSTERS` and the configuration matrix.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// A robot's thrusters: what they are, and the configuration matrix B(q) whose column k is
/// the generalized force of a unit thrust of thruster k. Empty without thrusters.
pub(super) fn thrusters(
    robot: &Robot,
    equations: &Equations,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    if robot.thrusters.is_empty() {
        return (TokenStream::new(), TokenStream::new());
    }
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut outputs = Vec::new();
    for (k, column) in equations.thruster_columns.iter().enumerate() {
        for (j, &id) in column.iter().enumerate() {
            if dag.constant(id) != Some(0.0) {
                let (lj, lk) = (idx(j), idx(k));
                outputs.push((quote!(out[(#lj, #lk)]), id));
            }
        }
    }
    let matrix_body = kernel(&outputs);
    let tangent_outputs = |columns: &[Vec<NodeId>]| {
        let mut outputs = Vec::new();
        for (k, column) in columns.iter().enumerate() {
            for (j, &id) in column.iter().enumerate() {
                if dag.constant(id) != Some(0.0) {
                    let (lj, lk) = (idx(j), idx(k));
                    outputs.push((quote!(out[(#lj, #lk)]), id));
                }
            }
        }
        outputs
    };
    let (tangent_fn, tangent_impl) = match &equations.derivatives {
        None => (TokenStream::new(), TokenStream::new()),
        Some(derivatives) => {
            let tangent_body = kernel(&tangent_outputs(&derivatives.thruster_columns));
            (
                quote! {
                    /// The configuration matrix's tangent along a direction `dq` of the coordinates
                    /// (sum_j dB/dq_j dq_j), differentiated in the expression DAG.
                    #[inline]
                    #[allow(unused_variables)]
                    pub fn thruster_matrix_tangent_into(q: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, DOF, THRUSTER_COUNT>) {
                        *out = SMatrix::zeros();
                        #tangent_body
                    }
                },
                quote! {
                    fn thruster_force_position_tangent_into(q: &SVector<f64, DOF>, dq: &SVector<f64, DOF>, p: &Params, k: &Cache, thrusts: &[f64], out: &mut SVector<f64, DOF>) {
                        let mut matrix = SMatrix::<f64, DOF, THRUSTER_COUNT>::zeros();
                        thruster_matrix_tangent_into(q, dq, p, k, &mut matrix);
                        *out = SVector::zeros();
                        for (column, thrust) in matrix.column_iter().zip(thrusts) {
                            *out += column * *thrust;
                        }
                    }
                },
            )
        }
    };
    let count = idx(robot.thrusters.len());
    let infos = robot.thrusters.iter().map(|t| {
        let name = &t.name;
        let body = &robot.bodies[t.body].name;
        let direction = t.direction.map(float);
        quote!(softgen_runtime::ThrusterInfo { name: #name, body: #body, direction: [#(#direction),*] },)
    });
    let items = quote! {
        /// Number of thrusters.
        pub const THRUSTER_COUNT: usize = #count;

        /// The thrusters in actuator order: name, carrying body, direction in its frame.
        pub const THRUSTERS: [softgen_runtime::ThrusterInfo; THRUSTER_COUNT] = [#(#infos)*];

        /// The thrusters' configuration matrix B(q) (eqs 35-37 of 004): column k is the
        /// generalized force of one newton of thruster k, J_k' (c x d; d) with c its point of
        /// attack and d its direction in the world.
        #[inline]
        #[allow(unused_variables)]
        pub fn thruster_matrix_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut SMatrix<f64, DOF, THRUSTER_COUNT>) {
            *out = SMatrix::zeros();
            #matrix_body
        }

        #tangent_fn
    };
    let implementation = quote! {
        const THRUSTERS: &'static [softgen_runtime::ThrusterInfo] = &THRUSTERS;
        fn thruster_force_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, thrusts: &[f64], out: &mut SVector<f64, DOF>) {
            let mut matrix = SMatrix::<f64, DOF, THRUSTER_COUNT>::zeros();
            thruster_matrix_into(q, p, k, &mut matrix);
            *out = SVector::zeros();
            for (column, thrust) in matrix.column_iter().zip(thrusts) {
                *out += column * *thrust;
            }
        }
        #tangent_impl
    };
    (items, implementation)
}
