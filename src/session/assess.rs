//! Assessment of a recorded session (issue #7): the metrics of the surgical-education
//! literature, computed from the recording alone (no re-simulation).
//!
//! - Time: total, and per phase (approach: start to the first skin puncture; bite: to the last
//!   exit; pull-through: to the last "suture through" event; then, when the knot was analysed
//!   and has a throw, tying: to the time its last throw was recognised, and after the knot: the
//!   rest; else after pull-through: the rest). Phases of no length are left out.
//! - Motion of the instrument (the device target the physics consumed each step, i.e. the hand
//!   mapped to the world): path length L = Σ |x_{k+1} − x_k| [m]; economy of motion = the
//!   shortest path from the start through where the instrument was at every puncture and
//!   exit, in order, to the end, over L (1 = no wasted motion; ≤ 1 by the triangle
//!   inequality, the waypoints being points of the path). The waypoints are the instrument's
//!   own positions at those moments, not where the needle's tip pierced the skin (issue #24:
//!   the tip lies a needle's reach from the grip the path follows, ~16 mm in
//!   interrupted_stitch.toml, so the tip's positions made the ratio meaningless); smoothness as the dimensionless normalised jerk of
//!   Hogan & Sternad 2009, NJ = sqrt(½ ∫|d³x/dt³|² dt · T⁵ / L²) over the moving span (a
//!   minimum-jerk reach scores sqrt(360) ≈ 18.97; lower is smoother), on positions low-passed
//!   over 10 ms.
//! - Accuracy: distance of the first entry and of the first exit through the skin from their
//!   marks [mm] and the needle's angle to the surface normal at each puncture [deg].
//! - Forces: largest and mean force on the tissue [N] (the sum of the channel forces and the tip
//!   force on the skin, while in contact), suture tension peak and 95th percentile [N].
//! - Counts: punctures, re-punctures (torn channels), needle drops, breakage, final incision
//!   gap [mm] (tightness).
//! - The knot ([`assess_with_knot`], from session::knot: the session re-simulated and the
//!   suture's centreline tracked at 20 Hz): its name, its throws in order (sense, wraps, laid
//!   flat), the incision gap under it. [`assess`] alone does not re-simulate: its knot is the
//!   last `KnotTied` event's (offline stepping raises them; live sessions do not).
//! - Per instrument (issue #24, two hands: one entry per device-driven tool, in the header's
//!   order): its hand and device, the path length of its consumed targets [m] and its idle
//!   time [s]: the total of the spans of at least [`IDLE_MIN`] during which its target moved
//!   slower than [`IDLE_SPEED`] (speed over [`JERK_WINDOW`]); idle time as a skill metric:
//!   D'Angelo et al. 2015, Am J Surg 209(4):645–651 (the thresholds are ours).
//! - Score (0–100): see [`score`] and README.

use super::format::{Recording, StepRecord};
use super::knot::{KnotReport, ThrowReport};
use crate::math::Vec3;
use crate::sim::suturing::EventKind;
use crate::tissue::Face;

/// The metrics of one session. Lengths in m unless named `_mm`, times in s, forces in N.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Metrics {
    /// Scene path and device, from the header.
    pub scene: String,
    /// See `scene`.
    pub device: String,
    /// Whether the recording ended cleanly (false: salvaged up to its last chunk).
    pub complete: bool,
    /// Simulated time of the last step [s].
    pub duration: f64,
    /// Phases: (name, start [s], end [s]).
    pub phases: Vec<(String, f64, f64)>,
    /// Instrument path length [m].
    pub path_length: f64,
    /// Shortest path through the task's points over the path length (0–1].
    pub economy_of_motion: f64,
    /// Dimensionless normalised jerk (lower is smoother; 0 if the instrument did not move).
    pub normalized_jerk: f64,
    /// First skin entry's distance from its mark [mm] (None: no entry near a mark).
    pub entry_error_mm: Option<f64>,
    /// First skin exit's distance from its mark [mm].
    pub exit_error_mm: Option<f64>,
    /// Angle of the needle to the surface normal at each puncture [deg].
    pub puncture_angles_deg: Vec<f64>,
    /// Punctures (entries through any face), re-punctures (torn channels), needle drops.
    pub punctures: usize,
    /// See `punctures`.
    pub repunctures: usize,
    /// See `punctures`.
    pub needle_drops: usize,
    /// Largest and mean force on the tissue while in contact [N].
    pub max_tissue_force: f64,
    /// See `max_tissue_force`.
    pub mean_tissue_force: f64,
    /// Largest and 95th-percentile suture tension [N].
    pub max_tension: f64,
    /// See `max_tension`.
    pub p95_tension: f64,
    /// Whether the suture broke.
    pub suture_broken: bool,
    /// The knot at the end, by name: from the knot analysis ("square", "granny", "surgeon's",
    /// "half hitches (slip knot)", "not a knot", …), else the last `KnotTied` event's
    /// ("unnamed" if the topology has no name for it); None: not analysed and no event.
    pub knot: Option<String>,
    /// The knot's throws in the order tied, each with its sense, wraps and whether it was laid
    /// flat (empty: no knot, or not analysed).
    pub knot_throws: Vec<ThrowReport>,
    /// When the knot's last throw was recognised [s].
    pub knot_complete_at: Option<f64>,
    /// The incision gap under the knot at the end [mm].
    pub knot_gap_mm: Option<f64>,
    /// The knot's security by the virtual tensile test (docs/knots.md §6): whether it held
    /// the test's force, the largest force it took and the loop's growth (None: no knot, or
    /// not tested; `knot_analysis` then says why).
    pub knot_security: Option<crate::sim::tensile::TensileReport>,
    /// How the knot was found, or why it was not analysed.
    pub knot_analysis: String,
    /// Incision gap at the end [mm] (None without tissue).
    pub final_gap_mm: Option<f64>,
    /// Steps whose solve failed or did not converge.
    pub solver_failures: usize,
    /// Per device-driven tool, in the header's order: path length and idle time.
    pub tools: Vec<ToolMetrics>,
    /// The overall score, 0–100.
    pub score: f64,
}

/// The motion of one device-driven tool (an instrument, or the scene's `[tool]`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ToolMetrics {
    /// Its hand ("right", "left") and its device's name, from the header.
    pub hand: String,
    /// See `hand`.
    pub device: String,
    /// Path length of the targets it consumed [m] (a step without a new target: where it
    /// was).
    pub path_length: f64,
    /// Idle time [s]: the spans of at least [`IDLE_MIN`] during which its target moved
    /// slower than [`IDLE_SPEED`], summed.
    pub idle_time: f64,
}

/// Below this speed [m/s] an instrument is idle (5 mm/s; ours).
pub const IDLE_SPEED: f64 = 0.005;
/// An idle span lasts at least this long [s] (ours).
pub const IDLE_MIN: f64 = 0.5;

/// Each tool's positions, one per step from its first target on: the target it consumed, or
/// where the last one put it (a step without a new sample); with the step's time [s].
fn tool_paths(rec: &Recording) -> Vec<Vec<(f64, Vec3)>> {
    let n = rec.header.tools.len().clamp(1, crate::sim::MAX_TOOLS);
    let mut out = vec![Vec::new(); n];
    let mut last: Vec<Option<Vec3>> = vec![None; n];
    for s in &rec.steps {
        for (i, t) in s.targets().iter().take(n).enumerate() {
            if let Some(t) = t {
                last[i] = Some(t.position);
            }
            if let Some(x) = last[i] {
                out[i].push((s.time, x));
            }
        }
    }
    out
}

/// Idle time [s] of positions sampled every `h` [s]: the spans of at least [`IDLE_MIN`]
/// whose speed over [`JERK_WINDOW`] (|x_k − x_{k−w}| / (w h)) is below [`IDLE_SPEED`].
pub fn idle_time(x: &[Vec3], h: f64) -> f64 {
    if h <= 0.0 || x.len() < 2 {
        return 0.0;
    }
    let w = ((JERK_WINDOW / h).round().min(x.len() as f64 - 1.0) as usize).max(1);
    let (mut total, mut run) = (0usize, 0usize);
    let min = (IDLE_MIN / h).round() as usize;
    for k in 1..x.len() {
        let speed = (x[k] - x[k.saturating_sub(w)]).norm() / (k.min(w) as f64 * h);
        if speed < IDLE_SPEED {
            run += 1;
        } else {
            if run >= min {
                total += run;
            }
            run = 0;
        }
    }
    if run >= min {
        total += run;
    }
    total as f64 * h
}

/// Low-pass window of the jerk metric [s]: positions are smoothed by two passes of a moving
/// average this long and differentiated at this spacing, as jerk from raw 1 kHz samples
/// measures the sampling (a target repeated or skipped by one tick) rather than the hand.
pub const JERK_WINDOW: f64 = 0.01;

/// Dimensionless normalised jerk of positions sampled every `h` [s] (Hogan & Sternad 2009,
/// eq. 4 with the path length as the amplitude): sqrt(½ ∫|x⃛|² dt · T⁵ / L²) over the moving
/// span, T its duration and L its path length. The third derivative is taken on the positions
/// smoothed by two passes of a [`JERK_WINDOW`] moving average, as a third difference at that
/// spacing Δ, (x(t+2Δ) − 3x(t+Δ) + 3x(t) − x(t−Δ)) / Δ³, at every sample.
pub fn normalized_jerk(x: &[Vec3], h: f64) -> f64 {
    if h <= 0.0 {
        return 0.0;
    }
    // The moving span: from the first to the last sample that moved (stillness before and
    // after would inflate T⁵).
    let moved = |k: &usize| (x[k + 1] - x[*k]).norm() > 1e-12;
    let (Some(a), Some(b)) = (
        (0..x.len().saturating_sub(1)).find(moved),
        (0..x.len().saturating_sub(1)).rev().find(moved),
    ) else {
        return 0.0;
    };
    let t = (b + 1 - a) as f64 * h;
    let l = path_length(&x[a..=b + 1]);
    if l <= 0.0 {
        return 0.0;
    }
    // Smooth (two moving-average passes of w samples, clamped at the ends) and resample. The
    // window is at most the whole series: a tiny h (a crafted recording) must not overflow
    // the index arithmetic below (`3 * w`, `k + w`).
    let w = ((JERK_WINDOW / h).round().min(x.len() as f64) as usize).max(1);
    let average = |v: &[Vec3]| -> Vec<Vec3> {
        let n = v.len();
        let mut prefix = vec![Vec3::zeros(); n + 1];
        for k in 0..n {
            prefix[k + 1] = prefix[k] + v[k];
        }
        (0..n)
            .map(|k| {
                let lo = k.saturating_sub(w / 2);
                let hi = (k + w - w / 2).min(n);
                (prefix[hi] - prefix[lo]) / (hi - lo) as f64
            })
            .collect()
    };
    // The span with a window of still samples either side, so the start and end of the motion
    // are integrated.
    let (lo, hi) = (a.saturating_sub(3 * w), (b + 1 + 3 * w).min(x.len() - 1));
    let y = average(&average(&x[lo..=hi]));
    // Third differences at spacing Δ = w·h, evaluated at every sample (integrated at h).
    let d = w as f64 * h;
    if y.len() < 3 * w + 1 {
        return 0.0;
    }
    let mut j2 = 0.0;
    for k in w..y.len() - 2 * w {
        let j = (y[k + 2 * w] - 3.0 * y[k + w] + 3.0 * y[k] - y[k - w]) / (d * d * d);
        j2 += j.norm_squared() * h;
    }
    (0.5 * j2 * t.powi(5) / (l * l)).sqrt()
}

/// Σ |x_{k+1} − x_k| [m].
pub fn path_length(x: &[Vec3]) -> f64 {
    x.windows(2).map(|w| (w[1] - w[0]).norm()).sum()
}

fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)]
}

/// The score, 0–100: 100 less capped penalties, each documented in README:
/// time −0.1/s beyond 120 s (≤ 30); accuracy −5/mm of entry + exit error (≤ 30; a missing
/// entry or exit counts 3 mm); −10 per re-puncture (≤ 20); −10/N of tissue force beyond 2 N
/// (≤ 20); −20 if the suture broke; −10 if the incision is still open by more than 0.5 mm;
/// −20 if the knot slipped in its tensile test (FLS fails an insecure knot; docs/knots.md §6).
pub fn score(m: &Metrics) -> f64 {
    let mut s = 100.0;
    s -= (0.1 * (m.duration - 120.0).max(0.0)).min(30.0);
    let acc = m.entry_error_mm.unwrap_or(3.0) + m.exit_error_mm.unwrap_or(3.0);
    s -= (5.0 * acc).min(30.0);
    s -= (10.0 * m.repunctures as f64).min(20.0);
    s -= (10.0 * (m.max_tissue_force - 2.0).max(0.0)).min(20.0);
    if m.suture_broken {
        s -= 20.0;
    }
    if m.final_gap_mm.is_some_and(|g| g > 0.5) {
        s -= 10.0;
    }
    if m.knot_security.is_some_and(|r| !r.holds) {
        s -= 20.0;
    }
    s.clamp(0.0, 100.0)
}

/// The instrument positions, one per step (the consumed target; steps before the first device
/// sample are skipped).
pub fn instrument_path(steps: &[StepRecord]) -> Vec<Vec3> {
    steps
        .iter()
        .filter_map(|s| s.target.map(|t| t.position))
        .collect()
}

/// Where the instrument was at `t` [s]: the target the first step at or after `t` consumed,
/// or, past the last sample, the last one (None before any sample).
fn position_at(steps: &[StepRecord], t: f64) -> Option<Vec3> {
    let k = steps.partition_point(|s| s.time < t - 1e-9);
    steps[k.min(steps.len())..]
        .iter()
        .chain(steps[..k.min(steps.len())].iter().rev())
        .find_map(|s| s.target.map(|g| g.position))
}

/// Assess a recording from the recording alone (no re-simulation: the knot is the last
/// `KnotTied` event's).
pub fn assess(rec: &Recording) -> Metrics {
    assess_with_knot(
        rec,
        Err("not analysed (assessed from the recording alone)".to_string()),
    )
}

/// Assess a recording with the knot found by re-simulating it (`Ok`: session::knot::track's
/// report and how it was obtained; `Err`: why there is none).
pub fn assess_with_knot(rec: &Recording, knot: Result<(KnotReport, String), String>) -> Metrics {
    let h = rec.header.dt;
    let steps = &rec.steps;
    let path = instrument_path(steps);
    let mut m = Metrics {
        scene: rec.header.scene_path.clone(),
        device: rec.header.devices(),
        complete: rec.end.is_some(),
        duration: steps.last().map_or(0.0, |s| s.time),
        path_length: path_length(&path),
        normalized_jerk: normalized_jerk(&path, h),
        ..Default::default()
    };
    // Events.
    let (mut first_entry, mut last_exit, mut last_through) = (None, None, None);
    // The times [s] of the punctures and exits, in order (economy's waypoints).
    let mut waypoints = Vec::new();
    for e in &rec.events {
        let t = e.event.time;
        match &e.event.kind {
            EventKind::Puncture {
                face,
                angle,
                target_error,
                ..
            } => {
                m.punctures += 1;
                m.puncture_angles_deg.push(angle.to_degrees());
                waypoints.push(t);
                if *face == Face::Top && first_entry.is_none() {
                    first_entry = Some(t);
                    m.entry_error_mm = target_error.map(|e| e * 1e3);
                }
            }
            EventKind::Exit {
                face, target_error, ..
            } => {
                waypoints.push(t);
                if *face == Face::Top {
                    if m.exit_error_mm.is_none() {
                        m.exit_error_mm = target_error.map(|e| e * 1e3);
                    }
                    last_exit = Some(t);
                }
            }
            EventKind::Repuncture { .. } => m.repunctures += 1,
            EventKind::NeedleDropped => m.needle_drops += 1,
            EventKind::SutureThrough { .. } => last_through = Some(t),
            EventKind::SutureBroken { .. } => m.suture_broken = true,
            EventKind::KnotTied { name, .. } => {
                m.knot = Some(name.unwrap_or("unnamed").to_string());
            }
            EventKind::Withdrawn { .. }
            | EventKind::NeedleGrasped { .. }
            | EventKind::Instrument { .. } => {}
        }
    }
    // The knot.
    let tied = match knot {
        Ok((k, how)) => {
            m.knot = Some(k.name.clone());
            m.knot_complete_at = k.complete_at;
            m.knot_gap_mm = k.gap_under_knot_mm;
            m.knot_security = k.security;
            m.knot_throws = k.throws;
            m.knot_analysis = match k.security_error {
                Some(why) => format!("{how}; no tensile test: {why}"),
                None => how,
            };
            Some(m.knot_complete_at)
        }
        Err(why) => {
            m.knot_analysis = why;
            None
        }
    };
    // Phases.
    let mut bounds = vec![("approach", 0.0)];
    for (name, at) in [("bite", first_entry), ("pull-through", last_exit)] {
        if let Some(t) = at {
            bounds.push((name, t));
        }
    }
    match tied {
        // A knot with a throw: tying from the last "suture through" (a stitch placed at load:
        // from the start) to its last throw, then the rest.
        Some(Some(done)) => {
            let from = last_through.unwrap_or(0.0);
            if done > from {
                bounds.push(("tying", from));
            }
            bounds.push(("after the knot", done.max(from)));
        }
        // No knot, or not analysed.
        _ => {
            if let Some(t) = last_through {
                bounds.push(("after pull-through", t));
            }
        }
    }
    let end = m.duration;
    for (i, (name, t0)) in bounds.iter().enumerate() {
        let t1 = bounds.get(i + 1).map_or(end.max(*t0), |b| b.1);
        if t1 > *t0 || (bounds.len() == 1) {
            m.phases.push((name.to_string(), *t0, t1));
        }
    }
    // Economy: the shortest path start → where the instrument was at each puncture and exit
    // → end, over the path.
    if let (Some(a), Some(b)) = (path.first(), path.last()) {
        let mut pts = vec![*a];
        pts.extend(
            waypoints
                .iter()
                .map(|&t| position_at(steps, t).unwrap_or(*a)),
        );
        pts.push(*b);
        m.economy_of_motion = if m.path_length > 0.0 {
            path_length(&pts) / m.path_length
        } else {
            1.0
        };
    }
    // Forces, over the steps that did not fail: a failed step's state is a solve that ran away
    // (sim: "the suturing state has diverged", a tension over 10 kN), not a force anyone
    // applied.
    let sound = || steps.iter().filter(|s| !s.failed);
    let contact: Vec<f64> = sound()
        .map(|s| s.tissue_force)
        .filter(|f| *f > 0.0)
        .collect();
    m.max_tissue_force = contact.iter().copied().fold(0.0, f64::max);
    m.mean_tissue_force = if contact.is_empty() {
        0.0
    } else {
        contact.iter().sum::<f64>() / contact.len() as f64
    };
    let tension: Vec<f64> = sound().map(|s| s.tension).collect();
    m.max_tension = tension.iter().copied().fold(0.0, f64::max);
    m.p95_tension = percentile(tension, 0.95);
    let sutured = rec.header.scene_text.contains("[tissue]");
    m.final_gap_mm = sound().next_back().filter(|_| sutured).map(|s| s.gap * 1e3);
    m.solver_failures = steps.iter().filter(|s| s.failed || !s.converged).count();
    let none = super::format::ToolHeader::default();
    m.tools = tool_paths(rec)
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let t = rec.header.tools.get(i).unwrap_or(&none);
            let x: Vec<Vec3> = p.iter().map(|(_, x)| *x).collect();
            ToolMetrics {
                hand: t.hand.name().to_string(),
                device: t.device.clone(),
                path_length: path_length(&x),
                idle_time: idle_time(&x, h),
            }
        })
        .collect();
    m.score = score(&m);
    m
}

/// The CSV summary header and one row per session.
pub const SUMMARY_HEADER: &str = "file,scene,complete,duration_s,path_length_m,economy,normalized_jerk,entry_error_mm,exit_error_mm,punctures,repunctures,needle_drops,max_tissue_force_n,mean_tissue_force_n,max_tension_n,suture_broken,knot,final_gap_mm,score,knot_throws,knot_gap_mm,knot_holds,knot_peak_force_n,knot_loop_growth_mm";

/// The throws in a word each, in order: `single right; double left (laid flat)`, ….
pub fn describe_throws(throws: &[ThrowReport]) -> String {
    throws
        .iter()
        .map(|t| {
            format!(
                "{} {}{}",
                if t.wraps == 2 { "double" } else { "single" },
                t.sense,
                match t.laid_flat {
                    Some(true) => " (laid flat)",
                    Some(false) => " (not laid flat)",
                    None => "",
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The tensile test's result in words: `holds 1.50 N (loop +0.42 mm)` or `slips at 0.21 N
/// (loop +3.00 mm)`.
pub fn describe_security(r: &crate::sim::tensile::TensileReport) -> String {
    if r.holds {
        format!(
            "holds {:.2} N (loop +{:.2} mm)",
            r.max_force,
            r.growth * 1e3
        )
    } else {
        format!(
            "slips at {:.2} N of {:.2} N (loop +{:.2} mm)",
            r.peak_force,
            r.max_force,
            r.growth * 1e3
        )
    }
}

/// One CSV row of [`SUMMARY_HEADER`].
pub fn summary_row(file: &str, m: &Metrics) -> String {
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.3}"));
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    format!(
        "{},{},{},{:.3},{:.5},{:.4},{:.2},{},{},{},{},{},{:.4},{:.4},{:.4},{},{},{},{:.1},{},{},{},{},{}",
        q(file),
        q(&m.scene),
        m.complete,
        m.duration,
        m.path_length,
        m.economy_of_motion,
        m.normalized_jerk,
        opt(m.entry_error_mm),
        opt(m.exit_error_mm),
        m.punctures,
        m.repunctures,
        m.needle_drops,
        m.max_tissue_force,
        m.mean_tissue_force,
        m.max_tension,
        m.suture_broken,
        q(m.knot.as_deref().unwrap_or("")),
        opt(m.final_gap_mm),
        m.score,
        q(&describe_throws(&m.knot_throws)),
        opt(m.knot_gap_mm),
        m.knot_security
            .map_or(String::new(), |r| r.holds.to_string()),
        opt(m.knot_security.map(|r| r.peak_force)),
        opt(m.knot_security.map(|r| r.growth * 1e3)),
    )
}
