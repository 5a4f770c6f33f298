//! The docs kept true by test: every shell command in README.md and the book (docs/src) runs
//! and succeeds, or its block says why it is not run; every link between the pages resolves;
//! the book's command-line reference is the binary's own help; the front page's verdict
//! table names every experiment, in order; the reference of physical ranges is the
//! validator's own table; the references of the spec's and the run configuration's keys are
//! their parsers' structs (keys.rs).
//!
//! `SOFTGEN_BLESS=1 cargo test --workspace --test docs` rewrites the generated reference pages.

mod keys;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files a reader sees: the front page, the top-level documents, the folders'
/// pointers and every page of the book, relative to the root.
fn documents() -> Vec<PathBuf> {
    [
        "README.md",
        "ARCHITECTURE.md",
        "CHANGELOG.md",
        "model-specs/README.md",
        "sweeps/README.md",
        "model-specs/urdf/README.md",
    ]
    .iter()
    .map(PathBuf::from)
    .chain(markdown_below("docs/src"))
    .collect()
}

/// Every `.md` file below `dir` (relative to the root), in path order.
fn markdown_below(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())).flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fenced code block: its info string, the line of its first content line, its lines.
struct Block {
    info: String,
    first_line: usize,
    lines: Vec<String>,
}

/// The fenced code blocks of a Markdown text.
fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            match open.take() {
                Some(block) => found.push(block),
                None => open = Some(Block { info: fence.trim().to_string(), first_line: i + 2, lines: Vec::new() }),
            }
        } else if let Some(block) = &mut open {
            block.lines.push(line.to_string());
        }
    }
    found
}

/// A command line without its trailing comment (a `#` after white space, outside quotes).
fn without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if previous.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        previous = c;
    }
    line.trim_end()
}

/// Why a block is not run, from its first line `# not run: <why>`.
fn not_run_reason(block: &Block) -> Option<&str> {
    block.lines.first().and_then(|l| l.trim().strip_prefix("# not run:")).map(str::trim)
}

/// A command that runs longer than this has no place in a document without a `# not run:`.
const COMMAND_DEADLINE: Duration = Duration::from_secs(240);

/// Runs `command` with bash in `folder`, `softgen` being the binary under test; the outcome
/// and what it printed.
fn run_in(folder: &Path, shims: &Path, command: &str) -> Result<Duration, String> {
    let path = format!("{}:{}", shims.display(), std::env::var("PATH").unwrap_or_default());
    let start = Instant::now();
    let mut child = Command::new("bash")
        .args(["-o", "pipefail", "-c", command])
        .current_dir(folder)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("bash: {e}"))?;
    // Read the pipes on their own threads so a talkative command cannot block on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > COMMAND_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {} s", COMMAND_DEADLINE.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    if status.success() {
        Ok(start.elapsed())
    } else {
        let tail =
            |s: &str| s.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
        Err(format!("{status}\nstdout (end):\n{}\nstderr (end):\n{}", tail(&stdout), tail(&stderr)))
    }
}

/// A fresh folder where the documents' commands run: the repository's inputs (specs, sweep
/// files, examples, the Python package) linked in, `out/` empty; and a folder of shims
/// putting the binary under test on the PATH as `softgen`.
fn command_folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    for input in ["model-specs", "sweeps", "examples", "python", "assets"] {
        std::os::unix::fs::symlink(root().join(input), folder.path().join(input)).unwrap();
    }
    let shims = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_softgen"), shims.path().join("softgen")).unwrap();
    (folder, shims)
}

#[test]
fn every_command_in_the_docs_runs_or_says_why_not() {
    let mut problems = Vec::new();
    let mut ran = 0;
    for file in documents() {
        let text = read(&file);
        for block in blocks(&text) {
            let language = block.info.split([',', ' ']).next().unwrap_or("");
            if matches!(language, "bash" | "shell" | "console" | "shell-session" | "zsh") {
                problems.push(format!(
                    "{}:{}: a `{language}` block; shell commands go in `sh` blocks, which the test runs",
                    file.display(),
                    block.first_line - 1
                ));
                continue;
            }
            if language.is_empty() && block.lines.iter().any(|l| l.starts_with("softgen ") || l.starts_with("cargo ")) {
                problems.push(format!(
                    "{}:{}: a block of commands without a language; write it as `sh`, which the test runs",
                    file.display(),
                    block.first_line - 1
                ));
                continue;
            }
            if language != "sh" {
                continue;
            }
            if let Some(why) = not_run_reason(&block) {
                if why.is_empty() {
                    problems.push(format!("{}:{}: `# not run:` without a reason", file.display(), block.first_line));
                }
                continue;
            }
            // One folder a block: its commands run in order, a later one reading what an
            // earlier one wrote.
            let (folder, shims) = command_folder();
            for (i, line) in block.lines.iter().enumerate() {
                let command = without_comment(line.trim());
                if command.is_empty() {
                    continue;
                }
                let place = format!("{}:{}", file.display(), block.first_line + i);
                if command.split_whitespace().any(|word| word == "cargo") {
                    problems.push(format!(
                        "{place}: `{command}` calls cargo, which cannot run under `cargo test`; \
                         start the block with `# not run: <why>` or write `softgen`"
                    ));
                    continue;
                }
                match run_in(folder.path(), shims.path(), command) {
                    Ok(took) => {
                        ran += 1;
                        eprintln!("{place}: {command} ({:.1} s)", took.as_secs_f64());
                    }
                    Err(why) => problems.push(format!("{place}: `{command}` failed: {why}")),
                }
            }
        }
    }
    assert!(problems.is_empty(), "commands in the docs:\n{}", problems.join("\n\n"));
    assert!(ran > 20, "only {ran} commands ran: the documents' blocks were not found");
}

/// GitHub's and mdBook's anchor of a heading: lower case, spaces to hyphens, other
/// punctuation but hyphens and underscores dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of a Markdown text outside its fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            return false;
        }
        !in_code
    })
}

/// The anchors of a Markdown text's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    prose_lines(text).filter(|line| line.starts_with('#')).map(|line| anchor_of(line.trim_start_matches('#'))).collect()
}

/// The targets of a Markdown text's inline links and images, `](target)`, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            targets.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    targets
}

#[test]
fn every_link_between_the_pages_resolves() {
    let mut problems = Vec::new();
    for file in documents() {
        let text = read(&file);
        let folder = file.parent().unwrap_or(Path::new(""));
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() { file.clone() } else { folder.join(path) };
            let on_disk = root().join(&linked);
            if !on_disk.exists() {
                problems.push(format!("{}: `{target}`: no file {}", file.display(), linked.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if !anchors(&read(&linked)).iter().any(|a| a == anchor) {
                    problems.push(format!(
                        "{}: `{target}`: {} has no heading `#{anchor}`",
                        file.display(),
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "links that lead nowhere:\n{}", problems.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_summary_and_every_entry_is_a_page() {
    let summary = read(Path::new("docs/src/SUMMARY.md"));
    let listed: Vec<String> = link_targets(&summary);
    let mut problems = Vec::new();
    for page in markdown_below("docs/src") {
        let relative = page.strip_prefix("docs/src").unwrap().to_string_lossy().replace('\\', "/");
        if relative != "SUMMARY.md" && !listed.contains(&relative) {
            problems.push(format!("{}: not in docs/src/SUMMARY.md", page.display()));
        }
    }
    for entry in &listed {
        if !root().join("docs/src").join(entry).exists() {
            problems.push(format!("docs/src/SUMMARY.md: `{entry}` is not a page"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    let Some(start) = help.find("\nCommands:\n") else { return Vec::new() };
    help[start + "\nCommands:\n".len()..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   ")) // continuation lines of a long description
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The book's command-line reference: the binary's `--help` for itself and every subcommand,
/// depth first, each under a heading of its command line.
fn command_line_reference() -> String {
    let mut page = String::from(
        "# The command line\n\n<!-- Generated by tests/docs/main.rs from the binary's help; do not edit. \
         `SOFTGEN_BLESS=1 cargo test --workspace --test docs` rewrites it. -->\n\n\
         Every command and flag of `softgen`, as `softgen <command> --help` prints it.\n",
    );
    let mut stack = vec![Vec::<String>::new()];
    while let Some(path) = stack.pop() {
        let out = Command::new(env!("CARGO_BIN_EXE_softgen")).args(&path).arg("--help").output().unwrap();
        assert!(out.status.success(), "softgen {} --help: {}", path.join(" "), String::from_utf8_lossy(&out.stderr));
        let help = String::from_utf8(out.stdout).unwrap();
        let line = if path.is_empty() { "softgen".to_string() } else { format!("softgen {}", path.join(" ")) };
        page.push_str(&format!("\n## `{line}`\n\n```text\n{}\n```\n", help.trim_end()));
        for sub in subcommands(&help).into_iter().rev() {
            let mut deeper = path.clone();
            deeper.push(sub);
            stack.push(deeper);
        }
    }
    page
}

/// A generated page against its committed copy: equal, or rewritten where SOFTGEN_BLESS is
/// set (as the generated robots are kept fresh by codegen's test).
fn assert_fresh_or_bless(path: &str, fresh: &str, test: &str) {
    let path = root().join(path);
    if std::env::var_os("SOFTGEN_BLESS").is_some() {
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{} is stale: `SOFTGEN_BLESS=1 cargo test --workspace --test docs {test}` rewrites it",
        path.display()
    );
}

#[test]
fn the_command_line_reference_is_the_binarys_help() {
    assert_fresh_or_bless("docs/src/reference/cli.md", &command_line_reference(), "the_command_line_reference");
}

/// A number as the ranges' messages print it: 0, 0.25, 1e5, 1e-9.
fn readable(value: f64) -> String {
    if value != 0.0 && !(1e-3..1e4).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// The book's reference of physical ranges: every kind of number the validator, `--set`,
/// the flags and the run configurations check, its unit, its range and the spec keys that
/// hold it, from the runtime's own table.
fn ranges_reference() -> String {
    use softgen_runtime::physical_ranges::{spec_key_ranges, QUANTITIES};
    let mut page = String::from(
        "# Physical ranges\n\n<!-- Generated by tests/docs/main.rs from runtime/src/quantities/physical_ranges.rs; \
         do not edit. `SOFTGEN_BLESS=1 cargo test --workspace --test docs` rewrites it. -->\n\n\
         Every physical value, from a spec, `--set`, a flag, a run configuration, a sweep or Python,\n\
         must lie in the range of its kind, so that a slip such as `--friction 1e300` is refused\n\
         before the run, naming the value, its kind and the range. A spec's values are checked by\n\
         their key (the last name of the field: `bodies[2].section.stiffness` is a `stiffness`);\n\
         values the spec computes from parameters are checked again whenever `--set` changes them.\n\n\
         | quantity | unit | range | spec keys |\n| --- | --- | --- | --- |\n",
    );
    for quantity in QUANTITIES {
        let keys: Vec<String> = spec_key_ranges()
            .iter()
            .filter(|(_, range)| range == quantity)
            .map(|(key, _)| format!("`{key}`"))
            .collect();
        page.push_str(&format!(
            "| {} | {} | {} to {} | {} |\n",
            quantity.quantity,
            quantity.unit,
            readable(quantity.low),
            readable(quantity.high),
            keys.join(", ")
        ));
    }
    page
}

#[test]
fn the_ranges_reference_is_the_validators_table() {
    assert_fresh_or_bless("docs/src/reference/ranges.md", &ranges_reference(), "the_ranges_reference");
}

#[test]
fn the_spec_keys_reference_is_the_parsers_structs() {
    let (page, _) = keys::reference_page(&keys::SPEC).unwrap_or_else(|problems| panic!("{}", problems.join("\n")));
    assert_fresh_or_bless("docs/src/reference/spec-keys.md", &page, "the_spec_keys_reference");
}

#[test]
fn the_run_configuration_keys_reference_is_the_parsers_structs() {
    let (page, _) =
        keys::reference_page(&keys::RUN_CONFIGURATION).unwrap_or_else(|problems| panic!("{}", problems.join("\n")));
    assert_fresh_or_bless("docs/src/reference/run-config-keys.md", &page, "the_run_configuration_keys_reference");
}

/// A documented default as the TOML value it says, if it is one: `1000`, `[0, 10]`, `true`,
/// `"y"`, or a code span that is not TOML read as a string (`127.0.0.1:1510`). Defaults in
/// words ("the plant's", "20 (sampling), 100 (ddp)") are not values.
fn toml_value(default: &str) -> Option<toml_edit::Value> {
    let text = default.trim();
    let parse = |t: &str| t.parse::<toml_edit::Value>().ok();
    let code = text.strip_prefix('`').and_then(|t| t.strip_suffix('`'));
    match code {
        Some(inner) if !inner.contains('`') => parse(inner).or(Some(inner.into())),
        Some(_) => None,
        None => parse(text),
    }
}

/// The table (or inline table) at a dotted path of a TOML document, made where it is missing.
fn table_at<'a>(document: &'a mut toml_edit::DocumentMut, path: &str) -> Option<&'a mut dyn toml_edit::TableLike> {
    let mut table: &mut dyn toml_edit::TableLike = document.as_table_mut();
    for name in path.split('.').filter(|n| !n.is_empty()) {
        table = table.entry(name).or_insert(toml_edit::table()).as_table_like_mut()?;
    }
    Some(table)
}

/// A robot's run configuration parsed from `text`, as its Debug text.
struct ParseRunConfig<'a> {
    path: &'a str,
    text: &'a str,
}

impl softgen::RobotVisitor for ParseRunConfig<'_> {
    type Output = Result<String, String>;
    fn visit<R: softgen_runtime::Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        softgen::parse_robot_run_config::<R, N, C>(self.path, self.text)
            .map(|config| without_lines(&format!("{config:?}")))
    }
}

/// A text without the `:line:column` after each `.toml`: a key added moves the lines after it.
fn without_lines(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(".toml:") {
        out.push_str(&rest[..at + 5]);
        rest = rest[at + 5..].trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Every run-configuration default the reference states as a value is the parser's: each
/// committed run configuration parses to the same configuration without the key as with the
/// key set to its documented default (the key's table made where it is missing), wherever
/// the key applies, and each such default is checked on at least one robot.
#[test]
fn the_run_configuration_references_defaults_are_the_parsers() {
    let (_, defaults) =
        keys::reference_page(&keys::RUN_CONFIGURATION).unwrap_or_else(|problems| panic!("{}", problems.join("\n")));
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut unchecked = Vec::new();
    for documented in &defaults {
        let Some(value) = toml_value(&documented.default) else { continue };
        let name = format!("`{}` in `[{}]`", documented.key, documented.path);
        let mut robots = 0;
        let mut refusals = Vec::new();
        for robot in softgen::ROBOTS {
            let Some(file) = softgen::run_config_of(robot.name) else { continue };
            let mut without: toml_edit::DocumentMut = file.text.parse().unwrap();
            let mut with = without.clone();
            match (table_at(&mut without, &documented.path), table_at(&mut with, &documented.path)) {
                (Some(table_without), Some(table_with)) => {
                    table_without.remove(&documented.key);
                    table_with.insert(&documented.key, toml_edit::Item::Value(value.clone()));
                }
                _ => continue,
            }
            let parse = |document: &toml_edit::DocumentMut| {
                let text = document.to_string();
                softgen::with_robot(robot.name, ParseRunConfig { path: file.path, text: &text }).unwrap()
            };
            // A table made where the file has none may lack its required keys: nothing to compare.
            let expected = match parse(&without) {
                Ok(expected) => expected,
                Err(e) => {
                    refusals.push(e);
                    continue;
                }
            };
            match parse(&with) {
                Ok(got) if got == expected => robots += 1,
                Ok(got) => {
                    let at = got.bytes().zip(expected.bytes()).take_while(|(a, b)| a == b).count();
                    let around = |text: &str| {
                        text.get(at.saturating_sub(60)..(at + 60).min(text.len())).unwrap_or("").to_string()
                    };
                    problems.push(format!(
                        "{name}: {}'s configuration differs with its documented default {value}: ...{}... against ...{}...",
                        robot.name,
                        around(&got),
                        around(&expected)
                    ))
                }
                // The key belongs to another planner or device than this configuration's.
                Err(e) => refusals.push(e),
            }
        }
        if robots == 0 {
            unchecked.push(format!("{name} ({})", refusals.join("; ")));
        } else {
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "documented defaults that are not the parser's:\n{}", problems.join("\n"));
    assert!(
        unchecked.is_empty(),
        "documented defaults no committed run configuration checks:\n{}",
        unchecked.join("\n")
    );
    assert!(checked > 30, "only {checked} documented defaults were checked");
}

#[test]
fn the_front_pages_verdict_table_names_every_experiment_in_order() {
    let rows = softgen::verdict_table_rows(&read(Path::new("README.md"))).unwrap();
    let listed: Vec<&str> = rows.iter().map(|(name, _, _)| name.as_str()).collect();
    let experiments: Vec<&str> = softgen::experiments().map(|e| e.name).collect();
    assert_eq!(
        listed, experiments,
        "README.md's verdict table: `softgen experiment table --write README.md` rewrites it"
    );
    for (name, class, reason) in &rows {
        assert!(softgen::Verdict::CLASSES.contains(&class.as_str()), "{name}: `{class}` is no verdict class");
        assert_eq!(reason.is_empty(), matches!(class.as_str(), "reproduced" | "reached"), "{name}: {class}: {reason}");
    }
}

#[test]
fn a_verdict_table_reads_back_as_written() {
    let verdicts = [
        ("a", softgen::Verdict::Reproduced),
        ("b", softgen::Verdict::Differs("one | two; three".into())),
        ("c", softgen::Verdict::Unverifiable("no number".into())),
    ];
    let table = softgen::verdict_table(&verdicts);
    let document = format!("before\n{}\nold\n{}\nafter\n", softgen::VERDICT_TABLE_BEGIN, softgen::VERDICT_TABLE_END);
    let written = softgen::with_verdict_table(&document, &table).unwrap();
    assert!(written.starts_with("before\n") && written.ends_with(&format!("{}\nafter\n", softgen::VERDICT_TABLE_END)));
    assert!(!written.contains("old"));
    let rows = softgen::verdict_table_rows(&written).unwrap();
    let expected = [("a", "reproduced", ""), ("b", "differs", "one | two"), ("c", "unverifiable", "no number")];
    assert_eq!(rows.len(), 3);
    for ((name, class, reason), (n, c, r)) in rows.iter().zip(expected) {
        assert_eq!((name.as_str(), class.as_str(), reason.as_str()), (n, c, r));
    }
    assert!(softgen::with_verdict_table("no marks", &table).is_err());
}
