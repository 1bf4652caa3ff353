//! L1 (above `rod`): contact. So far, the rod against static obstacles (planes and finite
//! solid cylinders) with a smooth penalty and lagged Coulomb friction, as a
//! [`NodePotential`](crate::rod::cosserat::NodePotential) the Cosserat Newton solver adds to its
//! implicit step. Rod self-contact (IMC) comes with issue #5.

pub mod obstacle;

pub use obstacle::{Obstacle, ObstacleContact, Shape};
