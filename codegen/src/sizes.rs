//! The generated modules' size: lines by kind of kernel, read back from a module's text, and
//! the budget each module is held to (codegen/size-budget.toml), so that growth of the
//! generated code is a decision, not an accident.
//!
//! Kinds are the modules' top-level items with the numbers in their names folded
//! (`contact_jacobian_0` .. `contact_jacobian_309` are one kind, `contact_jacobian_N`), so a
//! kernel emitted once per point or per frame shows as one row with its count.

use std::collections::BTreeMap;
use std::path::Path;

/// The budget file, relative to the workspace.
pub const SIZE_BUDGET_PATH: &str = "codegen/size-budget.toml";

/// One kind of top-level item of a generated module: how many there are and their lines
/// (each with its doc comment and attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSize {
    /// The item's name with its numbers folded to `N`: `fn contact_jacobian_N`,
    /// `impl Model`, `struct Cache`, `const CONTACT_FRAME_PATH`; `header` for what precedes
    /// the first item.
    pub kind: String,
    /// How many items of this kind the module has.
    pub items: usize,
    /// Their lines together.
    pub lines: usize,
}

/// What a generated module is built for, read from its constants: its coordinates (`DOF`)
/// and contact points (`CONTACTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Structure {
    /// Generalized coordinates.
    pub coordinates: usize,
    /// Contact points.
    pub contact_points: usize,
}

/// The value of `pub const NAME: usize = value;` in a module, if it has one.
fn usize_constant(source: &str, name: &str) -> Option<usize> {
    let prefix = format!("pub const {name}: usize = ");
    source.lines().find_map(|line| line.strip_prefix(&prefix)?.strip_suffix(';')?.trim().parse().ok())
}

/// A generated module's structure, or `None` if its text has no `DOF` constant (it is not a
/// robot's module).
pub fn module_structure(source: &str) -> Option<Structure> {
    Some(Structure {
        coordinates: usize_constant(source, "DOF")?,
        contact_points: usize_constant(source, "CONTACTS").unwrap_or(0),
    })
}

/// `name` with every run of digits that forms a whole `_`-separated part replaced by `N`.
fn fold_numbers(name: &str) -> String {
    name.split('_')
        .map(|part| if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) { "N" } else { part })
        .collect::<Vec<_>>()
        .join("_")
}

/// The kind of the item a top-level line starts, or `None` if the line starts no item (a
/// closing brace, a blank line, a doc comment or attribute, which belong to the next item).
fn item_kind(line: &str) -> Option<String> {
    if line.starts_with(char::is_whitespace) || line.is_empty() {
        return None;
    }
    let mut words = line.split(|c: char| c.is_whitespace() || c == '(' || c == '<' || c == ':' || c == '{' || c == ';');
    let mut word = words.next()?;
    if word == "pub" || word.starts_with("pub(") {
        word = words.next()?;
    }
    if word == "crate)" || word == "super)" {
        word = words.next()?;
    }
    match word {
        "fn" | "struct" | "enum" | "const" | "static" | "type" | "mod" | "trait" => {
            let name = words.find(|w| !w.is_empty())?;
            Some(format!("{word} {}", fold_numbers(name)))
        }
        "impl" => {
            // `impl Trait for Type {`, `impl<const N: usize> Trait<N> for Type`, `impl Type {`:
            // the first path after the generics.
            let mut rest = line.trim_start_matches("pub ").strip_prefix("impl")?;
            if rest.starts_with('<') {
                let mut depth = 0;
                let end = rest.char_indices().find_map(|(i, c)| {
                    depth += match c {
                        '<' => 1,
                        '>' => -1,
                        _ => 0,
                    };
                    (depth == 0).then_some(i + 1)
                })?;
                rest = &rest[end..];
            }
            let rest = rest.trim_start();
            let path_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            Some(format!("impl {}", &rest[..path_end]))
        }
        "use" => Some("use".to_string()),
        _ => None,
    }
}

/// Lines of a generated module by kind of top-level item, largest first (ties by kind).
/// Doc comments and attributes count with the item they precede; the lines before the first
/// item (the file's header) are the kind `header`.
pub fn kernel_sizes(source: &str) -> Vec<KernelSize> {
    let mut sizes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut current = "header".to_string();
    let mut pending = 0;
    for line in source.lines() {
        // Doc comments and outer attributes at column zero belong to the item they precede;
        // the file's inner doc and attributes (`//!`, `#![`) to its header.
        let column_zero_prelude = line.starts_with("///") || line.starts_with("#[");
        if let Some(kind) = item_kind(line).filter(|_| !column_zero_prelude) {
            let entry = sizes.entry(kind.clone()).or_default();
            entry.0 += 1;
            entry.1 += pending + 1;
            pending = 0;
            current = kind;
        } else if column_zero_prelude || line.is_empty() {
            // A doc comment, an attribute or a blank line between items: the next item's.
            pending += 1;
        } else {
            sizes.entry(current.clone()).or_default().1 += pending + 1;
            pending = 0;
        }
    }
    if pending > 0 {
        sizes.entry(current).or_default().1 += pending;
    }
    let mut sizes: Vec<KernelSize> =
        sizes.into_iter().map(|(kind, (items, lines))| KernelSize { kind, items, lines }).collect();
    sizes.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.kind.cmp(&b.kind)));
    sizes
}

/// The most lines a robot's module may have: listed robots their own number, any other robot
/// a formula of its structure.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeBudget {
    /// Lines every module may have whatever its structure.
    pub base: usize,
    /// Lines allowed per squared coordinate count (the dynamics and their derivatives grow
    /// with it).
    pub per_coordinate_squared: usize,
    /// Lines allowed per contact point.
    pub per_contact_point: usize,
    /// The listed robots' budgets, by robot name.
    pub robots: BTreeMap<String, usize>,
}

impl SizeBudget {
    /// Reads the budget file `path` (see [`SIZE_BUDGET_PATH`]): a clear error naming the file
    /// and what in it is wrong.
    pub fn load(path: &Path) -> Result<SizeBudget, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a budget file's text.
    pub fn parse(text: &str) -> Result<SizeBudget, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.message().to_string())?;
        let count = |value: &toml::Value, key: &str| -> Result<usize, String> {
            value
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("`{key}` must be a whole number of lines, not {value}"))
        };
        let mut budget =
            SizeBudget { base: 0, per_coordinate_squared: 0, per_contact_point: 0, robots: BTreeMap::new() };
        for (key, value) in &table {
            match key.as_str() {
                "default" => {
                    let default = value.as_table().ok_or("`default` must be a table")?;
                    for (key, value) in default {
                        let slot = match key.as_str() {
                            "base" => &mut budget.base,
                            "per_coordinate_squared" => &mut budget.per_coordinate_squared,
                            "per_contact_point" => &mut budget.per_contact_point,
                            _ => return Err(format!("unknown key `default.{key}` (expected base, per_coordinate_squared, per_contact_point)")),
                        };
                        *slot = count(value, &format!("default.{key}"))?;
                    }
                }
                "robots" => {
                    let robots = value.as_table().ok_or("`robots` must be a table of robot = lines")?;
                    for (name, value) in robots {
                        budget.robots.insert(name.clone(), count(value, &format!("robots.{name}"))?);
                    }
                }
                _ => return Err(format!("unknown table `{key}` (expected default, robots)")),
            }
        }
        if budget.base == 0 {
            return Err("`default.base` is missing or zero".into());
        }
        Ok(budget)
    }

    /// The most lines robot `name` of this structure may have, and whether it is listed by
    /// name (otherwise it is the default formula's).
    pub fn allowed(&self, name: &str, structure: Structure) -> (usize, bool) {
        match self.robots.get(name) {
            Some(&lines) => (lines, true),
            None => (
                self.base
                    + self.per_coordinate_squared * structure.coordinates * structure.coordinates
                    + self.per_contact_point * structure.contact_points,
                false,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
//! header
use softgen_runtime::nalgebra::SVector;
/// Number of generalized coordinates.
pub const DOF: usize = 3;
pub const CONTACTS: usize = 2;
/// Jacobian of point 0.
#[inline]
pub fn contact_jacobian_0(q: &SVector<f64, DOF>) {
    let x = q[0];
}

/// Jacobian of point 1.
pub fn contact_jacobian_1(q: &SVector<f64, DOF>) {
    let x = q[1];
}
impl Model<3, 2> for Robot {
    fn dof() -> usize {
        3
    }
}
pub const CONTACT_POINT_FRAME: &[u16] = &[
    0,
    1,
];
";

    #[test]
    fn a_modules_lines_go_to_the_items_they_belong_to() {
        let sizes = kernel_sizes(MODULE);
        let lines = |kind: &str| sizes.iter().find(|s| s.kind == kind).map(|s| (s.items, s.lines));
        assert_eq!(lines("fn contact_jacobian_N"), Some((2, 10)));
        assert_eq!(lines("impl Model"), Some((1, 5)));
        assert_eq!(lines("const CONTACT_POINT_FRAME"), Some((1, 4)));
        assert_eq!(lines("const DOF"), Some((1, 2)));
        assert_eq!(lines("header"), Some((0, 1)));
        assert_eq!(sizes.iter().map(|s| s.lines).sum::<usize>(), MODULE.lines().count());
        assert_eq!(module_structure(MODULE), Some(Structure { coordinates: 3, contact_points: 2 }));
    }

    #[test]
    fn numbers_fold_only_as_whole_parts() {
        assert_eq!(fold_numbers("contact_jacobian_12"), "contact_jacobian_N");
        assert_eq!(fold_numbers("frame_3_jacobian"), "frame_N_jacobian");
        assert_eq!(fold_numbers("mass_matrix_into"), "mass_matrix_into");
        assert_eq!(fold_numbers("section2_ring"), "section2_ring");
    }

    #[test]
    fn a_budget_lists_robots_and_falls_back_to_its_formula() {
        let budget = SizeBudget::parse(
            "[default]\nbase = 1000\nper_coordinate_squared = 10\nper_contact_point = 5\n[robots]\nbig = 50_000\n",
        )
        .unwrap();
        let structure = Structure { coordinates: 4, contact_points: 2 };
        assert_eq!(budget.allowed("big", structure), (50_000, true));
        assert_eq!(budget.allowed("new_robot", structure), (1000 + 160 + 10, false));
        for (text, error) in [
            ("[default]\nbase = -1\n", "`default.base` must be a whole number"),
            ("[default]\nbase = 1\nper_point = 2\n", "unknown key `default.per_point`"),
            ("[default]\nbase = 1\n[robots]\nsnake = \"big\"\n", "`robots.snake` must be a whole number"),
            ("[robots]\n", "`default.base` is missing"),
            ("[limits]\n", "unknown table `limits`"),
        ] {
            let message = SizeBudget::parse(text).unwrap_err();
            assert!(message.contains(error), "{text:?}: {message}");
        }
    }
}
