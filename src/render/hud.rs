//! The HUD: the loops' rates, jitter (or the replay's position), a line per hand (device, force,
//! grasp, whether the mouse drives it), the suturing figures, the knot the live analysis sees
//! (its name and throws), and a line of key help at the bottom.

use super::{ReplayControl, Visuals};
use crate::sim::snapshot::Snapshot;
use kiss3d::prelude::*;
use std::sync::Arc;

/// HUD text colour.
const HUD: Color = Color::new(0.95, 0.95, 0.95, 1.0);

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
    for (k, line) in hud_lines(snap, visuals, exaggeration, replay, driven)
        .iter()
        .enumerate()
    {
        window.draw_text(
            line,
            Vec2::new(12.0, 10.0 + 30.0 * k as f32),
            28.0,
            font,
            HUD,
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
        Help::Device => "drag orbit | wheel zoom | the device drives the needle",
    };
    let y = window.size().y as f32 - 40.0;
    window.draw_text(help, Vec2::new(12.0, y), 26.0, font, HUD);
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

/// The HUD's lines: time and step, the loops' rates (or the replay's position and speed),
/// the force, the suturing figures and the last event, faults and the grasp.
fn hud_lines(
    snap: &Snapshot,
    visuals: &Visuals,
    exaggeration: f64,
    replay: Option<&ReplayControl>,
    driven: Option<usize>,
) -> Vec<String> {
    let f = &snap.figures;
    let mut l = vec![format!("t {:.3} s   step {}", snap.time, snap.step)];
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
        l.push(format!(
            "{} hand ({}): {force}   {}   faults {}{}",
            t.hand.name(),
            dev.name,
            if t.grasped { "held" } else { "released" },
            t.device_faults,
            if driven == Some(i) { "   <- MOUSE" } else { "" }
        ));
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
    l
}
