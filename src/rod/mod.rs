//! L1: rod models. No threads, no I/O.
//!
//! - [`strands`]: Pai 2002 quasi-static Cosserat rod (two sweeps + shooting).
//! - [`cosserat`]: Soler 2018 dynamic Cosserat rod (Newton and PD solvers).
//! - [`der`]: Bergou 2008 Discrete Elastic Rods (so far its discrete geometry).
//! - [`banded`]: symmetric banded Cholesky for the Newton systems.
//! - [`params`]: rod parameters and suture material presets.

pub mod banded;
pub mod cosserat;
pub mod der;
pub mod params;
pub mod strands;

pub use cosserat::{
    CosseratConfig, CosseratError, CosseratParams, CosseratReport, CosseratRod, Drive,
    EndCondition, EndTarget, Integrator, Method,
};
pub use params::{Material, RodParams};
pub use strands::{
    Scheme, Strands, StrandsConfig, StrandsError, StrandsProblem, StrandsReport, Tip,
};
