//! Two-column tables of measured pairs read from CSV (a regulator's or a sensor's
//! calibration): one pair a line, `#` comments and a header line of words skipped, errors
//! naming the file and line.

/// The pairs of `text` (read from `path`), each line `columns` (e.g. `volts,value`).
pub fn read_pairs(path: &str, text: &str, columns: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut points = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Option<Vec<f64>> = fields.iter().map(|f| f.parse::<f64>().ok()).collect();
        match parsed {
            Some(v) if v.len() == 2 => points.push((v[0], v[1])),
            None if points.is_empty() && fields.iter().all(|f| f.chars().any(char::is_alphabetic)) => {}
            _ => return Err(format!("{path}:{}: expected `{columns}`, got `{line}`", n + 1)),
        }
    }
    Ok(points)
}
