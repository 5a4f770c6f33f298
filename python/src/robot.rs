//! One generated robot behind an object-safe interface on flat slices: the Python class holds
//! a `Box<dyn DynamicRobot>` made once per robot, so each call is one virtual call into the
//! robot's own const-generic kernels with no lookup by name.

use nalgebra::{SMatrix, SVector, Vector3};
use softgen_runtime::{
    forward_dynamics_derivatives, CoordinateKind, ForwardDynamicsDerivatives, Model, ParamSet, RobotVisitor,
};

/// A generalized coordinate as Python sees it.
pub struct CoordinateInfo {
    pub name: &'static str,
    pub kind: CoordinateKind,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub actuated: bool,
}

/// A robot's kernels on slices. Inputs are checked by the caller (lengths N, finite values);
/// matrices are written row-major.
pub trait DynamicRobot: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn dof(&self) -> usize;
    fn contacts(&self) -> usize;
    fn coordinates(&self) -> Vec<CoordinateInfo>;
    fn contact_point_names(&self) -> Vec<&'static str>;
    /// The spec's markers' names (tracked points that touch nothing).
    fn marker_names(&self) -> Vec<&'static str>;
    fn initial_position(&self) -> Vec<f64>;
    fn param_names(&self) -> &'static [&'static str];
    fn param(&self, index: usize) -> f64;
    /// Sets parameters by name, all or none: unknown names and values the spec's rules refuse
    /// leave the parameters as they were.
    fn set_params(&mut self, values: &[(String, f64)]) -> Result<(), String>;
    fn mass_matrix(&self, q: &[f64], out: &mut [f64]);
    fn coriolis(&self, q: &[f64], qd: &[f64], out: &mut [f64]);
    fn coriolis_matrix(&self, q: &[f64], qd: &[f64], out: &mut [f64]);
    fn gravity(&self, q: &[f64], out: &mut [f64]);
    /// False where M is not positive definite.
    fn forward_dynamics(&self, q: &[f64], qd: &[f64], tau: &[f64], out: &mut [f64]) -> bool;
    /// d qdd/dq, d qdd/dqd and d qdd/dtau, each N x N row-major; false where M is not
    /// positive definite.
    fn forward_dynamics_derivatives(
        &self,
        q: &[f64],
        qd: &[f64],
        tau: &[f64],
        dq: &mut [f64],
        dqd: &mut [f64],
        dtau: &mut [f64],
    ) -> bool;
    /// Contact points' world positions, `contacts x 3`.
    fn contact_positions(&self, q: &[f64], out: &mut [f64]);
    fn contact_velocities(&self, q: &[f64], qd: &[f64], out: &mut [f64]);
    /// Every contact point's Jacobian, `contacts x 3 x dof`.
    fn contact_jacobians(&self, q: &[f64], out: &mut [f64]);
    /// Markers' world positions, `markers x 3`, and Jacobians, `markers x 3 x dof`.
    fn marker_positions(&self, q: &[f64], out: &mut [f64]);
    fn marker_jacobians(&self, q: &[f64], out: &mut [f64]);
    fn potential_energy(&self, q: &[f64]) -> f64;
    fn kinetic_energy(&self, q: &[f64], qd: &[f64]) -> f64;
    fn center_of_mass(&self, q: &[f64]) -> [f64; 3];
    fn total_mass(&self) -> f64;
    /// Mean seconds of one mass-matrix evaluation (cache included) over `iterations`, timed
    /// in Rust: the kernel's own cost, to set against a call from Python.
    fn time_mass_matrix(&self, q: &[f64], iterations: usize) -> f64;
}

struct Robot<R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
}

fn vector<const N: usize>(values: &[f64]) -> SVector<f64, N> {
    SVector::from_column_slice(values)
}

fn row_major<const R: usize, const K: usize>(m: &SMatrix<f64, R, K>, out: &mut [f64]) {
    for i in 0..R {
        for j in 0..K {
            out[i * K + j] = m[(i, j)];
        }
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> DynamicRobot for Robot<R, N, C> {
    fn name(&self) -> &'static str {
        R::NAME
    }
    fn description(&self) -> &'static str {
        R::DESCRIPTION
    }
    fn dof(&self) -> usize {
        N
    }
    fn contacts(&self) -> usize {
        C
    }
    fn coordinates(&self) -> Vec<CoordinateInfo> {
        R::COORDINATES
            .iter()
            .map(|c| CoordinateInfo {
                name: c.name,
                kind: c.kind,
                unit: c.kind.unit(),
                meaning: c.meaning,
                actuated: c.actuated,
            })
            .collect()
    }
    fn contact_point_names(&self) -> Vec<&'static str> {
        R::CONTACT_POINTS.iter().map(|p| p.name).collect()
    }
    fn marker_names(&self) -> Vec<&'static str> {
        R::MARKERS.iter().map(|p| p.name).collect()
    }
    fn initial_position(&self) -> Vec<f64> {
        R::INITIAL_POSITION.to_vec()
    }
    fn param_names(&self) -> &'static [&'static str] {
        R::Params::names()
    }
    fn param(&self, index: usize) -> f64 {
        self.params.get(index)
    }
    fn set_params(&mut self, values: &[(String, f64)]) -> Result<(), String> {
        let mut params = self.params.clone();
        for (name, value) in values {
            if !value.is_finite() {
                return Err(format!("parameter `{name}` must be finite, got {value}"));
            }
            params.set(name, *value).map_err(|e| e.to_string())?;
        }
        params.check().map_err(|e| format!("parameters: {e}"))?;
        self.params = params;
        Ok(())
    }
    fn mass_matrix(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        let mut m = SMatrix::<f64, N, N>::zeros();
        R::mass_matrix_into(&q, &self.params, &k, &mut m);
        row_major(&m, out);
    }
    fn coriolis(&self, q: &[f64], qd: &[f64], out: &mut [f64]) {
        let (q, qd) = (vector::<N>(q), vector::<N>(qd));
        let k = R::cache(&q, &self.params);
        let mut c = SVector::<f64, N>::zeros();
        R::coriolis_into(&q, &qd, &self.params, &k, &mut c);
        out.copy_from_slice(c.as_slice());
    }
    fn coriolis_matrix(&self, q: &[f64], qd: &[f64], out: &mut [f64]) {
        let (q, qd) = (vector::<N>(q), vector::<N>(qd));
        let k = R::cache(&q, &self.params);
        let mut c = SMatrix::<f64, N, N>::zeros();
        R::coriolis_matrix_into(&q, &qd, &self.params, &k, &mut c);
        row_major(&c, out);
    }
    fn gravity(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        let mut g = SVector::<f64, N>::zeros();
        R::gravity_into(&q, &self.params, &k, &mut g);
        out.copy_from_slice(g.as_slice());
    }
    fn forward_dynamics(&self, q: &[f64], qd: &[f64], tau: &[f64], out: &mut [f64]) -> bool {
        let (q, qd, tau) = (vector::<N>(q), vector::<N>(qd), vector::<N>(tau));
        let k = R::cache(&q, &self.params);
        let mut qdd = SVector::<f64, N>::zeros();
        let ok = R::forward_dynamics_into(&q, &qd, &tau, &self.params, &k, &mut qdd);
        out.copy_from_slice(qdd.as_slice());
        ok
    }
    fn forward_dynamics_derivatives(
        &self,
        q: &[f64],
        qd: &[f64],
        tau: &[f64],
        dq: &mut [f64],
        dqd: &mut [f64],
        dtau: &mut [f64],
    ) -> bool {
        let (q, qd, tau) = (vector::<N>(q), vector::<N>(qd), vector::<N>(tau));
        let k = R::cache(&q, &self.params);
        let mut derivatives = ForwardDynamicsDerivatives::<N>::default();
        if forward_dynamics_derivatives::<R, N, C>(&q, &qd, &tau, &self.params, &k, &mut derivatives).is_err() {
            return false;
        }
        row_major(&derivatives.position, dq);
        row_major(&derivatives.velocity, dqd);
        row_major(&derivatives.force, dtau);
        true
    }
    fn contact_positions(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        let mut points = [Vector3::zeros(); C];
        R::contact_positions_into(&q, &self.params, &k, &mut points);
        for (row, p) in out.chunks_exact_mut(3).zip(&points) {
            row.copy_from_slice(p.as_slice());
        }
    }
    fn contact_velocities(&self, q: &[f64], qd: &[f64], out: &mut [f64]) {
        let (q, qd) = (vector::<N>(q), vector::<N>(qd));
        let k = R::cache(&q, &self.params);
        let mut points = [Vector3::zeros(); C];
        R::contact_velocities_into(&q, &qd, &self.params, &k, &mut points);
        for (row, p) in out.chunks_exact_mut(3).zip(&points) {
            row.copy_from_slice(p.as_slice());
        }
    }
    fn contact_jacobians(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        for (i, block) in out.chunks_exact_mut(3 * N).enumerate() {
            R::contact_jacobian_into(i, &q, &self.params, &k, &mut jacobian);
            row_major(&jacobian, block);
        }
    }
    fn marker_positions(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        for (i, row) in out.chunks_exact_mut(3).enumerate() {
            row.copy_from_slice(R::marker_position(i, &q, &self.params, &k).as_slice());
        }
    }
    fn marker_jacobians(&self, q: &[f64], out: &mut [f64]) {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        for (i, block) in out.chunks_exact_mut(3 * N).enumerate() {
            R::marker_jacobian_into(i, &q, &self.params, &k, &mut jacobian);
            row_major(&jacobian, block);
        }
    }
    fn potential_energy(&self, q: &[f64]) -> f64 {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        R::potential_energy(&q, &self.params, &k)
    }
    fn kinetic_energy(&self, q: &[f64], qd: &[f64]) -> f64 {
        let (q, qd) = (vector::<N>(q), vector::<N>(qd));
        R::kinetic_energy(&q, &qd, &self.params)
    }
    fn center_of_mass(&self, q: &[f64]) -> [f64; 3] {
        let q = vector::<N>(q);
        let k = R::cache(&q, &self.params);
        R::center_of_mass(&q, &self.params, &k).into()
    }
    fn total_mass(&self) -> f64 {
        R::total_mass(&self.params)
    }
    fn time_mass_matrix(&self, q: &[f64], iterations: usize) -> f64 {
        let q = vector::<N>(q);
        let mut m = SMatrix::<f64, N, N>::zeros();
        let start = std::time::Instant::now();
        for _ in 0..iterations {
            let q = std::hint::black_box(&q);
            let k = R::cache(q, &self.params);
            R::mass_matrix_into(q, &self.params, &k, &mut m);
            std::hint::black_box(&m);
        }
        start.elapsed().as_secs_f64() / iterations.max(1) as f64
    }
}

/// Makes the robot of the visited model with its spec's default parameters.
pub struct MakeRobot;

impl RobotVisitor for MakeRobot {
    type Output = Box<dyn DynamicRobot>;
    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Box<dyn DynamicRobot> {
        Box::new(Robot::<R, N, C> { params: R::Params::default() })
    }
}
