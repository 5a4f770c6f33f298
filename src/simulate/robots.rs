//! The robots this binary knows, as the generated crate's registry lists them, and dispatch
//! from a name given on the command line to generic code.

pub use softgen_generated::ROBOTS;
use softgen_runtime::{CoordinateKind, Model, RunConfigFile};
pub use softgen_runtime::{RobotInfo, RobotVisitor};

/// Calls `visitor` with the robot named `name`, or says which names exist.
pub fn with_robot<V: RobotVisitor>(name: &str, visitor: V) -> Result<V::Output, String> {
    softgen_generated::visit_robot(name, visitor).ok_or_else(|| {
        let known: Vec<&str> = ROBOTS.iter().map(|robot| robot.name).collect();
        format!("unknown robot `{name}`; known robots: {}", known.join(", "))
    })
}

/// The run configuration the robot named `name` comes with (its spec's sibling
/// `<name>.run.toml`), if it has one.
pub fn run_config_of(name: &str) -> Option<RunConfigFile> {
    ROBOTS.iter().find(|robot| robot.name == name).and_then(|robot| robot.run_config)
}

/// Whether the robot named `name` has soft sections whose coordinates the dynamics move (an
/// actuator length or a curvature not prescribed by a valve): their elastic forces make it
/// stiff, which picks the integrator `auto` chooses. Valve-driven sections follow their
/// responses in closed form and are not stiff.
pub fn has_soft_sections(name: &str) -> Result<bool, String> {
    struct SoftSections;
    impl RobotVisitor for SoftSections {
        type Output = bool;
        fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> bool {
            R::COORDINATES.iter().enumerate().any(|(i, c)| {
                matches!(c.kind, CoordinateKind::ActuatorLength | CoordinateKind::Curvature) && !R::VALVES.contains(&i)
            })
        }
    }
    with_robot(name, SoftSections)
}

/// The robot's name: visiting with it checks that a robot exists.
pub struct RobotName;

impl RobotVisitor for RobotName {
    type Output = &'static str;
    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> &'static str {
        R::NAME
    }
}

/// Checks that every name in `names` is a parameter of the robot.
pub struct KnownParameters<'a>(pub &'a [&'a str]);

impl RobotVisitor for KnownParameters<'_> {
    type Output = Result<(), String>;
    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Result<(), String> {
        known_parameters::<R::Params>(R::NAME, self.0.iter().copied())
    }
}

/// Checks that every name is one of `P`'s parameters; the error names the robot and lists
/// them.
pub fn known_parameters<'a, P: softgen_runtime::ParamSet>(
    robot: &str,
    mut names: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let known = P::names();
    match names.find(|n| !known.contains(n)) {
        None => Ok(()),
        Some(name) => Err(format!("`{name}` is not a parameter of {robot}; its parameters are {}", known.join(", "))),
    }
}
