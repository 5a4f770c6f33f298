//! Rust emission: derived expressions become straight-line, allocation-free functions on
//! fixed-size nalgebra types, built as tokens with quote and formatted with prettyplease.

use crate::dag::{Dag, Function, Input, Node, NodeId};
use crate::equations::Equations;
use crate::expr::{Expr, Number};
use crate::model::{CoordinateKind, Robot, Rule, SectionKind, TerrainDefault};
use crate::spatial::Articulated;
use crate::spec::Anisotropy;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Precedence of a rendered expression, to parenthesise only where needed.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Precedence {
    Sum,
    Product,
    Unary,
    Atom,
}

struct Rendered {
    tokens: TokenStream,
    precedence: Precedence,
}

fn atom(tokens: TokenStream) -> Rendered {
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

fn wrap(r: Rendered, at_least: Precedence) -> TokenStream {
    let t = r.tokens;
    if r.precedence < at_least {
        quote!((#t))
    } else {
        t
    }
}

/// The emitter's view of a kernel: which nodes are bound to `let`s and how leaves read.
struct Emitter<'a> {
    dag: &'a Dag,
    params: &'a [Ident],
    /// Nodes read from the per-state cache, with their field names.
    cache: &'a HashMap<NodeId, Ident>,
    /// How a cache field is read in this kernel: `cache.` in kernels, nothing in `cache()`,
    /// where the fields are local `let`s until the struct is built.
    reads: TokenStream,
    bound: HashMap<NodeId, Ident>,
}

impl<'a> Emitter<'a> {
    fn leaf(&self, id: NodeId) -> Option<Rendered> {
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
    fn negated_term(&self, id: NodeId) -> Option<Rendered> {
        match &self.dag.nodes[id] {
            Node::Const(bits) if f64::from_bits(*bits) < 0.0 && !self.bound.contains_key(&id) => {
                Some(atom(float(-f64::from_bits(*bits))))
            }
            Node::Mul(factors) if !self.bound.contains_key(&id) && !self.cache.contains_key(&id) => {
                let coefficient = factors.iter().find_map(|&f| self.dag.constant(f))?;
                if coefficient >= 0.0 {
                    return None;
                }
                Some(self.product(factors, -coefficient))
            }
            _ => None,
        }
    }

    fn product(&self, factors: &[NodeId], coefficient: f64) -> Rendered {
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

    fn power(&self, base: NodeId, exponent: i32) -> Rendered {
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

    fn render(&self, id: NodeId) -> Rendered {
        if let Some(r) = self.leaf(id) {
            return r;
        }
        self.render_node(id)
    }

    /// The node's own expression, even where the node itself is cached or bound.
    fn render_node(&self, id: NodeId) -> Rendered {
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
                let coefficient = factors.iter().find_map(|&f| self.dag.constant(f)).unwrap_or(1.0);
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
            Node::Call(f, arg) => {
                let a = wrap(self.render(*arg), Precedence::Atom);
                let m = function_method(*f);
                atom(quote!(#a.#m()))
            }
            Node::Const(_) | Node::Input(_) => self.leaf(id).unwrap_or_else(|| atom(quote!(0.0))),
        }
    }
}

fn function_method(f: Function) -> Ident {
    Ident::new(
        match f {
            Function::Sin => "sin",
            Function::Cos => "cos",
            Function::Tan => "tan",
            Function::Exp => "exp",
            Function::Log => "ln",
            Function::Stumpff(_) => "stumpff",
        },
        Span::call_site(),
    )
}

/// How a kernel sees the per-state cache.
#[derive(Clone, Copy, PartialEq)]
enum CacheUse {
    /// A kernel reading the cache (`cache.field`).
    Read,
    /// The cache kernel itself: cached outputs are defined as `let`s, in dependency order,
    /// and later ones read earlier ones.
    Define,
}

/// Statements that compute `outputs` (target, node): shared subexpressions become `let`s,
/// named intermediates keep their names, and cached nodes are read from the cache (or, in
/// the cache kernel, defined into it).
fn body(
    dag: &Dag,
    params: &[Ident],
    cache: &HashMap<NodeId, Ident>,
    outputs: &[(TokenStream, NodeId)],
    mode: CacheUse,
) -> TokenStream {
    let mut uses: HashMap<NodeId, usize> = HashMap::new();
    let mut order: Vec<NodeId> = Vec::new();
    let mut visited: HashSet<NodeId> = HashSet::new();
    let targets: HashMap<NodeId, &TokenStream> = outputs.iter().map(|(t, id)| (*id, t)).collect();
    let defined = |id: NodeId| mode == CacheUse::Define && targets.contains_key(&id);
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
    let reads = match mode {
        CacheUse::Read => quote!(cache.),
        CacheUse::Define => quote!(),
    };
    let mut emitter = Emitter { dag, params, cache, reads, bound: HashMap::new() };
    let mut statements = TokenStream::new();
    let mut counter = 0usize;
    // In `cache()` the fields are `let`s too: other names must not shadow them.
    let mut taken: HashSet<String> = match mode {
        CacheUse::Define => cache.values().map(|field| field.to_string()).collect(),
        CacheUse::Read => HashSet::new(),
    };
    let mut assigned: HashSet<NodeId> = HashSet::new();
    for id in order {
        if defined(id) {
            // Defined where all its inputs are known, so later cache entries can read it.
            let target = targets[&id];
            let value = emitter.render_node(id).tokens;
            statements.extend(quote!(#target = #value;));
            assigned.insert(id);
            continue;
        }
        let cached = cache.contains_key(&id);
        let named = dag.names.get(&id);
        let used = uses.get(&id).copied().unwrap_or(0);
        // Named intermediates (a body's rotation, a composite inertia) keep their names so the
        // emitted code reads as the algorithm; other shared nodes are numbered.
        let bind = !dag.is_leaf(id) && !cached && (named.is_some() || used >= 2);
        if !bind {
            continue;
        }
        let name = match named {
            Some(text) => {
                let mut text = identifier(text);
                while !taken.insert(text.clone()) {
                    text.push('_');
                }
                format_ident!("{}", text)
            }
            None => {
                counter += 1;
                format_ident!("t{}", counter - 1)
            }
        };
        let value = emitter.render(id).tokens;
        statements.extend(quote!(let #name = #value;));
        emitter.bound.insert(id, name);
    }
    for (target, id) in outputs {
        if assigned.contains(id) {
            continue;
        }
        let value = emitter.render(*id).tokens;
        statements.extend(quote!(#target = #value;));
    }
    statements
}

pub(crate) fn doc(text: &str) -> TokenStream {
    let lines = text.lines().map(|l| format!(" {l}"));
    quote!(#(#[doc = #lines])*)
}

/// Emits the generated module for one robot as tokens (formatted by [`format_module`]).
pub fn emit(robot: &Robot, equations: &Equations) -> Result<TokenStream, String> {
    let n = robot.coordinates.len();
    let c = robot.contact_points.len();
    let dag = &equations.dag;
    let mass_matrix = &equations.mass_matrix;
    let coriolis = &equations.coriolis;
    let coriolis_matrix = &equations.coriolis_matrix;
    let gravity = &equations.gravity;
    let potential = equations.potential_energy;
    let positions: Vec<Vec<NodeId>> = equations.contact_positions.iter().map(|v| v.to_vec()).collect();
    let velocities: Vec<Vec<NodeId>> = equations.contact_velocities.iter().map(|v| v.to_vec()).collect();
    let axes: Vec<Vec<NodeId>> = equations.contact_axes.iter().map(|v| v.to_vec()).collect();
    let jacobians: Vec<Vec<Vec<NodeId>>> =
        equations.contact_jacobians.iter().map(|cols| cols.iter().map(|col| col.to_vec()).collect()).collect();
    let com = equations.center_of_mass;
    let total_mass = equations.total_mass;
    let linear_momentum = equations.linear_momentum;
    let angular_momentum = equations.angular_momentum;

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
    let params: Vec<Ident> = robot.parameters.iter().map(|p| format_ident!("{}", p.name)).collect();
    let empty = HashMap::new();
    let key = |id: NodeId| -> (String, String) {
        let Node::Call(f, arg) = dag.nodes[id] else { return (String::new(), String::new()) };
        let e = Emitter { dag, params: &params, cache: &empty, reads: quote!(cache.), bound: HashMap::new() };
        (e.render(arg).tokens.to_string(), format!("{f:?}"))
    };
    calls.sort_by_cached_key(|&id| key(id));
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
    // Field names: `sin_q3` for functions of one coordinate, the algorithm's names for the
    // intermediates; made unique.
    let mut taken: HashSet<String> = HashSet::new();
    let mut cache: HashMap<NodeId, Ident> = HashMap::new();
    let mut fields: Vec<(Ident, Option<String>)> = Vec::new();
    for (slot, &id) in calls.iter().chain(&argument_fields).chain(&intermediates).enumerate() {
        let (mut name, note) = match dag.nodes[id] {
            Node::Call(f, arg) => {
                let method = match f {
                    Function::Stumpff(k) => format!("stumpff_c{k}"),
                    _ => function_method(f).to_string(),
                };
                let (text, _) = key(id);
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
    let mut argument_lets: Vec<(NodeId, Ident)> = argument_fields.iter().map(|id| (*id, cache[id].clone())).collect();
    let arguments: Vec<(NodeId, TokenStream)> = argument_order
        .iter()
        .enumerate()
        .map(|(k, &a)| {
            let e = Emitter { dag, params: &params, cache: &empty, reads: quote!(), bound: HashMap::new() };
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
        let uses = &by_argument[arg];
        let sin = uses.iter().find(|(f, _)| *f == Function::Sin).map(|u| &cache[&u.1]);
        let cos = uses.iter().find(|(f, _)| *f == Function::Cos).map(|u| &cache[&u.1]);
        if let (Some(s), Some(c)) = (sin, cos) {
            cache_body.extend(quote!(let (#s, #c) = #value.sin_cos();));
        }
        // Every Stumpff function of one argument from one evaluation.
        if uses.iter().any(|(f, _)| matches!(f, Function::Stumpff(_))) {
            let all = format_ident!("stumpff_{}", cache[&uses[0].1]);
            cache_body.extend(quote!(let #all = softgen_runtime::stumpff(#value);));
            for (f, id) in uses {
                if let Function::Stumpff(k) = f {
                    let field = &cache[id];
                    let k = Literal::usize_unsuffixed(*k as usize);
                    cache_body.extend(quote!(let #field = #all[#k];));
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
            cache_body.extend(quote!(let #field = #value.#m();));
        }
    }
    let intermediate_outputs: Vec<(TokenStream, NodeId)> = intermediates
        .iter()
        .map(|id| {
            let field = &cache[id];
            (quote!(let #field), *id)
        })
        .collect();
    cache_body.extend(body(dag, &params, &cache, &intermediate_outputs, CacheUse::Define));
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

    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let matrix_outputs = |target: TokenStream, m: &[Vec<NodeId>], symmetric: bool| -> Vec<(TokenStream, NodeId)> {
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
    };
    let vector_outputs = |target: TokenStream, v: &[NodeId]| -> Vec<(TokenStream, NodeId)> {
        v.iter()
            .enumerate()
            .filter(|(_, &id)| dag.constant(id) != Some(0.0))
            .map(|(i, &id)| {
                let li = idx(i);
                (quote!(#target[#li]), id)
            })
            .collect()
    };
    let kernel = |outputs: &[(TokenStream, NodeId)]| body(dag, &params, &cache, outputs, CacheUse::Read);

    let mass_body = kernel(&matrix_outputs(quote!(out), mass_matrix, true));
    let coriolis_body = kernel(&vector_outputs(quote!(out), coriolis));
    let coriolis_matrix_body = kernel(&matrix_outputs(quote!(out), coriolis_matrix, false));
    let gravity_body = kernel(&vector_outputs(quote!(out), gravity));
    let potential_body = kernel(&[(quote!(let energy), potential)]);
    let per_point = |v: &[Vec<NodeId>]| -> Vec<(TokenStream, NodeId)> {
        let mut out = Vec::new();
        for (k, p) in v.iter().enumerate() {
            for (i, &id) in p.iter().enumerate() {
                let (lk, li) = (idx(k), idx(i));
                out.push((quote!(out[#lk][#li]), id));
            }
        }
        out
    };
    let positions_body = kernel(&per_point(&positions));
    let velocities_body = kernel(&per_point(&velocities));
    let axes_body = kernel(&per_point(&axes));
    let com_body = kernel(&[(quote!(let x), com[0]), (quote!(let y), com[1]), (quote!(let z), com[2])]);
    // `total_mass(p)` has no cache: it is computed from the parameters alone.
    let total_mass_body = body(dag, &params, &empty, &[(quote!(let mass), total_mass)], CacheUse::Read);
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
    // Forward dynamics by the articulated-body algorithm, where the equations have it.
    let (forward_fn, forward_impl) = match &equations.articulated {
        None => (TokenStream::new(), TokenStream::new()),
        Some(articulated) => {
            let mut outputs = vector_outputs(quote!(out), &articulated.accelerations);
            for (k, &pivot) in articulated.pivots.iter().enumerate() {
                let lk = idx(k);
                outputs.push((quote!(pivots[#lk]), pivot));
            }
            let forward_body = kernel(&outputs);
            let pivot_count = idx(articulated.pivots.len());
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
                },
                quote! {
                    fn forward_dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, tau: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) -> bool { forward_dynamics_into(q, qd, tau, p, k, out) }
                },
            )
        }
    };
    let mut jacobian_fns = TokenStream::new();
    let mut jacobian_arms = TokenStream::new();
    let column_outputs = |cols: &[Vec<NodeId>]| {
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
    };
    // Frames carrying more than one point (skin rings, bodies with several points) get one
    // Jacobian function of the point's position, which each point's function calls.
    let points_on_frame = equations.points_on_frame();
    // Soft robots serve points from their frame's motion instead (see `Equations::frame_motion`).
    let (frame_fn, frame_impl) = contact_frames(equations, &kernel)?;
    let robot_type = format_ident!("{}", camel(&robot.name));
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
    for (k, cols) in jacobians.iter().enumerate() {
        let name = format_ident!("contact_jacobian_{}", k);
        let point = &robot.contact_points[k];
        let d = doc(&format!("Jacobian of contact point `{}` (on `{}`).", point.name, robot.bodies[point.body].name));
        let frame = equations.contact_frame_of[k];
        let body = if points_on_frame[frame] < 2 {
            let body = kernel(&column_outputs(cols));
            quote!(*out = SMatrix::zeros(); #body)
        } else if equations.frame_motion {
            let at = &positions[k];
            let body = kernel(&[(quote!(let x), at[0]), (quote!(let y), at[1]), (quote!(let z), at[2])]);
            let lf = idx(frame);
            quote! {
                #body
                let mut columns = SMatrix::<f64, 6, DOF>::zeros();
                let mut axis = Vector3::zeros();
                #robot_type::contact_frame_into(#lf, q, p, cache, &mut columns, &mut axis);
                *out = softgen_runtime::point_jacobian(&columns, &Vector3::new(x, y, z));
            }
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
    // With frames shared by several points (skin rings), the points in contact ask for their
    // own axes instead of every point's.
    let (axis_fn, kinematics_impl) = if points_on_frame.iter().all(|&c| c < 2) || equations.frame_motion {
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
    };

    let imports = if robot.is_soft() {
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
    };
    let (soft_items, soft_impl) = soft_sections(robot, equations, &params, &kernel);
    let (water_items, water_impl) = water(equations, &params, &kernel);
    let (thruster_items, thruster_impl) = thrusters(robot, equations, &kernel);
    let Shared { params: params_items, constants } = shared(robot);
    let description = &robot.description;
    let cache_doc = doc(&format!(
        "Everything about a state that does not depend on the rates, computed once per state by [`cache`] \
         and shared by every kernel.\n\n{cache_summary}"
    ));
    let model_doc = doc(&format!("{description}\n\n{n} generalized coordinates, {c} contact points."));
    let n_lit = idx(n);
    let c_lit = idx(c);

    let tokens = quote! {
        use softgen_runtime::nalgebra::{SMatrix, SVector, Vector3};
        #imports

        /// Number of generalized coordinates.
        pub const DOF: usize = #n_lit;
        /// Number of contact points.
        pub const CONTACTS: usize = #c_lit;

        #params_items

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

        #forward_fn

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

        #axis_fn
        #frame_fn

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

        #soft_items

        #water_items

        #thruster_items

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
            #soft_impl
            #water_impl
            #thruster_impl
            fn potential_energy(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> f64 { potential_energy(q, p, k) }
            fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_positions_into(q, p, k, out) }
            fn contact_velocities_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_velocities_into(q, qd, p, k, out) }
            fn contact_axes_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_axes_into(q, p, k, out) }
            fn contact_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 3, DOF>) { contact_jacobian_into(index, q, p, k, out) }
            #kinematics_impl
            #frame_impl
            fn center_of_mass(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { center_of_mass(q, p, k) }
            fn total_mass(p: &Params) -> f64 { total_mass(p) }
            fn linear_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { linear_momentum(q, qd, p, k) }
            fn angular_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { angular_momentum(q, qd, p, k) }
        }
    };
    Ok(tokens)
}

/// Most coordinates a contact frame owns: a soft section's.
const OWN_COLUMNS: usize = 3;

/// The frame-motion contact kernels of soft robots (see `Equations::frame_motion`): which
/// frame carries each point; per frame its own columns (a skin ring's section's) and x axis,
/// per segment of frames the columns they share; so the runtime pays for a skin ring's own
/// columns once however many of its points touch, and for the rest once per segment.
fn contact_frames(
    equations: &Equations,
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> Result<(TokenStream, TokenStream), String> {
    if !equations.frame_motion {
        return Ok((TokenStream::new(), TokenStream::new()));
    }
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    // Frames whose columns outside their own coordinates are the same expressions form a
    // segment (a section's rings, a rigid body's frames): the runtime builds those columns
    // and the segment's twist once, and each touching frame adds only its own columns.
    let mut segment_keys: Vec<Vec<(usize, [NodeId; 6])>> = Vec::new();
    let mut segment_of = Vec::with_capacity(equations.contact_frames.len());
    let mut own_range = Vec::with_capacity(equations.contact_frames.len());
    let mut own_arms = TokenStream::new();
    for (f, frame) in equations.contact_frames.iter().enumerate() {
        let first = frame.own.first().copied().unwrap_or(0);
        if frame.own.len() > OWN_COLUMNS || frame.own.iter().enumerate().any(|(c, &j)| j != first + c) {
            return Err(format!(
                "contact frame `{}`: its own coordinates {:?} are not at most {OWN_COLUMNS} consecutive ones",
                frame.name, frame.own
            ));
        }
        own_range.push((first, frame.own.len()));
        let mut key = Vec::new();
        let mut outputs = Vec::new();
        for &(j, column) in &frame.motion {
            let ids = [column.w[0], column.w[1], column.w[2], column.v[0], column.v[1], column.v[2]];
            match frame.own.iter().position(|&k| k == j) {
                Some(c) => {
                    let lc = idx(c);
                    for (row, &id) in ids.iter().enumerate() {
                        if dag.constant(id) != Some(0.0) {
                            let lr = idx(row);
                            outputs.push((quote!(own[(#lr, #lc)]), id));
                        }
                    }
                }
                None => key.push((j, ids)),
            }
        }
        for (row, &id) in frame.axis.iter().enumerate() {
            let lr = idx(row);
            outputs.push((quote!(axis[#lr]), id));
        }
        let body = kernel(&outputs);
        let lf = idx(f);
        own_arms.extend(quote!(#lf => { #body }));
        let segment = match segment_keys.iter().position(|k| *k == key) {
            Some(s) => s,
            None => {
                segment_keys.push(key);
                segment_keys.len() - 1
            }
        };
        segment_of.push(segment);
    }
    let mut segment_arms = TokenStream::new();
    for (segment, key) in segment_keys.iter().enumerate() {
        let mut outputs = Vec::new();
        for &(j, ids) in key {
            let lj = idx(j);
            for (row, &id) in ids.iter().enumerate() {
                if dag.constant(id) != Some(0.0) {
                    let lr = idx(row);
                    outputs.push((quote!(columns[(#lr, #lj)]), id));
                }
            }
        }
        let body = kernel(&outputs);
        let ls = idx(segment);
        segment_arms.extend(quote!(#ls => { #body }));
    }
    // The broad phase: per frame its origin and bounding radius, and its points' positions.
    let mut sphere_arms = TokenStream::new();
    let mut position_arms = TokenStream::new();
    // Each frame's points are consecutive (see `recursive::equations`): where they start.
    let mut start = vec![0u16; equations.contact_frames.len() + 1];
    for (k, &f) in equations.contact_frame_of.iter().enumerate() {
        start[f + 1] = k as u16 + 1;
    }
    for (f, frame) in equations.contact_frames.iter().enumerate() {
        let lf = idx(f);
        let mut outputs: Vec<(TokenStream, NodeId)> =
            frame.origin.iter().enumerate().map(|(a, &id)| (quote!(centre[#a]), id)).collect();
        let radius = match frame.radius {
            Some(id) => {
                outputs.push((quote!(let radius), id));
                quote!(radius.abs())
            }
            None => quote!(f64::INFINITY),
        };
        let body = kernel(&outputs);
        sphere_arms.extend(quote!(#lf => { #body #radius }));
        let mut outputs = Vec::new();
        for (k, &of) in equations.contact_frame_of.iter().enumerate() {
            if of == f {
                let lk = idx(k);
                for (a, &id) in equations.contact_positions[k].iter().enumerate() {
                    outputs.push((quote!(out[#lk][#a]), id));
                }
            }
        }
        let body = kernel(&outputs);
        position_arms.extend(quote!(#lf => { #body }));
    }
    let start = start.iter().map(|&s| Literal::u16_unsuffixed(s));
    let frame_of = equations.contact_frame_of.iter().map(|&f| Literal::u16_unsuffixed(f as u16));
    let segment_lits = segment_of.iter().map(|&s| Literal::u16_unsuffixed(s as u16));
    let own_lits = own_range.iter().map(|&(first, count)| {
        let (first, count) = (Literal::u16_unsuffixed(first as u16), Literal::u8_unsuffixed(count as u8));
        quote!((#first, #count))
    });
    Ok((
        quote! {
            /// The origin of contact frame `frame` in the world (into `centre`) and the radius of
            /// a ball about it that holds all the frame's points (infinite for frames that are
            /// not skin rings): a broad phase, since terrain that cannot reach the ball touches
            /// none of them.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_sphere(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, centre: &mut Vector3<f64>) -> f64 {
                match frame {
                    #sphere_arms
                    _ => f64::INFINITY,
                }
            }

            /// World positions of the contact points of frame `frame` (the others in `out`
            /// are left as they are).
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_positions_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                match frame {
                    #position_arms
                    _ => {}
                }
            }

            /// World Plücker columns of the coordinates that contact segment `segment`'s frames
            /// share (rows 0-2 angular, 3-5 linear about the world origin; zero for the frames'
            /// own coordinates and for coordinates that do not move them).
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_segment_into(segment: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, columns: &mut SMatrix<f64, 6, DOF>) {
                *columns = SMatrix::zeros();
                match segment {
                    #segment_arms
                    _ => {}
                }
            }

            /// World Plücker columns of contact frame `frame`'s own coordinates
            /// (`CONTACT_FRAME_OWN`; the rest of `own` zero) and its x axis.
            #[inline]
            #[allow(unused_variables)]
            pub fn contact_frame_own_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, cache: &Cache, own: &mut SMatrix<f64, 6, 3>, axis: &mut Vector3<f64>) {
                *own = SMatrix::zeros();
                match frame {
                    #own_arms
                    _ => *axis = Vector3::zeros(),
                }
            }

            /// Per contact frame, its segment: the frames of a segment share the columns of
            /// every coordinate that is not their own.
            pub const CONTACT_FRAME_SEGMENT: &[u16] = &[#(#segment_lits),*];

            /// Per contact frame, the first of its own coordinates (whose columns differ from
            /// frame to frame within its segment) and how many there are.
            pub const CONTACT_FRAME_OWN: &[(u16, u8)] = &[#(#own_lits),*];
        },
        quote! {
            const CONTACT_FRAME_OF: &'static [u16] = &[#(#frame_of),*];
            const CONTACT_FRAME_START: &'static [u16] = &[#(#start),*];
            fn contact_frame_sphere(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, centre: &mut Vector3<f64>) -> f64 {
                contact_frame_sphere(frame, q, p, k, centre)
            }
            fn contact_frame_positions_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                contact_frame_positions_into(frame, q, p, k, out)
            }
            const CONTACT_FRAME_SEGMENT: &'static [u16] = CONTACT_FRAME_SEGMENT;
            const CONTACT_FRAME_OWN: &'static [(u16, u8)] = CONTACT_FRAME_OWN;
            fn contact_segment_into(segment: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, columns: &mut SMatrix<f64, 6, DOF>) {
                contact_segment_into(segment, q, p, k, columns)
            }
            fn contact_frame_own_into(frame: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, own: &mut SMatrix<f64, 6, 3>, axis: &mut Vector3<f64>) {
                contact_frame_own_into(frame, q, p, k, own, axis)
            }
        },
    ))
}

/// A robot's soft sections: what they are (coordinates, mount, geometry) for gaits and
/// drawings, their centre lines, and the damping and elasticity of their coordinates. Empty
/// for rigid robots.
fn soft_sections(
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
        let mount = crate::local::fixed_rotation(body.rotation, robot.plane_normal()).map(|row| {
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
    let segments = crate::recursive::CENTRE_LINE_SEGMENTS;
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

/// A robot's thrusters: what they are, and the configuration matrix B(q) whose column k is
/// the generalized force of a unit thrust of thruster k. Empty without thrusters.
fn thrusters(
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
    };
    (items, implementation)
}

/// A swimming robot's water terms beyond M, C and G: the drag's generalized force and its
/// dissipation function, and each rigid hull's added mass and linear drag. Empty for robots
/// in air.
fn water(
    equations: &Equations,
    params: &[Ident],
    kernel: &dyn Fn(&[(TokenStream, NodeId)]) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let Some(dissipation) = equations.hydrodynamic_dissipation else { return (TokenStream::new(), TokenStream::new()) };
    let dag = &equations.dag;
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let force_body = kernel(&per_coordinate(dag, &equations.hydrodynamic_force, false));
    let dissipation_body = kernel(&[(quote!(let dissipation), dissipation)]);
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
    };
    let implementation = quote! {
        const IN_WATER: bool = true;
        fn hydrodynamic_force_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { hydrodynamic_force_into(q, qd, p, k, out) }
        fn hydrodynamic_dissipation(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> f64 { hydrodynamic_dissipation(q, qd, p, k) }
    };
    (items, implementation)
}

/// The non-zero entries of a per-coordinate output as targets `out[i]`, or as the diagonal
/// `out[(i, i)]` of a matrix.
fn per_coordinate(dag: &Dag, nodes: &[NodeId], diagonal: bool) -> Vec<(TokenStream, NodeId)> {
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
fn spec_expression(e: &Expr) -> TokenStream {
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

/// Formats a generated module's tokens with prettyplease under the generated-file header.
pub fn format_module(robot: &Robot, tokens: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("emitted tokens do not parse as Rust: {e}"))?;
    let body = prettyplease::unparse(&file);
    // Text in a line comment cannot end the comment except through a line break, so every
    // control character becomes a space (validation already rejects them in descriptions).
    let one_line = |text: &str| text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let header = format!(
        "//! {}\n//!\n//! Generated by softgen-codegen from `{}`: do not edit. Change the spec and run\n//! `{}` to regenerate.\n#![allow(clippy::all, unused_parens)]\n\n",
        one_line(&robot.description),
        one_line(&robot.spec_path),
        one_line(&robot.regenerate)
    );
    Ok(header + body.as_str())
}

/// What every generated module has, rigid or soft: the `Params` struct with its defaults and
/// `ParamSet`, and the constants of the `Model` impl.
pub(crate) struct Shared {
    pub params: TokenStream,
    pub constants: TokenStream,
}

pub(crate) fn shared(robot: &Robot) -> Shared {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let name = &robot.name;
    let description = &robot.description;
    let param_fields = robot.parameters.iter().map(|p| {
        let f = format_ident!("{}", p.name);
        let d = doc(if p.doc.is_empty() { "Declared in the spec's [parameters]." } else { &p.doc });
        quote!(#d pub #f: f64,)
    });
    let param_defaults = robot.parameters.iter().map(|p| {
        let f = format_ident!("{}", p.name);
        let v = float(p.default);
        quote!(#f: #v,)
    });
    let param_names = robot.parameters.iter().map(|p| p.name.as_str());
    let param_get = robot.parameters.iter().enumerate().map(|(i, p)| {
        let f = format_ident!("{}", p.name);
        let li = idx(i);
        quote!(#li => self.#f,)
    });
    let param_set = robot.parameters.iter().enumerate().map(|(i, p)| {
        let f = format_ident!("{}", p.name);
        let li = idx(i);
        quote!(#li => self.#f = value,)
    });
    let coordinates = robot.coordinates.iter().map(|c| {
        let (nm, meaning, actuated) = (&c.name, &c.meaning, c.actuated);
        let kind = match c.kind {
            CoordinateKind::BaseTranslation => quote!(CoordinateKind::BaseTranslation),
            CoordinateKind::BaseRotation => quote!(CoordinateKind::BaseRotation),
            CoordinateKind::RevoluteJoint => quote!(CoordinateKind::RevoluteJoint),
            CoordinateKind::PrismaticJoint => quote!(CoordinateKind::PrismaticJoint),
            CoordinateKind::ActuatorLength => quote!(CoordinateKind::ActuatorLength),
            CoordinateKind::Curvature => quote!(CoordinateKind::Curvature),
        };
        quote!(Coordinate { name: #nm, kind: #kind, meaning: #meaning, actuated: #actuated },)
    });
    let initial = robot.coordinates.iter().map(|c| float(c.initial));
    let contact_infos = robot.contact_points.iter().map(|p| {
        let (nm, body) = (&p.name, &robot.bodies[p.body].name);
        quote!(ContactPointInfo { name: #nm, body: #body },)
    });
    let actuated = robot.actuated.iter().map(|&i| idx(i));
    let plane = match robot.plane {
        Some(crate::spec::Plane::Xz) => quote!(PlaneOfMotion::Xz),
        Some(crate::spec::Plane::Xy) => quote!(PlaneOfMotion::Xy),
        None => quote!(PlaneOfMotion::Spatial),
    };
    let env = &robot.environment;
    let terrain = match env.terrain {
        TerrainDefault::None => quote!(Terrain::None),
        TerrainDefault::Flat { height } => {
            let h = float(height);
            quote!(Terrain::Flat { height: #h })
        }
        TerrainDefault::Stair { position, height } => {
            let (p, h) = (float(position), float(height));
            quote!(Terrain::Stair { position: #p, height: #h })
        }
        TerrainDefault::Pipe { diameter } => {
            let d = float(diameter);
            quote!(Terrain::Pipe { diameter: #d })
        }
        TerrainDefault::Floor => quote!(Terrain::Floor),
    };
    let anisotropy = match env.anisotropy {
        Anisotropy::Isotropic => quote!(FrictionAnisotropy::Isotropic),
        Anisotropy::BodyAxis => quote!(FrictionAnisotropy::BodyAxis),
        Anisotropy::WorldAxis => quote!(FrictionAnisotropy::WorldAxis),
    };
    let (ks, kd, fa, fc, fr) = (
        float(env.contact_stiffness),
        float(env.contact_damping),
        float(env.friction_along),
        float(env.friction_across),
        float(env.friction_regularisation),
    );
    let gait = match &robot.gait {
        None => quote!(None),
        Some(g) => {
            let (a, w, e, o, s, d) = (
                float(g.amplitude),
                float(g.temporal_frequency),
                float(g.spatial_frequency),
                float(g.offset),
                float(g.stiffness),
                float(g.damping),
            );
            let l = if g.torque_limit.is_finite() { float(g.torque_limit) } else { quote!(f64::INFINITY) };
            quote!(Some(GaitDefaults {
                amplitude: #a, temporal_frequency: #w, spatial_frequency: #e, offset: #o,
                stiffness: #s, damping: #d, torque_limit: #l,
            }))
        }
    };
    // Valve-driven coordinates, their responses and the valve wave: only robots with valves
    // carry them (the trait's defaults say "none").
    let valves = if robot.valves.is_empty() {
        quote!()
    } else {
        let coordinates = robot.valves.iter().map(|v| idx(v.coordinate));
        let arms = robot.valves.iter().enumerate().map(|(k, v)| {
            let k = idx(k);
            let gain = spec_expression(&v.gain);
            let constants: Vec<TokenStream> = v.time_constants.iter().map(spec_expression).collect();
            if let [tau1, tau2] = constants.as_slice() {
                quote!(#k => Some(softgen_runtime::ActuatorResponse::SecondOrder { time_constants: [#tau1, #tau2], gain: #gain }),)
            } else {
                let tau = &constants[0];
                quote!(#k => Some(softgen_runtime::ActuatorResponse::FirstOrder { time_constant: #tau, gain: #gain }),)
            }
        });
        let wave = match &robot.valve_gait {
            None => quote!(None),
            Some(g) => {
                let (w, d, o) = (float(g.temporal_frequency), float(g.delay), float(g.offset));
                quote!(Some(softgen_runtime::ValveWave { temporal_frequency: #w, delay: #d, offset: #o }))
            }
        };
        quote! {
            const VALVES: &'static [usize] = &[#(#coordinates),*];
            const VALVE_GAIT: Option<softgen_runtime::ValveWave> = #wave;
            fn valve_response(index: usize, p: &Params) -> Option<softgen_runtime::ActuatorResponse> {
                match index {
                    #(#arms)*
                    _ => None,
                }
            }
        }
    };
    // Pneumatic muscles: only robots with muscles carry them.
    let muscles = if robot.muscles.is_empty() {
        quote!()
    } else {
        let mut infos = Vec::new();
        let mut arms = Vec::new();
        for (b, bank) in robot.muscles.iter().enumerate() {
            let (body, first, count) = (&bank.body, idx(bank.first_coordinate), idx(bank.coordinates));
            let (area, rated, lag) = (
                spec_expression(&bank.area),
                spec_expression(&bank.rated_pressure),
                spec_expression(&bank.pressure_lag),
            );
            for j in 0..3 {
                let name = format!("{body}_muscle{}", j + 1);
                infos.push(quote!(softgen_runtime::MuscleInfo { name: #name, body: #body, first_coordinate: #first, coordinates: #count },));
                let gradient = match &bank.placement {
                    None => {
                        let unit = (0..3).map(|k| float(if k == j { 1.0 } else { 0.0 }));
                        quote!([#(#unit),*])
                    }
                    Some((radius, angles)) => {
                        let (r, l0, psi) =
                            (spec_expression(radius), spec_expression(&bank.rest_length), spec_expression(&angles[j]));
                        quote!([-(#r) * (#l0) * f64::cos(#psi), -(#r) * (#l0) * f64::sin(#psi), 0.0])
                    }
                };
                let k = idx(3 * b + j);
                arms.push(quote!(#k => Some(softgen_runtime::Muscle { area: #area, rated_pressure: #rated, pressure_lag: #lag, gradient: #gradient }),));
            }
        }
        quote! {
            const MUSCLES: &'static [softgen_runtime::MuscleInfo] = &[#(#infos)*];
            fn muscle(index: usize, p: &Params) -> Option<softgen_runtime::Muscle> {
                match index {
                    #(#arms)*
                    _ => None,
                }
            }
        }
    };
    // The spec's rules on its values, checked again after run-time changes.
    let checks: Vec<TokenStream> = robot
        .rules
        .iter()
        .map(|r| {
            let field = &r.field;
            let kind = match r.rule {
                Rule::Positive => quote!(Positive),
                Rule::NonNegative => quote!(NonNegative),
                Rule::RigidInertia => quote!(RigidInertia),
                Rule::PrincipalMoments => quote!(PrincipalMoments),
            };
            let values = r.values.iter().map(spec_expression);
            let mut names: Vec<String> = r.values.iter().flat_map(|v| v.symbols()).filter(|s| s != "pi").collect();
            names.sort();
            names.dedup();
            let fields = names.iter().map(|n| format_ident!("{}", n));
            quote! {
                softgen_runtime::check_rule(#field, softgen_runtime::RuleKind::#kind, &[#(#values),*], &[#((#names, p.#fields)),*])?;
            }
        })
        .collect();
    let check = if checks.is_empty() {
        quote!()
    } else {
        quote! {
            fn check(&self) -> Result<(), String> {
                let p = self;
                #(#checks)*
                Ok(())
            }
        }
    };
    let params = quote! {
        /// Numeric parameters with the spec's defaults; change them at run time, no
        /// regeneration needed.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Params {
            #(#param_fields)*
        }

        impl Default for Params {
            fn default() -> Self {
                Params { #(#param_defaults)* }
            }
        }

        impl ParamSet for Params {
            fn names() -> &'static [&'static str] {
                &[#(#param_names),*]
            }
            fn get(&self, index: usize) -> f64 {
                match index {
                    #(#param_get)*
                    _ => f64::NAN,
                }
            }
            fn set_index(&mut self, index: usize, value: f64) {
                match index {
                    #(#param_set)*
                    _ => {}
                }
            }
            #check
        }

    };
    let constants = quote! {
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;
            const COORDINATES: &'static [Coordinate] = &[#(#coordinates)*];
            const INITIAL_POSITION: &'static [f64] = &[#(#initial),*];
            const CONTACT_POINTS: &'static [ContactPointInfo] = &[#(#contact_infos)*];
            const ACTUATED: &'static [usize] = &[#(#actuated),*];
            const PLANE: PlaneOfMotion = #plane;
            const ENVIRONMENT: EnvironmentDefaults = EnvironmentDefaults {
                contact_stiffness: #ks,
                contact_damping: #kd,
                friction_along: #fa,
                friction_across: #fc,
                friction_anisotropy: #anisotropy,
                friction_regularisation: #fr,
                terrain: #terrain,
            };
            const GAIT: Option<GaitDefaults> = #gait;
            #valves
            #muscles
    };
    Shared { params, constants }
}

/// `text` as a Rust identifier: other characters become `_`, and a leading digit gets one.
fn identifier(text: &str) -> String {
    let mut out: String = text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Adds every node reachable from `root` (itself included) to `seen`.
fn collect_reachable(dag: &Dag, root: NodeId, seen: &mut HashSet<NodeId>) {
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            stack.extend(dag.children(id));
        }
    }
}

fn reaches(dag: &Dag, from: NodeId, target: NodeId) -> bool {
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

/// `snake_pedal_wave` -> `SnakePedalWave`.
pub fn camel(name: &str) -> String {
    name.split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}
