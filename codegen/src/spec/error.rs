//! One problem in a spec file with where it is, and the rule for the names a spec may give:
//! shared by validation and by the URDF import that validation runs, below both.

use std::fmt;

/// One problem in a spec file.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
        } else {
            write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.column, self.field, self.message)
        }
    }
}

/// All problems found in one spec.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

/// A name usable in generated code: an ASCII letter, then letters, digits and `_`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
