//! The serial board device: SET frames of docs/serial-protocol.md, one per control period,
//! each acknowledged by the board. A NAK, a corrupted answer or an acknowledgement overdue
//! past the timeout is a device error, which sends the run to its safe state.

use nix::sys::termios::{cfmakeraw, cfsetspeed, tcgetattr, tcsetattr, BaudRate, SetArg};
use softgen_runtime::protocol::{self, Decoded, Decoder, MAX_FRAME};
use softgen_runtime::{Device, DeviceError, DeviceValue};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

/// Frames in flight before the oldest must have been acknowledged.
const IN_FLIGHT: usize = 64;

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
}

impl SerialDevice {
    /// Opens `path` raw (no echo, no line editing), non-blocking.
    pub fn open(path: &str, ack_timeout: Duration) -> Result<SerialDevice, String> {
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
        Ok(SerialDevice {
            name: format!("serial board on {path}"),
            port,
            decoder: Decoder::default(),
            sequence: 0,
            frame: [0; MAX_FRAME],
            pending: [(0, Instant::now()); IN_FLIGHT],
            pending_len: 0,
            ack_timeout,
            read_buffer: [0; 512],
        })
    }

    /// Reads whatever the board has sent and settles acknowledgements.
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
                        protocol::NAK_VERSION => "unsupported protocol version",
                        protocol::NAK_MALFORMED => "malformed payload",
                        protocol::NAK_TYPE => "unknown frame type",
                        _ => "unknown reason",
                    };
                    return Err(DeviceError(format!("{}: board rejected frame {sequence}: {why}", self.name)));
                }
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
                return Err(DeviceError(format!(
                    "{}: board silent: frame {sequence} not acknowledged within {} ms",
                    self.name,
                    self.ack_timeout.as_millis()
                )));
            }
        }
        Ok(())
    }

    fn send(&mut self, kind: u8, values: &[DeviceValue]) -> Result<(), DeviceError> {
        let length = if kind == protocol::SET {
            protocol::encode_set(self.sequence, values, &mut self.frame)
        } else {
            protocol::encode(kind, self.sequence, &[], &mut self.frame)
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

    fn write(&mut self, _t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
        self.poll()?;
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
