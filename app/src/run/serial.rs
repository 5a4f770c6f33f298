//! The serial board device: SET frames of docs/src/control/serial-protocol.md, one per control period,
//! each acknowledged by the board. A NAK, a corrupted answer or an acknowledgement overdue
//! past the timeout is a device error, which sends the run to its safe state. The line opens
//! with a PING in the newest protocol version; a board that rejects the version is spoken to
//! in version 1. Version-2 boards send their sensors' readings (READINGS frames), which go,
//! stamped on the loop's clock, to the estimator's queue.

use nix::sys::termios::{cfmakeraw, cfsetspeed, tcgetattr, tcsetattr, BaudRate, SetArg};
use softgen_runtime::protocol::{self, BoardReading, Decoded, Decoder, MAX_FRAME};
use softgen_runtime::{Device, DeviceError, DeviceValue, Reading, ReadingQueue};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Frames in flight before the oldest must have been acknowledged: a second of frames at
/// the loop's 1 kHz, so that the acknowledgement timeout (`--ack-timeout-ms`, checked on the
/// oldest frame), not the window, decides when a board is silent. With 64, a board that
/// stalled for 64 ms at 1 kHz was called silent whatever the timeout (a CI run's emulator,
/// on a loaded machine, with the timeout at 500 ms).
const IN_FLIGHT: usize = 1024;

/// Host frames whose send time is kept, to stamp readings that answer them.
const SENT_TIMES: usize = 256;

/// How long the board may take to answer the opening PING: longer than a frame's
/// acknowledgement, as a board (or its emulator) may still be starting.
const OPENING_TIMEOUT: Duration = Duration::from_secs(2);

/// The board's sensors the estimator reads: which sensor (index in the run's sensor list)
/// each board channel is, and the queue their readings go to.
pub struct BoardSensors {
    pub channels: Vec<(u16, u16)>,
    pub names: Vec<String>,
    pub queue: Arc<ReadingQueue>,
}

/// Counts of the board's readings.
#[derive(Clone, Copy, Debug, Default)]
pub struct BoardReadingCounts {
    /// Readings put on the estimator's queue.
    pub taken: u64,
    /// Readings of channels no sensor of the run reads.
    pub unread: u64,
    /// Readings answering a frame too old to know when it was sent.
    pub unstamped: u64,
}

/// The serial board as a device: frames sent in the board protocol, each acknowledged within a
/// timeout, and the board's sensor readings taken from its answers.
pub struct SerialDevice {
    name: String,
    port: File,
    decoder: Decoder,
    sequence: u16,
    frame: [u8; MAX_FRAME],
    /// Sent, unacknowledged frames: (sequence, when sent), oldest first.
    pending: [(u16, Instant); IN_FLIGHT],
    pending_len: usize,
    ack_timeout: Duration,
    read_buffer: [u8; 512],
    /// The protocol version the board speaks.
    version: u8,
    /// (sequence, loop time) of the frames sent lately, by sequence modulo SENT_TIMES.
    sent_times: [Option<(u16, f64)>; SENT_TIMES],
    sensors: Option<BoardSensors>,
    readings: Vec<BoardReading>,
    /// The board's readings counted by what became of them.
    pub counts: BoardReadingCounts,
    /// The sequence of a frame the board rejected for its version.
    rejected_version: Option<u16>,
}

impl SerialDevice {
    /// Opens `path` raw (no echo, no line editing), non-blocking, and agrees the protocol
    /// version with the board; `sensors`, if any, need version 2.
    pub fn open(path: &str, ack_timeout: Duration, sensors: Option<BoardSensors>) -> Result<SerialDevice, String> {
        let port = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags((nix::fcntl::OFlag::O_NOCTTY | nix::fcntl::OFlag::O_NONBLOCK).bits())
            .open(path)
            .map_err(|e| format!("{path}: {e}"))?;
        let mut termios = tcgetattr(&port).map_err(|e| format!("{path}: not a serial line ({e})"))?;
        cfmakeraw(&mut termios);
        cfsetspeed(&mut termios, BaudRate::B115200).map_err(|e| format!("{path}: {e}"))?;
        tcsetattr(&port, SetArg::TCSANOW, &termios).map_err(|e| format!("{path}: {e}"))?;
        let mut board = SerialDevice {
            name: format!("serial board on {path}"),
            port,
            decoder: Decoder::default(),
            sequence: 0,
            frame: [0; MAX_FRAME],
            pending: [(0, Instant::now()); IN_FLIGHT],
            pending_len: 0,
            ack_timeout,
            read_buffer: [0; 512],
            version: protocol::VERSION,
            sent_times: [None; SENT_TIMES],
            sensors: None,
            readings: Vec::with_capacity(protocol::MAX_READINGS),
            counts: BoardReadingCounts::default(),
            rejected_version: None,
        };
        board.negotiate().map_err(|e| e.0)?;
        if board.version < 2 {
            if let Some(s) = &sensors {
                return Err(format!(
                    "{}: the board speaks protocol version {}; its sensors ({}) need version 2 (READINGS frames)",
                    board.name,
                    board.version,
                    s.names.join(", ")
                ));
            }
        }
        board.sensors = sensors;
        Ok(board)
    }

    /// The protocol version agreed with the board.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Sends PING in the newest version and waits for the answer: an ACK keeps it, a NAK for
    /// an unsupported version falls back to version 1 (and PINGs again), silence is an error.
    fn negotiate(&mut self) -> Result<(), DeviceError> {
        loop {
            self.send(protocol::PING, &[])?;
            let ping = self.pending[0].0;
            let start = Instant::now();
            loop {
                match self.poll() {
                    Ok(()) if self.pending_len == 0 => return Ok(()),
                    Ok(()) => {}
                    Err(_) if self.rejected_version == Some(ping) && self.version > protocol::OLDEST_VERSION => {
                        self.version = protocol::OLDEST_VERSION;
                        self.pending_len = 0;
                        self.rejected_version = None;
                        break;
                    }
                    Err(e) => return Err(e),
                }
                if start.elapsed() > OPENING_TIMEOUT {
                    return Err(DeviceError(format!(
                        "{}: board silent: no answer to the opening PING within {} s",
                        self.name,
                        OPENING_TIMEOUT.as_secs()
                    )));
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        }
    }

    /// Reads whatever the board has sent, settles acknowledgements and queues readings.
    fn poll(&mut self) -> Result<(), DeviceError> {
        loop {
            match self.port.read(&mut self.read_buffer) {
                Ok(0) => break,
                Ok(n) => self.decoder.push(&self.read_buffer[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => break,
                Err(e) => return Err(DeviceError(format!("{}: read: {e}", self.name))),
            }
        }
        while let Some(decoded) = self.decoder.next_frame() {
            match decoded {
                Decoded::Frame { kind: protocol::ACK, .. } => {
                    let p = decoded.payload();
                    if p.len() != 2 {
                        return Err(DeviceError(format!("{}: malformed acknowledgement", self.name)));
                    }
                    let acked = u16::from_le_bytes([p[0], p[1]]);
                    // Acknowledgements arrive in order: drop everything up to the acked frame.
                    if let Some(i) = self.pending[..self.pending_len].iter().position(|(s, _)| *s == acked) {
                        self.pending.copy_within(i + 1..self.pending_len, 0);
                        self.pending_len -= i + 1;
                    }
                }
                Decoded::Frame { kind: protocol::NAK, .. } => {
                    let p = decoded.payload();
                    let (sequence, reason) =
                        if p.len() == 3 { (u16::from_le_bytes([p[0], p[1]]), p[2]) } else { (0, 0) };
                    let why = match reason {
                        protocol::NAK_CRC => "corrupted frame (bad CRC)",
                        protocol::NAK_VERSION => {
                            self.rejected_version = Some(sequence);
                            "unsupported protocol version"
                        }
                        protocol::NAK_MALFORMED => "malformed payload",
                        protocol::NAK_TYPE => "unknown frame type",
                        _ => "unknown reason",
                    };
                    return Err(DeviceError(format!("{}: board rejected frame {sequence}: {why}", self.name)));
                }
                Decoded::Frame { kind: protocol::READINGS, .. } => self.take_readings(decoded.payload())?,
                Decoded::Frame { kind, .. } => {
                    return Err(DeviceError(format!(
                        "{}: unexpected frame type {kind:#04x} from the board",
                        self.name
                    )));
                }
                Decoded::BadCrc { sequence } => {
                    return Err(DeviceError(format!(
                        "{}: corrupted frame from the board (sequence {sequence}, bad CRC)",
                        self.name
                    )));
                }
                Decoded::BadVersion { version, .. } => {
                    return Err(DeviceError(format!(
                        "{}: board speaks protocol version {version}, host speaks {}",
                        self.name,
                        protocol::VERSION
                    )));
                }
            }
        }
        if self.pending_len > 0 {
            let (sequence, sent) = self.pending[0];
            if sent.elapsed() > self.ack_timeout {
                // Reported once: the frames in flight are given up on, so the safe state's
                // frames that follow still go out (a board that stopped answering may still
                // listen), each watched afresh.
                self.pending_len = 0;
                return Err(DeviceError(format!(
                    "{}: board silent: frame {sequence} not acknowledged within {} ms",
                    self.name,
                    self.ack_timeout.as_millis()
                )));
            }
        }
        Ok(())
    }

    /// A READINGS frame's readings onto the estimator's queue, each stamped at the loop time
    /// its answered frame was sent plus the reading's offset.
    fn take_readings(&mut self, payload: &[u8]) -> Result<(), DeviceError> {
        let answers = protocol::decode_readings(payload, &mut self.readings)
            .ok_or_else(|| DeviceError(format!("{}: malformed readings frame", self.name)))?;
        let sent = self.sent_times[answers as usize % SENT_TIMES].filter(|(s, _)| *s == answers).map(|(_, t)| t);
        for r in &self.readings {
            let sensor = self.sensors.as_ref().and_then(|s| s.channels.iter().find(|(c, _)| *c == r.channel));
            match (sensor, sent) {
                (None, _) => self.counts.unread += 1,
                (Some(_), None) => self.counts.unstamped += 1,
                (Some((_, sensor)), Some(t)) => {
                    let reading = Reading {
                        sensor: *sensor,
                        stamp: t + r.offset_us as f64 * 1e-6,
                        values: [r.value as f64, 0.0, 0.0],
                    };
                    if let Some(s) = &self.sensors {
                        s.queue.push(reading);
                    }
                    self.counts.taken += 1;
                }
            }
        }
        Ok(())
    }

    fn send(&mut self, kind: u8, values: &[DeviceValue]) -> Result<(), DeviceError> {
        let length = if kind == protocol::SET {
            protocol::encode_set(self.version, self.sequence, values, &mut self.frame)
        } else {
            protocol::encode_version(self.version, kind, self.sequence, &[], &mut self.frame)
        }
        .map_err(|e| DeviceError(format!("{}: {e}", self.name)))?;
        let mut written = 0;
        let start = Instant::now();
        while written < length {
            match self.port.write(&self.frame[written..length]) {
                Ok(n) => written += n,
                Err(e)
                    if (e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted)
                        && start.elapsed() < self.ack_timeout =>
                {
                    std::hint::spin_loop()
                }
                Err(e) => return Err(DeviceError(format!("{}: write: {e}", self.name))),
            }
        }
        if self.pending_len == IN_FLIGHT {
            return Err(DeviceError(format!("{}: board silent: {IN_FLIGHT} frames unacknowledged", self.name)));
        }
        self.pending[self.pending_len] = (self.sequence, Instant::now());
        self.pending_len += 1;
        self.sequence = self.sequence.wrapping_add(1);
        Ok(())
    }
}

impl Device for SerialDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        self.poll()?;
        self.sent_times[self.sequence as usize % SENT_TIMES] = Some((self.sequence, t));
        self.send(protocol::SET, values)
    }

    /// Sends SAFE as well (the board's own safe state), then waits up to the timeout for
    /// every frame to be acknowledged.
    fn flush(&mut self) -> Result<(), DeviceError> {
        self.send(protocol::SAFE, &[])?;
        let start = Instant::now();
        while self.pending_len > 0 && start.elapsed() < self.ack_timeout {
            self.poll()?;
            std::thread::sleep(Duration::from_micros(200));
        }
        self.poll()
    }
}
