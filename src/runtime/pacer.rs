//! A fixed-rate loop pacer on `spin_sleep` with the `SpinLoopHint` strategy
//! (research/feasibility.md §4: Linux's default `YieldThread` collapses a 1 kHz loop to
//! 500–800 Hz under load; `SpinLoopHint` held 999.2 Hz with both cores busy).
//!
//! Two policies for a missed tick:
//! - [`Pacer::new`]: missed ticks are delayed, never made up.
//! - [`Pacer::catching_up`] (the physics loop with a 20 ms limit, the haptic loop with 3 ms, so
//!   a tick the scheduler delayed fires at once but a stall is never burst): the schedule is the
//!   wall clock
//!   ("fix your timestep"): after a long step the missed ticks run back to back until the loop is
//!   on schedule again, so one slow Newton solve does not make the simulation run slow. A lag
//!   beyond `max_lag` is given up (the schedule restarts from now) and counted in
//!   [`Pacer::dropped`], so a stall never turns into an unbounded burst.

use super::stats::LoopStats;
use spin_sleep::{SpinSleeper, SpinStrategy};
use std::time::{Duration, Instant};

/// Paces a loop at a fixed period and records its statistics.
pub struct Pacer {
    period: Duration,
    sleeper: SpinSleeper,
    /// The next tick's scheduled time (None before the first tick).
    next: Option<Instant>,
    /// Some(max lag): catch up missed ticks up to this lag; None: delay them.
    catch_up: Option<Duration>,
    last: Option<Instant>,
    /// Ticks given up because the loop fell more than `max_lag` behind (catching-up pacers).
    pub dropped: u64,
    /// Statistics of the periods so far.
    pub stats: LoopStats,
}

impl Pacer {
    /// A pacer of period `period` that delays missed ticks (never bursts).
    pub fn new(period: Duration) -> Self {
        Pacer {
            period,
            sleeper: SpinSleeper::default().with_spin_strategy(SpinStrategy::SpinLoopHint),
            next: None,
            catch_up: None,
            last: None,
            dropped: 0,
            stats: LoopStats::new(period),
        }
    }

    /// A pacer of period `period` that runs missed ticks back to back until it is on schedule,
    /// giving up (and counting in `dropped`) the ticks of a lag longer than `max_lag`.
    pub fn catching_up(period: Duration, max_lag: Duration) -> Self {
        Pacer {
            catch_up: Some(max_lag),
            ..Pacer::new(period)
        }
    }

    /// Wait for the next tick; `compute` is how long the work since the previous tick took.
    /// Returns the tick time.
    pub fn tick(&mut self, compute: Duration) -> Instant {
        let now = Instant::now();
        let due = *self.next.get_or_insert(now);
        if due > now {
            self.sleeper.sleep(due - now);
        }
        let now = Instant::now();
        self.next = Some(match self.catch_up {
            // Delay: the next tick is a period after this one, however late this one was.
            None => now.max(due) + self.period,
            Some(max_lag) => {
                let lag = now.saturating_duration_since(due);
                if lag > max_lag {
                    // Give up the ticks missed beyond a period and restart the schedule.
                    self.dropped += (lag.as_nanos() / self.period.as_nanos()) as u64;
                    now + self.period
                } else {
                    due + self.period
                }
            }
        });
        if let Some(prev) = self.last {
            self.stats.record(now - prev, compute);
        }
        self.last = Some(now);
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy-wait (a stand-in for a slow step: sleeping would not load the core).
    fn work(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn catching_up_keeps_the_tick_count_on_the_wall_clock() {
        // One 5 ms step in 100 ticks of 1 ms: the catching-up pacer makes up the 4 missed
        // ticks, so 100 ticks take 100 periods (not 104), give or take scheduling noise.
        let mut p = Pacer::catching_up(Duration::from_millis(1), Duration::from_millis(50));
        let t0 = p.tick(Duration::ZERO);
        for i in 0..100 {
            let d = if i == 10 { 5000 } else { 100 };
            work(Duration::from_micros(d));
            p.tick(Duration::from_micros(d));
        }
        let wall = t0.elapsed().as_secs_f64();
        assert!((wall - 0.100).abs() < 0.0025, "{wall} s");
        assert_eq!(p.dropped, 0);
        assert!(p.stats.summary().overruns >= 1);
    }

    #[test]
    fn delaying_pacer_loses_the_missed_ticks_and_a_long_stall_is_dropped() {
        let mut p = Pacer::new(Duration::from_millis(1));
        let t0 = p.tick(Duration::ZERO);
        for i in 0..100 {
            work(Duration::from_micros(if i == 10 { 5000 } else { 100 }));
            p.tick(Duration::ZERO);
        }
        // 99 periods + one 5 ms period: ≈ 104 ms.
        let wall = t0.elapsed().as_secs_f64();
        assert!(wall > 0.1035, "{wall} s");
        // A 30 ms stall with a 10 ms lag limit is given up, not burst.
        let mut p = Pacer::catching_up(Duration::from_millis(1), Duration::from_millis(10));
        p.tick(Duration::ZERO);
        work(Duration::from_millis(30));
        p.tick(Duration::ZERO);
        let t = Instant::now();
        p.tick(Duration::ZERO);
        assert!(p.dropped >= 28 && p.dropped <= 31, "{}", p.dropped);
        assert!(
            t.elapsed() > Duration::from_micros(900),
            "no burst after a drop"
        );
    }
}
