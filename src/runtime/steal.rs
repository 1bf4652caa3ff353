//! Time the hypervisor took from this virtual machine's CPUs: the `steal` column of
//! `/proc/stat` (proc(5): "time spent in other operating systems when running in a
//! virtualized environment", in clock ticks of `sysconf(_SC_CLK_TCK)`).
//!
//! While a virtual CPU is stolen no thread on it runs, whatever its priority, so a 1 kHz loop
//! on it misses those ticks. A run reports how much was stolen, so that a rate short of 1 kHz
//! on a shared VM can be told from a defect of the loops (docs/running.md, "Rates on a
//! virtual machine"). Read by the main thread at the start and end of a run, never in a loop.

use std::fmt;

/// Steal counters at the start of a run.
#[derive(Clone, Debug)]
pub struct StealMeter {
    start: Vec<u64>,
    tick: f64,
}

/// Time stolen from the CPUs over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stolen {
    /// The most stolen from any one CPU [s]: the most a thread on one CPU can have lost.
    pub max: f64,
    /// Mean over the CPUs [s].
    pub mean: f64,
    /// CPUs counted.
    pub cpus: usize,
}

/// Each CPU's steal counter [clock ticks] from the text of `/proc/stat` (lines `cpuN …`, the
/// eighth number); None when there is no such line or one has no steal column (kernels
/// before 2.6.11).
pub fn parse(stat: &str) -> Option<Vec<u64>> {
    let per_cpu: Vec<Option<u64>> = stat
        .lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|l| l.split_whitespace().nth(8).and_then(|s| s.parse().ok()))
        .collect();
    if per_cpu.is_empty() {
        return None;
    }
    per_cpu.into_iter().collect()
}

fn read() -> Option<Vec<u64>> {
    parse(&std::fs::read_to_string("/proc/stat").ok()?)
}

impl StealMeter {
    /// Start counting; None where `/proc/stat` has no steal counters (not Linux).
    #[allow(unsafe_code)] // sysconf: one FFI call that reads a constant
    pub fn start() -> Option<Self> {
        // SAFETY: sysconf reads a constant of the C library; no memory is passed.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let tick = if hz > 0 { 1.0 / hz as f64 } else { 0.01 };
        Some(StealMeter {
            start: read()?,
            tick,
        })
    }

    /// Time stolen since [`StealMeter::start`]. The counters have the resolution of one clock
    /// tick (10 ms at the usual 100 Hz). A CPU brought on line since is left out.
    pub fn stolen(&self) -> Stolen {
        let now = read().unwrap_or_else(|| self.start.clone());
        Self::between(&self.start, &now, self.tick)
    }

    fn between(start: &[u64], now: &[u64], tick: f64) -> Stolen {
        let d: Vec<f64> = start
            .iter()
            .zip(now)
            .map(|(a, b)| b.saturating_sub(*a) as f64 * tick)
            .collect();
        let cpus = d.len();
        Stolen {
            max: d.iter().copied().fold(0.0, f64::max),
            mean: if cpus > 0 {
                d.iter().sum::<f64>() / cpus as f64
            } else {
                0.0
            },
            cpus,
        }
    }
}

impl fmt::Display for Stolen {
    /// `hypervisor steal 0 ms` or `hypervisor steal 130 ms (mean of 2 CPUs 70 ms)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max == 0.0 {
            write!(f, "hypervisor steal 0 ms")
        } else {
            write!(
                f,
                "hypervisor steal {:.0} ms (mean of {} CPUs {:.0} ms)",
                self.max * 1e3,
                self.cpus,
                self.mean * 1e3
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  5440478 1284080 113089 1830063 6025 0 2966 18426 0 0
cpu0 2730586 649957 56879 897407 3698 0 1181 8649 0 0
cpu1 2709891 634123 56210 932656 2326 0 1785 9776 0 0
intr 27595536 0 0 0
";

    #[test]
    fn the_steal_column_of_each_cpu_is_read_and_the_total_line_is_not() {
        assert_eq!(parse(STAT), Some(vec![8649, 9776]));
        assert_eq!(parse("cpu0 1 2 3 4 5 6 7\n"), None, "no steal column");
        assert_eq!(parse("intr 1 2\n"), None);
    }

    #[test]
    fn stolen_time_is_the_counters_rise_in_seconds() {
        let s = StealMeter::between(&[8649, 9776], &[8662, 9779], 0.01);
        assert!((s.max - 0.13).abs() < 1e-12 && (s.mean - 0.08).abs() < 1e-12);
        assert_eq!(
            s.to_string(),
            "hypervisor steal 130 ms (mean of 2 CPUs 80 ms)"
        );
        let none = StealMeter::between(&[5, 5], &[5, 5], 0.01);
        assert_eq!(none.to_string(), "hypervisor steal 0 ms");
    }

    #[test]
    fn this_machine_has_counters_that_do_not_run_backwards() {
        let m = StealMeter::start().expect("Linux has /proc/stat with steal");
        let s = m.stolen();
        assert!(s.cpus >= 1 && s.max >= 0.0 && s.mean <= s.max);
    }
}
