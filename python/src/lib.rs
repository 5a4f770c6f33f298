//! `softgen._softgen`, the Python extension: every generated robot as `Robot(name)` with its
//! kernels on numpy arrays, simulations, experiments and sweeps. The Python package
//! (python/softgen) adds data frames and the Ray scale-out on top.

mod robot;

use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use robot::{DynamicRobot, MakeRobot};

create_exception!(
    softgen,
    SoftgenError,
    PyValueError,
    "Bad input to softgen: the message says what was wrong and where."
);

fn error(message: impl Into<String>) -> PyErr {
    SoftgenError::new_err(message.into())
}

/// A float64 vector of length `n`, finite; anything numpy can read as one is taken (a list,
/// another dtype), a contiguous float64 array without a copy beyond the one into the kernel.
fn vector(value: &Bound<'_, PyAny>, name: &str, n: usize, out: &mut Vec<f64>) -> PyResult<()> {
    let array: PyReadonlyArray1<'_, f64> = match value.extract() {
        Ok(array) => array,
        Err(_) => {
            let numpy = value.py().import("numpy")?;
            let converted = numpy
                .call_method1("asarray", (value, numpy.getattr("float64")?))
                .map_err(|e| error(format!("{name} must be an array of {n} numbers: {e}")))?;
            converted.extract().map_err(|_| {
                let shape: String =
                    converted.getattr("shape").and_then(|s| s.str().map(|s| s.to_string())).unwrap_or_default();
                error(format!("{name} must have shape ({n},), got {shape}"))
            })?
        }
    };
    if array.shape() != [n] {
        let shape: Vec<String> = array.shape().iter().map(|d| d.to_string()).collect();
        return Err(error(format!("{name} must have shape ({n},), got ({},)", shape.join(", "))));
    }
    out.clear();
    match array.as_slice() {
        Ok(slice) => out.extend_from_slice(slice),
        Err(_) => out.extend(array.as_array().iter().copied()),
    }
    if let Some((i, x)) = out.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(error(format!("{name}[{i}] is {x}; every value must be finite")));
    }
    Ok(())
}

/// A robot generated from its spec in model-specs/: its coordinates, parameters and
/// equations of motion M(q) qdd + C(q, qd) qd + G(q) = tau + sum_i J_i(q)' F_i.
#[pyclass(name = "Robot", module = "softgen")]
struct Robot {
    inner: Box<dyn DynamicRobot>,
}

impl Robot {
    fn q(&self, q: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let mut v = Vec::with_capacity(self.inner.dof());
        vector(q, "q", self.inner.dof(), &mut v)?;
        Ok(v)
    }
    fn q_qd(&self, q: &Bound<'_, PyAny>, qd: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, Vec<f64>)> {
        let mut v = Vec::with_capacity(self.inner.dof());
        vector(qd, "qd", self.inner.dof(), &mut v)?;
        Ok((self.q(q)?, v))
    }
}

fn params_from(dict: &Bound<'_, PyDict>) -> PyResult<Vec<(String, f64)>> {
    dict.iter()
        .map(|(k, v)| {
            let name: String = k.extract().map_err(|_| error(format!("parameter names are strings, got {k}")))?;
            let value: f64 = v.extract().map_err(|_| error(format!("parameter `{name}` must be a number, got {v}")))?;
            Ok((name, value))
        })
        .collect()
}

#[pymethods]
impl Robot {
    /// The robot called `name` (see `softgen.robots()`), with its spec's parameters changed
    /// by `params` (name: value).
    #[new]
    #[pyo3(signature = (name, params = None))]
    fn new(name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut inner = softgen::with_robot(name, MakeRobot).map_err(error)?;
        if let Some(params) = params {
            inner.set_params(&params_from(params)?).map_err(error)?;
        }
        Ok(Robot { inner })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    #[getter]
    fn description(&self) -> &'static str {
        self.inner.description()
    }
    /// Number of generalized coordinates N.
    #[getter]
    fn dof(&self) -> usize {
        self.inner.dof()
    }
    /// The generalized coordinates in order: name, kind, unit, meaning, actuated.
    #[getter]
    fn coordinates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for c in self.inner.coordinates() {
            let d = PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("kind", format!("{:?}", c.kind))?;
            d.set_item("unit", c.unit)?;
            d.set_item("meaning", c.meaning)?;
            d.set_item("actuated", c.actuated)?;
            list.append(d)?;
        }
        Ok(list)
    }
    /// The contact points' names, in the order of the contact arrays.
    #[getter]
    fn contact_points(&self) -> Vec<&'static str> {
        self.inner.contact_point_names()
    }
    /// The spec's markers' names (tracked points that touch nothing), in the order of the
    /// marker arrays.
    #[getter]
    fn markers(&self) -> Vec<&'static str> {
        self.inner.marker_names()
    }
    /// The spec's initial pose.
    #[getter]
    fn initial_position<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        Array1::from(self.inner.initial_position()).into_pyarray(py)
    }
    /// The parameters by name (a copy: change them with `set_params`).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (i, name) in self.inner.param_names().iter().enumerate() {
            d.set_item(*name, self.inner.param(i))?;
        }
        Ok(d)
    }
    /// Changes parameters by name, all or none: an unknown name or a value the spec's rules
    /// refuse raises and leaves every parameter as it was.
    #[pyo3(signature = (**values))]
    fn set_params(&mut self, values: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        match values {
            Some(values) => self.inner.set_params(&params_from(values)?).map_err(error),
            None => Ok(()),
        }
    }
    #[getter]
    fn total_mass(&self) -> f64 {
        self.inner.total_mass()
    }

    /// M(q), N x N.
    fn mass_matrix<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let q = self.q(q)?;
        let n = self.inner.dof();
        let mut out = Array2::zeros((n, n));
        self.inner.mass_matrix(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// C(q, qd) qd, N.
    fn coriolis<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        qd: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (q, qd) = self.q_qd(q, qd)?;
        let mut out = Array1::zeros(self.inner.dof());
        self.inner.coriolis(&q, &qd, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// C(q, qd), N x N, with Mdot - 2C skew-symmetric.
    fn coriolis_matrix<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        qd: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (q, qd) = self.q_qd(q, qd)?;
        let n = self.inner.dof();
        let mut out = Array2::zeros((n, n));
        self.inner.coriolis_matrix(&q, &qd, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// G(q) = dV/dq, N.
    fn gravity<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let q = self.q(q)?;
        let mut out = Array1::zeros(self.inner.dof());
        self.inner.gravity(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// qdd = M^-1 (tau - C qd - G): the equations without contact or damping forces (add
    /// them to tau).
    fn forward_dynamics<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        qd: &Bound<'py, PyAny>,
        tau: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (q, qd) = self.q_qd(q, qd)?;
        let mut tau_values = Vec::new();
        vector(tau, "tau", self.inner.dof(), &mut tau_values)?;
        let mut out = Array1::zeros(self.inner.dof());
        if !self.inner.forward_dynamics(&q, &qd, &tau_values, out.as_slice_mut().expect("standard layout")) {
            return Err(error("M(q) is not positive definite at this q"));
        }
        Ok(out.into_pyarray(py))
    }
    /// The partial derivatives of the forward dynamics at (q, qd, tau): (dq, dqd, dtau), each
    /// N x N with row i the derivatives of qdd_i (dtau = M^-1), from the generated derivatives
    /// of the inverse dynamics.
    fn forward_dynamics_derivatives<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        qd: &Bound<'py, PyAny>,
        tau: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
        let (q, qd) = self.q_qd(q, qd)?;
        let n = self.inner.dof();
        let mut tau_values = Vec::new();
        vector(tau, "tau", n, &mut tau_values)?;
        let (mut dq, mut dqd, mut dtau) = (Array2::zeros((n, n)), Array2::zeros((n, n)), Array2::zeros((n, n)));
        if !self.inner.forward_dynamics_derivatives(
            &q,
            &qd,
            &tau_values,
            dq.as_slice_mut().expect("standard layout"),
            dqd.as_slice_mut().expect("standard layout"),
            dtau.as_slice_mut().expect("standard layout"),
        ) {
            return Err(error("M(q) is not positive definite at this q"));
        }
        Ok((dq.into_pyarray(py), dqd.into_pyarray(py), dtau.into_pyarray(py)))
    }
    /// The contact points' world positions, contacts x 3.
    fn contact_positions<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let q = self.q(q)?;
        let mut out = Array2::zeros((self.inner.contacts(), 3));
        self.inner.contact_positions(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// The contact points' world velocities, contacts x 3.
    fn contact_velocities<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        qd: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (q, qd) = self.q_qd(q, qd)?;
        let mut out = Array2::zeros((self.inner.contacts(), 3));
        self.inner.contact_velocities(&q, &qd, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// Every contact point's Jacobian d(position)/dq, contacts x 3 x N.
    fn contact_jacobians<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let q = self.q(q)?;
        let mut out = Array3::zeros((self.inner.contacts(), 3, self.inner.dof()));
        self.inner.contact_jacobians(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// The markers' world positions, markers x 3.
    fn marker_positions<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let q = self.q(q)?;
        let mut out = Array2::zeros((self.inner.marker_names().len(), 3));
        self.inner.marker_positions(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// Every marker's Jacobian d(position)/dq, markers x 3 x N.
    fn marker_jacobians<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let q = self.q(q)?;
        let mut out = Array3::zeros((self.inner.marker_names().len(), 3, self.inner.dof()));
        self.inner.marker_jacobians(&q, out.as_slice_mut().expect("standard layout"));
        Ok(out.into_pyarray(py))
    }
    /// V(q): gravity and elastic energy.
    fn potential_energy(&self, q: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(self.inner.potential_energy(&self.q(q)?))
    }
    /// 1/2 qd' M(q) qd.
    fn kinetic_energy(&self, q: &Bound<'_, PyAny>, qd: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (q, qd) = self.q_qd(q, qd)?;
        Ok(self.inner.kinetic_energy(&q, &qd))
    }
    /// The centre of mass in the world frame.
    fn center_of_mass<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(Array1::from(self.inner.center_of_mass(&self.q(q)?).to_vec()).into_pyarray(py))
    }
    /// Everything `softgen eval` prints, as a dict (the same JSON document).
    #[pyo3(signature = (q = None, qd = None))]
    fn eval<'py>(
        &self,
        py: Python<'py>,
        q: Option<&Bound<'py, PyAny>>,
        qd: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut input = softgen::EvalInput::default();
        if let Some(q) = q {
            input.q = Some(self.q(q)?);
        }
        if let Some(qd) = qd {
            let mut v = Vec::new();
            vector(qd, "qd", self.inner.dof(), &mut v)?;
            input.qd = Some(v);
        }
        input.params =
            self.inner.param_names().iter().enumerate().map(|(i, n)| (n.to_string(), self.inner.param(i))).collect();
        let text = softgen::eval_json(self.inner.name(), &input).map_err(error)?;
        py.import("json")?.call_method1("loads", (text,))
    }
    /// Mean seconds of one M(q) evaluation over `iterations`, timed inside Rust: the kernel's
    /// own cost, for measuring what a call from Python adds.
    #[pyo3(signature = (q, iterations = 100000))]
    fn time_mass_matrix(&self, py: Python<'_>, q: &Bound<'_, PyAny>, iterations: usize) -> PyResult<f64> {
        let q = self.q(q)?;
        let inner = &self.inner;
        Ok(py.detach(|| inner.time_mass_matrix(&q, iterations)))
    }
    fn __repr__(&self) -> String {
        format!(
            "Robot('{}')  # {} coordinates, {} contact points",
            self.inner.name(),
            self.inner.dof(),
            self.inner.contacts()
        )
    }
}

/// A Python value of a settings dict as TOML.
fn toml_value(value: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(value.extract().map_err(|_| error(format!("{at}: integer out of range")))?));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return Ok(toml::Value::Table(toml_table(dict, at)?));
    }
    // numpy scalars and anything else with a float value.
    value
        .extract::<f64>()
        .map(toml::Value::Float)
        .map_err(|_| error(format!("{at}: expected a number, string, bool or dict, got {}", value.get_type())))
}

fn toml_table(dict: &Bound<'_, PyDict>, at: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in dict.iter() {
        let key: String = k.extract().map_err(|_| error(format!("{at}: keys are strings, got {k}")))?;
        let value = toml_value(&v, &if at.is_empty() { key.clone() } else { format!("{at}.{key}") })?;
        table.insert(key, value);
    }
    Ok(table)
}

/// Runs `robot` as `softgen simulate` does with `settings` (the sweep file's keys: duration,
/// dt, integrator, terrain, amplitude, ..., params = {name: value}). Returns the column
/// names, a samples x columns array (t, q, centre of mass, active contacts, deepest
/// penetration, contact forces) and a summary dict.
#[pyfunction]
#[pyo3(signature = (robot, settings = None, every = 1))]
fn simulate<'py>(
    py: Python<'py>,
    robot: &str,
    settings: Option<&Bound<'py, PyDict>>,
    every: usize,
) -> PyResult<(Vec<String>, Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let table = match settings {
        Some(d) => toml_table(d, "")?,
        None => toml::Table::new(),
    };
    let settings: softgen::RunSettings =
        toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| error(e.message().trim_end().to_string()))?;
    let mut scenario = softgen::robot(robot).map_err(error)?.scenario(&settings).map_err(error)?.scenario;
    scenario.csv_every = every;
    scenario.snapshots = 0;
    struct Rows {
        columns: Vec<String>,
        values: Vec<f64>,
    }
    impl softgen::SampleRows for Rows {
        fn header(&mut self, columns: &[String]) -> Result<(), String> {
            self.columns = columns.to_vec();
            Ok(())
        }
        fn row(&mut self, values: &[f64]) -> Result<(), String> {
            self.values.extend_from_slice(values);
            Ok(())
        }
    }
    let mut rows = Rows { columns: Vec::new(), values: Vec::new() };
    let summary = py.detach(|| softgen::run_scenario_rows(&scenario, Some(&mut rows), &mut |_| {})).map_err(error)?;
    let width = rows.columns.len().max(1);
    let data =
        Array2::from_shape_vec((rows.values.len() / width, width), rows.values).map_err(|e| error(e.to_string()))?;
    let info = PyDict::new(py);
    info.set_item("robot", &summary.robot)?;
    info.set_item("simulated", summary.simulated)?;
    info.set_item("wall_seconds", summary.wall_seconds)?;
    info.set_item("evaluations", summary.evaluations)?;
    info.set_item("max_depth", summary.max_depth)?;
    info.set_item("error", summary.error.clone())?;
    Ok((rows.columns, data.into_pyarray(py), info))
}

/// Writes `page`, the 3D view page of a run of `robot` whose CSV text is `text` (`origin`
/// names it in messages), as `softgen view` does; `settings` are the run's (the keys of
/// `simulate`: its terrain and parameters are drawn). Returns the number of frames.
#[pyfunction]
#[pyo3(signature = (text, origin, robot, page, settings = None, title = None))]
fn view(
    py: Python<'_>,
    text: &str,
    origin: &str,
    robot: &str,
    page: &str,
    settings: Option<&Bound<'_, PyDict>>,
    title: Option<&str>,
) -> PyResult<usize> {
    let table = match settings {
        Some(d) => toml_table(d, "")?,
        None => toml::Table::new(),
    };
    let settings: softgen::RunSettings =
        toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| error(e.message().trim_end().to_string()))?;
    let scenario = softgen::robot(robot).map_err(error)?.scenario(&settings).map_err(error)?.scenario;
    let terrain = scenario.terrain.terrain();
    let title = title.map_or_else(|| format!("{robot} ({origin})"), str::to_string);
    let summary = format!("softgen.view from Python, {origin}");
    let setup = softgen::ViewSetup { title: &title, summary: &summary, terrain, params: &scenario.params };
    let (origin, page) = (std::path::Path::new(origin), std::path::Path::new(page));
    py.detach(|| softgen::write_view_from_csv_text(text, origin, robot, &setup, page)).map_err(error)
}

/// The robots, by name.
#[pyfunction]
fn robots() -> Vec<&'static str> {
    softgen::ROBOTS.iter().map(|r| r.name).collect()
}

/// The experiments: (name, what it runs).
#[pyfunction]
fn experiments() -> Vec<(&'static str, &'static str)> {
    softgen::experiments().map(|e| (e.name, e.what)).collect()
}

/// Runs experiment `name` with its outputs under `output/name/` (and a 3D page beside each
/// trajectory with `view`); returns its printed comparison lines and its verdict line.
#[pyfunction]
#[pyo3(signature = (name, output = "out", view = false))]
fn run_experiment(py: Python<'_>, name: &str, output: &str, view: bool) -> PyResult<(Vec<String>, String)> {
    let experiment = softgen::find_experiment(name).map_err(error)?;
    let report = py.detach(|| experiment.run(std::path::Path::new(output), view)).map_err(error)?;
    Ok((report.lines.clone(), report.verdict_line()))
}

fn parse_sweep(text: &str, origin: &str) -> PyResult<softgen::Sweep> {
    softgen::Sweep::parse(text, origin).map_err(error)
}

/// Runs a sweep file's text (shard `(k, n)` of it, or all) on `workers` threads (0: every
/// core) and returns its results table as Parquet bytes. Failed runs are rows with their
/// error.
#[pyfunction]
#[pyo3(signature = (text, origin = "<sweep>", shard = None, workers = 0))]
fn run_sweep<'py>(
    py: Python<'py>,
    text: &str,
    origin: &str,
    shard: Option<(usize, usize)>,
    workers: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let sweep = parse_sweep(text, origin)?;
    let shard = shard.map(|(k, n)| softgen::Shard::parse(&format!("{k}/{n}"))).transpose().map_err(error)?;
    let options = softgen::SweepOptions { shard, workers, ..Default::default() };
    let bytes = py
        .detach(|| softgen::run_sweep(&sweep, &options, &|_, _| {}).and_then(|outcome| outcome.table.to_parquet()))
        .map_err(error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The number of runs in a sweep file's text, and its name.
#[pyfunction]
#[pyo3(signature = (text, origin = "<sweep>"))]
fn sweep_info(text: &str, origin: &str) -> PyResult<(String, usize)> {
    let sweep = parse_sweep(text, origin)?;
    Ok((sweep.name.clone(), sweep.points.len()))
}

/// Joins shards' Parquet tables into the whole sweep's, bit for bit the single-machine one.
#[pyfunction]
fn merge_tables<'py>(py: Python<'py>, shards: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let tables = shards
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| {
            softgen::SweepTable::from_parquet(bytes, &format!("shard table {i}"))
                .map(|t| (format!("shard table {i}"), t))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(error)?;
    let merged = softgen::SweepTable::merge(tables).map_err(error)?;
    Ok(PyBytes::new(py, &merged.to_parquet().map_err(error)?))
}

#[pymodule]
fn _softgen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Robot>()?;
    m.add("SoftgenError", m.py().get_type::<SoftgenError>())?;
    m.add_function(wrap_pyfunction!(robots, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(view, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_info, m)?)?;
    m.add_function(wrap_pyfunction!(merge_tables, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
