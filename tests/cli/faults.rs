//! Faults from outside the process, injected into the `softgen` binary: a sweep and a shard
//! killed with SIGKILL mid-run resume to the table an uninterrupted run gives, byte for byte;
//! an output that cannot grow (a full disk, imitated by a file-size limit) fails the run with
//! the system's message, and the earlier outputs and the sweep's journal survive it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The pedal-wave sweep, 3 x 3 runs of `seconds` each.
fn sweep_file(folder: &Path, seconds: f64) -> std::path::PathBuf {
    let text =
        include_str!("../../sweeps/pedal_wave_gait.toml").replace("duration = 4.0", &format!("duration = {seconds:?}"));
    let path = folder.join("pedal.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn softgen(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_softgen"));
    command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

fn finished(mut command: Command) -> Output {
    command.output().unwrap()
}

/// Starts `args`, waits until the journal holds at least `lines` runs, then SIGKILLs it.
fn killed_after(args: &[&str], journal: &Path, lines: usize) {
    let mut child = softgen(args).spawn().unwrap();
    let start = Instant::now();
    loop {
        let runs = std::fs::read_to_string(journal).map_or(0, |t| t.lines().count().saturating_sub(1));
        if runs >= lines {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{args:?} ended ({status}) before the kill, with {runs} runs journalled");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{args:?}: no progress");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(status.code().is_none(), "killed by SIGKILL, not ended: {status}");
}

#[test]
fn a_sweep_and_a_shard_killed_mid_run_resume_to_the_uninterrupted_table() {
    let folder = tempfile::tempdir().unwrap();
    // Runs of 30 s, tens of milliseconds each: long enough to be killed between them.
    let sweep = sweep_file(folder.path(), 30.0);
    let sweep = sweep.to_str().unwrap();
    for shard in [None, Some("1/2")] {
        let name = |what: &str| folder.path().join(format!("{what}-{}.parquet", shard.map_or("whole", |_| "shard")));
        let (reference, resumed) = (name("reference"), name("resumed"));
        let with_shard = |output: &Path| {
            let mut args = vec!["sweep".to_string(), sweep.to_string(), "--workers".into(), "1".into()];
            args.extend(["--output".into(), output.to_str().unwrap().to_string()]);
            if let Some(s) = shard {
                args.extend(["--shard".into(), s.into()]);
            }
            args
        };
        let args = with_shard(&reference);
        let out = finished(softgen(&args.iter().map(String::as_str).collect::<Vec<_>>()));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let args = with_shard(&resumed);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let journal = softgen::journal_path(&resumed);
        killed_after(&args, &journal, 1);
        killed_after(&args, &journal, 2);
        assert!(!resumed.exists(), "no table before the sweep is complete");
        let out = finished(softgen(&args));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(&resumed).unwrap(), std::fs::read(&reference).unwrap(), "{shard:?}: {stdout}");
        assert!(!journal.exists(), "the journal goes once the table is written");
    }
}

/// Runs `args` with files limited to `blocks` of 512 bytes, SIGXFSZ ignored so that a write
/// past the limit fails with EFBIG, as a write to a full disk fails with ENOSPC.
fn with_file_limit(blocks: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_softgen"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_fails_the_run_and_loses_nothing_written_before() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("out");
    let simulate = ["simulate", "--duration", "2", "--output", out.to_str().unwrap()];
    let first = finished(softgen(&simulate));
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let csv = out.join("snake_pedal_wave.csv");
    let before = std::fs::read(&csv).unwrap();
    assert!(before.len() > 16 * 1024, "the CSV must outgrow the limit");
    let full = with_file_limit(32, &simulate);
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert!(!full.status.success());
    assert!(stderr.contains("File too large"), "the system's reason: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read(&csv).unwrap(), before, "the earlier CSV is kept byte for byte");
    let partial: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");

    // A sweep whose journal fills the disk after a few runs: it says so and stops, and the
    // journal keeps those runs (its last line cut) for the resume once there is room.
    let sweep = sweep_file(folder.path(), 1.0);
    let table = folder.path().join("pedal.csv");
    let args = ["sweep", sweep.to_str().unwrap(), "--format", "csv", "--output", table.to_str().unwrap()];
    let full = with_file_limit(1, &args);
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert!(!full.status.success(), "{stderr}");
    assert!(stderr.contains("writing the journal") && stderr.contains("File too large"), "{stderr}");
    let journal = softgen::journal_path(&table);
    // Whole lines after the header; the cut one is run again.
    let runs = std::fs::read_to_string(&journal).map_or(0, |t| t.matches('\n').count().saturating_sub(1));
    assert!(runs > 0, "the journal survived with the runs finished before the disk filled");
    let resumed = finished(softgen(&args));
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(resumed.status.success(), "{stdout}{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(stdout.contains("9 runs (0 failed") && stdout.contains(&format!("{runs} from the journal")), "{stdout}");
    assert!(std::fs::read_to_string(&table).unwrap().lines().count() == 10, "a header and nine rows");
}
