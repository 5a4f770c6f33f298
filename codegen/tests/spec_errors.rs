//! Bad specs get errors naming the file, line, column and field, and what was expected;
//! never a panic. Validation does not call symbolica, so these run in parallel.

use softgen_codegen::load;

const GOOD: &str = r#"description = "two links"
[parameters]
length = 0.5
[base]
kind = "planar"
plane = "xz"
body = "a"
[[bodies]]
name = "a"
mass = 1.0
inertia = 0.01
[[bodies]]
name = "b"
parent = "a"
joint = "revolute"
origin = ["length", 0, 0]
mass = 1.0
inertia = 0.01
"#;

/// (what is wrong, how to break GOOD, expected pieces of the message)
const CASES: &[(&str, (&str, &str), &[&str])] = &[
    ("syntax error", ("inertia = 0.01\n[[bodies]]\nname = \"b\"", "inertia = 0.01\n[[bodies]]\nname = = \"b\""), &["bad.toml:13:"]),
    ("unknown field", ("name = \"b\"", "name = \"b\"\ncolour = \"red\""), &["bad.toml:14:", "unknown field `colour`"]),
    ("negative mass", ("joint = \"revolute\"\norigin = [\"length\", 0, 0]\nmass = 1.0", "joint = \"revolute\"\norigin = [\"length\", 0, 0]\nmass = -2.0"), &["bad.toml:17:", "bodies[1] (b).mass", "must be > 0 kg, got -2"]),
    ("missing mass", ("joint = \"revolute\"\norigin = [\"length\", 0, 0]\nmass = 1.0\n", "joint = \"revolute\"\norigin = [\"length\", 0, 0]\n"), &["missing field `mass`"]),
    ("dangling parent", ("parent = \"a\"", "parent = \"c\""), &["bad.toml:14:", "bodies[1] (b).parent", "no body named `c` (dangling parent)"]),
    ("base with a parent", ("name = \"a\"\nmass", "name = \"a\"\nparent = \"b\"\nmass"), &["bad.toml:10:", "the base body has no parent"]),
    ("cycle", ("parent = \"a\"", "parent = \"c\""), &["forms a cycle"]),
    ("non-finite", ("length = 0.5", "length = nan"), &["bad.toml:3:", "parameters.length", "finite"]),
    ("unknown parameter in expression", ("[\"length\", 0, 0]", "[\"lenght\", 0, 0]"), &["bad.toml:16:", "origin[0] (x)", "`lenght`, which is not a declared parameter"]),
    ("bad expression", ("[\"length\", 0, 0]", "[\"length *\", 0, 0]"), &["invalid expression"]),
    ("soft section with a joint and no section", ("name = \"b\"", "name = \"b\"\nkind = \"constant_curvature\""), &["bad.toml:16:", "remove `joint`", "bodies[1] (b).section: missing"]),
    ("water not supported yet", ("[base]", "[environment]\nmedium = \"water\"\n[base]"), &["environment.medium", "not supported yet"]),
    ("out-of-plane axis", ("joint = \"revolute\"", "joint = \"revolute\"\naxis = [1, 0, 0]"), &["axis", "plane normal"]),
    ("negative inertia", ("name = \"b\"\nparent = \"a\"\njoint = \"revolute\"\norigin = [\"length\", 0, 0]\nmass = 1.0\ninertia = 0.01", "name = \"b\"\nparent = \"a\"\njoint = \"revolute\"\norigin = [\"length\", 0, 0]\nmass = 1.0\ninertia = -0.01"), &["inertia", ">= 0"]),
    ("planar base without plane", ("plane = \"xz\"\n", ""), &["base.plane"]),
    ("description with a newline (it reaches the generated file's header)", ("description = \"two links\"", "description = \"two links\\nfn injected() {}\""), &["bad.toml:1:", "description", "one line"]),
    ("parameter named like a Rust keyword", ("length = 0.5", "length = 0.5\ntype = 1.0"), &["bad.toml:4:", "parameters.type", "Rust keyword"]),
];

const SPATIAL_GOOD: &str = r#"description = "one free body"
[base]
kind = "spatial"
body = "a"
[[bodies]]
name = "a"
mass = 1.0
inertia = [0.1, 0.2, 0.25, 0.01, 0.0, -0.02]
"#;

/// Inertia tensors that no rigid body has, in a spatial robot.
const INERTIA_CASES: &[(&str, &str)] = &[
    ("a principal moment above the sum of the others", "[0.1, 0.1, 0.3]"),
    ("not positive semidefinite (a product of inertia too large)", "[0.1, 0.1, 0.1, 0.2, 0, 0]"),
    ("negative moment", "[-0.1, 0.2, 0.2]"),
];

#[test]
fn inertia_tensors_must_be_physical() {
    load("good.toml", SPATIAL_GOOD).unwrap();
    for (what, tensor) in INERTIA_CASES {
        let bad = SPATIAL_GOOD.replace("[0.1, 0.2, 0.25, 0.01, 0.0, -0.02]", tensor);
        let Err(errors) = load("bad.toml", &bad) else { panic!("case `{what}`: accepted {tensor}") };
        let message = errors.to_string();
        assert!(message.contains("bad.toml:8:") && message.contains("bodies[0] (a).inertia"), "case `{what}`: {message}");
    }
    // A thin rod (one moment zero, the other two equal) is physical.
    load("good.toml", &SPATIAL_GOOD.replace("[0.1, 0.2, 0.25, 0.01, 0.0, -0.02]", "[0, 0.2, 0.2]")).unwrap();
}

#[test]
fn file_names_that_cannot_name_a_module_are_rejected() {
    for name in ["type.toml", "lib.toml", "fn.toml", "main.toml"] {
        let Err(errors) = load(name, GOOD) else { panic!("{name} was accepted") };
        assert!(errors.to_string().contains("cannot name the generated module"), "{name}: {errors}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for (open, close) in [("(", ")"), ("-", ""), ("sin(", ")")] {
        let deep = format!("{}length{}", open.repeat(5000), close.repeat(5000));
        let bad = GOOD.replacen("[\"length\", 0, 0]", &format!("[\"{deep}\", 0, 0]"), 1);
        let Err(errors) = load("bad.toml", &bad) else { panic!("`{open}` x 5000 accepted") };
        assert!(errors.to_string().contains("nests deeper than 64 levels"), "{errors}");
    }
    // 60 levels are fine.
    let fine = GOOD.replacen("[\"length\", 0, 0]", &format!("[\"{}length{}\", 0, 0]", "(".repeat(60), ")".repeat(60)), 1);
    load("good.toml", &fine).unwrap();
}

#[test]
fn long_mantissas_near_1e40_convert_without_overflow() {
    for number in ["1.2345678901234567e40", "-9.876543210987654e38", "1.7976931348623157e308", "4.9e-324"] {
        let spec = GOOD.replacen("[\"length\", 0, 0]", &format!("[\"length * {number}\", 0, 0]"), 1);
        let result = std::panic::catch_unwind(|| load("good.toml", &spec));
        assert!(result.is_ok(), "{number}: validation panicked");
        let spec = GOOD.replacen("[\"length\", 0, 0]", &format!("[{number}, 0, 0]"), 1);
        assert!(std::panic::catch_unwind(|| load("good.toml", &spec)).is_ok(), "{number} as a TOML number: validation panicked");
        let value: f64 = number.parse().unwrap();
        assert_eq!(softgen_codegen::parse_expression(number).unwrap().evaluate(&Default::default()).unwrap(), value);
    }
}

const SOFT_GOOD: &str = r#"description = "two soft sections"
[base]
kind = "spatial"
body = "s1"
[[bodies]]
name = "s1"
kind = "constant_curvature"
mass = 0.1
section = { model = "extensible", rest_length = 0.15, actuator_radius = 0.0125, disc_radius = 0.02, stiffness = 1900, damping = 90 }
[[bodies]]
name = "s2"
kind = "constant_curvature"
parent = "s1"
mass = 0.1
section = { model = "extensible", rest_length = 0.15, actuator_radius = 0.0125, disc_radius = 0.02, stiffness = 1900, damping = 90 }
[[contact_points]]
body = "s2"
kind = "skin_grid"
grid = { radius = 0.02, rings = 4, around = 6, tip = true }
[environment]
gravity = 9.81
"#;

/// Soft sections: (what is wrong, how to break SOFT_GOOD, expected pieces of the message)
const SOFT_CASES: &[(&str, (&str, &str), &[&str])] = &[
    ("actuators on an inextensible section", ("model = \"extensible\"", "model = \"inextensible\""), &["bad.toml:9:", "bodies[0] (s1).section.actuator_radius", "only extensible sections have actuators"]),
    ("extensible without actuators", ("actuator_radius = 0.0125, disc_radius = 0.02, stiffness = 1900, damping = 90 }\n[[bodies]]", "disc_radius = 0.02, stiffness = 1900, damping = 90 }\n[[bodies]]"), &["bad.toml:9:", "bodies[0] (s1).section.actuator_radius", "missing"]),
    ("wrong number of initial values", ("damping = 90 }\n[[bodies]]", "damping = 90, initial = [0.01, 0.02] }\n[[bodies]]"), &["bad.toml:9:", "section.initial", "expected 3 values (m), got 2"]),
    ("no slice inertia", ("disc_radius = 0.02, stiffness = 1900, damping = 90 }\n[[bodies]]", "stiffness = 1900, damping = 90 }\n[[bodies]]"), &["bad.toml:9:", "section.disc_radius", "missing"]),
    ("disc and inertia both", ("name = \"s1\"\nkind = \"constant_curvature\"\nmass = 0.1", "name = \"s1\"\nkind = \"constant_curvature\"\nmass = 0.1\ninertia = [1e-5, 1e-5, 1e-5]"), &["section.disc_radius", "not both"]),
    ("unphysical slice inertia", ("name = \"s1\"\nkind = \"constant_curvature\"\nmass = 0.1\nsection = { model = \"extensible\", rest_length = 0.15, actuator_radius = 0.0125, disc_radius = 0.02,", "name = \"s1\"\nkind = \"constant_curvature\"\nmass = 0.1\ninertia = [1e-5, 1e-6, 1e-6]\nsection = { model = \"extensible\", rest_length = 0.15, actuator_radius = 0.0125,"), &["bodies[0] (s1).inertia", "principal moments"]),
    ("origin on the base section", ("name = \"s1\"\nkind = \"constant_curvature\"", "name = \"s1\"\nkind = \"constant_curvature\"\norigin = [0.1, 0, 0]"), &["bodies[0] (s1).origin", "the base"]),
    ("joint on a section", ("parent = \"s1\"", "parent = \"s1\"\njoint = \"revolute\""), &["bad.toml:14:", "bodies[1] (s2).joint", "remove `joint`"]),
    ("negative actuator radius", ("actuator_radius = 0.0125", "actuator_radius = -0.0125"), &["bad.toml:9:", "section.actuator_radius", "must be > 0"]),
    ("no rings", ("rings = 4", "rings = 0"), &["bad.toml:19:", "contact_points[0].grid.rings", "must be in 1..=1000"]),
    ("extensible sections in a planar robot", ("kind = \"spatial\"", "kind = \"planar\"\nplane = \"xy\""), &["section.model", "model = \"planar\"", "spatial or fixed base"]),
    ("missing section", ("mass = 0.1\nsection = { model = \"extensible\", rest_length = 0.15, actuator_radius = 0.0125, disc_radius = 0.02, stiffness = 1900, damping = 90 }\n[[contact", "mass = 0.1\n[[contact"), &["bodies[1] (s2).section", "missing"]),
    ("points on a section", ("kind = \"skin_grid\"\ngrid = { radius = 0.02, rings = 4, around = 6, tip = true }", "positions = [[0, 0, 0]]"), &["contact_points[0].kind", "skin grid"]),
    ("rigid body on a section without a joint", ("name = \"s2\"\nkind = \"constant_curvature\"", "name = \"s2\"\ninertia = [0.1, 0.1, 0.1]"), &["bodies[1] (s2)", "joint"]),
];

#[test]
fn the_good_soft_spec_loads() {
    let robot = load("good.toml", SOFT_GOOD).unwrap();
    assert_eq!(robot.coordinates.len(), 12, "6 base + 3 per section");
    assert_eq!(robot.contact_points.len(), 30, "5 rings of 6");
}

#[test]
fn bad_soft_specs_name_file_line_and_field() {
    for (what, (from, to), expected) in SOFT_CASES {
        assert!(SOFT_GOOD.contains(from), "case `{what}`: pattern not in the good spec");
        let bad = SOFT_GOOD.replacen(from, to, 1);
        let result = std::panic::catch_unwind(|| load("bad.toml", &bad));
        let Ok(result) = result else { panic!("case `{what}`: validation panicked") };
        let Err(errors) = result else { panic!("case `{what}`: accepted a bad spec") };
        let message = errors.to_string();
        for piece in *expected {
            assert!(message.contains(piece), "case `{what}`: expected `{piece}` in:\n{message}");
        }
    }
}

#[test]
fn the_good_spec_loads() {
    let robot = load("good.toml", GOOD).unwrap();
    assert_eq!(robot.coordinates.len(), 4);
}

#[test]
fn bad_specs_name_file_line_and_field() {
    for (what, (from, to), expected) in CASES {
        assert!(GOOD.contains(from), "case `{what}`: pattern not in the good spec");
        let mut bad = GOOD.replacen(from, to, 1);
        if *what == "cycle" {
            bad.push_str("[[bodies]]\nname = \"c\"\nparent = \"b\"\njoint = \"revolute\"\nmass = 1.0\ninertia = 0.01\n");
        }
        let result = std::panic::catch_unwind(|| load("bad.toml", &bad));
        let Ok(result) = result else { panic!("case `{what}`: validation panicked") };
        let Err(errors) = result else { panic!("case `{what}`: accepted a bad spec") };
        let message = errors.to_string();
        for piece in *expected {
            assert!(message.contains(piece), "case `{what}`: expected `{piece}` in:\n{message}");
        }
    }
}

#[test]
fn every_seed_spec_validates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for entry in std::fs::read_dir(root.join("model-specs")).unwrap() {
        let path = entry.unwrap().path();
        if softgen_codegen::is_spec_file(&path) {
            let text = std::fs::read_to_string(&path).unwrap();
            load(&path.to_string_lossy(), &text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
