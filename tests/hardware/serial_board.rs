//! The serial board protocol end to end over a pseudo-terminal pair: `softgen run` on the
//! slave side, the board emulator process on the master side.

use nix::pty::openpty;
use softgen_runtime::protocol::{self, Decoded, Decoder, MAX_FRAME};
use softgen_runtime::Recording;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The run configuration the robot comes with (its spec's sibling `.run.toml`).
fn run_config(robot: &str) -> &'static str {
    softgen::run_config_of(robot).unwrap_or_else(|| panic!("{robot} has no run configuration")).text
}

struct Line {
    emulator: Child,
    slave: Option<OwnedFd>,
    port: String,
}

fn start_emulator(log: &Path, extra: &[&str]) -> Line {
    let pty = openpty(None, None).unwrap();
    // openpty's descriptors are inherited across exec; mark them close-on-exec so that
    // processes spawned by parallel tests do not keep this line open.
    for fd in [&pty.master, &pty.slave] {
        nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC)).unwrap();
    }
    let port = nix::unistd::ttyname(&pty.slave).unwrap().to_string_lossy().to_string();
    let input = pty.master.try_clone().unwrap();
    let emulator = Command::new(env!("CARGO_BIN_EXE_softgen-board-emulator"))
        .arg("--log")
        .arg(log)
        .args(extra)
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(pty.master))
        .spawn()
        .unwrap();
    Line { emulator, slave: Some(pty.slave), port }
}

impl Line {
    /// Hangs up the line and waits for the emulator to finish its log.
    fn close(mut self) {
        drop(self.slave.take());
        let _ = self.emulator.wait();
    }
}

fn run_host(dir: &Path, port: &str, duration: &str) -> Output {
    let config = dir.join("snake.run.toml");
    std::fs::write(&config, run_config("snake_pedal_wave").replace("command_timeout = 0.05", "command_timeout = 10.0"))
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_softgen"))
        .args([
            "run",
            "--device",
            "serial",
            "--port",
            port,
            "--duration",
            duration,
            "--ack-timeout-ms",
            "200",
            "--config",
        ])
        .arg(&config)
        .arg("--record")
        .arg(dir.join("commands.csv"))
        .output()
        .unwrap()
}

/// The emulator's log: (sequence, type, kind, channel, value) rows.
fn board_log(path: &Path) -> Vec<(u16, String, String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[1].into(), f[2].into(), f[3].into(), f[4].into())
        })
        .collect()
}

#[test]
fn commands_arrive_in_order_with_correct_values() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("board.csv");
    let line = start_emulator(&log, &[]);
    let out = run_host(dir.path(), &line.port, "1");
    let port = line.port.clone();
    line.close();
    assert!(out.status.success(), "host on {port}: {}", String::from_utf8_lossy(&out.stderr));
    let sent =
        Recording::parse("commands.csv", &std::fs::read_to_string(dir.path().join("commands.csv")).unwrap()).unwrap();
    let received = board_log(&log);
    let sets: Vec<_> = received.iter().filter(|r| r.1 == "set").collect();
    assert_eq!(sets.len(), 5 * sent.periods.len(), "five servo values per period");
    for (period, (_, values)) in sent.periods.iter().enumerate() {
        for (k, v) in values.iter().enumerate() {
            let row = sets[5 * period + k];
            assert_eq!(row.0 as usize, period, "frames arrive in order");
            assert_eq!(row.2, v.kind());
            assert_eq!(row.3, v.channel().to_string());
            let value: f64 = row.4.parse().unwrap();
            assert!((value - v.number()).abs() <= 1e-6 * (1.0 + v.number().abs()), "{value} vs {}", v.number());
        }
    }
    assert_eq!(received.last().unwrap().1, "safe", "the board's own safe state is requested last");
}

#[test]
fn a_corrupted_frame_is_detected_and_reported() {
    // Board -> host: a damaged acknowledgement stops the run in the safe state.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("board.csv");
    let line = start_emulator(&log, &["--corrupt-ack", "100"]);
    let out = run_host(dir.path(), &line.port, "5");
    line.close();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("corrupted frame from the board (sequence 100, bad CRC)"), "{stderr}");
    let received = board_log(&log);
    let offs = received.iter().rev().take_while(|r| r.1 != "set" || r.2 == "off").filter(|r| r.2 == "off").count();
    assert_eq!(offs, 5, "all five servos switched off: {:?}", &received[received.len().saturating_sub(8)..]);

    // Host -> board: the board detects a damaged frame and answers NAK (bad CRC).
    let log = dir.path().join("board2.csv");
    let line = start_emulator(&log, &[]);
    let mut port = std::fs::OpenOptions::new().read(true).write(true).open(&line.port).unwrap();
    let mut termios = nix::sys::termios::tcgetattr(&port).unwrap();
    nix::sys::termios::cfmakeraw(&mut termios);
    nix::sys::termios::tcsetattr(&port, nix::sys::termios::SetArg::TCSANOW, &termios).unwrap();
    let mut frame = [0u8; MAX_FRAME];
    let n = protocol::encode_set(7, &[softgen_runtime::DeviceValue::Analog { channel: 1, volts: 2.0 }], &mut frame)
        .unwrap();
    frame[9] ^= 0x01;
    port.write_all(&frame[..n]).unwrap();
    let mut decoder = Decoder::default();
    let mut buffer = [0u8; 64];
    let answer = loop {
        let k = port.read(&mut buffer).unwrap();
        decoder.push(&buffer[..k]);
        if let Some(d) = decoder.next_frame() {
            break d;
        }
    };
    drop(port);
    line.close();
    let Decoded::Frame { kind, .. } = &answer else { panic!("{answer:?}") };
    assert_eq!(*kind, protocol::NAK);
    assert_eq!(answer.payload(), &[7, 0, protocol::NAK_CRC]);
    assert_eq!(board_log(&log)[0].1, "corrupted");
}

#[test]
fn a_silent_board_trips_the_watchdog_and_the_safe_state() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("board.csv");
    // An earlier run's record: a faulted run must leave it byte for byte and keep its own
    // beside it.
    let earlier = "t,earlier run\n";
    std::fs::write(dir.path().join("commands.csv"), earlier).unwrap();
    let line = start_emulator(&log, &["--silent-after", "300"]);
    let out = run_host(dir.path(), &line.port, "5");
    line.close();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("board silent"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("commands.csv")).unwrap(), earlier);
    let failed = std::fs::read_to_string(dir.path().join("commands.failed.csv")).unwrap();
    assert!(failed.lines().count() > 300, "the faulted run's own record is kept");
    let received = board_log(&log);
    // The board, though mute, still received the safe state: servos off, then SAFE.
    assert_eq!(received.last().unwrap().1, "safe");
    let before: Vec<_> = received.iter().rev().skip(1).take(5).collect();
    assert!(before.iter().all(|r| r.2 == "off"), "{before:?}");
    // The run lasted about 300 periods plus the acknowledgement timeout, not 5 s.
    let sets = received.iter().filter(|r| r.1 == "set").count() / 5;
    assert!((300..1500).contains(&sets), "{sets} periods");
}
