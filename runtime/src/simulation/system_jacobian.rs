//! The simulated system's exact Jacobian: d(qdd)/dq and d(qdd)/d(qd) of the right-hand side
//! the integrators see (contact and friction on the terrain, servos, thrusters, water,
//! viscous damping, the dynamics themselves), and d(qdd)/du for the commands a controller
//! sets, assembled from the generated tangents of the model.
//!
//! With F(t, q, qd) the generalized force and qdd = M^-1 (F - C qd - G), differentiating
//! M qdd + C qd + G = F gives d qdd = M^-1 (dF - dID) with dID the inverse dynamics'
//! derivative at the current qdd (so the change of M acting on qdd is in it). The contact part
//! of dF follows every touching point: its frame's columns S and their tangent dS (generated),
//! the point's position, velocity and body axis moving with them, the terrain's depth and
//! normal moving with the point, and the contact law's force with them
//! (`ContactLaw::force_slopes`: the force is linear in its inputs' tangents, so its ten
//! slopes are found once per point and serve every direction); then d(S' W) = dS' W + S' dW
//! over the frame's wrench W. The frames of one segment (a soft section's skin rings) share
//! every column but their own, so those columns' terms are taken once per segment, over the
//! sum of its frames' wrenches and of their tangents, as the right-hand side takes them.

use super::closed_loop::Simulation;
use crate::environment::contact::ContactTangent;
use crate::environment::contact_frame::{point_jacobian_column, point_velocity, point_wrench};
use crate::environment::terrain::Terrain;
use crate::integration::integrator::IntegrationError;
use crate::robot::dense::{cholesky_in_place, solve_cholesky, solve_cholesky_columns};
use crate::robot::dynamics::forward_dynamics;
use crate::robot::model::{Model, ParamSet};
use crate::simulation::jacobian_workspace::{TouchingFrame, TouchingPoint, TouchingSegment};
use nalgebra::{Matrix3, SMatrix, SVector, Vector3, Vector6};

/// The commands a controller sets on a simulation, for [`Simulation::input_jacobian`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlInput {
    /// Open-loop generalized forces, one per coordinate ([`Simulation::set_actuator_forces`]).
    ActuatorForces,
    /// Servo set points, one per actuated joint ([`Simulation::set_joint_targets`]).
    JointTargets,
    /// Thrusts, one per thruster ([`Simulation::set_thrusts`]).
    Thrusts,
    /// Muscle pressures (bar), one per muscle ([`Simulation::set_muscle_pressures`]).
    MusclePressures,
}

impl ControlInput {
    /// How many commands of this kind robot `R` has.
    pub fn count<R: Model<N, C>, const N: usize, const C: usize>(self) -> usize {
        match self {
            ControlInput::ActuatorForces => N,
            ControlInput::JointTargets => R::ACTUATED.len(),
            ControlInput::Thrusts => R::THRUSTERS.len(),
            ControlInput::MusclePressures => R::MUSCLES.len(),
        }
    }
}

/// What [`Simulation::factored_exact_jacobian`] computed on the way to the Jacobian.
#[derive(Clone, Copy, Debug)]
pub struct FactoredState<const N: usize> {
    /// M's Cholesky factor at q (lower triangle; `solve_cholesky`).
    pub factor: SMatrix<f64, N, N>,
    /// The accelerations at (t, q, qd).
    pub acceleration: SVector<f64, N>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Simulation<R, N, C> {
    /// The exact Jacobian of the accelerations at (t, q, qd): d(qdd)/dq into `by_position`
    /// and d(qdd)/d(qd) into `by_velocity`, every term of the right-hand side differentiated
    /// (see the module's documentation). Points whose contact is exactly at a kink of the
    /// laws (a normal force exactly zero) take the side the right-hand side takes.
    pub fn exact_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<(), IntegrationError> {
        self.factored_exact_jacobian(t, q, qd, by_position, by_velocity).map(|_| ())
    }

    /// [`Simulation::exact_jacobian`], also giving what it computed on the way: M's Cholesky
    /// factor and the accelerations at (t, q, qd). A caller that needs them as well (a
    /// planner's step, which advances with the accelerations and solves the commands'
    /// columns with M) then computes neither a second time. For models with closed-form
    /// factors ([`Model::INVERSE_DYNAMICS_FACTORS`]) the accelerations are the right-hand
    /// side's to the last bit (the same forward dynamics); for the others they are F - C qd
    /// - G solved with the factor, equal to rounding.
    pub fn factored_exact_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<FactoredState<N>, IntegrationError> {
        let singular = || IntegrationError::SingularMassMatrix { time: t };
        let cache = R::cache(q, &self.params);
        let mut damping = SVector::<f64, N>::zeros();
        R::damping_into(qd, &self.params, &mut damping);
        // M's Cholesky factor serves the accelerations and the 2 N columns alike.
        let mut factor = SMatrix::<f64, N, N>::zeros();
        R::mass_matrix_into(q, &self.params, &cache, &mut factor);
        cholesky_in_place(&mut factor).map_err(|_| singular())?;
        let mut acceleration = SVector::<f64, N>::zeros();
        if R::INVERSE_DYNAMICS_FACTORS {
            // Closed-form rigid trees: dID/dqd comes with dID/dq from one kernel, and the
            // accelerations are the right-hand side's to the last bit.
            let force = self.generalized_force(t, q, qd, &cache, None) - damping;
            forward_dynamics::<R, N, C>(q, qd, &self.params, &cache, &force, &mut acceleration)
                .map_err(|_| singular())?;
            self.force_jacobian_less_inverse_dynamics(t, q, qd, &cache, &acceleration, None, by_position, by_velocity);
        } else {
            // The contact force comes with its Jacobian: the touching points' forces and
            // wrenches the Jacobian needs are the force's, so they are not found twice
            // (measured on the soft snake: the right-hand side's contact pass was about 8 % of
            // the Jacobian).
            let mut force = self.generalized_force_apart_from_contact(t, q, qd, &cache, None) - damping;
            self.force_jacobian(t, q, qd, &cache, Some(&mut force), by_position, by_velocity);
            // dID/dqd is 2 C, so C qd for the accelerations is C's product with the rates
            // rather than a kernel of its own (measured on the soft snake: C qd's kernel was 5 %
            // of the Jacobian).
            let params = &self.params;
            let mut coriolis = SMatrix::<f64, N, N>::zeros();
            R::coriolis_matrix_into(q, qd, params, &cache, &mut coriolis);
            let mut gravity = SVector::<f64, N>::zeros();
            R::gravity_into(q, params, &cache, &mut gravity);
            acceleration = force - coriolis * qd - gravity;
            solve_cholesky(&factor, &mut acceleration);
            if !acceleration.iter().all(|a| a.is_finite()) {
                return Err(singular());
            }
            let mut position_id = SMatrix::<f64, N, N>::zeros();
            R::inverse_dynamics_position_derivatives_into(q, qd, &acceleration, params, &cache, &mut position_id);
            *by_position -= position_id;
            *by_velocity -= coriolis * 2.0;
        }
        solve_cholesky_columns(&factor, by_position);
        solve_cholesky_columns(&factor, by_velocity);
        Ok(FactoredState { factor, acceleration })
    }

    /// dF - dID at (t, q, qd) with the accelerations `acceleration`: the right-hand side's
    /// Jacobian before M^-1, d(F - M qdd - C qd - G) at fixed qdd, by q into `by_position`
    /// and by qd into `by_velocity`. [`Simulation::exact_jacobian`] solves it with M; a
    /// simulation with prescribed coordinates solves its free rows with the free block.
    /// `velocity_id`, where the caller has it, is dID/dqd = 2 C (models without closed-form
    /// factors), and only dID/dq is computed here.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn force_jacobian_less_inverse_dynamics(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        acceleration: &SVector<f64, N>,
        velocity_id: Option<&SMatrix<f64, N, N>>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) {
        self.force_jacobian(t, q, qd, cache, None, by_position, by_velocity);
        let params = &self.params;
        // dID at the given accelerations.
        let mut position_id = SMatrix::<f64, N, N>::zeros();
        let mut computed = SMatrix::<f64, N, N>::zeros();
        let velocity_id = match velocity_id {
            Some(given) => {
                R::inverse_dynamics_position_derivatives_into(q, qd, acceleration, params, cache, &mut position_id);
                given
            }
            None => {
                R::inverse_dynamics_derivatives_into(
                    q,
                    qd,
                    acceleration,
                    params,
                    cache,
                    &mut position_id,
                    &mut computed,
                );
                &computed
            }
        };
        *by_velocity -= velocity_id;
        *by_position -= position_id;
    }

    /// dF at (t, q, qd), the generalized force's Jacobian (damping, servos, thrusters, water,
    /// contact), by q into `position_force` and by qd into `velocity_force`. With
    /// `contact_force`, the contact's generalized force is added to it as well (the touching
    /// points' forces are found here anyway): what [`Simulation::generalized_force`] adds to
    /// [`Simulation::generalized_force_apart_from_contact`], equal to rounding.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn force_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        contact_force: Option<&mut SVector<f64, N>>,
        position_force: &mut SMatrix<f64, N, N>,
        velocity_force: &mut SMatrix<f64, N, N>,
    ) {
        let params = &self.params;
        // dF: damping, servos, thrusters, water, contact.
        *position_force = SMatrix::<f64, N, N>::zeros();
        *velocity_force = SMatrix::<f64, N, N>::zeros();
        R::damping_jacobian_into(qd, params, velocity_force);
        velocity_force.neg_mut();
        self.servo_slopes(t, q, qd, position_force, velocity_force);
        let mut direction = SVector::<f64, N>::zeros();
        let mut column = SVector::<f64, N>::zeros();
        for j in 0..N {
            direction[j] = 1.0;
            if const { !R::THRUSTERS.is_empty() } {
                R::thruster_force_position_tangent_into(q, &direction, params, cache, self.thrusts(), &mut column);
                position_force.set_column(j, &(position_force.column(j) + column));
            }
            if R::IN_WATER {
                R::hydrodynamic_force_position_tangent_into(q, qd, &direction, params, cache, &mut column);
                position_force.set_column(j, &(position_force.column(j) + column));
                R::hydrodynamic_force_velocity_tangent_into(q, qd, &direction, params, cache, &mut column);
                velocity_force.set_column(j, &(velocity_force.column(j) + column));
            }
            direction[j] = 0.0;
        }
        self.contact_jacobian(q, qd, cache, position_force, velocity_force, contact_force);
    }

    /// d(qdd)/du at (q, qd) for the commands `input`: column k is the change of the
    /// accelerations per unit of command k (M^-1 times the command's generalized force per
    /// unit: a unit vector for actuator forces, the servo's stiffness on its joint for a
    /// joint target (zero where its torque is at the limit), the thruster's column of B(q), a
    /// muscle's area times its length gradient per bar).
    /// `out` holds one column per command: N for actuator forces, one per actuated joint for
    /// joint targets, one per thruster for thrusts, one per muscle for pressures.
    pub fn input_jacobian(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        input: ControlInput,
        out: &mut [SVector<f64, N>],
    ) -> Result<(), String> {
        let cache = R::cache(q, &self.params);
        self.input_forces(q, qd, input, Some(&cache), out)?;
        let mut factor = SMatrix::<f64, N, N>::zeros();
        R::mass_matrix_into(q, &self.params, &cache, &mut factor);
        cholesky_in_place(&mut factor)
            .map_err(|_| format!("robot `{}`: mass matrix not positive definite", R::NAME))?;
        out.iter_mut().for_each(|column| solve_cholesky(&factor, column));
        Ok(())
    }

    /// [`Simulation::input_jacobian`] with M's Cholesky factor at q given (as
    /// [`Simulation::factored_exact_jacobian`] leaves it).
    pub fn factored_input_jacobian(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        input: ControlInput,
        factor: &SMatrix<f64, N, N>,
        out: &mut [SVector<f64, N>],
    ) -> Result<(), String> {
        self.input_forces(q, qd, input, None, out)?;
        out.iter_mut().for_each(|column| solve_cholesky(factor, column));
        Ok(())
    }

    /// The commands' generalized forces per unit, one column each, before M^-1; `cache` is
    /// the model's at q where the caller has it (only thrusters need it).
    fn input_forces(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        input: ControlInput,
        cache: Option<&R::Cache>,
        out: &mut [SVector<f64, N>],
    ) -> Result<(), String> {
        let expected = input.count::<R, N, C>();
        if out.len() != expected {
            return Err(format!(
                "robot `{}` has {expected} commands of kind {input:?}, but {} columns were given",
                R::NAME,
                out.len()
            ));
        }
        match input {
            ControlInput::ActuatorForces => {
                for (i, column) in out.iter_mut().enumerate() {
                    *column = SVector::zeros();
                    column[i] = 1.0;
                }
            }
            ControlInput::JointTargets => {
                let servo = self.config.servo;
                for (j, (column, &i)) in out.iter_mut().zip(R::ACTUATED).enumerate() {
                    let target = self.joint_target(j);
                    let free =
                        (servo.stiffness * (target - q[i]) + servo.damping * (0.0 - qd[i])).abs() < servo.torque_limit;
                    *column = SVector::zeros();
                    column[i] = if free && self.config.gait.is_none() { servo.stiffness } else { 0.0 };
                }
            }
            ControlInput::Thrusts => {
                let computed;
                let cache = match cache {
                    Some(cache) => cache,
                    None => {
                        computed = R::cache(q, &self.params);
                        &computed
                    }
                };
                let mut unit = vec![0.0; R::THRUSTERS.len()];
                for (k, column) in out.iter_mut().enumerate() {
                    unit[k] = 1.0;
                    R::thruster_force_into(q, &self.params, cache, &unit, column);
                    unit[k] = 0.0;
                }
            }
            ControlInput::MusclePressures => {
                for (k, (column, info)) in out.iter_mut().zip(R::MUSCLES).enumerate() {
                    let muscle = R::muscle(k, &self.params)
                        .ok_or_else(|| format!("robot `{}` gives no values for muscle `{}`", R::NAME, info.name))?;
                    *column = SVector::zeros();
                    muscle.add_force(info, 1.0, column);
                }
            }
        }
        Ok(())
    }

    /// The servos' slopes: -kp on the diagonal of dF/dq and -kd on that of dF/dqd for every
    /// actuated joint whose torque is within its limit (a saturated servo's torque does not
    /// change).
    fn servo_slopes(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        position_force: &mut SMatrix<f64, N, N>,
        velocity_force: &mut SMatrix<f64, N, N>,
    ) {
        let servo = self.config.servo;
        for (j, &i) in R::ACTUATED.iter().enumerate() {
            let (desired, desired_rate) = match (&self.config.gait, self.has_joint_targets()) {
                (Some(gait), _) => gait.joint(t, j, self.spatial_frequency(j)),
                (None, true) => (self.joint_target(j), 0.0),
                (None, false) => continue,
            };
            let torque = servo.stiffness * (desired - q[i]) + servo.damping * (desired_rate - qd[i]);
            if torque.abs() < servo.torque_limit {
                position_force[(i, i)] -= servo.stiffness;
                velocity_force[(i, i)] -= servo.damping;
            }
        }
    }

    /// The contact forces' part of dF/dq and dF/dqd, added to the two matrices, and with
    /// `contact_force` their generalized force, added to it: S' W per segment over its shared
    /// columns and per frame over its own, as the right-hand side sums it; a stair's edge on
    /// the chords between points as `Simulation::edge_contact_jacobian` gives it.
    fn contact_jacobian(
        &mut self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        position_force: &mut SMatrix<f64, N, N>,
        velocity_force: &mut SMatrix<f64, N, N>,
        mut contact_force: Option<&mut SVector<f64, N>>,
    ) {
        let terrain = self.config.terrain;
        if matches!(terrain, Terrain::None) || C == 0 {
            return;
        }
        self.edge_contact_jacobian(q, qd, cache, position_force, velocity_force, contact_force.as_deref_mut());
        let law = self.config.contact;
        let floor_load = match terrain {
            Terrain::Floor => {
                let gravity = self.gravity_index().map_or(0.0, |i| self.params.get(i));
                Some(R::total_mass(&self.params) * gravity / C as f64)
            }
            _ => None,
        };
        // Models served through frames place a frame's points only where the terrain can
        // reach the ball that holds them, as the right-hand side does; the others all at once.
        let by_frame = R::CONTACT_FRAME_OF.len() == C && floor_load.is_none();
        let mut positions = [Vector3::zeros(); C];
        if !by_frame {
            R::contact_positions_into(q, &self.params, cache, &mut positions);
        }
        let mut centre = Vector3::zeros();
        let mut workspace = self.take_jacobian_workspace();
        workspace.frames.clear();
        workspace.segments.clear();
        workspace.points.clear();
        let own_count =
            |frame: usize| R::CONTACT_FRAME_OWN.get(frame).map_or((0, 0), |&(f, c)| (f as usize, c as usize));
        // A frame's columns are its segment's with its own put in (as `Model::contact_frame_into`
        // gives them by default), the segment's computed once.
        let segmented = !R::CONTACT_FRAME_SEGMENT.is_empty();
        let mut segment_columns = SMatrix::<f64, 6, N>::zeros();
        let mut segment_index = usize::MAX;
        let mut own = SMatrix::<f64, 6, 3>::zeros();
        // The touching points, frame by frame, with their forces as the right-hand side has them.
        let frames = R::CONTACT_FRAME_PATH.len();
        let mut first = 0;
        for frame in 0..frames {
            let end = first + R::CONTACT_POINT_FRAME[first..].iter().take_while(|&&f| f as usize == frame).count();
            let points = first..end;
            first = end;
            if by_frame {
                let radius = R::contact_frame_sphere(frame, q, &self.params, cache, &mut centre);
                if points.is_empty() || !terrain.may_touch(&centre, radius) {
                    continue;
                }
                R::contact_frame_positions_into(frame, q, &self.params, cache, &mut positions);
            }
            let start = workspace.points.len();
            let mut columns = SMatrix::<f64, 6, N>::zeros();
            let mut axis = Vector3::zeros();
            let mut twist = Vector6::zeros();
            let mut wrench = Vector6::zeros();
            // The frame's columns, once, at its first point in contact (which may carry no
            // force, a point leaving the ground faster than its spring pushes).
            let mut placed = false;
            for index in points {
                let position = positions[index];
                let contact = match floor_load {
                    Some(_) => None,
                    None => match self.contact_of(index, &position).filter(|_| self.contact_armed(index)) {
                        Some(contact) => Some(contact),
                        None => continue,
                    },
                };
                if !placed {
                    placed = true;
                    if segmented {
                        let index = R::CONTACT_FRAME_SEGMENT[frame] as usize;
                        if index != segment_index {
                            R::contact_segment_into(index, q, &self.params, cache, &mut segment_columns);
                            segment_index = index;
                        }
                        columns = segment_columns;
                        R::contact_frame_own_into(frame, q, &self.params, cache, &mut own, &mut axis);
                        let (own_first, own_count) = own_count(frame);
                        for c in 0..own_count {
                            columns.set_column(own_first + c, &own.column(c));
                        }
                    } else {
                        R::contact_frame_into(frame, q, &self.params, cache, &mut columns, &mut axis);
                    }
                    twist = columns * qd;
                }
                let velocity = point_velocity(&twist, &position);
                let force = match (contact, floor_load) {
                    (Some(contact), _) => law.force(&contact, &velocity, &axis),
                    (None, Some(load)) => law.with_normal_force(load, &Vector3::z(), &velocity, &axis),
                    (None, None) => continue,
                };
                if force.normal_force == 0.0 {
                    continue;
                }
                let force = if floor_load.is_some() { force.friction } else { force.total() };
                wrench += point_wrench(&force, &position);
                let slopes = match contact {
                    Some(contact) => law.force_slopes(&contact, &velocity, &axis),
                    None => law.with_normal_force_slopes(floor_load.unwrap_or(0.0), &Vector3::z(), &velocity, &axis),
                };
                workspace.points.push(TouchingPoint { position, contact, force, slopes });
            }
            if workspace.points.len() > start {
                let points = (start, workspace.points.len());
                let index = if segmented { R::CONTACT_FRAME_SEGMENT[frame] as usize } else { frame };
                let at = workspace.frames.len();
                match workspace.segments.last_mut() {
                    Some(segment) if segment.index == index => {
                        debug_assert!(R::CONTACT_FRAME_PATH[frame]
                            .iter()
                            .map(|&c| c as usize)
                            .filter(|&c| c < own_count(frame).0 || c >= own_count(frame).0 + own_count(frame).1)
                            .eq(segment.shared_path()));
                        segment.wrench += wrench;
                        segment.frames.1 = at + 1;
                    }
                    _ => workspace.segments.push(TouchingSegment {
                        index,
                        columns,
                        path: R::CONTACT_FRAME_PATH[frame],
                        own: own_count(frame),
                        wrench,
                        frames: (at, at + 1),
                    }),
                }
                workspace.frames.push(TouchingFrame { frame, columns, twist, axis, wrench, points });
            }
        }
        if let Some(force) = contact_force {
            for segment in &workspace.segments {
                for c in segment.shared_path() {
                    force[c] += segment.columns.column(c).dot(&segment.wrench);
                }
            }
            for frame in &workspace.frames {
                let (own_first, own_count) = own_count(frame.frame);
                for c in own_first..own_first + own_count {
                    force[c] += frame.columns.column(c).dot(&frame.wrench);
                }
            }
        }
        // By the rates: J' (df/dv) J per point (the points do not move), over the frame's path.
        for frame in &workspace.frames {
            let path = R::CONTACT_FRAME_PATH[frame.frame];
            for point in &workspace.points[frame.points.0..frame.points.1] {
                add_point_rate_block(
                    velocity_force,
                    &frame.columns,
                    path,
                    &point.position,
                    &point.slopes.by_velocity(),
                );
            }
        }
        // By the coordinates, one direction at a time: dS' W + S' dW. A frame's own columns'
        // tangents along every direction come at once (one generated kernel per frame shares
        // what the directions have in common).
        workspace.own_tangents.resize(workspace.frames.len(), [SMatrix::zeros(); N]);
        for (frame, tangents) in workspace.frames.iter().zip(workspace.own_tangents.iter_mut()) {
            if own_count(frame.frame).1 > 0 {
                R::contact_frame_own_tangents_into(frame.frame, q, &self.params, cache, tangents);
            }
        }
        let mut direction = SVector::<f64, N>::zeros();
        let mut shared = SMatrix::<f64, 6, N>::zeros();
        for j in 0..N {
            let moves_frame = |frame: &TouchingFrame<N>| R::CONTACT_FRAME_PATH[frame.frame].contains(&(j as u16));
            if !workspace.frames.iter().any(moves_frame) {
                continue;
            }
            direction[j] = 1.0;
            R::contact_columns_tangent_into(q, &direction, &self.params, cache, &mut shared);
            // Columns this direction does not turn (a joint's column does not move with the
            // joints after it) have zero tangents, and their terms below add nothing: skipped.
            let mut shared_moves = [false; N];
            for (c, moves) in shared_moves.iter_mut().enumerate() {
                *moves = shared.column(c).iter().any(|&x| x != 0.0);
            }
            let mut generalized = SVector::<f64, N>::zeros();
            for segment in &workspace.segments {
                let frames = segment.frames.0..segment.frames.1;
                if !workspace.frames[frames.clone()].iter().any(moves_frame) {
                    continue;
                }
                // The shared columns' part of every frame's twist tangent.
                let mut shared_twist_tangent = Vector6::zeros();
                for c in segment.shared_path() {
                    if shared_moves[c] {
                        shared_twist_tangent += shared.column(c) * qd[c];
                    }
                }
                let mut segment_wrench_tangent = Vector6::zeros();
                for (frame, own_tangents) in
                    workspace.frames[frames.clone()].iter().zip(&workspace.own_tangents[frames])
                {
                    if !moves_frame(frame) {
                        continue;
                    }
                    let (own_first, own_count) = own_count(frame.frame);
                    let own = &own_tangents[j];
                    let mut own_moves = [false; 3];
                    let mut twist_tangent = shared_twist_tangent;
                    for (o, moves) in own_moves.iter_mut().enumerate().take(own_count) {
                        *moves = own.column(o).iter().any(|&x| x != 0.0);
                        if *moves {
                            twist_tangent += own.column(o) * qd[own_first + o];
                        }
                    }
                    let moved: Vector6<f64> = frame.columns.column(j).into_owned();
                    let spin = Vector3::new(frame.columns[(0, j)], frame.columns[(1, j)], frame.columns[(2, j)]);
                    let angular = Vector3::new(frame.twist[0], frame.twist[1], frame.twist[2]);
                    let mut wrench_tangent = Vector6::zeros();
                    for point in &workspace.points[frame.points.0..frame.points.1] {
                        let dp = point_velocity(&moved, &point.position);
                        let dv = point_velocity(&twist_tangent, &point.position) + angular.cross(&dp);
                        let (depth, normal) = match point.contact {
                            Some(contact) => terrain.tangent_of(&contact, &point.position, &dp),
                            None => (0.0, Vector3::zeros()),
                        };
                        let tangent = point.slopes.tangent(&ContactTangent {
                            depth,
                            normal,
                            velocity: dv,
                            axis: spin.cross(&frame.axis),
                        });
                        // d(p x f, f) = (dp x f + p x df, df).
                        wrench_tangent += point_wrench(&tangent, &point.position);
                        let moment = dp.cross(&point.force);
                        wrench_tangent[0] += moment[0];
                        wrench_tangent[1] += moment[1];
                        wrench_tangent[2] += moment[2];
                    }
                    // The frame's own columns: d(S_own' W) over the frame's own wrench.
                    for (o, &moves) in own_moves.iter().enumerate().take(own_count) {
                        let c = own_first + o;
                        let through_wrench = frame.columns.column(c).dot(&wrench_tangent);
                        generalized[c] +=
                            if moves { own.column(o).dot(&frame.wrench) + through_wrench } else { through_wrench };
                    }
                    segment_wrench_tangent += wrench_tangent;
                }
                // The shared columns, once over the segment's wrench and its tangent.
                for c in segment.shared_path() {
                    let through_wrench = segment.columns.column(c).dot(&segment_wrench_tangent);
                    generalized[c] += if shared_moves[c] {
                        shared.column(c).dot(&segment.wrench) + through_wrench
                    } else {
                        through_wrench
                    };
                }
            }
            position_force.set_column(j, &(position_force.column(j) + generalized));
            direction[j] = 0.0;
        }
        self.put_jacobian_workspace(workspace);
    }
}

/// `velocity_force += J' B J` for the point at `position` on a frame with world columns
/// `columns`, J its 3 x N Jacobian and B the force's slope by its velocity, over the columns
/// of the frame's `path` alone (the others are zero: a section's frames see 9 to 15 of the
/// soft snake's 15). Each entry is summed as nalgebra sums J' (B J) of the full Jacobian (k =
/// 0, 1, 2 in turn), so the matrix is the same to the bit (the test below holds it so).
fn add_point_rate_block<const N: usize>(
    velocity_force: &mut SMatrix<f64, N, N>,
    columns: &SMatrix<f64, 6, N>,
    path: &[u16],
    position: &Vector3<f64>,
    by_velocity: &Matrix3<f64>,
) {
    let mut point_columns = [Vector3::<f64>::zeros(); N];
    let mut by_rate_columns = [Vector3::<f64>::zeros(); N];
    for (slot, &c) in path.iter().enumerate() {
        let column = point_jacobian_column(columns, c as usize, position);
        point_columns[slot] = column;
        by_rate_columns[slot] = Vector3::from_fn(|i, _| {
            by_velocity[(i, 0)] * column[0] + by_velocity[(i, 1)] * column[1] + by_velocity[(i, 2)] * column[2]
        });
    }
    for (by_rate, &b) in by_rate_columns.iter().zip(path) {
        for (jacobian, &a) in point_columns.iter().zip(path) {
            velocity_force[(a as usize, b as usize)] +=
                jacobian[0] * by_rate[0] + jacobian[1] * by_rate[1] + jacobian[2] * by_rate[2];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::contact_frame::point_jacobian;

    #[test]
    fn point_rate_block_over_the_path_is_the_full_product_to_the_bit() {
        // A frame whose path skips coordinates (a branch of a tree), columns zero off it.
        const N: usize = 9;
        let path: &[u16] = &[0, 1, 2, 4, 7];
        let columns = SMatrix::<f64, 6, N>::from_fn(|i, j| {
            if path.contains(&(j as u16)) {
                ((7 * i + 3 * j) as f64 * 0.61).sin() * 1.7
            } else {
                0.0
            }
        });
        let position = Vector3::new(0.31, -1.27, 0.043);
        let by_velocity = Matrix3::from_fn(|i, j| ((4 * i + j) as f64 * 1.3).cos() * 40.0);
        let start = SMatrix::<f64, N, N>::from_fn(|i, j| ((i * N + j) as f64 * 0.11).sin());
        let mut full = start;
        let jacobian = point_jacobian(&columns, &position);
        full += jacobian.transpose() * (by_velocity * jacobian);
        let mut over_path = start;
        add_point_rate_block(&mut over_path, &columns, path, &position, &by_velocity);
        assert_eq!(over_path, full);
    }
}
