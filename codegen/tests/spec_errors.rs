//! The spec loader in process: the corpus's base specs load with the sizes they should have,
//! numbers near the ends of f64 convert exactly, and every committed spec validates. The bad
//! specs are in tests/corpus/specs.toml (run by spec_corpus.rs). Validation does not call
//! symbolica, so these run in parallel.

use softgen_codegen::load;
use std::path::{Path, PathBuf};

fn corpus_file(name: &str) -> (String, String) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    (name.to_string(), std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn the_corpus_bases_load() {
    let (name, text) = corpus_file("two_links.toml");
    assert_eq!(load(&name, &text).unwrap().coordinates.len(), 4, "3 planar base + 1 joint");
    let (name, text) = corpus_file("free_body.toml");
    assert_eq!(load(&name, &text).unwrap().coordinates.len(), 6);
    let (name, text) = corpus_file("two_soft_sections.toml");
    let robot = load(&name, &text).unwrap();
    assert_eq!(robot.coordinates.len(), 12, "6 base + 3 per section");
    assert_eq!(robot.contact_points.len(), 30, "5 rings of 6");
}

#[test]
fn long_mantissas_near_1e40_convert_exactly() {
    for number in ["1.2345678901234567e40", "-9.876543210987654e38", "1.7976931348623157e308", "4.9e-324"] {
        let value: f64 = number.parse().unwrap();
        assert_eq!(softgen_codegen::parse_expression(number).unwrap().evaluate(&Default::default()).unwrap(), value);
    }
}

#[test]
fn every_seed_spec_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for entry in std::fs::read_dir(root.join("model-specs")).unwrap() {
        let path = entry.unwrap().path();
        if softgen_codegen::is_spec_file(&path) {
            let text = std::fs::read_to_string(&path).unwrap();
            load(&path.to_string_lossy(), &text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// `repeat` expands to exactly the entries written out: the 20-link snake written with it
/// validates to the same robot as the longhand scaling fixture (codegen.rs compares the
/// generated modules too).
#[test]
fn repeated_snake_is_the_longhand_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snake_links_20_repeated.toml");
    let repeated = load("snake_links_20.toml", &std::fs::read_to_string(path).unwrap()).unwrap();
    let longhand = load("snake_links_20.toml", &softgen_codegen::planar_snake_spec(20)).unwrap();
    assert_eq!(repeated, longhand);
    assert_eq!(repeated.coordinates.len(), 22);
    assert_eq!(repeated.contact_points.len(), 41);
}

/// Errors in a repeated entry name the entry, the index value and the field, at the
/// template's line.
#[test]
fn errors_in_repeated_entries_name_the_index() {
    let base = "description = \"x\"\n[base]\nkind = \"fixed\"\nplane = \"xz\"\nbody = \"link1\"\n\n[[bodies]]\nname = \"link1\"\nmass = 1.0\ninertia = 0.1\n\n";
    let cases = [
        // A dangling parent for one index only: link{k - 2} does not exist for k = 2.
        (
            "[[bodies]]\nrepeat = { index = \"k\", from = 2, to = 4 }\nname = \"link{k}\"\nparent = \"link{k - 2}\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.1\n",
            "bodies[1] (k = 2) (link2).parent",
            "no body named `link0`",
            15,
        ),
        (
            "[[bodies]]\nrepeat = { index = \"k\", from = 2, to = 4 }\nname = \"link{j}\"\nparent = \"link1\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.1\n",
            "bodies[1] (k = 2).name",
            "`j` is not the index",
            14,
        ),
        (
            "[[bodies]]\nrepeat = { from = 5, to = 2 }\nname = \"link{i}\"\nparent = \"link1\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.1\n",
            "bodies[1].repeat",
            "is below `from`",
            13,
        ),
        (
            "[[bodies]]\nrepeat = { from = 2, to = 9223372036854775807 }\nname = \"link{i}\"\nparent = \"link1\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.1\n",
            "bodies[1].repeat",
            "more than the limit",
            13,
        ),
        (
            "[[bodies]]\nrepeat = { from = 2, to = 400 }\nname = \"link{i}\"\nparent = \"link1\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.1\n",
            "bodies",
            "more than the limit of 200",
            0,
        ),
        (
            "[[bodies]]\nrepeat = { from = 2, to = 3 }\nname = \"link{i}\"\nparent = \"link1\"\njoint = \"revolute\"\nmass = \"{i} * -1\"\ninertia = 0.1\n",
            "bodies[1] (i = 2) (link2).mass",
            "must be > 0 kg, got -2",
            17,
        ),
    ];
    for (entry, field, message, line) in cases {
        let errors = load("arm.toml", &format!("{base}{entry}")).unwrap_err();
        let found = errors.0.iter().find(|e| e.field.starts_with(field) && e.message.contains(message));
        let Some(error) = found else { panic!("no error at `{field}` saying `{message}` in:\n{errors}") };
        if line > 0 {
            assert_eq!(error.line, line, "{error}");
        }
    }
}

/// A URDF's fixed links are merged into their moving parent as frames: the two-link URDF of
/// the corpus gives three bodies (base, upper, lower), `tool` (0.4 m along lower's z) is a
/// frame, and a contact point and a spec body that name it land on `lower`, composed with
/// the frame's place. Expressions stay expressions.
#[test]
fn urdf_frames_carry_what_names_them() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let spec = r#"
description = "imported"
[parameters]
offset = 0.02
[import]
urdf = "two_links.urdf"
[[bodies]]
name = "probe"
parent = "tool"
joint = "prismatic"
axis = [0, 0, 1]
origin = [0, "offset", 0.01]
rotation = [0, 0, 0.5]
mass = 0.1
inertia = [0.001, 0.001, 0.001]
[[contact_points]]
body = "tool"
positions = [[0, 0, 0.01]]
names = ["tip"]
"#;
    let robot = softgen_codegen::load_in("imported.toml", spec, &folder).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = robot.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["base", "upper", "lower", "probe"]);
    let values = |v: &[softgen_codegen::Expr; 3]| -> Vec<f64> {
        let parameters = [("offset".to_string(), 0.02)].into_iter().collect();
        v.iter().map(|e| e.evaluate(&parameters).unwrap()).collect()
    };
    let tip = &robot.contact_points[0];
    assert_eq!(robot.bodies[tip.body].name, "lower");
    assert_eq!(values(&tip.position), [0.0, 0.0, 0.41]);
    let probe = &robot.bodies[3];
    assert_eq!(robot.bodies[probe.parent.unwrap()].name, "lower");
    // Written out as an expression (`offset` is a parameter): equal to rounding.
    let origin = values(&probe.origin);
    assert!(origin.iter().zip([0.0, 0.02, 0.41]).all(|(a, b)| (a - b).abs() < 1e-15), "{origin:?}");
    assert!((probe.rotation[2] - 0.5).abs() < 1e-15 && probe.rotation[0].abs() < 1e-15, "{:?}", probe.rotation);
    // The shoulder's limits [-2, 2] hold 0; masses and centres come through as parameters.
    assert_eq!(
        robot.coordinates.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["upper_joint", "lower_joint", "probe_joint"]
    );
}

#[test]
fn collision_primitives_seed_contact_points_on_their_links_bodies() {
    // ANYmal's base box: its eight corners, on the base.
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model-specs");
    let text = std::fs::read_to_string(folder.join("anymal_c.toml")).unwrap();
    let robot = softgen_codegen::load_in("anymal_c.toml", &text, &folder).unwrap_or_else(|e| panic!("{e}"));
    let corners: Vec<_> = robot.contact_points.iter().filter(|c| c.name.starts_with("base_collision0_")).collect();
    assert_eq!(corners.len(), 8);
    let none = Default::default();
    for c in &corners {
        assert_eq!(robot.bodies[c.body].name, "base");
        let p: Vec<f64> = c.position.iter().map(|e| e.evaluate(&none).unwrap()).collect();
        assert!(
            (p[0].abs() - 0.29).abs() < 1e-15 && (p[1].abs() - 0.07).abs() < 1e-15 && (p[2].abs() - 0.09).abs() < 1e-15,
            "{p:?}"
        );
    }
    // A sphere on a merged frame: on the frame's body, about the sphere's centre there.
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let urdf = std::fs::read_to_string(folder.join("two_links.urdf")).unwrap().replace(
        r#"<link name="tool"/>"#,
        r#"<link name="tool"><collision><origin xyz="0 0 0.05"/><geometry><sphere radius="0.02"/></geometry></collision></link>"#,
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robot.urdf"), urdf).unwrap();
    let spec = "description = \"seeded\"\n[import]\nurdf = \"robot.urdf\"\ncollision_points = { links = [\"tool\"] }\n";
    let robot = softgen_codegen::load_in("seeded.toml", spec, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(robot.contact_points.len(), 42);
    for (k, c) in robot.contact_points.iter().enumerate() {
        assert_eq!(c.name, format!("tool_collision0_{k}"));
        assert_eq!(robot.bodies[c.body].name, "lower");
        let p: Vec<f64> = c.position.iter().map(|e| e.evaluate(&none).unwrap()).collect();
        let distance = (p[0] * p[0] + p[1] * p[1] + (p[2] - 0.45) * (p[2] - 0.45)).sqrt();
        assert!((distance - 0.02).abs() < 1e-15, "{p:?}");
    }
}

/// The first robot of the README (the spec under "A first robot"): a newcomer copies it as
/// it stands, so it must validate, with the one coordinate of its hinge.
#[test]
fn the_readmes_first_robot_validates() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = &readme[readme.find("## A first robot").expect("README.md has `## A first robot`")..];
    let start = section.find("```toml\n").expect("a toml block under `## A first robot`") + "```toml\n".len();
    let end = start + section[start..].find("```").expect("the toml block's end");
    let robot = load("model-specs/pendulum.toml", &section[start..end]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(robot.coordinates.len(), 1, "one hinge");
}
