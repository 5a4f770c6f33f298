//! The OptiTrack NatNet streaming protocol's messages, encoded and decoded (no sockets here:
//! the reader and the emulator own those): the connect request and the server's answer
//! (its NatNet version and high-resolution clock), keep-alives, and frames of data with
//! their rigid bodies, labelled markers and camera time stamps. Two frame layouts: NatNet
//! 3.0 to 4.0, and 4.1 on (a byte size after every count, assets, precision time stamps).
//! Everything is little-endian; every message starts with its id (u16) and payload size
//! (u16).

/// Message ids.
pub const NAT_CONNECT: u16 = 0;
/// The server's answer to a connect.
pub const NAT_SERVERINFO: u16 = 1;
/// A frame of data.
pub const NAT_FRAMEOFDATA: u16 = 7;
/// The client leaves.
pub const NAT_DISCONNECT: u16 = 9;
/// Keeps a unicast subscription alive.
pub const NAT_KEEPALIVE: u16 = 10;

/// The largest message a NatNet server sends over UDP (the SDK's receive buffer).
pub const MAX_PACKET: usize = 65_507;

/// Length of the server's application name field in its answer to a connect.
const NAME_BYTES: usize = 256;

/// Which frame layout a server speaks, from its NatNet version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// NatNet 3.0 to 4.0.
    V3,
    /// NatNet 4.1 and later: each section's count is followed by its size in bytes, assets
    /// come after skeletons, and the suffix carries a precision time stamp.
    V41,
}

impl Layout {
    /// The layout of a server speaking NatNet `version` (major, minor, ...); versions before
    /// 3.0 are not read (their frames carry no camera time stamps, so no latency).
    pub fn of(version: [u8; 4]) -> Result<Layout, String> {
        match (version[0], version[1]) {
            (3, _) | (4, 0) => Ok(Layout::V3),
            (4, _) => Ok(Layout::V41),
            (major, minor) => Err(format!(
                "NatNet {major}.{minor} is not read: frames from 3.0 to 4.x are (their camera time stamps give each frame's latency)"
            )),
        }
    }
}

/// The server's answer to a connect.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerInfo {
    /// The server application's name (Motive).
    pub application: String,
    /// Its version.
    pub application_version: [u8; 4],
    /// The NatNet version it streams.
    pub natnet_version: [u8; 4],
    /// Ticks per second of the camera time stamps.
    pub clock_frequency: u64,
    /// The port frames are sent to.
    pub data_port: u16,
    /// Whether it streams multicast.
    pub multicast: bool,
    /// Its multicast group.
    pub multicast_group: [u8; 4],
}

/// A rigid body's pose in a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidBodyPose {
    /// Its streaming id.
    pub id: i32,
    /// Its pivot's position (m, the server's axes).
    pub position: [f32; 3],
    /// Its orientation quaternion (x, y, z, w).
    pub orientation: [f32; 4],
    /// Mean marker error (m).
    pub error: f32,
    /// Whether the server tracked it in this frame (false: occluded, the pose is stale).
    pub tracked: bool,
}

/// A labelled marker in a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelledMarker {
    /// Model id in the high 16 bits, marker id in the low 16.
    pub id: i32,
    /// Its position (m, the server's axes).
    pub position: [f32; 3],
    /// Its size (m).
    pub size: f32,
    /// Whether it was occluded (its position then is not a measurement).
    pub occluded: bool,
    /// Its residual error (m).
    pub residual: f32,
}

/// One frame of data: what the reader uses of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The frame's number.
    pub number: i32,
    /// The rigid bodies in it.
    pub rigid_bodies: Vec<RigidBodyPose>,
    /// The labelled markers in it.
    pub labelled_markers: Vec<LabelledMarker>,
    /// Seconds since the server started.
    pub timestamp: f64,
    /// Camera clock ticks at the cameras' mid-exposure, when the frame's data reached the
    /// server, and when it was sent.
    pub mid_exposure: u64,
    /// See `mid_exposure`.
    pub data_received: u64,
    /// See `mid_exposure`.
    pub transmit: u64,
}

impl Frame {
    /// Seconds from the cameras' mid-exposure to the frame leaving the server, at `clock_frequency`
    /// ticks a second: how much older than its arrival the frame is, but for the network.
    pub fn latency(&self, clock_frequency: u64) -> Option<f64> {
        (clock_frequency > 0 && self.transmit >= self.mid_exposure)
            .then(|| (self.transmit - self.mid_exposure) as f64 / clock_frequency as f64)
    }
}

/// The server's camera clock put on the local one, so each frame is stamped with the local
/// time of its cameras' mid-exposure.
///
/// Why not each frame's arrival less its latency: that charges the frame with every delay
/// of its delivery (the network, a reader thread the scheduler held back), so a frame
/// delivered late is stamped late, and the next one, delivered promptly, can be stamped
/// before it. The camera clock is steady; what is unknown is its offset from the local
/// clock. Each frame bounds it from above (arrival less transmit time: the offset plus
/// that frame's delivery), so the offset is the least bound seen. The least is taken over
/// the last one to two windows, not the whole run, so the two clocks' drift is followed.
#[derive(Clone, Debug)]
pub struct CameraClock {
    frequency: f64,
    window: f64,
    /// Local time the current window opened, and the least bound in it and in the one before.
    window_start: f64,
    current: f64,
    previous: f64,
    last_stamp: f64,
}

impl CameraClock {
    /// A clock of `clock_frequency` ticks a second, its offset the least over windows of
    /// `window` seconds of local time.
    pub fn new(clock_frequency: u64, window: f64) -> CameraClock {
        CameraClock {
            frequency: clock_frequency as f64,
            window,
            window_start: f64::NEG_INFINITY,
            current: f64::INFINITY,
            previous: f64::INFINITY,
            last_stamp: f64::NEG_INFINITY,
        }
    }

    /// The local time of `frame`'s mid-exposure, given that it arrived at local time
    /// `arrived` (s); `None` for a frame whose time stamps cannot be read (no clock
    /// frequency, sent before it was exposed). Stamps never go backwards: a newer bound
    /// that lowers the offset does not move a frame before one stamped already.
    pub fn stamp(&mut self, frame: &Frame, arrived: f64) -> Option<f64> {
        if !(self.frequency > 0.0 && frame.transmit >= frame.mid_exposure) {
            return None;
        }
        let bound = arrived - frame.transmit as f64 / self.frequency;
        if arrived - self.window_start > self.window {
            self.previous = self.current;
            self.current = bound;
            self.window_start = arrived;
        } else {
            self.current = self.current.min(bound);
        }
        let offset = self.current.min(self.previous);
        let stamp = (frame.mid_exposure as f64 / self.frequency + offset).max(self.last_stamp);
        self.last_stamp = stamp;
        Some(stamp)
    }
}

/// A message read from a datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// The server's answer to a connect.
    ServerInfo(ServerInfo),
    /// A frame of data.
    Frame(Frame),
    /// Any other message id (model definitions, strings, echoes): not read.
    Other(u16),
}

/// Reads little-endian fields from a payload, each read naming the field on failure.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            format!("truncated at byte {} of {}: {field} needs {n} more bytes", self.at, self.bytes.len())
        })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self, field: &str) -> Result<u8, String> {
        Ok(self.take(1, field)?[0])
    }
    fn u16(&mut self, field: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2, field)?.try_into().unwrap_or_default()))
    }
    fn i16(&mut self, field: &str) -> Result<i16, String> {
        Ok(i16::from_le_bytes(self.take(2, field)?.try_into().unwrap_or_default()))
    }
    fn i32(&mut self, field: &str) -> Result<i32, String> {
        Ok(i32::from_le_bytes(self.take(4, field)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self, field: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, field)?.try_into().unwrap_or_default()))
    }
    fn f32(&mut self, field: &str) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.take(4, field)?.try_into().unwrap_or_default()))
    }
    fn f64(&mut self, field: &str) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.take(8, field)?.try_into().unwrap_or_default()))
    }
    fn f32s<const K: usize>(&mut self, field: &str) -> Result<[f32; K], String> {
        let mut out = [0.0; K];
        for v in &mut out {
            *v = self.f32(field)?;
        }
        Ok(out)
    }
    /// A count that must be non-negative and small enough to fit in what is left.
    fn count(&mut self, field: &str, each_at_least: usize) -> Result<usize, String> {
        let n = self.i32(field)?;
        let left = self.bytes.len() - self.at;
        if n < 0 || (n as usize).saturating_mul(each_at_least.max(1)) > left {
            return Err(format!("{field} {n} does not fit the {left} bytes left"));
        }
        Ok(n as usize)
    }
    /// A zero-terminated string.
    fn name(&mut self, field: &str) -> Result<&'a str, String> {
        let rest = &self.bytes[self.at..];
        let end = rest.iter().position(|&b| b == 0).ok_or_else(|| format!("{field} is not terminated"))?;
        self.at += end + 1;
        std::str::from_utf8(&rest[..end]).map_err(|_| format!("{field} is not UTF-8"))
    }
}

/// Reads one datagram: its message id, size and payload; frames in `layout`.
pub fn decode(datagram: &[u8], layout: Layout) -> Result<Message, String> {
    let mut header = Cursor { bytes: datagram, at: 0 };
    let id = header.u16("message id")?;
    let size = header.u16("payload size")? as usize;
    let payload = datagram
        .get(4..4 + size)
        .ok_or_else(|| format!("message {id} says {size} payload bytes, the datagram has {}", datagram.len() - 4))?;
    match id {
        NAT_SERVERINFO => decode_server_info(payload).map(Message::ServerInfo),
        NAT_FRAMEOFDATA => decode_frame(payload, layout).map(Message::Frame),
        other => Ok(Message::Other(other)),
    }
}

fn decode_server_info(payload: &[u8]) -> Result<ServerInfo, String> {
    let mut c = Cursor { bytes: payload, at: 0 };
    let name = c.take(NAME_BYTES, "application name")?;
    let application =
        String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(NAME_BYTES)]).into_owned();
    let mut application_version = [0; 4];
    for v in &mut application_version {
        *v = c.u8("application version")?;
    }
    let mut natnet_version = [0; 4];
    for v in &mut natnet_version {
        *v = c.u8("NatNet version")?;
    }
    let clock_frequency = c.u64("high-resolution clock frequency")?;
    let data_port = c.u16("data port")?;
    let multicast = c.u8("multicast flag")? != 0;
    let mut multicast_group = [0; 4];
    for v in &mut multicast_group {
        *v = c.u8("multicast group")?;
    }
    Ok(ServerInfo {
        application,
        application_version,
        natnet_version,
        clock_frequency,
        data_port,
        multicast,
        multicast_group,
    })
}

fn decode_frame(payload: &[u8], layout: Layout) -> Result<Frame, String> {
    let mut c = Cursor { bytes: payload, at: 0 };
    let sized = layout == Layout::V41;
    // 4.1 puts each section's byte size after its count; nothing here needs it.
    let section = |c: &mut Cursor, what: &str, each_at_least: usize| -> Result<usize, String> {
        let n = c.count(what, each_at_least)?;
        if sized {
            c.i32(&format!("{what} size"))?;
        }
        Ok(n)
    };
    let mut frame = Frame { number: c.i32("frame number")?, ..Frame::default() };
    for _ in 0..section(&mut c, "marker set count", 5)? {
        c.name("marker set name")?;
        let markers = c.count("marker set's marker count", 12)?;
        c.take(12 * markers, "marker set positions")?;
    }
    let legacy = section(&mut c, "unlabelled marker count", 12)?;
    c.take(12 * legacy, "unlabelled marker positions")?;
    let rigid_body = |c: &mut Cursor| -> Result<RigidBodyPose, String> {
        let id = c.i32("rigid body id")?;
        let position = c.f32s::<3>("rigid body position")?;
        let orientation = c.f32s::<4>("rigid body orientation")?;
        let error = c.f32("rigid body error")?;
        let params = c.i16("rigid body flags")?;
        Ok(RigidBodyPose { id, position, orientation, error, tracked: params & 0x01 != 0 })
    };
    for _ in 0..section(&mut c, "rigid body count", 38)? {
        frame.rigid_bodies.push(rigid_body(&mut c)?);
    }
    for _ in 0..section(&mut c, "skeleton count", 8)? {
        c.i32("skeleton id")?;
        for _ in 0..c.count("skeleton's rigid body count", 38)? {
            rigid_body(&mut c)?;
        }
    }
    if sized {
        for _ in 0..section(&mut c, "asset count", 12)? {
            c.i32("asset id")?;
            let bodies = c.count("asset's rigid body count", 38)?;
            c.take(38 * bodies, "asset rigid bodies")?;
            let markers = c.count("asset's marker count", 26)?;
            c.take(26 * markers, "asset markers")?;
        }
    }
    for _ in 0..section(&mut c, "labelled marker count", 26)? {
        let id = c.i32("labelled marker id")?;
        let position = c.f32s::<3>("labelled marker position")?;
        let size = c.f32("labelled marker size")?;
        let params = c.i16("labelled marker flags")?;
        let residual = c.f32("labelled marker residual")?;
        frame.labelled_markers.push(LabelledMarker { id, position, size, occluded: params & 0x01 != 0, residual });
    }
    for what in ["force plate", "device"] {
        for _ in 0..section(&mut c, &format!("{what} count"), 8)? {
            c.i32(&format!("{what} id"))?;
            for _ in 0..c.count(&format!("{what}'s channel count"), 4)? {
                let samples = c.count(&format!("{what} channel's sample count"), 4)?;
                c.take(4 * samples, &format!("{what} samples"))?;
            }
        }
    }
    c.i32("timecode")?;
    c.i32("timecode subframe")?;
    frame.timestamp = c.f64("timestamp")?;
    frame.mid_exposure = c.u64("camera mid-exposure time stamp")?;
    frame.data_received = c.u64("camera data received time stamp")?;
    frame.transmit = c.u64("transmit time stamp")?;
    if sized {
        c.i32("precision timestamp seconds")?;
        c.i32("precision timestamp fraction")?;
    }
    c.i16("frame flags")?;
    Ok(frame)
}

/// Writes little-endian fields.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn i32(&mut self, v: i32) {
        self.bytes(&v.to_le_bytes());
    }
    fn f32s(&mut self, vs: &[f32]) {
        for v in vs {
            self.bytes(&v.to_le_bytes());
        }
    }
    /// A section's count and, in 4.1, its byte size (patched once the section is written).
    fn section(&mut self, count: usize, sized: bool, body: impl FnOnce(&mut Writer)) {
        self.i32(count as i32);
        let size_at = self.out.len();
        if sized {
            self.i32(0);
        }
        let start = self.out.len();
        body(self);
        if sized {
            let size = (self.out.len() - start) as i32;
            self.out[size_at..size_at + 4].copy_from_slice(&size.to_le_bytes());
        }
    }
}

/// Starts a message in `out` (cleared); `finish` writes its size.
fn begin(out: &mut Vec<u8>, id: u16) {
    out.clear();
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
}

fn finish(out: &mut [u8]) -> Result<(), String> {
    let size = u16::try_from(out.len() - 4)
        .map_err(|_| format!("a message of {} bytes does not fit NatNet's u16 size", out.len() - 4))?;
    out[2..4].copy_from_slice(&size.to_le_bytes());
    Ok(())
}

/// A frame of data in `layout`, as a server sends it: its rigid bodies and labelled markers,
/// no marker sets, skeletons, assets, force plates or devices.
pub fn encode_frame(frame: &Frame, layout: Layout, out: &mut Vec<u8>) -> Result<(), String> {
    let sized = layout == Layout::V41;
    begin(out, NAT_FRAMEOFDATA);
    let mut w = Writer { out };
    w.i32(frame.number);
    w.section(0, sized, |_| {});
    w.section(0, sized, |_| {});
    w.section(frame.rigid_bodies.len(), sized, |w| {
        for b in &frame.rigid_bodies {
            w.i32(b.id);
            w.f32s(&b.position);
            w.f32s(&b.orientation);
            w.f32s(&[b.error]);
            w.bytes(&i16::from(b.tracked).to_le_bytes());
        }
    });
    w.section(0, sized, |_| {});
    if sized {
        w.section(0, sized, |_| {});
    }
    w.section(frame.labelled_markers.len(), sized, |w| {
        for m in &frame.labelled_markers {
            w.i32(m.id);
            w.f32s(&m.position);
            w.f32s(&[m.size]);
            w.bytes(&i16::from(m.occluded).to_le_bytes());
            w.f32s(&[m.residual]);
        }
    });
    w.section(0, sized, |_| {});
    w.section(0, sized, |_| {});
    w.i32(0);
    w.i32(0);
    w.bytes(&frame.timestamp.to_le_bytes());
    w.bytes(&frame.mid_exposure.to_le_bytes());
    w.bytes(&frame.data_received.to_le_bytes());
    w.bytes(&frame.transmit.to_le_bytes());
    if sized {
        let whole = frame.timestamp.max(0.0);
        w.i32(whole as i32);
        w.i32(((whole.fract()) * 1e9) as i32);
    }
    w.bytes(&0i16.to_le_bytes());
    finish(out)
}

/// The server's answer to a connect.
pub fn encode_server_info(info: &ServerInfo, out: &mut Vec<u8>) -> Result<(), String> {
    begin(out, NAT_SERVERINFO);
    let mut name = [0u8; NAME_BYTES];
    let n = info.application.len().min(NAME_BYTES - 1);
    name[..n].copy_from_slice(&info.application.as_bytes()[..n]);
    out.extend_from_slice(&name);
    out.extend_from_slice(&info.application_version);
    out.extend_from_slice(&info.natnet_version);
    out.extend_from_slice(&info.clock_frequency.to_le_bytes());
    out.extend_from_slice(&info.data_port.to_le_bytes());
    out.push(u8::from(info.multicast));
    out.extend_from_slice(&info.multicast_group);
    finish(out)
}

/// A client's request: connect (announcing the NatNet version it reads), keep-alive or
/// disconnect.
pub fn encode_request(id: u16, client_version: [u8; 4], out: &mut Vec<u8>) -> Result<(), String> {
    begin(out, id);
    if id == NAT_CONNECT {
        // As the SDK's clients send it: a name, then the version the client reads.
        let mut name = [0u8; NAME_BYTES];
        name[..4].copy_from_slice(b"Ping");
        out.extend_from_slice(&name);
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&client_version);
    }
    finish(out)
}

/// The message id of a client's request, and for a connect the NatNet version it reads.
pub fn decode_request(datagram: &[u8]) -> Result<(u16, Option<[u8; 4]>), String> {
    let mut c = Cursor { bytes: datagram, at: 0 };
    let id = c.u16("message id")?;
    let size = c.u16("payload size")? as usize;
    if datagram.len() < 4 + size {
        return Err(format!("request {id} says {size} payload bytes, the datagram has {}", datagram.len() - 4));
    }
    let version = (id == NAT_CONNECT && size >= NAME_BYTES + 8).then(|| {
        let v = &datagram[4 + NAME_BYTES + 4..4 + NAME_BYTES + 8];
        [v[0], v[1], v[2], v[3]]
    });
    Ok((id, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Frame {
        Frame {
            number: 4321,
            rigid_bodies: vec![
                RigidBodyPose {
                    id: 1,
                    position: [0.5, 0.25, -1.0],
                    orientation: [0.0, 0.0, 0.0, 1.0],
                    error: 1e-4,
                    tracked: true,
                },
                RigidBodyPose {
                    id: 7,
                    position: [1.5, 0.0, 2.0],
                    orientation: [0.1, 0.2, 0.3, 0.9],
                    error: 0.0,
                    tracked: false,
                },
            ],
            labelled_markers: vec![LabelledMarker {
                id: (3 << 16) | 2,
                position: [0.1, 0.2, 0.3],
                size: 0.014,
                occluded: true,
                residual: 2e-4,
            }],
            timestamp: 12.345,
            mid_exposure: 1_000_000,
            data_received: 1_004_000,
            transmit: 1_005_000,
        }
    }

    #[test]
    fn frames_round_trip_in_both_layouts() {
        let mut out = Vec::new();
        for layout in [Layout::V3, Layout::V41] {
            encode_frame(&frame(), layout, &mut out).unwrap();
            assert_eq!(decode(&out, layout).unwrap(), Message::Frame(frame()), "{layout:?}");
        }
    }

    /// Frames 120 a second, 5 ms from exposure to transmit, delivered 0.2 ms after it but
    /// for some a scheduler held back up to 9 ms: stamped on the camera clock, they are
    /// 1/120 s apart and 5.2 ms before their prompt arrival, where arrival less latency
    /// put a held frame after the next one.
    #[test]
    fn the_camera_clock_stamps_frames_in_order_whatever_their_delivery() {
        let frequency = 1_000_000u64;
        let offset = 3.25; // local clock less camera clock
        let mut clock = CameraClock::new(frequency, 1.0);
        let mut last = f64::NEG_INFINITY;
        let mut last_by_latency = f64::NEG_INFINITY;
        let mut backwards_by_latency = 0;
        for k in 0..600u64 {
            let exposed = 10.0 + k as f64 / 120.0;
            let held = if k % 7 == 3 { 0.009 } else { 0.0 };
            let frame = Frame {
                mid_exposure: (exposed * frequency as f64).round() as u64,
                transmit: ((exposed + 0.005) * frequency as f64).round() as u64,
                ..Frame::default()
            };
            let arrived = exposed + 0.005 + 0.0002 + held + offset;
            let stamp = clock.stamp(&frame, arrived).unwrap();
            assert!(stamp >= last, "frame {k}: {stamp} after {last}");
            if k > 0 {
                assert!((stamp - (exposed + offset + 0.0002)).abs() < 2e-6, "frame {k}: {stamp}");
            }
            last = stamp;
            let by_latency = arrived - frame.latency(frequency).unwrap();
            backwards_by_latency += usize::from(by_latency < last_by_latency);
            last_by_latency = by_latency;
        }
        assert!(backwards_by_latency > 50, "{backwards_by_latency}");
        // A frame sent before it was exposed has no stamp.
        let bad = Frame { mid_exposure: 10, transmit: 5, ..Frame::default() };
        assert_eq!(clock.stamp(&bad, 20.0), None);
        assert_eq!(CameraClock::new(0, 1.0).stamp(&Frame::default(), 1.0), None);
    }

    /// The two clocks drift 200 ppm apart, the local one faster: the offset's bound rises,
    /// and the least over two windows follows it within a window's drift.
    #[test]
    fn the_camera_clock_follows_drift() {
        let frequency = 10_000_000u64;
        let mut clock = CameraClock::new(frequency, 1.0);
        for k in 0..12_000u64 {
            let exposed = k as f64 / 120.0;
            let frame = Frame {
                mid_exposure: (exposed * frequency as f64).round() as u64,
                transmit: ((exposed + 0.004) * frequency as f64).round() as u64,
                ..Frame::default()
            };
            let local = |camera: f64| camera * (1.0 + 2e-4) + 1.5;
            let arrived = local(exposed + 0.004) + 0.0001;
            let stamp = clock.stamp(&frame, arrived).unwrap();
            // Drift over two windows: 0.4 ms.
            assert!((stamp - (local(exposed) + 0.0001)).abs() < 5e-4, "frame {k}: {stamp} vs {}", local(exposed));
        }
    }

    #[test]
    fn latency_is_mid_exposure_to_transmit() {
        assert_eq!(frame().latency(1_000_000), Some(0.005));
        assert_eq!(frame().latency(0), None);
    }

    /// A 3.0 frame written field by field from the protocol's description, with every
    /// section the encoder leaves empty filled, so the decoder's skipping is checked against
    /// bytes it did not write.
    #[test]
    fn a_frame_with_every_section_decodes() {
        let mut p: Vec<u8> = Vec::new();
        let i32s = |p: &mut Vec<u8>, vs: &[i32]| vs.iter().for_each(|v| p.extend_from_slice(&v.to_le_bytes()));
        let f32s = |p: &mut Vec<u8>, vs: &[f32]| vs.iter().for_each(|v| p.extend_from_slice(&v.to_le_bytes()));
        i32s(&mut p, &[99]); // frame number
        i32s(&mut p, &[1]); // one marker set
        p.extend_from_slice(b"snake\0");
        i32s(&mut p, &[2]);
        f32s(&mut p, &[1.0; 6]);
        i32s(&mut p, &[1]); // one unlabelled marker
        f32s(&mut p, &[2.0; 3]);
        i32s(&mut p, &[1, 5]); // one rigid body, id 5
        f32s(&mut p, &[0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, 5e-4]);
        p.extend_from_slice(&1i16.to_le_bytes());
        i32s(&mut p, &[1, 9, 1, 6]); // one skeleton (id 9) of one rigid body (id 6)
        f32s(&mut p, &[0.0; 8]);
        p.extend_from_slice(&1i16.to_le_bytes());
        i32s(&mut p, &[1, 0x0001_0004]); // one labelled marker
        f32s(&mut p, &[0.4, 0.5, 0.6, 0.01]);
        p.extend_from_slice(&0i16.to_le_bytes());
        f32s(&mut p, &[1e-4]);
        i32s(&mut p, &[1, 2, 2, 3]); // one force plate (id 2), two channels: 3 samples ...
        f32s(&mut p, &[0.0; 3]);
        i32s(&mut p, &[1]); // ... and 1 sample
        f32s(&mut p, &[0.0]);
        i32s(&mut p, &[0]); // no devices
        i32s(&mut p, &[0, 0]); // timecode
        p.extend_from_slice(&3.5f64.to_le_bytes());
        for ticks in [10u64, 20, 30] {
            p.extend_from_slice(&ticks.to_le_bytes());
        }
        p.extend_from_slice(&0i16.to_le_bytes());
        let mut datagram = NAT_FRAMEOFDATA.to_le_bytes().to_vec();
        datagram.extend_from_slice(&(p.len() as u16).to_le_bytes());
        datagram.extend_from_slice(&p);
        let Message::Frame(f) = decode(&datagram, Layout::V3).unwrap() else { panic!("not a frame") };
        assert_eq!(f.number, 99);
        assert_eq!(f.rigid_bodies.len(), 1);
        assert_eq!(
            (f.rigid_bodies[0].id, f.rigid_bodies[0].position, f.rigid_bodies[0].tracked),
            (5, [0.1, 0.2, 0.3], true)
        );
        assert_eq!(f.labelled_markers.len(), 1);
        assert_eq!((f.labelled_markers[0].position, f.labelled_markers[0].occluded), ([0.4, 0.5, 0.6], false));
        assert_eq!((f.timestamp, f.mid_exposure, f.transmit), (3.5, 10, 30));
        // Every truncation is an error naming its field, never a panic.
        for cut in 4..datagram.len() {
            let mut short = datagram[..cut].to_vec();
            short[2..4].copy_from_slice(&((cut - 4) as u16).to_le_bytes());
            let e = decode(&short, Layout::V3).unwrap_err();
            assert!(e.contains("truncated") || e.contains("does not fit") || e.contains("not terminated"), "{e}");
        }
    }

    #[test]
    fn server_info_and_requests_round_trip() {
        let info = ServerInfo {
            application: "softgen NatNet emulator".into(),
            application_version: [1, 0, 0, 0],
            natnet_version: [4, 1, 0, 0],
            clock_frequency: 10_000_000,
            data_port: 1511,
            multicast: false,
            multicast_group: [239, 255, 42, 99],
        };
        let mut out = Vec::new();
        encode_server_info(&info, &mut out).unwrap();
        assert_eq!(decode(&out, Layout::V3).unwrap(), Message::ServerInfo(info));
        encode_request(NAT_CONNECT, [4, 1, 0, 0], &mut out).unwrap();
        assert_eq!(decode_request(&out).unwrap(), (NAT_CONNECT, Some([4, 1, 0, 0])));
        encode_request(NAT_KEEPALIVE, [4, 1, 0, 0], &mut out).unwrap();
        assert_eq!(decode_request(&out).unwrap(), (NAT_KEEPALIVE, None));
        assert!(Layout::of([2, 9, 0, 0]).is_err());
        assert_eq!(Layout::of([4, 0, 0, 0]), Ok(Layout::V3));
        assert_eq!(Layout::of([4, 2, 0, 0]), Ok(Layout::V41));
    }
}
