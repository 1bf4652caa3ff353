//! L1: rod models. No threads, no I/O.
//!
//! - [`strands`]: Pai 2002 quasi-static Cosserat rod (two sweeps + shooting).
//! - [`implicit`]: what the two dynamic models share: material, drive and end conditions,
//!   external potentials (contact) with Woodbury, one report and error type, and one
//!   Levenberg–Marquardt Newton host ([`DynamicRod`]).
//! - [`cosserat`]: Soler 2018 dynamic Cosserat rod (Newton and PD solvers).
//! - [`der`]: Bergou 2008 Discrete Elastic Rods, stepped implicitly as in the IMC thesis.
//! - [`banded`]: symmetric banded Cholesky for the Newton systems.
//! - [`params`]: rod parameters and suture material presets.

pub mod banded;
pub mod cosserat;
pub mod der;
pub mod implicit;
pub mod params;
pub mod strands;

pub use cosserat::CosseratRod;
pub use der::DerRod;
pub(crate) use implicit::Potentials;
pub use implicit::{
    Drive, DynamicParams, DynamicRod, EndCondition, EndTarget, Integrator, LowRank,
    MAX_POTENTIAL_RETRIES, Method, NodePotential, PotentialSink, Projection, RUNAWAY_SPEED,
    SolverConfig, SolverError, SolverReport,
};
pub use params::{Material, RodParams};
pub use strands::{
    Scheme, Strands, StrandsConfig, StrandsError, StrandsProblem, StrandsReport, Tip,
};
