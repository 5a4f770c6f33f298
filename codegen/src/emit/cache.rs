//! The state's cache: which nodes it holds (the transcendental calls of q the hot kernels
//! read, and the intermediates several kernels share), their fields' names, and the
//! generated `Cache` struct and `cache` function.

// The emitter's types, helpers and imports, shared by its files.
use super::*;

/// The state's cache: the transcendental calls and the position-level intermediates that
/// more than one kernel reads, computed once per state by the generated `cache` function.
pub(super) struct StateCache {
    /// A cached node's field of `Cache`.
    pub(super) field_of: HashMap<NodeId, Ident>,
    /// `Cache`'s fields in order, each with the call it holds (none for an intermediate).
    pub(super) fields: Vec<(Ident, Option<String>)>,
    /// The cached calls, grouped by their argument.
    pub(super) by_argument: BTreeMap<NodeId, Vec<(Function, NodeId)>>,
    /// The generated `cache` function's statements.
    pub(super) body: TokenStream,
}

impl StateCache {
    /// The cache of `equations`' hot kernels; an error where a transcendental function of q
    /// nests another.
    pub(super) fn new(equations: &Equations, params: &[Ident], limb_lanes: &LimbLanes) -> Result<StateCache, String> {
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
    pub(super) fn items(&self) -> TokenStream {
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
pub(super) fn cached_nodes(
    equations: &Equations,
    params: &[Ident],
) -> Result<(Vec<NodeId>, Vec<NodeId>, Vec<NodeId>), String> {
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
pub(super) fn call_key(dag: &Dag, params: &[Ident], id: NodeId) -> (String, String) {
    let empty = HashMap::new();
    let Node::Call(f, arg) = dag.nodes[id] else { return (String::new(), String::new()) };
    let e = Emitter::new(dag, params, &empty, quote!(cache.));
    (e.render(arg).tokens.to_string(), format!("{f:?}"))
}

/// The cache's fields, named and made unique (names go into `taken`).
#[allow(clippy::type_complexity)]
pub(super) fn cache_fields(
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

/// The `let`s that evaluate the calls `uses` of one argument, `value`, into their cache
/// names: sine and cosine together when both are used, every Stumpff function from one
/// evaluation, any other function on its own.
pub(super) fn call_statements(
    value: &TokenStream,
    uses: &[(Function, NodeId)],
    cache: &HashMap<NodeId, Ident>,
) -> TokenStream {
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
