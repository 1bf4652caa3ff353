//! `suture`: a real-time haptic surgical suture simulator.
//!
//! Layers (ARCHITECTURE.md; enforced by `tests/layering.rs`):
//! L0 [`math`] · L1 [`rod`], [`contact`], [`tissue`], [`device`] · L2 [`sim`], [`coupling`] · L3 [`scene`],
//! [`session`].
#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod contact;
pub mod coupling;
pub mod device;
pub mod located;
pub mod math;
#[cfg(feature = "viewer")]
pub mod render;
pub mod rod;
pub mod runtime;
pub mod scene;
pub mod session;
pub mod sim;
pub mod tissue;
pub mod topology;
