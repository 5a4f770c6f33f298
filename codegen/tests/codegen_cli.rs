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
