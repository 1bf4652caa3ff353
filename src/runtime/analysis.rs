//! The live knot analysis (issue #22): a low-priority thread, not a real-time loop, that asks for
//! a snapshot of the world every [`PERIOD`] (wall clock), follows the suture's knot through them
//! with session::knots::KnotWatch (the project's topology::KnotTracker), sends each change to
//! the recorder (a KnotRecord, tagged with the physics step of the snapshot analysed) and the
//! knot's status to the viewer's HUD.
//!
//! How it gets snapshots, at no cost to the physics loop: it is a second consumer of the
//! snapshot pool (sim::snapshot::SnapshotTap). The physics loop publishes snapshots as it always
//! did; the first consumer (the viewer, or the headless wait) retires each for a newer one and,
//! when this thread has asked for one since its last tick (an atomic flag), offers it the newest
//! retired buffer through a one-slot crossbeam channel instead of returning it to the free ring.
//! This thread copies the suture's centreline out, sends the buffer back at once (the first
//! consumer puts it on the free ring at its next look) and analyses the copy. The physics loop
//! never touches a lock, channel or flag of this thread: if every buffer is away it skips a
//! publication, as it did before (`PhysicsReport::skipped_snapshots`).
//!
//! crossbeam: `select!` over a stop signal, a `tick` and the tap's channel; records to the
//! recorder through its crossbeam channel; statuses to the viewer through a bounded channel
//! (dropped if the viewer is not reading).

use super::pacer::{ANALYSIS_NICE, lower_priority};
use crate::session::format::KnotRecord;
use crate::session::knots::KnotWatch;
use crate::sim::snapshot::{KnotStatus, Snapshot, SnapshotTap};
use crossbeam::channel::{self, Receiver, Sender, TrySendError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the analysis asks for a snapshot: 20 Hz, twice the 10 Hz it promises (a
/// snapshot comes when the first consumer next retires one, ~16 ms at the physics loop's
/// publication rate, and an analysis takes 0.5–8 ms: docs/knots.md §1).
pub const PERIOD: Duration = Duration::from_millis(50);

/// What the analysis did, returned when it stops.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalysisReport {
    /// The rod followed (the suture).
    pub rod: usize,
    /// Snapshots analysed, and those the topology could not read (the tracker kept its knot).
    pub analysed: u64,
    /// See `analysed`.
    pub failed: u64,
    /// The last topology error, as text.
    pub last_error: Option<String>,
    /// Wall time the thread ran [s], and the achieved rate: snapshots analysed over it [Hz].
    pub wall: f64,
    /// See `wall`.
    pub rate: f64,
    /// Longest wall time between two analyses [s] (from the start for the first).
    pub longest_gap: f64,
    /// Mean and longest time of one analysis [ms].
    pub compute_mean_ms: f64,
    /// See `compute_mean_ms`.
    pub compute_max_ms: f64,
    /// Knot records sent to the recorder (every change of the knot).
    pub records: u64,
    /// The knot at the last snapshot analysed (None: none analysed).
    pub knot: Option<KnotStatus>,
    /// Whether the thread's lower priority was granted.
    pub lowered: bool,
}

/// The running analysis thread.
pub struct Analysis {
    stop: Sender<()>,
    thread: std::thread::JoinHandle<AnalysisReport>,
}

/// The tap the first consumer of the snapshots feeds (sim::snapshot::SnapshotRx::set_tap).
struct Tap {
    wanted: Arc<AtomicBool>,
    to: Sender<Snapshot>,
    back: Receiver<Snapshot>,
}

impl SnapshotTap for Tap {
    fn offer(&mut self, s: Snapshot) -> Option<Snapshot> {
        if !self.wanted.swap(false, Ordering::AcqRel) {
            return Some(s);
        }
        match self.to.try_send(s) {
            Ok(()) => None,
            Err(TrySendError::Full(s)) => {
                self.wanted.store(true, Ordering::Release);
                Some(s)
            }
            Err(TrySendError::Disconnected(s)) => Some(s),
        }
    }
    fn give_back(&mut self) -> Option<Snapshot> {
        self.back.try_recv().ok()
    }
}

/// Start the analysis of `watch`'s rod, asking for a snapshot every `period`: records of each
/// change go to `records` (None: not recorded), the knot's status after each analysis to `hud`
/// (dropped when its channel is full). Returns the thread and the tap to hand the snapshots'
/// first consumer (sim::snapshot::SnapshotRx::set_tap).
pub fn spawn(
    mut watch: KnotWatch,
    period: Duration,
    records: Option<Sender<KnotRecord>>,
    hud: Option<Sender<KnotStatus>>,
) -> (Analysis, Box<dyn SnapshotTap>) {
    let wanted = Arc::new(AtomicBool::new(false));
    let (to, inbox) = channel::bounded::<Snapshot>(1);
    // Unbounded, but never longer than the pool: only the pool's buffers travel here.
    let (back_tx, back) = channel::unbounded::<Snapshot>();
    let (stop, stop_rx) = channel::bounded::<()>(1);
    let tap = Tap {
        wanted: wanted.clone(),
        to,
        back,
    };
    let thread = std::thread::Builder::new()
        .name("knot analysis".into())
        .spawn(move || {
            let lowered = lower_priority(ANALYSIS_NICE);
            let ticker = channel::tick(period);
            let started = Instant::now();
            let mut last = started;
            let mut rep = AnalysisReport {
                rod: watch.rod(),
                lowered,
                ..Default::default()
            };
            let mut compute = 0.0;
            wanted.store(true, Ordering::Release);
            loop {
                channel::select! {
                    recv(stop_rx) -> _ => break,
                    recv(ticker) -> _ => wanted.store(true, Ordering::Release),
                    recv(inbox) -> msg => {
                        let Ok(snap) = msg else { break };
                        let taken = watch.take(&snap);
                        let (step, time) = (snap.step, snap.time);
                        let _ = back_tx.send(snap);
                        if !taken {
                            continue;
                        }
                        let t0 = Instant::now();
                        rep.longest_gap = rep.longest_gap.max((t0 - last).as_secs_f64());
                        last = t0;
                        let changes = watch.look_taken(step, time);
                        let ms = t0.elapsed().as_secs_f64() * 1e3;
                        compute += ms;
                        rep.compute_max_ms = rep.compute_max_ms.max(ms);
                        for r in changes {
                            rep.records += 1;
                            if let Some(tx) = &records {
                                let _ = tx.send(r);
                            }
                        }
                        if let Some(tx) = &hud {
                            let _ = tx.try_send(watch.status());
                        }
                    }
                }
            }
            rep.wall = started.elapsed().as_secs_f64();
            rep.analysed = watch.analysed;
            rep.failed = watch.failed;
            rep.last_error = watch.last_error.as_ref().map(|e| e.to_string());
            rep.rate = if rep.wall > 0.0 {
                rep.analysed as f64 / rep.wall
            } else {
                0.0
            };
            rep.compute_mean_ms = compute / rep.analysed.max(1) as f64;
            rep.knot = (rep.analysed > 0).then(|| watch.status());
            rep
        })
        .expect("spawn the knot analysis thread");
    (Analysis { stop, thread }, Box::new(tap))
}

impl Analysis {
    /// Stop the thread and collect its report (None if it panicked).
    pub fn stop(self) -> Option<AnalysisReport> {
        let _ = self.stop.send(());
        self.thread.join().ok()
    }
}

impl std::fmt::Display for AnalysisReport {
    /// `knot analysis 19.8 Hz (rod 0): 59 snapshots analysed in 3.00 s, 1.2/3.4 ms mean/max,
    /// longest gap 71 ms, 0 unreadable; 2 knot records; final knot: square: single right,
    /// single left`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "knot analysis {:.1} Hz (rod {}{}): {} snapshots analysed in {:.2} s, {:.1}/{:.1} ms mean/max, longest gap {:.0} ms, {} unreadable{}; {} knot records; final knot: {}",
            self.rate,
            self.rod,
            if self.lowered { ", nice 10" } else { "" },
            self.analysed,
            self.wall,
            self.compute_mean_ms,
            self.compute_max_ms,
            self.longest_gap * 1e3,
            self.failed,
            self.last_error
                .as_ref()
                .map_or(String::new(), |e| format!(" (last: {e})")),
            self.records,
            self.knot
                .as_ref()
                .map_or("none analysed".to_string(), |k| k.describe())
        )
    }
}
