//! Safety between controller and device: non-finite commands never pass, pressures are
//! clamped to a ceiling that never exceeds the actuator rating, every command is rate
//! limited, and a watchdog trips on a streak of missed deadlines.

use crate::hardware::actuation::ActuatorCommand;
use std::fmt;

/// Limits applied to every command.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SafetyLimits {
    /// Highest pressure sent (bar); the default 3 bar is the seed papers' working ceiling.
    pub pressure_ceiling: f64,
    /// The actuators' rating (bar): the ceiling is never allowed above it (4 bar for the
    /// seed PMAs).
    pub actuator_rating: f64,
    /// Fastest pressure change (bar/s).
    pub pressure_rate: f64,
    /// Fastest joint-angle change (rad/s).
    pub joint_rate: f64,
    /// Largest thrust magnitude (N) and fastest change (N/s).
    pub thrust_limit: f64,
    /// See `thrust_limit`.
    pub thrust_rate: f64,
    /// The watchdog's tolerance (s): how long after it was due a command may go out, that
    /// is how long the robot may go without the command its schedule calls for.
    pub command_timeout: f64,
}

impl Default for SafetyLimits {
    fn default() -> Self {
        SafetyLimits {
            pressure_ceiling: 3.0,
            actuator_rating: 4.0,
            pressure_rate: 30.0,
            joint_rate: 20.0,
            thrust_limit: 10.0,
            thrust_rate: 100.0,
            // 50 ms: above the scheduling hiccups of a loaded machine without real-time
            // priority (up to 14 ms measured), and short against a pneumatic section's response.
            command_timeout: 0.05,
        }
    }
}

impl SafetyLimits {
    /// Checks every limit finite and positive, the ceiling within the rating and the timeout in (0,
    /// 10] s.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("pressure ceiling", self.pressure_ceiling),
            ("actuator rating", self.actuator_rating),
            ("pressure rate", self.pressure_rate),
            ("joint rate", self.joint_rate),
            ("thrust limit", self.thrust_limit),
            ("thrust rate", self.thrust_rate),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("safety {name} must be a finite number > 0, got {v}"));
            }
        }
        if self.pressure_ceiling > self.actuator_rating {
            return Err(format!(
                "pressure ceiling {} bar is above the actuator rating {} bar",
                self.pressure_ceiling, self.actuator_rating
            ));
        }
        check_command_timeout(self.command_timeout)
    }
}

/// The watchdog's tolerance must be a positive time of at most 10 s.
pub(crate) fn check_command_timeout(seconds: f64) -> Result<(), String> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 10.0) {
        return Err(format!("safety command timeout must be in (0, 10] s, got {seconds}"));
    }
    Ok(())
}

/// Why the safety layer stopped a run.
#[derive(Clone, Debug, PartialEq)]
pub enum SafetyFault {
    /// A command that is not finite.
    NonFinite {
        /// The actuator's index.
        actuator: usize,
    },
    /// A command went out `late` seconds after it was due, more than the `limit`.
    StaleCommand {
        /// How late (s).
        late: f64,
        /// The watchdog's tolerance (s).
        limit: f64,
    },
    /// The controller failed.
    Controller(String),
    /// The device failed.
    Device(String),
    /// A signal (SIGINT, SIGTERM) stopped the run.
    Signal(i32),
}

impl fmt::Display for SafetyFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SafetyFault::NonFinite { actuator } => write!(f, "actuator {actuator} was commanded a non-finite value"),
            SafetyFault::StaleCommand { late, limit } => write!(
                f,
                "a command went out {:.1} ms after it was due, more than the watchdog allows ({:.1} ms, safety.command_timeout)",
                late * 1e3,
                limit * 1e3
            ),
            SafetyFault::Controller(e) => write!(f, "controller error: {e}"),
            SafetyFault::Device(e) => write!(f, "device error: {e}"),
            SafetyFault::Signal(s) => write!(f, "stopped by signal {s}"),
        }
    }
}

impl std::error::Error for SafetyFault {}

/// Per-actuator clamp and rate limit, holding each actuator's last passed command.
#[derive(Clone, Debug)]
pub struct SafetyFilter {
    /// The limits applied.
    pub limits: SafetyLimits,
    last: Vec<Option<f64>>,
    /// Commands changed by a clamp or rate limit so far.
    pub limited: u64,
}

impl SafetyFilter {
    /// A filter for `actuators` outputs; allocates here, never in `apply`.
    pub fn new(limits: SafetyLimits, actuators: usize) -> Result<Self, String> {
        limits.validate()?;
        Ok(SafetyFilter { limits, last: vec![None; actuators], limited: 0 })
    }

    /// Takes `value` as actuator `actuator`'s last passed command, so that its rate limit
    /// holds from it: a servo's first set point then moves from the pose the robot starts
    /// in instead of jumping to wherever a controller's first command is.
    pub fn start_from(&mut self, actuator: usize, value: f64) {
        self.last[actuator] = Some(value);
    }

    fn limit(&mut self, actuator: usize, value: f64, low: f64, high: f64, rate: f64, dt: f64) -> f64 {
        let mut v = value.clamp(low, high);
        if let Some(previous) = self.last[actuator] {
            let step = rate * dt;
            v = v.clamp(previous - step, previous + step);
        }
        if v != value {
            self.limited += 1;
        }
        self.last[actuator] = Some(v);
        v
    }

    /// The command that may reach actuator `actuator` after `dt` seconds since the last.
    pub fn apply(
        &mut self,
        actuator: usize,
        command: ActuatorCommand,
        dt: f64,
    ) -> Result<ActuatorCommand, SafetyFault> {
        let l = self.limits;
        Ok(match command {
            ActuatorCommand::JointAngle(a) if a.is_finite() => {
                ActuatorCommand::JointAngle(self.limit(actuator, a, f64::MIN, f64::MAX, l.joint_rate, dt))
            }
            ActuatorCommand::Pressure(p) if p.is_finite() => {
                let ceiling = l.pressure_ceiling.min(l.actuator_rating);
                ActuatorCommand::Pressure(self.limit(actuator, p, 0.0, ceiling, l.pressure_rate, dt))
            }
            ActuatorCommand::Thrust(t) if t.is_finite() => {
                ActuatorCommand::Thrust(self.limit(actuator, t, -l.thrust_limit, l.thrust_limit, l.thrust_rate, dt))
            }
            ActuatorCommand::Valve(open) => ActuatorCommand::Valve(open),
            ActuatorCommand::MuscleExtension(_) => {
                return Err(SafetyFault::Controller(
                    "muscle extensions must be converted to pressure before the safety filter".into(),
                ))
            }
            _ => return Err(SafetyFault::NonFinite { actuator }),
        })
    }
}

/// Trips after `limit` consecutive missed deadlines.
#[derive(Clone, Copy, Debug)]
pub struct Watchdog {
    /// Tolerance (s).
    pub limit: f64,
}

impl Watchdog {
    /// A watchdog with tolerance `limit` (s).
    pub fn new(limit: f64) -> Self {
        Watchdog { limit }
    }

    /// Records that a command went out `late` seconds after it was due; a fault when that
    /// exceeds the tolerance.
    pub fn record(&self, late: f64) -> Result<(), SafetyFault> {
        if late > self.limit {
            return Err(SafetyFault::StaleCommand { late, limit: self.limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_joint_is_rate_limited_from_its_first_command() {
        let limits = SafetyLimits { joint_rate: 10.0, ..SafetyLimits::default() };
        let (mut started, mut fresh) = (SafetyFilter::new(limits, 1).unwrap(), SafetyFilter::new(limits, 1).unwrap());
        started.start_from(0, 0.2);
        let first = |f: &mut SafetyFilter| f.apply(0, ActuatorCommand::JointAngle(-1.1), 0.001).unwrap();
        assert_eq!(first(&mut started), ActuatorCommand::JointAngle(0.2 - 10.0 * 0.001));
        assert_eq!(started.limited, 1);
        assert_eq!(first(&mut fresh), ActuatorCommand::JointAngle(-1.1));
        assert_eq!(fresh.limited, 0);
    }

    #[test]
    fn pressure_is_clamped_and_rate_limited() {
        let mut f = SafetyFilter::new(SafetyLimits::default(), 2).unwrap();
        // First command: only the ceiling applies.
        assert_eq!(f.apply(0, ActuatorCommand::Pressure(5.0), 0.001).unwrap(), ActuatorCommand::Pressure(3.0));
        // Then at most 30 bar/s * 1 ms = 0.03 bar per period.
        assert_eq!(f.apply(0, ActuatorCommand::Pressure(0.0), 0.001).unwrap(), ActuatorCommand::Pressure(2.97));
        assert_eq!(f.apply(1, ActuatorCommand::Pressure(-1.0), 0.001).unwrap(), ActuatorCommand::Pressure(0.0));
        assert_eq!(f.limited, 3);
    }

    #[test]
    fn non_finite_commands_never_pass() {
        let mut f = SafetyFilter::new(SafetyLimits::default(), 1).unwrap();
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for command in
                [ActuatorCommand::Pressure(bad), ActuatorCommand::JointAngle(bad), ActuatorCommand::Thrust(bad)]
            {
                assert_eq!(f.apply(0, command, 0.001), Err(SafetyFault::NonFinite { actuator: 0 }));
            }
        }
    }

    #[test]
    fn ceiling_above_rating_is_rejected() {
        let limits = SafetyLimits { pressure_ceiling: 4.5, ..SafetyLimits::default() };
        assert!(SafetyFilter::new(limits, 1).unwrap_err().contains("above the actuator rating"));
    }

    #[test]
    fn watchdog_trips_on_a_late_command_only() {
        let w = Watchdog::new(0.05);
        assert!(w.record(0.0).is_ok() && w.record(0.014).is_ok() && w.record(0.05).is_ok());
        assert_eq!(w.record(0.051), Err(SafetyFault::StaleCommand { late: 0.051, limit: 0.05 }));
        for bad in [0.0, -1.0, 11.0, f64::NAN] {
            let limits = SafetyLimits { command_timeout: bad, ..SafetyLimits::default() };
            assert!(limits.validate().unwrap_err().contains("command timeout"), "{bad}");
        }
    }
}
