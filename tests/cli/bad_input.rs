//! The bad-input corpus (tests/corpus/*.toml): command-line values, stdin documents, run
//! configurations and sweep files, each run through the `softgen` binary in its own process
//! under a 1 GiB address-space limit and a 10 s deadline, with the outcome its case states.
//! No case may panic, hang or run out of memory, and a rejected case may not write an output.

use serde::Deserialize;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One case of a corpus file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    what: String,
    args: Vec<String>,
    /// Text on standard input.
    stdin: Option<String>,
    /// Standard input made of `text` repeated `count` times (documents too large to list).
    stdin_repeat: Option<(String, usize)>,
    /// A run configuration: `base` (a committed one, by path) with each `replace` pair applied,
    /// written to a file whose path is passed with --config.
    config: Option<ConfigCase>,
    /// A sweep file's text, written to `case.sweep.toml` and passed as the last argument (the
    /// results table goes into the case's folder).
    sweep: Option<String>,
    /// A recorder CSV's text, written to `case.record.csv` and passed with `run --replay`.
    recording: Option<String>,
    /// Pieces the error message must contain; the run must fail.
    #[serde(default)]
    error: Vec<String>,
    /// The run must succeed.
    #[serde(default)]
    ok: bool,
    /// With `ok`: pieces its output must contain (what it says instead of a number it
    /// cannot give, say).
    #[serde(default)]
    output: Vec<String>,
    /// Send SIGTERM this long after the start: the run must then stop within 2 s, exit with
    /// 128 + 15, and may leave the outputs it has produced so far.
    interrupt_after_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigCase {
    base: String,
    #[serde(default)]
    replace: Vec<(String, String)>,
    /// Text appended after the replacements.
    #[serde(default)]
    append: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    case: Vec<Case>,
}

const DEADLINE: Duration = Duration::from_secs(10);
/// The address-space limit of every case (KiB for `ulimit -v`): 1 GiB.
const MEMORY_KIB: u64 = 1 << 20;

fn load(name: &str) -> Corpus {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What one case did.
struct Outcome {
    success: bool,
    /// The exit code (None: ended by a signal it did not handle).
    code: Option<i32>,
    output: String,
    elapsed: Duration,
    /// SIGTERM was sent (the case's `interrupt_after_ms` passed while it ran).
    interrupted: bool,
}

/// How long an interrupted run may take to stop.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Runs `args` in a fresh folder under the limits; None when it passed the deadline.
fn run_case(case: &Case, folder: &Path) -> Option<Outcome> {
    let mut args = case.args.clone();
    let has = |flag: &str| case.args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
    match args.first().map(String::as_str) {
        Some("simulate" | "roll") if !has("--output") => {
            args.extend(["--output".into(), folder.join("out").display().to_string()])
        }
        Some("experiment") if args.get(1).map(String::as_str) == Some("run") && !has("--output") => {
            args.extend(["--output".into(), folder.join("out").display().to_string()])
        }
        Some("run") => {
            if let Some(recording) = &case.recording {
                let path = folder.join("case.record.csv");
                std::fs::write(&path, recording).unwrap();
                args.extend(["--replay".into(), path.display().to_string()]);
            } else if !has("--replay") {
                args.extend(["--record".into(), folder.join("commands.csv").display().to_string()]);
            }
            args.extend(["--trajectory".into(), folder.join("plant.csv").display().to_string()]);
        }
        _ => {}
    }
    if let Some(config) = &case.config {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join(&config.base);
        let mut text = std::fs::read_to_string(&base).unwrap_or_else(|e| panic!("{}: {e}", base.display()));
        for (from, to) in &config.replace {
            assert!(text.contains(from.as_str()), "{}: `{from}` is not in {}", case.what, config.base);
            text = text.replacen(from.as_str(), to, 1);
        }
        text.push_str(&config.append);
        let path = folder.join("case.run.toml");
        std::fs::write(&path, text).unwrap();
        args.extend(["--config".into(), path.display().to_string()]);
    }
    if let Some(sweep) = &case.sweep {
        let path = folder.join("case.sweep.toml");
        std::fs::write(&path, sweep).unwrap();
        args.push(path.display().to_string());
        if !has("--output") {
            args.extend(["--output".into(), folder.join("out/results.parquet").display().to_string()]);
        }
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_softgen"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let input: Vec<u8> = match (&case.stdin, &case.stdin_repeat) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some((text, count))) => text.repeat(*count).into_bytes(),
        (None, None) => Vec::new(),
    };
    let mut stdin = child.stdin.take().unwrap();
    // A writer thread: a child that stops reading early must not block the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let start = Instant::now();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let mut bytes = Vec::new();
            let _ = r.read_to_end(&mut bytes);
            text.push_str(&String::from_utf8_lossy(&bytes));
            text
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let interrupt_at = case.interrupt_after_ms.map(Duration::from_millis);
    let mut interrupted = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let elapsed = start.elapsed();
        if let Some(at) = interrupt_at {
            if !interrupted && elapsed > at {
                // `sh -c ... exec` replaced the shell, so the child's pid is the binary's.
                let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
                interrupted = true;
            }
        }
        let limit = interrupt_at.map_or(DEADLINE, |at| at + STOP_GRACE);
        if elapsed > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let output = format!("{}{}", out.join().unwrap(), err.join().unwrap());
    Some(Outcome { success: status.success(), code: status.code(), output, elapsed: start.elapsed(), interrupted })
}

/// Every file under `folder` except the case's own inputs.
fn outputs(folder: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n != "case.run.toml" && n != "case.sweep.toml" && n != "case.record.csv")
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// Whether a run panicked, aborted or died of a signal it did not handle.
fn crashed(outcome: &Outcome) -> bool {
    let text = &outcome.output;
    let killed = outcome.code.is_none() && !outcome.interrupted;
    killed
        || text.contains("panicked")
        || text.contains("memory allocation of")
        || text.contains("overflowed its stack")
}

/// Runs every case of a corpus file; returns how many there were.
fn check_corpus(name: &str) -> usize {
    let corpus = load(name);
    let mut failures = Vec::new();
    for case in &corpus.case {
        assert!(case.ok != !case.error.is_empty(), "{name}: `{}` must give either `ok = true` or `error`", case.what);
        let folder = tempfile::tempdir().unwrap();
        let Some(outcome) = run_case(case, folder.path()) else {
            failures.push(format!("`{}`: still running after {DEADLINE:?}", case.what));
            continue;
        };
        let text = &outcome.output;
        if crashed(&outcome) {
            failures.push(format!("`{}`: crashed:\n{text}", case.what));
        } else if case.interrupt_after_ms.is_some() {
            if !outcome.interrupted || outcome.code != Some(128 + 15) {
                failures.push(format!(
                    "`{}`: expected to be stopped by SIGTERM (exit 143), exit {:?}:\n{text}",
                    case.what, outcome.code
                ));
            }
            let missing: Vec<&String> = case.error.iter().filter(|piece| !text.contains(piece.as_str())).collect();
            if !missing.is_empty() {
                failures.push(format!("`{}`: message lacks {missing:?}:\n{text}", case.what));
            }
        } else if case.ok && !outcome.success {
            failures.push(format!("`{}`: should succeed, failed:\n{text}", case.what));
        } else if case.ok {
            let missing: Vec<&String> = case.output.iter().filter(|piece| !text.contains(piece.as_str())).collect();
            if !missing.is_empty() {
                failures.push(format!("`{}`: output lacks {missing:?}:\n{text}", case.what));
            }
        } else {
            if outcome.success {
                failures.push(format!("`{}`: should fail, succeeded:\n{text}", case.what));
            }
            let missing: Vec<&String> = case.error.iter().filter(|piece| !text.contains(piece.as_str())).collect();
            if !missing.is_empty() {
                failures.push(format!("`{}`: message lacks {missing:?}:\n{text}", case.what));
            }
            let written = outputs(folder.path());
            if !written.is_empty() {
                failures.push(format!("`{}`: a rejected run wrote {written:?}", case.what));
            }
        }
        if outcome.elapsed > Duration::from_secs(5) {
            eprintln!("note: `{}` took {:.1} s", case.what, outcome.elapsed.as_secs_f64());
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {} cases failed:\n\n{}",
        failures.len(),
        corpus.case.len(),
        failures.join("\n\n")
    );
    corpus.case.len()
}

#[test]
fn command_line_values_and_stdin_documents() {
    let cases = check_corpus("cli.toml");
    assert!(cases >= 100, "{cases} cases");
}

#[test]
fn sweep_files() {
    let cases = check_corpus("sweeps.toml");
    assert!(cases >= 25, "{cases} cases");
}

#[test]
fn run_configurations() {
    let cases = check_corpus("run_configs.toml");
    assert!(cases >= 30, "{cases} cases");
}

/// A value for a numeric option: anything f64 can be (NaN, infinities, subnormals, extremes),
/// in both notations, plausible magnitudes, integers, and text that is almost a number.
fn numeric_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v}")),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        (-1e3f64..1e3).prop_map(|v| format!("{v}")),
        (0f64..1.0).prop_map(|v| format!("{v}")),
        any::<i64>().prop_map(|v| format!("{v}")),
        proptest::sample::select(vec![
            "nan", "-inf", "1e400", "-0", "", "abc", "1,2", "0x10", "1_0", " 1", "1e-300", "4.9e-324", "max"
        ])
        .prop_map(String::from),
    ]
}

/// Every numeric option of the CLI, with arguments that keep an accepted run short (the value
/// under test comes last and wins).
const NUMERIC_OPTIONS: &[(&[&str], &str)] = &[
    (&["simulate", "--duration", "0.05"], "--duration"),
    (&["simulate", "--duration", "0.05"], "--dt"),
    (&["simulate", "--duration", "0.05", "--integrator", "dopri5"], "--rtol"),
    (&["simulate", "--duration", "0.05", "--integrator", "dopri5"], "--atol"),
    (&["simulate", "--duration", "0.05", "--terrain", "stair"], "--stair-position"),
    (&["simulate", "--duration", "0.05", "--terrain", "stair"], "--stair-height"),
    (&["simulate", "--duration", "0.05", "--robot", "soft_snake", "--terrain", "pipe"], "--pipe-diameter"),
    (&["simulate", "--duration", "0.05"], "--amplitude"),
    (&["simulate", "--duration", "0.05"], "--temporal-frequency"),
    (&["simulate", "--duration", "0.05"], "--spatial-frequency"),
    (&["simulate", "--duration", "0.05"], "--offset"),
    (&["simulate", "--duration", "0.05", "--set"], "gravity="),
    (&["simulate", "--duration", "0.05", "--set"], "link_mass="),
    (&["simulate", "--duration", "0.05", "--set"], "link_inertia="),
    (&["eval", "snake_pedal_wave", "--set"], "link_length="),
    (&["eval", "double_pendulum", "--q"], "0.1,"),
    (&["eval", "double_pendulum", "--q", "0,0", "--qd"], "1,"),
    (&["run", "--duration", "0.05"], "--rate"),
    (&["run", "--duration", "0.05"], "--duration"),
    (&["run", "--duration", "0.05"], "--amplitude"),
    (&["run", "--duration", "0.05"], "--temporal-frequency"),
    (&["run", "--duration", "0.05"], "--spatial-frequency"),
    (&["run", "--duration", "0.05"], "--offset"),
    (&["run", "--duration", "0.05", "--device", "serial", "--port", "/dev/null"], "--ack-timeout-ms"),
    (&["run", "--duration", "0.05", "--controller", "mpc", "--goal"], "1,"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--duration"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--settle"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--frequency"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--ceiling"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--bend"),
    (&["roll", "--settle", "0.02", "--duration", "0.02"], "--tolerance"),
];

/// Random values to every numeric option: the binary answers with a result or an error, never
/// a panic, abort or allocation failure, and a run still going after 3 s stops on SIGTERM.
#[test]
fn random_values_to_every_numeric_option_never_crash() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    for (prefix, option) in NUMERIC_OPTIONS {
        // A fixed seed per option keeps CI reproducible; the values still cover every class.
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 12, failure_persistence: None, ..Config::default() },
            proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
        );
        let result = runner.run(&numeric_text(), |value| {
            let mut args: Vec<String> = prefix.iter().map(|a| a.to_string()).collect();
            if option.starts_with("--") {
                args.push(format!("{option}={value}"));
            } else {
                // `--set name=` and the lists of --q, --qd and --goal: the value completes the
                // previous argument.
                args.push(format!("{option}{value}"));
            }
            let case = Case {
                what: args.join(" "),
                args,
                stdin: None,
                stdin_repeat: None,
                config: None,
                sweep: None,
                recording: None,
                error: Vec::new(),
                ok: false,
                output: Vec::new(),
                interrupt_after_ms: Some(3000),
            };
            let folder = tempfile::tempdir().unwrap();
            let Some(outcome) = run_case(&case, folder.path()) else {
                return Err(TestCaseError::fail(format!(
                    "`{}` did not stop within {STOP_GRACE:?} of SIGTERM",
                    case.what
                )));
            };
            if crashed(&outcome) {
                return Err(TestCaseError::fail(format!("`{}` crashed:\n{}", case.what, outcome.output)));
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{option}: {e}");
        }
    }
}
