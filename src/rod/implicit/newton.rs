//! The Levenberg–Marquardt Newton host both dynamic rod models run (docs/derivations/cosserat.md §C.2; the
//! IMC thesis, Choi 2021 §3.1, for DER): minimise the model's incremental potential Φ from the
//! current state by Newton steps on a banded system (Cholesky, with a Marquardt shift when the
//! Hessian is indefinite, and its floor raised and relaxed as Levenberg–Marquardt does), the
//! far couplings of self-contact by Woodbury, a backtracking (Armijo) line search from the
//! largest step the external potential allows, and the dead end torques' virtual work.
//!
//! A model supplies its layout, Φ and its trial points through [`NewtonRod`]; what differs
//! between the models is a documented capability of that trait ([`NewtonRod::GAUSS_NEWTON`],
//! [`NewtonRod::MAX_SHIFT`]), not a copied loop.

use super::potential::dot as term_dot;
use super::potential::{Definite, LowRank, NodePotential, PotentialSink, Woodbury, interval};
use super::{Drive, DynamicParams, ImplicitRod, SolverConfig, SolverError, SolverReport};
use crate::math::Vec3;
use crate::rod::banded::Banded;

/// A Newton solve has converged when the largest force (moment/l) imbalance is below this
/// fraction of the forces in play (the larger of the rod's weight + end loads + EI/L² and the
/// largest internal force at the step's start, docs/derivations/der-imc.md §F8), or when the
/// Newton step falls below `config.tolerance`.
pub(crate) const RESIDUAL_TOLERANCE: f64 = 1e-9;

/// A chord step ([`SolverConfig::chord`]) is followed by another while it contracts the
/// residual at least this much; a slower one hands back to Newton's method (the chord
/// method's contraction is the relative change of the Hessian since its factorisation,
/// Kelley 1995, Thm. 5.4.1: a factor 0.25 means that change is still small).
const CHORD_CONTRACTION: f64 = 0.25;

/// The step refinement ([`LinearSystem::refine_step`]) stops when the residual of `H dz = −g`
/// is this fraction of `g` in the preconditioner's norm: far below what Newton's quadratic
/// convergence needs from an inexact step (a forcing term `η ≤ ‖g‖`; Nocedal & Wright 2006,
/// Thm. 7.2), so the refined step converges as the exact one does.
const REFINE_TOLERANCE: f64 = 1e-6;

/// The most conjugate-gradient iterations one step's refinement runs: each costs a banded
/// multiply and solve, a tenth of a factorisation or less.
const REFINE_ITERATIONS: usize = 60;

/// Negative pivots of an indefinite banded factor ([`LinearSystem::factor_indefinite`]) must
/// exceed this fraction of their diagonal: the factor is made without pivoting, so its growth
/// is bounded by the smallest pivot; the step it gives is checked all the same.
const PIVOT_FLOOR: f64 = 1e-8;

/// A step from an indefinite factor is taken when it solves its system to this fraction of
/// the gradient (largest entries): the factor without pivoting is otherwise unchecked.
const INDEFINITE_SOLVE_TOLERANCE: f64 = 1e-8;

/// What [`NewtonRod::objective`] computes besides the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eval {
    /// Value, gradient and the exact banded Hessian.
    Exact,
    /// Value, gradient and the positive semi-definite Gauss–Newton Hessian (models with
    /// [`NewtonRod::GAUSS_NEWTON`] only).
    GaussNewton,
    /// Value and gradient (a line-search trial that may not be continued from).
    Gradient,
}

/// The Newton system of a model, allocated once: the banded Hessian, its factor, the gradient,
/// the step, the far (rank-one) Hessian terms of external potentials, and the layout.
#[derive(Clone, Debug)]
pub(crate) struct LinearSystem {
    /// Banded Hessian of Φ.
    pub h: Banded,
    /// Cholesky factor of `h` (plus any Marquardt shift); `h` itself stays intact for retries.
    pub chol: Banded,
    /// Gradient of Φ.
    pub g: Vec<f64>,
    /// Newton step.
    pub dz: Vec<f64>,
    /// Rank-one Hessian terms of external potentials that couple nodes far apart in index
    /// (self-contact), solved by the Woodbury identity around the banded factor.
    pub low_rank: Vec<LowRank>,
    /// The Woodbury correction for `low_rank`, factored with `chol`.
    pub wb: Woodbury,
    /// Unknowns per node in the interleaved vector: 3 position entries, then the rest
    /// (rotation entries: 3 for the Cosserat rod, DER's edge angle).
    pub stride: usize,
    /// Index of the first position coordinate of the potentials' node 0 (DER puts a held
    /// ghost node before a clamped start).
    pub offset: usize,
    /// Whether the last factorisation's Woodbury correction holds every far term (none of
    /// the negative ones left out).
    whole: bool,
    /// Work vectors of [`LinearSystem::refine_step`]: the step's first solve, the residual,
    /// the preconditioned residual, the search direction and the Hessian times it.
    work: [Vec<f64>; 5],
}

impl LinearSystem {
    /// A system of `dofs` unknowns, half-bandwidth `band`, with `stride` unknowns per node
    /// and the potentials' node 0 at `offset`.
    pub fn new(dofs: usize, band: usize, stride: usize, offset: usize) -> Self {
        LinearSystem {
            h: Banded::new(dofs, band),
            chol: Banded::new(dofs, band),
            g: vec![0.0; dofs],
            dz: vec![0.0; dofs],
            low_rank: Vec::new(),
            wb: Woodbury::default(),
            stride,
            offset,
            whole: false,
            work: std::array::from_fn(|_| vec![0.0; dofs]),
        }
    }

    /// Start an assembly: clear the gradient, the far terms and (with `hessian`) the Hessian.
    pub fn clear(&mut self, hessian: bool) {
        if hessian {
            self.h.clear();
        }
        self.g.iter_mut().for_each(|v| *v = 0.0);
    }

    /// The sink the external potentials add their gradient (and Hessian) to. With `hessian`,
    /// clears the far terms of the last assembly.
    pub fn sink(&mut self, hessian: bool) -> PotentialSink<'_> {
        // A gradient-only assembly adds no far terms and keeps those of the last Hessian:
        // they belong to the factor a chord step reuses ([`SolverConfig::chord`]).
        if hessian {
            self.low_rank.clear();
        }
        PotentialSink {
            g: &mut self.g,
            h: if hessian { Some(&mut self.h) } else { None },
            low_rank: if hessian {
                Some(&mut self.low_rank)
            } else {
                None
            },
            stride: self.stride,
            offset: self.offset,
        }
    }

    /// Add the nodes' part of Φ, the same in both models (inertia against the prediction,
    /// Rayleigh mass damping, gravity and the end forces), with its gradient and (diagonal)
    /// Hessian; returns its value [J].
    pub fn add_nodes(&mut self, nodes: &Nodes, p: &Problem, hessian: bool) -> f64 {
        let mut phi = 0.0;
        for (i, x) in nodes.x.iter().enumerate() {
            let m = nodes.mass[i];
            let mut f_ext = m * p.drive.gravity;
            if i == nodes.loaded.0 {
                f_ext += p.drive.start_force;
            }
            if i == nodes.loaded.1 {
                f_ext += p.drive.end_force;
            }
            phi -= f_ext.dot(x);
            let mut grad = -f_ext;
            let mut diag = 0.0;
            if let Some(h) = p.h {
                let wi = m / (h * h);
                let dx = x - nodes.predicted[i];
                phi += 0.5 * wi * dx.norm_squared();
                grad += dx * wi;
                diag += wi;
                if nodes.mass_damping > 0.0 {
                    let wd = nodes.mass_damping * m / h;
                    let dv = x - nodes.previous[i];
                    phi += 0.5 * wd * dv.norm_squared();
                    grad += dv * wd;
                    diag += wd;
                }
            }
            let at = self.stride * i;
            for k in 0..3 {
                self.g[at + k] += grad[k];
                // (A zero diagonal, a massless ghost node or a static solve, adds nothing.)
                if hessian && diag != 0.0 {
                    self.h.add_diagonal(at + k, diag);
                }
            }
        }
        phi
    }

    /// Held positions are fixed: their entries leave the rank-one terms too.
    pub fn release_held(&mut self, held: impl Fn(usize) -> bool) {
        for t in self.low_rank.iter_mut() {
            for a in 0..4 {
                if held(t.nodes[a]) {
                    t.u[3 * a..3 * a + 3].iter_mut().for_each(|v| *v = 0.0);
                }
            }
        }
    }

    /// Largest absolute position and rotation entries of a vector over the unknowns.
    pub fn largest(&self, z: &[f64]) -> (f64, f64) {
        let (mut f, mut m) = (0.0f64, 0.0f64);
        for c in z.chunks(self.stride) {
            for v in &c[..3] {
                f = f.max(v.abs());
            }
            for v in &c[3..] {
                m = m.max(v.abs());
            }
        }
        (f, m)
    }

    /// Factor the banded Hessian plus the Marquardt shift `mu` into `chol`, twisted around
    /// the far terms' interval (the plain factorisation without terms): the Woodbury
    /// correction then needs `B⁻¹` on that interval only (docs/derivations/banded.md). False
    /// if the banded part is not positive definite. If it is and the far terms make the whole
    /// indefinite (their negative weights: the exact self-contact Hessian), those terms are
    /// dropped (each pair's Hessian projected onto its positive part, as IPC does).
    fn factor(&mut self, mu: f64) -> bool {
        let (stride, offset) = (self.stride, self.offset);
        let index = |node| offset + stride * node;
        let n = self.h.size();
        let (k0, k1) = interval(&self.low_rank, index).unwrap_or((0, n));
        if self.chol.factor_twisted_from(&self.h, mu, k0, k1).is_err() {
            return false;
        }
        // False (indefinite with the negative terms) leaves them out of the correction.
        self.whole = self.wb.prepare(&self.chol, &self.low_rank, index);
        true
    }

    /// [`LinearSystem::factor`] where the banded part is indefinite (the exact Hessian of a
    /// suture pressed and pulled round a knot, docs/derivations/der-imc.md §F10): the band plus
    /// the shift `mu` factored as it is, with negative pivots, and the far terms' correction
    /// prepared for it. True when the corrected system is positive definite (its inertia from
    /// the band's pivots and the capacitance's, [`Woodbury::prepare_indefinite`]), with every
    /// far term or with the positive ones alone; false otherwise, or when a pivot is below
    /// `PIVOT_FLOOR` of its diagonal.
    fn factor_indefinite(&mut self, mu: f64) -> bool {
        let (stride, offset) = (self.stride, self.offset);
        let index = |node| offset + stride * node;
        let n = self.h.size();
        let (k0, k1) = interval(&self.low_rank, index).unwrap_or((0, n));
        let Ok(negatives) = self
            .chol
            .factor_indefinite_from(&self.h, mu, k0, k1, PIVOT_FLOOR)
        else {
            return false;
        };
        match self
            .wb
            .prepare_indefinite(&self.chol, &self.low_rank, index, negatives)
        {
            Definite::Not => false,
            d => {
                self.whole = d == Definite::Whole;
                true
            }
        }
    }

    /// Whether the step `dz` from an indefinite factor is a descent direction that solves its
    /// system `(B + μ diag|B_ii| + U C Uᵀ) dz = −g` (the negative terms left out unless the
    /// factor holds them all) to `INDEFINITE_SOLVE_TOLERANCE` of `g`.
    fn indefinite_step_holds(&mut self, mu: f64) -> bool {
        let slope = dot(&self.dz, &self.g);
        if slope.is_nan() || slope >= 0.0 || self.dz.iter().any(|v| !v.is_finite()) {
            return false;
        }
        let mut work = std::mem::take(&mut self.work);
        let hz = &mut work[1];
        self.mul_whole(mu, self.whole, &self.dz, hz);
        let (gmax, off) = self
            .g
            .iter()
            .zip(hz.iter())
            .fold((0.0f64, 0.0f64), |(gm, o), (g, y)| {
                (gm.max(g.abs()), o.max((g + y).abs()))
            });
        self.work = work;
        off <= INDEFINITE_SOLVE_TOLERANCE * gmax
    }

    /// `y = (H + ν diag|B_ii|) x`: `H` the whole Hessian (the band `B` and every far term,
    /// the negative ones only with `negative`) with the Levenberg–Marquardt floor `ν` as the
    /// factor has it.
    fn mul_whole(&self, floor: f64, negative: bool, x: &[f64], y: &mut [f64]) {
        let (stride, offset) = (self.stride, self.offset);
        self.h.mul(x, y);
        if floor > 0.0 {
            for (i, (y, x)) in y.iter_mut().zip(x).enumerate() {
                *y += floor * self.h.get(i, i).abs() * x;
            }
        }
        let index = |node| offset + stride * node;
        for t in self.low_rank.iter().filter(|t| negative || t.c > 0.0) {
            let d = term_dot(t, x, 0, &index) * t.c;
            for a in 0..4 {
                let i = index(t.nodes[a]);
                for c in 0..3 {
                    y[i + c] += t.u[3 * a + c] * d;
                }
            }
        }
    }

    /// `z = P⁻¹ r` with the last factorisation `P` (banded factor and Woodbury correction).
    fn precondition(&mut self, z: &mut [f64]) {
        let (stride, offset) = (self.stride, self.offset);
        self.chol.solve(z);
        self.wb
            .apply(&self.chol, &self.low_rank, |node| offset + stride * node, z);
    }

    /// Refine a step made with a Marquardt shift `μ` above the Levenberg–Marquardt floor
    /// `ν`, or without the far terms' negative part, towards the step the floor asks for:
    /// conjugate gradients on `(H + ν diag|B_ii|) dz = −g` (`H` the whole Hessian) from that
    /// step, preconditioned by the factor it came from (`P = B + μ diag|B_ii| + U C Uᵀ`,
    /// positive definite; Nocedal & Wright 2006, Alg. 5.3 and §7.1; docs/derivations/der-imc.md
    /// §F9). Where a suture is pressed and pulled round a knot the band alone is indefinite
    /// while the whole Hessian with its contact terms is not (§F9): the shifted step then
    /// converges linearly, to the iteration cap, and the refined one quadratically. Stops on
    /// a direction of non-positive curvature (the whole system is indefinite: the iterate so
    /// far is kept, as Steihaug's truncated CG does), when the residual's `P⁻¹`-norm falls
    /// below `REFINE_TOLERANCE` of the right-hand side's, or after `REFINE_ITERATIONS`; falls
    /// back to the first step if the result is not a descent direction. Returns the CG
    /// iterations run. Allocation-free (the work vectors are the system's).
    fn refine_step(&mut self, mu: f64, floor: f64) -> usize {
        if self.whole && mu == floor {
            return 0;
        }
        let mut work = std::mem::take(&mut self.work);
        let [first, r, z, p, hp] = &mut work;
        first.copy_from_slice(&self.dz);
        // ‖b‖²_{P⁻¹} with b = −g and dz = P⁻¹b.
        let rz0: f64 = -dot(&self.dz, &self.g);
        let mut its = 0;
        if rz0 > 0.0 {
            self.mul_whole(floor, true, &self.dz, hp);
            for ((r, g), hp) in r.iter_mut().zip(&self.g).zip(hp.iter()) {
                *r = -g - hp;
            }
            z.copy_from_slice(r);
            self.precondition(z);
            let mut rz = dot(r, z);
            p.copy_from_slice(z);
            let goal = REFINE_TOLERANCE * REFINE_TOLERANCE * rz0;
            while its < REFINE_ITERATIONS && rz > goal {
                its += 1;
                self.mul_whole(floor, true, p, hp);
                let php = dot(p, hp);
                // Not positive along p: the whole system is indefinite (Steihaug).
                if php.is_nan() || php <= 0.0 {
                    break;
                }
                let alpha = rz / php;
                for ((d, r), (p, hp)) in self
                    .dz
                    .iter_mut()
                    .zip(r.iter_mut())
                    .zip(p.iter().zip(hp.iter()))
                {
                    *d += alpha * p;
                    *r -= alpha * hp;
                }
                z.copy_from_slice(r);
                self.precondition(z);
                let rz_new = dot(r, z);
                let beta = rz_new / rz;
                rz = rz_new;
                for (p, z) in p.iter_mut().zip(z.iter()) {
                    *p = z + beta * *p;
                }
            }
            // Not a descent direction (rounding, or an indefinite system): the first step.
            let slope = dot(&self.dz, &self.g);
            if slope.is_nan() || slope >= 0.0 || self.dz.iter().any(|v| !v.is_finite()) {
                self.dz.copy_from_slice(first);
            }
        }
        self.work = work;
        its
    }

    /// The Newton step `dz = −H⁻¹g` from the factor, corrected for the far terms (Woodbury).
    fn solve_step(&mut self) {
        let mut dz = std::mem::take(&mut self.dz);
        dz.iter_mut().zip(&self.g).for_each(|(d, g)| *d = -g);
        self.precondition(&mut dz);
        self.dz = dz;
    }
}

/// `a · b`.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// The node data of Φ's nodal part ([`LinearSystem::add_nodes`]).
pub(crate) struct Nodes<'a> {
    /// Node positions [m] (node `i`'s first unknown at `stride · i`).
    pub x: &'a [Vec3],
    /// Inertial prediction `x̃` [m].
    pub predicted: &'a [Vec3],
    /// Positions at the start of the step [m] (mass damping).
    pub previous: &'a [Vec3],
    /// Lumped masses [kg].
    pub mass: &'a [f64],
    /// The nodes the start and end forces act on.
    pub loaded: (usize, usize),
    /// Rayleigh mass damping α [1/s].
    pub mass_damping: f64,
}

impl<'a> Nodes<'a> {
    /// The node data: positions, prediction, start positions, masses, loaded nodes, damping.
    pub fn new(
        x: &'a [Vec3],
        predicted: &'a [Vec3],
        previous: &'a [Vec3],
        mass: &'a [f64],
        loaded: (usize, usize),
        mass_damping: f64,
    ) -> Self {
        Nodes {
            x,
            predicted,
            previous,
            mass,
            loaded,
            mass_damping,
        }
    }
}

/// What one Newton solve minimises Φ for: the step [s] (`None`: a static solve), the drive
/// and the external potential.
#[derive(Clone, Copy)]
pub(crate) struct Problem<'a> {
    /// Step length [s] (the inertia's), or `None` for a static solve.
    pub h: Option<f64>,
    /// Held-end targets and loads.
    pub drive: &'a Drive,
    /// External potential on the node positions.
    pub pot: &'a dyn NodePotential,
}

/// What the Newton host asks of a rod model: its layout ([`LinearSystem`]), its incremental
/// potential Φ, trial points along the Newton step, and what differs between the models.
pub(crate) trait NewtonRod {
    /// Whether the model has a positive semi-definite Gauss–Newton Hessian to fall back on
    /// when the exact one needs a large shift. The Cosserat rod has one (its energies'
    /// `Hessian::GaussNewton`: far from equilibrium, docs/derivations/cosserat.md §D.13, the exact Hessian can be so
    /// indefinite that only a huge shift helps); DER's bend–twist stencil has none, so it
    /// shifts the exact Hessian further ([`NewtonRod::MAX_SHIFT`]).
    const GAUSS_NEWTON: bool;
    /// The largest Marquardt shift tried before the solve fails as [`SolverError::Singular`]:
    /// 1e4 for the Cosserat rod (which has the Gauss–Newton Hessian first); 1e6 for DER,
    /// whose static solves of free rods (rigid modes) have only the shift to regularise them.
    const MAX_SHIFT: f64;
    /// Material and discretisation, solver settings and the Newton system.
    fn parts(&mut self) -> (&DynamicParams, &SolverConfig, &mut LinearSystem);
    /// The Newton system.
    fn system(&mut self) -> &mut LinearSystem {
        self.parts().2
    }
    /// Φ of the problem `p` at the current state (or the trial state, with `trial`), with its
    /// gradient and the Hessian `eval` asks for, assembled into [`NewtonRod::system`].
    fn objective(&mut self, trial: bool, eval: Eval, p: &Problem) -> f64;
    /// The largest internal force the rod carries in its current state [N] (the tension or
    /// shear force of its most loaded element): the forces in play that the convergence test
    /// measures the residual against, with [`DynamicParams::force_scale`].
    fn load_scale(&self) -> f64;
    /// Work of the dead end torques along the step `dz` per unit step length.
    fn torque_work(&self, drive: &Drive) -> f64;
    /// Set the trial node positions to the current ones plus `t dz`.
    fn set_trial_positions(&mut self, t: f64);
    /// Set the trial rotation unknowns to the current ones plus `t dz`; returns the largest
    /// quaternion norm error before renormalisation (0 where there are none).
    fn set_trial_rest(&mut self, t: f64) -> f64;
    /// The current and the trial node positions the external potential sees.
    fn positions_and_trial(&self) -> (&[Vec3], &[Vec3]);
    /// Make the trial point the current state.
    fn take_trial(&mut self);
}

/// Newton iterations on Φ from the current state (held unknowns imposed): at most
/// `max_iterations`, counted in `report` with the shifts and the final residual.
pub(crate) fn newton<R: NewtonRod>(
    rod: &mut R,
    p: &Problem,
    max_iterations: usize,
    report: &mut SolverReport,
) -> Result<(), SolverError> {
    let (params, config, _) = rod.parts();
    let (l, tol, refine) = (params.segment_length, config.tolerance, config.refine_steps);
    let (indefinite_band, cross_gaps) = (config.indefinite_band, config.cross_gaps);
    let chord = config.chord;
    // The forces in play (docs/derivations/der-imc.md §F8): the rod's weight, end loads and
    // `EI/L²`, or its largest internal force if larger (a suture pulled with newtons by the
    // hands or pressed by contact): converged means balanced to `RESIDUAL_TOLERANCE` of the
    // forces acting, not of `EI/L²` (5e-5 N for the tie's suture, which asked for a balance
    // to 5e-14 N under a 1 N pull, at the rounding floor).
    let fscale = params.force_scale(p.drive).max(rod.load_scale());
    let pot = p.pot;
    // The residual of the assembled gradient relative to the force scale.
    let residual = |s: &LinearSystem| {
        let (f, m) = s.largest(&s.g);
        (f / fscale).max(m / (fscale * l))
    };
    rod.system().wb.cross_gaps = cross_gaps;
    let mut phi = rod.objective(false, Eval::Exact, p);
    report.converged = false;
    // Levenberg–Marquardt floor on the shift, raised when the line search stalls far from
    // equilibrium (the Newton model is poor there) and relaxed after full steps.
    let mut min_shift = 0.0f64;
    // Whether the Hessian is out of date: the accepted point of the last line search was a
    // backtracked trial, evaluated without its Hessian.
    let mut stale = false;
    // The shift the last iteration's factorisation took.
    let mut last_mu = 0.0f64;
    // Chord steps (`SolverConfig::chord`; Kelley 1995, §5.4; docs/derivations/der-imc.md
    // §F13): whether this iteration's step reuses the last factorisation (the banded factor,
    // its Woodbury correction and the far terms it was prepared with) instead of factoring
    // the Hessian at the current point.
    let mut reuse = false;
    for it in 0..max_iterations {
        if !phi.is_finite() || rod.system().g.iter().any(|v| !v.is_finite()) {
            return Err(SolverError::NonFinite { iteration: it });
        }
        if stale {
            // The same point and the same arithmetic as the trial: Φ and g are unchanged.
            rod.objective(false, Eval::Exact, p);
            stale = false;
        }
        let chord_step = reuse;
        if chord_step {
            // The kept factor `P` of a nearby Hessian: `dz = −P⁻¹ g`, a descent direction
            // (`P` is positive definite), which the line search and the residual judge as
            // they judge a Newton step.
            rod.system().solve_step();
        }
        // Factor, with a Marquardt shift if the Hessian is indefinite. Far from equilibrium
        // (a large perturbation, docs/derivations/cosserat.md §D.13) the exact Hessian can be so indefinite that only
        // a huge shift helps; switch to the positive semi-definite Gauss–Newton Hessian at the
        // same point instead, where the model has one, then shift that if needed (static free
        // rods: rigid modes).
        // Refining, the shift only preconditions: the ladder starts a rung below the last
        // iteration's shift instead of repeating the rungs that failed there (3 % of the
        // square's whole run with refinement from 19.5 s, der-imc.md §F9).
        let start = if refine {
            min_shift.max(last_mu * 0.1)
        } else {
            min_shift
        };
        let mut mu = start;
        let mut gauss_newton = false;
        // Where the band at the floor is indefinite, its exact step if the whole Hessian is
        // definite and the step checks out (der-imc.md §F10); otherwise the shift ladder.
        let mut try_indefinite = indefinite_band;
        let mut solved = chord_step;
        if !chord_step {
            loop {
                if rod.system().factor(mu) {
                    break;
                }
                if try_indefinite && mu == start {
                    try_indefinite = false;
                    let s = rod.system();
                    if s.factor_indefinite(mu) {
                        s.solve_step();
                        if s.indefinite_step_holds(mu) {
                            report.indefinite_steps += 1;
                            solved = true;
                            break;
                        }
                    }
                }
                mu = if mu == 0.0 { 1e-8 } else { mu * 10.0 };
                if R::GAUSS_NEWTON && !gauss_newton && mu > 1e-3 {
                    rod.objective(false, Eval::GaussNewton, p);
                    gauss_newton = true;
                    mu = min_shift;
                } else if mu > R::MAX_SHIFT {
                    return Err(SolverError::Singular);
                }
                report.shifts += 1;
            }
        }
        // A factor of the exact Hessian, unshifted and positive definite, may serve the next
        // iterations as chord steps.
        let plain = !chord_step && !solved && !gauss_newton && mu == 0.0;
        if !chord_step {
            last_mu = mu;
        }
        let s = rod.system();
        if !solved {
            s.solve_step();
        }
        if refine && !chord_step {
            report.refinements += s.refine_step(mu, min_shift);
        }
        let slope = dot(&s.dz, &s.g);
        if chord_step && (slope.is_nan() || slope >= 0.0) {
            // Rounding made the kept factor's step no descent direction: factor afresh.
            reuse = false;
            stale = true;
            continue;
        }
        // Whether the next iteration is planned as a chord step: the trials then need no
        // Hessian. Confirmed after the step by its contraction.
        let chord_next = chord && (plain || chord_step);
        let (dx_max, dth_max) = s.largest(&s.dz);
        let res_now = residual(s);
        // Work of the dead end torques along the step per unit t.
        let tq = rod.torque_work(p.drive);
        let small = dx_max <= tol * l && dth_max <= tol;
        // Backtracking line search (Armijo) on Φ, assembling at the accepted point, from the
        // largest step the external potential allows (no tunnelling through obstacles).
        let t_max = if !pot.limits_steps() {
            1.0
        } else {
            rod.set_trial_positions(1.0);
            let (x, x_full) = rod.positions_and_trial();
            pot.max_step(x, x_full).clamp(1e-12, 1.0)
        };
        let mut t = t_max;
        let mut accepted = false;
        let mut qerr = 0.0f64;
        for _ in 0..40 {
            rod.set_trial_positions(t);
            qerr = rod.set_trial_rest(t);
            // The full step is assembled with its Hessian (it is usually taken); a backtracked
            // trial, and the last allowed iteration's, only with its gradient: the Hessian is
            // assembled once the next iteration needs it (`stale`). So is a small step's full
            // trial: taken, it ends the solve (the convergence test below), and no iteration
            // reads its Hessian (Φ and the gradient are the same bits either way).
            let last = small && t == 1.0;
            let eval = if it + 1 == max_iterations || t < 0.3 * t_max || chord_next || last {
                Eval::Gradient
            } else {
                Eval::Exact
            };
            let phi_t = rod.objective(true, eval, p) - t * tq;
            // Armijo on Φ; near convergence Φ's decrease sinks below its rounding (a weight of
            // 1e-5 J against decreases of 1e-20 J), so a full step that halves the residual is
            // accepted too.
            if phi_t <= phi + 1e-4 * t * slope
                || (t == t_max && residual(rod.system()) < 0.5 * res_now)
                || (small && phi_t <= phi + 1e-12 * phi.abs())
            {
                phi = phi_t + 0.0;
                accepted = true;
                stale = t < 0.3 * t_max;
                break;
            }
            t *= 0.5;
        }
        report.iterations = it + 1;
        if chord_step {
            report.chord_steps += 1;
        }
        if !accepted {
            reuse = false;
            // No decrease along this direction: at the rounding floor, stop; otherwise the
            // model is poor here: reassemble where we are and retry with a larger shift.
            rod.objective(false, Eval::Exact, p);
            report.residual = residual(rod.system());
            if report.residual < 1e3 * RESIDUAL_TOLERANCE {
                report.converged = true;
                return Ok(());
            }
            if min_shift >= 1e4 {
                return Ok(());
            }
            min_shift = (mu * 100.0).max(1e-6);
            report.shifts += 1;
            continue;
        }
        rod.take_trial();
        report.max_quaternion_error = report.max_quaternion_error.max(qerr);
        // Φ now includes the accumulated torque work; keep it relative to the new point.
        phi += t * tq;
        report.residual = residual(rod.system());
        if (small && t == 1.0) || report.residual <= RESIDUAL_TOLERANCE {
            report.converged = true;
            return Ok(());
        }
        if chord_next {
            // Keep the factor while a full step contracts the residual well; otherwise the
            // next iteration factors the Hessian at this point (assembled afresh: `stale`).
            reuse = t == 1.0 && report.residual <= CHORD_CONTRACTION * res_now;
            stale = !reuse;
        }
        // At the rounding floor (EA/l against forces of 1e-4 N leaves relative residuals of
        // ~1e-8) the line search only finds damped steps that change nothing: stop there, as
        // when no step is accepted at all.
        if t < 1.0 && report.residual > 0.5 * res_now && report.residual < 1e3 * RESIDUAL_TOLERANCE
        {
            report.converged = true;
            return Ok(());
        }
        // Levenberg–Marquardt update of the shift's floor (Moré 1978; Nocedal & Wright 2006,
        // §10.3): up ×100 past a stall, up ×10 after a short step (the quadratic model is poor
        // at this scale: Gauss–Newton on a suture pulled round a hole zig-zagged with steps of
        // 1/32 and 1/64 for all 40 iterations, the residual falling 3 % per iteration), down
        // ×100 after a full one.
        min_shift = if t < 1e-6 {
            (mu * 100.0).max(1e-6)
        } else if t < 0.1 {
            (min_shift * 10.0).max(1e-6)
        } else if t == 1.0 && min_shift > 1e-8 {
            min_shift * 0.01
        } else if t == 1.0 {
            0.0
        } else {
            min_shift
        };
    }
    Ok(())
}

/// Static equilibrium by Newton with line search and Marquardt shifts (a local minimum of the
/// potential energy, reached from the current state). Velocities are set to zero; on an error
/// the configuration is restored.
pub(crate) fn equilibrium<R: ImplicitRod>(
    rod: &mut R,
    drive: &Drive,
    pot: &dyn NodePotential,
) -> Result<SolverReport, SolverError> {
    rod.save();
    rod.impose(drive);
    let mut report = SolverReport::default();
    let cap = rod.parts().1.max_iterations.max(500);
    let p = Problem {
        h: None,
        drive,
        pot,
    };
    if let Err(e) = newton(rod, &p, cap, &mut report) {
        rod.restore();
        return Err(e);
    }
    rod.settle(&drive.gravity, &mut report);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rod::banded::uniform;

    /// A system of `nodes` nodes of 3 unknowns, bandwidth 8: a random diagonally dominant
    /// band, made indefinite at node `k` by the block `[[1, 2], [2, 1]]` (eigenvalues 3 and
    /// −1, the −1 along `(e_x − e_y)/√2`) on its x and y, with the far terms: a pair coupling
    /// node `k` with node `j` along that direction with weight `c`, and a negative one.
    fn system(c: f64) -> LinearSystem {
        let (nodes, k, j) = (30, 6, 22);
        let n = 3 * nodes;
        let mut s = LinearSystem::new(n, 8, 3, 0);
        let mut rnd = uniform(7);
        for i in 0..n {
            for jj in i.saturating_sub(8)..i {
                s.h.add_lower(i, jj, 0.1 * rnd());
            }
            s.h.add_diagonal(i, 2.0 + rnd());
        }
        // Replace node k's x–y block by [[1, 2], [2, 1]].
        let (x, y) = (3 * k, 3 * k + 1);
        s.h.add_diagonal(x, 1.0 - s.h.get(x, x));
        s.h.add_diagonal(y, 1.0 - s.h.get(y, y));
        s.h.add_lower(y, x, 2.0 - s.h.get(y, x));
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let mut u = [0.0; 12];
        u[0] = h;
        u[1] = -h;
        u[6] = 0.05;
        s.low_rank.push(LowRank {
            nodes: [k, k + 1, j, j + 1],
            u,
            c,
        });
        let mut v = [0.0; 12];
        v[2] = 0.3;
        v[8] = -0.2;
        s.low_rank.push(LowRank {
            nodes: [k, k + 1, j, j + 1],
            u: v,
            c: -0.4,
        });
        s.g.iter_mut().for_each(|g| *g = rnd() - 0.5);
        s
    }

    /// The whole Hessian, dense.
    fn dense(s: &LinearSystem) -> nalgebra::DMatrix<f64> {
        let n = s.h.size();
        let mut a = nalgebra::DMatrix::from_fn(n, n, |i, j| s.h.get(i.max(j), i.min(j)));
        for t in &s.low_rank {
            let mut u = nalgebra::DVector::<f64>::zeros(n);
            for a in 0..4 {
                for c in 0..3 {
                    u[3 * t.nodes[a] + c] += t.u[3 * a + c];
                }
            }
            a += &u * u.transpose() * t.c;
        }
        a
    }

    /// The step the floor `ν` asks for, by a dense LU: `(H + ν diag|B_ii|) dz = −g`.
    fn floored_step(s: &LinearSystem, nu: f64) -> nalgebra::DVector<f64> {
        let mut a = dense(s);
        for i in 0..a.nrows() {
            a[(i, i)] += nu * s.h.get(i, i).abs();
        }
        a.lu()
            .solve(&-nalgebra::DVector::from_column_slice(&s.g))
            .unwrap()
    }

    /// The Marquardt ladder of `newton` from `floor`: the shift the band needs.
    fn factor(s: &mut LinearSystem, floor: f64) -> f64 {
        let mut mu = floor;
        while !s.factor(mu) {
            mu = if mu == 0.0 { 1e-8 } else { mu * 10.0 };
        }
        mu
    }

    #[test]
    fn a_shifted_step_is_refined_to_the_exact_newton_step_where_the_whole_is_definite() {
        let mut s = system(3.0);
        let a = dense(&s);
        let eig = a.clone().symmetric_eigen().eigenvalues;
        assert!(eig.min() > 0.0, "the whole must be definite: {}", eig.min());
        let exact = a
            .lu()
            .solve(&-nalgebra::DVector::from_column_slice(&s.g))
            .unwrap();
        let mu = factor(&mut s, 0.0);
        // The band alone is indefinite: its −1 needs a shift of about 1/|B_ii| = 1.
        assert!(mu >= 1.0, "{mu}");
        s.solve_step();
        let before = (nalgebra::DVector::from_column_slice(&s.dz) - &exact).amax() / exact.amax();
        let its = s.refine_step(mu, 0.0);
        let after = (nalgebra::DVector::from_column_slice(&s.dz) - &exact).amax() / exact.amax();
        println!("shift {mu}: step error {before:.2e} → {after:.2e} after {its} CG iterations");
        assert!(before > 1e-2, "{before}");
        assert!(its > 0 && its < REFINE_ITERATIONS, "{its}");
        // REFINE_TOLERANCE (1e-6) is in the preconditioner's norm; measured 1.33e-7 here.
        assert!(after < 2e-7, "{after}");
        // With the floor ν the target is H + ν diag|B_ii|.
        let mut s = system(3.0);
        let nu = 0.5;
        let target = floored_step(&s, nu);
        let mu = factor(&mut s, nu);
        assert!(mu > nu);
        s.solve_step();
        s.refine_step(mu, nu);
        let err = (nalgebra::DVector::from_column_slice(&s.dz) - &target).amax() / target.amax();
        println!("floor {nu}, shift {mu}: step error {err:.2e}");
        assert!(err < 2e-7, "{err}");
    }

    #[test]
    fn an_indefinite_band_gives_the_exact_step_where_the_whole_is_definite() {
        // The whole definite (weight 3 along the band's −1, the negative term within it).
        let mut s = system(3.0);
        let a = dense(&s);
        let exact = a
            .lu()
            .solve(&-nalgebra::DVector::from_column_slice(&s.g))
            .unwrap();
        assert!(!s.factor(0.0), "the band alone must be indefinite");
        assert!(s.factor_indefinite(0.0));
        assert_eq!(
            s.chol.factor_indefinite_from(&s.h, 0.0, 0, 90, PIVOT_FLOOR),
            Ok(1)
        );
        assert!(s.factor_indefinite(0.0));
        assert!(s.whole, "every term, the negative one too");
        s.solve_step();
        let err = (nalgebra::DVector::from_column_slice(&s.dz) - &exact).amax() / exact.amax();
        println!("indefinite band: step error {err:.2e}");
        // Measured 5.8e-16: a direct solve's rounding.
        assert!(err < 1e-14, "{err}");
        assert!(s.indefinite_step_holds(0.0));
        // With a floor ν the system is H + ν diag|B_ii|, still indefinite in the band.
        let nu = 0.2;
        let target = floored_step(&s, nu);
        assert!(!s.factor(nu));
        assert!(s.factor_indefinite(nu));
        s.solve_step();
        let err = (nalgebra::DVector::from_column_slice(&s.dz) - &target).amax() / target.amax();
        assert!(err < 1e-14, "{err}");
    }

    #[test]
    fn an_indefinite_band_is_refused_where_the_whole_is_indefinite() {
        // Weight 0.5 along the band's −1: the whole keeps a negative eigenvalue, with or
        // without the negative term, and the inertia says so.
        let mut s = system(0.5);
        let eig = dense(&s).symmetric_eigen().eigenvalues;
        assert!(eig.min() < 0.0, "{}", eig.min());
        assert!(!s.factor(0.0));
        assert!(!s.factor_indefinite(0.0));
        // With the positive term alone definite, the negative one making it indefinite: the
        // positive part is taken, as the definite band's correction does.
        let mut s = system(3.0);
        s.low_rank[1].c = -40.0;
        let eig = dense(&s).symmetric_eigen().eigenvalues;
        assert!(eig.min() < 0.0, "{}", eig.min());
        assert!(s.factor_indefinite(0.0));
        assert!(!s.whole);
        s.solve_step();
        let mut p = s.clone();
        p.low_rank.pop();
        let exact = dense(&p)
            .lu()
            .solve(&-nalgebra::DVector::from_column_slice(&s.g))
            .unwrap();
        let err = (nalgebra::DVector::from_column_slice(&s.dz) - &exact).amax() / exact.amax();
        assert!(err < 1e-14, "{err}");
        assert!(s.indefinite_step_holds(0.0));
    }

    #[test]
    fn where_the_whole_is_indefinite_the_refined_step_is_still_a_descent_direction() {
        // Weight 0.5 along the band's −1: the whole keeps a negative eigenvalue.
        let mut s = system(0.5);
        let eig = dense(&s).symmetric_eigen().eigenvalues;
        assert!(eig.min() < 0.0, "{}", eig.min());
        let mu = factor(&mut s, 0.0);
        s.solve_step();
        let first = s.dz.clone();
        let its = s.refine_step(mu, 0.0);
        let slope = dot(&s.dz, &s.g);
        println!("indefinite: {its} CG iterations, slope {slope:.3e}");
        assert!(slope < 0.0);
        assert!(
            its < REFINE_ITERATIONS,
            "stopped on the negative curvature: {its}"
        );
        assert!(s.dz != first);
    }

    #[test]
    fn an_unshifted_factor_of_the_whole_is_not_refined() {
        let mut s = system(3.0);
        // Make the band definite: node 6's block back to [[3, 0], [0, 3]].
        let (x, y) = (18, 19);
        s.h.add_diagonal(x, 2.0);
        s.h.add_diagonal(y, 2.0);
        s.h.add_lower(y, x, -2.0);
        s.low_rank.pop();
        assert_eq!(factor(&mut s, 0.0), 0.0);
        s.solve_step();
        let first = s.dz.clone();
        assert_eq!(s.refine_step(0.0, 0.0), 0);
        assert_eq!(s.dz, first);
    }
}
