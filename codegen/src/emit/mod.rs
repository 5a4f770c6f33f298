//! Rust emission: derived expressions become straight-line, allocation-free functions on
//! fixed-size nalgebra types, built as tokens with quote and formatted with prettyplease.
//! `emit` puts a module together; each file here emits one concern of it.

mod contact;
mod drawing;
mod expression;
mod limb_lanes;
mod markers;
mod mass_solve;
mod names;
mod sections;
mod shapes;
mod shared;
mod thrusters;
mod water;

pub use names::camel;

use crate::dag::{Dag, Function, Input, Node, NodeId};
use crate::equations::{Equations, InverseDynamicsDerivatives};
use crate::expr::{Expr, Number};
use crate::model::{CoordinateKind, Robot, Rule, SectionKind, TerrainDefault};
use crate::spatial::Articulated;
use crate::spec::Anisotropy;
use contact::{contact_frame_tangents, contact_frames};
use drawing::drawing;
use expression::*;
use limb_lanes::{Groups, LimbLanes, WIDTH};
use markers::markers;
use mass_solve::mass_matrix_solve;
use names::identifier;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use sections::soft_sections;
use shared::{shared, Shared};
use std::collections::{BTreeMap, HashMap, HashSet};
use thrusters::thrusters;
use water::water;

/// Emits the generated module for one robot as tokens (formatted by [`format_module`]): the
/// state's cache, then each family of kernels from its own function, then the `Model`
/// implementation that names them all.
pub fn emit(robot: &Robot, equations: &Equations) -> Result<TokenStream, String> {
    let n = robot.coordinates.len();
    let c = robot.contact_points.len();
    let dag = &equations.dag;
    let params: Vec<Ident> = robot.parameters.iter().map(|p| format_ident!("{}", p.name)).collect();
    // Identical sections' nodes in SIMD lanes, for the cache kernel and the kernels reading it.
    let section_coordinates: Vec<(usize, usize, String)> = robot
        .bodies
        .iter()
        .filter_map(|b| b.section.as_ref().map(|s| (s.first_coordinate, s.coordinates, b.name.clone())))
        .collect();
    let limb_lanes = LimbLanes::new(dag, &section_coordinates);
    let state = StateCache::new(equations, &params, &limb_lanes)?;
    let kernels = Kernels {
        dag,
        params: &params,
        cache: &state.field_of,
        by_argument: &state.by_argument,
        limb_lanes: &limb_lanes,
        // Which nodes move with a derivative's direction, for the kernels that loop over
        // directions.
        moves: direction_dependence(dag),
    };
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let cache_items = state.items();
    let dynamics_fns = dynamics(&kernels, equations);
    let (forward_fn, forward_impl) = forward_dynamics(&kernels, equations, n);
    let (factor_fn, factor_impl) = articulated_factor(&kernels, equations);
    let (derivatives_fn, derivatives_impl) = inverse_dynamics_derivatives(&kernels, equations)?;
    let energy_and_positions_fns = energy_and_positions(&kernels, equations);
    // Soft robots serve points from their frame's motion instead (see `Equations::frame_motion`).
    let kernel_in_lanes =
        |outputs: &[(TokenStream, NodeId)], lanes: &LimbLanes| kernels.kernel_in_lanes(outputs, lanes);
    // A kernel serving several of one shape (`shapes.rs`) reads the values that differ;
    // without, it is `kernel`.
    let kernel_reading =
        |outputs: &[(TokenStream, NodeId)], values: &HashMap<NodeId, usize>| kernels.kernel_reading(outputs, values);
    let cache = &state.field_of;
    let (frame_fn, frame_impl) = contact_frames(equations, cache, &kernel, &kernel_reading, &kernel_in_lanes, &|id| {
        cache.get(&id).map(|field| field.to_string())
    })?;
    let loops = |groups: &[DirectionGroup], values: &HashMap<NodeId, usize>| kernels.loops(groups, values);
    let (frame_tangent_fn, frame_tangent_impl) = contact_frame_tangents(equations, cache, &kernel, &loops)?;
    let robot_type = format_ident!("{}", camel(&robot.name));
    let (point_fns, point_impl) = contact_point_kernels(&kernels, robot, equations);
    let (axis_fn, kinematics_impl) = contact_axis(&kernels, equations);
    let whole_robot_fns = whole_robot(&kernels, equations);

    let imports = runtime_imports(robot);
    let (soft_items, soft_impl) = soft_sections(robot, equations, &params, &kernel);
    let (water_items, water_impl) = water(equations, &params, &kernel);
    let (thruster_items, thruster_impl) = thrusters(robot, equations, &kernel);
    let (drawing_items, drawing_impl) = drawing(robot, equations, &kernel);
    let (marker_items, marker_impl) = markers(robot, equations, &kernel)?;
    let Shared { params: params_items, constants } = shared(robot);
    let description = &robot.description;
    let model_doc = doc(&format!("{description}\n\n{n} generalized coordinates, {c} contact points."));
    let n_lit = Literal::usize_unsuffixed(n);
    let c_lit = Literal::usize_unsuffixed(c);

    Ok(quote! {
        use softgen_runtime::nalgebra::{SMatrix, SVector, Vector3};
        #imports

        /// Number of generalized coordinates.
        pub const DOF: usize = #n_lit;
        /// Number of contact points.
        pub const CONTACTS: usize = #c_lit;

        #params_items

        #cache_items

        #dynamics_fns

        #forward_fn
        #factor_fn
        #derivatives_fn

        #energy_and_positions_fns

        #point_fns

        #axis_fn
        #frame_fn
        #frame_tangent_fn

        #whole_robot_fns

        #soft_items

        #water_items

        #thruster_items

        #drawing_items

        #marker_items

        #model_doc
        #[derive(Clone, Copy, Debug, Default)]
        pub struct #robot_type;

        impl Model<DOF, CONTACTS> for #robot_type {
            type Params = Params;
            type Cache = Cache;
            #constants

            fn cache(q: &SVector<f64, DOF>, p: &Params) -> Cache { cache(q, p) }
            fn mass_matrix_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) { mass_matrix_into(q, p, k, out) }
            fn coriolis_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { coriolis_into(q, qd, p, k, out) }
            fn coriolis_matrix_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) { coriolis_matrix_into(q, qd, p, k, out) }
            fn gravity_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { gravity_into(q, p, k, out) }
            fn dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, m: &mut SMatrix<f64, DOF, DOF>, c: &mut SVector<f64, DOF>, g: &mut SVector<f64, DOF>) { dynamics_into(q, qd, p, k, m, c, g) }
            #forward_impl
            #factor_impl
            #derivatives_impl
            #soft_impl
            #water_impl
            #thruster_impl
            #drawing_impl
            #marker_impl
            fn potential_energy(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> f64 { potential_energy(q, p, k) }
            fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_positions_into(q, p, k, out) }
            #point_impl
            #kinematics_impl
            #frame_impl
            #frame_tangent_impl
            fn center_of_mass(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { center_of_mass(q, p, k) }
            fn total_mass(p: &Params) -> f64 { total_mass(p) }
            fn linear_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { linear_momentum(q, qd, p, k) }
            fn angular_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { angular_momentum(q, qd, p, k) }
        }
    })
}

/// The `use` of the runtime's items the module names: a soft robot's sections' too.
fn runtime_imports(robot: &Robot) -> TokenStream {
    if robot.is_soft() {
        quote!(
            use softgen_runtime::{
                ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, FrictionAnisotropy, GaitDefaults,
                Model, ParamSet, PlaneOfMotion, SectionGeometry, SoftSectionInfo, Terrain,
            };
        )
    } else {
        quote!(
            use softgen_runtime::{
                ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, FrictionAnisotropy, GaitDefaults,
                Model, ParamSet, PlaneOfMotion, Terrain,
            };
        )
    }
}

/// The potential energy and the contact points' positions.
fn energy_and_positions(kernels: &Kernels, equations: &Equations) -> TokenStream {
    let potential_body = kernels.kernel(&[(quote!(let energy), equations.potential_energy)]);
    let positions: Vec<Vec<NodeId>> = equations.contact_positions.iter().map(|v| v.to_vec()).collect();
    let positions_body = kernels.kernel(&per_point(&positions));
    quote! {
        /// Gravitational potential energy V(q).
        #[inline]
        #[allow(unused_variables)]
        pub fn potential_energy(q: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> f64 {
            #potential_body
            energy
        }

        /// World positions of the contact points.
        #[inline]
        #[allow(unused_variables)]
        pub fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
            #positions_body
        }
    }
}

/// The state's cache: the transcendental calls and the position-level intermediates that
/// more than one kernel reads, computed once per state by the generated `cache` function.
struct StateCache {
    /// A cached node's field of `Cache`.
    field_of: HashMap<NodeId, Ident>,
    /// `Cache`'s fields in order, each with the call it holds (none for an intermediate).
    fields: Vec<(Ident, Option<String>)>,
    /// The cached calls, grouped by their argument.
    by_argument: BTreeMap<NodeId, Vec<(Function, NodeId)>>,
    /// The generated `cache` function's statements.
    body: TokenStream,
}

impl StateCache {
    /// The cache of `equations`' hot kernels; an error where a transcendental function of q
    /// nests another.
    fn new(equations: &Equations, params: &[Ident], limb_lanes: &LimbLanes) -> Result<StateCache, String> {
        let dag = &equations.dag;
        let (calls, argument_fields, intermediates) = cached_nodes(equations, params)?;
        let mut taken: HashSet<String> = HashSet::new();
        let (cache, fields) = cache_fields(dag, params, &calls, &argument_fields, &intermediates, &mut taken);
        let empty = HashMap::new();

        // Cache kernel: one argument evaluation per distinct argument, sin_cos when both are used,
        // then the intermediates parent to child.
        let mut by_argument: BTreeMap<NodeId, Vec<(Function, NodeId)>> = BTreeMap::new();
        for &id in &calls {
            if let Node::Call(f, arg) = dag.nodes[id] {
                by_argument.entry(arg).or_default().push((f, id));
            }
        }
        let mut argument_order: Vec<NodeId> = Vec::new();
        for &id in &calls {
            if let Node::Call(_, arg) = dag.nodes[id] {
                if !argument_order.contains(&arg) {
                    argument_order.push(arg);
                }
            }
        }
        // Arguments that are not plain inputs are computed once into `angle<k>`.
        // The argument phase defines the fields among the arguments' inputs and the arguments,
        // each a `let` that what follows in it reads by name: an argument's the algorithm's name
        // for it (a slice's `bend`), else `angle<k>`.
        let mut argument_lets: Vec<(NodeId, Ident)> =
            argument_fields.iter().map(|id| (*id, cache[id].clone())).collect();
        let arguments: Vec<(NodeId, TokenStream)> = argument_order
            .iter()
            .enumerate()
            .map(|(k, &a)| {
                let e = Emitter::new(dag, &params, &empty, quote!());
                if dag.is_leaf(a) {
                    (a, wrap(e.render(a), Precedence::Atom))
                } else {
                    let mut name = dag.names.get(&a).map_or_else(|| format!("angle{k}"), |n| identifier(n));
                    while !taken.insert(name.clone()) {
                        name.push('_');
                    }
                    let name = format_ident!("{}", name);
                    argument_lets.push((a, name.clone()));
                    (a, quote!(#name))
                }
            })
            .collect();
        let argument_outputs: Vec<(TokenStream, NodeId)> =
            argument_lets.iter().map(|(id, name)| (quote!(let #name), *id)).collect();
        let argument_lets: HashMap<NodeId, Ident> = argument_lets.into_iter().collect();
        let mut cache_body = body(dag, &params, &argument_lets, &argument_outputs, CacheUse::Define);
        for (arg, value) in &arguments {
            cache_body.extend(call_statements(value, &by_argument[arg], &cache));
        }
        let intermediate_outputs: Vec<(TokenStream, NodeId)> = intermediates
            .iter()
            .map(|id| {
                let field = &cache[id];
                (quote!(let #field), *id)
            })
            .collect();
        cache_body.extend(body_with_lanes(dag, params, &cache, &intermediate_outputs, CacheUse::Define, limb_lanes));
        Ok(StateCache { field_of: cache, fields, by_argument, body: cache_body })
    }

    /// The `Cache` struct and the `cache` function that fills it.
    fn items(&self) -> TokenStream {
        let (fields, cache_body) = (&self.fields, &self.body);

        let field_names: Vec<&Ident> = fields.iter().map(|(f, _)| f).collect();
        let field_items = fields.iter().map(|(f, note)| {
            let d = note.as_ref().map(|n| doc(&format!("`{n}`"))).unwrap_or_default();
            quote!(#d pub #f: f64,)
        });
        let cache_summary = if fields.is_empty() {
            "(none: this robot's equations are polynomial in q)".to_string()
        } else {
            "Sines and cosines of the coordinates, then the position-level intermediates of the recursive \
         algorithms in the order [`cache`] computes them, parent to child: link rotations and positions, \
         joint motion subspaces, inertias and composite inertias about the world origin, contact point \
         positions."
                .to_string()
        };
        let cache_doc = doc(&format!(
            "Everything about a state that does not depend on the rates, computed once per state by [`cache`] \
             and shared by every kernel.\n\n{cache_summary}"
        ));
        quote! {
        #cache_doc
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Cache {
            #(#field_items)*
        }

        /// Computes the transcendental cache for `q`.
        #[inline]
        #[allow(unused_variables)]
        pub fn cache(q: &SVector<f64, DOF>, p: &Params) -> Cache {
            #cache_body
            Cache { #(#field_names),* }
        }

        }
    }
}

/// The nodes the cache holds: the transcendental calls of q that a hot kernel reads, the named
/// nodes inside their arguments, and the position-level intermediates several kernels read.
#[allow(clippy::type_complexity)]
fn cached_nodes(equations: &Equations, params: &[Ident]) -> Result<(Vec<NodeId>, Vec<NodeId>, Vec<NodeId>), String> {
    let dag = &equations.dag;

    // Transcendental cache: every call of a function of q (and parameters) that a hot
    // kernel reads (see `Equations::kernels`); diagnostics evaluate the others themselves.
    let velocity_dependent = dag.rate_dependence();
    let mut hot: HashSet<NodeId> = HashSet::new();
    for roots in equations.kernels() {
        for root in roots {
            collect_reachable(dag, root, &mut hot);
        }
    }
    let mut calls: Vec<NodeId> = (0..dag.nodes.len())
        .filter(|&id| matches!(dag.nodes[id], Node::Call(..)) && !velocity_dependent[id] && hot.contains(&id))
        .collect();
    // Deterministic order: by argument's rendering, then function.
    calls.sort_by_cached_key(|&id| call_key(dag, params, id));
    for &id in &calls {
        if let Node::Call(_, arg) = dag.nodes[id] {
            if calls.iter().any(|&other| reaches(dag, arg, other)) {
                return Err("nested transcendental functions of q are not supported yet".into());
            }
        }
    }
    // Position-level intermediates of the recursive algorithms (named nodes that do not
    // depend on qd or forces: poses, joint subspaces, inertias, composite inertias, contact
    // positions) that more than one kernel reads join the cache, so the kernels of a state
    // share one forward-kinematics pass; what only one kernel reads (the articulated
    // inertias of forward dynamics) stays in that kernel, so no kernel pays for another's
    // work. Nodes inside the arguments of the transcendental functions are computed first,
    // before the calls.
    let mut call_inputs: HashSet<NodeId> = HashSet::new();
    for &id in &calls {
        if let Node::Call(_, arg) = dag.nodes[id] {
            collect_reachable(dag, arg, &mut call_inputs);
        }
    }
    let mut readers: HashMap<NodeId, usize> = HashMap::new();
    for roots in equations.kernels() {
        let mut reached = HashSet::new();
        for root in roots {
            collect_reachable(dag, root, &mut reached);
        }
        for id in reached {
            *readers.entry(id).or_default() += 1;
        }
    }
    // Named position-level nodes that more than one kernel reads.
    let mut read_by_several: Vec<NodeId> = dag
        .names
        .keys()
        .copied()
        .filter(|&id| {
            readers.get(&id).copied().unwrap_or(0) >= 2
                && !velocity_dependent[id]
                && !dag.is_leaf(id)
                && !matches!(dag.nodes[id], Node::Call(..))
        })
        .collect();
    read_by_several.sort_unstable();
    // Named nodes inside the arguments (a soft section's bends, from which its Stumpff
    // functions' arguments are made) join the cache too, defined while the arguments are
    // computed: otherwise every per-frame contact kernel recomputed them from q (measured on
    // the soft snake: a third of a ring's ball test). The arguments themselves are `let`s of
    // that phase.
    let argument_nodes: HashSet<NodeId> = calls
        .iter()
        .filter_map(|&id| match dag.nodes[id] {
            Node::Call(_, arg) => Some(arg),
            _ => None,
        })
        .collect();
    let (argument_fields, intermediates): (Vec<NodeId>, Vec<NodeId>) =
        read_by_several.into_iter().filter(|id| !argument_nodes.contains(id)).partition(|id| call_inputs.contains(id));
    Ok((calls, argument_fields, intermediates))
}

/// A cached call's sort key: its argument's rendering, then the function.
fn call_key(dag: &Dag, params: &[Ident], id: NodeId) -> (String, String) {
    let empty = HashMap::new();
    let Node::Call(f, arg) = dag.nodes[id] else { return (String::new(), String::new()) };
    let e = Emitter::new(dag, params, &empty, quote!(cache.));
    (e.render(arg).tokens.to_string(), format!("{f:?}"))
}

/// The cache's fields, named and made unique (names go into `taken`).
#[allow(clippy::type_complexity)]
fn cache_fields(
    dag: &Dag,
    params: &[Ident],
    calls: &[NodeId],
    argument_fields: &[NodeId],
    intermediates: &[NodeId],
    taken: &mut HashSet<String>,
) -> (HashMap<NodeId, Ident>, Vec<(Ident, Option<String>)>) {
    // Field names: `sin_q3` for functions of one coordinate, the algorithm's names for the
    // intermediates; made unique.
    let mut cache: HashMap<NodeId, Ident> = HashMap::new();
    let mut fields: Vec<(Ident, Option<String>)> = Vec::new();
    for (slot, &id) in calls.iter().chain(argument_fields).chain(intermediates).enumerate() {
        let (mut name, note) = match dag.nodes[id] {
            Node::Call(f, arg) => {
                let method = match f {
                    Function::Stumpff(k) => format!("stumpff_c{k}"),
                    _ => function_method(f).to_string(),
                };
                let (text, _) = call_key(dag, params, id);
                let name = match (f, &dag.nodes[arg]) {
                    (Function::Stumpff(k), _) if dag.names.contains_key(&arg) => {
                        format!("{}_c{k}", identifier(&dag.names[&arg]))
                    }
                    (_, Node::Input(Input::Q(k))) => format!("{method}_q{k}"),
                    _ => format!("{method}_{slot}"),
                };
                (name, Some(format!("{method}({})", text.replace(' ', ""))))
            }
            _ => (identifier(&dag.names[&id]), None),
        };
        while !taken.insert(name.clone()) {
            name.push('_');
        }
        let field = format_ident!("{}", name);
        cache.insert(id, field.clone());
        fields.push((field, note));
    }
    (cache, fields)
}

/// What every kernel's emission reads: the DAG, the parameters' names, the cache's fields and
/// calls, and the lanes of identical sections.
struct Kernels<'a> {
    dag: &'a Dag,
    params: &'a [Ident],
    cache: &'a HashMap<NodeId, Ident>,
    by_argument: &'a BTreeMap<NodeId, Vec<(Function, NodeId)>>,
    limb_lanes: &'a LimbLanes,
    /// Which nodes move with a derivative's direction.
    moves: Vec<bool>,
}

impl Kernels<'_> {
    /// Statements computing `outputs` from the state's cache.
    fn kernel(&self, outputs: &[(TokenStream, NodeId)]) -> TokenStream {
        body_with_lanes(self.dag, self.params, self.cache, outputs, CacheUse::Read, self.limb_lanes)
    }

    /// As [`Kernels::kernel`], with the lanes of its own.
    fn kernel_in_lanes(&self, outputs: &[(TokenStream, NodeId)], lanes: &LimbLanes) -> TokenStream {
        body_with_lanes(self.dag, self.params, self.cache, outputs, CacheUse::Read, lanes)
    }

    /// As [`Kernels::kernel`], reading the values that differ between the members of one shape.
    fn kernel_reading(&self, outputs: &[(TokenStream, NodeId)], values: &HashMap<NodeId, usize>) -> TokenStream {
        if values.is_empty() {
            self.kernel(outputs)
        } else {
            body_reading_values(self.dag, self.params, self.cache, outputs, CacheUse::Read, &LimbLanes::none(), values)
        }
    }

    /// Statements computing groups of outputs in one loop over each group's directions.
    fn loops(&self, groups: &[DirectionGroup], values: &HashMap<NodeId, usize>) -> TokenStream {
        body_in_loops(self.dag, self.params, self.cache, &self.moves, groups, values, None).0
    }

    /// Statements computing `outputs` from the state alone: the sines and cosines they read
    /// computed here, every position-level intermediate inline, nothing of the cache that
    /// other kernels read. None where a function's argument is not a coordinate itself (a
    /// soft section's bends), which only the cache kernel knows how to compute.
    fn without_cache(&self, outputs: &[(TokenStream, NodeId)]) -> Option<TokenStream> {
        let (dag, params, cache, by_argument) = (self.dag, self.params, self.cache, self.by_argument);
        let empty = HashMap::new();

        let mut reached = HashSet::new();
        for (_, root) in outputs {
            collect_reachable(dag, *root, &mut reached);
        }
        let mut read: HashMap<NodeId, Ident> = HashMap::new();
        let mut statements = TokenStream::new();
        for (arg, uses) in by_argument {
            let uses: Vec<(Function, NodeId)> = uses.iter().copied().filter(|(_, id)| reached.contains(id)).collect();
            if uses.is_empty() {
                continue;
            }
            if !dag.is_leaf(*arg) || uses.iter().any(|(f, _)| matches!(f, Function::Stumpff(_))) {
                return None;
            }
            let e = Emitter::new(dag, &params, &empty, quote!());
            statements.extend(call_statements(&wrap(e.render(*arg), Precedence::Atom), &uses, &cache));
            read.extend(uses.iter().map(|(_, id)| (*id, cache[id].clone())));
        }
        statements.extend(body(dag, &params, &read, outputs, CacheUse::Define));
        Some(statements)
    }

    /// The entries of matrix `m` written into `target`, its zeros left out; the upper
    /// triangle mirrored where it is symmetric.
    fn matrix_outputs(&self, target: TokenStream, m: &[Vec<NodeId>], symmetric: bool) -> Vec<(TokenStream, NodeId)> {
        let (dag, idx) = (self.dag, |i: usize| Literal::usize_unsuffixed(i));

        let mut out = Vec::new();
        for i in 0..m.len() {
            for j in 0..m[i].len() {
                if symmetric && j < i {
                    continue;
                }
                if dag.constant(m[i][j]) == Some(0.0) {
                    continue;
                }
                let (li, lj) = (idx(i), idx(j));
                out.push((quote!(#target[(#li, #lj)]), m[i][j]));
                if symmetric && i != j {
                    out.push((quote!(#target[(#lj, #li)]), m[i][j]));
                }
            }
        }
        out
    }

    /// The entries of vector `v` written into `target`, its zeros left out.
    fn vector_outputs(&self, target: TokenStream, v: &[NodeId]) -> Vec<(TokenStream, NodeId)> {
        let (dag, idx) = (self.dag, |i: usize| Literal::usize_unsuffixed(i));

        v.iter()
            .enumerate()
            .filter(|(_, &id)| dag.constant(id) != Some(0.0))
            .map(|(i, &id)| {
                let li = idx(i);
                (quote!(#target[#li]), id)
            })
            .collect()
    }

    /// The entries of a matrix given by columns, written into `out`, its zeros left out.
    fn column_outputs(&self, cols: &[Vec<NodeId>]) -> Vec<(TokenStream, NodeId)> {
        let (dag, idx) = (self.dag, |i: usize| Literal::usize_unsuffixed(i));

        let mut outputs = Vec::new();
        for (j, col) in cols.iter().enumerate() {
            for (i, &id) in col.iter().enumerate() {
                if dag.constant(id) == Some(0.0) {
                    continue;
                }
                let (li, lj) = (idx(i), idx(j));
                outputs.push((quote!(out[(#li, #lj)]), id));
            }
        }
        outputs
    }
}

/// Per-point vectors written into `out[point][axis]`.
fn per_point(v: &[Vec<NodeId>]) -> Vec<(TokenStream, NodeId)> {
    let idx = |i: usize| Literal::usize_unsuffixed(i);

    let mut out = Vec::new();
    for (k, p) in v.iter().enumerate() {
        for (i, &id) in p.iter().enumerate() {
            let (lk, li) = (idx(k), idx(i));
            out.push((quote!(out[#lk][#li]), id));
        }
    }
    out
}

/// M, C qd, C and G, and the three together.
fn dynamics(kernels: &Kernels, equations: &Equations) -> TokenStream {
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
fn forward_dynamics(kernels: &Kernels, equations: &Equations, n: usize) -> (TokenStream, TokenStream) {
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
fn articulated_factor(kernels: &Kernels, equations: &Equations) -> (TokenStream, TokenStream) {
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
fn inverse_dynamics_derivatives(
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
fn position_derivative_groups(kernels: &Kernels, groups: &[(Vec<usize>, Vec<NodeId>)]) -> (TokenStream, TokenStream) {
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
fn factored_derivatives(kernels: &Kernels, factored: &InverseDynamicsDerivatives) -> (TokenStream, TokenStream) {
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

/// Rigid robots' per-point Jacobians (through their frame's Jacobian where a frame carries
/// several points) and the arms of `contact_jacobian_into` that call them.
fn contact_jacobians(kernels: &Kernels, robot: &Robot, equations: &Equations) -> (TokenStream, TokenStream) {
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
fn contact_point_kernels(kernels: &Kernels, robot: &Robot, equations: &Equations) -> (TokenStream, TokenStream) {
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
fn contact_axis(kernels: &Kernels, equations: &Equations) -> (TokenStream, TokenStream) {
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

/// Whole-robot quantities: the centre of mass, the total mass and the momenta.
fn whole_robot(kernels: &Kernels, equations: &Equations) -> TokenStream {
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

/// Formats a generated module's tokens with prettyplease under the generated-file header.
pub fn format_module(robot: &Robot, tokens: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("emitted tokens do not parse as Rust: {e}"))?;
    let body = prettyplease::unparse(&file);
    // Text in a line comment cannot end the comment except through a line break, so every
    // control character becomes a space (validation already rejects them in descriptions).
    let one_line = |text: &str| text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let importing = robot.urdf.as_ref().map_or(String::new(), |u| format!(" (importing `{}`)", one_line(u)));
    // Names come from spec and URDF files (ANYmal's `LF_HIP`), so they need not be snake case.
    let header = format!(
        "//! {}\n//!\n//! Generated by softgen-codegen from `{}`{importing}: do not edit. Change the spec and run\n//! `{}` to regenerate.\n#![allow(clippy::all, unused_parens, non_snake_case)]\n\n",
        one_line(&robot.description),
        one_line(&robot.spec_path),
        one_line(&robot.regenerate)
    );
    Ok(header + body.as_str())
}

/// A per-joint factorisation's order as array literals' items: each joint's coordinate, and
/// the index of the joint above it (`None` at a root).
fn joint_order(joints: impl Iterator<Item = (usize, Option<usize>)>) -> (Vec<Literal>, Vec<TokenStream>) {
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

/// The `let`s that evaluate the calls `uses` of one argument, `value`, into their cache
/// names: sine and cosine together when both are used, every Stumpff function from one
/// evaluation, any other function on its own.
fn call_statements(value: &TokenStream, uses: &[(Function, NodeId)], cache: &HashMap<NodeId, Ident>) -> TokenStream {
    let mut statements = TokenStream::new();
    let sin = uses.iter().find(|(f, _)| *f == Function::Sin).map(|u| &cache[&u.1]);
    let cos = uses.iter().find(|(f, _)| *f == Function::Cos).map(|u| &cache[&u.1]);
    if let (Some(s), Some(c)) = (sin, cos) {
        statements.extend(quote!(let (#s, #c) = #value.sin_cos();));
    }
    if uses.iter().any(|(f, _)| matches!(f, Function::Stumpff(_))) {
        let all = format_ident!("stumpff_{}", cache[&uses[0].1]);
        statements.extend(quote!(let #all = softgen_runtime::stumpff(#value);));
        for (f, id) in uses {
            if let Function::Stumpff(k) = f {
                let field = &cache[id];
                let k = Literal::usize_unsuffixed(*k as usize);
                statements.extend(quote!(let #field = #all[#k];));
            }
        }
    }
    for (f, id) in uses {
        if (*f == Function::Sin || *f == Function::Cos) && sin.is_some() && cos.is_some() {
            continue;
        }
        if matches!(f, Function::Stumpff(_)) {
            continue;
        }
        let m = function_method(*f);
        let field = &cache[id];
        statements.extend(quote!(let #field = #value.#m();));
    }
    statements
}
