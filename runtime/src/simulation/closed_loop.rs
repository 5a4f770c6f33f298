//! A robot in its environment: generated dynamics, contact with the terrain, the gait
//! tracked by joint servos and the optional admittance controller, as one closed-loop
//! second-order system that any integrator can step.

mod contact_forces;
mod edge_contacts;

use crate::actuators::pd::JointPd;
use crate::control::admittance::{Admittance, AdmittanceController, AdmittanceForce};
use crate::control::gait::Serpenoid;
use crate::environment::contact::ContactLaw;
use crate::environment::contact_frame::point_jacobian;
use crate::environment::terrain::{StepFace, Terrain};
use crate::integration::integrator::{IntegrationError, Integrator, SecondOrderSystem};
use crate::robot::dynamics::forward_dynamics;
use crate::robot::model::ForceCoordinates;
use crate::robot::model::{Model, ParamSet};
use crate::robot::state::State;
use crate::simulation::jacobian_workspace::{JacobianWorkspace, SystemJacobian};
use nalgebra::{SMatrix, SVector, Vector3};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Everything about a run that is not the robot's own parameters.
#[derive(Clone, Copy, Debug)]
pub struct SimulationConfig {
    /// The contact and friction law.
    pub contact: ContactLaw,
    /// What the robot touches.
    pub terrain: Terrain,
    /// Gait tracked by the joint servos; `None` leaves the joints passive.
    pub gait: Option<Serpenoid>,
    /// The joint servos' gains.
    pub servo: JointPd,
    /// Admittance controller adapting the spatial frequencies; needs a gait.
    pub admittance: Option<Admittance>,
    /// Period of the discrete-time controller (admittance update) and of the samples (s).
    pub control_period: f64,
}

impl SimulationConfig {
    /// Checks every part, and that an admittance controller has a gait to adapt.
    pub fn validate(&self) -> Result<(), String> {
        self.contact.validate()?;
        self.terrain.validate()?;
        self.servo.validate()?;
        if let Some(g) = &self.gait {
            g.validate()?;
        }
        if let Some(a) = &self.admittance {
            a.gains.validate()?;
            if self.gait.is_none() {
                return Err("the admittance controller adapts a gait, but no gait is set".into());
            }
        }
        crate::quantities::physical_ranges::TIME_STEP.check("control period", self.control_period)
    }
}

/// Contact state at one instant, for output and for force feedback.
#[derive(Clone, Copy, Debug)]
pub struct ContactReport<const N: usize, const C: usize> {
    /// Each point's world position (m).
    pub positions: [Vector3<f64>; C],
    /// Total contact force on each point (N); zero for points not in contact.
    pub forces: [Vector3<f64>; C],
    /// Generalized force of the normal contact forces, J' F_N (the paper's Q_2^f).
    pub normal_generalized: SVector<f64, N>,
    /// Generalized force of the friction forces (the paper's Q_1^f).
    pub friction_generalized: SVector<f64, N>,
    /// Actuator torques on the coordinates.
    pub actuator: SVector<f64, N>,
    /// Generalized force of the normal forces a stair's top edge exerts on the chords
    /// between neighbouring points of a body (part of `normal_generalized`; not in `forces`,
    /// which are the points' own).
    pub edge_normal_generalized: SVector<f64, N>,
    /// The force of a stair's top edge on each chord ([`Simulation::chords`], in order; zero
    /// where it does not press), acting where the edge meets it.
    pub edge_forces: [Vector3<f64>; C],
    /// Chords the stair's edge presses on.
    pub edges_pressed: usize,
    /// Points in contact.
    pub active: usize,
    /// Deepest penetration (m), 0 when nothing touches.
    pub max_depth: f64,
}

impl<const N: usize, const C: usize> Default for ContactReport<N, C> {
    fn default() -> Self {
        ContactReport {
            positions: [Vector3::zeros(); C],
            forces: [Vector3::zeros(); C],
            normal_generalized: SVector::zeros(),
            friction_generalized: SVector::zeros(),
            actuator: SVector::zeros(),
            edge_normal_generalized: SVector::zeros(),
            edge_forces: [Vector3::zeros(); C],
            edges_pressed: 0,
            active: 0,
            max_depth: 0.0,
        }
    }
}

/// Contacts whose touchdowns the integrator locates ([`Simulation::locate_contact_onsets`]).
#[derive(Clone, Debug)]
struct LocatedOnsets {
    /// How deep a point may be when its touchdown counts as located (m).
    tolerance: f64,
    /// The points that carry contact force in the current step: those that penetrated the
    /// state it started from.
    armed: Vec<bool>,
    /// Signed depths where the overshoot test last placed the points (the coordinates of
    /// `Simulation::end_cache`): the next step most often starts there and arms from them
    /// without placing the points again.
    end_depths: Vec<f64>,
    /// Per contact frame, how many of its points are armed: a step's right-hand sides place
    /// no point of a frame without one (models with frames only; empty otherwise).
    armed_in_frame: Vec<u16>,
}

/// The closed-loop system.
pub struct Simulation<R: Model<N, C>, const N: usize, const C: usize> {
    /// The robot's parameters.
    pub params: R::Params,
    /// Everything about the run but the parameters.
    pub config: SimulationConfig,
    admittance: Option<AdmittanceController<N>>,
    /// The coordinates the admittance controller reads the contact force in.
    admittance_coordinates: ForceCoordinates,
    /// Which contacts' normal forces drive the admittance controller.
    admittance_force: AdmittanceForce,
    /// On a stair: for each contact point, the face of the step it entered through (where it
    /// was outside the step when the last step of the integration began), which it is pushed
    /// back out of while inside; None elsewhere, where the nearer face decides.
    entered: [Option<StepFace>; C],
    /// Neighbouring contact points that one rigid body carries, as chords a stair's top edge
    /// may press on (see `edge_contacts`).
    chords: Vec<(usize, usize)>,
    /// Per chord, whether it came to the stair's edge from above it (where the edge last
    /// did not press on it when a step of the integration began).
    chord_over: Vec<bool>,
    /// Servo set points from outside (a controller driving the simulated plant), used when
    /// no gait is configured: entry j is the desired angle of actuated joint j.
    joint_targets: Option<SVector<f64, N>>,
    /// Open-loop generalized forces on the coordinates (pressure x area on soft sections'
    /// actuator lengths) at `actuator_force_time`, changing at `actuator_force_rate` (zero
    /// when held) until changed; added to whatever the servos do.
    actuator_forces: SVector<f64, N>,
    actuator_force_rate: SVector<f64, N>,
    actuator_force_time: f64,
    /// Thrust commands (N), one per thruster of the model, held until changed (set up once
    /// here, so a step allocates nothing).
    thrusts: Vec<f64>,
    /// Index of the `gravity` parameter, for the floor's load.
    gravity_index: Option<usize>,
    /// Touchdowns located by the integrator, if asked for.
    onsets: Option<LocatedOnsets>,
    /// The coordinates where the overshoot test last placed the points, and the cache there:
    /// the next step most often starts there, and its first right-hand side and Jacobian
    /// reuse it.
    end_cache: Option<Box<(SVector<f64, N>, R::Cache)>>,
    /// Set non-zero (to a signal's number) from outside to end [`Simulation::run`] at the
    /// next control period.
    stop: Option<Arc<AtomicUsize>>,
    /// Which Jacobian implicit integrators get.
    jacobian: SystemJacobian,
    /// The exact Jacobian's buffers, kept between calls.
    jacobian_workspace: JacobianWorkspace<N>,
    // `fn() -> R`: the marker carries no data, so the simulation is Send whatever R is.
    model: PhantomData<fn() -> R>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Simulation<R, N, C> {
    /// A simulation of the robot with `params` under `config`, once `config` validates.
    pub fn new(params: R::Params, config: SimulationConfig) -> Result<Self, String> {
        config.validate()?;
        config.terrain.fits(R::PLANE).map_err(|e| format!("robot `{}`: {e}", R::NAME))?;
        let admittance = match (config.admittance, config.gait) {
            (Some(a), Some(gait)) => {
                a.coordinates.validate::<R, N, C>().map_err(|e| format!("robot `{}`: {e}", R::NAME))?;
                Some(AdmittanceController::new(a.gains, R::ACTUATED.len(), gait.spatial_frequency))
            }
            _ => None,
        };
        let admittance_coordinates = config.admittance.map_or(ForceCoordinates::Model, |a| a.coordinates);
        let admittance_force = config.admittance.map_or(AdmittanceForce::default(), |a| a.force);
        let gravity_index = <R::Params as ParamSet>::names().iter().position(|n| *n == "gravity");
        if matches!(config.terrain, Terrain::Floor) && gravity_index.is_none() {
            return Err(format!("robot `{}` has no `gravity` parameter to load the floor with", R::NAME));
        }
        let chords = edge_contacts::rigid_chords::<R, N, C>(&params);
        let chord_over = vec![false; chords.len()];
        Ok(Simulation {
            params,
            config,
            admittance,
            admittance_coordinates,
            admittance_force,
            entered: [None; C],
            chords,
            chord_over,
            joint_targets: None,
            actuator_forces: SVector::zeros(),
            actuator_force_rate: SVector::zeros(),
            actuator_force_time: 0.0,
            thrusts: vec![0.0; R::THRUSTERS.len()],
            gravity_index,
            onsets: None,
            end_cache: None,
            stop: None,
            jacobian: SystemJacobian::default(),
            jacobian_workspace: JacobianWorkspace::default(),
            model: PhantomData,
        })
    }

    /// Ends [`Simulation::run`] at the next control period once `flag` is non-zero (signal
    /// handlers store the signal's number), with [`IntegrationError::Stopped`].
    pub fn stop_on(&mut self, flag: Arc<AtomicUsize>) {
        self.stop = Some(flag);
    }

    /// The signal number that asked the run to stop, if one did.
    pub fn stop_signal(&self) -> Option<usize> {
        self.stop.as_ref().map(|s| s.load(Ordering::Relaxed)).filter(|s| *s != 0)
    }

    /// Lets the integrator locate every touchdown instead of meeting it inside a step.
    ///
    /// The contact law's damping term jumps from zero to d v_n the moment a point touches
    /// down. An adaptive step with that jump inside it fails its error test, and is halved
    /// until it ends just before or just after the jump: the soft snake rolling on the carpet
    /// meets about 800 touchdowns a second, each costing several rejected attempts. With
    /// located onsets, a point carries contact force during a step only if it penetrated the
    /// state the step started from, so the right-hand side is smooth within every step; a
    /// step that takes another point deeper than `tolerance` is cut to end at that point's
    /// touchdown (its depth interpolated over the step), and the point carries force from
    /// the next step on. The model is unchanged up to when a touchdown takes effect: at most
    /// `tolerance` of penetration late. Adaptive integrators (ROS2, ROS34PW2, DOPRI5) cut
    /// steps; fixed-step ones arm a point at the step after its touchdown.
    pub fn locate_contact_onsets(&mut self, tolerance: f64) -> Result<(), String> {
        if !(tolerance.is_finite() && tolerance > 0.0) {
            return Err(format!("contact onset tolerance must be finite and > 0 (m), got {tolerance}"));
        }
        let frames = if R::CONTACT_FRAME_OF.len() == C { R::CONTACT_FRAME_START.len().saturating_sub(1) } else { 0 };
        self.onsets = Some(LocatedOnsets {
            tolerance,
            armed: vec![false; C],
            end_depths: vec![f64::NEG_INFINITY; C],
            armed_in_frame: vec![0; frames],
        });
        Ok(())
    }

    /// Whether touchdowns are located ([`Simulation::locate_contact_onsets`]).
    pub fn locates_contact_onsets(&self) -> bool {
        self.onsets.is_some()
    }

    /// The cache the overshoot test kept, if it placed the points at `q`.
    #[inline]
    fn kept_cache(&self, q: &SVector<f64, N>) -> Option<&R::Cache> {
        self.end_cache.as_deref().filter(|(end, _)| end == q).map(|(_, cache)| cache)
    }

    /// The cache at `q`: the one the overshoot test kept if it was placed there (a step's
    /// start), else computed into `computed`.
    #[inline]
    fn cache_at<'a>(&'a self, q: &SVector<f64, N>, computed: &'a mut Option<R::Cache>) -> &'a R::Cache {
        match self.kept_cache(q) {
            Some(cache) => cache,
            None => computed.insert(R::cache(q, &self.params)),
        }
    }

    /// Whether point `index` carries contact force in the current step.
    #[inline]
    fn armed(&self, index: usize) -> bool {
        self.onsets.as_ref().map_or(true, |o| o.armed[index])
    }

    /// Gives implicit integrators the exact Jacobian of the accelerations or only its stiff
    /// part (the default; see [`SystemJacobian`]).
    pub fn use_jacobian(&mut self, jacobian: SystemJacobian) {
        self.jacobian = jacobian;
    }

    /// The Jacobian implicit integrators get.
    pub fn jacobian(&self) -> SystemJacobian {
        self.jacobian
    }

    /// The pairs of neighbouring contact points one rigid body carries, whose chords a
    /// stair's top edge presses on (see [`Terrain::edge_contact`]).
    pub fn chords(&self) -> &[(usize, usize)] {
        &self.chords
    }

    pub(super) fn contact_armed(&self, index: usize) -> bool {
        self.armed(index)
    }

    pub(super) fn gravity_index(&self) -> Option<usize> {
        self.gravity_index
    }

    pub(super) fn has_joint_targets(&self) -> bool {
        self.joint_targets.is_some()
    }

    /// The servo set point of actuated joint `j` from outside (0 when none is set).
    pub(super) fn joint_target(&self, j: usize) -> f64 {
        self.joint_targets.map_or(0.0, |t| t[j])
    }

    pub(super) fn take_jacobian_workspace(&mut self) -> JacobianWorkspace<N> {
        std::mem::take(&mut self.jacobian_workspace)
    }

    pub(super) fn put_jacobian_workspace(&mut self, workspace: JacobianWorkspace<N>) {
        self.jacobian_workspace = workspace;
    }

    /// Places the points of contact frame `frame`'s chunk into `positions` unless they are
    /// placed already (`placed_chunk`, the chunk placed last; frames are visited in order, so
    /// a chunk's frames come together).
    #[inline]
    fn place_chunk_of(
        &self,
        frame: usize,
        q: &SVector<f64, N>,
        cache: &R::Cache,
        placed_chunk: &mut usize,
        positions: &mut [Vector3<f64>; C],
    ) {
        let chunk = R::contact_frame_chunk(frame);
        if chunk != *placed_chunk {
            R::contact_chunk_positions_into(chunk, q, &self.params, cache, positions);
            *placed_chunk = chunk;
        }
    }

    /// Every contact point's signed depth (see [`Terrain::signed_depth`]) at `q`. Unless
    /// `every_point`, points of frames whose ball cannot reach the terrain get minus infinity
    /// without being placed.
    fn signed_depths(&self, q: &SVector<f64, N>, cache: &R::Cache, every_point: bool, depths: &mut [f64]) {
        let mut positions = [Vector3::zeros(); C];
        let frames = R::CONTACT_FRAME_START.len().saturating_sub(1);
        if every_point || R::CONTACT_FRAME_OF.len() != C || frames == 0 {
            R::contact_positions_into(q, &self.params, cache, &mut positions);
            for (depth, position) in depths.iter_mut().zip(&positions) {
                *depth = self.config.terrain.signed_depth(position);
            }
            return;
        }
        let mut centre = Vector3::zeros();
        // A chunk's frames are placed together, when the first of them can touch.
        let mut placed_chunk = usize::MAX;
        for frame in 0..frames {
            let points = R::CONTACT_FRAME_START[frame] as usize..R::CONTACT_FRAME_START[frame + 1] as usize;
            let radius = R::contact_frame_sphere(frame, q, &self.params, cache, &mut centre);
            if !self.config.terrain.may_touch(&centre, radius) {
                depths[points].fill(f64::NEG_INFINITY);
                continue;
            }
            self.place_chunk_of(frame, q, cache, &mut placed_chunk, &mut positions);
            for index in points {
                depths[index] = self.config.terrain.signed_depth(&positions[index]);
            }
        }
    }

    /// Sets the servo set points of the actuated joints (entry j for actuated joint j),
    /// held until the next call; the servos track them when no gait is configured.
    pub fn set_joint_targets(&mut self, targets: &SVector<f64, N>) {
        self.joint_targets = Some(*targets);
    }

    /// Sets open-loop generalized forces (entry i on coordinate i), held until the next
    /// call: how pressure inputs (pressure x muscle area) drive soft sections.
    pub fn set_actuator_forces(&mut self, forces: &SVector<f64, N>) {
        self.actuator_forces = *forces;
        self.actuator_force_rate = SVector::zeros();
    }

    /// Sets open-loop generalized forces that go linearly from `start` at time `t_start` to
    /// `end` at `t_end` (and on at that rate until the next call): a first-order hold of an
    /// input trajectory sampled at the two times. Offline runs of a trajectory that is a
    /// smooth function of time use it instead of holding each sample, whose jumps would excite
    /// a fast transient at every sample that the integrator has to resolve in small steps.
    pub fn set_actuator_force_ramp(
        &mut self,
        t_start: f64,
        start: &SVector<f64, N>,
        t_end: f64,
        end: &SVector<f64, N>,
    ) -> Result<(), String> {
        if !(t_start.is_finite() && t_end.is_finite() && t_end > t_start) {
            return Err(format!(
                "an actuator force ramp needs finite times with end > start, got {t_start} to {t_end}"
            ));
        }
        if let Some(i) = (0..N).find(|&i| !(start[i].is_finite() && end[i].is_finite())) {
            return Err(format!(
                "actuator force on coordinate {i} ramps from {} to {}; forces must be finite",
                start[i], end[i]
            ));
        }
        self.actuator_forces = *start;
        self.actuator_force_rate = (end - start) / (t_end - t_start);
        self.actuator_force_time = t_start;
        Ok(())
    }

    /// Sets the muscles' pressures (bar, one per muscle in [`Model::MUSCLES`] order), held
    /// until the next call: their forces (pressure x area along each muscle's length
    /// gradient) become the actuator forces. No lag: a lagging drive sets the pressures it
    /// has reached.
    pub fn set_muscle_pressures(&mut self, pressures: &[f64]) -> Result<(), String> {
        if pressures.len() != R::MUSCLES.len() {
            return Err(format!(
                "robot `{}` has {} muscles, got {} pressures",
                R::NAME,
                R::MUSCLES.len(),
                pressures.len()
            ));
        }
        let mut forces = SVector::<f64, N>::zeros();
        for (k, (info, &pressure)) in R::MUSCLES.iter().zip(pressures).enumerate() {
            if !pressure.is_finite() {
                return Err(format!("pressure of `{}` is {pressure}; pressures must be finite", info.name));
            }
            let muscle = R::muscle(k, &self.params)
                .ok_or_else(|| format!("robot `{}` gives no values for muscle `{}`", R::NAME, info.name))?;
            muscle.add_force(info, pressure, &mut forces);
        }
        self.set_actuator_forces(&forces);
        Ok(())
    }

    /// Sets the thrusters' commands (N, one per thruster in [`Model::THRUSTERS`] order), held
    /// until the next call.
    pub fn set_thrusts(&mut self, thrusts: &[f64]) -> Result<(), String> {
        if thrusts.len() != self.thrusts.len() {
            return Err(format!(
                "robot `{}` has {} thrusters, got {} thrust commands",
                R::NAME,
                self.thrusts.len(),
                thrusts.len()
            ));
        }
        if let Some(k) = thrusts.iter().position(|t| !t.is_finite()) {
            return Err(format!("thrust of `{}` is {}; thrusts must be finite", R::THRUSTERS[k].name, thrusts[k]));
        }
        self.thrusts.copy_from_slice(thrusts);
        Ok(())
    }

    /// The thrusters' commands (N).
    pub fn thrusts(&self) -> &[f64] {
        &self.thrusts
    }

    /// Switches the servos off: the actuated joints go limp.
    pub fn clear_joint_targets(&mut self) {
        self.joint_targets = None;
    }

    /// Current spatial frequency of actuated joint `j`.
    pub fn spatial_frequency(&self, j: usize) -> f64 {
        match (&self.admittance, &self.config.gait) {
            (Some(a), _) => a.spatial_frequency(j),
            (None, Some(g)) => g.spatial_frequency,
            (None, None) => 0.0,
        }
    }

    /// Generalized force from actuators, thrusters and the water's drag (robots in water) at
    /// (t, q, qd): [`Self::generalized_force`] but for the contacts (the exact Jacobian
    /// finds the contact force with its derivatives); fills the actuators' part of `report`.
    #[inline]
    pub(crate) fn generalized_force_apart_from_contact(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        mut report: Option<&mut ContactReport<N, C>>,
    ) -> SVector<f64, N> {
        let mut force = self.actuator_forces + self.actuator_force_rate * (t - self.actuator_force_time);
        if let Some(gait) = &self.config.gait {
            for (j, &i) in R::ACTUATED.iter().enumerate() {
                let (desired, desired_rate) = gait.joint(t, j, self.spatial_frequency(j));
                force[i] += self.config.servo.torque(desired, desired_rate, q[i], qd[i]);
            }
        } else if let Some(targets) = &self.joint_targets {
            for (j, &i) in R::ACTUATED.iter().enumerate() {
                force[i] += self.config.servo.torque(targets[j], 0.0, q[i], qd[i]);
            }
        }
        if const { !R::THRUSTERS.is_empty() } {
            let mut thrust = SVector::<f64, N>::zeros();
            R::thruster_force_into(q, &self.params, cache, &self.thrusts, &mut thrust);
            force += thrust;
        }
        if let Some(r) = report.as_deref_mut() {
            r.actuator = force;
        }
        if R::IN_WATER {
            let mut drag = SVector::<f64, N>::zeros();
            R::hydrodynamic_force_into(q, qd, &self.params, cache, &mut drag);
            force += drag;
        }
        force
    }

    /// Generalized force from actuators, thrusters, the water's drag (robots in water) and contacts at
    /// (t, q, qd); fills `report` if given.
    #[inline]
    pub fn generalized_force(
        &self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        mut report: Option<&mut ContactReport<N, C>>,
    ) -> SVector<f64, N> {
        let mut force = self.generalized_force_apart_from_contact(t, q, qd, cache, report.as_deref_mut());
        if matches!(self.config.terrain, Terrain::None) || C == 0 {
            return force;
        }
        if R::CONTACT_FRAME_OF.len() == C && !matches!(self.config.terrain, Terrain::Floor) {
            return self.frame_contact_force(q, qd, cache, force, report);
        }
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(q, &self.params, cache, &mut positions);
        if matches!(self.config.terrain, Terrain::Floor) {
            return self.floor_force(q, qd, cache, positions, force, report);
        }
        // Points in contact, in chunks: only they pay for kinematics, and their velocity is
        // J qd from the Jacobian they need anyway.
        // Small chunks: the buffers are set up on every call.
        const CHUNK: usize = 8;
        let mut indices = [0usize; CHUNK];
        let mut contacts = [None; CHUNK];
        let mut jacobians = [SMatrix::<f64, 3, N>::zeros(); CHUNK];
        let mut axes = [Vector3::zeros(); CHUNK];
        let mut next = 0;
        while next < C {
            let mut count = 0;
            while next < C && count < CHUNK {
                let armed = report.is_some() || self.armed(next);
                if let Some(contact) = self.contact_of(next, &positions[next]).filter(|_| armed) {
                    indices[count] = next;
                    contacts[count] = Some(contact);
                    count += 1;
                }
                next += 1;
            }
            if count == 0 {
                continue;
            }
            R::contact_kinematics_into(
                &indices[..count],
                q,
                &self.params,
                cache,
                &mut jacobians[..count],
                &mut axes[..count],
            );
            for n in 0..count {
                let Some(contact) = &contacts[n] else { continue };
                let jacobian = &jacobians[n];
                let velocity = jacobian * qd;
                let sample = self.config.contact.force(contact, &velocity, &axes[n]);
                if sample.normal_force == 0.0 {
                    continue;
                }
                let total = sample.total();
                force += jacobian.tr_mul(&total);
                if let Some(r) = report.as_deref_mut() {
                    r.forces[indices[n]] = total;
                    r.normal_generalized += jacobian.tr_mul(&sample.normal);
                    r.friction_generalized += jacobian.tr_mul(&sample.friction);
                    r.active += 1;
                    r.max_depth = r.max_depth.max(contact.depth);
                }
            }
        }
        if self.meets_edges() {
            self.edge_contact_force(q, qd, cache, &positions, &mut force, report.as_deref_mut(), None);
        }
        if let Some(r) = report {
            r.positions = positions;
        }
        force
    }

    /// Contact and actuator report at (t, state).
    pub fn report(&self, t: f64, x: &State<N>) -> ContactReport<N, C> {
        self.report_and_cache(t, x).0
    }

    /// The report at (t, state) and the model's cache there, for the controller tick to reuse.
    fn report_and_cache(&self, t: f64, x: &State<N>) -> (ContactReport<N, C>, R::Cache) {
        let cache = R::cache(&x.q, &self.params);
        let mut report = ContactReport::default();
        self.generalized_force(t, &x.q, &x.qd, &cache, Some(&mut report));
        if matches!(self.config.terrain, Terrain::None) {
            R::contact_positions_into(&x.q, &self.params, &cache, &mut report.positions);
        }
        (report, cache)
    }

    /// Runs from (t, x) to `t_end`: at every control period, reports the sample to
    /// `on_sample`, updates the admittance controller from the contact forces, and
    /// integrates to the next period. Returns the right-hand-side evaluations used.
    pub fn run<I: Integrator<N>>(
        &mut self,
        integrator: &mut I,
        t: &mut f64,
        x: &mut State<N>,
        t_end: f64,
        mut on_sample: impl FnMut(f64, &State<N>, &ContactReport<N, C>, &Self),
    ) -> Result<usize, IntegrationError> {
        let period = self.config.control_period;
        let start = *t;
        let mut tick: u64 = 0;
        let mut evaluations = 0;
        loop {
            let (report, cache) = self.report_and_cache(*t, x);
            on_sample(*t, x, &report, self);
            if *t >= t_end - 1e-12 * t_end.abs().max(1.0) {
                return Ok(evaluations);
            }
            if let Some(signal) = self.stop_signal() {
                return Err(IntegrationError::Stopped { time: *t, signal });
            }
            if self.admittance.is_some() {
                let normal = match self.admittance_force {
                    AdmittanceForce::AllContacts => report.normal_generalized,
                    AdmittanceForce::Obstacles => self.obstacle_normal_generalized(&x.q, &cache, &report),
                };
                let mut joint_force = SVector::<f64, N>::zeros();
                self.admittance_coordinates
                    .joint_forces::<R, N, C>(&x.q, &self.params, &cache, &normal, &mut joint_force)
                    .ok_or(IntegrationError::SingularControllerCoordinates { time: *t })?;
                if let Some(admittance) = &mut self.admittance {
                    admittance.update(period, &joint_force);
                }
            }
            tick += 1;
            // Sample times are start + k * period, so round-off does not accumulate.
            let next = (start + tick as f64 * period).min(t_end);
            evaluations += integrator.integrate_to(self, t, x, next)?;
        }
    }
}

impl<R: Model<N, C>, const N: usize, const C: usize> SecondOrderSystem<N> for Simulation<R, N, C> {
    #[inline]
    fn acceleration(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &mut SVector<f64, N>,
    ) -> Result<(), IntegrationError> {
        let mut computed = None;
        let cache = self.cache_at(q, &mut computed);
        let mut force = self.generalized_force(t, q, qd, cache, None);
        let mut damping = SVector::<f64, N>::zeros();
        R::damping_into(qd, &self.params, &mut damping);
        force -= damping;
        forward_dynamics::<R, N, C>(q, qd, &self.params, cache, &force, qdd)
            .map_err(|_| IntegrationError::SingularMassMatrix { time: t })
    }

    /// On a stair: remembers the face each point outside the step would enter it through,
    /// and the side of its edge each chord comes from. With located onsets: arms the points
    /// that penetrate the state a step starts from.
    fn switch_modes(&mut self, _t: f64, x: &State<N>) -> bool {
        self.remember_step_sides(&x.q);
        let Some(mut onsets) = self.onsets.take() else { return false };
        // The step most often starts where the last accepted one ended, whose depths the
        // overshoot test placed.
        if self.kept_cache(&x.q).is_none() {
            self.signed_depths(&x.q, &R::cache(&x.q, &self.params), false, &mut onsets.end_depths);
        }
        let mut armed_one = false;
        for (armed, &depth) in onsets.armed.iter_mut().zip(&onsets.end_depths) {
            let touching = depth > 0.0;
            armed_one |= touching && !*armed;
            *armed = touching;
        }
        if !onsets.armed_in_frame.is_empty() {
            onsets.armed_in_frame.fill(0);
            for (&frame, &armed) in R::CONTACT_FRAME_OF.iter().zip(&onsets.armed) {
                onsets.armed_in_frame[frame as usize] += armed as u16;
            }
        }
        self.onsets = Some(onsets);
        armed_one
    }

    /// With located onsets: the fraction of the step at which the earliest unarmed point that
    /// ends deeper than the tolerance reached half of it, its depth linear over the step.
    fn overshot_event(&mut self, from: &State<N>, to: &State<N>) -> Option<f64> {
        let mut onsets = self.onsets.take()?;
        let cache = R::cache(&to.q, &self.params);
        self.signed_depths(&to.q, &cache, false, &mut onsets.end_depths);
        match &mut self.end_cache {
            Some(end) => **end = (to.q, cache),
            None => self.end_cache = Some(Box::new((to.q, cache))),
        }
        let mut start: Option<[f64; C]> = None;
        let mut earliest: Option<f64> = None;
        for index in 0..C {
            let end = onsets.end_depths[index];
            if onsets.armed[index] || end <= onsets.tolerance {
                continue;
            }
            let start = start.get_or_insert_with(|| {
                let mut depths = [0.0; C];
                // Every point placed: one whose ball was out of reach may have come down.
                self.signed_depths(&from.q, &R::cache(&from.q, &self.params), true, &mut depths);
                depths
            });
            // Unarmed, so not penetrating at the start: start[index] <= 0 < end.
            let fraction = ((0.5 * onsets.tolerance - start[index]) / (end - start[index])).clamp(0.0, 1.0);
            earliest = Some(earliest.map_or(fraction, |e| e.min(fraction)));
        }
        self.onsets = Some(onsets);
        earliest
    }

    /// The exact Jacobian when asked for ([`Simulation::use_jacobian`]); otherwise the stiff
    /// part of d(qdd)/dq and d(qdd)/d(qd), assembled from generated pieces:
    /// M^-1 times the derivatives of the elastic force, the damping, the servos and every
    /// contact in touch (J' dF J), leaving out what is not stiff (gravity, Coriolis, the
    /// change of M and of the Jacobians), as a W-method allows.
    fn acceleration_jacobian(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        by_position: &mut SMatrix<f64, N, N>,
        by_velocity: &mut SMatrix<f64, N, N>,
    ) -> Result<bool, IntegrationError> {
        if self.jacobian == SystemJacobian::Exact {
            self.exact_jacobian(t, q, qd, by_position, by_velocity)?;
            return Ok(true);
        }
        let mut computed = None;
        let cache = self.cache_at(q, &mut computed);
        let mut stiffness = SMatrix::<f64, N, N>::zeros();
        R::elastic_stiffness_into(q, &self.params, &mut stiffness);
        let mut position_force = -stiffness;
        let mut velocity_force = SMatrix::<f64, N, N>::zeros();
        R::damping_jacobian_into(qd, &self.params, &mut velocity_force);
        velocity_force = -velocity_force;
        if self.config.gait.is_some() || self.joint_targets.is_some() {
            for &i in R::ACTUATED {
                position_force[(i, i)] -= self.config.servo.stiffness;
                velocity_force[(i, i)] -= self.config.servo.damping;
            }
        }
        if !matches!(self.config.terrain, Terrain::None | Terrain::Floor) && C > 0 {
            let mut positions = [Vector3::zeros(); C];
            let by_frame = R::CONTACT_FRAME_OF.len() == C;
            let armed_in_frame = self.onsets.as_ref().map(|o| &o.armed_in_frame).filter(|a| by_frame && !a.is_empty());
            match armed_in_frame {
                // Only the frames with an armed point are placed, a chunk of them at once.
                Some(armed_in_frame) => {
                    let mut placed_chunk = usize::MAX;
                    for (frame, &armed) in armed_in_frame.iter().enumerate() {
                        if armed > 0 {
                            self.place_chunk_of(frame, q, cache, &mut placed_chunk, &mut positions);
                        }
                    }
                }
                None => R::contact_positions_into(q, &self.params, cache, &mut positions),
            }
            let mut jacobian = [SMatrix::<f64, 3, N>::zeros(); 1];
            let mut axis = [Vector3::zeros(); 1];
            let mut frame = usize::MAX;
            let mut columns = SMatrix::<f64, 6, N>::zeros();
            for (index, position) in positions.iter().enumerate() {
                if !self.armed(index) {
                    continue;
                }
                let Some(contact) = self.contact_of(index, position) else { continue };
                if by_frame {
                    let own = R::CONTACT_FRAME_OF[index] as usize;
                    if own != frame {
                        frame = own;
                        R::contact_frame_into(frame, q, &self.params, cache, &mut columns, &mut axis[0]);
                    }
                    jacobian[0] = point_jacobian(&columns, position);
                } else {
                    R::contact_kinematics_into(&[index], q, &self.params, cache, &mut jacobian, &mut axis);
                }
                let velocity = jacobian[0] * qd;
                let (dv, dp) = self.config.contact.force_derivatives(&contact, &velocity, &axis[0]);
                velocity_force += jacobian[0].transpose() * dv * jacobian[0];
                position_force += jacobian[0].transpose() * dp * jacobian[0];
            }
            self.edge_contact_stiffness(q, qd, cache, &mut position_force, &mut velocity_force);
        }
        // M factored once for the 2 N columns.
        let mut factor = SMatrix::<f64, N, N>::zeros();
        R::mass_matrix_into(q, &self.params, cache, &mut factor);
        crate::robot::dense::cholesky_in_place(&mut factor)
            .map_err(|_| IntegrationError::SingularMassMatrix { time: t })?;
        for i in 0..N {
            let mut a = position_force.column(i).into_owned();
            crate::robot::dense::solve_cholesky(&factor, &mut a);
            by_position.set_column(i, &a);
            let mut b = velocity_force.column(i).into_owned();
            crate::robot::dense::solve_cholesky(&factor, &mut b);
            by_velocity.set_column(i, &b);
        }
        Ok(true)
    }
}
