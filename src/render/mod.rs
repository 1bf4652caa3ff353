//! The viewer (cargo feature `viewer`): kiss3d 0.47 (wgpu, glam f32) on the main thread. It
//! draws the newest Snapshot (sim::snapshot) — each rod as a shaded tube with a stripe along its
//! material direction d1 (so twist shows as a helix), the curved needle, the tissue pad, each
//! instrument's jaws and shaft (the contact capsules, a colour per hand, a bead on the suture
//! point its jaws hold), the device's "ghost" (needle or instrument) and the coupling spring,
//! the force arrow — and a HUD with the loops' rates, jitter and force, and each instrument's
//! jaws and what they hold. It owns no physics: the simulation's f64 state is
//! converted to f32 here, at the render boundary. With the mouse as the device it turns drags
//! into world-frame increments (device::MouseInput): left-drag moves the needle in the view
//! plane, the wheel moves it in depth, right-drag rotates it, G grasps and releases, Tab switches
//! the hand it drives when it drives two tools (device::MouseHands; the other tool holds); the
//! camera orbits with Ctrl+drag and zooms with Ctrl+wheel (plain drags orbit when only real
//! devices drive).
//!
//! Split by role: `scene` (the scene graph and the lines drawn each frame), `hud` (text),
//! `input` (camera, mouse, replay keys), `screenshot` (PNG and its JSON sidecar); this file
//! holds the public types and the frame loop.

mod hud;
mod input;
mod scene;
mod screenshot;

pub use scene::{CameraPose, initial_camera};

use crate::device::MouseHands;
use crate::math::Vec3 as V3;
use crate::sim::snapshot::SnapshotRx;
use crate::sim::tool::{NeedleShape, TissuePad};
use kiss3d::prelude::*;
use ringbuf::HeapProd;
use std::path::PathBuf;
use std::time::Instant;

/// What to draw besides the rods.
pub struct Visuals {
    /// The needle on the held end.
    pub needle: Option<NeedleShape>,
    /// The tissue pad.
    pub tissue: Option<TissuePad>,
    /// The scene's camera at the start (its `[view]`); None: framing the rods and the pad.
    pub view: Option<CameraPose>,
    /// Window title.
    pub title: String,
    /// Each tool's device, in the order of the snapshots' tools (`devices[i]` drives
    /// `Snapshot::tools[i]`), for the HUD.
    pub devices: Vec<DeviceVisual>,
}

/// A device as the HUD names it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceVisual {
    /// Its name.
    pub name: String,
    /// Whether it renders force (else the HUD says the force is shown only).
    pub force_feedback: bool,
}

/// Viewer settings.
pub struct ViewerOptions {
    /// Window size [px].
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Write the first frame whose snapshot time ≥ `screenshot_at` [s] to this PNG (with a
    /// `.json` sidecar of the projected rod centerlines), then close.
    pub screenshot: Option<PathBuf>,
    /// See `screenshot`.
    pub screenshot_at: f64,
    /// Close after this many wall seconds.
    pub duration: Option<f64>,
    /// Replaying a recording: the player's command ring and the recording's length [s]
    /// (keys: space pause, up/down speed, left/right seek 5 s, home restart).
    pub replay: Option<ReplayControl>,
    /// The live knot analysis' statuses (runtime::analysis), shown in the HUD; None in replay,
    /// where the player puts the recording's knot on each snapshot.
    pub knots: Option<crossbeam::channel::Receiver<crate::sim::snapshot::KnotStatus>>,
}

/// The viewer's end of a replay (runtime::replay).
pub struct ReplayControl {
    /// Commands for the player.
    pub commands: HeapProd<crate::runtime::replay::ReplayCommand>,
    /// The recording's length [s].
    pub duration: f64,
    /// Paused and speed as last sent (the HUD shows them).
    pub paused: bool,
    /// See `paused`.
    pub speed: f64,
}

/// How the viewer ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewerOutcome {
    /// Frames rendered.
    pub frames: u64,
    /// Whether the user closed the window.
    pub closed_by_user: bool,
}

/// A viewer failure.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The screenshot or its sidecar could not be written.
    #[error("cannot write the screenshot {path}: {message}")]
    Screenshot {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The window closed before the screenshot's simulated time was reached.
    #[error("the window closed before the screenshot at t = {0} s")]
    NoScreenshot(f64),
}

/// A world point or vector as the viewer's f32 (the render boundary).
fn f32v(v: &V3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

/// Run the viewer on the calling (main) thread until the window closes, `duration` passes or
/// the screenshot is written.
pub fn run(
    opts: &mut ViewerOptions,
    visuals: &Visuals,
    snaps: &mut SnapshotRx,
    mouse: Option<MouseHands>,
) -> Result<ViewerOutcome, RenderError> {
    pollster::block_on(run_async(opts, visuals, snaps, mouse))
}

/// The frame loop: make the camera and the scene's nodes from the first snapshot, then each
/// frame take input, move the nodes to the newest snapshot, draw the lines and the HUD,
/// render, and stop when the window closes, the screenshot is written or `duration` passes.
async fn run_async(
    opts: &mut ViewerOptions,
    visuals: &Visuals,
    snaps: &mut SnapshotRx,
    mut mouse: Option<MouseHands>,
) -> Result<ViewerOutcome, RenderError> {
    let mut window = Window::new_with_size(&visuals.title, opts.width, opts.height).await;
    let mut view = scene::View::new(&mut window);
    let font = Font::default();
    let started = Instant::now();
    let mut frames = 0u64;
    let mut camera: Option<OrbitCamera3d> = None;
    let mut drive = input::MouseDrive::default();
    let mut knot = None;
    loop {
        // A screenshot run draws nothing before the shot's moment: the frame written is then
        // the first snapshot at or after `screenshot_at` (not whichever came after a slow
        // frame: a software-rendered frame under Xvfb takes seconds, the first far more), and
        // the physics keeps the cores to itself until then (software rendering on a 2-core
        // machine starved it of real time). The camera is still made from the first snapshot.
        if opts.screenshot.is_some() {
            if let Some(rx) = &opts.knots {
                knot = rx.try_iter().last().or(knot);
            }
            let newest = snaps.latest();
            if let (Some(s), None) = (newest, &camera) {
                camera = Some(input::camera(s, visuals, mouse.is_some()));
                view.build(s, visuals);
            }
            if newest.is_none_or(|s| s.time < opts.screenshot_at) {
                if opts
                    .duration
                    .is_some_and(|d| started.elapsed().as_secs_f64() >= d)
                {
                    return Err(RenderError::NoScreenshot(opts.screenshot_at));
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
        }
        let mut snap = snaps.latest().cloned();
        // The newest knot the live analysis reported, on the viewer's copy of the snapshot.
        if let Some(rx) = &opts.knots {
            knot = rx.try_iter().last().or(knot);
        }
        if let Some(s) = snap.as_mut()
            && s.knot.is_none()
        {
            s.knot = knot;
        }
        if let (Some(s), None) = (&snap, &camera) {
            camera = Some(input::camera(s, visuals, mouse.is_some()));
            view.build(s, visuals);
        }
        if let (Some(tx), Some(cam)) = (mouse.as_mut(), camera.as_ref()) {
            drive.handle(&window, cam, tx);
        }
        if let Some(r) = opts.replay.as_mut() {
            input::replay_keys(&window, r, snap.as_ref().map_or(0.0, |s| s.time));
        }
        match (&snap, snap.as_ref().and_then(|s| view.update(s, visuals))) {
            (Some(s), Some(exaggeration)) => {
                scene::draw_lines(&mut window, s, visuals);
                let help = if opts.replay.is_some() {
                    hud::Help::Replay
                } else if let Some(m) = &mouse {
                    hud::Help::Mouse {
                        hands: m.len(),
                        driven: m.driven().map(|(i, _)| i),
                    }
                } else {
                    hud::Help::Device
                };
                hud::draw(
                    &mut window,
                    &font,
                    s,
                    visuals,
                    exaggeration,
                    opts.replay.as_ref(),
                    help,
                );
            }
            _ => hud::draw_waiting(&mut window, &font),
        }
        let open = match camera.as_mut() {
            Some(c) => window.render_3d(&mut view.root, c).await,
            None => {
                let mut c = OrbitCamera3d::default();
                window.render_3d(&mut view.root, &mut c).await
            }
        };
        frames += 1;
        if !open {
            if opts.screenshot.is_some() {
                return Err(RenderError::NoScreenshot(opts.screenshot_at));
            }
            return Ok(ViewerOutcome {
                frames,
                closed_by_user: true,
            });
        }
        if let (Some(path), Some(s), Some(cam)) = (&opts.screenshot, &snap, camera.as_ref())
            && s.time >= opts.screenshot_at
        {
            screenshot::write(&window, path, cam, s, visuals)?;
            return Ok(ViewerOutcome {
                frames,
                closed_by_user: false,
            });
        }
        if opts
            .duration
            .is_some_and(|d| started.elapsed().as_secs_f64() >= d)
        {
            window.close();
            return Ok(ViewerOutcome {
                frames,
                closed_by_user: false,
            });
        }
    }
}
