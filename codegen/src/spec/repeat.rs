//! Repetition in specs: a `[[bodies]]`, `[[contact_points]]` or `[[actuators]]` entry with
//! `repeat = { index = "k", from = 2, to = 20 }` stands for one entry per value of the index,
//! in place, each with the `{...}` placeholders of its strings (integer arithmetic in the
//! index: `"link{k}"`, `"link{k - 1}"`, `"{k} * link_length"`) replaced by their values. So
//! an N-link snake is one body, one contact entry and one actuator written once.

use crate::spec::{
    Actuator, Body, ContactPoints, HydrodynamicsSpec, Inertia, Repeat, SectionSpec, SkinGridSpec, Value, Vector,
};
use std::ops::Range;
use toml::Spanned;

/// Most entries one `repeat` may stand for (the spec's own limits on bodies and contact
/// points apply to the expanded lists as well).
pub const MAX_REPETITIONS: i64 = 1000;

/// A problem found while expanding: where, which field, what.
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatError {
    pub span: Range<usize>,
    pub field: String,
    pub message: String,
}

/// An entry that may carry a `repeat` and whose strings may hold placeholders.
pub trait Template: Sized + Clone {
    fn repeat(&self) -> Option<&Spanned<Repeat>>;
    /// A copy with every placeholder replaced (and no `repeat`).
    fn substitute(&self, with: &mut Substitution) -> Self;
}

/// Expands `items` of the list named `list` (`bodies`), in order, into the entries and the
/// label each one's errors name: `bodies[3]` for an entry written out, `bodies[1] (k = 7)`
/// for the copy of a repeated one at k = 7. A repeat that would take the list past `limit`
/// (the spec's own limit on it) is an error before it grows further; entries written out are
/// counted by the validator's own check.
pub fn expand<T: Template>(
    items: &[Spanned<T>],
    list: &str,
    limit: usize,
    errors: &mut Vec<RepeatError>,
) -> (Vec<Spanned<T>>, Vec<String>) {
    let mut expanded = Vec::new();
    let mut labels = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let label = format!("{list}[{position}]");
        let Some(repeat) = item.get_ref().repeat() else {
            expanded.push(item.clone());
            labels.push(label);
            continue;
        };
        let Some((index, values)) = range(repeat, &label, errors) else { continue };
        for value in values {
            if expanded.len() >= limit {
                errors.push(RepeatError {
                    span: repeat.span(),
                    field: format!("{label}.repeat"),
                    message: format!(
                        "{list} would have more than the limit of {limit} entries once repeats are expanded"
                    ),
                });
                return (expanded, labels);
            }
            let mut with = Substitution {
                index: index.clone(),
                value,
                label: format!("{label} ({index} = {value})"),
                errors: Vec::new(),
            };
            let copy = item.get_ref().substitute(&mut with);
            let failed = !with.errors.is_empty();
            errors.append(&mut with.errors);
            if failed {
                // The same template fails the same way for every value: say it once.
                break;
            }
            expanded.push(Spanned::new(item.span(), copy));
            labels.push(with.label);
        }
    }
    (expanded, labels)
}

/// The index's name and values, or the errors that make them unusable.
fn range(
    repeat: &Spanned<Repeat>,
    label: &str,
    errors: &mut Vec<RepeatError>,
) -> Option<(String, std::ops::RangeInclusive<i64>)> {
    let field = format!("{label}.repeat");
    let r = repeat.get_ref();
    let mut error =
        |span: Range<usize>, message: String| errors.push(RepeatError { span, field: field.clone(), message });
    let index = r.index.as_ref().map_or("i", |i| i.get_ref().as_str()).to_string();
    let identifier = index.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && index.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        error(
            r.index.as_ref().map_or(repeat.span(), |i| i.span()),
            format!("index `{index}` must be an identifier (letters, digits, _)"),
        );
        return None;
    }
    let (from, to) = (*r.from.get_ref(), *r.to.get_ref());
    if to < from {
        error(r.to.span(), format!("`to` ({to}) is below `from` ({from}): nothing to repeat"));
        return None;
    }
    // Checked, so that extreme bounds give an error instead of an overflow.
    match to.checked_sub(from).and_then(|d| d.checked_add(1)) {
        Some(count) if count <= MAX_REPETITIONS => Some((index, from..=to)),
        _ => {
            error(r.to.span(), format!("{from}..={to} is more than the limit of {MAX_REPETITIONS} repetitions"));
            None
        }
    }
}

/// Replaces placeholders for one value of the index, collecting errors.
pub struct Substitution {
    index: String,
    value: i64,
    label: String,
    errors: Vec<RepeatError>,
}

impl Substitution {
    fn text(&mut self, field: &str, text: &Spanned<String>) -> Spanned<String> {
        Spanned::new(text.span(), self.replace(field, text.get_ref(), text.span()))
    }

    fn replace(&mut self, field: &str, text: &str, span: Range<usize>) -> String {
        match fill(text, &self.index, self.value) {
            Ok(filled) => filled,
            Err(message) => {
                let field = if field.is_empty() { self.label.clone() } else { format!("{}.{field}", self.label) };
                self.errors.push(RepeatError { span, field, message });
                text.to_string()
            }
        }
    }

    fn value(&mut self, field: &str, value: &Spanned<Value>) -> Spanned<Value> {
        Spanned::new(value.span(), self.plain_value(field, value.get_ref(), value.span()))
    }

    fn plain_value(&mut self, field: &str, value: &Value, span: Range<usize>) -> Value {
        match value {
            Value::Number(n) => Value::Number(*n),
            Value::Expression(e) => Value::Expression(self.replace(field, e, span)),
        }
    }

    fn vector(&mut self, field: &str, vector: &Vector) -> Vector {
        let [x, y, z] = vector;
        [
            self.value(&format!("{field}[0]"), x),
            self.value(&format!("{field}[1]"), y),
            self.value(&format!("{field}[2]"), z),
        ]
    }

    fn optional<T>(
        &mut self,
        field: &str,
        value: &Option<Spanned<T>>,
        each: impl Fn(&mut Self, &str, &T, Range<usize>) -> T,
    ) -> Option<Spanned<T>> {
        value.as_ref().map(|v| Spanned::new(v.span(), each(self, field, v.get_ref(), v.span())))
    }
}

/// `text` with every `{expression}` replaced by the expression's value at `index = value`.
pub fn fill(text: &str, index: &str, value: i64) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close =
            after.find('}').ok_or_else(|| format!("placeholder `{{{after}` in `{text}` has no closing `}}`"))?;
        let expression = &after[..close];
        let result = Arithmetic { text: expression, position: 0, index, value }
            .evaluate()
            .map_err(|e| format!("placeholder `{{{expression}}}` in `{text}`: {e}"))?;
        out.push_str(&result.to_string());
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Integer arithmetic over one index: integers, the index, + - * / % and parentheses.
/// Division must come out even (a link number is never a fraction).
struct Arithmetic<'a> {
    text: &'a str,
    position: usize,
    index: &'a str,
    value: i64,
}

impl Arithmetic<'_> {
    fn evaluate(mut self) -> Result<i64, String> {
        let result = self.sum(0)?;
        self.skip_spaces();
        match self.peek() {
            None => Ok(result),
            Some(c) => Err(format!("unexpected `{c}`")),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.position..].chars().next()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.position += 1;
        }
    }

    fn sum(&mut self, depth: usize) -> Result<i64, String> {
        let mut total = self.product(depth)?;
        loop {
            self.skip_spaces();
            let operator = match self.peek() {
                Some(c @ ('+' | '-')) => c,
                _ => return Ok(total),
            };
            self.position += 1;
            let term = self.product(depth)?;
            total = if operator == '+' { total.checked_add(term) } else { total.checked_sub(term) }
                .ok_or("the value overflows")?;
        }
    }

    fn product(&mut self, depth: usize) -> Result<i64, String> {
        let mut total = self.factor(depth)?;
        loop {
            self.skip_spaces();
            let operator = match self.peek() {
                Some(c @ ('*' | '/' | '%')) => c,
                _ => return Ok(total),
            };
            self.position += 1;
            let factor = self.factor(depth)?;
            total = match operator {
                '*' => total.checked_mul(factor).ok_or("the value overflows")?,
                _ if factor == 0 => return Err("division by zero".into()),
                '/' if total % factor != 0 => return Err(format!("{total} / {factor} is not a whole number")),
                '/' => total / factor,
                _ => total.rem_euclid(factor),
            };
        }
    }

    fn factor(&mut self, depth: usize) -> Result<i64, String> {
        // Bounded nesting: the text is the user's.
        if depth > 32 {
            return Err("parentheses nested too deep".into());
        }
        self.skip_spaces();
        let start = self.position;
        match self.peek() {
            Some('(') => {
                self.position += 1;
                let inner = self.sum(depth + 1)?;
                self.skip_spaces();
                if self.peek() != Some(')') {
                    return Err("missing `)`".into());
                }
                self.position += 1;
                Ok(inner)
            }
            Some('-') => {
                self.position += 1;
                self.factor(depth + 1)?.checked_neg().ok_or_else(|| "the value overflows".into())
            }
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.position += 1;
                }
                self.text[start..self.position]
                    .parse()
                    .map_err(|_| format!("`{}` is too large", &self.text[start..self.position]))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.position += 1;
                }
                let name = &self.text[start..self.position];
                if name == self.index {
                    Ok(self.value)
                } else {
                    Err(format!(
                        "`{name}` is not the index (`{}`); placeholders hold integer arithmetic in the index only",
                        self.index
                    ))
                }
            }
            Some(c) => Err(format!("unexpected `{c}`")),
            None => Err("an expression was expected".into()),
        }
    }
}

impl Template for Body {
    fn repeat(&self) -> Option<&Spanned<Repeat>> {
        self.repeat.as_ref()
    }

    fn substitute(&self, with: &mut Substitution) -> Body {
        Body {
            name: with.text("name", &self.name),
            kind: self.kind.clone(),
            parent: self.parent.as_ref().map(|p| with.text("parent", p)),
            joint: self.joint.clone(),
            axis: self.axis.clone(),
            origin: self.origin.as_ref().map(|o| with.vector("origin", o)),
            rotation: self.rotation.clone(),
            initial: self.initial.clone(),
            mass: with.value("mass", &self.mass),
            center_of_mass: self.center_of_mass.as_ref().map(|c| with.vector("center_of_mass", c)),
            inertia: with.optional("inertia", &self.inertia, |with, field, inertia, span| match inertia {
                Inertia::Scalar(v) => Inertia::Scalar(with.plain_value(field, v, span)),
                Inertia::Vector(values) => Inertia::Vector(
                    values
                        .iter()
                        .enumerate()
                        .map(|(k, v)| with.plain_value(&format!("{field}[{k}]"), v, span.clone()))
                        .collect(),
                ),
            }),
            section: with
                .optional("section", &self.section, |with, field, section, _| section_copy(with, field, section)),
            hydrodynamics: with.optional("hydrodynamics", &self.hydrodynamics, |with, field, h, _| HydrodynamicsSpec {
                radius: with.value(&format!("{field}.radius"), &h.radius),
                length: h.length.as_ref().map(|v| with.value(&format!("{field}.length"), v)),
                start: h.start.as_ref().map(|v| with.value(&format!("{field}.start"), v)),
                center_of_buoyancy: h
                    .center_of_buoyancy
                    .as_ref()
                    .map(|c| with.vector(&format!("{field}.center_of_buoyancy"), c)),
            }),
            repeat: None,
        }
    }
}

fn section_copy(with: &mut Substitution, field: &str, s: &SectionSpec) -> SectionSpec {
    let sub = |name: &str| format!("{field}.{name}");
    SectionSpec {
        model: s.model.clone(),
        rest_length: with.value(&sub("rest_length"), &s.rest_length),
        actuator_radius: s.actuator_radius.as_ref().map(|v| with.value(&sub("actuator_radius"), v)),
        actuator_angles: s.actuator_angles.as_ref().map(|angles| {
            let values = angles
                .get_ref()
                .iter()
                .enumerate()
                .map(|(k, v)| with.value(&format!("{}[{k}]", sub("actuator_angles")), v))
                .collect();
            Spanned::new(angles.span(), values)
        }),
        disc_radius: s.disc_radius.as_ref().map(|v| with.value(&sub("disc_radius"), v)),
        stiffness: s.stiffness.as_ref().map(|v| with.value(&sub("stiffness"), v)),
        damping: with.value(&sub("damping"), &s.damping),
        quadrature: s.quadrature.clone(),
        initial: s.initial.clone(),
        material: s.material.as_ref().map(|m| {
            let material = m.get_ref();
            let yeoh = material
                .yeoh
                .get_ref()
                .iter()
                .enumerate()
                .map(|(k, v)| with.value(&format!("{}[{k}]", sub("material.yeoh")), v))
                .collect();
            Spanned::new(
                m.span(),
                crate::spec::MaterialSpec {
                    yeoh: Spanned::new(material.yeoh.span(), yeoh),
                    area: with.value(&sub("material.area"), &material.area),
                    consistency: material.consistency.as_ref().map(|v| with.value(&sub("material.consistency"), v)),
                    power_index: material.power_index.as_ref().map(|v| with.value(&sub("material.power_index"), v)),
                    rate_scale: material.rate_scale.as_ref().map(|v| with.value(&sub("material.rate_scale"), v)),
                },
            )
        }),
    }
}

impl Template for ContactPoints {
    fn repeat(&self) -> Option<&Spanned<Repeat>> {
        self.repeat.as_ref()
    }

    fn substitute(&self, with: &mut Substitution) -> ContactPoints {
        ContactPoints {
            body: with.text("body", &self.body),
            kind: self.kind.clone(),
            positions: self
                .positions
                .iter()
                .enumerate()
                .map(|(k, p)| with.vector(&format!("positions[{k}]"), p))
                .collect(),
            names: self.names.iter().enumerate().map(|(k, n)| with.text(&format!("names[{k}]"), n)).collect(),
            grid: with.optional("grid", &self.grid, |with, field, grid, _| SkinGridSpec {
                radius: with.value(&format!("{field}.radius"), &grid.radius),
                rings: grid.rings.clone(),
                around: grid.around.clone(),
                tip: grid.tip,
            }),
            repeat: None,
        }
    }
}

impl Template for Actuator {
    fn repeat(&self) -> Option<&Spanned<Repeat>> {
        self.repeat.as_ref()
    }

    fn substitute(&self, with: &mut Substitution) -> Actuator {
        Actuator {
            kind: self.kind.clone(),
            joint: with.text("joint", &self.joint),
            torque_limit: self.torque_limit.as_ref().map(|v| with.value("torque_limit", v)),
            response: self.response.as_ref().map(|r| {
                let response = r.get_ref();
                let constants = response
                    .time_constants
                    .get_ref()
                    .iter()
                    .map(|v| with.value("response.time_constants", v))
                    .collect();
                Spanned::new(
                    r.span(),
                    crate::spec::Response {
                        time_constants: Spanned::new(response.time_constants.span(), constants),
                        gain: with.value("response.gain", &response.gain),
                    },
                )
            }),
            radius: self.radius.as_ref().map(|v| with.value("radius", v)),
            angles: self.angles.as_ref().map(|angles| {
                let values =
                    angles.get_ref().iter().enumerate().map(|(k, v)| with.value(&format!("angles[{k}]"), v)).collect();
                Spanned::new(angles.span(), values)
            }),
            area: self.area.as_ref().map(|v| with.value("area", v)),
            rated_pressure: self.rated_pressure.as_ref().map(|v| with.value("rated_pressure", v)),
            pressure_lag: self.pressure_lag.as_ref().map(|v| with.value("pressure_lag", v)),
            position: self.position.as_ref().map(|p| with.vector("position", p)),
            direction: self.direction.clone(),
            name: self.name.as_ref().map(|n| with.text("name", n)),
            repeat: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn placeholders_are_integer_arithmetic_in_the_index() {
        let cases = [
            ("link{k}", "link7"),
            ("link{k - 1}", "link6"),
            ("{k} * link_length", "7 * link_length"),
            ("{(k + 1) * 2 % 5}_{k/7}", "1_1"),
            ("{-k + 10}", "3"),
            ("no placeholders", "no placeholders"),
        ];
        for (text, expected) in cases {
            assert_eq!(fill(text, "k", 7).unwrap(), expected, "{text}");
        }
        for (text, error) in [
            ("link{k", "no closing"),
            ("{j}", "not the index"),
            ("{k / 2}", "not a whole number"),
            ("{k % 0}", "division by zero"),
            ("{k * 9999999999 * 9999999999}", "overflows"),
            ("{99999999999999999999}", "too large"),
            ("{(k}", "missing `)`"),
            ("{}", "expected"),
            ("{k k}", "unexpected `k`"),
        ] {
            let message = fill(text, "k", 7).unwrap_err();
            assert!(message.contains(error), "{text}: {message}");
        }
        let deep = format!("{{{}k{}}}", "(".repeat(40), ")".repeat(40));
        assert!(fill(&deep, "k", 7).unwrap_err().contains("too deep"));
    }
}
