//! Bad command lines to `softgen-codegen` get a clear error and write nothing; none reaches
//! symbolica (every case fails before derivation), so these may run in parallel.

use std::process::Command;

#[test]
fn bad_command_lines_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("out");
    let out = out.to_str().unwrap();
    let missing_spec = folder.path().join("missing.toml");
    let missing_spec = missing_spec.to_str().unwrap();
    let not_a_workspace = folder.path().to_str().unwrap();
    let cases: &[(&[&str], &str, i32)] = &[
        (&["--out"], "--out needs a directory", 2),
        (&["--root"], "--root needs a directory", 2),
        (&["--out", out], "--out needs the specs to generate", 2),
        (&["--out", out, "--out", out, "a.toml"], "--out given twice", 2),
        (&["--out", out, "--root", out, "a.toml"], "takes neither --root nor --validate", 2),
        (&["--out", out, "--validate", "a.toml"], "takes neither --root nor --validate", 2),
        (&["--root", not_a_workspace], "is not a softgen workspace", 2),
        (&["--frobnicate"], "unknown option `--frobnicate`", 2),
        (&["--sizes", "--check"], "--sizes reads the committed modules; it takes only --root", 2),
        (&["--sizes", "a.toml"], "--sizes reads the committed modules; it takes only --root", 2),
        (&["--sizes", "--root", not_a_workspace], "is not a softgen workspace", 2),
        (&["--out", out, missing_spec], "missing.toml", 1),
    ];
    for (args, error, code) in cases {
        let output = Command::new(env!("CARGO_BIN_EXE_softgen-codegen")).args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(*code), "{args:?}: {stderr}");
        assert!(stderr.contains(error), "{args:?}: wanted `{error}` in:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // Nothing was generated into the out folder by a refused command line (it is only
    // created once specs generate).
    assert!(std::fs::read_dir(folder.path().join("out")).map_or(true, |mut d| d.next().is_none()));
}

/// Every committed module keeps to its size budget (codegen/size-budget.toml), and the
/// report shows where each module's lines are.
#[test]
fn the_generated_modules_keep_to_their_size_budget() {
    let output = Command::new(env!("CARGO_BIN_EXE_softgen-codegen")).arg("--sizes").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "softgen-codegen --sizes:\n{stdout}\n{stderr}");
    // Every robot's module is in the report, each with its kinds of kernel.
    for crates in ["robots", "fixtures"] {
        let folder = format!("{}/../generated/{crates}", env!("CARGO_MANIFEST_DIR"));
        for module in std::fs::read_dir(folder).unwrap() {
            let path = module.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                assert!(stdout.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} missing from:\n{stdout}");
            }
        }
    }
    assert!(stdout.contains("x fn mass_matrix_into"), "{stdout}");
}

/// A workspace whose module is over its budget, or whose budget lists a robot with no
/// module, fails the report with what to do; nothing is written.
#[test]
fn a_module_over_its_budget_is_named_with_what_to_do() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("model-specs")).unwrap();
    std::fs::create_dir_all(root.path().join("generated/src")).unwrap();
    std::fs::create_dir_all(root.path().join("codegen")).unwrap();
    let module = "pub const DOF: usize = 2;\npub const CONTACTS: usize = 1;\npub fn mass_matrix_into() {\n}\n";
    for robot in ["small", "listed"] {
        std::fs::create_dir_all(root.path().join(format!("generated/robots/{robot}/src"))).unwrap();
        std::fs::write(root.path().join(format!("generated/robots/{robot}/src/lib.rs")), module).unwrap();
    }
    let budget =
        "[default]\nbase = 1\nper_coordinate_squared = 0\nper_contact_point = 0\n[robots]\nlisted = 3\ngone = 10\n";
    // The report on that workspace: its exit code and what it printed to stderr.
    let report = |budget: &str| {
        std::fs::write(root.path().join("codegen/size-budget.toml"), budget).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_softgen-codegen"))
            .args(["--sizes", "--root"])
            .arg(root.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (output.status.code(), stderr)
    };
    let (code, stderr) = report(budget);
    assert_eq!(code, Some(1), "{stderr}");
    for wanted in [
        "small: 4 lines, over its budget of 1 lines (the default's for 2 coordinates and 1 contact points)",
        "listed: 4 lines, over its budget of 3 lines (its own) in codegen/size-budget.toml",
        "lists `gone`, which has no crate",
    ] {
        assert!(stderr.contains(wanted), "wanted `{wanted}` in:\n{stderr}");
    }
    // A budget file with a mistake is named, with what is wrong in it.
    let (code, stderr) = report("[default]\nbase = \"many\"\n");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("size-budget.toml: `default.base` must be a whole number"), "{stderr}");
}
