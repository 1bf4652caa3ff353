//! The HUD: the loops' rates, jitter (or the replay's position), a line per hand (device, force,
//! grasp, whether the mouse drives it) and, for an instrument, a line in its colour with its
//! jaws' state and what they hold, the suturing figures, the knot the live analysis sees (its
//! name and throws), and a line of key help at the bottom.

use super::{ReplayControl, Visuals};
use crate::sim::instrument::{Holding, InstrumentKind, InstrumentState, Jaws};
use crate::sim::snapshot::Snapshot;
use kiss3d::prelude::*;
use std::sync::Arc;

/// HUD text colour, and its shadow's.
const HUD: Color = Color::new(0.95, 0.95, 0.95, 1.0);
const SHADOW: Color = Color::new(0.0, 0.0, 0.0, 0.85);

/// What drives the needle, for the help line.
pub(super) enum Help {
    /// Replaying a recording.
    Replay,
    /// The mouse is a device, for `hands` tools (Tab switches between them); it drives the
    /// `driven`-th.
    Mouse {
        /// How many tools the mouse drives.
        hands: usize,
        /// Which of the snapshot's tools it drives now.
        driven: Option<usize>,
    },
    /// A real device drives.
    Device,
}

/// Draw the HUD lines for `snap` and the help line.
pub(super) fn draw(
    window: &mut Window,
    font: &Arc<Font>,
    snap: &Snapshot,
    visuals: &Visuals,
    exaggeration: f64,
    replay: Option<&ReplayControl>,
    help: Help,
) {
    let driven = match help {
        Help::Mouse { driven, .. } => driven,
        _ => None,
    };
    for (k, (line, colour)) in hud_lines(snap, visuals, exaggeration, replay, driven)
        .iter()
        .enumerate()
    {
        shadowed(
            window,
            line,
            Vec2::new(12.0, 10.0 + 25.0 * k as f32),
            23.0,
            font,
            *colour,
        );
    }
    let help = match help {
        Help::Replay => {
            "space pause | up/down speed | left/right -/+5 s | home restart | drag orbit | wheel zoom"
        }
        Help::Mouse { hands, .. } if hands > 1 => {
            "TAB switch hand | left-drag move | wheel depth | right-drag rotate | G grasp/release | ctrl+drag orbit | ctrl+wheel zoom"
        }
        Help::Mouse { .. } => {
            "left-drag move | wheel depth | right-drag rotate | G grasp/release | ctrl+drag orbit | ctrl+wheel zoom"
        }
        Help::Device if snap.tools.iter().flatten().any(|t| t.instrument.is_some()) => {
            "drag orbit | wheel zoom | the devices drive the instruments (button 0: the jaws)"
        }
        Help::Device => "drag orbit | wheel zoom | the device drives the needle",
    };
    let y = window.size().y as f32 - 34.0;
    shadowed(window, help, Vec2::new(12.0, y), 22.0, font, HUD);
}

/// Text with a dark shadow under it, legible on the pink pad and the instruments as on the
/// background.
fn shadowed(window: &mut Window, text: &str, at: Vec2, size: f32, font: &Arc<Font>, c: Color) {
    window.draw_text(text, at + Vec2::new(2.0, 2.0), size, font, SHADOW);
    window.draw_text(text, at, size, font, c);
}

/// Before the first snapshot.
pub(super) fn draw_waiting(window: &mut Window, font: &Arc<Font>) {
    window.draw_text(
        "waiting for physics...",
        Vec2::new(12.0, 10.0),
        30.0,
        font,
        HUD,
    );
}

/// What an instrument's line says: `right needle driver: jaws closed, holds the suture at
/// node 17 (24.4 mm from its tail)`; `x` is the held rod's nodes [m].
fn instrument_line(hand: &str, ins: &InstrumentState, x: &[crate::math::Vec3]) -> String {
    let kind = match ins.kind {
        InstrumentKind::NeedleDriver => "needle driver",
        InstrumentKind::Forceps => "forceps",
    };
    let jaws = match ins.jaws() {
        Jaws::Closed => "closed".to_string(),
        j => format!("{} ({:.0} deg)", j.name(), ins.opening.to_degrees()),
    };
    let holds = match ins.holding {
        Holding::Nothing => "nothing".to_string(),
        Holding::Needle => "the needle".to_string(),
        Holding::Suture { segment, s } => {
            let seg = |e: usize| match (x.get(e), x.get(e + 1)) {
                (Some(a), Some(b)) => (b - a).norm(),
                _ => 0.0,
            };
            let along: f64 = (0..segment).map(seg).sum::<f64>() + s * seg(segment);
            format!(
                "the suture at node {} ({:.1} mm from its tail)",
                segment + usize::from(s >= 0.5),
                along * 1e3
            )
        }
    };
    format!("   {hand} {kind}: jaws {jaws}, holds {holds}")
}

/// The HUD's lines and their colours: time and step, the loops' rates (or the replay's
/// position and speed), a line per hand (its force and faults; the grasp, or under it its
/// instrument's jaws and hold in the instrument's colour), the suturing figures and the last
/// event, the knot, faults.
fn hud_lines(
    snap: &Snapshot,
    visuals: &Visuals,
    exaggeration: f64,
    replay: Option<&ReplayControl>,
    driven: Option<usize>,
) -> Vec<(String, Color)> {
    let f = &snap.figures;
    let mut l = Lines(Vec::new());
    l.push(format!("t {:.3} s   step {}", snap.time, snap.step));
    match replay {
        Some(r) => l.push(format!(
            "REPLAY {:.2} / {:.2} s   speed x{}{}",
            snap.time,
            r.duration,
            r.speed,
            if r.paused { "   PAUSED" } else { "" }
        )),
        None => {
            l.push(format!(
                "haptic {:.1} Hz   period p50 {:.0} us  p99 {:.0} us  max {:.0} us   overruns {}",
                f.haptic_rate, f.haptic_p50_us, f.haptic_p99_us, f.haptic_max_us, f.haptic_overruns
            ));
            l.push(format!(
                "physics {:.1} Hz   step {:.0}/{:.0} us mean/max   failed {}  unconverged {}",
                f.physics_rate, f.step_mean_us, f.step_max_us, f.failed_steps, f.unconverged_steps
            ));
        }
    }
    // A line per hand: its device, the force, the grasp, and whether the mouse drives it.
    let mut any = false;
    for (i, t) in snap.tools.iter().enumerate() {
        let Some(t) = t else { continue };
        any = true;
        let dev = visuals.devices.get(i).cloned().unwrap_or_default();
        let force = if dev.force_feedback {
            format!("force on hand {:.3} N", t.hand_force.norm())
        } else {
            format!(
                "coupling force {:.3} N (no force feedback: the red arrow)",
                t.force.norm()
            )
        };
        // An instrument is always held (its jaws are on the next line).
        let grasp = match (&t.instrument, t.grasped) {
            (Some(_), _) => "",
            (None, true) => "   held",
            (None, false) => "   released",
        };
        l.push(format!(
            "{} hand ({}): {force}{grasp}   faults {}{}",
            t.hand.name(),
            dev.name,
            t.device_faults,
            if driven == Some(i) { "   <- MOUSE" } else { "" }
        ));
        if let Some(ins) = &t.instrument {
            let x = snap.rods.get(t.rod).map_or(&[][..], |r| &r.positions[..]);
            let colour = super::scene::instrument_colours(t.hand).0;
            l.0.push((instrument_line(t.hand.name(), ins, x), colour));
        }
    }
    if !any {
        l.push("no tool".to_string());
    }
    if let Some(su) = &snap.suturing {
        l.push(format!(
            "incision {:.2} mm   suture tension {:.2} N{}   tip on skin {:.2} N   events {}",
            su.gap * 1e3,
            su.tension,
            if su.broken { " (BROKEN)" } else { "" },
            su.tip_force,
            su.events
        ));
        if let Some(e) = &su.last_event {
            l.push(format!("{:.2} s: {}", e.time, e.kind.describe()));
        }
    }
    if let Some(k) = &snap.knot {
        l.push(format!("knot: {}   (at {:.2} s)", k.describe(), k.time));
    }
    l.push(format!(
        "device faults {}   physics stalls {}   tube x{:.0}",
        f.device_faults, f.stalls, exaggeration
    ));
    l.0
}

/// HUD lines, white unless given a colour.
struct Lines(Vec<(String, Color)>);

impl Lines {
    fn push(&mut self, line: String) {
        self.0.push((line, HUD));
    }
}
