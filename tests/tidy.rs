//! The house kept by test, as rust-analyzer's tidy does: the layer order of the runtime and
//! of the CLI's library, robot names only where robots live, every folder of source in
//! ARCHITECTURE.md's code map, every source file saying what it is for, every crate written
//! by hand naming its own profiles, no import cycle between a crate's files, no hand-written
//! function over 150 lines or file over 1,000 without a listed reason, and rustfmt's layout.
//! Each check reads the tree as it is on disk and names every place that breaks its rule.

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

/// The generic application's layers, each using only those before it; `robot_app.rs` at its
/// root, which compiles them for a robot, uses them all.
const APP_LAYERS: &[&str] = &["support", "simulate", "run"];

/// The CLI library's layers, each using only those before it; the binary (`main.rs`, `cli/`,
/// `bin/`) uses the library through its public items.
const CLI_LAYERS: &[&str] = &["papers", "sweep"];

#[test]
fn runtime_layers_use_only_the_layers_before_them() {
    let problems = check_layers("runtime/src", RUNTIME_LAYERS, &[]);
    assert!(problems.is_empty(), "runtime layering:\n{}", problems.join("\n"));
}

#[test]
fn app_layers_use_only_the_layers_before_them() {
    let problems = check_layers("app/src", APP_LAYERS, &[]);
    assert!(problems.is_empty(), "app layering:\n{}", problems.join("\n"));
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

/// Where `word` stands in `text` as a whole word. A path into a paper's folder
/// (`papers::<robot>::`) counts too: generic code reaches a paper through the registry, and
/// only the papers' own folder names them.
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
            if whole {
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
    let generic: Vec<PathBuf> = ["src", "app/src", "runtime/src", "codegen/src", "comedi/src", "python/src"]
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

/// Where a seed paper's id (`NNN_` and sixteen hex digits) stands in `text` outside
/// comments: the line numbers.
fn seed_ids_in_code(text: &str) -> Vec<usize> {
    let is_hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").as_bytes();
        let found = (0..code.len().saturating_sub(19)).any(|i| {
            let id = &code[i..i + 20];
            let bounded = i == 0 || !(code[i - 1].is_ascii_alphanumeric() || code[i - 1] == b'_');
            bounded && id[..3].iter().all(u8::is_ascii_digit) && id[3] == b'_' && id[4..].iter().all(|c| is_hex(*c))
        });
        if found {
            lines.push(n + 1);
        }
    }
    lines
}

#[test]
fn seed_ids_appear_in_code_only_where_papers_live() {
    // A comment may cite the paper a law comes from; code that carries a paper's id is that
    // paper's, and lives in src/papers/<paper>/, reached through the registry.
    let mut problems = Vec::new();
    for dir in ["src", "app/src", "runtime/src", "codegen/src", "comedi/src", "python/src"] {
        for file in rust_files(dir).into_iter().filter(|f| !f.starts_with("src/papers")) {
            for line in seed_ids_in_code(&read(&file)) {
                problems.push(format!("{}:{line} carries a seed paper's id", file.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "seed ids in generic code (move it to src/papers/<paper>/ and register it):\n{}",
        problems.join("\n")
    );
    assert_eq!(seed_ids_in_code("let seed = \"003_011ffa2a91e05fc5\";\n// 001_6780a70913e94322\n"), vec![1]);
}

/// The crates whose every folder of source the code map names, by the heading of their
/// section. The map goes by folder: each file says what it is for in its own `//!` line.
const CODE_MAP: &[(&str, &str)] = &[
    ("codegen/src", "### `codegen/`"),
    ("runtime/src", "### `runtime/`"),
    ("app/src", "### `app/`"),
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
    let dirs = ["src", "app", "runtime", "codegen", "comedi", "python", "generated", "tests", "benches", "examples"];
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
    // rustfmt.toml at the root holds the layout; the rustfmt.toml files in generated/ turn
    // formatting off for codegen's output, which prettyplease lays out.
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

/// The crates' source folders whose files must not import each other in a cycle.
const CRATE_SOURCES: &[&str] =
    &["runtime/src", "app/src", "src", "codegen/src", "comedi/src", "python/src", "examples/two_link_arm/src"];

/// A source file's module path inside its crate: `robot::model` for robot/model.rs and
/// `robot` for robot/mod.rs; the crate root (lib.rs, main.rs) is the empty path.
fn module_path(src_dir: &str, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src_dir).unwrap().with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().to_string()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod"))
        || (parts.len() == 1 && ["lib", "main"].contains(&parts[0].as_str()))
    {
        parts.pop();
    }
    parts
}

/// The paths a file's code names after `crate::`, `super::` or `self::`, groups expanded
/// (`use crate::a::{b::c, d}` names `a::b::c` and `a::d`), each made absolute from `module`.
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
    /// The paths of a use tree starting at `rest` (just after a `::`), with `prefix` before it.
    fn tree(rest: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        let mut rest = rest;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                // Split the group's top level by commas and read each item as a tree.
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            tree(&group[start..i], &path, out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            tree(&group[start..i], &path, out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let trimmed = rest.trim_start();
            let name: String = trimmed.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.is_empty() {
                break;
            }
            path.push(name.clone());
            rest = &trimmed[name.len()..];
            match rest.strip_prefix("::") {
                Some(after) => rest = after,
                None => break,
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let code = code_of(text);
    let mut out = Vec::new();
    // `super::` is the parent of the file's module (a folder's mod.rs is the folder's
    // module), `self::` the file's module itself.
    for (keyword, base) in [
        ("crate::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
        ("self::", module.to_vec()),
    ] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(keyword) {
            let preceded_by_path = rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            rest = &rest[i + keyword.len()..];
            if !preceded_by_path {
                tree(rest, &base, &mut out);
            }
        }
    }
    out
}

/// The strongly connected components of more than one module in `edges` (Tarjan's).
fn cycles(edges: &std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Search<'a> {
        edges: &'a std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: std::collections::BTreeMap<&'a Vec<String>, (usize, usize)>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    impl<'a> Search<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let order = self.index.len();
            self.index.insert(v, (order, order));
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                match self.index.get(w).copied() {
                    None => {
                        self.visit(w);
                        let low = self.index[w].1.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some((w_order, _)) if self.stack.contains(&w) => {
                        let low = w_order.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            let (order, low) = self.index[v];
            if order == low {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut search = Search { edges, index: Default::default(), stack: Vec::new(), found: Vec::new() };
    for v in edges.keys() {
        if !search.index.contains_key(v) {
            search.visit(v);
        }
    }
    search.found
}

/// Within each crate, no two source files import each other, directly or around a longer
/// loop: a file's imports name the files below it, so it can be read knowing only those
/// (rust-analyzer's and Pinocchio's rule). A file may use its own parent module's items (a
/// folder's mod.rs is the folder's front door); doc comments may name anything.
#[test]
fn no_source_file_imports_one_that_imports_it_back() {
    let mut problems = Vec::new();
    for src_dir in CRATE_SOURCES {
        let files = rust_files(src_dir);
        let modules: std::collections::BTreeMap<Vec<String>, &PathBuf> =
            files.iter().map(|f| (module_path(src_dir, f), f)).collect();
        let mut edges: std::collections::BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = Default::default();
        for (module, file) in &modules {
            let targets = edges.entry(module.clone()).or_default();
            for path in named_paths(&read(file), module) {
                // The longest prefix of the path that is a file's module: the file it imports.
                let Some(target) = (1..=path.len()).rev().map(|k| path[..k].to_vec()).find(|p| modules.contains_key(p))
                else {
                    continue;
                };
                // Itself, or a module it is inside of (its parent's items), is no import.
                if target != *module && !module.starts_with(&target) {
                    targets.insert(target);
                }
            }
        }
        for cycle in cycles(&edges) {
            let names: Vec<String> = cycle.iter().map(|m| modules[m].display().to_string()).collect();
            problems.push(format!("{src_dir}: these files import each other: {}", names.join(", ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles (move what both need into a file below both):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_check_finds_a_loop_and_reads_groups() {
    let module = vec!["hardware".to_string(), "run".to_string()];
    let paths = named_paths(
        "use crate::hardware::{sensing::Sensing, outputs::{finish, keep}};\nuse super::config::File; // crate::x\n",
        &module,
    );
    let text: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        text,
        [
            "hardware::sensing::Sensing",
            "hardware::outputs::finish",
            "hardware::outputs::keep",
            "hardware::config::File"
        ]
    );
    let edge = |a: &str, b: &str| (vec![a.to_string()], BTreeSet::from([vec![b.to_string()]]));
    let looped = std::collections::BTreeMap::from([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("d", "a")]);
    assert_eq!(cycles(&looped), vec![vec![vec!["a".to_string()], vec!["b".to_string()], vec!["c".to_string()]]]);
}

/// The folders of hand-written Rust whose functions and files are held to a length.
const HAND_WRITTEN: &[&str] = &[
    "src",
    "app/src",
    "runtime/src",
    "codegen/src",
    "codegen/tests",
    "comedi/src",
    "python/src",
    "generated/tests",
    "examples/two_link_arm/src",
    "examples/two_link_arm/tests",
    "tests",
    "benches",
];

/// Longest a hand-written function may be, in lines from `fn` to its closing brace.
const FUNCTION_LINES: usize = 150;
/// Longest a hand-written file may be, in lines.
const FILE_LINES: usize = 1000;

/// Hand-written functions longer than [`FUNCTION_LINES`], each with why: file, function, reason.
/// A function over the limit that is not listed fails tidy, and so does a listed one that is
/// no longer over it, so the list only shrinks.
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[(
    "runtime/src/simulation/system_jacobian.rs",
    "contact_jacobian",
    "the exact system Jacobian's contact sum (dF/dq, dF/dqd and F), one pass over the frames and their \
         points sharing the simulation's scratch buffers as the right-hand side's sum does: the stiff \
         integrators' hot path, so a cut is a change to bench before and after, not a tidy-up",
)];

/// Hand-written files longer than [`FILE_LINES`], each with why: file, reason. Checked as
/// [`LONG_FUNCTIONS`] is.
const LONG_FILES: &[(&str, &str)] = &[(
    "app/src/run/config.rs",
    "the run configuration's file format (each table's struct, whose doc comments the book's key reference \
         is generated from) and its parser, table by table; the planners' settings are their controllers'",
)];

/// A file's text with its comments, string literals and character literals blanked out
/// (newlines kept), so braces and `fn` are found in code alone. Lifetimes stay.
fn blank_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // The span [i, end) of a comment or literal starting here, if one does.
        let end = if c == '/' && next == Some('/') {
            let mut j = i;
            while j < chars.len() && chars[j] != '\n' {
                j += 1;
            }
            Some(j)
        } else if c == '/' && next == Some('*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < chars.len() && depth > 0 {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            Some(j)
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !is_identifier_char(chars.get(i.wrapping_sub(1)))
        {
            // A raw string r"..." or r#"..."#: ends at a quote followed by as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                j += 1;
                loop {
                    if j >= chars.len() {
                        break Some(j);
                    }
                    if chars[j] == '"' && (1..=hashes).all(|h| chars.get(j + h) == Some(&'#')) {
                        break Some(j + 1 + hashes);
                    }
                    j += 1;
                }
            } else {
                None
            }
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            Some(j + 1)
        } else if c == '\'' {
            // '\n', '\'', '\u{1F600}' or 'x' is a character; 'a (no closing quote) a lifetime.
            if next == Some('\\') {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                Some(j + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            }
        } else {
            None
        };
        match end {
            Some(end) => {
                let end = end.min(chars.len());
                out.extend(chars[i..end].iter().map(|&c| blank(c)));
                i = end;
            }
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

fn is_identifier_char(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Every function with a body in a file's code: its name, first line (1-based) and length in
/// lines from `fn` to its closing brace. Functions inside functions are listed too.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let code = blank_literals(text);
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut functions = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("fn ") {
        let at = from + found;
        from = at + 3;
        if at > 0 && is_identifier_char(code[..at].chars().last().as_ref()) {
            continue;
        }
        let name: String =
            code[at + 3..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration without a body).
        let Some(open) = code[at..].find(['{', ';']).map(|i| at + i) else { continue };
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0;
        let mut close = open;
        for (i, b) in bytes[open..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        functions.push((name, line_of(at), line_of(close) - line_of(at) + 1));
    }
    functions
}

/// Whether a file is codegen's output (the example's module), which is not held to lengths.
fn is_generated(text: &str) -> bool {
    text.lines().take(4).any(|line| line.contains("Generated by softgen-codegen"))
}

#[test]
fn no_hand_written_function_or_file_is_longer_than_its_limit_without_a_reason() {
    let mut problems = Vec::new();
    let mut long_functions = BTreeSet::new();
    let mut long_files = BTreeSet::new();
    for dir in HAND_WRITTEN {
        for file in rust_files(dir) {
            let text = read(&file);
            if is_generated(&text) {
                continue;
            }
            let path = file.to_string_lossy().replace('\\', "/");
            let lines = text.lines().count();
            if lines > FILE_LINES {
                long_files.insert(path.clone());
                if !LONG_FILES.iter().any(|(f, _)| *f == path) {
                    problems.push(format!(
                        "{path}: {lines} lines, over {FILE_LINES}: split it by concern, or list it with its reason in LONG_FILES"
                    ));
                }
            }
            for (name, line, length) in function_lengths(&text) {
                if length > FUNCTION_LINES {
                    long_functions.insert((path.clone(), name.clone()));
                    if !LONG_FUNCTIONS.iter().any(|(f, n, _)| *f == path && *n == name) {
                        problems.push(format!(
                            "{path}:{line}: fn {name} is {length} lines, over {FUNCTION_LINES}: cut it into named steps, or list it with its reason in LONG_FUNCTIONS"
                        ));
                    }
                }
            }
        }
    }
    for (file, name, _) in LONG_FUNCTIONS {
        if !long_functions.contains(&(file.to_string(), name.to_string())) {
            problems.push(format!("{file}: fn {name} is listed in LONG_FUNCTIONS but no longer over {FUNCTION_LINES} lines (or gone): remove it from the list"));
        }
    }
    for (file, _) in LONG_FILES {
        if !long_files.contains(*file) {
            problems.push(format!("{file} is listed in LONG_FILES but no longer over {FILE_LINES} lines (or gone): remove it from the list"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn function_lengths_see_code_not_literals() {
    let text = "fn a() {\n    let s = \"fn b() {\";\n    let c = '{';\n    // fn c() {\n    let r = r#\"}\"#;\n}\nfn d<'x>(v: &'x str) -> &'x str {\n    v\n}\nfn e();\n";
    assert_eq!(function_lengths(text), vec![("a".to_string(), 1, 6), ("d".to_string(), 7, 3)]);
}
