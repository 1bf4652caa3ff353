//! Loop statistics, recorded inside real-time loops without allocating: a fixed histogram of
//! periods in 1 µs bins (up to 20 ms; longer periods land in the last bin and in `max`).

use std::time::Duration;

/// Largest period the histogram resolves [µs].
const BINS: usize = 20_000;

/// Statistics of a periodic loop.
#[derive(Clone, Debug)]
pub struct LoopStats {
    target_us: f64,
    hist: Vec<u32>,
    ticks: u64,
    total_us: f64,
    max_us: f64,
    /// When the longest period ended, from the first tick [µs].
    max_at_us: f64,
    overruns: u64,
    compute_total_us: f64,
    compute_max_us: f64,
}

/// A summary of [`LoopStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoopSummary {
    /// Periods measured.
    pub ticks: u64,
    /// Achieved rate = ticks / elapsed [Hz].
    pub rate: f64,
    /// Median period [µs].
    pub p50: f64,
    /// 99th percentile period [µs].
    pub p99: f64,
    /// Longest period [µs].
    pub max: f64,
    /// When the longest period ended, from the loop's first tick [s].
    pub max_at: f64,
    /// Periods longer than 1.5 × the target.
    pub overruns: u64,
    /// Mean and longest compute time per tick [µs].
    pub compute_mean: f64,
    /// See `compute_mean`.
    pub compute_max: f64,
}

impl LoopSummary {
    /// The rate over the time the loop's CPU was this machine's [Hz]: ticks / (elapsed −
    /// `stolen`), where `stolen` [s] is time the hypervisor took (runtime::steal). No thread
    /// runs while its virtual CPU is stolen, so this is the rate the loop held while it could.
    pub fn rate_excluding(&self, stolen: f64) -> f64 {
        if self.rate <= 0.0 {
            return 0.0;
        }
        let elapsed = self.ticks as f64 / self.rate;
        self.ticks as f64 / (elapsed - stolen).max(f64::MIN_POSITIVE)
    }
}

impl LoopStats {
    /// Statistics for a loop of period `target`. Allocates its histogram here, once.
    pub fn new(target: Duration) -> Self {
        LoopStats {
            target_us: target.as_secs_f64() * 1e6,
            hist: vec![0; BINS],
            ticks: 0,
            total_us: 0.0,
            max_us: 0.0,
            max_at_us: 0.0,
            overruns: 0,
            compute_total_us: 0.0,
            compute_max_us: 0.0,
        }
    }

    /// Record one period and the compute time of the tick that ended it. No allocation.
    pub fn record(&mut self, period: Duration, compute: Duration) {
        let p = period.as_secs_f64() * 1e6;
        let c = compute.as_secs_f64() * 1e6;
        self.ticks += 1;
        self.total_us += p;
        if p > self.max_us {
            self.max_us = p;
            self.max_at_us = self.total_us;
        }
        if p > 1.5 * self.target_us {
            self.overruns += 1;
        }
        self.hist[(p as usize).min(BINS - 1)] += 1;
        self.compute_total_us += c;
        self.compute_max_us = self.compute_max_us.max(c);
    }

    fn percentile(&self, q: f64) -> f64 {
        let want = (q * self.ticks as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (us, n) in self.hist.iter().enumerate() {
            seen += *n as u64;
            if seen >= want {
                return us as f64 + 0.5;
            }
        }
        self.max_us
    }

    /// The summary so far without the percentiles (`p50 = p99 = 0`): O(1), cheap enough to
    /// call every tick.
    pub fn running(&self) -> LoopSummary {
        let n = self.ticks.max(1) as f64;
        LoopSummary {
            ticks: self.ticks,
            rate: if self.total_us > 0.0 {
                self.ticks as f64 / (self.total_us * 1e-6)
            } else {
                0.0
            },
            p50: 0.0,
            p99: 0.0,
            max: self.max_us,
            max_at: self.max_at_us * 1e-6,
            overruns: self.overruns,
            compute_mean: self.compute_total_us / n,
            compute_max: self.compute_max_us,
        }
    }

    /// The summary so far (scans the histogram: about 20 000 bins).
    pub fn summary(&self) -> LoopSummary {
        LoopSummary {
            p50: self.percentile(0.5),
            p99: self.percentile(0.99),
            ..self.running()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_rate_and_overruns_of_known_periods() {
        let mut s = LoopStats::new(Duration::from_millis(1));
        // 98 periods of 1000 µs, one of 1200 µs, one of 3000 µs (an overrun).
        for _ in 0..98 {
            s.record(Duration::from_micros(1000), Duration::from_micros(100));
        }
        s.record(Duration::from_micros(1200), Duration::from_micros(300));
        s.record(Duration::from_micros(3000), Duration::from_micros(100));
        let m = s.summary();
        assert_eq!(m.ticks, 100);
        assert_eq!(m.p50, 1000.5);
        assert_eq!(m.p99, 1200.5);
        assert_eq!(m.max, 3000.0);
        // It ended the run: 98 × 1000 + 1200 + 3000 µs in.
        assert!((m.max_at - 0.1022).abs() < 1e-12, "{}", m.max_at);
        assert_eq!(m.overruns, 1);
        // 98 × 1000 + 1200 + 3000 µs = 0.1022 s.
        assert!((m.rate - 100.0 / 0.1022).abs() < 1e-9);
        // 2.2 ms of the 102.2 ms stolen: 100 ticks in 100 ms.
        assert!((m.rate_excluding(0.0022) - 1000.0).abs() < 1e-9);
        assert_eq!(m.rate_excluding(0.0), m.rate);
        assert!((m.compute_mean - 102.0).abs() < 1e-9 && m.compute_max == 300.0);
    }
}
