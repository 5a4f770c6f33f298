//! The seed papers' contact damper (eq 18: d times the approach speed, which jumps at
//! touchdown) against Hunt and Crossley's (k h depth times the approach speed, continuous),
//! with touchdowns located or met inside steps: the soft snake's planar and spatial rolling
//! (000, `softgen roll`) and one pinniped trial (002, backward crawling). Prints right-hand
//! sides, accepted steps, rejected attempts (cuts at touchdowns included), wall time and the
//! experiment's figure for each, one run after the other in one process.
//!
//! Hunt and Crossley's h is chosen so that its damper equals the spec's at each robot's
//! depth at rest: h = d / (k depth), 130 / (1000 * 0.2 mm) = 650 s/m on the soft snake's
//! carpet and 20 / (2000 * 0.5 mm) = 20 s/m under the pinniped's limbs.
//!
//! Run with `cargo bench --bench contact_laws`; README.md lists the figures.

use softgen::papers::pinniped::{run_trial, Gait, Trial};
use softgen::papers::soft_snake::{run_rolling, Rolling, RollingRun};
use std::time::Instant;

/// A contact damper: eq 18's d (N s/m) and Hunt and Crossley's h (s/m).
struct Damper {
    name: &'static str,
    damping: Option<f64>,
    dissipation: Option<f64>,
}

fn main() {
    let snake_dampers = [
        Damper { name: "eq 18 (d = 130 N s/m)", damping: None, dissipation: None },
        Damper { name: "Hunt-Crossley (h = 650 s/m)", damping: Some(0.0), dissipation: Some(650.0) },
    ];
    println!("| run | damper | touchdowns | right-hand sides | accepted steps | rejected attempts | wall (s) | V_x, V_y (cm/s) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, rolling) in [("roll planar", Rolling::Planar), ("roll spatial", Rolling::Spatial)] {
        for damper in &snake_dampers {
            for located in [true, false] {
                let mut run = RollingRun::new(rolling);
                run.contact_damping = damper.damping;
                run.contact_dissipation = damper.dissipation;
                if !located {
                    run.contact_onset_tolerance = None;
                }
                let touchdowns = if located { "located to 1 um" } else { "inside steps" };
                match run_rolling(&run, |_| {}) {
                    Ok(s) => println!(
                        "| {name} | {} | {touchdowns} | {} | {} | {} | {:.2} | {} |{}",
                        damper.name,
                        s.evaluations,
                        s.accepted,
                        s.rejected,
                        s.wall_seconds,
                        s.velocity_cm_s.map_or("-".into(), |(x, y)| format!("{x:.2}, {y:.2}")),
                        s.error.map(|e| format!(" stopped: {e}")).unwrap_or_default()
                    ),
                    Err(e) => println!("| {name} | {} | {touchdowns} | failed: {e} | | | | |", damper.name),
                }
            }
        }
    }
    let pinniped_dampers = [
        Damper { name: "eq 18 (d = 20 N s/m)", damping: None, dissipation: None },
        Damper { name: "Hunt-Crossley (h = 20 s/m)", damping: Some(0.0), dissipation: Some(20.0) },
    ];
    println!();
    println!("| run | damper | step (s) | right-hand sides | wall (s) | displacement x (cm) |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for damper in &pinniped_dampers {
        for step in [5e-4, 1e-3] {
            let mut trial = Trial::new(Gait::Backward, 0.08, 1.0);
            trial.contact_damping = damper.damping;
            trial.contact_dissipation = damper.dissipation;
            trial.step = step;
            let start = Instant::now();
            match run_trial(&trial, |_| {}) {
                Ok(o) => println!(
                    "| 002 backward | {} | {step} | {} | {:.3} | {:.2} |{}",
                    damper.name,
                    o.evaluations,
                    start.elapsed().as_secs_f64(),
                    100.0 * o.displacement.0,
                    o.error.map(|e| format!(" stopped: {e}")).unwrap_or_default()
                ),
                Err(e) => println!("| 002 backward | {} | {step} | failed: {e} | | |", damper.name),
            }
        }
    }
}
