//! The viewer (cargo feature `viewer`): kiss3d 0.47 (wgpu, glam f32) on the main thread. It
//! draws the newest Snapshot (sim::snapshot) — each rod as a shaded tube with a stripe along its
//! material direction d1 (so twist shows as a helix), the curved needle on the held end, the
//! tissue pad, the device's "ghost" needle and the coupling spring, the force arrow — and a HUD
//! with the loops' rates, jitter and force. It owns no physics: the simulation's f64 state is
//! converted to f32 here, at the render boundary. With the mouse as the device it turns drags
//! into world-frame increments (device::MouseInput): left-drag moves the needle in the view
//! plane, the wheel moves it in depth, right-drag rotates it, G grasps and releases; the camera
//! orbits with Ctrl+drag and zooms with Ctrl+wheel (plain drags orbit when a real device drives).

use crate::device::MouseInput;
use crate::math::Vec3 as V3;
use crate::sim::snapshot::{Snapshot, SnapshotRx};
use crate::sim::tool::{NeedleShape, TissuePad};
use kiss3d::prelude::*;
use ringbuf::HeapProd;
use ringbuf::traits::Producer;
use std::path::PathBuf;
use std::time::Instant;

/// What to draw besides the rods.
pub struct Visuals {
    /// The needle on the held end.
    pub needle: Option<NeedleShape>,
    /// The tissue pad.
    pub tissue: Option<TissuePad>,
    /// Window title.
    pub title: String,
    /// Device name for the HUD.
    pub device: String,
    /// Whether the device renders force (else the HUD says the force is shown only).
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

/// Suture colour (nylon blue-violet), stripe, needle, tissue, force.
const SUTURE: Color = Color::new(0.25, 0.2, 0.85, 1.0);
const STRIPE: Color = Color::new(0.95, 0.8, 0.1, 1.0);
const NEEDLE: Color = Color::new(0.78, 0.8, 0.84, 1.0);
const TISSUE: Color = Color::new(0.93, 0.62, 0.58, 1.0);
const GHOST: Color = Color::new(0.6, 0.6, 0.6, 1.0);
const FORCE: Color = Color::new(0.95, 0.1, 0.1, 1.0);
const HUD: Color = Color::new(0.95, 0.95, 0.95, 1.0);

/// Needle drawn with this many cylinders.
const NEEDLE_PIECES: usize = 16;
/// Force arrow scale [m/N] and cap [m].
const ARROW_PER_NEWTON: f64 = 0.02;
const ARROW_MAX: f64 = 0.06;

fn f32v(v: &V3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

/// Display radius of a rod: the true radius, or 0.8 % of the scene size if that is larger
/// (a 0.15 mm suture in a 12 cm scene is sub-pixel). Returns (radius, exaggeration).
fn display_radius(radius: f64, scene_size: f64) -> (f64, f64) {
    let r = radius.max(0.008 * scene_size);
    (r, r / radius)
}

/// Place a unit cylinder (radius 0.5, height 1, along +Y) between `a` and `b` with radius `r`.
fn place(node: &mut SceneNode3d, a: &V3, b: &V3, r: f64) {
    let d = b - a;
    let len = d.norm();
    if !(len.is_finite() && len > 0.0) {
        node.set_visible(false);
        return;
    }
    node.set_visible(true);
    node.set_position(f32v(&((a + b) * 0.5)));
    node.set_rotation(Quat::from_rotation_arc(Vec3::Y, f32v(&(d / len))));
    node.set_local_scale(2.0 * r as f32, len as f32, 2.0 * r as f32);
}

/// The camera pose the viewer starts with (and keeps until a screenshot is taken).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    /// Eye and target [m].
    pub eye: V3,
    /// See `eye`.
    pub at: V3,
}

/// Frame the rods and the tissue from above-front (35° elevation, 20° azimuth), so that
/// their bounding sphere fits a 45° field of view.
pub fn initial_camera(snapshot: &Snapshot, visuals: &Visuals) -> CameraPose {
    let mut lo = V3::repeat(f64::INFINITY);
    let mut hi = V3::repeat(f64::NEG_INFINITY);
    for p in snapshot.rods.iter().flat_map(|r| r.positions.iter()) {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    if let Some(t) = &visuals.tissue {
        lo = lo.inf(&(t.center - t.size * 0.5));
        hi = hi.sup(&(t.center + t.size * 0.5));
    }
    if !lo.iter().all(|v| v.is_finite()) {
        lo = V3::repeat(-0.05);
        hi = V3::repeat(0.05);
    }
    let at = (lo + hi) * 0.5;
    let radius = ((hi - lo).norm() * 0.5).max(1e-3);
    let (el, az) = (35f64.to_radians(), 20f64.to_radians());
    let dir = V3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos());
    let dist = radius / (std::f64::consts::PI / 8.0).sin() * 1.05;
    CameraPose {
        eye: at + dir * dist,
        at,
    }
}

/// Scene graph nodes, made once from the first snapshot's shape.
struct Nodes {
    tubes: Vec<Vec<SceneNode3d>>,
    stripes: Vec<Vec<SceneNode3d>>,
    needle: Vec<SceneNode3d>,
}

fn build(scene: &mut SceneNode3d, snap: &Snapshot, visuals: &Visuals, size: f64) -> Nodes {
    let mut tubes = Vec::new();
    let mut stripes = Vec::new();
    for r in &snap.rods {
        let segs = r.positions.len().saturating_sub(1);
        tubes.push(
            (0..segs)
                .map(|_| {
                    let mut c = scene.add_cylinder(0.5, 1.0);
                    c.set_color(SUTURE);
                    c
                })
                .collect(),
        );
        stripes.push(
            (0..segs)
                .map(|_| {
                    let mut c = scene.add_cylinder(0.5, 1.0);
                    c.set_color(STRIPE);
                    c
                })
                .collect(),
        );
    }
    let needle = if visuals.needle.is_some() {
        (0..NEEDLE_PIECES)
            .map(|_| {
                let mut c = scene.add_cylinder(0.5, 1.0);
                c.set_color(NEEDLE);
                c
            })
            .collect()
    } else {
        Vec::new()
    };
    match (&visuals.tissue, &snap.suturing) {
        (Some(t), Some(su)) => {
            // The incised pad: one block per half (from the rest lattice), the skin drawn
            // over it as the deformed lattice each frame (draw_lines).
            let n0 = su.grid[0].0 * su.grid[0].1;
            for half in [&su.top[..n0], &su.top[n0..]] {
                let (lo, hi) = half
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |m, p| {
                        (m.0.min(p.x), m.1.max(p.x))
                    });
                let mut pad = scene.add_cube(1.0, 1.0, 1.0);
                let h = t.size.y - 2e-4;
                pad.set_local_scale((hi - lo) as f32, h as f32, t.size.z as f32);
                pad.set_position(f32v(&V3::new(
                    0.5 * (lo + hi),
                    t.center.y - 1e-4,
                    t.center.z,
                )));
                pad.set_color(TISSUE);
            }
        }
        (Some(t), None) => {
            let mut pad = scene.add_cube(1.0, 1.0, 1.0);
            pad.set_local_scale(t.size.x as f32, t.size.y as f32, t.size.z as f32);
            pad.set_position(f32v(&t.center));
            pad.set_color(TISSUE);
        }
        _ => {}
    }
    let _ = size;
    Nodes {
        tubes,
        stripes,
        needle,
    }
}

fn scene_size(snap: &Snapshot, visuals: &Visuals) -> f64 {
    let c = initial_camera(snap, visuals);
    (c.eye - c.at).norm() * (std::f64::consts::PI / 8.0).sin()
}

fn update(nodes: &mut Nodes, snap: &Snapshot, visuals: &Visuals, size: f64) -> f64 {
    let mut exaggeration = 1.0;
    for (k, r) in snap.rods.iter().enumerate() {
        let (dr, ex) = display_radius(r.radius, size);
        exaggeration = ex;
        for (e, node) in nodes.tubes[k].iter_mut().enumerate() {
            place(node, &r.positions[e], &r.positions[e + 1], dr);
        }
        for (e, node) in nodes.stripes[k].iter_mut().enumerate() {
            let d1 = r.frames.get(e).map_or(V3::zeros(), |q| q * V3::x());
            let off = d1 * dr * 0.75;
            place(
                node,
                &(r.positions[e] + off),
                &(r.positions[e + 1] + off),
                0.4 * dr,
            );
        }
    }
    if let (Some(n), Some(t)) = (&visuals.needle, &snap.tool) {
        let dr = display_radius(snap.rods.get(t.rod).map_or(1e-4, |r| r.radius), size).0;
        let wr = n.wire_radius.max(0.6 * dr);
        for (k, node) in nodes.needle.iter_mut().enumerate() {
            let u0 = k as f64 / NEEDLE_PIECES as f64;
            let u1 = (k + 1) as f64 / NEEDLE_PIECES as f64;
            place(
                node,
                &n.point(&t.position, &t.rotation, u0),
                &n.point(&t.position, &t.rotation, u1),
                wr,
            );
        }
    } else {
        for node in nodes.needle.iter_mut() {
            node.set_visible(false);
        }
    }
    exaggeration
}

/// Lines drawn each frame: the ghost needle and spring, the force arrow, the incision mark.
fn draw_lines(window: &mut Window, snap: &Snapshot, visuals: &Visuals) {
    if let Some(su) = &snap.suturing {
        // The skin: the deformed top lattice of each half.
        let skin = Color::new(0.62, 0.32, 0.30, 1.0);
        let mut off = 0;
        for &(nx, nz) in &su.grid {
            let at = |i: usize, j: usize| su.top[off + j * nx + i] + V3::new(0.0, 1e-4, 0.0);
            for j in 0..nz {
                for i in 0..nx {
                    if i + 1 < nx {
                        window.draw_line(f32v(&at(i, j)), f32v(&at(i + 1, j)), skin, 1.0, false);
                    }
                    if j + 1 < nz {
                        window.draw_line(f32v(&at(i, j)), f32v(&at(i, j + 1)), skin, 1.0, false);
                    }
                }
            }
            off += nx * nz;
        }
        // Targets (entry green, exit blue) and holes (yellow: suture through, white: needle).
        let cross = |window: &mut Window, p: &V3, r: f64, c: Color| {
            let lift = V3::new(0.0, 2e-4, 0.0);
            for d in [V3::new(r, 0.0, r), V3::new(r, 0.0, -r)] {
                window.draw_line(f32v(&(p + lift - d)), f32v(&(p + lift + d)), c, 3.0, false);
            }
        };
        for (p, entry) in &su.targets {
            let c = if *entry {
                Color::new(0.1, 0.8, 0.2, 1.0)
            } else {
                Color::new(0.2, 0.4, 1.0, 1.0)
            };
            cross(window, p, 1.2e-3, c);
        }
        for (p, suture) in &su.holes {
            let c = if *suture {
                Color::new(1.0, 0.85, 0.1, 1.0)
            } else {
                Color::new(1.0, 1.0, 1.0, 1.0)
            };
            cross(window, p, 1.0e-3, c);
        }
    } else if let Some(t) = &visuals.tissue {
        let top = t.center.y + 0.5 * t.size.y + 1e-4;
        // The incision runs across the pad (along z), as a stitch crosses it.
        let a = V3::new(t.center.x, top, t.center.z - 0.35 * t.size.z);
        let b = V3::new(t.center.x, top, t.center.z + 0.35 * t.size.z);
        window.draw_line(
            f32v(&a),
            f32v(&b),
            Color::new(0.45, 0.1, 0.1, 1.0),
            3.0,
            false,
        );
    }
    let Some(tool) = &snap.tool else { return };
    if let Some(n) = &visuals.needle {
        let mut prev = n.point(&tool.target, &tool.target_rotation, 0.0);
        for k in 1..=NEEDLE_PIECES {
            let p = n.point(
                &tool.target,
                &tool.target_rotation,
                k as f64 / NEEDLE_PIECES as f64,
            );
            window.draw_line(f32v(&prev), f32v(&p), GHOST, 2.0, false);
            prev = p;
        }
    }
    // The coupling spring from the device pose to the held node.
    window.draw_line(
        f32v(&tool.target),
        f32v(&tool.position),
        Color::new(0.3, 0.9, 0.4, 1.0),
        1.5,
        false,
    );
    // Force on the rod (the hand feels its opposite).
    let f = tool.force;
    let len = (f.norm() * ARROW_PER_NEWTON).min(ARROW_MAX);
    if len > 1e-5 {
        let dir = f / f.norm();
        let tip = tool.position + dir * len;
        window.draw_line(f32v(&tool.position), f32v(&tip), FORCE, 4.0, false);
        let side = crate::math::any_perpendicular(&dir) * (0.2 * len);
        let back = tip - dir * (0.3 * len);
        window.draw_line(f32v(&tip), f32v(&(back + side)), FORCE, 4.0, false);
        window.draw_line(f32v(&tip), f32v(&(back - side)), FORCE, 4.0, false);
    }
}

fn hud_lines(
    snap: &Snapshot,
    visuals: &Visuals,
    exaggeration: f64,
    replay: Option<&ReplayControl>,
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
    let force = snap.tool.map_or(0.0, |t| t.force.norm());
    l.push(if visuals.force_feedback {
        format!(
            "force on hand {:.3} N   ({})",
            f.hand_force.norm(),
            visuals.device
        )
    } else {
        format!(
            "coupling force {force:.3} N   ({}: no force feedback, shown as the red arrow)",
            visuals.device
        )
    });
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
    l.push(format!(
        "device faults {}   physics stalls {}   needle {}   tube x{:.0}",
        f.device_faults,
        f.stalls,
        match snap.tool {
            Some(t) if t.grasped => "held",
            Some(_) => "released",
            None => "-",
        },
        exaggeration
    ));
    l
}

/// Pixel coordinates (x right, y down) in a `size` image of world points, with the camera
/// the viewer drew the frame with.
fn project(camera: &OrbitCamera3d, size: Vec2, points: &[V3]) -> Vec<Option<(f64, f64)>> {
    points
        .iter()
        .map(|p| {
            let q = camera.project(f32v(p), size);
            let (x, y) = (q.x as f64, size.y as f64 - q.y as f64);
            (x.is_finite() && y.is_finite()).then_some((x, y))
        })
        .collect()
}

fn json_points(pts: &[Option<(f64, f64)>]) -> String {
    let items: Vec<String> = pts
        .iter()
        .map(|p| match p {
            Some((x, y)) => format!("[{x:.2},{y:.2}]"),
            None => "null".to_string(),
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// Run the viewer on the calling (main) thread until the window closes, `duration` passes or
/// the screenshot is written.
pub fn run(
    opts: &mut ViewerOptions,
    visuals: &Visuals,
    snaps: &mut SnapshotRx,
    mouse: Option<HeapProd<MouseInput>>,
) -> Result<ViewerOutcome, RenderError> {
    pollster::block_on(run_async(opts, visuals, snaps, mouse))
}

async fn run_async(
    opts: &mut ViewerOptions,
    visuals: &Visuals,
    snaps: &mut SnapshotRx,
    mut mouse: Option<HeapProd<MouseInput>>,
) -> Result<ViewerOutcome, RenderError> {
    let mut window = Window::new_with_size(&visuals.title, opts.width, opts.height).await;
    window.set_background_color(Color::new(0.16, 0.17, 0.19, 1.0));
    window.set_ambient(0.35);
    let mut scene = SceneNode3d::empty();
    let mut light = scene.add_light(Light::point(100.0));
    light.set_position(Vec3::new(0.3, 0.8, 0.5));
    let font = Font::default();
    let started = Instant::now();
    let mut frames = 0u64;
    let mut camera: Option<OrbitCamera3d> = None;
    let mut nodes: Option<Nodes> = None;
    let mut size = 0.1;
    let (mut cursor, mut last_cursor) = (Vec2::ZERO, Vec2::ZERO);
    let (mut moving, mut turning) = (false, false);
    loop {
        let snap = snaps.latest().cloned();
        if let (Some(s), None) = (&snap, &camera) {
            let pose = initial_camera(s, visuals);
            let mut c = OrbitCamera3d::new_with_frustum(
                std::f32::consts::FRAC_PI_4,
                1e-3,
                10.0,
                f32v(&pose.eye),
                f32v(&pose.at),
            );
            if mouse.is_some() {
                c.set_rotate_modifiers(Some(Modifiers::Control));
                c.set_drag_modifiers(Some(Modifiers::Control));
            }
            size = scene_size(s, visuals);
            nodes = Some(build(&mut scene, s, visuals, size));
            camera = Some(c);
        }
        // Mouse input (only when the mouse is the device).
        if let (Some(tx), Some(cam)) = (mouse.as_mut(), camera.as_ref()) {
            let eye = cam.eye();
            let at = cam.at();
            let fwd = (at - eye).normalize();
            let right = fwd.cross(Vec3::Y).normalize();
            let up = right.cross(fwd);
            let h = window.size().y.max(1) as f32;
            let m_per_px = 2.0 * (at - eye).length() * (std::f32::consts::FRAC_PI_8).tan() / h;
            let v = |w: Vec3| V3::new(w.x as f64, w.y as f64, w.z as f64);
            for mut ev in window.events().iter() {
                match ev.value {
                    WindowEvent::MouseButton(b, a, m) if !m.contains(Modifiers::Control) => {
                        let down = a == Action::Press;
                        match b {
                            MouseButton::Button1 => moving = down,
                            MouseButton::Button2 => turning = down,
                            _ => {}
                        }
                        ev.inhibited = true;
                    }
                    WindowEvent::CursorPos(x, y, _) => {
                        cursor = Vec2::new(x as f32, y as f32);
                        let d = cursor - last_cursor;
                        last_cursor = cursor;
                        if moving {
                            let w = (right * d.x - up * d.y) * m_per_px;
                            let _ = tx.try_push(MouseInput {
                                translate: v(w),
                                ..Default::default()
                            });
                            ev.inhibited = true;
                        } else if turning {
                            let w = (up * d.x + right * d.y) * 0.01;
                            let _ = tx.try_push(MouseInput {
                                rotate: v(w),
                                ..Default::default()
                            });
                            ev.inhibited = true;
                        }
                    }
                    WindowEvent::Scroll(_, dy, m) if !m.contains(Modifiers::Control) => {
                        let _ = tx.try_push(MouseInput {
                            translate: v(fwd * (dy as f32 * 0.002)),
                            ..Default::default()
                        });
                        ev.inhibited = true;
                    }
                    WindowEvent::Key(Key::G, Action::Press, _) => {
                        let _ = tx.try_push(MouseInput {
                            toggle_grasp: true,
                            ..Default::default()
                        });
                    }
                    _ => {}
                }
            }
        }
        // Replay keys.
        if let Some(r) = opts.replay.as_mut() {
            use crate::runtime::replay::ReplayCommand as C;
            let now = snap.as_ref().map_or(0.0, |s| s.time);
            for ev in window.events().iter() {
                let cmd = match ev.value {
                    WindowEvent::Key(Key::Space, Action::Press, _) => {
                        r.paused = !r.paused;
                        C::SetPaused(r.paused)
                    }
                    WindowEvent::Key(Key::Up, Action::Press, _) => {
                        r.speed = (r.speed * 2.0).min(16.0);
                        C::SetSpeed(r.speed)
                    }
                    WindowEvent::Key(Key::Down, Action::Press, _) => {
                        r.speed = (r.speed / 2.0).max(1.0 / 16.0);
                        C::SetSpeed(r.speed)
                    }
                    WindowEvent::Key(Key::Right, Action::Press, _) => C::Seek(now + 5.0),
                    WindowEvent::Key(Key::Left, Action::Press, _) => C::Seek(now - 5.0),
                    WindowEvent::Key(Key::Home, Action::Press, _) => C::Seek(0.0),
                    _ => continue,
                };
                let _ = r.commands.try_push(cmd);
            }
        }
        let mut exaggeration = 1.0;
        if let (Some(s), Some(n)) = (&snap, nodes.as_mut()) {
            exaggeration = update(n, s, visuals, size);
            draw_lines(&mut window, s, visuals);
            for (k, line) in hud_lines(s, visuals, exaggeration, opts.replay.as_ref())
                .iter()
                .enumerate()
            {
                window.draw_text(
                    line,
                    Vec2::new(12.0, 10.0 + 30.0 * k as f32),
                    28.0,
                    &font,
                    HUD,
                );
            }
            let help = if opts.replay.is_some() {
                "space pause | up/down speed | left/right -/+5 s | home restart | drag orbit | wheel zoom"
            } else if mouse.is_some() {
                "left-drag move | wheel depth | right-drag rotate | G grasp/release | ctrl+drag orbit | ctrl+wheel zoom"
            } else {
                "drag orbit | wheel zoom | the device drives the needle"
            };
            let y = window.size().y as f32 - 40.0;
            window.draw_text(help, Vec2::new(12.0, y), 26.0, &font, HUD);
        } else {
            window.draw_text(
                "waiting for physics...",
                Vec2::new(12.0, 10.0),
                30.0,
                &font,
                HUD,
            );
        }
        let _ = exaggeration;
        let open = match camera.as_mut() {
            Some(c) => window.render_3d(&mut scene, c).await,
            None => {
                let mut c = OrbitCamera3d::default();
                window.render_3d(&mut scene, &mut c).await
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
            let img = window.snap_image();
            let shot_size = Vec2::new(img.width() as f32, img.height() as f32);
            let err = |e: String| RenderError::Screenshot {
                path: path.clone(),
                message: e,
            };
            img.save(path).map_err(|e| err(e.to_string()))?;
            let rods: Vec<String> = s
                .rods
                .iter()
                .map(|r| json_points(&project(cam, shot_size, &r.positions)))
                .collect();
            let needle: Vec<V3> = match (&visuals.needle, &s.tool) {
                (Some(n), Some(t)) => (0..=NEEDLE_PIECES)
                    .map(|k| n.point(&t.position, &t.rotation, k as f64 / NEEDLE_PIECES as f64))
                    .collect(),
                _ => Vec::new(),
            };
            // Centres of the pad's top lattice cells (away from the drawn grid lines).
            let mut cells: Vec<V3> = Vec::new();
            if let Some(su) = &s.suturing {
                let mut base = 0;
                for &(nx, nz) in &su.grid {
                    for j in 0..nz.saturating_sub(1) {
                        for i in 0..nx.saturating_sub(1) {
                            let at = |i: usize, j: usize| su.top[base + j * nx + i];
                            cells.push(
                                (at(i, j) + at(i + 1, j) + at(i, j + 1) + at(i + 1, j + 1)) * 0.25,
                            );
                        }
                    }
                    base += nx * nz;
                }
            }
            let json = format!(
                "{{\"width\":{},\"height\":{},\"time\":{},\"rods\":[{}],\"needle\":{},\"tissue_cells\":{}}}\n",
                img.width(),
                img.height(),
                s.time,
                rods.join(","),
                json_points(&project(cam, shot_size, &needle)),
                json_points(&project(cam, shot_size, &cells))
            );
            let mut side = path.clone().into_os_string();
            side.push(".json");
            std::fs::write(&side, json).map_err(|e| err(e.to_string()))?;
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
        let _ = cursor;
    }
}
