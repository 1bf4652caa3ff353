//! The live knot analysis' core (issue #22): a [`KnotWatch`] follows the suture's knot through
//! snapshots of its centreline with the project's [`KnotTracker`], and turns each change into a
//! [`KnotRecord`] for the recording and a [`KnotStatus`] for the HUD. Pure (no threads, no
//! clocks): runtime::analysis runs it on its thread; tests feed it centrelines directly.

use super::format::{KnotEvent, KnotRecord};
use crate::math::Vec3;
use crate::sim::snapshot::{KnotStatus, Snapshot};
use crate::topology::{KnotChange, KnotTracker, Throw, TopologyError};

/// Consecutive snapshots a new knot must be seen in before it is reported: 2 (at 20 Hz, 0.1 s)
/// filters out a snapshot taken while two strands momentarily pass through each other
/// (docs/knots.md §3).
pub const CONFIRMATIONS: usize = 2;

/// Follows one rod's knot.
#[derive(Clone, Debug)]
pub struct KnotWatch {
    tracker: KnotTracker,
    rod: usize,
    up: Vec3,
    points: Vec<Vec3>,
    status: KnotStatus,
    /// Snapshots looked at, and those the topology could not read (the tracker kept its knot:
    /// projections that disagree, a non-finite point, a rod the snapshot lacks).
    pub analysed: u64,
    /// See `analysed`.
    pub failed: u64,
    /// The last error, if any.
    pub last_error: Option<TopologyError>,
}

impl KnotWatch {
    /// Watch rod `rod` (the suture), the skin's outward normal `up` (unit; y in the scenes),
    /// confirming a change over `confirmations` snapshots (at least 1).
    pub fn new(rod: usize, up: Vec3, confirmations: usize) -> Self {
        KnotWatch {
            tracker: KnotTracker::with_confirmations(confirmations),
            rod,
            up,
            points: Vec::new(),
            status: KnotStatus::none(0, 0.0),
            analysed: 0,
            failed: 0,
            last_error: None,
        }
    }

    /// The rod watched.
    pub fn rod(&self) -> usize {
        self.rod
    }

    /// The knot as last seen.
    pub fn status(&self) -> KnotStatus {
        self.status
    }

    /// Copy the watched rod's centreline out of `snap` (so its buffer can go back to the pool
    /// at once); false if the snapshot has no such rod.
    pub fn take(&mut self, snap: &Snapshot) -> bool {
        let Some(r) = snap.rods.get(self.rod) else {
            return false;
        };
        self.points.clear();
        self.points.extend_from_slice(&r.positions);
        true
    }

    /// Analyse the centreline last taken ([`KnotWatch::take`]), of physics step `step` at time
    /// `time` [s]: one record per change of the knot (usually none).
    pub fn look_taken(&mut self, step: u64, time: f64) -> Vec<KnotRecord> {
        let points = std::mem::take(&mut self.points);
        let out = self.look(step, time, &points);
        self.points = points;
        out
    }

    /// Analyse the centreline `points` [m] (tail to long end) of physics step `step` at time
    /// `time` [s]: one record per change of the knot (usually none), each with the knot's name
    /// and throws after the whole change.
    pub fn look(&mut self, step: u64, time: f64, points: &[Vec3]) -> Vec<KnotRecord> {
        self.analysed += 1;
        let changes = match self.tracker.update(points, &self.up) {
            Ok(c) => c,
            Err(e) => {
                self.failed += 1;
                self.last_error = Some(e);
                return Vec::new();
            }
        };
        let throws: Vec<Throw> = self.tracker.throws().iter().map(|t| t.throw).collect();
        let name = self.tracker.name();
        self.status = KnotStatus::of(step, time, name, &throws);
        changes
            .into_iter()
            .map(|c| KnotRecord {
                step,
                time,
                event: match c {
                    KnotChange::Added { index, throw } => KnotEvent::Added {
                        index: index.min(u8::MAX as usize) as u8,
                        throw,
                    },
                    KnotChange::Undone { index, throw } => KnotEvent::Undone {
                        index: index.min(u8::MAX as usize) as u8,
                        throw,
                    },
                    KnotChange::Unrecognised { .. } => KnotEvent::Unrecognised,
                },
                name,
                throws: throws.clone(),
            })
            .collect()
    }
}

/// The knot a recording's live analysis had reached by step `step` (None: no record by then,
/// or the recording predates the analysis).
pub fn status_at(knots: &[KnotRecord], step: u64) -> Option<KnotStatus> {
    let k = knots.iter().take_while(|k| k.step <= step).last()?;
    Some(KnotStatus::of(k.step, k.time, k.name, &k.throws))
}

impl KnotEvent {
    /// `throw 2 added: single left`, `throw 1 undone: double right`, `unrecognised knot`.
    pub fn describe(&self) -> String {
        match self {
            KnotEvent::Added { index, throw } => {
                format!("throw {} added: {}", *index as usize + 1, throw.describe())
            }
            KnotEvent::Undone { index, throw } => {
                format!("throw {} undone: {}", *index as usize + 1, throw.describe())
            }
            KnotEvent::Unrecognised => "unrecognised knot".to_string(),
        }
    }
}
