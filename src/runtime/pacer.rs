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
    /// The time the last tick was scheduled for (see [`Pacer::due`]).
    due: Option<Instant>,
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
            due: None,
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
        self.fired(Instant::now(), due, compute)
    }

    /// The time the last tick was scheduled for (None before the first): its fire time minus
    /// the lag a catching-up pacer is making up (a tick run back to back after a slow one was
    /// due earlier than it fired); after a lag beyond `max_lag` was given up, the time it fired.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Book a tick that was due at `due` and fired at `now` (after `compute` of work since the
    /// previous one): schedule the next tick by the pacer's policy and record the period.
    /// Returns `now`. Separate from the sleeping so the policy is tested on a virtual clock.
    fn fired(&mut self, now: Instant, due: Instant, compute: Duration) -> Instant {
        let (due, next) = match self.catch_up {
            // Delay: the next tick is a period after this one, however late this one was.
            None => (due, now.max(due) + self.period),
            Some(max_lag) => {
                let lag = now.saturating_duration_since(due);
                if lag > max_lag {
                    // Give up the ticks missed beyond a period and restart the schedule: this
                    // tick is the new schedule's first, due now.
                    self.dropped += (lag.as_nanos() / self.period.as_nanos()) as u64;
                    (now, now + self.period)
                } else {
                    (due, due + self.period)
                }
            }
        };
        self.due = Some(due);
        self.next = Some(next);
        if let Some(prev) = self.last {
            self.stats.record(now - prev, compute);
        }
        self.last = Some(now);
        now
    }
}

/// Scheduling priority of the haptic loop's thread under `SCHED_FIFO` (1–99; above the physics
/// loop's, so the 1 kHz force loop is never the one preempted).
pub const HAPTIC_PRIORITY: i32 = 80;

/// The nice value the physics loop's thread asks for: time-shared, ahead of the recorder, the
/// viewer and other programs (nice 0), behind the haptic loops (`SCHED_FIFO`).
///
/// Not `SCHED_FIFO`: the physics loop is compute-bound (a knot's step can take the whole
/// millisecond, and a late step is made up back to back), and Linux lets real-time threads use
/// only `sched_rt_runtime_us` of each `sched_rt_period_us` on a CPU (950 000 of 1 000 000 by
/// default). A real-time physics thread past that budget had the kernel stop every real-time
/// thread on its CPU for the rest of the second, the haptic loop with it: on this project's
/// 2-core CI machine the omega's loop froze for 36–50 ms (`sched: RT throttling activated` in
/// the kernel log; docs/running.md, "Real-time priority").
pub const PHYSICS_NICE: i32 = -10;

/// The scheduling a loop's thread ran under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Priority {
    /// Not asked for: the normal time-sharing policy.
    #[default]
    NotAsked,
    /// `SCHED_FIFO` at this priority.
    Realtime(i32),
    /// Asked for and refused with this OS error code (0: not supported on this OS); the loop
    /// ran at normal priority.
    Refused(i32),
    /// The loop ran on a vendor SDK's servo thread, at the priority the SDK gives it.
    VendorServo,
    /// Time-shared at this nice value (below 0: ahead of the default).
    Nice(i32),
    /// A nice value below 0 was asked for and refused with this OS error code (0: not
    /// supported on this OS); the loop ran at the default nice 0.
    NiceRefused(i32),
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Priority::NotAsked => write!(f, "normal priority"),
            Priority::Realtime(p) => write!(f, "SCHED_FIFO {p}"),
            Priority::VendorServo => write!(f, "on the vendor SDK's servo thread"),
            Priority::Refused(0) => write!(
                f,
                "normal priority (real-time scheduling is only requested on Linux)"
            ),
            Priority::Refused(e) => write!(
                f,
                "normal priority (SCHED_FIFO refused: {}; grant CAP_SYS_NICE or an rtprio limit)",
                std::io::Error::from_raw_os_error(*e)
            ),
            Priority::Nice(n) => write!(f, "nice {n}"),
            Priority::NiceRefused(0) => write!(
                f,
                "normal priority (a raised priority is only requested on Linux)"
            ),
            Priority::NiceRefused(e) => write!(
                f,
                "normal priority (nice {PHYSICS_NICE} refused: {}; grant CAP_SYS_NICE or a nice limit)",
                std::io::Error::from_raw_os_error(*e)
            ),
        }
    }
}

/// Ask for the real-time `SCHED_FIFO` policy at `priority` for the calling thread, as haptic
/// servo loops do (CHAI3D's haptics thread, OpenHaptics' scheduler), so the process's other
/// threads (recorder, viewer, memory sampling) and other programs' threads never preempt it.
/// The haptic loops sleep most of each period, well within Linux's real-time throttling (95 % of
/// each second on a CPU); a compute-bound loop must not ask (see [`PHYSICS_NICE`]). Returns
/// what was obtained; when refused (an unprivileged user needs `CAP_SYS_NICE` or an `rtprio`
/// limit, see README) the loop runs at normal priority.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one FFI call on the calling thread's own handle
pub fn request_realtime(priority: i32) -> Priority {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self() is the calling thread's valid handle; `param` outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Priority::Realtime(priority)
    } else {
        Priority::Refused(rc)
    }
}

/// Real-time scheduling is only requested on Linux.
#[cfg(not(target_os = "linux"))]
pub fn request_realtime(_priority: i32) -> Priority {
    Priority::Refused(0)
}

/// Whether the process's memory is locked in RAM (`mlockall`), which a real-time session asks
/// for before its loops start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLock {
    /// Not asked for (`--no-realtime`).
    #[default]
    NotAsked,
    /// Every page mapped now and later is resident and locked: a loop never waits on a page
    /// fault.
    Locked,
    /// Not locked: the memory-lock limit (`RLIMIT_MEMLOCK`, in bytes) is finite, and locking
    /// future mappings under it could make a later allocation fail.
    Limited(u64),
    /// `mlockall` refused with this OS error code (0: not supported on this OS).
    Refused(i32),
}

impl std::fmt::Display for MemoryLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryLock::NotAsked => write!(f, "memory not locked"),
            MemoryLock::Locked => write!(f, "memory locked"),
            MemoryLock::Limited(b) => write!(
                f,
                "memory not locked (RLIMIT_MEMLOCK is {b} bytes; `memlock unlimited` in /etc/security/limits.conf)"
            ),
            MemoryLock::Refused(0) => write!(f, "memory not locked (only on Linux)"),
            MemoryLock::Refused(e) => write!(
                f,
                "memory not locked (mlockall refused: {})",
                std::io::Error::from_raw_os_error(*e)
            ),
        }
    }
}

/// Lock the process's memory, present and future, in RAM (`mlockall(MCL_CURRENT |
/// MCL_FUTURE)`), as real-time Linux programs do: a page a real-time loop touches for the first
/// time (a ring's next page, its stack) otherwise faults, and the fault waits for the address
/// space's lock while another thread maps or unmaps memory (the recorder growing a buffer). In
/// tests/faults.rs that cost the haptic loop ticks of up to 789 µs and periods of 7 ms (974 Hz);
/// locked, 1000.0 Hz. Only where nothing can fail for it: as root (`CAP_IPC_LOCK` ignores the
/// limit) or with an unlimited `RLIMIT_MEMLOCK`; under a finite limit a later allocation past
/// it would fail, so the memory is left unlocked and the report says why.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // getrlimit, geteuid and mlockall on the calling process
pub fn lock_memory() -> MemoryLock {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for the call to fill; geteuid takes nothing.
    let (got, root) = unsafe {
        (
            libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) == 0,
            libc::geteuid() == 0,
        )
    };
    let unlimited = got && lim.rlim_cur == libc::RLIM_INFINITY;
    if !(root || unlimited) {
        return MemoryLock::Limited(if got { lim.rlim_cur } else { 0 });
    }
    // SAFETY: plain flags.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        MemoryLock::Locked
    } else {
        MemoryLock::Refused(std::io::Error::last_os_error().raw_os_error().unwrap_or(-1))
    }
}

/// Memory is only locked on Linux.
#[cfg(not(target_os = "linux"))]
pub fn lock_memory() -> MemoryLock {
    MemoryLock::Refused(0)
}

/// The nice value the live knot analysis' thread asks for (runtime::analysis): below the
/// time-sharing threads' default 0, so the recorder and the viewer go first.
pub const ANALYSIS_NICE: i32 = 10;

/// Lower the calling thread's time-sharing priority to `nice` (Linux: the nice value is a
/// thread's own; `setpriority(PRIO_PROCESS, 0, …)` sets the calling thread's). Returns whether
/// it was set (raising it back needs privileges, lowering it never does).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one FFI call on the calling thread
pub fn lower_priority(nice: i32) -> bool {
    // SAFETY: setpriority takes plain integers; who = 0 names the calling thread.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) == 0 }
}

/// Thread priorities are only lowered on Linux.
#[cfg(not(target_os = "linux"))]
pub fn lower_priority(_nice: i32) -> bool {
    false
}

/// Raise the calling thread's time-sharing priority to `nice` (below 0; needs root,
/// `CAP_SYS_NICE` or an `RLIMIT_NICE` limit, as `SCHED_FIFO` does). Returns what was obtained.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one FFI call on the calling thread
pub fn raise_priority(nice: i32) -> Priority {
    // SAFETY: setpriority takes plain integers; who = 0 names the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } == 0 {
        Priority::Nice(nice)
    } else {
        Priority::NiceRefused(std::io::Error::last_os_error().raw_os_error().unwrap_or(-1))
    }
}

/// Thread priorities are only raised on Linux.
#[cfg(not(target_os = "linux"))]
pub fn raise_priority(_nice: i32) -> Priority {
    Priority::NiceRefused(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scheduling policy and real-time priority of the calling thread, from
    /// /proc/thread-self/stat (fields 41 and 40; 1 = SCHED_FIFO).
    #[cfg(target_os = "linux")]
    fn own_policy() -> (u32, u32) {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("procfs");
        // Fields after the parenthesised command name (which may hold spaces), from field 3.
        let rest = &stat[stat.rfind(')').expect("comm") + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        (f[41 - 3].parse().unwrap(), f[40 - 3].parse().unwrap())
    }

    /// `request_realtime` reports what the kernel did: when it says SCHED_FIFO 80 the thread
    /// runs under SCHED_FIFO at 80; when it says refused, the error is EPERM and the thread
    /// is still time-shared.
    #[cfg(target_os = "linux")]
    #[test]
    fn realtime_request_reports_what_the_thread_got() {
        std::thread::spawn(|| {
            assert_eq!(own_policy(), (0, 0), "a new thread is time-shared");
            match request_realtime(HAPTIC_PRIORITY) {
                Priority::Realtime(p) => {
                    assert_eq!(p, HAPTIC_PRIORITY);
                    assert_eq!(own_policy(), (1, HAPTIC_PRIORITY as u32));
                }
                Priority::Refused(e) => {
                    assert_eq!(e, libc::EPERM, "{}", Priority::Refused(e));
                    assert_eq!(own_policy(), (0, 0));
                }
                other => panic!("asked, got {other:?}"),
            }
        })
        .join()
        .expect("the probe thread");
    }

    /// `raise_priority` reports what the kernel did: when it says nice -10 the thread's nice
    /// value is -10 and its policy is still time-sharing; when refused, the error is EACCES or
    /// EPERM and the nice value is still 0.
    #[cfg(target_os = "linux")]
    #[test]
    fn raised_priority_reports_what_the_thread_got() {
        std::thread::spawn(|| {
            // Field 19 of /proc/thread-self/stat: the nice value.
            let nice = || -> i32 {
                let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("procfs");
                let rest = &stat[stat.rfind(')').expect("comm") + 2..];
                rest.split_whitespace()
                    .nth(19 - 3)
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            assert_eq!(nice(), 0, "a new thread runs at nice 0");
            match raise_priority(PHYSICS_NICE) {
                Priority::Nice(n) => {
                    assert_eq!(n, PHYSICS_NICE);
                    assert_eq!(nice(), PHYSICS_NICE);
                }
                Priority::NiceRefused(e) => {
                    assert!(e == libc::EACCES || e == libc::EPERM, "{e}");
                    assert_eq!(nice(), 0);
                }
                other => panic!("asked for a nice value, got {other:?}"),
            }
            assert_eq!(own_policy(), (0, 0), "still time-shared");
        })
        .join()
        .expect("the probe thread");
    }

    /// A loop on a virtual clock: ticks fire as `tick` fires them with an ideal sleeper (at
    /// their due time, or at once when late), and each tick's work takes `work(i)`. Returns the
    /// pacer, the times the ticks fired and the times they were due ([`Pacer::due`]), from the
    /// first.
    fn virtual_loop(
        mut p: Pacer,
        ticks: usize,
        work: impl Fn(usize) -> Duration,
    ) -> (Pacer, Vec<Duration>, Vec<Duration>) {
        let t0 = Instant::now();
        let mut now = t0;
        let (mut fired, mut dues) = (Vec::with_capacity(ticks), Vec::with_capacity(ticks));
        let mut compute = Duration::ZERO;
        for i in 0..ticks {
            let due = *p.next.get_or_insert(now);
            now = now.max(due);
            p.fired(now, due, compute);
            fired.push(now - t0);
            dues.push(p.due().expect("a tick fired") - t0);
            compute = work(i);
            now += compute;
        }
        (p, fired, dues)
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn catching_up_keeps_the_tick_count_on_the_wall_clock() {
        // One 5 ms step in 100 ticks of 1 ms: the catching-up pacer makes up the 4 missed
        // ticks back to back, so tick 100 fires at 100 periods (not 104).
        let slow = |i| Duration::from_micros(if i == 10 { 5000 } else { 100 });
        let (p, fired, due) = virtual_loop(Pacer::catching_up(MS, 50 * MS), 101, slow);
        assert_eq!(fired[100], 100 * MS);
        // Ticks 11 to 14 ran late, back to back (a tick's work, 0.1 ms, apart) from 15 ms,
        // each still due at its own place on the schedule (what it takes its targets by).
        assert_eq!(fired[11], 15 * MS);
        assert_eq!(fired[12] - fired[11], Duration::from_micros(100));
        for (i, d) in due.iter().enumerate() {
            assert_eq!(*d, i as u32 * MS, "tick {i}");
        }
        assert!(fired[11] - due[11] == 4 * MS && fired[16] == due[16]);
        assert_eq!(p.dropped, 0);
        assert_eq!(p.stats.summary().overruns, 1);
    }

    #[test]
    fn delaying_pacer_loses_the_missed_ticks_and_a_long_stall_is_dropped() {
        let slow = |i| Duration::from_micros(if i == 10 { 5000 } else { 100 });
        let (p, fired, _) = virtual_loop(Pacer::new(MS), 101, slow);
        // 99 periods + one 5 ms period: tick 100 fires at 104 ms, the 4 missed ticks lost.
        assert_eq!(fired[100], 104 * MS);
        assert_eq!(p.dropped, 0);
        // A 30 ms stall with a 10 ms lag limit is given up, not burst: the late tick, due
        // at 1 ms, fires at 30 ms, its 29 missed periods are dropped and the next tick is a
        // period later.
        let stall = |i| if i == 0 { 30 * MS } else { Duration::ZERO };
        let (p, fired, due) = virtual_loop(Pacer::catching_up(MS, 10 * MS), 3, stall);
        assert_eq!(fired, vec![Duration::ZERO, 30 * MS, 31 * MS]);
        // The given-up tick starts the new schedule: due when it fired.
        assert_eq!(due, fired);
        assert_eq!(p.dropped, 29);
    }

    /// The real sleeper: 200 ticks of 1 ms take at least 199 periods (a pacer never fires
    /// early). How close to 199 ms they come depends on the machine's load, so that is left
    /// to the loops' rate assertions over 3 s (tests/runtime.rs) and `cargo bench`.
    #[test]
    fn the_sleeper_never_fires_a_tick_early() {
        let mut p = Pacer::new(MS);
        let t0 = p.tick(Duration::ZERO);
        let mut prev = t0;
        for _ in 0..200 {
            let t = p.tick(Duration::ZERO);
            assert!(t - prev >= MS, "a period of {:?}", t - prev);
            prev = t;
        }
        assert!(prev - t0 >= 200 * MS);
    }
}
