//! Sag-free rest shapes (Takahashi & Batty 2025, "Rest Shape Optimization for Sag-Free Discrete
//! Elastic Rods"; docs/derivations/sagfree.md): keep the authored configuration `q0` (node positions and
//! edge angles) and solve for rest parameters — rest edge lengths `l̄`, per-edge rest
//! curvatures `ω̄` (4 per vertex) and rest twists `τ̄` — that make `q0` a static equilibrium of
//! the unchanged forward DER under gravity and the scene's end loads.
//!
//! Objective (paper eqs. 19–20, 29, 37–38 with Δt cancelled, docs/derivations/sagfree.md §2.2):
//!
//!   F(s̄) = ½ fᵀ M⁻¹ f + ½ α Σ w_j (s̄_j − s̄0_j)² + ½ β (‖(s̄ − s̄_max)₊‖² + ‖(s̄_min − s̄)₊‖²)
//!
//! with `f = f_ext − ∇_q E(q0; s̄)` over the free unknowns and `M` the masses and edge spin
//! inertias *frozen at their authored values* (docs/derivations/sagfree.md §1.3 pitfall). Gauss–Newton (eq. 22):
//! `H = Jᵀ M⁻¹ J + α W + β (H_max + H_min)`, `J = ∂f/∂s̄` (eqs. 24–28, in our energies' form),
//! with the box gradient's sign corrected (docs/derivations/sagfree.md §2.4 and §4 item 6: the paper prints "+" in eq. 39), Armijo backtracking.
//!
//! Our choices where the paper is silent or the derivation advises (docs/derivations/sagfree.md §4 items 8, 10):
//! - Lengths are optimised relative to their authored values (`u = l̄/l̄0`), so the regulariser,
//!   the box and the step are unitless.
//! - `α` is a setting (default 1e-7, suture scale); if the Gauss–Newton matrix cannot be factored
//!   it is raised ×100 (reported).
//! - The system is solved banded (unknowns interleaved per vertex, `[u_k, ω̄_k(4), τ̄_k]`:
//!   half-bandwidth 23) with the symmetric scaling `D H D`, `D = diag(H)^{-½}`.
//! - The stability check (docs/derivations/sagfree.md §4 item 9): the static Hessian of the forward energy at `q0`
//!   with the optimised rest shape is factored; a failed `L D Lᵀ` (a non-positive pivot) means
//!   the equilibrium is a saddle, which a 1 µm nudge will leave (reported, not hidden).

use super::DerRod;
use super::energy::{self, CurvatureForm, Grad11};
use super::rod::{held_dofs, material, ti, xi};
use crate::math::Vec3;
use crate::rod::banded::Banded;
use crate::rod::implicit::potential::Potentials;
use crate::rod::implicit::{Drive, EndCondition};

/// Settings of the optimisation (docs/derivations/sagfree.md §6 "How to expose it").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SagFreeOptions {
    /// Regulariser weight α (paper eq. 29) [-]: 1e-5 in the paper (r = 1 mm, c = 1e8); 1e-7
    /// for sutures (docs/derivations/sagfree.md §4 item 8: the residual sag scales with α).
    pub alpha: f64,
    /// Box penalty weight β (paper eq. 38) [-].
    pub beta: f64,
    /// Rest-length bounds as fractions of the authored lengths (paper eq. 32).
    pub length_bounds: (f64, f64),
    /// Largest change of a rest curvature component Δκ (paper eqs. 33, 35) [-].
    pub curvature_bound: f64,
    /// Largest change of a rest twist Δm (paper eqs. 34, 36) [rad].
    pub twist_bound: f64,
    /// Gauss–Newton iteration cap (paper: 500).
    pub max_iterations: usize,
    /// Optimise the rest twists too (paper default; the zero-twist variant can leave a flip,
    /// docs/derivations/sagfree.md §5.4 C2).
    pub optimise_twist: bool,
}

impl Default for SagFreeOptions {
    fn default() -> Self {
        SagFreeOptions {
            alpha: 1e-7,
            beta: 1e6,
            length_bounds: (0.1, 1.1),
            curvature_bound: std::f64::consts::SQRT_2,
            twist_bound: std::f64::consts::PI / 8.0,
            max_iterations: 500,
            optimise_twist: true,
        }
    }
}

/// What the optimisation did.
#[derive(Clone, Debug, PartialEq)]
pub struct SagFreeReport {
    /// Gauss–Newton iterations.
    pub iterations: usize,
    /// `½ fᵀ M⁻¹ f` with the authored (naive) rest shape [J/s²] (the kinetic energy one step of
    /// Δt from rest would gain, divided by Δt²).
    pub kinetic_before: f64,
    /// The same with the optimised rest shape [J/s²].
    pub kinetic_after: f64,
    /// Largest unbalanced force on a free node, before and after [N].
    pub force_before: f64,
    /// See `force_before`.
    pub force_after: f64,
    /// Parameters outside their box at the end (the penalty lets them out a little).
    pub box_active: usize,
    /// Largest relative rest-length change, largest rest-curvature and rest-twist changes.
    pub max_length_change: f64,
    /// See `max_length_change` [-].
    pub max_curvature_change: f64,
    /// See `max_length_change` [rad].
    pub max_twist_change: f64,
    /// α actually used (raised if the system was singular).
    pub alpha: f64,
    /// Whether the optimised state is a minimum of the forward energy (its static Hessian is
    /// positive definite). `false`: a saddle — the strand will leave it when nudged.
    pub stable: bool,
    /// Whether the optimisation reached an equilibrium: the remaining force is below 1e-4 of
    /// the largest load on a node (weight or end load), with no box active.
    pub converged: bool,
}

/// Why the optimisation could not run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SagFreeError {
    /// The rod has no clamped end: nothing holds it up.
    #[error("a sag-free rest shape needs a clamped end (the rod hangs from it)")]
    NotClamped,
    /// The optimiser is written for DER 2008's per-edge curvatures.
    #[error(
        "a sag-free rest shape needs the per-edge curvature (Bergou 2008) of the forward model"
    )]
    CurvatureForm,
    /// Even α raised to 1 left the Gauss–Newton matrix singular, or a value was not finite.
    #[error("the sag-free Gauss–Newton system is singular or not finite")]
    Singular,
}

/// Unknowns per vertex block: `[u_k, ω̄_k(4), τ̄_k]`.
const BLOCK: usize = 6;
/// Half-bandwidth of `Jᵀ M⁻¹ J`: a row (one unknown of q) touches blocks node−2 ..= node+1.
const HB: usize = 4 * BLOCK - 1;
/// Columns a row of J can touch.
const ROW: usize = 4 * BLOCK;

/// The geometry of `q0`, constant during the optimisation (docs/derivations/sagfree.md §7).
struct Fixed {
    /// Per vertex: curvatures ω (4), their gradients, twist τ and its gradient.
    omega: Vec<[f64; 4]>,
    domega: Vec<[Grad11; 4]>,
    tau: Vec<f64>,
    dtau: Vec<Grad11>,
    /// Per edge: current length and tangent.
    len: Vec<f64>,
    tan: Vec<Vec3>,
    /// External force over the unknowns of q [N, N m].
    f_ext: Vec<f64>,
    /// 1/M over the unknowns of q (0 for held ones).
    inv_m: Vec<f64>,
    /// Whether each edge is a ghost (a clamp's).
    ghost: Vec<bool>,
}

/// The rest parameters being optimised, with their authored values.
struct Problem<'a> {
    rod: &'a DerRod,
    fixed: Fixed,
    /// Authored rest lengths l̄0 per edge [m].
    l0: Vec<f64>,
    /// Unknowns s̄ (u per edge; ω̄ and τ̄ per vertex), interleaved, and their authored values.
    s0: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    opts: SagFreeOptions,
}

impl Problem<'_> {
    fn edges(&self) -> usize {
        self.l0.len()
    }

    /// Voronoi length of vertex k for rest lengths `s` (relative).
    fn voronoi(&self, s: &[f64], k: usize) -> f64 {
        let fx = &self.fixed;
        let part = |e: usize| {
            if fx.ghost[e] {
                0.0
            } else {
                s[BLOCK * e] * self.l0[e]
            }
        };
        0.5 * (part(k) + part(k + 1))
    }

    /// `f = f_ext − ∇E(q0; s)` over the unknowns of q (held ones zeroed), and optionally
    /// J = ∂f/∂s by rows (`ROW` columns from block `row/4 − 2`).
    fn force(&self, s: &[f64], mut jac: Option<&mut Vec<[f64; ROW]>>) -> Vec<f64> {
        let rod = self.rod;
        let fx = &self.fixed;
        let ea = rod.params.stretch_stiffness.z;
        let mut f = fx.f_ext.clone();
        if let Some(j) = jac.as_deref_mut() {
            j.iter_mut().for_each(|r| *r = [0.0; ROW]);
        }
        // J entry (row, column) with the column given by block and slot.
        let put = |jac: &mut Option<&mut Vec<[f64; ROW]>>,
                   row: usize,
                   block: usize,
                   slot: usize,
                   v: f64| {
            if let Some(j) = jac.as_deref_mut() {
                let base = (row / 4) as isize - 2;
                let c = (block as isize - base) * BLOCK as isize + slot as isize;
                debug_assert!((0..ROW as isize).contains(&c));
                j[row][c as usize] += v;
            }
        };
        // Stretching: ∇E = EA (l/l̄ − 1) t on x_{e+1} (paper eqs. 9–10); ∂f/∂u = EA l/(l̄0 u²) t
        // on x_{e+1} and the opposite on x_e (eq. 24, with l̄ = u l̄0).
        for e in 0..self.edges() {
            let lb = s[BLOCK * e] * self.l0[e];
            let g = ea * (fx.len[e] / lb - 1.0);
            let dj = ea * fx.len[e] / (lb * lb) * self.l0[e];
            for c in 0..3 {
                f[xi(e + 1) + c] -= g * fx.tan[e][c];
                f[xi(e) + c] += g * fx.tan[e][c];
                put(&mut jac, xi(e + 1) + c, e, 0, dj * fx.tan[e][c]);
                put(&mut jac, xi(e) + c, e, 0, -dj * fx.tan[e][c]);
            }
        }
        // Bending and twisting per vertex (DER eq. 3 per edge; IMC eq. 3.2):
        // ∇E_b = (1/(2L)) Σ_c B_c (ω_c − ω̄_c) ∇ω_c, ∇E_t = (GJ/L)(τ − τ̄) ∇τ.
        for k in 0..self.edges() - 1 {
            let st = &rod.stiff[k];
            let lv = self.voronoi(s, k);
            let mut grad = Grad11::zeros();
            for c in 0..4 {
                let b = st.bend[c % 2];
                let d = fx.omega[k][c] - s[BLOCK * k + 1 + c];
                grad += fx.domega[k][c] * (b * d / (2.0 * lv));
                // ∂f/∂ω̄_c = +B_c/(2L) ∇ω_c (eq. 26)
                for a in 0..11 {
                    put(
                        &mut jac,
                        xi(k) + a,
                        k,
                        1 + c,
                        b / (2.0 * lv) * fx.domega[k][c][a],
                    );
                }
            }
            let dt = fx.tau[k] - s[BLOCK * k + 5];
            grad += fx.dtau[k] * (st.twist * dt / lv);
            // ∂f/∂τ̄ = +GJ/L ∇τ (eq. 28)
            for a in 0..11 {
                put(&mut jac, xi(k) + a, k, 5, st.twist / lv * fx.dtau[k][a]);
            }
            for a in 0..11 {
                f[xi(k) + a] -= grad[a];
            }
            // Voronoi: ∂(1/L)/∂l̄ = −1/(2L²) for each adjacent rod edge, so ∂f/∂u_e =
            // ∇E/(2L) · l̄0_e (eqs. 25, 27).
            for e in [k, k + 1] {
                if fx.ghost[e] {
                    continue;
                }
                let w = self.l0[e] / (2.0 * lv);
                for a in 0..11 {
                    put(&mut jac, xi(k) + a, e, 0, grad[a] * w);
                }
            }
        }
        // Held unknowns carry no residual.
        for (i, m) in fx.inv_m.iter().enumerate() {
            if *m == 0.0 {
                f[i] = 0.0;
                if let Some(j) = jac.as_deref_mut() {
                    j[i] = [0.0; ROW];
                }
            }
        }
        f
    }

    /// F(s̄) (regulariser weights all 1: the lengths are already relative).
    #[allow(clippy::needless_range_loop)] // j indexes s, s0, lo and hi together
    fn objective(&self, s: &[f64], f: &[f64]) -> f64 {
        let kin: f64 = f
            .iter()
            .zip(&self.fixed.inv_m)
            .map(|(v, m)| 0.5 * v * v * m)
            .sum();
        let mut reg = 0.0;
        let mut bx = 0.0;
        for j in 0..s.len() {
            let d = s[j] - self.s0[j];
            reg += 0.5 * self.opts.alpha * d * d;
            let over = (s[j] - self.hi[j]).max(0.0) + (self.lo[j] - s[j]).max(0.0);
            bx += 0.5 * self.opts.beta * over * over;
        }
        kin + reg + bx
    }
}

/// Make the rod's current configuration a static equilibrium under `drive`'s gravity and end
/// loads by changing its rest lengths, rest curvatures and rest twists (masses stay as
/// authored). The rod's rest shape is first set to the current configuration (the "naive"
/// start, paper Algorithm 1 line 3).
#[allow(clippy::needless_range_loop)] // unknown indices address s, g, bounds and the band
pub fn optimize(
    rod: &mut DerRod,
    drive: &Drive,
    opts: &SagFreeOptions,
) -> Result<SagFreeReport, SagFreeError> {
    if rod.ends.0 != EndCondition::Clamped && rod.ends.1 != EndCondition::Clamped {
        return Err(SagFreeError::NotClamped);
    }
    if rod.stiff.iter().any(|s| s.form != CurvatureForm::PerEdge) {
        return Err(SagFreeError::CurvatureForm);
    }
    rod.set_rest_to_current();
    let nodes = rod.x.len();
    let edges = nodes - 1;
    let n = rod.params.segments;
    let (first, last) = (rod.first, rod.first + n);
    let prob = build(rod, drive, opts);
    let size = prob.s0.len();
    let s0 = prob.s0.clone();
    let dofs = 4 * nodes - 1;
    let weight: f64 = prob
        .fixed
        .f_ext
        .iter()
        .zip(&prob.fixed.inv_m)
        .filter(|(_, m)| **m > 0.0)
        .map(|(v, _)| v.abs())
        .fold(0.0, f64::max);
    let largest_force = |f: &[f64]| -> f64 {
        (0..nodes)
            .map(|i| Vec3::new(f[xi(i)], f[xi(i) + 1], f[xi(i) + 2]).norm())
            .fold(0.0, f64::max)
    };
    let mut s = s0.clone();
    let mut jac = vec![[0.0; ROW]; dofs];
    let mut f = prob.force(&s, Some(&mut jac));
    let kinetic_before = prob.objective(&s, &f) - 0.0;
    let force_before = largest_force(&f);
    let mut phi = kinetic_before;
    let mut alpha = opts.alpha;
    let mut h = Banded::new(size, HB);
    let mut g = vec![0.0; size];
    let mut iterations = 0;
    let twist_slot = |j: usize| j % BLOCK == 5 && j + 1 < size;
    for it in 0..opts.max_iterations {
        iterations = it + 1;
        // H = Jᵀ M⁻¹ J + α I + β (active box), g = Jᵀ M⁻¹ f + α (s − s0) + β (violations)
        // (paper eqs. 21–22, 30–31, 39–40; the box gradient with the corrected sign).
        h.clear();
        g.iter_mut().for_each(|v| *v = 0.0);
        for (r, row) in jac.iter().enumerate() {
            let im = prob.fixed.inv_m[r];
            if im == 0.0 {
                continue;
            }
            let base = (r / 4) as isize - 2;
            for a in 0..ROW {
                if row[a] == 0.0 {
                    continue;
                }
                let ca = base * BLOCK as isize + a as isize;
                if ca < 0 || ca as usize >= size {
                    continue;
                }
                let ca = ca as usize;
                g[ca] += row[a] * im * f[r];
                for b in 0..=a {
                    if row[b] == 0.0 {
                        continue;
                    }
                    let cb = base * BLOCK as isize + b as isize;
                    if cb < 0 || cb as usize >= size {
                        continue;
                    }
                    h.add_lower(ca, cb as usize, row[a] * row[b] * im);
                }
            }
        }
        for j in 0..size {
            let fixed_twist = !opts.optimise_twist && twist_slot(j);
            let mut diag = alpha;
            g[j] += alpha * (s[j] - prob.s0[j]);
            if s[j] > prob.hi[j] {
                g[j] += opts.beta * (s[j] - prob.hi[j]);
                diag += opts.beta;
            } else if s[j] < prob.lo[j] {
                g[j] -= opts.beta * (prob.lo[j] - s[j]);
                diag += opts.beta;
            }
            if fixed_twist {
                g[j] = 0.0;
                diag += 1.0;
            }
            h.add_diagonal(j, diag);
        }
        // Symmetric scaling D H D, D = diag(H)^{-½} (docs/derivations/sagfree.md §4 item 8), then L D Lᵀ.
        let d: Vec<f64> = (0..size).map(|j| 1.0 / h.get(j, j).sqrt()).collect();
        if d.iter().any(|v| !v.is_finite()) {
            return Err(SagFreeError::Singular);
        }
        let mut hs = h.clone();
        hs.scale(&d);
        if hs.factor().is_err() {
            alpha *= 100.0;
            if alpha > 1.0 {
                return Err(SagFreeError::Singular);
            }
            continue;
        }
        let mut step: Vec<f64> = g.iter().zip(&d).map(|(v, dj)| -v * dj).collect();
        hs.solve(&mut step);
        step.iter_mut().zip(&d).for_each(|(v, dj)| *v *= dj);
        if step.iter().any(|v| !v.is_finite()) {
            return Err(SagFreeError::Singular);
        }
        let slope: f64 = step.iter().zip(&g).map(|(a, b)| a * b).sum();
        // Armijo backtracking on F (docs/derivations/sagfree.md §7: c1 = 1e-4, halving).
        let mut t = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            let trial: Vec<f64> = s.iter().zip(&step).map(|(a, b)| a + t * b).collect();
            if trial.iter().step_by(BLOCK).all(|u| *u > 0.0) {
                let ft = prob.force(&trial, None);
                let pt = prob.objective(&trial, &ft);
                if pt <= phi + 1e-4 * t * slope {
                    accepted = Some((trial, pt));
                    break;
                }
            }
            t *= 0.5;
        }
        let Some((trial, pt)) = accepted else {
            break; // no decrease: at the optimum to rounding
        };
        let change = step.iter().map(|v| (v * t).abs()).fold(0.0, f64::max);
        let decrease = phi - pt;
        s = trial;
        phi = pt;
        f = prob.force(&s, Some(&mut jac));
        // Stop when the step is negligible (paper: ‖Δs̄‖ ≤ 1e-5; ours is relative: lengths
        // are ratios) or F stops decreasing.
        if change <= 1e-12 || decrease <= 1e-15 * phi.abs() {
            break;
        }
    }
    let kinetic_after = f
        .iter()
        .zip(&prob.fixed.inv_m)
        .map(|(v, m)| 0.5 * v * v * m)
        .sum::<f64>();
    let force_after = largest_force(&f);
    let box_active = (0..size)
        .filter(|&j| s[j] > prob.hi[j] + 1e-12 || s[j] < prob.lo[j] - 1e-12)
        .count();
    let mut report = SagFreeReport {
        iterations,
        kinetic_before,
        kinetic_after,
        force_before,
        force_after,
        box_active,
        max_length_change: (0..edges)
            .map(|e| (s[BLOCK * e] - 1.0).abs())
            .fold(0.0, f64::max),
        max_curvature_change: (0..edges - 1)
            .flat_map(|k| (1..5).map(move |c| BLOCK * k + c))
            .map(|j| (s[j] - s0[j]).abs())
            .fold(0.0, f64::max),
        max_twist_change: (0..edges - 1)
            .map(|k| (s[BLOCK * k + 5] - s0[BLOCK * k + 5]).abs())
            .fold(0.0, f64::max),
        alpha,
        stable: false,
        converged: false,
    };
    // Equilibrium: the force left (the regulariser's bias, ∝ α) is below 1e-4 of the largest
    // load on a node.
    report.converged = box_active == 0 && force_after <= 1e-4 * weight.max(f64::MIN_POSITIVE);
    // Write the rest shape into the rod (masses stay as authored).
    let l0 = prob.l0.clone();
    for e in 0..edges {
        rod.rest[e] = s[BLOCK * e] * l0[e];
    }
    let ghost: Vec<bool> = (0..edges)
        .map(|e| {
            (rod.ends.0 == EndCondition::Clamped && e + 1 == first)
                || (rod.ends.1 == EndCondition::Clamped && e == last)
        })
        .collect();
    for k in 0..edges - 1 {
        let part = |e: usize| if ghost[e] { 0.0 } else { rod.rest[e] };
        let lv = 0.5 * (part(k) + part(k + 1));
        let st = &mut rod.stiff[k];
        st.voronoi = lv;
        for c in 0..4 {
            st.rest_curvature[c / 2][c % 2] = s[BLOCK * k + 1 + c];
        }
        st.rest_twist = s[BLOCK * k + 5];
    }
    report.stable = rod.is_stable(drive);
    Ok(report)
}

/// The optimisation problem at the rod's current configuration (rest shape already set to it).
fn build<'a>(rod: &'a DerRod, drive: &Drive, opts: &SagFreeOptions) -> Problem<'a> {
    let nodes = rod.x.len();
    let edges = nodes - 1;
    let n = rod.params.segments;
    let (first, last) = (rod.first, rod.first + n);
    let dofs = 4 * nodes - 1;
    // Constant geometry at q0.
    let mut fixed = Fixed {
        omega: Vec::with_capacity(edges - 1),
        domega: Vec::with_capacity(edges - 1),
        tau: Vec::with_capacity(edges - 1),
        dtau: Vec::with_capacity(edges - 1),
        len: (0..edges)
            .map(|e| (rod.x[e + 1] - rod.x[e]).norm())
            .collect(),
        tan: (0..edges)
            .map(|e| (rod.x[e + 1] - rod.x[e]).normalize())
            .collect(),
        f_ext: vec![0.0; dofs],
        inv_m: vec![0.0; dofs],
        ghost: (0..edges)
            .map(|e| {
                (rod.ends.0 == EndCondition::Clamped && e + 1 == first)
                    || (rod.ends.1 == EndCondition::Clamped && e == last)
            })
            .collect(),
    };
    for k in 0..edges - 1 {
        let (e, f) = (rod.x[k + 1] - rod.x[k], rod.x[k + 2] - rod.x[k + 1]);
        let (m1e, m2e) = material(&rod.a1[k], &e.normalize(), rod.theta[k]);
        let (m1f, m2f) = material(&rod.a1[k + 1], &f.normalize(), rod.theta[k + 1]);
        let pair = energy::EdgePair { m1e, m2e, m1f, m2f };
        let (w, dw, dtau) = energy::strain_gradients(&e, &f, &pair);
        fixed.omega.push(w);
        fixed.domega.push(dw);
        fixed
            .tau
            .push(rod.theta[k + 1] - rod.theta[k] + rod.mref[k]);
        fixed.dtau.push(dtau);
    }
    // External loads (gravity, end forces; end torques as generalised forces as in the
    // forward model) and the frozen inverse masses over the free unknowns.
    for i in 0..nodes {
        let mut fe = drive.gravity * rod.mass[i];
        if i == first {
            fe += drive.start_force;
        }
        if i == last {
            fe += drive.end_force;
        }
        for c in 0..3 {
            fixed.f_ext[xi(i) + c] = fe[c];
            if rod.mass[i] > 0.0 {
                fixed.inv_m[xi(i) + c] = 1.0 / rod.mass[i];
            }
        }
    }
    for (tq, e) in [(drive.start_torque, first), (drive.end_torque, last - 1)] {
        if tq == Vec3::zeros() {
            continue;
        }
        let t = fixed.tan[e];
        let fo = tq.cross(&t) / fixed.len[e];
        for c in 0..3 {
            fixed.f_ext[xi(e + 1) + c] += fo[c];
            fixed.f_ext[xi(e) + c] -= fo[c];
        }
        fixed.f_ext[ti(e)] += tq.dot(&t);
    }
    for e in 0..edges {
        if rod.inertia[e] > 0.0 {
            fixed.inv_m[ti(e)] = 1.0 / rod.inertia[e];
        }
    }
    for p in held_dofs(rod.ends, first, last).iter().flatten() {
        let count = if p % 4 == 3 { 1 } else { 3 };
        for c in 0..count {
            fixed.inv_m[p + c] = 0.0;
        }
    }
    // Unknowns, authored values and box (paper eqs. 32–36).
    let size = BLOCK * (edges - 1) + 1;
    let mut s0 = vec![0.0; size];
    let (mut lo, mut hi) = (vec![0.0; size], vec![0.0; size]);
    for e in 0..edges {
        s0[BLOCK * e] = 1.0;
        lo[BLOCK * e] = opts.length_bounds.0;
        hi[BLOCK * e] = opts.length_bounds.1;
    }
    for k in 0..edges - 1 {
        let st = &rod.stiff[k];
        for c in 0..4 {
            let v = st.rest_curvature[c / 2][c % 2];
            s0[BLOCK * k + 1 + c] = v;
            lo[BLOCK * k + 1 + c] = v - opts.curvature_bound;
            hi[BLOCK * k + 1 + c] = v + opts.curvature_bound;
        }
        s0[BLOCK * k + 5] = st.rest_twist;
        lo[BLOCK * k + 5] = st.rest_twist - opts.twist_bound;
        hi[BLOCK * k + 5] = st.rest_twist + opts.twist_bound;
    }
    let l0 = rod.rest.clone();
    Problem {
        rod,
        fixed,
        l0,
        s0: s0.clone(),
        lo,
        hi,
        opts: *opts,
    }
}

impl DerRod {
    /// Whether the current configuration is a strict local minimum of the static energy under
    /// `drive` (its Hessian over the free unknowns is positive definite, tested by an
    /// unshifted `L D Lᵀ`). An equilibrium that fails this is a saddle: a nudge leaves it.
    pub fn is_stable(&mut self, drive: &Drive) -> bool {
        self.static_hessian_factors(drive, &Potentials(&mut []))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rod::{DynamicParams, EndTarget, RodParams, SolverConfig};

    /// A 2-turn coil (R = 2.5 cm, pitch 1 cm) of nylon-like thread clamped at its top.
    fn coil(n: usize) -> (DerRod, Drive) {
        let p = RodParams {
            radius: 1.5e-4,
            youngs_modulus: 2e9,
            shear_modulus: 0.72e9,
            density: 1140.0,
        };
        let x: Vec<Vec3> = (0..=n)
            .map(|i| {
                let phi = 2.0 * std::f64::consts::TAU * i as f64 / n as f64;
                Vec3::new(
                    0.025 * phi.cos(),
                    0.025 * phi.sin(),
                    -0.01 * phi / std::f64::consts::TAU,
                )
            })
            .collect();
        let rod = DerRod::from_centerline(
            DynamicParams::new(&p, 0.3, n),
            (EndCondition::Clamped, EndCondition::Free),
            SolverConfig::default(),
            x.clone(),
            &Vec3::z(),
        );
        let q = crate::math::Quat::identity();
        let d = Drive {
            start: EndTarget {
                position: x[0],
                rotation: q,
            },
            end: EndTarget {
                position: x[n],
                rotation: q,
            },
            gravity: Vec3::new(0.0, 0.0, -9.81),
            start_force: Vec3::zeros(),
            start_torque: Vec3::zeros(),
            end_force: Vec3::new(1e-4, 0.0, 0.0),
            end_torque: Vec3::new(0.0, 2e-6, 1e-6),
        };
        (rod, d)
    }

    #[test]
    fn force_jacobian_matches_finite_differences() {
        // docs/derivations/sagfree.md §6 test 1: J = ∂f/∂s̄ (paper eqs. 24–28 in our energies' form) against
        // central differences of f, at rest parameters moved off their authored values, every
        // column, relative to J's largest entry.
        let (mut rod, d) = coil(24);
        rod.set_rest_to_current();
        let prob = build(&rod, &d, &SagFreeOptions::default());
        let mut s = prob.s0.clone();
        for (j, v) in s.iter_mut().enumerate() {
            *v += 0.01 * ((j as f64 * 0.7).sin());
        }
        let dofs = prob.fixed.inv_m.len();
        let mut jac = vec![[0.0; ROW]; dofs];
        let _ = prob.force(&s, Some(&mut jac));
        let scale = jac
            .iter()
            .flat_map(|r| r.iter())
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let mut checked = 0;
        for col in 0..s.len() {
            let h = 1e-6 * s[col].abs().max(1e-3);
            let (mut sp, mut sm) = (s.clone(), s.clone());
            sp[col] += h;
            sm[col] -= h;
            let (fp, fm) = (prob.force(&sp, None), prob.force(&sm, None));
            for r in 0..dofs {
                let fd = (fp[r] - fm[r]) / (2.0 * h);
                let base = (r / 4) as isize - 2;
                let c = col as isize - base * BLOCK as isize;
                let an = if (0..ROW as isize).contains(&c) {
                    jac[r][c as usize]
                } else {
                    0.0
                };
                assert!(
                    (fd - an).abs() <= 1e-6 * scale,
                    "∂f[{r}]/∂s[{col}]: analytic {an} fd {fd} (scale {scale})"
                );
                checked += usize::from(an != 0.0);
            }
        }
        assert!(checked > 10 * s.len(), "{checked}");
    }
}
