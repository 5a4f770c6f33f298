//! Expressions of the DAG as Rust tokens: numbers, operators with the fewest parentheses,
//! functions, and a kernel's body of `let`s (named intermediates, shared nodes, cache reads)
//! writing its outputs; a spec expression over the parameters; reachability in the DAG.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// Precedence of a rendered expression, to parenthesise only where needed.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub(super) enum Precedence {
    Sum,
    Product,
    Unary,
    Atom,
}

pub(super) struct Rendered {
    pub(super) tokens: TokenStream,
    pub(super) precedence: Precedence,
}

pub(super) fn atom(tokens: TokenStream) -> Rendered {
    Rendered { tokens, precedence: Precedence::Atom }
}

pub(crate) fn float(v: f64) -> TokenStream {
    let lit = Literal::f64_unsuffixed(v.abs());
    if v < 0.0 {
        quote!((-#lit))
    } else {
        quote!(#lit)
    }
}

pub(super) fn wrap(r: Rendered, at_least: Precedence) -> TokenStream {
    let t = r.tokens;
    if r.precedence < at_least {
        quote!((#t))
    } else {
        t
    }
}

/// The emitter's view of a kernel: which nodes are bound to `let`s and how leaves read.
pub(super) struct Emitter<'a> {
    pub(super) dag: &'a Dag,
    pub(super) params: &'a [Ident],
    /// Nodes read from the per-state cache, with their field names.
    pub(super) cache: &'a HashMap<NodeId, Ident>,
    /// How a cache field is read in this kernel: `cache.` in kernels, nothing in `cache()`,
    /// where the fields are local `let`s until the struct is built.
    pub(super) reads: TokenStream,
    pub(super) bound: HashMap<NodeId, Ident>,
    /// Bound nodes read as `shared[k]` instead, in a function [`body_in_loops`] moved out of
    /// the kernel that computed them.
    pub(super) shared: HashMap<NodeId, usize>,
    /// Slots read as `values[k]`, in a function that serves several kernels of one shape
    /// (`shapes.rs`), each passing its own values; they are in `bound` as well, so that no
    /// constant among them is folded into a literal.
    pub(super) values: HashMap<NodeId, usize>,
}

impl<'a> Emitter<'a> {
    /// An emitter with nothing bound yet.
    pub(super) fn new(
        dag: &'a Dag,
        params: &'a [Ident],
        cache: &'a HashMap<NodeId, Ident>,
        reads: TokenStream,
    ) -> Self {
        Emitter { dag, params, cache, reads, bound: HashMap::new(), shared: HashMap::new(), values: HashMap::new() }
    }

    /// Reads `values`' nodes as `values[k]`, none of them folded into a literal.
    pub(super) fn read_values(&mut self, values: &HashMap<NodeId, usize>) {
        self.values = values.clone();
        for &id in values.keys() {
            self.bound.insert(id, format_ident!("values"));
        }
    }

    pub(super) fn leaf(&self, id: NodeId) -> Option<Rendered> {
        if let Some(&k) = self.values.get(&id) {
            let k = Literal::usize_unsuffixed(k);
            return Some(atom(quote!(values[#k])));
        }
        if let Some(&k) = self.shared.get(&id) {
            let k = Literal::usize_unsuffixed(k);
            return Some(atom(quote!(shared[#k])));
        }
        if let Some(name) = self.bound.get(&id) {
            return Some(atom(quote!(#name)));
        }
        if let Some(field) = self.cache.get(&id) {
            let reads = &self.reads;
            return Some(atom(quote!(#reads #field)));
        }
        match &self.dag.nodes[id] {
            Node::Const(bits) => {
                let v = f64::from_bits(*bits);
                Some(Rendered {
                    tokens: float(v),
                    precedence: if v < 0.0 { Precedence::Unary } else { Precedence::Atom },
                })
            }
            Node::Input(Input::Q(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(q[#i])))
            }
            Node::Input(Input::Qd(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(qd[#i])))
            }
            Node::Input(Input::Force(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(tau[#i])))
            }
            Node::Input(Input::Acceleration(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(qdd[#i])))
            }
            Node::Input(Input::PositionDirection(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(dq[#i])))
            }
            Node::Input(Input::VelocityDirection(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(dqd[#i])))
            }
            Node::Input(Input::Point(i)) => {
                let i = Literal::usize_unsuffixed(*i);
                Some(atom(quote!(point[#i])))
            }
            Node::Input(Input::Param(i)) => {
                let name = &self.params[*i];
                Some(atom(quote!(p.#name)))
            }
            _ => None,
        }
    }

    /// (sign, magnitude) split of a term for sums: -c*x renders as "- c*x".
    pub(super) fn negated_term(&self, id: NodeId) -> Option<Rendered> {
        match &self.dag.nodes[id] {
            Node::Const(bits) if f64::from_bits(*bits) < 0.0 && !self.bound.contains_key(&id) => {
                Some(atom(float(-f64::from_bits(*bits))))
            }
            Node::Mul(factors) if !self.bound.contains_key(&id) && !self.cache.contains_key(&id) => {
                let coefficient = factors.iter().find_map(|&f| self.coefficient(f))?;
                if coefficient >= 0.0 {
                    return None;
                }
                Some(self.product(factors, -coefficient))
            }
            _ => None,
        }
    }

    /// A factor's value where it is a literal: a constant not bound to a name (a set in lanes
    /// binds the constants that differ from lane to lane).
    fn coefficient(&self, factor: NodeId) -> Option<f64> {
        self.dag.constant(factor).filter(|_| !self.bound.contains_key(&factor))
    }

    pub(super) fn product(&self, factors: &[NodeId], coefficient: f64) -> Rendered {
        let mut numerator: Vec<TokenStream> = Vec::new();
        let mut denominator: Vec<TokenStream> = Vec::new();
        if coefficient != 1.0 {
            numerator.push(float(coefficient));
        }
        for &f in factors {
            if self.dag.constant(f).is_some() && !self.bound.contains_key(&f) {
                continue;
            }
            match &self.dag.nodes[f] {
                Node::Powi(base, e) if *e < 0 && !self.bound.contains_key(&f) => {
                    denominator.push(wrap(self.power(*base, -*e), Precedence::Atom));
                }
                _ => numerator.push(wrap(self.render(f), Precedence::Unary)),
            }
        }
        let join = |items: &[TokenStream]| -> TokenStream {
            let mut it = items.iter();
            let first = it.next().cloned().unwrap_or_else(|| quote!(1.0));
            it.fold(first, |acc, t| quote!(#acc * #t))
        };
        let num = join(&numerator);
        if denominator.is_empty() {
            return Rendered {
                tokens: num,
                precedence: if numerator.len() > 1 { Precedence::Product } else { Precedence::Unary },
            };
        }
        let den = if denominator.len() == 1 {
            denominator[0].clone()
        } else {
            let d = join(&denominator);
            quote!((#d))
        };
        Rendered { tokens: quote!(#num / #den), precedence: Precedence::Product }
    }

    pub(super) fn power(&self, base: NodeId, exponent: i32) -> Rendered {
        let b = self.render(base);
        if exponent == 1 {
            return b;
        }
        if exponent == 2 && b.precedence == Precedence::Atom {
            let t = b.tokens;
            return Rendered { tokens: quote!(#t * #t), precedence: Precedence::Product };
        }
        let t = wrap(b, Precedence::Atom);
        let e = Literal::i32_unsuffixed(exponent);
        atom(quote!(#t.powi(#e)))
    }

    pub(super) fn render(&self, id: NodeId) -> Rendered {
        if let Some(r) = self.leaf(id) {
            return r;
        }
        self.render_node(id)
    }

    /// The node's own expression, even where the node itself is cached or bound.
    pub(super) fn render_node(&self, id: NodeId) -> Rendered {
        match &self.dag.nodes[id] {
            Node::Add(terms) => {
                let mut positive: Vec<TokenStream> = Vec::new();
                let mut negative: Vec<TokenStream> = Vec::new();
                for &t in terms {
                    match self.negated_term(t) {
                        Some(r) => negative.push(wrap(r, Precedence::Product)),
                        None => positive.push(wrap(self.render(t), Precedence::Product)),
                    }
                }
                let mut tokens = match positive.first() {
                    Some(first) => {
                        let mut acc = first.clone();
                        for t in &positive[1..] {
                            acc = quote!(#acc + #t);
                        }
                        acc
                    }
                    None => {
                        let first = negative.remove(0);
                        quote!(-#first)
                    }
                };
                for t in &negative {
                    tokens = quote!(#tokens - #t);
                }
                Rendered { tokens, precedence: Precedence::Sum }
            }
            Node::Mul(factors) => {
                let coefficient = factors.iter().find_map(|&f| self.coefficient(f)).unwrap_or(1.0);
                if coefficient < 0.0 {
                    let inner = wrap(self.product(factors, -coefficient), Precedence::Unary);
                    Rendered { tokens: quote!(-#inner), precedence: Precedence::Unary }
                } else {
                    self.product(factors, coefficient)
                }
            }
            Node::Powi(base, e) if *e < 0 => {
                let d = wrap(self.power(*base, -*e), Precedence::Atom);
                Rendered { tokens: quote!(1.0 / #d), precedence: Precedence::Product }
            }
            Node::Powi(base, e) => self.power(*base, *e),
            Node::Powf(base, bits) => {
                let b = wrap(self.render(*base), Precedence::Atom);
                let e = f64::from_bits(*bits);
                if e == 0.5 {
                    atom(quote!(#b.sqrt()))
                } else {
                    let lit = float(e);
                    atom(quote!(#b.powf(#lit)))
                }
            }
            Node::Call(Function::Stumpff(k), arg) => {
                let a = self.render(*arg).tokens;
                let k = Literal::usize_unsuffixed(*k as usize);
                atom(quote!(softgen_runtime::stumpff(#a)[#k]))
            }
            Node::Call(Function::ReciprocalOrZero, arg) => {
                let a = self.render(*arg).tokens;
                atom(quote!(softgen_runtime::reciprocal_or_zero(#a)))
            }
            Node::Call(f, arg) => {
                let a = wrap(self.render(*arg), Precedence::Atom);
                let m = function_method(*f);
                atom(quote!(#a.#m()))
            }
            Node::Const(_) | Node::Input(_) => self.leaf(id).unwrap_or_else(|| atom(quote!(0.0))),
        }
    }
}

pub(super) fn function_method(f: Function) -> Ident {
    Ident::new(
        match f {
            Function::Sin => "sin",
            Function::Cos => "cos",
            Function::Tan => "tan",
            Function::Exp => "exp",
            Function::Log => "ln",
            Function::Stumpff(_) => "stumpff",
            Function::ReciprocalOrZero => "reciprocal_or_zero",
        },
        Span::call_site(),
    )
}

/// How a kernel sees the per-state cache.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum CacheUse {
    /// A kernel reading the cache (`cache.field`).
    Read,
    /// The cache kernel itself: cached outputs are defined as `let`s, in dependency order,
    /// and later ones read earlier ones.
    Define,
}

/// The name of a `let`: a named intermediate's own name (made unique against `taken`), or
/// the next numbered one.
pub(super) fn binding_name(named: Option<&String>, taken: &mut HashSet<String>, counter: &mut usize) -> Ident {
    match named {
        Some(text) => {
            let mut text = identifier(text);
            while !taken.insert(text.clone()) {
                text.push('_');
            }
            format_ident!("{}", text)
        }
        None => {
            *counter += 1;
            format_ident!("t{}", *counter - 1)
        }
    }
}

/// Statements that compute `outputs` (target, node): shared subexpressions become `let`s,
/// named intermediates keep their names, and cached nodes are read from the cache (or, in
/// the cache kernel, defined into it).
pub(super) fn body(
    dag: &Dag,
    params: &[Ident],
    cache: &HashMap<NodeId, Ident>,
    outputs: &[(TokenStream, NodeId)],
    mode: CacheUse,
) -> TokenStream {
    body_with_lanes(dag, params, cache, outputs, mode, &LimbLanes::none())
}

/// [`body`], with the nodes that identical sections compute alike computed together in the
/// lanes of a `softgen_runtime::Lanes4` (see `limb_lanes`): one lane expression per set of
/// matching nodes, lanes gathered from scalars where a set's children are not in lanes
/// themselves, and scalars taken out of lanes where something outside them reads a member.
pub(super) fn body_with_lanes(
    dag: &Dag,
    params: &[Ident],
    cache: &HashMap<NodeId, Ident>,
    outputs: &[(TokenStream, NodeId)],
    mode: CacheUse,
    lanes: &LimbLanes,
) -> TokenStream {
    body_reading_values(dag, params, cache, outputs, mode, lanes, &HashMap::new())
}

/// [`body_with_lanes`], reading `values` as `values[k]` (a kernel serving several of one
/// shape, `shapes.rs`).
pub(super) fn body_reading_values(
    dag: &Dag,
    params: &[Ident],
    cache: &HashMap<NodeId, Ident>,
    outputs: &[(TokenStream, NodeId)],
    mode: CacheUse,
    lanes: &LimbLanes,
    values: &HashMap<NodeId, usize>,
) -> TokenStream {
    let targets: HashMap<NodeId, &TokenStream> = outputs.iter().map(|(t, id)| (*id, t)).collect();
    let defined = |id: NodeId| mode == CacheUse::Define && targets.contains_key(&id);
    let (uses, order) = post_order(dag, cache, outputs, &defined);
    let reads = match mode {
        CacheUse::Read => quote!(cache.),
        CacheUse::Define => quote!(),
    };
    let mut emitter = Emitter::new(dag, params, cache, reads);
    emitter.read_values(values);
    let mut bindings = Bindings {
        statements: TokenStream::new(),
        counter: 0,
        // In `cache()` the fields are `let`s too: other names must not shadow them.
        taken: match mode {
            CacheUse::Define => cache.values().map(|field| field.to_string()).collect(),
            CacheUse::Read => HashSet::new(),
        },
        assigned: HashSet::new(),
    };
    // One node outside lanes: defined into the cache where it is a field the cache kernel
    // defines, else bound to a `let` where named or shared, else left to its readers inline.
    let emit_scalar = |id: NodeId, emitter: &mut Emitter, bindings: &mut Bindings| {
        if defined(id) {
            // Defined where all its inputs are known, so later cache entries can read it.
            let target = targets[&id];
            let value = emitter.render_node(id).tokens;
            bindings.statements.extend(quote!(#target = #value;));
            bindings.assigned.insert(id);
            return;
        }
        let cached = cache.contains_key(&id);
        let named = dag.names.get(&id);
        let used = uses.get(&id).copied().unwrap_or(0);
        // Named intermediates (a body's rotation, a composite inertia) keep their names so the
        // emitted code reads as the algorithm; other shared nodes are numbered.
        let bind = !dag.is_leaf(id) && !cached && (named.is_some() || used >= 2);
        if !bind {
            return;
        }
        let name = binding_name(named, &mut bindings.taken, &mut bindings.counter);
        let value = emitter.render(id).tokens;
        bindings.statements.extend(quote!(let #name = #value;));
        emitter.bound.insert(id, name);
    };
    let groups = lanes.groups(dag, &order, &|id| !dag.is_leaf(id) && (!cache.contains_key(&id) || defined(id)));
    if !groups.computed.is_empty() {
        let order = unit_order(dag, outputs, &groups, &|id| cache.contains_key(&id) && !defined(id));
        let context =
            LaneContext { dag, cache, lanes, groups: &groups, targets: &targets, scalar_read: &order.scalar_read };
        let mut lane_names: Vec<Option<Ident>> = vec![None; groups.computed.len()];
        let mut gathered: HashMap<[Option<NodeId>; WIDTH], Ident> = HashMap::new();
        for unit in order.units {
            match unit {
                Unit::Node(id) => emit_scalar(id, &mut emitter, &mut bindings),
                Unit::Group(g) => {
                    let name =
                        lane_group(&context, g, &defined, &mut emitter, &mut bindings, &lane_names, &mut gathered);
                    lane_names[g] = Some(name);
                }
            }
        }
    } else {
        for id in order {
            emit_scalar(id, &mut emitter, &mut bindings);
        }
    }
    let Bindings { mut statements, assigned, .. } = bindings;
    for (target, id) in outputs {
        if assigned.contains(id) {
            continue;
        }
        let value = emitter.render(*id).tokens;
        statements.extend(quote!(#target = #value;));
    }
    statements
}

/// What a kernel's statements have bound so far, beside the emitter's bindings.
struct Bindings {
    statements: TokenStream,
    /// Names in use, and the counter of numbered ones.
    taken: HashSet<String>,
    counter: usize,
    /// Outputs already written (cache fields the cache kernel defined on the way).
    assigned: HashSet<NodeId>,
}

/// What a kernel's lane sets are emitted against.
struct LaneContext<'a> {
    dag: &'a Dag,
    cache: &'a HashMap<NodeId, Ident>,
    lanes: &'a LimbLanes,
    groups: &'a Groups,
    targets: &'a HashMap<NodeId, &'a TokenStream>,
    /// Members something outside lanes reads.
    scalar_read: &'a HashSet<NodeId>,
}

/// The nodes the outputs reach, children before parents, stopping at cache reads (`defined`:
/// the cache fields the cache kernel defines, which it computes), and how often each is used.
fn post_order(
    dag: &Dag,
    cache: &HashMap<NodeId, Ident>,
    outputs: &[(TokenStream, NodeId)],
    defined: &dyn Fn(NodeId) -> bool,
) -> (HashMap<NodeId, usize>, Vec<NodeId>) {
    let mut uses: HashMap<NodeId, usize> = HashMap::new();
    let mut order: Vec<NodeId> = Vec::new();
    let mut visited: HashSet<NodeId> = HashSet::new();
    // Iterative post-order DFS (expressions can be deep).
    for (_, root) in outputs {
        *uses.entry(*root).or_default() += 1;
        if visited.contains(root) {
            continue;
        }
        let mut stack = vec![(*root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                order.push(id);
                continue;
            }
            if !visited.insert(id) {
                continue;
            }
            stack.push((id, true));
            if cache.contains_key(&id) && !defined(id) {
                continue;
            }
            for c in dag.children(id).into_iter().rev() {
                *uses.entry(c).or_default() += 1;
                if !visited.contains(&c) {
                    stack.push((c, false));
                }
            }
        }
    }
    (uses, order)
}

/// One set of matching nodes computed in lanes, bound to a `let` whose name it returns: its
/// representative's lane children read their sets' lanes (computed sets by name, other sets
/// gathered from their scalars once), and scalars are taken out for what reads a member
/// outside lanes.
fn lane_group(
    context: &LaneContext,
    g: usize,
    defined: &dyn Fn(NodeId) -> bool,
    emitter: &mut Emitter,
    bindings: &mut Bindings,
    lane_names: &[Option<Ident>],
    gathered: &mut HashMap<[Option<NodeId>; WIDTH], Ident>,
) -> Ident {
    let LaneContext { dag, cache, lanes, groups, targets, scalar_read } = *context;
    let members = groups.computed[g];
    let representative = members.iter().flatten().copied().next().expect("a set has members");
    // The representative's lane children read their sets' lanes: computed sets
    // by name, other sets gathered from their scalars once.
    let paired: Vec<Option<Vec<NodeId>>> =
        members.iter().map(|m| m.and_then(|m| lanes.paired_children(dag, representative, m))).collect();
    let mut saved = Vec::new();
    for (j, c) in dag.children(representative).into_iter().enumerate() {
        // A constant the same in every lane stays a literal (below); one that
        // differs (a ring's station) is gathered like any value read by lane.
        if saved.iter().any(|(s, _)| *s == c) {
            continue;
        }
        let source = match (lanes.lane(c), groups.group_of.get(&c)) {
            (Some(_), Some(&h)) => lane_names[h].clone().expect("children are emitted first"),
            // Values the set reads by lane: its members' own children.
            _ => {
                let per_lane: [Option<NodeId>; WIDTH] =
                    std::array::from_fn(|l| paired[l].as_ref().map(|children| children[j]));
                if lanes.lane(c).is_none() && per_lane.iter().flatten().all(|&x| x == c) {
                    // The same value in every lane: read as a scalar.
                    continue;
                }
                match gathered.get(&per_lane) {
                    Some(name) => name.clone(),
                    None => {
                        let values = per_lane.iter().map(|x| match x {
                            Some(x) => emitter.render(*x).tokens,
                            None => quote!(0.0),
                        });
                        let name = binding_name(None, &mut bindings.taken, &mut bindings.counter);
                        bindings
                            .statements
                            .extend(quote!(let #name = softgen_runtime::Lanes4::from_array([#(#values),*]);));
                        gathered.insert(per_lane, name.clone());
                        name
                    }
                }
            }
        };
        saved.push((c, emitter.bound.insert(c, source)));
    }
    let value = emitter.render_node(representative).tokens;
    for (c, previous) in saved.into_iter().rev() {
        match previous {
            Some(name) => emitter.bound.insert(c, name),
            None => emitter.bound.remove(&c),
        };
    }
    let lanes_name = dag.names.get(&representative).map(|n| format!("lanes_{n}"));
    let name = binding_name(lanes_name.as_ref(), &mut bindings.taken, &mut bindings.counter);
    bindings.statements.extend(quote!(let #name = #value;));
    // Scalars for what reads a member outside lanes: outputs, cache fields
    // defined here, and scalar parents.
    let mut any = false;
    let pattern = members.map(|m| match m {
        Some(m) if defined(m) => {
            any = true;
            bindings.assigned.insert(m);
            let field = &cache[&m];
            emitter.bound.insert(m, field.clone());
            quote!(#field)
        }
        Some(m) if targets.contains_key(&m) || scalar_read.contains(&m) => {
            any = true;
            let scalar = binding_name(dag.names.get(&m), &mut bindings.taken, &mut bindings.counter);
            emitter.bound.insert(m, scalar.clone());
            quote!(#scalar)
        }
        _ => quote!(_),
    });
    if any {
        bindings.statements.extend(quote!(let [#(#pattern),*] = #name.to_array();));
    }
    name
}

/// A kernel's order of emission with sets in lanes: each set one unit after all its members'
/// children, and the members that something outside lanes reads.
struct UnitOrder {
    units: Vec<Unit>,
    scalar_read: HashSet<NodeId>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Unit {
    Node(NodeId),
    Group(usize),
}

/// Post-order over units (nodes, and computed sets as one unit each) from the outputs,
/// stopping at leaves and at nodes for which `stops` holds (cache reads).
fn unit_order(
    dag: &Dag,
    outputs: &[(TokenStream, NodeId)],
    groups: &Groups,
    stops: &dyn Fn(NodeId) -> bool,
) -> UnitOrder {
    let unit_of = |id: NodeId| groups.group_of.get(&id).map_or(Unit::Node(id), |&g| Unit::Group(g));
    let children = |unit: Unit| -> Vec<NodeId> {
        match unit {
            Unit::Node(id) if dag.is_leaf(id) || stops(id) => Vec::new(),
            Unit::Node(id) => dag.children(id),
            Unit::Group(g) => groups.computed[g].iter().flatten().flat_map(|&m| dag.children(m)).collect(),
        }
    };
    let mut units = Vec::new();
    let mut scalar_read = HashSet::new();
    let mut visited: HashSet<Unit> = HashSet::new();
    for (_, root) in outputs {
        if groups.group_of.contains_key(root) {
            scalar_read.insert(*root);
        }
        let root = unit_of(*root);
        if visited.contains(&root) {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((unit, expanded)) = stack.pop() {
            if expanded {
                units.push(unit);
                continue;
            }
            if !visited.insert(unit) {
                continue;
            }
            stack.push((unit, true));
            for c in children(unit).into_iter().rev() {
                if matches!(unit, Unit::Node(_)) && groups.group_of.contains_key(&c) {
                    scalar_read.insert(c);
                }
                let child = unit_of(c);
                if !visited.contains(&child) {
                    stack.push((child, false));
                }
            }
        }
    }
    UnitOrder { units, scalar_read }
}

/// The non-zero entries of a per-coordinate output as targets `out[i]`, or as the diagonal
/// `out[(i, i)]` of a matrix.
pub(super) fn per_coordinate(dag: &Dag, nodes: &[NodeId], diagonal: bool) -> Vec<(TokenStream, NodeId)> {
    nodes
        .iter()
        .enumerate()
        .filter(|(_, &id)| dag.constant(id) != Some(0.0))
        .map(|(i, &id)| {
            let li = Literal::usize_unsuffixed(i);
            (if diagonal { quote!(out[(#li, #li)]) } else { quote!(out[#li]) }, id)
        })
        .collect()
}

/// A spec expression as Rust over `p.<parameter>`.
pub(super) fn spec_expression(e: &Expr) -> TokenStream {
    match e {
        Expr::Num(Number::Rational(n, d)) => float(*n as f64 / *d as f64),
        Expr::Num(Number::Float(v)) => float(*v),
        Expr::Sym(s) if s == "pi" => quote!(std::f64::consts::PI),
        Expr::Sym(s) => {
            let f = format_ident!("{}", s);
            quote!(p.#f)
        }
        Expr::Add(terms) => {
            let t = terms.iter().map(spec_expression);
            quote!((0.0 #(+ #t)*))
        }
        Expr::Mul(factors) => {
            let f = factors.iter().map(spec_expression);
            quote!((1.0 #(* #f)*))
        }
        Expr::Pow(base, exponent) => {
            let b = spec_expression(base);
            match exponent.as_ref() {
                Expr::Num(Number::Rational(n, 1)) => {
                    let n = *n as i32;
                    quote!(f64::powi(#b, #n))
                }
                other => {
                    let x = spec_expression(other);
                    quote!(f64::powf(#b, #x))
                }
            }
        }
        Expr::Call(name, args) => {
            let f = format_ident!("{}", name);
            let a = args.iter().map(spec_expression);
            quote!(f64::#f(#(#a),*))
        }
    }
}

/// Adds every node reachable from `root` (itself included) to `seen`.
pub(super) fn collect_reachable(dag: &Dag, root: NodeId, seen: &mut HashSet<NodeId>) {
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            stack.extend(dag.children(id));
        }
    }
}

pub(super) fn reaches(dag: &Dag, from: NodeId, target: NodeId) -> bool {
    let mut stack = vec![from];
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = stack.pop() {
        if id == target {
            return true;
        }
        if seen.insert(id) {
            stack.extend(dag.children(id));
        }
    }
    false
}

pub(crate) fn doc(text: &str) -> TokenStream {
    let lines = text.lines().map(|l| format!(" {l}"));
    quote!(#(#[doc = #lines])*)
}
