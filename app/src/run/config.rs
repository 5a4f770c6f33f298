//! Run configuration files (`model-specs/<robot>.run.toml`): the loop rate, safety limits,
//! the channel map from each actuator to a device output, the environment of the simulated
//! plant, the model-predictive controller's settings, and the sensors and state estimator,
//! validated with errors that name the file, line and field.

use crate::run::controllers::{parse_planner, MpcFile, PlannerError, PlannerSettings, RobotDrive};
use serde::Deserialize;
use softgen_runtime::{
    Calibration, Channel, ContactLaw, CoordinateKind, EstimatorSettings, FrictionAnisotropy, FrictionLaw,
    LengthToPressure, Measurement, PressureMap, SafetyLimits, Sensor, Terrain, MAX_SENSORS,
};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The robot this configuration is for; it must be the robot being run.
    robot: Spanned<String>,
    /// The control loop's rate (Hz, 1 to 100000).
    /// Default: 1000.
    rate_hz: Option<Spanned<f64>>,
    /// The safety filter's limits, between every command and the device.
    #[serde(default)]
    safety: Option<Spanned<SafetyFile>>,
    /// One per actuator, in the spec's order (joints, then muscles, then thrusters, then valve
    /// pairs and the supply): which device output drives it.
    channels: Vec<Spanned<ChannelFile>>,
    /// Where the run happens, for the simulated plant and the controller's model: each given key
    /// replaces the spec's.
    environment: Option<Spanned<EnvironmentFile>>,
    /// The model-predictive controller (`softgen run --controller mpc`). A key of another planner
    /// than `solver`'s is refused, naming it.
    mpc: Option<Spanned<MpcFile>>,
    /// The robot's parameters by name, in place of the spec's defaults (the simulated plant
    /// and the controller's model).
    #[serde(default)]
    parameters: std::collections::BTreeMap<String, Spanned<f64>>,
    /// What the loop reads (`--state estimated`), and the estimator that reads it.
    #[serde(default)]
    sensors: Vec<Spanned<SensorFile>>,
    /// The extended Kalman filter that estimates the state from `[[sensors]]` (`--state
    /// estimated`).
    estimator: Option<Spanned<EstimatorFile>>,
    /// The motion-capture server that `source = "natnet"` sensors read.
    natnet: Option<Spanned<NatNetFile>>,
    /// A valve-driven robot's supply: which spec parameter its regulator sets.
    valves: Option<Spanned<ValvesFile>>,
    /// How the simulated plant integrates.
    plant: Option<Spanned<PlantFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlantFile {
    /// The simulated plant's integrator.
    integrator: PlantIntegratorName,
    /// `ros34` only: the relative error tolerance; the absolute one is a tenth of it.
    /// Default: 0.001.
    tolerance: Option<f64>,
    /// `ros34` only: accepted steps between the system Jacobians the steps reuse.
    /// Default: 20.
    jacobian_every: Option<usize>,
    /// Touchdowns located to this depth (m, above 0 and at most 0.01), a step ending at each.
    /// Default: none (not located).
    contact_onset_tolerance: Option<f64>,
}

/// The simulated plant's integrator.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlantIntegratorName {
    /// RK4 at the loop's period or the robot kind's longest step, whichever is shorter.
    Rk4,
    /// ROS34PW2, adaptive and linearly implicit: for stiff robots (soft sections on a
    /// carpet), whose stable RK4 steps would be microseconds.
    Ros34,
}

/// How the simulated plant integrates (`[plant]`; RK4 without the table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlantSettings {
    pub integrator: PlantIntegratorName,
    /// ROS34PW2's relative tolerance (the absolute one a tenth of it).
    pub tolerance: f64,
    /// ROS34PW2's accepted steps between Jacobians.
    pub jacobian_every: usize,
    /// Touchdowns located to this depth (m), a step ending at each; None meets them inside
    /// steps.
    pub contact_onset_tolerance: Option<f64>,
}

impl Default for PlantSettings {
    fn default() -> Self {
        PlantSettings {
            integrator: PlantIntegratorName::Rk4,
            tolerance: 1e-3,
            jacobian_every: 20,
            contact_onset_tolerance: None,
        }
    }
}

fn parse_plant(p: &PlantFile) -> Result<PlantSettings, String> {
    let d = PlantSettings::default();
    let settings = PlantSettings {
        integrator: p.integrator,
        tolerance: p.tolerance.unwrap_or(d.tolerance),
        jacobian_every: p.jacobian_every.unwrap_or(d.jacobian_every),
        contact_onset_tolerance: p.contact_onset_tolerance,
    };
    if settings.integrator == PlantIntegratorName::Rk4 {
        if let Some(key) = [
            ("tolerance", p.tolerance.is_some()),
            ("jacobian_every", p.jacobian_every.is_some()),
            ("contact_onset_tolerance", p.contact_onset_tolerance.is_some()),
        ]
        .iter()
        .find_map(|(k, given)| given.then_some(*k))
        {
            return Err(format!("`{key}` is a setting of integrator = \"ros34\", not of rk4"));
        }
    }
    if !(settings.tolerance.is_finite() && settings.tolerance > 0.0 && settings.tolerance <= 0.1) {
        return Err(format!("tolerance must be in (0, 0.1], got {}", settings.tolerance));
    }
    if !(1..=1000).contains(&settings.jacobian_every) {
        return Err(format!("jacobian_every must be in 1..=1000, got {}", settings.jacobian_every));
    }
    if let Some(depth) = settings.contact_onset_tolerance {
        if !(depth.is_finite() && depth > 0.0 && depth <= 0.01) {
            return Err(format!("contact_onset_tolerance must be in (0, 0.01] m, got {depth}"));
        }
    }
    Ok(settings)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValvesFile {
    /// The spec parameter that the supply regulator's pressure is; it must change the valves'
    /// responses (`supply_pressure` for 001's snake).
    supply_parameter: String,
    /// That parameter's units per bar (100 for kPa).
    units_per_bar: f64,
}

/// A valve-driven robot's supply regulator (the `supply` actuator): the spec's parameter
/// its pressure is, and that parameter's units per bar (100 for kPa).
#[derive(Clone, Debug, PartialEq)]
pub struct ValveSupply {
    pub parameter: String,
    pub units_per_bar: f64,
}

/// Where a sensor's readings come from on the robot (the simulated plant emulates every
/// sensor whatever its source).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum SourceFile {
    Plant,
    Natnet,
    Board,
    Comedi,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NatNetFile {
    /// The server's command address.
    /// Default: `127.0.0.1:1510`.
    server: Option<String>,
    /// Where frames arrive (Motive's data port).
    /// Default: `0.0.0.0:1511`.
    local: Option<String>,
    /// A multicast group to join, e.g. `239.255.42.99`, for a multicast stream.
    /// Default: none (unicast).
    multicast: Option<String>,
    /// The server's up axis, `"y"` (Motive's default) or `"z"`.
    /// Default: `"y"`.
    up_axis: Option<String>,
    /// The robot world's origin in the server's frame (m).
    /// Default: zero.
    origin: Option<[f64; 3]>,
}

/// What a sensor measures, by the robot's names.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum SensorKindFile {
    Marker,
    Coordinate,
    Pressure,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SensorFile {
    /// The sensor's name, unique among the sensors; faults and the run's log name it.
    name: String,
    /// What it measures: a marker's world position (m), a coordinate (its unit), a muscle's
    /// pressure (bar).
    kind: SensorKindFile,
    /// A marker sensor's tracked point: a contact point or a spec marker.
    point: Option<String>,
    /// A coordinate sensor's coordinate (an encoder, a bend or stroke sensor, an IMU's angle on a
    /// base rotation).
    coordinate: Option<String>,
    /// A pressure sensor's muscle (`<section>_muscle<k>`).
    actuator: Option<String>,
    /// A coordinate sensor's calibration: reading = scale * coordinate + offset.
    /// Default: 1.
    scale: Option<f64>,
    /// See `scale`.
    /// Default: 0.
    offset: Option<f64>,
    /// Readings a second (Hz).
    rate_hz: f64,
    /// The readings' noise, a standard deviation in the sensor's unit.
    noise: f64,
    /// How long after its instant a reading arrives (s).
    /// Default: 0.
    latency: Option<f64>,
    /// The fraction of frames lost, in [0, 1).
    /// Default: 0.
    lost: Option<f64>,
    /// A sensor silent this long (plus its latency) faults the run (s); a reading stamped further
    /// ahead of the loop's clock than this is a clock fault.
    /// Default: ten frames, and at least 0.1 s.
    timeout: Option<f64>,
    /// [low, high]: a reading outside it faults the run.
    /// Default: ±100 m for markers, ±1000 for coordinates, [-1, 100] bar for pressures.
    range: Option<[f64; 2]>,
    /// To rehearse a failure: the emulated sensor stops at this time (s).
    /// Default: none.
    silent_after: Option<f64>,
    /// Where its readings come from on the robot: `plant` (emulated by the simulated plant only),
    /// `natnet` (a motion-capture server, `[natnet]`), `board` (the serial board's READINGS
    /// frames), `comedi` (an analog input of the comedi card). The simulated plant emulates every
    /// sensor, whatever its source.
    /// Default: `"plant"`.
    source: Option<SourceFile>,
    /// `natnet` markers: the id of the streamed rigid body whose pivot is placed on the tracked
    /// point.
    rigid_body: Option<i32>,
    /// `natnet` markers: the id of a labelled marker, one marker alone (as on a soft section).
    marker: Option<i64>,
    /// `natnet` labelled markers: the id of the marker's asset; 0 for a marker of no asset.
    /// Default: 0.
    marker_model: Option<i64>,
    /// `board` and `comedi` sensors: the board's sensor channel, or the card's analog input.
    channel: Option<u16>,
    /// `comedi` sensors: [v0, v1], the voltages that read `values` (linear, straight through and
    /// beyond, so a broken wire reads out of range).
    volts: Option<[f64; 2]>,
    /// `comedi` sensors: [x0, x1], the sensor's values at `volts`.
    values: Option<[f64; 2]>,
    /// `comedi` sensors, in place of `volts` and `values`: a CSV of `volts,value` rows, volts
    /// rising, values monotonic; its path relative to the run configuration's folder.
    calibration: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EstimatorFile {
    /// The filter's longest process step (s).
    /// Default: 0.01.
    step: Option<f64>,
    /// The process noise, in each coordinate's unit per s^2.
    /// Default: 0.5.
    acceleration_noise: Option<f64>,
    /// The process noise in `acceleration_noise`'s place for the coordinates of a kind.
    acceleration_noise_by_kind: Option<NoiseByKindFile>,
    /// The initial state's standard deviation in each coordinate.
    /// Default: 0.01.
    initial_position_std: Option<f64>,
    /// The initial state's standard deviation in each rate.
    /// Default: 0.05.
    initial_velocity_std: Option<f64>,
    /// The Mahalanobis distance past which a reading is an outlier, dropped and counted.
    /// Default: 6.
    gate: Option<f64>,
    /// Outliers in a row from one sensor that mean the filter has diverged, which faults the run.
    /// Default: 12.
    outlier_streak: Option<usize>,
    /// How late a frame may be (s): each step keeps its prediction and readings this long, and a
    /// late frame is filed under its step.
    /// Default: 0.1.
    history: Option<f64>,
    /// After a sensor fault the loop holds the last commands the safety filter passed this long
    /// (s), then ends the run in the safe state.
    /// Default: 0.2.
    fault_hold: Option<f64>,
    /// The process step's Jacobian, which carries the covariance, is evaluated every this many
    /// steps and kept in between.
    /// Default: 1.
    jacobian_every: Option<usize>,
    /// The process step's Newton iterations have converged once an update is below this, relative
    /// to the rates.
    /// Default: 1e-10.
    newton_tolerance: Option<f64>,
    /// A kept Newton matrix is kept while an iteration lowers the residual by this factor (a fresh
    /// one costs a system Jacobian).
    /// Default: 0.3.
    newton_contraction: Option<f64>,
    /// The emulated sensors' noise seed.
    /// Default: 1.
    seed: Option<u64>,
    /// The filter model's contact damping (N s/m) in place of the plant's: a damper that switches
    /// on at touchdown, the papers' law, leaves a long implicit step with no solution.
    /// Default: the plant's.
    contact_damping: Option<f64>,
    /// The filter model's Hunt-Crossley dissipation (s/m) in place of the plant's: it keeps a
    /// filter with long steps solvable across touchdowns.
    /// Default: the plant's.
    contact_dissipation: Option<f64>,
}

/// `[estimator] acceleration_noise_by_kind`: the process noise of the coordinates of a kind,
/// in their unit per s^2.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoiseByKindFile {
    /// The base's translations (m/s^2).
    base_translation: Option<f64>,
    /// The base's rotations (rad/s^2).
    base_rotation: Option<f64>,
    /// Revolute joints (rad/s^2).
    revolute_joint: Option<f64>,
    /// Prismatic joints (m/s^2).
    prismatic_joint: Option<f64>,
    /// Extensible sections' actuator lengths (m/s^2).
    actuator_length: Option<f64>,
    /// Curvatures (1/(m s^2)).
    curvature: Option<f64>,
}

/// A sensor of the run configuration whose target is still a name: resolved against the
/// robot ([`SensorEntry::resolve`]) where its model is known.
#[derive(Clone, Debug)]
pub struct SensorEntry {
    /// Its settings, the measurement a placeholder of the right kind.
    pub sensor: Sensor,
    /// The point, coordinate or muscle it names.
    pub target: String,
    /// Where it is in the file (`path:line:column: sensors[i]`), for errors.
    pub at: String,
    /// Where its readings come from on the robot.
    pub source: SensorSource,
    /// Volts to its unit, for a sensor on a comedi analog input.
    pub calibration: Option<Calibration>,
}

/// Where a sensor's readings come from when the loop drives the robot (on the simulated
/// plant every sensor is emulated from the plant's true state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorSource {
    /// None on the robot: emulated by the simulated plant only.
    Plant,
    /// A position streamed by a NatNet server: a rigid body's pivot or a labelled marker.
    NatNet { target: NatNetTarget },
    /// A sensor channel of the serial board (READINGS frames).
    Board { channel: u16 },
    /// An analog input of the comedi card, through the sensor's calibration.
    Comedi { channel: u16 },
}

/// What a NatNet sensor follows in the server's frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NatNetTarget {
    /// A rigid body's pivot, by its id: three or more markers on one rigid part.
    RigidBody(i32),
    /// A labelled marker, by the id NatNet streams: its model's id in the high 16 bits and
    /// its own in the low 16 (one marker alone, as on a soft section).
    Marker(i32),
}

impl NatNetTarget {
    /// The labelled marker id NatNet streams for marker `marker` of model `model`.
    pub fn marker(model: u16, marker: u16) -> NatNetTarget {
        NatNetTarget::Marker(((u32::from(model) << 16) | u32::from(marker)) as i32)
    }
}

impl std::fmt::Display for NatNetTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            NatNetTarget::RigidBody(id) => write!(f, "NatNet rigid body ({id})"),
            NatNetTarget::Marker(id) => {
                write!(f, "NatNet labelled marker ({} of model {})", id as u32 & 0xffff, id as u32 >> 16)
            }
        }
    }
}

/// The motion-capture server NatNet sensors read, and how its axes map to the robot's world.
#[derive(Clone, Debug, PartialEq)]
pub struct NatNetSettings {
    /// The server's command address (it answers the connect there).
    pub server: std::net::SocketAddr,
    /// The local address frames arrive at (the server's data port).
    pub local: std::net::SocketAddr,
    /// A multicast group to join, if the server streams multicast.
    pub multicast: Option<std::net::Ipv4Addr>,
    /// Whether the server's up axis is y (Motive's default), mapped to the robot's z.
    pub y_up: bool,
    /// The robot world's origin in the server's frame after the axis map (m).
    pub origin: [f64; 3],
}

impl Default for NatNetSettings {
    fn default() -> Self {
        NatNetSettings {
            server: std::net::SocketAddr::from(([127, 0, 0, 1], 1510)),
            local: std::net::SocketAddr::from(([0, 0, 0, 0], 1511)),
            multicast: None,
            y_up: true,
            origin: [0.0; 3],
        }
    }
}

impl NatNetSettings {
    /// A position in the server's axes (m) in the robot's world.
    pub fn to_world(&self, p: [f32; 3]) -> [f64; 3] {
        let [x, y, z] = p.map(f64::from);
        let w = if self.y_up { [x, -z, y] } else { [x, y, z] };
        [w[0] - self.origin[0], w[1] - self.origin[1], w[2] - self.origin[2]]
    }

    /// A position in the robot's world in the server's axes: what a server would send.
    pub fn from_world(&self, w: [f64; 3]) -> [f32; 3] {
        let [x, y, z] = [w[0] + self.origin[0], w[1] + self.origin[1], w[2] + self.origin[2]];
        let p = if self.y_up { [x, z, -y] } else { [x, y, z] };
        p.map(|v| v as f32)
    }
}

/// Names for an error message: all of a short list; of a long one (a skin's hundreds of
/// contact points) the first four and the last eight (where the spec's markers are), and
/// the count.
pub(crate) fn listed(names: &[&str]) -> String {
    match names.len() {
        0..=16 => names.join(", "),
        n => format!("{}, ..., {}; {n} in all", names[..4].join(", "), names[n - 8..].join(", ")),
    }
}

impl SensorEntry {
    /// The sensor with its target found among the robot's `points`, `coordinates` and
    /// `muscles`.
    pub fn resolve(&self, points: &[&str], coordinates: &[&str], muscles: &[&str]) -> Result<Sensor, String> {
        let find = |names: &[&str], what: &str| {
            names
                .iter()
                .position(|n| *n == self.target)
                .ok_or_else(|| format!("{}: `{}` is not {what} of the robot ({})", self.at, self.target, listed(names)))
        };
        let mut sensor = self.sensor.clone();
        sensor.measures = match sensor.measures {
            Measurement::Marker { .. } => {
                Measurement::Marker { point: find(points, "a tracked point (contact point or marker)")? }
            }
            Measurement::Coordinate { scale, offset, .. } => {
                Measurement::Coordinate { coordinate: find(coordinates, "a coordinate")?, scale, offset }
            }
            Measurement::Pressure { .. } => Measurement::Pressure { muscle: find(muscles, "a muscle")? },
        };
        Ok(sensor)
    }
}

/// Where the run happens, in place of the spec's `[environment]` (same fields).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvironmentFile {
    /// The terrain, as the spec's `[environment] terrain`.
    terrain: Option<TerrainFile>,
    /// The contact stiffness k (N/m), as the spec's.
    contact_stiffness: Option<f64>,
    /// The contact damping d (N s/m), as the spec's.
    contact_damping: Option<f64>,
    /// Hunt and Crossley's dissipation h (s/m), as the spec's.
    contact_dissipation: Option<f64>,
    /// Coulomb friction, as the spec's `[environment] friction`.
    friction: Option<FrictionFile>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum TerrainFile {
    None,
    Flat {
        /// The ground's height (m).
        #[serde(default)]
        height: f64,
    },
    Stair {
        /// The step's face along x (m); solid for x >= position and z < height.
        position: f64,
        /// The step's height (m).
        height: f64,
    },
    Pipe {
        /// The pipe's inner diameter (m); along x, centred on y = z = 0.
        diameter: f64,
    },
    Floor,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum AnisotropyFile {
    Isotropic,
    BodyAxis,
    WorldAxis,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FrictionFile {
    /// The Coulomb coefficient, along the axis where `anisotropy` names one.
    along: f64,
    /// The Coulomb coefficient across the axis.
    /// Default: the value of `along`.
    across: Option<f64>,
    /// `isotropic`; `body_axis`: along the carrying body's x axis (a soft section's neutral axis at
    /// the point); `world_axis`: along world x.
    /// Default: `"isotropic"`.
    anisotropy: Option<AnisotropyFile>,
    /// Velocity scale eps of regularised friction (m/s); 0 keeps the exact Coulomb sign.
    /// Default: 0.
    regularisation: Option<f64>,
}

/// The run's environment: each field replaces the spec's when set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnvironmentOverride {
    /// The terrain.
    pub terrain: Option<Terrain>,
    /// The contact stiffness (N/m).
    pub contact_stiffness: Option<f64>,
    /// The contact damping (N s/m).
    pub contact_damping: Option<f64>,
    /// Hunt and Crossley's dissipation (s/m).
    pub contact_dissipation: Option<f64>,
    /// The friction law.
    pub friction: Option<FrictionLaw>,
}

impl EnvironmentOverride {
    /// The spec's contact law and terrain with this override applied.
    pub fn apply(&self, law: ContactLaw, terrain: Terrain) -> (ContactLaw, Terrain) {
        let law = ContactLaw {
            stiffness: self.contact_stiffness.unwrap_or(law.stiffness),
            damping: self.contact_damping.unwrap_or(law.damping),
            dissipation: self.contact_dissipation.unwrap_or(law.dissipation),
            friction: self.friction.unwrap_or(law.friction),
        };
        (law, self.terrain.unwrap_or(terrain))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SafetyFile {
    /// The highest pressure commanded to any muscle or regulator (bar), the seed papers' working
    /// ceiling by default; at most `actuator_rating`.
    /// Default: 3.
    pressure_ceiling: Option<f64>,
    /// The actuators' rating (bar), which the ceiling may not exceed (4 bar for the seed PMAs).
    /// Default: 4.
    actuator_rating: Option<f64>,
    /// The fastest change of a commanded pressure (bar/s).
    /// Default: 30.
    pressure_rate: Option<f64>,
    /// The fastest change of a commanded joint angle (rad/s).
    /// Default: 20.
    joint_rate: Option<f64>,
    /// The largest thrust either way (N), besides each channel's `max_thrust`.
    /// Default: 10.
    thrust_limit: Option<f64>,
    /// The fastest change of a commanded thrust (N/s).
    /// Default: 100.
    thrust_rate: Option<f64>,
    /// The watchdog ends the run when a command goes out later than this after it was due (s, above
    /// 0, at most 10).
    /// Default: 0.05.
    command_timeout: Option<f64>,
    /// Replaced by `command_timeout`; named in the error so that old files say what changed.
    miss_streak: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum ChannelFile {
    ServoBoard {
        /// The body whose joint the servo drives.
        actuator: String,
        /// The servo board's channel.
        channel: u16,
        /// The lowest joint angle the servo reaches (rad); commands are clamped to it.
        min_angle: f64,
        /// The highest joint angle (rad), above `min_angle`.
        max_angle: f64,
    },
    PressureRegulator {
        /// The muscle (`<section>_muscle<k>`), or `supply` for a valve robot's supply regulator.
        actuator: String,
        /// The analog output's channel.
        channel: u16,
        /// The pressure at the top of `volts` (bar); either this or `calibration`.
        full_scale_bar: Option<f64>,
        /// [low, high]: the output's voltage span for 0 to `full_scale_bar`.
        /// Default: [0, 10].
        volts: Option<[f64; 2]>,
        /// A `bar,volts` CSV, relative to the run configuration's folder.
        calibration: Option<String>,
        /// Muscle extension per bar (m/bar) to accept the muscles' extensions (0.01875 for the seed
        /// PMAs: 50 % of 0.15 m at 4 bar).
        /// Default: none.
        metres_per_bar: Option<f64>,
    },
    Valve {
        /// The valve pair: the joint its `solenoid_valve` actuator names (e.g. `segment1`).
        actuator: String,
        /// The digital line that carries the pair's state.
        line: u16,
        /// Whether the line is high for the state +1.
        #[serde(default = "yes")]
        active_high: bool,
    },
    Thruster {
        /// The thruster's name (`thruster<k>` or the spec's `name`).
        actuator: String,
        /// The output's channel.
        channel: u16,
        /// The thruster's largest thrust either way (N); commands are clamped to it.
        max_thrust: f64,
    },
}

fn yes() -> bool {
    true
}

/// A validated run configuration.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The robot it is for.
    pub robot: String,
    /// The loop's rate (Hz).
    pub rate_hz: f64,
    /// The safety filter's limits.
    pub safety: SafetyLimits,
    /// One channel per actuator, in the robot's actuator order.
    pub channels: Vec<Channel>,
    /// The environment of the simulated plant and of the controller's model.
    pub environment: EnvironmentOverride,
    /// The model-predictive controller's planner and its settings, if the file has an `[mpc]`
    /// table.
    pub planner: Option<PlannerSettings>,
    /// A valve-driven robot's supply (required for one).
    pub valve_supply: Option<ValveSupply>,
    /// How the simulated plant integrates.
    pub plant: PlantSettings,
    /// Parameter values by name, for the robot's `Params::set` (checked when applied).
    pub parameters: Vec<(String, f64)>,
    /// The sensors the loop reads with `--state estimated`, in the file's order.
    pub sensors: Vec<SensorEntry>,
    /// The state estimator's settings (defaults without an `[estimator]` table).
    pub estimator: EstimatorSettings,
    /// The emulated sensors' noise seed.
    pub sensor_seed: u64,
    /// The filter model's contact law where it differs from the plant's (`[estimator]`
    /// `contact_damping`, `contact_dissipation`).
    pub estimator_contact: EstimatorContact,
    /// The motion-capture server of the NatNet sensors.
    pub natnet: NatNetSettings,
}

/// The filter model's contact damping (N s/m) and Hunt-Crossley dissipation (s/m) in place
/// of the plant's. Why: an implicit step that crosses a touchdown has no solution when the
/// damper switches on there (the papers' law), and the filter's steps cross touchdowns
/// whenever the robot lands; a damper that grows with the depth keeps them solvable.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EstimatorContact {
    pub damping: Option<f64>,
    pub dissipation: Option<f64>,
}

impl EstimatorContact {
    /// `law` with these in place.
    pub fn applied(&self, law: &softgen_runtime::ContactLaw) -> softgen_runtime::ContactLaw {
        let mut law = law.clone();
        law.damping = self.damping.unwrap_or(law.damping);
        law.dissipation = self.dissipation.unwrap_or(law.dissipation);
        law
    }
}

/// What an actuator drives, to match it with a channel kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drives {
    /// A coordinate of this kind: a joint, or a muscle's actuator length.
    Coordinate(CoordinateKind),
    /// A thruster's force.
    Thrust,
    /// A solenoid valve pair driving a coordinate through its response (state +1 or -1).
    Valve,
    /// The supply pressure of a valve-driven robot's valves.
    Supply,
}

/// The toml crate's message for a table header `[a.b]` in a file that never opens `[a]`,
/// "invalid type: string "b", expected a borrowed string" (its spanned fields cannot read an
/// implicit table), said so that a user knows what to write.
fn implicit_table_message(text: &str, span: &Range<usize>, message: &str) -> String {
    let start = text[..span.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let header = line.trim_start_matches('[').split(']').next().unwrap_or("");
    match header.rsplit_once('.') {
        Some((parent, _)) if message.contains("expected a borrowed string") && line.starts_with('[') => format!(
            "`{line}` is a table inside `[{parent}]`, which the file never opens: write `[{parent}]` on a line of its own above it"
        ),
        _ => message.to_string(),
    }
}

fn locate(path: &str, text: &str, span: Range<usize>, message: impl std::fmt::Display) -> String {
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{path}:{line}:{column}: {message}")
}

impl RunConfig {
    /// Parses `text` (read from `path`) for a robot whose actuators are `actuators` (name
    /// and what it drives), in order.
    pub fn parse(path: &str, text: &str, robot: &str, actuators: &[(&str, Drives)]) -> Result<RunConfig, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            locate(path, text, span.clone(), implicit_table_message(text, &span, e.message().trim()))
        })?;
        if file.robot.get_ref() != robot {
            return Err(locate(
                path,
                text,
                file.robot.span(),
                format!("robot: this file is for `{}`, not `{robot}`", file.robot.get_ref()),
            ));
        }
        let rate_hz = match &file.rate_hz {
            // At least 1 Hz: a slower loop is no control loop, and a period of 1e9 s would
            // hold the run (and its stop signals) for ever.
            Some(r) if r.get_ref().is_finite() && *r.get_ref() >= 1.0 && *r.get_ref() <= 100_000.0 => *r.get_ref(),
            Some(r) => {
                return Err(locate(
                    path,
                    text,
                    r.span(),
                    format!("rate_hz: must be in [1, 100000] Hz, got {}", r.get_ref()),
                ))
            }
            None => 1000.0,
        };
        let mut safety = SafetyLimits::default();
        if let Some(s) = &file.safety {
            let span = s.span();
            let s = s.get_ref();
            safety.pressure_ceiling = s.pressure_ceiling.unwrap_or(safety.pressure_ceiling);
            safety.actuator_rating = s.actuator_rating.unwrap_or(safety.actuator_rating);
            safety.pressure_rate = s.pressure_rate.unwrap_or(safety.pressure_rate);
            safety.joint_rate = s.joint_rate.unwrap_or(safety.joint_rate);
            safety.thrust_limit = s.thrust_limit.unwrap_or(safety.thrust_limit);
            safety.thrust_rate = s.thrust_rate.unwrap_or(safety.thrust_rate);
            safety.command_timeout = s.command_timeout.unwrap_or(safety.command_timeout);
            if s.miss_streak.is_some() {
                return Err(locate(
                    path,
                    text,
                    span,
                    "safety.miss_streak: the watchdog's tolerance is now a time: `command_timeout` (s), how long after it was due a command may go out (default 0.05)".to_string(),
                ));
            }
            safety.validate().map_err(|e| locate(path, text, span, format!("safety: {e}")))?;
        }
        let channels = parse_channels(&file.channels, (path, text), robot, actuators)?;
        let environment = match &file.environment {
            Some(e) => {
                parse_environment(e.get_ref()).map_err(|m| locate(path, text, e.span(), format!("environment: {m}")))?
            }
            None => EnvironmentOverride::default(),
        };
        // Robots driven by pressures and thrusts are planned by box-DDP; the rest follow a
        // gait, which the sampler steers.
        let continuous = actuators
            .iter()
            .any(|(_, d)| matches!(d, Drives::Thrust | Drives::Coordinate(CoordinateKind::ActuatorLength)));
        let valved = actuators.iter().any(|(_, d)| *d == Drives::Valve);
        let valve_supply = parse_valve_supply(file.valves.as_ref(), valved, (path, text), robot)?;
        let drive = RobotDrive {
            continuous,
            valved,
            muscles_only: actuators.iter().any(|(_, d)| *d == Drives::Coordinate(CoordinateKind::ActuatorLength))
                && !valved
                && !actuators.iter().any(|(_, d)| *d == Drives::Thrust),
        };
        let planner = match &file.mpc {
            Some(m) => Some(parse_planner(m.get_ref(), robot, drive, rate_hz).map_err(|e| match e {
                PlannerError::Table(message) => locate(path, text, m.span(), format!("mpc: {message}")),
                PlannerError::Goal(message) => {
                    locate(path, text, m.get_ref().goal_span(), format!("mpc.goal: {message}"))
                }
            })?),
            None => None,
        };
        let mut parameters = Vec::new();
        for (name, value) in &file.parameters {
            if !value.get_ref().is_finite() {
                return Err(locate(
                    path,
                    text,
                    value.span(),
                    format!("parameters.{name}: must be finite, got {}", value.get_ref()),
                ));
            }
            parameters.push((name.clone(), *value.get_ref()));
        }
        let mut sensors = Vec::with_capacity(file.sensors.len());
        for (i, entry) in file.sensors.iter().enumerate() {
            let at = locate(path, text, entry.span(), format!("sensors[{i}]"));
            let sensor = parse_sensor(entry.get_ref()).map_err(|m| format!("{at}: {m}"))?;
            let source = parse_source(entry.get_ref()).map_err(|m| format!("{at}: {m}"))?;
            let calibration = parse_calibration(entry.get_ref(), path).map_err(|m| format!("{at}: {m}"))?;
            if sensors.iter().any(|s: &SensorEntry| s.sensor.name == sensor.0.name) {
                return Err(format!("{at}: a sensor named `{}` is listed twice", sensor.0.name));
            }
            if let Some(other) = sensors.iter().find(|s| s.source == source && source != SensorSource::Plant) {
                return Err(format!(
                    "{at}: sensor `{}` reads the same {} as `{}`",
                    sensor.0.name,
                    match source {
                        SensorSource::NatNet { target } => target.to_string(),
                        SensorSource::Board { channel } => format!("board channel ({channel})"),
                        SensorSource::Comedi { channel } => format!("analog input ({channel})"),
                        SensorSource::Plant => String::new(),
                    },
                    other.sensor.name
                ));
            }
            sensors.push(SensorEntry { sensor: sensor.0, target: sensor.1, at, source, calibration });
        }
        let natnet = match &file.natnet {
            Some(n) => parse_natnet(n.get_ref()).map_err(|m| locate(path, text, n.span(), format!("natnet: {m}")))?,
            None => NatNetSettings::default(),
        };
        if sensors.len() > MAX_SENSORS {
            return Err(format!("{path}: {} sensors, more than the {MAX_SENSORS} a run reads", sensors.len()));
        }
        let (estimator, sensor_seed, estimator_contact) = match &file.estimator {
            Some(e) => {
                parse_estimator(e.get_ref()).map_err(|m| locate(path, text, e.span(), format!("estimator: {m}")))?
            }
            None => (EstimatorSettings::default(), 1, EstimatorContact::default()),
        };
        let plant = match &file.plant {
            Some(p) => parse_plant(p.get_ref()).map_err(|m| locate(path, text, p.span(), format!("plant: {m}")))?,
            None => PlantSettings::default(),
        };
        Ok(RunConfig {
            robot: robot.to_string(),
            rate_hz,
            safety,
            channels,
            environment,
            planner,
            valve_supply,
            plant,
            parameters,
            sensors,
            estimator,
            sensor_seed,
            estimator_contact,
            natnet,
        })
    }
}

/// The channels of `files` (read from `path`, whose text is `text`) in the order of `robot`'s
/// actuators (name and what each drives): each actuator exactly one channel of a kind that fits
/// it, and no two outputs on one wire.
fn parse_channels(
    files: &[Spanned<ChannelFile>],
    (path, text): (&str, &str),
    robot: &str,
    actuators: &[(&str, Drives)],
) -> Result<Vec<Channel>, String> {
    let actuated_bodies: Vec<&str> = actuators.iter().map(|(b, _)| *b).collect();
    let folder = Path::new(path).parent().unwrap_or(Path::new("."));
    let mut channels: Vec<Option<Channel>> = vec![None; actuated_bodies.len()];
    for (i, c) in files.iter().enumerate() {
        let at = |message: String| locate(path, text, c.span(), format!("channels[{i}]: {message}"));
        let (actuator, channel) = match c.get_ref() {
            ChannelFile::ServoBoard { actuator, channel, min_angle, max_angle } => {
                if !(min_angle.is_finite() && max_angle.is_finite() && min_angle < max_angle) {
                    return Err(at(format!("min_angle {min_angle} must be below max_angle {max_angle}")));
                }
                (actuator, Channel::ServoBoard { channel: *channel, min_angle: *min_angle, max_angle: *max_angle })
            }
            ChannelFile::PressureRegulator {
                actuator,
                channel,
                full_scale_bar,
                volts,
                calibration,
                metres_per_bar,
            } => {
                let map = match (calibration, full_scale_bar) {
                    (Some(file), None) => {
                        let table_path = folder.join(file);
                        let table = std::fs::read_to_string(&table_path)
                            .map_err(|e| at(format!("calibration {}: {e}", table_path.display())))?;
                        PressureMap::table_from_csv(&table_path.to_string_lossy(), &table).map_err(|e| at(e.0))?
                    }
                    (None, Some(full_scale)) => {
                        let [low, high] = volts.unwrap_or([0.0, 10.0]);
                        PressureMap::Linear { full_scale_bar: *full_scale, volts_min: low, volts_max: high }
                    }
                    _ => {
                        return Err(
                            at("give either full_scale_bar (with optional volts) or a calibration table".into()),
                        )
                    }
                };
                map.validate().map_err(|e| at(e.0))?;
                let extension = match metres_per_bar {
                    Some(g) if g.is_finite() && *g > 0.0 => Some(LengthToPressure { metres_per_bar: *g }),
                    Some(g) => return Err(at(format!("metres_per_bar must be > 0, got {g}"))),
                    None => None,
                };
                (actuator, Channel::PressureRegulator { channel: *channel, map, extension })
            }
            ChannelFile::Valve { actuator, line, active_high } => {
                (actuator, Channel::Valve { line: *line, active_high: *active_high })
            }
            ChannelFile::Thruster { actuator, channel, max_thrust } => {
                if !(max_thrust.is_finite() && *max_thrust > 0.0) {
                    return Err(at(format!("max_thrust must be > 0, got {max_thrust}")));
                }
                (actuator, Channel::Thruster { channel: *channel, max_thrust: *max_thrust })
            }
        };
        let Some(index) = actuated_bodies.iter().position(|b| b == actuator) else {
            return Err(at(format!(
                "`{actuator}` is not an actuator of `{robot}` (actuators: {})",
                actuated_bodies.join(", ")
            )));
        };
        if channels[index].is_some() {
            return Err(at(format!("`{actuator}` already has a channel")));
        }
        if let Some(fit) = channel_fit(&channel, actuators[index].1) {
            return Err(at(format!("`{actuator}` {fit}")));
        }
        channels[index] = Some(channel);
    }
    let mut out = Vec::with_capacity(channels.len());
    for (c, body) in channels.into_iter().zip(actuated_bodies) {
        out.push(c.ok_or_else(|| format!("{path}: actuator `{body}` has no channel")));
    }
    let channels = out.into_iter().collect::<Result<Vec<_>, _>>()?;
    // Two outputs on one wire would fight.
    for (i, a) in channels.iter().enumerate() {
        for b in &channels[..i] {
            if output_kind(a) == output_kind(b) && wire(a) == wire(b) {
                return Err(format!("{path}: two actuators share {} output {}", output_kind(a), wire(a)));
            }
        }
    }
    Ok(channels)
}

/// A valve-driven robot's supply from its `[valves]` table: required for one, refused for any
/// other robot.
fn parse_valve_supply(
    valves: Option<&Spanned<ValvesFile>>,
    valved: bool,
    (path, text): (&str, &str),
    robot: &str,
) -> Result<Option<ValveSupply>, String> {
    Ok(match (valves, valved) {
        (Some(v), true) => {
            let table = v.get_ref();
            if !(table.units_per_bar.is_finite() && table.units_per_bar > 0.0) {
                return Err(locate(
                    path,
                    text,
                    v.span(),
                    format!("valves.units_per_bar: must be > 0 (100 for a parameter in kPa), got {}", table.units_per_bar),
                ));
            }
            Some(ValveSupply { parameter: table.supply_parameter.clone(), units_per_bar: table.units_per_bar })
        }
        (Some(v), false) => {
            return Err(locate(path, text, v.span(), format!("valves: `{robot}` has no valves to supply")))
        }
        (None, true) => return Err(format!(
            "{path}: `{robot}` is driven by valves: add a [valves] table naming the spec parameter its supply regulator sets (supply_parameter) and that parameter's units per bar (units_per_bar)"
        )),
        (None, false) => None,
    })
}

/// Where a sensor's readings come from: a NatNet rigid body for a marker, a board channel for
/// a coordinate or a pressure, or the simulated plant only.
fn parse_source(s: &SensorFile) -> Result<SensorSource, String> {
    let source = s.source.unwrap_or(SourceFile::Plant);
    if s.rigid_body.is_some() && source != SourceFile::Natnet {
        return Err("`rigid_body` names a NatNet rigid body: only a sensor with source = \"natnet\" has one".into());
    }
    if (s.marker.is_some() || s.marker_model.is_some()) && source != SourceFile::Natnet {
        return Err(
            "`marker` and `marker_model` name a NatNet labelled marker: only a sensor with source = \"natnet\" has them"
                .into(),
        );
    }
    if s.marker_model.is_some() && s.marker.is_none() {
        return Err("`marker_model` goes with `marker` (the labelled marker's own id)".into());
    }
    if s.channel.is_some() && !matches!(source, SourceFile::Board | SourceFile::Comedi) {
        return Err(
            "`channel` names a board sensor channel or a comedi analog input: only a sensor with source = \"board\" or \"comedi\" has one"
                .into(),
        );
    }
    match source {
        SourceFile::Plant => Ok(SensorSource::Plant),
        SourceFile::Natnet if s.kind != SensorKindFile::Marker => {
            Err("NatNet streams positions: source = \"natnet\" is for marker sensors".into())
        }
        SourceFile::Natnet => match (s.rigid_body, s.marker) {
            (Some(rigid_body), None) => Ok(SensorSource::NatNet { target: NatNetTarget::RigidBody(rigid_body) }),
            (None, Some(marker)) => {
                let id = |value: i64, key: &str| {
                    u16::try_from(value).map_err(|_| format!("`{key}` must be a NatNet id in 0..=65535, got {value}"))
                };
                let (model, marker) = (id(s.marker_model.unwrap_or(0), "marker_model")?, id(marker, "marker")?);
                Ok(SensorSource::NatNet { target: NatNetTarget::marker(model, marker) })
            }
            (Some(_), Some(_)) => Err(
                "a NatNet sensor follows a rigid body or a labelled marker: give `rigid_body` or `marker`, not both"
                    .into(),
            ),
            (None, None) => Err(
                "a NatNet sensor needs `rigid_body` (a rigid body's id) or `marker` (a labelled marker's id, with `marker_model` if it belongs to an asset)"
                    .into(),
            ),
        },
        SourceFile::Board if s.kind == SensorKindFile::Marker => {
            Err("the board reads coordinates and pressures, not marker positions: a marker's source is \"natnet\""
                .into())
        }
        SourceFile::Board => s
            .channel
            .map(|channel| SensorSource::Board { channel })
            .ok_or_else(|| "a board sensor needs `channel` (its sensor channel on the board)".into()),
        SourceFile::Comedi if s.kind == SensorKindFile::Marker => {
            Err("a comedi card reads voltages, not marker positions: a marker's source is \"natnet\"".into())
        }
        SourceFile::Comedi => s
            .channel
            .map(|channel| SensorSource::Comedi { channel })
            .ok_or_else(|| "a comedi sensor needs `channel` (the card's analog input)".into()),
    }
}

/// A comedi sensor's calibration: `volts` and `values` (linear) or a `calibration` table file
/// (relative to the run configuration's folder); only comedi sensors have one.
fn parse_calibration(s: &SensorFile, config_path: &str) -> Result<Option<Calibration>, String> {
    let comedi = s.source == Some(SourceFile::Comedi);
    let calibration = match (s.volts, s.values, &s.calibration) {
        (None, None, None) => None,
        (Some(volts), Some(values), None) => Some(Calibration::Linear { volts, values }),
        (None, None, Some(file)) => {
            let folder = std::path::Path::new(config_path).parent().unwrap_or(std::path::Path::new("."));
            let table = folder.join(file);
            let text = std::fs::read_to_string(&table).map_err(|e| format!("calibration {}: {e}", table.display()))?;
            Some(Calibration::table_from_csv(&table.display().to_string(), &text)?)
        }
        (_, _, Some(_)) => return Err("give a calibration table or `volts` and `values`, not both".into()),
        _ => return Err("a linear calibration needs both `volts` and `values` (two each)".into()),
    };
    match (comedi, calibration) {
        (true, None) => Err("a comedi sensor needs its calibration: `volts` and `values`, or a `calibration` table".into()),
        (false, Some(_)) => {
            Err("`volts`, `values` and `calibration` turn an analog input's voltage into a reading: only comedi sensors have them".into())
        }
        (_, Some(c)) => {
            c.validate()?;
            Ok(Some(c))
        }
        (false, None) => Ok(None),
    }
}

fn parse_natnet(n: &NatNetFile) -> Result<NatNetSettings, String> {
    let d = NatNetSettings::default();
    let address = |key: &str, value: &Option<String>, default| match value {
        Some(v) => v
            .parse::<std::net::SocketAddr>()
            .map_err(|_| format!("{key} = \"{v}\" is not an address and port (like 192.168.1.10:1510)")),
        None => Ok(default),
    };
    let multicast = match &n.multicast {
        Some(m) => {
            let group =
                m.parse::<std::net::Ipv4Addr>().map_err(|_| format!("multicast = \"{m}\" is not an IPv4 address"))?;
            if !group.is_multicast() {
                return Err(format!(
                    "multicast = \"{m}\" is not a multicast group (224.0.0.0/4; Motive's default is 239.255.42.99)"
                ));
            }
            Some(group)
        }
        None => None,
    };
    let y_up = match n.up_axis.as_deref() {
        None | Some("y") => true,
        Some("z") => false,
        Some(other) => {
            return Err(format!("up_axis = \"{other}\": the server's up axis is \"y\" (Motive's default) or \"z\""))
        }
    };
    let origin = n.origin.unwrap_or(d.origin);
    if origin.iter().any(|v| !v.is_finite()) {
        return Err(format!("origin {origin:?} must be finite (m)"));
    }
    Ok(NatNetSettings {
        server: address("server", &n.server, d.server)?,
        local: address("local", &n.local, d.local)?,
        multicast,
        y_up,
        origin,
    })
}

/// A sensor's settings and the name of what it measures.
fn parse_sensor(s: &SensorFile) -> Result<(Sensor, String), String> {
    let (measures, target, range) = match s.kind {
        SensorKindFile::Marker => (Measurement::Marker { point: 0 }, &s.point, [-100.0, 100.0]),
        SensorKindFile::Coordinate => (
            Measurement::Coordinate { coordinate: 0, scale: s.scale.unwrap_or(1.0), offset: s.offset.unwrap_or(0.0) },
            &s.coordinate,
            [-1e3, 1e3],
        ),
        SensorKindFile::Pressure => (Measurement::Pressure { muscle: 0 }, &s.actuator, [-1.0, 100.0]),
    };
    let (key, others) = match s.kind {
        SensorKindFile::Marker => {
            ("point", [("coordinate", s.coordinate.is_some()), ("actuator", s.actuator.is_some())])
        }
        SensorKindFile::Coordinate => {
            ("coordinate", [("point", s.point.is_some()), ("actuator", s.actuator.is_some())])
        }
        SensorKindFile::Pressure => {
            ("actuator", [("point", s.point.is_some()), ("coordinate", s.coordinate.is_some())])
        }
    };
    let kind = format!("{:?}", s.kind).to_lowercase();
    if let Some((other, _)) = others.iter().find(|(_, set)| *set) {
        return Err(format!("a {kind} sensor names its target with `{key}`, not `{other}`"));
    }
    if s.kind != SensorKindFile::Coordinate && (s.scale.is_some() || s.offset.is_some()) {
        return Err(format!("`scale` and `offset` calibrate coordinate sensors, not a {kind} sensor"));
    }
    let target = target.clone().ok_or_else(|| format!("a {kind} sensor needs `{key}`"))?;
    let rate = s.rate_hz;
    let sensor = Sensor {
        name: s.name.clone(),
        measures,
        rate_hz: rate,
        noise: s.noise,
        latency: s.latency.unwrap_or(0.0),
        lost: s.lost.unwrap_or(0.0),
        // Ten frames, and at least 0.1 s.
        timeout: s.timeout.unwrap_or((10.0 / rate).max(0.1)),
        range: s.range.unwrap_or(range),
        silent_after: s.silent_after,
    };
    sensor.validate()?;
    Ok((sensor, target))
}

fn parse_estimator(e: &EstimatorFile) -> Result<(EstimatorSettings, u64, EstimatorContact), String> {
    let d = EstimatorSettings::default();
    let settings = EstimatorSettings {
        step: e.step.unwrap_or(d.step),
        acceleration_noise: e.acceleration_noise.unwrap_or(d.acceleration_noise),
        acceleration_noise_by_kind: match &e.acceleration_noise_by_kind {
            Some(k) => [
                (CoordinateKind::BaseTranslation, k.base_translation),
                (CoordinateKind::BaseRotation, k.base_rotation),
                (CoordinateKind::RevoluteJoint, k.revolute_joint),
                (CoordinateKind::PrismaticJoint, k.prismatic_joint),
                (CoordinateKind::ActuatorLength, k.actuator_length),
                (CoordinateKind::Curvature, k.curvature),
            ]
            .into_iter()
            .filter_map(|(kind, noise)| noise.map(|n| (kind, n)))
            .collect(),
            None => Vec::new(),
        },
        initial_position_std: e.initial_position_std.unwrap_or(d.initial_position_std),
        initial_velocity_std: e.initial_velocity_std.unwrap_or(d.initial_velocity_std),
        gate: e.gate.unwrap_or(d.gate),
        outlier_streak: e.outlier_streak.unwrap_or(d.outlier_streak),
        history: e.history.unwrap_or(d.history),
        fault_hold: e.fault_hold.unwrap_or(d.fault_hold),
        jacobian_every: e.jacobian_every.unwrap_or(d.jacobian_every),
        newton_tolerance: e.newton_tolerance.unwrap_or(d.newton_tolerance),
        newton_contraction: e.newton_contraction.unwrap_or(d.newton_contraction),
    };
    settings.validate()?;
    let contact = EstimatorContact { damping: e.contact_damping, dissipation: e.contact_dissipation };
    // The ranges of the spec's and the command line's values (`physical_ranges`).
    for (key, value) in [("contact_damping", contact.damping), ("contact_dissipation", contact.dissipation)] {
        if let Some(v) = value {
            softgen_runtime::physical_ranges::check_field_magnitude(key, v).map_err(|m| format!("{key}: {m}"))?;
            if !(v >= 0.0) {
                return Err(format!("{key} must be >= 0, got {v}"));
            }
        }
    }
    Ok((settings, e.seed.unwrap_or(1), contact))
}

fn parse_environment(e: &EnvironmentFile) -> Result<EnvironmentOverride, String> {
    let terrain = e.terrain.as_ref().map(|t| match *t {
        TerrainFile::None => Terrain::None,
        TerrainFile::Flat { height } => Terrain::Flat { height },
        TerrainFile::Stair { position, height } => Terrain::Stair { position, height },
        TerrainFile::Pipe { diameter } => Terrain::Pipe { diameter },
        TerrainFile::Floor => Terrain::Floor,
    });
    if let Some(t) = &terrain {
        t.validate().map_err(|m| format!("terrain: {m}"))?;
    }
    let friction = e.friction.as_ref().map(|f| FrictionLaw {
        along: f.along,
        across: f.across.unwrap_or(f.along),
        anisotropy: match f.anisotropy {
            None | Some(AnisotropyFile::Isotropic) => FrictionAnisotropy::Isotropic,
            Some(AnisotropyFile::BodyAxis) => FrictionAnisotropy::BodyAxis,
            Some(AnisotropyFile::WorldAxis) => FrictionAnisotropy::WorldAxis,
        },
        regularisation: f.regularisation.unwrap_or(0.0),
    });
    let environment = EnvironmentOverride {
        terrain,
        contact_stiffness: e.contact_stiffness,
        contact_damping: e.contact_damping,
        contact_dissipation: e.contact_dissipation,
        friction,
    };
    // Check the numbers through the contact law's own validation.
    let zero = FrictionLaw { along: 0.0, across: 0.0, anisotropy: FrictionAnisotropy::Isotropic, regularisation: 0.0 };
    let (law, _) =
        environment.apply(ContactLaw { stiffness: 0.0, damping: 0.0, dissipation: 0.0, friction: zero }, Terrain::None);
    law.validate()?;
    Ok(environment)
}

/// Why `channel` cannot drive an actuator of a coordinate of `kind`, if it cannot: joints
/// take set points (a servo board), soft sections' actuator lengths take pressure (a
/// regulator) or a valve.
fn channel_fit(channel: &Channel, drives: Drives) -> Option<String> {
    let joint = matches!(drives, Drives::Coordinate(CoordinateKind::RevoluteJoint | CoordinateKind::PrismaticJoint));
    let muscle = drives == Drives::Coordinate(CoordinateKind::ActuatorLength);
    let fits = match channel {
        Channel::ServoBoard { .. } => joint,
        Channel::PressureRegulator { .. } => muscle || drives == Drives::Supply,
        Channel::Valve { .. } => muscle || drives == Drives::Valve,
        Channel::Thruster { .. } => drives == Drives::Thrust,
    };
    if fits {
        return None;
    }
    let kind = match drives {
        Drives::Coordinate(kind) => kind,
        Drives::Thrust => return Some("is a thruster, commanded in newtons: it needs kind = \"thruster\"".to_string()),
        Drives::Valve => return Some("is a valve pair, open or shut: it needs kind = \"valve\"".to_string()),
        Drives::Supply => {
            return Some("is the valves' supply pressure: it needs kind = \"pressure_regulator\"".to_string())
        }
    };
    let what = match kind {
        CoordinateKind::RevoluteJoint => "is a revolute joint, commanded by angle: it needs kind = \"servo_board\"",
        CoordinateKind::PrismaticJoint => {
            "is a prismatic joint, commanded by position: it needs kind = \"servo_board\""
        }
        CoordinateKind::ActuatorLength => "is a pneumatic muscle: it needs kind = \"pressure_regulator\" or \"valve\"",
        CoordinateKind::Curvature => "is a curvature coordinate, which no output channel drives yet",
        CoordinateKind::BaseTranslation | CoordinateKind::BaseRotation => {
            "is a floating base coordinate, which no output channel drives"
        }
    };
    let kind_name = match channel {
        Channel::ServoBoard { .. } => "servo_board",
        Channel::PressureRegulator { .. } => "pressure_regulator",
        Channel::Valve { .. } => "valve",
        Channel::Thruster { .. } => "thruster",
    };
    Some(format!("{what}, not a {kind_name}"))
}

/// The kind of device output a channel writes: servos and thrusters share the board's
/// channels.
fn output_kind(c: &Channel) -> &'static str {
    match c {
        Channel::ServoBoard { .. } | Channel::Thruster { .. } => "board",
        Channel::PressureRegulator { .. } => "analog",
        Channel::Valve { .. } => "digital",
    }
}

fn wire(c: &Channel) -> u16 {
    match c {
        Channel::ServoBoard { channel, .. }
        | Channel::PressureRegulator { channel, .. }
        | Channel::Thruster { channel, .. } => *channel,
        Channel::Valve { line, .. } => *line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector2;

    const BODIES: &[(&str, Drives)] = &[
        ("link2", Drives::Coordinate(CoordinateKind::RevoluteJoint)),
        ("link3", Drives::Coordinate(CoordinateKind::RevoluteJoint)),
    ];
    const GOOD: &str = "robot = \"snake\"\n[[channels]]\nkind = \"servo_board\"\nactuator = \"link2\"\nchannel = 0\nmin_angle = -1\nmax_angle = 1\n[[channels]]\nkind = \"servo_board\"\nactuator = \"link3\"\nchannel = 1\nmin_angle = -1\nmax_angle = 1\n";

    #[test]
    fn long_name_lists_in_errors_show_both_ends_and_the_count() {
        let short = ["a", "b", "c"];
        assert_eq!(listed(&short), "a, b, c");
        let names: Vec<String> = (0..20).map(|k| format!("p{k}")).collect();
        let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        assert_eq!(listed(&names[..16]), names[..16].join(", "));
        assert_eq!(listed(&names), "p0, p1, p2, p3, ..., p12, p13, p14, p15, p16, p17, p18, p19; 20 in all");
    }

    #[test]
    fn good_config_maps_channels_in_actuator_order() {
        let c = RunConfig::parse("run.toml", GOOD, "snake", BODIES).unwrap();
        assert_eq!(c.channels.len(), 2);
        assert_eq!(c.rate_hz, 1000.0);
        assert_eq!(c.environment, EnvironmentOverride::default());
        assert!(c.planner.is_none());
        let with = format!("{GOOD}[environment]\nterrain = {{ kind = \"floor\" }}\nfriction = {{ along = 0.043, across = 0.57, anisotropy = \"body_axis\", regularisation = 0.001 }}\n[mpc]\ngoal = [1.0, -0.5]\nsamples = 16\n");
        let c = RunConfig::parse("run.toml", &with, "snake", BODIES).unwrap();
        assert_eq!(c.environment.terrain, Some(Terrain::Floor));
        assert_eq!(c.environment.friction.unwrap().anisotropy, FrictionAnisotropy::BodyAxis);
        let Some(PlannerSettings::GaitSampling(mpc)) = c.planner else { panic!("the gait sampler: {:?}", c.planner) };
        assert_eq!((mpc.goal, mpc.samples, mpc.replan_hz), (Vector2::new(1.0, -0.5), 16, 20.0));
    }

    #[test]
    fn bad_configs_name_file_line_and_field() {
        for (from, to, expected) in [
            ("channel = 1", "channel = 0", "share board output 0"),
            ("actuator = \"link3\"", "actuator = \"link9\"", "run.toml:8:1: channels[1]: `link9` is not an actuator"),
            ("kind = \"servo_board\"\nactuator = \"link3\"", "kind = \"laser\"\nactuator = \"link3\"", "run.toml:"),
            ("robot = \"snake\"", "robot = \"snake\"\nrate_hz = -5", "rate_hz: must be in"),
            ("robot = \"snake\"", "robot = \"snake\"\nrate_hz = 1e-9", "rate_hz: must be in [1, 100000] Hz"),
            ("robot = \"snake\"", "robot = \"snake\"\nrate_hz = 1e-300", "rate_hz: must be in [1, 100000] Hz"),
            ("robot = \"snake\"", "robot = \"snake\"\n[safety]\npressure_ceiling = 4.5", "above the actuator rating"),
            (
                "min_angle = -1\nmax_angle = 1\n[[channels]]",
                "min_angle = 1\nmax_angle = -1\n[[channels]]",
                "must be below",
            ),
            ("robot = \"snake\"", "robot = \"other\"", "this file is for `other`"),
        ] {
            let bad = GOOD.replacen(from, to, 1);
            assert_ne!(bad, GOOD, "{from}");
            let e = RunConfig::parse("run.toml", &bad, "snake", BODIES).unwrap_err();
            assert!(e.contains(expected), "expected `{expected}` in `{e}`");
        }
        for (extra, expected) in [
            ("[environment]\nterrain = { kind = \"pipe\", diameter = -1 }\n", "run.toml:14:1: environment: terrain:"),
            (
                "[environment]\nfriction = { along = -0.1 }\n",
                "environment: friction along = -0.1 is outside the physical range of a friction coefficient",
            ),
            ("[environment]\nterrain = { kind = \"lava\" }\n", "run.toml:15:"),
            (
                "[mpc]\ngoal = [1.0, 0.0]\nsamples = 1\n",
                "run.toml:14:1: mpc: planner samples must be in 2..=4096, got 1",
            ),
            ("[mpc]\ngoal = [1.0, 0.0]\nreplan_hz = 5000\n", "mpc: replan_hz must be in"),
            ("[mpc]\ngoal = [1.0, 0.0]\nmin = [0.2, 3.0, -0.6]\n", "bounds of the temporal frequency"),
            ("[mpc]\ngoal = [1.0]\n", "run.toml:15:"),
        ] {
            let e = RunConfig::parse("run.toml", &format!("{GOOD}{extra}"), "snake", BODIES).unwrap_err();
            assert!(e.contains(expected), "expected `{expected}` in `{e}`");
        }
        let missing = GOOD.split("[[channels]]").take(2).collect::<Vec<_>>().join("[[channels]]");
        assert!(RunConfig::parse("run.toml", &missing, "snake", BODIES)
            .unwrap_err()
            .contains("`link3` has no channel"));
    }
}
