//! `softgen list`: every robot with its generalized coordinates.

use softgen::{eval_json, EvalInput, ROBOTS};

/// Prints every robot of the registry with its coordinates.
pub(crate) fn list() -> Result<(), String> {
    for robot in ROBOTS {
        let name = robot.name;
        match eval_json(name, &EvalInput::default()) {
            Ok(json) => {
                let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
                println!(
                    "{name}: {} ({} coordinates, {} contact points; {})",
                    robot.description, robot.dof, robot.contacts, robot.spec
                );
                for c in v["coordinates"].as_array().into_iter().flatten() {
                    println!(
                        "  q{:<2} {:<16} [{}] {}",
                        c["index"],
                        c["name"].as_str().unwrap_or(""),
                        c["unit"].as_str().unwrap_or(""),
                        c["meaning"].as_str().unwrap_or("")
                    );
                }
            }
            Err(e) => println!("{name}: {e}"),
        }
    }
    Ok(())
}
