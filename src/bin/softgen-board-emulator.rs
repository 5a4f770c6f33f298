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

use softgen::{emulated_robot, EmulatedRobot, RobotEmulatorOptions};
use softgen_runtime::protocol::BoardReading;
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

/// The command line's settings.
struct Options {
    /// Where every received value is logged (CSV).
    log_path: Option<String>,
    /// Frames acknowledged before the board falls silent.
    silent_after: Option<u64>,
    /// The frame whose acknowledgement is damaged.
    corrupt_ack: Option<u16>,
    /// The protocol version the board speaks.
    board_version: u8,
    /// The emulated robot behind the board.
    robot: Option<RobotEmulatorOptions>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        log_path: None,
        silent_after: None,
        corrupt_ack: None,
        board_version: protocol::VERSION,
        robot: None,
    };
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value; {USAGE}"));
        match a.as_str() {
            "--log" => options.log_path = Some(value("--log")?),
            "--silent-after" => {
                options.silent_after =
                    Some(value("--silent-after")?.parse().map_err(|_| "--silent-after takes a count")?)
            }
            "--corrupt-ack" => {
                options.corrupt_ack =
                    Some(value("--corrupt-ack")?.parse().map_err(|_| "--corrupt-ack takes a sequence")?)
            }
            "--version" => {
                options.board_version = match value("--version")?.as_str() {
                    "1" => 1,
                    "2" => 2,
                    other => return Err(format!("--version {other}: the protocol has versions 1 and 2")),
                }
            }
            "--robot" => {
                options.robot = Some(RobotEmulatorOptions {
                    robot: value("--robot")?,
                    config: None,
                    rate_hz: None,
                    natnet_version: [4, 1, 0, 0],
                    truth: None,
                })
            }
            "--config" | "--rate" | "--natnet-version" | "--truth" => {
                let v = value(&a)?;
                let r = options.robot.as_mut().ok_or(format!("{a} comes after --robot NAME"))?;
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
    if options.log_path.is_none() && options.robot.is_none() {
        return Err(format!("--log FILE is required without --robot; {USAGE}"));
    }
    Ok(options)
}

/// The log of every received value.
type Log = std::io::BufWriter<std::fs::File>;

/// The board: what it logs and drives, and what it answers.
struct Board {
    options: Options,
    log: Option<Log>,
    robot: Option<Box<dyn EmulatedRobot>>,
    /// The sensors' readings that arrived by the frame being answered.
    readings: Vec<BoardReading>,
    /// The board's own sequence, for its READINGS frames.
    own_sequence: u16,
    reply: [u8; MAX_FRAME],
}

fn run() -> Result<(), String> {
    let options = parse_args(std::env::args().skip(1))?;
    let robot = options.robot.as_ref().map(emulated_robot).transpose()?;
    let log = match &options.log_path {
        Some(path) => {
            let mut log = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?);
            writeln!(log, "sequence,type,kind,channel,value").map_err(|e| e.to_string())?;
            Some(log)
        }
        None => None,
    };
    let mut board =
        Board { options, log, robot, readings: Vec::with_capacity(64), own_sequence: 0, reply: [0u8; MAX_FRAME] };
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut decoder = Decoder::default();
    let mut buffer = [0u8; 512];
    let mut frames: u64 = 0;
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
            let (answer, version) = board.answer(&decoded)?;
            if board.options.silent_after.is_some_and(|limit| frames > limit) {
                continue;
            }
            board.reply(&mut output, answer, version)?;
        }
    }
    if let Some(log) = &mut board.log {
        log.flush().map_err(|e| e.to_string())?;
    }
    if let Some(robot) = board.robot {
        eprintln!("{}", robot.finish()?);
    }
    Ok(())
}

impl Board {
    /// A frame received: logged, its values applied to the robot, and the answer it gets
    /// (ACK or NAK, the sequence, a NAK's reason) with the version to answer in.
    fn answer(&mut self, decoded: &Decoded) -> Result<((u8, u16, Option<u8>), u8), String> {
        self.readings.clear();
        let board_version = self.options.board_version;
        let mut version = board_version;
        let answer = match decoded {
            Decoded::Frame { version: v, sequence, .. } if *v > board_version => {
                (protocol::NAK, *sequence, Some(protocol::NAK_VERSION))
            }
            Decoded::Frame { version: v, kind: protocol::SET, sequence, .. } => {
                version = *v;
                match protocol::decode_set(decoded.payload()) {
                    Some(values) => {
                        if let Some(log) = &mut self.log {
                            for v in &values {
                                writeln!(log, "{sequence},set,{},{},{}", v.kind(), v.channel(), v.number())
                                    .map_err(|e| e.to_string())?;
                            }
                        }
                        if let Some(robot) = &mut self.robot {
                            robot.set(&values, &mut self.readings)?;
                        }
                        (protocol::ACK, *sequence, None)
                    }
                    None => (protocol::NAK, *sequence, Some(protocol::NAK_MALFORMED)),
                }
            }
            Decoded::Frame { version: v, kind: protocol::SAFE, sequence, .. } => {
                version = *v;
                if let Some(log) = &mut self.log {
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
                if let Some(log) = &mut self.log {
                    writeln!(log, "{sequence},corrupted,,,").map_err(|e| e.to_string())?;
                }
                (protocol::NAK, *sequence, Some(protocol::NAK_CRC))
            }
            Decoded::BadVersion { sequence, .. } => (protocol::NAK, *sequence, Some(protocol::NAK_VERSION)),
        };
        if let Some(log) = &mut self.log {
            log.flush().map_err(|e| e.to_string())?;
        }
        Ok((answer, version))
    }

    /// The answer written to `output` in `version` (damaged where asked), then the
    /// sensors' readings that arrived by this frame (version 2 only).
    fn reply(
        &mut self,
        output: &mut impl Write,
        (kind, sequence, reason): (u8, u16, Option<u8>),
        version: u8,
    ) -> Result<(), String> {
        let reply = &mut self.reply;
        let mut payload = [0u8; 3];
        payload[..2].copy_from_slice(&sequence.to_le_bytes());
        let length = match reason {
            Some(r) => {
                payload[2] = r;
                3
            }
            None => 2,
        };
        let n = protocol::encode_version(version, kind, sequence, &payload[..length], reply)?;
        if self.options.corrupt_ack == Some(sequence) {
            reply[n - 1] ^= 0x5A;
        }
        output.write_all(&reply[..n]).map_err(|e| e.to_string())?;
        if version >= 2 {
            for chunk in self.readings.chunks(protocol::MAX_READINGS) {
                let n = protocol::encode_readings(self.own_sequence, sequence, chunk, reply)?;
                self.own_sequence = self.own_sequence.wrapping_add(1);
                output.write_all(&reply[..n]).map_err(|e| e.to_string())?;
            }
        }
        output.flush().map_err(|e| e.to_string())
    }
}
