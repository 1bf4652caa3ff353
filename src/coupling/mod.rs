//! L2: coupling between the device and the simulated tool.
//!
//! - [`spring`]: workspace mapping and the 6-DOF virtual spring-damper.
//! - [`limiter`]: the last guard before a force reaches the hand.
//! - [`watchdog`]: fades the force out when the physics stalls.
//!
//! The coupling's rod side (the spring-damper inside the implicit solve, and the quasi-static
//! tip-force coupling for STRANDS) is in sim::tool: coupling cannot use rod.

pub mod limiter;
pub mod spring;
pub mod watchdog;

pub use limiter::{ForceLimiter, LimiterEvent};
pub use spring::{MapError, VirtualCoupling, WorkspaceMap};
pub use watchdog::{Verdict, Watchdog};
