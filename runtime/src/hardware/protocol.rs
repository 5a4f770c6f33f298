//! The board protocol of docs/src/control/serial-protocol.md: frame encoding into fixed buffers (no
//! allocation per frame) and an incremental decoder that resynchronises after corruption.
//! Version 2 adds the board's sensor readings; the decoder reads frames of both versions.

use crate::hardware::actuation::DeviceValue;

/// The byte every frame starts with.
pub const SYNC: u8 = 0xA5;
/// The version the host speaks first; a board that NAKs it as unsupported is spoken to in
/// the oldest version (no sensor readings).
pub const VERSION: u8 = 2;
/// The oldest version the host speaks.
pub const OLDEST_VERSION: u8 = 1;
/// Host to board: set output values.
pub const SET: u8 = 0x01;
/// Host to board: every output to its safe state.
pub const SAFE: u8 = 0x02;
/// Host to board: are you there (answered, changes nothing).
pub const PING: u8 = 0x03;
/// Board to host: the frame was applied.
pub const ACK: u8 = 0x81;
/// Board to host: the frame was refused, with a reason code.
pub const NAK: u8 = 0x82;
/// Version 2: the board's sensor readings.
pub const READINGS: u8 = 0x83;
/// The largest payload a frame carries (bytes).
pub const MAX_PAYLOAD: usize = 250;
/// Largest frame: sync, version, type, sequence (2), length, payload, crc (2).
pub const MAX_FRAME: usize = 6 + MAX_PAYLOAD + 2;
/// Values per SET frame: each takes 7 bytes after the count byte.
pub const MAX_VALUES: usize = (MAX_PAYLOAD - 1) / 7;
/// Readings per READINGS frame: each takes 10 bytes after the answered sequence and count.
pub const MAX_READINGS: usize = (MAX_PAYLOAD - 3) / 10;

/// NAK reason: the frame's CRC did not match.
pub const NAK_CRC: u8 = 1;
/// NAK reason: the board does not speak the frame's version.
pub const NAK_VERSION: u8 = 2;
/// NAK reason: the payload does not parse.
pub const NAK_MALFORMED: u8 = 3;
/// NAK reason: an unknown frame type.
pub const NAK_TYPE: u8 = 4;

/// CRC-16/CCITT-FALSE.
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in bytes {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// Writes a frame of the current version into `out`, returning its length.
pub fn encode(kind: u8, sequence: u16, payload: &[u8], out: &mut [u8; MAX_FRAME]) -> Result<usize, String> {
    encode_version(VERSION, kind, sequence, payload, out)
}

/// Writes a frame of protocol `version` into `out`, returning its length.
pub fn encode_version(
    version: u8,
    kind: u8,
    sequence: u16,
    payload: &[u8],
    out: &mut [u8; MAX_FRAME],
) -> Result<usize, String> {
    if payload.len() > MAX_PAYLOAD {
        return Err(format!("payload of {} bytes exceeds {MAX_PAYLOAD}", payload.len()));
    }
    out[0] = SYNC;
    out[1] = version;
    out[2] = kind;
    out[3..5].copy_from_slice(&sequence.to_le_bytes());
    out[5] = payload.len() as u8;
    out[6..6 + payload.len()].copy_from_slice(payload);
    let end = 6 + payload.len();
    let crc = crc16(&out[1..end]);
    out[end..end + 2].copy_from_slice(&crc.to_le_bytes());
    Ok(end + 2)
}

/// A SET frame for `values`, in protocol `version`.
pub fn encode_set(
    version: u8,
    sequence: u16,
    values: &[DeviceValue],
    out: &mut [u8; MAX_FRAME],
) -> Result<usize, String> {
    if values.len() > MAX_VALUES {
        return Err(format!("{} values exceed {MAX_VALUES} per frame", values.len()));
    }
    let mut payload = [0u8; MAX_PAYLOAD];
    payload[0] = values.len() as u8;
    for (i, v) in values.iter().enumerate() {
        let at = 1 + 7 * i;
        payload[at] = match v {
            DeviceValue::Analog { .. } => 0,
            DeviceValue::Digital { .. } => 1,
            DeviceValue::Board { .. } => 2,
            DeviceValue::Off { .. } => 3,
        };
        payload[at + 1..at + 3].copy_from_slice(&v.channel().to_le_bytes());
        payload[at + 3..at + 7].copy_from_slice(&(v.number() as f32).to_le_bytes());
    }
    encode_version(version, SET, sequence, &payload[..1 + 7 * values.len()], out)
}

/// One reading of a board sensor: its channel, when it was sampled relative to the board's
/// receipt of the answered host frame (us; negative: before), and its value in the sensor's
/// unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoardReading {
    /// The sensor's channel on the board.
    pub channel: u16,
    /// When it was sampled, relative to the board's receipt of the answered frame (us).
    pub offset_us: i32,
    /// Its value in the sensor's unit.
    pub value: f32,
}

/// A READINGS frame (version 2): `readings` sampled around the board's receipt of host frame
/// `answers`.
pub fn encode_readings(
    sequence: u16,
    answers: u16,
    readings: &[BoardReading],
    out: &mut [u8; MAX_FRAME],
) -> Result<usize, String> {
    if readings.len() > MAX_READINGS {
        return Err(format!("{} readings exceed {MAX_READINGS} per frame", readings.len()));
    }
    let mut payload = [0u8; MAX_PAYLOAD];
    payload[..2].copy_from_slice(&answers.to_le_bytes());
    payload[2] = readings.len() as u8;
    for (i, r) in readings.iter().enumerate() {
        let at = 3 + 10 * i;
        payload[at..at + 2].copy_from_slice(&r.channel.to_le_bytes());
        payload[at + 2..at + 6].copy_from_slice(&r.offset_us.to_le_bytes());
        payload[at + 6..at + 10].copy_from_slice(&r.value.to_le_bytes());
    }
    encode_version(2, READINGS, sequence, &payload[..3 + 10 * readings.len()], out)
}

/// The answered host frame of a READINGS payload, and its readings (into `out`, cleared).
pub fn decode_readings(payload: &[u8], out: &mut Vec<BoardReading>) -> Option<u16> {
    out.clear();
    let answers = u16::from_le_bytes([*payload.first()?, *payload.get(1)?]);
    let count = *payload.get(2)? as usize;
    if payload.len() != 3 + 10 * count {
        return None;
    }
    for i in 0..count {
        let at = 3 + 10 * i;
        out.push(BoardReading {
            channel: u16::from_le_bytes([payload[at], payload[at + 1]]),
            offset_us: i32::from_le_bytes(payload[at + 2..at + 6].try_into().ok()?),
            value: f32::from_le_bytes(payload[at + 6..at + 10].try_into().ok()?),
        });
    }
    Some(answers)
}

/// The values of a SET payload.
pub fn decode_set(payload: &[u8]) -> Option<Vec<DeviceValue>> {
    let count = *payload.first()? as usize;
    if payload.len() != 1 + 7 * count {
        return None;
    }
    (0..count)
        .map(|i| {
            let at = 1 + 7 * i;
            let channel = u16::from_le_bytes([payload[at + 1], payload[at + 2]]);
            let value = f32::from_le_bytes(payload[at + 3..at + 7].try_into().ok()?) as f64;
            Some(match payload[at] {
                0 => DeviceValue::Analog { channel, volts: value },
                1 => DeviceValue::Digital { line: channel, high: value != 0.0 },
                2 => DeviceValue::Board { channel, value },
                3 => DeviceValue::Off { channel },
                _ => return None,
            })
        })
        .collect()
}

/// One decoded frame, or a damaged one whose sequence could still be read.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// A good frame.
    Frame {
        /// Its protocol version.
        version: u8,
        /// Its type (`SET`, `ACK`, ...).
        kind: u8,
        /// Its sequence number.
        sequence: u16,
        /// Its payload, the first `length` bytes used.
        payload: [u8; MAX_PAYLOAD],
        /// The payload's length.
        length: usize,
    },
    /// A frame whose CRC did not match.
    BadCrc {
        /// Its sequence number, as read.
        sequence: u16,
    },
    /// A frame of a version the decoder does not read.
    BadVersion {
        /// Its sequence number.
        sequence: u16,
        /// Its version.
        version: u8,
    },
}

impl Decoded {
    /// The payload of a good frame.
    pub fn payload(&self) -> &[u8] {
        match self {
            Decoded::Frame { payload, length, .. } => &payload[..*length],
            _ => &[],
        }
    }
}

/// Incremental decoder: push bytes as they arrive, pop frames. Its buffer grows to the
/// largest backlog once and is reused, so steady-state decoding does not allocate.
#[derive(Default)]
pub struct Decoder {
    buffer: Vec<u8>,
}

impl Decoder {
    /// Appends bytes as they arrive.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete frame, if any. Garbage before a sync byte is skipped.
    pub fn next_frame(&mut self) -> Option<Decoded> {
        loop {
            let start = self.buffer.iter().position(|&b| b == SYNC)?;
            self.buffer.drain(..start);
            if self.buffer.len() < 6 {
                return None;
            }
            let length = self.buffer[5] as usize;
            let total = 6 + length + 2;
            if length > MAX_PAYLOAD {
                self.buffer.drain(..1);
                continue;
            }
            if self.buffer.len() < total {
                return None;
            }
            let version = self.buffer[1];
            let sequence = u16::from_le_bytes([self.buffer[3], self.buffer[4]]);
            let crc = u16::from_le_bytes([self.buffer[total - 2], self.buffer[total - 1]]);
            if crc16(&self.buffer[1..total - 2]) != crc {
                // Drop only the sync byte: the real frame may start inside the damaged one.
                self.buffer.drain(..1);
                return Some(Decoded::BadCrc { sequence });
            }
            let kind = self.buffer[2];
            let mut payload = [0u8; MAX_PAYLOAD];
            payload[..length].copy_from_slice(&self.buffer[6..6 + length]);
            self.buffer.drain(..total);
            if !(OLDEST_VERSION..=VERSION).contains(&version) {
                return Some(Decoded::BadVersion { sequence, version });
            }
            return Some(Decoded::Frame { version, kind, sequence, payload, length });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_matches_the_standard_check_value() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    #[test]
    fn frames_round_trip_and_survive_noise_and_corruption() {
        let values = [
            DeviceValue::Analog { channel: 2, volts: 4.5 },
            DeviceValue::Digital { line: 7, high: true },
            DeviceValue::Off { channel: 1 },
        ];
        let mut frame = [0u8; MAX_FRAME];
        let n = encode_set(VERSION, 513, &values, &mut frame).unwrap();
        let mut d = Decoder::default();
        d.push(&[0x00, 0x13, SYNC, 0x77]); // noise, including a false sync
        let mut corrupted = frame[..n].to_vec();
        corrupted[8] ^= 0x40;
        d.push(&corrupted);
        d.push(&frame[..n]);
        let mut seen = Vec::new();
        while let Some(f) = d.next_frame() {
            seen.push(f);
        }
        assert!(seen.contains(&Decoded::BadCrc { sequence: 513 }));
        let last = seen.last().cloned().unwrap();
        let Decoded::Frame { kind, sequence, .. } = last else { panic!("{seen:?}") };
        assert_eq!((kind, sequence), (SET, 513));
        assert_eq!(decode_set(last.payload()).unwrap(), values.to_vec());
    }

    #[test]
    fn readings_round_trip_and_old_frames_still_decode() {
        let readings = [
            BoardReading { channel: 12, offset_us: -850, value: 0.4125 },
            BoardReading { channel: 3, offset_us: 20, value: -1.5 },
        ];
        let mut frame = [0u8; MAX_FRAME];
        let n = encode_readings(9, 700, &readings, &mut frame).unwrap();
        let mut d = Decoder::default();
        d.push(&frame[..n]);
        let old = encode_version(1, ACK, 4, &[4, 0], &mut frame).unwrap();
        d.push(&frame[..old]);
        let future = encode_version(3, ACK, 5, &[5, 0], &mut frame).unwrap();
        d.push(&frame[..future]);
        let got = d.next_frame().unwrap();
        let Decoded::Frame { version: 2, kind: READINGS, sequence: 9, .. } = got else { panic!("{got:?}") };
        let mut out = Vec::new();
        assert_eq!(decode_readings(got.payload(), &mut out), Some(700));
        assert_eq!(out, readings.to_vec());
        assert!(matches!(d.next_frame(), Some(Decoded::Frame { version: 1, kind: ACK, sequence: 4, .. })));
        assert_eq!(d.next_frame(), Some(Decoded::BadVersion { sequence: 5, version: 3 }));
        assert_eq!(decode_readings(&got.payload()[..7], &mut out), None);
        let too_many = [readings[0]; MAX_READINGS + 1];
        assert!(encode_readings(0, 0, &too_many, &mut frame).is_err());
    }
}
