//! The 1 kHz pacer holds its rate. Rates, not per-tick jitter, are asserted (the machine is a
//! shared 2-core VM); jitter is reported by `suture jitter`.

use std::time::{Duration, Instant};
use suture::runtime::Pacer;

#[test]
fn pacer_holds_1_khz_over_two_seconds() {
    let mut p = Pacer::new(Duration::from_millis(1));
    let start = Instant::now();
    let mut work = Duration::ZERO;
    for _ in 0..2000 {
        let t = p.tick(work);
        // ~50 µs of work per tick, as a haptic tick might do.
        while t.elapsed() < Duration::from_micros(50) {
            std::hint::spin_loop();
        }
        work = t.elapsed();
    }
    let wall = start.elapsed().as_secs_f64();
    let s = p.stats.summary();
    println!(
        "pacer: {} periods, {:.1} Hz (wall {:.3} s), p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs, {} overruns, compute {:.0}/{:.0} µs",
        s.ticks, s.rate, wall, s.p50, s.p99, s.max, s.overruns, s.compute_mean, s.compute_max
    );
    assert_eq!(s.ticks, 1999);
    assert!(s.rate >= 990.0, "achieved {} Hz", s.rate);
    assert!(s.compute_mean >= 50.0);
}
