//! Run configuration files (`model-specs/<robot>.run.toml`): the loop rate, safety limits and
//! the channel map from each actuator to a device output, validated with errors that name
//! the file, line and field.

use serde::Deserialize;
use softgen_runtime::{Channel, LengthToPressure, PressureMap, SafetyLimits};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    robot: Spanned<String>,
    rate_hz: Option<Spanned<f64>>,
    #[serde(default)]
    safety: Option<Spanned<SafetyFile>>,
    channels: Vec<Spanned<ChannelFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SafetyFile {
    pressure_ceiling: Option<f64>,
    actuator_rating: Option<f64>,
    pressure_rate: Option<f64>,
    joint_rate: Option<f64>,
    thrust_limit: Option<f64>,
    thrust_rate: Option<f64>,
    miss_streak: Option<u32>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum ChannelFile {
    ServoBoard { actuator: String, channel: u16, min_angle: f64, max_angle: f64 },
    PressureRegulator {
        actuator: String,
        channel: u16,
        full_scale_bar: Option<f64>,
        volts: Option<[f64; 2]>,
        /// A `bar,volts` CSV, relative to the run configuration's folder.
        calibration: Option<String>,
        metres_per_bar: Option<f64>,
    },
    Valve { actuator: String, line: u16, #[serde(default = "yes")] active_high: bool },
    Thruster { actuator: String, channel: u16, max_thrust: f64 },
}

fn yes() -> bool {
    true
}

/// A validated run configuration.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub robot: String,
    pub rate_hz: f64,
    pub safety: SafetyLimits,
    /// One channel per actuator, in the robot's actuator order.
    pub channels: Vec<Channel>,
}

fn locate(path: &str, text: &str, span: Range<usize>, message: impl std::fmt::Display) -> String {
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{path}:{line}:{column}: {message}")
}

impl RunConfig {
    /// Parses `text` (read from `path`) for a robot whose actuators drive the joints of
    /// `actuated_bodies`, in order.
    pub fn parse(path: &str, text: &str, robot: &str, actuated_bodies: &[&str]) -> Result<RunConfig, String> {
        let file: File = toml::from_str(text).map_err(|e| locate(path, text, e.span().unwrap_or(0..0), e.message().trim()))?;
        if file.robot.get_ref() != robot {
            return Err(locate(path, text, file.robot.span(), format!("robot: this file is for `{}`, not `{robot}`", file.robot.get_ref())));
        }
        let rate_hz = match &file.rate_hz {
            Some(r) if r.get_ref().is_finite() && *r.get_ref() > 0.0 && *r.get_ref() <= 100_000.0 => *r.get_ref(),
            Some(r) => return Err(locate(path, text, r.span(), format!("rate_hz: must be in (0, 100000], got {}", r.get_ref()))),
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
            safety.miss_streak = s.miss_streak.unwrap_or(safety.miss_streak);
            safety.validate().map_err(|e| locate(path, text, span, format!("safety: {e}")))?;
        }
        let folder = Path::new(path).parent().unwrap_or(Path::new("."));
        let mut channels: Vec<Option<Channel>> = vec![None; actuated_bodies.len()];
        for (i, c) in file.channels.iter().enumerate() {
            let at = |message: String| locate(path, text, c.span(), format!("channels[{i}]: {message}"));
            let (actuator, channel) = match c.get_ref() {
                ChannelFile::ServoBoard { actuator, channel, min_angle, max_angle } => {
                    if !(min_angle.is_finite() && max_angle.is_finite() && min_angle < max_angle) {
                        return Err(at(format!("min_angle {min_angle} must be below max_angle {max_angle}")));
                    }
                    (actuator, Channel::ServoBoard { channel: *channel, min_angle: *min_angle, max_angle: *max_angle })
                }
                ChannelFile::PressureRegulator { actuator, channel, full_scale_bar, volts, calibration, metres_per_bar } => {
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
                        _ => return Err(at("give either full_scale_bar (with optional volts) or a calibration table".into())),
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
                return Err(at(format!("`{actuator}` is not an actuated joint of `{robot}` (actuated: {})", actuated_bodies.join(", "))));
            };
            if channels[index].is_some() {
                return Err(at(format!("`{actuator}` already has a channel")));
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
                if std::mem::discriminant(a) == std::mem::discriminant(b) && wire(a) == wire(b) {
                    return Err(format!("{path}: two actuators share output {}", wire(a)));
                }
            }
        }
        Ok(RunConfig { robot: robot.to_string(), rate_hz, safety, channels })
    }
}

fn wire(c: &Channel) -> u16 {
    match c {
        Channel::ServoBoard { channel, .. } | Channel::PressureRegulator { channel, .. } | Channel::Thruster { channel, .. } => {
            *channel
        }
        Channel::Valve { line, .. } => *line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODIES: &[&str] = &["link2", "link3"];
    const GOOD: &str = "robot = \"snake\"\n[[channels]]\nkind = \"servo_board\"\nactuator = \"link2\"\nchannel = 0\nmin_angle = -1\nmax_angle = 1\n[[channels]]\nkind = \"servo_board\"\nactuator = \"link3\"\nchannel = 1\nmin_angle = -1\nmax_angle = 1\n";

    #[test]
    fn good_config_maps_channels_in_actuator_order() {
        let c = RunConfig::parse("run.toml", GOOD, "snake", BODIES).unwrap();
        assert_eq!(c.channels.len(), 2);
        assert_eq!(c.rate_hz, 1000.0);
    }

    #[test]
    fn bad_configs_name_file_line_and_field() {
        for (from, to, expected) in [
            ("channel = 1", "channel = 0", "share output 0"),
            ("actuator = \"link3\"", "actuator = \"link9\"", "run.toml:8:1: channels[1]: `link9` is not an actuated joint"),
            ("kind = \"servo_board\"\nactuator = \"link3\"", "kind = \"laser\"\nactuator = \"link3\"", "run.toml:"),
            ("robot = \"snake\"", "robot = \"snake\"\nrate_hz = -5", "rate_hz: must be in"),
            ("robot = \"snake\"", "robot = \"snake\"\n[safety]\npressure_ceiling = 4.5", "above the actuator rating"),
            ("min_angle = -1\nmax_angle = 1\n[[channels]]", "min_angle = 1\nmax_angle = -1\n[[channels]]", "must be below"),
            ("robot = \"snake\"", "robot = \"other\"", "this file is for `other`"),
        ] {
            let bad = GOOD.replacen(from, to, 1);
            assert_ne!(bad, GOOD, "{from}");
            let e = RunConfig::parse("run.toml", &bad, "snake", BODIES).unwrap_err();
            assert!(e.contains(expected), "expected `{expected}` in `{e}`");
        }
        let missing = GOOD.split("[[channels]]").take(2).collect::<Vec<_>>().join("[[channels]]");
        assert!(RunConfig::parse("run.toml", &missing, "snake", BODIES).unwrap_err().contains("`link3` has no channel"));
    }
}
