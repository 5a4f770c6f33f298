//! NatNet over UDP: the reader that brings a motion-capture server's rigid bodies and
//! labelled markers into the
//! estimator's queue (connect, keep-alives, frames decoded in a thread of their own, each
//! reading stamped on the loop's clock at its cameras' mid-exposure, the camera clock put on
//! the loop's by the least delivery seen: `natnet::CameraClock`),
//! and the server side the robot emulator streams its markers with.
//!
//! One socket, bound to the local data address, sends the connect: the server answers to
//! it, and a unicast server streams its frames to it as well.

use crate::run::config::{NatNetSettings, NatNetTarget};
use softgen_runtime::natnet::{self, CameraClock, Frame, Layout, Message, ServerInfo};
use softgen_runtime::{Reading, ReadingQueue};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The NatNet version the reader announces (it reads 3.0 to 4.x).
pub const CLIENT_VERSION: [u8; 4] = [4, 1, 0, 0];

/// How long the server has to answer the connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long (s) the camera clock's offset is taken the least over (one to two of these):
/// long enough that some frame in it came promptly, short against the clocks' drift
/// (100 ppm is 0.2 ms over two).
const CLOCK_WINDOW: f64 = 1.0;

/// How often a unicast subscription is kept alive.
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// What the reader saw, counted by its thread.
#[derive(Default)]
pub struct NatNetCounts {
    pub frames: AtomicU64,
    /// Readings put on the queue.
    pub readings: AtomicU64,
    /// Rigid bodies the server marked untracked, and labelled markers it marked occluded, in
    /// a frame.
    pub untracked: AtomicU64,
    /// Datagrams that did not decode.
    pub malformed: AtomicU64,
    /// Frames that arrived before the loop's clock started.
    pub early: AtomicU64,
}

/// A subscription to a NatNet server: its thread reads frames until the reader is dropped.
pub struct NatNetReader {
    pub server: ServerInfo,
    pub counts: Arc<NatNetCounts>,
    /// Nanoseconds from `base` to the loop's t = 0 (i64::MIN until the loop says).
    loop_start: Arc<AtomicI64>,
    base: Instant,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), String>>>,
    socket: UdpSocket,
    server_address: SocketAddr,
}

impl NatNetReader {
    /// Connects to the server of `settings` and starts reading: each frame's tracked rigid
    /// body or labelled marker of `targets` (what it is, sensor index) becomes a reading of
    /// that sensor.
    pub fn connect(
        settings: &NatNetSettings,
        targets: Vec<(NatNetTarget, u16)>,
        queue: Arc<ReadingQueue>,
    ) -> Result<NatNetReader, String> {
        let socket = UdpSocket::bind(settings.local)
            .map_err(|e| format!("natnet: cannot listen on {} ({e}); set [natnet] local", settings.local))?;
        if let Some(group) = settings.multicast {
            let interface = match settings.local.ip() {
                std::net::IpAddr::V4(ip) => ip,
                std::net::IpAddr::V6(_) => std::net::Ipv4Addr::UNSPECIFIED,
            };
            socket.join_multicast_v4(&group, &interface).map_err(|e| format!("natnet: cannot join {group}: {e}"))?;
        }
        let mut request = Vec::with_capacity(512);
        natnet::encode_request(natnet::NAT_CONNECT, CLIENT_VERSION, &mut request)?;
        socket.set_read_timeout(Some(Duration::from_millis(250))).map_err(|e| format!("natnet: {e}"))?;
        let mut buffer = vec![0u8; natnet::MAX_PACKET];
        let start = Instant::now();
        let server = loop {
            if start.elapsed() > CONNECT_TIMEOUT {
                return Err(format!(
                    "natnet: the server at {} did not answer the connect within {} s (is it streaming, unicast to this host or on the multicast group?)",
                    settings.server,
                    CONNECT_TIMEOUT.as_secs()
                ));
            }
            socket
                .send_to(&request, settings.server)
                .map_err(|e| format!("natnet: connect to {}: {e}", settings.server))?;
            let deadline = Instant::now() + Duration::from_millis(250);
            let mut answer = None;
            while Instant::now() < deadline {
                match socket.recv_from(&mut buffer) {
                    // Frames may already be streaming (multicast): only the answer counts here.
                    Ok((n, _)) => {
                        if let Ok(Message::ServerInfo(info)) = natnet::decode(&buffer[..n], Layout::V3) {
                            answer = Some(info);
                            break;
                        }
                    }
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        break
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // A refused connect (nothing listening yet) shows up as an error: try again.
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
            if let Some(info) = answer {
                break info;
            }
        };
        let layout =
            Layout::of(server.natnet_version).map_err(|e| format!("natnet: server at {}: {e}", settings.server))?;
        if server.clock_frequency == 0 {
            return Err(format!(
                "natnet: server at {} reports no camera clock frequency, so its frames' latency is unknown",
                settings.server
            ));
        }
        socket.set_read_timeout(Some(Duration::from_millis(20))).map_err(|e| format!("natnet: {e}"))?;
        let counts = Arc::new(NatNetCounts::default());
        let loop_start = Arc::new(AtomicI64::new(i64::MIN));
        let stop = Arc::new(AtomicBool::new(false));
        let base = Instant::now();
        let thread = {
            let socket = socket.try_clone().map_err(|e| format!("natnet: {e}"))?;
            let (counts, loop_start, stop) = (Arc::clone(&counts), Arc::clone(&loop_start), Arc::clone(&stop));
            let (settings, frequency, server_address) = (settings.clone(), server.clock_frequency, settings.server);
            std::thread::Builder::new()
                .name("natnet reader".into())
                .spawn(move || {
                    let mut keep_alive = Vec::with_capacity(8);
                    natnet::encode_request(natnet::NAT_KEEPALIVE, CLIENT_VERSION, &mut keep_alive)?;
                    let mut last_keep_alive = Instant::now();
                    let mut clock = CameraClock::new(frequency, CLOCK_WINDOW);
                    while !stop.load(Ordering::Relaxed) {
                        if settings.multicast.is_none() && last_keep_alive.elapsed() > KEEP_ALIVE {
                            // A lost keep-alive is retried next second; the stream going quiet
                            // is what the sensors' timeouts catch.
                            let _ = socket.send_to(&keep_alive, server_address);
                            last_keep_alive = Instant::now();
                        }
                        let n = match socket.recv_from(&mut buffer) {
                            Ok((n, _)) => n,
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock
                                        | std::io::ErrorKind::TimedOut
                                        | std::io::ErrorKind::Interrupted
                                ) =>
                            {
                                continue
                            }
                            Err(e) => return Err(format!("natnet: receive: {e}")),
                        };
                        let arrival = Instant::now();
                        let frame = match natnet::decode(&buffer[..n], layout) {
                            Ok(Message::Frame(frame)) => frame,
                            Ok(_) => continue,
                            Err(_) => {
                                counts.malformed.fetch_add(1, Ordering::Relaxed);
                                continue;
                            }
                        };
                        counts.frames.fetch_add(1, Ordering::Relaxed);
                        let start = loop_start.load(Ordering::Acquire);
                        if start == i64::MIN {
                            counts.early.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        let arrived = ((arrival - base).as_nanos() as i64 - start) as f64 * 1e-9;
                        let Some(stamp) = clock.stamp(&frame, arrived) else {
                            counts.malformed.fetch_add(1, Ordering::Relaxed);
                            continue;
                        };
                        take_frame(&frame, &targets, &settings, stamp, &queue, &counts);
                    }
                    Ok(())
                })
                .map_err(|e| format!("natnet: cannot start the reader thread: {e}"))?
        };
        Ok(NatNetReader {
            server,
            counts,
            loop_start,
            base,
            stop,
            thread: Some(thread),
            socket,
            server_address: settings.server,
        })
    }

    /// Puts the loop's clock on the reader's: called with the loop's time `t` (s) as close as
    /// possible to the moment it measures; the first call counts.
    pub fn align_clock(&self, t: f64) {
        if self.loop_start.load(Ordering::Relaxed) == i64::MIN {
            let now = (Instant::now() - self.base).as_nanos() as i64;
            self.loop_start.store(now - (t * 1e9) as i64, Ordering::Release);
        }
    }

    /// Whether the reader thread stopped on an error (which it returns), or is still reading.
    pub fn failure(&mut self) -> Option<String> {
        if self.thread.as_ref().is_some_and(|t| t.is_finished()) {
            return match self.thread.take().map(|t| t.join()) {
                Some(Ok(Err(e))) => Some(e),
                Some(Err(_)) => Some("natnet: the reader thread panicked".into()),
                _ => None,
            };
        }
        None
    }

    /// One line of what was read.
    pub fn line(&self) -> String {
        let c = &self.counts;
        format!(
            "natnet: {} {}.{} (NatNet {}.{}), {} frames, {} readings, {} untracked, {} malformed",
            self.server.application,
            self.server.application_version[0],
            self.server.application_version[1],
            self.server.natnet_version[0],
            self.server.natnet_version[1],
            c.frames.load(Ordering::Relaxed),
            c.readings.load(Ordering::Relaxed),
            c.untracked.load(Ordering::Relaxed),
            c.malformed.load(Ordering::Relaxed)
        )
    }
}

/// A frame's configured, tracked rigid bodies and labelled markers onto the queue, in the
/// robot's world.
fn take_frame(
    frame: &Frame,
    targets: &[(NatNetTarget, u16)],
    settings: &NatNetSettings,
    stamp: f64,
    queue: &ReadingQueue,
    counts: &NatNetCounts,
) {
    let sensor_of = |target: NatNetTarget| targets.iter().find(|(t, _)| *t == target).map(|(_, sensor)| *sensor);
    let take = |sensor: u16, seen: bool, position: [f32; 3]| {
        if !seen {
            counts.untracked.fetch_add(1, Ordering::Relaxed);
            return;
        }
        queue.push(Reading { sensor, stamp, values: settings.to_world(position) });
        counts.readings.fetch_add(1, Ordering::Relaxed);
    };
    for body in &frame.rigid_bodies {
        if let Some(sensor) = sensor_of(NatNetTarget::RigidBody(body.id)) {
            take(sensor, body.tracked, body.position);
        }
    }
    for marker in &frame.labelled_markers {
        if let Some(sensor) = sensor_of(NatNetTarget::Marker(marker.id)) {
            take(sensor, !marker.occluded, marker.position);
        }
    }
}

impl Drop for NatNetReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let mut bye = Vec::with_capacity(8);
        if natnet::encode_request(natnet::NAT_DISCONNECT, CLIENT_VERSION, &mut bye).is_ok() {
            let _ = self.socket.send_to(&bye, self.server_address);
        }
    }
}

/// The server side, as the robot emulator runs it: answers connects on its command address
/// (in a thread) and streams frames to the client that connected last.
pub struct NatNetServer {
    socket: UdpSocket,
    client: Arc<Mutex<Option<SocketAddr>>>,
    layout: Layout,
    buffer: Vec<u8>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl NatNetServer {
    /// Listens on `address` as a server of NatNet `version` with a camera clock of
    /// `clock_frequency` ticks a second.
    pub fn bind(address: SocketAddr, version: [u8; 4], clock_frequency: u64) -> Result<NatNetServer, String> {
        let layout = Layout::of(version)?;
        let socket = UdpSocket::bind(address).map_err(|e| format!("natnet server: cannot bind {address}: {e}"))?;
        socket.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
        let info = ServerInfo {
            application: "softgen robot emulator".into(),
            application_version: [1, 0, 0, 0],
            natnet_version: version,
            clock_frequency,
            data_port: socket.local_addr().map_err(|e| e.to_string())?.port(),
            multicast: false,
            multicast_group: [239, 255, 42, 99],
        };
        let client = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let socket = socket.try_clone().map_err(|e| e.to_string())?;
            let (client, stop, info) = (Arc::clone(&client), Arc::clone(&stop), info.clone());
            std::thread::spawn(move || {
                let mut buffer = [0u8; 1024];
                let mut answer = Vec::with_capacity(512);
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = socket.recv_from(&mut buffer) else { continue };
                    match natnet::decode_request(&buffer[..n]) {
                        Ok((natnet::NAT_CONNECT, _)) => {
                            // The client is recorded before it is answered: a client that
                            // has its answer may be sent frames at once (the first frame
                            // after a connect was dropped when this thread was slower than
                            // the caller, as under a loaded test run).
                            *client.lock().unwrap_or_else(|e| e.into_inner()) = Some(from);
                            if natnet::encode_server_info(&info, &mut answer).is_ok() {
                                let _ = socket.send_to(&answer, from);
                            }
                        }
                        Ok((natnet::NAT_DISCONNECT, _)) => {
                            let mut c = client.lock().unwrap_or_else(|e| e.into_inner());
                            if *c == Some(from) {
                                *c = None;
                            }
                        }
                        _ => {}
                    }
                }
            })
        };
        Ok(NatNetServer { socket, client, layout, buffer: Vec::with_capacity(1024), stop, thread: Some(thread) })
    }

    #[cfg(test)]
    fn local_addr(&self) -> Result<SocketAddr, String> {
        self.socket.local_addr().map_err(|e| e.to_string())
    }

    /// Sends `frame` to the connected client; false when none is connected.
    pub fn send(&mut self, frame: &Frame) -> Result<bool, String> {
        let Some(client) = *self.client.lock().unwrap_or_else(|e| e.into_inner()) else { return Ok(false) };
        natnet::encode_frame(frame, self.layout, &mut self.buffer)?;
        // UDP: a frame the network drops is an occlusion to the reader, not an error here.
        let _ = self.socket.send_to(&self.buffer, client);
        Ok(true)
    }
}

impl Drop for NatNetServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use softgen_runtime::natnet::{LabelledMarker, RigidBodyPose};

    /// A reader and a server on the loopback interface, in both frame layouts: the reader
    /// connects, learns the layout and clock from the answer, and stamps each reading at its
    /// cameras' mid-exposure on the loop's clock (for a first frame, its arrival less its
    /// latency), in the robot's world axes.
    #[test]
    fn a_reader_reads_a_server_on_loopback() {
        for version in [[3, 1, 0, 0], [4, 1, 0, 0]] {
            let mut server = NatNetServer::bind("127.0.0.1:0".parse().unwrap(), version, 1_000_000).unwrap();
            let settings = NatNetSettings {
                server: server.local_addr().unwrap(),
                local: "127.0.0.1:0".parse().unwrap(),
                ..NatNetSettings::default()
            };
            let queue = Arc::new(ReadingQueue::default());
            let targets = vec![
                (NatNetTarget::RigidBody(3), 1),
                (NatNetTarget::RigidBody(5), 0),
                (NatNetTarget::marker(0, 7), 2),
                (NatNetTarget::marker(2, 1), 3),
            ];
            let reader = NatNetReader::connect(&settings, targets, Arc::clone(&queue)).unwrap();
            assert_eq!(reader.server.natnet_version, version);
            reader.align_clock(0.0);
            let body = |id, position, tracked| RigidBodyPose {
                id,
                position,
                orientation: [0.0, 0.0, 0.0, 1.0],
                error: 0.0,
                tracked,
            };
            let marker = |id, position, occluded| LabelledMarker { id, position, size: 0.01, occluded, residual: 0.0 };
            let frame = Frame {
                number: 1,
                // Motive's y-up axes: the robot's (1, 2, 3) is (1, 3, -2) there.
                rigid_bodies: vec![body(5, [1.0, 3.0, -2.0], true), body(3, [0.0; 3], false), body(8, [0.0; 3], true)],
                // Marker 7 of no asset seen, marker 1 of asset 2 occluded, marker 7 of asset 1
                // not configured.
                labelled_markers: vec![
                    marker(7, [0.5, 0.25, -1.0], false),
                    marker((2 << 16) | 1, [0.0; 3], true),
                    marker((1 << 16) | 7, [0.0; 3], false),
                ],
                timestamp: 0.0,
                mid_exposure: 0,
                data_received: 0,
                transmit: 40_000,
            };
            let sent = Instant::now();
            assert!(server.send(&frame).unwrap());
            let mut got = Vec::new();
            let start = Instant::now();
            while got.len() < 2 && start.elapsed() < Duration::from_secs(2) {
                queue.try_drain_into(&mut got);
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(got.len(), 2, "{version:?}: one tracked, configured body and one seen, configured marker");
            assert_eq!((got[0].sensor, got[0].values), (0, [1.0, 2.0, 3.0]));
            assert_eq!((got[1].sensor, got[1].values), (2, [0.5, 1.0, 0.25]));
            assert_eq!(got[0].stamp, got[1].stamp, "one frame, one stamp");
            // Sent at `sent` less 40 ms of latency, received a moment later.
            let sent_at = (sent - reader.base).as_secs_f64() - reader.loop_start.load(Ordering::Relaxed) as f64 * 1e-9;
            assert!(
                (got[0].stamp - (sent_at - 0.04)).abs() < 0.01,
                "{version:?}: stamp {} vs {}",
                got[0].stamp,
                sent_at - 0.04
            );
            assert_eq!(
                reader.counts.untracked.load(Ordering::Relaxed),
                2,
                "the untracked body and the occluded marker"
            );
        }
    }

    #[test]
    fn a_silent_server_is_a_clear_error() {
        let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
        let settings = NatNetSettings {
            server: quiet.local_addr().unwrap(),
            local: "127.0.0.1:0".parse().unwrap(),
            ..NatNetSettings::default()
        };
        let e = NatNetReader::connect(&settings, vec![], Arc::new(ReadingQueue::default())).err().unwrap();
        assert!(e.contains("did not answer the connect within 2 s"), "{e}");
    }
}
