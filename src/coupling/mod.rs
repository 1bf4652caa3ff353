//! L2: coupling between the device and the simulated tool.
//!
//! - [`limiter`]: the last guard before a force reaches the hand.
//!
//! Workspace mapping and the 6-DOF virtual spring-damper follow (issue #4).

pub mod limiter;

pub use limiter::{ForceLimiter, LimiterEvent};
