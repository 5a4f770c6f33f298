//! softgen codegen: parse and validate a robot spec, derive its equations of motion with
//! symbolica, and emit allocation-free Rust for them.
//!
//! Symbolica runs restricted without a licence key (one thread per user at a time), so
//! nothing here spawns threads and tests that call it run one at a time.

mod algorithms;
mod dag;
#[cfg(feature = "oracle")]
mod derive;
mod emit;
mod generate;
mod model;
mod registry;
mod scaling;
mod sizes;
mod spec;
mod symbolic;

pub use dag::equations::Equations;
#[cfg(feature = "oracle")]
pub use derive::{derive, Derived};
pub use emit::camel;
#[cfg(feature = "oracle")]
pub use generate::{expanded_equations, symbolic_report};
pub use generate::{
    fixture_robot, generate_file, generate_fixture, generate_out_of_tree, generate_source, is_spec_file, load_file,
    recursive_equations, workspace_files, GenerateError, Generated, StageTimes,
};
pub use model::Robot;
pub use registry::{
    app_package, robot_crate_path, robot_module_path, robot_package, APP_CRATES, FIXTURE_CRATES, ROBOT_CRATES,
};
pub use scaling::{is_scaling_fixture, planar_snake_spec, scaling_name, SCALING_LINKS};
pub use sizes::{kernel_sizes, module_structure, KernelSize, SizeBudget, Structure, SIZE_BUDGET_PATH};
pub use spec::expr::{parse as parse_expression, Expr, Number, ParseError};
pub use spec::validate::{load, load_in, SpecError, SpecErrors};
pub use symbolic::section::{kinematics_report, section_kinematics, SectionKinematics};
