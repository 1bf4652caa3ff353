//! L1: haptic and input devices. Knows nothing of rods, scenes or threads.
//!
//! - [`report`]: HID report fields, decoded to SI and encoded from SI, bit-exact.
//!
//! Device profiles (devices/*.toml), the `HapticDevice` trait and its backends (HID through
//! hidapi, mouse, scripted) follow (issue #4).

pub mod report;

pub use report::{Field, FieldError};
