//! Kernels of one shape: the same arithmetic on different numbers. The skin rings of a soft
//! section differ only in where along the section they sit, so their kernels do the same
//! operations on different constants and on different fields of the cache; such kernels are
//! emitted once, as a function taking the numbers that differ (`values`), and each ring's
//! call passes its own.
//!
//! How kernels are matched. A kernel's shape is its expression DAG read from its outputs
//! down to its leaves (constants, cache reads, inputs), with every constant and cache read a
//! numbered slot (numbered in the order first met, so a value read twice is one slot), every
//! input itself, and the children of sums and products in an order that does not depend on
//! the slots' values. Two kernels of one shape compute the same function of their slots;
//! a slot whose node is the same in every kernel of the shape stays in the code as it is.
//!
//! Why it is exact: the shared function performs, for each kernel, the operations of the
//! first one (its representative) in its order on that kernel's own values; where the
//! kernel's own code would have added the terms of a sum in another order, results can move
//! in the last bit (as with the SIMD lanes of `limb_lanes.rs`).

// The emitter's imports and helpers, shared by its files.
use super::*;
use crate::dag::{fnv, function_tag};

/// A kernel's shape (equal for kernels of the same arithmetic) and its slots' nodes in slot
/// order.
pub(super) struct Shape {
    pub(super) key: Vec<u64>,
    pub(super) slots: Vec<NodeId>,
    /// Operations in the kernel (its nodes that are neither slots nor inputs).
    pub(super) operations: usize,
}

/// Fewest operations for kernels of one shape to share a function: below, the function's
/// signature and the calls passing values are longer than the kernels they replace (a rigid
/// snake's tip positions, two cache reads each).
const SHARED_OPERATIONS: usize = 40;

/// The shape of the kernel computing `roots` (in order), reading `cache`'s fields.
pub(super) fn shape(dag: &Dag, cache: &HashMap<NodeId, Ident>, roots: &[NodeId]) -> Shape {
    let mut reader =
        Reader { dag, cache, hashes: HashMap::new(), local: HashMap::new(), key: Vec::new(), slots: Vec::new() };
    let refs: Vec<u64> = roots.iter().map(|&root| reader.visit(root)).collect();
    reader.key.push(u64::MAX);
    reader.key.extend(refs);
    let operations = reader.local.keys().filter(|&&id| !reader.is_slot(id) && !dag.is_leaf(id)).count();
    Shape { key: reader.key, slots: reader.slots, operations }
}

/// One arm of a `match` over frames whose kernel may share a function with others of its
/// shape.
pub(super) struct Arm<'a> {
    /// The arm's pattern (the frame's number).
    pub(super) pattern: TokenStream,
    /// The nodes the kernel computes, in order.
    pub(super) roots: Vec<NodeId>,
    /// What else must agree for two kernels to share a function (their targets, the
    /// coordinates of their loops), as text.
    pub(super) agree: String,
    /// The kernel's statements reading the given `values` (empty: its own constants and
    /// cache fields), as a function of a shape (`true`) or in its own arm or function.
    pub(super) body: Box<dyn Fn(&HashMap<NodeId, usize>, bool) -> TokenStream + 'a>,
    /// The arguments a call to its shape's function passes, before `values`.
    pub(super) call: TokenStream,
}

/// How the kernels of a `match` over frames are emitted.
pub(super) struct Functions {
    /// The shape functions' and (with `own_functions`) the lone kernels' names start with it.
    pub(super) prefix: String,
    /// The documentation's name for the function the arms are in.
    pub(super) of: String,
    /// A shape function's parameters, before `values`.
    pub(super) declarations: TokenStream,
    /// Whether a kernel alone in its shape is a function of its own too (with the shape
    /// functions' parameters but `values`, called with its arm's `call`), else its arm's
    /// body.
    pub(super) own_functions: bool,
}

/// The match arms of `arms` and the functions they call: the kernels of one shape are one
/// function (`<prefix>_<first frame>`) from the representative's body with the values that
/// differ read from `values`, each arm passing its own.
pub(super) fn arms_by_shape(
    dag: &Dag,
    cache: &HashMap<NodeId, Ident>,
    arms: &[Arm],
    functions: &Functions,
) -> (TokenStream, TokenStream) {
    let shapes: Vec<Shape> = arms
        .iter()
        .map(|arm| {
            let mut shape = shape(dag, cache, &arm.roots);
            shape.key.push(u64::MAX - 1);
            shape.key.extend(arm.agree.bytes().map(u64::from));
            shape
        })
        .collect();
    let reader = Emitter::new(dag, &[], cache, quote!(cache.));
    let (mut match_arms, mut bodies): (Vec<(usize, TokenStream)>, TokenStream) = (Vec::new(), TokenStream::new());
    let classes = of_one_shape(&shapes.iter().collect::<Vec<_>>()).into_iter().flat_map(|members| {
        if shapes[members[0]].operations >= SHARED_OPERATIONS {
            vec![members]
        } else {
            members.into_iter().map(|m| vec![m]).collect()
        }
    });
    for members in classes {
        let first = &arms[members[0]];
        let number = first.pattern.to_string();
        let of = &functions.of;
        if members.len() == 1 {
            let body = (first.body)(&HashMap::new(), false);
            let pattern = &first.pattern;
            if functions.own_functions {
                let function = format_ident!("{}_{}", functions.prefix, number);
                let doc = format!(" [`{of}`] of contact frame {number}.");
                let (declarations, call) = (&functions.declarations, &first.call);
                bodies.extend(quote! {
                    #[doc = #doc]
                    #[inline(never)]
                    #[allow(unused_variables)]
                    fn #function(#declarations) {
                        #body
                    }
                });
                match_arms.push((members[0], quote!(#pattern => #function(#call),)));
            } else {
                match_arms.push((members[0], quote!(#pattern => { #body })));
            }
            continue;
        }
        let (values, varying) = values(&members.iter().map(|&m| &shapes[m]).collect::<Vec<_>>());
        let body = (first.body)(&values, true);
        let function = format_ident!("{}_{}", functions.prefix, number);
        let frames: Vec<String> = members.iter().map(|&m| arms[m].pattern.to_string()).collect();
        let doc = format!(
            " [`{of}`] of contact frames {}: one arithmetic on each frame's own `values` (its \
             constants and cache fields where the frames differ); the names are frame {number}'s.",
            frames.join(", ")
        );
        let count = Literal::usize_unsuffixed(varying.len());
        let declarations = &functions.declarations;
        bodies.extend(quote! {
            #[doc = #doc]
            #[inline(never)]
            #[allow(unused_variables)]
            fn #function(#declarations, values: &[f64; #count]) {
                #body
            }
        });
        for &m in &members {
            let passed = varying.iter().map(|&k| reader.render(shapes[m].slots[k]).tokens);
            let (pattern, call) = (&arms[m].pattern, &arms[m].call);
            match_arms.push((m, quote!(#pattern => #function(#call, &[#(#passed),*]),)));
        }
    }
    // The arms in the frames' order.
    match_arms.sort_by_key(|(k, _)| *k);
    (match_arms.into_iter().map(|(_, arm)| arm).collect(), bodies)
}

/// Kernels (by index) in classes of one shape, each class's representative first, in the
/// order of their first kernels. The representative is the kernel whose slots are the most
/// distinct nodes, and a kernel joins its class only where every two slots that are one node
/// in the representative are one node in it too: the function rendered from the
/// representative reads one value for them.
pub(super) fn of_one_shape(shapes: &[&Shape]) -> Vec<Vec<usize>> {
    let mut by_key: HashMap<&[u64], Vec<usize>> = HashMap::new();
    let mut order: Vec<&[u64]> = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        let members = by_key.entry(&shape.key).or_default();
        if members.is_empty() {
            order.push(&shape.key);
        }
        members.push(k);
    }
    let mut classes = Vec::new();
    for key in order {
        let mut members = by_key.remove(key).expect("every key has members");
        let distinct = |k: usize| shapes[k].slots.iter().collect::<HashSet<_>>().len();
        let representative = *members.iter().max_by_key(|&&k| (distinct(k), std::cmp::Reverse(k))).expect("not empty");
        members.retain(|&k| k != representative);
        let mut first_slot: HashMap<NodeId, usize> = HashMap::new();
        for (slot, &id) in shapes[representative].slots.iter().enumerate() {
            first_slot.entry(id).or_insert(slot);
        }
        let (fits, alone): (Vec<usize>, Vec<usize>) = members.into_iter().partition(|&k| {
            shapes[representative].slots.iter().enumerate().all(|(slot, id)| {
                let first = first_slot[id];
                shapes[k].slots[slot] == shapes[k].slots[first]
            })
        });
        classes.push(std::iter::once(representative).chain(fits).collect());
        classes.extend(alone.into_iter().map(|k| vec![k]));
    }
    classes
}

/// For a class of one shape (representative first): the representative's nodes read as
/// `values[k]` (those in a slot where some member has another node), and for each value
/// the slot a member's own value is read from.
pub(super) fn values(members: &[&Shape]) -> (HashMap<NodeId, usize>, Vec<usize>) {
    let representative = members[0];
    let mut values: HashMap<NodeId, usize> = HashMap::new();
    let mut varying = Vec::new();
    for (slot, &id) in representative.slots.iter().enumerate() {
        if values.contains_key(&id) || members.iter().all(|m| m.slots[slot] == id) {
            continue;
        }
        values.insert(id, varying.len());
        varying.push(slot);
    }
    (values, varying)
}

struct Reader<'a> {
    dag: &'a Dag,
    cache: &'a HashMap<NodeId, Ident>,
    /// Each node's hash with its slots' values left out.
    hashes: HashMap<NodeId, u64>,
    /// Each node's number in the order the shape met it.
    local: HashMap<NodeId, u64>,
    key: Vec<u64>,
    slots: Vec<NodeId>,
}

impl Reader<'_> {
    fn is_slot(&self, id: NodeId) -> bool {
        self.cache.contains_key(&id) || matches!(self.dag.nodes[id], Node::Const(_))
    }

    /// The node's hash without its slots' values, which orders a sum's or a product's
    /// children the same way in every kernel of a shape.
    fn hash(&mut self, root: NodeId) -> u64 {
        let mut stack = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.hashes.contains_key(&id) {
                continue;
            }
            // A cache field's hash is that of its expression (constants left out): the same
            // field of another ring (its `bend_c2`) is told apart from its other fields.
            let children = self.dag.children(id);
            if !expanded && children.iter().any(|c| !self.hashes.contains_key(c)) {
                stack.push((id, true));
                stack.extend(children.iter().map(|&c| (c, false)));
                continue;
            }
            let child = |c: &NodeId| self.hashes[c];
            let hash = if self.is_constant(id) {
                fnv([8])
            } else {
                let expression = match &self.dag.nodes[id] {
                    Node::Input(input) => fnv([2, input_tag(*input)]),
                    Node::Add(terms) => {
                        let mut parts: Vec<u64> = terms.iter().map(child).collect();
                        parts.sort_unstable();
                        fnv(std::iter::once(3).chain(parts))
                    }
                    Node::Mul(factors) => {
                        let mut parts: Vec<u64> = factors.iter().map(child).collect();
                        parts.sort_unstable();
                        fnv(std::iter::once(4).chain(parts))
                    }
                    Node::Powi(base, e) => fnv([5, child(base), *e as i64 as u64]),
                    Node::Powf(base, bits) => fnv([6, child(base), *bits]),
                    Node::Call(f, arg) => fnv([7, function_tag(*f), child(arg)]),
                    Node::Const(_) => unreachable!("constants are slots"),
                };
                if self.is_slot(id) {
                    fnv([1, expression])
                } else {
                    expression
                }
            };
            self.hashes.insert(id, hash);
        }
        self.hashes[&root]
    }

    /// The node's number in the shape, writing it (and what it reads, first) into the key.
    /// Constants are slots where they occur, not once per value: two constants that happen
    /// to be equal in one ring (a coefficient and a position) are two slots.
    fn visit(&mut self, root: NodeId) -> u64 {
        self.hash(root);
        if self.is_constant(root) {
            return self.constant_slot(root);
        }
        let mut stack = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.local.contains_key(&id) {
                continue;
            }
            let children = if self.is_slot(id) { Vec::new() } else { self.ordered_children(id) };
            let pending = |c: &NodeId| !self.local.contains_key(c) && !self.is_constant(*c);
            if !expanded && children.iter().any(pending) {
                stack.push((id, true));
                // Reversed so that the first child is numbered first.
                stack.extend(children.iter().rev().filter(|c| pending(c)).map(|&c| (c, false)));
                continue;
            }
            if self.is_slot(id) {
                self.key.extend([1, self.slots.len() as u64]);
                self.slots.push(id);
            } else {
                let node = &self.dag.nodes[id];
                let (tag, payload) = match node {
                    Node::Input(input) => (2, input_tag(*input)),
                    Node::Add(_) => (3, 0),
                    Node::Mul(_) => (4, 0),
                    Node::Powi(_, e) => (5, *e as i64 as u64),
                    Node::Powf(_, bits) => (6, *bits),
                    Node::Call(f, _) => (7, function_tag(*f)),
                    Node::Const(_) => unreachable!("constants are slots"),
                };
                self.key.extend([tag, payload, children.len() as u64]);
                let refs: Vec<u64> = children
                    .iter()
                    .map(|&c| if self.is_constant(c) { self.constant_slot(c) } else { self.local[&c] })
                    .collect();
                self.key.extend(refs);
            }
            let number = self.local.len() as u64;
            self.local.insert(id, number);
        }
        self.local[&root]
    }

    fn is_constant(&self, id: NodeId) -> bool {
        matches!(self.dag.nodes[id], Node::Const(_))
    }

    /// A new slot for an occurrence of a constant, as a reference in the key.
    fn constant_slot(&mut self, id: NodeId) -> u64 {
        self.slots.push(id);
        CONSTANT | (self.slots.len() as u64 - 1)
    }

    /// Children by their hash without slot values; among equal hashes, those met already in
    /// the order met (the others after them, in the DAG's order: they are met in that order,
    /// so asked again the order is the same).
    fn ordered_children(&self, id: NodeId) -> Vec<NodeId> {
        let mut children = self.dag.children(id);
        if matches!(self.dag.nodes[id], Node::Add(_) | Node::Mul(_)) {
            children.sort_by_key(|c| (self.hashes[c], self.local.get(c).copied().unwrap_or(u64::MAX)));
        }
        children
    }
}

/// Marks a reference in the key as a constant's slot.
const CONSTANT: u64 = 1 << 63;

/// An input's identity in a shape: inputs are the same in every kernel of a shape.
fn input_tag(input: Input) -> u64 {
    let (kind, index) = match input {
        Input::Q(k) => (0, k),
        Input::Qd(k) => (1, k),
        Input::Param(k) => (2, k),
        Input::Force(k) => (3, k),
        Input::Point(k) => (4, k),
        Input::Acceleration(k) => (5, k),
        Input::PositionDirection(k) => (6, k),
        Input::VelocityDirection(k) => (7, k),
    };
    fnv([kind, index as u64])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a q0 + b q1 cache + d q2`, with `cache` a cached node (the cosine of `c q2`): the
    /// shape of a ring at another place along its section.
    fn kernel(dag: &mut Dag, cache: &mut HashMap<NodeId, Ident>, [a, b, c, d]: [f64; 4]) -> NodeId {
        let (q0, q1, q2) = (dag.input(Input::Q(0)), dag.input(Input::Q(1)), dag.input(Input::Q(2)));
        let (a, b, c, d) = (dag.number(a), dag.number(b), dag.number(c), dag.number(d));
        let angle = dag.mul(vec![c, q2]);
        let cosine = dag.call(Function::Cos, angle);
        cache.insert(cosine, format_ident!("cos_{}", cosine));
        let first = dag.mul(vec![a, q0]);
        let second = dag.mul(vec![b, q1, cosine]);
        let third = dag.mul(vec![d, q2]);
        dag.add(vec![first, second, third])
    }

    fn shapes_of(kernels: &[[f64; 4]]) -> (Dag, Vec<Shape>) {
        let (mut dag, mut cache) = (Dag::default(), HashMap::new());
        let roots: Vec<NodeId> = kernels.iter().map(|&numbers| kernel(&mut dag, &mut cache, numbers)).collect();
        let shapes = roots.iter().map(|&root| shape(&dag, &cache, &[root])).collect();
        (dag, shapes)
    }

    #[test]
    fn kernels_differing_in_numbers_are_one_shape_reading_the_numbers_that_differ() {
        let (dag, shapes) = shapes_of(&[[0.1, 0.2, 0.3, 0.9], [0.4, 0.5, 0.6, 0.9], [0.1, 0.7, 0.3, 0.9]]);
        let all: Vec<&Shape> = shapes.iter().collect();
        assert_eq!(of_one_shape(&all), vec![vec![0, 1, 2]]);
        let (values, varying) = values(&all);
        // a, b and the cached cosine differ; d, the same in all, stays in the code.
        assert_eq!(varying.len(), 3, "slots {:?}", shapes[0].slots);
        assert_eq!(values.len(), 3);
        assert!(!values.keys().any(|&id| dag.constant(id) == Some(0.9)));
    }

    #[test]
    fn another_arithmetic_is_another_shape() {
        let (mut dag, mut cache) = (Dag::default(), HashMap::new());
        let first = kernel(&mut dag, &mut cache, [0.1, 0.2, 0.3, 0.4]);
        let q0 = dag.input(Input::Q(0));
        let other = dag.mul(vec![q0, q0]);
        let second = dag.add(vec![first, other]);
        let a = shape(&dag, &cache, &[first]);
        let b = shape(&dag, &cache, &[second]);
        assert_eq!(of_one_shape(&[&a, &b]), vec![vec![0], vec![1]]);
    }

    #[test]
    fn a_coincidence_of_numbers_goes_with_the_kernel_that_has_none() {
        // In the first kernel a and d happen to be one number: the second, where they
        // differ, is the representative, and the first fits it (it passes 0.5 twice).
        let (_, shapes) = shapes_of(&[[0.5, 0.2, 0.3, 0.5], [0.4, 0.6, 0.3, 0.7]]);
        assert_eq!(of_one_shape(&[&shapes[0], &shapes[1]]), vec![vec![1, 0]]);
        // Coincidences that differ (a = d in one, b = d in the other) cannot share one
        // function rendered from either: each is alone.
        let (_, shapes) = shapes_of(&[[0.5, 0.2, 0.3, 0.5], [0.1, 0.6, 0.3, 0.6]]);
        assert_eq!(of_one_shape(&[&shapes[0], &shapes[1]]), vec![vec![0], vec![1]]);
    }
}
