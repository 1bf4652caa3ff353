//! A fixed-rate loop pacer: `spin_sleep_util::interval` with the `SpinLoopHint` strategy
//! (research/feasibility.md §4: Linux's default `YieldThread` collapses a 1 kHz loop to
//! 500–800 Hz under load; `SpinLoopHint` held 999.2 Hz with both cores busy). Missed ticks are
//! delayed, not burst: a haptic loop must not fire several ticks back to back after a stall.

use super::stats::LoopStats;
use spin_sleep::{SpinSleeper, SpinStrategy};
use spin_sleep_util::{Interval, MissedTickBehavior};
use std::time::{Duration, Instant};

/// Paces a loop at a fixed period and records its statistics.
pub struct Pacer {
    interval: Interval,
    last: Option<Instant>,
    /// Statistics of the periods so far.
    pub stats: LoopStats,
}

impl Pacer {
    /// A pacer of period `period`.
    pub fn new(period: Duration) -> Self {
        let mut interval =
            spin_sleep_util::interval(period).with_missed_tick_behavior(MissedTickBehavior::Delay);
        interval.set_spin_sleeper(
            SpinSleeper::default().with_spin_strategy(SpinStrategy::SpinLoopHint),
        );
        Pacer {
            interval,
            last: None,
            stats: LoopStats::new(period),
        }
    }

    /// Wait for the next tick; `compute` is how long the work since the previous tick took.
    /// Returns the tick time.
    pub fn tick(&mut self, compute: Duration) -> Instant {
        self.interval.tick();
        let now = Instant::now();
        if let Some(prev) = self.last {
            self.stats.record(now - prev, compute);
        }
        self.last = Some(now);
        now
    }
}
