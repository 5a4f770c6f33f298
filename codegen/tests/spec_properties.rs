//! Property tests of the spec loader: random bytes, random token soup, and random mutations
//! of every committed spec (about a third of the mutants are still well-formed TOML and reach
//! validation) give a robot or a list of errors, never a panic (proptest reports a panic as a
//! failure with the smallest input it could shrink to). Validation does not call symbolica,
//! so these run in parallel with other tests.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use softgen_codegen::{load, load_in};
use std::path::Path;

/// model-specs/, where committed specs read the URDFs they import from.
fn spec_folder() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("model-specs")
}

/// Every committed robot spec's text.
fn committed_specs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut paths: Vec<_> = std::fs::read_dir(root.join("model-specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| softgen_codegen::is_spec_file(p))
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

/// Tokens a mutation inserts: TOML syntax, spec keys and values near every limit.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    "=",
    ",",
    "\n",
    "#",
    ".",
    "-",
    "(",
    ")",
    "^",
    "*",
    "/",
    "sin(",
    "sqrt(",
    "log(",
    "[[bodies]]\n",
    "[[contact_points]]\n",
    "[base]\n",
    "[environment]\n",
    "[[actuators]]\n",
    "[gait]\n",
    "[controller]\n",
    "name = \"x\"\n",
    "parent = \"x\"\n",
    "joint = \"revolute\"\n",
    "joint = \"prismatic\"\n",
    "mass = ",
    "inertia = ",
    "origin = [",
    "axis = [0, 0, 0]\n",
    "rotation = [1e308, 0, 0]\n",
    "kind = \"constant_curvature\"\n",
    "kind = \"skin_grid\"\n",
    "rings = 1000",
    "around = 1000",
    "rings = 0",
    "tip = true",
    "plane = \"xy\"",
    "kind = \"spatial\"",
    "kind = \"fixed\"",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "1e-400",
    "1e40",
    "1.2345678901234567e40",
    "4.9e-324",
    "-0",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "true",
    "\"\"",
    "\"type\"",
    "\"world\"",
    "\u{0}",
    "\u{feff}",
    "é",
    "\r",
    "\t",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Remove `len` bytes at `at`.
    Delete { at: usize, len: usize },
    /// Insert a token at `at`.
    Insert { at: usize, token: usize },
    /// Insert a random number's text at `at`.
    Number { at: usize, value: f64 },
    /// Copy the line at `from` after the line at `to`.
    DuplicateLine { from: usize, to: usize },
    /// Swap two lines.
    SwapLines { a: usize, b: usize },
    /// Cut the text at `at`.
    Truncate { at: usize },
    /// Flip one bit of one byte.
    FlipBit { at: usize, bit: u8 },
    /// Replace the `nth` number of the text (modulo how many there are) with another: the
    /// TOML stays well formed, so validation sees it.
    ReplaceNumber { nth: usize, value: f64 },
    /// Replace the contents of the `nth` quoted string with a token.
    ReplaceString { nth: usize, token: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (any::<usize>(), any::<f64>()).prop_map(|(at, value)| Mutation::Number { at, value }),
        (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Mutation::DuplicateLine { from, to }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        (any::<usize>(), prop_oneof![any::<f64>(), -2.0f64..2.0, Just(0.0), Just(1e40)])
            .prop_map(|(nth, value)| Mutation::ReplaceNumber { nth, value }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(nth, token)| Mutation::ReplaceString { nth, token }),
    ]
}

/// Applies mutations to a spec's bytes (positions taken modulo the current length, so every
/// mutation lands), and reads the result as text the way a file with stray bytes would be.
fn mutate(spec: &str, mutations: &[Mutation]) -> String {
    let mut bytes = spec.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Delete { at, len: n } => {
                let at = at % len;
                let end = (at + n).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Mutation::Insert { at, token } => {
                let at = (at % len).min(bytes.len());
                bytes.splice(at..at, TOKENS[token].bytes());
            }
            Mutation::Number { at, value } => {
                let at = (at % len).min(bytes.len());
                bytes.splice(at..at, format!("{value}").into_bytes());
            }
            Mutation::DuplicateLine { from, to } | Mutation::SwapLines { a: from, b: to } => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let (from, to) = (from % lines.len(), to % lines.len());
                if matches!(m, Mutation::DuplicateLine { .. }) {
                    let line = lines[from];
                    lines.insert(to + 1, line);
                } else {
                    lines.swap(from, to);
                }
                bytes = lines.join("\n").into_bytes();
            }
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::ReplaceNumber { nth, value } => {
                let spans = spans_of(
                    &bytes,
                    |b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'-',
                    |b| b.is_ascii_digit(),
                );
                if !spans.is_empty() {
                    let (start, end) = spans[nth % spans.len()];
                    bytes.splice(start..end, format!("{value}").into_bytes());
                }
            }
            Mutation::ReplaceString { nth, token } => {
                let quotes: Vec<usize> = bytes.iter().enumerate().filter(|(_, &b)| b == b'"').map(|(i, _)| i).collect();
                let pairs: Vec<(usize, usize)> = quotes.chunks_exact(2).map(|p| (p[0] + 1, p[1])).collect();
                if !pairs.is_empty() {
                    let (start, end) = pairs[nth % pairs.len()];
                    bytes.splice(start..end, TOKENS[token].bytes());
                }
            }
            Mutation::FlipBit { at, bit } => {
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    bytes[at] ^= 1 << bit;
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Maximal runs of bytes satisfying `inside` that contain at least one `must` byte (numbers,
/// roughly: enough to find every literal of a spec).
fn spans_of(bytes: &[u8], inside: impl Fn(u8) -> bool, must: impl Fn(u8) -> bool) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if inside(bytes[i]) && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'_') {
            let start = i;
            while i < bytes.len() && inside(bytes[i]) {
                i += 1;
            }
            if bytes[start..i].iter().any(|&b| must(b)) {
                spans.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    spans
}

fn runner(cases: u32) -> TestRunner {
    // A fixed seed keeps CI reproducible; shrinking still finds a small failing input.
    TestRunner::new_with_rng(
        Config { cases, failure_persistence: None, ..Config::default() },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

#[test]
fn random_bytes_never_panic_the_loader() {
    runner(5000)
        .run(&proptest::collection::vec(any::<u8>(), 0..2000), |bytes| {
            let _ = load("fuzz.toml", &String::from_utf8_lossy(&bytes));
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_token_soup_never_panics_the_loader() {
    runner(2000)
        .run(&proptest::collection::vec(0..TOKENS.len(), 0..200), |tokens| {
            let text: String = tokens.iter().map(|&t| TOKENS[t]).collect();
            let _ = load("fuzz.toml", &text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_committed_specs_never_panic_the_loader() {
    let specs = committed_specs();
    assert!(specs.len() >= 5, "{} committed specs", specs.len());
    runner(10_000)
        .run(&(0..specs.len(), proptest::collection::vec(mutation(), 1..8)), |(spec, mutations)| {
            let text = mutate(&specs[spec], &mutations);
            // In model-specs/, so that mutants of the imported robots read their URDFs.
            let _ = load_in("mutant.toml", &text, &spec_folder());
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutations_change_the_spec() {
    // The mutator works: one insertion of a token breaks a good spec's structure.
    let spec = &committed_specs()[0];
    let broken = mutate(spec, &[Mutation::Insert { at: 0, token: 0 }]);
    assert!(load_in("mutant.toml", &broken, &spec_folder()).is_err());
    let unchanged = load_in("mutant.toml", &mutate(spec, &[]), &spec_folder());
    assert!(unchanged.is_ok(), "{:?}", unchanged.err());
}
