//! Discrete Elastic Rods (Bergou et al. 2008), the reference model of issue #8. So far: the
//! discrete geometry every DER energy is built on, with its derivatives checked against finite
//! differences (docs/derivations/der-imc.md §D0, U1, U2, U4, and the stretching part of U8).
//!
//! Conventions (docs/derivations/der-imc.md §E1.5): edges `e^i = x_{i+1} − x_i`, tangents `t^i = e^i/|e^i|` live on
//! edges; `v = t × u` for the Bishop frame; `m1 = cos θ u + sin θ v`,
//! `m2 = −sin θ u + cos θ v`; material curvature `ω = (κb·m2, −κb·m1)`.

pub mod energy;
pub mod rest_shape;
pub mod ring;
pub mod rod;

pub use rest_shape::{SagFreeError, SagFreeOptions, SagFreeReport};
pub use ring::DerRing;
pub use rod::DerRod;

use crate::math::{Mat3, Vec3, skew};

/// The discrete curvature binormal at the vertex between edges `e0` and `e1` (integrated),
/// Bergou 2008 eq. 1: `(κb) = 2 e0 × e1 / (|e0||e1| + e0·e1)`. Its magnitude is
/// `2 tan(φ/2)` for the turning angle φ; it is 0 for collinear edges. Undefined for a fully
/// folded pair (φ = π): the denominator is guarded to stay positive.
pub fn curvature_binormal(e0: &Vec3, e1: &Vec3) -> Vec3 {
    let d = (e0.norm() * e1.norm() + e0.dot(e1)).max(f64::MIN_POSITIVE);
    2.0 * e0.cross(e1) / d
}

/// The Jacobians of [`curvature_binormal`] with respect to the three vertices, in the full
/// (extensible) form of docs/derivations/der-imc.md §A6 (the paper's form assumes inextensibility and is wrong off
/// it), with `D = |e0||e1| + e0·e1` on current lengths:
/// `∂κb/∂x_{i−1} = (2[e1] + κb (e1 + |e1| t0)ᵀ) / D`,
/// `∂κb/∂x_{i+1} = (2[e0] − κb (e0 + |e0| t1)ᵀ) / D`,
/// `∂κb/∂x_i = −(∂κb/∂x_{i−1} + ∂κb/∂x_{i+1})`, where `[e] y = e × y`.
pub fn curvature_binormal_jacobians(e0: &Vec3, e1: &Vec3) -> [Mat3; 3] {
    let (l0, l1) = (e0.norm(), e1.norm());
    let d = (l0 * l1 + e0.dot(e1)).max(f64::MIN_POSITIVE);
    let kb = 2.0 * e0.cross(e1) / d;
    let (t0, t1) = (e0 / l0, e1 / l1);
    let prev = (2.0 * skew(e1) + kb * (e1 + l1 * t0).transpose()) / d;
    let next = (2.0 * skew(e0) - kb * (e0 + l0 * t1).transpose()) / d;
    [prev, -(prev + next), next]
}

/// Parallel transport of `u` from the unit tangent `t0` to the unit tangent `t1`: the rotation
/// about `t0 × t1` taking `t0` to `t1` (Bergou 2008 §4.2), exactly the identity for collinear
/// tangents. Undefined for opposite tangents (returns `u`).
pub fn parallel_transport(u: &Vec3, t0: &Vec3, t1: &Vec3) -> Vec3 {
    let b = t0.cross(t1);
    let s = b.norm();
    if s < 1e-15 {
        return *u;
    }
    let b = b / s;
    let (n0, n1) = (t0.cross(&b), t1.cross(&b));
    u.dot(t0) * t1 + u.dot(&n0) * n1 + u.dot(&b) * b
}

/// Gradient of the holonomy ψ_i of the vertex between edges `e0` and `e1` (Bergou 2008
/// eq. 9): `∇_{i−1}ψ = κb/(2|e0|)`, `∇_{i+1}ψ = −κb/(2|e1|)`, `∇_iψ = −(∇_{i−1} + ∇_{i+1})ψ`.
/// Moving the centerline rotates the Bishop frame of edge j about `t^j` (right-handed) by
/// `Σ_{k ≤ j} ∇ψ_k · δx` (eq. 10).
pub fn holonomy_gradient(e0: &Vec3, e1: &Vec3) -> [Vec3; 3] {
    let kb = curvature_binormal(e0, e1);
    let prev = kb / (2.0 * e0.norm());
    let next = -kb / (2.0 * e1.norm());
    [prev, -(prev + next), next]
}

/// The space-parallel (Bishop) frame of a polyline: per edge `(t, u, v)` with `u^0 = u0`
/// projected perpendicular to `t^0` and normalised, `u^i = P_i(u^{i−1})`, `v = t × u`
/// (Bergou 2008 §4.2).
pub fn bishop_frames(x: &[Vec3], u0: &Vec3) -> Vec<(Vec3, Vec3, Vec3)> {
    let mut out: Vec<(Vec3, Vec3, Vec3)> = Vec::with_capacity(x.len().saturating_sub(1));
    for i in 0..x.len().saturating_sub(1) {
        let t = (x[i + 1] - x[i]).normalize();
        let u = match out.last() {
            None => (u0 - t * t.dot(u0)).normalize(),
            Some((tp, up, _)) => {
                let u = parallel_transport(up, tp, &t);
                // Re-orthonormalise against round-off.
                (u - t * t.dot(&u)).normalize()
            }
        };
        out.push((t, u, t.cross(&u)));
    }
    out
}

/// The material directors of an edge at angle θ from its Bishop frame (u, v):
/// `m1 = cos θ u + sin θ v`, `m2 = −sin θ u + cos θ v`.
pub fn material_directors(u: &Vec3, v: &Vec3, theta: f64) -> (Vec3, Vec3) {
    let (s, c) = theta.sin_cos();
    (c * u + s * v, -s * u + c * v)
}

/// Material curvature of a vertex in the frame of one adjacent edge (Bergou 2008 eq. 2):
/// `ω = (κb·m2, −κb·m1)`.
pub fn material_curvature(kb: &Vec3, m1: &Vec3, m2: &Vec3) -> [f64; 2] {
    [kb.dot(m2), -kb.dot(m1)]
}

/// Stretching energy of an edge (IMC thesis eq. 3.2): `½ k_s (|e|/|ē| − 1)² |ē|` [J], with
/// `k_s = E A` [N], its gradient with respect to the edge's end `x_{i+1}` (the start gets the
/// negative), `k_s ε t`, and the Hessian block `H = k_s [t tᵀ/|ē| + ε (I − t tᵀ)/|e|]`
/// (the 6×6 node block is `[[H, −H], [−H, H]]`). `psd` drops the compressive, negative term.
pub fn stretch(e: &Vec3, rest: f64, ks: f64, psd: bool) -> (f64, Vec3, Mat3) {
    let l = e.norm();
    let eps = l / rest - 1.0;
    let t = e / l;
    let tt = t * t.transpose();
    let lateral = if psd { eps.max(0.0) } else { eps };
    (
        0.5 * ks * eps * eps * rest,
        ks * eps * t,
        ks * (tt / rest + lateral * (Mat3::identity() - tt) / l),
    )
}

/// A 2×2 symmetric matrix `[[a, b], [b, c]]` (a bending stiffness B̄ in a material frame).
pub type Sym2 = [f64; 3];

fn sym_mul(b: &Sym2, w: [f64; 2]) -> [f64; 2] {
    [b[0] * w[0] + b[1] * w[1], b[1] * w[0] + b[2] * w[1]]
}

fn dot2(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// `J w`, the counter-clockwise quarter turn of a 2-vector: `J(a, b) = (−b, a)`.
fn quarter(w: [f64; 2]) -> [f64; 2] {
    [-w[1], w[0]]
}

/// Bending and twisting energy of a rod as a function of its edge angles θ^0…θ^n for a fixed
/// centerline (Bergou 2008 eqs 3 and 4–7): the problem DER solves for its quasistatic material
/// frame. Vertex i (1…n) sits between edges i−1 and i.
#[derive(Clone, Debug)]
pub struct TwistProblem {
    /// Curvature binormal per interior vertex (index i − 1 for vertex i).
    pub kb: Vec<Vec3>,
    /// Bishop frame (u, v) per edge.
    pub frames: Vec<(Vec3, Vec3)>,
    /// Rest Voronoi length l̄_i = |ē^{i−1}| + |ē^i| per interior vertex [m] (the sum, docs/derivations/der-imc.md §A1).
    pub rest_length: Vec<f64>,
    /// Bending stiffness B̄^j per edge in its rest material frame [N m²].
    pub stiffness: Vec<Sym2>,
    /// Rest material curvatures (ω̄_i^{i−1}, ω̄_i^i) per interior vertex.
    pub rest_curvature: Vec<[[f64; 2]; 2]>,
    /// Twisting stiffness β = GJ [N m²].
    pub beta: f64,
}

impl TwistProblem {
    /// The problem for centerline `x` with Bishop anchor `u0`, rest lengths from `rest` (a
    /// polyline of the same size), per-edge stiffness and rest curvatures.
    pub fn new(
        x: &[Vec3],
        u0: &Vec3,
        rest: &[Vec3],
        stiffness: Vec<Sym2>,
        rest_curvature: Vec<[[f64; 2]; 2]>,
        beta: f64,
    ) -> Self {
        let frames = bishop_frames(x, u0)
            .into_iter()
            .map(|(_, u, v)| (u, v))
            .collect();
        let n = x.len() - 2;
        TwistProblem {
            kb: (1..=n)
                .map(|i| curvature_binormal(&(x[i] - x[i - 1]), &(x[i + 1] - x[i])))
                .collect(),
            frames,
            rest_length: (1..=n)
                .map(|i| (rest[i] - rest[i - 1]).norm() + (rest[i + 1] - rest[i]).norm())
                .collect(),
            stiffness,
            rest_curvature,
            beta,
        }
    }

    /// Material curvature of vertex i in the frame of edge j ∈ {i−1, i} at angle θ^j.
    fn omega(&self, i: usize, j: usize, theta: f64) -> [f64; 2] {
        let (u, v) = &self.frames[j];
        let (m1, m2) = material_directors(u, v, theta);
        material_curvature(&self.kb[i - 1], &m1, &m2)
    }

    /// E(θ) [J]: Σ_i 1/(2 l̄_i) Σ_{j=i−1,i} (ω_i^j − ω̄_i^j)ᵀ B̄^j (ω_i^j − ω̄_i^j)
    /// + Σ_i β (θ^i − θ^{i−1})² / l̄_i (Bergou 2008 eq. 3 and §4.2.2).
    pub fn energy(&self, theta: &[f64]) -> f64 {
        debug_assert_eq!(theta.len(), self.frames.len(), "one angle per edge");
        let mut e = 0.0;
        for i in 1..=self.kb.len() {
            let l = self.rest_length[i - 1];
            for (k, j) in [i - 1, i].into_iter().enumerate() {
                let w = self.omega(i, j, theta[j]);
                let d = [
                    w[0] - self.rest_curvature[i - 1][k][0],
                    w[1] - self.rest_curvature[i - 1][k][1],
                ];
                e += dot2(d, sym_mul(&self.stiffness[j], d)) / (2.0 * l);
            }
            let m = theta[i] - theta[i - 1];
            e += self.beta * m * m / l;
        }
        e
    }

    /// ∂E/∂θ^j (Bergou 2008 eq. 7: ∂W_i/∂θ^j = (1/l̄_i) ωᵀ J B̄ (ω − ω̄), with ∂ω/∂θ = −Jω)
    /// and the tridiagonal Hessian: its diagonal, and its off-diagonal (entry j couples θ^j
    /// and θ^{j+1}).
    pub fn derivatives(&self, theta: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let m = theta.len();
        let (mut g, mut diag, mut off) = (vec![0.0; m], vec![0.0; m], vec![0.0; m - 1]);
        for i in 1..=self.kb.len() {
            let l = self.rest_length[i - 1];
            for (k, j) in [i - 1, i].into_iter().enumerate() {
                let b = &self.stiffness[j];
                let w = self.omega(i, j, theta[j]);
                let d = [
                    w[0] - self.rest_curvature[i - 1][k][0],
                    w[1] - self.rest_curvature[i - 1][k][1],
                ];
                let dw = quarter(w).map(|c| -c); // ∂ω/∂θ = −Jω
                g[j] += dot2(dw, sym_mul(b, d)) / l;
                // ∂²ω/∂θ² = −ω.
                diag[j] += (dot2(dw, sym_mul(b, dw)) - dot2(w, sym_mul(b, d))) / l;
            }
            let mt = theta[i] - theta[i - 1];
            g[i] += 2.0 * self.beta * mt / l;
            g[i - 1] -= 2.0 * self.beta * mt / l;
            diag[i] += 2.0 * self.beta / l;
            diag[i - 1] += 2.0 * self.beta / l;
            off[i - 1] -= 2.0 * self.beta / l;
        }
        (g, diag, off)
    }

    /// The quasistatic material frame (Bergou 2008 eq. 4): Newton on the free θ (the ends
    /// with `clamped` true keep theirs) with the tridiagonal Hessian and a backtracking line
    /// search, from `theta`. Returns the iterations, or None if it did not reach
    /// |∂E/∂θ| < `tol` [J/rad] in `max_iter`.
    pub fn solve(
        &self,
        theta: &mut [f64],
        clamped: (bool, bool),
        tol: f64,
        max_iter: usize,
    ) -> Option<usize> {
        let m = theta.len();
        let free = |j: usize| !((j == 0 && clamped.0) || (j == m - 1 && clamped.1));
        for it in 0..max_iter {
            let (mut g, mut d, mut o) = self.derivatives(theta);
            for j in 0..m {
                if !free(j) {
                    g[j] = 0.0;
                    d[j] = 1.0;
                    if j > 0 {
                        o[j - 1] = 0.0;
                    }
                    if j < m - 1 {
                        o[j] = 0.0;
                    }
                }
            }
            if g.iter().map(|x| x.abs()).fold(0.0, f64::max) < tol {
                return Some(it);
            }
            // Thomas algorithm on H δ = −g (H is positive definite near a minimum; a
            // non-positive pivot falls back to gradient descent scaled by the diagonal).
            let mut c = vec![0.0; m];
            let mut r = vec![0.0; m];
            let mut ok = true;
            for j in 0..m {
                let denom = d[j] - if j > 0 { o[j - 1] * c[j - 1] } else { 0.0 };
                if denom <= 0.0 {
                    ok = false;
                    break;
                }
                c[j] = if j < m - 1 { o[j] / denom } else { 0.0 };
                r[j] = (-g[j] - if j > 0 { o[j - 1] * r[j - 1] } else { 0.0 }) / denom;
            }
            let step: Vec<f64> = if ok {
                for j in (0..m - 1).rev() {
                    r[j] -= c[j] * r[j + 1];
                }
                r
            } else {
                (0..m).map(|j| -g[j] / d[j].abs().max(1e-12)).collect()
            };
            let e0 = self.energy(theta);
            let mut a = 1.0;
            loop {
                let trial: Vec<f64> = (0..m).map(|j| theta[j] + a * step[j]).collect();
                if self.energy(&trial) <= e0 || a < 1e-8 {
                    theta.copy_from_slice(&trial);
                    break;
                }
                a *= 0.5;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic random vectors.
    struct Rng(u64);
    impl Rng {
        fn f(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64 * 2.0
                - 1.0
        }
        fn v(&mut self) -> Vec3 {
            Vec3::new(self.f(), self.f(), self.f())
        }
    }

    /// U1: |κb| = 2 tan(φ/2), κb ⟂ both edges, 0 for collinear edges.
    #[test]
    fn curvature_binormal_has_magnitude_two_tan_half_phi() {
        let mut r = Rng(11);
        for _ in 0..1000 {
            let (e0, e1) = (r.v(), r.v());
            let phi = e0.angle(&e1);
            if phi > 3.0 {
                continue;
            }
            let kb = curvature_binormal(&e0, &e1);
            assert!((kb.norm() - 2.0 * (phi / 2.0).tan()).abs() < 1e-10 * (1.0 + kb.norm()));
            assert!(kb.dot(&e0).abs() < 1e-12 * (1.0 + kb.norm()) * e0.norm());
            assert!(kb.dot(&e1).abs() < 1e-12 * (1.0 + kb.norm()) * e1.norm());
            assert!(curvature_binormal(&e0, &(2.5 * e0)).norm() < 1e-15);
        }
    }

    /// Rotation of the last Bishop frame of `x` (from `u0` at edge 0) relative to that of
    /// `base`, carried to the new last tangent by parallel transport in time, measured
    /// right-handed about the new last tangent [rad].
    fn last_frame_rotation(base: &[Vec3], x: &[Vec3], u0: &Vec3) -> f64 {
        let fb = bishop_frames(base, u0);
        let fx = bishop_frames(x, u0);
        let (tb, ub, _) = fb[fb.len() - 1];
        let (tx, ux, _) = fx[fx.len() - 1];
        let p = parallel_transport(&ub, &tb, &tx);
        energy::signed_angle(&p, &ux, &tx)
    }

    /// A bent, non-planar polyline of `n` vertices with unequal edges.
    fn polyline(r: &mut Rng, n: usize) -> Vec<Vec3> {
        let mut x = vec![Vec3::zeros()];
        let mut d = Vec3::new(1.0, 0.0, 0.0);
        for _ in 1..n {
            d = (d + 0.5 * r.v()).normalize();
            let last = x[x.len() - 1];
            x.push(last + d * (0.8 + 0.4 * r.f().abs()));
        }
        x
    }

    /// U3: the holonomy gradient (eq. 9), summed over the vertices (eq. 10), against central
    /// differences of the actual rotation of the last Bishop frame, for variations that keep
    /// edge 0 fixed (relative error < 1e-6).
    #[test]
    fn holonomy_gradient_matches_the_bishop_frame_rotation() {
        let mut r = Rng(5);
        for _ in 0..20 {
            let x = polyline(&mut r, 7);
            let t0 = (x[1] - x[0]).normalize();
            let u0 = t0.cross(&r.v()).normalize();
            let mut dx = vec![Vec3::zeros(); x.len()];
            for d in dx.iter_mut().skip(2) {
                *d = r.v();
            }
            let mut analytic = 0.0;
            for k in 1..x.len() - 1 {
                let g = holonomy_gradient(&(x[k] - x[k - 1]), &(x[k + 1] - x[k]));
                for a in 0..3 {
                    analytic += g[a].dot(&dx[k - 1 + a]);
                }
            }
            let h = 1e-6;
            let moved =
                |s: f64| -> Vec<Vec3> { x.iter().zip(&dx).map(|(p, d)| p + d * s).collect() };
            let fd = (last_frame_rotation(&x, &moved(h), &u0)
                - last_frame_rotation(&x, &moved(-h), &u0))
                / (2.0 * h);
            assert!(
                (fd - analytic).abs() <= 1e-6 * analytic.abs().max(1e-3),
                "holonomy: analytic {analytic} fd {fd}"
            );
        }
    }

    /// U7: the clamped isotropic DER force (§7.1: `F_i = Σ_j −(2α/l̄_j)(∇_i κb_j)ᵀ κb_j +
    /// β(θ^n − θ^0)/L̄ ∇_i ψ_j`) against central differences of eq. 6, whose twist
    /// `θ^n − θ^0 = Θ − ΔΨ^n(x)` keeps the clamped end frames fixed, along variations that
    /// hold the two end edges (relative error < 1e-6).
    #[test]
    fn clamped_isotropic_force_matches_finite_differences_of_eq6() {
        let mut r = Rng(9);
        let (alpha, beta) = (1.345, 0.789);
        for _ in 0..10 {
            let x = polyline(&mut r, 8);
            let n = x.len();
            let rest: Vec<f64> = (1..n - 1)
                .map(|i| (x[i] - x[i - 1]).norm() + (x[i + 1] - x[i]).norm())
                .collect();
            let lbar = 0.5 * rest.iter().sum::<f64>();
            let big_theta = 7.0;
            let t0 = (x[1] - x[0]).normalize();
            let u0 = t0.cross(&r.v()).normalize();
            let energy = |y: &[Vec3]| -> f64 {
                let mut e = 0.0;
                for i in 1..n - 1 {
                    let kb = curvature_binormal(&(y[i] - y[i - 1]), &(y[i + 1] - y[i]));
                    e += alpha * kb.norm_squared() / rest[i - 1];
                }
                let tw = big_theta - last_frame_rotation(&x, y, &u0);
                e + beta * tw * tw / (2.0 * lbar)
            };
            let mut force = vec![Vec3::zeros(); n];
            for i in 1..n - 1 {
                let (e0, e1) = (x[i] - x[i - 1], x[i + 1] - x[i]);
                let kb = curvature_binormal(&e0, &e1);
                let jac = curvature_binormal_jacobians(&e0, &e1);
                let hol = holonomy_gradient(&e0, &e1);
                for a in 0..3 {
                    force[i - 1 + a] += -(2.0 * alpha / rest[i - 1]) * jac[a].transpose() * kb
                        + (beta * big_theta / lbar) * hol[a];
                }
            }
            let mut dx = vec![Vec3::zeros(); n];
            for d in dx.iter_mut().take(n - 2).skip(2) {
                *d = r.v();
            }
            let analytic: f64 = force.iter().zip(&dx).map(|(f, d)| f.dot(d)).sum();
            let h = 1e-6;
            let moved =
                |s: f64| -> Vec<Vec3> { x.iter().zip(&dx).map(|(p, d)| p + d * s).collect() };
            let fd = -(energy(&moved(h)) - energy(&moved(-h))) / (2.0 * h);
            assert!(
                (fd - analytic).abs() <= 1e-6 * analytic.abs().max(1.0),
                "force: analytic {analytic} fd {fd}"
            );
        }
    }

    /// U4: the full Jacobians of κb against central finite differences, < 1e-8.
    #[test]
    fn curvature_binormal_jacobians_match_finite_differences() {
        let mut r = Rng(5);
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let x = [r.v(), r.v(), r.v()];
            if (x[1] - x[0]).angle(&(x[2] - x[1])) > 2.5 {
                continue;
            }
            let kb = |x: &[Vec3; 3]| curvature_binormal(&(x[1] - x[0]), &(x[2] - x[1]));
            let jac = curvature_binormal_jacobians(&(x[1] - x[0]), &(x[2] - x[1]));
            let h = 1e-6;
            for (k, jk) in jac.iter().enumerate() {
                for c in 0..3 {
                    let (mut xp, mut xm) = (x, x);
                    xp[k][c] += h;
                    xm[k][c] -= h;
                    let fd = (kb(&xp) - kb(&xm)) / (2.0 * h);
                    let err = (fd - jk.column(c)).norm() / (1.0 + fd.norm());
                    worst = worst.max(err);
                }
            }
        }
        assert!(worst < 1e-8, "worst relative error {worst:e}");
    }

    /// U2: P(t0) = t1, the binormal is kept, the Bishop frame is orthonormal, collinear edges
    /// transport by the identity.
    #[test]
    fn parallel_transport_and_bishop_frames() {
        let mut r = Rng(3);
        for _ in 0..500 {
            let (t0, t1, u) = (r.v().normalize(), r.v().normalize(), r.v());
            if t0.dot(&t1) < -0.99 {
                continue;
            }
            assert!((parallel_transport(&t0, &t0, &t1) - t1).norm() < 1e-12);
            let b = t0.cross(&t1);
            assert!((parallel_transport(&b, &t0, &t1) - b).norm() < 1e-12);
            // A rotation: lengths and angles kept.
            let pu = parallel_transport(&u, &t0, &t1);
            assert!((pu.norm() - u.norm()).abs() < 1e-12);
            assert!((pu.dot(&t1) - u.dot(&t0)).abs() < 1e-12);
            assert_eq!(parallel_transport(&u, &t0, &t0), u);
        }
        let x: Vec<Vec3> = (0..30).map(|_| r.v()).collect();
        let frames = bishop_frames(&x, &Vec3::new(0.3, 1.0, -0.2));
        for (t, u, v) in &frames {
            assert!((t.norm() - 1.0).abs() < 1e-12 && (u.norm() - 1.0).abs() < 1e-12);
            assert!(t.dot(u).abs() < 1e-12 && t.dot(v).abs() < 1e-12 && u.dot(v).abs() < 1e-12);
        }
        // Zero twist: each u is its predecessor transported.
        for w in frames.windows(2) {
            let pu = parallel_transport(&w[0].1, &w[0].0, &w[1].0);
            assert!((pu - w[1].1).norm() < 1e-10);
        }
        // Material curvature is κb seen in (m1, m2): its norm is |κb| for an edge frame.
        let (t0, t1) = (frames[0].0, frames[1].0);
        let kb = curvature_binormal(&t0, &t1);
        let (m1, m2) = material_directors(&frames[1].1, &frames[1].2, 0.7);
        let w = material_curvature(&kb, &m1, &m2);
        assert!(((w[0] * w[0] + w[1] * w[1]).sqrt() - kb.norm()).abs() < 1e-12);
    }

    /// U8 (stretching): gradient and Hessian against finite differences of the energy and of
    /// the gradient.
    #[test]
    fn stretch_gradient_and_hessian_match_finite_differences() {
        let mut r = Rng(9);
        for _ in 0..100 {
            let e = r.v();
            let rest = 0.5 + 0.5 * r.f().abs();
            let ks = 3.0;
            let (_, g, hess) = stretch(&e, rest, ks, false);
            let h = 1e-6;
            for c in 0..3 {
                let (mut ep, mut em) = (e, e);
                ep[c] += h;
                em[c] -= h;
                let fd =
                    (stretch(&ep, rest, ks, false).0 - stretch(&em, rest, ks, false).0) / (2.0 * h);
                assert!(
                    (fd - g[c]).abs() < 1e-8 * (1.0 + g.norm()),
                    "{fd} vs {}",
                    g[c]
                );
                let fdg =
                    (stretch(&ep, rest, ks, false).1 - stretch(&em, rest, ks, false).1) / (2.0 * h);
                assert!((fdg - hess.column(c)).norm() < 1e-7 * (1.0 + hess.norm()));
            }
            // The PSD variant is positive semi-definite.
            let (_, _, hp) = stretch(&e, rest, ks, true);
            assert!(hp.symmetric_eigenvalues().min() > -1e-12);
        }
    }

    /// A random curved polyline of `n + 2` vertices and its problem data.
    fn random_problem(r: &mut Rng, n: usize, isotropic: bool) -> TwistProblem {
        let mut x = vec![Vec3::zeros()];
        let mut dir = Vec3::new(1.0, 0.0, 0.0);
        for _ in 0..n + 1 {
            dir = (dir + 0.5 * r.v()).normalize();
            let last = *x.last().expect("non-empty");
            x.push(last + dir * (0.08 + 0.02 * r.f()));
        }
        let rest: Vec<Vec3> = x.iter().map(|p| p * 1.01).collect();
        let stiffness = (0..=n)
            .map(|_| {
                if isotropic {
                    [2.0, 0.0, 2.0]
                } else {
                    // Random SPD: a = 2 ± 1, c = 2 ± 1, |b| < 0.5.
                    [2.0 + r.f(), 0.5 * r.f(), 2.0 + r.f()]
                }
            })
            .collect();
        let rest_curvature = (0..n)
            .map(|_| {
                if isotropic {
                    [[0.0; 2]; 2]
                } else {
                    [[0.3 * r.f(), 0.3 * r.f()], [0.3 * r.f(), 0.3 * r.f()]]
                }
            })
            .collect();
        TwistProblem::new(&x, &r.v(), &rest, stiffness, rest_curvature, 1.3)
    }

    /// U6: the θ gradient (eq. 7) against finite differences of the energy, and the
    /// tridiagonal Hessian against finite differences of the gradient (every other entry 0).
    #[test]
    fn twist_gradient_and_tridiagonal_hessian_match_finite_differences() {
        let mut r = Rng(21);
        for _ in 0..20 {
            let p = random_problem(&mut r, 12, false);
            let theta: Vec<f64> = (0..13).map(|_| 2.0 * r.f()).collect();
            let (g, d, o) = p.derivatives(&theta);
            let h = 1e-6;
            for j in 0..theta.len() {
                let (mut tp, mut tm) = (theta.clone(), theta.clone());
                tp[j] += h;
                tm[j] -= h;
                let fd = (p.energy(&tp) - p.energy(&tm)) / (2.0 * h);
                assert!(
                    (fd - g[j]).abs() < 1e-6 * (1.0 + g[j].abs()),
                    "g[{j}] {fd} vs {}",
                    g[j]
                );
                let (gp, _, _) = p.derivatives(&tp);
                let (gm, _, _) = p.derivatives(&tm);
                for k in 0..theta.len() {
                    let fdh = (gp[k] - gm[k]) / (2.0 * h);
                    let want = if k == j {
                        d[j]
                    } else if k + 1 == j {
                        o[k]
                    } else if k == j + 1 {
                        o[j]
                    } else {
                        0.0
                    };
                    assert!(
                        (fdh - want).abs() < 1e-6 * (1.0 + want.abs()),
                        "H[{k},{j}] {fdh} vs {want}"
                    );
                }
            }
        }
    }

    /// U5: an isotropic, naturally straight rod clamped at both ends twists uniformly:
    /// m_i / l̄_i = (θ^n − θ^0) / (2 L̄) with 2 L̄ = Σ l̄_i (Bergou 2008 eq. 5), whatever its
    /// centerline; an anisotropic, curved rod's free angles end with zero gradient.
    #[test]
    fn quasistatic_twist_is_uniform_for_an_isotropic_clamped_rod() {
        let mut r = Rng(8);
        let p = random_problem(&mut r, 20, true);
        // 22 vertices, 21 edges: θ^0 … θ^20.
        let mut theta = vec![0.0; 21];
        theta[20] = 7.0; // more than a turn
        let it = p
            .solve(&mut theta, (true, true), 1e-10, 50)
            .expect("converges");
        let two_l: f64 = p.rest_length.iter().sum();
        for i in 1..=20 {
            let rate = (theta[i] - theta[i - 1]) / p.rest_length[i - 1];
            assert!(
                (rate - 7.0 / two_l).abs() < 1e-9,
                "{rate} vs {}",
                7.0 / two_l
            );
        }
        assert!(it <= 3, "{it} iterations for a quadratic problem");
        let q = random_problem(&mut r, 20, false);
        let mut theta = vec![0.0; 21];
        theta[20] = 3.0;
        q.solve(&mut theta, (true, false), 1e-10, 50)
            .expect("converges");
        let (g, _, _) = q.derivatives(&theta);
        assert!(g[1..].iter().all(|x| x.abs() < 1e-10));
        assert_eq!((theta[0], theta[20] != 3.0), (0.0, true));
    }
}
