//! The physics loop: a thread stepping the scene's World at a fixed `dt`, the held rod node
//! pulled by the virtual coupling (sim::tool::ToolSpring, inside the implicit solve) toward the
//! latest ToolTarget from the haptic loop, publishing the tool's state (ProxyState) back to the
//! haptic loop and Snapshots to the viewer. Allocation-free per step: the solvers' buffers are
//! allocated with the rods and snapshots come from a preallocated pool.

use super::haptic::{HapticFigures, Latest, ProxyState, ToolTarget};
use super::pacer::{PHYSICS_PRIORITY, Pacer, Priority, request_realtime};
use super::stats::LoopSummary;
use crate::session::format::{DigestRecord, EventRecord};
use crate::session::recorder::{DIGEST_EVERY, PhysicsRecord, RecorderTx, capture};
use crate::sim::snapshot::{SnapshotTx, ToolSnapshot};
use crate::sim::{Tool, ToolState, World};
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
    /// Steps the solver refused (state rolled back; the loop goes on), and the last reason.
    pub failed: u64,
    /// See `failed`.
    pub last_error: Option<crate::sim::SimError>,
    /// Steps recorded (every step taken or refused, numbered from 1).
    pub recorded_steps: u64,
    /// Ticks given up because the loop fell more than [`MAX_LAG`] behind the wall clock.
    pub dropped_ticks: u64,
    /// Snapshots skipped because the viewer held every buffer.
    pub skipped_snapshots: u64,
    /// The world at the end.
    pub world: World,
    /// The tool at the end (its coupling's last force on the rod).
    pub tool: Option<Tool>,
    /// The scheduling the loop's thread ran under.
    pub priority: Priority,
}

/// The physics loop's links to the other threads.
pub struct PhysicsLinks {
    /// Newest device target from the haptic loop.
    pub targets: Latest<ToolTarget>,
    /// Tool state for the haptic loop.
    pub proxy: HeapProd<ProxyState>,
    /// Newest haptic loop figures (for the snapshots' HUD figures).
    pub haptic: Latest<HapticFigures>,
    /// Snapshots for the viewer (or a headless reader), published every `snapshot_every` steps.
    pub snapshots: SnapshotTx,
    /// See `snapshots`.
    pub snapshot_every: u64,
    /// The recorder's physics ring (disabled: no recording).
    pub recorder: RecorderTx<PhysicsRecord>,
}

/// Run the physics loop on a new thread until `stop` is set. `tool` is the device-driven tool
/// (None: none). Times are seconds since `start`. With
/// `realtime` the thread asks for `SCHED_FIFO` at [`PHYSICS_PRIORITY`], below the haptic loop.
pub fn spawn(
    start: Instant,
    mut world: World,
    tool: Option<Tool>,
    dt: Duration,
    mut links: PhysicsLinks,
    stop: Arc<AtomicBool>,
    realtime: bool,
) -> std::thread::JoinHandle<PhysicsReport> {
    std::thread::spawn(move || {
        let priority = if realtime {
            request_realtime(PHYSICS_PRIORITY)
        } else {
            Priority::NotAsked
        };
        // Simulated time stays on the wall clock: a slow step's missed ticks are made up,
        // a lag beyond MAX_LAG is given up (counted in `dropped_ticks`).
        let mut pacer = Pacer::catching_up(dt, MAX_LAG);
        let h = dt.as_secs_f64();
        let (mut steps, mut unconverged, mut failed) = (0u64, 0u64, 0u64);
        let mut last_error = None;
        let mut compute = Duration::ZERO;
        let mut tools: Vec<Tool> = tool.into_iter().collect();
        let (mut index, mut events_seen) = (0u64, 0usize);
        while !stop.load(Ordering::Relaxed) {
            let tick = pacer.tick(compute);
            let target = links.targets.get();
            let out = world.step(&mut tools, &[target], h);
            index += 1;
            if links.recorder.enabled() {
                let rec = &mut links.recorder;
                rec.push(PhysicsRecord::Step(capture(index, target.as_ref(), &out)));
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
                        digest: world.digest(),
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
                    last_error = Some(e.clone());
                }
            }
            let published = (Instant::now() - start).as_secs_f64();
            if let Some(ts) = out.tool() {
                // A failed step (the solver rolled the world back, e.g. after a non-finite
                // state) decouples the hand for that tick: the haptic loop renders zero and
                // ramps the force back in when the next step succeeds.
                let _ = links.proxy.try_push(ProxyState {
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
                let hf = links.haptic.get().unwrap_or_default();
                links.snapshots.publish(|snap| {
                    snap.capture(&world);
                    snap.step = steps;
                    snap.tool = out.tool().map(tool_snapshot);
                    let f = &mut snap.figures;
                    let m = stats.running();
                    f.physics_rate = m.rate;
                    f.step_mean_us = m.compute_mean;
                    f.step_max_us = m.compute_max;
                    f.physics_overruns = m.overruns;
                    f.failed_steps = failed;
                    f.unconverged_steps = unconverged;
                    f.haptic_rate = hf.stats.rate;
                    f.haptic_p50_us = hf.stats.p50;
                    f.haptic_p99_us = hf.stats.p99;
                    f.haptic_max_us = hf.stats.max;
                    f.haptic_overruns = hf.stats.overruns;
                    f.device_faults = hf.device_faults;
                    f.stalls = hf.stalls;
                    f.hand_force = hf.hand_force;
                });
            }
            compute = tick.elapsed();
        }
        PhysicsReport {
            stats: pacer.stats.summary(),
            steps,
            unconverged,
            failed,
            last_error,
            dropped_ticks: pacer.dropped,
            recorded_steps: index,
            skipped_snapshots: links.snapshots.skipped,
            world,
            tool: tools.pop(),
            priority,
        }
    })
}

/// The viewer's picture of a tool (the viewer draws needles from their swage: for the rigid
/// needle, the swage of the needle and of the ghost at the device's pose).
pub fn tool_snapshot(state: &ToolState) -> ToolSnapshot {
    ToolSnapshot {
        rod: state.rod,
        node: state.node,
        target: state.drawn_target,
        target_rotation: state.target_rotation,
        position: state.drawn_position,
        rotation: state.rotation,
        force: state.force,
        grasped: state.grasped,
    }
}
