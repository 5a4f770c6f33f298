//! The fixed-rate control loop: a monotonic clock, sleep-then-spin to each deadline, no
//! allocation inside the loop, deadline-miss and jitter statistics, a watchdog on missed
//! deadlines, and a stop flag (set from SIGINT/SIGTERM handlers).

use crate::safety::{SafetyFault, Watchdog};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Loop rate and length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopConfig {
    pub rate_hz: f64,
    pub duration: f64,
    /// Consecutive missed deadlines that trip the watchdog.
    pub miss_streak: u32,
}

impl LoopConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate_hz.is_finite() && self.rate_hz > 0.0 && self.rate_hz <= 100_000.0) {
            return Err(format!("loop rate must be in (0, 100000] Hz, got {}", self.rate_hz));
        }
        if !(self.duration.is_finite() && self.duration >= 0.0) {
            return Err(format!("duration must be >= 0 s, got {}", self.duration));
        }
        if self.miss_streak == 0 {
            return Err("watchdog miss streak must be at least 1".into());
        }
        Ok(())
    }

    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate_hz)
    }
}

const BUCKET_NS: u64 = 5_000;
const BUCKETS: usize = 200;

/// What the loop measured. Wake-up lateness (how long after its deadline a period started)
/// is kept in a fixed histogram of 5 microsecond buckets, so recording it never allocates.
#[derive(Clone, Debug)]
pub struct LoopStats {
    pub periods: u64,
    /// Periods whose work ended after the next deadline.
    pub misses: u64,
    pub max_lateness: Duration,
    pub total_lateness: Duration,
    pub max_work: Duration,
    histogram: [u64; BUCKETS],
}

impl Default for LoopStats {
    fn default() -> Self {
        LoopStats {
            periods: 0,
            misses: 0,
            max_lateness: Duration::ZERO,
            total_lateness: Duration::ZERO,
            max_work: Duration::ZERO,
            histogram: [0; BUCKETS],
        }
    }
}

impl LoopStats {
    fn record(&mut self, lateness: Duration, work: Duration, missed: bool) {
        self.periods += 1;
        self.misses += u64::from(missed);
        self.max_lateness = self.max_lateness.max(lateness);
        self.total_lateness += lateness;
        self.max_work = self.max_work.max(work);
        let bucket = ((lateness.as_nanos() as u64) / BUCKET_NS).min(BUCKETS as u64 - 1) as usize;
        self.histogram[bucket] += 1;
    }

    /// Upper bound of the lateness below which `fraction` of periods started.
    pub fn lateness_percentile(&self, fraction: f64) -> Duration {
        let target = (fraction * self.periods as f64).ceil() as u64;
        let mut seen = 0;
        for (i, count) in self.histogram.iter().enumerate() {
            seen += count;
            if seen >= target {
                return if i == BUCKETS - 1 { self.max_lateness } else { Duration::from_nanos((i as u64 + 1) * BUCKET_NS) };
            }
        }
        self.max_lateness
    }

    pub fn mean_lateness(&self) -> Duration {
        if self.periods == 0 {
            Duration::ZERO
        } else {
            self.total_lateness / self.periods as u32
        }
    }
}

impl fmt::Display for LoopStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} periods, {} deadline misses ({:.3} %); wake-up lateness mean {:.1} us, p99 <= {:.0} us, max {:.1} us; longest period work {:.1} us",
            self.periods,
            self.misses,
            100.0 * self.misses as f64 / (self.periods.max(1)) as f64,
            self.mean_lateness().as_secs_f64() * 1e6,
            self.lateness_percentile(0.99).as_secs_f64() * 1e6,
            self.max_lateness.as_secs_f64() * 1e6,
            self.max_work.as_secs_f64() * 1e6,
        )
    }
}

/// Value of the stop flag that asks the loop to end without a signal.
pub const STOP_REQUESTED: usize = usize::MAX;

/// Value of the stop flag set by a controller whose task is done: the loop ends without a
/// fault.
pub const STOP_FINISHED: usize = usize::MAX - 1;

/// How a loop ended.
#[derive(Debug)]
pub struct LoopOutcome {
    pub stats: LoopStats,
    /// `None` when the loop ran its whole duration.
    pub fault: Option<SafetyFault>,
}

/// Runs `step(k, t)` at `t = k / rate` for the configured duration. Stops early on a step
/// error, a watchdog trip, or `stop` becoming non-zero: a signal number (signal handlers
/// store it), [`STOP_REQUESTED`], or [`STOP_FINISHED`] (which is not a fault).
pub fn run_fixed_rate(
    config: &LoopConfig,
    stop: &AtomicUsize,
    mut step: impl FnMut(u64, f64) -> Result<(), SafetyFault>,
) -> LoopOutcome {
    let period = config.period();
    let total = (config.duration * config.rate_hz).round() as u64 + 1;
    let mut stats = LoopStats::default();
    let mut watchdog = Watchdog::new(config.miss_streak);
    // Sleep until this close to a deadline, then spin: OS sleeps overshoot by tens of us.
    let spin = Duration::from_micros(100).min(period / 4);
    let start = Instant::now();
    for k in 0..total {
        match stop.load(Ordering::Relaxed) {
            0 => {}
            STOP_FINISHED => return LoopOutcome { stats, fault: None },
            STOP_REQUESTED => return LoopOutcome { stats, fault: Some(SafetyFault::Controller("stopped on request".into())) },
            signal => return LoopOutcome { stats, fault: Some(SafetyFault::Signal(signal as i32)) },
        }
        let deadline = start + period * k as u32;
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let left = deadline - now;
            if left > spin {
                std::thread::sleep(left - spin);
            } else {
                std::hint::spin_loop();
            }
        }
        let woke = Instant::now();
        let result = step(k, k as f64 / config.rate_hz);
        let done = Instant::now();
        let missed = done > deadline + period;
        stats.record(woke - deadline, done - woke, missed);
        if let Err(fault) = result {
            return LoopOutcome { stats, fault: Some(fault) };
        }
        if let Err(fault) = watchdog.record(missed) {
            return LoopOutcome { stats, fault: Some(fault) };
        }
    }
    LoopOutcome { stats, fault: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_every_period_at_rate() {
        let config = LoopConfig { rate_hz: 1000.0, duration: 0.2, miss_streak: 1000 };
        let stop = AtomicUsize::new(0);
        let mut times = Vec::with_capacity(300);
        let start = Instant::now();
        let outcome = run_fixed_rate(&config, &stop, |_, t| {
            times.push(t);
            Ok(())
        });
        assert!(outcome.fault.is_none());
        assert_eq!(outcome.stats.periods, 201);
        assert_eq!(times.len(), 201);
        assert!((times[200] - 0.2).abs() < 1e-12);
        assert!(start.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn watchdog_stops_a_loop_that_misses_deadlines() {
        let config = LoopConfig { rate_hz: 1000.0, duration: 1.0, miss_streak: 3 };
        let stop = AtomicUsize::new(0);
        let outcome = run_fixed_rate(&config, &stop, |_, _| {
            std::thread::sleep(Duration::from_millis(3));
            Ok(())
        });
        assert_eq!(outcome.fault, Some(SafetyFault::DeadlineStreak { misses: 3 }));
        assert!(outcome.stats.misses >= 3);
    }

    #[test]
    fn step_errors_and_stop_requests_end_the_loop() {
        let config = LoopConfig { rate_hz: 1000.0, duration: 1.0, miss_streak: 10 };
        let stop = AtomicUsize::new(0);
        let outcome = run_fixed_rate(&config, &stop, |k, _| {
            if k == 5 {
                Err(SafetyFault::Device("unplugged".into()))
            } else {
                Ok(())
            }
        });
        assert_eq!(outcome.fault, Some(SafetyFault::Device("unplugged".into())));
        assert_eq!(outcome.stats.periods, 6);
        stop.store(STOP_REQUESTED, Ordering::Relaxed);
        let outcome = run_fixed_rate(&config, &stop, |_, _| Ok(()));
        assert!(matches!(outcome.fault, Some(SafetyFault::Controller(_))));
        // A controller that finishes its task ends the loop without a fault.
        stop.store(0, Ordering::Relaxed);
        let outcome = run_fixed_rate(&config, &stop, |k, _| {
            if k == 9 {
                stop.store(STOP_FINISHED, Ordering::Relaxed);
            }
            Ok(())
        });
        assert!(outcome.fault.is_none());
        assert_eq!(outcome.stats.periods, 10);
    }
}
