//! The 3D view pages in a real browser: headless Chromium (Debian's package, which .ci/run
//! installs) opens pages of a rigid, a soft and a swimming robot from disk, shows a chosen
//! time under an orthographic camera, and takes a screenshot. The test checks that the page
//! logged no errors and that the centre of mass (and the soft snake's last section tip) are
//! drawn where the run's samples put them: the expected pixel is computed here from the
//! run's CSV and the generated model, not read from the page. Its own test binary, so its
//! browser runs do not slow other tests' timeouts.
//!
//! Without Chromium the tests say so and pass, unless SOFTGEN_BROWSER_TESTS=required (as
//! .ci/run sets it); SOFTGEN_CHROMIUM names another browser binary.

use softgen_runtime::nalgebra::{SVector, Vector3};
use softgen_runtime::Model;
use std::path::{Path, PathBuf};
use std::process::Command;

const WIDTH: u32 = 800;
const HEIGHT: u32 = 600;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SOFTGEN_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The browser, or None (with a note) where it is missing and not required.
fn browser() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let required = std::env::var("SOFTGEN_BROWSER_TESTS").is_ok_and(|v| v == "required");
        assert!(
            !required,
            "SOFTGEN_BROWSER_TESTS=required, but no Chromium: install Debian's chromium or set SOFTGEN_CHROMIUM"
        );
        eprintln!("skipped: no Chromium on PATH (Debian: apt-get install chromium; or set SOFTGEN_CHROMIUM)");
    }
    found
}

/// Runs the browser headless on `url` with `extra` (`--dump-dom`, `--screenshot=...`),
/// returning its stdout and stderr.
fn open(browser: &Path, profile: &Path, url: &str, extra: &str) -> (String, String) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-unsafe-swiftshader",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(extra)
        .arg(url)
        .output()
        .expect("the browser starts");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "browser failed on {url}: {stderr}");
    (stdout, stderr)
}

/// What the page reports of itself after loading: errors, the sample shown and its time.
#[derive(Debug)]
struct Status {
    errors: Vec<String>,
    time: f64,
    opened_ms: f64,
}

fn status(dom: &str) -> Status {
    let start = dom.find("<pre id=\"status\"").expect("the page's status element");
    let start = start + dom[start..].find('>').expect("status element opens") + 1;
    let end = start + dom[start..].find("</pre>").expect("status element closes");
    let text = dom[start..end].replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("status `{text}`: {e}"));
    Status {
        errors: json["errors"].as_array().expect("errors").iter().map(|e| e.to_string()).collect(),
        time: json["time"].as_f64().expect("time shown"),
        opened_ms: json["opened_ms"].as_f64().expect("opening time"),
    }
}

/// The CSV row at time `t` (the page holds times as f32).
fn row_at(csv: &str, t: f64) -> (Vec<String>, Vec<f64>) {
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(String::from).collect();
    let row = lines
        .map(|l| l.split(',').map(|v| v.parse::<f64>().expect("a number")).collect::<Vec<f64>>())
        .min_by(|a, b| (a[0] - t).abs().total_cmp(&(b[0] - t).abs()))
        .expect("rows");
    assert!((row[0] - t).abs() < 1e-4, "no row at t = {t} (nearest {})", row[0]);
    (header, row)
}

fn column(header: &[String], row: &[f64], name: &str) -> f64 {
    row[header.iter().position(|c| c == name).unwrap_or_else(|| panic!("column {name}"))]
}

/// The pixels (x, y of their centres) of the screenshot within `tolerance` of `colour`.
fn pixels_of(png_path: &Path, colour: [u8; 3], tolerance: u8) -> Vec<(f64, f64)> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_path).expect("screenshot")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).expect("its pixels");
    assert_eq!((info.width, info.height), (WIDTH, HEIGHT), "screenshot size");
    let channels = info.line_size / info.width as usize;
    let mut found = Vec::new();
    for y in 0..info.height as usize {
        for x in 0..info.width as usize {
            let p = &buffer[y * info.line_size + x * channels..][..3];
            if p.iter().zip(colour).all(|(&a, b)| a.abs_diff(b) <= tolerance) {
                found.push((x as f64 + 0.5, y as f64 + 0.5));
            }
        }
    }
    found
}

/// The centroid of the pixels within `radius` of `expected`, and how many there are.
fn centroid_near(pixels: &[(f64, f64)], expected: (f64, f64), radius: f64) -> (f64, f64, usize) {
    let near: Vec<&(f64, f64)> =
        pixels.iter().filter(|(x, y)| (x - expected.0).hypot(y - expected.1) <= radius).collect();
    let n = near.len().max(1) as f64;
    (near.iter().map(|p| p.0).sum::<f64>() / n, near.iter().map(|p| p.1).sum::<f64>() / n, near.len())
}

/// Where the orthographic camera of `camera` (top: x right, y up; side: x right, z up)
/// centred on `centre` with `span` metres across the height draws the world point `p`.
fn project(camera: &str, centre: &Vector3<f64>, span: f64, p: &Vector3<f64>) -> (f64, f64) {
    let scale = HEIGHT as f64 / span;
    let up = if camera == "top" { p.y - centre.y } else { p.z - centre.z };
    (WIDTH as f64 / 2.0 + (p.x - centre.x) * scale, HEIGHT as f64 / 2.0 - up * scale)
}

const MAGENTA: [u8; 3] = [255, 0, 255];
const TIP: [u8; 3] = [0, 200, 255];

/// A run of `robot` written with its view page; returns the CSV's and the page's paths.
fn run_with_view(dir: &Path, robot: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let out = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["simulate", "--robot", robot, "--view", "--no-plot", "--output"])
        .arg(dir)
        .args(args)
        .output()
        .expect("softgen runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("{robot}.view.html")), "{stdout}");
    (dir.join(format!("{robot}.csv")), dir.join(format!("{robot}.view.html")))
}

/// Opens `page` at time `t` under `camera`, checks it logged nothing wrong, and returns the
/// time it shows, the screenshot's path and the camera (centre, span) used.
fn shoot(
    browser: &Path,
    dir: &Path,
    page: &Path,
    t: f64,
    camera: &str,
    centre: Vector3<f64>,
    span: f64,
) -> (Status, PathBuf) {
    let url = format!(
        "file://{}#t={t}&test&size={WIDTH}x{HEIGHT}&camera={camera}&centre={},{},{}&span={span}",
        page.display(),
        centre.x,
        centre.y,
        centre.z
    );
    let profile = tempfile::tempdir_in(dir).expect("a browser profile");
    let (dom, log) = open(browser, profile.path(), &url, "--dump-dom");
    let status = status(&dom);
    assert!(status.errors.is_empty(), "the page logged errors: {:?}", status.errors);
    for line in log.lines().filter(|l| l.contains(":CONSOLE")) {
        assert!(!line.contains("Uncaught") && !line.contains("Error"), "the page logged: {line}");
    }
    let shot = dir.join(format!("{}-{camera}.png", page.file_stem().unwrap().to_string_lossy()));
    let profile = tempfile::tempdir_in(dir).expect("a browser profile");
    open(browser, profile.path(), &url, &format!("--screenshot={}", shot.display()));
    eprintln!("{}: opened in {:.0} ms, showing t = {} s", page.display(), status.opened_ms, status.time);
    (status, shot)
}

/// Checks that the centre of mass at the shown time is drawn where the CSV puts it.
fn check_centre_of_mass(csv: &Path, status: &Status, shot: &Path, camera: &str, centre: &Vector3<f64>, span: f64) {
    let csv = std::fs::read_to_string(csv).unwrap();
    let (header, row) = row_at(&csv, status.time);
    let com =
        Vector3::new(column(&header, &row, "com_x"), column(&header, &row, "com_y"), column(&header, &row, "com_z"));
    let expected = project(camera, centre, span, &com);
    let (x, y, count) = centroid_near(&pixels_of(shot, MAGENTA, 2), expected, 20.0);
    assert!(
        count >= 20,
        "{}: the centre of mass's marker not found near {expected:?} ({count} pixels)",
        shot.display()
    );
    assert!(
        (x - expected.0).hypot(y - expected.1) < 2.0,
        "{}: centre of mass drawn at ({x}, {y}), expected {expected:?}",
        shot.display()
    );
}

#[test]
fn a_rigid_robot_is_drawn_where_its_run_puts_it() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (csv, page) = run_with_view(dir.path(), "snake_pedal_wave", &["--duration", "3"]);
    let span = 0.8;
    // The centre of mass off the middle of the picture, so a page that ignored the camera's
    // centre would draw it elsewhere.
    let centre = Vector3::new(0.25, 0.0, 0.1);
    let (status, shot) = shoot(&browser, dir.path(), &page, 2.0, "side", centre, span);
    assert!((status.time - 2.0).abs() < 0.02, "shown at t = {}", status.time);
    check_centre_of_mass(&csv, &status, &shot, "side", &centre, span);
}

#[test]
fn a_soft_robot_is_drawn_where_its_run_puts_it_section_tips_too() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (csv, page) = run_with_view(dir.path(), "soft_snake", &["--duration", "1", "--integrator", "ros34"]);
    let span = 0.8;
    let centre = Vector3::new(0.2, -0.1, 0.0);
    let (status, shot) = shoot(&browser, dir.path(), &page, 0.8, "top", centre, span);
    check_centre_of_mass(&csv, &status, &shot, "top", &centre, span);

    // The last section's tip, from the run's coordinates through the generated centre line
    // (not the drawing frames the page was made from).
    use softgen_generated::soft_snake::{centre_line_into, Params, CENTRE_LINE_POINTS};
    type Robot = softgen_generated::SoftSnake;
    let text = std::fs::read_to_string(&csv).unwrap();
    let (header, row) = row_at(&text, status.time);
    let q = SVector::<f64, { softgen_generated::soft_snake::DOF }>::from_fn(|i, _| {
        column(&header, &row, <Robot as Model<{ softgen_generated::soft_snake::DOF }, { softgen_generated::soft_snake::CONTACTS }>>::COORDINATES[i].name)
    });
    let p = Params::default();
    let mut line = [Vector3::zeros(); CENTRE_LINE_POINTS];
    centre_line_into(&q, &p, &softgen_generated::soft_snake::cache(&q, &p), &mut line);
    let tip = line[CENTRE_LINE_POINTS - 1];
    let expected = project("top", &centre, span, &tip);
    let (x, y, count) = centroid_near(&pixels_of(&shot, TIP, 3), expected, 6.0);
    assert!(count >= 8, "the last section's tip marker not found near {expected:?} ({count} pixels)");
    assert!((x - expected.0).hypot(y - expected.1) < 2.5, "tip drawn at ({x}, {y}), expected {expected:?}");
}

#[test]
fn a_swimming_robot_is_drawn_where_its_run_puts_it() {
    let Some(browser) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (csv, page) = run_with_view(dir.path(), "underwater_snake", &["--duration", "2", "--integrator", "ros34"]);
    let span = 1.2;
    let centre = Vector3::new(0.15, 0.1, 0.0);
    let (status, shot) = shoot(&browser, dir.path(), &page, 1.5, "top", centre, span);
    check_centre_of_mass(&csv, &status, &shot, "top", &centre, span);
}

#[test]
fn an_existing_csv_becomes_a_page_and_bad_input_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, page) = run_with_view(dir.path(), "double_pendulum", &["--duration", "1"]);
    let simulated = std::fs::read_to_string(&page).unwrap();
    let out = dir.path().join("again.html");
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_softgen")).arg("view").args(args).output().unwrap();
    let made = run(&[csv.to_str().unwrap(), "--robot", "double_pendulum", "--out", out.to_str().unwrap()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert!(String::from_utf8_lossy(&made.stdout).contains("(61 frames)"), "{}", String::from_utf8_lossy(&made.stdout));
    let again = std::fs::read_to_string(&out).unwrap();
    // The same frames as the page the run wrote (only the title and line under it differ).
    let frames = |page: &str| page[page.find("\"poses\":\"").unwrap()..].split('"').nth(3).unwrap().to_string();
    assert_eq!(frames(&simulated), frames(&again));
    assert!(again.len() < 2_000_000, "a 1 s page of {} bytes", again.len());

    // The wrong robot, a broken CSV, a bad parameter: refused by name, nothing written.
    let wrong = run(&[
        csv.to_str().unwrap(),
        "--robot",
        "snake_pedal_wave",
        "--out",
        dir.path().join("no.html").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        !wrong.status.success() && text.contains("no column `base_x`, a coordinate of `snake_pedal_wave`"),
        "{text}"
    );
    let broken = dir.path().join("broken.csv");
    std::fs::write(&broken, "t,upper_joint,lower_joint\n0,0.1,0.2\n0.1,nan?,0\n").unwrap();
    let bad = run(&[broken.to_str().unwrap(), "--robot", "double_pendulum"]);
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && text.contains("line 3, column `upper_joint`: `nan?` is not a number"), "{text}");
    let bad = run(&[
        csv.to_str().unwrap(),
        "--robot",
        "double_pendulum",
        "--set",
        "upper_mass=-1",
        "--out",
        dir.path().join("no.html").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && text.contains("upper_mass"), "{text}");
    assert!(!dir.path().join("no.html").exists() && !dir.path().join("broken.view.html").exists());
}

#[test]
fn a_hardware_in_the_loop_run_writes_its_plant_as_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let (record, trajectory) = (dir.path().join("commands.csv"), dir.path().join("plant.csv"));
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_softgen"))
            .args(["run", "--duration", "1", "--view", "--record"])
            .arg(&record)
            .arg("--trajectory")
            .arg(&trajectory)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // One frame per 1/60 s from 0 to 1 s, and the plant's last sample (1.001 s).
    assert!(stdout.contains("plant.view.html (62 frames)"), "{stdout}");
    // The recording replayed into the plant draws the same run.
    let replayed = dir.path().join("replayed.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["run", "--view", "--replay"])
        .arg(&record)
        .arg("--trajectory")
        .arg(&replayed)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("replayed.view.html (62 frames)"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&trajectory).unwrap(), std::fs::read_to_string(&replayed).unwrap());
    // The robot's own state is not measured: a real device has no trajectory to draw.
    let out = run(&["--device", "serial", "--port", "/dev/null"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("--view draws the simulated plant's trajectory"), "{stderr}");
}

#[test]
fn an_experiment_writes_a_page_beside_each_trajectory_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["experiment", "run", "000-drop", "--view", "--output"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("view: soft_snake_drop_rolling.view.html ("), "{stdout}");
    let folder = dir.path().join("000-drop");
    let (csv, page) = (folder.join("soft_snake_drop_rolling.csv"), folder.join("soft_snake_drop_rolling.view.html"));
    assert!(page.is_file(), "{stdout}");
    // Without --view the folder has no page (and the earlier one goes with the old folder).
    let again = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["experiment", "run", "000-drop", "--output"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(again.status.success() && !page.exists());
    // An experiment that writes no trajectory says so.
    let kinematics = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["experiment", "run", "002-kinematics", "--view", "--output"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&kinematics.stdout);
    assert!(kinematics.status.success() && stdout.contains("view: 002-kinematics writes no trajectory"), "{stdout}");

    // The page draws the dropped snake where its samples put it.
    let Some(browser) = browser() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args(["experiment", "run", "000-drop", "--view", "--output"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    let (header, row) = row_at(&text, 0.21);
    let com =
        Vector3::new(column(&header, &row, "com_x"), column(&header, &row, "com_y"), column(&header, &row, "com_z"));
    let (centre, span) = (com + Vector3::new(0.15, 0.0, 0.1), 1.0);
    let (status, shot) = shoot(&browser, dir.path(), &page, 0.21, "side", centre, span);
    check_centre_of_mass(&csv, &status, &shot, "side", &centre, span);
}
