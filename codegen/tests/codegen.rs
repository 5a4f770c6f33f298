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
//! 3. Freshness of generated/: every spec in model-specs/ and every scaling fixture is
//!    regenerated and compared with the committed module, and so are the robots' crates'
//!    manifests, generated/Cargo.toml and generated/src/lib.rs, the registry of robots (fix
//!    with `cargo run -p softgen-codegen`), and every example crate's module generated with
//!    `--out` (fix with the command its header names).
//! 4. A constant-curvature section's local pieces: a snapshot, and their values against the
//!    exact trigonometric arc and finite differences, straight, nearly straight and bent to
//!    3 rad.
//! 5. A 20-link snake written with `repeat` generates the same module as written longhand.

use std::path::{Path, PathBuf};

#[test]
fn symbolic_derivation_snapshots_and_generated_code_is_fresh() {
    std::env::set_var("SYMBOLICA_HIDE_BANNER", "1");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    check_snapshots(&root);
    let specs = spec_files(&root);
    check_recursive_against_expanded(&root, &specs);
    let mut stale = Vec::new();
    let (robots, fixtures) = check_modules(&root, &specs, &mut stale);
    check_workspace_files(&root, &robots, &fixtures, &mut stale);
    check_example_modules(&root, &mut stale);
    check_nothing_else_written(&root, &robots, &fixtures, &mut stale);
    check_repetition(&root);
    assert!(
        stale.is_empty(),
        "generated code is stale for {stale:?}: run `cargo run -p softgen-codegen` and commit generated/"
    );
}

/// 1 and 4: the fixture's snapshots, derived first so that symbol creation order (and so
/// symbolica's term order in the printed equations) is always the same; then soft sections'
/// local pieces.
fn check_snapshots(root: &Path) {
    let fixture = std::fs::read_to_string(root.join("model-specs/double_pendulum.toml")).unwrap();
    let generated =
        softgen_codegen::generate_source("model-specs/double_pendulum.toml", &fixture).expect("fixture generates");
    let (derived, _) = softgen_codegen::expanded_equations(&generated.robot).expect("the fixture expands");
    insta::assert_snapshot!("double_pendulum_equations", softgen_codegen::symbolic_report(&generated.robot, &derived));
    insta::assert_snapshot!("double_pendulum_rust", generated.source);

    // 4. Soft sections' local pieces.
    let section = softgen_codegen::section_kinematics();
    insta::assert_snapshot!("section_kinematics", softgen_codegen::kinematics_report(&section, 200));
    check_section_pieces(&section);
}

/// The specs in model-specs/, in name order.
fn spec_files(root: &Path) -> Vec<PathBuf> {
    let mut specs: Vec<_> = std::fs::read_dir(root.join("model-specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| softgen_codegen::is_spec_file(p))
        .collect();
    specs.sort();
    assert!(specs.len() >= 3, "expected the seed robots in model-specs/");
    specs
}

/// 2. Recursive against expanded, for every rigid robot, and the 12-link scaling fixture.
fn check_recursive_against_expanded(root: &Path, specs: &[PathBuf]) {
    for spec in specs {
        let name = spec.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(spec).unwrap();
        let robot = softgen_codegen::load_in(&format!("model-specs/{name}.toml"), &text, &root.join("model-specs"))
            .unwrap_or_else(|e| panic!("{e}"));
        // The expansion grows steeply with a spatial chain's length: the imported 7-joint
        // Panda takes 5 minutes of symbolica's single thread. Imported robots are checked
        // against an independent library instead (python/tests/test_urdf_import.py).
        if robot.is_soft() || robot.urdf.is_some() {
            continue;
        }
        let start = std::time::Instant::now();
        compare_recursive_with_expanded(&robot);
        println!("{name:<28} recursive = expanded in {:.1} s", start.elapsed().as_secs_f64());
    }

    // The 12-link scaling fixture (14 coordinates) too: the expansion still takes seconds.
    let fixture = softgen_codegen::planar_snake_spec(12);
    compare_recursive_with_expanded(&softgen_codegen::load("snake_links_12.toml", &fixture).unwrap());
}

/// 3. Every spec and scaling fixture regenerated against its committed module; the stale
/// ones' names go to `stale`. Returns the robots and the fixtures.
fn check_modules(
    root: &Path,
    specs: &[PathBuf],
    stale: &mut Vec<String>,
) -> (Vec<softgen_codegen::Robot>, Vec<softgen_codegen::Robot>) {
    let mut robots = Vec::new();
    let mut fixtures = Vec::new();
    let generated = specs
        .iter()
        .map(|spec| {
            let name = spec.file_stem().unwrap().to_string_lossy().to_string();
            softgen_codegen::generate_file(spec, &format!("model-specs/{name}.toml"))
        })
        .chain(softgen_codegen::SCALING_LINKS.iter().map(|&links| softgen_codegen::generate_fixture(links)));
    for (i, g) in generated.enumerate() {
        let g = g.unwrap_or_else(|e| panic!("{e}"));
        let name = g.robot.name.clone();
        println!(
            "{name:<28} {:>6.2} s codegen {:>6} lines {:>8} bytes ({})",
            g.seconds(),
            g.lines(),
            g.source.len(),
            g.times
        );
        let committed =
            std::fs::read_to_string(root.join(softgen_codegen::robot_module_path(&name))).unwrap_or_default();
        if committed != g.source {
            stale.push(name.clone());
        }
        if i < specs.len() {
            robots.push(g.robot);
        } else {
            fixtures.push(g.robot);
        }
    }
    (robots, fixtures)
}

/// The robots' manifests, generated/Cargo.toml and generated/src/lib.rs (the module list
/// and the registry of robots) against what codegen writes for them.
fn check_workspace_files(
    root: &Path,
    robots: &[softgen_codegen::Robot],
    fixtures: &[softgen_codegen::Robot],
    stale: &mut Vec<String>,
) {
    for (path, source) in softgen_codegen::workspace_files(robots, fixtures, root).unwrap_or_else(|e| panic!("{e}")) {
        if std::fs::read_to_string(root.join(&path)).unwrap_or_default() != source {
            stale.push(path);
        }
    }
}

/// The example crates' modules, generated with `--out` into their own src/.
fn check_example_modules(root: &Path, stale: &mut Vec<String>) {
    for example in std::fs::read_dir(root.join("examples")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        let crate_name = example.file_name().unwrap().to_string_lossy().to_string();
        for spec in std::fs::read_dir(&example)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| softgen_codegen::is_spec_file(p) && !p.ends_with("Cargo.toml"))
        {
            let stem = spec.file_stem().unwrap().to_string_lossy().to_string();
            let display = format!("examples/{crate_name}/{stem}.toml");
            let regenerate = format!("softgen-codegen --out examples/{crate_name}/src {display}");
            let g =
                softgen_codegen::generate_out_of_tree(&spec, &display, &regenerate).unwrap_or_else(|e| panic!("{e}"));
            if std::fs::read_to_string(example.join("src").join(format!("{stem}.rs"))).unwrap_or_default() != g.source {
                stale.push(format!("examples/{crate_name}/src/{stem}.rs (`cargo run -p softgen-codegen -- --out examples/{crate_name}/src {display}`)"));
            }
        }
    }
}

/// What codegen does not write (and removes): a crate folder no spec or fixture generates,
/// or one in the wrong place (a fixture's among the robots), a file in one beside its
/// Cargo.toml and src/lib.rs (and the folders' rustfmt.toml), a module in generated/src/
/// or generated/apps/src/ beside lib.rs.
fn check_nothing_else_written(
    root: &Path,
    robots: &[softgen_codegen::Robot],
    fixtures: &[softgen_codegen::Robot],
    stale: &mut Vec<String>,
) {
    let is_robot = |name: &str| robots.iter().any(|r| r.name == name);
    let is_fixture = |name: &str| fixtures.iter().any(|r| r.name == name);
    let crate_folders = [
        (softgen_codegen::ROBOT_CRATES, &is_robot as &dyn Fn(&str) -> bool),
        (softgen_codegen::FIXTURE_CRATES, &is_fixture),
        (softgen_codegen::APP_CRATES, &is_robot),
    ];
    for (crates, belongs) in crate_folders {
        for path in std::fs::read_dir(root.join(crates)).unwrap().map(|e| e.unwrap().path()) {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !path.is_dir() {
                if !matches!(name.as_str(), "rustfmt.toml" | "Cargo.toml") {
                    stale.push(format!("{} (codegen does not write it)", path.display()));
                }
                continue;
            }
            if crates == softgen_codegen::APP_CRATES && name == "src" {
                continue;
            }
            if !belongs(&name) {
                stale.push(format!("{} (no spec generates it here)", path.display()));
                continue;
            }
            for file in std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            {
                if file != "Cargo.toml" && file != "src" {
                    stale.push(format!("{}/{file} (codegen does not write it)", path.display()));
                }
            }
            for file in std::fs::read_dir(path.join("src"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            {
                if file != "lib.rs" {
                    stale.push(format!("{}/src/{file} (codegen does not write it)", path.display()));
                }
            }
        }
    }
    for folder in ["generated/src".to_string(), format!("{}/src", softgen_codegen::APP_CRATES)] {
        for path in std::fs::read_dir(root.join(folder)).unwrap().map(|e| e.unwrap().path()) {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".rs") && name != "lib.rs" {
                stale.push(format!("{} (modules live in their crates' folders)", path.display()));
            }
        }
    }
}

/// 5. Repetition in specs: the 20-link snake written with `repeat` generates the same
/// module as the longhand fixture.
fn check_repetition(root: &Path) {
    let repeated = std::fs::read_to_string(root.join("codegen/tests/fixtures/snake_links_20_repeated.toml")).unwrap();
    let from_repeated =
        softgen_codegen::generate_source("snake_links_20.toml", &repeated).unwrap_or_else(|e| panic!("{e}"));
    let from_longhand =
        softgen_codegen::generate_source("snake_links_20.toml", &softgen_codegen::planar_snake_spec(20))
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        from_repeated.source == from_longhand.source,
        "the repeated 20-link snake generates a different module from the longhand one"
    );
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
        let (mass, coriolis, gravity) =
            (group(&oracle, "mass matrix"), group(&oracle, "coriolis force"), group(&oracle, "gravity force"));
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
        assert!(
            worst <= 1e-12 * size,
            "{}: articulated-body forward dynamics off by {:e} (relative) at state {state}",
            robot.name,
            worst / size
        );
        for ((group, a), (_, b)) in ours.iter().zip(&oracle) {
            if *group == "accelerations" {
                continue;
            }
            assert_eq!(a.len(), b.len(), "{}: {group} sizes differ", robot.name);
            let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
            let worst = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale;
            assert!(
                worst <= 1e-12,
                "{}: {group} differs from the expanded derivation by {worst:e} (relative) at state {state}",
                robot.name
            );
        }
    }
    println!("{:<28} recursive = expanded to 1e-12 at 10 random states", robot.name);
}

/// The pieces at one shape, evaluated: (p, R, dp/dx, w_x, d2p/dxdy, dw_x/dy).
#[allow(clippy::type_complexity)]
fn section_values(
    k: &softgen_codegen::SectionKinematics,
    xi: f64,
    shape: [f64; 3],
) -> ([f64; 3], [[f64; 3]; 3], [[f64; 3]; 3], [[f64; 3]; 3], [[[f64; 3]; 3]; 3], [[[f64; 3]; 3]; 3]) {
    let s = xi * xi * (shape[1] * shape[1] + shape[2] * shape[2]);
    let c = softgen_runtime::stumpff(s);
    let mut values = std::collections::BTreeMap::new();
    values.insert("xi".to_string(), xi);
    for (x, name) in ["len", "bend_y", "bend_z"].iter().enumerate() {
        values.insert(name.to_string(), shape[x]);
    }
    for (j, v) in c.iter().enumerate() {
        values.insert(format!("c{j}"), *v);
    }
    let value = |a: &dyn std::fmt::Display| {
        softgen_codegen::parse_expression(&a.to_string()).unwrap().evaluate(&values).unwrap()
    };
    let three = |v: &[_; 3]| [value(&v[0]), value(&v[1]), value(&v[2])];
    (
        three(&k.position),
        [three(&k.rotation[0]), three(&k.rotation[1]), three(&k.rotation[2])],
        [three(&k.position_partials[0]), three(&k.position_partials[1]), three(&k.position_partials[2])],
        [three(&k.angular[0]), three(&k.angular[1]), three(&k.angular[2])],
        std::array::from_fn(|x| std::array::from_fn(|y| three(&k.position_second[x][y]))),
        std::array::from_fn(|x| std::array::from_fn(|y| three(&k.angular_partials[x][y]))),
    )
}

fn check_section_pieces(k: &softgen_codegen::SectionKinematics) {
    let close = |a: f64, b: f64, tolerance: f64, what: &str| {
        assert!((a - b).abs() <= tolerance * (1.0 + b.abs()), "{what}: {a} vs {b}")
    };
    for shape in [[0.15, 0.0, 0.0], [0.15, 1e-9, -2e-9], [0.2, 0.7, -0.4], [0.12, -2.1, 2.2], [0.3, 3.0, 0.2]] {
        for xi in [0.0, 0.31, 1.0] {
            let (p, r, dp, w, ddp, dw) = section_values(k, xi, shape);
            // The exact arc: bending angle theta = |bend| xi about n = (0, -bend_z, bend_y) / |bend|.
            let theta = (shape[1] * shape[1] + shape[2] * shape[2]).sqrt();
            let angle = theta * xi;
            let exact_p = if theta == 0.0 {
                [shape[0] * xi, 0.0, 0.0]
            } else {
                // 1 - cos written as 2 sin^2(angle / 2), exact near straight too.
                let radius = shape[0] / theta;
                let versine = 2.0 * (angle / 2.0).sin().powi(2);
                [radius * angle.sin(), radius * versine * shape[1] / theta, radius * versine * shape[2] / theta]
            };
            for a in 0..3 {
                close(p[a], exact_p[a], 1e-13, &format!("p[{a}] at {shape:?}, xi {xi}"));
            }
            // The frame's x axis is the arc's tangent.
            let tangent = if theta == 0.0 {
                [1.0, 0.0, 0.0]
            } else {
                [angle.cos(), angle.sin() * shape[1] / theta, angle.sin() * shape[2] / theta]
            };
            for a in 0..3 {
                close(r[a][0], tangent[a], 1e-13, &format!("R[{a}][0] at {shape:?}, xi {xi}"));
            }
            // First and second partials against central differences of the pieces below them.
            let h = 1e-6;
            for x in 0..3 {
                let shifted = |d: f64| {
                    let mut s = shape;
                    s[x] += d;
                    section_values(k, xi, s)
                };
                let (plus, minus) = (shifted(h), shifted(-h));
                // w_x = vee(dR/dx R').
                let dr: [[f64; 3]; 3] =
                    std::array::from_fn(|a| std::array::from_fn(|b| (plus.1[a][b] - minus.1[a][b]) / (2.0 * h)));
                let product = |a: usize, b: usize| (0..3).map(|m| dr[a][m] * r[b][m]).sum::<f64>();
                let vee = [product(2, 1), product(0, 2), product(1, 0)];
                for a in 0..3 {
                    close(w[x][a], vee[a], 1e-7, &format!("w_{x}[{a}] at {shape:?}, xi {xi}"));
                    close(
                        dp[x][a],
                        (plus.0[a] - minus.0[a]) / (2.0 * h),
                        1e-7,
                        &format!("dp/d{x}[{a}] at {shape:?}, xi {xi}"),
                    );
                    for y in 0..3 {
                        close(
                            ddp[y][x][a],
                            (plus.2[y][a] - minus.2[y][a]) / (2.0 * h),
                            1e-6,
                            &format!("d2p/d{y}d{x}[{a}] at {shape:?}"),
                        );
                        close(
                            dw[y][x][a],
                            (plus.3[y][a] - minus.3[y][a]) / (2.0 * h),
                            1e-6,
                            &format!("dw_{y}/d{x}[{a}] at {shape:?}"),
                        );
                    }
                }
            }
            // The bias pieces are the partials contracted with the shape rates: w' = sum_xy
            // x' y' dw_x/dy and p'' = sum_xy x' y' d2p/dxdy.
            let rates = [0.03, -0.8, 1.3];
            let mut rated = std::collections::BTreeMap::new();
            rated.insert("xi".to_string(), xi);
            for (x, name) in ["len", "bend_y", "bend_z"].iter().enumerate() {
                rated.insert(name.to_string(), shape[x]);
                rated.insert(format!("{name}_rate"), rates[x]);
            }
            for (j, v) in
                softgen_runtime::stumpff(xi * xi * (shape[1] * shape[1] + shape[2] * shape[2])).iter().enumerate()
            {
                rated.insert(format!("c{j}"), *v);
            }
            let value = |a: &dyn std::fmt::Display| {
                softgen_codegen::parse_expression(&a.to_string()).unwrap().evaluate(&rated).unwrap()
            };
            for a in 0..3 {
                let contracted = |second: &[[[f64; 3]; 3]; 3]| {
                    (0..3)
                        .flat_map(|x| (0..3).map(move |y| (x, y)))
                        .map(|(x, y)| rates[x] * rates[y] * second[x][y][a])
                        .sum::<f64>()
                };
                close(value(&k.angular_bias[a]), contracted(&dw), 1e-12, &format!("w'[{a}] at {shape:?}, xi {xi}"));
                close(value(&k.position_bias[a]), contracted(&ddp), 1e-12, &format!("p''[{a}] at {shape:?}, xi {xi}"));
            }
        }
    }
}
