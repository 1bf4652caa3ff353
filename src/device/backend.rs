//! The device trait and its backends that need no hardware to test: HID devices decoded through
//! a profile over any report transport (hidapi in production, byte vectors in tests), and a
//! scripted device playing a trajectory file.

use super::profile::{DeviceProfile, InputState, Mode};
use crate::math::{Quat, Vec3};
use std::sync::atomic::AtomicBool;

/// One reading of a device, in SI, in the device's own frame (the coupling maps it to the
/// world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceSample {
    /// Time of the reading [s] (the caller's clock).
    pub t: f64,
    /// Position [m] (position devices; rate devices report the integrated pose).
    pub position: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// Linear velocity [m/s] (rate devices: the cap's command; else zero).
    pub velocity: Vec3,
    /// Angular velocity [rad/s].
    pub angular_velocity: Vec3,
    /// Buttons, bit k = button k.
    pub buttons: u32,
}

/// A device fault. The haptic loop zeroes the force and ramps it back in after one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// The device is gone (unplugged) or the transport failed.
    #[error("device I/O failed: {0}")]
    Io(String),
    /// A report did not decode (garbage, truncated).
    #[error("bad report from the device: {0}")]
    BadReport(String),
    /// A vendor SDK call failed (its error code), or gave a non-finite reading. Made in the
    /// haptic tick, so it allocates nothing.
    #[error("{call} failed (SDK error {code:#x})")]
    Sdk {
        /// The SDK function.
        call: &'static str,
        /// The SDK's error code.
        code: i64,
    },
}

/// A vendor SDK's own servo loop (OpenHaptics' scheduler), which calls the haptic tick on
/// the SDK's thread instead of a loop of ours.
pub trait Servo: Send {
    /// Have the SDK call `tick` once per servo period on its thread, from now until `stop` is
    /// set; return once the SDK will not call it again. The tick is where the device is read
    /// and commanded (inside the SDK's frame).
    fn run(
        &mut self,
        tick: &mut (dyn FnMut() + Send),
        stop: &AtomicBool,
    ) -> Result<(), DeviceError>;
}

/// A haptic or input device: polled without blocking from the haptic loop.
pub trait HapticDevice: Send {
    /// Human-readable name.
    fn name(&self) -> &str;
    /// Read everything pending and return the latest sample at time `t` [s] (None: nothing new).
    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError>;
    /// Command a force [N] and torque [N m] (already limited); `enable = false` releases the
    /// motors. Input-only devices ignore it.
    fn command(&mut self, force: &Vec3, torque: &Vec3, enable: bool) -> Result<(), DeviceError>;
    /// Largest force the device may be sent [N] (0: no force feedback).
    fn max_force(&self) -> f64;
    /// The SDK's servo loop, for a device whose SDK calls the tick itself (taken once, before
    /// the loop starts; None: the device is polled from a loop of ours).
    fn take_servo(&mut self) -> Option<Box<dyn Servo>> {
        None
    }
}

/// Raw report I/O: non-blocking read of one input report into `buf` (0 = none pending) and
/// write of one output report.
pub trait Transport: Send {
    /// Read one pending report, or return 0 without waiting.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, DeviceError>;
    /// Write one report (byte 0 = report id).
    fn write(&mut self, report: &[u8]) -> Result<(), DeviceError>;
}

/// A HID device described by a profile, over a transport. Rate devices are integrated into a
/// pose here (position += v dt, orientation ∘= exp(ω dt)).
pub struct HidDevice<T: Transport> {
    profile: DeviceProfile,
    transport: T,
    state: InputState,
    buf: Vec<u8>,
    out: Vec<u8>,
    last_t: Option<f64>,
    position: Vec3,
    rotation: Quat,
}

impl<T: Transport> HidDevice<T> {
    /// A device with its buffers allocated once.
    pub fn new(profile: DeviceProfile, transport: T) -> Self {
        let out_len = profile.output.as_ref().map_or(0, |o| o.1);
        HidDevice {
            buf: vec![0; profile.input_length.max(64)],
            out: vec![0; out_len],
            profile,
            transport,
            state: InputState::default(),
            last_t: None,
            position: Vec3::zeros(),
            rotation: Quat::identity(),
        }
    }

    /// The profile.
    pub fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
}

impl<T: Transport> HapticDevice for HidDevice<T> {
    fn name(&self) -> &str {
        &self.profile.name
    }

    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        let mut any = false;
        // Drain what is pending (bounded: a device streaming faster than we read must not
        // keep the haptic tick here).
        for _ in 0..64 {
            let n = self.transport.read(&mut self.buf)?;
            if n == 0 {
                break;
            }
            let fields = self
                .profile
                .decode(&self.buf[..n], &mut self.state)
                .map_err(|e| DeviceError::BadReport(e.to_string()))?;
            any |= fields > 0;
        }
        let dt = self.last_t.map_or(0.0, |l| (t - l).max(0.0));
        self.last_t = Some(t);
        let (position, rotation, velocity, angular_velocity) = match self.profile.mode {
            Mode::Position => (
                self.state.linear,
                self.state.rotation(),
                Vec3::zeros(),
                Vec3::zeros(),
            ),
            Mode::Rate => {
                // The cap holds its deflection between reports: integrate every tick.
                self.position += self.state.linear * dt;
                self.rotation = Quat::from_scaled_axis(self.state.angular * dt) * self.rotation;
                any = true;
                (
                    self.position,
                    self.rotation,
                    self.state.linear,
                    self.state.angular,
                )
            }
        };
        Ok(any.then_some(DeviceSample {
            t,
            position,
            rotation,
            velocity,
            angular_velocity,
            buttons: self.state.buttons,
        }))
    }

    fn command(&mut self, force: &Vec3, torque: &Vec3, enable: bool) -> Result<(), DeviceError> {
        match self.profile.encode(force, torque, enable, &mut self.out) {
            None => Ok(()),
            Some(Err(e)) => Err(DeviceError::BadReport(e.to_string())),
            Some(Ok(_)) => self.transport.write(&self.out),
        }
    }

    fn max_force(&self) -> f64 {
        self.profile.max_force
    }
}
