//! The generator's entry points: spec text to generated Rust source with the time of each
//! stage, whole spec directories to generated/, and a readable report of the equations.

use crate::algorithms::recursive::equations;
use crate::dag::differentiate::derivatives;
use crate::dag::equations::Equations;
#[cfg(feature = "oracle")]
use crate::derive::{derive, Derived};
use crate::emit::{emit, format_module};
use crate::model::Robot;
use crate::registry::{
    app_manifest, app_manifest_path, app_source, app_source_path, apps_library_source, apps_manifest,
    generated_manifest, library_source, robot_manifest, robot_manifest_path, RegistryEntry, APP_CRATES,
};
use crate::scaling::{planar_snake_spec, scaling_name, scaling_origin, SCALING_LINKS};
use crate::spec::validate::{load, SpecErrors};
use crate::symbolic::local::links;
#[cfg(feature = "oracle")]
use crate::symbolic::local::local_report;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Whether `path` is a robot spec: a `.toml` file in model-specs/ that is not a run
/// configuration (`<robot>.run.toml`).
pub fn is_spec_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    name.ends_with(".toml") && !name.ends_with(".run.toml")
}

/// Wall time of each codegen stage (s), so the next bottleneck is visible.
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    /// Parse and validate the spec.
    pub validate: f64,
    /// Local pieces with symbolica, then the recursive algorithms into the DAG.
    pub derive: f64,
    /// Partial derivatives of the inverse dynamics, in the DAG.
    pub derivatives: f64,
    /// DAG to Rust tokens (common subexpressions, the transcendental cache).
    pub emit: f64,
    /// Tokens to formatted source (syn, prettyplease).
    pub format: f64,
}

impl StageTimes {
    pub fn total(&self) -> f64 {
        self.validate + self.derive + self.derivatives + self.emit + self.format
    }
}

impl fmt::Display for StageTimes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "validate {:.3} s, derive {:.3} s, derivatives {:.3} s, emit {:.3} s, format {:.3} s",
            self.validate, self.derive, self.derivatives, self.emit, self.format
        )
    }
}

/// One robot's generated module and the figures we track about it.
pub struct Generated {
    pub robot: Robot,
    pub source: String,
    pub times: StageTimes,
}

impl Generated {
    pub fn lines(&self) -> usize {
        self.source.lines().count()
    }

    /// Wall time of all stages (s).
    pub fn seconds(&self) -> f64 {
        self.times.total()
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
pub fn generate_source(path: &str, text: &str) -> Result<Generated, GenerateError> {
    let start = Instant::now();
    let robot = load(path, text).map_err(GenerateError::Spec)?;
    let validate = start.elapsed().as_secs_f64();
    generate_robot(robot, validate)
}

/// The scaling fixture of `links` links (see [`planar_snake_spec`]).
pub fn generate_fixture(links: usize) -> Result<Generated, GenerateError> {
    let start = Instant::now();
    let robot = fixture_robot(links)?;
    let validate = start.elapsed().as_secs_f64();
    generate_robot(robot, validate)
}

/// The scaling fixture of `links` links, validated, not derived.
pub fn fixture_robot(links: usize) -> Result<Robot, GenerateError> {
    let mut robot =
        load(&format!("{}.toml", scaling_name(links)), &planar_snake_spec(links)).map_err(GenerateError::Spec)?;
    robot.spec_path = scaling_origin(links);
    Ok(robot)
}

/// What codegen writes into a softgen workspace besides the robots' modules, as (path
/// relative to the workspace, contents): each robot's crate's manifest, generated/Cargo.toml
/// and generated/src/lib.rs, each robot's app crate and softgen-apps (the registry module
/// writes them), for these robots of model-specs/ and
/// the scaling fixtures; `root` is the workspace the robots' spec paths are relative to.
pub fn workspace_files(
    robots: &[Robot],
    fixtures: &[Robot],
    root: &Path,
) -> Result<Vec<(String, String)>, GenerateError> {
    let entries: Vec<RegistryEntry> = robots
        .iter()
        .map(|robot| RegistryEntry::robot(robot, root))
        .chain(fixtures.iter().map(RegistryEntry::fixture))
        .collect();
    let emit_error = |path: &'static str| move |message| GenerateError::Emit { path: path.into(), message };
    let mut files: Vec<(String, String)> =
        entries.iter().map(|entry| (robot_manifest_path(&entry.name), robot_manifest(entry))).collect();
    files.push((
        "generated/Cargo.toml".into(),
        generated_manifest(&entries).map_err(emit_error("generated/Cargo.toml"))?,
    ));
    files.push(("generated/src/lib.rs".into(), library_source(&entries).map_err(emit_error("generated/src/lib.rs"))?));
    for entry in entries.iter().filter(|entry| entry.feature.is_none()) {
        files.push((app_manifest_path(&entry.name), app_manifest(entry)));
        let path = app_source_path(&entry.name);
        let source = app_source(entry).map_err(|message| GenerateError::Emit { path: path.clone(), message })?;
        files.push((path, source));
    }
    files.push((
        format!("{APP_CRATES}/Cargo.toml"),
        apps_manifest(&entries).map_err(emit_error("generated/apps/Cargo.toml"))?,
    ));
    files.push((
        format!("{APP_CRATES}/src/lib.rs"),
        apps_library_source(&entries).map_err(emit_error("generated/apps/src/lib.rs"))?,
    ));
    Ok(files)
}

fn generate_robot(robot: Robot, validate: f64) -> Result<Generated, GenerateError> {
    let mut times = StageTimes { validate, ..StageTimes::default() };
    let path = robot.spec_path.clone();
    let emit_error = |message| GenerateError::Emit { path: path.to_string(), message };
    let start = Instant::now();
    let mut equations = recursive_equations(&robot).map_err(emit_error)?;
    times.derive = start.elapsed().as_secs_f64();
    let start = Instant::now();
    equations.derivatives = Some(derivatives(&mut equations).map_err(emit_error)?);
    times.derivatives = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let tokens = emit(&robot, &equations).map_err(emit_error)?;
    times.emit = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let source = format_module(&robot, tokens).map_err(emit_error)?;
    times.format = start.elapsed().as_secs_f64();
    Ok(Generated { robot, source, times })
}

/// Reads and validates a spec file without deriving anything (no symbolica): what
/// `softgen-codegen --validate` runs. `display_path` names the spec in messages.
pub fn load_file(spec: &Path, display_path: &str) -> Result<Robot, GenerateError> {
    let text = read_spec(spec, display_path)?;
    let folder = spec.parent().unwrap_or(Path::new(""));
    crate::spec::validate::load_in(display_path, &text, folder).map_err(GenerateError::Spec)
}

/// Reads a spec file and generates its module for a crate of the user's own (written by
/// `softgen-codegen --out DIR`): the same module, whose header names `regenerate` as the
/// command that rewrites it. It depends on softgen-runtime alone.
pub fn generate_out_of_tree(spec: &Path, display_path: &str, regenerate: &str) -> Result<Generated, GenerateError> {
    generate_spec_file(spec, display_path, regenerate)
}

/// Reads a spec file and generates its module. `display_path` is the path written into the
/// header (relative to the workspace, so output does not depend on where it runs).
pub fn generate_file(spec: &Path, display_path: &str) -> Result<Generated, GenerateError> {
    generate_spec_file(spec, display_path, crate::spec::validate::IN_TREE_COMMAND)
}

/// A spec file's module, its header naming `regenerate` as the command that rewrites it.
fn generate_spec_file(spec: &Path, display_path: &str, regenerate: &str) -> Result<Generated, GenerateError> {
    let start = Instant::now();
    let mut robot = load_file(spec, display_path)?;
    robot.regenerate = regenerate.to_string();
    let validate = start.elapsed().as_secs_f64();
    generate_robot(robot, validate)
}

/// A spec file's text, refused when it is larger than the limit, not UTF-8, or named like a
/// scaling fixture's module.
fn read_spec(spec: &Path, display_path: &str) -> Result<String, GenerateError> {
    if spec.to_string_lossy().ends_with(".run.toml") {
        return Err(GenerateError::Emit {
            path: display_path.to_string(),
            message:
                "this is a run configuration (<robot>.run.toml), not a robot spec; softgen run reads it with --config"
                    .into(),
        });
    }
    // Read at most one byte past the limit, so that a huge file is refused without being
    // loaded.
    let file = std::fs::File::open(spec).map_err(|error| GenerateError::Io { path: spec.to_path_buf(), error })?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, crate::spec::validate::MAX_SPEC_BYTES as u64 + 1),
        &mut bytes,
    )
    .map_err(|error| GenerateError::Io { path: spec.to_path_buf(), error })?;
    if bytes.len() > crate::spec::validate::MAX_SPEC_BYTES {
        return Err(GenerateError::Emit {
            path: display_path.to_string(),
            message: format!("the spec is more than {} bytes, the limit", crate::spec::validate::MAX_SPEC_BYTES),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| GenerateError::Io {
        path: spec.to_path_buf(),
        error: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")),
    })?;
    let stem = spec.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    if SCALING_LINKS.iter().any(|&links| scaling_name(links) == stem) {
        return Err(GenerateError::Emit {
            path: display_path.to_string(),
            message: format!("`{stem}` is the name of a scaling fixture's generated module; rename the spec"),
        });
    }
    Ok(text)
}

/// A rigid robot's equations by the recursive algorithms over symbolica's local pieces (what
/// codegen emits).
pub fn recursive_equations(robot: &Robot) -> Result<Equations, String> {
    equations(robot, &links(robot))
}

/// A rigid robot's equations by whole-body symbolic expansion: every body's pose written
/// out in q from the base, M from its Jacobians, C from Christoffel symbols of M. Slow and
/// large past a dozen coordinates; kept as the independent oracle the recursive path is
/// tested against, and for the readable equations report.
#[cfg(feature = "oracle")]
pub fn expanded_equations(robot: &Robot) -> Result<(Derived, Equations), String> {
    let derived = derive(robot);
    let equations = Equations::from_expanded(robot, &derived)?;
    Ok((derived, equations))
}

/// The equations printed readably: the local pieces codegen composes, then (from the
/// whole-body expansion) coordinates, T, V, M (upper triangle), C qd and G.
#[cfg(feature = "oracle")]
pub fn symbolic_report(robot: &Robot, derived: &Derived) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", robot.name));
    for (i, c) in robot.coordinates.iter().enumerate() {
        out.push_str(&format!("q{i} = {} ({}), qd{i} its rate\n", c.name, c.meaning));
    }
    for p in &robot.parameters {
        out.push_str(&format!("p_{} = {} (default)\n", p.name, p.default));
    }
    out.push('\n');
    out.push_str(&local_report(robot, &links(robot)));
    out.push_str("\nWhole-body expansion (the test oracle)\n");
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
