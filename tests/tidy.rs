//! The house kept by test, as rust-analyzer's tidy does: the layer order of the runtime and
//! of the CLI's library, robot names only where robots live, every folder of source in
//! ARCHITECTURE.md's code map, every source file saying what it is for, every crate written
//! by hand naming its own profiles, and rustfmt's layout. Each check reads the tree as it is on disk and
//! names every place that breaks its rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file below `dir` (relative to the root), in path order.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The code of a file without its comments, so prose may name what code may not.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file reaches through `crate::` paths, groups included
/// (`use crate::{a::b, c}` reaches `a` and `c`).
fn crate_modules(text: &str) -> BTreeSet<String> {
    let code = code_of(text);
    let mut modules = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Only the top level of the group names modules: skip nested braces' contents.
            let mut depth = 0;
            let mut item = String::new();
            for c in group[..end].chars().chain([',']) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let head: String =
                            item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if !head.is_empty() {
                            modules.insert(head);
                        }
                        item.clear();
                    }
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
        } else {
            let head: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !head.is_empty() {
                modules.insert(head);
            }
        }
    }
    modules
}

/// Checks that every file under `src_dir/<layer>/` reaches only its own layer and the ones
/// before it in `layers` (through `crate::`), and that every folder there is a layer.
fn check_layers(src_dir: &str, layers: &[&str], exempt: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(root().join(src_dir)).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_dir() && !layers.contains(&name.as_str()) && !exempt.contains(&name.as_str()) {
            problems.push(format!("{src_dir}/{name}/ is not in the layer order {layers:?}: place it"));
        }
    }
    for (position, layer) in layers.iter().enumerate() {
        for file in rust_files(&format!("{src_dir}/{layer}")) {
            for module in crate_modules(&read(&file)) {
                match layers.iter().position(|l| *l == module) {
                    Some(p) if p > position => problems.push(format!(
                        "{} (layer `{layer}`) uses `crate::{module}`, a later layer; the order is {layers:?}",
                        file.display()
                    )),
                    _ => {}
                }
            }
        }
    }
    problems
}

/// The runtime's layers, each using only those before it.
const RUNTIME_LAYERS: &[&str] = &[
    "quantities",
    "soft",
    "environment",
    "actuators",
    "robot",
    "integration",
    "control",
    "simulation",
    "optimal_control",
    "estimation",
    "hardware",
];

/// The CLI library's layers, each using only those before it; the binary (`main.rs`, `cli/`,
/// `bin/`) uses the library through its public items.
const CLI_LAYERS: &[&str] = &["support", "simulate", "hardware", "papers", "sweep"];

#[test]
fn runtime_layers_use_only_the_layers_before_them() {
    let problems = check_layers("runtime/src", RUNTIME_LAYERS, &[]);
    assert!(problems.is_empty(), "runtime layering:\n{}", problems.join("\n"));
}

#[test]
fn cli_library_layers_use_only_the_layers_before_them() {
    let mut problems = check_layers("src", CLI_LAYERS, &["cli", "bin"]);
    // The binary's files are not part of the library: they reach it as `softgen::`.
    for file in rust_files("src/cli").into_iter().chain(rust_files("src/bin")) {
        let modules = crate_modules(&read(&file));
        let library: Vec<&String> = modules.iter().filter(|m| CLI_LAYERS.contains(&m.as_str())).collect();
        if !library.is_empty() {
            problems.push(format!("{} reaches the library's {library:?} through `crate::`", file.display()));
        }
    }
    assert!(problems.is_empty(), "CLI layering:\n{}", problems.join("\n"));
}

/// The robots of model-specs/: each spec's file stem and its type's name.
fn robot_names() -> Vec<String> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("model-specs")).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().to_string();
        if let Some(stem) = file.strip_suffix(".run.toml").or_else(|| file.strip_suffix(".toml")) {
            names.insert(stem.to_string());
            let camel: String =
                stem.split('_').filter(|s| !s.is_empty()).map(|s| s[..1].to_ascii_uppercase() + &s[1..]).collect();
            names.insert(camel);
        }
    }
    names.into_iter().collect()
}

/// Where `word` stands in `text` as a whole word, other than as a path segment right after
/// `papers::` (a reference into the robot's own paper folder).
fn named_at(text: &str, word: &str) -> Vec<usize> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(i) = line[from..].find(word) {
            let start = from + i;
            let end = start + word.len();
            let before = line[..start].chars().next_back();
            let after = line[end..].chars().next();
            let whole = !before.is_some_and(is_word) && !after.is_some_and(is_word);
            if whole && !line[..start].ends_with("papers::") {
                lines.push(n + 1);
                break;
            }
            from = end;
        }
    }
    lines
}

#[test]
fn robot_names_appear_only_where_robots_live() {
    // Robots live in model-specs/, generated/, src/papers/, tests/ (and each crate's
    // tests/), benches/ (measurements of named robots) and examples/. Everything else is
    // generic and reaches a robot through the registries.
    let generic: Vec<PathBuf> = ["src", "runtime/src", "codegen/src", "comedi/src", "python/src"]
        .iter()
        .flat_map(|d| rust_files(d))
        .filter(|f| !f.starts_with("src/papers"))
        .collect();
    let names = robot_names();
    let mut problems = Vec::new();
    for file in &generic {
        let text = read(file);
        for name in &names {
            for line in named_at(&text, name) {
                problems.push(format!("{}:{line} names the robot `{name}`", file.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "robot names outside the places robots live (move the code to src/papers/<paper>/ and \
         register it, or reach the robot through the registry):\n{}",
        problems.join("\n")
    );
}

/// The crates whose every folder of source the code map names, by the heading of their
/// section. The map goes by folder: each file says what it is for in its own `//!` line.
const CODE_MAP: &[(&str, &str)] = &[
    ("codegen/src", "### `codegen/`"),
    ("runtime/src", "### `runtime/`"),
    ("src", "### `src/`"),
    ("python/src", "### `python/`"),
    ("comedi/src", "### `examples/two_link_arm/`"),
    ("examples/two_link_arm/src", "### `examples/two_link_arm/`"),
];

#[test]
fn every_source_folder_is_in_the_code_map() {
    let architecture = read(Path::new("ARCHITECTURE.md"));
    let mut problems = Vec::new();
    for (dir, heading) in CODE_MAP {
        let Some(start) = architecture.find(heading) else {
            problems.push(format!("ARCHITECTURE.md has no section `{heading}`"));
            continue;
        };
        let after = &architecture[start + heading.len()..];
        let end = after.find("\n### ").or_else(|| after.find("\n## ")).unwrap_or(after.len());
        let section = &after[..end];
        // Each first-level folder that holds source, directly or below: `validate/`, `papers/`.
        let folders: BTreeSet<String> = rust_files(dir)
            .iter()
            .filter_map(|file| {
                let relative = file.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                relative.split_once('/').map(|(folder, _)| format!("{folder}/"))
            })
            .collect();
        for folder in folders {
            if !section.contains(&format!("`{folder}`")) {
                problems.push(format!("{dir}/{folder}: the folder `{folder}` is not in the code map under {heading}"));
            }
        }
    }
    assert!(problems.is_empty(), "ARCHITECTURE.md's code map misses:\n{}", problems.join("\n"));
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let dirs = ["src", "runtime", "codegen", "comedi", "python", "generated", "tests", "benches", "examples"];
    let mut problems = Vec::new();
    for dir in dirs {
        for file in rust_files(dir) {
            if file.components().any(|c| c.as_os_str() == "target") {
                continue;
            }
            if !read(&file).starts_with("//!") {
                problems.push(format!("{} does not open with a `//!` line saying what it is for", file.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_hand_written_crate_names_its_profiles() {
    // The profiles' defaults are the generated robots' crates' (so a robot added by its spec
    // alone gets them): every crate written by hand names its own, in dev and in release.
    let manifest: toml::Value = toml::from_str(&read(Path::new("Cargo.toml"))).unwrap();
    let mut packages = vec!["softgen".to_string()];
    for member in manifest["workspace"]["members"].as_array().unwrap() {
        let member = member.as_str().unwrap();
        if member == "generated" || member.starts_with("generated/") {
            continue;
        }
        let own: toml::Value = toml::from_str(&read(&Path::new(member).join("Cargo.toml"))).unwrap();
        packages.push(own["package"]["name"].as_str().unwrap().to_string());
    }
    let mut problems = Vec::new();
    for profile in ["dev", "release"] {
        let named = manifest["profile"][profile].get("package").and_then(|p| p.as_table());
        for package in &packages {
            if !named.is_some_and(|n| n.contains_key(package)) {
                problems.push(format!("[profile.{profile}.package.{package}]"));
            }
        }
        if !named.is_some_and(|n| n.contains_key("*")) {
            problems.push(format!("[profile.{profile}.package.\"*\"] (the dependencies)"));
        }
    }
    assert!(
        problems.is_empty(),
        "Cargo.toml's profiles set what the generated crates need by default; these crates \
         written by hand are missing their own settings:\n{}",
        problems.join("\n")
    );
}

#[test]
fn rustfmt_finds_nothing_to_change() {
    // rustfmt.toml at the root holds the layout; generated/src/rustfmt.toml turns formatting off
    // for codegen's output, which prettyplease lays out.
    let output = Command::new(env!("CARGO"))
        .args(["fmt", "--all", "--", "--check", "-l"])
        .current_dir(root())
        .output()
        .expect("cargo fmt runs (rustup component add rustfmt)");
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "files rustfmt would change (fix: cargo fmt --all):\n{listed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
