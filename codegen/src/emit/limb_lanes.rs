//! Identical soft sections computed together in SIMD lanes: a robot's sections with the same
//! number of coordinates (four soft limbs on a hub, three sections of a chain) do the same
//! local arithmetic on different numbers, so a kernel computes each such set of nodes once
//! over the four lanes of a `softgen_runtime::Lanes4`.
//!
//! How nodes are matched. Every coordinate of such a section has a place: its set of up to
//! four sections (a chunk), its section's lane in the chunk, and its slot among the section's
//! coordinates. A node's lane signature is its structure with each section coordinate read as
//! its chunk and slot, a named intermediate of a section's body that no section's coordinates
//! move (its mount's rotation, its base's velocity) read as its role (the name without the
//! body's), and every other node no section moves (the hub's coordinates, parameters,
//! constants) read as itself. Two nodes of different sections with one signature therefore
//! compute the same function of their own section's coordinates and of values in the same
//! roles: one lane expression, rendered from one of them, computes all of them, each lane
//! reading its own member's operands. A node that reads two sections' coordinates has no lane.
//!
//! Why it is exact: IEEE arithmetic is the same lane by lane, so each lane rounds as scalar
//! code with the representative's order of terms would; sums of several terms may add in
//! another order than the section's own scalar code did, so results can move in the last bit.

// The emitter's imports and helpers, shared by its files.
use super::*;
use crate::dag::{fnv, function_tag};

/// Where a node's value lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// The same for every section: constants, parameters, other coordinates and what depends
    /// on them alone.
    Shared,
    /// A function of one section's coordinates (and shared values).
    Lane { chunk: u32, lane: u8 },
    /// Reads several sections' coordinates.
    Mixed,
}

/// Lanes of a robot: each node's place and lane signature.
pub(super) struct LimbLanes {
    place: Vec<Place>,
    signature: Vec<u64>,
}

/// Sections in a chunk, and lanes of a `Lanes4`.
pub(super) const WIDTH: usize = 4;

/// Members of a set of matching nodes, by lane (`None` where no section of the chunk has one).
pub(super) type LaneMembers = [Option<NodeId>; WIDTH];

impl LimbLanes {
    /// No lanes: every node is computed alone.
    pub(super) fn none() -> LimbLanes {
        LimbLanes { place: Vec::new(), signature: Vec::new() }
    }

    /// The places of `sections` ((first coordinate, coordinates, body name), in body order):
    /// sections with the same number of coordinates share chunks of up to four, in order.
    pub(super) fn new(dag: &Dag, sections: &[(usize, usize, String)]) -> LimbLanes {
        let mut coordinate_place: HashMap<usize, (u32, u8, usize)> = HashMap::new();
        let mut by_count: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (first, count, _) in sections {
            by_count.entry(*count).or_default().push(*first);
        }
        let mut chunk = 0u32;
        for (count, firsts) in &by_count {
            if firsts.len() < 2 {
                continue;
            }
            for sections in firsts.chunks(WIDTH) {
                for (lane, &first) in sections.iter().enumerate() {
                    for slot in 0..*count {
                        coordinate_place.insert(first + slot, (chunk, lane as u8, slot));
                    }
                }
                chunk += 1;
            }
        }
        if coordinate_place.is_empty() {
            return LimbLanes::none();
        }
        // A named intermediate of a section's body (its rotation, its base's velocity) stands
        // for its role, the name without the body's: `head_rotation_02` and
        // `back_rotation_02` match, so the values sections read from outside their own
        // coordinates (their mounts' frames) become lanes too.
        let mut prefixes: Vec<String> = sections.iter().map(|(_, _, name)| format!("{name}_")).collect();
        prefixes.sort_by_key(|p| std::cmp::Reverse(p.len()));
        let role = |name: &str| -> u64 {
            let rest = prefixes.iter().find_map(|p| name.strip_prefix(p.as_str())).map_or(name, |rest| rest);
            let prefixed = rest.len() != name.len();
            fnv(std::iter::once(if prefixed { 301 } else { 300 }).chain(rest.bytes().map(u64::from)))
        };
        let mut place = Vec::with_capacity(dag.nodes.len());
        let mut signature = Vec::with_capacity(dag.nodes.len());
        // Children precede their parents in the DAG, so one pass in index order.
        for id in 0..dag.nodes.len() {
            let (p, s) = match &dag.nodes[id] {
                Node::Const(bits) => (Place::Shared, fnv([1, *bits])),
                Node::Input(input) => {
                    let (tag, index, coordinate) = match *input {
                        Input::Q(i) => (2, i, true),
                        Input::Qd(i) => (3, i, true),
                        Input::Param(i) => (4, i, false),
                        Input::Force(i) => (10, i, true),
                        Input::Point(i) => (11, i, false),
                        Input::Acceleration(i) => (12, i, true),
                        Input::PositionDirection(i) => (13, i, true),
                        Input::VelocityDirection(i) => (14, i, true),
                    };
                    match coordinate_place.get(&index).filter(|_| coordinate) {
                        Some(&(chunk, lane, slot)) => {
                            (Place::Lane { chunk, lane }, fnv([tag, 1000 + chunk as u64, slot as u64]))
                        }
                        None => (Place::Shared, fnv([tag, index as u64])),
                    }
                }
                node => {
                    let children = dag.children(id);
                    let mut joined = Place::Shared;
                    for &c in &children {
                        joined = match (joined, place[c]) {
                            (Place::Mixed, _) | (_, Place::Mixed) => Place::Mixed,
                            (Place::Shared, other) | (other, Place::Shared) => other,
                            (a, b) if a == b => a,
                            _ => Place::Mixed,
                        };
                    }
                    let s = match (joined, dag.names.get(&id)) {
                        (Place::Shared, Some(name)) => role(name),
                        _ => structural_signature(node, &signature),
                    };
                    (joined, s)
                }
            };
            place.push(p);
            signature.push(s);
        }
        LimbLanes { place, signature }
    }

    /// Lanes by use, for one kernel that computes several frames at once (a chunk of a
    /// section's skin rings): `lane_outputs[l]` are lane l's outputs, `label[l]` the prefix
    /// of the names its own intermediates carry (`section1_ring3`), and `read(id)` names the
    /// nodes the kernel reads rather than computes (cache fields, by their field names). A
    /// node that only lane l's outputs reach is that lane's; one that several reach is
    /// shared and computed once. A lane's cache read stands for its role (its name without
    /// the lane's label), and a constant only one lane reads (a ring's station along its
    /// section) for "a constant" of its sign: the rings' matching nodes then differ in those
    /// values alone, which each lane reads from its own member, so one lane expression
    /// computes all of them.
    pub(super) fn by_use(
        dag: &Dag,
        lane_outputs: &[Vec<NodeId>],
        label: &[String],
        read: &dyn Fn(NodeId) -> Option<String>,
    ) -> LimbLanes {
        assert!(lane_outputs.len() <= WIDTH && label.len() == lane_outputs.len());
        let mut reached: HashMap<NodeId, u8> = HashMap::new();
        for (lane, outputs) in lane_outputs.iter().enumerate() {
            let bit = 1u8 << lane;
            let mut stack: Vec<NodeId> = outputs.clone();
            while let Some(id) = stack.pop() {
                let mask = reached.entry(id).or_insert(0);
                if *mask & bit != 0 {
                    continue;
                }
                *mask |= bit;
                if read(id).is_none() {
                    stack.extend(dag.children(id));
                }
            }
        }
        let mut ids: Vec<NodeId> = reached.keys().copied().collect();
        // Children precede their parents in the DAG.
        ids.sort_unstable();
        let mut place = vec![Place::Shared; dag.nodes.len()];
        let mut signature = vec![0u64; dag.nodes.len()];
        // With constants unsigned, one ring can hold two nodes of one signature (its station
        // xi and xi^2 times the same value): the k-th of them in one lane matches the k-th in
        // another, since every ring's nodes were built by the same code in the same order.
        let mut occurrences: HashMap<(u8, u64), u64> = HashMap::new();
        for id in ids {
            let mask = reached[&id];
            let lane = (mask.count_ones() == 1).then(|| mask.trailing_zeros() as u8);
            let s = match (lane, &dag.nodes[id]) {
                (None, Node::Const(bits)) => fnv([1, *bits]),
                (None, _) => fnv([20, id as u64]),
                (Some(_), Node::Const(bits)) => fnv([21, (f64::from_bits(*bits) < 0.0) as u64]),
                (Some(lane), _) if dag.is_leaf(id) || read(id).is_some() => {
                    let prefix = format!("{}_", label[lane as usize]);
                    let name = read(id).or_else(|| dag.names.get(&id).cloned());
                    match name.as_deref().and_then(|name| name.strip_prefix(prefix.as_str())) {
                        Some(role) => fnv(std::iter::once(22).chain(role.bytes().map(u64::from))),
                        None => fnv([23, id as u64]),
                    }
                }
                (Some(_), node) => structural_signature(node, &signature),
            };
            let s = match lane {
                Some(lane) => {
                    place[id] = Place::Lane { chunk: 0, lane };
                    let seen = occurrences.entry((lane, s)).or_insert(0);
                    *seen += 1;
                    if *seen == 1 {
                        s
                    } else {
                        fnv([s, *seen])
                    }
                }
                None => s,
            };
            signature[id] = s;
        }
        LimbLanes { place, signature }
    }

    /// The children of `member` paired with those of `representative` (a node of the same
    /// set), in the representative's order: children of one signature pair in turn. Sums and
    /// products do not depend on their terms' order, so any pairing among equal signatures
    /// computes the member's value. `None` if the children do not pair.
    pub(super) fn paired_children(&self, dag: &Dag, representative: NodeId, member: NodeId) -> Option<Vec<NodeId>> {
        let mut available = dag.children(member);
        let mut paired = Vec::with_capacity(available.len());
        for c in dag.children(representative) {
            let k = available.iter().position(|&m| self.signature[m] == self.signature[c])?;
            paired.push(available.swap_remove(k));
        }
        available.is_empty().then_some(paired)
    }

    /// The node's lane, if it is a function of one section's coordinates.
    pub(super) fn lane(&self, id: NodeId) -> Option<usize> {
        match self.place.get(id) {
            Some(Place::Lane { lane, .. }) => Some(*lane as usize),
            _ => None,
        }
    }

    /// The node's lane signature: nodes of two lanes with one signature are one lane
    /// expression.
    pub(super) fn signature(&self, id: NodeId) -> u64 {
        self.signature[id]
    }

    /// The sets of matching nodes among `order` (a kernel's nodes) and which of them the
    /// kernel computes in lanes. `computed_here(id)` says whether the kernel computes the node
    /// itself (rather than reading it from the cache or as an input).
    pub(super) fn groups(&self, dag: &Dag, order: &[NodeId], computed_here: &dyn Fn(NodeId) -> bool) -> Groups {
        let mut buckets: HashMap<u64, LaneMembers> = HashMap::new();
        let mut conflicting: HashSet<u64> = HashSet::new();
        if self.place.is_empty() {
            return Groups { computed: Vec::new(), group_of: HashMap::new() };
        }
        for &id in order {
            let Some(lane) = self.lane(id) else { continue };
            let slot = &mut buckets.entry(self.signature[id]).or_insert([None; WIDTH])[lane];
            match slot {
                None => *slot = Some(id),
                Some(other) if *other == id => {}
                // Two nodes of one section with one signature would be one node of the DAG;
                // a hash collision is the only way here, and such a set is not trusted.
                Some(_) => {
                    conflicting.insert(self.signature[id]);
                }
            }
        }
        for s in &conflicting {
            buckets.remove(s);
        }
        // Children precede parents in `order`, so a set's children are decided first.
        let mut computed: Vec<LaneMembers> = Vec::new();
        let mut group_of: HashMap<NodeId, usize> = HashMap::new();
        let mut decided: HashSet<u64> = HashSet::new();
        for &id in order {
            let Some(_) = self.lane(id) else { continue };
            let s = self.signature[id];
            if !decided.insert(s) {
                continue;
            }
            let Some(members) = buckets.get(&s) else { continue };
            if self.computable(dag, members, &buckets, computed_here) {
                let g = computed.len();
                computed.push(*members);
                for m in members.iter().flatten() {
                    group_of.insert(*m, g);
                }
            }
        }
        Groups { computed, group_of }
    }

    /// Whether a set of matching nodes can be one lane expression: at least two members, each
    /// computed here by an operator lanes have, with the same structure, and each member's
    /// lane children found in their own sets at the member's lane.
    fn computable(
        &self,
        dag: &Dag,
        members: &LaneMembers,
        buckets: &HashMap<u64, LaneMembers>,
        computed_here: &dyn Fn(NodeId) -> bool,
    ) -> bool {
        let present: Vec<(usize, NodeId)> = members.iter().enumerate().filter_map(|(l, m)| m.map(|m| (l, m))).collect();
        if present.len() < 2 {
            return false;
        }
        let shape = |id: NodeId| -> Option<(u8, usize, i64)> {
            match &dag.nodes[id] {
                Node::Add(c) => Some((0, c.len(), 0)),
                Node::Mul(c) => Some((1, c.len(), 0)),
                Node::Powi(_, e) => Some((2, 1, *e as i64)),
                Node::Powf(_, e) => Some((3, 1, *e as i64)),
                Node::Call(..) | Node::Const(_) | Node::Input(_) => None,
            }
        };
        let representative = present[0].1;
        let first_shape = shape(representative);
        if first_shape.is_none() {
            return false;
        }
        for &(lane, m) in &present {
            if !computed_here(m) || shape(m) != first_shape {
                return false;
            }
            let Some(children) = self.paired_children(dag, representative, m) else { return false };
            for c in children {
                match self.place[c] {
                    Place::Shared => {}
                    Place::Mixed => return false,
                    // What the kernel reads (cache fields, inputs, a ring's constants) is
                    // gathered lane by lane from the members' own children.
                    Place::Lane { .. } if !computed_here(c) => {}
                    Place::Lane { .. } => match buckets.get(&self.signature[c]) {
                        Some(set) if set[lane] == Some(c) => {}
                        _ => return false,
                    },
                }
            }
        }
        true
    }
}

/// The lane signature of an operator node from its children's (`signature`, indexed by
/// node): a sum's or product's terms in any order.
fn structural_signature(node: &Node, signature: &[u64]) -> u64 {
    match node {
        Node::Add(c) | Node::Mul(c) => {
            let mut sigs: Vec<u64> = c.iter().map(|&c| signature[c]).collect();
            sigs.sort_unstable();
            let tag = if matches!(node, Node::Add(_)) { 5 } else { 6 };
            fnv(std::iter::once(tag).chain(sigs))
        }
        Node::Powi(b, e) => fnv([7, signature[*b], *e as i64 as u64]),
        Node::Powf(b, e) => fnv([8, signature[*b], *e]),
        Node::Call(f, a) => fnv([9, function_tag(*f), signature[*a]]),
        Node::Const(_) | Node::Input(_) => unreachable!("leaves are signed by their callers"),
    }
}

/// A kernel's sets of matching nodes.
pub(super) struct Groups {
    /// The sets computed in lanes.
    pub(super) computed: Vec<LaneMembers>,
    /// Each computed node's set.
    pub(super) group_of: HashMap<NodeId, usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(sections: &[(usize, usize)]) -> Vec<(usize, usize, String)> {
        sections.iter().enumerate().map(|(k, &(first, count))| (first, count, format!("limb{k}"))).collect()
    }

    /// Three sections of two coordinates each (coordinates 1-2, 3-4, 5-6) under a hub
    /// coordinate 0: each computes (p q_a + q_b + hub)^2 on its own coordinates.
    fn three_sections() -> (Dag, [NodeId; 3], NodeId, NodeId) {
        let mut dag = Dag::default();
        let p = dag.input(Input::Param(0));
        let hub = dag.input(Input::Q(0));
        let mut section = |first: usize| {
            let a = dag.input(Input::Q(first));
            let b = dag.input(Input::Q(first + 1));
            let pa = dag.mul(vec![p, a]);
            let sum = dag.add(vec![pa, b, hub]);
            dag.powi(sum, 2)
        };
        let squares = [section(1), section(3), section(5)];
        let mixed = dag.mul(vec![squares[0], squares[1]]);
        (dag, squares, mixed, hub)
    }

    #[test]
    fn matching_nodes_of_identical_sections_share_a_signature_and_a_set() {
        let (dag, squares, mixed, hub) = three_sections();
        let lanes = LimbLanes::new(&dag, &named(&[(1, 2), (3, 2), (5, 2)]));
        assert_eq!(lanes.signature(squares[0]), lanes.signature(squares[1]));
        assert_eq!(lanes.signature(squares[0]), lanes.signature(squares[2]));
        assert_eq!(squares.map(|s| lanes.lane(s)), [Some(0), Some(1), Some(2)]);
        assert_eq!(lanes.lane(mixed), None, "a node reading two sections has no lane");
        assert_eq!(lanes.lane(hub), None, "the hub's coordinate is shared");
        let order: Vec<NodeId> = (0..dag.nodes.len()).collect();
        let groups = lanes.groups(&dag, &order, &|id| !dag.is_leaf(id));
        let set = groups.group_of[&squares[0]];
        assert_eq!(groups.computed[set], [Some(squares[0]), Some(squares[1]), Some(squares[2]), None]);
        assert!(!groups.group_of.contains_key(&mixed));
        // Inputs are gathered, never computed.
        assert!(groups.computed.iter().flatten().flatten().all(|&m| !dag.is_leaf(m)));
    }

    #[test]
    fn sections_of_another_size_or_alone_get_no_lanes() {
        let (dag, squares, _, _) = three_sections();
        // Each section its own size: nothing to share.
        let lanes = LimbLanes::new(&dag, &named(&[(1, 2), (3, 3)]));
        assert_eq!(lanes.lane(squares[0]), None);
        assert_eq!(lanes.lane(squares[1]), None);
        // A set the kernel does not compute itself (read from the cache) is not computed.
        let lanes = LimbLanes::new(&dag, &named(&[(1, 2), (3, 2), (5, 2)]));
        let order: Vec<NodeId> = (0..dag.nodes.len()).collect();
        let groups = lanes.groups(&dag, &order, &|id| !dag.is_leaf(id) && id != squares[1]);
        assert!(!groups.group_of.contains_key(&squares[0]));
    }

    #[test]
    fn a_kernel_computes_each_set_once_in_lanes_and_takes_out_what_scalars_read() {
        let (dag, squares, mixed, _) = three_sections();
        let lanes = LimbLanes::new(&dag, &named(&[(1, 2), (3, 2), (5, 2)]));
        let params = [format_ident!("p0")];
        let empty = HashMap::new();
        let outputs = [(quote!(out[0]), mixed), (quote!(out[1]), squares[2])];
        let code = body_with_lanes(&dag, &params, &empty, &outputs, CacheUse::Read, &lanes).to_string();
        // The sums and squares of the three sections: one lane expression each; the
        // coordinates gathered once per slot.
        assert_eq!(code.matches("Lanes4 :: from_array").count(), 2, "{code}");
        assert_eq!(code.matches("to_array ()").count(), 1, "{code}");
        assert!(code.contains("out [0] ="), "{code}");
        assert!(code.contains("out [1] ="), "{code}");
        // Without lanes the same outputs take scalar code only.
        let scalar = body(&dag, &params, &empty, &outputs, CacheUse::Read).to_string();
        assert!(!scalar.contains("Lanes4"), "{scalar}");
    }

    /// Three rings of one section: each computes (x_k c_k s + x_k^2 c_k) t with its own
    /// station x_k, its own cached value c_k (`sec_ring{k}_c`) and the section's s and t.
    #[test]
    fn rings_match_by_use_and_read_their_own_stations() {
        let mut dag = Dag::default();
        let s = dag.input(Input::Param(0));
        let t = dag.input(Input::Param(1));
        let mut cache = HashMap::new();
        let mut outputs = Vec::new();
        let mut per_lane = Vec::new();
        let mut labels = Vec::new();
        for (k, x) in [0.1, 0.2, 0.3].into_iter().enumerate() {
            let c = dag.input(Input::Q(k));
            let field = dag.add(vec![c, s]);
            cache.insert(field, format_ident!("sec_ring{k}_c"));
            let (station, squared) = (dag.number(x), dag.number(x * x));
            let first = dag.mul(vec![station, field, s]);
            let second = dag.mul(vec![squared, field]);
            let sum = dag.add(vec![first, second]);
            let out = dag.mul(vec![sum, t]);
            let lk = Literal::usize_unsuffixed(k);
            outputs.push((quote!(out[#lk]), out));
            per_lane.push(vec![out]);
            labels.push(format!("sec_ring{k}"));
        }
        let names: HashMap<NodeId, String> = cache.iter().map(|(id, f)| (*id, f.to_string())).collect();
        let lanes = LimbLanes::by_use(&dag, &per_lane, &labels, &|id| names.get(&id).cloned());
        let [a, b, c] = [outputs[0].1, outputs[1].1, outputs[2].1];
        assert_eq!(lanes.signature(a), lanes.signature(b));
        assert_eq!(lanes.signature(a), lanes.signature(c));
        assert_eq!([a, b, c].map(|o| lanes.lane(o)), [Some(0), Some(1), Some(2)]);
        assert_eq!(lanes.lane(t), None, "the section's values are shared");
        let params = [format_ident!("s"), format_ident!("t")];
        let code = body_with_lanes(&dag, &params, &cache, &outputs, CacheUse::Read, &lanes).to_string();
        // Each ring's stations and cached values gathered once, the arithmetic in lanes.
        assert!(code.contains("from_array ([0.1 , 0.2 , 0.3 , 0.0])"), "{code}");
        assert!(code.contains("cache . sec_ring0_c , cache . sec_ring1_c , cache . sec_ring2_c"), "{code}");
        assert_eq!(code.matches("to_array ()").count(), 1, "{code}");
        // No product with a ring's station is left to scalar code.
        assert!(!code.contains("0.1 *"), "{code}");
    }
}
