//! The `softgen` binary end to end: the default run writes its CSV and PNG, `eval` prints
//! JSON for states from the command line and stdin, and a failing run leaves the previous
//! outputs byte for byte and names the input that likely made it fail, and `experiment` lists and runs the seed experiments. The bad-input
//! corpus is tests/cli/bad_input.rs.

use std::io::Write;
use std::process::{Command, Stdio};

fn softgen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softgen"))
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = softgen().args(args).output().expect("binary runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn simulate_writes_csv_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (ok, stdout, stderr) = run(&["simulate", "--duration", "1", "--output", out]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("mean velocity"), "{stdout}");
    let csv = std::fs::read_to_string(dir.path().join("snake_pedal_wave.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("t,base_x,base_z,base_pitch,link2_joint"), "{header}");
    assert!(header.contains("com_x") && header.contains("head_tip_fz"));
    let columns = header.split(',').count();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 101, "1 s at 2 ms, every 5th sample");
    assert!(rows.iter().all(|r| r.split(',').count() == columns));
    let png = std::fs::read(dir.path().join("snake_pedal_wave.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let svg = std::fs::read_to_string(dir.path().join("snake_pedal_wave.svg")).unwrap();
    for text in ["snake_pedal_wave: centre of mass and body", "x (m)", "z (m)", "centre of mass", "ground"] {
        assert!(svg.contains(text), "the SVG lacks `{text}`");
    }
}

#[test]
fn every_integrator_and_terrain_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for args in [
        vec!["--integrator", "euler", "--dt", "0.0005"],
        vec!["--integrator", "dopri5", "--friction-regularisation", "0.001"],
        vec!["--terrain", "stair", "--admittance"],
        vec!["--robot", "snake_lateral_undulation", "--terrain", "pipe", "--pipe-diameter", "0.1"],
        vec!["--robot", "double_pendulum", "--set", "lower_mass=2"],
        vec!["--robot", "soft_snake", "--integrator", "ros34", "--rtol", "1e-3", "--atol", "1e-4", "--dt", "0.01"],
        vec!["--robot", "soft_snake", "--integrator", "ros34", "--jacobian", "exact", "--dt", "0.01"],
    ] {
        let mut all = vec!["simulate", "--duration", "0.5", "--no-plot", "--output", out];
        all.extend(args.iter());
        let (ok, _, stderr) = run(&all);
        assert!(ok, "{all:?}: {stderr}");
    }
}

#[test]
fn eval_prints_the_model_as_json() {
    let (ok, stdout, stderr) = run(&["eval", "double_pendulum", "--q=-1,0.5", "--qd", "0.3,-0.2"]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["coordinates"][1]["name"], "lower_joint");
    assert_eq!(v["mass_matrix"].as_array().unwrap().len(), 2);
    let m01 = v["mass_matrix"][0][1].as_f64().unwrap();
    let expected = 0.5 * 0.7 * 0.7 + 0.5 * 1.0 * 0.7 * 0.5f64.cos();
    assert!((m01 - expected).abs() < 1e-12);
    assert_eq!(v["contact_points"][0]["jacobian"].as_array().unwrap().len(), 3);

    let mut child = softgen()
        .args(["eval", "snake_pedal_wave", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"q": [0, 0.1, 0.2, 0.3, -0.3, 0.2, 0.1, 0], "qd": [1, 0, 0, 0, 0, 0, 0, 0], "params": {"link_mass": 0.2}}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((v["mass_matrix"][0][0].as_f64().unwrap() - 1.2).abs() < 1e-12, "six links of 0.2 kg");
    assert!((v["linear_momentum"][0].as_f64().unwrap() - 1.2).abs() < 1e-12);
    assert_eq!(v["contact_points"].as_array().unwrap().len(), 13);
}

#[test]
fn eval_derivatives_adds_the_forward_dynamics_and_its_derivatives() {
    let matrix = |v: &serde_json::Value| -> Vec<Vec<f64>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
            .collect()
    };
    let at = |q: f64, qd: f64, tau: f64| {
        let (ok, stdout, stderr) = run(&[
            "eval",
            "double_pendulum",
            &format!("--q=-1,{q}"),
            &format!("--qd=0.3,{qd}"),
            &format!("--tau=0.1,{tau}"),
            "--derivatives",
        ]);
        assert!(ok, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()
    };
    let v = at(0.5, -0.2, 0.0);
    let qdd: Vec<f64> = v["forward_dynamics"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let (mass, dtau) = (matrix(&v["mass_matrix"]), matrix(&v["forward_dynamics_derivatives"]["dtau"]));
    // dtau is M^-1.
    for i in 0..2 {
        for j in 0..2 {
            let product: f64 = (0..2).map(|k| mass[i][k] * dtau[k][j]).sum();
            assert!((product - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12, "M dtau = {product} at ({i}, {j})");
        }
    }
    // Column 1 of dq, dqd and dtau against central differences of `forward_dynamics`.
    let h = 1e-6;
    let accelerations = |v: &serde_json::Value| -> Vec<f64> {
        v["forward_dynamics"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
    };
    for (key, up, down) in [
        ("dq", at(0.5 + h, -0.2, 0.0), at(0.5 - h, -0.2, 0.0)),
        ("dqd", at(0.5, -0.2 + h, 0.0), at(0.5, -0.2 - h, 0.0)),
        ("dtau", at(0.5, -0.2, h), at(0.5, -0.2, -h)),
    ] {
        let derivative = matrix(&v["forward_dynamics_derivatives"][key]);
        for i in 0..2 {
            let numeric = (accelerations(&up)[i] - accelerations(&down)[i]) / (2.0 * h);
            assert!(
                (derivative[i][1] - numeric).abs() < 1e-6 * (1.0 + qdd[i].abs()),
                "{key}[{i}][1] = {} vs {numeric} by differences",
                derivative[i][1]
            );
        }
    }

    let (ok, _, stderr) = run(&["eval", "double_pendulum", "--tau=1,2,3", "--derivatives"]);
    assert!(!ok);
    assert!(stderr.contains("tau needs 2 values, got 3"), "{stderr}");
}

#[test]
fn a_rejected_run_keeps_the_previous_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (ok, _, stderr) = run(&["simulate", "--duration", "0.2", "--output", out]);
    assert!(ok, "{stderr}");
    let before = std::fs::read(dir.path().join("snake_pedal_wave.csv")).unwrap();
    let (ok, _, _) = run(&["simulate", "--duration", "0.2", "--set", "nonsense=1", "--output", out]);
    assert!(!ok);
    assert_eq!(std::fs::read(dir.path().join("snake_pedal_wave.csv")).unwrap(), before);
}

/// Every file of a folder with its bytes.
fn files(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

#[test]
fn a_run_that_fails_midway_keeps_the_previous_csv_png_and_svg_and_its_own_csv_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let good = ["simulate", "--robot", "soft_snake", "--duration", "0.05", "--output", out];
    // Explicit Runge-Kutta at 10 ms on the stiff soft snake: fails at t = 0.05 s.
    let bad = [
        "simulate",
        "--robot",
        "soft_snake",
        "--integrator",
        "rk4",
        "--dt",
        "0.01",
        "--duration",
        "1",
        "--output",
        out,
    ];
    let (ok, _, stderr) = run(&good);
    assert!(ok, "{stderr}");
    let before = files(dir.path());
    assert_eq!(before.len(), 3, "CSV, PNG and SVG: {:?}", before.keys());
    let (ok, stdout, stderr) = run(&bad);
    assert!(!ok, "should fail midway: {stdout}");
    assert!(stderr.contains("the run stopped early") && stderr.contains("earlier outputs kept"), "{stderr}");
    let after = files(dir.path());
    for (name, bytes) in &before {
        assert!(after.get(name) == Some(bytes), "the failed run changed {name}");
    }
    let new: Vec<&String> = after.keys().filter(|n| !before.contains_key(*n)).collect();
    assert_eq!(new, ["soft_snake.failed.csv"], "what the failed run left");
    assert!(stderr.contains("soft_snake.failed.csv"), "the message names it: {stderr}");
    // The next run that ends normally replaces the outputs and clears the failed one.
    let (ok, _, stderr) = run(&good);
    assert!(ok, "{stderr}");
    assert!(!dir.path().join("soft_snake.failed.csv").exists());
}

#[test]
fn a_run_that_fails_after_its_start_names_the_likely_input() {
    // (what, extra arguments, pieces the message must hold, pieces it must not).
    let cases: [(&str, &[&str], &[&str], &[&str]); 3] = [
        (
            "a contact stiffness within range but too stiff for the 1 ms step",
            &["--contact-stiffness", "1e10"],
            &["the contact stiffness (1e10 N/m) is the likely cause", "--contact-stiffness"],
            &["try --integrator ros34"],
        ),
        (
            "a contact damping too fast for the step",
            &["--contact-damping", "1e8"],
            &["the contact damping (1e8 N s/m) is the likely cause", "--contact-damping"],
            &["try --integrator ros34"],
        ),
        (
            // The spec's own contact, which the robot runs with: the step the user chose is
            // what to change.
            "the soft snake under rk4 at 10 ms",
            &["--robot", "soft_snake", "--integrator", "rk4", "--dt", "0.01"],
            &["the step (0.01 s) is the likely cause", "spec's contact damping", "use --integrator ros34"],
            &["--contact-damping"],
        ),
    ];
    let mut problems = Vec::new();
    for (what, extra, wanted, unwanted) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["simulate", "--duration", "1", "--no-plot", "--output", dir.path().to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, _, stderr) = run(&args);
        let missing: Vec<&&str> = wanted.iter().filter(|w| !stderr.contains(**w)).collect();
        let present: Vec<&&str> = unwanted.iter().filter(|u| stderr.contains(**u)).collect();
        if ok || !stderr.contains("the run stopped early") || !missing.is_empty() || !present.is_empty() {
            problems.push(format!("{what}: ok = {ok}, missing {missing:?}, should not say {present:?}:\n{stderr}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_failed_sweep_keeps_the_previous_table() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("s.toml");
    let table = dir.path().join("results.parquet");
    let write = |robot: &str| {
        std::fs::write(&sweep, format!("robot = \"{robot}\"\n[base]\nduration = 0.05\n[grid]\nramp = [0.0, 1.0]\n"))
            .unwrap()
    };
    write("double_pendulum");
    let args = ["sweep", sweep.to_str().unwrap(), "--output", table.to_str().unwrap()];
    let (ok, _, stderr) = run(&args);
    assert!(ok, "{stderr}");
    let before = std::fs::read(&table).unwrap();
    write("hexapod");
    let (ok, _, _) = run(&args);
    assert!(!ok);
    assert_eq!(std::fs::read(&table).unwrap(), before);
}

#[test]
fn a_closed_output_pipe_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let record = dir.path().join("commands.csv");
    let commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["--help"],
        vec!["simulate", "--help"],
        vec!["eval", "snake_pedal_wave"],
        vec!["eval", "soft_snake", "--derivatives"],
        vec!["experiment", "list"],
        vec!["simulate", "--duration", "0.1", "--no-plot", "--output", out],
        vec!["run", "--duration", "0.05", "--record", record.to_str().unwrap()],
        vec!["run", "--dry-run"],
    ];
    use std::io::BufRead;
    for args in &commands {
        // Read no line (the pipe closes before the first write) or one line.
        for lines in [0, 1] {
            let mut child = softgen().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
            for _ in 0..lines {
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
            }
            drop(reader);
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let code = output.status.code();
            assert!(matches!(code, Some(0 | 141)), "{args:?} after {lines} lines: exit {code:?}: {stderr}");
            assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        }
    }
    let partial: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
}

#[test]
fn a_run_that_fails_at_its_start_keeps_the_previous_record_and_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let (record, trajectory) = (dir.path().join("commands.csv"), dir.path().join("plant.csv"));
    let paths = |r: &std::path::Path, t: &std::path::Path| {
        vec!["run", "--duration", "0.2", "--record", r.to_str().unwrap(), "--trajectory", t.to_str().unwrap()]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let args = paths(&record, &trajectory);
    let (ok, _, stderr) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{stderr}");
    let (record_before, trajectory_before) = (std::fs::read(&record).unwrap(), std::fs::read(&trajectory).unwrap());
    assert!(!record_before.is_empty() && !trajectory_before.is_empty());
    // The record is opened first, then the trajectory fails: nothing of the new run stays.
    let blocked = dir.path().join("a directory");
    std::fs::create_dir(&blocked).unwrap();
    for args in [paths(&record, &blocked), paths(&blocked, &trajectory)] {
        let (ok, _, stderr) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(!ok, "{args:?} should fail");
        assert!(stderr.contains("is a directory, not a file to write"), "{stderr}");
        assert_eq!(std::fs::read(&record).unwrap(), record_before, "the previous record changed");
        assert_eq!(std::fs::read(&trajectory).unwrap(), trajectory_before, "the previous trajectory changed");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty(), "partial files left: {leftovers:?}");
    }
}

#[test]
fn experiments_are_listed_one_a_line_and_run_to_their_verdict() {
    let (ok, stdout, stderr) = run(&["experiment", "list"]);
    assert!(ok, "{stderr}");
    let names: Vec<&str> = stdout.lines().collect();
    let expected: Vec<&str> = softgen::experiments().map(|e| e.name).collect();
    assert_eq!(names, expected);
    for paper in softgen::PAPERS {
        for name in paper.experiments.iter().map(|e| e.name) {
            // A paper's experiments are `<seed>-<name>`, the control tasks `mpc-<seed>-<task>`.
            let (seed, short) = name.strip_prefix("mpc-").unwrap_or(name).split_once('-').unwrap();
            assert!(seed.len() == 3 && seed.chars().all(|c| c.is_ascii_digit()) && !short.is_empty(), "{name}");
            assert!(paper.seed.starts_with(seed), "{name} is listed under {}", paper.seed);
        }
    }
    // The tasks of robots from no paper: `<robot>-<task>`, lower case and hyphens, no seed.
    for name in softgen::papers::TASKS.iter().flat_map(|t| t.iter()).map(|e| e.name) {
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '-') && name.contains('-'), "{name}");
    }
    // One whole experiment: its files, its comparison and the verdict as the last line.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (ok, stdout, stderr) = run(&["experiment", "run", "001-trajectory", "--output", out]);
    assert!(ok, "{stderr}");
    let last = stdout.lines().last().unwrap();
    let classes = ["verdict: differs: ", "verdict: paper inconsistent: ", "verdict: unverifiable: "];
    assert!(last == "verdict: reproduced" || classes.iter().any(|c| last.starts_with(c)), "{stdout}");
    // The front page's row of it is the binary's output: it must agree with this run.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let rows = softgen::verdict_table_rows(&readme).unwrap();
    let (_, class, reason) = rows.iter().find(|(n, _, _)| n == "001-trajectory").expect("README.md's row");
    let row = if reason.is_empty() { format!("verdict: {class}") } else { format!("verdict: {class}: {reason}") };
    assert!(last.starts_with(&row), "README.md says `{row}`, the run `{last}`");
    assert!(stdout.contains("complex") && stdout.contains("simplified"), "{stdout}");
    let csv = std::fs::read_to_string(dir.path().join("001-trajectory/trajectory.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("h1_x"), "joint constraint forces in the CSV");
    for file in ["trajectory.png", "trajectory.svg"] {
        assert!(dir.path().join("001-trajectory").join(file).exists(), "{file}");
    }
}
