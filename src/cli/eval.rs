//! `softgen eval`: every generated quantity of a robot at one state, as JSON.

use super::values::{parse_list, parse_sets};
use clap::Args;
use softgen::{eval_json, EvalInput};
use std::io::Read;
#[derive(Args)]
pub(crate) struct EvalArgs {
    /// Robot to evaluate.
    robot: String,
    /// Generalized coordinates, comma-separated (default: the spec's initial pose).
    #[arg(long, allow_hyphen_values = true)]
    q: Option<String>,
    /// Generalized velocities, comma-separated (default: zero).
    #[arg(long, allow_hyphen_values = true)]
    qd: Option<String>,
    /// Generalized forces for the forward dynamics, comma-separated (default: zero).
    #[arg(long, allow_hyphen_values = true)]
    tau: Option<String>,
    /// Add the forward dynamics qdd at (q, qd, tau) (`forward_dynamics`) and its partial
    /// derivatives (`forward_dynamics_derivatives`: `dq`, `dqd`, `dtau`, row i is qdd_i).
    #[arg(long)]
    derivatives: bool,
    /// Read {"q": [...], "qd": [...], "tau": [...], "params": {"name": value}} as JSON from stdin.
    #[arg(long)]
    stdin: bool,
    /// Set a model parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

pub(crate) fn eval(args: EvalArgs) -> Result<(), String> {
    let mut input =
        EvalInput { q: None, qd: None, tau: None, params: parse_sets(&args.set)?, derivatives: args.derivatives };
    if args.stdin {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| format!("reading stdin: {e}"))?;
        softgen::read_stdin_input(&text, &mut input)?;
    }
    if let Some(q) = &args.q {
        input.q = Some(parse_list("q", q)?);
    }
    if let Some(qd) = &args.qd {
        input.qd = Some(parse_list("qd", qd)?);
    }
    if let Some(tau) = &args.tau {
        input.tau = Some(parse_list("tau", tau)?);
    }
    println!("{}", eval_json(&args.robot, &input)?);
    Ok(())
}
