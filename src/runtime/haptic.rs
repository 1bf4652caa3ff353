//! The haptic loop: a thread at a fixed rate (1 kHz) that reads the device, hands the mapped
//! device pose to the physics (ToolTarget), and renders the virtual-coupling force from the
//! latest tool state the physics published (ProxyState), through the watchdog and the force
//! limiter. It never locks, allocates, logs or does I/O other than the device's own reports;
//! queues are ringbuf SPSC rings.

use super::pacer::Pacer;
use super::stats::LoopSummary;
use crate::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use crate::device::HapticDevice;
use crate::math::{Quat, Vec3};
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
}

/// The device pose mapped to the world, for the physics (world frame, SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolTarget {
    /// Time of the device reading [s since start].
    pub t: f64,
    /// Target position [m] and orientation.
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Target velocity [m/s] and angular velocity [rad/s].
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Buttons.
    pub buttons: u32,
    /// Force rendered to the hand at this tick [N] (world frame).
    pub hand_force: Vec3,
}

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
    /// Device faults (I/O or bad reports): force zeroed and ramped back in.
    pub device_faults: u64,
    /// Non-finite forces zeroed by the limiter.
    pub non_finite: u64,
    /// Forces clamped to the device limit.
    pub clamped: u64,
    /// Physics stalls seen by the watchdog.
    pub stalls: u64,
    /// Targets dropped because the physics did not keep up with the queue.
    pub dropped_targets: u64,
}

/// Run the haptic loop on a new thread until `stop` is set. Times are seconds since `start`,
/// the clock origin shared with the physics loop (ProxyState::published).
pub fn spawn(
    start: Instant,
    mut device: Box<dyn HapticDevice>,
    mut cfg: HapticConfig,
    mut proxy: Latest<ProxyState>,
    mut targets: HeapProd<ToolTarget>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<HapticReport> {
    std::thread::spawn(move || {
        let mut pacer = Pacer::new(cfg.period);
        let (mut faults, mut dropped) = (0u64, 0u64);
        let mut last = None;
        let mut compute = Duration::ZERO;
        while !stop.load(Ordering::Relaxed) {
            let tick = pacer.tick(compute);
            let now = (tick - start).as_secs_f64();
            let dt = cfg.period.as_secs_f64();
            match device.poll(now) {
                Ok(Some(s)) => last = Some(s),
                Ok(None) => {}
                Err(_) => {
                    faults += 1;
                    cfg.limiter.restart();
                    let _ = device.command(&Vec3::zeros(), &Vec3::zeros(), false);
                    compute = tick.elapsed();
                    continue;
                }
            }
            let Some(s) = last else {
                compute = tick.elapsed();
                continue;
            };
            let pos = cfg.map.position(&s.position);
            let rot = cfg.map.orientation(&s.rotation);
            let vel = cfg.map.velocity(&s.velocity);
            let ang = cfg.map.rotation * s.angular_velocity;
            let mut hand = (Vec3::zeros(), Vec3::zeros());
            if let Some(p) = proxy.get() {
                let v = cfg.watchdog.check(now, p.published);
                if v.resumed {
                    cfg.limiter.restart();
                }
                let (f, t) = cfg.coupling.wrench(
                    (&pos, &rot),
                    (&vel, &ang),
                    (&p.position, &p.rotation),
                    (&p.velocity, &p.angular_velocity),
                );
                // The hand feels the reaction of the spring pulling the tool.
                hand = (-f * v.scale, -t * v.scale);
            }
            let (f, t, _) = cfg.limiter.apply(hand.0, hand.1, dt);
            let fd = cfg.map.force_to_device(&f);
            let td = cfg.map.force_to_device(&t);
            if device.command(&fd, &td, true).is_err() {
                faults += 1;
                cfg.limiter.restart();
            }
            let target = ToolTarget {
                t: now,
                position: pos,
                rotation: rot,
                velocity: vel,
                angular_velocity: ang,
                buttons: s.buttons,
                hand_force: f,
            };
            if targets.try_push(target).is_err() {
                dropped += 1;
            }
            compute = tick.elapsed();
        }
        let _ = device.command(&Vec3::zeros(), &Vec3::zeros(), false);
        HapticReport {
            stats: pacer.stats.summary(),
            device_faults: faults,
            non_finite: cfg.limiter.faults,
            clamped: cfg.limiter.clamps,
            stalls: cfg.watchdog.stalls,
            dropped_targets: dropped,
        }
    })
}
