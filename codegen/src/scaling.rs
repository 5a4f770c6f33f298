//! The scaling fixture: planar snakes of any number of links, with the link data of the
//! modular snake's pedal-wave spec of 003 (0.1 kg, 0.1 m, a thin-rod inertia, a servoed revolute
//! joint between links, contact at every link's rear and centre and at the head tip). Codegen
//! writes the crate `generated/fixtures/snake_links_<N>/` for each of [`SCALING_LINKS`], so
//! codegen time, generated size, compile time and kernel time can be measured against the
//! number of coordinates (README, "Scaling").

/// Link counts of the committed scaling fixtures (N links: N + 2 coordinates).
pub const SCALING_LINKS: [usize; 4] = [6, 12, 20, 60];

/// The module name of the `links`-link fixture.
pub fn scaling_name(links: usize) -> String {
    format!("snake_links_{links}")
}

/// Whether `name` is a scaling fixture's (a spec of that name is refused as a collision).
pub fn is_scaling_fixture(name: &str) -> bool {
    SCALING_LINKS.iter().any(|&links| scaling_name(links) == name)
}

/// Where a fixture's spec comes from, for the generated header.
pub fn scaling_origin(links: usize) -> String {
    format!("codegen/src/scaling.rs (planar_snake_spec({links}))")
}

/// The spec text of a planar snake with `links` links in the vertical x-z plane.
pub fn planar_snake_spec(links: usize) -> String {
    let mut spec = format!(
        r#"description = "Planar snake of {links} links with the link data of 003 (the scaling fixture)"

[parameters]
link_length = 0.1
link_mass = 0.1
link_inertia = 8.333333333333333e-5

[base]
kind = "planar"
plane = "xz"
body = "link1"
initial = [0.0, 0.0, 0.0]
"#
    );
    for k in 1..=links {
        spec.push_str(&format!("\n[[bodies]]\nname = \"link{k}\"\n"));
        if k > 1 {
            spec.push_str(&format!(
                "parent = \"link{}\"\njoint = \"revolute\"\norigin = [\"link_length\", 0, 0]\n",
                k - 1
            ));
        }
        spec.push_str(
            "mass = \"link_mass\"\ncenter_of_mass = [\"link_length / 2\", 0, 0]\ninertia = \"link_inertia\"\n",
        );
    }
    for k in 1..=links {
        spec.push_str(&format!("\n[[contact_points]]\nbody = \"link{k}\"\n"));
        if k == links {
            spec.push_str(&format!(
                "positions = [[0, 0, 0], [\"link_length / 2\", 0, 0], [\"link_length\", 0, 0]]\nnames = [\"link{k}_rear\", \"link{k}_centre\", \"head_tip\"]\n"
            ));
        } else {
            spec.push_str(&format!("positions = [[0, 0, 0], [\"link_length / 2\", 0, 0]]\nnames = [\"link{k}_rear\", \"link{k}_centre\"]\n"));
        }
    }
    spec.push_str(
        r#"
[environment]
gravity = 9.81
contact_stiffness = 350.0
contact_damping = 25.0
terrain = { kind = "flat" }
friction = { along = 0.3, regularisation = 0.0 }
"#,
    );
    for k in 2..=links {
        spec.push_str(&format!("\n[[actuators]]\nkind = \"joint_torque\"\njoint = \"link{k}\"\ntorque_limit = 2.0\n"));
    }
    spec.push_str(
        r#"
[controller]
kind = "joint_pd"
stiffness = 5.0
damping = 0.02

[gait]
kind = "serpenoid"
amplitude = 1.1
temporal_frequency = "2 * pi / 5"
spatial_frequency = "-pi / 2"
"#,
    );
    spec
}
