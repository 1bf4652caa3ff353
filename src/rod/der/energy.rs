//! Bending and twisting energy of one DER vertex with its gradient and Hessian, in the
//! implicit form of the IMC thesis (Choi 2021 §3.1, eq. 3.2) on time-parallel reference
//! frames: the material frame of edge j is `m1 = cos θ_j a1 + sin θ_j a2`,
//! `m2 = −sin θ_j a1 + cos θ_j a2` with the reference frame `(a1, a2)` carried from step to step
//! (and from Newton iterate to iterate) by parallel transport in time, and the discrete twist
//! carries the reference twist (digest-der-imc A2, E1.7).
//!
//! Vertex i joins edges `e = x_i − x_{i−1}` and `f = x_{i+1} − x_i`. Its unknowns, in the
//! interleaved order of the Newton system, are `[x_{i−1}, θ_e, x_i, θ_f, x_{i+1}]` (11).
//!
//! - Curvature (Bergou 2010 averaged form, IMC eq. 3.2): `κb = 2 t_e × t_f / χ`,
//!   `χ = 1 + t_e·t_f`, `κ1 = ½ κb·(m2e + m2f)`, `κ2 = −½ κb·(m1e + m1f)`.
//! - Twist: `τ = θ_f − θ_e + m_ref` (m_ref the reference twist).
//! - Energy: `E = ½ Σ_k B_k (κ_k − κ̄_k)² / L + ½ GJ (τ − τ̄)² / L`, `L = (|ē| + |f̄|)/2`
//!   (IMC eq. 3.2 with the anisotropic stiffness of DER eq. 3 in the principal axes).
//!
//! The derivatives of κ and τ are those of the discrete-rods literature (Bergou et al. 2010
//! "Discrete viscous threads"; Jawed, Novelia & O'Reilly 2018, the primer IMC cites for its
//! Hessians), written out below with `t̃ = (t_e + t_f)/χ`, `d̃1 = (m1e + m1f)/χ`,
//! `d̃2 = (m2e + m2f)/χ`. They are exact derivatives of the energy with the reference frames
//! transported from the point of evaluation: `tests` checks them against finite differences
//! of that energy (digest U8).

use crate::math::{Mat3, Vec3, skew};
use nalgebra::{SMatrix, SVector};

/// Gradient over a vertex's 11 unknowns.
pub type Grad11 = SVector<f64, 11>;
/// Hessian over a vertex's 11 unknowns.
pub type Hess11 = SMatrix<f64, 11, 11>;

/// Material directors of the two edges of a vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgePair {
    /// `m1` of edge e (before the vertex).
    pub m1e: Vec3,
    /// `m2` of edge e.
    pub m2e: Vec3,
    /// `m1` of edge f (after the vertex).
    pub m1f: Vec3,
    /// `m2` of edge f.
    pub m2f: Vec3,
}

/// The elastic constants of one vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexStiffness {
    /// Bending stiffness for κ1 and κ2 (`E I` about the material axes) [N m²].
    pub bend: [f64; 2],
    /// Twisting stiffness `G J` [N m²].
    pub twist: f64,
    /// Rest material curvature (κ̄1, κ̄2), integrated [-].
    pub rest_curvature: [f64; 2],
    /// Rest twist τ̄, integrated [rad].
    pub rest_twist: f64,
    /// Voronoi length `L = (|ē| + |f̄|)/2` [m].
    pub voronoi: f64,
}

/// Integrated material curvature (κ1, κ2) of a vertex (IMC eq. 3.2, Bergou 2010 averaged
/// directors).
pub fn curvature(e: &Vec3, f: &Vec3, m: &EdgePair) -> [f64; 2] {
    let (te, tf) = (e.normalize(), f.normalize());
    let chi = (1.0 + te.dot(&tf)).max(f64::MIN_POSITIVE);
    let kb = 2.0 * te.cross(&tf) / chi;
    [
        0.5 * kb.dot(&(m.m2e + m.m2f)),
        -0.5 * kb.dot(&(m.m1e + m.m1f)),
    ]
}

/// Local index of the unknowns of the edge-space variables: e at x_{i−1} (−) and x_i (+),
/// f at x_i (−) and x_{i+1} (+).
const XE0: usize = 0;
const TE: usize = 3;
const XI: usize = 4;
const TF: usize = 7;
const XF1: usize = 8;

/// Energy of a vertex (bending + twisting) [J], its gradient over the 11 unknowns and (with
/// `hessian`) its Hessian. `tau` is the integrated twist `θ_f − θ_e + m_ref` [rad].
pub fn bend_twist(
    e: &Vec3,
    f: &Vec3,
    m: &EdgePair,
    tau: f64,
    k: &VertexStiffness,
    hessian: bool,
) -> (f64, Grad11, Hess11) {
    let (ne, nf) = (e.norm(), f.norm());
    let (te, tf) = (e / ne, f / nf);
    let chi = (1.0 + te.dot(&tf)).max(f64::MIN_POSITIVE);
    let kb = 2.0 * te.cross(&tf) / chi;
    let tt = (te + tf) / chi;
    let d1 = (m.m1e + m.m1f) / chi;
    let d2 = (m.m2e + m.m2f) / chi;
    let k1 = 0.5 * kb.dot(&(m.m2e + m.m2f));
    let k2 = -0.5 * kb.dot(&(m.m1e + m.m1f));
    let inv_l = 1.0 / k.voronoi;
    let dk = [k1 - k.rest_curvature[0], k2 - k.rest_curvature[1]];
    let dt = tau - k.rest_twist;
    let energy = 0.5 * inv_l * (k.bend[0] * dk[0] * dk[0] + k.bend[1] * dk[1] * dk[1])
        + 0.5 * inv_l * k.twist * dt * dt;

    // First derivatives in edge space: (∂/∂e, ∂/∂θe, ∂/∂θf, ∂/∂f).
    let dk1_de = (-k1 * tt + tf.cross(&d2)) / ne;
    let dk1_df = (-k1 * tt - te.cross(&d2)) / nf;
    let dk2_de = (-k2 * tt - tf.cross(&d1)) / ne;
    let dk2_df = (-k2 * tt + te.cross(&d1)) / nf;
    let dk1_dthe = -0.5 * kb.dot(&m.m1e);
    let dk1_dthf = -0.5 * kb.dot(&m.m1f);
    let dk2_dthe = -0.5 * kb.dot(&m.m2e);
    let dk2_dthf = -0.5 * kb.dot(&m.m2f);
    // Reference twist: ∂m_ref/∂e = κb/(2|e|), ∂m_ref/∂f = κb/(2|f|) (the holonomy of DER
    // eq. 9 in edge variables).
    let dtau_de = kb / (2.0 * ne);
    let dtau_df = kb / (2.0 * nf);

    // Gradients over the 11 unknowns.
    let scatter = |de: &Vec3, dthe: f64, dthf: f64, df: &Vec3| -> Grad11 {
        let mut g = Grad11::zeros();
        for a in 0..3 {
            g[XE0 + a] = -de[a];
            g[XI + a] = de[a] - df[a];
            g[XF1 + a] = df[a];
        }
        g[TE] = dthe;
        g[TF] = dthf;
        g
    };
    let gk1 = scatter(&dk1_de, dk1_dthe, dk1_dthf, &dk1_df);
    let gk2 = scatter(&dk2_de, dk2_dthe, dk2_dthf, &dk2_df);
    let gtau = scatter(&dtau_de, -1.0, 1.0, &dtau_df);
    let c1 = inv_l * k.bend[0] * dk[0];
    let c2 = inv_l * k.bend[1] * dk[1];
    let ct = inv_l * k.twist * dt;
    let grad = gk1 * c1 + gk2 * c2 + gtau * ct;
    if !hessian {
        return (energy, grad, Hess11::zeros());
    }

    // Gauss–Newton part.
    let mut h = (gk1 * gk1.transpose()) * (inv_l * k.bend[0])
        + (gk2 * gk2.transpose()) * (inv_l * k.bend[1])
        + (gtau * gtau.transpose()) * (inv_l * k.twist);

    // Second derivatives of κ1, κ2 and τ in edge space, then mapped to the 11 unknowns.
    let id = Mat3::identity();
    let (ne2, nf2, nef) = (ne * ne, nf * nf, ne * nf);
    let ttt = tt * tt.transpose();
    let ete = id - te * te.transpose();
    let ftf = id - tf * tf.transpose();
    let etf = id + te * tf.transpose();
    // κ1
    let a = tf.cross(&d2);
    let b = te.cross(&d2);
    let k1_ee = (2.0 * k1 * ttt - a * tt.transpose() - tt * a.transpose()) / ne2
        - k1 / (chi * ne2) * ete
        + (kb * m.m2e.transpose() + m.m2e * kb.transpose()) / (4.0 * ne2);
    let k1_ff = (2.0 * k1 * ttt + b * tt.transpose() + tt * b.transpose()) / nf2
        - k1 / (chi * nf2) * ftf
        + (kb * m.m2f.transpose() + m.m2f * kb.transpose()) / (4.0 * nf2);
    let k1_ef = -k1 / (chi * nef) * etf
        + (2.0 * k1 * ttt - a * tt.transpose() + tt * b.transpose() - skew(&d2)) / nef;
    // κ2
    let a = tf.cross(&d1);
    let b = te.cross(&d1);
    let k2_ee = (2.0 * k2 * ttt + a * tt.transpose() + tt * a.transpose()) / ne2
        - k2 / (chi * ne2) * ete
        - (kb * m.m1e.transpose() + m.m1e * kb.transpose()) / (4.0 * ne2);
    let k2_ff = (2.0 * k2 * ttt - b * tt.transpose() - tt * b.transpose()) / nf2
        - k2 / (chi * nf2) * ftf
        - (kb * m.m1f.transpose() + m.m1f * kb.transpose()) / (4.0 * nf2);
    let k2_ef = -k2 / (chi * nef) * etf
        + (2.0 * k2 * ttt + a * tt.transpose() - tt * b.transpose() + skew(&d1)) / nef;
    // Mixed position–angle terms.
    let k1_e_the = (0.5 * kb.dot(&m.m1e) * tt - tf.cross(&m.m1e) / chi) / ne;
    let k1_e_thf = (0.5 * kb.dot(&m.m1f) * tt - tf.cross(&m.m1f) / chi) / ne;
    let k1_f_the = (0.5 * kb.dot(&m.m1e) * tt + te.cross(&m.m1e) / chi) / nf;
    let k1_f_thf = (0.5 * kb.dot(&m.m1f) * tt + te.cross(&m.m1f) / chi) / nf;
    let k2_e_the = (0.5 * kb.dot(&m.m2e) * tt - tf.cross(&m.m2e) / chi) / ne;
    let k2_e_thf = (0.5 * kb.dot(&m.m2f) * tt - tf.cross(&m.m2f) / chi) / ne;
    let k2_f_the = (0.5 * kb.dot(&m.m2e) * tt + te.cross(&m.m2e) / chi) / nf;
    let k2_f_thf = (0.5 * kb.dot(&m.m2f) * tt + te.cross(&m.m2f) / chi) / nf;
    // Angle–angle terms.
    let k1_the2 = -0.5 * kb.dot(&m.m2e);
    let k1_thf2 = -0.5 * kb.dot(&m.m2f);
    let k2_the2 = 0.5 * kb.dot(&m.m1e);
    let k2_thf2 = 0.5 * kb.dot(&m.m1f);
    // τ (reference twist; θ enters linearly).
    let te_tt = te + tt;
    let tf_tt = tf + tt;
    let tau_ee = -(kb * te_tt.transpose() + te_tt * kb.transpose()) / (4.0 * ne2);
    let tau_ff = -(kb * tf_tt.transpose() + tf_tt * kb.transpose()) / (4.0 * nf2);
    let tau_ef = (2.0 / chi * skew(&te) - kb * tt.transpose()) / (2.0 * nef);

    let mut add = |w: f64, ee: &Mat3, ff: &Mat3, ef: &Mat3, mixed: [&Vec3; 4], angles: [f64; 2]| {
        // Edge-space blocks to node blocks: e = x_i − x_{i−1}, f = x_{i+1} − x_i.
        // Position blocks (rows, cols) with signs from ∂e/∂x and ∂f/∂x.
        let fe = ef.transpose();
        let blocks: [(usize, usize, Mat3); 9] = [
            (XE0, XE0, *ee),
            (XE0, XI, -ee + ef),
            (XE0, XF1, -ef),
            (XI, XE0, -ee + fe),
            (XI, XI, ee - ef - fe + ff),
            (XI, XF1, ef - ff),
            (XF1, XE0, -fe),
            (XF1, XI, fe - ff),
            (XF1, XF1, *ff),
        ];
        for (r, c, mm) in blocks {
            let mut v = h.fixed_view_mut::<3, 3>(r, c);
            v += mm * w;
        }
        // Position–angle: mixed = [∂e∂θe, ∂e∂θf, ∂f∂θe, ∂f∂θf].
        for (th, de, df) in [(TE, mixed[0], mixed[2]), (TF, mixed[1], mixed[3])] {
            for a in 0..3 {
                let xe0 = -de[a] * w;
                let xi = (de[a] - df[a]) * w;
                let xf1 = df[a] * w;
                h[(XE0 + a, th)] += xe0;
                h[(th, XE0 + a)] += xe0;
                h[(XI + a, th)] += xi;
                h[(th, XI + a)] += xi;
                h[(XF1 + a, th)] += xf1;
                h[(th, XF1 + a)] += xf1;
            }
        }
        h[(TE, TE)] += angles[0] * w;
        h[(TF, TF)] += angles[1] * w;
    };
    add(
        c1,
        &k1_ee,
        &k1_ff,
        &k1_ef,
        [&k1_e_the, &k1_e_thf, &k1_f_the, &k1_f_thf],
        [k1_the2, k1_thf2],
    );
    add(
        c2,
        &k2_ee,
        &k2_ff,
        &k2_ef,
        [&k2_e_the, &k2_e_thf, &k2_f_the, &k2_f_thf],
        [k2_the2, k2_thf2],
    );
    let z = Vec3::zeros();
    add(ct, &tau_ee, &tau_ff, &tau_ef, [&z, &z, &z, &z], [0.0, 0.0]);
    (energy, grad, h)
}

/// Signed angle from `a` to `b` about the unit axis `t` (both perpendicular to `t`) [rad].
pub fn signed_angle(a: &Vec3, b: &Vec3, t: &Vec3) -> f64 {
    a.cross(b).dot(t).atan2(a.dot(b))
}

/// `angle + 2πk` closest to `near`: keeps a cumulative angle (twist, θ) continuous (digest
/// E1.3: never reduce a twist modulo 2π).
pub fn unwrap_near(angle: f64, near: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    angle + tau * ((near - angle) / tau).round()
}

/// Reference twist of a vertex (Bergou 2010): the signed angle about `t_f` from the edge-e
/// reference director `a1e`, parallel-transported in space to edge f, to `a1f`; unwrapped next
/// to `previous` [rad].
pub fn reference_twist(a1e: &Vec3, te: &Vec3, a1f: &Vec3, tf: &Vec3, previous: f64) -> f64 {
    let p = super::parallel_transport(a1e, te, tf);
    unwrap_near(signed_angle(&p, a1f, tf), previous)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rod::der::parallel_transport;

    /// A deterministic pseudo-random generator for test data.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
        fn vec(&mut self) -> Vec3 {
            Vec3::new(self.next(), self.next(), self.next())
        }
    }

    /// A vertex at a base state: three nodes, two reference frames, θ and the reference twist.
    struct Base {
        x: [Vec3; 3],
        a1: [Vec3; 2],
        theta: [f64; 2],
        mref: f64,
        k: VertexStiffness,
    }

    impl Base {
        fn random(rng: &mut Lcg) -> Base {
            let x0 = rng.vec() * 0.01;
            let x1 = x0 + Vec3::new(1.0, 0.0, 0.0) * 0.01 + rng.vec() * 0.004;
            let x2 = x1 + Vec3::new(0.7, 0.7, 0.0) * 0.012 + rng.vec() * 0.004;
            let x = [x0, x1, x2];
            let mut a1 = [Vec3::zeros(); 2];
            for j in 0..2 {
                let t = (x[j + 1] - x[j]).normalize();
                let r = rng.vec();
                a1[j] = (r - t * t.dot(&r)).normalize();
            }
            let te = (x[1] - x[0]).normalize();
            let tf = (x[2] - x[1]).normalize();
            let mref = reference_twist(&a1[0], &te, &a1[1], &tf, 0.0);
            Base {
                x,
                a1,
                theta: [rng.next(), rng.next()],
                mref,
                k: VertexStiffness {
                    bend: [1.3e-3, 0.7e-3],
                    twist: 0.9e-3,
                    rest_curvature: [0.2 * rng.next(), 0.2 * rng.next()],
                    rest_twist: 0.3 * rng.next(),
                    voronoi: 0.011,
                },
            }
        }

        /// Energy at unknowns `q` (11), with the reference frames transported in time from the
        /// base tangents to the new ones (what a Newton iterate sees).
        fn energy(&self, q: &Grad11) -> f64 {
            let x = [
                Vec3::new(q[0], q[1], q[2]),
                Vec3::new(q[4], q[5], q[6]),
                Vec3::new(q[8], q[9], q[10]),
            ];
            let (th_e, th_f) = (q[3], q[7]);
            let mut t = [Vec3::zeros(); 2];
            let mut a1 = [Vec3::zeros(); 2];
            let mut m = [(Vec3::zeros(), Vec3::zeros()); 2];
            for j in 0..2 {
                let t0 = (self.x[j + 1] - self.x[j]).normalize();
                t[j] = (x[j + 1] - x[j]).normalize();
                a1[j] = parallel_transport(&self.a1[j], &t0, &t[j]);
                let a2 = t[j].cross(&a1[j]);
                let th = if j == 0 { th_e } else { th_f };
                m[j] = (
                    th.cos() * a1[j] + th.sin() * a2,
                    -th.sin() * a1[j] + th.cos() * a2,
                );
            }
            let mref = reference_twist(&a1[0], &t[0], &a1[1], &t[1], self.mref);
            let pair = EdgePair {
                m1e: m[0].0,
                m2e: m[0].1,
                m1f: m[1].0,
                m2f: m[1].1,
            };
            let e = x[1] - x[0];
            let f = x[2] - x[1];
            bend_twist(&e, &f, &pair, th_f - th_e + mref, &self.k, false).0
        }

        fn q(&self) -> Grad11 {
            let mut q = Grad11::zeros();
            for a in 0..3 {
                q[a] = self.x[0][a];
                q[4 + a] = self.x[1][a];
                q[8 + a] = self.x[2][a];
            }
            q[3] = self.theta[0];
            q[7] = self.theta[1];
            q
        }

        fn analytic(&self) -> (f64, Grad11, Hess11) {
            let mut m = [(Vec3::zeros(), Vec3::zeros()); 2];
            #[allow(clippy::needless_range_loop)] // j indexes x, a1, θ and m together
            for j in 0..2 {
                let t = (self.x[j + 1] - self.x[j]).normalize();
                let a2 = t.cross(&self.a1[j]);
                let th = self.theta[j];
                m[j] = (
                    th.cos() * self.a1[j] + th.sin() * a2,
                    -th.sin() * self.a1[j] + th.cos() * a2,
                );
            }
            let pair = EdgePair {
                m1e: m[0].0,
                m2e: m[0].1,
                m1f: m[1].0,
                m2f: m[1].1,
            };
            let e = self.x[1] - self.x[0];
            let f = self.x[2] - self.x[1];
            let tau = self.theta[1] - self.theta[0] + self.mref;
            bend_twist(&e, &f, &pair, tau, &self.k, true)
        }
    }

    /// Step of a unknown: 1e-6 m for positions, 1e-4 rad for angles (relative ~1e-4).
    fn step(a: usize) -> f64 {
        if a == TE || a == TF { 1e-4 } else { 1e-6 }
    }

    #[test]
    fn bend_twist_gradient_matches_finite_differences() {
        // Digest U8 (bending and twisting): the analytic gradient against central differences
        // of the energy with time-transported reference frames, on 20 random bent, twisted
        // vertices with natural curvature and twist and anisotropic stiffness.
        let mut rng = Lcg(7);
        for _ in 0..20 {
            let b = Base::random(&mut rng);
            let (e0, g, _) = b.analytic();
            assert!((e0 - b.energy(&b.q())).abs() <= 1e-14 * e0.abs().max(1e-12));
            let q = b.q();
            let scale = g.amax();
            for a in 0..11 {
                let hs = step(a);
                let (mut qp, mut qm) = (q, q);
                qp[a] += hs;
                qm[a] -= hs;
                let fd = (b.energy(&qp) - b.energy(&qm)) / (2.0 * hs);
                assert!(
                    (fd - g[a]).abs() <= 1e-6 * scale,
                    "∂E/∂q[{a}]: analytic {} fd {fd}",
                    g[a]
                );
            }
        }
    }

    #[test]
    fn bend_twist_hessian_matches_finite_differences() {
        // Digest U8: the analytic Hessian against second central differences of the energy
        // (the Hessian of the function the Newton line search sees: frames transported from
        // the iterate), relative to the Hessian's largest entry.
        let mut rng = Lcg(11);
        for _ in 0..20 {
            let b = Base::random(&mut rng);
            let (_, _, h) = b.analytic();
            let q = b.q();
            let scale = h.amax();
            assert!((h - h.transpose()).amax() <= 1e-12 * scale, "not symmetric");
            for i in 0..11 {
                for j in 0..11 {
                    let (si, sj) = (step(i) * 3.0, step(j) * 3.0);
                    let at = |di: f64, dj: f64| {
                        let mut p = q;
                        p[i] += di;
                        p[j] += dj;
                        b.energy(&p)
                    };
                    let fd =
                        (at(si, sj) - at(si, -sj) - at(-si, sj) + at(-si, -sj)) / (4.0 * si * sj);
                    assert!(
                        (fd - h[(i, j)]).abs() <= 1e-6 * scale,
                        "H[{i},{j}]: analytic {} fd {fd} (scale {scale})",
                        h[(i, j)]
                    );
                }
            }
        }
    }
}
