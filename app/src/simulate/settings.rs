//! The settings of one simulation run, by name: what `softgen simulate` takes as flags and a
//! sweep file takes as keys, turned into a [`Scenario`] in one place.

use crate::simulate::scenario::{AdmittanceForceChoice, CoordinatesChoice, IntegratorChoice, Scenario, TerrainChoice};
use serde::Deserialize;
use softgen_runtime::{AdmittanceGains, FrictionAnisotropy, SystemJacobian, Terrain};
use std::collections::BTreeMap;

/// Which integrator steps a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum IntegratorName {
    /// ros34 for robots with soft sections (stiff), rk4 for rigid ones.
    Auto,
    /// Fixed-step classical Runge-Kutta.
    Rk4,
    /// Fixed-step semi-implicit (symplectic) Euler.
    Euler,
    /// Adaptive Dormand-Prince 5(4).
    Dopri5,
    /// Adaptive linearly implicit Rosenbrock-W of order 3 (ROS34PW2), for stiff robots such
    /// as the soft snake; uses --rtol and --atol.
    Ros34,
}

/// Which Jacobian ROS34PW2 gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum JacobianName {
    /// Its stiff part (elasticity, damping, servos, contact at fixed M and Jacobians), as a
    /// W-method allows: the cheapest.
    Stiff,
    /// The exact Jacobian of the simulated system, from the generated derivatives.
    Exact,
}

/// The ground a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TerrainName {
    /// The terrain in the robot's spec.
    Spec,
    /// No terrain: nothing to touch.
    None,
    /// Flat ground at z = 0.
    Flat,
    /// Flat ground with a step, placed by the stair position and height.
    Stair,
    /// The inside of a pipe along x, of the pipe diameter.
    Pipe,
    /// Floor under a horizontal-plane robot: weight shared by the contact points, friction only.
    Floor,
}

/// The directions of the two friction coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum AnisotropyName {
    /// `friction` in every direction.
    Isotropic,
    /// `friction` along the carrying body's x axis, `friction_across` perpendicular (wheels).
    BodyAxis,
    /// `friction` along world x.
    WorldAxis,
}

impl AnisotropyName {
    /// The runtime's friction anisotropy of this name.
    pub fn anisotropy(self) -> FrictionAnisotropy {
        match self {
            AnisotropyName::Isotropic => FrictionAnisotropy::Isotropic,
            AnisotropyName::BodyAxis => FrictionAnisotropy::BodyAxis,
            AnisotropyName::WorldAxis => FrictionAnisotropy::WorldAxis,
        }
    }
}

/// Everything a simulation run accepts besides its robot, with the command line's defaults.
/// Field names are the sweep file's keys and, with `-` for `_`, the flags of `simulate`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSettings {
    /// Simulated time (s).
    pub duration: f64,
    /// Which integrator steps the run.
    pub integrator: IntegratorName,
    /// Step of fixed-step integrators, and controller and sample period (s).
    pub dt: f64,
    /// Relative tolerance of the adaptive integrators (default: [`DOPRI5_TOLERANCES`] or
    /// [`ROS34_TOLERANCES`]).
    pub rtol: Option<f64>,
    /// Absolute tolerance of the adaptive integrators (default as `rtol`).
    pub atol: Option<f64>,
    /// The Jacobian ROS34PW2 gets.
    pub jacobian: JacobianName,
    /// The terrain.
    pub terrain: TerrainName,
    /// Stair face position along x (m).
    pub stair_position: f64,
    /// Stair height (m).
    pub stair_height: f64,
    /// Pipe inner diameter (m).
    pub pipe_diameter: f64,
    /// The gait's amplitude (rad), in place of the spec's.
    pub amplitude: Option<f64>,
    /// The gait's temporal frequency (rad/s), in place of the spec's.
    pub temporal_frequency: Option<f64>,
    /// The gait's spatial frequency (rad), in place of the spec's.
    pub spatial_frequency: Option<f64>,
    /// The gait's offset (rad), in place of the spec's.
    pub offset: Option<f64>,
    /// Gait fade-in time (s).
    pub ramp: f64,
    /// No gait: the joints are passive.
    pub passive: bool,
    /// Run the admittance controller on the gait.
    pub admittance: bool,
    /// Its desired inertia M_d.
    pub admittance_inertia: f64,
    /// Its desired damping D_d.
    pub admittance_damping: f64,
    /// Its desired stiffness K_d.
    pub admittance_stiffness: f64,
    /// Its contact-force gain k_Pi.
    pub admittance_gain: f64,
    /// The coordinates the admittance controller reads the contact force in.
    pub admittance_coordinates: CoordinatesChoice,
    /// Which contacts' normal forces drive the admittance controller.
    pub admittance_force: AdmittanceForceChoice,
    /// The contact stiffness (N/m), in place of the spec's.
    pub contact_stiffness: Option<f64>,
    /// The contact damping (N s/m), in place of the spec's.
    pub contact_damping: Option<f64>,
    /// Hunt and Crossley's dissipation (s/m), in place of the spec's.
    pub contact_dissipation: Option<f64>,
    /// The friction coefficient (along the axis), in place of the spec's.
    pub friction: Option<f64>,
    /// The coefficient across the axis, in place of the spec's.
    pub friction_across: Option<f64>,
    /// The friction's directions, in place of the spec's.
    pub anisotropy: Option<AnisotropyName>,
    /// The friction's regularisation speed (m/s), in place of the spec's.
    pub friction_regularisation: Option<f64>,
    /// Model parameters by name.
    pub params: BTreeMap<String, f64>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings::DEFAULT
    }
}

/// Dormand-Prince's default (relative, absolute) tolerances.
pub const DOPRI5_TOLERANCES: (f64, f64) = (1e-6, 1e-8);

/// ROS34PW2's default (relative, absolute) tolerances: the soft snake's rolling experiment's
/// (000), whose figures they reproduce. Contact forces jump where a point touches (the
/// damping term), and an error-controlled step cannot cross a jump much larger than its
/// tolerance: at 1e-6 / 1e-8 the soft snake's first touchdown shrank the step below 1e-12 s.
pub const ROS34_TOLERANCES: (f64, f64) = (1e-3, 1e-4);

/// A scenario built from settings, with the integrator `auto` resolved to and any note for
/// the user.
pub struct ResolvedRun {
    /// The run.
    pub scenario: Scenario,
    /// The integrator `auto` resolved to.
    pub integrator: IntegratorName,
    /// What the user should know about the choices made.
    pub notes: Vec<String>,
}

impl RunSettings {
    /// The command line's defaults, also every sweep key's.
    pub const DEFAULT: RunSettings = RunSettings {
        duration: 20.0,
        integrator: IntegratorName::Auto,
        dt: 0.002,
        rtol: None,
        atol: None,
        jacobian: JacobianName::Stiff,
        terrain: TerrainName::Spec,
        stair_position: 0.9,
        stair_height: 0.1,
        pipe_diameter: 0.2,
        amplitude: None,
        temporal_frequency: None,
        spatial_frequency: None,
        offset: None,
        ramp: 2.0,
        passive: false,
        admittance: false,
        admittance_inertia: 1.0,
        admittance_damping: 4.0,
        admittance_stiffness: 4.0,
        admittance_gain: 2.2,
        admittance_coordinates: CoordinatesChoice::Spec,
        admittance_force: AdmittanceForceChoice::Obstacles,
        contact_stiffness: None,
        contact_damping: None,
        contact_dissipation: None,
        friction: None,
        friction_across: None,
        anisotropy: None,
        friction_regularisation: None,
        params: BTreeMap::new(),
    };

    /// (relative, absolute) tolerances: the ones given, else the integrator's defaults. A
    /// user's tolerance must be one that controls the error (the integrators themselves also
    /// take huge ones, which tests use to accept every step).
    fn tolerances(&self, defaults: (f64, f64)) -> Result<(f64, f64), String> {
        use softgen_runtime::physical_ranges::{ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE};
        let (relative, absolute) = (self.rtol.unwrap_or(defaults.0), self.atol.unwrap_or(defaults.1));
        RELATIVE_TOLERANCE.check("relative tolerance", relative)?;
        ABSOLUTE_TOLERANCE.check("absolute tolerance", absolute)?;
        Ok((relative, absolute))
    }

    /// The scenario that runs `robot` with these settings; `soft_sections`: whether the
    /// robot has soft sections whose coordinates the dynamics move (see
    /// [`RobotApp::has_soft_sections`](crate::RobotApp::has_soft_sections)), which picks the
    /// integrator `auto` chooses.
    pub(crate) fn scenario(&self, robot: &str, soft_sections: bool) -> Result<ResolvedRun, String> {
        let mut s = Scenario::new(robot);
        let mut notes = Vec::new();
        s.duration = self.duration;
        s.control_period = self.dt;
        let integrator = match self.integrator {
            IntegratorName::Auto if soft_sections => IntegratorName::Ros34,
            IntegratorName::Auto => IntegratorName::Rk4,
            chosen => chosen,
        };
        if self.jacobian == JacobianName::Exact && integrator != IntegratorName::Ros34 {
            return Err(format!(
                "jacobian: the exact Jacobian is for ros34 (--integrator ros34); {} uses none",
                format!("{integrator:?}").to_lowercase()
            ));
        }
        s.integrator = match integrator {
            // `auto` became rk4 or ros34 above.
            IntegratorName::Auto | IntegratorName::Rk4 => IntegratorChoice::RungeKutta4 { step: self.dt },
            IntegratorName::Euler => IntegratorChoice::SemiImplicitEuler { step: self.dt },
            IntegratorName::Dopri5 => {
                let (relative, absolute) = self.tolerances(DOPRI5_TOLERANCES)?;
                IntegratorChoice::DormandPrince5 { relative, absolute }
            }
            IntegratorName::Ros34 => {
                let (relative, absolute) = self.tolerances(ROS34_TOLERANCES)?;
                let jacobian = match self.jacobian {
                    JacobianName::Stiff => SystemJacobian::Stiff,
                    JacobianName::Exact => SystemJacobian::Exact,
                };
                IntegratorChoice::Rosenbrock34 { relative, absolute, jacobian }
            }
        };
        s.terrain = match self.terrain {
            TerrainName::Spec => TerrainChoice::SpecDefault,
            TerrainName::None => TerrainChoice::Override(Terrain::None),
            TerrainName::Flat => TerrainChoice::Override(Terrain::Flat { height: 0.0 }),
            TerrainName::Stair => {
                TerrainChoice::Override(Terrain::Stair { position: self.stair_position, height: self.stair_height })
            }
            TerrainName::Pipe => TerrainChoice::Override(Terrain::Pipe { diameter: self.pipe_diameter }),
            TerrainName::Floor => TerrainChoice::Override(Terrain::Floor),
        };
        if let TerrainChoice::Override(t) = s.terrain {
            t.validate()?;
        }
        s.passive = self.passive;
        s.amplitude = self.amplitude;
        s.temporal_frequency = self.temporal_frequency;
        s.spatial_frequency = self.spatial_frequency;
        s.offset = self.offset;
        s.ramp = self.ramp;
        if self.admittance {
            s.admittance = Some(AdmittanceGains {
                inertia: self.admittance_inertia,
                damping: self.admittance_damping,
                stiffness: self.admittance_stiffness,
                feedback_gain: self.admittance_gain,
            });
        }
        s.admittance_coordinates = self.admittance_coordinates;
        s.admittance_force = self.admittance_force;
        s.contact_stiffness = self.contact_stiffness;
        s.contact_damping = self.contact_damping;
        s.contact_dissipation = self.contact_dissipation;
        s.friction_along = self.friction;
        s.friction_across = self.friction_across;
        s.friction_regularisation = self.friction_regularisation;
        s.friction_anisotropy = self.anisotropy.map(AnisotropyName::anisotropy);
        if matches!(integrator, IntegratorName::Dopri5 | IntegratorName::Ros34)
            && self.friction_regularisation.is_none()
        {
            // Exact Coulomb friction is discontinuous in velocity: error control would shrink
            // the step towards zero at every stick-slip switch. Say so and smooth it.
            notes.push("adaptive integrators use regularised friction (--friction-regularisation 0.001 m/s); pass 0 for the exact sign".into());
            s.friction_regularisation = Some(1e-3);
        }
        s.params = self.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
        Ok(ResolvedRun { scenario: s, integrator, notes })
    }
}
