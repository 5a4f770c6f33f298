//! softgen codegen: parse and validate a robot spec, derive its equations of motion with
//! symbolica, and emit allocation-free Rust for them.
//!
//! Symbolica runs restricted without a licence key (one thread per user at a time), so
//! nothing here spawns threads and tests that call it run one at a time.

mod dag;
mod derive;
mod emit;
mod emit_soft;
mod expr;
mod generate;
mod model;
mod spec;
mod validate;

pub use derive::{derive, Derived};
pub use emit::emit;
pub use expr::{parse as parse_expression, Expr, Number, ParseError};
pub use emit::camel;
pub use generate::{generate_file, generate_source, is_spec_file, symbolic_report, GenerateError, Generated};
pub use model::Robot;
pub use validate::{load, SpecError, SpecErrors};
