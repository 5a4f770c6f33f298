//! The output chain from what a controller asks of an actuator to the value a device puts on
//! a wire: actuator command -> physical unit -> device value.
//!
//! - A joint servo takes a desired angle (rad); its board takes the angle as a command.
//! - A pneumatic muscle takes a length change (m) or a pressure (bar); pressure reaches a
//!   proportional regulator as volts on an analog channel, through the regulator's linear
//!   full-scale range or a per-actuator calibration table.
//! - A solenoid valve takes open/closed, a digital line level.
//! - A thruster takes a thrust (N), a board command.

use std::fmt;

/// What the controller asks of one actuator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActuatorCommand {
    /// A joint's angle set point (rad).
    JointAngle(f64),
    /// Extension of a pneumatic muscle beyond its rest length (m).
    MuscleExtension(f64),
    /// A muscle's or regulator's pressure (bar).
    Pressure(f64),
    /// A valve pair's state: `true` for +1.
    Valve(bool),
    /// A thruster's thrust (N), either way.
    Thrust(f64),
}

/// A value on a device output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceValue {
    /// Volts on an analog output channel.
    Analog {
        /// The output channel.
        channel: u16,
        /// The voltage.
        volts: f64,
    },
    /// Level of a digital output line.
    Digital {
        /// The output line.
        line: u16,
        /// Whether the line is high.
        high: bool,
    },
    /// A command to a microcontroller board channel, in the actuator's physical unit.
    Board {
        /// The board's channel.
        channel: u16,
        /// The command (rad, N).
        value: f64,
    },
    /// Switch a board channel's output off (servo torque off, driver disabled).
    Off {
        /// The board's channel.
        channel: u16,
    },
}

impl DeviceValue {
    /// Output channel or line number.
    pub fn channel(&self) -> u16 {
        match *self {
            DeviceValue::Analog { channel, .. } | DeviceValue::Board { channel, .. } | DeviceValue::Off { channel } => {
                channel
            }
            DeviceValue::Digital { line, .. } => line,
        }
    }

    /// The value as a number (volts, 0/1, or the board value).
    pub fn number(&self) -> f64 {
        match *self {
            DeviceValue::Analog { volts, .. } => volts,
            DeviceValue::Digital { high, .. } => f64::from(u8::from(high)),
            DeviceValue::Board { value, .. } => value,
            DeviceValue::Off { .. } => 0.0,
        }
    }

    /// What kind of output it is, for logs: `analog`, `digital`, `board` or `off`.
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceValue::Analog { .. } => "analog",
            DeviceValue::Digital { .. } => "digital",
            DeviceValue::Board { .. } => "board",
            DeviceValue::Off { .. } => "off",
        }
    }
}

/// Pressure to regulator voltage: a linear full-scale range, or a calibration table.
#[derive(Clone, Debug, PartialEq)]
pub enum PressureMap {
    /// `volts = volts_min + (volts_max - volts_min) * pressure / full_scale` (e.g. an SMC
    /// ITV3050 with 0-10 V for 0-full-scale bar).
    Linear {
        /// The pressure at `volts_max` (bar).
        full_scale_bar: f64,
        /// The voltage at 0 bar.
        volts_min: f64,
        /// The voltage at full scale.
        volts_max: f64,
    },
    /// Measured (bar, volts) points, strictly increasing in both, interpolated linearly and
    /// clamped at the ends.
    Table(Vec<(f64, f64)>),
}

/// A problem in the output chain's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainError(pub String);

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ChainError {}

impl PressureMap {
    /// Checks a positive full scale and an increasing voltage span, or a table increasing
    /// in both.
    pub fn validate(&self) -> Result<(), ChainError> {
        match self {
            PressureMap::Linear { full_scale_bar, volts_min, volts_max } => {
                if !(full_scale_bar.is_finite() && *full_scale_bar > 0.0) {
                    return Err(ChainError(format!("full scale must be > 0 bar, got {full_scale_bar}")));
                }
                if !(volts_min.is_finite() && volts_max.is_finite() && volts_max > volts_min) {
                    return Err(ChainError(format!("voltage range must increase, got {volts_min}..{volts_max} V")));
                }
                Ok(())
            }
            PressureMap::Table(points) => {
                if points.len() < 2 {
                    return Err(ChainError(format!(
                        "a calibration table needs at least 2 points, got {}",
                        points.len()
                    )));
                }
                for (i, w) in points.windows(2).enumerate() {
                    let ((p0, v0), (p1, v1)) = (w[0], w[1]);
                    if ![p0, v0, p1, v1].iter().all(|x| x.is_finite()) || p1 <= p0 || v1 <= v0 {
                        return Err(ChainError(format!(
                            "calibration points {} and {} must be finite and strictly increasing in bar and volts",
                            i + 1,
                            i + 2
                        )));
                    }
                }
                Ok(())
            }
        }
    }

    /// Regulator voltage for a pressure.
    pub fn volts(&self, bar: f64) -> f64 {
        match self {
            PressureMap::Linear { full_scale_bar, volts_min, volts_max } => {
                (volts_min + (volts_max - volts_min) * bar / full_scale_bar).clamp(*volts_min, *volts_max)
            }
            PressureMap::Table(points) => {
                let first = points[0];
                let last = points[points.len() - 1];
                if bar <= first.0 {
                    return first.1;
                }
                if bar >= last.0 {
                    return last.1;
                }
                let i = points.partition_point(|p| p.0 <= bar).max(1) - 1;
                let ((p0, v0), (p1, v1)) = (points[i], points[i + 1]);
                v0 + (v1 - v0) * (bar - p0) / (p1 - p0)
            }
        }
    }

    /// The pressure a regulator sets for a voltage: the inverse of [`PressureMap::volts`]
    /// (both are monotonic), clamped to the map's range. What a simulated plant reads back.
    pub fn bar(&self, volts: f64) -> f64 {
        match self {
            PressureMap::Linear { full_scale_bar, volts_min, volts_max } => {
                (full_scale_bar * (volts - volts_min) / (volts_max - volts_min)).clamp(0.0, *full_scale_bar)
            }
            PressureMap::Table(points) => {
                let first = points[0];
                let last = points[points.len() - 1];
                if volts <= first.1 {
                    return first.0;
                }
                if volts >= last.1 {
                    return last.0;
                }
                let i = points.partition_point(|p| p.1 <= volts).max(1) - 1;
                let ((p0, v0), (p1, v1)) = (points[i], points[i + 1]);
                p0 + (p1 - p0) * (volts - v0) / (v1 - v0)
            }
        }
    }

    /// Reads a calibration table: one `bar,volts` pair a line; `#` comments and a header
    /// line of words are skipped. Errors name the file and line.
    pub fn table_from_csv(path: &str, text: &str) -> Result<PressureMap, ChainError> {
        let points = crate::quantities::tables::read_pairs(path, text, "bar,volts").map_err(ChainError)?;
        let map = PressureMap::Table(points);
        map.validate().map_err(|e| ChainError(format!("{path}: {e}")))?;
        Ok(map)
    }
}

/// Extension to pressure for extending pneumatic muscles: linear, `extension = gain * pressure`.
/// For the seed PMAs (0.15 m rest length, 50 % extension at 4 bar) the gain is
/// 0.075 m / 4 bar = 0.01875 m/bar. Real muscles are nonlinear and hysteretic; a
/// calibration table on the pressure side captures the regulator, not the muscle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LengthToPressure {
    /// The extension per bar (m/bar).
    pub metres_per_bar: f64,
}

impl LengthToPressure {
    /// The pressure (bar) for an extension (m).
    pub fn pressure(&self, extension: f64) -> f64 {
        extension / self.metres_per_bar
    }
}

/// How one actuator reaches its device output.
#[derive(Clone, Debug, PartialEq)]
pub enum Channel {
    /// A joint servo on a board channel, commanded in radians.
    ServoBoard {
        /// The board's channel.
        channel: u16,
        /// The lowest angle sent (rad); commands are clamped to it.
        min_angle: f64,
        /// The highest angle sent (rad).
        max_angle: f64,
    },
    /// A pressure regulator on an analog output.
    PressureRegulator {
        /// The analog output's channel.
        channel: u16,
        /// Pressure to volts.
        map: PressureMap,
        /// Muscle extension to pressure, for extension commands; None refuses them.
        extension: Option<LengthToPressure>,
    },
    /// A solenoid valve on a digital line.
    Valve {
        /// The digital line.
        line: u16,
        /// Whether the line is high for the state +1.
        active_high: bool,
    },
    /// A thruster on a board channel, commanded in newtons.
    Thruster {
        /// The board's channel.
        channel: u16,
        /// The largest thrust sent either way (N); commands are clamped to it.
        max_thrust: f64,
    },
}

impl Channel {
    /// The device value for a command that has passed the safety filter.
    pub fn device_value(&self, command: ActuatorCommand) -> Result<DeviceValue, ChainError> {
        match (self, command) {
            (Channel::ServoBoard { channel, min_angle, max_angle }, ActuatorCommand::JointAngle(a)) => {
                Ok(DeviceValue::Board { channel: *channel, value: a.clamp(*min_angle, *max_angle) })
            }
            (Channel::PressureRegulator { channel, map, .. }, ActuatorCommand::Pressure(bar)) => {
                Ok(DeviceValue::Analog { channel: *channel, volts: map.volts(bar) })
            }
            (Channel::PressureRegulator { channel, map, extension: Some(e) }, ActuatorCommand::MuscleExtension(m)) => {
                Ok(DeviceValue::Analog { channel: *channel, volts: map.volts(e.pressure(m)) })
            }
            (Channel::Valve { line, active_high }, ActuatorCommand::Valve(open)) => {
                Ok(DeviceValue::Digital { line: *line, high: open == *active_high })
            }
            (Channel::Thruster { channel, max_thrust }, ActuatorCommand::Thrust(n)) => {
                Ok(DeviceValue::Board { channel: *channel, value: n.clamp(-max_thrust, *max_thrust) })
            }
            (channel, command) => Err(ChainError(format!("{command:?} cannot drive {channel:?}"))),
        }
    }

    /// The output's safe state: regulators at their lowest voltage (vent), valves closed,
    /// thrusters off, servos switched off (limp).
    pub fn safe_value(&self) -> Option<DeviceValue> {
        match self {
            Channel::ServoBoard { channel, .. } => Some(DeviceValue::Off { channel: *channel }),
            Channel::PressureRegulator { channel, map, .. } => {
                let volts = match map {
                    PressureMap::Linear { volts_min, .. } => *volts_min,
                    PressureMap::Table(points) => points[0].1,
                };
                Some(DeviceValue::Analog { channel: *channel, volts })
            }
            Channel::Valve { line, active_high } => Some(DeviceValue::Digital { line: *line, high: !*active_high }),
            Channel::Thruster { channel, .. } => Some(DeviceValue::Board { channel: *channel, value: 0.0 }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_regulator_maps_full_scale_to_ten_volts() {
        let map = PressureMap::Linear { full_scale_bar: 5.0, volts_min: 0.0, volts_max: 10.0 };
        assert_eq!(map.volts(2.5), 5.0);
        assert_eq!(map.volts(7.0), 10.0);
        assert_eq!(map.volts(-1.0), 0.0);
    }

    #[test]
    fn bar_inverts_volts() {
        let linear = PressureMap::Linear { full_scale_bar: 9.0, volts_min: 0.0, volts_max: 10.0 };
        let table = PressureMap::table_from_csv("t.csv", "0,0.1\n1,2.0\n3,6.2\n").unwrap();
        for map in [linear, table] {
            for bar in [0.0, 0.4, 1.0, 2.2, 3.0] {
                assert!((map.bar(map.volts(bar)) - bar).abs() < 1e-12, "{map:?} {bar}");
            }
        }
    }

    #[test]
    fn calibration_table_interpolates_and_reports_bad_lines() {
        let map = PressureMap::table_from_csv("pma1.csv", "bar,volts\n0,0.1\n1,2.0\n3,6.2\n").unwrap();
        assert!((map.volts(2.0) - 4.1).abs() < 1e-12);
        assert_eq!(map.volts(5.0), 6.2);
        let e = PressureMap::table_from_csv("pma1.csv", "0,0\n1,x\n").unwrap_err();
        assert!(e.0.starts_with("pma1.csv:2:"), "{e}");
        let e = PressureMap::table_from_csv("pma1.csv", "0,0\n1,2\n0.5,3\n").unwrap_err();
        assert!(e.0.contains("strictly increasing"), "{e}");
    }

    #[test]
    fn safe_values_vent_close_and_stop() {
        let regulator = Channel::PressureRegulator {
            channel: 3,
            map: PressureMap::Linear { full_scale_bar: 5.0, volts_min: 0.0, volts_max: 10.0 },
            extension: None,
        };
        assert_eq!(regulator.safe_value(), Some(DeviceValue::Analog { channel: 3, volts: 0.0 }));
        let valve = Channel::Valve { line: 2, active_high: false };
        assert_eq!(valve.safe_value(), Some(DeviceValue::Digital { line: 2, high: true }));
        assert_eq!(
            valve.device_value(ActuatorCommand::Valve(true)).unwrap(),
            DeviceValue::Digital { line: 2, high: false }
        );
        let muscle = Channel::PressureRegulator {
            channel: 0,
            map: PressureMap::Linear { full_scale_bar: 5.0, volts_min: 0.0, volts_max: 10.0 },
            extension: Some(LengthToPressure { metres_per_bar: 0.01875 }),
        };
        let v = muscle.device_value(ActuatorCommand::MuscleExtension(0.0375)).unwrap();
        assert_eq!(v, DeviceValue::Analog { channel: 0, volts: 4.0 });
        assert!(valve.device_value(ActuatorCommand::Pressure(1.0)).is_err());
    }
}
