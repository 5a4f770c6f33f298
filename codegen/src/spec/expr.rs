//! A small expression language: the parser for expression values in spec files and for
//! symbolica's printed output, numeric evaluation, and a printer.
//!
//! Codegen never depends on how symbolica orders terms: its output is parsed back into this
//! tree and canonicalised by the emitter, so generated code is the same whatever order
//! symbols were created in.

use std::collections::BTreeMap;
use std::fmt;

/// An exact rational or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Rational(i128, i128),
    Float(f64),
}

impl Number {
    pub fn value(self) -> f64 {
        match self {
            Number::Rational(n, d) => n as f64 / d as f64,
            Number::Float(v) => v,
        }
    }

    pub(crate) fn rational(n: i128, d: i128) -> Number {
        fn gcd(a: i128, b: i128) -> i128 {
            if b == 0 {
                a.abs()
            } else {
                gcd(b, a % b)
            }
        }
        let g = gcd(n, d).max(1);
        let sign = if d < 0 { -1 } else { 1 };
        Number::Rational(sign * n / g, sign * d / g)
    }
}

/// Expression tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(Number),
    Sym(String),
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    Pow(Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

/// A parse error with the byte offset where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at character {}", self.message, self.offset + 1)
    }
}

/// Functions the expression language knows.
pub const FUNCTIONS: &[&str] = &["sin", "cos", "tan", "sqrt", "exp", "log"];

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    /// Current nesting of parentheses, signs, powers and function calls.
    depth: usize,
}

/// How deep an expression may nest (parentheses, signs, powers, calls): far past any
/// physical formula, and far short of the parser's stack.
pub const MAX_NESTING: usize = 64;

impl<'a> Parser<'a> {
    fn skip_space(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.pos).copied()
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { offset: self.pos, message: message.into() })
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        let mut terms = vec![self.term()?];
        while let Some(c) = self.peek() {
            match c {
                b'+' => {
                    self.pos += 1;
                    terms.push(self.term()?);
                }
                b'-' => {
                    self.pos += 1;
                    let t = self.term()?;
                    terms.push(Expr::Mul(vec![Expr::Num(Number::Rational(-1, 1)), t]));
                }
                _ => break,
            }
        }
        Ok(if terms.len() == 1 { terms.pop().unwrap_or(Expr::Num(Number::Rational(0, 1))) } else { Expr::Add(terms) })
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        let mut factors = vec![self.unary()?];
        while let Some(c) = self.peek() {
            match c {
                b'*' => {
                    self.pos += 1;
                    factors.push(self.unary()?);
                }
                b'/' => {
                    self.pos += 1;
                    let d = self.unary()?;
                    factors.push(Expr::Pow(Box::new(d), Box::new(Expr::Num(Number::Rational(-1, 1)))));
                }
                _ => break,
            }
        }
        Ok(if factors.len() == 1 {
            factors.pop().unwrap_or(Expr::Num(Number::Rational(1, 1)))
        } else {
            Expr::Mul(factors)
        })
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.depth += 1;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, ParseError> {
        if self.depth > MAX_NESTING {
            return self.error(format!("the expression nests deeper than {MAX_NESTING} levels"));
        }
        match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                let inner = self.unary()?;
                Ok(match inner {
                    Expr::Num(Number::Rational(n, d)) => Expr::Num(Number::Rational(-n, d)),
                    Expr::Num(Number::Float(v)) => Expr::Num(Number::Float(-v)),
                    other => Expr::Mul(vec![Expr::Num(Number::Rational(-1, 1)), other]),
                })
            }
            Some(b'+') => {
                self.pos += 1;
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Expr, ParseError> {
        let base = self.atom()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            let exponent = self.unary()?;
            return Ok(Expr::Pow(Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            None => self.error("expected a number, name or '(' but the expression ended"),
            Some(b'(') => {
                self.pos += 1;
                let e = self.expr()?;
                if self.peek() != Some(b')') {
                    return self.error("expected ')'");
                }
                self.pos += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self.pos < self.text.len() {
                    let c = self.text[self.pos];
                    if c.is_ascii_alphanumeric() || c == b'_' {
                        self.pos += 1;
                    } else if c == b':' && self.text.get(self.pos + 1) == Some(&b':') {
                        self.pos += 2;
                    } else {
                        break;
                    }
                }
                let full = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or_default();
                // Drop any namespace prefix (`crate::x` prints as `x` in the tree).
                let name = full.rsplit("::").next().unwrap_or(full).to_string();
                if self.peek() == Some(b'(') {
                    self.pos += 1;
                    let mut args = vec![self.expr()?];
                    while self.peek() == Some(b',') {
                        self.pos += 1;
                        args.push(self.expr()?);
                    }
                    if self.peek() != Some(b')') {
                        return self.error("expected ')' after function arguments");
                    }
                    self.pos += 1;
                    return Ok(Expr::Call(name, args));
                }
                Ok(Expr::Sym(name))
            }
            Some(c) => self.error(format!("unexpected character '{}'", c as char)),
        }
    }

    fn number(&mut self) -> Result<Expr, ParseError> {
        let start = self.pos;
        let mut is_float = false;
        while self.pos < self.text.len() {
            let c = self.text[self.pos];
            if c.is_ascii_digit() {
                self.pos += 1;
            } else if c == b'.' {
                is_float = true;
                self.pos += 1;
            } else if (c == b'e' || c == b'E')
                && self.text.get(self.pos + 1).is_some_and(|n| n.is_ascii_digit() || *n == b'-' || *n == b'+')
            {
                is_float = true;
                self.pos += 2;
            } else {
                break;
            }
        }
        let s = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or_default();
        if !is_float {
            if let Ok(n) = s.parse::<i128>() {
                return Ok(Expr::Num(Number::Rational(n, 1)));
            }
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Expr::Num(Number::Float(v))),
            _ => Err(ParseError { offset: start, message: format!("invalid number '{s}'") }),
        }
    }
}

/// Parses an expression.
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    let mut p = Parser { text: text.as_bytes(), pos: 0, depth: 0 };
    let e = p.expr()?;
    if let Some(c) = p.peek() {
        return p.error(format!("unexpected '{}' after the expression", c as char));
    }
    Ok(e)
}

impl Expr {
    /// All symbol names, sorted.
    pub fn symbols(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Num(_) => {}
                Expr::Sym(s) => out.push(s.clone()),
                Expr::Add(v) | Expr::Mul(v) | Expr::Call(_, v) => v.iter().for_each(|x| walk(x, out)),
                Expr::Pow(b, x) => {
                    walk(b, out);
                    walk(x, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// All function names used.
    pub fn functions(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Num(_) | Expr::Sym(_) => {}
                Expr::Add(v) | Expr::Mul(v) => v.iter().for_each(|x| walk(x, out)),
                Expr::Call(name, v) => {
                    out.push(name.clone());
                    v.iter().for_each(|x| walk(x, out));
                }
                Expr::Pow(b, x) => {
                    walk(b, out);
                    walk(x, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort();
        out.dedup();
        out
    }

    /// Numeric value with the given symbol values (`pi` is built in).
    pub fn evaluate(&self, values: &BTreeMap<String, f64>) -> Result<f64, String> {
        Ok(match self {
            Expr::Num(n) => n.value(),
            Expr::Sym(s) if s == "pi" => std::f64::consts::PI,
            Expr::Sym(s) => *values.get(s).ok_or_else(|| format!("unknown name `{s}`"))?,
            Expr::Add(v) => v.iter().map(|x| x.evaluate(values)).sum::<Result<f64, _>>()?,
            Expr::Mul(v) => v.iter().map(|x| x.evaluate(values)).product::<Result<f64, _>>()?,
            Expr::Pow(b, x) => b.evaluate(values)?.powf(x.evaluate(values)?),
            Expr::Call(name, args) => {
                let [arg] = args.as_slice() else {
                    return Err(format!("`{name}` takes one argument, got {}", args.len()));
                };
                let a = arg.evaluate(values)?;
                match name.as_str() {
                    "sin" => a.sin(),
                    "cos" => a.cos(),
                    "tan" => a.tan(),
                    "sqrt" => a.sqrt(),
                    "exp" => a.exp(),
                    "log" => a.ln(),
                    _ => return Err(format!("unknown function `{name}`; known: {}", FUNCTIONS.join(", "))),
                }
            }
        })
    }

    /// Replaces every float by an exact rational (decimal literals in specs are exact
    /// decimals), so that symbolica keeps exact arithmetic.
    pub fn exact(self) -> Expr {
        match self {
            Expr::Num(Number::Float(v)) => Expr::Num(float_to_rational(v)),
            Expr::Num(n) => Expr::Num(n),
            Expr::Sym(s) => Expr::Sym(s),
            Expr::Add(v) => Expr::Add(v.into_iter().map(Expr::exact).collect()),
            Expr::Mul(v) => Expr::Mul(v.into_iter().map(Expr::exact).collect()),
            Expr::Pow(b, x) => Expr::Pow(Box::new(b.exact()), Box::new(x.exact())),
            Expr::Call(n, v) => Expr::Call(n, v.into_iter().map(Expr::exact).collect()),
        }
    }

    /// Renames symbols through `rename`.
    pub fn rename(&self, rename: &dyn Fn(&str) -> String) -> Expr {
        match self {
            Expr::Num(n) => Expr::Num(*n),
            Expr::Sym(s) => Expr::Sym(rename(s)),
            Expr::Add(v) => Expr::Add(v.iter().map(|x| x.rename(rename)).collect()),
            Expr::Mul(v) => Expr::Mul(v.iter().map(|x| x.rename(rename)).collect()),
            Expr::Pow(b, x) => Expr::Pow(Box::new(b.rename(rename)), Box::new(x.rename(rename))),
            Expr::Call(n, v) => Expr::Call(n.clone(), v.iter().map(|x| x.rename(rename)).collect()),
        }
    }
}

/// The shortest decimal that round-trips `v`: its sign, its digits and the power of ten they
/// are scaled by (`v = sign digits 10^shift`).
pub fn shortest_decimal(v: f64) -> (bool, String, i32) {
    let text = format!("{v:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    (negative, digits, exponent - decimals)
}

/// The shortest decimal that round-trips `v`, as an exact rational.
pub fn float_to_rational(v: f64) -> Number {
    let (negative, digits, shift) = shortest_decimal(v);
    let Ok(mut numerator) = digits.parse::<i128>() else { return Number::Float(v) };
    if negative {
        numerator = -numerator;
    }
    if shift.unsigned_abs() > 30 {
        return Number::Float(v);
    }
    // Exact when it fits in i128; otherwise the f64 itself, which is exact too.
    let power = 10i128.pow(shift.unsigned_abs());
    if shift >= 0 {
        match numerator.checked_mul(power) {
            Some(n) => Number::rational(n, 1),
            None => Number::Float(v),
        }
    } else {
        Number::rational(numerator, power)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(Number::Rational(n, 1)) => write!(f, "{n}"),
            Expr::Num(Number::Rational(n, d)) => write!(f, "({n}/{d})"),
            Expr::Num(Number::Float(v)) => write!(f, "{v:?}"),
            Expr::Sym(s) => write!(f, "{s}"),
            Expr::Add(v) => {
                write!(f, "(")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, "+")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
            Expr::Mul(v) => {
                write!(f, "(")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, "*")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
            Expr::Pow(b, x) => write!(f, "({b})^({x})"),
            Expr::Call(n, v) => {
                write!(f, "{n}(")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_evaluates() {
        let cases = [
            ("1/2*x^2", 4.5),
            ("-x^-1", -1.0 / 3.0),
            ("2*pi/5", 2.0 * std::f64::consts::PI / 5.0),
            ("cos(x)^2+sin(x)^2", 1.0),
            ("-(x-1)*2", -4.0),
            ("x^(1/2)", 3f64.sqrt()),
            ("1.5e-3*x", 4.5e-3),
            ("a::b::x + 1", 4.0),
        ];
        let values = BTreeMap::from([("x".to_string(), 3.0)]);
        for (text, expected) in cases {
            let v = parse(text).unwrap().evaluate(&values).unwrap();
            assert!((v - expected).abs() < 1e-12, "{text}: {v} != {expected}");
        }
    }

    #[test]
    fn reports_errors_with_offsets() {
        assert_eq!(parse("1 + ").unwrap_err().offset, 4);
        assert!(parse("(x").unwrap_err().message.contains("')'"));
        assert!(parse("x $ y").unwrap_err().message.contains("'$'"));
        let e = parse("foo(x)").unwrap().evaluate(&BTreeMap::from([("x".into(), 1.0)])).unwrap_err();
        assert!(e.contains("unknown function"));
    }

    #[test]
    fn decimals_become_exact_rationals() {
        assert_eq!(float_to_rational(0.1), Number::Rational(1, 10));
        assert_eq!(float_to_rational(-2.5), Number::Rational(-5, 2));
        assert_eq!(float_to_rational(350.0), Number::Rational(350, 1));
    }

    #[test]
    fn long_mantissas_near_1e40_stay_exact() {
        // 17 significant digits times 10^24 overflows i128: the f64 itself is kept instead.
        for v in [1.2345678901234567e40, -9.876543210987654e38, 1.7976931348623157e308, 4.9e-324, 1e30, 123456789.0e25]
        {
            assert_eq!(float_to_rational(v).value(), v, "{v:e}");
        }
    }
}
