//! The physical range of every kind of number a robot, its environment and a run take
//! (masses, lengths, stiffnesses, friction, pressures, times, ...), checked before anything
//! runs: a value outside it is a typing slip (1e300 for 300, a missing decimal point), and a
//! run that started with it would fail steps later with a message blaming the integrator.
//!
//! The ranges are generous on purpose: they admit every robot that could be built (a
//! hundred-tonne machine, a steel-on-steel contact, a hydraulic pressure) and refuse only
//! what none could have. They also keep products finite: a contact stiffness at its ceiling
//! times a metre of penetration is 1e10 N, far from overflow.

/// What kind of number a value is, and the interval a physical one lies in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicalRange {
    /// What the number is, for messages ("a body's mass").
    pub quantity: &'static str,
    /// Its unit as written in specs and run configurations ("kg").
    pub unit: &'static str,
    /// The lowest value accepted.
    pub low: f64,
    /// The highest value accepted.
    pub high: f64,
}

impl PhysicalRange {
    const fn new(quantity: &'static str, unit: &'static str, low: f64, high: f64) -> PhysicalRange {
        PhysicalRange { quantity, unit, low, high }
    }

    /// Checks `value` of `name`: finite and within the range, else a message naming the
    /// value, the quantity and the range.
    pub fn check(&self, name: &str, value: f64) -> Result<(), String> {
        match self.problem(value) {
            None => Ok(()),
            Some(problem) => Err(format!("{name} {problem}")),
        }
    }

    /// What is wrong with `value` ("= 1e308 kg is outside the physical range of a mass, 0
    /// to 1e5 kg"), or None when it is in range.
    pub fn problem(&self, value: f64) -> Option<String> {
        if value.is_finite() && value >= self.low && value <= self.high {
            return None;
        }
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        Some(format!(
            "= {}{unit} is outside the physical range of {}, {} to {}{unit}",
            readable(value),
            self.quantity,
            readable(self.low),
            readable(self.high)
        ))
    }
}

/// A number as a person reads it: 0, 0.25, 1e5, 1e-9 (and 1e308, not 309 digits).
pub(crate) fn readable(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-3..1e4).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A body's mass, or an added mass: a hundred tonnes is more than any robot's.
pub const MASS: PhysicalRange = PhysicalRange::new("a mass", "kg", 0.0, 1e5);
/// An entry of an inertia tensor (off-diagonal ones may be negative): a hundred tonnes at
/// ten metres.
pub const INERTIA: PhysicalRange = PhysicalRange::new("a moment of inertia", "kg m^2", -1e7, 1e7);
/// A length, radius or distance of a robot or its terrain: a kilometre.
pub const LENGTH: PhysicalRange = PhysicalRange::new("a length", "m", 0.0, 1e3);
/// A position or offset, either sign.
pub const POSITION: PhysicalRange = PhysicalRange::new("a position", "m", -1e3, 1e3);
/// Gravitational acceleration: a hundred g.
pub const GRAVITY: PhysicalRange = PhysicalRange::new("gravitational acceleration", "m/s^2", 0.0, 1e3);
/// A contact's normal stiffness: steel on steel is about 1e9 N/m.
pub const CONTACT_STIFFNESS: PhysicalRange = PhysicalRange::new("a contact stiffness", "N/m", 0.0, 1e10);
/// A contact's normal damping.
pub const CONTACT_DAMPING: PhysicalRange = PhysicalRange::new("a contact damping", "N s/m", 0.0, 1e8);
/// A Hunt-Crossley dissipation h (the damping per unit of spring force): at an approach
/// speed of 1/h the damper doubles the spring. Rubber on hard ground is 0.1 to 10 s/m; a
/// soft skin resting a fraction of a millimetre deep on a carpet needs thousands.
pub const CONTACT_DISSIPATION: PhysicalRange = PhysicalRange::new("a contact dissipation", "s/m", 0.0, 1e6);
/// A friction coefficient: rubber on rough ground is about 1, adhesive pads a few.
pub const FRICTION: PhysicalRange = PhysicalRange::new("a friction coefficient", "", 0.0, 10.0);
/// The slip speed over which friction is smoothed.
pub const FRICTION_REGULARISATION: PhysicalRange =
    PhysicalRange::new("a friction regularisation speed", "m/s", 0.0, 10.0);
/// A soft section's stiffness or a joint's (bending, N m/rad; extension, N/m).
pub const ELASTIC_STIFFNESS: PhysicalRange = PhysicalRange::new("a stiffness", "N m/rad or N/m", 0.0, 1e9);
/// A soft section's damping or a joint's.
pub const ELASTIC_DAMPING: PhysicalRange = PhysicalRange::new("a damping", "N m s/rad or N s/m", 0.0, 1e9);
/// A pressure or a stress coefficient (hyperelastic, viscous): a gigapascal is past any
/// hydraulic line and any elastomer; Yeoh's higher coefficients may be negative.
pub const PRESSURE: PhysicalRange = PhysicalRange::new("a pressure", "Pa", -1e9, 1e9);
/// A rated (gauge) pressure, which is positive.
pub const RATED_PRESSURE: PhysicalRange = PhysicalRange::new("a rated pressure", "Pa", 0.0, 1e9);
/// An area (an actuator's, a cross-section's).
pub const AREA: PhysicalRange = PhysicalRange::new("an area", "m^2", 0.0, 1e2);
/// A time constant or lag: hours.
pub const TIME_CONSTANT: PhysicalRange = PhysicalRange::new("a time constant", "s", 0.0, 1e4);
/// A fluid's density: mercury's is 1.35e4 kg/m^3.
pub const DENSITY: PhysicalRange = PhysicalRange::new("a density", "kg/m^3", 0.0, 2.5e4);
/// A dimensionless coefficient (drag, added mass, a power-law index).
pub const COEFFICIENT: PhysicalRange = PhysicalRange::new("a dimensionless coefficient", "", 0.0, 1e2);
/// A linear drag (N s/m or N m s/rad).
pub const LINEAR_DRAG: PhysicalRange = PhysicalRange::new("a linear drag", "N s/m", 0.0, 1e6);
/// A speed.
pub const SPEED: PhysicalRange = PhysicalRange::new("a speed", "m/s", 0.0, 1e3);
/// A rate (a strain-rate scale, a frequency in rad/s).
pub const RATE: PhysicalRange = PhysicalRange::new("a rate", "1/s", 0.0, 1e6);
/// A time step or control period: from a nanosecond to ten seconds.
pub const TIME_STEP: PhysicalRange = PhysicalRange::new("a time step", "s", 1e-9, 10.0);
/// An integrator's relative tolerance.
/// (zero with a positive absolute one is pure absolute control; above 1 there is none).
pub const RELATIVE_TOLERANCE: PhysicalRange = PhysicalRange::new("a relative tolerance", "", 0.0, 1.0);
/// An integrator's absolute tolerance (in the state's units).
pub const ABSOLUTE_TOLERANCE: PhysicalRange = PhysicalRange::new("an absolute tolerance", "", 0.0, 1e3);
/// A joint angle or a gait's amplitude, offset or phase lag (rad): a few turns either way.
pub const ANGLE: PhysicalRange = PhysicalRange::new("an angle", "rad", -100.0, 100.0);
/// A gait's frequency (rad/s), either sign (the sign sets the direction of travel): far
/// above any actuator's bandwidth.
pub const FREQUENCY: PhysicalRange = PhysicalRange::new("a frequency", "rad/s", -1e4, 1e4);
/// A joint torque or force limit.
pub const TORQUE: PhysicalRange = PhysicalRange::new("a torque", "N m", 0.0, 1e7);
/// A controller's gain in its own units.
pub const GAIN: PhysicalRange = PhysicalRange::new("a controller gain", "", 0.0, 1e9);

/// Every kind of number above, in the order the book's reference lists them.
pub const QUANTITIES: &[PhysicalRange] = &[
    MASS,
    INERTIA,
    LENGTH,
    POSITION,
    GRAVITY,
    CONTACT_STIFFNESS,
    CONTACT_DAMPING,
    CONTACT_DISSIPATION,
    FRICTION,
    FRICTION_REGULARISATION,
    ELASTIC_STIFFNESS,
    ELASTIC_DAMPING,
    PRESSURE,
    RATED_PRESSURE,
    AREA,
    TIME_CONSTANT,
    DENSITY,
    COEFFICIENT,
    LINEAR_DRAG,
    SPEED,
    RATE,
    TIME_STEP,
    RELATIVE_TOLERANCE,
    ABSOLUTE_TOLERANCE,
    ANGLE,
    FREQUENCY,
    TORQUE,
    GAIN,
];

/// The spec's keys and the range of the values under them; a key is the last name of a
/// field path (`bodies[2] (link1).section.stiffness` has key `stiffness`).
const KEYS: &[(&str, PhysicalRange)] = &[
    ("mass", MASS),
    ("surge_added_mass", MASS),
    ("inertia", INERTIA),
    ("rest_length", LENGTH),
    ("length", LENGTH),
    ("disc_radius", LENGTH),
    ("actuator_radius", LENGTH),
    ("radius", LENGTH),
    ("gravity", GRAVITY),
    ("contact_stiffness", CONTACT_STIFFNESS),
    ("contact_damping", CONTACT_DAMPING),
    ("contact_dissipation", CONTACT_DISSIPATION),
    ("along", FRICTION),
    ("across", FRICTION),
    ("regularisation", FRICTION_REGULARISATION),
    ("stiffness", ELASTIC_STIFFNESS),
    ("damping", ELASTIC_DAMPING),
    ("rated_pressure", RATED_PRESSURE),
    ("yeoh", PRESSURE),
    ("consistency", PRESSURE),
    ("area", AREA),
    ("pressure_lag", TIME_CONSTANT),
    ("time_constants", TIME_CONSTANT),
    ("time_constant", TIME_CONSTANT),
    ("density", DENSITY),
    ("drag_coefficient", COEFFICIENT),
    ("added_mass_coefficient", COEFFICIENT),
    ("power_index", COEFFICIENT),
    ("surge_linear_drag", LINEAR_DRAG),
    ("roll_linear_drag", LINEAR_DRAG),
    ("reference_speed", SPEED),
    ("rate_scale", RATE),
    ("origin", POSITION),
    ("center_of_mass", POSITION),
    ("center_of_buoyancy", POSITION),
    ("positions", POSITION),
    ("position", POSITION),
];

/// Every spec key that has a physical range, with its range: the table the validator looks
/// keys up in, from which the book's reference of ranges is generated (tests/docs.rs).
pub fn spec_key_ranges() -> &'static [(&'static str, PhysicalRange)] {
    KEYS
}

/// The key of a field path: its last `.name`, without indices and annotations
/// (`actuators[0] (k = 1).response.time_constants[1]` -> `time_constants`).
pub fn field_key(field: &str) -> &str {
    let last = field.rsplit('.').next().unwrap_or(field);
    let end = last.find(['[', ' ', '(']).unwrap_or(last.len());
    &last[..end]
}

/// The physical range of the values of a spec field, if its key has one.
pub fn range_of_field(field: &str) -> Option<&'static PhysicalRange> {
    let key = field_key(field);
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, range)| range)
}

/// Checks a value of a spec field against its key's range (fields without one pass).
pub fn check_field(field: &str, value: f64) -> Result<(), String> {
    match range_of_field(field) {
        Some(range) => range.check(&format!("`{field}`"), value),
        None => Ok(()),
    }
}

/// As [`check_field`], but leaves a negative value of a field whose range starts at zero to
/// the sign rule the spec validator states in its own words ("must be > 0 kg, got -2").
pub fn check_field_magnitude(field: &str, value: f64) -> Result<(), String> {
    match range_of_field(field) {
        Some(range) if range.low == 0.0 && value < 0.0 => Ok(()),
        _ => check_field(field, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (field, value, expected error fragment or None when accepted).
    const CASES: &[(&str, f64, Option<&str>)] = &[
        ("bodies[1] (link1).mass", 0.25, None),
        (
            "bodies[1] (link1).mass",
            1e308,
            Some("`bodies[1] (link1).mass` = 1e308 kg is outside the physical range of a mass, 0 to 1e5 kg"),
        ),
        ("environment.contact_stiffness", 1e300, Some("a contact stiffness")),
        ("environment.contact_stiffness", 5e3, None),
        ("environment.friction.along", 1e300, Some("a friction coefficient")),
        ("environment.friction.along", -0.1, Some("a friction coefficient")),
        ("actuators[0] (k = 1).response.time_constants[1]", 1e9, Some("a time constant")),
        ("bodies[3] (joint1).section.material.yeoh[2]", -2e3, None),
        ("bodies[3] (joint1).section.stiffness", f64::NAN, Some("= NaN")),
        ("environment.gravity", 9.81, None),
        ("a.field.without.a.range", 1e300, None),
    ];

    #[test]
    fn every_keys_range_is_a_listed_quantity() {
        for (key, range) in KEYS {
            assert!(QUANTITIES.contains(range), "`{key}`: {} is not in QUANTITIES", range.quantity);
        }
    }

    #[test]
    fn fields_are_checked_against_their_key_range() {
        for (field, value, expected) in CASES {
            match (expected, check_field(field, *value)) {
                (None, Ok(())) => {}
                (Some(fragment), Err(message)) => {
                    assert!(message.contains(fragment), "{field}: `{message}` lacks `{fragment}`")
                }
                (expected, result) => panic!("{field} = {value}: expected {expected:?}, got {result:?}"),
            }
        }
    }

    #[test]
    fn keys_are_found_through_indices_and_annotations() {
        assert_eq!(field_key("actuators[0] (k = 1).response.time_constants[1]"), "time_constants");
        assert_eq!(field_key("bodies[2] (link1).mass"), "mass");
        assert_eq!(field_key("environment.gravity"), "gravity");
        assert_eq!(field_key("gravity"), "gravity");
    }
}
