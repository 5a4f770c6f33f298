//! The book's references of every key a spec and a run configuration take, generated from
//! the structs their parsers read them into: the fields, their types, which are required,
//! serde's defaults, the values of each choice and the doc comments beside the fields, with
//! a spec key's unit and range from the validator's table of physical ranges.
//!
//! A field's doc comment is its meaning; a last doc line `Default: ...` is its default where
//! the parser, not serde, fills it in. A field without a doc comment is an error here, so a
//! key cannot be added to a parser without being documented.

use std::collections::{BTreeMap, BTreeSet};
use syn::{Attribute, Fields, GenericArgument, Item, ItemEnum, ItemFn, ItemStruct, PathArguments, Type};

/// One parser's structs, enums and default functions, by name.
struct Items {
    structs: BTreeMap<String, ItemStruct>,
    enums: BTreeMap<String, ItemEnum>,
    functions: BTreeMap<String, ItemFn>,
}

impl Items {
    /// The items of every file in `paths`, together (a parser's structs may sit in several).
    fn read(paths: &[std::path::PathBuf]) -> Items {
        let mut items = Items { structs: BTreeMap::new(), enums: BTreeMap::new(), functions: BTreeMap::new() };
        for path in paths {
            items.add(path);
        }
        items
    }

    fn add(&mut self, path: &std::path::Path) {
        let items = self;
        let text = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for item in file.items {
            match item {
                Item::Struct(s) => {
                    items.structs.insert(s.ident.to_string(), s);
                }
                Item::Enum(e) => {
                    items.enums.insert(e.ident.to_string(), e);
                }
                Item::Fn(f) => {
                    items.functions.insert(f.sig.ident.to_string(), f);
                }
                _ => {}
            }
        }
    }
}

/// The doc comment's lines, each trimmed.
fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A doc comment as one Markdown table cell, and its `Default:` line's text if it has one.
fn meaning_and_default(attrs: &[Attribute]) -> (String, Option<String>) {
    let mut meaning = Vec::new();
    let mut default = None;
    for line in doc_lines(attrs) {
        match (line.strip_prefix("Default: "), &mut default) {
            (Some(text), _) => default = Some(text.to_string()),
            // A default that runs on over the next lines.
            (None, Some(text)) => *text = format!("{text} {line}"),
            (None, None) => meaning.push(line),
        }
    }
    let default = default.map(|text| text.trim_end_matches('.').replace('|', "\\|"));
    (meaning.join(" ").replace('|', "\\|"), default)
}

/// The `#[serde(...)]` arguments: `default`, `default = "f"`, `tag = "kind"`, `rename_all`.
fn serde_arguments(attrs: &[Attribute]) -> BTreeMap<String, Option<String>> {
    let mut arguments = BTreeMap::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            let value = match meta.value() {
                Ok(v) => Some(v.parse::<syn::LitStr>()?.value()),
                Err(_) => None,
            };
            arguments.insert(name, value);
            Ok(())
        })
        .unwrap();
    }
    arguments
}

/// `BodyAxis` -> `body_axis`, as serde's `rename_all = "snake_case"` spells a variant.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A variant's name as the file spells it.
fn variant_name(enumeration: &ItemEnum, variant: &syn::Variant) -> String {
    match serde_arguments(&enumeration.attrs).get("rename_all").cloned().flatten().as_deref() {
        Some("snake_case") => snake_case(&variant.ident.to_string()),
        Some("lowercase") => variant.ident.to_string().to_lowercase(),
        None => variant.ident.to_string(),
        Some(other) => panic!("{}: rename_all = {other:?} is not read here", enumeration.ident),
    }
}

/// How a field's value nests in the file, where it is a table of its own.
#[derive(Clone, Copy, PartialEq)]
enum Nesting {
    Table,
    ArrayOfTables,
    TablesByName,
}

/// What a field's type says to a reader.
struct Described {
    /// `number`, `3 values`, `array of strings`, `"air"` or `"water"`.
    text: String,
    /// `Option<...>`: the file may leave it out.
    optional: bool,
    /// A struct or tagged enum of the file that is a table of its own.
    nested: Option<(String, Nesting)>,
    /// A choice's documented values and their docs.
    choices: Vec<(String, String)>,
}

/// Types whose deserializer is written by hand, in words.
const HAND_WRITTEN: &[(&str, &str)] =
    &[("Value", "value"), ("Vector", "3 values"), ("Inertia", "value, or 3 or 6 values")];

fn plural(text: &str) -> String {
    if text.starts_with('`') || text.ends_with('s') {
        text.to_string()
    } else {
        format!("{text}s")
    }
}

fn generic_types(arguments: &PathArguments) -> Vec<&Type> {
    match arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn describe(ty: &Type, items: &Items) -> Result<Described, String> {
    let plain =
        |text: &str| Ok(Described { text: text.to_string(), optional: false, nested: None, choices: Vec::new() });
    // A struct or tagged enum of the file, which the reference writes as a table of its own.
    let table = |text: &str, name: String, nesting: Nesting| {
        Ok(Described { text: text.to_string(), optional: false, nested: Some((name, nesting)), choices: Vec::new() })
    };
    match ty {
        Type::Array(array) => {
            let inner = describe(&array.elem, items)?;
            let count = match &array.len {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => n.base10_digits().to_string(),
                _ => return Err("an array length that is not a number".into()),
            };
            plain(&format!("{count} {}", plural(&inner.text)))
        }
        Type::Path(path) => {
            let segment = path.path.segments.last().unwrap();
            let name = segment.ident.to_string();
            let arguments = generic_types(&segment.arguments);
            let qualified = path.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
            match name.as_str() {
                "Spanned" => describe(arguments[0], items),
                "Option" => Ok(Described { optional: true, ..describe(arguments[0], items)? }),
                "Vec" => {
                    let inner = describe(arguments[0], items)?;
                    match inner.nested {
                        Some((name, _)) => table("array of tables", name, Nesting::ArrayOfTables),
                        None if inner.text.starts_with("`\"") => {
                            Ok(Described { text: format!("array of {}", inner.text), ..inner })
                        }
                        None => plain(&format!("array of {}", plural(&inner.text))),
                    }
                }
                "BTreeMap" => {
                    let inner = describe(arguments[1], items)?;
                    match inner.nested {
                        Some((name, _)) => table("tables by name", name, Nesting::TablesByName),
                        None => plain(&format!("{} by name", plural(&inner.text))),
                    }
                }
                "String" => plain("string"),
                "f64" => plain("number"),
                "bool" => plain("`true` or `false`"),
                "i64" | "i32" | "u64" | "u16" | "usize" => plain("integer"),
                "Value" if qualified == "toml::Value" => plain("any (refused, see the meaning)"),
                _ => {
                    if let Some((_, text)) = HAND_WRITTEN.iter().find(|(n, _)| *n == name) {
                        return plain(text);
                    }
                    if items.structs.contains_key(&name) {
                        return table("table", name, Nesting::Table);
                    }
                    if let Some(enumeration) = items.enums.get(&name) {
                        if serde_arguments(&enumeration.attrs).contains_key("tag") {
                            return table("table", name, Nesting::Table);
                        }
                        let names: Vec<String> = enumeration
                            .variants
                            .iter()
                            .map(|v| format!("`\"{}\"`", variant_name(enumeration, v)))
                            .collect();
                        let choices = enumeration
                            .variants
                            .iter()
                            .map(|v| {
                                (format!("`\"{}\"`", variant_name(enumeration, v)), meaning_and_default(&v.attrs).0)
                            })
                            .filter(|(_, doc)| !doc.is_empty())
                            .collect();
                        return Ok(Described { choices, ..plain(&names.join(", "))? });
                    }
                    Err(format!("the type `{name}`, neither a struct nor an enum of the file: say in HAND_WRITTEN what it reads"))
                }
            }
        }
        _ => Err("a type that is neither a path nor an array".into()),
    }
}

/// What a default function returns, as the file spells it: `true`, or an enum's variant
/// (`Spanned::new(0..0, BodyKind::Rigid)` -> `"rigid"`).
fn returned_literal(function: &ItemFn) -> Option<String> {
    let syn::Stmt::Expr(expr, None) = function.block.stmts.last()? else { return None };
    let expr = match expr {
        syn::Expr::Call(call) => call.args.last()?,
        other => other,
    };
    match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) => Some(format!("`{}`", b.value)),
        syn::Expr::Path(path) => Some(format!("`\"{}\"`", snake_case(&path.path.segments.last()?.ident.to_string()))),
        _ => None,
    }
}

/// What a field takes when the file leaves it out, from serde's attributes or its doc.
fn default_of(field: &syn::Field, described: &Described, doc_default: Option<String>, items: &Items) -> String {
    let serde = serde_arguments(&field.attrs);
    if let Some(text) = doc_default {
        return text;
    }
    match serde.get("default") {
        Some(Some(function)) => match items.functions.get(function).and_then(|f| returned_literal(f)) {
            Some(text) => text,
            None => panic!("`{function}`: a default function that returns neither a literal nor an enum's variant"),
        },
        Some(None) if described.optional => "none".into(),
        Some(None) if described.text.starts_with("array") || described.text.ends_with("by name") => "empty".into(),
        Some(None) if described.text.contains("true") => "`false`".into(),
        Some(None) => "0".into(),
        None if described.optional => "none".into(),
        None => "**required**".into(),
    }
}

/// One parser's reference: what is read from which files, and what is said before its keys.
pub struct Reference {
    pub title: &'static str,
    /// The files holding the parser's structs, the root's first.
    pub sources: &'static [&'static str],
    pub root: &'static str,
    pub introduction: &'static str,
    /// Whether a key's unit and range come from the validator's table (spec keys do).
    pub physical_ranges: bool,
}

/// A section to write: its TOML header and the struct or tagged enum it holds.
struct Section {
    header: String,
    type_name: String,
}

fn header_of(parent: &str, key: &str, nesting: Nesting) -> String {
    let path = if parent.is_empty() { key.to_string() } else { format!("{parent}.{key}") };
    match nesting {
        Nesting::Table => format!("[{path}]"),
        Nesting::ArrayOfTables => format!("[[{path}]]"),
        Nesting::TablesByName => format!("[{path}.<name>]"),
    }
}

/// The dotted path inside a header, for the headers of the tables below it.
fn path_of(header: &str) -> String {
    header.trim_matches(|c| c == '[' || c == ']').trim_end_matches(".<name>").to_string()
}

fn unit_and_range(key: &str) -> String {
    softgen_runtime::physical_ranges::spec_key_ranges()
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, range)| {
            let unit = if range.unit.is_empty() { String::new() } else { format!("{}, ", range.unit) };
            format!("{unit}{} to {}", super::readable(range.low), super::readable(range.high))
        })
        .unwrap_or_default()
}

/// A key's documented default, where the key sits in a table of its own (not in an array of
/// tables): `path` is the table's dotted path, empty at the top level.
pub struct DocumentedDefault {
    pub path: String,
    pub key: String,
    pub default: String,
}

/// What a walk over the parser's structs gathers: the tables still to write, the header each
/// type got, the defaults stated and what could not be documented.
struct Walk<'a> {
    reference: &'a Reference,
    items: Items,
    queued: Vec<Section>,
    seen: BTreeMap<String, String>,
    defaults: Vec<DocumentedDefault>,
    problems: Vec<String>,
}

impl Walk<'_> {
    /// The rows of one struct's (or variant's) fields, queuing the tables they hold.
    fn field_rows(&mut self, fields: &Fields, header: &str, owner: &str) -> String {
        let path = path_of(header);
        let mut rows = String::new();
        for field in fields {
            let key = field.ident.as_ref().unwrap().to_string();
            let (mut meaning, doc_default) = meaning_and_default(&field.attrs);
            if meaning.is_empty() {
                self.problems.push(format!("{owner}.{key} has no doc comment"));
            }
            let described = match describe(&field.ty, &self.items) {
                Ok(d) => d,
                Err(e) => {
                    self.problems.push(format!("{owner}.{key}: {e}"));
                    continue;
                }
            };
            let mut text = described.text.clone();
            if let Some((type_name, nesting)) = &described.nested {
                let header = match self.seen.get(type_name) {
                    Some(header) => header.clone(),
                    None => {
                        let header = header_of(&path, &key, *nesting);
                        self.seen.insert(type_name.clone(), header.clone());
                        self.queued.push(Section { header: header.clone(), type_name: type_name.clone() });
                        header
                    }
                };
                text = format!("[{text}](#{})", super::anchor_of(&format!("`{header}`")));
            }
            let default = default_of(field, &described, doc_default, &self.items);
            if !header.starts_with("[[") && !header.contains('<') {
                self.defaults.push(DocumentedDefault {
                    path: path.clone(),
                    key: key.clone(),
                    default: default.clone(),
                });
            }
            for (value, doc) in &described.choices {
                meaning.push_str(&format!(" {value}: {doc}"));
            }
            let range =
                if self.reference.physical_ranges { format!(" {} |", unit_and_range(&key)) } else { String::new() };
            rows.push_str(&format!("| `{key}` | {text} | {default} |{range} {meaning} |\n"));
        }
        rows
    }
}

fn table_head(reference: &Reference) -> &'static str {
    if reference.physical_ranges {
        "| key | type | default | unit, range | meaning |\n| --- | --- | --- | --- | --- |\n"
    } else {
        "| key | type | default | meaning |\n| --- | --- | --- | --- |\n"
    }
}

/// The reference page and the defaults it states, or the fields and types it could not
/// document.
pub fn reference_page(reference: &Reference) -> Result<(String, Vec<DocumentedDefault>), Vec<String>> {
    let mut walk = Walk {
        reference,
        items: Items::read(&reference.sources.iter().map(|s| super::root().join(s)).collect::<Vec<_>>()),
        queued: Vec::new(),
        seen: BTreeMap::new(),
        defaults: Vec::new(),
        problems: Vec::new(),
    };
    let mut page = format!(
        "# {}\n\n<!-- Generated by tests/docs/keys.rs from {}; do not edit. \
         `SOFTGEN_BLESS=1 cargo test --workspace --test docs` rewrites it. -->\n\n{}\n",
        reference.title,
        reference.sources.join(" and "),
        reference.introduction
    );
    page.push_str("\n## The top level\n\n");
    page.push_str(table_head(reference));
    let root = walk.items.structs[reference.root].fields.clone();
    page.push_str(&walk.field_rows(&root, "", reference.root));
    let mut written = BTreeSet::new();
    let mut next = 0;
    while next < walk.queued.len() {
        let Section { header, type_name } = &walk.queued[next];
        let (header, type_name) = (header.clone(), type_name.clone());
        next += 1;
        if !written.insert(type_name.clone()) {
            continue;
        }
        page.push_str(&format!("\n## `{header}`\n\n"));
        if let Some(table) = walk.items.structs.get(&type_name).cloned() {
            let (about, _) = meaning_and_default(&table.attrs);
            if !about.is_empty() {
                page.push_str(&format!("{about}\n\n"));
            }
            page.push_str(table_head(reference));
            page.push_str(&walk.field_rows(&table.fields, &header, &type_name));
        } else {
            let enumeration = walk.items.enums[&type_name].clone();
            let tag = serde_arguments(&enumeration.attrs)["tag"].clone().unwrap();
            let (about, _) = meaning_and_default(&enumeration.attrs);
            if !about.is_empty() {
                page.push_str(&format!("{about}\n\n"));
            }
            page.push_str(&format!("The key `{tag}` says which of these the table is, and what else it takes.\n"));
            for variant in &enumeration.variants {
                let name = variant_name(&enumeration, variant);
                let (about, _) = meaning_and_default(&variant.attrs);
                page.push_str(&format!("\n### `{tag} = \"{name}\"`\n\n"));
                if !about.is_empty() {
                    page.push_str(&format!("{about}\n\n"));
                }
                if variant.fields.is_empty() {
                    page.push_str("No other keys.\n");
                    continue;
                }
                page.push_str(table_head(reference));
                let owner = format!("{type_name}::{}", variant.ident);
                // A variant's keys have defaults of their own, not the table's: not gathered.
                let rows = walk.field_rows(&variant.fields, &format!("[[{}]]", path_of(&header)), &owner);
                page.push_str(&rows);
            }
        }
    }
    if walk.problems.is_empty() {
        Ok((page, walk.defaults))
    } else {
        Err(walk.problems)
    }
}

/// The spec's reference.
pub const SPEC: Reference = Reference {
    title: "Spec keys",
    sources: &["codegen/src/spec/mod.rs"],
    root: "Spec",
    introduction: "Every key a robot's spec (`model-specs/<robot>.toml`) takes, table by table, as the spec's \
parser reads it. A *value* is a number or a string expression of the spec's parameters \
(`\"link_mass / 2\"`); a unit and range, where a key has one, is the validator's for every \
key of that name ([Physical ranges](ranges.md)); the validator's other rules (which keys go \
together, names, the tree) are in [Spec format](spec-format.md), with worked examples.",
    physical_ranges: true,
};

/// The run configuration's reference.
pub const RUN_CONFIGURATION: Reference = Reference {
    title: "Run configuration keys",
    sources: &["app/src/run/config.rs", "app/src/run/controllers/mod.rs"],
    root: "File",
    introduction: "Every key a run configuration (`model-specs/<robot>.run.toml`, read by `softgen run`) \
takes, table by table, as its parser reads it. Units are in the meanings; a value out of its \
range is refused naming the file, line and key. How the pieces fit together on a robot is in \
[Control on a robot](../control/hardware.md), [MPC](../control/mpc.md) and \
[Estimation](../control/estimation.md).",
    physical_ranges: false,
};
