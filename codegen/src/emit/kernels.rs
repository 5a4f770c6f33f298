//! What every kernel's emission reads (`Kernels`: the DAG, the parameters, the cache and
//! the lanes), and how outputs are listed: a matrix's, a vector's, per point.

// The emitter's types, helpers and imports, shared by its files.
use super::*;

/// What every kernel's emission reads: the DAG, the parameters' names, the cache's fields and
/// calls, and the lanes of identical sections.
pub(super) struct Kernels<'a> {
    pub(super) dag: &'a Dag,
    pub(super) params: &'a [Ident],
    pub(super) cache: &'a HashMap<NodeId, Ident>,
    pub(super) by_argument: &'a BTreeMap<NodeId, Vec<(Function, NodeId)>>,
    pub(super) limb_lanes: &'a LimbLanes,
    /// Which nodes move with a derivative's direction.
    pub(super) moves: Vec<bool>,
}

impl Kernels<'_> {
    /// Statements computing `outputs` from the state's cache.
    pub(super) fn kernel(&self, outputs: &[(TokenStream, NodeId)]) -> TokenStream {
        body_with_lanes(self.dag, self.params, self.cache, outputs, CacheUse::Read, self.limb_lanes)
    }

    /// As [`Kernels::kernel`], with the lanes of its own.
    pub(super) fn kernel_in_lanes(&self, outputs: &[(TokenStream, NodeId)], lanes: &LimbLanes) -> TokenStream {
        body_with_lanes(self.dag, self.params, self.cache, outputs, CacheUse::Read, lanes)
    }

    /// As [`Kernels::kernel`], reading the values that differ between the members of one shape.
    pub(super) fn kernel_reading(
        &self,
        outputs: &[(TokenStream, NodeId)],
        values: &HashMap<NodeId, usize>,
    ) -> TokenStream {
        if values.is_empty() {
            self.kernel(outputs)
        } else {
            body_reading_values(self.dag, self.params, self.cache, outputs, CacheUse::Read, &LimbLanes::none(), values)
        }
    }

    /// Statements computing groups of outputs in one loop over each group's directions.
    pub(super) fn loops(&self, groups: &[DirectionGroup], values: &HashMap<NodeId, usize>) -> TokenStream {
        body_in_loops(self.dag, self.params, self.cache, &self.moves, groups, values, None).0
    }

    /// Statements computing `outputs` from the state alone: the sines and cosines they read
    /// computed here, every position-level intermediate inline, nothing of the cache that
    /// other kernels read. None where a function's argument is not a coordinate itself (a
    /// soft section's bends), which only the cache kernel knows how to compute.
    pub(super) fn without_cache(&self, outputs: &[(TokenStream, NodeId)]) -> Option<TokenStream> {
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
    pub(super) fn matrix_outputs(
        &self,
        target: TokenStream,
        m: &[Vec<NodeId>],
        symmetric: bool,
    ) -> Vec<(TokenStream, NodeId)> {
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
    pub(super) fn vector_outputs(&self, target: TokenStream, v: &[NodeId]) -> Vec<(TokenStream, NodeId)> {
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
    pub(super) fn column_outputs(&self, cols: &[Vec<NodeId>]) -> Vec<(TokenStream, NodeId)> {
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
pub(super) fn per_point(v: &[Vec<NodeId>]) -> Vec<(TokenStream, NodeId)> {
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
