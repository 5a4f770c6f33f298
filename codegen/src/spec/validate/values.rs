//! Values of a spec: numbers and expressions over parameters, vectors, signed and
//! non-negative values, and the rules `Params::check` applies to them; errors with their span.
// The validator's types, helpers and imports, shared by its files.
use super::*;
use softgen_runtime::physical_ranges;

impl Validator {
    /// Records a rule on values that may depend on parameters, for the generated
    /// `Params::check` (values without parameters cannot change and are left out; a rule
    /// already recorded for the same values keeps the first field that stated it).
    pub(super) fn rule(&mut self, field: &str, rule: Rule, values: Vec<Expr>) {
        if !values.iter().any(|v| v.symbols().iter().any(|s| s != "pi")) {
            return;
        }
        // Every rule checks its field's range too: a range-only rule is kept only for values
        // no other rule covers.
        if rule == Rule::InRange {
            if self.rules.iter().any(|r| r.values == values) {
                return;
            }
        } else {
            self.rules.retain(|r| !(r.rule == Rule::InRange && r.values == values));
        }
        let repeated = self.rules.iter().any(|r| r.rule == rule && r.values == values);
        if !repeated {
            self.rules.push(ParameterRule { field: without_repeat_index(field), rule, values });
        }
    }

    pub(super) fn error(&mut self, span: Range<usize>, field: &str, message: impl Into<String>) {
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
    pub(super) fn value(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        parameters: &BTreeMap<String, f64>,
    ) -> Option<Expr> {
        match value.get_ref() {
            Value::Number(n) => {
                if !n.is_finite() {
                    self.error(value.span(), field, format!("expected a finite number, got {n}"));
                    return None;
                }
                if let Err(message) = physical_ranges::check_field_magnitude(field, *n) {
                    self.error(value.span(), field, message);
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
                    Ok(v) if v.is_finite() => {
                        if let Err(message) = physical_ranges::check_field_magnitude(field, v) {
                            self.error(value.span(), field, format!("\"{text}\" with the defaults: {message}"));
                            return None;
                        }
                    }
                    Ok(v) => {
                        self.error(value.span(), field, format!("\"{text}\" evaluates to {v} with the defaults"));
                        return None;
                    }
                    Err(e) => {
                        self.error(value.span(), field, e);
                        return None;
                    }
                }
                let exact = parsed.exact();
                // Checked again whenever the parameters change at run time.
                if physical_ranges::range_of_field(field).is_some() {
                    self.rule(field, Rule::InRange, vec![exact.clone()]);
                }
                Some(exact)
            }
        }
    }

    /// Evaluates a value to a number at the parameter defaults.
    pub(super) fn number(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        parameters: &BTreeMap<String, f64>,
    ) -> Option<f64> {
        let e = self.value(value, field, parameters)?;
        e.evaluate(parameters).ok()
    }

    pub(super) fn non_negative(
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

    pub(super) fn vector(
        &mut self,
        value: Option<&spec::Vector>,
        field: &str,
        parameters: &BTreeMap<String, f64>,
    ) -> [Expr; 3] {
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
    pub(super) fn parameterised(
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
                if let Err(message) = physical_ranges::check_field_magnitude(field, *n) {
                    self.error(value.span(), field, message);
                    return None;
                }
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
    pub(super) fn section_value(
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
    pub(super) fn signed_parameter(
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
}

/// A field's label for a run-time rule without a repeat's ` (k = 7)`: the entry's position
/// is where the value is written and the body's name says which copy, so a spec written with
/// `repeat` and the same spec written out generate the same checks.
fn without_repeat_index(field: &str) -> String {
    let mut label = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(start) = rest.find(" (k = ") {
        let Some(end) = rest[start..].find(')') else { break };
        label.push_str(&rest[..start]);
        rest = &rest[start + end + 1..];
    }
    label.push_str(rest);
    label
}

#[cfg(test)]
mod tests {
    use super::without_repeat_index;

    #[test]
    fn rule_labels_drop_the_repeat_index_only() {
        assert_eq!(without_repeat_index("bodies[1] (k = 2) (link2).origin[0] (x)"), "bodies[1] (link2).origin[0] (x)");
        assert_eq!(without_repeat_index("bodies[0] (link1).mass"), "bodies[0] (link1).mass");
        assert_eq!(without_repeat_index("a (k = 1) b (k = 12) c"), "a b c");
    }
}
