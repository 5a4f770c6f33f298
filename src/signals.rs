//! SIGINT and SIGTERM: a flag that ends a long run at its next step with its outputs in order,
//! and the exit status a signal gives.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
/// A flag that SIGINT and SIGTERM set to their number, so that a long run ends at its next
/// control period with its outputs in order instead of being killed mid-write.
pub fn stop_flag() -> Result<Arc<AtomicUsize>, String> {
    let stop = Arc::new(AtomicUsize::new(0));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(signal, Arc::clone(&stop), signal as usize)
            .map_err(|e| format!("cannot install the handler for signal {signal}: {e}"))?;
    }
    Ok(stop)
}

/// Exit status for a run ended by a signal: 128 + the signal number, as shells do.
pub fn signal_exit(signal: usize) -> ExitCode {
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}

/// Whether a run that ended with `error` failed, rather than ran to its end or was stopped by
/// a signal: a failed run replaces no earlier output.
pub fn failed<E>(stop: &AtomicUsize, error: Option<&E>) -> bool {
    error.is_some() && stop.load(Ordering::Relaxed) == 0
}

/// When a simulated run ended with `error` because a signal set `stop`: says so and gives
/// the signal's exit status (the outputs written so far are kept).
pub fn stopped_by_signal(stop: &AtomicUsize, error: &impl std::fmt::Display) -> Option<ExitCode> {
    let signal = stop.load(Ordering::Relaxed);
    (signal != 0).then(|| {
        eprintln!("{error}: the outputs above hold everything up to then");
        signal_exit(signal)
    })
}
