//! Criterion bench of code generation against robot size: the scaling fixtures (planar snakes
//! of 6, 12, 20 and 60 links), and robots imported from URDF (the committed Panda and ANYmal
//! C, and a humanoid of 30 joints on a floating base written here), spec text to formatted
//! module, every stage included (the URDF read too).
//!
//! Symbolica allows one thread per user without a licence key; criterion runs benchmarks one
//! after another in this one thread. Run with `cargo bench -p softgen-codegen`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A humanoid's URDF: a floating pelvis, a torso of 2 joints with a head of 2 and two arms
/// of 7, and two legs of 6: 30 joints, 31 links, the sizes and masses of an adult.
fn humanoid_urdf() -> String {
    let mut urdf = String::from("<?xml version=\"1.0\"?>\n<robot name=\"humanoid\">\n");
    let link = |urdf: &mut String, name: &str, mass: f64, length: f64| {
        // A rod along -z (limbs) of its mass and length, with a little width.
        let (i_long, i_short) = (mass * length * length / 12.0 + mass * 0.0025, mass * 0.0025);
        writeln!(
            urdf,
            "  <link name=\"{name}\"><inertial><origin xyz=\"0.01 0.005 {:.4}\"/><mass value=\"{mass}\"/><inertia ixx=\"{i_long:.6}\" iyy=\"{i_long:.6}\" izz=\"{i_short:.6}\" ixy=\"0.0001\" ixz=\"0\" iyz=\"0\"/></inertial></link>",
            -length / 2.0
        )
        .unwrap();
    };
    let joint = |urdf: &mut String, name: &str, parent: &str, child: &str, xyz: [f64; 3], axis: [f64; 3]| {
        writeln!(
            urdf,
            "  <joint name=\"{name}\" type=\"revolute\"><parent link=\"{parent}\"/><child link=\"{child}\"/><origin xyz=\"{} {} {}\" rpy=\"0 0 0\"/><axis xyz=\"{} {} {}\"/><limit lower=\"-2\" upper=\"2\" effort=\"100\" velocity=\"5\"/></joint>",
            xyz[0], xyz[1], xyz[2], axis[0], axis[1], axis[2]
        )
        .unwrap();
    };
    // A limb: its links one after another from `parent`, each on a joint about its axis.
    type Part = (&'static str, f64, f64, [f64; 3], [f64; 3]);
    let chain = |urdf: &mut String, side: &str, parent: &str, parts: &[Part]| {
        let mut parent = parent.to_string();
        for &(part, mass, length, xyz, axis) in parts {
            let name = format!("{side}_{part}");
            link(urdf, &name, mass, length);
            joint(urdf, &format!("{name}_joint"), &parent, &name, xyz, axis);
            parent = name;
        }
    };
    let (x, y, z) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    link(&mut urdf, "pelvis", 10.0, 0.2);
    // Torso and head.
    link(&mut urdf, "torso_1", 2.0, 0.05);
    joint(&mut urdf, "torso_1_joint", "pelvis", "torso_1", [0.0, 0.0, 0.1], z);
    link(&mut urdf, "torso_2", 20.0, 0.4);
    joint(&mut urdf, "torso_2_joint", "torso_1", "torso_2", [0.0, 0.0, 0.05], y);
    link(&mut urdf, "head_1", 0.5, 0.05);
    joint(&mut urdf, "head_1_joint", "torso_2", "head_1", [0.0, 0.0, 0.45], z);
    link(&mut urdf, "head_2", 4.0, 0.2);
    joint(&mut urdf, "head_2_joint", "head_1", "head_2", [0.0, 0.0, 0.05], y);
    // Arms: shoulder (3), elbow, wrist (3).
    for (side, s) in [("left", 1.0), ("right", -1.0)] {
        let parts = [
            ("shoulder_1", 1.0, 0.05, [0.0, s * 0.2, 0.4], y),
            ("shoulder_2", 1.0, 0.05, [0.0, s * 0.05, 0.0], x),
            ("upper_arm", 2.0, 0.3, [0.0, 0.0, -0.05], z),
            ("forearm", 1.5, 0.25, [0.0, 0.0, -0.3], y),
            ("wrist_1", 0.3, 0.03, [0.0, 0.0, -0.25], z),
            ("wrist_2", 0.3, 0.03, [0.0, 0.0, -0.03], y),
            ("hand", 0.5, 0.1, [0.0, 0.0, -0.03], x),
        ];
        chain(&mut urdf, side, "torso_2", &parts);
    }
    // Legs: hip (3), knee, ankle (2).
    for (side, s) in [("left", 1.0), ("right", -1.0)] {
        let parts = [
            ("hip_1", 1.0, 0.05, [0.0, s * 0.1, -0.1], z),
            ("hip_2", 1.0, 0.05, [0.0, 0.0, -0.05], x),
            ("thigh", 7.0, 0.4, [0.0, 0.0, -0.05], y),
            ("shank", 4.0, 0.4, [0.0, 0.0, -0.4], y),
            ("ankle", 0.5, 0.05, [0.0, 0.0, -0.4], y),
            ("foot", 1.2, 0.08, [0.0, 0.0, -0.05], x),
        ];
        chain(&mut urdf, side, "pelvis", &parts);
    }
    urdf.push_str("</robot>\n");
    urdf
}

fn codegen(c: &mut Criterion) {
    std::env::set_var("SYMBOLICA_HIDE_BANNER", "1");
    let mut group = c.benchmark_group("codegen");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    for links in softgen_codegen::SCALING_LINKS {
        let generated = softgen_codegen::generate_fixture(links).expect("the fixture generates");
        println!(
            "{}: {} coordinates, {} lines, {} bytes ({})",
            generated.robot.name,
            generated.robot.coordinates.len(),
            generated.lines(),
            generated.source.len(),
            generated.times
        );
        group.bench_function(format!("planar snake, {links} links ({} coordinates)", links + 2), |b| {
            b.iter(|| softgen_codegen::generate_fixture(links).expect("the fixture generates"))
        });
    }
    // Imported from URDF: the committed robots, and the humanoid in a folder of its own.
    let folder = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(folder.path().join("humanoid.urdf"), humanoid_urdf()).expect("the humanoid's URDF is written");
    let humanoid = folder.path().join("humanoid.toml");
    std::fs::write(
        &humanoid,
        "description = \"a humanoid of 30 joints on a floating base\"\n[import]\nurdf = \"humanoid.urdf\"\nbase = \"spatial\"\ninitial = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]\n",
    )
    .expect("the humanoid's spec is written");
    let model_specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model-specs");
    let imported: [(PathBuf, &str); 3] = [
        (model_specs.join("panda_arm.toml"), "panda_arm"),
        (model_specs.join("anymal_c.toml"), "anymal_c"),
        (humanoid, "humanoid"),
    ];
    for (spec, name) in imported {
        let display = format!("{name}.toml");
        let generated = softgen_codegen::generate_file(&spec, &display).expect("the imported robot generates");
        let coordinates = generated.robot.coordinates.len();
        println!(
            "{name}: {coordinates} coordinates, {} bodies, {} lines, {} bytes ({})",
            generated.robot.bodies.len(),
            generated.lines(),
            generated.source.len(),
            generated.times
        );
        group.bench_function(format!("from URDF, {name} ({coordinates} coordinates)"), |b| {
            b.iter(|| softgen_codegen::generate_file(&spec, &display).expect("the imported robot generates"))
        });
    }
    group.finish();
}

criterion_group!(benches, codegen);
criterion_main!(benches);
