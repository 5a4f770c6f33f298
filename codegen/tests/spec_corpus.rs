//! The spec corpus (tests/corpus/specs.toml): malformed, absurd and hostile robot specs, each
//! given to `softgen-codegen --validate` in its own process under a 1 GiB address-space limit
//! and a 10 s deadline, with the outcome its case states. No case may panic, hang or run out
//! of memory. Validation never calls symbolica, so this runs alongside other tests.

use serde::Deserialize;
use std::path::Path;
use std::process::Command;

/// One case: a spec made from `base` (or `text`), written as `file` and validated.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    what: String,
    /// A corpus base (`two_links` is tests/corpus/two_links.toml) or a workspace path
    /// (`model-specs/soft_snake.toml`); empty with `text`.
    #[serde(default)]
    base: String,
    /// The whole spec instead of a base.
    text: Option<String>,
    /// The file name the spec is written under.
    #[serde(default = "default_file")]
    file: String,
    /// (from, to) pairs applied once each, in order; `from` must occur.
    #[serde(default)]
    replace: Vec<(String, String)>,
    /// Text appended after the replacements.
    #[serde(default)]
    append: String,
    /// Long texts: `<<k>>` in `replace` targets and `append` becomes the k-th (text, count)
    /// repeated count times, with `{i}` in the text replaced by the repetition's index.
    #[serde(default)]
    repeat: Vec<(String, usize)>,
    /// Raw bytes appended last (for input that is not UTF-8).
    #[serde(default)]
    append_bytes: Vec<u8>,
    /// Pieces the error message must contain; validation must fail.
    #[serde(default)]
    error: Vec<String>,
    /// Validation must succeed.
    #[serde(default)]
    ok: bool,
    /// A URDF written beside the spec as `robot.urdf`: a corpus base (`two_links` is
    /// tests/corpus/two_links.urdf) or a workspace path, with `urdf_replace` applied.
    #[serde(default)]
    urdf_base: String,
    #[serde(default)]
    urdf_replace: Vec<(String, String)>,
    /// Instead, an empty (sparse) `robot.urdf` of this many bytes.
    urdf_size: Option<u64>,
}

fn default_file() -> String {
    "bad.toml".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    case: Vec<Case>,
}

/// The address-space limit of every case (KiB for `ulimit -v`): 1 GiB.
const MEMORY_KIB: u64 = 1 << 20;
/// Seconds before a case counts as hung (coreutils `timeout` exits 124 then).
const DEADLINE_S: u64 = 10;

fn expand(text: &str, repeats: &[String]) -> String {
    let mut text = text.to_string();
    for (k, long) in repeats.iter().enumerate() {
        text = text.replace(&format!("<<{k}>>"), long);
    }
    text
}

/// The bytes of a case's spec.
fn spec_bytes(case: &Case, root: &Path) -> Vec<u8> {
    let repeats: Vec<String> = case
        .repeat
        .iter()
        .map(|(text, count)| (0..*count).map(|i| text.replace("{i}", &i.to_string())).collect())
        .collect();
    let mut text = match &case.text {
        Some(text) => expand(text, &repeats),
        None => {
            let path = if case.base.contains('/') {
                root.join(&case.base)
            } else {
                root.join("codegen/tests/corpus").join(format!("{}.toml", case.base))
            };
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("`{}`: {}: {e}", case.what, path.display()))
        }
    };
    for (from, to) in &case.replace {
        assert!(text.contains(from.as_str()), "`{}`: `{from}` is not in {}", case.what, case.base);
        text = text.replacen(from.as_str(), &expand(to, &repeats), 1);
    }
    text.push_str(&expand(&case.append, &repeats));
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(&case.append_bytes);
    bytes
}

/// The text of a case's URDF.
fn urdf_text(case: &Case, root: &Path) -> String {
    let path = if case.urdf_base.contains('/') {
        root.join(&case.urdf_base)
    } else {
        root.join("codegen/tests/corpus").join(format!("{}.urdf", case.urdf_base))
    };
    let mut text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("`{}`: {}: {e}", case.what, path.display()));
    for (from, to) in &case.urdf_replace {
        assert!(text.contains(from.as_str()), "`{}`: `{from}` is not in {}", case.what, case.urdf_base);
        text = text.replacen(from.as_str(), to, 1);
    }
    text
}

#[test]
fn spec_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let corpus_path = root.join("codegen/tests/corpus/specs.toml");
    let corpus: Corpus = toml::from_str(&std::fs::read_to_string(&corpus_path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", corpus_path.display()));
    let mut failures = Vec::new();
    for case in &corpus.case {
        assert!(case.ok != !case.error.is_empty(), "`{}` must give either `ok = true` or `error`", case.what);
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(&case.file);
        std::fs::write(&path, spec_bytes(case, root)).unwrap();
        let urdf = folder.path().join("robot.urdf");
        if let Some(size) = case.urdf_size {
            std::fs::File::create(&urdf).unwrap().set_len(size).unwrap();
        } else if !case.urdf_base.is_empty() {
            std::fs::write(&urdf, urdf_text(case, root)).unwrap();
        }
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {MEMORY_KIB} && exec timeout {DEADLINE_S} \"$0\" --validate \"$1\""))
            .arg(env!("CARGO_BIN_EXE_softgen-codegen"))
            .arg(&path)
            .output()
            .expect("the validator starts");
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        if output.status.code() == Some(124) {
            failures.push(format!("`{}`: still running after {DEADLINE_S} s", case.what));
        } else if text.contains("panicked")
            || text.contains("memory allocation of")
            || text.contains("overflowed its stack")
            || output.status.code().is_none()
        {
            failures.push(format!("`{}`: crashed ({}):\n{text}", case.what, output.status));
        } else if case.ok && !output.status.success() {
            failures.push(format!("`{}`: should be accepted, was rejected:\n{text}", case.what));
        } else if !case.ok {
            if output.status.success() {
                failures.push(format!("`{}`: should be rejected, was accepted:\n{text}", case.what));
            }
            let missing: Vec<&String> = case.error.iter().filter(|piece| !text.contains(piece.as_str())).collect();
            if !missing.is_empty() {
                failures.push(format!("`{}`: message lacks {missing:?}:\n{text}", case.what));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        corpus.case.len(),
        failures.join("\n\n")
    );
    assert!(corpus.case.len() >= 50, "{} cases", corpus.case.len());
}
