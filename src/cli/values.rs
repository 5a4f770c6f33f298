//! Values given on the command line: comma-separated lists and NAME=VALUE settings.

pub(crate) fn parse_list(name: &str, text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .enumerate()
        .map(|(i, s)| s.parse::<f64>().map_err(|_| format!("--{name}: value {i} `{s}` is not a number")))
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
