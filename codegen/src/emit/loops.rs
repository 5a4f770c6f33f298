//! Kernels over directions: dID/dq's and the skin rings' tangents computed in one loop per
//! group of the coordinates that move the same part of the tree, what no direction moves
//! computed once before the loops, large kernels' groups outlined into functions.

// The emitter's types, helpers and imports, shared by its files.
use super::*;

/// A group of coordinates whose derivatives one loop computes, and its (target, node)
/// outputs (the targets name the column by the loop's `j`).
pub(super) type DirectionGroup = (Vec<usize>, Vec<(TokenStream, NodeId)>);

/// For every node, whether it moves with a direction `dq` (depends on an
/// `Input::PositionDirection`): children precede parents, so one pass in order.
pub(super) fn direction_dependence(dag: &Dag) -> Vec<bool> {
    let mut moves = vec![false; dag.nodes.len()];
    for id in 0..dag.nodes.len() {
        moves[id] = match &dag.nodes[id] {
            Node::Input(Input::PositionDirection(_)) => true,
            _ => dag.children(id).into_iter().any(|c| moves[c]),
        };
    }
    moves
}

/// Columns of derivatives computed per group of coordinates: one group's outputs are the
/// tangents along a direction `dq` restricted to its coordinates. A group of one coordinate
/// is emitted inside `for j in [c]` with `dq` its unit direction; a larger group's
/// statements run once over every direction of the group in SIMD lanes (`dq` the unit
/// directions as `softgen_runtime::Lanes2`/`Lanes4`, four coordinates a pass), and the lanes
/// are then stored column by column (the targets name the column by `j`). What every column
/// reads but no direction moves is computed once before the groups. `moves` is [`direction_dependence`]; each group is (its
/// coordinates, its (target, node) outputs).
///
/// `values` are slots the body reads as `values[k]` (a kernel serving several of one shape,
/// `shapes.rs`).
///
/// Returns the body and the functions it calls. With `outline` (the function this body is
/// emitted into) and more than [`OUTLINE_BINDINGS`] values bound in the groups, each group's
/// loop becomes a function of its own, reading the values it
/// shares with the others from an array: a kernel of 45,000 lines as one function took the
/// compiler's optimiser minutes that the same code split into its groups does not (the
/// Builds page of the book). Without, the functions are empty.
pub(super) fn body_in_loops(
    dag: &Dag,
    params: &[Ident],
    cache: &HashMap<NodeId, Ident>,
    moves: &[bool],
    groups: &[DirectionGroup],
    values: &HashMap<NodeId, usize>,
    outline: Option<&Arguments>,
) -> (TokenStream, TokenStream) {
    let stops = |id: NodeId| cache.contains_key(&id) || dag.is_leaf(id);
    let post_order = |roots: &mut dyn Iterator<Item = NodeId>, skip: &dyn Fn(NodeId) -> bool| {
        moving_post_order(dag, &stops, moves, roots, skip)
    };
    let mut emitter = Emitter::new(dag, params, cache, quote!(cache.));
    emitter.read_values(values);
    let mut taken: HashSet<String> = HashSet::new();
    let mut counter = 0usize;
    let mut bind = |emitter: &mut Emitter, taken: &mut HashSet<String>, id: NodeId| {
        let name = binding_name(dag.names.get(&id), taken, &mut counter);
        let value = emitter.render(id).tokens;
        emitter.bound.insert(id, name.clone());
        quote!(let #name = #value;)
    };
    let mut statements = TokenStream::new();
    let mut fixed_order: Vec<NodeId> = Vec::new();
    // The values no direction moves: bound where shared, named, or read by a moving node
    // (so that no loop recomputes them).
    let mut all = groups.iter().flat_map(|(_, outputs)| outputs.iter().map(|(_, id)| *id));
    let (order, uses, moving_parent) = post_order(&mut all, &|_| false);
    for &id in &order {
        if moves[id] || stops(id) {
            continue;
        }
        if dag.names.contains_key(&id) || uses.get(&id).copied().unwrap_or(0) >= 2 || moving_parent.contains(&id) {
            statements.extend(bind(&mut emitter, &mut taken, id));
            fixed_order.push(id);
        }
    }
    let fixed = emitter.bound.clone();
    // Each group's post-order over what it reads, stopping at the shared values.
    let traversals: Vec<_> = groups
        .iter()
        .map(|(_, outputs)| post_order(&mut outputs.iter().map(|(_, id)| *id), &|id| fixed.contains_key(&id)))
        .collect();
    // Small kernels stay one function: there the calls and the array cost more than the
    // compiler's time they save (a dID/dq of 1,479 bindings in its groups ran 7% slower
    // outlined, one of 5,238 11% faster; the kernels' benches in the book).
    let bindings: usize = traversals
        .iter()
        .map(|(order, uses, _)| {
            order
                .iter()
                .filter(|&&id| {
                    moves[id]
                        && !stops(id)
                        && !fixed.contains_key(&id)
                        && (dag.names.contains_key(&id) || uses.get(&id).copied().unwrap_or(0) >= 2)
                })
                .count()
        })
        .sum();
    let outline = outline.filter(|_| bindings > OUTLINE_BINDINGS);
    // Outlined, the groups read the shared values they need from an array, in the order
    // they were bound; the array holds only what some group reads.
    let shared: Vec<NodeId> = match outline {
        Some(_) => fixed_order
            .iter()
            .copied()
            .filter(|id| traversals.iter().any(|(_, uses, _)| uses.contains_key(id)))
            .collect(),
        None => Vec::new(),
    };
    let mut functions = TokenStream::new();
    if outline.is_some() {
        let names = shared.iter().map(|id| &fixed[id]);
        let count = Literal::usize_unsuffixed(shared.len());
        statements.extend(quote!(let shared: [f64; #count] = [#(#names),*];));
        emitter.shared = shared.iter().enumerate().map(|(k, &id)| (id, k)).collect();
    }
    for (g, ((coordinates, outputs), (order, uses, _))) in groups.iter().zip(&traversals).enumerate() {
        let fixed_names = taken.clone();
        let mut inner = TokenStream::new();
        for &id in order {
            if !moves[id] || stops(id) || fixed.contains_key(&id) {
                continue;
            }
            if dag.names.contains_key(&id) || uses.get(&id).copied().unwrap_or(0) >= 2 {
                inner.extend(bind(&mut emitter, &mut taken, id));
            }
        }
        let group_loop = group_loop(&mut emitter, coordinates, outputs, inner);
        match outline {
            Some(arguments) => {
                let (declarations, names, kernel) = (&arguments.declarations, &arguments.names, &arguments.function);
                let function = format_ident!("{}_group_{}", kernel, g);
                let count = Literal::usize_unsuffixed(shared.len());
                let doc = format!(" The columns of [`{kernel}`] along coordinates {coordinates:?};");
                functions.extend(quote! {
                    #[doc = #doc]
                    #[doc = " `shared` holds what it computed before them."]
                    #[inline(never)]
                    #[allow(unused_variables)]
                    fn #function(#declarations, shared: &[f64; #count]) {
                        #group_loop
                    }
                });
                statements.extend(quote!(#function(#names, &shared);));
            }
            None => statements.extend(group_loop),
        }
        emitter.bound = fixed.clone();
        taken = fixed_names;
    }
    (statements, functions)
}

/// Post-order over everything `roots` read, stopping at `stops` (cache reads and leaves) and
/// skipping what `skip` holds; with each node's uses and the nodes no direction moves that
/// a moving node reads.
fn moving_post_order(
    dag: &Dag,
    stops: &dyn Fn(NodeId) -> bool,
    moves: &[bool],
    roots: &mut dyn Iterator<Item = NodeId>,
    skip: &dyn Fn(NodeId) -> bool,
) -> (Vec<NodeId>, HashMap<NodeId, usize>, HashSet<NodeId>) {
    let mut order = Vec::new();
    let mut uses: HashMap<NodeId, usize> = HashMap::new();
    let mut moving_parent: HashSet<NodeId> = HashSet::new();
    let mut visited = HashSet::new();
    for root in roots {
        *uses.entry(root).or_default() += 1;
        if visited.contains(&root) || skip(root) {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                order.push(id);
                continue;
            }
            if !visited.insert(id) {
                continue;
            }
            stack.push((id, true));
            if stops(id) {
                continue;
            }
            for c in dag.children(id).into_iter().rev() {
                *uses.entry(c).or_default() += 1;
                if moves[id] && !moves[c] {
                    moving_parent.insert(c);
                }
                if !visited.contains(&c) && !skip(c) {
                    stack.push((c, false));
                }
            }
        }
    }
    (order, uses, moving_parent)
}

/// A group's loop over its directions: a group of one coordinate inside `for j in [c]` with
/// `dq` its unit direction; larger groups every direction at once, one lane each
/// (`softgen_runtime::Lanes2` and `Lanes4`), the values then stored column by column.
fn group_loop(
    emitter: &mut Emitter,
    coordinates: &[usize],
    outputs: &[(TokenStream, NodeId)],
    mut inner: TokenStream,
) -> TokenStream {
    if coordinates.len() == 1 {
        for (target, id) in outputs {
            let value = emitter.render(*id).tokens;
            inner.extend(quote!(#target = #value;));
        }
        let coordinate = Literal::usize_unsuffixed(coordinates[0]);
        quote! {
            for j in [#coordinate] {
                let mut dq = SVector::<f64, DOF>::zeros();
                dq[j] = 1.0;
                #inner
            }
        }
    } else {
        // Groups of two or more: every direction of the group at once, one lane each
        // (`softgen_runtime::Lanes2` and `Lanes4`), the values then stored column by
        // column.
        let width = lane_width(coordinates.len());
        let chunks = coordinates.chunks(width).map(|chunk| {
            let mut lanes: Vec<TokenStream> = chunk
                .iter()
                .map(|&c| {
                    let c = Literal::usize_unsuffixed(c);
                    quote!(#c)
                })
                .collect();
            lanes.resize(width, quote!(softgen_runtime::NO_COLUMN));
            quote!([#(#lanes),*])
        });
        let mut stores = TokenStream::new();
        for (k, (target, id)) in outputs.iter().enumerate() {
            let value = emitter.render(*id).tokens;
            let name = format_ident!("lanes_out{}", k);
            inner.extend(quote!(let #name = #value;));
            stores.extend(quote!(#target = softgen_runtime::LaneValue::lane(#name, lane);));
        }
        let lanes = format_ident!("Lanes{}", width);
        quote! {
            for columns in [#(#chunks),*] {
                let dq = softgen_runtime::#lanes::unit_directions::<DOF>(columns);
                #inner
                for (lane, j) in columns.into_iter().enumerate() {
                    if j == softgen_runtime::NO_COLUMN {
                        break;
                    }
                    #stores
                }
            }
        }
    }
}

/// The values a kernel's direction groups bind, in all, above which [`body_in_loops`] makes
/// each group a function of its own.
const OUTLINE_BINDINGS: usize = 3_000;

/// The function a kernel's body is emitted into: its name and its arguments (declared as in
/// its signature, and named as in a call), for the parts of the body [`body_in_loops`]
/// moves into functions of their own.
pub(super) struct Arguments {
    /// The function's name, which the outlined functions' names start with.
    pub(super) function: Ident,
    pub(super) declarations: TokenStream,
    pub(super) names: TokenStream,
}

/// Lanes for a group of `coordinates` directions: two for two, four otherwise (three pad
/// one lane; larger groups take several passes of four).
fn lane_width(coordinates: usize) -> usize {
    if coordinates <= 2 {
        2
    } else {
        4
    }
}
