//! What the renderer (or a headless consumer) sees of the world: a copy of every rod's centerline
//! and material frames, the tools (with their instruments' capsules, jaws and holds) and the
//! needle, and the loops' figures for the HUD. Snapshots
//! are filled in place (`Snapshot::capture`) so the physics loop can publish them from a pool of
//! preallocated buffers without allocating.
//!
//! The snapshot channel (`snapshot_channel`) circulates a pool of preallocated Snapshots
//! through two SPSC rings, physics → viewer (filled) and viewer → physics (free). The physics
//! loop fills a free buffer in place and publishes it; if the viewer holds every buffer, the
//! physics skips that publication (it never waits). The viewer keeps the newest snapshot and
//! returns the older ones.
//!
//! A second consumer may tap the pool ([`SnapshotTap`], the live knot analysis of
//! runtime::analysis): when the viewer (or the headless wait) retires a snapshot for a newer one,
//! the retired buffer is offered to the tap before it goes back to the free ring, and the tap
//! hands it back through the receiving side (`SnapshotRx::latest` drains it into the free ring).
//! The physics loop's side is unchanged: it never sees the tap, only that a buffer it published
//! comes back later than it would without one.

use super::MAX_TOOLS;
use super::World;
use crate::math::{Quat, Vec3};

/// One rod in a snapshot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RodSnapshot {
    /// Node positions [m].
    pub positions: Vec<Vec3>,
    /// Material frame per segment (body → world; d1 = q·x, d2 = q·y, d3 = q·z the tangent).
    pub frames: Vec<Quat>,
    /// Cross-section radius [m].
    pub radius: f64,
}

/// A coupled tool in a snapshot (world frame, SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolSnapshot {
    /// The hand (and device) that drives it.
    pub hand: super::tool::Hand,
    /// Index of the coupled rod and node.
    pub rod: usize,
    /// See `rod`.
    pub node: usize,
    /// The device pose mapped to the world (the "ghost") [m].
    pub target: Vec3,
    /// See `target`.
    pub target_rotation: Quat,
    /// The coupled node [m] and the frame of its segment (the needle's swage end).
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Force of the coupling on the rod [N] (the hand feels its opposite).
    pub force: Vec3,
    /// Whether the tool holds the rod (a released needle is not coupled).
    pub grasped: bool,
    /// Force rendered to the hand by its haptic loop at its last published tick [N] (after
    /// the limiter; zero in replay), and the device faults its loop has seen.
    pub hand_force: Vec3,
    /// See `hand_force`.
    pub device_faults: u64,
    /// The instrument the tool drives (scenes with `[[instruments]]`): its jaws and shaft as
    /// the contact capsules they are, the jaws' opening and what they hold; `position` and
    /// `rotation` are its hinge and frame.
    pub instrument: Option<super::instrument::InstrumentState>,
}

/// The needle, the deformed tissue and the holes in a snapshot (suturing scenes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuturingSnapshot {
    /// The needle's swage point [m] and frame (as `tool::NeedleShape::point` takes them).
    pub swage: Vec3,
    /// See `swage`.
    pub rotation: Quat,
    /// Top-surface lattice of each half: (nodes along x, along z); `top` holds both halves'
    /// node positions [m], half 0 first, row-major in z.
    pub grid: [(usize, usize); 2],
    /// See `grid`.
    pub top: Vec<Vec3>,
    /// Holes [m] and whether the suture (true) or the needle runs through them.
    pub holes: Vec<(Vec3, bool)>,
    /// Targets: rest position [m] and whether it marks an entry.
    pub targets: Vec<(Vec3, bool)>,
    /// Incision width at z = centre [m], largest suture tension [N], tip force on the skin [N].
    pub gap: f64,
    /// See `gap`.
    pub tension: f64,
    /// See `gap`.
    pub tip_force: f64,
    /// Events so far and the newest one.
    pub events: usize,
    /// See `events`.
    pub last_event: Option<super::suturing::Event>,
    /// Whether the suture has broken.
    pub broken: bool,
}

/// The loops' figures shown in the HUD.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoopFigures {
    /// Physics: achieved rate [Hz], mean and longest step [µs], overruns so far.
    pub physics_rate: f64,
    /// See `physics_rate`.
    pub step_mean_us: f64,
    /// See `physics_rate`.
    pub step_max_us: f64,
    /// See `physics_rate`.
    pub physics_overruns: u64,
    /// Steps whose solve failed (state rolled back) or did not converge.
    pub failed_steps: u64,
    /// See `failed_steps`.
    pub unconverged_steps: u64,
    /// Haptic loops (the slowest of them with several devices: lowest rate, longest periods;
    /// overruns, faults and stalls summed): achieved rate [Hz], period p50/p99/max [µs],
    /// overruns.
    pub haptic_rate: f64,
    /// See `haptic_rate`.
    pub haptic_p50_us: f64,
    /// See `haptic_rate`.
    pub haptic_p99_us: f64,
    /// See `haptic_rate`.
    pub haptic_max_us: f64,
    /// See `haptic_rate`.
    pub haptic_overruns: u64,
    /// Device faults and physics stalls the haptic loop saw.
    pub device_faults: u64,
    /// See `device_faults`.
    pub stalls: u64,
    /// Force rendered to the first tool's hand at its last haptic tick [N] (after the
    /// limiter; each tool's is in its [`ToolSnapshot`]).
    pub hand_force: Vec3,
}

/// A copy of the world for display.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Physics step index (as the recording numbers its step records: every step taken or
    /// refused, the first 1) and simulated time [s].
    pub step: u64,
    /// See `step`.
    pub time: f64,
    /// The rods.
    pub rods: Vec<RodSnapshot>,
    /// The device-driven tools, in the order the world steps them (`tools[i]` for tool `i`;
    /// None past the session's tools). Fixed-size: filling it never allocates.
    pub tools: [Option<ToolSnapshot>; MAX_TOOLS],
    /// Needle, tissue and holes, if the scene sutures.
    pub suturing: Option<SuturingSnapshot>,
    /// Loop figures.
    pub figures: LoopFigures,
    /// The knot as the live analysis last saw it (runtime::analysis), for the HUD. The
    /// physics loop never sets it: the viewer puts the newest status on its copy, the replay
    /// player the recording's.
    pub knot: Option<KnotStatus>,
}

/// The knot the live analysis found in one snapshot of the suture: its name and its throws in
/// the order tied. Fixed-size (`Copy`): it travels to the viewer without allocating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KnotStatus {
    /// The physics step of the snapshot analysed (as numbered in the recording's step
    /// records) and its simulated time [s].
    pub step: u64,
    /// See `step`.
    pub time: f64,
    /// The knot's name.
    pub name: crate::topology::KnotName,
    /// The throws in the order tied (`throws[..count]`).
    pub throws: [Option<crate::topology::Throw>; crate::topology::throws::MAX_THROWS],
}

impl KnotStatus {
    /// No knot, at `step`.
    pub fn none(step: u64, time: f64) -> Self {
        KnotStatus {
            step,
            time,
            name: crate::topology::KnotName::NotAKnot,
            throws: [None; crate::topology::throws::MAX_THROWS],
        }
    }

    /// A status of `name` with `throws` (those past `MAX_THROWS` are left out).
    pub fn of(
        step: u64,
        time: f64,
        name: crate::topology::KnotName,
        throws: &[crate::topology::Throw],
    ) -> Self {
        let mut s = KnotStatus {
            name,
            ..KnotStatus::none(step, time)
        };
        for (dst, t) in s.throws.iter_mut().zip(throws) {
            *dst = Some(*t);
        }
        s
    }

    /// The throws, in the order tied.
    pub fn throws(&self) -> impl Iterator<Item = crate::topology::Throw> + '_ {
        self.throws.iter().map_while(|t| *t)
    }

    /// `square: single right, single left`, `not a knot`.
    pub fn describe(&self) -> String {
        let throws: Vec<String> = self.throws().map(|t| t.describe()).collect();
        if throws.is_empty() {
            self.name.as_str().to_string()
        } else {
            format!("{}: {}", self.name.as_str(), throws.join(", "))
        }
    }
}

impl Snapshot {
    /// The first tool (the only one of a single-device session).
    pub fn tool(&self) -> Option<&ToolSnapshot> {
        self.tools[0].as_ref()
    }

    /// A snapshot shaped for `world` (allocates its buffers once).
    pub fn for_world(world: &World) -> Self {
        let mut s = Snapshot::default();
        s.capture(world);
        s
    }

    /// Copy the world's rods into this snapshot. Allocation-free when the snapshot already has
    /// the world's shape (same rods, same node counts).
    pub fn capture(&mut self, world: &World) {
        self.time = world.time;
        self.rods
            .resize_with(world.rods.len(), RodSnapshot::default);
        for (dst, src) in self.rods.iter_mut().zip(&world.rods) {
            dst.positions.clear();
            dst.positions.extend_from_slice(src.positions());
            dst.frames.clear();
            src.frames_into(&mut dst.frames);
            dst.radius = src.radius;
        }
        match &world.suturing {
            None => self.suturing = None,
            Some(su) => {
                let d = self.suturing.get_or_insert_with(|| SuturingSnapshot {
                    holes: Vec::with_capacity(super::suturing::MAX_PASSAGES),
                    ..Default::default()
                });
                d.swage = su.needle.swage();
                d.rotation = su.needle.rotation;
                d.grid = su.tissue.grid();
                d.top.clear();
                d.top.extend(su.tissue.top_nodes().map(|(_, _, _, p)| p));
                d.holes.clear();
                d.holes
                    .extend(su.passages.iter().filter_map(|p| match p.through {
                        super::suturing::Through::Empty => None,
                        super::suturing::Through::Suture(_) => {
                            Some((su.tissue.position(&p.point), true))
                        }
                        super::suturing::Through::Needle(_) => {
                            Some((su.tissue.position(&p.point), false))
                        }
                    }));
                d.targets.clear();
                d.targets.extend(
                    su.targets
                        .iter()
                        .map(|t| (t.position, t.kind == super::suturing::TargetKind::Entry)),
                );
                d.gap = su.tissue.gap_at(su.tissue.geometry.center.z);
                d.tension = su.tension;
                d.tip_force = su.tip_force;
                d.events = su.events.len();
                d.last_event = su.events.last().copied();
                d.broken = su
                    .events
                    .iter()
                    .any(|e| matches!(e.kind, super::suturing::EventKind::SutureBroken { .. }));
            }
        }
    }
}

use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};

/// Producer side (physics loop).
pub struct SnapshotTx {
    full: HeapProd<Snapshot>,
    free: HeapCons<Snapshot>,
    /// Publications skipped because no free buffer was available.
    pub skipped: u64,
}

/// Consumer side (viewer or headless reader).
pub struct SnapshotRx {
    full: HeapCons<Snapshot>,
    free: HeapProd<Snapshot>,
    current: Option<Snapshot>,
    tap: Option<Box<dyn SnapshotTap>>,
}

/// A second consumer of the snapshot pool, fed by the first ([`SnapshotRx`]) with the
/// snapshots it retires. Runs on the receiving side's thread (never the physics loop's).
pub trait SnapshotTap: Send {
    /// A retired snapshot: keep it (None) or give it back for the free ring (Some).
    fn offer(&mut self, s: Snapshot) -> Option<Snapshot>;
    /// A snapshot the tap is done with, if any (it goes back to the free ring).
    fn give_back(&mut self) -> Option<Snapshot>;
}

/// A channel with `buffers` snapshots (≥ 3: one being filled, one in flight, one displayed)
/// shaped like `world`.
pub fn snapshot_channel(world: &World, buffers: usize) -> (SnapshotTx, SnapshotRx) {
    let buffers = buffers.max(3);
    let (full_tx, full_rx) = HeapRb::<Snapshot>::new(buffers).split();
    let (mut free_tx, free_rx) = HeapRb::<Snapshot>::new(buffers).split();
    for _ in 0..buffers {
        let _ = free_tx.try_push(Snapshot::for_world(world));
    }
    (
        SnapshotTx {
            full: full_tx,
            free: free_rx,
            skipped: 0,
        },
        SnapshotRx {
            full: full_rx,
            free: free_tx,
            current: None,
            tap: None,
        },
    )
}

impl SnapshotTx {
    /// Fill a free buffer with `fill` and publish it; false if none was free (skipped).
    pub fn publish(&mut self, fill: impl FnOnce(&mut Snapshot)) -> bool {
        let Some(mut s) = self.free.try_pop() else {
            self.skipped += 1;
            return false;
        };
        fill(&mut s);
        match self.full.try_push(s) {
            Ok(()) => true,
            Err(_) => {
                self.skipped += 1;
                false
            }
        }
    }
}

impl SnapshotRx {
    /// The newest snapshot received so far (older ones go back to the pool; with a tap, the
    /// newest of the retired ones is offered to it first, and what the tap is done with goes
    /// back to the pool).
    pub fn latest(&mut self) -> Option<&Snapshot> {
        if let Some(tap) = self.tap.as_mut() {
            while let Some(s) = tap.give_back() {
                let _ = self.free.try_push(s);
            }
        }
        let mut retired: Option<Snapshot> = None;
        while let Some(s) = self.full.try_pop() {
            if let Some(old) = self.current.replace(s)
                && let Some(older) = retired.replace(old)
            {
                let _ = self.free.try_push(older);
            }
        }
        if let Some(old) = retired {
            let back = match self.tap.as_mut() {
                Some(tap) => tap.offer(old),
                None => Some(old),
            };
            if let Some(b) = back {
                let _ = self.free.try_push(b);
            }
        }
        self.current.as_ref()
    }

    /// Feed `tap` the snapshots this side retires (replacing any tap it had).
    pub fn set_tap(&mut self, tap: Box<dyn SnapshotTap>) {
        self.tap = Some(tap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::World;

    #[test]
    fn buffers_circulate_and_the_newest_wins() {
        let world = World {
            rods: vec![],
            time: 0.0,
            obstacle_motions: vec![],
            suturing: None,
        };
        let (mut tx, mut rx) = snapshot_channel(&world, 3);
        assert!(rx.latest().is_none());
        for k in 0..3 {
            assert!(tx.publish(|s| s.step = k));
        }
        // All three buffers are in flight: the fourth publication is skipped.
        assert!(!tx.publish(|s| s.step = 99));
        assert_eq!(tx.skipped, 1);
        assert_eq!(rx.latest().unwrap().step, 2);
        // Two went back to the pool, one is displayed.
        assert!(tx.publish(|s| s.step = 3));
        assert!(tx.publish(|s| s.step = 4));
        assert!(!tx.publish(|s| s.step = 5));
        assert_eq!(rx.latest().unwrap().step, 4);
    }

    /// A tap that keeps what it is offered while `want`, and gives back what it kept.
    struct Keep {
        want: std::sync::Arc<std::sync::atomic::AtomicBool>,
        kept: std::sync::mpsc::Sender<u64>,
        held: Vec<Snapshot>,
    }

    impl SnapshotTap for Keep {
        fn offer(&mut self, s: Snapshot) -> Option<Snapshot> {
            if !self.want.swap(false, std::sync::atomic::Ordering::Relaxed) {
                return Some(s);
            }
            let _ = self.kept.send(s.step);
            self.held.push(s);
            None
        }
        fn give_back(&mut self) -> Option<Snapshot> {
            self.held.pop()
        }
    }

    #[test]
    fn the_tap_gets_the_newest_retired_snapshot_and_gives_it_back() {
        let world = World {
            rods: vec![],
            time: 0.0,
            obstacle_motions: vec![],
            suturing: None,
        };
        let (mut tx, mut rx) = snapshot_channel(&world, 4);
        let want = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (kept, seen) = std::sync::mpsc::channel();
        rx.set_tap(Box::new(Keep {
            want: want.clone(),
            kept,
            held: Vec::new(),
        }));
        // Not wanted: retirees go back to the pool as without a tap.
        for k in 1..=3 {
            assert!(tx.publish(|s| s.step = k));
        }
        assert_eq!(rx.latest().unwrap().step, 3);
        assert!(seen.try_recv().is_err());
        // Wanted: of the three retired at once, the newest (5) goes to the tap.
        want.store(true, std::sync::atomic::Ordering::Relaxed);
        for k in 4..=6 {
            assert!(tx.publish(|s| s.step = k));
        }
        assert_eq!(rx.latest().unwrap().step, 6);
        assert_eq!(seen.try_recv(), Ok(5));
        // The tap holds one buffer: three are left to fill, then the pool is empty ...
        assert!(tx.publish(|s| s.step = 7));
        assert!(tx.publish(|s| s.step = 8));
        assert!(!tx.publish(|s| s.step = 9));
        // ... until the next look takes the tap's buffer back with the retired ones.
        assert_eq!(rx.latest().unwrap().step, 8);
        for k in 10..=12 {
            assert!(tx.publish(|s| s.step = k));
        }
        assert_eq!(tx.skipped, 1);
    }
}
