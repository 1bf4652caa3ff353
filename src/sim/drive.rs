//! The device-driven part of a physics step, shared by the live physics loop
//! (runtime::physics) and headless replay (session::replay), so that a replay consumes a
//! recorded target exactly as the live loop consumed it: the grasp button toggles on its press
//! edge, the coupling spring takes the target's pose and velocity, the needle is let go or
//! taken at the point nearest the device, then the world steps. Allocation-free.

use super::tool::ToolSpring;
use super::{RealtimeStep, SimError, World};
use crate::math::{Quat, Vec3};

/// Button bit that toggles the grasp (device::mouse::GRASP_BUTTON; the device layer sits
/// beside sim, so the bit is restated here and a test in runtime checks they agree).
pub const GRASP_BUTTON: u32 = 1;

/// The device pose mapped to the world, for the physics (world frame, SI): what a physics
/// step consumes at its boundary, and what a recording stores for each step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolTarget {
    /// Time of the device reading [s since start].
    pub t: f64,
    /// Target position [m] and orientation.
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Target velocity [m/s] and angular velocity [rad/s].
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Buttons.
    pub buttons: u32,
    /// Force rendered to the hand at this tick [N] (world frame).
    pub hand_force: Vec3,
}

/// The held tool's coupling and grasp state across steps.
#[derive(Clone, Debug)]
pub struct Drive {
    /// The held rod and its coupling spring (None: nothing is driven).
    pub tool: Option<(usize, ToolSpring)>,
    /// The spring's gains while grasped: k [N/m], c [N s/m], k_r [N m/rad].
    gains: (f64, f64, f64),
    /// Whether the tool is grasped (the spring acts).
    pub grasped: bool,
    last_buttons: u32,
    /// The newest target orientation.
    pub target_rotation: Quat,
}

impl Drive {
    /// A drive over `tool` (grasped at the start, with the spring's gains as given).
    pub fn new(tool: Option<(usize, ToolSpring)>) -> Self {
        let gains = tool
            .as_ref()
            .map_or((0.0, 0.0, 0.0), |(_, s)| (s.k, s.c, s.kr));
        Drive {
            tool,
            gains,
            grasped: true,
            last_buttons: 0,
            target_rotation: Quat::identity(),
        }
    }

    /// Take the target `t` (None: no device sample yet; the spring keeps its target) and step
    /// the world by `h` [s].
    pub fn step(
        &mut self,
        world: &mut World,
        h: f64,
        target: Option<&ToolTarget>,
    ) -> Result<RealtimeStep, SimError> {
        if let (Some(t), Some((_, spring))) = (target, self.tool.as_mut()) {
            spring.target = t.position;
            spring.target_velocity = t.velocity;
            self.target_rotation = t.rotation;
            spring.target_rotation = t.rotation;
            // The grasp button toggles on its press edge.
            if t.buttons & GRASP_BUTTON != 0 && self.last_buttons & GRASP_BUTTON == 0 {
                self.grasped = !self.grasped;
            }
            self.last_buttons = t.buttons;
            let (k, c, kr) = self.gains;
            (spring.k, spring.c, spring.kr) = if self.grasped {
                (k, c, kr)
            } else {
                (0.0, 0.0, 0.0)
            };
            // Suturing: the driver lets go of the needle, or takes it again at the needle
            // point nearest to the device.
            if let Some(su) = world.suturing.as_mut() {
                su.set_held(world.time, self.grasped, &t.position);
            }
        }
        world.step_realtime(h, self.tool.as_mut().map(|(r, s)| (*r, s)))
    }
}

/// The coupling spring of a session at t = 0: on node `node` of rod `rod` with gains k [N/m],
/// c [N s/m], k_r [N m/rad], its target at the node and the held segment's frame (suturing:
/// the needle's grip point and frame). The live run and replay both build it here.
pub fn initial_spring(
    world: &World,
    rod: usize,
    node: usize,
    k: f64,
    c: f64,
    kr: f64,
) -> ToolSpring {
    let mut spring = ToolSpring::new(node, k, c);
    spring.kr = kr;
    let r = &world.rods[rod];
    spring.target = r.positions()[node];
    let mut frames = Vec::new();
    r.frames_into(&mut frames);
    spring.target_rotation = frames[spring.segment.min(frames.len() - 1)];
    if let Some(su) = world.suturing.as_ref() {
        spring.target = su.needle.grip_position;
        spring.target_rotation = su.needle.rotation;
    }
    spring
}
