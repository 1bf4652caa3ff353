//! Dynamic Cosserat rod after Soler, Martin & Sorkine-Hornung 2018 ("Cosserat Rods with
//! Projective Dynamics"): `N + 1` nodes and one unit quaternion per segment, stretch–shear and
//! bend–twist energies (eqs. (8)–(11), with the continuum stiffness, see [`energy`]).
//!
//! Two solvers share the discrete energy:
//! - [`Method::Newton`] (default, [`newton`]): coupled implicit Newton on node positions and
//!   body-frame rotation increments, banded Cholesky (half-bandwidth 8), warm start, line
//!   search, Levenberg shift when the Hessian is indefinite (digest-cosserat C.2).
//! - [`Method::Pd`] ([`pd`]): the published local/global iteration (Algorithm 1) with the
//!   corrected bend–twist weight and body-frame inertia (digest B.6), prefactored tridiagonal
//!   position solves; attachments move without refactorisation (digest B.7).
//!
//! Time integration (both solvers): implicit Euler, or implicit midpoint computed as an implicit
//! Euler half step followed by extrapolation (`x_{n+1} = 2 y - x_n`), which is second order and
//! conserves the energy of linear oscillations.
//!
//! Indexing: node `i` (0..=N), segment `e` (0..N) joins nodes `e` and `e+1`; joint `j` (0..N-1)
//! joins segments `j` and `j+1`. Newton unknowns are interleaved
//! `[x_0, θ_0, x_1, θ_1, …, θ_{N-1}, x_N]`, so every energy couples indices at most 8 apart.

pub mod energy;
pub mod newton;
pub mod pd;
pub mod potential;

pub use potential::{Both, LowRank, NoPotential, NodePotential, PotentialSink, Projection};

use crate::math::{E3, Mat3, Quat, Vec3, rotation_from_matrix};
use crate::rod::RodParams;
use crate::rod::banded::Banded;

/// How an end of the rod is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndCondition {
    /// Nothing held.
    Free,
    /// Node position held; rotation free.
    Pinned,
    /// Node position and the frame at the end held (through a half-length bend–twist joint
    /// to the end segment).
    Clamped,
}

/// Which solver runs the implicit step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Coupled Newton on positions and rotations (default).
    Newton,
    /// Soler 2018 local/global Projective Dynamics iteration.
    Pd,
}

/// Time integrator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Implicit (backward) Euler: first order, dissipative, unconditionally stable.
    ImplicitEuler,
    /// Implicit midpoint: second order, symplectic, no numerical damping.
    ImplicitMidpoint,
}

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CosseratConfig {
    /// Solver.
    pub method: Method,
    /// Time integrator.
    pub integrator: Integrator,
    /// Iteration cap per step (Newton iterations, or PD local/global iterations).
    pub max_iterations: usize,
    /// Convergence: Newton step below `tolerance · l` [m] and `tolerance` [rad].
    pub tolerance: f64,
}

impl Default for CosseratConfig {
    fn default() -> Self {
        CosseratConfig {
            method: Method::Newton,
            integrator: Integrator::ImplicitEuler,
            max_iterations: 20,
            tolerance: 1e-10,
        }
    }
}

/// Constant material and discretisation data of one rod (SI).
#[derive(Clone, Debug, PartialEq)]
pub struct CosseratParams {
    /// Segments N.
    pub segments: usize,
    /// Rest length of a segment `l = L/N` [m].
    pub segment_length: f64,
    /// `C^Γ = (G A, G A, E A)` [N] (Soler eq. (5)).
    pub stretch_stiffness: Vec3,
    /// `C^Ω = (E I, E I, G J)` [N m²] (Soler eq. (5)).
    pub bend_stiffness: Vec3,
    /// Mass per length `ρ A` [kg/m].
    pub linear_density: f64,
    /// Rotational inertia per length `ρ (I, I, J)` [kg m].
    pub rotational_density: Vec3,
    /// Rest Darboux vector Ω̂ (κ1, κ2, τ) [1/m], body frame, same for every joint.
    pub rest_darboux: Vec3,
    /// Mass-proportional (Rayleigh α) damping [1/s]: force `-α m v`.
    pub mass_damping: f64,
    /// Strain-rate (Rayleigh β, stiffness-proportional) damping [s]: stress `β C ε̇`.
    pub stiffness_damping: f64,
    /// A segment that has broken (a suture torn apart): it carries no stretch–shear and its
    /// two joints no bend–twist, so the rod parts there (Newton solver; PD ignores it).
    pub broken: Option<usize>,
}

impl CosseratParams {
    /// Parameters of a rod of length `length` [m] in `segments` segments, from its material.
    pub fn new(p: &RodParams, length: f64, segments: usize) -> Self {
        let (a, i) = (p.area(), p.second_moment());
        CosseratParams {
            segments,
            segment_length: length / segments as f64,
            stretch_stiffness: Vec3::new(
                p.shear_modulus * a,
                p.shear_modulus * a,
                p.axial_stiffness(),
            ),
            bend_stiffness: Vec3::new(
                p.bending_stiffness(),
                p.bending_stiffness(),
                p.torsional_stiffness(),
            ),
            linear_density: p.linear_density(),
            rotational_density: Vec3::new(i, i, 2.0 * i) * p.density,
            rest_darboux: Vec3::zeros(),
            mass_damping: 0.0,
            stiffness_damping: 0.0,
            broken: None,
        }
    }

    /// Rod length [m].
    pub fn length(&self) -> f64 {
        self.segment_length * self.segments as f64
    }
}

/// Where a held end must be at the end of a step (world frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndTarget {
    /// Node position [m].
    pub position: Vec3,
    /// Frame of the end segment (for a clamped end).
    pub rotation: Quat,
}

/// Everything that drives one step: held-end targets at the step's end time and loads (world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drive {
    /// Target of the start (s = 0) if held.
    pub start: EndTarget,
    /// Target of the end (s = L) if held.
    pub end: EndTarget,
    /// Gravitational acceleration [m/s²].
    pub gravity: Vec3,
    /// Force on node 0 [N].
    pub start_force: Vec3,
    /// Torque on segment 0 [N m].
    pub start_torque: Vec3,
    /// Force on node N [N].
    pub end_force: Vec3,
    /// Torque on segment N-1 [N m].
    pub end_torque: Vec3,
}

/// What a step or an equilibrium solve did (digest-cosserat C.7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CosseratReport {
    /// Iterations used (Newton or PD).
    pub iterations: usize,
    /// Whether the convergence test passed within the iteration cap.
    pub converged: bool,
    /// Final residual: largest force or moment imbalance, relative to the rod's force scale.
    pub residual: f64,
    /// Times the Hessian was indefinite and was shifted.
    pub shifts: usize,
    /// Largest `| |x_{e+1} - x_e|/l - 1 |` [-].
    pub max_stretch: f64,
    /// Largest `| 1 - |u_e| |` before renormalisation [-].
    pub max_quaternion_error: f64,
    /// Stretch–shear energy [J].
    pub stretch_energy: f64,
    /// Bend–twist energy [J].
    pub bend_energy: f64,
    /// Kinetic energy, translational plus rotational [J].
    pub kinetic_energy: f64,
    /// Gravitational potential energy `-Σ m g·x` [J].
    pub gravity_energy: f64,
    /// Value of the external potential (contact penalty plus friction's dissipation
    /// potential) at the solution [J]; not part of [`CosseratReport::total_energy`].
    pub external_energy: f64,
    /// Re-solves requested by the external potential (stiffness raised) [-].
    pub retries: usize,
}

impl CosseratReport {
    /// Total mechanical energy (without the work of end loads) [J].
    pub fn total_energy(&self) -> f64 {
        self.stretch_energy + self.bend_energy + self.kinetic_energy + self.gravity_energy
    }
}

/// A solve failed: the state is rolled back to its value before the call.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum CosseratError {
    /// A non-finite value appeared in the state or the residual.
    #[error("the solver produced a non-finite state (iteration {iteration}); state rolled back")]
    NonFinite {
        /// Iteration at which it was detected.
        iteration: usize,
    },
    /// No Levenberg shift made the Hessian positive definite.
    #[error("the Newton system could not be factorised even with a shift; state rolled back")]
    Singular,
}

/// Re-solves of one step an external potential may request (each raises its stiffness).
pub const MAX_POTENTIAL_RETRIES: usize = 8;

/// Scratch space of the solvers, allocated once.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    pub h: Banded,
    /// Cholesky factor of `h` (plus any Marquardt shift); `h` itself stays intact for retries.
    pub chol: Banded,
    pub g: Vec<f64>,
    pub dz: Vec<f64>,
    pub x_prev: Vec<Vec3>,
    pub q_prev: Vec<Quat>,
    pub x_pred: Vec<Vec3>,
    pub q_pred: Vec<Quat>,
    pub gamma_prev: Vec<Vec3>,
    pub omega_prev: Vec<Vec3>,
    pub x_trial: Vec<Vec3>,
    pub q_trial: Vec<Quat>,
    pub pd: Option<pd::PdWork>,
    /// Rank-one Hessian terms of external potentials that couple nodes far apart in index
    /// (self-contact), solved by the Woodbury identity around the banded factor.
    pub low_rank: Vec<potential::LowRank>,
    /// Woodbury work: B⁻¹u per term (flattened, term-major) and the small dense system.
    pub wb_y: Vec<f64>,
    /// Hold every node position (the rotation-only solve of the midpoint rule).
    pub pin_positions: bool,
    /// Held frames at the start of the step.
    pub held_prev: (Quat, Quat),
    /// Velocities at the start of the step (for re-solves).
    pub v_start: Vec<Vec3>,
    pub omega_start: Vec<Vec3>,
}

/// One dynamic Cosserat rod: state, parameters, held ends and solver settings.
#[derive(Clone, Debug)]
pub struct CosseratRod {
    /// Material and discretisation.
    pub params: CosseratParams,
    /// Start (s = 0) and end (s = L) conditions.
    pub ends: (EndCondition, EndCondition),
    /// Solver settings.
    pub config: CosseratConfig,
    /// Node positions [m].
    pub x: Vec<Vec3>,
    /// Node velocities [m/s].
    pub v: Vec<Vec3>,
    /// Segment frames (body to world).
    pub q: Vec<Quat>,
    /// Segment angular velocities, body frame [rad/s].
    pub omega: Vec<Vec3>,
    /// Lumped node masses [kg].
    pub mass: Vec<f64>,
    /// Frames held at the start and the end (used by clamped ends) at the current time.
    pub held_frames: (Quat, Quat),
    pub(crate) work: Work,
}

impl CosseratRod {
    /// A rod at rest in the given configuration: `positions` (N+1 nodes) and `frames` (N).
    ///
    /// # Panics
    /// If `frames.len() + 1 != positions.len()` or there are no segments, or if
    /// `params.segments` disagrees: these are programming errors (scenes are validated first).
    pub fn new(
        params: CosseratParams,
        ends: (EndCondition, EndCondition),
        config: CosseratConfig,
        positions: Vec<Vec3>,
        frames: Vec<Quat>,
    ) -> Self {
        let n = frames.len();
        assert!(n >= 1 && positions.len() == n + 1 && params.segments == n);
        // Lumped masses m_i = ρA (l_{i-1} + l_i)/2 (digest-cosserat B.3 advice).
        let m = params.linear_density * params.segment_length;
        let mut mass = vec![m; n + 1];
        mass[0] = 0.5 * m;
        mass[n] = 0.5 * m;
        let dofs = 6 * n + 3;
        let work = Work {
            h: Banded::new(dofs, 8),
            chol: Banded::new(dofs, 8),
            g: vec![0.0; dofs],
            dz: vec![0.0; dofs],
            x_prev: positions.clone(),
            q_prev: frames.clone(),
            x_pred: positions.clone(),
            q_pred: frames.clone(),
            gamma_prev: vec![Vec3::zeros(); n],
            omega_prev: vec![Vec3::zeros(); n.saturating_sub(1)],
            x_trial: positions.clone(),
            q_trial: frames.clone(),
            pd: None,
            low_rank: Vec::new(),
            wb_y: Vec::new(),
            pin_positions: false,
            held_prev: (frames[0], frames[n - 1]),
            v_start: vec![Vec3::zeros(); n + 1],
            omega_start: vec![Vec3::zeros(); n],
        };
        let held_frames = (frames[0], frames[n - 1]);
        CosseratRod {
            params,
            ends,
            config,
            held_frames,
            v: vec![Vec3::zeros(); n + 1],
            omega: vec![Vec3::zeros(); n],
            x: positions,
            q: frames,
            mass,
            work,
        }
    }

    /// A straight rod from `start` along the unit `tangent` with material direction `normal`
    /// (perpendicular to the tangent), at rest.
    pub fn straight(
        params: CosseratParams,
        ends: (EndCondition, EndCondition),
        config: CosseratConfig,
        start: Vec3,
        frame: Mat3,
    ) -> Self {
        let n = params.segments;
        let l = params.segment_length;
        let t = frame * E3;
        let x = (0..=n).map(|i| start + t * (l * i as f64)).collect();
        let q0 = rotation_from_matrix(&frame);
        CosseratRod::new(params, ends, config, x, vec![q0; n])
    }

    /// Segments N.
    pub fn segments(&self) -> usize {
        self.params.segments
    }

    /// Node positions [m].
    pub fn positions(&self) -> &[Vec3] {
        &self.x
    }

    /// Material direction d1 per segment.
    pub fn directors(&self) -> Vec<Vec3> {
        self.q.iter().map(|q| q * Vec3::x()).collect()
    }

    /// Frame of segment `e` as a rotation matrix (body to world).
    pub fn frame(&self, e: usize) -> Mat3 {
        self.q[e].to_rotation_matrix().into_inner()
    }

    /// Darboux vector Ω per joint [1/m] (Soler eq. (11)).
    pub fn darboux(&self) -> Vec<Vec3> {
        let l = self.params.segment_length;
        self.q
            .windows(2)
            .map(|w| energy::darboux(&w[0], &w[1], l))
            .collect()
    }

    /// Largest bending curvature `sqrt(Ω1² + Ω2²)` over the joints [1/m].
    pub fn max_curvature(&self) -> f64 {
        self.darboux()
            .iter()
            .map(|o| o.xy().norm())
            .fold(0.0, f64::max)
    }

    /// Stretch–shear and bend–twist energies [J], including the half-length joints of clamped
    /// ends.
    pub fn elastic_energy(&self) -> (f64, f64) {
        let p = &self.params;
        let l = p.segment_length;
        let mut se = 0.0;
        for e in 0..p.segments {
            let gam = energy::shear_strain(&self.x[e], &self.x[e + 1], &self.frame(e), l);
            se += 0.5 * l * gam.dot(&gam.component_mul(&p.stretch_stiffness));
        }
        let mut bt = 0.0;
        for om in self.darboux() {
            let d = om - p.rest_darboux;
            bt += 0.5 * l * d.dot(&d.component_mul(&p.bend_stiffness));
        }
        let n = p.segments;
        let mut boundary = |a: &Quat, b: &Quat| {
            let d = energy::darboux(a, b, 0.5 * l) - p.rest_darboux;
            bt += 0.25 * l * d.dot(&d.component_mul(&p.bend_stiffness));
        };
        if self.ends.0 == EndCondition::Clamped {
            boundary(&self.held_frames.0, &self.q[0]);
        }
        if self.ends.1 == EndCondition::Clamped {
            boundary(&self.q[n - 1], &self.held_frames.1);
        }
        (se, bt)
    }

    /// Kinetic energy `½ Σ m v² + ½ Σ ωᵀ J ω` [J].
    pub fn kinetic_energy(&self) -> f64 {
        let jl = self.params.rotational_density * self.params.segment_length;
        let t: f64 = self
            .mass
            .iter()
            .zip(&self.v)
            .map(|(m, v)| 0.5 * m * v.norm_squared())
            .sum();
        let r: f64 = self
            .omega
            .iter()
            .map(|w| 0.5 * w.dot(&w.component_mul(&jl)))
            .sum();
        t + r
    }

    /// The report fields that describe the state (energies, stretch, quaternion error).
    pub fn measure(&self, gravity: &Vec3, report: &mut CosseratReport) {
        let l = self.params.segment_length;
        let (se, bt) = self.elastic_energy();
        report.stretch_energy = se;
        report.bend_energy = bt;
        report.kinetic_energy = self.kinetic_energy();
        report.gravity_energy = -self
            .mass
            .iter()
            .zip(&self.x)
            .map(|(m, x)| m * gravity.dot(x))
            .sum::<f64>();
        let qerr = self
            .q
            .iter()
            .map(|q| (1.0 - q.into_inner().norm()).abs())
            .fold(0.0, f64::max);
        report.max_quaternion_error = report.max_quaternion_error.max(qerr);
        report.max_stretch = self
            .x
            .windows(2)
            .map(|w| ((w[1] - w[0]).norm() / l - 1.0).abs())
            .fold(0.0, f64::max);
    }

    /// Force scale of the rod for relative residuals [N]: its weight, end loads and `EI/L²`.
    pub(crate) fn force_scale(&self, d: &Drive) -> f64 {
        let p = &self.params;
        let len = p.length();
        let weight = p.linear_density * len * d.gravity.norm();
        let loads = d.start_force.norm()
            + d.end_force.norm()
            + (d.start_torque.norm() + d.end_torque.norm()) / len;
        weight + loads + p.bend_stiffness.x.min(p.bend_stiffness.y) / (len * len)
    }

    /// Advance by `h` [s] to the targets and loads of `drive` (evaluated at the step's end).
    pub fn step(&mut self, h: f64, drive: &Drive) -> Result<CosseratReport, CosseratError> {
        self.step_with(h, drive, &mut NoPotential)
    }

    /// [`CosseratRod::step`] with an external potential on the node positions (contact). The
    /// potential may ask for the step to be re-solved from its start (up to
    /// [`MAX_POTENTIAL_RETRIES`] times), e.g. after raising a penalty stiffness. The PD solver
    /// sees the potential through [`NodePotential::project`] (contact as projections).
    pub fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        let before = self.held_frames;
        self.work.v_start.copy_from_slice(&self.v);
        self.work.omega_start.copy_from_slice(&self.omega);
        let mut retries = 0;
        loop {
            self.work.held_prev = before;
            self.held_frames = (drive.start.rotation, drive.end.rotation);
            pot.begin(&self.x, Some(h));
            let r = match self.config.method {
                Method::Newton => newton::step(self, h, drive, pot),
                Method::Pd => pd::step(self, h, drive, pot),
            };
            match r {
                Err(e) => {
                    self.held_frames = before;
                    return Err(e);
                }
                Ok(mut rep) => {
                    if pot.accept(&self.x) || retries == MAX_POTENTIAL_RETRIES {
                        rep.retries = retries;
                        rep.external_energy = pot.evaluate(&self.x, None);
                        return Ok(rep);
                    }
                    retries += 1;
                    let w = &self.work;
                    self.x.copy_from_slice(&w.x_prev);
                    self.q.copy_from_slice(&w.q_prev);
                    self.v.copy_from_slice(&w.v_start);
                    self.omega.copy_from_slice(&w.omega_start);
                }
            }
        }
    }

    /// Static equilibrium under `drive`, from the current state (velocities are zeroed).
    pub fn equilibrate(&mut self, drive: &Drive) -> Result<CosseratReport, CosseratError> {
        self.equilibrate_with(drive, &mut NoPotential)
    }

    /// [`CosseratRod::equilibrate`] with an external potential. Lagged quantities (friction's
    /// normal forces) are re-evaluated at the solution and the equilibrium re-solved until they
    /// change by less than 1 % and the potential accepts the state (at most
    /// [`MAX_POTENTIAL_RETRIES`] + 1 solves).
    pub fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pot: &mut dyn NodePotential,
    ) -> Result<CosseratReport, CosseratError> {
        let before = self.held_frames;
        self.held_frames = (drive.start.rotation, drive.end.rotation);
        pot.begin(&self.x, None);
        let mut retries = 0;
        let mut iterations = 0;
        loop {
            let r = newton::equilibrate(self, drive, pot);
            let mut rep = match r {
                Err(e) => {
                    self.held_frames = before;
                    return Err(e);
                }
                Ok(rep) => rep,
            };
            iterations += rep.iterations;
            let accepted = pot.accept(&self.x);
            let change = pot.relag(&self.x);
            if (accepted && change < 0.01) || retries == MAX_POTENTIAL_RETRIES {
                rep.iterations = iterations;
                rep.retries = retries;
                rep.external_energy = pot.evaluate(&self.x, None);
                return Ok(rep);
            }
            retries += 1;
        }
    }

    /// Apply the held-end targets of `drive` to the node positions.
    pub(crate) fn impose_ends(x: &mut [Vec3], ends: (EndCondition, EndCondition), d: &Drive) {
        let n = x.len() - 1;
        if ends.0 != EndCondition::Free {
            x[0] = d.start.position;
        }
        if ends.1 != EndCondition::Free {
            x[n] = d.end.position;
        }
    }
}
