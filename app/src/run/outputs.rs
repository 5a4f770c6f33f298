//! A run's devices and files: the comedi card, the recorder and trajectory files around the
//! simulated plant, and the end of a run, which keeps or sets aside those files by how it
//! ended and builds its report.

use crate::run::request::{RunOptions, RunReport};
use crate::support::output::PendingFile;
#[cfg(not(feature = "comedi"))]
use softgen_runtime::{Device, DeviceValue};
use softgen_runtime::{DeviceError, Model, OutputChain, Recorder, SafetyFault, State};
use std::io::Write;

/// The simulated plant behind the run's recorder, its states written to the trajectory
/// file and handed to `publish` (a planner's state source, which must never wait); with the
/// two outputs still pending.
#[allow(clippy::type_complexity)]
pub(crate) fn recorded_plant<
    R: Model<N, C>,
    P: softgen_runtime::EmulatingPlant<R, N, C>,
    const N: usize,
    const C: usize,
>(
    mut plant: P,
    o: &RunOptions,
    mut publish: impl FnMut(f64, &State<N>) + Send + 'static,
) -> Result<(Recorder<P, std::fs::File>, PendingFile, PendingFile), String> {
    let (pending_record, record) = PendingFile::create(&o.record)?;
    let (pending_trajectory, mut write_row) = trajectory_writer::<R, N, C>(&o.trajectory)?;
    plant.observe(Box::new(move |t, x| {
        publish(t, x);
        write_row(t, x);
    }));
    let device = Recorder::new(plant, record, 100).map_err(|e| e.0)?;
    Ok((device, pending_record, pending_trajectory))
}

/// The plant's trajectory CSV (`t` and every coordinate by name) as a pending file and the
/// function that writes one row.
pub(crate) fn trajectory_writer<R: Model<N, C>, const N: usize, const C: usize>(
    path: &std::path::Path,
) -> Result<(PendingFile, impl FnMut(f64, &State<N>) + Send + 'static), String> {
    let (pending, file) = PendingFile::create(path)?;
    let mut trajectory = std::io::BufWriter::new(file);
    let header: Vec<&str> = std::iter::once("t").chain(R::COORDINATES.iter().map(|c| c.name)).collect();
    writeln!(trajectory, "{}", header.join(",")).map_err(|e| e.to_string())?;
    Ok((pending, move |t: f64, x: &State<N>| {
        let _ = write!(trajectory, "{t}");
        for v in x.q.iter() {
            let _ = write!(trajectory, ",{v}");
        }
        let _ = writeln!(trajectory);
    }))
}

/// Opens a comedi card with analog ranges covering the regulators' voltages (0-10 V when
/// the configuration has no regulator).
#[cfg(feature = "comedi")]
pub(crate) fn open_comedi(
    path: &str,
    channels: &[softgen_runtime::Channel],
) -> Result<softgen_comedi::ComediDevice, String> {
    use softgen_runtime::{Channel, PressureMap};
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for c in channels {
        if let Channel::PressureRegulator { map, .. } = c {
            let (a, b) = match map {
                PressureMap::Linear { volts_min, volts_max, .. } => (*volts_min, *volts_max),
                PressureMap::Table(points) => (points[0].1, points[points.len() - 1].1),
            };
            low = low.min(a);
            high = high.max(b);
        }
    }
    if !low.is_finite() {
        (low, high) = (0.0, 10.0);
    }
    softgen_comedi::ComediDevice::open(path, low, high)
}

/// The comedi card type of this build.
#[cfg(feature = "comedi")]
pub(crate) type ComediCard = softgen_comedi::ComediDevice;
#[cfg(not(feature = "comedi"))]
pub(crate) type ComediCard = NoDevice;

/// Opens a comedi card for a run's outputs and, if any, the analog inputs `sampler` reads.
#[cfg(feature = "comedi")]
pub(crate) fn open_comedi_card(
    path: &str,
    channels: &[softgen_runtime::Channel],
    sampler: Option<softgen_runtime::AnalogSampler>,
) -> Result<ComediCard, String> {
    let mut card = open_comedi(path, channels)?;
    if let Some(sampler) = sampler {
        card.attach_inputs(sampler)?;
    }
    Ok(card)
}

#[cfg(not(feature = "comedi"))]
pub(crate) fn open_comedi_card(
    path: &str,
    channels: &[softgen_runtime::Channel],
    _sampler: Option<softgen_runtime::AnalogSampler>,
) -> Result<ComediCard, String> {
    open_comedi(path, channels)
}

#[cfg(not(feature = "comedi"))]
pub(crate) fn open_comedi(_path: &str, _channels: &[softgen_runtime::Channel]) -> Result<NoDevice, String> {
    Err("this softgen was built without comedi support: rebuild with `--features comedi` (needs libcomedi, Debian package libcomedi-dev)".into())
}

/// Stands in for the comedi device in builds without it; never constructed.
#[cfg(not(feature = "comedi"))]
pub(crate) struct NoDevice;

#[cfg(not(feature = "comedi"))]
impl NoDevice {
    pub(crate) fn samples(&self) -> u64 {
        0
    }
}

#[cfg(not(feature = "comedi"))]
impl Device for NoDevice {
    fn name(&self) -> &str {
        "none"
    }
    fn write(&mut self, _t: f64, _values: &[DeviceValue]) -> Result<(), DeviceError> {
        Err(DeviceError("no device".into()))
    }
}

/// The process's resident memory now and at its peak (bytes), where the system says
/// (`VmRSS` and `VmHWM` of /proc/self/status on Linux): what a soak watches for growth.
fn resident_memory() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kilobytes: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kilobytes * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A run's output file: replaces the earlier one, or, after a fault, kept beside it as
/// `<stem>.failed.csv`.
pub(crate) fn keep_output(pending: PendingFile, what: &str, failed: bool) -> Result<(), String> {
    if failed {
        println!("{what:<11} {} (earlier one kept)", pending.keep_as_failed()?.display());
    } else {
        println!("{what:<11} {}", pending.target().display());
        pending.commit()?;
    }
    Ok(())
}

/// Prints how a run went (the loop's figures, the safe state, the recording) and builds its
/// report, keeping or setting aside its files by how it ended.
pub(crate) fn finish(
    outcome: softgen_runtime::LoopOutcome,
    safe: Result<(), SafetyFault>,
    chain: &OutputChain,
    closed: Result<(), DeviceError>,
    record: PendingFile,
    trajectory: Option<PendingFile>,
) -> Result<RunReport, String> {
    println!("loop        {}", outcome.stats);
    if let Some((resident, peak)) = resident_memory() {
        println!("resident    {:.1} MB at the end, peak {:.1} MB", resident as f64 / 1e6, peak as f64 / 1e6);
    }
    println!("limited     {} commands clamped or rate-limited", chain.filter.limited);
    match &safe {
        Ok(()) => println!("safe state  sent"),
        Err(e) => println!("safe state  FAILED: {e}"),
    }
    if let Err(e) = &closed {
        println!("recording   could not be completed: {e}");
    }
    let safe_state_failure = safe.clone().err();
    let recording_failure = closed.clone().err().map(|e| e.0);
    let fault = outcome.fault.or(safe.err()).or(closed.err().map(|e| SafetyFault::Device(e.0)));
    // A run that ended normally (or by a signal) replaces the earlier record and trajectory;
    // a faulted one leaves them as they were, and its own, the one worth reading, is kept
    // beside them as `<stem>.failed.csv`.
    let failed = fault.as_ref().is_some_and(|f| !matches!(f, SafetyFault::Signal(_)));
    keep_output(record, "recording", failed)?;
    if let Some(t) = trajectory {
        keep_output(t, "trajectory", failed)?;
    }
    Ok(RunReport {
        stats: Some(outcome.stats),
        fault,
        mpc: None,
        estimator: None,
        plant: None,
        safe_state_failure,
        recording_failure,
    })
}
