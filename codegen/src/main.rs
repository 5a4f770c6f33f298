//! `softgen-codegen`: regenerates each robot's crate generated/robots/<robot>/ (its module
//! src/lib.rs and its Cargo.toml) and app crate generated/apps/<robot>/ from every
//! model-specs/<robot>.toml, the scaling fixtures' crates (generated/fixtures/snake_links_<N>/),
//! and the crates around them (generated/Cargo.toml and generated/src/lib.rs: the robots
//! re-exported and the registry; generated/apps/: the apps by name),
//! or checks that the committed files are up to date (`--check`), or only validates specs
//! (`--validate`: no symbolica, nothing written), or writes the modules of given specs into a
//! crate of the user's own (`--out DIR`), or reports the committed modules' lines by kind of
//! kernel against their size budget (`--sizes`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage: softgen-codegen [--check | --validate] [--root DIR] [SPEC.toml ...]
       softgen-codegen [--check] --out DIR SPEC.toml ...
       softgen-codegen --sizes [--root DIR]

Regenerates each spec's crate generated/robots/<robot>/ (Cargo.toml and src/lib.rs, its module)
and app crate generated/apps/<robot>/ (default: every model-specs/*.toml, and the scaling
fixtures' crates in generated/fixtures/) and the crates around them: generated/Cargo.toml and
generated/src/lib.rs, the registry of every robot, and generated/apps/, their apps by name.

--check      compare instead of writing; exit 1 if anything differs.
--validate   only parse and validate the specs (every error with file, line and field); write nothing.
--root DIR   the softgen workspace to read model-specs/ from and write generated/ into
             (default: the one this binary was built from).
--out DIR    write DIR/<robot>.rs for each SPEC, a module that depends on softgen-runtime
             alone, for a crate of your own (include it with `mod <robot>;`); no registry.
--sizes      report each committed robot's and fixture's module by kind of kernel (lines, count)
             against its size budget in codegen/size-budget.toml; exit 1 if one is over.";

/// The workspace this binary was built from.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// What to generate: a spec file, or the scaling fixture of so many links.
#[derive(Clone, Copy)]
enum Job<'a> {
    Spec(&'a PathBuf),
    Fixture(usize),
}

/// The command line, parsed.
struct Options {
    check: bool,
    validate_only: bool,
    sizes: bool,
    root: Option<PathBuf>,
    out: Option<PathBuf>,
    specs: Vec<PathBuf>,
}

fn parse_options() -> Result<Option<Options>, String> {
    let mut options =
        Options { check: false, validate_only: false, sizes: false, root: None, out: None, specs: Vec::new() };
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            options.specs.push(PathBuf::from(arg));
            continue;
        };
        match text {
            "--check" => options.check = true,
            "--validate" => options.validate_only = true,
            "--sizes" => options.sizes = true,
            "--root" | "--out" => {
                let value = args.next().ok_or_else(|| format!("{text} needs a directory"))?;
                let slot = if text == "--root" { &mut options.root } else { &mut options.out };
                if slot.replace(PathBuf::from(value)).is_some() {
                    return Err(format!("{text} given twice"));
                }
            }
            "-h" | "--help" => return Ok(None),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}` (see --help)")),
            _ => options.specs.push(PathBuf::from(arg)),
        }
    }
    if options.sizes && (options.check || options.validate_only || options.out.is_some() || !options.specs.is_empty()) {
        return Err("--sizes reads the committed modules; it takes only --root".into());
    }
    if options.out.is_some() {
        if options.specs.is_empty() {
            return Err("--out needs the specs to generate: softgen-codegen --out DIR SPEC.toml ...".into());
        }
        if options.root.is_some() || options.validate_only {
            return Err("--out writes only the given specs' modules; it takes neither --root nor --validate".into());
        }
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(out) = &options.out {
        return out_of_tree(out, &options.specs, options.check);
    }
    let Options { check, validate_only, sizes, root, mut specs, .. } = options;
    let root = root.unwrap_or_else(workspace_root);
    if !root.join("model-specs").is_dir() || !root.join("generated/src").is_dir() {
        eprintln!("error: {} is not a softgen workspace (no model-specs/ or generated/src/); use --out DIR for a crate of your own", root.display());
        return ExitCode::from(2);
    }
    if sizes {
        return size_report(&root);
    }
    // The size budget, to say when a module just generated is over it (a workspace without
    // the file has no budget to hold).
    let budget_path = root.join(softgen_codegen::SIZE_BUDGET_PATH);
    let budget = match budget_path.exists().then(|| softgen_codegen::SizeBudget::load(&budget_path)).transpose() {
        Ok(budget) => budget,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
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
    let mut generated_robots = Vec::new();
    let jobs = specs.iter().map(Job::Spec).chain(fixtures.iter().map(|&links| Job::Fixture(links)));
    for job in jobs {
        let result = match job {
            Job::Spec(spec) => softgen_codegen::generate_file(spec, &display_path(&root, spec)),
            Job::Fixture(links) => softgen_codegen::generate_fixture(links),
        };
        let generated = match result {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let target = root.join(softgen_codegen::robot_module_path(&generated.robot.name));
        if matches!(job, Job::Spec(_)) {
            generated_robots.push(generated.robot.clone());
        }
        println!(
            "{:<28} {:>7.2} s codegen  {:>6} lines  {:>8} bytes  ({})",
            generated.robot.name,
            generated.seconds(),
            generated.lines(),
            generated.source.len(),
            generated.times
        );
        if let Some(over) = budget.as_ref().and_then(|b| over_budget(&generated.robot.name, &generated.source, b)) {
            println!("warning: {over}");
        }
        if let Err(e) = update(&target, &generated.source, check, &mut stale) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    // The robots' manifests and the generated crate around them: its manifest, and its
    // lib.rs with the registry of every robot.
    let files = registry(&root, generated_robots);
    if let Err(e) = files.and_then(|(files, modules)| {
        for (path, source) in files {
            update(&root.join(path), &source, check, &mut stale)?;
        }
        remove_orphans(&root, &modules, check, &mut stale)
    }) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    finish(&stale, Some("run `cargo run -p softgen-codegen`"))
}

/// A module's lines against its budget: `None` within it, otherwise what to do about it.
fn over_budget(robot: &str, source: &str, budget: &softgen_codegen::SizeBudget) -> Option<String> {
    let structure = softgen_codegen::module_structure(source)?;
    let lines = source.lines().count();
    let (allowed, listed) = budget.allowed(robot, structure);
    (lines > allowed).then(|| {
        let whose = if listed {
            "its own".to_string()
        } else {
            format!(
                "the default's for {} coordinates and {} contact points",
                structure.coordinates, structure.contact_points
            )
        };
        format!(
            "{robot}: {} lines, over its budget of {} lines ({whose}) in {}; make the module smaller, or list the \
             robot there with the lines it needs and say why in the commit",
            thousands(lines),
            thousands(allowed),
            softgen_codegen::SIZE_BUDGET_PATH
        )
    })
}

/// A count with thousands separated by commas, as the book's tables print them.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `--sizes`: every robot's and fixture's module with its structure, lines and budget, and
/// the kinds of kernel that make up most of it; exit 1 if a module is over its budget or the
/// budget lists a robot that has no module.
fn size_report(root: &Path) -> ExitCode {
    let budget = match softgen_codegen::SizeBudget::load(&root.join(softgen_codegen::SIZE_BUDGET_PATH)) {
        Ok(budget) => budget,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Each crate's folder, with its name, in name order (a workspace without scaling fixtures
    // has no fixtures' folder).
    let mut modules: Vec<(String, PathBuf)> = Vec::new();
    for crates in [softgen_codegen::ROBOT_CRATES, softgen_codegen::FIXTURE_CRATES] {
        match folder_entries(&root.join(crates)) {
            Ok(entries) => modules.extend(entries.into_iter().filter(|(_, path)| path.is_dir())),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    modules.sort();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    let mut total = 0;
    println!("{:<26} {:>11} {:>6} {:>9} {:>9}", "robot", "coordinates", "points", "lines", "budget");
    for (name, folder) in &modules {
        let path = folder.join("src/lib.rs");
        let source = match std::fs::read_to_string(&path) {
            Ok(source) => source,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        };
        let Some(structure) = softgen_codegen::module_structure(&source) else {
            problems.push(format!("{}: not a robot's module (no `pub const DOF`)", path.display()));
            continue;
        };
        let lines = source.lines().count();
        total += lines;
        let (allowed, listed) = budget.allowed(name, structure);
        println!(
            "{name:<26} {:>11} {:>6} {:>9} {:>9}{}",
            structure.coordinates,
            structure.contact_points,
            thousands(lines),
            thousands(allowed),
            if listed { "" } else { " (default)" }
        );
        // The kinds that make up most of the module: each a twentieth of it or more.
        for size in softgen_codegen::kernel_sizes(&source).iter().filter(|s| s.lines * 20 >= lines) {
            println!("    {:>9} {:>5}x {}", thousands(size.lines), size.items, size.kind);
        }
        problems.extend(over_budget(name, &source, &budget));
        names.push(name.clone());
    }
    println!("{:<26} {:>11} {:>6} {:>9}", "all modules", "", "", thousands(total));
    for listed in budget.robots.keys().filter(|robot| !names.contains(robot)) {
        problems.push(format!(
            "{}: lists `{listed}`, which has no crate in generated/robots/ or generated/fixtures/; remove it",
            softgen_codegen::SIZE_BUDGET_PATH
        ));
    }
    for problem in &problems {
        eprintln!("error: {problem}");
    }
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Success, or (`--check` found differences) every stale file and how to fix them.
fn finish(stale: &[PathBuf], fix: Option<&str>) -> ExitCode {
    if stale.is_empty() {
        return ExitCode::SUCCESS;
    }
    for s in stale {
        eprintln!("stale: {}", s.display());
    }
    if let Some(fix) = fix {
        eprintln!("generated code is out of date; {fix}");
    }
    ExitCode::FAILURE
}

/// `--out DIR`: each spec's module into DIR (created if missing), its header naming the
/// command that rewrites it.
fn out_of_tree(out: &Path, specs: &[PathBuf], check: bool) -> ExitCode {
    if !check {
        if let Err(e) = std::fs::create_dir_all(out) {
            eprintln!("error: {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    let slashes = |path: &Path| path.to_string_lossy().replace('\\', "/");
    let mut stale = Vec::new();
    for spec in specs {
        let regenerate = format!("softgen-codegen --out {} {}", slashes(out), slashes(spec));
        let generated = match softgen_codegen::generate_out_of_tree(spec, &slashes(spec), &regenerate) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let target = out.join(format!("{}.rs", generated.robot.name));
        println!(
            "{:<28} {:>7.2} s codegen  {:>6} lines  -> {}",
            generated.robot.name,
            generated.seconds(),
            generated.lines(),
            target.display()
        );
        if let Err(e) = update(&target, &generated.source, check, &mut stale) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    finish(&stale, None)
}

/// Writes `source` to `target` (and the folders it needs) when it differs, or (`check`)
/// records `target` as stale.
fn update(target: &Path, source: &str, check: bool, stale: &mut Vec<PathBuf>) -> Result<(), String> {
    let current = std::fs::read_to_string(target).unwrap_or_default();
    if current == source {
        return Ok(());
    }
    if check {
        stale.push(target.to_path_buf());
        return Ok(());
    }
    if let Some(folder) = target.parent() {
        std::fs::create_dir_all(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    std::fs::write(target, source).map_err(|e| format!("{}: {e}", target.display()))
}

/// The entries of folder `dir` with their names; none where it does not exist.
fn folder_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .map(|p| (p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default(), p))
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// Removes what codegen does not write: a robot's crate folder in generated/robots/ or app
/// crate folder in generated/apps/ that no spec generates any more, a folder in
/// generated/fixtures/ that is no scaling fixture's, and a module in generated/src/ or
/// generated/apps/src/ beside lib.rs (where robots' modules and apps' roots were before
/// each had a folder of its own); or (`check`) records them as stale.
fn remove_orphans(root: &Path, modules: &[String], check: bool, stale: &mut Vec<PathBuf>) -> Result<(), String> {
    let robot = |name: &str| modules.iter().any(|m| m == name) && !softgen_codegen::is_scaling_fixture(name);
    let mut orphans = Vec::new();
    for (name, path) in folder_entries(&root.join(softgen_codegen::ROBOT_CRATES))? {
        if path.is_dir() && !robot(&name) {
            orphans.push((path, "no spec generates it any more"));
        }
    }
    for (name, path) in folder_entries(&root.join(softgen_codegen::FIXTURE_CRATES))? {
        if path.is_dir() && !softgen_codegen::is_scaling_fixture(&name) {
            orphans.push((path, "no scaling fixture has that name"));
        }
    }
    for (name, path) in folder_entries(&root.join(softgen_codegen::APP_CRATES))? {
        if path.is_dir() && name != "src" && !robot(&name) {
            orphans.push((path, "no spec generates it any more"));
        }
    }
    for folder in ["generated/src".to_string(), format!("{}/src", softgen_codegen::APP_CRATES)] {
        for (name, path) in folder_entries(&root.join(folder))? {
            if name.ends_with(".rs") && name != "lib.rs" {
                orphans.push((path, "modules live in their crates' folders"));
            }
        }
    }
    for (path, why) in orphans {
        if check {
            stale.push(path);
            continue;
        }
        let removed = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
        removed.map_err(|e| format!("{}: {e}", path.display()))?;
        println!("removed {} ({why})", path.display());
    }
    Ok(())
}

/// The robots' manifests, generated/Cargo.toml and generated/src/lib.rs for every spec of
/// model-specs/ (the ones just generated as they were generated, which includes any named on
/// the command line) and the scaling fixtures, and the names of the robots' crates.
fn registry(
    root: &Path,
    generated: Vec<softgen_codegen::Robot>,
) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let mut robots = generated;
    for spec in softgen_codegen_specs(root)? {
        // A spec's robot is named by its file stem: the ones just generated are not loaded again.
        let stem = spec.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        if !robots.iter().any(|r| r.name == stem) {
            robots.push(softgen_codegen::load_file(&spec, &display_path(root, &spec)).map_err(|e| e.to_string())?);
        }
    }
    let fixtures = softgen_codegen::SCALING_LINKS
        .iter()
        .map(|&links| softgen_codegen::fixture_robot(links))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let modules = robots.iter().chain(&fixtures).map(|r| r.name.clone()).collect();
    let files = softgen_codegen::workspace_files(&robots, &fixtures, root).map_err(|e| e.to_string())?;
    Ok((files, modules))
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
