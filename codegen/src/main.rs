//! `softgen-codegen`: regenerates generated/src/<robot>.rs from every model-specs/<robot>.toml
//! and the scaling fixtures (generated/src/snake_links_<N>.rs), or checks that the committed
//! files are up to date (`--check`), or only validates specs (`--validate`: no symbolica, nothing
//! written).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// What to generate: a spec file, or the scaling fixture of so many links.
enum Job<'a> {
    Spec(&'a PathBuf),
    Fixture(usize),
}

fn main() -> ExitCode {
    let mut check = false;
    let mut validate_only = false;
    let mut specs: Vec<PathBuf> = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            "--validate" => validate_only = true,
            "-h" | "--help" => {
                println!("usage: softgen-codegen [--check | --validate] [SPEC.toml ...]\n\nRegenerates generated/src/<robot>.rs for each spec (default: every model-specs/*.toml and the scaling fixtures).\n--check     compare instead of writing; exit 1 if anything differs.\n--validate  only parse and validate the specs (every error with file, line and field); write nothing.");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => {
                eprintln!("error: unknown option `{s}` (see --help)");
                return ExitCode::from(2);
            }
            s => specs.push(PathBuf::from(s)),
        }
    }
    let root = workspace_root();
    let fixtures: &[usize] = if specs.is_empty() { &softgen_codegen::SCALING_LINKS } else { &[] };
    if specs.is_empty() {
        match softgen_codegen_specs(&root) {
            Ok(s) => specs = s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if validate_only {
        return validate(&root, &specs);
    }
    let mut stale = Vec::new();
    let jobs = specs.iter().map(Job::Spec).chain(fixtures.iter().map(|&links| Job::Fixture(links)));
    for job in jobs {
        let result = match job {
            Job::Spec(spec) => {
                softgen_codegen::generate_file(spec, &display_path(&root, spec))
            }
            Job::Fixture(links) => softgen_codegen::generate_fixture(links),
        };
        let generated = match result {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let target = root.join("generated/src").join(format!("{}.rs", generated.robot.name));
        println!(
            "{:<28} {:>7.2} s codegen  {:>6} lines  {:>8} bytes  ({})",
            generated.robot.name,
            generated.seconds(),
            generated.lines(),
            generated.source.len(),
            generated.times
        );
        let current = std::fs::read_to_string(&target).unwrap_or_default();
        if current == generated.source {
            continue;
        }
        if check {
            stale.push(target);
        } else if let Err(e) = std::fs::write(&target, &generated.source) {
            eprintln!("error: {}: {e}", target.display());
            return ExitCode::FAILURE;
        }
    }
    if !stale.is_empty() {
        for s in &stale {
            eprintln!("stale: {}", s.display());
        }
        eprintln!("generated code is out of date; run `cargo run -p softgen-codegen`");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// A spec's path relative to the workspace when it lies inside it, with forward slashes (the
/// generated header must not depend on where codegen runs).
fn display_path(root: &Path, spec: &Path) -> String {
    let display = spec
        .canonicalize()
        .ok()
        .and_then(|p| p.strip_prefix(root.canonicalize().ok()?).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| spec.to_path_buf());
    display.to_string_lossy().replace('\\', "/")
}

/// `--validate`: every spec parsed and checked, a one-line summary of each good one, every
/// error of each bad one; exit 1 if any is bad.
fn validate(root: &Path, specs: &[PathBuf]) -> ExitCode {
    let mut bad = 0;
    for spec in specs {
        match softgen_codegen::load_file(spec, &display_path(root, spec)) {
            Ok(robot) => println!(
                "{}: ok ({} coordinates, {} bodies, {} contact points, {} parameters)",
                robot.name,
                robot.coordinates.len(),
                robot.bodies.len(),
                robot.contact_points.len(),
                robot.parameters.len()
            ),
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn softgen_codegen_specs(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = root.join("model-specs");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| softgen_codegen::is_spec_file(p))
        .collect();
    specs.sort();
    Ok(specs)
}
