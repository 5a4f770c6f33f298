//! A board emulator that speaks docs/serial-protocol.md on stdin/stdout (give it a
//! pseudo-terminal's master side): acknowledges every good frame, rejects damaged ones, and
//! logs every received value to a CSV so tests can check what arrived.
//!
//! Faults on request: `--silent-after N` stops acknowledging after N frames (but keeps
//! logging), `--corrupt-ack N` damages the acknowledgement of frame N.

use softgen_runtime::protocol::{self, Decoded, Decoder, MAX_FRAME};
use std::io::{Read, Write};

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
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--log" => log_path = Some(value("--log")?),
            "--silent-after" => {
                silent_after = Some(value("--silent-after")?.parse().map_err(|_| "--silent-after takes a count")?)
            }
            "--corrupt-ack" => {
                corrupt_ack = Some(value("--corrupt-ack")?.parse().map_err(|_| "--corrupt-ack takes a sequence")?)
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: --log FILE [--silent-after N] [--corrupt-ack SEQ]"
                ))
            }
        }
    }
    let log_path = log_path.ok_or("--log FILE is required")?;
    let mut log = std::io::BufWriter::new(std::fs::File::create(&log_path).map_err(|e| format!("{log_path}: {e}"))?);
    writeln!(log, "sequence,type,kind,channel,value").map_err(|e| e.to_string())?;
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut decoder = Decoder::default();
    let mut buffer = [0u8; 512];
    let mut frames: u64 = 0;
    let mut reply = [0u8; MAX_FRAME];
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
            let answer = match &decoded {
                Decoded::Frame { kind: protocol::SET, sequence, .. } => match protocol::decode_set(decoded.payload()) {
                    Some(values) => {
                        for v in values {
                            writeln!(log, "{sequence},set,{},{},{}", v.kind(), v.channel(), v.number())
                                .map_err(|e| e.to_string())?;
                        }
                        (protocol::ACK, *sequence, None)
                    }
                    None => (protocol::NAK, *sequence, Some(protocol::NAK_MALFORMED)),
                },
                Decoded::Frame { kind: protocol::SAFE, sequence, .. } => {
                    writeln!(log, "{sequence},safe,,,").map_err(|e| e.to_string())?;
                    (protocol::ACK, *sequence, None)
                }
                Decoded::Frame { kind: protocol::PING, sequence, .. } => (protocol::ACK, *sequence, None),
                Decoded::Frame { sequence, .. } => (protocol::NAK, *sequence, Some(protocol::NAK_TYPE)),
                Decoded::BadCrc { sequence } => {
                    writeln!(log, "{sequence},corrupted,,,").map_err(|e| e.to_string())?;
                    (protocol::NAK, *sequence, Some(protocol::NAK_CRC))
                }
                Decoded::BadVersion { sequence, .. } => (protocol::NAK, *sequence, Some(protocol::NAK_VERSION)),
            };
            log.flush().map_err(|e| e.to_string())?;
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
            let n = protocol::encode(kind, sequence, &payload[..length], &mut reply)?;
            if corrupt_ack == Some(sequence) {
                reply[n - 1] ^= 0x5A;
            }
            output.write_all(&reply[..n]).map_err(|e| e.to_string())?;
            output.flush().map_err(|e| e.to_string())?;
        }
    }
    log.flush().map_err(|e| e.to_string())
}
