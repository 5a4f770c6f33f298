//! A robot is one spec file: a scratch copy of the workspace gets a new spec (a 3-link
//! planar chain), codegen runs on that copy, and then `softgen list`, `softgen eval` and a 1 s
//! `softgen simulate` work on the new robot, with no file edited but the spec and what codegen
//! writes (its crate, its app crate, and the manifests and lib.rs of the crates around
//! them), and Cargo.lock, which cargo brings up to date with the new crates.
//!
//! The copy is built with its own target directory under this one (target/scratch-workspace,
//! kept between runs), as cargo cannot be nested in the directory the tests were built in,
//! and without optimisation: only a 1 s run of a small robot needs to be fast.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SPEC: &str = r#"
description = "Three-link planar chain hanging from a pivot, added by the one-spec test"

[parameters]
link_length = 0.2
link_mass = 0.1

[base]
kind = "fixed"
plane = "xz"
body = "pivot"

[[bodies]]
name = "pivot"
mass = 1.0
inertia = 0.0

[[bodies]]
name = "first"
parent = "pivot"
joint = "revolute"
initial = -1.2
mass = "link_mass"
center_of_mass = ["link_length / 2", 0, 0]
inertia = "link_mass * link_length^2 / 12"

[[bodies]]
name = "second"
parent = "first"
joint = "revolute"
origin = ["link_length", 0, 0]
initial = 0.4
mass = "link_mass"
center_of_mass = ["link_length / 2", 0, 0]
inertia = "link_mass * link_length^2 / 12"

[[bodies]]
name = "third"
parent = "second"
joint = "revolute"
origin = ["link_length", 0, 0]
initial = 0.3
mass = "link_mass"
center_of_mass = ["link_length / 2", 0, 0]
inertia = "link_mass * link_length^2 / 12"

[[contact_points]]
body = "third"
positions = [["link_length", 0, 0]]
names = ["tip"]

[environment]
gravity = 9.81
"#;

/// Every file under `dir` (without build output and version control) with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "out") {
                    pending.push(path);
                }
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn write_tree(dir: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) {
    for (path, contents) in files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, contents).unwrap();
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{command:?} failed ({}):\n{text}", output.status);
    text
}

#[test]
fn a_new_spec_needs_no_other_edit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let codegen = Path::new(env!("CARGO_BIN_EXE_softgen-codegen"));
    // target/<profile>/softgen-codegen -> target/scratch-workspace
    let target = codegen.parent().unwrap().parent().unwrap().join("scratch-workspace");
    let scratch = tempfile::tempdir().unwrap();
    let workspace = scratch.path();
    let original = snapshot(root);
    write_tree(workspace, &original);
    std::fs::write(workspace.join("model-specs/three_link_chain.toml"), SPEC).unwrap();

    run(Command::new(codegen).arg("--root").arg(workspace).env("SYMBOLICA_HIDE_BANNER", "1"));

    // Only the spec, its crate and app crate, and the manifests and lib.rs of the crates
    // around them differ from the workspace.
    let after = snapshot(workspace);
    let changed: Vec<&PathBuf> =
        after.iter().filter(|(path, contents)| original.get(*path) != Some(*contents)).map(|(path, _)| path).collect();
    let removed: Vec<&PathBuf> = original.keys().filter(|path| !after.contains_key(*path)).collect();
    let expected = [
        "generated/Cargo.toml",
        "generated/apps/Cargo.toml",
        "generated/apps/src/lib.rs",
        "generated/apps/three_link_chain/Cargo.toml",
        "generated/apps/three_link_chain/src/lib.rs",
        "generated/robots/three_link_chain/Cargo.toml",
        "generated/robots/three_link_chain/src/lib.rs",
        "generated/src/lib.rs",
        "model-specs/three_link_chain.toml",
    ];
    assert_eq!(
        changed.iter().map(|p| p.to_string_lossy().replace('\\', "/")).collect::<Vec<_>>(),
        expected,
        "files changed"
    );
    assert!(removed.is_empty(), "files removed: {removed:?}");

    // Unoptimised and without debug info throughout (the workspace's dev profile optimises
    // the generated crates for the physics tests and the rest at level 1 with full debug
    // info; here that would only cost compile time: every dependency is built afresh in this
    // target directory on a clean machine). Not `--locked`: cargo adds the new robot's crate
    // to Cargo.lock, as it does for a user (offline: no dependency is new).
    let mut build = Command::new(env!("CARGO"));
    build.current_dir(workspace).env("CARGO_TARGET_DIR", &target).args([
        "build",
        "--offline",
        "-p",
        "softgen",
        "--bin",
        "softgen",
    ]);
    build.args(["--config", "profile.dev.opt-level=0", "--config", "profile.dev.debug=0"]);
    for package in ["softgen", "softgen-runtime", "\"*\""] {
        build.args(["--config", &format!("profile.dev.package.{package}.opt-level=0")]);
        build.args(["--config", &format!("profile.dev.package.{package}.debug=0")]);
    }
    run(&mut build);
    let softgen = || {
        let mut command = Command::new(target.join("debug").join(format!("softgen{}", std::env::consts::EXE_SUFFIX)));
        command.current_dir(workspace);
        command
    };

    let list = run(softgen().arg("list"));
    assert!(
        list.contains("three_link_chain: Three-link planar chain hanging from a pivot, added by the one-spec test (3 coordinates, 1 contact points; model-specs/three_link_chain.toml)"),
        "{list}"
    );
    let eval: serde_json::Value =
        serde_json::from_str(&run(softgen().args(["eval", "three_link_chain", "--q", "0.1,0.2,0.3"]))).unwrap();
    let mass_matrix: Vec<Vec<f64>> = serde_json::from_value(eval["mass_matrix"].clone()).unwrap();
    assert_eq!(mass_matrix.len(), 3, "eval's mass matrix: {mass_matrix:?}");
    for i in 0..3 {
        assert!(mass_matrix[i][i] > 0.0, "{mass_matrix:?}");
        for j in 0..3 {
            assert!((mass_matrix[i][j] - mass_matrix[j][i]).abs() < 1e-12, "{mass_matrix:?}");
        }
    }

    let summary =
        run(softgen().args(["simulate", "--robot", "three_link_chain", "--duration", "1", "--output", "runs"]));
    assert!(summary.contains("simulated      1.000 s"), "{summary}");
    let csv = std::fs::read_to_string(workspace.join("runs/three_link_chain.csv")).unwrap();
    // A header and every 5th of 500 samples at the 2 ms step.
    assert!(csv.lines().count() > 90, "{} CSV lines for 1 s", csv.lines().count());
    assert!(workspace.join("runs/three_link_chain.png").is_file());
}
