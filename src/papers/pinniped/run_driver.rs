//! `softgen run` for the pinniped: its limb gaits by name, through the jointspace-to-pressure
//! map, to the output chain; and the strides its model-predictive controller chooses from
//! (mpc-002's).

use super::model::{limb_gait as paper_gait, limbs, pressure_controller, pressure_map, Gait, MUSCLES};
use super::mpc::{GoalTask, StridePlanner};
use nalgebra::SVector;
use softgen_app::{LimbController, LimbGaitRequest, RunDriver, StrideMpc, StrideMpcRequest, StrideRequest};
use softgen_generated::pinniped::{Params, DOF};
use softgen_runtime::{ParamSet, State, StrideChoice};

/// The driver the papers' registry lists for the pinniped.
pub(crate) const DRIVER: RunDriver = RunDriver {
    robot: "pinniped",
    limb_gait: Some(limb_gait),
    held_inputs: None,
    scheduled_mpc: None,
    stride_mpc: Some(strides),
};

/// The gaits of section III by their command-line names.
const GAITS: [(&str, Gait); 6] = [
    ("forward", Gait::Forward),
    ("backward", Gait::Backward),
    ("turn-left", Gait::CrawlTurn { left: true }),
    ("turn-right", Gait::CrawlTurn { left: false }),
    ("in-place-cw", Gait::InPlace { counterclockwise: false }),
    ("in-place-ccw", Gait::InPlace { counterclockwise: true }),
];

/// The requested gait (default backward crawling at a 0.10 m stride radius and 1.00 Hz)
/// after 1 s at 0 bar.
fn limb_gait(request: &LimbGaitRequest) -> Result<LimbController, String> {
    let name = request.gait.unwrap_or("backward");
    let gait =
        GAITS.iter().find(|g| g.0 == name).map(|g| g.1).ok_or_else(|| {
            format!("--limb-gait `{name}`: the pinniped's gaits are {}", GAITS.map(|g| g.0).join(", "))
        })?;
    let stride = request.stride.unwrap_or(0.10);
    let frequency = request.frequency.unwrap_or(1.0);
    let settle = 1.0;
    let controller = pressure_controller(gait, stride, frequency, settle, request.first_muscle)?;
    Ok(LimbController {
        controller: Box::new(controller),
        description: format!("{}: stride radius {stride} m, {frequency} Hz, after {settle} s at 0 bar", gait.name()),
        dry_run_at: settle + 0.25 / frequency,
    })
}

/// mpc-002's strides and planner for the loop: standing while the robot settles on its
/// carpet, then one of the paper's gaits at a time, decided 50 times a second in step with
/// the gait's clock. The planner measures its gaits' speeds on its model first (a fraction of a
/// second).
fn strides(request: &StrideMpcRequest) -> Result<StrideMpc, String> {
    let task = GoalTask::new();
    let mut params = Params::default();
    for (name, value) in request.parameters {
        params.set(name, *value).map_err(|e| format!("run configuration [parameters]: {e}"))?;
    }
    let config = task.planner.clone();
    let frequency = config.frequency;
    let gaits = config
        .strides
        .iter()
        .map(|s| s.gait.map(|g| paper_gait(&params, g, s.radius, frequency)).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = config.strides.iter().map(|s| s.name()).collect();
    let initial =
        config.strides.iter().position(|s| s.gait.is_none()).ok_or("mpc-002's strides include no standing")?;
    let (limbs, map) = (limbs(&params), pressure_map(&params)?);
    let pressures = move |stride: usize, since: f64, out: &mut [f64]| -> Result<(), String> {
        let gait = gaits.get(stride).ok_or_else(|| format!("stride {stride} of {}", gaits.len()))?;
        if out.len() != MUSCLES {
            return Err(format!("{} pressures asked of {MUSCLES} muscles", out.len()));
        }
        match gait {
            Some(gait) => {
                let p = gait.pressures(since.max(0.0), &limbs, &map).map_err(|e| e.to_string())?;
                out.iter_mut().enumerate().for_each(|(i, o)| *o = p[i / 3][i % 3]);
            }
            None => out.fill(0.0),
        }
        Ok(())
    };
    let mut planner = StridePlanner::new(params, config.clone(), task.settle, request.ceiling, request.goal)?;
    let rates = planner.rates;
    let choices = config.strides.clone();
    let plan = move |r: &StrideRequest| -> Result<StrideChoice, String> {
        if r.q.len() != DOF || r.qd.len() != DOF || r.reached.len() != MUSCLES {
            return Err(format!(
                "a state of {} and {} values and {} pressures",
                r.q.len(),
                r.qd.len(),
                r.reached.len()
            ));
        }
        let current = *choices.get(r.current).ok_or_else(|| format!("stride {} of {}", r.current, choices.len()))?;
        let x = State::new(SVector::from_column_slice(r.q), SVector::from_column_slice(r.qd));
        let reached: [f64; MUSCLES] = std::array::from_fn(|i| r.reached[i]);
        let plan = planner.plan(r.time, &x, &reached, current, r.current_start, r.boundary);
        let stride = choices.iter().position(|s| *s == plan.stride).unwrap_or(r.current);
        Ok(StrideChoice { boundary: r.boundary, stride, rollouts: plan.costs.len(), failed: plan.failed })
    };
    Ok(StrideMpc {
        description: format!(
            "{} strides at {frequency} Hz, one cycle of each rolled out per plan (semi-implicit Euler at {} ms), the least time to go (forward {:.2} cm/s, backward {:.2} cm/s, in-place turn {:.3} rad/s, measured on the model)",
            names.len(),
            config.step * 1e3,
            100.0 * rates.forward_speed,
            100.0 * rates.backward_speed,
            rates.turn_rate
        ),
        strides: names,
        initial,
        cycle: 1.0 / frequency,
        settle: task.settle,
        decision_period: task.decision_period,
        pressures: Box::new(pressures),
        planner: Box::new(plan),
    })
}
