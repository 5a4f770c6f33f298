//! A board emulator that speaks docs/src/control/serial-protocol.md on stdin/stdout (give it a
//! pseudo-terminal's master side): acknowledges every good frame, rejects damaged ones, and
//! logs every received value to a CSV so tests can check what arrived.
//!
//! With `--robot R` the board drives an emulated robot: the simulated plant its run
//! configuration wires, one control period per SET frame; the robot's sensors come back as
//! READINGS frames (board channels) and NatNet frames over UDP (motion-capture rigid
//! bodies), as the robot would be read.
//!
//! Faults on request: `--silent-after N` stops acknowledging after N frames (but keeps
//! logging), `--corrupt-ack N` damages the acknowledgement of frame N, `--version 1` is a
//! board of protocol version 1 (no readings; newer frames rejected).

use softgen::{emulated_robot, RobotEmulatorOptions};
use softgen_runtime::protocol::{self, Decoded, Decoder, MAX_FRAME};
use std::io::{Read, Write};

const USAGE: &str =
    "usage: softgen-board-emulator [--log FILE] [--silent-after N] [--corrupt-ack SEQ] [--version 1|2] \
                     [--robot NAME [--config FILE.run.toml] [--rate HZ] [--natnet-version 3.1|4.1] [--truth FILE]]";

fn main() {
    if let Err(e) = run() {
        eprintln!("board emulator: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut log_path = None;
    let mut silent_after: Option<u64> = None;
    let mut corrupt_ack: Option<u16> = None;
    let mut board_version = protocol::VERSION;
    let mut robot: Option<RobotEmulatorOptions> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value; {USAGE}"));
        match a.as_str() {
            "--log" => log_path = Some(value("--log")?),
            "--silent-after" => {
                silent_after = Some(value("--silent-after")?.parse().map_err(|_| "--silent-after takes a count")?)
            }
            "--corrupt-ack" => {
                corrupt_ack = Some(value("--corrupt-ack")?.parse().map_err(|_| "--corrupt-ack takes a sequence")?)
            }
            "--version" => {
                board_version = match value("--version")?.as_str() {
                    "1" => 1,
                    "2" => 2,
                    other => return Err(format!("--version {other}: the protocol has versions 1 and 2")),
                }
            }
            "--robot" => {
                robot = Some(RobotEmulatorOptions {
                    robot: value("--robot")?,
                    config: None,
                    rate_hz: None,
                    natnet_version: [4, 1, 0, 0],
                    truth: None,
                })
            }
            "--config" | "--rate" | "--natnet-version" | "--truth" => {
                let v = value(&a)?;
                let r = robot.as_mut().ok_or(format!("{a} comes after --robot NAME"))?;
                match a.as_str() {
                    "--config" => r.config = Some(v.into()),
                    "--rate" => {
                        r.rate_hz = Some(v.parse().map_err(|_| format!("--rate {v}: not a number of frames a second"))?)
                    }
                    "--natnet-version" => {
                        r.natnet_version = match v.as_str() {
                            "3.0" => [3, 0, 0, 0],
                            "3.1" => [3, 1, 0, 0],
                            "4.0" => [4, 0, 0, 0],
                            "4.1" => [4, 1, 0, 0],
                            other => return Err(format!("--natnet-version {other}: one of 3.0, 3.1, 4.0, 4.1")),
                        }
                    }
                    _ => r.truth = Some(v.into()),
                }
            }
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    if log_path.is_none() && robot.is_none() {
        return Err(format!("--log FILE is required without --robot; {USAGE}"));
    }
    let mut robot = robot.as_ref().map(emulated_robot).transpose()?;
    let mut log = match &log_path {
        Some(path) => {
            let mut log = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?);
            writeln!(log, "sequence,type,kind,channel,value").map_err(|e| e.to_string())?;
            Some(log)
        }
        None => None,
    };
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut decoder = Decoder::default();
    let mut buffer = [0u8; 512];
    let mut frames: u64 = 0;
    let mut reply = [0u8; MAX_FRAME];
    let mut readings = Vec::with_capacity(64);
    let mut own_sequence: u16 = 0;
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The host closed the line (pty hang-up).
            Err(_) => break,
        };
        decoder.push(&buffer[..n]);
        while let Some(decoded) = decoder.next_frame() {
            frames += 1;
            readings.clear();
            let mut version = board_version;
            let answer = match &decoded {
                Decoded::Frame { version: v, sequence, .. } if *v > board_version => {
                    (protocol::NAK, *sequence, Some(protocol::NAK_VERSION))
                }
                Decoded::Frame { version: v, kind: protocol::SET, sequence, .. } => {
                    version = *v;
                    match protocol::decode_set(decoded.payload()) {
                        Some(values) => {
                            if let Some(log) = &mut log {
                                for v in &values {
                                    writeln!(log, "{sequence},set,{},{},{}", v.kind(), v.channel(), v.number())
                                        .map_err(|e| e.to_string())?;
                                }
                            }
                            if let Some(robot) = &mut robot {
                                robot.set(&values, &mut readings)?;
                            }
                            (protocol::ACK, *sequence, None)
                        }
                        None => (protocol::NAK, *sequence, Some(protocol::NAK_MALFORMED)),
                    }
                }
                Decoded::Frame { version: v, kind: protocol::SAFE, sequence, .. } => {
                    version = *v;
                    if let Some(log) = &mut log {
                        writeln!(log, "{sequence},safe,,,").map_err(|e| e.to_string())?;
                    }
                    (protocol::ACK, *sequence, None)
                }
                Decoded::Frame { version: v, kind: protocol::PING, sequence, .. } => {
                    version = *v;
                    (protocol::ACK, *sequence, None)
                }
                Decoded::Frame { sequence, .. } => (protocol::NAK, *sequence, Some(protocol::NAK_TYPE)),
                Decoded::BadCrc { sequence } => {
                    if let Some(log) = &mut log {
                        writeln!(log, "{sequence},corrupted,,,").map_err(|e| e.to_string())?;
                    }
                    (protocol::NAK, *sequence, Some(protocol::NAK_CRC))
                }
                Decoded::BadVersion { sequence, .. } => (protocol::NAK, *sequence, Some(protocol::NAK_VERSION)),
            };
            if let Some(log) = &mut log {
                log.flush().map_err(|e| e.to_string())?;
            }
            if silent_after.is_some_and(|limit| frames > limit) {
                continue;
            }
            let (kind, sequence, reason) = answer;
            let mut payload = [0u8; 3];
            payload[..2].copy_from_slice(&sequence.to_le_bytes());
            let length = match reason {
                Some(r) => {
                    payload[2] = r;
                    3
                }
                None => 2,
            };
            let n = protocol::encode_version(version, kind, sequence, &payload[..length], &mut reply)?;
            if corrupt_ack == Some(sequence) {
                reply[n - 1] ^= 0x5A;
            }
            output.write_all(&reply[..n]).map_err(|e| e.to_string())?;
            // The sensors' readings that arrived by this frame, after its acknowledgement
            // (version 2 only).
            if version >= 2 {
                for chunk in readings.chunks(protocol::MAX_READINGS) {
                    let n = protocol::encode_readings(own_sequence, sequence, chunk, &mut reply)?;
                    own_sequence = own_sequence.wrapping_add(1);
                    output.write_all(&reply[..n]).map_err(|e| e.to_string())?;
                }
            }
            output.flush().map_err(|e| e.to_string())?;
        }
    }
    if let Some(log) = &mut log {
        log.flush().map_err(|e| e.to_string())?;
    }
    if let Some(robot) = robot {
        eprintln!("{}", robot.finish()?);
    }
    Ok(())
}
