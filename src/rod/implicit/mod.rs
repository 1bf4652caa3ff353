//! The implicit-solver interface both dynamic rod models share (the Cosserat rod of
//! [`crate::rod::cosserat`] and the Discrete Elastic Rod of [`crate::rod::der`]): the material
//! and discretisation ([`DynamicParams`]), the solver settings, how the ends are held and
//! driven ([`EndCondition`], [`Drive`]), the external potentials on the node positions
//! ([`potential`]: contact, the tool coupling; Woodbury for far couplings), one report and
//! one error type, and ONE Levenberg–Marquardt Newton host ([`newton`]) with the retry loops
//! over the potentials ([`DynamicRod::step_with`], [`DynamicRod::equilibrate_with`]).
//!
//! Each model implements the host's small traits ([`newton::NewtonRod`], [`ImplicitRod`]):
//! its layout, its incremental potential Φ, trial points and the held ends. The traits are
//! generic (monomorphised), so the 1 kHz loop pays no dynamic dispatch for them.

pub mod newton;
pub mod potential;

pub use potential::{LowRank, NodePotential, PotentialSink, Projection};

use crate::math::{E3, Mat3, Quat, Vec3, rotation_from_matrix};
use crate::rod::RodParams;
use newton::Problem;
pub(crate) use potential::Potentials;

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

/// Which solver runs the implicit step (the Cosserat rod; DER is always stepped by Newton).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Coupled Newton on positions and rotations (default).
    Newton,
    /// Soler 2018 local/global Projective Dynamics iteration.
    Pd,
}

/// Time integrator (the Cosserat rod; DER is always stepped by backward Euler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Implicit (backward) Euler: first order, dissipative, unconditionally stable.
    ImplicitEuler,
    /// Implicit midpoint: second order, symplectic, no numerical damping.
    ImplicitMidpoint,
}

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverConfig {
    /// Solver.
    pub method: Method,
    /// Time integrator.
    pub integrator: Integrator,
    /// Iteration cap per step (Newton iterations, or PD local/global iterations).
    pub max_iterations: usize,
    /// Convergence: Newton step below `tolerance · l` [m] and `tolerance` [rad].
    pub tolerance: f64,
    /// Newton: refine each step taken with a Marquardt shift towards the unshifted one by
    /// preconditioned conjugate gradients on the whole Hessian (docs/derivations/der-imc.md
    /// §F9). Off by default: it changes the trajectory of contact-rich runs (fewer
    /// iterations, the same physics to the tolerance), and the scripted tie's throws are
    /// tuned to the default's trajectory.
    pub refine_steps: bool,
    /// Newton: where the banded Hessian alone is indefinite, factor it as it is (`L D Lᵀ`
    /// with negative pivots) and take the exact step when the whole Hessian with its contact
    /// terms is definite (by inertia) and the step checks out, instead of a Marquardt-shifted
    /// step (docs/derivations/der-imc.md §F10). On by default: iterations whose band is
    /// definite are unchanged, and a knot's stalled steps converge (the scripted square's
    /// unconverged steps 6227 → 674).
    pub indefinite_band: bool,
    /// Newton: the self-contact terms' Woodbury columns cross the spans of the suture between
    /// a knot's clusters of contact by transfer maps instead of row by row
    /// (docs/derivations/banded.md §5): the square tie's steps 21–26 % faster (the overhand,
    /// one cluster, gains nothing), the same solution up to rounding but not to the bit. Off by default: the
    /// scripted ties are narrow paths that a change in rounding leaves (docs/performance.md,
    /// "Crossing the gaps").
    pub cross_gaps: bool,
    /// Newton (Cosserat rod): how many times a step that does not converge (or fails) is
    /// re-solved from its start as two steps of half the length, each of which may be halved
    /// again, down to `h / 2^subdivide`. 0 (the default) leaves every step as it was. A step
    /// that converges at full length is untouched to the bit; one that does not is taken by
    /// shorter implicit steps against the same end-of-step targets (the contact geometry,
    /// the grasps and the held ends are posed at the step's end, as for the whole step), so
    /// a fast event such as a wrap snapping off a jaw's tip is resolved rather than left at
    /// the iteration cap (docs/derivations/der-imc.md §F12).
    pub subdivide: usize,
    /// Newton: chord steps (Kelley 1995, §5.4; docs/derivations/der-imc.md §F13). After an
    /// iteration whose Hessian factored unshifted and whose full step was taken, the next
    /// iterations reuse that factorisation (the banded factor and the far terms' Woodbury
    /// correction) and assemble only the gradient, as long as each full step contracts the
    /// residual by `CHORD_CONTRACTION`; the same convergence test ends the step. Off by
    /// default: it changes the trajectory (the same solution to the tolerance), and the
    /// scripted ties are narrow paths that a change in rounding leaves.
    pub chord: bool,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            method: Method::Newton,
            integrator: Integrator::ImplicitEuler,
            max_iterations: 20,
            tolerance: 1e-10,
            refine_steps: false,
            indefinite_band: true,
            cross_gaps: false,
            subdivide: 0,
            chord: false,
        }
    }
}

/// Constant material and discretisation data of one dynamic rod (SI), in the Cosserat
/// rod's terms; DER reads the same numbers (see [`crate::rod::DerRod::params`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicParams {
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

impl DynamicParams {
    /// The nodes [m] of a straight rod of these segments from `start` along the frame's d3,
    /// and the frame as a quaternion (every segment's, at rest).
    pub fn straight(&self, start: Vec3, frame: &Mat3) -> (Vec<Vec3>, Quat) {
        let t = frame * E3;
        let l = self.segment_length;
        let x = (0..=self.segments)
            .map(|i| start + t * (l * i as f64))
            .collect();
        (x, rotation_from_matrix(frame))
    }

    /// Parameters of a rod of length `length` [m] in `segments` segments, from its material.
    pub fn new(p: &RodParams, length: f64, segments: usize) -> Self {
        let (a, i) = (p.area(), p.second_moment());
        DynamicParams {
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

    /// Force scale of the rod for relative residuals [N]: its weight, end loads and `EI/L²`.
    pub(crate) fn force_scale(&self, d: &Drive) -> f64 {
        let len = self.length();
        let weight = self.linear_density * len * d.gravity.norm();
        let loads = d.start_force.norm()
            + d.end_force.norm()
            + (d.start_torque.norm() + d.end_torque.norm()) / len;
        weight + loads + self.bend_stiffness.x.min(self.bend_stiffness.y) / (len * len)
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

/// What a step or an equilibrium solve did (docs/derivations/cosserat.md §C.7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolverReport {
    /// Iterations used (Newton or PD).
    pub iterations: usize,
    /// Whether the convergence test passed within the iteration cap.
    pub converged: bool,
    /// Final residual: largest force or moment imbalance, relative to the rod's force scale.
    pub residual: f64,
    /// Times the Hessian was indefinite and was shifted.
    pub shifts: usize,
    /// Conjugate-gradient iterations that refined shifted Newton steps towards the exact ones
    /// (docs/derivations/der-imc.md §F9).
    pub refinements: usize,
    /// Newton steps taken from an indefinite banded factor, the whole Hessian definite
    /// ([`SolverConfig::indefinite_band`]).
    pub indefinite_steps: usize,
    /// Iterations that reused an earlier factorisation ([`SolverConfig::chord`]).
    pub chord_steps: usize,
    /// Largest `| |x_{e+1} - x_e|/l - 1 |` [-].
    pub max_stretch: f64,
    /// Largest `| 1 - |u_e| |` before renormalisation [-] (Cosserat; 0 for DER).
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
    /// potential) at the solution [J]; not part of [`SolverReport::total_energy`].
    pub external_energy: f64,
    /// Re-solves requested by the external potential (stiffness raised) [-].
    pub retries: usize,
    /// Spans re-solved as two half spans ([`SolverConfig::subdivide`]) [-].
    pub subdivisions: usize,
}

impl SolverReport {
    /// Total mechanical energy (without the work of end loads) [J].
    pub fn total_energy(&self) -> f64 {
        self.stretch_energy + self.bend_energy + self.kinetic_energy + self.gravity_energy
    }
}

/// A solve failed: the state is rolled back to its value before the call.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum SolverError {
    /// A non-finite value appeared in the state or the residual.
    #[error("the solver produced a non-finite state (iteration {iteration}); state rolled back")]
    NonFinite {
        /// Iteration at which it was detected.
        iteration: usize,
    },
    /// No Levenberg shift made the Hessian positive definite.
    #[error("the Newton system could not be factorised even with a shift; state rolled back")]
    Singular,
    /// The solve did not converge and its last iterate moves a node faster than
    /// [`RUNAWAY_SPEED`]: a solve that has run away, not motion.
    #[error(
        "the solve did not converge and would move a node at {speed:.0} m/s; state rolled back"
    )]
    Runaway {
        /// The fastest node's speed over the step [m/s].
        speed: f64,
    },
}

/// A node speed [m/s] far past any the hands drive (they move under 2 m/s: this is 50 times
/// that). An unconverged step whose last iterate moves a node faster is refused as a
/// non-finite one is (the live square tie of 2026-11-27 accepted an unconverged step that moved
/// a node 0.44 m in 1 ms, 440 m/s, and every step after it started from that state;
/// docs/reliability.md).
pub const RUNAWAY_SPEED: f64 = 100.0;

/// Re-solves of one step an external potential may request (each raises its stiffness).
pub const MAX_POTENTIAL_RETRIES: usize = 8;

/// What the world asks of a dynamic rod model (the Cosserat rod and DER share the material,
/// the drive, the contact potentials and the report).
///
/// The external potentials are a list; their values are summed in the grouping
/// [`potential::Potentials`] documents, their gradients added in list order.
pub trait DynamicRod {
    /// One implicit step of `h` [s] to the drive's targets and loads, with external
    /// potentials on the node positions (contact). The potentials may ask for the step to be
    /// re-solved from its start (up to [`MAX_POTENTIAL_RETRIES`] times), e.g. after raising a
    /// penalty stiffness.
    fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pots: &mut [&mut dyn NodePotential],
    ) -> Result<SolverReport, SolverError>;

    /// Static equilibrium under the drive from the current state (velocities are zeroed), with
    /// external potentials. Lagged quantities (friction's normal forces) are re-evaluated at
    /// the solution and the equilibrium re-solved until they change by less than 1 % and the
    /// potentials accept the state (at most [`MAX_POTENTIAL_RETRIES`] + 1 solves).
    fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pots: &mut [&mut dyn NodePotential],
    ) -> Result<SolverReport, SolverError>;

    /// [`DynamicRod::step_with`] without external potentials.
    fn step(&mut self, h: f64, drive: &Drive) -> Result<SolverReport, SolverError> {
        self.step_with(h, drive, &mut [])
    }

    /// [`DynamicRod::equilibrate_with`] without external potentials.
    fn equilibrate(&mut self, drive: &Drive) -> Result<SolverReport, SolverError> {
        self.equilibrate_with(drive, &mut [])
    }
}

/// What the retry loops and the equilibrium solve ask of a model, beside the Newton host's
/// [`newton::NewtonRod`].
pub(crate) trait ImplicitRod: newton::NewtonRod {
    /// The node positions the external potentials see (N + 1; DER's ghosts excluded).
    fn node_positions(&self) -> &[Vec3];
    /// Start a solve under `drive`: remember the velocities (for re-solves) and take the
    /// drive's held frames, remembering the current ones.
    fn hold(&mut self, drive: &Drive);
    /// A solve failed: return to the held frames remembered by [`ImplicitRod::hold`].
    fn release(&mut self) {}
    /// Return to the start of the step for a re-solve: the configuration remembered by
    /// [`ImplicitRod::save`] and the velocities remembered by [`ImplicitRod::hold`].
    fn rewind(&mut self);
    /// Remember the configuration (the start of a solve).
    fn save(&mut self);
    /// Return to the configuration remembered by [`ImplicitRod::save`].
    fn restore(&mut self);
    /// The fastest node's speed [m/s] (after a step: over the step).
    fn max_node_speed(&self) -> f64;
    /// Move the held unknowns to the drive's targets.
    fn impose(&mut self, drive: &Drive);
    /// After an equilibrium solve: set every velocity to zero and fill the report fields that
    /// describe the state (energies, stretch).
    fn settle(&mut self, gravity: &Vec3, report: &mut SolverReport);
    /// One implicit step of `step.h` [s] (always `Some`) under `step.drive`; on an error the
    /// configuration is restored to the step's start.
    fn solve_step(&mut self, step: &Problem) -> Result<SolverReport, SolverError>;
    /// Halvings a step that does not converge may take ([`SolverConfig::subdivide`]); 0
    /// where the model does not subdivide.
    fn subdivisions(&self) -> usize {
        0
    }
    /// Remember the whole state at a step's start (configuration and velocities) for a
    /// subdivided step, once it is split (the state is then at the step's start).
    fn checkpoint(&mut self) {}
    /// Return to the state [`ImplicitRod::checkpoint`] remembered.
    fn to_checkpoint(&mut self) {}
    /// The current state starts a new span of the same step: its velocities are what
    /// [`ImplicitRod::rewind`] returns to, and the held frames it starts from are the ones
    /// the previous span reached (the drive's targets stay as [`ImplicitRod::hold`] took
    /// them).
    fn restart(&mut self) {}
}

/// One span of `h` [s] from the current state under `drive`, re-solved while the potentials
/// ask for it; where it does not converge (or fails) and `depth` > 0, split ([`split_span`]).
fn solve_span<R: ImplicitRod>(
    rod: &mut R,
    h: f64,
    drive: &Drive,
    pot: &mut Potentials<'_, '_>,
    depth: usize,
) -> Result<SolverReport, SolverError> {
    let whole = solve_retrying(rod, h, drive, pot);
    match &whole {
        Ok(rep) if rep.converged => whole,
        _ if depth == 0 => whole,
        _ => split_span(rod, h, drive, pot, depth, &whole),
    }
}

/// A span of `h` [s] whose solve (`whole`) did not converge or failed, re-solved from its
/// start as two spans of `h / 2`, each with `depth - 1`. On an error the configuration is
/// somewhere inside the span: the caller returns to its checkpoint.
fn split_span<R: ImplicitRod>(
    rod: &mut R,
    h: f64,
    drive: &Drive,
    pot: &mut Potentials<'_, '_>,
    depth: usize,
    whole: &Result<SolverReport, SolverError>,
) -> Result<SolverReport, SolverError> {
    let spent = whole.as_ref().map_or(0, |rep| rep.iterations);
    // Back to the span's start: every solve of the attempt started there (its retries
    // rewind), so the solver's saved configuration and velocities are the span's start.
    rod.rewind();
    let first = solve_span(rod, 0.5 * h, drive, pot, depth - 1)?;
    rod.restart();
    let mut rep = solve_span(rod, 0.5 * h, drive, pot, depth - 1)?;
    rep.iterations += first.iterations + spent;
    rep.converged &= first.converged;
    rep.residual = rep.residual.max(first.residual);
    rep.shifts += first.shifts;
    rep.refinements += first.refinements;
    rep.indefinite_steps += first.indefinite_steps;
    rep.chord_steps += first.chord_steps;
    rep.max_stretch = rep.max_stretch.max(first.max_stretch);
    rep.max_quaternion_error = rep.max_quaternion_error.max(first.max_quaternion_error);
    rep.retries += first.retries;
    rep.subdivisions += first.subdivisions + 1;
    Ok(rep)
}

/// One solve of a span of `h` [s], re-solved from its start while the potentials ask for it
/// (up to [`MAX_POTENTIAL_RETRIES`] times).
fn solve_retrying<R: ImplicitRod>(
    rod: &mut R,
    h: f64,
    drive: &Drive,
    pot: &mut Potentials<'_, '_>,
) -> Result<SolverReport, SolverError> {
    let mut retries = 0;
    loop {
        pot.begin(rod.node_positions(), Some(h));
        let step = Problem {
            h: Some(h),
            drive,
            pot,
        };
        let mut rep = rod.solve_step(&step)?;
        // A solve that has run away is refused before the potentials check its state:
        // their checks assume motion a hand could give (self-contact's swept test samples
        // each pair's path at a tenth of a millimetre: a runaway step kept it running for
        // over ten minutes in the live first throw of 2026-11-28, docs/reliability.md).
        let speed = rod.max_node_speed();
        if !rep.converged && (speed > RUNAWAY_SPEED || speed.is_nan()) {
            rod.rewind();
            return Err(SolverError::Runaway { speed });
        }
        if pot.accept(rod.node_positions()) || retries == MAX_POTENTIAL_RETRIES {
            rep.retries = retries;
            rep.external_energy = pot.evaluate(rod.node_positions(), None);
            return Ok(rep);
        }
        retries += 1;
        rod.rewind();
    }
}

impl<R: ImplicitRod> DynamicRod for R {
    fn step_with(
        &mut self,
        h: f64,
        drive: &Drive,
        pots: &mut [&mut dyn NodePotential],
    ) -> Result<SolverReport, SolverError> {
        let mut pot = Potentials(pots);
        self.hold(drive);
        let depth = self.subdivisions();
        let whole = solve_retrying(self, h, drive, &mut pot);
        let rep = match &whole {
            Ok(rep) if rep.converged => whole,
            _ if depth == 0 => whole,
            _ => {
                // The step's start is remembered only when a step is split (the whole
                // attempt's failure left the solver able to rewind to it).
                self.rewind();
                self.checkpoint();
                let split = split_span(self, h, drive, &mut pot, depth, &whole);
                if split.is_err() {
                    self.to_checkpoint();
                }
                split
            }
        };
        if rep.is_err() {
            self.release();
        }
        rep
    }

    fn equilibrate_with(
        &mut self,
        drive: &Drive,
        pots: &mut [&mut dyn NodePotential],
    ) -> Result<SolverReport, SolverError> {
        let mut pot = Potentials(pots);
        self.hold(drive);
        pot.begin(self.node_positions(), None);
        let mut retries = 0;
        let mut iterations = 0;
        loop {
            let mut rep = match newton::equilibrium(self, drive, &pot) {
                Err(e) => {
                    self.release();
                    return Err(e);
                }
                Ok(rep) => rep,
            };
            iterations += rep.iterations;
            let accepted = pot.accept(self.node_positions());
            let change = pot.relag(self.node_positions());
            if (accepted && change < 0.01) || retries == MAX_POTENTIAL_RETRIES {
                rep.iterations = iterations;
                rep.retries = retries;
                rep.external_energy = pot.evaluate(self.node_positions(), None);
                return Ok(rep);
            }
            retries += 1;
        }
    }
}
