//! Every test that calls symbolica lives in this one test function: without a licence key
//! symbolica allows one thread per user at a time, so the work must not run in parallel.
//!
//! 1. Snapshots (insta) of the double pendulum fixture: its symbolic equations and its
//!    emitted Rust.
//! 2. Freshness of generated/: every spec in model-specs/ is regenerated and compared with
//!    the committed file (fix with `cargo run -p softgen-codegen`).

use std::path::Path;

#[test]
fn symbolic_derivation_snapshots_and_generated_code_is_fresh() {
    std::env::set_var("SYMBOLICA_HIDE_BANNER", "1");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();

    // 1. The fixture, derived first so that symbol creation order (and so symbolica's term
    //    order in the printed equations) is always the same.
    let fixture = std::fs::read_to_string(root.join("model-specs/double_pendulum.toml")).unwrap();
    let (generated, derived) =
        softgen_codegen::generate_source("model-specs/double_pendulum.toml", &fixture).expect("fixture generates");
    let derived = derived.expect("a rigid robot is derived symbolically");
    insta::assert_snapshot!("double_pendulum_equations", softgen_codegen::symbolic_report(&generated.robot, &derived));
    insta::assert_snapshot!("double_pendulum_rust", generated.source);

    // 2. Every spec against its committed module.
    let mut specs: Vec<_> = std::fs::read_dir(root.join("model-specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| softgen_codegen::is_spec_file(p))
        .collect();
    specs.sort();
    assert!(specs.len() >= 3, "expected the seed robots in model-specs/");
    let lib = std::fs::read_to_string(root.join("generated/src/lib.rs")).unwrap();
    let mut stale = Vec::new();
    for spec in specs {
        let name = spec.file_stem().unwrap().to_string_lossy().to_string();
        let display = format!("model-specs/{name}.toml");
        let g = softgen_codegen::generate_file(&spec, &display).unwrap_or_else(|e| panic!("{e}"));
        println!("{name:<28} {:>6.2} s codegen {:>6} lines {:>8} bytes", g.seconds, g.lines(), g.source.len());
        let committed = std::fs::read_to_string(root.join(format!("generated/src/{name}.rs"))).unwrap_or_default();
        if committed != g.source {
            stale.push(name.clone());
        }
        assert!(lib.contains(&format!("pub mod {name};")), "generated/src/lib.rs does not list `pub mod {name};`");
    }
    assert!(stale.is_empty(), "generated code is stale for {stale:?}: run `cargo run -p softgen-codegen` and commit generated/");
}
