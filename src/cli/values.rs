//! Values given on the command line: comma-separated lists and NAME=VALUE settings.

/// A comma-separated list of finite numbers (`0.1,-0.2,3e-2`; spaces around a number are
/// allowed). An empty field (`1,,2`, a trailing comma), text or a non-finite entry is refused
/// with its index, so that a slip never shifts the values after it.
pub(crate) fn parse_list(name: &str, text: &str) -> Result<Vec<f64>, String> {
    let fields: Vec<&str> = text.split(',').collect();
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let s = field.trim();
            if s.is_empty() {
                let why = if fields.len() == 1 {
                    "the list is empty".to_string()
                } else if i + 1 == fields.len() {
                    format!("value {i} is empty (a trailing comma?)")
                } else {
                    format!("value {i} is empty (two commas in a row?)")
                };
                return Err(format!("--{name} `{text}`: {why}"));
            }
            let v = s.parse::<f64>().map_err(|_| format!("--{name}: value {i} `{s}` is not a number"))?;
            if !v.is_finite() {
                return Err(format!("--{name}: value {i} must be finite, got {v}"));
            }
            Ok(v)
        })
        .collect()
}

pub(crate) fn parse_sets(sets: &[String]) -> Result<Vec<(String, f64)>, String> {
    sets.iter()
        .map(|s| {
            let (name, value) = s.split_once('=').ok_or_else(|| format!("--set `{s}`: expected NAME=VALUE"))?;
            let v = value.trim().parse::<f64>().map_err(|_| format!("--set `{s}`: `{value}` is not a number"))?;
            Ok((name.trim().to_string(), v))
        })
        .collect()
}
