//! The fixed-rate control loop: a monotonic clock, sleep-then-spin to each deadline, no
//! allocation inside the loop, deadline-miss and jitter statistics, a watchdog on missed
//! deadlines, and a stop flag (set from SIGINT/SIGTERM handlers).

use crate::hardware::safety::{SafetyFault, Watchdog};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Most periods one run may have: 11.6 days at 1 kHz, 2.8 hours at 100 kHz.
pub const MAX_PERIODS: f64 = 1e9;

/// Loop rate and length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopConfig {
    /// Periods a second (Hz, 1 to 100000).
    pub rate_hz: f64,
    /// How long the loop runs (s).
    pub duration: f64,
    /// The watchdog's tolerance (s): the latest a command may go out after it was due.
    pub command_timeout: f64,
}

impl LoopConfig {
    /// Checks the rate, the duration, their product against `MAX_PERIODS` and the timeout.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate_hz.is_finite() && (1.0..=100_000.0).contains(&self.rate_hz)) {
            return Err(format!("loop rate must be in [1, 100000] Hz, got {}", self.rate_hz));
        }
        if !(self.duration.is_finite() && self.duration >= 0.0) {
            return Err(format!("duration must be >= 0 s, got {}", self.duration));
        }
        let periods = self.duration * self.rate_hz;
        if periods > MAX_PERIODS {
            return Err(format!(
                "duration x rate = {} s x {} Hz = {periods:.3e} periods, more than the limit of {MAX_PERIODS:.0e}: shorten the run",
                self.duration, self.rate_hz
            ));
        }
        crate::hardware::safety::check_command_timeout(self.command_timeout)
    }

    /// One period.
    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate_hz)
    }
}

/// A distribution of durations in fixed 5 microsecond buckets up to 2 ms (longer ones share
/// the last bucket, bounded by the longest seen), so recording one never allocates and an
/// hour-long run keeps the same few kilobytes.
#[derive(Clone, Debug)]
pub struct DurationHistogram {
    counts: [u64; Self::BUCKETS],
    count: u64,
    total: Duration,
    max: Duration,
}

impl Default for DurationHistogram {
    fn default() -> Self {
        DurationHistogram { counts: [0; Self::BUCKETS], count: 0, total: Duration::ZERO, max: Duration::ZERO }
    }
}

impl DurationHistogram {
    const BUCKET_NS: u64 = 5_000;
    const BUCKETS: usize = 401;

    pub fn record(&mut self, d: Duration) {
        self.count += 1;
        self.total += d;
        self.max = self.max.max(d);
        let bucket = (d.as_nanos() / u128::from(Self::BUCKET_NS)).min(Self::BUCKETS as u128 - 1) as usize;
        self.counts[bucket] += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> Duration {
        self.max
    }

    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(self.total.as_secs_f64() / self.count as f64)
        }
    }

    /// The longest duration the buckets resolve (2 ms); longer ones are only counted.
    pub const RESOLVED: Duration = Duration::from_nanos(Self::BUCKET_NS * (Self::BUCKETS as u64 - 1));

    /// `pN <= X us`, or `pN > 2000 us` where the percentile lies past the resolved range.
    fn describe_percentile(&self, label: &str, fraction: f64) -> String {
        let p = self.percentile(fraction);
        if p > Self::RESOLVED {
            format!("{label} > {:.0} us", Self::RESOLVED.as_secs_f64() * 1e6)
        } else {
            format!("{label} <= {:.0} us", p.as_secs_f64() * 1e6)
        }
    }

    /// Upper bound of the duration below which `fraction` of the recorded ones lie: the top of
    /// their bucket, or the longest seen when that is smaller or in the last bucket.
    pub fn percentile(&self, fraction: f64) -> Duration {
        let target = ((fraction * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= target {
                return if i == Self::BUCKETS - 1 {
                    self.max
                } else {
                    Duration::from_nanos((i as u64 + 1) * Self::BUCKET_NS).min(self.max)
                };
            }
        }
        self.max
    }
}

/// What the loop measured: wake-up lateness (how long after its deadline a period started)
/// and each period's work, as histograms.
#[derive(Clone, Debug, Default)]
pub struct LoopStats {
    /// Periods run.
    pub periods: u64,
    /// Periods whose work ended after the next deadline.
    pub misses: u64,
    /// How long after its deadline each period started.
    pub lateness: DurationHistogram,
    /// How long each period's work took.
    pub work: DurationHistogram,
    /// Longest time from a period's deadline to its command going out (what the watchdog
    /// compares with its tolerance).
    pub max_command_delay: Duration,
}

impl LoopStats {
    fn record(&mut self, lateness: Duration, work: Duration, missed: bool) {
        self.periods += 1;
        self.max_command_delay = self.max_command_delay.max(lateness + work);
        self.misses += u64::from(missed);
        self.lateness.record(lateness);
        self.work.record(work);
    }
}

impl fmt::Display for LoopStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let (late, work) = (&self.lateness, &self.work);
        write!(
            f,
            "{} periods, {} deadline misses ({:.3} %); wake-up lateness mean {:.1} us, {}, {}, {}, max {:.1} us; period work mean {:.1} us, {}, max {:.1} us; latest command {:.1} ms after its deadline",
            self.periods,
            self.misses,
            100.0 * self.misses as f64 / (self.periods.max(1)) as f64,
            us(late.mean()),
            late.describe_percentile("p50", 0.5),
            late.describe_percentile("p99", 0.99),
            late.describe_percentile("p99.9", 0.999),
            us(late.max()),
            us(work.mean()),
            work.describe_percentile("p99", 0.99),
            us(work.max()),
            self.max_command_delay.as_secs_f64() * 1e3,
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
    /// What the loop measured.
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
    let watchdog = Watchdog::new(config.command_timeout);
    // Sleep until this close to a deadline, then spin: OS sleeps overshoot by tens of us.
    let spin = Duration::from_micros(100).min(period / 4);
    let start = Instant::now();
    for k in 0..total {
        match stop.load(Ordering::Relaxed) {
            0 => {}
            STOP_FINISHED => return LoopOutcome { stats, fault: None },
            STOP_REQUESTED => {
                return LoopOutcome { stats, fault: Some(SafetyFault::Controller("stopped on request".into())) }
            }
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
        // The command of period k was due at its deadline and went out when the step ended.
        if let Err(fault) = watchdog.record((done - deadline).as_secs_f64()) {
            return LoopOutcome { stats, fault: Some(fault) };
        }
    }
    LoopOutcome { stats, fault: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_bound_the_recorded_durations() {
        let mut h = DurationHistogram::default();
        assert_eq!(h.percentile(0.99), Duration::ZERO);
        // 990 durations of 12 us, 9 of 700 us and one of 40 ms (past the last bucket).
        for _ in 0..990 {
            h.record(Duration::from_micros(12));
        }
        for _ in 0..9 {
            h.record(Duration::from_micros(700));
        }
        h.record(Duration::from_millis(40));
        assert_eq!(h.count(), 1000);
        assert_eq!(h.percentile(0.5), Duration::from_micros(15));
        assert_eq!(h.percentile(0.99), Duration::from_micros(15));
        assert_eq!(h.percentile(0.995), Duration::from_micros(705));
        assert_eq!(h.percentile(1.0), Duration::from_millis(40));
        assert_eq!(h.max(), Duration::from_millis(40));
        let mean = (990.0 * 12.0 + 9.0 * 700.0 + 40_000.0) / 1000.0;
        assert!((h.mean().as_secs_f64() * 1e6 - mean).abs() < 1e-6, "{:?}", h.mean());
        // Past the resolved 2 ms, the description says only that.
        assert_eq!(h.describe_percentile("p100", 1.0), "p100 > 2000 us");
        assert_eq!(h.describe_percentile("p99", 0.99), "p99 <= 15 us");
        // A single short duration: its percentiles are itself, not its bucket's top.
        let mut one = DurationHistogram::default();
        one.record(Duration::from_micros(2));
        assert_eq!(one.percentile(0.99), Duration::from_micros(2));
    }

    #[test]
    fn runs_every_period_at_rate() {
        let config = LoopConfig { rate_hz: 1000.0, duration: 0.2, command_timeout: 1.0 };
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
    fn watchdog_stops_a_loop_that_falls_behind() {
        // Every period takes 3 ms at 1 kHz: the loop falls 2 ms further behind each period
        // and trips once a command is more than 10 ms late, after about five periods.
        let config = LoopConfig { rate_hz: 1000.0, duration: 1.0, command_timeout: 0.01 };
        let stop = AtomicUsize::new(0);
        let outcome = run_fixed_rate(&config, &stop, |_, _| {
            std::thread::sleep(Duration::from_millis(3));
            Ok(())
        });
        match outcome.fault {
            Some(SafetyFault::StaleCommand { late, limit }) => assert!(late > 0.01 && limit == 0.01, "{late}"),
            other => panic!("{other:?}"),
        }
        assert!(outcome.stats.periods >= 4 && outcome.stats.periods < 20, "{}", outcome.stats.periods);
    }

    #[test]
    fn watchdog_rides_out_one_hiccup() {
        // One 14 ms stall at 1 kHz (a loaded machine without real-time scheduling): the loop
        // catches up and the 50 ms tolerance holds.
        let config = LoopConfig { rate_hz: 1000.0, duration: 0.1, command_timeout: 0.05 };
        let stop = AtomicUsize::new(0);
        let outcome = run_fixed_rate(&config, &stop, |k, _| {
            if k == 20 {
                std::thread::sleep(Duration::from_millis(14));
            }
            Ok(())
        });
        assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
        assert!(outcome.stats.misses >= 1);
    }

    #[test]
    fn step_errors_and_stop_requests_end_the_loop() {
        let config = LoopConfig { rate_hz: 1000.0, duration: 1.0, command_timeout: 1.0 };
        let stop = AtomicUsize::new(0);
        let outcome =
            run_fixed_rate(
                &config,
                &stop,
                |k, _| {
                    if k == 5 {
                        Err(SafetyFault::Device("unplugged".into()))
                    } else {
                        Ok(())
                    }
                },
            );
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
