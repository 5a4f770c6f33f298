//! The generator's entry points: spec text to generated Rust source, whole spec directories
//! to generated/, and a readable report of the symbolic equations.

use crate::derive::{derive, Derived};
use crate::emit::emit;
use crate::emit_soft::emit_soft;
use crate::model::Robot;
use crate::validate::{load, SpecErrors};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Whether `path` is a robot spec: a `.toml` file in model-specs/ that is not a run
/// configuration (`<robot>.run.toml`).
pub fn is_spec_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    name.ends_with(".toml") && !name.ends_with(".run.toml")
}

/// One robot's generated module and the figures we track about it.
pub struct Generated {
    pub robot: Robot,
    pub source: String,
    /// Wall time of derivation and emission (s).
    pub seconds: f64,
}

impl Generated {
    pub fn lines(&self) -> usize {
        self.source.lines().count()
    }
}

#[derive(Debug)]
pub enum GenerateError {
    Io { path: PathBuf, error: std::io::Error },
    Spec(SpecErrors),
    Emit { path: String, message: String },
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            GenerateError::Spec(e) => write!(f, "{e}"),
            GenerateError::Emit { path, message } => write!(f, "{path}: code generation failed: {message}"),
        }
    }
}

impl std::error::Error for GenerateError {}

/// Validates, derives and emits one spec. `path` names the spec in messages and in the
/// generated header.
/// Soft robots have no symbolic derivation (see `emit_soft`), so `Derived` is `None`.
pub fn generate_source(path: &str, text: &str) -> Result<(Generated, Option<Derived>), GenerateError> {
    let robot = load(path, text).map_err(GenerateError::Spec)?;
    let start = Instant::now();
    let emit_error = |message| GenerateError::Emit { path: path.to_string(), message };
    let (source, derived) = if robot.is_soft() {
        (emit_soft(&robot).map_err(emit_error)?, None)
    } else {
        let derived = derive(&robot);
        (emit(&robot, &derived).map_err(emit_error)?, Some(derived))
    };
    let seconds = start.elapsed().as_secs_f64();
    Ok((Generated { robot, source, seconds }, derived))
}

/// Reads a spec file and generates its module. `display_path` is the path written into the
/// header (relative to the workspace, so output does not depend on where it runs).
pub fn generate_file(spec: &Path, display_path: &str) -> Result<Generated, GenerateError> {
    let text = std::fs::read_to_string(spec).map_err(|error| GenerateError::Io { path: spec.to_path_buf(), error })?;
    generate_source(display_path, &text).map(|(g, _)| g)
}

/// The symbolic equations printed readably: coordinates, M (upper triangle), C qd, G.
pub fn symbolic_report(robot: &Robot, derived: &Derived) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", robot.name));
    for (i, c) in robot.coordinates.iter().enumerate() {
        out.push_str(&format!("q{i} = {} ({}), qd{i} its rate\n", c.name, c.meaning));
    }
    for p in &robot.parameters {
        out.push_str(&format!("p_{} = {} (default)\n", p.name, p.default));
    }
    out.push_str("\nT = ");
    out.push_str(&derived.kinetic_energy.to_string());
    out.push_str("\nV = ");
    out.push_str(&derived.potential_energy.to_string());
    out.push('\n');
    let n = robot.coordinates.len();
    out.push_str("\nM (upper triangle)\n");
    for i in 0..n {
        for j in i..n {
            out.push_str(&format!("M[{i}][{j}] = {}\n", derived.mass_matrix[i][j]));
        }
    }
    out.push_str("\nC(q, qd) qd\n");
    for i in 0..n {
        out.push_str(&format!("Cqd[{i}] = {}\n", derived.coriolis[i]));
    }
    out.push_str("\nG\n");
    for i in 0..n {
        out.push_str(&format!("G[{i}] = {}\n", derived.gravity[i]));
    }
    out
}
