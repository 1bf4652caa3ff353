//! L1 (above `rod`): contact. So far, the rod against static obstacles (planes and finite
//! solid cylinders) with a smooth penalty and lagged Coulomb friction, as a
//! [`NodePotential`](crate::rod::NodePotential) the Cosserat Newton solver adds to its
//! implicit step. Rod self-contact (IMC, issue #5): exact and smoothed segment distance with
//! derivatives (segment.rs), the IMC pair energy (imc.rs), a uniform-grid broad phase
//! (broad.rs), and self-contact in the Cosserat Newton solve (self_contact.rs). Capsules and
//! scripted obstacles; contact as PD projections; STRANDS contact as lagged point loads
//! (lagged.rs).

pub mod broad;
pub mod imc;
pub mod lagged;
pub mod obstacle;
pub mod segment;
pub mod self_contact;

pub use lagged::{LaggedContact, LaggedReport};
pub use obstacle::{Obstacle, ObstacleContact, Shape};
pub use self_contact::{ContactHessian, FrictionModel, SelfContact};
