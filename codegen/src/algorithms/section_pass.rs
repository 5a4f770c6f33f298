//! A soft section's part of the recursive algorithms: its stations (slices, tip, skin rings)
//! placed in the world from symbolica's local pieces, and its coordinates' rows of M, C qd,
//! G and the Christoffel C.
//!
//! A section is a joint whose coordinates move many rigid bodies (its slices) along
//! different columns: coordinate j moves slice k along S_j^k and everything hanging from the
//! tip along the tip's column S_j^tip. Sums over bodies then split into the slices and the
//! subtree beyond the tip (composite inertia E):
//! - F_j = sum_k I_k S_j^k + E S_j^tip, so M_ij = S_i . F_j for any i above the section and
//!   M_jj' = sum_k S_j'^k . I_k S_j^k + S_j'^tip . E S_j^tip within it;
//! - C qd and G likewise from the slices' Newton-Euler and gravity forces;
//! - the Christoffel C by the same body sum as the rigid links (C = sum_b J_b' (I_b Jdot_b +
//!   B_b J_b), so Mdot - 2 C is skew), with each slice's columns and their rates.

use crate::algorithms::spatial::{Force, Inertia, Mat3, Motion, Vec3};
use crate::algorithms::tree::{body_state, BodyState, Composite, Frame};
use crate::dag::equations::{read_atom, AtomReader};
use crate::dag::{Dag, Function, Input, NodeId};
use crate::spec::expr::{Expr, Number};
use crate::symbolic::local::{Link, SectionLink};
use crate::symbolic::section::{stumpff_symbol, SectionKinematics, SHAPE, SHAPE_RATE, XI};

/// symbolica's local pieces read once, each split into its per-station sum.
pub(crate) struct Pieces {
    position: [StationSum; 3],
    rotation: [[StationSum; 3]; 3],
    position_partials: [[StationSum; 3]; 3],
    angular: [[StationSum; 3]; 3],
    position_second: [[[StationSum; 3]; 3]; 3],
    angular_partials: [[[StationSum; 3]; 3]; 3],
    angular_bias: [StationSum; 3],
    position_bias: [StationSum; 3],
}

impl Pieces {
    pub fn read(k: &SectionKinematics) -> Result<Pieces, String> {
        type Atom = symbolica::prelude::Atom;
        let one = |a: &Atom| StationSum::split(&read_atom(a)?);
        let three = |v: &[Atom; 3]| -> Result<[StationSum; 3], String> { Ok([one(&v[0])?, one(&v[1])?, one(&v[2])?]) };
        let nine = |m: &[[Atom; 3]; 3]| -> Result<[[StationSum; 3]; 3], String> {
            Ok([three(&m[0])?, three(&m[1])?, three(&m[2])?])
        };
        Ok(Pieces {
            position: three(&k.position)?,
            rotation: nine(&k.rotation)?,
            position_partials: nine(&k.position_partials)?,
            angular: nine(&k.angular)?,
            position_second: [nine(&k.position_second[0])?, nine(&k.position_second[1])?, nine(&k.position_second[2])?],
            angular_partials: [
                nine(&k.angular_partials[0])?,
                nine(&k.angular_partials[1])?,
                nine(&k.angular_partials[2])?,
            ],
            angular_bias: three(&k.angular_bias)?,
            position_bias: three(&k.position_bias)?,
        })
    }
}

/// A station piece written as sum_t xi^n_t c_k_t a_t P_t, its terms grouped by (n, k): each P
/// is a polynomial in the section's shape and shape rates alone, the same at every station,
/// so the section computes it once and each station only weighs it by a number and one of
/// its Stumpff values. Each P is scaled so that its first term (in a fixed order of the
/// monomials) has coefficient 1, the factor a_t going into the weight: groups whose
/// polynomials differ only by a factor (many do: 8 P and -5 P) then share one.
pub(crate) struct StationSum {
    terms: Vec<(i32, Option<usize>, f64, Expr)>,
}

/// A term's numeric factor and the rest of it (1 when it is a number alone).
fn numeric_factor(term: &Expr) -> (Number, Expr) {
    let one = Number::Rational(1, 1);
    match term {
        Expr::Num(n) => (*n, Expr::Num(one)),
        Expr::Mul(factors) => {
            let mut number = one;
            let mut rest = Vec::new();
            for factor in factors {
                match factor {
                    Expr::Num(n) => number = multiply(number, *n),
                    other => rest.push(other.clone()),
                }
            }
            let rest = match rest.len() {
                0 => Expr::Num(one),
                1 => rest.pop().unwrap_or(Expr::Num(one)),
                _ => Expr::Mul(rest),
            };
            (number, rest)
        }
        other => (one, other.clone()),
    }
}

fn multiply(a: Number, b: Number) -> Number {
    match (a, b) {
        (Number::Rational(n1, d1), Number::Rational(n2, d2)) => match (n1.checked_mul(n2), d1.checked_mul(d2)) {
            (Some(n), Some(d)) => Number::rational(n, d),
            _ => Number::Float(a.value() * b.value()),
        },
        _ => Number::Float(a.value() * b.value()),
    }
}

fn divide(a: Number, b: Number) -> Number {
    match b {
        Number::Rational(n, d) => multiply(a, Number::rational(d, n)),
        Number::Float(v) => Number::Float(a.value() / v),
    }
}

/// `parts` (a polynomial's terms) as a factor times the polynomial whose first term, in the
/// order of the monomials' printed forms, has coefficient 1.
fn normalise(parts: Vec<Expr>) -> (f64, Expr) {
    let mut split: Vec<(String, Number, Expr)> = parts
        .iter()
        .map(|part| {
            let (number, monomial) = numeric_factor(part);
            (monomial.to_string(), number, monomial)
        })
        .collect();
    split.sort_by(|a, b| a.0.cmp(&b.0));
    let scale = split[0].1;
    if scale.value() == 0.0 || !scale.value().is_finite() {
        // A zero piece (or a number too large to divide by) stays as it is.
        return (1.0, if parts.len() == 1 { parts[0].clone() } else { Expr::Add(parts) });
    }
    let terms: Vec<Expr> = split
        .into_iter()
        .map(|(_, number, monomial)| match divide(number, scale) {
            Number::Rational(1, 1) => monomial,
            n => Expr::Mul(vec![Expr::Num(n), monomial]),
        })
        .collect();
    let polynomial = if terms.len() == 1 {
        terms.into_iter().next().unwrap_or(Expr::Num(Number::Rational(1, 1)))
    } else {
        Expr::Add(terms)
    };
    (scale.value(), polynomial)
}

impl StationSum {
    /// Splits an expanded expression into its (xi power, Stumpff function) groups.
    fn split(e: &Expr) -> Result<StationSum, String> {
        let terms = match e {
            Expr::Add(terms) => terms.clone(),
            other => vec![other.clone()],
        };
        let mut groups: Vec<(i32, Option<usize>, Vec<Expr>)> = Vec::new();
        for term in terms {
            // The parser writes a subtraction as (-1) times the term: flatten nested products.
            let mut factors = Vec::new();
            let mut stack = vec![term];
            while let Some(factor) = stack.pop() {
                match factor {
                    Expr::Mul(inner) => stack.extend(inner),
                    other => factors.push(other),
                }
            }
            let (mut power, mut stumpff, mut rest) = (0, None, Vec::new());
            for factor in factors {
                match &factor {
                    Expr::Sym(name) if name == XI => power += 1,
                    Expr::Pow(base, exponent) if matches!(&**base, Expr::Sym(name) if name == XI) => match **exponent {
                        Expr::Num(crate::spec::expr::Number::Rational(n, 1)) => power += n as i32,
                        _ => return Err(format!("a station piece with a non-integer power of {XI}: {e}")),
                    },
                    Expr::Sym(name) if (0..8).any(|k| stumpff_symbol(k) == *name) => {
                        if stumpff.is_some() {
                            return Err(format!("a station piece with a product of Stumpff functions: {e}"));
                        }
                        stumpff = (0..8).find(|&k| stumpff_symbol(k) == *name);
                    }
                    _ => rest.push(factor.clone()),
                }
            }
            let coefficient = match rest.len() {
                0 => Expr::Num(crate::spec::expr::Number::Rational(1, 1)),
                1 => rest.pop().unwrap_or(Expr::Num(crate::spec::expr::Number::Rational(1, 1))),
                _ => Expr::Mul(rest),
            };
            match groups.iter_mut().find(|(n, k, _)| *n == power && *k == stumpff) {
                Some(group) => group.2.push(coefficient),
                None => groups.push((power, stumpff, vec![coefficient])),
            }
        }
        let terms = groups
            .into_iter()
            .map(|(n, k, parts)| {
                let (scale, polynomial) = normalise(parts);
                (n, k, scale, polynomial)
            })
            .collect();
        Ok(StationSum { terms })
    }
}

/// sum_x weights[x] vectors[x].
fn weighted(dag: &mut Dag, vectors: &[Vec3], weights: &[NodeId]) -> Vec3 {
    let mut sum = dag.zero3();
    for (v, &w) in vectors.iter().zip(weights) {
        let part = dag.scale3(v, w);
        sum = dag.add3(&sum, &part);
    }
    sum
}

/// A section's base frame and shape, from which any station along it is placed.
pub(crate) struct SectionFrame {
    pub name: String,
    pub base: Frame,
    pub coordinates: Vec<usize>,
    shape: [NodeId; 3],
    shape_rate: [NodeId; 3],
    bend_squared: NodeId,
    /// d(shape)/dq per coordinate.
    gradient: Vec<[NodeId; 3]>,
    zero: NodeId,
    /// Whether stations' accelerations include the coordinates' own accelerations
    /// (`Input::Acceleration`, the inverse dynamics) or are bias accelerations at qdd = 0.
    accelerations: bool,
}

/// A point along a section with the frame of the slice there.
pub(crate) struct Station {
    pub rotation: Mat3,
    pub position: Vec3,
    /// World column of each of the section's coordinates.
    pub columns: Vec<Motion>,
    /// Their rates (slices and tip only).
    pub column_rates: Vec<Motion>,
    pub velocity: Motion,
    /// Bias acceleration at qdd = 0 (slices and tip only).
    pub bias: Motion,
}

/// A point along a section in its base frame (about the base origin, in base axes): its pose,
/// the columns of the section's coordinates, its velocity relative to the base, and (slices
/// and tip) the columns' rates and the relative acceleration at qdd = 0 that the shape's
/// rates give.
pub(crate) struct LocalStation {
    pub rotation: Mat3,
    pub position: Vec3,
    /// Per shape variable the section's coordinates move (`SectionFrame::moved_shape`), its
    /// Plücker column: each coordinate's column is their sum weighted by the shape's gradient.
    pub generators: Vec<Motion>,
    pub columns: Vec<Motion>,
    pub relative: Motion,
    pub column_rates: Vec<Motion>,
    pub bias: Option<Motion>,
}

/// A slice: a rigid thin disc, in the world with its columns and their rates (for the
/// Christoffel C and the diagnostics), and in the section's base frame (`local`: its body
/// about the base origin and its shape variables' columns there, for M, C qd and G).
pub(crate) struct Slice {
    /// The slice's frame in the world: pose, velocity and bias acceleration.
    pub frame: Frame,
    pub body: BodyState,
    pub columns: Vec<Motion>,
    pub column_rates: Vec<Motion>,
    pub local: BodyState,
    /// The columns of the shape variables the section's coordinates move, in the base frame.
    pub local_generators: Vec<Motion>,
}

/// What the rest of the algorithms need of a section.
pub(crate) struct SectionState {
    pub frame: SectionFrame,
    pub tip: Station,
    pub slices: Vec<Slice>,
    /// The slices' summed inertia and Newton-Euler force about the world origin, each
    /// summed in the base frame and carried to the world once.
    pub slices_inertia: Inertia,
    pub slices_force: Force,
    /// Per coordinate: elastic energy, force and stiffness.
    pub elastic: Vec<Elastic>,
    /// Linear damping coefficient of each coordinate.
    pub damping: NodeId,
    pub viscosity: Option<ViscousNodes>,
}

/// One coordinate's elastic energy, force dE/dq and stiffness d2E/dq2.
pub(crate) struct Elastic {
    pub energy: NodeId,
    pub force: NodeId,
    pub stiffness: NodeId,
}

/// The power-law viscosity of a section's actuators.
pub(crate) struct ViscousNodes {
    pub area: NodeId,
    pub consistency: NodeId,
    pub power_index: NodeId,
    pub rate_scale: NodeId,
    pub rest_length: NodeId,
}

impl ViscousNodes {
    /// The viscous force on an actuator length moving at `rate` (m/s), and its derivative
    /// by the rate: with strain rate e = rate / L0 and s = e^2 + e0^2,
    /// F = area eta_0 e s^((k - 1) / 2), dF/drate = area eta_0 / L0 s^((k - 3) / 2) (k e^2 + e0^2),
    /// the power law eta_0 |e|^(k - 1) e for |e| >> e0, and finite, linear, at rest.
    pub fn force(&self, dag: &mut Dag, rate: NodeId) -> (NodeId, NodeId) {
        let inverse_length = dag.powi(self.rest_length, -1);
        let strain_rate = dag.mul2(rate, inverse_length);
        let squared = dag.mul2(strain_rate, strain_rate);
        let floor = dag.mul2(self.rate_scale, self.rate_scale);
        let sum = dag.add2(squared, floor);
        let log = dag.call(Function::Log, sum);
        let one = dag.number(1.0);
        let half = dag.number(0.5);
        let exponent = {
            let less = dag.sub(self.power_index, one);
            dag.mul2(less, half)
        };
        let scaled = dag.mul2(exponent, log);
        let power = dag.call(Function::Exp, scaled);
        let stress = dag.mul(vec![self.consistency, strain_rate, power]);
        let force = dag.mul2(self.area, stress);
        let numerator = {
            let weighted = dag.mul2(self.power_index, squared);
            dag.add2(weighted, floor)
        };
        let per_sum = dag.powi(sum, -1);
        let slope = dag.mul(vec![self.area, self.consistency, inverse_length, power, per_sum, numerator]);
        (force, slope)
    }
}

impl SectionFrame {
    pub fn new(
        dag: &mut Dag,
        reader: &AtomReader,
        link: &Link,
        section: &SectionLink,
        base: Frame,
        accelerations: bool,
    ) -> Result<SectionFrame, String> {
        let name = link.name.clone();
        let mut shape = [0; 3];
        for x in 0..3 {
            let node = reader.node(dag, &section.shape[x])?;
            shape[x] = dag.pin_named(node, format!("{name}_{}", SHAPE[x]));
        }
        let mut gradient = Vec::new();
        for g in &section.shape_gradient {
            gradient.push(reader.vec3(dag, g)?);
        }
        let mut shape_rate = [0; 3];
        for x in 0..3 {
            let terms: Vec<NodeId> = section
                .coordinates
                .iter()
                .zip(&gradient)
                .map(|(&c, g)| {
                    let rate = dag.input(Input::Qd(c));
                    dag.mul2(g[x], rate)
                })
                .collect();
            let sum = dag.add(terms);
            shape_rate[x] = dag.pin_named(sum, format!("{name}_{}_rate", SHAPE[x]));
        }
        let squares = vec![dag.powi(shape[1], 2), dag.powi(shape[2], 2)];
        let bend_squared = dag.add(squares);
        let bend_squared = dag.pin_named(bend_squared, format!("{name}_bend_squared"));
        let zero = dag.number(0.0);
        Ok(SectionFrame {
            name,
            base,
            coordinates: section.coordinates.clone(),
            shape,
            shape_rate,
            bend_squared,
            gradient,
            zero,
            accelerations,
        })
    }

    /// A vector of local pieces at `xi`: each group's polynomial built and pinned once per
    /// section (the DAG shares equal nodes), then weighed by xi^n and the station's c_k.
    fn read3(&self, dag: &mut Dag, sums: &[StationSum; 3], xi: f64, s: NodeId) -> Result<Vec3, String> {
        let (shape, shape_rate) = (self.shape, self.shape_rate);
        let mut out = [0; 3];
        for a in 0..3 {
            let mut parts = Vec::new();
            for (power, stumpff, scale, coefficient) in &sums[a].terms {
                let polynomial = dag.build_nodes(coefficient, &mut |_: &mut Dag, symbol: &str| {
                    if let Some(x) = SHAPE.iter().position(|&n| n == symbol) {
                        return Some(shape[x]);
                    }
                    SHAPE_RATE.iter().position(|&n| n == symbol).map(|x| shape_rate[x])
                })?;
                let polynomial = dag.pin(polynomial);
                let mut factors = vec![dag.number(scale * xi.powi(*power)), polynomial];
                if let Some(k) = stumpff {
                    factors.push(dag.call(Function::Stumpff(*k as u8), s));
                }
                parts.push(dag.mul(factors));
            }
            // Pinned: products with the base frame's rotation then multiply the piece once
            // instead of flattening it into every product.
            let sum = dag.add(parts);
            out[a] = dag.pin(sum);
        }
        Ok(out)
    }

    /// A local motion vector (about the base origin, base axes) in world coordinates.
    fn to_world(&self, dag: &mut Dag, w: &Vec3, v: &Vec3) -> Motion {
        let w = dag.mat_vec3(&self.base.rotation, w);
        let v = dag.mat_vec3(&self.base.rotation, v);
        let carried = dag.cross3(&self.base.position, &w);
        Motion { w, v: dag.add3(&v, &carried) }
    }

    /// The station at `xi` in the section's base frame (about its origin, in its axes),
    /// named `label`; column rates and bias only `with_rates`.
    pub fn local_station(
        &self,
        dag: &mut Dag,
        pieces: &Pieces,
        xi: f64,
        label: &str,
        with_rates: bool,
    ) -> Result<LocalStation, String> {
        let scale = dag.number(xi * xi);
        let s = dag.mul2(scale, self.bend_squared);
        let s = dag.pin_named(s, format!("{label}_bend"));
        let mut rotation = [[0; 3]; 3];
        for a in 0..3 {
            rotation[a] = self.read3(dag, &pieces.rotation[a], xi, s)?;
        }
        let position = self.read3(dag, &pieces.position, xi, s)?;
        // Per shape variable x: the frame's angular rate w_x and its origin's dp/dx, and the
        // Plücker column (w_x, dp/dx - w_x x p) about the base origin.
        let mut angular = Vec::new();
        let mut moved = Vec::new();
        let mut generators = Vec::new();
        for x in 0..3 {
            let w = self.read3(dag, &pieces.angular[x], xi, s)?;
            let dp = self.read3(dag, &pieces.position_partials[x], xi, s)?;
            let turned = dag.cross3(&w, &position);
            let v = dag.sub3(&dp, &turned);
            angular.push(w);
            moved.push(dp);
            generators.push(Motion { w, v });
        }
        // Each coordinate's column: sum_x d(shape_x)/dq_j G_x.
        // Pinned before use: the relative velocity and every kernel then read a column whole
        // (a cache field) instead of flattening its products into theirs.
        let mut columns = Vec::new();
        for (a, g) in self.gradient.iter().enumerate() {
            let column = combine(dag, &generators, g);
            columns.push(dag.pin_motion(column, &format!("{label}_local_subspace{a}")));
        }
        let shape_columns: Vec<Motion> = self
            .moved_shape()
            .into_iter()
            .map(|x| dag.pin_motion(generators[x], &format!("{label}_local_{}_column", SHAPE[x])))
            .collect();
        // The velocity relative to the base: sum_a S_a qd_a = sum_x G_x x'.
        let mut relative = dag.zero_motion();
        for (column, x) in shape_columns.iter().zip(self.moved_shape()) {
            let part = dag.scale_motion(column, self.shape_rate[x]);
            relative = dag.add_motion(&relative, &part);
        }
        let mut column_rates = Vec::new();
        let mut bias = None;
        if with_rates {
            // Along the motion: w = sum_x x' w_x, p' = sum_x x' dp/dx, and per x the rates
            // w_x' = sum_y y' dw_x/dy, (dp/dx)' = sum_y y' d2p/dxdy.
            let spin = weighted(dag, &angular, &self.shape_rate);
            let drift = weighted(dag, &moved, &self.shape_rate);
            let mut angular_rates = Vec::new();
            let mut moved_rates = Vec::new();
            for x in 0..3 {
                let mut dw = Vec::new();
                let mut ddp = Vec::new();
                for y in 0..3 {
                    dw.push(self.read3(dag, &pieces.angular_partials[x][y], xi, s)?);
                    ddp.push(self.read3(dag, &pieces.position_second[x][y], xi, s)?);
                }
                angular_rates.push(weighted(dag, &dw, &self.shape_rate));
                moved_rates.push(weighted(dag, &ddp, &self.shape_rate));
            }
            // Rate of each Plücker column: (w_x', (dp/dx)' - w_x' x p - w_x x p').
            let mut generator_rates = Vec::new();
            for x in 0..3 {
                let first = dag.cross3(&angular_rates[x], &position);
                let second = dag.cross3(&angular[x], &drift);
                let v = dag.sub3(&moved_rates[x], &first);
                let v = dag.sub3(&v, &second);
                generator_rates.push(Motion { w: angular_rates[x], v });
            }
            for g in &self.gradient {
                column_rates.push(combine(dag, &generator_rates, g));
            }
            // The frame's acceleration at qdd = 0 relative to the base, about the base origin:
            // (w', p'' - w' x p - w x p'), with w' and p'' derived whole as directional
            // derivatives (not summed from the partials above, which only the Christoffel C
            // needs).
            let spin_rate = self.read3(dag, &pieces.angular_bias, xi, s)?;
            let acceleration = self.read3(dag, &pieces.position_bias, xi, s)?;
            let first = dag.cross3(&spin_rate, &position);
            let second = dag.cross3(&spin, &drift);
            let linear = dag.sub3(&acceleration, &first);
            let linear = dag.sub3(&linear, &second);
            let mut relative_acceleration = Motion { w: spin_rate, v: linear };
            // With the coordinates' accelerations: + sum_a S_a qdd_a.
            if self.accelerations {
                for (column, &c) in columns.iter().zip(&self.coordinates) {
                    let acceleration = dag.input(Input::Acceleration(c));
                    let part = dag.scale_motion(column, acceleration);
                    relative_acceleration = dag.add_motion(&relative_acceleration, &part);
                }
            }
            bias = Some(relative_acceleration);
        }
        Ok(LocalStation { rotation, position, generators: shape_columns, columns, relative, column_rates, bias })
    }

    /// The shape variables (length, bend_y, bend_z) that some coordinate of the section moves,
    /// in order: an extensible section all three, an inextensible one the two bends, a planar
    /// one its bend. Each coordinate's column is a constant-weighted sum of their columns,
    /// so the slices' sums for M, C qd and G are taken per shape variable and weighted once
    /// per section instead of once per slice.
    pub fn moved_shape(&self) -> Vec<usize> {
        (0..3).filter(|&x| self.gradient.iter().any(|g| g[x] != self.zero)).collect()
    }

    /// The station at `xi` in the world, named `label`; column rates and bias only
    /// `with_rates`.
    pub fn station(
        &self,
        dag: &mut Dag,
        pieces: &Pieces,
        xi: f64,
        label: &str,
        with_rates: bool,
    ) -> Result<Station, String> {
        let local = self.local_station(dag, pieces, xi, label, with_rates)?;
        Ok(self.to_world_station(dag, &local, label))
    }

    /// A station placed in the world from its place in the base frame.
    pub fn to_world_station(&self, dag: &mut Dag, local: &LocalStation, label: &str) -> Station {
        let rotation = dag.mat_mul3(&self.base.rotation, &local.rotation);
        let rotation = dag.pin_mat3(rotation, &format!("{label}_rotation"));
        let offset = dag.mat_vec3(&self.base.rotation, &local.position);
        let position = dag.add3(&self.base.position, &offset);
        let position = dag.pin3(position, &format!("{label}_position"));
        let mut columns = Vec::new();
        for (a, column) in local.columns.iter().enumerate() {
            let column = self.to_world(dag, &column.w, &column.v);
            columns.push(dag.pin_motion(column, &format!("{label}_subspace{a}")));
        }
        // Velocity relative to the base frame, then absolute.
        let mut relative = dag.zero_motion();
        for (column, &c) in columns.iter().zip(&self.coordinates) {
            let rate = dag.input(Input::Qd(c));
            let part = dag.scale_motion(column, rate);
            relative = dag.add_motion(&relative, &part);
        }
        let velocity = dag.add_motion(&self.base.velocity, &relative);
        let velocity = dag.pin_motion(velocity, &format!("{label}_velocity"));
        let mut column_rates = Vec::new();
        let mut bias = self.base.bias;
        if let Some(local_bias) = &local.bias {
            for (a, (column, rate)) in columns.iter().zip(&local.column_rates).enumerate() {
                // dS/dt = v_base x S + X_base dS_local/dt.
                let turned = self.to_world(dag, &rate.w, &rate.v);
                let carried = dag.motion_cross(&self.base.velocity, column);
                let rate = dag.add_motion(&carried, &turned);
                column_rates.push(dag.pin_motion(rate, &format!("{label}_subspace{a}_rate")));
            }
            // a = a_base + v_base x (v - v_base) + X_base of the relative acceleration.
            let turned = self.to_world(dag, &local_bias.w, &local_bias.v);
            let carried = dag.motion_cross(&self.base.velocity, &relative);
            bias = dag.add_motion(&bias, &carried);
            bias = dag.add_motion(&bias, &turned);
            bias = dag.pin_motion(bias, &format!("{label}_bias"));
        }
        Station { rotation, position, columns, column_rates, velocity, bias }
    }
}

/// sum_x d(shape_x)/dq G_x for a gradient `g` of the shape by one coordinate.
fn combine(dag: &mut Dag, parts: &[Motion], g: &[NodeId; 3]) -> Motion {
    let w: Vec<Vec3> = parts.iter().map(|m| m.w).collect();
    let v: Vec<Vec3> = parts.iter().map(|m| m.v).collect();
    Motion { w: weighted(dag, &w, g), v: weighted(dag, &v, g) }
}

/// Places a section: its slices (bodies at the quadrature nodes) and its tip.
///
/// Each slice is placed twice. In the base frame its pose, columns and inertia depend on the
/// section's own coordinates alone, and M, C qd and G sum there, reaching the world through
/// one transform per section instead of one per slice (measured: the soft snake's cache and
/// C qd shrink by about half). The world placement serves the Christoffel C and the
/// diagnostics (momenta, energy), which only those kernels evaluate.
pub(crate) fn section_state(
    dag: &mut Dag,
    reader: &AtomReader,
    pieces: &Pieces,
    link: &Link,
    section: &SectionLink,
    base: Frame,
    accelerations: bool,
) -> Result<SectionState, String> {
    let frame = SectionFrame::new(dag, reader, link, section, base, accelerations)?;
    let name = &link.name;
    let mass = reader.node(dag, &section.mass)?;
    let per_mass = reader.vec3(dag, &section.slice_inertia)?;
    let zero = dag.number(0.0);
    // The base frame's velocity and bias acceleration in its own coordinates.
    let base_velocity = dag.motion_to_frame(&frame.base.rotation, &frame.base.position, &frame.base.velocity);
    let base_velocity = dag.pin_motion(base_velocity, &format!("{name}_base_velocity"));
    let base_bias = dag.motion_to_frame(&frame.base.rotation, &frame.base.position, &frame.base.bias);
    let base_bias = dag.pin_motion(base_bias, &format!("{name}_base_bias"));
    let mut slices = Vec::new();
    let mut inertia_sum: Option<Inertia> = None;
    let mut force_sum = dag.zero_force();
    for (k, &(xi, weight)) in section.quadrature.iter().enumerate() {
        let label = format!("{name}_slice{k}");
        let local = frame.local_station(dag, pieces, xi, &label, true)?;
        let station = frame.to_world_station(dag, &local, &label);
        let weight = dag.number(weight);
        let slice_mass = dag.mul2(mass, weight);
        let slice_mass = dag.pin_named(slice_mass, format!("{label}_mass"));
        let diagonal = dag.scale3(&per_mass, slice_mass);
        let local_inertia = [[diagonal[0], zero, zero], [zero, diagonal[1], zero], [zero, zero, diagonal[2]]];
        let at = Frame {
            rotation: station.rotation,
            position: station.position,
            velocity: station.velocity,
            bias: station.bias,
        };
        let body = body_state(dag, &label, slice_mass, &[zero, zero, zero], &local_inertia, &at);
        // In the base frame: v = v_base + relative, a = a_base + v_base x relative + the
        // shape's own acceleration.
        let velocity = dag.add_motion(&base_velocity, &local.relative);
        let carried = dag.motion_cross(&base_velocity, &local.relative);
        let bias = dag.add_motion(&base_bias, &carried);
        let own = local.bias.ok_or("a slice without its rates")?;
        let bias = dag.add_motion(&bias, &own);
        let in_base = Frame { rotation: local.rotation, position: local.position, velocity, bias };
        let local_body =
            body_state(dag, &format!("{label}_local"), slice_mass, &[zero, zero, zero], &local_inertia, &in_base);
        inertia_sum = Some(match inertia_sum {
            None => local_body.inertia,
            Some(sum) => dag.add_inertia(&sum, &local_body.inertia),
        });
        force_sum = dag.add_force(&force_sum, &local_body.force);
        slices.push(Slice {
            frame: at,
            body,
            columns: station.columns,
            column_rates: station.column_rates,
            local: local_body,
            local_generators: local.generators,
        });
    }
    let inertia_sum = inertia_sum.ok_or("a section without slices")?;
    let inertia_sum = dag.pin_inertia(inertia_sum, &format!("{name}_slices_local_inertia"));
    let slices_inertia = dag.inertia_to_world(&frame.base.rotation, &frame.base.position, &inertia_sum);
    let slices_inertia = dag.pin_inertia(slices_inertia, &format!("{name}_slices_inertia"));
    let slices_force = dag.force_to_world(&frame.base.rotation, &frame.base.position, &force_sum);
    let tip = frame.station(dag, pieces, 1.0, &format!("{name}_tip"), true)?;
    let mut elastic = Vec::new();
    for term in &section.elastic {
        elastic.push(Elastic {
            energy: reader.node(dag, &term.energy)?,
            force: reader.node(dag, &term.force)?,
            stiffness: reader.node(dag, &term.stiffness)?,
        });
    }
    let damping = reader.node(dag, &section.damping)?;
    let viscosity = match &section.viscosity {
        None => None,
        Some(v) => Some(ViscousNodes {
            area: reader.node(dag, &v.area)?,
            consistency: reader.node(dag, &v.consistency)?,
            power_index: reader.node(dag, &v.power_index)?,
            rate_scale: reader.node(dag, &v.rate_scale)?,
            rest_length: reader.node(dag, &v.rest_length)?,
        }),
    };
    Ok(SectionState { frame, tip, slices, slices_inertia, slices_force, elastic, damping, viscosity })
}

/// The outputs a section's rows are written into.
pub(crate) struct Rows<'a> {
    pub mass_matrix: &'a mut Vec<Vec<NodeId>>,
    pub coriolis: &'a mut Vec<NodeId>,
    pub coriolis_matrix: &'a mut Vec<Vec<NodeId>>,
    pub gravity: &'a mut Vec<NodeId>,
}

/// B u = 1/2 (dI/dt u + u x* h) and B' u = 1/2 (dI/dt u - u x* h) for a body or composite.
fn b_times(
    dag: &mut Dag,
    rate: &crate::algorithms::spatial::InertiaRate,
    momentum: &Force,
    u: &Motion,
) -> (Force, Force) {
    let half = dag.number(0.5);
    let turned = dag.inertia_rate_times(rate, u);
    let carried = dag.force_cross(u, momentum);
    let sum = dag.add_force(&turned, &carried);
    let difference = dag.sub_force(&turned, &carried);
    (dag.scale_force(&sum, half), dag.scale_force(&difference, half))
}

/// One section's rows of M, C qd, G (with its elasticity) and the Christoffel C for its
/// coordinates, and their entries against every coordinate above it (`above`: coordinate,
/// column and column rate, as seen by the subtree below).
pub(crate) fn section_rows(
    dag: &mut Dag,
    state: &SectionState,
    beyond: Option<&Composite>,
    above: &[(usize, Motion, Motion)],
    up: &Motion,
    mut rows: Rows,
) {
    let sums = shape_sums(dag, state);
    let totals = mass_and_force_rows(dag, state, beyond, above, up, &sums, &mut rows);
    christoffel_rows(dag, state, beyond, above, &totals, &mut rows);
}

/// A section's sums per shape variable x the coordinates move, with the gradient that
/// weights them per coordinate (see [`shape_sums`]).
struct ShapeSums {
    moved: Vec<usize>,
    /// Per coordinate, per moved shape variable: d(shape_x)/dq_a.
    weights: Vec<Vec<NodeId>>,
    /// Per moved shape variable, F_x in the world.
    shape_totals: Vec<Force>,
    /// M_xy = sum_k P_xk . G_y^k.
    shape_mass: Vec<Vec<NodeId>>,
    /// sum_k f_k . G_x^k, the Newton-Euler forces'.
    shape_coriolis: Vec<NodeId>,
}

/// The slices' sums are taken per shape variable x the coordinates move, with its column
/// G_x^k at slice k, and weighted by the gradient d(shape_x)/dq_a once per section: a
/// coordinate's column is S_a^k = sum_x g_ax G_x^k with g constant. Per x: P_xk = I_k G_x^k
/// (base frame), F_x = sum_k P_xk carried to the world, M_xy = sum_k P_xk . G_y^k and the
/// Newton-Euler forces' sum_k f_k . G_x^k.
fn shape_sums(dag: &mut Dag, state: &SectionState) -> ShapeSums {
    let name = &state.frame.name;
    let zero_force = dag.zero_force();
    let base = &state.frame.base;
    let moved = state.frame.moved_shape();
    let weights: Vec<Vec<NodeId>> =
        state.frame.gradient.iter().map(|g| moved.iter().map(|&x| g[x]).collect()).collect();
    let mut projected: Vec<Vec<Force>> = Vec::new();
    let mut shape_totals: Vec<Force> = Vec::new();
    // Pinned, so the cache computes them once: the sums (read by M and G) are made of them,
    // and M's shape mass reads them again (measured: unpinned, the soft snake's M computed
    // them a second time, 1,566 of its 3,771 operations).
    for (m, &x) in moved.iter().enumerate() {
        let shape = SHAPE[x];
        let per_slice: Vec<Force> = state
            .slices
            .iter()
            .enumerate()
            .map(|(k, slice)| {
                let p = dag.inertia_times(&slice.local.inertia, &slice.local_generators[m]);
                dag.pin_force(p, &format!("{name}_slice{k}_local_{shape}_projected_inertia"))
            })
            .collect();
        let mut sum = zero_force;
        for p in &per_slice {
            sum = dag.add_force(&sum, p);
        }
        shape_totals.push(dag.force_to_world(&base.rotation, &base.position, &sum));
        projected.push(per_slice);
    }
    let mut shape_mass = vec![vec![0; moved.len()]; moved.len()];
    for m in 0..moved.len() {
        for n in 0..=m {
            let terms: Vec<NodeId> = state
                .slices
                .iter()
                .enumerate()
                .map(|(k, slice)| dag.force_dot_motion(&projected[m][k], &slice.local_generators[n]))
                .collect();
            shape_mass[m][n] = dag.add(terms);
            shape_mass[n][m] = shape_mass[m][n];
        }
    }
    let shape_coriolis: Vec<NodeId> = (0..moved.len())
        .map(|m| {
            let terms: Vec<NodeId> = state
                .slices
                .iter()
                .map(|slice| dag.force_dot_motion(&slice.local.force, &slice.local_generators[m]))
                .collect();
            dag.add(terms)
        })
        .collect();
    ShapeSums { moved, weights, shape_totals, shape_mass, shape_coriolis }
}

/// Per coordinate, its rows of M (against every coordinate above and within the section),
/// C qd and G; returns each coordinate's F_a, the momentum a unit rate of it gives
/// everything it moves. Per coordinate, the subtree beyond the tip: P_a^E = E S_a^tip (world).
fn mass_and_force_rows(
    dag: &mut Dag,
    state: &SectionState,
    beyond: Option<&Composite>,
    above: &[(usize, Motion, Motion)],
    up: &Motion,
    sums: &ShapeSums,
    rows: &mut Rows,
) -> Vec<Force> {
    let name = &state.frame.name;
    let coordinates = &state.frame.coordinates;
    let count = coordinates.len();
    let zero_force = dag.zero_force();
    let ShapeSums { moved, weights, shape_totals, shape_mass, shape_coriolis } = sums;
    let projected_beyond: Vec<Force> = (0..count)
        .map(|a| match beyond {
            Some(e) => dag.inertia_times(&e.inertia, &state.tip.columns[a]),
            None => zero_force,
        })
        .collect();
    let mut totals = Vec::new();
    for a in 0..count {
        let i = coordinates[a];
        // F_a, the momentum a unit rate of coordinate a gives everything it moves: the
        // slices' part from the shape variables' sums, and the subtree beyond the tip.
        let mut total = projected_beyond[a];
        for (m, shape_total) in shape_totals.iter().enumerate() {
            let part = dag.scale_force(shape_total, weights[a][m]);
            total = dag.add_force(&total, &part);
        }
        let total = dag.pin_force(total, &format!("{name}_subspace{a}_projected_inertia"));
        totals.push(total);
        for &(j, s_j, _) in above {
            let entry = dag.force_dot_motion(&total, &s_j);
            rows.mass_matrix[i][j] = entry;
            rows.mass_matrix[j][i] = entry;
        }
        for b in 0..=a {
            let mut terms = vec![dag.force_dot_motion(&projected_beyond[a], &state.tip.columns[b])];
            for m in 0..moved.len() {
                for n in 0..moved.len() {
                    terms.push(dag.mul(vec![weights[a][m], weights[b][n], shape_mass[m][n]]));
                }
            }
            let entry = dag.add(terms);
            rows.mass_matrix[i][coordinates[b]] = entry;
            rows.mass_matrix[coordinates[b]][i] = entry;
        }

        // C qd: the slices' Newton-Euler forces and the subtree beyond. G: since a spatial
        // inertia is symmetric, sum_k S_a^k . I_k up (+ beyond) = F_a . up, the momentum
        // column M already has, against gravity's upward acceleration.
        let mut coriolis_terms = Vec::new();
        if let Some(e) = beyond {
            coriolis_terms.push(dag.force_dot_motion(&e.force, &state.tip.columns[a]));
        }
        for m in 0..moved.len() {
            coriolis_terms.push(dag.mul2(weights[a][m], shape_coriolis[m]));
        }
        rows.coriolis[i] = dag.add(coriolis_terms);
        let weight = dag.force_dot_motion(&total, up);
        rows.gravity[i] = dag.add2(weight, state.elastic[a].force);
    }

    totals
}

/// Christoffel C. Per coordinate b: column forces I_k Sdot_b^k + B_k S_b^k (and beyond),
/// their sum R_b, and Q_b = sum B_k' S_b^k (+ beyond); the entries against the coordinates
/// above read them with `totals` (each coordinate's F_a), those within the section the
/// column forces slice by slice.
fn christoffel_rows(
    dag: &mut Dag,
    state: &SectionState,
    beyond: Option<&Composite>,
    above: &[(usize, Motion, Motion)],
    totals: &[Force],
    rows: &mut Rows,
) {
    let name = &state.frame.name;
    let coordinates = &state.frame.coordinates;
    let count = coordinates.len();
    let zero_force = dag.zero_force();
    let mut column_forces: Vec<Vec<Force>> = Vec::new();
    let mut column_beyond: Vec<Force> = Vec::new();
    for b in 0..count {
        let i = coordinates[b];
        let mut per_slice = Vec::new();
        let mut r_sum = zero_force;
        let mut q_sum = zero_force;
        for slice in &state.slices {
            let (b_s, bt_s) = b_times(dag, &slice.body.rate, &slice.body.momentum, &slice.columns[b]);
            let inertial = dag.inertia_times(&slice.body.inertia, &slice.column_rates[b]);
            let column = dag.add_force(&inertial, &b_s);
            r_sum = dag.add_force(&r_sum, &column);
            q_sum = dag.add_force(&q_sum, &bt_s);
            per_slice.push(column);
        }
        let beyond_column = match beyond {
            Some(e) => {
                let (b_s, bt_s) = b_times(dag, &e.rate, &e.momentum, &state.tip.columns[b]);
                let inertial = dag.inertia_times(&e.inertia, &state.tip.column_rates[b]);
                let column = dag.add_force(&inertial, &b_s);
                r_sum = dag.add_force(&r_sum, &column);
                q_sum = dag.add_force(&q_sum, &bt_s);
                column
            }
            None => zero_force,
        };
        column_forces.push(per_slice);
        column_beyond.push(beyond_column);
        if !above.is_empty() {
            let r_sum = dag.pin_force(r_sum, &format!("{name}_subspace{b}_coriolis_column"));
            let q_sum = dag.pin_force(q_sum, &format!("{name}_subspace{b}_coriolis_row"));
            for &(j, s_j, sd_j) in above {
                let from_rate = dag.force_dot_motion(&totals[b], &sd_j);
                let from_b = dag.force_dot_motion(&q_sum, &s_j);
                rows.coriolis_matrix[i][j] = dag.add2(from_rate, from_b);
                rows.coriolis_matrix[j][i] = dag.force_dot_motion(&r_sum, &s_j);
            }
        }
    }
    for a in 0..count {
        for b in 0..count {
            let mut terms = vec![dag.force_dot_motion(&column_beyond[b], &state.tip.columns[a])];
            for (k, slice) in state.slices.iter().enumerate() {
                terms.push(dag.force_dot_motion(&column_forces[b][k], &slice.columns[a]));
            }
            rows.coriolis_matrix[coordinates[a]][coordinates[b]] = dag.add(terms);
        }
    }
}
