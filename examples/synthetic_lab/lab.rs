//! The synthetic skills lab (issue #24): five "expert" recordings and three trainees × five
//! attempts of the interrupted stitch, of differing quality. Shared by the example
//! (`cargo run --release --example synthetic_lab -- DIR`) and tests/assess_lab.rs.
//!
//! **These recordings are synthetic, not simulated**: each is written through
//! `session::format` with the real scene's text and header (trainee, task, start time) and a
//! trajectory and events made here, so a lab of 20 sessions costs milliseconds instead of 20
//! physics runs. Their state digests are not the physics' (they carry none), so replay and
//! the knot analysis refuse them: assess them with `--no-knot`. One quality number q per
//! attempt (0 expert-like, 1 poor) sets everything a metric reads:
//!
//! - time: the attempt lasts 2 (1 + 0.5 q) s of 1 kHz steps;
//! - the instrument's path: minimum-jerk segments start → entry mark → exit mark → pull-up,
//!   plus a tremor of amplitude 0.1 + 2 q mm at 7 Hz on two axes (path length, jerk, economy);
//! - off-mark bites: the first skin entry 0.3 + 2.5 q mm and exit 0.25 + 2 q mm from their
//!   marks;
//! - force: the tissue force rises to 1.0 + 1.5 q N while the needle is in the skin;
//! - a re-puncture when q > 0.8.
//!
//! The experts' q differ a little (0.02 to 0.10) so their spread makes the benchmark's SD.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use suture::math::{Quat, Vec3};
use suture::session::format::{
    End, EventRecord, Header, Recording, StepRecord, ToolHeader, encode,
};
use suture::sim::ToolTarget;
use suture::sim::suturing::{Event, EventKind};
use suture::tissue::Face;

/// The scene the lab's sessions name (its text is recorded).
pub const SCENE: &str = "scenes/interrupted_stitch.toml";

/// The experts' quality, one per expert session.
pub const EXPERTS: [f64; 5] = [0.02, 0.06, 0.10, 0.04, 0.08];

/// Each trainee's quality per attempt, in order.
pub const TRAINEES: [(&str, [f64; 5]); 3] = [
    // Improves steadily: from attempt 3 on expert-like.
    ("trainee-a", [0.70, 0.45, 0.05, 0.04, 0.06]),
    // Passes attempt 2, slips on 3, then passes 4 and 5.
    ("trainee-b", [0.90, 0.05, 0.50, 0.06, 0.03]),
    // Improves but not to the experts' level.
    ("trainee-c", [1.00, 0.85, 0.70, 0.55, 0.40]),
];

/// 2026-11-02 09:00 UTC [s since the Unix epoch]: the lab's first day.
pub const FIRST_DAY: f64 = 1_793_610_000.0;

/// The physics step of the recordings [s].
pub const DT: f64 = 1e-3;

/// Minimum-jerk blend 0 → 1 over s in [0, 1] (Flash & Hogan 1985).
fn min_jerk(s: f64) -> f64 {
    let s = s.clamp(0.0, 1.0);
    s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)
}

/// One session of quality `q` by `trainee` started at `started` [s since the epoch].
pub fn recording(trainee: &str, q: f64, started: f64, scene_text: &str) -> Recording {
    let duration = 2.0 * (1.0 + 0.5 * q);
    let n = (duration / DT).round() as u64;
    // Entry and exit marks 4 mm either side of the incision (x = 0), the start above-left,
    // the pull-up above-right.
    let pts = [
        Vec3::new(-0.03, 0.03, 0.0),
        Vec3::new(-0.004, 0.0, 0.0),
        Vec3::new(0.004, 0.0, 0.0),
        Vec3::new(0.03, 0.04, 0.0),
    ];
    // The segments' share of the time.
    let bounds = [0.0, 0.35, 0.65, 1.0];
    let tremor = (0.1 + 2.0 * q) * 1e-3;
    let at = |t: f64| -> Vec3 {
        let u = (t / duration).clamp(0.0, 1.0);
        let k = (0..3).find(|&k| u <= bounds[k + 1]).unwrap_or(2);
        let s = (u - bounds[k]) / (bounds[k + 1] - bounds[k]);
        let base = pts[k] + (pts[k + 1] - pts[k]) * min_jerk(s);
        let w = 2.0 * std::f64::consts::PI * 7.0 * t;
        base + Vec3::new(tremor * w.sin(), 0.0, tremor * (1.3 * w).cos()) * (u * (1.0 - u) * 4.0)
    };
    let (t_in, t_out) = (bounds[1] * duration, bounds[2] * duration);
    let peak = 1.0 + 1.5 * q;
    let steps: Vec<StepRecord> = (1..=n)
        .map(|k| {
            let t = k as f64 * DT;
            let x = at(t);
            let inside = t >= t_in && t <= t_out;
            let tissue_force = if inside {
                peak * (std::f64::consts::PI * (t - t_in) / (t_out - t_in)).sin()
            } else {
                0.0
            };
            StepRecord {
                step: k,
                time: t,
                target: Some(ToolTarget {
                    t,
                    position: x,
                    rotation: Quat::identity(),
                    ..Default::default()
                }),
                tool_position: x,
                tip_position: x,
                tissue_force,
                tension: if t > t_out { 0.3 } else { 0.0 },
                gap: if t > t_out { 0.0002 } else { 0.003 },
                grasped: true,
                converged: true,
                ..Default::default()
            }
        })
        .collect();
    let step_at = |t: f64| (t / DT).round() as u64;
    let ev = |t: f64, kind| EventRecord {
        step: step_at(t),
        event: Event { time: t, kind },
    };
    let mut events = vec![
        ev(
            t_in,
            EventKind::Puncture {
                face: Face::Top,
                position: pts[1],
                angle: 0.2 + 0.3 * q,
                force: peak,
                target_error: Some((0.3 + 2.5 * q) * 1e-3),
                repeat: false,
            },
        ),
        ev(
            t_out,
            EventKind::Exit {
                face: Face::Top,
                position: pts[2],
                target_error: Some((0.25 + 2.0 * q) * 1e-3),
            },
        ),
    ];
    if q > 0.8 {
        events.insert(
            1,
            ev(
                0.5 * (t_in + t_out),
                EventKind::Repuncture {
                    position: Vec3::zeros(),
                    force: peak,
                },
            ),
        );
    }
    events.push(ev(
        t_out + 0.1 * duration,
        EventKind::SutureThrough { position: pts[2] },
    ));
    Recording {
        header: Header {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            scene_path: SCENE.to_string(),
            scene_text: scene_text.to_string(),
            dt: DT,
            haptic_period: DT,
            digest_every: 100,
            started_unix: started,
            trainee: trainee.to_string(),
            task: "interrupted stitch".to_string(),
            tools: vec![ToolHeader {
                device: "synthetic (examples/synthetic_lab)".to_string(),
                ..Default::default()
            }],
            ..Default::default()
        },
        steps,
        events,
        end: Some(End {
            steps: n,
            wall: duration,
            note: "synthetic".to_string(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A file of the lab: its path, trainee, attempt (1-based) and whether it is an expert's.
pub struct LabFile {
    /// The recording.
    pub path: PathBuf,
    /// Who.
    pub trainee: String,
    /// Which attempt (experts: their session's number).
    pub attempt: usize,
    /// An expert's session.
    pub expert: bool,
}

/// Write the lab under `dir`: `experts/expert-K.surec` and `trainees/ID-K.surec`. The
/// experts' sessions are on the first day, each trainee's attempt K on day K (09:00 plus
/// the trainee's index in hours).
pub fn write_lab(dir: &Path, scene_text: &str) -> std::io::Result<Vec<LabFile>> {
    let mut out = Vec::new();
    std::fs::create_dir_all(dir.join("experts"))?;
    std::fs::create_dir_all(dir.join("trainees"))?;
    for (k, q) in EXPERTS.iter().enumerate() {
        let who = format!("expert-{}", k + 1);
        let path = dir.join("experts").join(format!("{who}.surec"));
        let rec = recording(&who, *q, FIRST_DAY + 600.0 * k as f64, scene_text);
        std::fs::write(&path, encode(&rec))?;
        out.push(LabFile {
            path,
            trainee: who,
            attempt: k + 1,
            expert: true,
        });
    }
    for (i, (who, qs)) in TRAINEES.iter().enumerate() {
        for (k, q) in qs.iter().enumerate() {
            let path = dir.join("trainees").join(format!("{who}-{}.surec", k + 1));
            let started = FIRST_DAY + 86_400.0 * (k + 1) as f64 + 3_600.0 * i as f64;
            std::fs::write(&path, encode(&recording(who, *q, started, scene_text)))?;
            out.push(LabFile {
                path,
                trainee: who.to_string(),
                attempt: k + 1,
                expert: false,
            });
        }
    }
    Ok(out)
}
