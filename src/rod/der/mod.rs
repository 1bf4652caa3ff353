//! Discrete Elastic Rods (Bergou et al. 2008), the reference model of issue #8. So far: the
//! discrete geometry every DER energy is built on, with its derivatives checked against finite
//! differences (digest-der-imc.md D0, U1, U2, U4, and the stretching part of U8).
//!
//! Conventions (digest E1.5): edges `e^i = x_{i+1} − x_i`, tangents `t^i = e^i/|e^i|` live on
//! edges; `v = t × u` for the Bishop frame; `m1 = cos θ u + sin θ v`,
//! `m2 = −sin θ u + cos θ v`; material curvature `ω = (κb·m2, −κb·m1)`.

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
/// (extensible) form of digest A6 (the paper's form assumes inextensibility and is wrong off
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
}
