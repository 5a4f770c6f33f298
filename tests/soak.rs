//! The soak's short version (benches/soak.sh for 15 s instead of an hour): the 1 kHz loop on
//! the simulated plant with every core kept busy, as on the robot (`--realtime`), ends with
//! its watchdog untripped, its statistics printed and its resident memory flat. Its own test
//! binary: the load it starts must not slow other tests' timeouts.

use std::process::Command;

#[test]
fn the_loop_soaks_under_load_with_its_watchdog_quiet_and_its_memory_flat() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(root.join("benches/soak.sh"))
        .args(["--duration", "15", "--realtime", "--out"])
        .arg(dir.path())
        .env("SOFTGEN", env!("CARGO_BIN_EXE_softgen"))
        .output()
        .expect("bash runs the soak script");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("soak: passed"), "{text}");
    assert!(text.contains("15001 periods"), "every period ran: {text}");
    for piece in ["p99.9 ", "period work mean", "resident ", "memory      "] {
        assert!(text.contains(piece), "`{piece}` reported: {text}");
    }
    // The memory samples: one a second, all read from the running process.
    let samples = std::fs::read_to_string(dir.path().join("memory.csv")).unwrap();
    assert!(samples.lines().count() >= 10, "{samples}");
}

#[test]
fn the_soak_refuses_bad_options_by_name() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (args, message) in [
        (&["--duration", "1h"][..], "--duration must be whole seconds, got `1h`"),
        (&["--duration", "2"][..], "--duration must be at least 5 s, got 2"),
        (&["--load", "-1"][..], "--load must be a whole number"),
        (&["--fast"][..], "unknown option `--fast`"),
    ] {
        let out = Command::new("bash")
            .arg(root.join("benches/soak.sh"))
            .args(args)
            .env("SOFTGEN", env!("CARGO_BIN_EXE_softgen"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
