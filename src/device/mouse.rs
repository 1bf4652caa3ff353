//! The mouse as a 6-DOF input device without force feedback. The viewer turns drags and wheel
//! turns into world-frame increments (it knows the camera; this module does not) and sends them
//! through a ring; the device integrates them into a pose, which the haptic loop reads like any
//! other device. The grasp toggle is reported as button 1 held for one poll.

use super::backend::{DeviceError, DeviceSample, HapticDevice};
use crate::math::{Quat, Vec3};
use ringbuf::traits::{Consumer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};

/// One input increment from the viewer (world frame).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MouseInput {
    /// Translation [m].
    pub translate: Vec3,
    /// Rotation vector [rad] applied on the left (world axes).
    pub rotate: Vec3,
    /// Toggle grasp (press of the grasp key).
    pub toggle_grasp: bool,
    /// Stop: drop the movement still pending (the mouse now drives another hand; this one
    /// holds where it is).
    pub stop: bool,
}

/// The mouse device: a pose integrated from [`MouseInput`]s.
pub struct MouseDevice {
    rx: HeapCons<MouseInput>,
    position: Vec3,
    rotation: Quat,
    velocity: Vec3,
    angular_velocity: Vec3,
    last_t: Option<f64>,
    /// Largest speed the pose may move at [m/s]: a fast flick is spread over several ticks
    /// instead of one jump the coupling would have to absorb.
    pub max_speed: f64,
    pending: Vec3,
}

/// Button bit the grasp toggle sets for one poll.
pub const GRASP_BUTTON: u32 = 1;

impl MouseDevice {
    /// A mouse device starting at `position` [m] with `rotation`, and the sender the viewer
    /// feeds (capacity: increments buffered between two polls).
    pub fn new(position: Vec3, rotation: Quat, capacity: usize) -> (Self, HeapProd<MouseInput>) {
        let (tx, rx) = HeapRb::<MouseInput>::new(capacity).split();
        (
            MouseDevice {
                rx,
                position,
                rotation,
                velocity: Vec3::zeros(),
                angular_velocity: Vec3::zeros(),
                last_t: None,
                max_speed: 0.5,
                pending: Vec3::zeros(),
            },
            tx,
        )
    }
}

impl HapticDevice for MouseDevice {
    fn name(&self) -> &str {
        "mouse"
    }

    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        let dt = self.last_t.map_or(0.0, |l| (t - l).max(0.0));
        self.last_t = Some(t);
        let mut buttons = 0;
        let mut rot = Vec3::zeros();
        while let Some(m) = self.rx.try_pop() {
            if m.translate
                .iter()
                .chain(m.rotate.iter())
                .all(|v| v.is_finite())
            {
                self.pending += m.translate;
                rot += m.rotate;
            }
            if m.toggle_grasp {
                buttons |= GRASP_BUTTON;
            }
            if m.stop {
                self.pending = Vec3::zeros();
            }
        }
        // Move at most max_speed·dt this tick; the rest stays pending.
        let step_max = self.max_speed * dt;
        let n = self.pending.norm();
        let step = if n > step_max {
            self.pending * (step_max / n)
        } else {
            self.pending
        };
        self.pending -= step;
        self.position += step;
        self.rotation = Quat::from_scaled_axis(rot) * self.rotation;
        if dt > 0.0 {
            self.velocity = step / dt;
            self.angular_velocity = rot / dt;
        }
        Ok(Some(DeviceSample {
            t,
            position: self.position,
            rotation: self.rotation,
            velocity: self.velocity,
            angular_velocity: self.angular_velocity,
            buttons,
        }))
    }

    fn command(&mut self, _: &Vec3, _: &Vec3, _: bool) -> Result<(), DeviceError> {
        Ok(())
    }

    fn max_force(&self) -> f64 {
        0.0
    }
}

/// One mouse for several hands, one at a time: each hand has its own [`MouseDevice`] (and its
/// own haptic loop); the viewer's increments go to the driven hand's device only, so the other
/// devices' poses, and their tools' targets, hold. Switching stops the hand let go (its pending
/// movement is dropped) and the newly driven hand's device goes on from its own pose, which is
/// where its tool's target is: the tool does not jump. No window needed (tests drive it).
pub struct MouseHands {
    hands: Vec<(String, HeapProd<MouseInput>)>,
    driven: usize,
}

impl MouseHands {
    /// The mouse over `hands` (a name for the HUD, e.g. "right", and the sender of that hand's
    /// [`MouseDevice`]), driving the first.
    pub fn new(hands: Vec<(String, HeapProd<MouseInput>)>) -> Self {
        MouseHands { hands, driven: 0 }
    }

    /// Send an increment to the driven hand (false: no hand, or its ring is full and the
    /// increment is dropped).
    pub fn send(&mut self, input: MouseInput) -> bool {
        use ringbuf::traits::Producer;
        match self.hands.get_mut(self.driven) {
            Some((_, tx)) => tx.try_push(input).is_ok(),
            None => false,
        }
    }

    /// Drive the next hand (cyclically); returns its index. The hand let go is stopped.
    pub fn switch(&mut self) -> usize {
        if self.hands.len() > 1 {
            self.send(MouseInput {
                stop: true,
                ..Default::default()
            });
            self.driven = (self.driven + 1) % self.hands.len();
        }
        self.driven
    }

    /// The driven hand's index and name (None: no hand).
    pub fn driven(&self) -> Option<(usize, &str)> {
        self.hands
            .get(self.driven)
            .map(|(name, _)| (self.driven, name.as_str()))
    }

    /// How many hands the mouse drives.
    pub fn len(&self) -> usize {
        self.hands.len()
    }

    /// Whether the mouse drives no hand.
    pub fn is_empty(&self) -> bool {
        self.hands.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringbuf::traits::Producer;

    #[test]
    fn increments_integrate_at_bounded_speed_and_grasp_toggles_for_one_poll() {
        let (mut m, mut tx) = MouseDevice::new(Vec3::new(0.1, 0.0, 0.0), Quat::identity(), 16);
        m.poll(0.0).unwrap();
        tx.try_push(MouseInput {
            translate: Vec3::new(0.0, 0.002, 0.0),
            rotate: Vec3::new(0.0, 0.0, 0.1),
            toggle_grasp: true,
            ..Default::default()
        })
        .unwrap();
        // 0.5 m/s × 1 ms = 0.5 mm per tick: the 2 mm drag takes 4 ticks.
        let s = m.poll(0.001).unwrap().unwrap();
        assert!((s.position - Vec3::new(0.1, 0.0005, 0.0)).norm() < 1e-15);
        assert!((s.velocity - Vec3::new(0.0, 0.5, 0.0)).norm() < 1e-9);
        assert_eq!(s.buttons, GRASP_BUTTON);
        assert!((s.rotation.scaled_axis() - Vec3::new(0.0, 0.0, 0.1)).norm() < 1e-15);
        for k in 2..=5 {
            let s = m.poll(0.001 * k as f64).unwrap().unwrap();
            assert_eq!(s.buttons, 0);
        }
        assert!((m.position - Vec3::new(0.1, 0.002, 0.0)).norm() < 1e-15);
        // Non-finite input is dropped.
        tx.try_push(MouseInput {
            translate: Vec3::new(f64::NAN, 0.0, 0.0),
            ..Default::default()
        })
        .unwrap();
        let s = m.poll(0.006).unwrap().unwrap();
        assert!(s.position.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn the_mouse_drives_one_hand_at_a_time_and_a_switch_stops_the_hand_let_go() {
        let (mut right, rtx) = MouseDevice::new(Vec3::new(0.1, 0.0, 0.0), Quat::identity(), 16);
        let (mut left, ltx) = MouseDevice::new(Vec3::new(-0.1, 0.0, 0.0), Quat::identity(), 16);
        let mut hands = MouseHands::new(vec![("right".into(), rtx), ("left".into(), ltx)]);
        assert_eq!(hands.driven(), Some((0, "right")));
        right.poll(0.0).unwrap();
        left.poll(0.0).unwrap();
        // A 2 mm drag of the right hand: 0.5 mm a tick at 0.5 m/s.
        assert!(hands.send(MouseInput {
            translate: Vec3::new(0.0, 0.002, 0.0),
            ..Default::default()
        }));
        let r1 = right.poll(0.001).unwrap().unwrap().position;
        assert_eq!(r1, Vec3::new(0.1, 0.0005, 0.0));
        // Switch after one tick: the right hand drops the 1.5 mm still pending and holds.
        assert_eq!(hands.switch(), 1);
        assert_eq!(hands.driven(), Some((1, "left")));
        assert!(hands.send(MouseInput {
            translate: Vec3::new(0.0, 0.0, 0.001),
            ..Default::default()
        }));
        for k in 2..=6 {
            let t = 0.001 * k as f64;
            assert_eq!(right.poll(t).unwrap().unwrap().position, r1);
            left.poll(t).unwrap();
        }
        // The left hand went on from its own pose (no jump to the right hand's).
        assert_eq!(left.position, Vec3::new(-0.1, 0.0, 0.001));
        // And back.
        assert_eq!(hands.switch(), 0);
        assert_eq!(hands.len(), 2);
    }
}
