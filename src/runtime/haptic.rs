//! The haptic loop: a thread at a fixed rate (1 kHz) per device that reads it, hands the mapped
//! device pose to the physics (ToolTarget), and renders the virtual-coupling force from the
//! latest tool state the physics published (ProxyState), through the watchdog and the force
//! limiter. It never locks, allocates, logs or does I/O other than the device's own reports;
//! queues are ringbuf SPSC rings.

use super::pacer::{HAPTIC_PRIORITY, Pacer, Priority, request_realtime};
use super::stats::LoopSummary;
use crate::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use crate::device::HapticDevice;
use crate::math::{Quat, Vec3};
use crate::session::format::SampleRecord;
use crate::session::recorder::RecorderTx;
use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The tool state the physics publishes for the haptic loop (world frame, SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProxyState {
    /// When it was published [s since the loops started].
    pub published: f64,
    /// Tool position [m] and orientation.
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Tool velocity [m/s] and angular velocity [rad/s].
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Whether the tool is held (coupled): a released tool renders no force.
    pub coupled: bool,
}

/// The haptic loop's figures, published a few times a second for the HUD.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HapticFigures {
    /// Loop statistics so far.
    pub stats: LoopSummary,
    /// Device faults so far.
    pub device_faults: u64,
    /// Physics stalls the watchdog saw so far.
    pub stalls: u64,
    /// Force rendered to the hand at the last tick [N] (world frame, after the limiter).
    pub hand_force: Vec3,
}

pub use crate::sim::ToolTarget;

/// A single-producer single-consumer "latest value" channel over a ring: the consumer drains
/// and keeps the newest. Lock-free and allocation-free after construction.
pub fn latest<T: Copy>(capacity: usize) -> (HeapProd<T>, Latest<T>) {
    let (p, c) = HeapRb::<T>::new(capacity).split();
    (p, Latest { rx: c, last: None })
}

/// The consumer side of [`latest`].
pub struct Latest<T> {
    rx: HeapCons<T>,
    last: Option<T>,
}

impl<T: Copy> Latest<T> {
    /// The "latest" view of an existing ring's consumer (when the producer is a plain queue).
    pub fn from_consumer(rx: HeapCons<T>) -> Self {
        Latest { rx, last: None }
    }

    /// The newest value received so far (draining what is pending).
    pub fn get(&mut self) -> Option<T> {
        while let Some(v) = self.rx.try_pop() {
            self.last = Some(v);
        }
        self.last
    }
}

impl Latest<ToolTarget> {
    /// The newest target read by `until` [s since start] (draining those; later ones stay
    /// queued), or the last one taken if none is pending by then. The physics loop's tick
    /// takes its hands' targets by the end of its own period: on schedule that is every
    /// target so far, as [`Latest::get`]; a tick made up back to back after a slow step takes
    /// the hands as they were in its period instead of jumping to where they are now, so the
    /// tools move through the motion the device recorded at its pace (the offline stepping of
    /// the same tracks takes the target at each step's end, examples/tie_script.rs).
    pub fn until(&mut self, until: f64) -> Option<ToolTarget> {
        while let Some(v) = self.rx.try_peek().copied() {
            if v.t > until {
                break;
            }
            self.rx.skip(1);
            self.last = Some(v);
        }
        self.last
    }
}

/// Settings of the haptic loop.
pub struct HapticConfig {
    /// Loop period (1 ms).
    pub period: Duration,
    /// Device → world mapping.
    pub map: WorkspaceMap,
    /// The virtual coupling.
    pub coupling: VirtualCoupling,
    /// Force limiter (the device's limits).
    pub limiter: ForceLimiter,
    /// Physics watchdog.
    pub watchdog: Watchdog,
}

/// What the haptic loop did, returned when it stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HapticReport {
    /// Loop statistics.
    pub stats: LoopSummary,
    /// Device faults (I/O or bad reports, SDK errors, missed servo ticks): force zeroed and
    /// ramped back in.
    pub device_faults: u64,
    /// Of the device faults, the servo ticks a vendor SDK's servo loop missed.
    pub missed_ticks: u64,
    /// Non-finite forces zeroed by the limiter.
    pub non_finite: u64,
    /// Forces clamped to the device limit.
    pub clamped: u64,
    /// Physics stalls seen by the watchdog.
    pub stalls: u64,
    /// Targets dropped because the physics did not keep up with the queue.
    pub dropped_targets: u64,
    /// The scheduling the loop's thread ran under.
    pub priority: Priority,
}

/// One haptic tick's work, apart from the pacing: read the device, map its pose, render the
/// coupling force through the watchdog and the limiter, and produce the tool target. Owns the
/// device; allocation-free (benches/haptic.rs times it).
pub struct HapticCore {
    device: Box<dyn HapticDevice>,
    cfg: HapticConfig,
    last: Option<crate::device::DeviceSample>,
    coupled: bool,
    /// The watchdog's scale of the force at the last tick [0, 1] (where a stall's fade had got).
    faded: f64,
    /// Device faults (I/O or bad reports, or a force-feedback device gone silent) so far.
    pub device_faults: u64,
    /// Servo ticks the vendor SDK's servo loop missed so far (counted in `device_faults` too).
    pub missed_ticks: u64,
    /// Force rendered at the last tick [N] (world frame).
    pub hand_force: Vec3,
    /// Time of the last fresh sample [s].
    fresh_at: Option<f64>,
    /// Longest silence allowed before the device counts as faulted [s] (None: any).
    silence: Option<f64>,
    /// Whether the device is in a silence fault.
    silent: bool,
}

/// Longest a force-feedback device may go without a fresh report before the loop treats it as
/// faulted (zero force, ramp back in when it answers) [s]: such devices stream at ≥ 1 kHz, so
/// 5 ms is five lost reports, and the force is off within the 10 ms issue #9 allows.
pub const DEVICE_SILENCE: f64 = 0.005;

impl HapticCore {
    /// A core over `device` with `cfg`.
    pub fn new(device: Box<dyn HapticDevice>, cfg: HapticConfig) -> Self {
        HapticCore {
            device,
            cfg,
            last: None,
            coupled: false,
            faded: 1.0,
            device_faults: 0,
            missed_ticks: 0,
            hand_force: Vec3::zeros(),
            fresh_at: None,
            silence: None,
            silent: false,
        }
    }

    /// Treat a silence longer than `limit` [s] (no fresh sample) as a device fault. For
    /// devices that stream reports; input devices that report only on change must not set it.
    pub fn with_silence_limit(mut self, limit: f64) -> Self {
        self.silence = Some(limit);
        self
    }

    /// One tick at time `now` [s] with the newest tool state `proxy`. Returns the target for
    /// the physics (None until the device has produced a sample, and after a device fault).
    pub fn tick(&mut self, now: f64, proxy: Option<ProxyState>) -> Option<ToolTarget> {
        let dt = self.cfg.period.as_secs_f64();
        match self.device.poll(now) {
            Ok(Some(s)) => {
                self.last = Some(s);
                self.fresh_at = Some(now);
                if self.silent {
                    // Back from a silence: ramp in from zero.
                    self.silent = false;
                    self.cfg.limiter.restart();
                }
            }
            Ok(None) => {
                if let (Some(limit), Some(fresh)) = (self.silence, self.fresh_at)
                    && now - fresh > limit
                {
                    // The device stopped answering: its last pose is stale. Zero the force,
                    // release the motors, count the outage once.
                    if !self.silent {
                        self.silent = true;
                        self.device_faults += 1;
                    }
                    self.cfg.limiter.restart();
                    self.hand_force = Vec3::zeros();
                    let _ = self.device.command(&Vec3::zeros(), &Vec3::zeros(), false);
                    return None;
                }
            }
            Err(_) => {
                // A fault: zero force now, ramp back in from zero once the device answers.
                self.device_faults += 1;
                self.cfg.limiter.restart();
                self.hand_force = Vec3::zeros();
                let _ = self.device.command(&Vec3::zeros(), &Vec3::zeros(), false);
                return None;
            }
        }
        let s = self.last?;
        let cfg = &mut self.cfg;
        let pos = cfg.map.position(&s.position);
        let rot = cfg.map.orientation(&s.rotation);
        let vel = cfg.map.velocity(&s.velocity);
        let ang = cfg.map.rotation * s.angular_velocity;
        let mut hand = (Vec3::zeros(), Vec3::zeros());
        if let Some(p) = proxy {
            let v = cfg.watchdog.check(now, p.published);
            if p.coupled && !self.coupled {
                cfg.limiter.restart();
            } else if v.resumed {
                // Back from a stall: ramp in from where the fade had taken the force.
                cfg.limiter.resume_from(self.faded);
            }
            self.faded = v.scale;
            self.coupled = p.coupled;
            if p.coupled {
                let (f, t) = cfg.coupling.wrench(
                    (&pos, &rot),
                    (&vel, &ang),
                    (&p.position, &p.rotation),
                    (&p.velocity, &p.angular_velocity),
                );
                // The hand feels the reaction of the spring pulling the tool.
                hand = (-f * v.scale, -t * v.scale);
            }
        }
        let (f, t, _) = cfg.limiter.apply(hand.0, hand.1, dt);
        let fd = cfg.map.force_to_device(&f);
        let td = cfg.map.force_to_device(&t);
        if self.device.command(&fd, &td, true).is_err() {
            self.device_faults += 1;
            cfg.limiter.restart();
        }
        self.hand_force = f;
        Some(ToolTarget {
            t: now,
            position: pos,
            rotation: rot,
            velocity: vel,
            angular_velocity: ang,
            buttons: s.buttons,
            hand_force: f,
        })
    }

    /// The device's servo loop missed ticks: a device fault. The force restarts from zero at
    /// this tick and ramps back in.
    pub fn missed_tick(&mut self) {
        self.device_faults += 1;
        self.missed_ticks += 1;
        self.cfg.limiter.restart();
    }

    /// Release the device's motors (zero force, disabled).
    pub fn release(&mut self) {
        let _ = self.device.command(&Vec3::zeros(), &Vec3::zeros(), false);
    }
}

/// The haptic loop's links to the other threads.
pub struct HapticLinks {
    /// Newest tool state from the physics.
    pub proxy: Latest<ProxyState>,
    /// Targets for the physics.
    pub targets: HeapProd<ToolTarget>,
    /// The loop's figures for the HUD, if wanted.
    pub figures: Option<HeapProd<HapticFigures>>,
    /// Device samples for the recorder (disabled: no recording).
    pub recorder: RecorderTx<SampleRecord>,
    /// The tool this loop's device drives (its index in the world's tool slice), recorded
    /// with its samples.
    pub tool: u8,
}

/// Longest lag the haptic loop makes up (3 ticks at 1 kHz); longer stalls are given up.
pub const HAPTIC_MAX_LAG: Duration = Duration::from_millis(3);

/// Ticks between two HapticFigures publications (10 Hz at 1 kHz).
const FIGURES_EVERY: u64 = 100;

/// One haptic loop's work around its [`HapticCore`]: the tick, the target for the physics,
/// the sample for the recorder, the figures for the HUD. Driven by a loop of ours
/// ([`spawn`]) or by a vendor SDK's servo ([`spawn_servo`]); allocation- and lock-free.
struct LoopBody {
    core: HapticCore,
    proxy: Latest<ProxyState>,
    targets: HeapProd<ToolTarget>,
    figures: Option<HeapProd<HapticFigures>>,
    recorder: RecorderTx<SampleRecord>,
    tool: u8,
    dropped: u64,
    ticks: u64,
}

impl LoopBody {
    fn new(device: Box<dyn HapticDevice>, cfg: HapticConfig, links: HapticLinks) -> Self {
        // A force-feedback device streams: a silence is a fault. An input-only device may
        // report only when moved.
        let streams = device.max_force() > 0.0;
        let mut core = HapticCore::new(device, cfg);
        if streams {
            core = core.with_silence_limit(DEVICE_SILENCE);
        }
        let HapticLinks {
            proxy,
            targets,
            figures,
            recorder,
            tool,
        } = links;
        LoopBody {
            core,
            proxy,
            targets,
            figures,
            recorder,
            tool,
            dropped: 0,
            ticks: 0,
        }
    }

    /// One tick at `now` [s]; `stats` are the loop's so far (for the figures).
    fn tick(&mut self, now: f64, stats: &super::LoopStats) {
        let target = self.core.tick(now, self.proxy.get());
        if let Some(target) = target
            && self.targets.try_push(target).is_err()
        {
            self.dropped += 1;
        }
        if self.recorder.enabled() {
            self.recorder.push(SampleRecord {
                tool: self.tool,
                t: now,
                // A faulted tick (no target) records no sample.
                sample: target.and(self.core.last),
                hand_force: self.core.hand_force,
            });
        }
        self.ticks += 1;
        if self.ticks.is_multiple_of(FIGURES_EVERY)
            && let Some(fig) = self.figures.as_mut()
        {
            let _ = fig.try_push(HapticFigures {
                stats: stats.summary(),
                device_faults: self.core.device_faults,
                stalls: self.core.cfg.watchdog.stalls,
                hand_force: self.core.hand_force,
            });
        }
    }

    /// Release the motors and report.
    fn finish(mut self, stats: &super::LoopStats, priority: Priority) -> HapticReport {
        self.core.release();
        HapticReport {
            stats: stats.summary(),
            device_faults: self.core.device_faults,
            missed_ticks: self.core.missed_ticks,
            non_finite: self.core.cfg.limiter.faults,
            clamped: self.core.cfg.limiter.clamps,
            stalls: self.core.cfg.watchdog.stalls,
            dropped_targets: self.dropped,
            priority,
        }
    }
}

/// Run the haptic loop on a new thread until `stop` is set. Times are seconds since `start`,
/// the clock origin shared with the physics loop (ProxyState::published). `figures` (if any)
/// receives the loop's figures every 100 ticks. With `realtime` the thread asks for
/// `SCHED_FIFO` at [`HAPTIC_PRIORITY`] (the report says what it got). A device whose SDK
/// runs its own servo loop ([`HapticDevice::take_servo`]) is driven by it instead
/// ([`spawn_servo`]).
pub fn spawn(
    start: Instant,
    mut device: Box<dyn HapticDevice>,
    cfg: HapticConfig,
    links: HapticLinks,
    stop: Arc<AtomicBool>,
    realtime: bool,
) -> std::thread::JoinHandle<HapticReport> {
    if let Some(servo) = device.take_servo() {
        return spawn_servo(start, servo, device, cfg, links, stop);
    }
    std::thread::spawn(move || {
        let priority = if realtime {
            request_realtime(HAPTIC_PRIORITY)
        } else {
            Priority::NotAsked
        };
        // A tick delayed by preemption is made up at once, up to HAPTIC_MAX_LAG: the device
        // keeps its 1 kHz on a busy 2-core machine; a longer stall is given up, never burst.
        let mut pacer = Pacer::catching_up(cfg.period, HAPTIC_MAX_LAG);
        let mut body = LoopBody::new(device, cfg, links);
        let mut compute = Duration::ZERO;
        while !stop.load(Ordering::Relaxed) {
            let tick = pacer.tick(compute);
            body.tick((tick - start).as_secs_f64(), &pacer.stats);
            compute = tick.elapsed();
        }
        body.finish(&pacer.stats, priority)
    })
}

/// A servo period longer than this many loop periods is a missed servo tick: a device fault
/// (the SDK's servo loop stalled; the device held a stale force meanwhile).
pub const SERVO_MISSED_PERIODS: f64 = 2.5;

/// The haptic loop of a device whose vendor SDK runs the servo loop (OpenHaptics' scheduler):
/// the tick runs in the SDK's callback, on the SDK's thread, which sets its own priority. The
/// returned thread only hands the tick to the SDK and waits for `stop`. A period longer than
/// [`SERVO_MISSED_PERIODS`] periods is a device fault: the force restarts from zero and
/// ramps in.
fn spawn_servo(
    start: Instant,
    mut servo: Box<dyn crate::device::Servo>,
    device: Box<dyn HapticDevice>,
    cfg: HapticConfig,
    links: HapticLinks,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<HapticReport> {
    std::thread::spawn(move || {
        let missed = cfg.period.mul_f64(SERVO_MISSED_PERIODS);
        let mut stats = super::LoopStats::new(cfg.period);
        let mut body = LoopBody::new(device, cfg, links);
        let mut last: Option<Instant> = None;
        let mut compute = Duration::ZERO;
        let mut tick = || {
            let now = Instant::now();
            if let Some(prev) = last {
                let period = now - prev;
                stats.record(period, compute);
                if period > missed {
                    body.core.missed_tick();
                }
            }
            last = Some(now);
            body.tick((now - start).as_secs_f64(), &stats);
            compute = now.elapsed();
        };
        if servo.run(&mut tick, &stop).is_err() {
            // The SDK would not run the tick (or the tick panicked): a fault, reported.
            body.core.device_faults += 1;
        }
        body.finish(&stats, Priority::VendorServo)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64) -> ToolTarget {
        ToolTarget {
            t,
            position: Vec3::new(t, 0.0, 0.0),
            rotation: Quat::identity(),
            velocity: Vec3::zeros(),
            angular_velocity: Vec3::zeros(),
            buttons: 0,
            hand_force: Vec3::zeros(),
        }
    }

    #[test]
    fn a_late_tick_takes_the_targets_of_its_own_period() {
        let (mut tx, rx) = HeapRb::<ToolTarget>::new(16).split();
        let mut rx = Latest::from_consumer(rx);
        assert_eq!(rx.until(1.0), None, "nothing received yet");
        for k in 1..=10 {
            tx.try_push(at(k as f64 * 1e-3)).unwrap();
        }
        // Three ticks made up back to back, their periods ending at 4, 5.5 and 5.5 ms: each
        // takes the newest target by then, the later ones stay queued.
        assert_eq!(rx.until(4e-3).map(|v| v.t), Some(4e-3));
        assert_eq!(rx.until(5.5e-3).map(|v| v.t), Some(5e-3));
        assert_eq!(rx.until(5.5e-3).map(|v| v.t), Some(5e-3), "kept");
        // Earlier than what was taken: the last one still (never back in time).
        assert_eq!(rx.until(1e-3).map(|v| v.t), Some(5e-3));
        // On schedule, by the end of the period: all of them, as `get`.
        assert_eq!(rx.until(11e-3).map(|v| v.t), Some(10e-3));
        tx.try_push(at(12e-3)).unwrap();
        assert_eq!(rx.get().map(|v| v.t), Some(12e-3));
    }
}
