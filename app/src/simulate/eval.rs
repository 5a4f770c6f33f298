//! `softgen eval`: every generated quantity of a robot at one state, as JSON, so the model
//! can be checked against any other tool.

use nalgebra::{SMatrix, SVector, Vector3};
use serde_json::{json, Value};
use softgen_runtime::RobotVisitor;
use softgen_runtime::{forward_dynamics, forward_dynamics_derivatives, ForwardDynamicsDerivatives, Model, ParamSet};

/// The state to evaluate at; missing vectors default to the spec's initial q, zero qd and
/// zero tau.
#[derive(Clone, Debug, Default)]
pub struct EvalInput {
    /// The coordinates; None for the spec's initial pose.
    pub q: Option<Vec<f64>>,
    /// Their rates; None for zeros.
    pub qd: Option<Vec<f64>>,
    /// Generalized force for the forward dynamics (`derivatives`).
    pub tau: Option<Vec<f64>>,
    /// Parameters by name, in place of the spec's.
    pub params: Vec<(String, f64)>,
    /// Adds the forward dynamics at (q, qd, tau) and its partial derivatives.
    pub derivatives: bool,
}

/// The keys a stdin document may have.
const STDIN_KEYS: [&str; 4] = ["q", "qd", "tau", "params"];

/// Reads `{"q": [...], "qd": [...], "tau": [...], "params": {"name": value}}` (every key optional) into
/// `input`, after any `--set` values already there; anything else is an error naming it.
pub fn read_stdin_input(text: &str, input: &mut EvalInput) -> Result<(), String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("stdin: invalid JSON: {e}"))?;
    let object = value.as_object().ok_or_else(|| {
        format!("stdin: expected an object {{\"q\": [...], \"qd\": [...], \"params\": {{...}}}}, got {}", kind(&value))
    })?;
    if let Some(key) = object.keys().find(|k| !STDIN_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "stdin: unknown key `{key}`; expected {}",
            STDIN_KEYS.map(|k| format!("`{k}`")).join(", ")
        ));
    }
    let list = |key: &str| -> Result<Option<Vec<f64>>, String> {
        match object.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_array()
                .ok_or_else(|| format!("stdin: `{key}` must be an array of numbers, got {}", kind(v)))?
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_f64().ok_or_else(|| format!("stdin: `{key}[{i}]` must be a number, got {}", kind(x)))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    };
    input.q = list("q")?;
    input.qd = list("qd")?;
    input.tau = list("tau")?;
    if let Some(params) = object.get("params") {
        let map = params
            .as_object()
            .ok_or_else(|| format!("stdin: `params` must be an object of name: number, got {}", kind(params)))?;
        for (k, v) in map {
            let x = v.as_f64().ok_or_else(|| format!("stdin: `params.{k}` must be a number, got {}", kind(v)))?;
            input.params.push((k.clone(), x));
        }
    }
    Ok(())
}

/// What a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `eval`, compiled for each robot by [`App`](crate::App).
pub(crate) struct Eval<'a> {
    pub(crate) input: &'a EvalInput,
}

fn vector<const N: usize>(
    name: &str,
    values: &Option<Vec<f64>>,
    default: SVector<f64, N>,
) -> Result<SVector<f64, N>, String> {
    match values {
        None => Ok(default),
        Some(v) if v.len() != N => Err(format!("{name} needs {N} values, got {}", v.len())),
        Some(v) => {
            if let Some((i, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                return Err(format!("{name}[{i}] must be finite, got {x}"));
            }
            Ok(SVector::from_iterator(v.iter().copied()))
        }
    }
}

fn matrix<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> Value {
    json!((0..R).map(|i| (0..C).map(|j| m[(i, j)]).collect::<Vec<_>>()).collect::<Vec<_>>())
}

fn vec3(v: &Vector3<f64>) -> Value {
    json!([v.x, v.y, v.z])
}

impl RobotVisitor for Eval<'_> {
    type Output = Result<Value, String>;

    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        let mut p = R::Params::default();
        for (name, value) in &self.input.params {
            if !value.is_finite() {
                return Err(format!("parameter `{name}` must be finite, got {value}"));
            }
            p.set(name, *value).map_err(|e| e.to_string())?;
        }
        p.check().map_err(|e| format!("parameters: {e}"))?;
        let q = vector::<N>("q", &self.input.q, SVector::from_iterator(R::INITIAL_POSITION.iter().copied()))?;
        let qd = vector::<N>("qd", &self.input.qd, SVector::zeros())?;
        let tau = vector::<N>("tau", &self.input.tau, SVector::zeros())?;
        let k = R::cache(&q, &p);
        let mut mass_matrix = SMatrix::<f64, N, N>::zeros();
        R::mass_matrix_into(&q, &p, &k, &mut mass_matrix);
        let mut coriolis = SVector::<f64, N>::zeros();
        R::coriolis_into(&q, &qd, &p, &k, &mut coriolis);
        let mut coriolis_matrix = SMatrix::<f64, N, N>::zeros();
        R::coriolis_matrix_into(&q, &qd, &p, &k, &mut coriolis_matrix);
        let mut gravity = SVector::<f64, N>::zeros();
        R::gravity_into(&q, &p, &k, &mut gravity);
        let mut positions = [Vector3::zeros(); C];
        let mut velocities = [Vector3::zeros(); C];
        R::contact_positions_into(&q, &p, &k, &mut positions);
        R::contact_velocities_into(&q, &qd, &p, &k, &mut velocities);
        let mut contacts = Vec::new();
        for (i, info) in R::CONTACT_POINTS.iter().enumerate() {
            let mut jacobian = SMatrix::<f64, 3, N>::zeros();
            R::contact_jacobian_into(i, &q, &p, &k, &mut jacobian);
            contacts.push(json!({
                "name": info.name,
                "body": info.body,
                "position": vec3(&positions[i]),
                "velocity": vec3(&velocities[i]),
                "jacobian": matrix(&jacobian),
            }));
        }
        // Markers: tracked points that touch nothing; their velocity is J qd.
        let mut markers = Vec::new();
        for (i, info) in R::MARKERS.iter().enumerate() {
            let mut jacobian = SMatrix::<f64, 3, N>::zeros();
            R::marker_jacobian_into(i, &q, &p, &k, &mut jacobian);
            markers.push(json!({
                "name": info.name,
                "body": info.body,
                "position": vec3(&R::marker_position(i, &q, &p, &k)),
                "velocity": vec3(&(jacobian * qd)),
                "jacobian": matrix(&jacobian),
            }));
        }
        let coordinates: Vec<Value> = R::COORDINATES
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({"index": i, "name": c.name, "kind": format!("{:?}", c.kind), "unit": c.kind.unit(), "meaning": c.meaning, "actuated": c.actuated})
            })
            .collect();
        let parameters: serde_json::Map<String, Value> =
            R::Params::names().iter().enumerate().map(|(i, n)| (n.to_string(), json!(p.get(i)))).collect();
        let mut document = json!({
            "robot": R::NAME,
            "description": R::DESCRIPTION,
            "equation": "M(q) qdd + C(q, qd) qd + G(q) = tau + sum_i J_i(q)' F_i",
            "coordinates": coordinates,
            "parameters": parameters,
            "q": q.iter().collect::<Vec<_>>(),
            "qd": qd.iter().collect::<Vec<_>>(),
            "mass_matrix": matrix(&mass_matrix),
            "coriolis_times_qd": coriolis.iter().collect::<Vec<_>>(),
            "coriolis_matrix": matrix(&coriolis_matrix),
            "gravity": gravity.iter().collect::<Vec<_>>(),
            "kinetic_energy": 0.5 * qd.dot(&(mass_matrix * qd)),
            "potential_energy": R::potential_energy(&q, &p, &k),
            "total_mass": R::total_mass(&p),
            "center_of_mass": vec3(&R::center_of_mass(&q, &p, &k)),
            "linear_momentum": vec3(&R::linear_momentum(&q, &qd, &p, &k)),
            "angular_momentum": vec3(&R::angular_momentum(&q, &qd, &p, &k)),
            "contact_points": contacts,
            "markers": markers,
        });
        if self.input.derivatives {
            let mut derivatives = ForwardDynamicsDerivatives::<N>::default();
            forward_dynamics_derivatives::<R, N, C>(&q, &qd, &tau, &p, &k, &mut derivatives)
                .map_err(|e| format!("forward dynamics at this state: {e}"))?;
            document["tau"] = json!(tau.iter().collect::<Vec<_>>());
            // The model's own forward dynamics (the derivatives' qdd agrees to rounding).
            let mut acceleration = SVector::<f64, N>::zeros();
            forward_dynamics::<R, N, C>(&q, &qd, &p, &k, &tau, &mut acceleration)
                .map_err(|e| format!("forward dynamics at this state: {e}"))?;
            document["forward_dynamics"] = json!(acceleration.iter().collect::<Vec<_>>());
            document["forward_dynamics_derivatives"] = json!({
                "dq": matrix(&derivatives.position),
                "dqd": matrix(&derivatives.velocity),
                "dtau": matrix(&derivatives.force),
            });
        }
        Ok(document)
    }
}
