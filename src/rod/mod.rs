//! L1: rod models. No threads, no I/O.
//!
//! - [`strands`]: Pai 2002 quasi-static Cosserat rod (two sweeps + shooting).
//! - [`params`]: rod parameters and suture material presets.

pub mod params;
pub mod strands;

pub use params::{Material, RodParams};
pub use strands::{
    Scheme, Strands, StrandsConfig, StrandsError, StrandsProblem, StrandsReport, Tip,
};
