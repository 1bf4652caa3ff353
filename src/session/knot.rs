//! The knot of a recorded session (issue #22), for `suture assess`: the recording keeps no rod
//! geometry, so the session is re-simulated by
//! [`replay::replay_each`](super::replay::replay_each) (the re-simulation `suture replay
//! --verify` checks bit for bit) and the project's [`KnotTracker`] looks at the suture's
//! centreline every [`KNOT_EVERY`] s of simulated time (20 Hz), from t = 0, and at the last
//! step. Definitions (docs/recording-format.md, "The knot"; docs/knots.md §3–4):
//!
//! - the knot's name and its throws in the order the tracker accepted them, each with the time
//!   it was first seen (a throw is accepted on its [`CONFIRMATIONS`]-th consecutive sighting;
//!   throws already there at t = 0, or added between two looks, come in the factorisation's
//!   order: doubles first, right before left);
//! - a throw laid flat: the whole knot's shape at its tightest while that throw was the newest
//!   ([`TrackedThrow`]) has no post (no strand held straight through it: not a half hitch) and
//!   its strands run within 30° of the skin's plane in the mean square (`slope` ≤
//!   [`FLAT_SLOPE`](crate::topology::throws::FLAT_SLOPE) = sin 30°); judged only where there is skin (suturing scenes);
//! - the incision gap under the knot at the end: the wound gap measure of the step records
//!   (`tissue::Tissue::gap_at`, the distance along x between the two cut edges at the skin) at
//!   the mean z of the suture's nodes inside the final knot.

use super::format::Recording;
use super::replay::{ReplayError, VerifyReport, replay_each};
use crate::math::Vec3;
use crate::sim::World;
use crate::sim::tensile::{TensileParams, TensileReport, tensile_test};
use crate::topology::throws::{KnotChange, KnotName, KnotShape, KnotTracker, Sense};

/// Simulated time between two looks of the tracker [s] (20 Hz; the issue asks ≥ 10 Hz). One
/// look costs 0.5–2 ms on 170–340 nodes (docs/knots.md §1).
pub const KNOT_EVERY: f64 = 0.05;
/// Consecutive looks that must see a new knot before it is accepted (filters one snapshot in
/// which two strands pass through each other).
pub const CONFIRMATIONS: usize = 2;

/// One throw of the final knot.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ThrowReport {
    /// "right" or "left" (the handedness of the two strands' twist, docs/knots.md §3).
    pub sense: String,
    /// 1 (single) or 2 (double: the first throw of a surgeon's knot).
    pub wraps: u8,
    /// Simulated time it was first seen [s]: the first of the [`CONFIRMATIONS`] consecutive
    /// looks that saw it (it is accepted at the last of them).
    pub at: f64,
    /// Laid flat (see the module doc); None without skin or without a measured shape.
    pub laid_flat: Option<bool>,
    /// The knot's slope at its tightest while this throw was the newest: the root mean square
    /// of the sine of its strands' angle to the skin's plane (0 flat, 1 vertical).
    pub slope: Option<f64>,
    /// Whether a strand ran straight through the knot then (a half hitch).
    pub post: Option<bool>,
    /// Height of the knot's centroid above the stitch's lowest point then [mm].
    pub height_mm: Option<f64>,
}

/// What the tracker found over the session.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KnotReport {
    /// The final knot's name (`KnotName::as_str`: "square", "granny", "surgeon's",
    /// "half hitches (slip knot)", "not a knot", …).
    pub name: String,
    /// Its throws in the order tied.
    pub throws: Vec<ThrowReport>,
    /// When its last throw was first seen [s] (None: not a knot).
    pub complete_at: Option<f64>,
    /// The incision gap under the knot at the end [mm] (None: no knot, or no tissue).
    pub gap_under_knot_mm: Option<f64>,
    /// Looks taken, and looks whose projections disagreed (left the tracker as it was).
    pub looks: usize,
    /// See `looks`.
    pub failed_looks: usize,
    /// Whether laid flat was judged (the scene has skin).
    pub skin: bool,
    /// The knot's security: the virtual tensile test (`sim::tensile`, docs/knots.md §6) from
    /// the session's final state, with its default settings. None: no knot, or the test could
    /// not run (`security_error` says why).
    pub security: Option<TensileReport>,
    /// Why the tensile test could not run.
    pub security_error: Option<String>,
}

fn throw_report(
    throw: crate::topology::throws::Throw,
    at: f64,
    shape: Option<&KnotShape>,
    skin: bool,
) -> ThrowReport {
    let shape = shape.filter(|_| skin);
    ThrowReport {
        sense: match throw.sense {
            Sense::Right => "right",
            Sense::Left => "left",
        }
        .to_string(),
        wraps: throw.wraps,
        at,
        laid_flat: shape.map(|s| s.laid_flat),
        slope: shape.map(|s| s.slope),
        post: shape.map(|s| s.post.is_some()),
        height_mm: shape.map(|s| s.height * 1e3),
    }
}

/// The suture's centreline from the tail to the long (needle) end, and the rod's index: the
/// sutured rod (reversed if the needle is on its first node), else rod 0.
fn suture_points(world: &World) -> Option<Vec<Vec3>> {
    let rod = super::frames::suture_rod(world)?;
    let mut x = world.rod_positions(rod).to_vec();
    if world.sutured_rod().is_some_and(|(_, node)| node == 0) {
        x.reverse();
    }
    (x.len() >= 2).then_some(x)
}

/// The tracker's bookkeeping over a re-simulation.
struct Tracking {
    tracker: KnotTracker,
    up: Vec3,
    /// When each current throw was first seen [s].
    at: Vec<f64>,
    /// The times of the last [`CONFIRMATIONS`] looks that succeeded [s], oldest first.
    recent: Vec<f64>,
    looks: usize,
    failed: usize,
}

impl Tracking {
    fn look(&mut self, world: &World) {
        let Some(x) = suture_points(world) else {
            return;
        };
        self.looks += 1;
        match self.tracker.update(&x, &self.up) {
            Err(_) => self.failed += 1,
            Ok(changes) => {
                // A change is accepted on its CONFIRMATIONS-th consecutive sighting (a failed
                // look keeps it pending): it was first seen CONFIRMATIONS − 1 good looks ago.
                if self.recent.len() == CONFIRMATIONS {
                    self.recent.remove(0);
                }
                self.recent.push(world.time);
                let first_seen = self.recent[0];
                for c in changes {
                    match c {
                        KnotChange::Added { .. } => self.at.push(first_seen),
                        KnotChange::Undone { .. } => {
                            self.at.pop();
                        }
                        KnotChange::Unrecognised { .. } => self.at.clear(),
                    }
                }
            }
        }
    }
}

/// Re-simulate `rec` on `world` (its scene's world at t = 0), run the knot tracker over the
/// suture every `every` physics steps (≥ 1), at t = 0 and at the last step, and report the
/// final knot. The report says whether the re-simulation reproduced the recording; on a
/// divergence the knot is that of the steps before it, and the caller must not present it as
/// the session's.
pub fn track(
    rec: &Recording,
    world: &mut World,
    every: u64,
) -> Result<(KnotReport, VerifyReport), ReplayError> {
    let every = every.max(1);
    let skin = world.skin_normal();
    let mut t = Tracking {
        tracker: KnotTracker::with_confirmations(CONFIRMATIONS),
        up: skin.unwrap_or_else(Vec3::y),
        at: Vec::new(),
        recent: Vec::new(),
        looks: 0,
        failed: 0,
    };
    t.look(world);
    let last = rec.steps.len() as u64;
    let verify = replay_each(rec, world, |step, w| {
        if step % every == 0 || step == last {
            t.look(w);
        }
    })?;
    let name = t.tracker.name();
    let throws: Vec<ThrowReport> = t
        .tracker
        .throws()
        .iter()
        .zip(&t.at)
        .map(|(tt, at)| throw_report(tt.throw, *at, tt.shape.as_ref(), skin.is_some()))
        .collect();
    let complete_at = throws.iter().map(|th| th.at).reduce(f64::max);
    // The gap under the knot: at the mean z of the suture's nodes inside the final knot.
    let gap_under_knot_mm = match (t.tracker.shape(), suture_points(world)) {
        (Some(s), Some(x)) if name != KnotName::NotAKnot => {
            let nodes: Vec<f64> = [s.tail, s.long]
                .iter()
                .flat_map(|&(a, b)| {
                    let (i0, i1) = (a.ceil() as usize, (b.floor() as usize).min(x.len() - 1));
                    x[i0.min(i1)..=i1].iter().map(|p| p.z).collect::<Vec<_>>()
                })
                .collect();
            let z = nodes.iter().sum::<f64>() / nodes.len().max(1) as f64;
            world.incision_gap_at(z).map(|g| g * 1e3)
        }
        _ => None,
    };
    // The knot's security, tested on a copy of the final state (not after a divergence: that
    // state is not the session's).
    let (security, security_error) = if name == KnotName::NotAKnot {
        (None, None)
    } else if verify.divergence.is_some() {
        (None, Some("the re-simulation diverged".into()))
    } else {
        match tensile_test(world, &TensileParams::default()) {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.to_string())),
        }
    };
    Ok((
        KnotReport {
            security,
            security_error,
            name: name.as_str().to_string(),
            throws,
            complete_at,
            gap_under_knot_mm,
            looks: t.looks,
            failed_looks: t.failed,
            skin: skin.is_some(),
        },
        verify,
    ))
}

/// Physics steps between looks for a recording of step `dt` [s]: [`KNOT_EVERY`] rounded to
/// whole steps (at least 1).
pub fn steps_between_looks(dt: f64) -> u64 {
    ((KNOT_EVERY / dt).round() as u64).max(1)
}
