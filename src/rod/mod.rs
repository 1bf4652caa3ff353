//! L1: rod models. No threads, no I/O.
//!
//! - [`strands`]: Pai 2002 quasi-static Cosserat rod (two sweeps + shooting).
//! - [`cosserat`]: Soler 2018 dynamic Cosserat rod (Newton and PD solvers).
//! - [`der`]: Bergou 2008 Discrete Elastic Rods, stepped implicitly as in the IMC thesis.
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

pub use der::DerRod;

use cosserat::NodePotential;

/// What the world asks of a dynamic rod model (the Cosserat rod and DER share the material,
/// the drive, the contact potentials and the report).
pub trait DynamicRod {
    /// One implicit step of `h` [s] to the drive's targets and loads, with an external
    /// potential on the node positions (contact).
    fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError>;
    /// Static equilibrium under the drive, with an external potential.
    fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError>;
}

impl DynamicRod for CosseratRod {
    fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        CosseratRod::step_with(self, h, drive, pot)
    }
    fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        CosseratRod::equilibrate_with(self, drive, pot)
    }
}

impl DynamicRod for DerRod {
    fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        DerRod::step_with(self, h, drive, pot)
    }
    fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        DerRod::equilibrate_with(self, drive, pot)
    }
}
