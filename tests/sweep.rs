//! Sweeps: shards merged equal the single-machine table bit for bit, an interrupted sweep
//! resumes to the same table without redoing finished runs (also after kills that cut the
//! journal's last line), failed runs are rows, a garbled, duplicated or foreign journal is refused and kept, and
//! the experiments' runs sweep.

use softgen::{run_sweep, sweep_to_file, Cell, Shard, Sweep, SweepOptions, SweepTable, TableFormat};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The example sweep: the pedal wave over amplitude x frequency, 3 x 3 runs of 4 s.
const PEDAL_WAVE: &str = include_str!("../sweeps/pedal_wave_gait.toml");

fn whole(sweep: &Sweep) -> SweepTable {
    let outcome = run_sweep(sweep, &SweepOptions::default(), &|_, _| {}).unwrap();
    assert!(outcome.complete);
    outcome.table
}

#[test]
fn shards_merge_into_the_single_machine_table_bit_for_bit() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let single = whole(&sweep).to_parquet().unwrap();
    for count in [2, 4] {
        let mut shards = Vec::new();
        // Out of order on purpose: merge sorts by run.
        for index in (0..count).rev() {
            let options = SweepOptions { shard: Some(Shard { index, count }), ..SweepOptions::default() };
            let table = run_sweep(&sweep, &options, &|_, _| {}).unwrap().table;
            let bytes = table.to_parquet().unwrap();
            shards.push((format!("shard {index}"), SweepTable::from_parquet(bytes, "shard").unwrap()));
        }
        let merged = SweepTable::merge(shards).unwrap();
        assert_eq!(merged.to_parquet().unwrap(), single, "{count} shards");
    }
    let table = SweepTable::from_parquet(single, "single").unwrap();
    assert_eq!(table.rows.len(), 9);
    assert_eq!(table.failed(), 0);
    // Speed rises with amplitude at each frequency, as the pedal wave's does.
    for f in 0..3 {
        let v = |a: usize| table.rows[3 * a + f].figures[0].unwrap();
        assert!(v(0) < v(1) && v(1) < v(2), "frequency {f}: {} {} {}", v(0), v(1), v(2));
    }
}

#[test]
fn merge_refuses_missing_repeated_and_foreign_shards() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let shard = |index| {
        let options = SweepOptions { shard: Some(Shard { index, count: 3 }), ..SweepOptions::default() };
        let table = run_sweep(&sweep, &options, &|_, _| {}).unwrap().table;
        (format!("s{index}.parquet"), table)
    };
    let e = SweepTable::merge(vec![shard(0), shard(2)]).unwrap_err();
    assert!(e.contains("shard 1/3 is missing"), "{e}");
    let e = SweepTable::merge(vec![shard(0), shard(1), shard(1), shard(2)]).unwrap_err();
    assert!(e.contains("are both shard 1/3"), "{e}");
    let other = Sweep::parse(&PEDAL_WAVE.replace("0.7]", "0.8]"), "pedal.toml").unwrap();
    let options = SweepOptions { shard: Some(Shard { index: 1, count: 3 }), ..SweepOptions::default() };
    let foreign = ("other.parquet".to_string(), run_sweep(&other, &options, &|_, _| {}).unwrap().table);
    let e = SweepTable::merge(vec![shard(0), foreign, shard(2)]).unwrap_err();
    assert!(e.contains("do not merge"), "{e}");
    let e = SweepTable::merge(vec![("whole.parquet".into(), whole(&sweep))]).unwrap_err();
    assert!(e.contains("not a shard"), "{e}");
}

/// Runs `sweep` into `output` on one worker and stops it, as SIGINT would, once `runs` are done.
fn interrupted_after(sweep: &Sweep, output: &std::path::Path, runs: usize) -> softgen::SweepOutcome {
    let stop = Arc::new(AtomicUsize::new(0));
    let options = SweepOptions { workers: 1, stop: Arc::clone(&stop), ..SweepOptions::default() };
    sweep_to_file(sweep, output, TableFormat::Parquet, &options, &|done, _| {
        if done == runs {
            stop.store(2, Ordering::Relaxed);
        }
    })
    .unwrap()
}

#[test]
fn an_interrupted_sweep_resumes_to_the_same_table_without_redoing_runs() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("pedal.parquet");
    let first = interrupted_after(&sweep, &output, 4);
    assert!(!first.complete);
    assert_eq!(first.ran, 4);
    assert!(!output.exists(), "no table before the sweep is complete");
    let journal = softgen::journal_path(&output);
    assert_eq!(std::fs::read_to_string(&journal).unwrap().lines().count(), 1 + 4);
    // A kill mid-line leaves a cut line: it is run again, not an error.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"run\": 7, \"figu");
    std::fs::write(&journal, text).unwrap();

    let ran = AtomicUsize::new(0);
    let options = SweepOptions::default();
    let second = sweep_to_file(&sweep, &output, TableFormat::Parquet, &options, &|_, _| {
        ran.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert!(second.complete);
    assert_eq!((second.resumed, second.ran), (4, 5));
    assert!(!journal.exists(), "the journal goes once the table is written");
    assert_eq!(std::fs::read(&output).unwrap(), whole(&sweep).to_parquet().unwrap());
}

#[test]
fn a_sweep_killed_twice_mid_line_resumes_to_the_same_table() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("pedal.parquet");
    let journal = softgen::journal_path(&output);
    interrupted_after(&sweep, &output, 3);
    // Killed mid-line: the cut line must go before the resumed start appends, or the next
    // line would join it and the journal could not be read again.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"run\": 7, \"figu");
    std::fs::write(&journal, &text).unwrap();
    let second = interrupted_after(&sweep, &output, 5);
    assert!(!second.complete);
    assert_eq!(second.resumed, 3);
    let lines = std::fs::read_to_string(&journal).unwrap();
    assert!(!lines.contains("figu{"), "a cut line joined the next one:\n{lines}");
    // Killed just after a whole line, before its newline.
    let cut = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(&journal, cut.trim_end_matches('\n')).unwrap();
    let third = interrupted_after(&sweep, &output, 7);
    assert_eq!(third.resumed, 5, "the line without its newline still counts");
    let last = sweep_to_file(&sweep, &output, TableFormat::Parquet, &SweepOptions::default(), &|_, _| {}).unwrap();
    assert!(last.complete);
    assert_eq!(last.resumed, 7);
    assert_eq!(std::fs::read(&output).unwrap(), whole(&sweep).to_parquet().unwrap());
}

#[test]
fn a_garbled_or_duplicated_journal_line_is_refused_with_its_line_and_the_journal_kept() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("pedal.parquet");
    let journal = softgen::journal_path(&output);
    interrupted_after(&sweep, &output, 3);
    let good = std::fs::read(&journal).unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let garbled = format!("{}\n{}\n#garbage#\n{}\n", lines[0], lines[1], lines[2..].join("\n"));
    let duplicated = format!("{text}{}\n", lines[1]);
    let mut not_utf8 = good.clone();
    not_utf8.extend_from_slice(&[0xff, 0xfe, b'\n']);
    for (bytes, expected) in
        [(garbled.into_bytes(), "line 3:"), (duplicated.into_bytes(), "is there twice"), (not_utf8, "is not UTF-8")]
    {
        std::fs::write(&journal, &bytes).unwrap();
        let e = sweep_to_file(&sweep, &output, TableFormat::Parquet, &SweepOptions::default(), &|_, _| {}).unwrap_err();
        assert!(e.contains(expected) && e.contains("pedal.parquet.journal"), "{expected}: {e}");
        assert_eq!(std::fs::read(&journal).unwrap(), bytes, "a refused journal is left as it was");
        assert!(!output.exists());
    }
}

#[test]
fn a_journal_of_another_sweep_is_refused() {
    let sweep = Sweep::parse(PEDAL_WAVE, "pedal.toml").unwrap();
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("pedal.parquet");
    interrupted_after(&sweep, &output, 2);
    let changed = Sweep::parse(&PEDAL_WAVE.replace("duration = 4.0", "duration = 2.0"), "pedal.toml").unwrap();
    let e = sweep_to_file(&changed, &output, TableFormat::Parquet, &SweepOptions::default(), &|_, _| {}).unwrap_err();
    assert!(e.contains("the sweep file changed since it was started"), "{e}");
    // The journal is kept: the original sweep still resumes.
    let outcome = sweep_to_file(&sweep, &output, TableFormat::Parquet, &SweepOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(outcome.resumed, 2);
}

#[test]
fn failed_runs_are_rows_with_their_error_and_csv_matches_parquet() {
    let text = r#"
robot = "double_pendulum"
[base]
duration = 0.2
[[points]]
dt = 0.002
[[points]]
dt = 0.0
[[points]]
dt = 0.001
"#;
    let sweep = Sweep::parse(text, "failing.toml").unwrap();
    let table = whole(&sweep);
    assert_eq!(table.failed(), 1);
    let failed = &table.rows[1];
    assert!(
        failed.error.as_deref().unwrap().contains("control period must be a finite number > 0"),
        "{:?}",
        failed.error
    );
    assert!(failed.figures.iter().all(Option::is_none));
    assert!(table.rows[0].figures.iter().all(Option::is_some));
    let csv = String::from_utf8(table.to_csv()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("run,dt,displacement_x,"), "{}", lines[0]);
    assert!(lines[2].starts_with("1,0.0,,,"), "{}", lines[2]);
    assert!(lines[2].contains(",failed,"), "{}", lines[2]);
    // Every number in the CSV reads back to the table's double.
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(first[2].parse::<f64>().unwrap(), table.rows[0].figures[0].unwrap());
}

#[test]
fn random_sweeps_draw_the_same_runs_whatever_the_shard() {
    let text = r#"
robot = "double_pendulum"
figures = ["com_end_z"]
[base]
duration = 0.1
[random]
count = 6
seed = 42
[random.uniform.params]
upper_mass = [0.5, 2.0]
[random.log_uniform.params]
lower_mass = [0.1, 10.0]
[random.choice]
integrator = ["rk4", "dopri5"]
"#;
    let sweep = Sweep::parse(text, "random.toml").unwrap();
    let again = Sweep::parse(text, "random.toml").unwrap();
    assert_eq!(sweep.points, again.points);
    assert_eq!(sweep.fingerprint, again.fingerprint);
    let names: Vec<&str> = sweep.inputs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["integrator", "params.lower_mass", "params.upper_mass"]);
    for point in &sweep.points {
        let (softgen::Cell::Number(lower), softgen::Cell::Number(upper)) = (&point[1], &point[2]) else {
            panic!("{point:?}")
        };
        assert!((0.1..=10.0).contains(lower) && (0.5..=2.0).contains(upper), "{point:?}");
    }
    let reseeded = Sweep::parse(&text.replace("seed = 42", "seed = 43"), "random.toml").unwrap();
    assert_ne!(sweep.points, reseeded.points);
    assert_ne!(sweep.fingerprint, reseeded.fingerprint);
    let table = whole(&sweep);
    assert_eq!(table.failed(), 0);
}

#[test]
fn experiment_runs_sweep() {
    // The WPI snake's valve-wave run (001) over two frequencies, short runs.
    let text = r#"
experiment = "001-speed-map"
[base]
duration = 4.0
transient_cycles = 2
pressure = 48.0
[grid]
frequency = [1.5, 2.0]
model = ["complex", "simplified"]
"#;
    let sweep = Sweep::parse(text, "wpi.toml").unwrap();
    let table = whole(&sweep);
    assert_eq!(table.failed(), 0, "{:?}", table.rows);
    for row in &table.rows {
        let speed = row.figures[0].unwrap();
        assert!(speed > 0.02 && speed < 0.5, "{row:?}");
        // Straight ahead at phi = 0: no circle, or a huge one.
        assert!(row.figures[1].map_or(true, |r| r > 1.0), "{row:?}");
    }
    // A pinniped trial (002), backward crawling for 1 s after 0.2 s of settling.
    let text = r#"
experiment = "002-crawling"
figures = ["displacement_x", "speed"]
[base]
duration = 1.0
settle = 0.2
[grid]
gait = ["backward"]
stride = [0.10]
"#;
    let sweep = Sweep::parse(text, "trial.toml").unwrap();
    let table = whole(&sweep);
    assert_eq!(table.failed(), 0, "{:?}", table.rows);
    assert!(table.rows[0].figures[0].unwrap() < 0.0, "backward crawling moves -x: {:?}", table.rows[0]);
}

#[test]
fn grid_orders_runs_with_the_last_key_fastest() {
    let text = "robot = \"double_pendulum\"\n[base]\nduration = 0.1\n[grid]\nramp = [0.0, 1.0]\n[grid.params]\nupper_mass = { from = 1.0, to = 2.0, count = 3 }\n";
    let sweep = Sweep::parse(text, "g.toml").unwrap();
    assert_eq!(sweep.name, "g");
    assert_eq!(sweep.points.len(), 6);
    assert_eq!(sweep.inputs[0].0, "params.upper_mass");
    assert_eq!(sweep.points[1], vec![Cell::Number(1.0), Cell::Number(1.0)]);
}
