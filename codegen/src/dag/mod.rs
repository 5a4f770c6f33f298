//! Expression DAG with hash-consing: identical subexpressions across every output of a robot
//! become one node, children of sums and products are put in a canonical order, and constants
//! are folded. The emitter turns shared nodes into `let` bindings.
//!
//! Pinned nodes are intermediates of the recursive algorithms (a body's rotation, a composite
//! inertia): sums and products never flatten them into their parents, so the emitted code
//! keeps the robot's tree instead of re-expanding it from the base. A pinned node may carry a
//! name, which the emitter uses for its `let`.
//!
//! Below it, forward-mode derivatives in the DAG (`differentiate.rs`) and every output of a
//! module as its nodes (`equations.rs`).

pub(crate) mod differentiate;
pub(crate) mod equations;

use crate::spec::expr::{Expr, Number};
use std::collections::HashMap;

pub type NodeId = usize;

/// A leaf input of generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    Q(usize),
    Qd(usize),
    Param(usize),
    /// Generalized force on a coordinate (forward dynamics' input).
    Force(usize),
    /// A component of a point's world position (the contact Jacobian of any point on a
    /// frame is one kernel of it).
    Point(usize),
    /// Generalized acceleration of a coordinate (the inverse dynamics' input).
    Acceleration(usize),
    /// A coordinate's component of the direction a derivative is taken along (dq).
    PositionDirection(usize),
    /// A rate's component of the direction a derivative is taken along (dqd).
    VelocityDirection(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Function {
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    /// The Stumpff function c_k (constant-curvature sections), k = 0 .. 7.
    Stumpff(u8),
    /// 1 / x, and 0 at x = 0 (`softgen_runtime::reciprocal_or_zero`): the slope of a
    /// fractional power such as a speed |u| = sqrt(u . u), whose tangent is infinite at rest
    /// while every product the equations use it in (|u| u) has a tangent of zero there.
    ReciprocalOrZero,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A constant, by its f64 bits.
    Const(u64),
    Input(Input),
    Add(Vec<NodeId>),
    Mul(Vec<NodeId>),
    /// Integer power.
    Powi(NodeId, i32),
    /// Real power (e.g. square roots), exponent by its f64 bits.
    Powf(NodeId, u64),
    Call(Function, NodeId),
}

#[derive(Default)]
pub struct Dag {
    pub nodes: Vec<Node>,
    hashes: Vec<u64>,
    index: HashMap<Node, NodeId>,
    pinned: Vec<bool>,
    /// Names of pinned intermediates, for readable emitted code.
    pub names: HashMap<NodeId, String>,
}

/// A function's part in structural hashes (the DAG's and the lane signatures').
pub(crate) fn function_tag(f: Function) -> u64 {
    match f {
        Function::Sin => 0,
        Function::Cos => 1,
        Function::Tan => 2,
        Function::Exp => 3,
        Function::Log => 4,
        Function::Stumpff(k) => 16 + k as u64,
        Function::ReciprocalOrZero => 5,
    }
}

/// FNV-1a over the parts' bytes: the structural hashes of the DAG and of its lane signatures.
pub(crate) fn fnv(parts: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

impl Dag {
    pub fn constant(&self, id: NodeId) -> Option<f64> {
        match self.nodes[id] {
            Node::Const(bits) => Some(f64::from_bits(bits)),
            _ => None,
        }
    }

    fn intern(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        // Structural hash, independent of insertion order, for canonical child ordering.
        let hash = match &node {
            Node::Const(bits) => fnv([1, *bits]),
            Node::Input(i) => {
                let (tag, k) = match i {
                    Input::Q(k) => (2, *k),
                    Input::Qd(k) => (3, *k),
                    Input::Param(k) => (4, *k),
                    Input::Force(k) => (10, *k),
                    Input::Point(k) => (11, *k),
                    Input::Acceleration(k) => (12, *k),
                    Input::PositionDirection(k) => (13, *k),
                    Input::VelocityDirection(k) => (14, *k),
                };
                fnv([tag, k as u64])
            }
            Node::Add(c) => fnv([5].into_iter().chain(c.iter().map(|&x| self.hashes[x]))),
            Node::Mul(c) => fnv([6].into_iter().chain(c.iter().map(|&x| self.hashes[x]))),
            Node::Powi(b, e) => fnv([7, self.hashes[*b], *e as i64 as u64]),
            Node::Powf(b, e) => fnv([8, self.hashes[*b], *e]),
            Node::Call(f, a) => fnv([9, function_tag(*f), self.hashes[*a]]),
        };
        let id = self.nodes.len();
        self.nodes.push(node.clone());
        self.hashes.push(hash);
        self.pinned.push(false);
        self.index.insert(node, id);
        id
    }

    /// Whether `id` is a constant or an input.
    pub fn is_leaf(&self, id: NodeId) -> bool {
        matches!(self.nodes[id], Node::Const(_) | Node::Input(_))
    }

    /// Whether `id` is pinned (see [`Dag::pin`]).
    pub fn is_pinned(&self, id: NodeId) -> bool {
        self.pinned[id]
    }

    /// Keeps `id` whole: sums and products that use it do not flatten it.
    pub fn pin(&mut self, id: NodeId) -> NodeId {
        if !self.is_leaf(id) {
            self.pinned[id] = true;
        }
        id
    }

    /// Pins `id` and gives it `name` (the first name given wins).
    pub fn pin_named(&mut self, id: NodeId, name: String) -> NodeId {
        if !self.is_leaf(id) {
            self.pinned[id] = true;
            self.names.entry(id).or_insert(name);
        }
        id
    }

    pub fn number(&mut self, v: f64) -> NodeId {
        // Normalise -0.0 so that it shares the node of 0.0.
        let v = if v == 0.0 { 0.0 } else { v };
        self.intern(Node::Const(v.to_bits()))
    }

    pub fn input(&mut self, i: Input) -> NodeId {
        self.intern(Node::Input(i))
    }

    fn sort(&self, children: &mut [NodeId]) {
        children.sort_by_key(|&c| (self.hashes[c], c));
    }

    pub fn add(&mut self, terms: Vec<NodeId>) -> NodeId {
        let mut flat = Vec::new();
        let mut constant = 0.0;
        for t in terms {
            match &self.nodes[t] {
                Node::Add(inner) if !self.pinned[t] => flat.extend(inner.iter().copied()),
                Node::Const(bits) => constant += f64::from_bits(*bits),
                _ => flat.push(t),
            }
        }
        // Fold constants that flattening brought up.
        let mut rest = Vec::new();
        for t in flat {
            match self.constant(t) {
                Some(c) => constant += c,
                None => rest.push(t),
            }
        }
        if constant != 0.0 {
            rest.push(self.number(constant));
        }
        match rest.len() {
            0 => self.number(0.0),
            1 => rest[0],
            _ => {
                self.sort(&mut rest);
                self.intern(Node::Add(rest))
            }
        }
    }

    pub fn mul(&mut self, factors: Vec<NodeId>) -> NodeId {
        let mut flat = Vec::new();
        let mut constant = 1.0;
        let mut stack = factors;
        while let Some(f) = stack.pop() {
            match &self.nodes[f] {
                Node::Mul(inner) if !self.pinned[f] => stack.extend(inner.iter().copied()),
                Node::Const(bits) => constant *= f64::from_bits(*bits),
                _ => flat.push(f),
            }
        }
        if constant == 0.0 {
            return self.number(0.0);
        }
        if constant != 1.0 {
            flat.push(self.number(constant));
        }
        match flat.len() {
            0 => self.number(1.0),
            1 => flat[0],
            _ => {
                self.sort(&mut flat);
                self.intern(Node::Mul(flat))
            }
        }
    }

    pub fn powi(&mut self, base: NodeId, exponent: i32) -> NodeId {
        if exponent == 0 {
            return self.number(1.0);
        }
        if exponent == 1 {
            return base;
        }
        if let Some(c) = self.constant(base) {
            return self.number(c.powi(exponent));
        }
        if let Node::Powi(inner, e) = self.nodes[base] {
            return self.powi(inner, e * exponent);
        }
        self.intern(Node::Powi(base, exponent))
    }

    /// A real power of `base`, folded when `base` is a constant.
    pub fn powf(&mut self, base: NodeId, exponent: f64) -> NodeId {
        if let Some(c) = self.constant(base) {
            return self.number(c.powf(exponent));
        }
        self.intern(Node::Powf(base, exponent.to_bits()))
    }

    /// `f(a)`, folded when `a` is a constant.
    pub fn call(&mut self, f: Function, a: NodeId) -> NodeId {
        match self.constant(a) {
            Some(c) => {
                let v = match f {
                    Function::Sin => c.sin(),
                    Function::Cos => c.cos(),
                    Function::Tan => c.tan(),
                    Function::Exp => c.exp(),
                    Function::Log => c.ln(),
                    Function::Stumpff(k) => softgen_runtime::stumpff(c)[k as usize],
                    Function::ReciprocalOrZero => softgen_runtime::reciprocal_or_zero(c),
                };
                self.number(v)
            }
            None => self.intern(Node::Call(f, a)),
        }
    }

    /// Builds the DAG of an expression; `resolve` maps symbol names to inputs.
    pub fn build(&mut self, e: &Expr, resolve: &dyn Fn(&str) -> Option<Input>) -> Result<NodeId, String> {
        self.build_nodes(e, &mut |dag: &mut Dag, s: &str| resolve(s).map(|i| dag.input(i)))
    }

    /// Builds the DAG of an expression whose symbols `resolve` maps to nodes (inputs, or
    /// intermediates already in the DAG).
    pub fn build_nodes(
        &mut self,
        e: &Expr,
        resolve: &mut dyn FnMut(&mut Dag, &str) -> Option<NodeId>,
    ) -> Result<NodeId, String> {
        Ok(match e {
            Expr::Num(n) => self.number(n.value()),
            Expr::Sym(s) => match resolve(self, s) {
                Some(id) => id,
                None => return Err(format!("derived expression uses unknown symbol `{s}`")),
            },
            Expr::Add(v) => {
                let terms = v.iter().map(|x| self.build_nodes(x, resolve)).collect::<Result<Vec<_>, _>>()?;
                self.add(terms)
            }
            Expr::Mul(v) => {
                let factors = v.iter().map(|x| self.build_nodes(x, resolve)).collect::<Result<Vec<_>, _>>()?;
                self.mul(factors)
            }
            Expr::Pow(b, x) => {
                let base = self.build_nodes(b, resolve)?;
                match **x {
                    Expr::Num(Number::Rational(p, 1)) if p.abs() < 64 => self.powi(base, p as i32),
                    Expr::Num(n) => {
                        if let Some(c) = self.constant(base) {
                            self.number(c.powf(n.value()))
                        } else {
                            self.intern(Node::Powf(base, n.value().to_bits()))
                        }
                    }
                    _ => return Err(format!("unsupported non-constant exponent in {e}")),
                }
            }
            Expr::Call(name, args) => {
                let [arg] = args.as_slice() else { return Err(format!("`{name}` with {} arguments", args.len())) };
                let a = self.build_nodes(arg, resolve)?;
                let f = match name.as_str() {
                    "sin" => Function::Sin,
                    "cos" => Function::Cos,
                    "tan" => Function::Tan,
                    "exp" => Function::Exp,
                    "log" => Function::Log,
                    "sqrt" => return Ok(self.intern(Node::Powf(a, 0.5f64.to_bits()))),
                    other => return Err(format!("unsupported function `{other}`")),
                };
                self.call(f, a)
            }
        })
    }

    /// Children of a node.
    pub fn children(&self, id: NodeId) -> Vec<NodeId> {
        match &self.nodes[id] {
            Node::Const(_) | Node::Input(_) => vec![],
            Node::Add(c) | Node::Mul(c) => c.clone(),
            Node::Powi(b, _) | Node::Powf(b, _) | Node::Call(_, b) => vec![*b],
        }
    }

    /// For every node, whether it depends on a velocity or force input, that is, whether it
    /// is more than a function of the position (children precede their parents, so one pass
    /// in index order suffices).
    pub fn rate_dependence(&self) -> Vec<bool> {
        let mut depends = vec![false; self.nodes.len()];
        for id in 0..self.nodes.len() {
            depends[id] = match &self.nodes[id] {
                Node::Input(
                    Input::Qd(_)
                    | Input::Force(_)
                    | Input::Acceleration(_)
                    | Input::PositionDirection(_)
                    | Input::VelocityDirection(_),
                ) => true,
                _ => self.children(id).into_iter().any(|c| depends[c]),
            };
        }
        depends
    }

    /// The value of every node for the given inputs, in node order.
    pub fn evaluate(&self, input: &dyn Fn(Input) -> f64) -> Vec<f64> {
        let mut values: Vec<f64> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let v = match node {
                Node::Const(bits) => f64::from_bits(*bits),
                Node::Input(i) => input(*i),
                Node::Add(c) => c.iter().map(|&x| values[x]).sum(),
                Node::Mul(c) => c.iter().map(|&x| values[x]).product(),
                Node::Powi(b, e) => values[*b].powi(*e),
                Node::Powf(b, e) => values[*b].powf(f64::from_bits(*e)),
                Node::Call(f, a) => {
                    let a = values[*a];
                    match f {
                        Function::Sin => a.sin(),
                        Function::Cos => a.cos(),
                        Function::Tan => a.tan(),
                        Function::Exp => a.exp(),
                        Function::Log => a.ln(),
                        Function::Stumpff(k) => softgen_runtime::stumpff(a)[*k as usize],
                        Function::ReciprocalOrZero => softgen_runtime::reciprocal_or_zero(a),
                    }
                }
            };
            values.push(v);
        }
        values
    }

    /// A sum with like terms collected: terms that differ only by a constant factor (c x and
    /// d x) become one, (c + d) x, and vanish when they cancel. Derivatives need it: the
    /// tangent of v x (I v) or of a rotation's orthogonality has terms that cancel exactly,
    /// and a zero found here is a zero for everything built on it.
    pub fn add_collecting(&mut self, terms: Vec<NodeId>) -> NodeId {
        let mut flat = Vec::new();
        let mut stack = terms;
        while let Some(t) = stack.pop() {
            match &self.nodes[t] {
                Node::Add(inner) if !self.pinned[t] => stack.extend(inner.iter().copied()),
                _ => flat.push(t),
            }
        }
        let mut constant = 0.0;
        let mut order: Vec<NodeId> = Vec::new();
        let mut coefficients: HashMap<NodeId, f64> = HashMap::new();
        for t in flat {
            let (coefficient, base) = match &self.nodes[t] {
                Node::Const(bits) => {
                    constant += f64::from_bits(*bits);
                    continue;
                }
                Node::Mul(factors) if !self.pinned[t] => {
                    let factors = factors.clone();
                    match factors.iter().position(|&f| self.constant(f).is_some()) {
                        Some(k) => {
                            let c = self.constant(factors[k]).unwrap_or(1.0);
                            let rest: Vec<NodeId> =
                                factors.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, &f)| f).collect();
                            (c, self.mul(rest))
                        }
                        None => (1.0, t),
                    }
                }
                _ => (1.0, t),
            };
            match coefficients.get_mut(&base) {
                Some(sum) => *sum += coefficient,
                None => {
                    coefficients.insert(base, coefficient);
                    order.push(base);
                }
            }
        }
        let mut rest: Vec<NodeId> = Vec::new();
        for base in order {
            let c = coefficients[&base];
            if c == 0.0 {
                continue;
            }
            rest.push(match c == 1.0 {
                true => base,
                false => {
                    let c = self.number(c);
                    self.mul(vec![c, base])
                }
            });
        }
        if constant != 0.0 {
            rest.push(self.number(constant));
        }
        self.add(rest)
    }

    /// a + b.
    pub fn add2(&mut self, a: NodeId, b: NodeId) -> NodeId {
        self.add(vec![a, b])
    }

    /// a - b.
    pub fn sub(&mut self, a: NodeId, b: NodeId) -> NodeId {
        let minus_b = self.neg(b);
        self.add(vec![a, minus_b])
    }

    /// a * b.
    pub fn mul2(&mut self, a: NodeId, b: NodeId) -> NodeId {
        self.mul(vec![a, b])
    }

    /// -a.
    pub fn neg(&mut self, a: NodeId) -> NodeId {
        let minus_one = self.number(-1.0);
        self.mul(vec![minus_one, a])
    }
}
