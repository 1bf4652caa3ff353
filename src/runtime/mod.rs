//! L4: the only module that spawns threads or reads clocks.
//!
//! - [`stats`]: LoopStats: achieved rate, period jitter percentiles, overruns, compute time.
//! - [`pacer`]: a fixed-rate loop pacer (spin_sleep, `SpinLoopHint`).
//! - [`haptic`]: the haptic loop thread and its queues.
//! - [`physics`]: the physics loop thread (sim::World::step at the scene's dt).
//! - [`run`]: starting and stopping a session (both loops and the recorder).
//! - [`replay`]: the viewer's replay player thread.
//! - [`steal`]: time the hypervisor took from the CPUs over a run (/proc/stat).
//! - [`analysis`]: the live knot analysis thread (low priority, not a real-time loop).

pub mod analysis;
pub mod haptic;
pub mod pacer;
pub mod physics;
pub mod replay;
pub mod run;
pub mod stats;
pub mod steal;

pub use pacer::Pacer;
pub use stats::{LoopStats, LoopSummary};
