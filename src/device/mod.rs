//! L1: haptic and input devices. Knows nothing of rods, scenes or threads.
//!
//! - [`report`]: HID report fields, decoded to SI and encoded from SI, bit-exact.
//! - `hid` (feature `hid`): enumeration of the HID devices present.
//! - [`profile`]: device profiles (devices/*.toml) and report decoding/encoding with them.
//!
//! The `HapticDevice` trait and its backends (HID through
//! hidapi, mouse, scripted) follow (issue #4).

#[cfg(feature = "hid")]
pub mod hid;
pub mod profile;
pub mod report;

pub use profile::{Axis, DeviceProfile, InputState, Mode, OutAxis, load_dir};
pub use report::{Field, FieldError};
