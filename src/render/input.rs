//! Input: the orbit camera (made once from the first snapshot), the mouse as the device (drags
//! become world-frame increments, device::MouseInput), and the replay's keys.

use super::scene::initial_camera;
use super::{ReplayControl, Visuals, f32v};
use crate::device::{MouseHands, MouseInput};
use crate::math::Vec3 as V3;
use crate::sim::snapshot::Snapshot;
use kiss3d::prelude::*;
use ringbuf::traits::Producer;

/// The orbit camera framing the first snapshot. With the mouse as the device, the camera
/// orbits and pans with Ctrl held (plain drags move the needle).
pub(super) fn camera(snap: &Snapshot, visuals: &Visuals, mouse_drives: bool) -> OrbitCamera3d {
    let pose = initial_camera(snap, visuals);
    let mut c = OrbitCamera3d::new_with_frustum(
        std::f32::consts::FRAC_PI_4,
        1e-3,
        10.0,
        f32v(&pose.eye),
        f32v(&pose.at),
    );
    if mouse_drives {
        c.set_rotate_modifiers(Some(Modifiers::Control));
        c.set_drag_modifiers(Some(Modifiers::Control));
    }
    c
}

/// The mouse as the device: left-drag moves the needle in the view plane, the wheel moves it
/// in depth, right-drag rotates it, G grasps and releases, Tab switches the hand it drives
/// (events with Ctrl go to the camera).
#[derive(Default)]
pub(super) struct MouseDrive {
    /// The cursor at the last event [px].
    last_cursor: Vec2,
    /// Left button held: moving.
    moving: bool,
    /// Right button held: turning.
    turning: bool,
}

impl MouseDrive {
    /// Turn this frame's window events into increments sent to the driven hand's device (a
    /// full ring drops them), scaled so the needle follows the cursor at the camera's target
    /// depth; Tab switches the driven hand.
    pub(super) fn handle(&mut self, window: &Window, cam: &OrbitCamera3d, tx: &mut MouseHands) {
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
                        MouseButton::Button1 => self.moving = down,
                        MouseButton::Button2 => self.turning = down,
                        _ => {}
                    }
                    ev.inhibited = true;
                }
                WindowEvent::CursorPos(x, y, _) => {
                    let cursor = Vec2::new(x as f32, y as f32);
                    let d = cursor - self.last_cursor;
                    self.last_cursor = cursor;
                    if self.moving {
                        let w = (right * d.x - up * d.y) * m_per_px;
                        let _ = tx.send(MouseInput {
                            translate: v(w),
                            ..Default::default()
                        });
                        ev.inhibited = true;
                    } else if self.turning {
                        let w = (up * d.x + right * d.y) * 0.01;
                        let _ = tx.send(MouseInput {
                            rotate: v(w),
                            ..Default::default()
                        });
                        ev.inhibited = true;
                    }
                }
                WindowEvent::Scroll(_, dy, m) if !m.contains(Modifiers::Control) => {
                    let _ = tx.send(MouseInput {
                        translate: v(fwd * (dy as f32 * 0.002)),
                        ..Default::default()
                    });
                    ev.inhibited = true;
                }
                WindowEvent::Key(Key::G, Action::Press, _) => {
                    let _ = tx.send(MouseInput {
                        toggle_grasp: true,
                        ..Default::default()
                    });
                }
                WindowEvent::Key(Key::Tab, Action::Press, _) => {
                    // A drag in progress stays with the hand it started on.
                    self.moving = false;
                    self.turning = false;
                    tx.switch();
                }
                _ => {}
            }
        }
    }
}

/// Replay keys: space pause, up/down speed (×2, within 1/16 to 16), left/right seek 5 s from
/// `now` [s], home restart; each becomes a command for the player (a full ring drops it).
pub(super) fn replay_keys(window: &Window, r: &mut ReplayControl, now: f64) {
    use crate::runtime::replay::ReplayCommand as C;
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
