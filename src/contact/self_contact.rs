//! Rod self-contact with the implicit contact model (Choi 2021 thesis §3.2, docs/derivations/der-imc.md §B):
//! every pair of non-neighbouring segments closer than a cutoff carries the IMC energy
//! `k_c ln(1 + e^{k_e(2 − Δ/h)})/k_e` (contact::imc) on their exact distance, inside the
//! Cosserat Newton solve as a [`NodePotential`].
//!
//! - Candidates are found by the broad phase (contact::broad) at the start of each step (cutoff
//!   `2h + margin`, margin larger than a step's relative motion) and frozen for the step,
//!   as in the thesis (docs/derivations/der-imc.md §E2.8); no Newton iterate brings a candidate
//!   pair's centrelines closer than `(2 − ITERATE_OVERLAP) r` (conservative advancement, §F6),
//!   and pairs a step brings into contact from beyond the margin are re-solved with. A pair
//!   outside the candidate set cannot reach contact within a step if no node moves more than
//!   margin/2 in it: the margin (4h) is sized for that, and a step that moves a node further
//!   is re-solved with the non-candidate pairs whose straight path from the step's start to
//!   its end meets contact, which it could otherwise have carried clean through each other
//!   (§F6; [`SelfContact::max_motion`] reports the largest motion of the last accepted step).
//! - Hessian: the Gauss–Newton term `E''∇Δ∇Δᵀ` (positive semi-definite, docs/derivations/der-imc.md §B5), rank one
//!   per pair over its four nodes. Contact couples nodes far apart in index, so the terms stay
//!   out of the band: the Newton solver adds them by the Woodbury identity (one banded solve
//!   per pair in contact and a small dense system), never a dense factorisation.
//! - Stiffness: a step that ends with any pair closer than `2h − tolerance` is re-solved with
//!   `k_c` raised tenfold (the IMC energy has no barrier: non-penetration is only as good as
//!   `k_c`, docs/derivations/der-imc.md §E2.7).
//!
//! - Friction (Coulomb, μ = `friction`): the IPC form of lagged friction, as for obstacles
//!   (contact::obstacle): per pair the normal force λ = −E'(Δ), the closest-point parameters and
//!   the normal are frozen at the step's start; the closest points' relative tangential
//!   displacement over the step, y, carries the dissipation potential `μ λ f0(y)` with IPC's
//!   mollifier (f0' = 1 beyond ε_u = slip speed × h, a stiff linear spring below it). Below the
//!   slip speed (1e-4 m/s) a pair sticks: a load under μλ leaves it creeping at most that fast,
//!   instead of sliding as with the thesis's velocity-scaled kinetic friction (docs/derivations/der-imc.md §E2.10).
//!   Its Hessian is two rank-one terms per pair (along the slip and across it), solved with the
//!   contact terms.
//! - Or, with [`FrictionModel::Kinetic`], the thesis's kinetic-only friction (Choi 2021
//!   eqs. 3.22–3.24, docs/derivations/der-imc.md §B6), for comparison: a force `−μ γ λ v̂_T` on the closest points,
//!   `γ = 1/(1 + e^{−50(‖v_T‖/h − 0.15)})`, with the relative tangential velocity v_T and λ
//!   both taken from the previous accepted step (semi-explicit, as the thesis does for the
//!   direction; λ lagged too, so the term is a constant force within a step and adds no
//!   Hessian). The contact-point velocities use the closest-point weights (the thesis code's
//!   barycentric split). With no static friction, a knot at rest under load creeps.

use super::broad;
use super::imc::{ImcParams, energy_of_distance};
use super::obstacle::mollifier;
use super::segment;
use crate::math::Vec3;
use crate::rod::{NodePotential, PotentialSink, Projection};
use std::cell::RefCell;

/// Segments closer along the rod than this many indices never interact (they touch at
/// shared or nearby nodes); docs/derivations/der-imc.md §F5 A: |i − j| ≥ 3 for segments of about 2h.
pub const DEFAULT_SKIP: usize = 2;

/// How far past contact one Newton iterate may press a pair, in radii [-]: the line search
/// starts no further than the step that brings two segments' centrelines within
/// `(2 − ITERATE_OVERLAP) r` (1.5 radii apart), so no iterate passes a strand through
/// another; the accepted step is still held to `2r − tolerance` by the stiffness raise
/// (docs/derivations/der-imc.md §F6, with the measurements behind the half radius).
pub const ITERATE_OVERLAP: f64 = 0.5;

/// Which friction law acts between touching strands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrictionModel {
    /// Lagged Coulomb friction with stick below the slip speed (IPC form; holds knots).
    Stick,
    /// The thesis's velocity-switched kinetic friction (no static friction; knots creep).
    Kinetic,
}

/// Which pairs carry a Hessian term in the Newton model (docs/derivations/der-imc.md §F11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ContactHessian {
    /// Only pairs whose `E''` is at least `CUSHION_EXACT` of its peak (Δ ≲ 2.15h at
    /// `k_e` = 50), each its exact Hessian: pairs pressed past that (E'' vanishing as the
    /// overlap deepens) and the cushion beyond it carry none.
    Near,
    /// Those, every pressing pair (its exact Hessian: `E'∇²Δ` is then all its curvature) and
    /// the cushion's far part down to `CUSHION_FLOOR` of the peak (Δ ≈ 2.44h; the
    /// Gauss–Newton term alone, one term each): the model is the gradient's derivative to
    /// 0.02 % along the square tie's Newton steps (75th percentile) against 48 % for `Near`.
    #[default]
    Full,
}

/// Self-contact of one rod.
#[derive(Clone, Debug)]
pub struct SelfContact {
    /// IMC parameters (radius h, stiffness k_c, sharpness k_e).
    pub params: ImcParams,
    /// Pairs with `j − i ≤ skip` are neighbours.
    pub skip: usize,
    /// Broad-phase margin beyond contact (2h) [m].
    pub margin: f64,
    /// Largest allowed penetration `2h − Δ` before the stiffness is raised [m].
    pub tolerance: f64,
    /// Candidate pairs for the current step.
    pub pairs: Vec<(usize, usize)>,
    /// Pairs within contact (Δ < 2h) at the last accepted state.
    pub active: usize,
    /// Smallest distance between candidate pairs at the last accepted state [m].
    pub min_distance: f64,
    /// Times the stiffness was raised.
    pub raises: usize,
    /// The stiffness is never raised past this [J] (see [`SelfContact::stiffness_cap`]);
    /// infinite unless the scene sets it.
    pub max_stiffness: f64,
    /// Largest node motion over the last accepted step [m] (tunnelling-safe below margin/2).
    pub max_motion: f64,
    /// Coulomb friction coefficient [-] (0: frictionless).
    pub friction: f64,
    /// Which pairs carry a Hessian term in the Newton model (default [`ContactHessian::Full`]).
    pub hessian: ContactHessian,
    /// Friction law (default [`FrictionModel::Stick`]).
    pub friction_model: FrictionModel,
    /// Relative speed below which a pair sticks [m/s].
    pub slip_speed: f64,
    /// Raise the stiffness (re-solving the step) when a pair comes closer than the tolerance.
    /// Off for Projective Dynamics (see `ObstacleContact::adaptive`).
    pub adaptive: bool,
    /// A segment that has broken (`RodParams::broken`, set by the step that owns the rod):
    /// no longer material, it touches nothing. Its nodes part, and the straight line between
    /// them (4.7 cm after a suture snapped back live) would otherwise press on every strand
    /// it crosses.
    pub broken: Option<usize>,
    /// Node positions at the start of the step.
    x_start: Vec<Vec3>,
    /// Per candidate pair, frozen at the step's start: normal force λ [N], closest-point
    /// parameters (t, u), unit normal, and (kinetic model) the friction force on segment i's
    /// closest point [N].
    lags: Vec<(f64, f64, f64, Vec3, Vec3)>,
    eps_u: f64,
    /// Step size of the current step [s] (None: static solve).
    h: Option<f64>,
    /// Node velocities over the last accepted step [m/s] (kinetic model).
    v_last: Vec<Vec3>,
    /// Pairs found within contact at the end of a solve that were not candidates at the
    /// step's start (the strands moved more than the margin in the step): the step is re-solved
    /// with them ([`NodePotential::accept`]); forgotten when a new step begins.
    late: Vec<(usize, usize)>,
    /// The broad phase's working memory and a pair list, kept across steps so the physics
    /// loop's broad phases reuse their memory.
    broad: broad::Broad,
    found: Vec<(usize, usize)>,
    /// The broad phase `begin` asks for, found ahead by `accept` where it looked anyway: the
    /// pairs within `ahead_cutoff` [m] of the positions `ahead_x` [m], valid while
    /// `ahead_valid`. A step begins where the last one was accepted, so the next `begin`
    /// takes this list instead of searching again (the same pairs in the same order: see
    /// [`SelfContact::accept`]).
    ahead: Vec<(usize, usize)>,
    ahead_x: Vec<Vec3>,
    /// Scratch: the exact distances of `ahead`'s pairs as the broad phase measured them.
    ahead_d: Vec<f64>,
    ahead_cutoff: f64,
    ahead_valid: bool,
    /// The candidate pairs' exact distances at the positions the last `evaluate` saw: the
    /// line search's `max_step` and the step's `accept` look at the point last evaluated
    /// (the accepted trial), and take its distances from here instead of computing them
    /// again (the same function of the same numbers: the same bits). Working memory,
    /// written by `evaluate` through `&self`.
    seen: RefCell<Seen>,
}

/// Distances `d` [m] of the pairs `pairs` at the positions `x` [m] (see `SelfContact::seen`).
#[derive(Clone, Debug, Default)]
struct Seen {
    x: Vec<Vec3>,
    pairs: Vec<(usize, usize)>,
    d: Vec<f64>,
}

impl Seen {
    /// The distances, where they were taken at `x` for `pairs`.
    fn at(&self, x: &[Vec3], pairs: &[(usize, usize)]) -> Option<&[f64]> {
        (self.x.as_slice() == x && self.pairs.as_slice() == pairs).then_some(self.d.as_slice())
    }
}

/// The exact distance [m] of pair `k`, `(i, j)`, at `x`: from `cached` (the distances
/// [`Seen::at`] gave for these positions and pairs) or measured.
fn pair_distance(cached: Option<&[f64]>, k: usize, (i, j): (usize, usize), x: &[Vec3]) -> f64 {
    match cached {
        Some(d) => d[k],
        None => segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance,
    }
}

/// Eigenvalues of a pair's exact Hessian below this fraction of its largest are rounding (the
/// Hessian has rank ≤ 5 of 12) and are not made terms.
const EIGEN_FLOOR: f64 = 1e-10;

/// A pair whose `E''` is at least this fraction of its peak `k_c k_e / 4h²` carries its
/// exact Hessian (Δ ≲ 2.15h at `k_e` = 50 in the cushion); below it in the cushion,
/// with [`ContactHessian::Full`], its Gauss–Newton term alone (der-imc.md §F11).
const CUSHION_EXACT: f64 = 1e-3;

/// With [`ContactHessian::Full`], a pair in the cushion whose `E''` is below this fraction of
/// its peak carries no Hessian term (Δ ≳ 2.44h at `k_e` = 50): measured on the square tie,
/// the contact's Hessian then matches its gradient's finite differences along the Newton
/// step to 0.02 % (75th percentile of the iterations; 48 % with `Near`).
const CUSHION_FLOOR: f64 = 1e-9;

impl SelfContact {
    /// Self-contact for a rod of radius `radius` [m] with initial stiffness `stiffness` [J]
    /// (see [`SelfContact::stiffness_for`]), margin `2 radius` and tolerance 1 % of the radius.
    pub fn new(radius: f64, stiffness: f64) -> Self {
        SelfContact {
            params: ImcParams {
                radius,
                stiffness,
                sharpness: 50.0,
            },
            skip: DEFAULT_SKIP,
            margin: 4.0 * radius,
            tolerance: 0.01 * radius,
            pairs: Vec::new(),
            active: 0,
            min_distance: f64::INFINITY,
            raises: 0,
            max_stiffness: f64::INFINITY,
            max_motion: 0.0,
            friction: 0.0,
            hessian: ContactHessian::Full,
            friction_model: FrictionModel::Stick,
            slip_speed: 1e-4,
            adaptive: true,
            broken: None,
            x_start: Vec::new(),
            lags: Vec::new(),
            late: Vec::new(),
            broad: broad::Broad::default(),
            found: Vec::new(),
            ahead: Vec::new(),
            ahead_x: Vec::new(),
            ahead_d: Vec::new(),
            ahead_cutoff: 0.0,
            seen: RefCell::default(),
            ahead_valid: false,
            eps_u: 1e-7,
            h: None,
            v_last: Vec::new(),
        }
    }

    /// The neighbour rule for segments of length `segment` [m] on a rod of radius `radius` [m]:
    /// segments i < j interact when the rod between them, `(j − i − 1)·segment`, is at least
    /// π h long (docs/derivations/der-imc.md §F5 A: "|i − j| ≥ 3 for Δs ≈ 2h; ≥ 2 for
    /// Δs ≫ h"); nearer ones meet only through the rod's own bend. Returns the largest
    /// `j − i` that does not interact (at least 1: neighbours share a node).
    pub fn skip_for(segment: f64, radius: f64) -> usize {
        if !(segment.is_finite() && segment > 0.0 && radius.is_finite() && radius > 0.0) {
            return DEFAULT_SKIP;
        }
        ((std::f64::consts::PI * radius / segment).ceil() as usize).clamp(1, 64)
    }

    /// A stiffness [J] whose contact force `−dE/dΔ` reaches `force` [N] at a penetration of a
    /// tenth of the tolerance (so loads of that size are held without raises).
    pub fn stiffness_for(force: f64, radius: f64) -> f64 {
        // −dE/dΔ = k_c σ(z)/h with z = k_e (2 − Δ/h); at Δ = 2h − 0.001h, σ(0.05) ≈ 0.51.
        force.max(1e-9) * radius / 0.51
    }

    /// The largest stiffness [J] worth raising to for a rod of axial stiffness `ea` = E A [N]
    /// and radius `radius` [m]: [`SelfContact::stiffness_for`] the force EA, which would
    /// stretch the rod to twice its length. The IMC force saturates at `k_c / h` under
    /// penetration (docs/derivations/der-imc.md §B4, `−dE/dΔ → 1` in scaled units), so a stiffer
    /// contact could only resist forces no rod survives; a penetration that persists at this
    /// stiffness is strands that have passed through each other, which no stiffness undoes.
    /// Without the cap each step re-solved eight times, raising k_c tenfold each time, and two
    /// steps took it to 10^16 times its start (a live run, `tests/vendor.rs`: Φ = 7e13 J,
    /// every later step failed).
    pub fn stiffness_cap(ea: f64, radius: f64) -> f64 {
        Self::stiffness_for(ea, radius)
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): the
    /// adaptive IMC stiffness, the last step's node velocities (the kinetic friction law's
    /// lag), the candidate pairs and the statistics of the last accepted state. The lagged
    /// friction (`lags`, the start positions, ε_u, h) is not carried: [`NodePotential::begin`]
    /// rebuilds it at every step's start. Every field is named here, so a new one must be
    /// placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let SelfContact {
            params,
            // The scene's settings.
            skip: _,
            margin: _,
            tolerance: _,
            friction: _,
            hessian: _,
            friction_model: _,
            slip_speed: _,
            adaptive: _,
            // The rod's own broken segment (in its digest), set before every step.
            broken: _,
            // Rebuilt by `begin` at each step's start.
            x_start: _,
            lags: _,
            // Kept only between the re-solves of one step (cleared once a step is accepted).
            late: _,
            // Working memory.
            broad: _,
            found: _,
            // A search done ahead: the list `begin` would find (a function of the positions).
            ahead: _,
            ahead_x: _,
            ahead_d: _,
            ahead_cutoff: _,
            ahead_valid: _,
            // Working memory: distances at the last evaluated point.
            seen: _,
            eps_u: _,
            h: _,
            pairs,
            active,
            min_distance,
            raises,
            // The scene's setting.
            max_stiffness: _,
            max_motion,
            v_last,
        } = self;
        let ImcParams {
            // The rod's radius and the scene's sharpness.
            radius: _,
            sharpness: _,
            stiffness,
        } = params;
        d.f64(*stiffness);
        d.usize(v_last.len());
        d.vec3s(v_last);
        d.usize(pairs.len());
        for (i, j) in pairs {
            d.usize(*i);
            d.usize(*j);
        }
        d.usize(*active);
        d.f64(*min_distance);
        d.usize(*raises);
        d.f64(*max_motion);
    }

    fn contact_distance(&self) -> f64 {
        2.0 * self.params.radius
    }
}

impl SelfContact {
    /// The lagged friction potential and its gradient and Hessian (see the module docs).
    fn friction_term(&self, x: &[Vec3], mut sink: Option<&mut PotentialSink>) -> f64 {
        let mut value = 0.0;
        let eps = self.eps_u;
        for (&(i, j), &(lambda, t, u, n, fk)) in self.pairs.iter().zip(&self.lags) {
            // Only pairs pressing at the start (λ above 1e-6 of its saturation k_c/h).
            if lambda <= 1e-6 * self.params.stiffness / self.params.radius {
                continue;
            }
            let nodes = [i, i + 1, j, j + 1];
            let wts = [1.0 - t, t, -(1.0 - u), -u];
            let mut dp = Vec3::zeros();
            for a in 0..4 {
                dp += (x[nodes[a]] - self.x_start[nodes[a]]) * wts[a];
            }
            if self.friction_model == FrictionModel::Kinetic {
                // Choi 2021 eq. 3.23: a constant force −fk on the relative displacement dp
                // (potential fk·dp, zero Hessian).
                value += fk.dot(&dp);
                if let Some(sink) = sink.as_deref_mut() {
                    for a in 0..4 {
                        sink.add_gradient(nodes[a], &(fk * wts[a]));
                    }
                }
                continue;
            }
            let ut = dp - n * n.dot(&dp);
            let y = ut.norm();
            let ml = self.friction * lambda;
            let (f0, f1, df1) = mollifier(y, eps);
            value += ml * f0;
            let Some(sink) = sink.as_deref_mut() else {
                continue;
            };
            let g = if y > 1e-300 {
                ut * (ml * f1 / y)
            } else {
                Vec3::zeros()
            };
            for a in 0..4 {
                sink.add_gradient(nodes[a], &(g * wts[a]));
            }
            if !sink.wants_hessian() {
                continue;
            }
            // ∇²D = μλ [f1/y (P − ûûᵀ) + f1' ûûᵀ] over the weighted nodes: two rank-one terms.
            let (e1, c1, e2, c2) = if y > 1e-12 * eps {
                let uh = ut / y;
                (uh, ml * df1, n.cross(&uh), ml * f1 / y)
            } else {
                let e1 = crate::math::any_perpendicular(&n);
                (e1, ml * 2.0 / eps, n.cross(&e1), ml * 2.0 / eps)
            };
            for (e, c) in [(e1, c1), (e2, c2)] {
                if c <= 0.0 {
                    continue;
                }
                let mut v = [0.0; 12];
                for a in 0..4 {
                    for k in 0..3 {
                        v[3 * a + k] = e[k] * wts[a];
                    }
                }
                sink.add_low_rank(nodes, &v, c);
            }
        }
        value
    }
}

/// The eigenpairs of a pair's exact Hessian `hp` (12×12, over the nodes `[i, i+1, j, j+1]`),
/// found in the ≤ 5-dimensional subspace it lives in (docs/derivations/der-imc.md §F7):
/// `∇Δ` and `∇²Δ` are built from `Jᵀ` (`J = ∂w/∂x = [c₀I, c₁I, c₂I, c₃I]`, the closest
/// points' weights `coef`) and the closest-point parameters' columns, which add
/// `[−w, w, 0, 0]` and `[0, 0, w, −w]` (contact::segment::distance_derivatives). So
/// `hp = Q (QᵀhpQ) Qᵀ` with `Q` an orthonormal basis of those five vectors (Gram–Schmidt,
/// twice), and the 5×5 eigenproblem gives `hp`'s nonzero eigenpairs (eigenvectors `Q V`)
/// at a fraction of the 12×12 one's cost. Returns the eigenvalues and the eigenvectors as
/// columns (a dependent basis vector leaves a zero column and a zero eigenvalue).
fn pair_eigen(
    hp: &segment::Mat12,
    coef: &[f64; 4],
    w: &Vec3,
) -> (nalgebra::SVector<f64, 5>, nalgebra::SMatrix<f64, 12, 5>) {
    let mut q = nalgebra::SMatrix::<f64, 12, 5>::zeros();
    for k in 0..3 {
        for a in 0..4 {
            q[(3 * a + k, k)] = coef[a];
        }
    }
    for k in 0..3 {
        q[(3 + k, 3)] = w[k];
        q[(k, 3)] = -w[k];
        q[(6 + k, 4)] = w[k];
        q[(9 + k, 4)] = -w[k];
    }
    for c in 0..5 {
        let before = q.column(c).norm();
        for _ in 0..2 {
            for b in 0..c {
                let d = q.column(b).dot(&q.column(c));
                let qb = q.column(b).into_owned();
                q.column_mut(c).axpy(-d, &qb, 1.0);
            }
        }
        let after = q.column(c).norm();
        if after > 1e-8 * before && after > 0.0 {
            q.column_mut(c).unscale_mut(after);
        } else {
            q.column_mut(c).fill(0.0);
        }
    }
    let m = q.transpose() * hp * q;
    let eig = nalgebra::SymmetricEigen::new(m);
    (eig.eigenvalues, q * eig.eigenvectors)
}

/// The most samples [`SelfContact`]'s swept test takes along one pair's path in a step (4 per
/// radius moved): 4096 is a node moving 1024 radii, 10 cm for a 3-0 suture, in one step,
/// which only a solve that has run away does; past it the pairs within reach count as met
/// without sampling, so the test's cost is bounded (a runaway step once kept it running for
/// over ten minutes, docs/reliability.md).
const MAX_SWEEP_SAMPLES: usize = 4096;

impl NodePotential for SelfContact {
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>) {
        let cutoff = self.contact_distance() + self.margin;
        if self.ahead_valid && self.ahead_cutoff == cutoff && self.ahead_x.as_slice() == x_start {
            // The last `accept` searched these very positions at this cutoff.
            std::mem::swap(&mut self.pairs, &mut self.ahead);
        } else {
            self.broad
                .candidates_into(x_start, self.skip, cutoff, &mut self.pairs);
        }
        self.ahead_valid = false;
        // A re-solve of the same step (the same start) keeps the pairs its last solve found
        // in contact beyond the candidates; a new step forgets them.
        if self.x_start.as_slice() == x_start {
            for p in &self.late {
                if !self.pairs.contains(p) {
                    self.pairs.push(*p);
                }
            }
        } else {
            self.late.clear();
        }
        if let Some(b) = self.broken {
            self.pairs.retain(|&(i, j)| i != b && j != b);
        }
        self.x_start.clear();
        self.x_start.extend_from_slice(x_start);
        self.eps_u = self.slip_speed * h.unwrap_or(1e-3);
        self.h = h;
        self.lags.clear();
        let kinetic = self.friction_model == FrictionModel::Kinetic;
        let velocities = kinetic && h.is_some() && self.v_last.len() == x_start.len();
        if self.friction > 0.0 {
            for &(i, j) in &self.pairs {
                let x = x_start;
                let c = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]);
                let (_, de, _) = energy_of_distance(c.distance, &self.params);
                let w =
                    (x[i] * (1.0 - c.t) + x[i + 1] * c.t) - (x[j] * (1.0 - c.u) + x[j + 1] * c.u);
                let n = if c.distance > 1e-300 {
                    w / c.distance
                } else {
                    Vec3::zeros()
                };
                let mut fk = Vec3::zeros();
                if velocities {
                    // Choi 2021 eqs. 3.22–3.24 (docs/derivations/der-imc.md §B6), velocities of the last step.
                    let v = &self.v_last;
                    let vrel = (v[i] * (1.0 - c.t) + v[i + 1] * c.t)
                        - (v[j] * (1.0 - c.u) + v[j + 1] * c.u);
                    let vt = vrel - n * n.dot(&vrel);
                    let speed = vt.norm();
                    if speed > 1e-300 {
                        let scaled = speed / self.params.radius;
                        let gamma = 1.0 / (1.0 + (-50.0 * (scaled - 0.15)).exp());
                        fk = vt * (self.friction * gamma * (-de) / speed);
                    }
                }
                self.lags.push((-de, c.t, c.u, n, fk));
            }
        }
    }

    fn evaluate(&self, x: &[Vec3], mut sink: Option<&mut PotentialSink>) -> f64 {
        let mut value = 0.0;
        // E'''s peak k_c k_e / 4h² (at Δ = 2h), and which pairs carry curvature (below).
        let peak = self.params.stiffness * self.params.sharpness
            / (4.0 * self.params.radius * self.params.radius);
        let full = self.hessian == ContactHessian::Full;
        let mut seen = self.seen.borrow_mut();
        let seen = &mut *seen;
        seen.x.clear();
        seen.x.extend_from_slice(x);
        seen.pairs.clear();
        seen.pairs.extend_from_slice(&self.pairs);
        seen.d.clear();
        for &(i, j) in &self.pairs {
            let c = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]);
            seen.d.push(c.distance);
            let (e, de, dde) = energy_of_distance(c.distance, &self.params);
            value += e;
            let Some(sink) = sink.as_deref_mut() else {
                continue;
            };
            // ∇Δ = n [(1−t), t, −(1−u), −u] (envelope rule, contact::segment), n the unit
            // vector between the closest points.
            if c.distance < 1e-300 {
                continue;
            }
            let w = (x[i] * (1.0 - c.t) + x[i + 1] * c.t) - (x[j] * (1.0 - c.u) + x[j + 1] * c.u);
            let n = w / c.distance;
            let nodes = [i, i + 1, j, j + 1];
            let coef = [1.0 - c.t, c.t, -(1.0 - c.u), -c.u];
            for a in 0..4 {
                sink.add_gradient(nodes[a], &(n * (de * coef[a])));
            }
            // The exact Hessian E''∇Δ∇Δᵀ + E'∇²Δ (docs/derivations/der-imc.md §F7), split
            // into rank-one terms by its eigenvectors (rank ≤ 5; the weights of either sign:
            // E' < 0 softens the pair across its normal, and the Newton host drops the
            // negative ones where they make the whole system indefinite). Without the second
            // term (Gauss–Newton) Newton converges only linearly while strands press and slide
            // on each other. Which pairs carry it: `ContactHessian` (§F11). `Near`: where E''
            // is at least `CUSHION_EXACT` of its peak (each term costs a banded solve).
            // `Full` also where the pair presses (Δ ≤ 2h: E' near its saturation −k_c/h,
            // E'' vanishing as the overlap deepens, so E'∇²Δ is all its curvature), and
            // farther out in the cushion, where E' and E'' fall together as
            // e^{−k_e(Δ/h − 2)}, the Gauss–Newton term alone, one term, down to
            // `CUSHION_FLOOR` of the peak (Δ ≈ 2.44h at k_e = 50): left out, they had the
            // Newton model off by half the step's gradient in a quarter of the square tie's
            // iterations, along the suture's soft modes.
            let near = dde > CUSHION_EXACT * peak;
            let pressed = full && c.distance <= self.contact_distance();
            if !sink.wants_hessian() || !(near || pressed || (full && dde > CUSHION_FLOOR * peak)) {
                continue;
            }
            let exact = if near || pressed {
                segment::distance_derivatives(&x[i], &x[i + 1], &x[j], &x[j + 1], &c)
            } else {
                None
            };
            if let Some((gd, hd)) = exact {
                let hp = gd * gd.transpose() * dde + hd * de;
                let (lams, vecs) = pair_eigen(&hp, &coef, &w);
                let top = lams.amax();
                for (k, &lam) in lams.iter().enumerate() {
                    if lam.abs() <= EIGEN_FLOOR * top {
                        continue;
                    }
                    let mut u = [0.0; 12];
                    u.iter_mut()
                        .zip(vecs.column(k).iter())
                        .for_each(|(a, b)| *a = *b);
                    sink.add_low_rank(nodes, &u, lam);
                }
            } else {
                // The cushion's far part, or parallel or touching centrelines: the
                // Gauss–Newton term alone.
                let mut u = [0.0; 12];
                for a in 0..4 {
                    for k in 0..3 {
                        u[3 * a + k] = n[k] * coef[a];
                    }
                }
                sink.add_low_rank(nodes, &u, dde);
            }
        }
        if self.friction > 0.0 {
            value += self.friction_term(x, sink);
        }
        value
    }

    fn accept(&mut self, x: &[Vec3]) -> bool {
        self.max_motion = x
            .iter()
            .zip(&self.x_start)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        let mut min = f64::INFINITY;
        let mut active = 0;
        let contact = self.contact_distance();
        let seen = self.seen.get_mut();
        let cached = seen.at(x, &self.pairs);
        for (k, &pair) in self.pairs.iter().enumerate() {
            let d = pair_distance(cached, k, pair, x);
            min = min.min(d);
            active += usize::from(d < contact);
        }
        self.min_distance = min;
        self.active = active;
        // A pair that was not a candidate (farther than 2h + margin at the step's start) and
        // now overlaps was never felt in this solve: re-solve the step with it (a large
        // motion in one step, a strand snapping off the jaws, can outrun the margin).
        if self.adaptive {
            let mut missed = false;
            let cutoff = self.contact_distance() - self.tolerance;
            let mut found = std::mem::take(&mut self.found);
            // The broad phase returns exactly the pairs (more than `skip` apart) closer than
            // its cutoff, in increasing order, whatever cells it used: so the pairs within
            // the next step's `begin` cutoff, searched here once, give this test's pairs by
            // the same distance filter, and that step's candidates unsearched.
            let ahead_cutoff = self.contact_distance() + self.margin;
            if ahead_cutoff >= cutoff {
                let mut ahead = std::mem::take(&mut self.ahead);
                let mut d = std::mem::take(&mut self.ahead_d);
                self.broad.candidates_with_distances_into(
                    x,
                    self.skip,
                    ahead_cutoff,
                    &mut ahead,
                    &mut d,
                );
                found.clear();
                found.extend(
                    ahead
                        .iter()
                        .zip(&d)
                        .filter(|&(_, &d)| d < cutoff)
                        .map(|(&p, _)| p),
                );
                self.ahead_d = d;
                self.ahead = ahead;
                self.ahead_x.clear();
                self.ahead_x.extend_from_slice(x);
                self.ahead_cutoff = ahead_cutoff;
                self.ahead_valid = true;
            } else {
                self.broad.candidates_into(x, self.skip, cutoff, &mut found);
            }
            if let Some(b) = self.broken {
                found.retain(|&(i, j)| i != b && j != b);
            }
            for &p in &found {
                if !self.pairs.contains(&p) && !self.late.contains(&p) {
                    self.late.push(p);
                    missed = true;
                }
            }
            self.found = found;
            // A step in which some node moved more than margin/2 may also have carried a
            // non-candidate pair clean through each other (in contact at no iterate and apart
            // again at its end: a loop snapping off a jaw's tip across a strand 2r thick). Two
            // segments close at most 2·max_motion over the step, so only pairs closer than
            // 2h + 2·max_motion at its start can have met. Along the straight path from the
            // start to the end, sampled so that a pair closes at most h/2 between samples,
            // a pair that passed through (Δ = 0 somewhere) is seen closer than 2h at a sample:
            // re-solve with those as candidates, where the iterates' conservative advancement
            // holds them apart (§F6).
            if self.max_motion > 0.5 * self.margin {
                let reach = self.contact_distance() + 2.0 * self.max_motion;
                let h = self.params.radius;
                let samples = (4.0 * self.max_motion / h).ceil();
                // Past `MAX_SWEEP_SAMPLES` (a node moving over a thousand radii in the step,
                // 10 cm for a 3-0 suture) every pair within reach counts as met, unsampled:
                // the re-solve's candidates are a superset, and the test's cost stays bounded
                // whatever the motion.
                let capped = samples > MAX_SWEEP_SAMPLES as f64;
                let samples = samples as usize;
                let (start, contact) = (&self.x_start, self.contact_distance());
                let met = |(i, j): (usize, usize)| {
                    capped
                        || (0..=samples).any(|k| {
                            let t = k as f64 / samples as f64;
                            let at = |n: usize| start[n] + (x[n] - start[n]) * t;
                            segment::distance(&at(i), &at(i + 1), &at(j), &at(j + 1)).distance
                                < contact
                        })
                };
                // (The broad phase's memory and the found pairs' buffer are reused: the
                // physics loop does not allocate.)
                let mut swept = std::mem::take(&mut self.found);
                self.broad
                    .candidates_into(&self.x_start, self.skip, reach, &mut swept);
                let broken = self.broken;
                for &p in &swept {
                    let material = broken.is_none_or(|b| p.0 != b && p.1 != b);
                    if material && !self.pairs.contains(&p) && !self.late.contains(&p) && met(p) {
                        self.late.push(p);
                        missed = true;
                    }
                }
                self.found = swept;
            }
            if missed {
                return false;
            }
        }
        // Raise up to the cap; at the cap the state is taken as solved (see
        // `SelfContact::stiffness_cap`).
        if self.adaptive
            && min < self.contact_distance() - self.tolerance
            && self.params.stiffness < self.max_stiffness
        {
            self.params.stiffness = (self.params.stiffness * 10.0).min(self.max_stiffness);
            self.raises += 1;
            return false;
        }
        if self.friction_model == FrictionModel::Kinetic {
            self.v_last.clear();
            if let Some(h) = self.h {
                let s = &self.x_start;
                self.v_last
                    .extend(x.iter().zip(s).map(|(a, b)| (a - b) / h));
            }
        }
        self.late.clear();
        true
    }

    fn max_step(&self, x: &[Vec3], x_full: &[Vec3]) -> f64 {
        let mut t = 1.0f64;
        // Conservative advancement: the closest points of a pair approach each other at most
        // as fast as the largest motion of their four nodes (twice, one per segment). An
        // iterate may close a pair's gap and press on by up to `ITERATE_OVERLAP` radii, never
        // further, so the centrelines stay apart within the iteration and no strand passes
        // through another (docs/derivations/der-imc.md §F6; a bound of the tolerance instead
        // left a pair already in contact only ~1e-3 of a Newton step when it slid along).
        let tol = self.tolerance;
        let allow = ITERATE_OVERLAP * self.params.radius;
        let seen = self.seen.borrow();
        let cached = seen.at(x, &self.pairs);
        for (k, &(i, j)) in self.pairs.iter().enumerate() {
            let d = pair_distance(cached, k, (i, j), x);
            let gap = d - self.contact_distance();
            let m = |k: usize| (x_full[k] - x[k]).norm();
            let v = m(i).max(m(i + 1)) + m(j).max(m(j + 1));
            if v > 0.0 {
                t = t.min((gap + allow).max(0.25 * tol) / v);
            }
        }
        t
    }

    fn relag(&mut self, _x: &[Vec3]) -> f64 {
        0.0
    }

    /// PD: each candidate pair closer than 2h pushes its two closest points apart to 2h, half
    /// the overlap each, as one constraint per segment; the weight is the IMC energy's
    /// stiffness at contact, `E''(2h) = k_c k_e/(4h²)` [N/m] (contact::imc), so raising k_c
    /// (the same tolerance test) stiffens both solvers alike. No friction in PD.
    fn project(&self, x: &[Vec3], out: &mut dyn FnMut(Projection)) {
        let p = &self.params;
        let weight = p.stiffness * p.sharpness / (4.0 * p.radius * p.radius);
        let reach = self.contact_distance();
        for &(i, j) in &self.pairs {
            let c = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]);
            if c.distance >= reach || c.distance < 1e-300 {
                continue;
            }
            let pa = x[i] * (1.0 - c.t) + x[i + 1] * c.t;
            let pb = x[j] * (1.0 - c.u) + x[j + 1] * c.u;
            let push = (pa - pb) * (0.5 * (reach - c.distance) / c.distance);
            for (k, s, target) in [(i, c.t, pa + push), (j, c.u, pb - push)] {
                out(Projection {
                    nodes: [k, k + 1],
                    weights: [1.0 - s, s],
                    count: 2,
                    target,
                    weight,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rod of two straight strands crossing at right angles `gap` [m] apart (centre to
    /// centre), joined through a node 1 cm up.
    fn crossing_strands(gap: f64) -> Vec<Vec3> {
        let mut x: Vec<Vec3> = (0..5)
            .map(|i| Vec3::new(0.004 * i as f64 - 0.008, 0.0, 0.0))
            .collect();
        x.push(Vec3::new(0.0, 0.01, 0.0));
        x.extend((0..5).map(|i| Vec3::new(0.0, gap, 0.008 - 0.004 * i as f64)));
        x
    }

    /// A broken segment touches nothing: two strands crossing at contact, one of them the
    /// straight line between the parted nodes of a break, press on each other until the
    /// segment is marked broken, then carry no pair, no energy and no missed contact; the
    /// other pairs are untouched (the same energy, to the bit, with a pressed pair elsewhere).
    #[test]
    fn a_broken_segment_carries_no_pair() {
        let r = 1e-4;
        // The strands shifted 2 mm along themselves, so segment 1 (nodes 1–2) of the first
        // crosses segment 8 (nodes 8–9) of the second at their middles, 1.995 r apart (pressed,
        // inside the tolerance); a copy of both 5 cm along does too.
        let mut x = crossing_strands(1.995 * r);
        for p in &mut x[..5] {
            p.x += 0.002;
        }
        for p in &mut x[6..] {
            p.z += 0.002;
        }
        let far: Vec<Vec3> = x.iter().map(|p| p + Vec3::new(0.05, 0.0, 0.0)).collect();
        x.extend(far);
        let n = x.len();
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        c.begin(&x, Some(1e-3));
        let whole = c.evaluate(&x, None);
        assert!(c.pairs.contains(&(1, 8)), "{:?}", c.pairs);
        // Broken at segment 1 of the first copy: the second copy's crossing alone remains.
        c.broken = Some(1);
        c.begin(&x, Some(1e-3));
        assert!(
            c.pairs.iter().all(|&(i, j)| i != 1 && j != 1),
            "{:?}",
            c.pairs
        );
        let broken = c.evaluate(&x, None);
        assert!(c.accept(&x));
        let mut copy = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        let half = n / 2;
        copy.begin(&x[half..], Some(1e-3));
        let one = copy.evaluate(&x[half..], None);
        assert!(one > 0.0);
        assert_eq!(broken.to_bits(), one.to_bits(), "{broken} vs {one}");
        assert!(
            (whole - 2.0 * one).abs() <= 1e-12 * whole,
            "{whole} vs 2 × {one}"
        );
    }

    #[test]
    fn a_pairs_hessian_is_split_exactly_in_its_five_dimensional_subspace() {
        // Crossing, skew, end-to-interior and end-to-end closest points (t, u free or
        // clamped): the 5×5 eigenproblem's pairs rebuild the 12×12 Hessian, and its nonzero
        // eigenvalues are the full eigenproblem's.
        let cases = [
            [
                (0.0, 0.0, 0.0),
                (1.0, 0.1, 0.0),
                (0.4, -0.5, 0.3),
                (0.6, 0.7, 0.25),
            ],
            [
                (0.0, 0.0, 0.0),
                (1.0, 0.0, 0.0),
                (0.2, 0.3, 0.5),
                (0.9, 0.1, 0.2),
            ],
            [
                (0.0, 0.0, 0.0),
                (1.0, 0.2, 0.1),
                (1.3, 0.4, 0.2),
                (2.0, 1.0, 0.3),
            ],
            [
                (0.0, 0.0, 0.0),
                (0.5, 0.5, 0.0),
                (-0.2, 1.0, 0.3),
                (-0.3, 2.0, 0.1),
            ],
        ];
        let mut checked = 0;
        for pts in cases {
            let [a0, a1, b0, b1] = pts.map(|(x, y, z)| Vec3::new(x, y, z) * 1e-3);
            let c = segment::distance(&a0, &a1, &b0, &b1);
            let Some((gd, hd)) = segment::distance_derivatives(&a0, &a1, &b0, &b1, &c) else {
                continue;
            };
            let hp = gd * gd.transpose() * 3.0e6 + hd * -0.7;
            let coef = [1.0 - c.t, c.t, -(1.0 - c.u), -c.u];
            let w = (a0 * (1.0 - c.t) + a1 * c.t) - (b0 * (1.0 - c.u) + b1 * c.u);
            let (lams, vecs) = pair_eigen(&hp, &coef, &w);
            let mut rebuilt = segment::Mat12::zeros();
            for k in 0..5 {
                rebuilt += vecs.column(k) * vecs.column(k).transpose() * lams[k];
            }
            let scale = hp.amax();
            let err = (rebuilt - hp).amax() / scale;
            // Measured at most 1.7e-15.
            assert!(err < 4e-15, "rebuilt with relative error {err:e}");
            let mut full: Vec<f64> = nalgebra::SymmetricEigen::new(hp)
                .eigenvalues
                .iter()
                .copied()
                .filter(|l| l.abs() > 1e-10 * scale)
                .collect();
            let mut reduced: Vec<f64> = lams
                .iter()
                .copied()
                .filter(|l| l.abs() > 1e-10 * scale)
                .collect();
            full.sort_by(f64::total_cmp);
            reduced.sort_by(f64::total_cmp);
            assert_eq!(full.len(), reduced.len(), "{full:?} vs {reduced:?}");
            for (f, r) in full.iter().zip(&reduced) {
                assert!((f - r).abs() <= 4e-15 * scale, "{full:?} vs {reduced:?}");
            }
            checked += 1;
        }
        assert_eq!(checked, 4);
    }

    /// The Newton model's contact curvature is its gradient's derivative (der-imc.md §F11):
    /// the assembled terms times a direction `v` against central differences of the
    /// assembled gradient along `v`, for a pair pressed deep (E'' vanished, E'∇²Δ all the
    /// curvature), just pressed, in the cushion's near part (exact) and far part (the
    /// Gauss–Newton term alone, off by E'∇²Δ v: ~r/(Δ k_e) of it).
    #[test]
    fn the_contact_hessian_is_its_gradients_derivative_pressed_and_in_the_cushion() {
        let r = 1e-3;
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        c.friction = 0.0;
        c.hessian = ContactHessian::Full;
        // (gap / r, bound on the relative error): measured 5.0e-6, 1.4e-8, 3.8e-8 and 4.1e-3
        // (the Gauss–Newton term's omission, E'∇²Δ v, about r/(Δ k_e) ≈ 0.9 % of it at most);
        // with those pairs' terms left out, as before §F11, 100 % at 1.7r and 2.3r.
        let cases = [(1.7, 1e-5), (1.99, 3e-8), (2.1, 8e-8), (2.3, 5e-3)];
        for (gap, bound) in cases {
            // The strands cross inside a segment of each (at a node the closest points jump
            // between neighbouring pairs, a kink of Φ's curvature).
            let x: Vec<Vec3> = crossing_strands(gap * r)
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    p + Vec3::new(
                        if k > 5 { 0.0015 } else { 0.0 },
                        0.0,
                        if k > 5 { 0.0013 } else { 0.0 },
                    )
                })
                .collect();
            let n = 3 * x.len();
            c.begin(&x, Some(1e-3));
            let gradient = |x: &[Vec3], lr: Option<&mut Vec<crate::rod::LowRank>>| {
                let mut g = vec![0.0; n];
                let mut h = crate::rod::banded::Banded::new(n, 5);
                let mut sink = match lr {
                    Some(lr) => PotentialSink::with_low_rank(&mut g, Some(&mut h), lr),
                    None => PotentialSink::new(&mut g, None),
                };
                sink.stride = 3;
                c.evaluate(x, Some(&mut sink));
                g
            };
            let mut terms = Vec::new();
            gradient(&x, Some(&mut terms));
            assert!(!terms.is_empty(), "gap {gap} r: no curvature");
            // A direction with a part along the normal (y) and across it.
            let v: Vec<Vec3> = (0..x.len())
                .map(|i| {
                    Vec3::new(
                        0.3 + 0.1 * i as f64,
                        1.0 - 0.15 * i as f64,
                        0.2 * (i % 3) as f64,
                    )
                })
                .collect();
            let mut hv = vec![0.0; n];
            for t in &terms {
                let d: f64 = (0..4)
                    .map(|a| {
                        (0..3)
                            .map(|k| t.u[3 * a + k] * v[t.nodes[a]][k])
                            .sum::<f64>()
                    })
                    .sum();
                for a in 0..4 {
                    for k in 0..3 {
                        hv[3 * t.nodes[a] + k] += t.c * t.u[3 * a + k] * d;
                    }
                }
            }
            let eps = 1e-8;
            let shifted =
                |s: f64| -> Vec<Vec3> { x.iter().zip(&v).map(|(x, v)| x + v * s).collect() };
            let (gp, gm) = (
                gradient(&shifted(eps), None),
                gradient(&shifted(-eps), None),
            );
            let (mut err, mut norm) = (0.0f64, 0.0f64);
            for k in 0..n {
                let fd = (gp[k] - gm[k]) / (2.0 * eps);
                err += (hv[k] - fd).powi(2);
                norm += fd * fd;
            }
            let rel = (err / norm).sqrt();
            println!(
                "gap {gap} r: {} terms, relative error {rel:.2e}",
                terms.len()
            );
            assert!(rel < bound, "gap {gap} r: {rel:e}");
        }
    }

    /// The neighbour rule gives docs/derivations/der-imc.md §F5 A's two cases: segments of
    /// about 2h interact from |i − j| = 3 (the IMC thesis' knots, DEFAULT_SKIP), segments much
    /// longer than h from |i − j| = 2 (the 3-0 suture's 1.4 mm segments, h = 0.1 mm: a strand
    /// folded round one segment is felt).
    #[test]
    fn the_neighbour_rule_follows_the_segment_length() {
        let h = 1.6e-3;
        assert_eq!(SelfContact::skip_for(2.0 * h, h), DEFAULT_SKIP);
        assert_eq!(SelfContact::skip_for(1.0 / 300.0, h), 2);
        assert_eq!(SelfContact::skip_for(1.4e-3, 1e-4), 1);
        // Short segments skip more: the rod between them must be π h long.
        assert_eq!(SelfContact::skip_for(0.5 * h, h), 7);
        assert_eq!(SelfContact::skip_for(0.0, h), DEFAULT_SKIP);
    }

    /// The state digest sees the smallest change of every piece of state a step carries to
    /// the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp3};
        // Two strands crossing 1.995 radii apart: a pair in contact, within the tolerance.
        let r = 1e-3;
        let x = crossing_strands(0.001995);
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        c.friction = 0.3;
        c.friction_model = FrictionModel::Kinetic;
        c.begin(&x, Some(1e-3));
        let moved: Vec<Vec3> = x.iter().map(|p| p + Vec3::new(1e-6, 0.0, 0.0)).collect();
        assert!(c.accept(&moved));
        assert!(!c.pairs.is_empty() && c.active > 0 && !c.v_last.is_empty());
        let digest = |c: &SelfContact| {
            let mut d = crate::math::Digest::default();
            c.digest_into(&mut d);
            d.0
        };
        let last = c.v_last.len() - 1;
        let pairs = c.pairs.len() - 1;
        assert_each_changes(
            &c,
            digest,
            &[
                ("params.stiffness", &|c| ulp(&mut c.params.stiffness)),
                ("v_last", &|c| ulp3(&mut c.v_last[last])),
                ("pairs", &|c| c.pairs[pairs].1 += 1),
                ("active", &|c| c.active += 1),
                ("min_distance", &|c| ulp(&mut c.min_distance)),
                ("raises", &|c| c.raises += 1),
                ("max_motion", &|c| ulp(&mut c.max_motion)),
            ],
        );
    }

    /// Two strands passed through each other (0.5 radii apart, 1.5 radii inside contact): each
    /// re-solve raises the stiffness tenfold up to the cap, and at the cap the state is taken
    /// (a penetration no stiffness undoes ends the retries instead of compounding them).
    /// A pair farther apart than the broad phase's cutoff at the step's start (so not a
    /// candidate) that ends the solve overlapping is caught by `accept`, and the re-solve of
    /// the same step takes it in; a new step forgets it (der-imc.md §F6).
    #[test]
    fn a_pair_that_outruns_the_margin_is_taken_into_the_re_solve() {
        let r = 1e-3;
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        // The solve ends with the strands crossing 1.5 r apart (overlapping by half a radius);
        // the pairs at the crossing (the segments either side of it on each strand).
        let end = crossing_strands(1.5 * r);
        let crossing = crate::contact::broad::candidates(&end, c.skip, 2.0 * r - c.tolerance);
        assert!(!crossing.is_empty());
        // At the step's start they cross 2r + margin + 1 mm apart: not candidates.
        let start = crossing_strands(2.0 * r + c.margin + 1e-3);
        c.begin(&start, Some(1e-3));
        for p in &crossing {
            assert!(!c.pairs.contains(p), "{p:?} in {:?}", c.pairs);
        }
        assert!(
            !c.accept(&end),
            "an overlap of r/2 outside the candidates was accepted"
        );
        assert_eq!(c.raises, 0, "a missed pair is not a reason to stiffen");
        // The re-solve starts again from the same state, and feels them.
        c.begin(&start, Some(1e-3));
        for p in &crossing {
            assert!(c.pairs.contains(p), "{p:?} not in {:?}", c.pairs);
        }
        // Now felt, the same end state is judged by the stiffness test alone (1.5 r < 2r − tol:
        // raise and re-solve).
        assert!(!c.accept(&end));
        assert_eq!(c.raises, 1);
        // A new step (another start) forgets them and starts from the broad phase.
        let moved: Vec<Vec3> = start
            .iter()
            .map(|p| p + Vec3::new(1e-4, 0.0, 0.0))
            .collect();
        c.begin(&moved, Some(1e-3));
        for p in &crossing {
            assert!(!c.pairs.contains(p), "{p:?} in {:?}", c.pairs);
        }
    }

    /// The broad phase found ahead by `accept` is the one `begin` would search: over steps of
    /// a coil whose turns close in (pitch 2.6 r → 2.1 r, turning about its axis), each step
    /// begins with exactly the pairs within its cutoff (in order; every pair checked, the
    /// reference), taken from the last `accept` without searching, and `accept`'s own test
    /// sees exactly the pairs within its cutoff; a start that is not the accepted state
    /// searches.
    #[test]
    fn the_broad_phase_found_ahead_is_the_one_begin_would_search() {
        let r = 1e-3;
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        let coil = |k: usize| -> Vec<Vec3> {
            let (pitch, turn) = (r * (2.6 - 0.01 * k as f64), 0.002 * k as f64);
            (0..120)
                .map(|i| {
                    let a = 2.0 * std::f64::consts::PI * i as f64 / 20.0 + turn;
                    Vec3::new(0.006 * a.cos(), 0.006 * a.sin(), pitch * i as f64 / 20.0)
                })
                .collect()
        };
        let begin_cutoff = c.contact_distance() + c.margin;
        let accept_cutoff = c.contact_distance() - c.tolerance;
        let mut x = coil(0);
        c.begin(&x, Some(1e-3));
        let mut taken = 0;
        for k in 1..=50 {
            let next = coil(k);
            assert!(c.accept(&next), "step {k}");
            assert_eq!(
                c.found,
                crate::contact::broad::candidates_brute_force(&next, c.skip, accept_cutoff),
                "step {k}"
            );
            x = next;
            taken += usize::from(c.ahead_valid);
            c.begin(&x, Some(1e-3));
            let fresh = crate::contact::broad::candidates_brute_force(&x, c.skip, begin_cutoff);
            assert!(!fresh.is_empty());
            assert_eq!(c.pairs, fresh, "step {k}");
        }
        assert_eq!(taken, 50);
        // A re-solve from another start (not the accepted state) searches afresh.
        assert!(c.accept(&coil(51)));
        let other = coil(60);
        c.begin(&other, Some(1e-3));
        assert_eq!(
            c.pairs,
            crate::contact::broad::candidates_brute_force(&other, c.skip, begin_cutoff)
        );
    }

    /// A pair that is not a candidate at the step's start and that the solve carries clean
    /// through each other (apart at the start, apart on the other side at the end, in contact
    /// at no state `accept` sees) is caught: the strand moved more than margin/2, so the pairs
    /// within 2h + 2·max_motion at the start are followed along the straight path from the
    /// start to the end, and one that meets contact on it is taken into the re-solve, whose
    /// iterates cannot pass it (der-imc.md §F6). A large motion that meets nothing, or a
    /// small one, is taken as it is.
    #[test]
    fn a_pair_carried_clean_through_in_one_step_is_taken_into_the_re_solve() {
        let r = 1e-3;
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        let apart = 2.0 * r + c.margin + 1e-3;
        let start = crossing_strands(apart);
        let through = crossing_strands(-apart);
        // Where the strands cross, at the start (the crossing's pairs within reach).
        let crossing = crate::contact::broad::candidates(&crossing_strands(0.0), c.skip, r);
        assert!(!crossing.is_empty());
        c.begin(&start, Some(1e-3));
        for p in &crossing {
            assert!(!c.pairs.contains(p), "{p:?} in {:?}", c.pairs);
        }
        // Apart at the end as at the start: only the motion shows the pass.
        let seg = |x: &[Vec3], (i, j): (usize, usize)| {
            segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance
        };
        for &p in &crossing {
            assert!(seg(&through, p) > 2.0 * r + c.margin, "{p:?}");
        }
        assert!(!c.accept(&through), "a strand passed through another");
        assert!(c.max_motion > 0.5 * c.margin);
        assert_eq!(c.raises, 0);
        c.begin(&start, Some(1e-3));
        for p in &crossing {
            assert!(c.pairs.contains(p), "{p:?} not in {:?}", c.pairs);
        }
        // A step that moves the strand less than margin/2 is taken as it is.
        let mut c = SelfContact::new(r, SelfContact::stiffness_for(1.0, r));
        c.begin(&start, Some(1e-3));
        let near = crossing_strands(apart - 0.45 * c.margin);
        assert!(c.accept(&near));
        // So is one that slides the strand 5 mm along the other (within reach at the start,
        // never nearer on the way).
        c.begin(&start, Some(1e-3));
        let mut along = start.clone();
        for p in &mut along[6..] {
            p.x += 5e-3;
        }
        assert!(c.accept(&along));
        assert!(c.max_motion > 0.5 * c.margin);
        // Slid 10 m (a node moving 10⁴ radii in one step, past `MAX_SWEEP_SAMPLES`: only a
        // solve that has run away does that), the paths are not sampled: every pair within
        // reach at the start counts as met, and the re-solve takes them in. Sampled, the
        // 10⁴ radii would have cost 4·10⁴ distances a pair.
        c.begin(&start, Some(1e-3));
        let mut far = start.clone();
        for p in &mut far[6..] {
            p.x += 10.0;
        }
        assert!(4.0 * 10.0 / r > MAX_SWEEP_SAMPLES as f64);
        assert!(!c.accept(&far), "a 10 m motion's pairs were sampled");
        c.begin(&start, Some(1e-3));
        for p in &crossing {
            assert!(c.pairs.contains(p), "{p:?} not in {:?}", c.pairs);
        }
    }

    #[test]
    fn the_stiffness_is_raised_up_to_its_cap_and_no_further() {
        let r = 1e-3;
        let x = crossing_strands(0.0005);
        let k0 = SelfContact::stiffness_for(1.0, r);
        let mut c = SelfContact::new(r, k0);
        // Nylon 3-0 against this radius: EA = 3 GPa × π (0.1 mm)² = 94 N.
        let ea = 3e9 * std::f64::consts::PI * 1e-8;
        c.max_stiffness = SelfContact::stiffness_cap(ea, r);
        c.begin(&x, Some(1e-3));
        let mut raised = Vec::new();
        while !c.accept(&x) {
            raised.push(c.params.stiffness);
            assert!(raised.len() < 10, "no end to the raises: {raised:?}");
        }
        // From 1 N to 94 N: ×10 (10 N), then the cap (94 N, not 100 N).
        assert_eq!(raised.len(), 2, "{raised:?}");
        assert_eq!(raised[0], k0 * 10.0);
        assert_eq!(raised[1], c.max_stiffness);
        assert!(c.max_stiffness < k0 * 100.0);
        assert_eq!(c.raises, 2);
        // The cap holds the force EA at a tenth of the tolerance (`stiffness_for`); the IMC
        // force saturates at k_c / h (der-imc.md §B4): about 2 EA, more than any rod survives.
        let saturated = c.max_stiffness / r;
        assert!((saturated / ea - 1.0 / 0.51).abs() < 1e-12, "{saturated} N");
        // Taken again at the cap: no raise.
        assert!(c.accept(&x));
        assert_eq!(c.raises, 2);
    }
}
