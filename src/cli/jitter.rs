//! `suture jitter`: the haptic pacer's achieved rate and period percentiles on this machine.

use std::process::ExitCode;
use std::time::Duration;

use suture::runtime::Pacer;
use suture::runtime::haptic::HAPTIC_MAX_LAG;

/// `suture jitter --seconds S`: run the 1 kHz pacer alone (doing nothing each tick but time
/// the previous one) and print its statistics.
pub fn jitter(seconds: f64) -> ExitCode {
    let mut p = Pacer::catching_up(Duration::from_millis(1), HAPTIC_MAX_LAG);
    let ticks = (seconds * 1000.0).round() as usize;
    let mut work = Duration::ZERO;
    for _ in 0..=ticks {
        let t = p.tick(work);
        work = t.elapsed();
    }
    let s = p.stats.summary();
    println!(
        "1 kHz pacer (spin_sleep, SpinLoopHint) for {seconds} s: {:.2} Hz achieved, period p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs, {} overruns (> 1.5 ms)",
        s.rate, s.p50, s.p99, s.max, s.overruns
    );
    ExitCode::SUCCESS
}
