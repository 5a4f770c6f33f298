//! The `Model` trait that every generated robot implements, and the metadata it carries.

use crate::actuators::actuator_response::ActuatorResponse;
use crate::actuators::muscle_drive::{Muscle, MuscleInfo};
use crate::actuators::pd::JointPd;
use crate::actuators::valve_wave::ValveWave;
use crate::environment::contact::{ContactLaw, FrictionAnisotropy, FrictionLaw};
use crate::environment::plane::PlaneOfMotion;
use crate::environment::terrain::Terrain;
use nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use std::fmt;

/// What a generalized coordinate moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinateKind {
    /// Translation of a floating base along a world axis (m).
    BaseTranslation,
    /// Rotation of a floating base about an axis (rad).
    BaseRotation,
    /// Rotation of a revolute joint (rad).
    RevoluteJoint,
    /// Travel of a prismatic joint (m).
    PrismaticJoint,
    /// Length change of one actuator of a soft section (m).
    ActuatorLength,
    /// Curvature of an inextensible soft section, in one bending direction (1/m).
    Curvature,
}

impl CoordinateKind {
    /// The SI unit of the coordinate.
    pub fn unit(self) -> &'static str {
        match self {
            CoordinateKind::BaseTranslation | CoordinateKind::PrismaticJoint | CoordinateKind::ActuatorLength => "m",
            CoordinateKind::BaseRotation | CoordinateKind::RevoluteJoint => "rad",
            CoordinateKind::Curvature => "1/m",
        }
    }

    /// Its name in files (a run configuration's keys): `base_translation`, ...
    pub fn key(self) -> &'static str {
        match self {
            CoordinateKind::BaseTranslation => "base_translation",
            CoordinateKind::BaseRotation => "base_rotation",
            CoordinateKind::RevoluteJoint => "revolute_joint",
            CoordinateKind::PrismaticJoint => "prismatic_joint",
            CoordinateKind::ActuatorLength => "actuator_length",
            CoordinateKind::Curvature => "curvature",
        }
    }
}

/// One generalized coordinate: its name, kind and what it means physically.
#[derive(Clone, Copy, Debug)]
pub struct Coordinate {
    /// Its name in the generated code (`link2_joint`, `head_l1`).
    pub name: &'static str,
    /// What kind of coordinate it is, which sets its unit.
    pub kind: CoordinateKind,
    /// What it means physically, in words.
    pub meaning: &'static str,
    /// Whether an actuator drives this coordinate.
    pub actuated: bool,
}

/// One declared contact point: its name and the body that carries it.
#[derive(Clone, Copy, Debug)]
pub struct ContactPointInfo {
    /// The point's name.
    pub name: &'static str,
    /// The body that carries it.
    pub body: &'static str,
}

/// A soft section of a generated robot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftSectionInfo {
    /// The section's body name.
    pub name: &'static str,
    /// Index of its first coordinate; its coordinates are consecutive.
    pub first_coordinate: usize,
    /// How many coordinates it has.
    pub coordinates: usize,
    /// Rotation of its base frame in its parent's frame (row-major).
    pub mount: [[f64; 3]; 3],
}

/// A body of a generated robot as a viewer draws it: a rigid body by its frame, a soft
/// section by frames along its centre line, base to tip (`Model::drawing_frames_into`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyDrawing {
    /// The body's name.
    pub name: &'static str,
    /// The nearest drawn body above it in the tree (an index into `Model::BODIES`).
    pub parent: Option<usize>,
    /// Its index in `SOFT_SECTIONS`, for a soft section.
    pub section: Option<usize>,
    /// Its first frame among the drawing frames, and how many it has.
    pub first_frame: usize,
    /// See `first_frame`.
    pub frames: usize,
}

/// A body's drawn size as its spec gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyGeometry {
    /// Its radius (a section's skin, a hull, a section's slices as discs), 0 where the spec
    /// gives none: a rigid body is then drawn to reach its joints and contact points.
    pub radius: f64,
    /// A soft section's three chambers: their distance from the centre line (m) and their
    /// angles about its x axis from +y (rad).
    pub chambers: Option<(f64, [f64; 3])>,
}

/// A frame in the world: its origin and its rotation (columns are its axes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FramePose {
    /// Its origin in the world (m).
    pub position: Vector3<f64>,
    /// Its rotation: its axes as columns, in world coordinates.
    pub rotation: Matrix3<f64>,
}

impl Default for FramePose {
    fn default() -> FramePose {
        FramePose { position: Vector3::zeros(), rotation: Matrix3::identity() }
    }
}

/// A thruster (propeller) on a rigid body: a force of the commanded magnitude (N) along a
/// direction fixed in the body, at a fixed point of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThrusterInfo {
    /// The spec's name (`thruster<k>` by default).
    pub name: &'static str,
    /// The carrying body.
    pub body: &'static str,
    /// Unit direction of positive thrust in the body's frame.
    pub direction: [f64; 3],
}

/// Contact and terrain defaults from the spec's `[environment]` table.
#[derive(Clone, Copy, Debug)]
pub struct EnvironmentDefaults {
    /// Normal spring constant k of eq 18 (N/m).
    pub contact_stiffness: f64,
    /// Normal damping d of eq 18 (N s/m).
    pub contact_damping: f64,
    /// Hunt and Crossley's dissipation h (s/m); 0 for eq 18 alone.
    pub contact_dissipation: f64,
    /// Coulomb coefficient along the carrying body's x axis (or isotropic).
    pub friction_along: f64,
    /// Coulomb coefficient across the carrying body's x axis.
    pub friction_across: f64,
    /// Directions in which the two coefficients act.
    pub friction_anisotropy: FrictionAnisotropy,
    /// Velocity scale of regularised friction (m/s); 0 means exact Coulomb sign.
    pub friction_regularisation: f64,
    /// Terrain the robot starts on.
    pub terrain: Terrain,
}

impl EnvironmentDefaults {
    /// The contact law these defaults describe.
    pub fn contact_law(&self) -> ContactLaw {
        ContactLaw {
            stiffness: self.contact_stiffness,
            damping: self.contact_damping,
            dissipation: self.contact_dissipation,
            friction: FrictionLaw {
                along: self.friction_along,
                across: self.friction_across,
                anisotropy: self.friction_anisotropy,
                regularisation: self.friction_regularisation,
            },
        }
    }
}

/// Gait and joint-servo defaults from the spec's `[gait]` and `[[actuators]]` tables.
#[derive(Clone, Copy, Debug)]
pub struct GaitDefaults {
    /// Serpenoid amplitude A (rad).
    pub amplitude: f64,
    /// Temporal frequency omega (rad/s).
    pub temporal_frequency: f64,
    /// Spatial frequency eta (rad).
    pub spatial_frequency: f64,
    /// Constant joint offset (rad), for turning.
    pub offset: f64,
    /// Proportional gain of the joint servos (N m/rad).
    pub stiffness: f64,
    /// Derivative gain of the joint servos (N m s/rad).
    pub damping: f64,
    /// Torque limit of the joint servos (N m).
    pub torque_limit: f64,
}

impl GaitDefaults {
    /// The joint servo these defaults describe.
    pub fn servo(&self) -> JointPd {
        JointPd { stiffness: self.stiffness, damping: self.damping, torque_limit: self.torque_limit }
    }
}

/// A parameter name that a model does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownParameter {
    /// The name asked for.
    pub name: String,
    /// The model's parameter names.
    pub known: &'static [&'static str],
}

impl fmt::Display for UnknownParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown parameter `{}`; this model has: {}", self.name, self.known.join(", "))
    }
}

impl std::error::Error for UnknownParameter {}

/// The numeric parameters of a model (masses, inertias, geometry, gravity), with the spec's
/// defaults, settable by name so calibration and sweeps need no regeneration.
pub trait ParamSet: Clone + Default + fmt::Debug + Send + Sync {
    /// Parameter names, in index order.
    fn names() -> &'static [&'static str];
    /// Value of parameter `index`.
    fn get(&self, index: usize) -> f64;
    /// Sets parameter `index`.
    fn set_index(&mut self, index: usize, value: f64);
    /// Checks the rules the spec states for its values (positive masses, rigid-body
    /// inertias, non-negative gravity, ...) at the current values: call after changing
    /// parameters at run time. The error names the spec field and the parameters involved.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    /// Sets a parameter by name.
    fn set(&mut self, name: &str, value: f64) -> Result<(), UnknownParameter> {
        match Self::names().iter().position(|n| *n == name) {
            Some(index) => {
                self.set_index(index, value);
                Ok(())
            }
            None => Err(UnknownParameter { name: name.to_string(), known: Self::names() }),
        }
    }
}

/// Most contact frames in a chunk ([`Model::CONTACT_FRAME_CHUNK`]): the lanes of a
/// [`crate::Lanes4`].
pub const CONTACT_CHUNK: usize = 4;

/// Equations of motion of one robot, `M(q) qdd + C(q, qd) qd + G(q) = tau + J' F`,
/// with `N` generalized coordinates and `C` declared contact points.
///
/// Generated code implements this on a zero-sized marker type. Every method writes into
/// fixed-size outputs and does not allocate. `Cache` holds every transcendental value of `q`
/// (sines and cosines of joint-angle sums), computed once per state by [`Model::cache`] and
/// shared by all other methods. Models are `'static` (marker types owning nothing), so a
/// model can sit behind a trait object (the Python bindings hold one per robot).
pub trait Model<const N: usize, const C: usize>: 'static {
    /// The robot's runtime parameters, with the spec's defaults.
    type Params: ParamSet + 'static;
    /// What `cache` computes once per q (sines and cosines) for every other method.
    type Cache: Copy + fmt::Debug + Send + Sync;

    /// Robot name (the spec's file stem).
    const NAME: &'static str;
    /// One-line description from the spec.
    const DESCRIPTION: &'static str;
    /// Generalized coordinates in order.
    const COORDINATES: &'static [Coordinate];
    /// Initial generalized coordinates from the spec (length N).
    const INITIAL_POSITION: &'static [f64];
    /// Declared contact points in order.
    const CONTACT_POINTS: &'static [ContactPointInfo];
    /// Indices of actuated coordinates, in actuator order.
    const ACTUATED: &'static [usize];
    /// Plane of motion.
    const PLANE: PlaneOfMotion;
    /// Contact and terrain defaults.
    const ENVIRONMENT: EnvironmentDefaults;
    /// Gait defaults, if the spec declares a gait.
    const GAIT: Option<GaitDefaults>;
    /// The coordinates the spec says its controllers read generalized forces in (the
    /// paper's, where they are not the model's): the admittance controller's contact force.
    const CONTROLLER_COORDINATES: ForceCoordinates = ForceCoordinates::Model;
    /// Coordinates driven by solenoid valve pairs through a response (prescribed, not
    /// forced), in actuator order.
    const VALVES: &'static [usize] = &[];
    /// The travelling valve wave of the spec's `[gait]`, if it declares one.
    const VALVE_GAIT: Option<ValveWave> = None;
    /// How valve `index`'s coordinate responds to its state, with the parameters' values.
    fn valve_response(index: usize, p: &Self::Params) -> Option<ActuatorResponse> {
        let _ = (index, p);
        None
    }

    /// Pneumatic muscles, three per driven soft section, in actuator order.
    const MUSCLES: &'static [MuscleInfo] = &[];
    /// Muscle `index`'s area, rating, lag and length gradient with the parameters' values.
    fn muscle(index: usize, p: &Self::Params) -> Option<Muscle> {
        let _ = (index, p);
        None
    }

    /// Transcendental values of `q`, shared by all other methods.
    fn cache(q: &SVector<f64, N>, p: &Self::Params) -> Self::Cache;
    /// Mass matrix M(q).
    fn mass_matrix_into(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache, out: &mut SMatrix<f64, N, N>);
    /// Coriolis and centrifugal force C(q, qd) qd.
    fn coriolis_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    );
    /// Coriolis matrix C(q, qd) from Christoffel symbols of M (so Mdot - 2C is skew).
    fn coriolis_matrix_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SMatrix<f64, N, N>,
    );
    /// Generalized gravity force G(q) = dV/dq.
    fn gravity_into(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache, out: &mut SVector<f64, N>);
    /// M, C qd and G together, sharing subexpressions.
    fn dynamics_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        mass_matrix: &mut SMatrix<f64, N, N>,
        coriolis: &mut SVector<f64, N>,
        gravity: &mut SVector<f64, N>,
    );
    /// Forward dynamics qdd = M^-1 (tau - C qd - G) for generalized force `tau`; false where M
    /// is not positive definite. The default solves with M, C qd and G through
    /// [`Model::mass_matrix_solve_into`]; generated rigid robots override it with the
    /// articulated-body algorithm.
    fn forward_dynamics_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        tau: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) -> bool {
        let mut mass_matrix = SMatrix::<f64, N, N>::zeros();
        let mut coriolis = SVector::<f64, N>::zeros();
        let mut gravity = SVector::<f64, N>::zeros();
        Self::dynamics_into(q, qd, p, k, &mut mass_matrix, &mut coriolis, &mut gravity);
        *out = tau - coriolis - gravity;
        Self::mass_matrix_solve_into(&mass_matrix, out)
    }
    /// Solves M x = `rhs` in place for a mass matrix of this robot (its lower triangle read);
    /// false (and `rhs` meaningless) where M is not positive definite. The default is a dense
    /// Cholesky factorisation; generated robots without the articulated-body algorithm
    /// override it with the factorisation unrolled for their own pattern of zeros (a limb's
    /// coordinates never couple another limb's).
    fn mass_matrix_solve_into(mass_matrix: &SMatrix<f64, N, N>, rhs: &mut SVector<f64, N>) -> bool {
        let mut factor = *mass_matrix;
        crate::robot::dense::solve_spd_in_place(&mut factor, rhs).is_ok()
    }
    /// Forward dynamics from the state alone, with no cache given: what a rollout without
    /// contact needs. The default computes the cache and calls
    /// [`Model::forward_dynamics_into`]; generated rigid trees compute only the sines,
    /// cosines, poses and inertias the articulated-body algorithm reads, and store nothing.
    fn forward_dynamics_without_cache_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        tau: &SVector<f64, N>,
        p: &Self::Params,
        out: &mut SVector<f64, N>,
    ) -> bool {
        let k = Self::cache(q, p);
        Self::forward_dynamics_into(q, qd, tau, p, &k, out)
    }
    /// Whether [`Model::articulated_factor_into`] fills its factor: generated rigid trees
    /// (every coordinate a joint, no soft section, no water).
    const ARTICULATED_FACTOR: bool = false;
    /// Forward dynamics as [`Model::forward_dynamics_into`], keeping the articulated-body
    /// factorisation of M in `factor` for [`crate::ArticulatedFactor::solve_into`]; false where
    /// M is not positive definite, and (the default) where the model has no such factorisation
    /// ([`Model::ARTICULATED_FACTOR`]).
    #[allow(clippy::too_many_arguments)]
    fn articulated_factor_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        tau: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        factor: &mut crate::ArticulatedFactor<N>,
        out: &mut SVector<f64, N>,
    ) -> bool {
        let _ = (q, qd, tau, p, k, factor, out);
        false
    }
    /// The derivative of the inverse dynamics ID(q, qd, qdd) = M(q) qdd + C(q, qd) qd + G(q)
    /// along a direction `dq` of the coordinates, dID/dq dq (a Jacobian-vector product):
    /// dID/dq ([`Model::inverse_dynamics_position_derivatives_into`]) times dq. Nothing on a
    /// hot path asks for one direction alone, so generated code keeps one derivative kernel,
    /// the matrix, rather than a second, directional copy of the same pass.
    #[allow(clippy::too_many_arguments)]
    fn inverse_dynamics_position_tangent_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &SVector<f64, N>,
        dq: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) {
        let mut position = SMatrix::<f64, N, N>::zeros();
        Self::inverse_dynamics_position_derivatives_into(q, qd, qdd, p, k, &mut position);
        *out = position * dq;
    }
    /// The derivative of the inverse dynamics along a direction `dqd` of the rates,
    /// dID/dqd dqd = d(C qd)/dqd dqd = 2 C(q, qd) dqd, C the Christoffel C
    /// ([`Model::coriolis_matrix_into`]; see [`Model::inverse_dynamics_derivatives_into`]).
    fn inverse_dynamics_velocity_tangent_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        dqd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) {
        let mut coriolis = SMatrix::<f64, N, N>::zeros();
        Self::coriolis_matrix_into(q, qd, p, k, &mut coriolis);
        *out = coriolis * dqd * 2.0;
    }
    /// Whether [`Model::inverse_dynamics_factors_into`] fills its factors: generated rigid
    /// trees in air.
    const INVERSE_DYNAMICS_FACTORS: bool = false;
    /// The partial derivatives of the inverse dynamics at the given accelerations in factored
    /// form ([`crate::InverseDynamicsFactors`]), where [`Model::INVERSE_DYNAMICS_FACTORS`];
    /// the default leaves `out` as it is.
    fn inverse_dynamics_factors_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut crate::InverseDynamicsFactors<N>,
    ) {
        let _ = (q, qd, qdd, p, k, out);
    }
    /// The partial derivatives of the inverse dynamics at the given accelerations:
    /// `position` = dID/dq, row i being ID_i ([`Model::inverse_dynamics_position_derivatives_into`]), and `velocity` = dID/dqd = 2 C(q, qd) with C the Christoffel C
    /// ([`Model::coriolis_matrix_into`]): C qd is the quadratic form of the Christoffel
    /// symbols, symmetric in their last two indices, so one kernel gives what n velocity
    /// tangents would (tested against both for every robot). [`crate::forward_dynamics_derivatives`]
    /// turns them into those of the forward dynamics.
    fn inverse_dynamics_derivatives_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        position: &mut SMatrix<f64, N, N>,
        velocity: &mut SMatrix<f64, N, N>,
    ) {
        Self::inverse_dynamics_position_derivatives_into(q, qd, qdd, p, k, position);
        Self::coriolis_matrix_into(q, qd, p, k, velocity);
        *velocity *= 2.0;
    }
    /// dID/dq alone at the given accelerations, row i being ID_i (generated soft robots: one
    /// kernel with a loop per group of coordinates; rigid trees: the position half of
    /// [`Model::inverse_dynamics_derivatives_into`]'s closed form). Where
    /// [`Model::INVERSE_DYNAMICS_FACTORS`] is false, dID/dqd is 2 C
    /// ([`Model::inverse_dynamics_derivatives_into`]), so a caller that needs C anyway (its
    /// C qd for the accelerations) computes C once and takes dID/dq from here.
    fn inverse_dynamics_position_derivatives_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        qdd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        position: &mut SMatrix<f64, N, N>,
    );
    /// Gravitational potential energy V(q).
    fn potential_energy(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> f64;
    /// World positions of every contact point.
    fn contact_positions_into(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache, out: &mut [Vector3<f64>; C]);
    /// World velocities of every contact point.
    fn contact_velocities_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut [Vector3<f64>; C],
    );
    /// World direction of the x axis of the body that carries each contact point (the
    /// "along" direction of anisotropic friction).
    fn contact_axes_into(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache, out: &mut [Vector3<f64>; C]);
    /// Jacobian d(position)/dq of contact point `index`; only active points need it.
    fn contact_jacobian_into(
        index: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SMatrix<f64, 3, N>,
    );
    /// The frame carrying each contact point (a rigid link, or a skin ring of a soft section)
    /// where the model serves contact through frames (soft robots): points of one frame are
    /// consecutive. Empty: points are served one by one through their Jacobians.
    const CONTACT_FRAME_OF: &'static [u16] = &[];
    /// Where each frame's points start in the contact list, and (last) the number of points:
    /// frame f holds points `CONTACT_FRAME_START[f]..CONTACT_FRAME_START[f + 1]`. Empty
    /// without frames.
    const CONTACT_FRAME_START: &'static [u16] = &[];
    /// The origin of contact frame `frame` (into `centre`) and the radius of a ball about it
    /// that holds all the frame's points (infinite when no bound is known): a broad phase.
    fn contact_frame_sphere(
        frame: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        centre: &mut Vector3<f64>,
    ) -> f64 {
        let _ = (frame, q, p, k, centre);
        f64::INFINITY
    }
    /// World positions of the points of contact frame `frame` into `out` (the others left
    /// as they are); by default all of them.
    fn contact_frame_positions_into(
        frame: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut [Vector3<f64>; C],
    ) {
        let _ = frame;
        Self::contact_positions_into(q, p, k, out)
    }
    /// Per contact frame, the first frame of its chunk: neighbouring skin rings of one section
    /// that generated code computes together in SIMD lanes
    /// ([`Model::contact_chunk_positions_into`], [`Model::contact_chunk_own_into`]); the
    /// frames of a chunk are consecutive, at most [`CONTACT_CHUNK`] of them. Empty: every
    /// frame is its own chunk.
    const CONTACT_FRAME_CHUNK: &'static [u16] = &[];
    /// The first frame of contact frame `frame`'s chunk ([`Model::CONTACT_FRAME_CHUNK`]):
    /// the frame itself where there are no chunks.
    #[inline]
    fn contact_frame_chunk(frame: usize) -> usize {
        Self::CONTACT_FRAME_CHUNK.get(frame).map_or(frame, |&c| c as usize)
    }
    /// World positions of the points of every frame of the chunk starting at frame `chunk`
    /// (the others left as they are); by default the frame's alone.
    fn contact_chunk_positions_into(
        chunk: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut [Vector3<f64>; C],
    ) {
        Self::contact_frame_positions_into(chunk, q, p, k, out)
    }
    /// Own columns and x axes ([`Model::contact_frame_own_into`]) of every frame of the chunk
    /// starting at frame `chunk`, frame `chunk + i` in `own[i]` and `axis[i]`; by default the
    /// frame's alone.
    fn contact_chunk_own_into(
        chunk: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        own: &mut [SMatrix<f64, 6, 3>; CONTACT_CHUNK],
        axis: &mut [Vector3<f64>; CONTACT_CHUNK],
    ) {
        Self::contact_frame_own_into(chunk, q, p, k, &mut own[0], &mut axis[0])
    }
    /// Per contact frame, its segment: the frames of one segment (a soft section's skin
    /// rings, a rigid body's frames) share the columns of every coordinate that is not their
    /// own. Empty without frames.
    const CONTACT_FRAME_SEGMENT: &'static [u16] = &[];
    /// Per contact frame, its own coordinates (whose columns differ from frame to frame within
    /// its segment: a skin ring's section's): the first and how many, at most 3. Empty without
    /// frames.
    const CONTACT_FRAME_OWN: &'static [(u16, u8)] = &[];
    /// World Plücker columns that the frames of contact segment `segment` share (zero for
    /// their own coordinates and for coordinates that do not move them).
    fn contact_segment_into(
        segment: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        columns: &mut SMatrix<f64, 6, N>,
    ) {
        let _ = (segment, q, p, k);
        *columns = SMatrix::zeros();
    }
    /// World Plücker columns of contact frame `frame`'s own coordinates (`CONTACT_FRAME_OWN`,
    /// in order; the rest of `own` zero) and the frame's x axis.
    fn contact_frame_own_into(
        frame: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        own: &mut SMatrix<f64, 6, 3>,
        axis: &mut Vector3<f64>,
    ) {
        let _ = (frame, q, p, k);
        *own = SMatrix::zeros();
        *axis = Vector3::zeros();
    }
    /// World Plücker columns of contact frame `frame` (rows 0-2 angular, 3-5 linear about the
    /// world origin, zero for coordinates that do not move it) and the frame's x axis: by
    /// default its segment's columns with its own put in (models whose points are served one
    /// by one generate their own).
    fn contact_frame_into(
        frame: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        columns: &mut SMatrix<f64, 6, N>,
        axis: &mut Vector3<f64>,
    ) {
        let segment = Self::CONTACT_FRAME_SEGMENT.get(frame).map_or(usize::MAX, |&s| s as usize);
        Self::contact_segment_into(segment, q, p, k, columns);
        let mut own = SMatrix::<f64, 6, 3>::zeros();
        Self::contact_frame_own_into(frame, q, p, k, &mut own, axis);
        if let Some(&(first, count)) = Self::CONTACT_FRAME_OWN.get(frame) {
            for c in 0..count as usize {
                columns.set_column(first as usize + c, &own.column(c));
            }
        }
    }
    /// Per contact point, the frame carrying it (a rigid link, or a skin ring), for every
    /// model with contact points; [`Model::contact_frame_into`] gives the frame's columns.
    const CONTACT_POINT_FRAME: &'static [u16];
    /// Per contact frame, the coordinates that move it, ascending.
    const CONTACT_FRAME_PATH: &'static [&'static [u16]];
    /// The tangent along a direction `dq` of the coordinates of each coordinate's world
    /// column as the contact frames beyond it see it (the frames' columns outside their own
    /// coordinates): sum_i d(column_j)/dq_i dq_i in column j.
    fn contact_columns_tangent_into(
        q: &SVector<f64, N>,
        dq: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SMatrix<f64, 6, N>,
    );
    /// The tangent along `dq` of contact frame `frame`'s own columns (in the order of
    /// [`Model::CONTACT_FRAME_OWN`]; zero for frames without own coordinates): the sum of
    /// [`Model::contact_frame_own_tangents_into`]'s partials weighted by dq.
    fn contact_frame_own_tangent_into(
        frame: usize,
        q: &SVector<f64, N>,
        dq: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        own: &mut SMatrix<f64, 6, 3>,
    ) {
        let mut partials = [SMatrix::<f64, 6, 3>::zeros(); N];
        Self::contact_frame_own_tangents_into(frame, q, p, k, &mut partials);
        *own = SMatrix::zeros();
        for (partial, &step) in partials.iter().zip(dq.iter()) {
            *own += partial * step;
        }
    }
    /// The tangents of contact frame `frame`'s own columns along every unit direction:
    /// `own[j]` = d(own columns)/dq_j (zero for frames without own coordinates). Generated
    /// code computes what the directions share once.
    fn contact_frame_own_tangents_into(
        frame: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        own: &mut [SMatrix<f64, 6, 3>; N],
    );
    /// Jacobians and carrying-body x axes of the contact points `indices` (ascending), the
    /// points in contact. The default asks point by point; models whose neighbouring points
    /// share kinematics (a soft section's skin rings) override it.
    fn contact_kinematics_into(
        indices: &[usize],
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        jacobians: &mut [SMatrix<f64, 3, N>],
        axes: &mut [Vector3<f64>],
    ) {
        let mut all = [Vector3::zeros(); C];
        Self::contact_axes_into(q, p, k, &mut all);
        for ((&index, jacobian), axis) in indices.iter().zip(jacobians.iter_mut()).zip(axes.iter_mut()) {
            Self::contact_jacobian_into(index, q, p, k, jacobian);
            *axis = all[index];
        }
    }
    /// Whole-robot centre of mass.
    fn center_of_mass(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> Vector3<f64>;
    /// Total mass.
    fn total_mass(p: &Self::Params) -> f64;
    /// Total linear momentum.
    fn linear_momentum(q: &SVector<f64, N>, qd: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> Vector3<f64>;
    /// Total angular momentum about the world origin.
    fn angular_momentum(q: &SVector<f64, N>, qd: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> Vector3<f64>;

    /// The robot's markers in spec order: named points a sensor tracks (motion capture) that
    /// never touch anything, so they cost nothing in the contact kernels. A robot whose
    /// spec declares none has none.
    const MARKERS: &'static [ContactPointInfo] = &[];
    /// World position of marker `index` (zeros past the last).
    fn marker_position(index: usize, q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> Vector3<f64> {
        let _ = (index, q, p, k);
        Vector3::zeros()
    }
    /// Jacobian d(position)/dq of marker `index` (zeros past the last).
    fn marker_jacobian_into(
        index: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SMatrix<f64, 3, N>,
    ) {
        let _ = (index, q, p, k);
        *out = SMatrix::zeros();
    }

    /// World position of tracked point `index`: a contact point (index below C), then a
    /// marker (index C + its place in `MARKERS`); what a motion-capture sensor names.
    fn tracked_point_position(index: usize, q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> Vector3<f64> {
        if index < C {
            let mut positions = [Vector3::zeros(); C];
            Self::contact_positions_into(q, p, k, &mut positions);
            positions[index]
        } else {
            Self::marker_position(index - C, q, p, k)
        }
    }
    /// Jacobian of tracked point `index` (see `tracked_point_position`).
    fn tracked_point_jacobian_into(
        index: usize,
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SMatrix<f64, 3, N>,
    ) {
        if index < C {
            Self::contact_jacobian_into(index, q, p, k, out);
        } else {
            Self::marker_jacobian_into(index - C, q, p, k, out);
        }
    }

    /// The robot's bodies, parents first, as a viewer draws them. Generated robots list
    /// every spec body; a model that lists none is drawn by its contact points alone.
    const BODIES: &'static [BodyDrawing] = &[];
    /// Number of frames `drawing_frames_into` writes: the bodies' frames, then each
    /// thruster's point.
    const DRAWING_FRAMES: usize = 0;
    /// The drawing frame of each thruster's point of attack, in thruster order.
    const THRUSTER_DRAWING_FRAMES: &'static [usize] = &[];
    /// World frames for drawing, into `out` of `DRAWING_FRAMES` entries (another length
    /// leaves `out` as it is).
    fn drawing_frames_into(q: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache, out: &mut [FramePose]) {
        let _ = (q, p, k, out);
    }
    /// Each body's drawn size as its spec gives it (radius, chambers), into `out` of one
    /// entry per body of `BODIES`.
    fn drawing_geometry_into(p: &Self::Params, out: &mut [BodyGeometry]) {
        let _ = p;
        out.fill(BodyGeometry::default());
    }

    /// Dissipative generalized force D(qd) (soft sections' actuator damping, linear or a
    /// material's power law); zero unless the model has damping.
    fn damping_into(qd: &SVector<f64, N>, p: &Self::Params, out: &mut SVector<f64, N>) {
        let _ = (qd, p);
        *out = SVector::zeros();
    }

    /// The thrusters, in the order their commands are given.
    const THRUSTERS: &'static [ThrusterInfo] = &[];

    /// Generalized force of the thrusters' commands (N each, in [`Model::THRUSTERS`] order):
    /// B(q) u with B the configuration matrix; zero without thrusters.
    fn thruster_force_into(
        q: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        thrusts: &[f64],
        out: &mut SVector<f64, N>,
    ) {
        let _ = (q, p, k, thrusts);
        *out = SVector::zeros();
    }

    /// The thrusters' generalized force along a direction `dq` of the coordinates at fixed
    /// commands: (sum_j dB/dq_j dq_j) u; zero without thrusters.
    fn thruster_force_position_tangent_into(
        q: &SVector<f64, N>,
        dq: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        thrusts: &[f64],
        out: &mut SVector<f64, N>,
    ) {
        let _ = (q, dq, p, k, thrusts);
        *out = SVector::zeros();
    }

    /// Whether the robot swims: its spec's medium is water, so M, C and G carry added mass
    /// and buoyancy and [`Model::hydrodynamic_force_into`] the drag.
    const IN_WATER: bool = false;

    /// Generalized force of the water's drag (linear and quadratic cross-flow on every hull),
    /// to be added to the applied forces; zero in air.
    fn hydrodynamic_force_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) {
        let _ = (q, qd, p, k);
        *out = SVector::zeros();
    }

    /// The drag's generalized force along a direction `dq` of the coordinates (a
    /// Jacobian-vector product); zero in air.
    fn hydrodynamic_force_position_tangent_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        dq: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) {
        let _ = (q, qd, dq, p, k);
        *out = SVector::zeros();
    }

    /// The drag's generalized force along a direction `dqd` of the rates; zero in air.
    fn hydrodynamic_force_velocity_tangent_into(
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        dqd: &SVector<f64, N>,
        p: &Self::Params,
        k: &Self::Cache,
        out: &mut SVector<f64, N>,
    ) {
        let _ = (q, qd, dqd, p, k);
        *out = SVector::zeros();
    }

    /// The drag's dissipation function R(q, qd) >= 0 (the drag force is -dR/dqd); zero in air.
    fn hydrodynamic_dissipation(q: &SVector<f64, N>, qd: &SVector<f64, N>, p: &Self::Params, k: &Self::Cache) -> f64 {
        let _ = (q, qd, p, k);
        0.0
    }

    /// d(damping)/d(qd), for the stiff part of implicit integrators' Jacobians; by default
    /// the columns of [`Model::damping_into`] at unit rates (exact for linear damping).
    fn damping_jacobian_into(qd: &SVector<f64, N>, p: &Self::Params, out: &mut SMatrix<f64, N, N>) {
        let _ = qd;
        let mut unit = SVector::<f64, N>::zeros();
        let mut column = SVector::<f64, N>::zeros();
        for i in 0..N {
            unit[i] = 1.0;
            Self::damping_into(&unit, p, &mut column);
            out.set_column(i, &column);
            unit[i] = 0.0;
        }
    }

    /// The elastic part of dG/dq (soft sections' actuator stiffness), for the stiff part of
    /// implicit integrators' Jacobians; zero unless the model is elastic.
    fn elastic_stiffness_into(q: &SVector<f64, N>, p: &Self::Params, out: &mut SMatrix<f64, N, N>) {
        let _ = (q, p);
        *out = SMatrix::zeros();
    }

    /// Kinetic energy 1/2 qd' M qd.
    fn kinetic_energy(q: &SVector<f64, N>, qd: &SVector<f64, N>, p: &Self::Params) -> f64 {
        let k = Self::cache(q, p);
        let mut m = SMatrix::<f64, N, N>::zeros();
        Self::mass_matrix_into(q, p, &k, &mut m);
        0.5 * qd.dot(&(m * qd))
    }
}

/// The names of robot `R`'s tracked points in index order: its contact points, then its
/// markers (the indices `Model::tracked_point_position` takes).
pub fn tracked_point_names<R: Model<N, C>, const N: usize, const C: usize>() -> Vec<&'static str> {
    R::CONTACT_POINTS.iter().chain(R::MARKERS).map(|p| p.name).collect()
}

/// The coordinates a controller works in ([`Model::CONTROLLER_COORDINATES`]); what a force
/// in them is, and the checks and maps, are in `force_coordinates.rs`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ForceCoordinates {
    /// The model's own coordinates.
    Model,
    /// A planar chain's coordinates as 003 writes them (eq 7): the actuated joints' angles
    /// times `joint_sign` (-1 where the controller's relative angle is the model's joint
    /// angle negated), the absolute angle of the body carrying the contact points `heading`
    /// (the direction from the first to the second in the plane of motion), and the centre
    /// of mass in the plane. A joint's force then holds that body's angle and the centre of
    /// mass still, so uniform gravity has no part in it (003, eq 15). Needs a planar base:
    /// the model's coordinates are its three base coordinates and its actuated joints.
    PlanarChain {
        /// The controller's joint angle over the model's: +1 or -1.
        joint_sign: f64,
        /// The two contact points whose direction is the body's angle.
        heading: (usize, usize),
    },
}
