//! Segment–segment distance for rod self-contact (Choi 2021 thesis §3.2, docs/derivations/der-imc.md §B2–B5).
//!
//! - [`distance`]: the exact minimum distance with Lumelsky's clamping (eqs. 3.13–3.15) and the
//!   erratum fixed: `e_ij = x_j − x_i` (the printed `x_i − x_j` is wrong for every random pair).
//!   Parallel edges (λ ≤ 1e-12 D1 D2, relative) take the midpoint of the overlap interval, so
//!   the closest pair (not only the distance) is continuous as edges become parallel.
//! - [`smoothed_distance`]: the thesis's smooth version (eq. 3.18) with the re-clamp it drops
//!   (docs/derivations/der-imc.md §B3: `t3 = (1 − B(u1)) H((u2 R + S1)/D1) + B(u1) t2`; without it Δ is up to 0.46 h
//!   too small and parallel overlaps get ×40 spurious forces).
//! - [`distance_derivatives`]: gradient and Hessian of the exact distance with respect to the
//!   12 node coordinates, by the value-function (envelope) rule of the minimisation
//!   `½Δ² = min_{t,u} ½|x_i + t e_i − x_j − u e_j|²` over the free parameters (those not
//!   clamped): `∇²f = f_xx − f_xy f_yy⁻¹ f_yx`. Exact wherever the active set is locally fixed
//!   (away from clamp switches, parallel edges and Δ = 0).

use crate::math::{Mat3, Vec3};
use nalgebra::{SMatrix, SVector};

/// 12-vector over the nodes `[x_i, x_{i+1}, x_j, x_{j+1}]`.
pub type Vec12 = SVector<f64, 12>;
/// 12×12 matrix over the same.
pub type Mat12 = SMatrix<f64, 12, 12>;

/// Closest points of two segments: `x_i + t e_i` and `x_j + u e_j`, and their distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closest {
    /// Distance [m].
    pub distance: f64,
    /// Parameter on segment i, in [0, 1].
    pub t: f64,
    /// Parameter on segment j, in [0, 1].
    pub u: f64,
    /// Whether t and u are interior (not clamped), for the derivatives' active set.
    pub t_free: bool,
    /// See `t_free`.
    pub u_free: bool,
}

/// Relative cutoff below which two segments count as parallel: λ ≤ PARALLEL D1 D2
/// (sin² of the angle between them).
pub const PARALLEL: f64 = 1e-12;

fn clamp01(x: f64) -> f64 {
    x.clamp(0.0, 1.0)
}

/// Exact minimum distance between segment `a0 a1` and segment `b0 b1` (Lumelsky 1985 as in the
/// thesis, eqs. 3.13–3.15, with `e_ij = x_j − x_i`). Zero-length segments are allowed.
pub fn distance(a0: &Vec3, a1: &Vec3, b0: &Vec3, b1: &Vec3) -> Closest {
    let ei = a1 - a0;
    let ej = b1 - b0;
    let eij = b0 - a0;
    let d1 = ei.dot(&ei);
    let d2 = ej.dot(&ej);
    let r = ei.dot(&ej);
    let s1 = ei.dot(&eij);
    let s2 = ej.dot(&eij);
    let lambda = d1 * d2 - r * r;
    let (mut t, mut u);
    if d1 <= 0.0 && d2 <= 0.0 {
        t = 0.0;
        u = 0.0;
    } else if d1 <= 0.0 {
        t = 0.0;
        u = clamp01(-s2 / d2);
    } else if d2 <= 0.0 {
        u = 0.0;
        t = clamp01(s1 / d1);
    } else {
        // u for a given t, then t re-clamped if u was clamped (eq. 3.14).
        let settle = |t: f64| {
            let u = (t * r - s2) / d2;
            let uf = clamp01(u);
            if uf != u {
                (clamp01((uf * r + s1) / d1), uf)
            } else {
                (t, u)
            }
        };
        if lambda > PARALLEL * d1 * d2 {
            (t, u) = settle(clamp01((s1 * d2 - s2 * r) / lambda));
        } else {
            // (Nearly) parallel: the closest pair is (nearly) a continuum over the overlap of
            // segment j projected onto i. Take the overlap's midpoint unless one of its ends
            // is strictly closer (nearly parallel edges), so the distance stays exact and the
            // pair is continuous as the edges become exactly parallel.
            let p0 = s1 / d1;
            let p1 = (s1 + r) / d1;
            let (lo, hi) = (p0.min(p1).max(0.0), p0.max(p1).min(1.0));
            let mid = if lo <= hi {
                0.5 * (lo + hi)
            } else {
                clamp01(0.5 * (p0 + p1))
            };
            let dist = |(t, u): (f64, f64)| (ei * t - ej * u - eij).norm();
            (t, u) = settle(mid);
            let mut best = dist((t, u));
            let tol = 1e-14 * (d1.max(d2)).sqrt();
            for cand in [lo.min(1.0), hi.max(0.0)] {
                let tu = settle(clamp01(cand));
                let d = dist(tu);
                if d < best - tol {
                    (t, u, best) = (tu.0, tu.1, d);
                }
            }
        }
    }
    let w = ei * t - ej * u - eij;
    let eps = 1e-12;
    Closest {
        distance: w.norm(),
        t,
        u,
        t_free: d1 > 0.0 && t > eps && t < 1.0 - eps,
        u_free: d2 > 0.0 && u > eps && u < 1.0 - eps,
    }
}

/// Smooth clamp to [0, 1], thesis eq. 3.16: `H(x) = [ln(1 + e^{kx}) − ln(1 + e^{k(x−1)})]/k`.
pub fn smooth_clamp(x: f64, k: f64) -> f64 {
    (softplus(k * x) - softplus(k * (x - 1.0))) / k
}

/// Smooth boxcar, thesis eq. 3.17: `B(x) = σ(kx) − σ(k(x−1))`, σ the logistic function.
pub fn smooth_box(x: f64, k: f64) -> f64 {
    logistic(k * x) - logistic(k * (x - 1.0))
}

/// `ln(1 + e^z)` without overflow.
pub fn softplus(z: f64) -> f64 {
    if z > 30.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// `1/(1 + e^{−z})`.
pub fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The thesis's smoothed distance (eq. 3.18, k = 50) with the re-clamp of t restored
/// (docs/derivations/der-imc.md §B3). Segments must have non-zero length.
pub fn smoothed_distance(a0: &Vec3, a1: &Vec3, b0: &Vec3, b1: &Vec3, k: f64) -> f64 {
    let ei = a1 - a0;
    let ej = b1 - b0;
    let eij = b0 - a0;
    let d1 = ei.dot(&ei);
    let d2 = ej.dot(&ej);
    let r = ei.dot(&ej);
    let s1 = ei.dot(&eij);
    let s2 = ej.dot(&eij);
    let lambda = d1 * d2 - r * r;
    let t1 = if lambda > PARALLEL * d1 * d2 {
        (s1 * d2 - s2 * r) / lambda
    } else {
        0.0
    };
    let t2 = smooth_clamp(t1, k);
    let u1 = (t2 * r - s2) / d2;
    let u2 = smooth_clamp(u1, k);
    let b = smooth_box(u1, k);
    let t3 = (1.0 - b) * smooth_clamp((u2 * r + s1) / d1, k) + b * t2;
    (ei * t3 - ej * u2 - eij).norm()
}

/// Gradient and Hessian of the exact distance with respect to `[a0, a1, b0, b1]` at the
/// closest pair `c` (from [`distance`] on the same points). None where the distance is not
/// twice differentiable in this form (Δ ≈ 0, or parallel free parameters).
pub fn distance_derivatives(
    a0: &Vec3,
    a1: &Vec3,
    b0: &Vec3,
    b1: &Vec3,
    c: &Closest,
) -> Option<(Vec12, Mat12)> {
    let ei = a1 - a0;
    let ej = b1 - b0;
    let (t, u) = (c.t, c.u);
    // w = p_i − p_j = (1−t) a0 + t a1 − (1−u) b0 − u b1; J = ∂w/∂x (3×12).
    let w = a0 * (1.0 - t) + a1 * t - b0 * (1.0 - u) - b1 * u;
    let dist = w.norm();
    if dist < 1e-300 {
        return None;
    }
    let coef = [1.0 - t, t, -(1.0 - u), -u];
    // f = ½|w|²: f_x = Jᵀ w, f_xx = JᵀJ.
    let mut fx = Vec12::zeros();
    let mut fxx = Mat12::zeros();
    for a in 0..4 {
        fx.fixed_rows_mut::<3>(3 * a).copy_from(&(w * coef[a]));
        for b in 0..4 {
            fxx.fixed_view_mut::<3, 3>(3 * a, 3 * b)
                .copy_from(&(Mat3::identity() * (coef[a] * coef[b])));
        }
    }
    // Free parameters y ⊂ {t, u}: f_xy columns and f_yy.
    // ∂(Jᵀw)/∂t = (∂J/∂t)ᵀ w + Jᵀ e_i, ∂J/∂t = [−I, I, 0, 0];
    // ∂(Jᵀw)/∂u = (∂J/∂u)ᵀ w − Jᵀ e_j, ∂J/∂u = [0, 0, I, −I].
    let col = |dj: [f64; 4], v: &Vec3| {
        let mut c = Vec12::zeros();
        for a in 0..4 {
            c.fixed_rows_mut::<3>(3 * a)
                .copy_from(&(w * dj[a] + v * coef[a]));
        }
        c
    };
    let ct = col([-1.0, 1.0, 0.0, 0.0], &ei);
    let cu = col([0.0, 0.0, 1.0, -1.0], &(-ej));
    let mut hf = fxx;
    match (c.t_free, c.u_free) {
        (true, true) => {
            let (a, b, d) = (ei.dot(&ei), -ei.dot(&ej), ej.dot(&ej));
            let det = a * d - b * b;
            if det <= PARALLEL * a * d {
                return None;
            }
            // f_yy⁻¹ = [[d, −b], [−b, a]] / det.
            hf -= (ct * ct.transpose() * d - (ct * cu.transpose() + cu * ct.transpose()) * b
                + cu * cu.transpose() * a)
                / det;
        }
        (true, false) => {
            let a = ei.dot(&ei);
            hf -= ct * ct.transpose() / a;
        }
        (false, true) => {
            let d = ej.dot(&ej);
            hf -= cu * cu.transpose() / d;
        }
        (false, false) => {}
    }
    // Δ = sqrt(2f): ∇Δ = f_x/Δ, ∇²Δ = ∇²f/Δ − f_x f_xᵀ/Δ³.
    let g = fx / dist;
    let h = hf / dist - fx * fx.transpose() / (dist * dist * dist);
    Some((g, h))
}
