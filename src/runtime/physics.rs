//! The physics loop: a thread stepping the scene's World at a fixed `dt` with its device-driven
//! tools (one per device, at most `sim::MAX_TOOLS`), each tool's held node pulled by its virtual
//! coupling (sim::tool::ToolSpring, inside the implicit solve) toward its device's ToolTarget
//! from the haptic loop (the newest stamped by the end of the tick's period on the schedule), publishing each tool's state (ProxyState) back to that haptic loop
//! and Snapshots to the viewer. Allocation-free per step: the solvers' buffers are allocated
//! with the rods, the targets are a fixed array, and snapshots come from a preallocated pool.

use super::haptic::{HapticFigures, Latest, ProxyState, ToolTarget};
use super::pacer::{PHYSICS_NICE, Pacer, Priority, raise_priority};
use super::stats::LoopSummary;
use crate::session::format::{DigestRecord, EventRecord};
use crate::session::recorder::{DIGEST_EVERY, PhysicsRecord, RecorderTx, capture};
use crate::sim::snapshot::{SnapshotTx, ToolSnapshot};
use crate::sim::tool::Hand;
use crate::sim::{MAX_TOOLS, Tool, ToolState, World};
use ringbuf::HeapProd;
use ringbuf::traits::Producer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest lag behind the wall clock the physics loop makes up by running missed ticks back to
/// back; a longer stall is given up (the simulation then runs behind the wall clock by it).
pub const MAX_LAG: Duration = Duration::from_millis(20);

/// What the physics loop did, returned when it stops (with the world's final state).
#[derive(Clone, Debug)]
pub struct PhysicsReport {
    /// Loop statistics (compute = the step's wall time).
    pub stats: LoopSummary,
    /// Steps taken.
    pub steps: u64,
    /// Steps that did not converge within the iteration cap.
    pub unconverged: u64,
    /// Steps the solver refused (state rolled back; the loop goes on), and the first one's
    /// step number and reason (what the later ones followed from).
    pub failed: u64,
    /// See `failed`.
    pub first_error: Option<(u64, crate::sim::SimError)>,
    /// Steps recorded (every step taken or refused, numbered from 1).
    pub recorded_steps: u64,
    /// Ticks given up because the loop fell more than [`MAX_LAG`] behind the wall clock.
    pub dropped_ticks: u64,
    /// Snapshots skipped because the viewer held every buffer.
    pub skipped_snapshots: u64,
    /// The world at the end.
    pub world: World,
    /// The tools at the end (their couplings' last forces on the rods), in the order the
    /// world stepped them.
    pub tools: Vec<Tool>,
    /// The scheduling the loop's thread ran under.
    pub priority: Priority,
}

/// The physics loop's links to the other threads: per tool (`[i]` for tool `i`), its device's
/// haptic loop.
pub struct PhysicsLinks {
    /// Newest device target from each haptic loop.
    pub targets: Vec<Latest<ToolTarget>>,
    /// Each tool's state for its haptic loop.
    pub proxies: Vec<HeapProd<ProxyState>>,
    /// Newest figures of each haptic loop (for the snapshots' HUD figures).
    pub haptic: Vec<Latest<HapticFigures>>,
    /// The hand of each tool (for the snapshots).
    pub hands: Vec<Hand>,
    /// Snapshots for the viewer (or a headless reader), published every `snapshot_every` steps.
    pub snapshots: SnapshotTx,
    /// See `snapshots`.
    pub snapshot_every: u64,
    /// The recorder's physics ring (disabled: no recording).
    pub recorder: RecorderTx<PhysicsRecord>,
}

/// The physics loop thread's name (at most 15 bytes, Linux's limit).
pub const PHYSICS_THREAD: &str = "suture-physics";

/// Run the physics loop on a new thread until `stop` is set. `tools` are the device-driven
/// tools (at most `sim::MAX_TOOLS`; `tools[i]` takes `links.targets[i]` and publishes to
/// `links.proxies[i]`). Times are seconds since `start`. With `realtime` the thread asks for
/// nice [`PHYSICS_NICE`]: time-shared, below the haptic loops' `SCHED_FIFO` (its docs say why
/// not real-time). The thread is named
/// [`PHYSICS_THREAD`].
pub fn spawn(
    start: Instant,
    mut world: World,
    mut tools: Vec<Tool>,
    dt: Duration,
    mut links: PhysicsLinks,
    stop: Arc<AtomicBool>,
    realtime: bool,
) -> std::thread::JoinHandle<PhysicsReport> {
    // Named, so that tools (`top -H`, the vendor SDK test double's stall injection) find it.
    let named = std::thread::Builder::new().name(PHYSICS_THREAD.into());
    let spawned = named.spawn(move || {
        let priority = if realtime {
            raise_priority(PHYSICS_NICE)
        } else {
            Priority::NotAsked
        };
        // Simulated time stays on the wall clock: a slow step's missed ticks are made up,
        // a lag beyond MAX_LAG is given up (counted in `dropped_ticks`).
        let mut pacer = Pacer::catching_up(dt, MAX_LAG);
        let h = dt.as_secs_f64();
        let (mut steps, mut unconverged, mut failed) = (0u64, 0u64, 0u64);
        let mut first_error = None;
        let mut compute = Duration::ZERO;
        let n = tools
            .len()
            .min(MAX_TOOLS)
            .min(links.targets.len())
            .min(links.proxies.len());
        tools.truncate(n);
        let mut targets: [Option<ToolTarget>; MAX_TOOLS] = [None; MAX_TOOLS];
        let (mut index, mut events_seen) = (0u64, 0usize);
        while !stop.load(Ordering::Relaxed) {
            let tick = pacer.tick(compute);
            // The hands as they were by the end of this tick's period on the schedule: on
            // schedule every target so far; a tick made up after a slow step takes those of
            // its own period, not the newest (which would move a tool a whole lag at once).
            let due = pacer.due().unwrap_or(tick);
            let until = due.saturating_duration_since(start).as_secs_f64() + h;
            for (t, rx) in targets.iter_mut().zip(links.targets.iter_mut()) {
                *t = rx.until(until);
            }
            let out = world.step(&mut tools, &targets[..n], h);
            index += 1;
            if links.recorder.enabled() {
                let rec = &mut links.recorder;
                rec.push(PhysicsRecord::Step(capture(index, &targets[..n], &out)));
                for e in world.events_since(events_seen) {
                    rec.push(PhysicsRecord::Event(EventRecord {
                        step: index,
                        event: *e,
                    }));
                }
                events_seen = out.events;
                if index.is_multiple_of(DIGEST_EVERY) {
                    rec.push(PhysicsRecord::Digest(DigestRecord {
                        step: index,
                        digest: world.digest(&tools),
                    }));
                }
            }
            let step_ok = out.error.is_none();
            match &out.error {
                None => {
                    steps += 1;
                    unconverged += u64::from(!out.converged);
                }
                Some(e) => {
                    failed += 1;
                    if first_error.is_none() {
                        // The first failure and its recorded step number.
                        first_error = Some((index, e.clone()));
                    }
                }
            }
            let published = (Instant::now() - start).as_secs_f64();
            for (ts, proxy) in out.tools.iter().zip(links.proxies.iter_mut()) {
                let Some(ts) = ts else { continue };
                // A failed step (the solver rolled the world back, e.g. after a non-finite
                // state) decouples the hands for that tick: the haptic loops render zero and
                // ramp the force back in when the next step succeeds.
                let _ = proxy.try_push(ProxyState {
                    published,
                    position: ts.position,
                    rotation: ts.rotation,
                    velocity: ts.velocity,
                    angular_velocity: ts.angular_velocity,
                    coupled: ts.grasped && step_ok,
                });
            }
            if steps.is_multiple_of(links.snapshot_every.max(1)) {
                let stats = &pacer.stats;
                let mut hf = [HapticFigures::default(); MAX_TOOLS];
                for (f, rx) in hf.iter_mut().zip(links.haptic.iter_mut()) {
                    *f = rx.get().unwrap_or_default();
                }
                let hands = &links.hands;
                links.snapshots.publish(|snap| {
                    snap.capture(&world);
                    // Numbered as the recording numbers steps (every step taken or refused).
                    snap.step = index;
                    for (i, dst) in snap.tools.iter_mut().enumerate() {
                        *dst = out.tools[i].as_ref().map(|ts| {
                            let mut t =
                                tool_snapshot(ts, hands.get(i).copied().unwrap_or_default());
                            t.hand_force = hf[i].hand_force;
                            t.device_faults = hf[i].device_faults;
                            t
                        });
                    }
                    let f = &mut snap.figures;
                    let m = stats.running();
                    f.physics_rate = m.rate;
                    f.step_mean_us = m.compute_mean;
                    f.step_max_us = m.compute_max;
                    f.physics_overruns = m.overruns;
                    f.failed_steps = failed;
                    f.unconverged_steps = unconverged;
                    // The slowest haptic loop's figures; counts summed over the loops.
                    let loops = &hf[..n.max(1)];
                    f.haptic_rate = loops
                        .iter()
                        .map(|x| x.stats.rate)
                        .fold(f64::INFINITY, f64::min);
                    f.haptic_p50_us = loops.iter().map(|x| x.stats.p50).fold(0.0, f64::max);
                    f.haptic_p99_us = loops.iter().map(|x| x.stats.p99).fold(0.0, f64::max);
                    f.haptic_max_us = loops.iter().map(|x| x.stats.max).fold(0.0, f64::max);
                    f.haptic_overruns = loops.iter().map(|x| x.stats.overruns).sum();
                    f.device_faults = loops.iter().map(|x| x.device_faults).sum();
                    f.stalls = loops.iter().map(|x| x.stalls).sum();
                    f.hand_force = hf[0].hand_force;
                });
            }
            compute = tick.elapsed();
        }
        PhysicsReport {
            stats: pacer.stats.summary(),
            steps,
            unconverged,
            failed,
            first_error,
            dropped_ticks: pacer.dropped,
            recorded_steps: index,
            skipped_snapshots: links.snapshots.skipped,
            world,
            tools,
            priority,
        }
    });
    // As std::thread::spawn does: a thread the OS refuses is a panic.
    spawned.unwrap_or_else(|e| panic!("cannot spawn the physics thread: {e}"))
}

/// The viewer's picture of the tool `hand` drives (the viewer draws needles from their swage:
/// for the rigid needle, the swage of the needle and of the ghost at the device's pose); its
/// hand's force and faults are zero here (the physics loop fills them in from the haptic
/// loop's figures).
pub fn tool_snapshot(state: &ToolState, hand: Hand) -> ToolSnapshot {
    ToolSnapshot {
        hand,
        hand_force: crate::math::Vec3::zeros(),
        device_faults: 0,
        rod: state.rod,
        node: state.node,
        target: state.drawn_target,
        target_rotation: state.target_rotation,
        position: state.drawn_position,
        rotation: state.rotation,
        force: state.force,
        grasped: state.grasped,
        instrument: state.instrument,
    }
}
