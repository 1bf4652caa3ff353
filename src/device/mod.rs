//! L1: haptic and input devices. Knows nothing of rods, scenes or threads.
//!
//! - [`report`]: HID report fields, decoded to SI and encoded from SI, bit-exact.
//! - `hid` (feature `hid`): enumeration of the HID devices present, and the hidapi transport.
//! - [`profile`]: device profiles (devices/*.toml) and report decoding/encoding with them.
//! - [`backend`]: the `HapticDevice` trait; HID devices through a profile over a transport.
//!
//! - [`scripted`]: a device playing a trajectory file.
//! - [`mouse`]: the mouse as a device (fed by the viewer's input events).
//! - [`vendor`]: vendor device profiles (devices/vendor/*.toml) and loading a vendor's SDK
//!   library at run time; [`openhaptics`] (3D Systems Touch, Phantom: the HD API, whose
//!   scheduler calls our tick) and [`forcedimension`] (omega, sigma, delta, lambda, Novint
//!   Falcon: the DHD API, polled) on them.

pub mod backend;
pub mod forcedimension;
#[cfg(feature = "hid")]
pub mod hid;
pub mod mouse;
pub mod openhaptics;
pub mod profile;
pub mod report;
pub mod scripted;
pub mod vendor;

pub use backend::{DeviceError, DeviceSample, HapticDevice, HidDevice, Servo, Transport};
pub use mouse::{MouseDevice, MouseHands, MouseInput};
pub use profile::{Axis, DeviceProfile, InputState, Mode, OutAxis, load_dir};
pub use report::{Field, FieldError};
pub use scripted::ScriptedDevice;
