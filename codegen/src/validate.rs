//! Spec validation: from parsed TOML to a `Robot`, with every error naming the file, line,
//! column and field, and what was expected. Never panics on user input.

use crate::expr::{self, Expr, Number};
use crate::model::{
    Body, ContactPoint, Coordinate, CoordinateKind, Elasticity, EnvironmentDefaults, GaitDefaults, Hull, Inertia,
    Joint, MuscleBank, Parameter, ParameterRule, Robot, Rule, SectionKind, SkinPlacement, SoftSection, TerrainDefault,
    Thruster, Valve, ValveGaitDefaults, Viscosity, Water,
};
use crate::repeat;
use crate::spec::{self, Anisotropy, BaseKind, JointKind, Plane, Spec, Value};
use softgen_runtime::physical_inertia;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// Where a soft section sits.
struct SoftContext {
    normal: Option<[f64; 3]>,
    parent: Option<usize>,
}

/// One problem in a spec file.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
        } else {
            write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.column, self.field, self.message)
        }
    }
}

/// All problems found in one spec.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

/// Names a spec may not use for parameters: coordinates and built-ins.
const RESERVED: &[&str] = &["pi", "gravity", "t"];

/// Rust's keywords (strict, reserved and 2024-edition ones): a parameter becomes a struct
/// field and a spec's file stem a module, so neither may be one.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "static", "struct", "super", "trait", "true", "try", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield",
];

/// Most contact points a robot may have: each adds code to every contact kernel (about 280
/// lines per skin point), so that thousands of them would make codegen and the generated
/// crate's build run out of memory and time.
pub const MAX_CONTACT_POINTS: i64 = 1000;
/// Most bodies a robot may have (the scaling fixtures go to 60 links).
pub const MAX_BODIES: usize = 200;
/// Largest spec file read, in bytes.
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// Module names a spec's file stem may not take: the generated crate's own root file.
const RESERVED_MODULES: &[&str] = &["lib", "main"];

/// How a module in this workspace's generated/ is regenerated; out-of-tree modules name their
/// own command (`softgen-codegen --out DIR SPEC`).
pub const IN_TREE_COMMAND: &str = "cargo run -p softgen-codegen";

/// Parses and validates a spec. `path` is used in messages and in the generated header;
/// the robot's name is the file stem.
pub fn load(path: &str, source: &str) -> Result<Robot, SpecErrors> {
    let mut v = Validator {
        path: path.to_string(),
        source: source.to_string(),
        errors: Vec::new(),
        rules: Vec::new(),
        labels: Labels::default(),
    };
    if source.len() > MAX_SPEC_BYTES {
        v.error(0..0, "", format!("the spec is {} bytes, more than the limit of {MAX_SPEC_BYTES}", source.len()));
        return Err(SpecErrors(v.errors));
    }
    // Through serde_path_to_error, so that a wrong-typed or missing value names its field
    // (`bodies[1].origin`), not only its line.
    let spec: Spec = match serde_path_to_error::deserialize(toml::Deserializer::new(source)) {
        Ok(s) => s,
        Err(e) => {
            let field = field_path(e.path());
            let e = e.into_inner();
            let span = e.span().unwrap_or(0..0);
            let message = e.message().trim().to_string();
            v.error(span, &field, message);
            return Err(SpecErrors(v.errors));
        }
    };
    // Repeated entries become entries written out, each labelled for errors.
    let mut repeat_errors = Vec::new();
    let (bodies, body_labels) = repeat::expand(&spec.bodies, "bodies", MAX_BODIES, &mut repeat_errors);
    let (contact_points, contact_labels) =
        repeat::expand(&spec.contact_points, "contact_points", MAX_CONTACT_POINTS as usize, &mut repeat_errors);
    let (actuators, actuator_labels) = repeat::expand(&spec.actuators, "actuators", MAX_BODIES, &mut repeat_errors);
    for e in repeat_errors {
        v.error(e.span, &e.field, e.message);
    }
    if !v.errors.is_empty() {
        return Err(SpecErrors(v.errors));
    }
    v.labels = Labels { bodies: body_labels, contact_points: contact_labels, actuators: actuator_labels };
    let spec = Spec { bodies, contact_points, actuators, ..spec };
    let robot = v.robot(&spec);
    if v.errors.is_empty() {
        robot.ok_or_else(|| SpecErrors(vec![]))
    } else {
        Err(SpecErrors(v.errors))
    }
}

struct Validator {
    path: String,
    source: String,
    errors: Vec<SpecError>,
    rules: Vec<ParameterRule>,
    labels: Labels,
}

/// How errors name each entry of the expanded lists: `bodies[3]`, or `bodies[1] (k = 7)` for
/// one of a repeated entry's copies.
#[derive(Default)]
struct Labels {
    bodies: Vec<String>,
    contact_points: Vec<String>,
    actuators: Vec<String>,
}

impl Labels {
    fn of(list: &[String], name: &str, i: usize) -> String {
        list.get(i).cloned().unwrap_or_else(|| format!("{name}[{i}]"))
    }
    fn body(&self, i: usize) -> String {
        Labels::of(&self.bodies, "bodies", i)
    }
    fn contact_points(&self, i: usize) -> String {
        Labels::of(&self.contact_points, "contact_points", i)
    }
    fn actuator(&self, i: usize) -> String {
        Labels::of(&self.actuators, "actuators", i)
    }
}

/// A serde path as the spec's fields are written (`bodies[1].origin`), without the private
/// keys through which toml carries spans.
fn field_path(path: &serde_path_to_error::Path) -> String {
    let mut field = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => field.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } | serde_path_to_error::Segment::Enum { variant: key } => {
                if key.starts_with("$__") {
                    continue;
                }
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    field
}

fn stem(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file.strip_suffix(".toml").unwrap_or(file).to_string()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Validator {
    /// Records a rule on values that may depend on parameters, for the generated
    /// `Params::check` (values without parameters cannot change and are left out; a rule
    /// already recorded for the same values keeps the first field that stated it).
    fn rule(&mut self, field: &str, rule: Rule, values: Vec<Expr>) {
        let repeated = self.rules.iter().any(|r| r.rule == rule && r.values == values);
        if !repeated && values.iter().any(|v| v.symbols().iter().any(|s| s != "pi")) {
            self.rules.push(ParameterRule { field: field.to_string(), rule, values });
        }
    }

    fn error(&mut self, span: Range<usize>, field: &str, message: impl Into<String>) {
        let start = span.start.min(self.source.len());
        let before = &self.source[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        self.errors.push(SpecError {
            file: self.path.clone(),
            line,
            column,
            field: field.to_string(),
            message: message.into(),
        });
    }

    /// Parses a value into an exact expression over known parameters.
    fn value(&mut self, value: &Spanned<Value>, field: &str, parameters: &BTreeMap<String, f64>) -> Option<Expr> {
        match value.get_ref() {
            Value::Number(n) => {
                if !n.is_finite() {
                    self.error(value.span(), field, format!("expected a finite number, got {n}"));
                    return None;
                }
                Some(Expr::Num(expr::float_to_rational(*n)))
            }
            Value::Expression(text) => {
                let parsed = match expr::parse(text) {
                    Ok(e) => e,
                    Err(e) => {
                        self.error(value.span(), field, format!("invalid expression \"{text}\": {e}"));
                        return None;
                    }
                };
                for s in parsed.symbols() {
                    if s != "pi" && !parameters.contains_key(&s) {
                        let known: Vec<&str> = parameters.keys().map(String::as_str).collect();
                        self.error(
                            value.span(),
                            field,
                            format!(
                                "expression \"{text}\" uses `{s}`, which is not a declared parameter (declared: {})",
                                if known.is_empty() { "none".to_string() } else { known.join(", ") }
                            ),
                        );
                        return None;
                    }
                }
                for f in parsed.functions() {
                    if !expr::FUNCTIONS.contains(&f.as_str()) {
                        self.error(
                            value.span(),
                            field,
                            format!("unknown function `{f}` in \"{text}\"; known: {}", expr::FUNCTIONS.join(", ")),
                        );
                        return None;
                    }
                }
                match parsed.evaluate(parameters) {
                    Ok(v) if v.is_finite() => {}
                    Ok(v) => {
                        self.error(value.span(), field, format!("\"{text}\" evaluates to {v} with the defaults"));
                        return None;
                    }
                    Err(e) => {
                        self.error(value.span(), field, e);
                        return None;
                    }
                }
                Some(parsed.exact())
            }
        }
    }

    /// Evaluates a value to a number at the parameter defaults.
    fn number(&mut self, value: &Spanned<Value>, field: &str, parameters: &BTreeMap<String, f64>) -> Option<f64> {
        let e = self.value(value, field, parameters)?;
        e.evaluate(parameters).ok()
    }

    fn non_negative(
        &mut self,
        value: Option<&Spanned<Value>>,
        default: f64,
        field: &str,
        parameters: &BTreeMap<String, f64>,
    ) -> f64 {
        let Some(value) = value else { return default };
        match self.number(value, field, parameters) {
            Some(v) if v >= 0.0 => v,
            Some(v) => {
                self.error(value.span(), field, format!("must be >= 0, got {v}"));
                default
            }
            None => default,
        }
    }

    fn vector(&mut self, value: Option<&spec::Vector>, field: &str, parameters: &BTreeMap<String, f64>) -> [Expr; 3] {
        let zero = || Expr::Num(Number::Rational(0, 1));
        let Some(v) = value else { return [zero(), zero(), zero()] };
        let names = ["x", "y", "z"];
        let mut out = [zero(), zero(), zero()];
        for i in 0..3 {
            if let Some(e) = self.value(&v[i], &format!("{field}[{}] ({})", i, names[i]), parameters) {
                out[i] = e;
            }
        }
        out
    }

    /// An automatic parameter for a literal number, or the expression as written.
    fn parameterised(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        auto_name: String,
        doc: String,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        match value.get_ref() {
            Value::Number(n) if n.is_finite() => {
                if parameters.contains_key(&auto_name) {
                    self.error(
                        value.span(),
                        field,
                        format!("the literal would become parameter `{auto_name}`, which is already declared; write \"{auto_name}\" instead"),
                    );
                    return None;
                }
                parameters.insert(auto_name.clone(), *n);
                auto.push(Parameter { name: auto_name.clone(), default: *n, doc });
                Some(Expr::Sym(auto_name))
            }
            _ => self.value(value, field, parameters),
        }
    }

    /// A soft section's number (or expression) `key`, a parameter when it is a literal, at
    /// least zero (strictly above, `strictly`).
    #[allow(clippy::too_many_arguments)]
    fn section_value(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        body: &str,
        key: &str,
        doc: &str,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        self.signed_parameter(
            value,
            &format!("{field}.section.{key}"),
            format!("{body}_{key}"),
            format!("{doc} of `{body}`."),
            strictly,
            parameters,
            auto,
        )
    }

    /// A value at `field` that must be > 0 (>= 0 unless `strictly`), a parameter `auto_name`
    /// when it is a literal; its rule is kept for run-time changes.
    #[allow(clippy::too_many_arguments)]
    fn signed_parameter(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        auto_name: String,
        doc: String,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        let e = self.parameterised(value, field, auto_name, doc, parameters, auto)?;
        self.rule(field, if strictly { Rule::Positive } else { Rule::NonNegative }, vec![e.clone()]);
        match e.evaluate(parameters) {
            Ok(v) if v > 0.0 || (!strictly && v == 0.0) => Some(e),
            Ok(v) => {
                self.error(value.span(), field, format!("must be {} 0, got {v}", if strictly { ">" } else { ">=" }));
                None
            }
            Err(m) => {
                self.error(value.span(), field, m);
                None
            }
        }
    }

    /// A body's hull in water (`hydrodynamics`): its radius and, on rigid bodies, the
    /// cylinder's length, start and centre of buoyancy; a soft section's hull runs along its
    /// centre line at rest length (`section_length`). Literals become parameters
    /// `<body>_hull_<key>`.
    #[allow(clippy::too_many_arguments)]
    fn hull(
        &mut self,
        spec: &Spanned<spec::HydrodynamicsSpec>,
        field: &str,
        body: &str,
        section_length: Option<&Expr>,
        normal: Option<[f64; 3]>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Hull> {
        let h = spec.get_ref();
        let field = format!("{field}.hydrodynamics");
        let zero = || Expr::Num(Number::Rational(0, 1));
        if normal.is_some() {
            self.error(spec.span(), &field, "water acts in 3D (buoyancy up, drag across the hull): a swimming robot needs a spatial or fixed 3D base, not a planar one");
            return None;
        }
        let radius = self.signed_parameter(
            &h.radius,
            &format!("{field}.radius"),
            format!("{body}_hull_radius"),
            format!("Hull radius of `{body}` (m)."),
            true,
            parameters,
            auto,
        );
        if let Some(rest) = section_length {
            let extra = [
                (h.length.as_ref().map(|v| v.span()), "length"),
                (h.start.as_ref().map(|v| v.span()), "start"),
                (h.center_of_buoyancy.as_ref().map(|v| v[0].span()), "center_of_buoyancy"),
            ];
            for (span, key) in extra {
                if let Some(span) = span {
                    self.error(span, &format!("{field}.{key}"), "a soft section's hull runs along its centre line at rest length and is buoyant at each slice's centre; remove it");
                }
            }
            return Some(Hull {
                radius: radius?,
                length: rest.clone(),
                start: zero(),
                center_of_buoyancy: [zero(), zero(), zero()],
            });
        }
        let Some(length) = &h.length else {
            self.error(
                spec.span(),
                &format!("{field}.length"),
                "missing: a rigid body's hull needs the cylinder's length along its x axis (m)",
            );
            return None;
        };
        let length = self.signed_parameter(
            length,
            &format!("{field}.length"),
            format!("{body}_hull_length"),
            format!("Hull length of `{body}` along its x axis (m)."),
            true,
            parameters,
            auto,
        );
        let start = match &h.start {
            Some(v) => self.parameterised(
                v,
                &format!("{field}.start"),
                format!("{body}_hull_start"),
                format!("Where the hull of `{body}` starts along its x axis (m)."),
                parameters,
                auto,
            ),
            None => Some(zero()),
        };
        let (length, start) = (length?, start?);
        let center_of_buoyancy = match &h.center_of_buoyancy {
            Some(v) => self.vector(Some(v), &format!("{field}.center_of_buoyancy"), parameters),
            None => [
                Expr::Add(vec![start.clone(), Expr::Mul(vec![length.clone(), Expr::Num(Number::Rational(1, 2))])]),
                zero(),
                zero(),
            ],
        };
        Some(Hull { radius: radius?, length, start, center_of_buoyancy })
    }

    /// A thruster on a rigid body: its point of attack and unit direction in the body frame.
    #[allow(clippy::too_many_arguments)]
    fn thruster(
        &mut self,
        a: &spec::Actuator,
        field: &str,
        body: &Body,
        body_index: usize,
        default_name: String,
        normal: Option<[f64; 3]>,
        parameters: &BTreeMap<String, f64>,
    ) -> Option<Thruster> {
        if body.section.is_some() {
            self.error(
                a.joint.span(),
                &format!("{field}.joint"),
                format!("a thruster sits on a rigid body; `{}` is a soft section", body.name),
            );
            return None;
        }
        for (given, key) in [
            (a.torque_limit.as_ref().map(|v| v.span()), "torque_limit"),
            (a.response.as_ref().map(|v| v.span()), "response"),
        ] {
            if let Some(span) = given {
                self.error(
                    span,
                    &format!("{field}.{key}"),
                    "a thruster has no such field (its limit is the run configuration's `max_thrust`)",
                );
            }
        }
        let name = match &a.name {
            Some(n) if is_identifier(n.get_ref()) => n.get_ref().clone(),
            Some(n) => {
                self.error(
                    n.span(),
                    &format!("{field}.name"),
                    format!("`{}` must be an identifier (letters, digits, _)", n.get_ref()),
                );
                return None;
            }
            None => default_name,
        };
        let Some(position) = &a.position else {
            self.error(
                a.kind.span(),
                &format!("{field}.position"),
                "missing: a thruster needs its point of attack in the body frame (m)",
            );
            return None;
        };
        let position = self.vector(Some(position), &format!("{field}.position"), parameters);
        let Some(direction) = &a.direction else {
            self.error(
                a.kind.span(),
                &format!("{field}.direction"),
                "missing: a thruster needs the direction of its thrust in the body frame",
            );
            return None;
        };
        let d = *direction.get_ref();
        let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if !(length > 1e-9 && length.is_finite()) {
            self.error(direction.span(), &format!("{field}.direction"), "must be a non-zero finite vector");
            return None;
        }
        if let Some(n) = normal {
            if (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]).abs() > 1e-9 * length {
                self.error(
                    direction.span(),
                    &format!("{field}.direction"),
                    "in a planar robot a thruster must push in the plane",
                );
            }
            if planar_violation(&position, Some(n)) {
                self.error(
                    a.position.as_ref().map_or(a.kind.span(), |p| p[0].span()),
                    &format!("{field}.position"),
                    "in a planar robot the point of attack must lie in the plane",
                );
            }
        }
        Some(Thruster { name, body: body_index, position, direction: d.map(|x| x / length) })
    }

    /// An extensible section's visco-hyperelastic material: the Yeoh coefficients and the
    /// silicone area (literals become parameters `<body>_yeoh_c10` .. and
    /// `<body>_material_<key>`), and the power-law viscosity when `consistency` is given.
    fn material(
        &mut self,
        m: &Spanned<spec::MaterialSpec>,
        field: &str,
        body: &str,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> (Option<Elasticity>, Option<Viscosity>) {
        let material = m.get_ref();
        let field = format!("{field}.section.material");
        let values = material.yeoh.get_ref();
        if values.len() != 3 {
            self.error(
                material.yeoh.span(),
                &format!("{field}.yeoh"),
                format!("expected the three Yeoh coefficients [C10, C20, C30] (J/m^3), got {}", values.len()),
            );
            return (None, None);
        }
        let mut coefficients = Vec::new();
        for (k, v) in values.iter().enumerate() {
            let name = format!("c{}0", k + 1);
            let e = self.parameterised(
                v,
                &format!("{field}.yeoh[{k}]"),
                format!("{body}_yeoh_{name}"),
                format!("Yeoh coefficient C{}0 of the actuators of `{body}` (J/m^3).", k + 1),
                parameters,
                auto,
            );
            coefficients.push(e);
        }
        if let Some(Ok(c10)) = coefficients[0].as_ref().map(|e| e.evaluate(parameters)) {
            if !(c10 > 0.0) {
                self.error(
                    values[0].span(),
                    &format!("{field}.yeoh[0]"),
                    format!("C10 is half the small-strain shear modulus: must be > 0, got {c10}"),
                );
            }
        }
        if let Some(c10) = &coefficients[0] {
            self.rule(&format!("{field}.yeoh[0]"), Rule::Positive, vec![c10.clone()]);
        }
        let area = self.signed_parameter(
            &material.area,
            &format!("{field}.area"),
            format!("{body}_material_area"),
            format!("Silicone cross-section per actuator of `{body}` (m^2)."),
            true,
            parameters,
            auto,
        );
        let viscosity = match (&material.consistency, &material.power_index, &material.rate_scale) {
            (None, None, None) => None,
            (Some(consistency), Some(index), Some(scale)) => {
                let consistency = self.signed_parameter(
                    consistency,
                    &format!("{field}.consistency"),
                    format!("{body}_material_consistency"),
                    format!("Viscous consistency eta_0 of the actuators of `{body}` (Pa s^k)."),
                    false,
                    parameters,
                    auto,
                );
                let index = self.signed_parameter(
                    index,
                    &format!("{field}.power_index"),
                    format!("{body}_material_power_index"),
                    format!("Power-law index k of the actuators of `{body}`."),
                    true,
                    parameters,
                    auto,
                );
                let scale = self.signed_parameter(
                    scale,
                    &format!("{field}.rate_scale"),
                    format!("{body}_material_rate_scale"),
                    format!("Strain rate below which the viscosity of `{body}` stops growing (1/s)."),
                    true,
                    parameters,
                    auto,
                );
                match (consistency, index, scale, &area) {
                    (Some(consistency), Some(power_index), Some(rate_scale), Some(area)) => {
                        Some(Viscosity { area: area.clone(), consistency, power_index, rate_scale })
                    }
                    _ => None,
                }
            }
            _ => {
                self.error(m.span(), &field, "a viscous material needs `consistency` (eta_0, Pa s^k), `power_index` (k) and `rate_scale` (1/s, where the power law is regularised) together");
                None
            }
        };
        let coefficients: Option<Vec<Expr>> = coefficients.into_iter().collect();
        let elasticity = match (coefficients, area) {
            (Some(c), Some(area)) => c.try_into().ok().map(|coefficients| Elasticity::Yeoh { coefficients, area }),
            _ => None,
        };
        (elasticity, viscosity)
    }

    /// One property of the water (`environment.water.<key>`), the parameter `name`: as
    /// written, or `name` itself when the spec declares it, or `name` with its default.
    #[allow(clippy::too_many_arguments)]
    fn water_value(
        &mut self,
        value: Option<&Spanned<Value>>,
        key: &str,
        name: &str,
        default: f64,
        doc: &str,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        let field = format!("environment.water.{key}");
        match value {
            Some(v) => self.signed_parameter(v, &field, name.to_string(), doc.to_string(), strictly, parameters, auto),
            None => {
                if !parameters.contains_key(name) {
                    parameters.insert(name.to_string(), default);
                    auto.push(Parameter { name: name.to_string(), default, doc: doc.to_string() });
                }
                let e = Expr::Sym(name.to_string());
                self.rule(&field, if strictly { Rule::Positive } else { Rule::NonNegative }, vec![e.clone()]);
                Some(e)
            }
        }
    }

    /// A positive (or, `strictly` false, non-negative) value of a muscle bank, a parameter
    /// `<body>_<key>` when it is a literal.
    #[allow(clippy::too_many_arguments)]
    fn muscle_value(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        body: &str,
        key: &str,
        doc: &str,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        self.signed_parameter(
            value,
            &format!("{field}.{key}"),
            format!("{body}_muscle_{key}"),
            format!("{doc} of the muscles of `{body}`."),
            strictly,
            parameters,
            auto,
        )
    }

    /// Three pneumatic muscles along a soft section: an extensible section's own actuators,
    /// or muscles placed on an inextensible one by `radius` and `angles`.
    fn muscle_bank(
        &mut self,
        a: &spec::Actuator,
        field: &str,
        body: &Body,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<MuscleBank> {
        let bname = body.name.clone();
        let Some(section) = &body.section else {
            self.error(
                a.joint.span(),
                &format!("{field}.joint"),
                format!("pneumatic muscles drive a soft section, and `{bname}` is rigid"),
            );
            return None;
        };
        if let Some(l) = &a.torque_limit {
            self.error(
                l.span(),
                &format!("{field}.torque_limit"),
                "pneumatic muscles are limited by `rated_pressure`; they have no torque limit",
            );
        }
        if let Some(r) = &a.response {
            self.error(
                r.span(),
                &format!("{field}.response"),
                "pneumatic muscles follow their pressure through `pressure_lag`; `response` is for solenoid valves",
            );
        }
        let placement = match &section.kind {
            SectionKind::Extensible { .. } => {
                for (given, key) in
                    [(a.radius.as_ref().map(|v| v.span()), "radius"), (a.angles.as_ref().map(|v| v.span()), "angles")]
                {
                    if let Some(span) = given {
                        self.error(span, &format!("{field}.{key}"), format!("the muscles of extensible section `{bname}` are its actuators: its `section` places them"));
                    }
                }
                None
            }
            SectionKind::Inextensible => {
                let radius = match &a.radius {
                    Some(r) => self.muscle_value(
                        r,
                        field,
                        &bname,
                        "radius",
                        "Distance from the neutral axis (m)",
                        true,
                        parameters,
                        auto,
                    ),
                    None => {
                        self.error(a.kind.span(), &format!("{field}.radius"), format!("missing: muscles on inextensible section `{bname}` need their distance from the neutral axis (m)"));
                        None
                    }
                };
                let angles: Option<[Expr; 3]> = match &a.angles {
                    None => {
                        let third =
                            |k: i128| Expr::Mul(vec![Expr::Num(Number::Rational(2 * k, 3)), Expr::Sym("pi".into())]);
                        Some([Expr::Num(Number::Rational(0, 1)), third(1), third(2)])
                    }
                    Some(angles) if angles.get_ref().len() == 3 => {
                        let parsed: Vec<Option<Expr>> = angles
                            .get_ref()
                            .iter()
                            .enumerate()
                            .map(|(j, v)| self.value(v, &format!("{field}.angles[{j}]"), parameters))
                            .collect();
                        parsed.into_iter().collect::<Option<Vec<Expr>>>().and_then(|v| v.try_into().ok())
                    }
                    Some(angles) => {
                        self.error(
                            angles.span(),
                            &format!("{field}.angles"),
                            format!("expected 3 angles, got {}", angles.get_ref().len()),
                        );
                        None
                    }
                };
                Some((radius?, angles?))
            }
            SectionKind::Planar { .. } => {
                self.error(a.joint.span(), &format!("{field}.joint"), format!("pneumatic muscles drive extensible or inextensible sections; `{bname}` is planar (drive it with a valve pair)"));
                return None;
            }
        };
        let required = |v: &Option<Spanned<Value>>| v.clone();
        let (Some(area), Some(rated)) = (required(&a.area), required(&a.rated_pressure)) else {
            self.error(
                a.kind.span(),
                field,
                "pneumatic muscles need `area` (m^2, force per pressure) and `rated_pressure` (bar)",
            );
            return None;
        };
        let area = self.muscle_value(
            &area,
            field,
            &bname,
            "area",
            "Effective area, force per pressure (m^2)",
            true,
            parameters,
            auto,
        );
        let rated_pressure = self.muscle_value(
            &rated,
            field,
            &bname,
            "rated_pressure",
            "Highest rated pressure (bar)",
            true,
            parameters,
            auto,
        );
        let pressure_lag = match &a.pressure_lag {
            Some(v) => self.muscle_value(
                v,
                field,
                &bname,
                "pressure_lag",
                "Time constant of the pressure lag (s)",
                false,
                parameters,
                auto,
            ),
            None => Some(Expr::Num(Number::Rational(0, 1))),
        };
        Some(MuscleBank {
            body: bname,
            first_coordinate: section.first_coordinate,
            coordinates: section.coordinates,
            placement,
            rest_length: section.rest_length.clone(),
            area: area?,
            rated_pressure: rated_pressure?,
            pressure_lag: pressure_lag?,
        })
    }

    /// A constant-curvature section: its coordinates (three actuator lengths, or two or one
    /// curvatures), geometry, slices and mount.
    fn soft_body(
        &mut self,
        sb: &Spanned<spec::Body>,
        field: &str,
        context: &SoftContext,
        coordinates: &mut Vec<Coordinate>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Body> {
        let b = sb.get_ref();
        let bname = b.name.get_ref().clone();
        if let Some(j) = &b.joint {
            self.error(
                j.span(),
                &format!("{field}.joint"),
                "a soft section's coordinates are its own (actuator lengths or curvatures); remove `joint`",
            );
        }
        if b.axis.is_some() {
            self.error(sb.span(), &format!("{field}.axis"), "a soft section has no joint axis; remove `axis`");
        }
        if b.center_of_mass.is_some() {
            self.error(
                sb.span(),
                &format!("{field}.center_of_mass"),
                "a soft section's mass is spread along it; remove `center_of_mass`",
            );
        }
        if let Some(i) = &b.initial {
            self.error(
                i.span(),
                &format!("{field}.initial"),
                "give a soft section's initial coordinates as section.initial",
            );
        }
        let Some(section) = &b.section else {
            self.error(
                sb.span(),
                &format!("{field}.section"),
                "missing: soft sections need section = { model, rest_length, stiffness, damping, and disc_radius or the body's inertia }",
            );
            return None;
        };
        let s = section.get_ref();
        let model = *s.model.get_ref();
        if model != spec::SectionModel::Planar && context.normal.is_some() {
            self.error(
                s.model.span(),
                &format!("{field}.section.model"),
                "extensible and inextensible sections bend out of any plane: use model = \"planar\" in a planar robot, or give the robot a spatial or fixed base",
            );
        }
        let rest_length = self.section_value(
            &s.rest_length,
            field,
            &bname,
            "rest_length",
            "Unactuated length (m)",
            true,
            parameters,
            auto,
        );
        let (length_unit, stiffness_unit, damping_unit) = match model {
            spec::SectionModel::Extensible => ("m", "N/m", "N s/m"),
            _ => ("1/m", "N m^3", "N m^3 s"),
        };
        let (elasticity, viscosity) = match (&s.material, &s.stiffness) {
            (Some(m), given) => {
                if let Some(k) = given {
                    self.error(
                        k.span(),
                        &format!("{field}.section.stiffness"),
                        "the section's `material` gives its elasticity; remove `stiffness`",
                    );
                }
                if model != spec::SectionModel::Extensible {
                    self.error(
                        m.span(),
                        &format!("{field}.section.material"),
                        "a material stretches actuators: only extensible sections take one (use `stiffness`)",
                    );
                    (None, None)
                } else {
                    self.material(m, field, &bname, parameters, auto)
                }
            }
            (None, Some(k)) => (
                self.section_value(
                    k,
                    field,
                    &bname,
                    "stiffness",
                    &format!("Elastic stiffness K of each coordinate ({stiffness_unit})"),
                    false,
                    parameters,
                    auto,
                )
                .map(Elasticity::Linear),
                None,
            ),
            (None, None) => {
                self.error(section.span(), &format!("{field}.section.stiffness"), format!("missing: the elastic stiffness K of each coordinate ({stiffness_unit}), or an extensible section's `material`"));
                (None, None)
            }
        };
        let damping = self.section_value(
            &s.damping,
            field,
            &bname,
            "damping",
            &format!("Damping D of each coordinate ({damping_unit})"),
            false,
            parameters,
            auto,
        );
        let kind = match model {
            spec::SectionModel::Extensible => {
                let actuator_radius = match &s.actuator_radius {
                    Some(r) => self.section_value(
                        r,
                        field,
                        &bname,
                        "actuator_radius",
                        "Actuator distance from the neutral axis (m)",
                        true,
                        parameters,
                        auto,
                    ),
                    None => {
                        self.error(
                            section.span(),
                            &format!("{field}.section.actuator_radius"),
                            "missing: extensible sections need the actuators' distance from the neutral axis (m)",
                        );
                        None
                    }
                };
                let actuator_angles: Option<[Expr; 3]> = match &s.actuator_angles {
                    None => {
                        let third =
                            |k: i128| Expr::Mul(vec![Expr::Num(Number::Rational(2 * k, 3)), Expr::Sym("pi".into())]);
                        Some([Expr::Num(Number::Rational(0, 1)), third(1), third(2)])
                    }
                    Some(angles) if angles.get_ref().len() == 3 => {
                        let parsed: Vec<Option<Expr>> = angles
                            .get_ref()
                            .iter()
                            .enumerate()
                            .map(|(j, a)| self.value(a, &format!("{field}.section.actuator_angles[{j}]"), parameters))
                            .collect();
                        parsed.into_iter().collect::<Option<Vec<Expr>>>().and_then(|v| v.try_into().ok())
                    }
                    Some(angles) => {
                        self.error(
                            angles.span(),
                            &format!("{field}.section.actuator_angles"),
                            format!("expected 3 angles, got {}", angles.get_ref().len()),
                        );
                        None
                    }
                };
                match (actuator_radius, actuator_angles) {
                    (Some(actuator_radius), Some(actuator_angles)) => {
                        Some(SectionKind::Extensible { actuator_radius, actuator_angles })
                    }
                    _ => None,
                }
            }
            other => {
                for (given, key) in [
                    (s.actuator_radius.as_ref().map(|r| r.span()), "actuator_radius"),
                    (s.actuator_angles.as_ref().map(|a| a.span()), "actuator_angles"),
                ] {
                    if let Some(span) = given {
                        self.error(
                            span,
                            &format!("{field}.section.{key}"),
                            "only extensible sections have actuators; their coordinates are curvatures",
                        );
                    }
                }
                Some(match other {
                    spec::SectionModel::Inextensible => SectionKind::Inextensible,
                    _ => SectionKind::Planar { towards_z: context.normal.is_some_and(|n| n[2] == 0.0) },
                })
            }
        };
        let mass = self.parameterised(
            &b.mass,
            &format!("{field}.mass"),
            format!("{bname}_mass"),
            format!("Mass of `{bname}` (kg)."),
            parameters,
            auto,
        );
        if let Some(m) = &mass {
            self.rule(&format!("{field}.mass"), Rule::Positive, vec![m.clone()]);
            match m.evaluate(parameters) {
                Ok(v) if v > 0.0 => {}
                Ok(v) => self.error(b.mass.span(), &format!("{field}.mass"), format!("must be > 0 kg, got {v}")),
                Err(e) => self.error(b.mass.span(), &format!("{field}.mass"), e),
            }
        }
        // The slices' rotational inertia per unit mass: a thin disc, or stated for the whole
        // section.
        let slice_inertia: Option<[Expr; 3]> = match (&s.disc_radius, &b.inertia) {
            (Some(r), None) => self
                .section_value(r, field, &bname, "disc_radius", "Slice disc radius (m)", false, parameters, auto)
                .map(|r| {
                    let squared = |f: i128| {
                        Expr::Mul(vec![
                            Expr::Num(Number::Rational(1, f)),
                            Expr::Pow(Box::new(r.clone()), Box::new(Expr::Num(Number::Rational(2, 1)))),
                        ])
                    };
                    [squared(2), squared(4), squared(4)]
                }),
            (None, Some(i)) => match i.get_ref() {
                spec::Inertia::Vector(values) if values.len() == 3 => {
                    let parsed: Vec<Option<Expr>> = values
                        .iter()
                        .enumerate()
                        .map(|(k, v)| {
                            self.value(&Spanned::new(i.span(), v.clone()), &format!("{field}.inertia[{k}]"), parameters)
                        })
                        .collect();
                    let parsed: Option<Vec<Expr>> = parsed.into_iter().collect();
                    match (parsed, &mass) {
                        (Some(v), Some(m)) => {
                            self.rule(&format!("{field}.inertia"), Rule::PrincipalMoments, v.clone());
                            let numbers: Vec<f64> =
                                v.iter().map(|e| e.evaluate(parameters).unwrap_or(f64::NAN)).collect();
                            if let Err(message) = physical_inertia([numbers[0], numbers[1], numbers[2], 0.0, 0.0, 0.0])
                            {
                                self.error(
                                    i.span(),
                                    &format!("{field}.inertia"),
                                    format!("must be the slices' principal moments summed over the section: {message}"),
                                );
                                None
                            } else {
                                let per_mass = |e: &Expr| {
                                    Expr::Mul(vec![
                                        e.clone(),
                                        Expr::Pow(Box::new(m.clone()), Box::new(Expr::Num(Number::Rational(-1, 1)))),
                                    ])
                                };
                                Some([per_mass(&v[0]), per_mass(&v[1]), per_mass(&v[2])])
                            }
                        }
                        _ => None,
                    }
                }
                _ => {
                    self.error(i.span(), &format!("{field}.inertia"), "a soft section's inertia is its slices' principal moments summed over it: [ixx, iyy, izz] (kg m^2, x along the centre line)");
                    None
                }
            },
            (Some(r), Some(_)) => {
                self.error(
                    r.span(),
                    &format!("{field}.section.disc_radius"),
                    "give either section.disc_radius (thin-disc slices) or the body's inertia, not both",
                );
                None
            }
            (None, None) => {
                self.error(section.span(), &format!("{field}.section.disc_radius"), "missing: give section.disc_radius (thin-disc slices) or the body's inertia = [ixx, iyy, izz] (the slices' moments summed over the section)");
                None
            }
        };
        let quadrature = match &s.quadrature {
            None => 8,
            Some(n) if (1..=32).contains(n.get_ref()) => *n.get_ref() as usize,
            Some(n) => {
                self.error(
                    n.span(),
                    &format!("{field}.section.quadrature"),
                    format!("must be in 1..=32 nodes, got {}", n.get_ref()),
                );
                8
            }
        };
        let count = model.coordinates();
        let mut initial = vec![0.0; count];
        if let Some(i) = &s.initial {
            if i.get_ref().len() != count {
                self.error(
                    i.span(),
                    &format!("{field}.section.initial"),
                    format!("expected {count} values ({length_unit}), got {}", i.get_ref().len()),
                );
            } else if i.get_ref().iter().any(|v| !v.is_finite()) {
                self.error(i.span(), &format!("{field}.section.initial"), "must be finite");
            } else {
                initial = i.get_ref().clone();
            }
        }
        let rotation = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
        if rotation.iter().any(|v| !v.is_finite()) {
            self.error(b.rotation.as_ref().map_or(0..0, |r| r.span()), &format!("{field}.rotation"), "must be finite");
        }
        let zero = || Expr::Num(Number::Rational(0, 1));
        let origin = match (&b.origin, context.parent) {
            (None, _) => Some([zero(), zero(), zero()]),
            (Some(o), None) => {
                self.error(
                    o[0].span(),
                    &format!("{field}.origin"),
                    "the base body's frame is the base; remove `origin`",
                );
                None
            }
            (Some(o), Some(_)) => Some(self.vector(Some(o), &format!("{field}.origin"), parameters)),
        };
        let first_coordinate = coordinates.len();
        for (j, value) in initial.iter().enumerate() {
            let (name, kind, meaning) = match model {
                spec::SectionModel::Extensible => (
                    format!("{bname}_l{}", j + 1),
                    CoordinateKind::ActuatorLength,
                    format!("length change of actuator {} of soft section `{bname}` (m)", j + 1),
                ),
                spec::SectionModel::Inextensible => (
                    format!("{bname}_curvature_{}", ["y", "z"][j]),
                    CoordinateKind::Curvature,
                    format!("curvature of soft section `{bname}` bending towards its +{} axis (1/m)", ["y", "z"][j]),
                ),
                spec::SectionModel::Planar => (
                    format!("{bname}_curvature"),
                    CoordinateKind::Curvature,
                    format!("curvature of soft section `{bname}` in the plane of motion (1/m)"),
                ),
            };
            coordinates.push(Coordinate { name, kind, meaning, actuated: true, initial: *value });
        }
        let hull = match (&b.hydrodynamics, &rest_length) {
            (Some(h), Some(rest)) => self.hull(h, field, &bname, Some(rest), context.normal, parameters, auto),
            _ => None,
        };
        Some(Body {
            hull,
            name: bname,
            parent: context.parent,
            joint: None,
            origin: origin?,
            rotation,
            mass: mass?,
            center_of_mass: [zero(), zero(), zero()],
            inertia: Inertia::Full([zero(), zero(), zero(), zero(), zero(), zero()]),
            section: Some(SoftSection {
                kind: kind?,
                rest_length: rest_length?,
                slice_inertia: slice_inertia?,
                elasticity: elasticity?,
                damping: damping?,
                viscosity,
                quadrature,
                first_coordinate,
                coordinates: count,
            }),
        })
    }

    fn robot(&mut self, spec: &Spec) -> Option<Robot> {
        let name = stem(&self.path);
        if !is_identifier(&name) {
            self.error(0..0, "", format!("the file name `{name}` must be a Rust identifier (letters, digits, _), since it names the generated module"));
        } else if RUST_KEYWORDS.contains(&name.as_str()) || RESERVED_MODULES.contains(&name.as_str()) {
            self.error(0..0, "", format!("the file name `{name}` cannot name the generated module: it is a Rust keyword or the generated crate's own `{name}.rs`; rename the spec"));
        }
        if spec.bodies.len() > MAX_BODIES {
            self.error(0..0, "bodies", format!("{} bodies, more than the limit of {MAX_BODIES}", spec.bodies.len()));
            return None;
        }
        let description = spec.description.get_ref();
        if description.trim().is_empty() {
            self.error(spec.description.span(), "description", "must not be empty");
        } else if description.chars().any(char::is_control) {
            // It is written into the generated file's header comment.
            self.error(
                spec.description.span(),
                "description",
                "must be one line of text, without newlines or other control characters",
            );
        }

        // Parameters.
        let mut parameters: BTreeMap<String, f64> = BTreeMap::new();
        let mut declared = Vec::new();
        for (key, value) in &spec.parameters {
            let field = format!("parameters.{key}");
            if !is_identifier(key)
                || RESERVED.contains(&key.as_str())
                || expr::FUNCTIONS.contains(&key.as_str())
                || RUST_KEYWORDS.contains(&key.as_str())
            {
                self.error(
                    value.span(),
                    &field,
                    format!("`{key}` cannot be a parameter name: use letters, digits and _, starting with a letter, not a Rust keyword, and none of {}", RESERVED.join(", ")),
                );
                continue;
            }
            if key.starts_with('q') && key[1..].chars().all(|c| c.is_ascii_digit() || c == 'd') {
                self.error(value.span(), &field, format!("`{key}` is reserved for generalized coordinates"));
                continue;
            }
            if !value.get_ref().is_finite() {
                self.error(value.span(), &field, format!("expected a finite number, got {}", value.get_ref()));
                continue;
            }
            parameters.insert(key.clone(), *value.get_ref());
            declared.push(Parameter { name: key.clone(), default: *value.get_ref(), doc: String::new() });
        }
        let mut auto: Vec<Parameter> = Vec::new();

        // Environment first: gravity is a parameter of the dynamics.
        let environment = spec.environment.as_ref();
        let gravity = match environment.and_then(|e| e.get_ref().gravity.as_ref()) {
            Some(g) if g.get_ref().is_finite() && *g.get_ref() >= 0.0 => *g.get_ref(),
            Some(g) => {
                self.error(
                    g.span(),
                    "environment.gravity",
                    format!("must be a finite number >= 0 (m/s^2, acting along -z), got {}", g.get_ref()),
                );
                0.0
            }
            None => 9.81,
        };
        self.rule("environment.gravity", Rule::NonNegative, vec![Expr::Sym("gravity".into())]);

        // Base.
        let base = spec.base.get_ref();
        let base_kind = *base.kind.get_ref();
        let plane = base.plane.as_ref().map(|p| *p.get_ref());
        match (base_kind, plane) {
            (BaseKind::Planar, None) => {
                self.error(spec.base.span(), "base.plane", "a planar base needs `plane = \"xz\"` or `plane = \"xy\"`")
            }
            (BaseKind::Spatial, Some(_)) => {
                let p = base.plane.as_ref().map_or(0..0, |p| p.span());
                self.error(p, "base.plane", "a spatial base moves in 3D; remove `plane`")
            }
            _ => {}
        }
        let normal = plane.map(|p| match p {
            Plane::Xz => [0.0, -1.0, 0.0],
            Plane::Xy => [0.0, 0.0, 1.0],
        });

        // Bodies: names, parents, cycles.
        let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
        for (i, b) in spec.bodies.iter().enumerate() {
            let b = b.get_ref();
            let n = b.name.get_ref();
            if !is_identifier(n) {
                self.error(
                    b.name.span(),
                    &format!("{}.name", self.labels.body(i)),
                    format!("`{n}` must be an identifier (letters, digits, _)"),
                );
            }
            if n == "world" {
                self.error(b.name.span(), &format!("{}.name", self.labels.body(i)), "`world` is reserved");
            }
            if index_of.insert(n.clone(), i).is_some() {
                self.error(
                    b.name.span(),
                    &format!("{}.name", self.labels.body(i)),
                    format!("duplicate body name `{n}`"),
                );
            }
        }
        if spec.bodies.is_empty() {
            self.error(0..0, "bodies", "a robot needs at least one body ([[bodies]])");
            return None;
        }
        let root = match index_of.get(base.body.get_ref()) {
            Some(&r) => r,
            None => {
                self.error(base.body.span(), "base.body", format!("no body named `{}`", base.body.get_ref()));
                return None;
            }
        };
        let mut parent_of: Vec<Option<usize>> = vec![None; spec.bodies.len()];
        for (i, b) in spec.bodies.iter().enumerate() {
            let b = b.get_ref();
            let field = format!("{} ({})", self.labels.body(i), b.name.get_ref());
            match (&b.parent, i == root) {
                (Some(p), true) => {
                    self.error(p.span(), &format!("{field}.parent"), "the base body has no parent; remove `parent`")
                }
                (None, false) => self.error(
                    b.name.span(),
                    &format!("{field}.parent"),
                    format!("missing: every body but the base body `{}` needs a parent", base.body.get_ref()),
                ),
                (Some(p), false) => match index_of.get(p.get_ref()) {
                    Some(&pi) if pi == i => {
                        self.error(p.span(), &format!("{field}.parent"), "a body cannot be its own parent")
                    }
                    Some(&pi) => parent_of[i] = Some(pi),
                    None => self.error(
                        p.span(),
                        &format!("{field}.parent"),
                        format!("no body named `{}` (dangling parent)", p.get_ref()),
                    ),
                },
                (None, true) => {}
            }
        }
        // Cycle detection: every body must reach the root.
        for i in 0..spec.bodies.len() {
            let mut seen = BTreeSet::new();
            let mut at = i;
            while let Some(p) = parent_of[at] {
                if !seen.insert(at) {
                    let b = spec.bodies[i].get_ref();
                    self.error(
                        b.parent.as_ref().map_or(0..0, |p| p.span()),
                        &format!("{} ({}).parent", self.labels.body(i), b.name.get_ref()),
                        "the parent chain forms a cycle; bodies must form a tree rooted at the base body",
                    );
                    break;
                }
                at = p;
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        // Parent-first order (breadth-first from the root, children in file order).
        let mut order = vec![root];
        let mut k = 0;
        while k < order.len() {
            let at = order[k];
            for (i, p) in parent_of.iter().enumerate() {
                if *p == Some(at) {
                    order.push(i);
                }
            }
            k += 1;
        }
        let new_index: BTreeMap<usize, usize> = order.iter().enumerate().map(|(n, &o)| (o, n)).collect();

        // Coordinates: base first.
        let mut coordinates = Vec::new();
        let initial = |i: usize| base.initial.get(i).map_or(0.0, |v| *v.get_ref());
        let base_coords: Vec<(&str, CoordinateKind, &str)> = match (base_kind, plane) {
            (BaseKind::Fixed, _) => vec![],
            (BaseKind::Planar, Some(Plane::Xz)) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("z", CoordinateKind::BaseTranslation, "base position along world z (up)"),
                ("pitch", CoordinateKind::BaseRotation, "base angle in the x-z plane, from +x towards +z"),
            ],
            (BaseKind::Planar, _) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("y", CoordinateKind::BaseTranslation, "base position along world y"),
                ("yaw", CoordinateKind::BaseRotation, "base angle in the x-y plane, from +x towards +y"),
            ],
            (BaseKind::Spatial, _) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("y", CoordinateKind::BaseTranslation, "base position along world y"),
                ("z", CoordinateKind::BaseTranslation, "base position along world z (up)"),
                ("yaw", CoordinateKind::BaseRotation, "base yaw alpha about world z (R = Rz Ry Rx)"),
                ("pitch", CoordinateKind::BaseRotation, "base pitch beta about the once-rotated y axis"),
                ("roll", CoordinateKind::BaseRotation, "base roll gamma about the body x axis"),
            ],
        };
        if !base.initial.is_empty() && base.initial.len() != base_coords.len() {
            self.error(
                spec.base.span(),
                "base.initial",
                format!(
                    "expected {} values ({}), got {}",
                    base_coords.len(),
                    base_coords.iter().map(|c| c.0).collect::<Vec<_>>().join(", "),
                    base.initial.len()
                ),
            );
        }
        for v in &base.initial {
            if !v.get_ref().is_finite() {
                self.error(v.span(), "base.initial", "values must be finite");
            }
        }
        let root_name = spec.bodies[root].get_ref().name.get_ref().clone();
        for (i, (n, kind, meaning)) in base_coords.iter().enumerate() {
            coordinates.push(Coordinate {
                name: format!("base_{n}"),
                kind: *kind,
                meaning: format!("{meaning} (body `{root_name}`)"),
                actuated: false,
                initial: initial(i),
            });
        }

        let mut bodies: Vec<Body> = Vec::new();
        for &o in &order {
            let sb = &spec.bodies[o];
            let b = sb.get_ref();
            let bname = b.name.get_ref().clone();
            let field = format!("{} ({bname})", self.labels.body(o));
            if *b.kind.get_ref() == spec::BodyKind::ConstantCurvature {
                let parent = parent_of[o].and_then(|p| new_index.get(&p).copied());
                let context = SoftContext { normal, parent };
                if let Some(body) = self.soft_body(sb, &field, &context, &mut coordinates, &mut parameters, &mut auto) {
                    bodies.push(body);
                }
                continue;
            }
            if let Some(s) = &b.section {
                self.error(
                    s.span(),
                    &format!("{field}.section"),
                    "only kind = \"constant_curvature\" bodies take `section`",
                );
            }
            let Some(b_inertia) = &b.inertia else {
                self.error(sb.span(), &format!("{field}.inertia"), "missing: rigid bodies need an inertia");
                continue;
            };
            let joint = if o == root {
                if let Some(j) = &b.joint {
                    self.error(
                        j.span(),
                        &format!("{field}.joint"),
                        "the base body has no joint; its motion is set by [base]",
                    );
                }
                None
            } else {
                let kind = match &b.joint {
                    Some(j) => *j.get_ref(),
                    None => {
                        self.error(
                            sb.span(),
                            &format!("{field}.joint"),
                            "missing: expected \"revolute\", \"prismatic\" or \"fixed\"",
                        );
                        JointKind::Fixed
                    }
                };
                let axis = match (&b.axis, normal) {
                    (Some(a), _) => {
                        let v = *a.get_ref();
                        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                        if !(len > 1e-9) || !len.is_finite() {
                            self.error(a.span(), &format!("{field}.axis"), "must be a non-zero finite vector");
                            [0.0, 0.0, 1.0]
                        } else {
                            let u = [v[0] / len, v[1] / len, v[2] / len];
                            if let (Some(n), JointKind::Revolute) = (normal, kind) {
                                let dot = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
                                if (dot.abs() - 1.0).abs() > 1e-9 {
                                    self.error(a.span(), &format!("{field}.axis"), format!("in a planar robot revolute axes must be the plane normal {n:?} (or its opposite)"));
                                }
                            }
                            u
                        }
                    }
                    (None, Some(n)) => n,
                    (None, None) => {
                        if kind != JointKind::Fixed {
                            self.error(
                                sb.span(),
                                &format!("{field}.axis"),
                                "missing: spatial robots must give each joint's axis",
                            );
                        }
                        [0.0, 0.0, 1.0]
                    }
                };
                let coordinate = if kind == JointKind::Fixed {
                    None
                } else {
                    coordinates.push(Coordinate {
                        name: format!("{bname}_joint"),
                        kind: if kind == JointKind::Revolute {
                            CoordinateKind::RevoluteJoint
                        } else {
                            CoordinateKind::PrismaticJoint
                        },
                        meaning: format!(
                            "{} of `{bname}` relative to `{}`",
                            if kind == JointKind::Revolute { "angle" } else { "travel" },
                            spec.bodies[parent_of[o].unwrap_or(root)].get_ref().name.get_ref()
                        ),
                        actuated: false,
                        initial: b.initial.as_ref().map_or(0.0, |v| *v.get_ref()),
                    });
                    Some(coordinates.len() - 1)
                };
                if let Some(v) = &b.initial {
                    if !v.get_ref().is_finite() {
                        self.error(v.span(), &format!("{field}.initial"), "must be finite");
                    }
                    if kind == JointKind::Fixed {
                        self.error(
                            v.span(),
                            &format!("{field}.initial"),
                            "a fixed joint has no coordinate to initialise",
                        );
                    }
                }
                Some(Joint { kind, axis, coordinate })
            };
            let rotation = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
            if let Some(r) = &b.rotation {
                if r.get_ref().iter().any(|v| !v.is_finite()) {
                    self.error(r.span(), &format!("{field}.rotation"), "must be finite");
                }
                if let Some(n) = normal {
                    // In a planar robot only rotations about the plane normal keep it planar.
                    let [roll, pitch, yaw] = *r.get_ref();
                    let about_normal =
                        if n[2] != 0.0 { roll == 0.0 && pitch == 0.0 } else { roll == 0.0 && yaw == 0.0 };
                    if !about_normal {
                        self.error(
                            r.span(),
                            &format!("{field}.rotation"),
                            "in a planar robot a fixed rotation may only turn about the plane normal",
                        );
                    }
                }
            }
            if o == root && b.origin.is_some() {
                self.error(
                    sb.span(),
                    &format!("{field}.origin"),
                    "the base body's origin is its floating (or fixed) base position; remove `origin`",
                );
            }
            let origin = self.vector(b.origin.as_ref(), &format!("{field}.origin"), &parameters);
            if planar_violation(&origin, normal) {
                let span = b.origin.as_ref().map_or(sb.span(), |o| o[0].span());
                self.error(
                    span,
                    &format!("{field}.origin"),
                    "in a planar robot the origin must lie in the plane (zero along the plane normal)",
                );
            }
            let mass = self.parameterised(
                &b.mass,
                &format!("{field}.mass"),
                format!("{bname}_mass"),
                format!("Mass of `{bname}` (kg)."),
                &mut parameters,
                &mut auto,
            );
            if let Some(m) = &mass {
                self.rule(&format!("{field}.mass"), Rule::Positive, vec![m.clone()]);
                match m.evaluate(&parameters) {
                    Ok(v) if v > 0.0 => {}
                    Ok(v) => self.error(b.mass.span(), &format!("{field}.mass"), format!("must be > 0 kg, got {v}")),
                    Err(e) => self.error(b.mass.span(), &format!("{field}.mass"), e),
                }
            }
            let center_of_mass =
                self.vector(b.center_of_mass.as_ref(), &format!("{field}.center_of_mass"), &parameters);
            if planar_violation(&center_of_mass, normal) {
                let span = b.center_of_mass.as_ref().map_or(sb.span(), |c| c[0].span());
                self.error(
                    span,
                    &format!("{field}.center_of_mass"),
                    "in a planar robot the centre of mass must lie in the plane",
                );
            }
            let inertia_field = format!("{field}.inertia");
            let inertia = match (b_inertia.get_ref(), normal) {
                (spec::Inertia::Scalar(v), Some(_)) => {
                    let spanned = Spanned::new(b_inertia.span(), v.clone());
                    self.parameterised(
                        &spanned,
                        &inertia_field,
                        format!("{bname}_inertia"),
                        format!("Inertia of `{bname}` about the plane normal through its centre of mass (kg m^2)."),
                        &mut parameters,
                        &mut auto,
                    )
                    .map(Inertia::Planar)
                }
                (spec::Inertia::Scalar(_), None) => {
                    self.error(
                        b_inertia.span(),
                        &inertia_field,
                        "a spatial robot needs [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]",
                    );
                    None
                }
                (spec::Inertia::Vector(values), _) if values.len() == 3 || values.len() == 6 => {
                    let names = ["xx", "yy", "zz", "xy", "xz", "yz"];
                    let mut out: Vec<Expr> = Vec::new();
                    for (i, v) in values.iter().enumerate() {
                        let spanned = Spanned::new(b_inertia.span(), v.clone());
                        if let Some(e) = self.parameterised(
                            &spanned,
                            &format!("{inertia_field}[{i}]"),
                            format!("{bname}_inertia_{}", names[i]),
                            format!(
                                "Inertia I{} of `{bname}` about its centre of mass, body frame (kg m^2).",
                                names[i]
                            ),
                            &mut parameters,
                            &mut auto,
                        ) {
                            out.push(e);
                        }
                    }
                    while out.len() < 6 {
                        out.push(Expr::Num(Number::Rational(0, 1)));
                    }
                    let full: Option<[Expr; 6]> = out.try_into().ok();
                    full.map(|full| match normal {
                        // Planar: only the moment about the plane normal matters.
                        Some(n) if n[2] != 0.0 => Inertia::Planar(full[2].clone()),
                        Some(_) => Inertia::Planar(full[1].clone()),
                        None => Inertia::Full(full),
                    })
                }
                (spec::Inertia::Vector(values), _) => {
                    self.error(
                        b_inertia.span(),
                        &inertia_field,
                        format!("expected 1, 3 or 6 values, got {}", values.len()),
                    );
                    None
                }
            };
            if let Some(i) = &inertia {
                match i {
                    Inertia::Planar(e) => self.rule(&inertia_field, Rule::NonNegative, vec![e.clone()]),
                    Inertia::Full(f) => self.rule(&inertia_field, Rule::RigidInertia, f.to_vec()),
                }
                let diagonal: Vec<&Expr> = match i {
                    Inertia::Planar(e) => vec![e],
                    Inertia::Full(f) => f[..3].iter().collect(),
                };
                let mut nonnegative = true;
                for e in diagonal {
                    if let Ok(v) = e.evaluate(&parameters) {
                        if v < 0.0 {
                            nonnegative = false;
                            self.error(
                                b_inertia.span(),
                                &inertia_field,
                                format!("moments of inertia must be >= 0, got {v}"),
                            );
                        }
                    }
                }
                if let (Inertia::Full(f), true) = (i, nonnegative) {
                    let values: Result<Vec<f64>, _> = f.iter().map(|e| e.evaluate(&parameters)).collect();
                    if let Ok(v) = values {
                        if let Err(message) = physical_inertia([v[0], v[1], v[2], v[3], v[4], v[5]]) {
                            self.error(b_inertia.span(), &inertia_field, message);
                        }
                    }
                }
            }
            let hull = b
                .hydrodynamics
                .as_ref()
                .and_then(|h| self.hull(h, &field, &bname, None, normal, &mut parameters, &mut auto));
            bodies.push(Body {
                name: bname,
                parent: parent_of[o].and_then(|p| new_index.get(&p).copied()),
                joint,
                origin,
                rotation,
                mass: mass.unwrap_or(Expr::Num(Number::Rational(1, 1))),
                center_of_mass,
                inertia: inertia.unwrap_or(Inertia::Planar(Expr::Num(Number::Rational(0, 1)))),
                section: None,
                hull,
            });
        }
        if bodies.iter().all(|b| matches!(&b.inertia, Inertia::Planar(_))) && normal.is_none() && !bodies.is_empty() {
            // Unreachable for valid specs; defensive for the error path above.
        }

        // Contact points, counted before any grid is laid out (a grid's ring and point
        // counts are checked here first, so that an absurd one is named, not only the sum).
        let mut declared_points: i64 = 0;
        let mut largest: Option<(i64, Range<usize>)> = None;
        let mut bad_grid = false;
        for (i, c) in spec.contact_points.iter().enumerate() {
            let field = self.labels.contact_points(i);
            let cp = c.get_ref();
            let count = match &cp.grid {
                Some(g) if *cp.kind.get_ref() == spec::ContactKind::SkinGrid => {
                    let g = g.get_ref();
                    let (rings, around) = (*g.rings.get_ref(), *g.around.get_ref());
                    if !(1..=1000).contains(&rings) {
                        self.error(
                            g.rings.span(),
                            &format!("{field}.grid.rings"),
                            format!("must be in 1..=1000, got {rings}"),
                        );
                        bad_grid = true;
                    }
                    if !(1..=1000).contains(&around) {
                        self.error(
                            g.around.span(),
                            &format!("{field}.grid.around"),
                            format!("must be in 1..=1000, got {around}"),
                        );
                        bad_grid = true;
                    }
                    (rings.clamp(0, 1000) + i64::from(g.tip)) * around.clamp(0, 1000)
                }
                _ => cp.positions.len() as i64,
            };
            declared_points += count;
            if largest.as_ref().is_none_or(|(n, _)| count > *n) {
                largest = Some((count, c.span()));
            }
        }
        if bad_grid {
            return None;
        }
        if declared_points > MAX_CONTACT_POINTS {
            let span = largest.map_or(0..0, |(_, span)| span);
            self.error(span, "contact_points", format!("{declared_points} contact points, more than the limit of {MAX_CONTACT_POINTS} per robot (each adds code to every contact kernel)"));
            return None;
        }
        let mut contact_points = Vec::new();
        let mut contact_names = BTreeSet::new();
        for (i, c) in spec.contact_points.iter().enumerate() {
            let c = c.get_ref();
            let field = self.labels.contact_points(i);
            let Some(&body) = index_of.get(c.body.get_ref()) else {
                self.error(c.body.span(), &format!("{field}.body"), format!("no body named `{}`", c.body.get_ref()));
                continue;
            };
            let soft = spec.bodies[body].get_ref().kind.get_ref() == &spec::BodyKind::ConstantCurvature;
            if *c.kind.get_ref() == spec::ContactKind::SkinGrid {
                if !soft {
                    self.error(c.kind.span(), &format!("{field}.kind"), "skin grids go on soft sections (kind = \"constant_curvature\"); list \"points\" on rigid bodies");
                    continue;
                }
                if !c.positions.is_empty() || !c.names.is_empty() {
                    self.error(
                        c.body.span(),
                        &format!("{field}.positions"),
                        "a skin grid places its points itself; remove `positions` and `names`",
                    );
                }
                let Some(grid) = &c.grid else {
                    self.error(
                        c.body.span(),
                        &format!("{field}.grid"),
                        "missing: expected grid = { radius = ..., rings = ..., around = ... }",
                    );
                    continue;
                };
                let g = grid.get_ref();
                let radius = self.parameterised(
                    &g.radius,
                    &format!("{field}.grid.radius"),
                    format!("{}_skin_radius", c.body.get_ref()),
                    format!("Skin radius of `{}` (m).", c.body.get_ref()),
                    &mut parameters,
                    &mut auto,
                );
                if let Some(r) = &radius {
                    self.rule(&format!("{field}.grid.radius"), Rule::Positive, vec![r.clone()]);
                }
                if let Some(Ok(v)) = radius.as_ref().map(|r| r.evaluate(&parameters)) {
                    if !(v > 0.0) {
                        self.error(g.radius.span(), &format!("{field}.grid.radius"), format!("must be > 0 m, got {v}"));
                    }
                }
                // Ring and point counts were checked (1..=1000) before the count above.
                let (rings, around) = (*g.rings.get_ref(), *g.around.get_ref());
                let Some(radius) = radius else { continue };
                let ring_count = rings + i64::from(g.tip);
                for k in 0..ring_count {
                    let xi = k as f64 / rings as f64;
                    for a in 0..around {
                        let name = format!("{}_skin_{k}_{a}", c.body.get_ref());
                        if !contact_names.insert(name.clone()) {
                            self.error(
                                c.body.span(),
                                &format!("{field}"),
                                format!("duplicate contact point name `{name}` (two grids on one section?)"),
                            );
                        }
                        let zero = || Expr::Num(Number::Rational(0, 1));
                        contact_points.push(ContactPoint {
                            name,
                            body: new_index.get(&body).copied().unwrap_or(0),
                            position: [zero(), zero(), zero()],
                            skin: Some(SkinPlacement {
                                xi,
                                angle: std::f64::consts::TAU * a as f64 / around as f64,
                                radius: radius.clone(),
                            }),
                        });
                    }
                }
                continue;
            }
            if let Some(g) = &c.grid {
                self.error(g.span(), &format!("{field}.grid"), "`grid` belongs to kind = \"skin_grid\"");
            }
            if soft {
                self.error(
                    c.kind.span(),
                    &format!("{field}.kind"),
                    "soft sections take contact points as a skin grid (kind = \"skin_grid\")",
                );
                continue;
            }
            if c.positions.is_empty() {
                self.error(c.body.span(), &format!("{field}.positions"), "expected at least one position [x, y, z]");
            }
            if !c.names.is_empty() && c.names.len() != c.positions.len() {
                self.error(
                    c.body.span(),
                    &format!("{field}.names"),
                    format!("expected {} names (one per position), got {}", c.positions.len(), c.names.len()),
                );
            }
            for (k, p) in c.positions.iter().enumerate() {
                let position = self.vector(Some(p), &format!("{field}.positions[{k}]"), &parameters);
                if planar_violation(&position, normal) {
                    self.error(
                        p[0].span(),
                        &format!("{field}.positions[{k}]"),
                        "in a planar robot contact points must lie in the plane",
                    );
                }
                let name = match c.names.get(k) {
                    Some(n) => n.get_ref().clone(),
                    None => format!("{}_{k}", c.body.get_ref()),
                };
                if !contact_names.insert(name.clone()) {
                    self.error(
                        c.body.span(),
                        &format!("{field}.names"),
                        format!("duplicate contact point name `{name}`"),
                    );
                }
                contact_points.push(ContactPoint {
                    name,
                    body: new_index.get(&body).copied().unwrap_or(0),
                    position,
                    skin: None,
                });
            }
        }

        // Environment.
        let mut env = EnvironmentDefaults {
            terrain: TerrainDefault::None,
            contact_stiffness: 0.0,
            contact_damping: 0.0,
            friction_along: 0.0,
            friction_across: 0.0,
            anisotropy: Anisotropy::Isotropic,
            friction_regularisation: 0.0,
        };
        if let Some(e) = environment {
            let e = e.get_ref();
            env.contact_stiffness =
                self.non_negative(e.contact_stiffness.as_ref(), 0.0, "environment.contact_stiffness", &parameters);
            env.contact_damping =
                self.non_negative(e.contact_damping.as_ref(), 0.0, "environment.contact_damping", &parameters);
            if let Some(f) = &e.friction {
                let f = f.get_ref();
                env.friction_along = self.non_negative(Some(&f.along), 0.0, "environment.friction.along", &parameters);
                env.friction_across = self.non_negative(
                    f.across.as_ref(),
                    env.friction_along,
                    "environment.friction.across",
                    &parameters,
                );
                env.friction_regularisation = self.non_negative(
                    f.regularisation.as_ref(),
                    0.0,
                    "environment.friction.regularisation",
                    &parameters,
                );
                env.anisotropy = f.anisotropy.as_ref().map_or(Anisotropy::Isotropic, |a| *a.get_ref());
            }
            if let Some(t) = &e.terrain {
                let span = t.span();
                let t = t.get_ref();
                let need = |v: &mut Validator, value: &Option<Spanned<Value>>, what: &str| -> f64 {
                    match value {
                        Some(x) => v.number(x, &format!("environment.terrain.{what}"), &parameters).unwrap_or(0.0),
                        None => {
                            v.error(
                                span.clone(),
                                &format!("environment.terrain.{what}"),
                                format!("missing: a {:?} terrain needs `{what}`", t.kind.get_ref()).to_lowercase(),
                            );
                            0.0
                        }
                    }
                };
                if matches!(t.kind.get_ref(), spec::TerrainKind::Flat | spec::TerrainKind::Stair)
                    && plane == Some(Plane::Xy)
                {
                    self.error(span.clone(), "environment.terrain.kind", "flat ground and the stair push along z, which a robot in the horizontal plane (`plane = \"xy\"`) cannot move along: use `kind = \"floor\"`");
                }
                env.terrain = match t.kind.get_ref() {
                    spec::TerrainKind::None => TerrainDefault::None,
                    spec::TerrainKind::Flat => TerrainDefault::Flat {
                        height: t
                            .height
                            .as_ref()
                            .and_then(|h| self.number(h, "environment.terrain.height", &parameters))
                            .unwrap_or(0.0),
                    },
                    spec::TerrainKind::Stair => {
                        let position = need(self, &t.position, "position");
                        let height = need(self, &t.height, "height");
                        if height < 0.0 {
                            self.error(
                                span.clone(),
                                "environment.terrain.height",
                                format!("must be >= 0, got {height}"),
                            );
                        }
                        TerrainDefault::Stair { position, height }
                    }
                    spec::TerrainKind::Floor => {
                        if plane != Some(Plane::Xy) {
                            self.error(
                                span.clone(),
                                "environment.terrain.kind",
                                "the floor carries robots that move in the horizontal plane: it needs `plane = \"xy\"`",
                            );
                        }
                        TerrainDefault::Floor
                    }
                    spec::TerrainKind::Pipe => {
                        let diameter = need(self, &t.diameter, "diameter");
                        if diameter <= 0.0 {
                            self.error(
                                span.clone(),
                                "environment.terrain.diameter",
                                format!("must be > 0, got {diameter}"),
                            );
                        }
                        TerrainDefault::Pipe { diameter }
                    }
                };
            }
        }
        // Gravity is a runtime parameter of G.
        if parameters.contains_key("gravity") {
            self.error(0..0, "parameters.gravity", "`gravity` is set in [environment]");
        }
        parameters.insert("gravity".into(), gravity);

        // Water: its density and the hulls' coefficients, each a parameter.
        let in_water =
            environment.and_then(|e| e.get_ref().medium.as_ref()).is_some_and(|m| *m.get_ref() == spec::Medium::Water);
        let water_spec = environment.and_then(|e| e.get_ref().water.as_ref());
        let water = match (in_water, water_spec) {
            (true, w) => {
                let w = w.map(|w| w.get_ref());
                let mut value = |v: &mut Validator,
                                 pick: fn(&spec::WaterSpec) -> Option<&Spanned<Value>>,
                                 key: &str,
                                 name: &str,
                                 default: f64,
                                 doc: &str,
                                 strictly: bool| {
                    v.water_value(w.and_then(pick), key, name, default, doc, strictly, &mut parameters, &mut auto)
                };
                let density = value(
                    self,
                    |w| w.density.as_ref(),
                    "density",
                    "water_density",
                    1000.0,
                    "Density of the water rho (kg/m^3).",
                    true,
                );
                let added = value(
                    self,
                    |w| w.added_mass_coefficient.as_ref(),
                    "added_mass_coefficient",
                    "added_mass_coefficient",
                    1.0,
                    "Added mass across a hull per displaced mass C_a.",
                    false,
                );
                let surge = value(
                    self,
                    |w| w.surge_added_mass.as_ref(),
                    "surge_added_mass",
                    "surge_added_mass",
                    0.2,
                    "Added mass along a hull relative to across, alpha.",
                    false,
                );
                let drag = value(
                    self,
                    |w| w.drag_coefficient.as_ref(),
                    "drag_coefficient",
                    "drag_coefficient",
                    1.0,
                    "Cross-flow drag coefficient C_D.",
                    false,
                );
                let surge_drag = value(
                    self,
                    |w| w.surge_linear_drag.as_ref(),
                    "surge_linear_drag",
                    "surge_linear_drag",
                    0.2,
                    "Linear drag along a hull relative to across, beta.",
                    false,
                );
                let roll_drag = value(
                    self,
                    |w| w.roll_linear_drag.as_ref(),
                    "roll_linear_drag",
                    "roll_linear_drag",
                    0.5,
                    "Linear roll drag per rho pi R^3 L C_D V, Omega.",
                    false,
                );
                let speed = value(
                    self,
                    |w| w.reference_speed.as_ref(),
                    "reference_speed",
                    "reference_speed",
                    1.0,
                    "Reference speed V of the linear drag (m/s).",
                    false,
                );
                if !bodies.iter().any(|b| b.hull.is_some()) {
                    let span = environment.and_then(|e| e.get_ref().medium.as_ref()).map_or(0..0, |m| m.span());
                    self.error(
                        span,
                        "environment.medium",
                        "a robot in water needs at least one body with `hydrodynamics = { radius = ... }` (its hull)",
                    );
                }
                match (density, added, surge, drag, surge_drag, roll_drag, speed) {
                    (
                        Some(density),
                        Some(added_mass_coefficient),
                        Some(surge_added_mass),
                        Some(drag_coefficient),
                        Some(surge_linear_drag),
                        Some(roll_linear_drag),
                        Some(reference_speed),
                    ) => Some(Water {
                        density,
                        added_mass_coefficient,
                        surge_added_mass,
                        drag_coefficient,
                        surge_linear_drag,
                        roll_linear_drag,
                        reference_speed,
                    }),
                    _ => None,
                }
            }
            (false, Some(w)) => {
                self.error(w.span(), "environment.water", "water properties need `medium = \"water\"`");
                None
            }
            (false, None) => None,
        };
        if !in_water {
            for (i, b) in spec.bodies.iter().enumerate() {
                if let Some(h) = &b.get_ref().hydrodynamics {
                    self.error(
                        h.span(),
                        &format!("{} ({}).hydrodynamics", self.labels.body(i), b.get_ref().name.get_ref()),
                        "a hull acts only in water: set `medium = \"water\"` in [environment]",
                    );
                }
            }
        }

        // Actuators.
        let mut actuated = Vec::new();
        let mut valves = Vec::new();
        let mut muscles = Vec::new();
        let mut thrusters: Vec<Thruster> = Vec::new();
        let mut torque_limit = f64::INFINITY;
        for (i, a) in spec.actuators.iter().enumerate() {
            let a = a.get_ref();
            let field = self.labels.actuator(i);
            let kind = *a.kind.get_ref();
            if kind != spec::ActuatorKind::Thruster {
                for (given, key) in [
                    (a.position.as_ref().map(|v| v[0].span()), "position"),
                    (a.direction.as_ref().map(|v| v.span()), "direction"),
                    (a.name.as_ref().map(|v| v.span()), "name"),
                ] {
                    if let Some(span) = given {
                        self.error(span, &format!("{field}.{key}"), "only thrusters have this field");
                    }
                }
            }
            if kind != spec::ActuatorKind::PneumaticMuscle {
                for (given, key) in [
                    (a.radius.as_ref().map(|v| v.span()), "radius"),
                    (a.angles.as_ref().map(|v| v.span()), "angles"),
                    (a.area.as_ref().map(|v| v.span()), "area"),
                    (a.rated_pressure.as_ref().map(|v| v.span()), "rated_pressure"),
                    (a.pressure_lag.as_ref().map(|v| v.span()), "pressure_lag"),
                ] {
                    if let Some(span) = given {
                        self.error(span, &format!("{field}.{key}"), "only pneumatic muscles have this field");
                    }
                }
            }
            let Some(&bi) = index_of.get(a.joint.get_ref()) else {
                self.error(a.joint.span(), &format!("{field}.joint"), format!("no body named `{}`", a.joint.get_ref()));
                continue;
            };
            // A body that failed validation is missing from `bodies` (its error is said), and
            // the indices past it no longer match: check actuators on a complete tree only.
            if bodies.len() != order.len() {
                continue;
            }
            let Some(body) = new_index.get(&bi).and_then(|&n| bodies.get(n)) else {
                continue;
            };
            if kind == spec::ActuatorKind::Thruster {
                let default_name = format!("thruster{}", thrusters.len() + 1);
                if let Some(thruster) =
                    self.thruster(a, &field, body, new_index[&bi], default_name, normal, &parameters)
                {
                    if thrusters.iter().any(|t: &Thruster| t.name == thruster.name)
                        || contact_names.contains(&thruster.name)
                    {
                        self.error(
                            a.name.as_ref().map_or(a.kind.span(), |n| n.span()),
                            &format!("{field}.name"),
                            format!("the name `{}` is taken", thruster.name),
                        );
                    } else {
                        thrusters.push(thruster);
                    }
                }
                continue;
            }
            if kind == spec::ActuatorKind::PneumaticMuscle {
                if let Some(bank) = self.muscle_bank(a, &field, body, &mut parameters, &mut auto) {
                    if muscles.iter().any(|m: &MuscleBank| m.body == bank.body) {
                        self.error(
                            a.joint.span(),
                            &format!("{field}.joint"),
                            format!("soft section `{}` already has its muscles", a.joint.get_ref()),
                        );
                    } else {
                        muscles.push(bank);
                    }
                }
                continue;
            }
            let coordinate = match (&body.joint, &body.section) {
                (Some(j), _) => j.coordinate,
                (None, Some(s)) if kind == spec::ActuatorKind::SolenoidValve && s.coordinates == 1 => {
                    Some(s.first_coordinate)
                }
                (None, Some(s)) if kind == spec::ActuatorKind::SolenoidValve => {
                    self.error(
                        a.joint.span(),
                        &format!("{field}.joint"),
                        format!(
                            "a valve pair drives one coordinate, and soft section `{}` has {}; use a planar section",
                            a.joint.get_ref(),
                            s.coordinates
                        ),
                    );
                    continue;
                }
                (None, _) => None,
            };
            let Some(coordinate) = coordinate else {
                self.error(
                    a.joint.span(),
                    &format!("{field}.joint"),
                    format!("body `{}` has no moving joint to drive", a.joint.get_ref()),
                );
                continue;
            };
            if actuated.contains(&coordinate) || valves.iter().any(|v: &Valve| v.coordinate == coordinate) {
                self.error(
                    a.joint.span(),
                    &format!("{field}.joint"),
                    format!("joint of `{}` already has an actuator", a.joint.get_ref()),
                );
                continue;
            }
            coordinates[coordinate].actuated = true;
            if kind == spec::ActuatorKind::SolenoidValve {
                if let Some(l) = &a.torque_limit {
                    self.error(
                        l.span(),
                        &format!("{field}.torque_limit"),
                        "a valve pair sets its coordinate through `response`; it has no torque limit",
                    );
                }
                let Some(response) = &a.response else {
                    self.error(a.kind.span(), &format!("{field}.response"), "a solenoid valve needs `response = { time_constants = [tau1, tau2], gain = C0 }` (one time constant for a first-order response)");
                    continue;
                };
                let r = response.get_ref();
                let bname = a.joint.get_ref().clone();
                let count = r.time_constants.get_ref().len();
                if !(1..=2).contains(&count) {
                    self.error(
                        r.time_constants.span(),
                        &format!("{field}.response.time_constants"),
                        format!("one (first order) or two (second order) time constants, got {count}"),
                    );
                    continue;
                }
                let mut time_constants = Vec::new();
                for (k, tc) in r.time_constants.get_ref().iter().enumerate() {
                    let f = format!("{field}.response.time_constants[{k}]");
                    let e = self.parameterised(
                        tc,
                        &f,
                        format!("{bname}_time_constant_{}", k + 1),
                        format!("Time constant {} of the valve response of `{bname}` (s).", k + 1),
                        &mut parameters,
                        &mut auto,
                    );
                    if let Some(e) = e {
                        self.rule(&f, Rule::Positive, vec![e.clone()]);
                        match e.evaluate(&parameters) {
                            Ok(v) if v > 0.0 => {}
                            Ok(v) => self.error(tc.span(), &f, format!("must be > 0 s, got {v}")),
                            Err(err) => self.error(tc.span(), &f, err),
                        }
                        time_constants.push(e);
                    }
                }
                let gain = self.parameterised(
                    &r.gain,
                    &format!("{field}.response.gain"),
                    format!("{bname}_valve_gain"),
                    format!("Steady state of `{bname}`'s coordinate per unit valve state."),
                    &mut parameters,
                    &mut auto,
                );
                if let (Some(gain), true) = (gain, time_constants.len() == count) {
                    valves.push(Valve { coordinate, time_constants, gain });
                }
                continue;
            }
            if let Some(r) = &a.response {
                self.error(
                    r.span(),
                    &format!("{field}.response"),
                    "only solenoid valves have a response; a joint torque acts directly",
                );
            }
            actuated.push(coordinate);
            if let Some(l) = &a.torque_limit {
                match self.number(l, &format!("{field}.torque_limit"), &parameters) {
                    Some(v) if v > 0.0 => torque_limit = torque_limit.min(v),
                    Some(v) => self.error(l.span(), &format!("{field}.torque_limit"), format!("must be > 0, got {v}")),
                    None => {}
                }
            }
        }

        // The servo gains are checked whether or not a gait uses them.
        let controller_gains = spec.controller.as_ref().map(|c| {
            let c = c.get_ref();
            (
                self.non_negative(Some(&c.stiffness), 0.0, "controller.stiffness", &parameters),
                self.non_negative(Some(&c.damping), 0.0, "controller.damping", &parameters),
            )
        });
        let mut gait = None;
        let mut valve_gait = None;
        if let Some(g) = &spec.gait {
            let gs = g.get_ref();
            let num = |v: &mut Validator, x: &Spanned<Value>, f: &str| v.number(x, f, &parameters).unwrap_or(0.0);
            match *gs.kind.get_ref() {
                spec::GaitKind::Serpenoid if actuated.is_empty() => {
                    self.error(
                        g.span(),
                        "gait",
                        "a gait needs actuated joints ([[actuators]] of kind \"joint_torque\")",
                    );
                }
                spec::GaitKind::Serpenoid => {
                    let (stiffness, damping) = match controller_gains {
                        Some(gains) => gains,
                        None => {
                            self.error(
                                g.span(),
                                "controller",
                                "a gait is tracked by a [controller] (kind = \"joint_pd\"), which is missing",
                            );
                            (0.0, 0.0)
                        }
                    };
                    let amplitude = match &gs.amplitude {
                        Some(a) => num(self, a, "gait.amplitude"),
                        None => {
                            self.error(gs.kind.span(), "gait.amplitude", "a serpenoid gait needs `amplitude` (rad)");
                            0.0
                        }
                    };
                    gait = Some(GaitDefaults {
                        amplitude,
                        temporal_frequency: num(self, &gs.temporal_frequency, "gait.temporal_frequency"),
                        spatial_frequency: num(self, &gs.spatial_frequency, "gait.spatial_frequency"),
                        offset: gs.offset.as_ref().map_or(0.0, |o| num(self, o, "gait.offset")),
                        stiffness,
                        damping,
                        torque_limit,
                    });
                }
                spec::GaitKind::TravellingWaveValves if valves.is_empty() => {
                    self.error(
                        g.span(),
                        "gait",
                        "a travelling valve wave needs valves ([[actuators]] of kind \"solenoid_valve\")",
                    );
                }
                spec::GaitKind::TravellingWaveValves => {
                    if let Some(a) = &gs.amplitude {
                        self.error(
                            a.span(),
                            "gait.amplitude",
                            "a valve wave has no amplitude: the valves' `response.gain` sets it",
                        );
                    }
                    let temporal_frequency = num(self, &gs.temporal_frequency, "gait.temporal_frequency");
                    if temporal_frequency == 0.0 {
                        self.error(gs.temporal_frequency.span(), "gait.temporal_frequency", "must be non-zero (rad/s)");
                    }
                    valve_gait = Some(ValveGaitDefaults {
                        temporal_frequency,
                        delay: num(self, &gs.spatial_frequency, "gait.spatial_frequency"),
                        offset: gs.offset.as_ref().map_or(0.0, |o| num(self, o, "gait.offset")),
                    });
                }
                spec::GaitKind::Rolling => {
                    self.error(
                        gs.kind.span(),
                        "gait.kind",
                        "rolling gaits are not supported yet; use \"serpenoid\" or \"travelling_wave_valves\"",
                    );
                }
            }
        }

        let mut all_parameters = declared;
        all_parameters.extend(auto);
        all_parameters.push(Parameter {
            name: "gravity".into(),
            default: gravity,
            doc: "Gravitational acceleration along -z (m/s^2).".into(),
        });
        Some(Robot {
            name,
            description: spec.description.get_ref().trim().to_string(),
            spec_path: self.path.clone(),
            regenerate: IN_TREE_COMMAND.into(),
            base: base_kind,
            plane,
            parameters: all_parameters,
            coordinates,
            bodies,
            contact_points,
            actuated,
            environment: env,
            gait,
            valves,
            valve_gait,
            muscles,
            rules: std::mem::take(&mut self.rules),
            water,
            thrusters,
        })
    }
}

fn planar_violation(v: &[Expr; 3], normal: Option<[f64; 3]>) -> bool {
    let Some(n) = normal else { return false };
    let axis = n.iter().position(|c| *c != 0.0).unwrap_or(2);
    v[axis] != Expr::Num(Number::Rational(0, 1))
}
