//! Whole runs with each Jacobian ROS34PW2 can get, the stiff part (a W-method's, the default)
//! and the simulated system's exact Jacobian: the soft snake's spatial and planar rolling
//! (000, `softgen roll`) and the underwater snake's spiral ascent (004-spiral, 180 s). Prints
//! right-hand sides, Jacobians, accepted steps, rejected attempts and wall time of each, one
//! run after the other in one process. The pinniped's trials step with semi-implicit Euler,
//! which uses no Jacobian.
//!
//! Run with `cargo bench --bench jacobian_runs`; README.md lists the figures.

use softgen::papers::soft_snake::{run_rolling, Rolling, RollingRun};
use softgen::papers::underwater_snake::{neutral_params, spiral_conditions, swim_with};
use softgen_runtime::SystemJacobian;

fn main() {
    println!("| run | Jacobian | right-hand sides | Jacobians | accepted steps | rejected attempts | wall (s) |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for jacobian in [SystemJacobian::Stiff, SystemJacobian::Exact] {
        for (name, rolling) in [("roll spatial", Rolling::Spatial), ("roll planar", Rolling::Planar)] {
            let mut run = RollingRun::new(rolling);
            run.jacobian = jacobian;
            match run_rolling(&run, |_| {}) {
                Ok(s) => println!(
                    "| {name} | {jacobian:?} | {} | {} | {} | {} | {:.2} |{}",
                    s.evaluations,
                    s.jacobians,
                    s.accepted,
                    s.rejected,
                    s.wall_seconds,
                    s.error.map(|e| format!(" stopped: {e}")).unwrap_or_default()
                ),
                Err(e) => println!("| {name} | {jacobian:?} | failed: {e} | | | | |"),
            }
        }
        let p = neutral_params();
        let condition = &spiral_conditions()[0];
        match swim_with(&p, condition, 180.0, 0.05, jacobian) {
            Ok(s) => println!(
                "| 004-spiral | {jacobian:?} | {} | {} | {} | {} | {:.2} |",
                s.evaluations, s.jacobians, s.accepted, s.rejected, s.wall
            ),
            Err(e) => println!("| 004-spiral | {jacobian:?} | failed: {e} | | | | |"),
        }
    }
}
