//! Every test that calls symbolica lives in this one test function: without a licence key
//! symbolica allows one thread per user at a time, so the work must not run in parallel.
//!
//! 1. Snapshots (insta) of the double pendulum fixture: its symbolic equations and its
//!    emitted Rust.
//! 2. The recursive algorithms codegen emits against the whole-body symbolic expansion (an
//!    independent derivation: every pose written out in q, M from Jacobians, C from
//!    Christoffel symbols of M) for every rigid spec, at random states: every output agrees
//!    to 1e-12 relative to the largest entry of its group, and the articulated-body forward
//!    dynamics solves the oracle's M qdd = tau - C qd - G.
//! 3. Freshness of generated/: every spec in model-specs/ is regenerated and compared with
//!    the committed file (fix with `cargo run -p softgen-codegen`).

use std::path::Path;

#[test]
fn symbolic_derivation_snapshots_and_generated_code_is_fresh() {
    std::env::set_var("SYMBOLICA_HIDE_BANNER", "1");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();

    // 1. The fixture, derived first so that symbol creation order (and so symbolica's term
    //    order in the printed equations) is always the same.
    let fixture = std::fs::read_to_string(root.join("model-specs/double_pendulum.toml")).unwrap();
    let generated = softgen_codegen::generate_source("model-specs/double_pendulum.toml", &fixture).expect("fixture generates");
    let (derived, _) = softgen_codegen::expanded_equations(&generated.robot).expect("the fixture expands");
    insta::assert_snapshot!("double_pendulum_equations", softgen_codegen::symbolic_report(&generated.robot, &derived));
    insta::assert_snapshot!("double_pendulum_rust", generated.source);

    let mut specs: Vec<_> = std::fs::read_dir(root.join("model-specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| softgen_codegen::is_spec_file(p))
        .collect();
    specs.sort();
    assert!(specs.len() >= 3, "expected the seed robots in model-specs/");

    // 2. Recursive against expanded, for every rigid robot.
    for spec in &specs {
        let name = spec.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(spec).unwrap();
        let robot = softgen_codegen::load(&format!("model-specs/{name}.toml"), &text).unwrap();
        if robot.is_soft() {
            continue;
        }
        compare_recursive_with_expanded(&robot);
    }

    // The 12-link scaling fixture (14 coordinates) too: the expansion still takes seconds.
    let fixture = softgen_codegen::planar_snake_spec(12);
    compare_recursive_with_expanded(&softgen_codegen::load("snake_links_12.toml", &fixture).unwrap());

    // 3. Every spec and scaling fixture against its committed module.
    let lib = std::fs::read_to_string(root.join("generated/src/lib.rs")).unwrap();
    let mut stale = Vec::new();
    let generated = specs
        .iter()
        .map(|spec| {
            let name = spec.file_stem().unwrap().to_string_lossy().to_string();
            softgen_codegen::generate_file(spec, &format!("model-specs/{name}.toml"))
        })
        .chain(softgen_codegen::SCALING_LINKS.iter().map(|&links| softgen_codegen::generate_fixture(links)));
    for g in generated {
        let g = g.unwrap_or_else(|e| panic!("{e}"));
        let name = g.robot.name.clone();
        println!("{name:<28} {:>6.2} s codegen {:>6} lines {:>8} bytes ({})", g.seconds(), g.lines(), g.source.len(), g.times);
        let committed = std::fs::read_to_string(root.join(format!("generated/src/{name}.rs"))).unwrap_or_default();
        if committed != g.source {
            stale.push(name.clone());
        }
        assert!(lib.contains(&format!("pub mod {name};")), "generated/src/lib.rs does not list `pub mod {name};`");
    }
    assert!(stale.is_empty(), "generated code is stale for {stale:?}: run `cargo run -p softgen-codegen` and commit generated/");
}

/// A small deterministic generator for test states (no dependency needed for ten numbers).
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        low + (high - low) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn compare_recursive_with_expanded(robot: &softgen_codegen::Robot) {
    let recursive = softgen_codegen::recursive_equations(robot).expect("recursive equations");
    let (_, expanded) = softgen_codegen::expanded_equations(robot).expect("expanded equations");
    let n = robot.coordinates.len();
    let params: Vec<f64> = robot.parameters.iter().map(|p| p.default).collect();
    let mut rng = Lcg(0x5eed ^ n as u64);
    for state in 0..10 {
        let q: Vec<f64> = (0..n).map(|_| rng.uniform(-1.5, 1.5)).collect();
        let qd: Vec<f64> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
        let tau: Vec<f64> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let ours = recursive.evaluate(&q, &qd, &tau, &params);
        let oracle = expanded.evaluate(&q, &qd, &tau, &params);
        let group = |set: &[(&str, Vec<f64>)], name: &str| set.iter().find(|(g, _)| *g == name).unwrap().1.clone();
        // Forward dynamics (the oracle has none): M qdd = tau - C qd - G with the oracle's terms.
        let (mass, coriolis, gravity) = (group(&oracle, "mass matrix"), group(&oracle, "coriolis force"), group(&oracle, "gravity force"));
        let qdd = group(&ours, "accelerations");
        let mut worst = 0.0f64;
        let mut size = 0.0f64;
        // The residual of a solve is measured against what it sums (its backward error):
        // sum_j |M_ij qdd_j| + |tau_i| + |C qd_i| + |G_i|.
        for i in 0..n {
            let m_qdd: f64 = (0..n).map(|j| mass[i * n + j] * qdd[j]).sum();
            let magnitude: f64 = (0..n).map(|j| (mass[i * n + j] * qdd[j]).abs()).sum();
            worst = worst.max((m_qdd - (tau[i] - coriolis[i] - gravity[i])).abs());
            size = size.max(magnitude + tau[i].abs() + coriolis[i].abs() + gravity[i].abs());
        }
        assert!(worst <= 1e-12 * size, "{}: articulated-body forward dynamics off by {:e} (relative) at state {state}", robot.name, worst / size);
        for ((group, a), (_, b)) in ours.iter().zip(&oracle) {
            if *group == "accelerations" {
                continue;
            }
            assert_eq!(a.len(), b.len(), "{}: {group} sizes differ", robot.name);
            let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
            let worst = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale;
            assert!(worst <= 1e-12, "{}: {group} differs from the expanded derivation by {worst:e} (relative) at state {state}", robot.name);
        }
    }
    println!("{:<28} recursive = expanded to 1e-12 at 10 random states", robot.name);
}
