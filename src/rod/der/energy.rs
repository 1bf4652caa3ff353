//! Bending and twisting energy of one DER vertex with its gradient and Hessian, in the
//! implicit form of the IMC thesis (Choi 2021 §3.1, eq. 3.2) on time-parallel reference
//! frames: the material frame of edge j is `m1 = cos θ_j a1 + sin θ_j a2`,
//! `m2 = −sin θ_j a1 + cos θ_j a2` with the reference frame `(a1, a2)` carried from step to step
//! (and from Newton iterate to iterate) by parallel transport in time, and the discrete twist
//! carries the reference twist (docs/derivations/der-imc.md §A2, E1.7).
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
//! of that energy (docs/derivations/der-imc.md §D0 U8).

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

/// Which discrete bending strain a vertex uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CurvatureForm {
    /// Bergou 2008 eq. 3: one material curvature per adjacent edge, `ω^j = (κb·m2^j,
    /// −κb·m1^j)`, their energies averaged. Isotropic bending does not depend on θ, so any
    /// twist per vertex is represented exactly (DER's helical buckling, 27 turns on 75
    /// vertices, needs this).
    #[default]
    PerEdge,
    /// Bergou 2010 / IMC eq. 3.2: one curvature from the averaged directors,
    /// `κ = ½(ω^e + ω^f)`. Its isotropic bending stiffness falls as `cos²(Δθ/2)` with the
    /// twist Δθ between the two edges, so it needs small twist per vertex.
    Averaged,
}

/// The elastic constants of one vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexStiffness {
    /// Bending stiffness for κ1 and κ2 (`E I` about the material axes) [N m²].
    pub bend: [f64; 2],
    /// Twisting stiffness `G J` [N m²].
    pub twist: f64,
    /// Rest material curvatures (ω̄^e, ω̄^f), integrated [-] (the averaged form uses their
    /// mean).
    pub rest_curvature: [[f64; 2]; 2],
    /// Rest twist τ̄, integrated [rad].
    pub rest_twist: f64,
    /// Voronoi length `L = (|ē| + |f̄|)/2` [m].
    pub voronoi: f64,
    /// Discrete bending strain.
    pub form: CurvatureForm,
}

/// Integrated material curvature (κ1, κ2) of a vertex from the averaged directors (IMC
/// eq. 3.2, Bergou 2010).
pub fn curvature(e: &Vec3, f: &Vec3, m: &EdgePair) -> [f64; 2] {
    let w = edge_curvatures(e, f, m);
    [0.5 * (w[0][0] + w[1][0]), 0.5 * (w[0][1] + w[1][1])]
}

/// The material curvatures of a vertex in the frames of its two edges (Bergou 2008 eq. 2):
/// `ω^j = (κb·m2^j, −κb·m1^j)` for j = e, f.
pub fn edge_curvatures(e: &Vec3, f: &Vec3, m: &EdgePair) -> [[f64; 2]; 2] {
    let (te, tf) = (e.normalize(), f.normalize());
    let chi = (1.0 + te.dot(&tf)).max(f64::MIN_POSITIVE);
    let kb = 2.0 * te.cross(&tf) / chi;
    [
        [kb.dot(&m.m2e), -kb.dot(&m.m1e)],
        [kb.dot(&m.m2f), -kb.dot(&m.m1f)],
    ]
}

/// Local index of the unknowns of the edge-space variables: e at x_{i−1} (−) and x_i (+),
/// f at x_i (−) and x_{i+1} (+).
const XE0: usize = 0;
const TE: usize = 3;
const XI: usize = 4;
const TF: usize = 7;
const XF1: usize = 8;

/// The geometry of a vertex shared by its strains.
struct Geometry {
    ne: f64,
    nf: f64,
    te: Vec3,
    tf: Vec3,
    chi: f64,
    kb: Vec3,
    tt: Vec3,
}

impl Geometry {
    fn new(e: &Vec3, f: &Vec3) -> Geometry {
        let (ne, nf) = (e.norm(), f.norm());
        let (te, tf) = (e / ne, f / nf);
        let chi = (1.0 + te.dot(&tf)).max(f64::MIN_POSITIVE);
        Geometry {
            ne,
            nf,
            te,
            tf,
            chi,
            kb: 2.0 * te.cross(&tf) / chi,
            tt: (te + tf) / chi,
        }
    }
}

/// Gradient over the 11 unknowns from edge-space derivatives (∂/∂e, ∂/∂θe, ∂/∂θf, ∂/∂f):
/// `e = x_i − x_{i−1}`, `f = x_{i+1} − x_i`.
fn scatter(de: &Vec3, dthe: f64, dthf: f64, df: &Vec3) -> Grad11 {
    let mut g = Grad11::zeros();
    for a in 0..3 {
        g[XE0 + a] = -de[a];
        g[XI + a] = de[a] - df[a];
        g[XF1 + a] = df[a];
    }
    g[TE] = dthe;
    g[TF] = dthf;
    g
}

/// Add `w` × an edge-space Hessian (blocks ee, ff, ef; position–angle vectors
/// `[∂e∂θe, ∂e∂θf, ∂f∂θe, ∂f∂θf]`; angle diagonals) to `h` over the 11 unknowns.
fn scatter_hessian(
    h: &mut Hess11,
    w: f64,
    ee: &Mat3,
    ff: &Mat3,
    ef: &Mat3,
    mixed: [&Vec3; 4],
    angles: [f64; 2],
) {
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
}

/// The averaged curvature `κ = (½κb·(m2e + m2f), −½κb·(m1e + m1f))` with its gradients and
/// (with `hessian`) Hessians over the 11 unknowns (Bergou 2010; Jawed et al. 2018). Every
/// expression is linear in the directors, and `m^e` depends on e and θe only, so the same
/// formulas with one edge's directors set to zero give half of that edge's own curvature
/// ω^j (see [`bend_twist`]).
fn curvature_derivatives(
    g: &Geometry,
    m: &EdgePair,
    hessian: bool,
) -> ([f64; 2], [Grad11; 2], [Hess11; 2]) {
    let Geometry {
        ne,
        nf,
        te,
        tf,
        chi,
        kb,
        tt,
    } = *g;
    let d1 = (m.m1e + m.m1f) / chi;
    let d2 = (m.m2e + m.m2f) / chi;
    let k1 = 0.5 * kb.dot(&(m.m2e + m.m2f));
    let k2 = -0.5 * kb.dot(&(m.m1e + m.m1f));
    // First derivatives in edge space.
    let dk1_de = (-k1 * tt + tf.cross(&d2)) / ne;
    let dk1_df = (-k1 * tt - te.cross(&d2)) / nf;
    let dk2_de = (-k2 * tt - tf.cross(&d1)) / ne;
    let dk2_df = (-k2 * tt + te.cross(&d1)) / nf;
    let gk1 = scatter(
        &dk1_de,
        -0.5 * kb.dot(&m.m1e),
        -0.5 * kb.dot(&m.m1f),
        &dk1_df,
    );
    let gk2 = scatter(
        &dk2_de,
        -0.5 * kb.dot(&m.m2e),
        -0.5 * kb.dot(&m.m2f),
        &dk2_df,
    );
    let (mut hk1, mut hk2) = (Hess11::zeros(), Hess11::zeros());
    if !hessian {
        return ([k1, k2], [gk1, gk2], [hk1, hk2]);
    }
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
    // Position–angle terms.
    let mixed = |v: &Vec3| {
        [
            (0.5 * kb.dot(v) * tt - tf.cross(v) / chi) / ne,
            (0.5 * kb.dot(v) * tt + te.cross(v) / chi) / nf,
        ]
    };
    let [k1_e_the, k1_f_the] = mixed(&m.m1e);
    let [k1_e_thf, k1_f_thf] = mixed(&m.m1f);
    let [k2_e_the, k2_f_the] = mixed(&m.m2e);
    let [k2_e_thf, k2_f_thf] = mixed(&m.m2f);
    scatter_hessian(
        &mut hk1,
        1.0,
        &k1_ee,
        &k1_ff,
        &k1_ef,
        [&k1_e_the, &k1_e_thf, &k1_f_the, &k1_f_thf],
        [-0.5 * kb.dot(&m.m2e), -0.5 * kb.dot(&m.m2f)],
    );
    scatter_hessian(
        &mut hk2,
        1.0,
        &k2_ee,
        &k2_ff,
        &k2_ef,
        [&k2_e_the, &k2_e_thf, &k2_f_the, &k2_f_thf],
        [0.5 * kb.dot(&m.m1e), 0.5 * kb.dot(&m.m1f)],
    );
    ([k1, k2], [gk1, gk2], [hk1, hk2])
}

/// The strains of a vertex and their gradients over its 11 unknowns, for the sag-free
/// optimiser (Takahashi & Batty 2025 §2.3 needs only these, at a fixed configuration): the
/// per-edge curvatures `ω = (ω^e_1, ω^e_2, ω^f_1, ω^f_2)` with their gradients, and the gradient
/// of the twist τ (its value is `θ_f − θ_e + m_ref`, known to the caller).
pub fn strain_gradients(e: &Vec3, f: &Vec3, m: &EdgePair) -> ([f64; 4], [Grad11; 4], Grad11) {
    let g = Geometry::new(e, f);
    let z = Vec3::zeros();
    let only_e = EdgePair {
        m1e: m.m1e,
        m2e: m.m2e,
        m1f: z,
        m2f: z,
    };
    let only_f = EdgePair {
        m1e: z,
        m2e: z,
        m1f: m.m1f,
        m2f: m.m2f,
    };
    let (ke, ge, _) = curvature_derivatives(&g, &only_e, false);
    let (kf, gf, _) = curvature_derivatives(&g, &only_f, false);
    let gtau = scatter(&(g.kb / (2.0 * g.ne)), -1.0, 1.0, &(g.kb / (2.0 * g.nf)));
    (
        [2.0 * ke[0], 2.0 * ke[1], 2.0 * kf[0], 2.0 * kf[1]],
        [ge[0] * 2.0, ge[1] * 2.0, gf[0] * 2.0, gf[1] * 2.0],
        gtau,
    )
}

/// Energy of a vertex (bending + twisting) [J], its gradient over the 11 unknowns and (with
/// `hessian`) its Hessian. `tau` is the integrated twist `θ_f − θ_e + m_ref` [rad].
///
/// Bending (`k.form`): per edge (Bergou 2008 eq. 3), `E_b = (1/(4L)) Σ_j Σ_k B_k (ω^j_k −
/// ω̄^j_k)²`; averaged (IMC eq. 3.2), `E_b = (1/(2L)) Σ_k B_k (κ_k − κ̄_k)²`. Twisting,
/// `E_t = GJ (τ − τ̄)²/(2L)` (IMC eq. 3.2; DER eq. 4 with l̄ = 2L).
pub fn bend_twist(
    e: &Vec3,
    f: &Vec3,
    m: &EdgePair,
    tau: f64,
    k: &VertexStiffness,
    hessian: bool,
) -> (f64, Grad11, Hess11) {
    let g = Geometry::new(e, f);
    let inv_l = 1.0 / k.voronoi;
    let mut energy = 0.0;
    let mut grad = Grad11::zeros();
    let mut h = Hess11::zeros();
    // (curvature set, its rest value, weight of its energy ½ w B (κ − κ̄)²/L)
    let mut add_bending =
        |kappa: [f64; 2], gk: [Grad11; 2], hk: [Hess11; 2], rest: [f64; 2], w: f64| {
            for c in 0..2 {
                let d = kappa[c] - rest[c];
                let b = w * inv_l * k.bend[c];
                energy += 0.5 * b * d * d;
                grad += gk[c] * (b * d);
                if hessian {
                    h += (gk[c] * gk[c].transpose()) * b + hk[c] * (b * d);
                }
            }
        };
    match k.form {
        CurvatureForm::Averaged => {
            let (kappa, gk, hk) = curvature_derivatives(&g, m, hessian);
            let r = k.rest_curvature;
            let rest = [0.5 * (r[0][0] + r[1][0]), 0.5 * (r[0][1] + r[1][1])];
            add_bending(kappa, gk, hk, rest, 1.0);
        }
        CurvatureForm::PerEdge => {
            let z = Vec3::zeros();
            let only_e = EdgePair {
                m1e: m.m1e,
                m2e: m.m2e,
                m1f: z,
                m2f: z,
            };
            let only_f = EdgePair {
                m1e: z,
                m2e: z,
                m1f: m.m1f,
                m2f: m.m2f,
            };
            for (j, pair) in [only_e, only_f].iter().enumerate() {
                // ω^j = 2 × the averaged formulas with the other edge's directors zeroed.
                let (kappa, gk, hk) = curvature_derivatives(&g, pair, hessian);
                add_bending(
                    [2.0 * kappa[0], 2.0 * kappa[1]],
                    [gk[0] * 2.0, gk[1] * 2.0],
                    [hk[0] * 2.0, hk[1] * 2.0],
                    k.rest_curvature[j],
                    0.5,
                );
            }
        }
    }
    // Twist: ∂m_ref/∂e = κb/(2|e|), ∂m_ref/∂f = κb/(2|f|) (the holonomy of DER eq. 9 in edge
    // variables); θ enters linearly.
    let Geometry {
        ne,
        nf,
        te,
        tf,
        chi,
        kb,
        tt,
    } = g;
    let dt = tau - k.rest_twist;
    let ct = inv_l * k.twist;
    let gtau = scatter(&(kb / (2.0 * ne)), -1.0, 1.0, &(kb / (2.0 * nf)));
    energy += 0.5 * ct * dt * dt;
    grad += gtau * (ct * dt);
    if hessian {
        let _ = tf;
        let te_tt = te + tt;
        let tf_tt = g.tf + tt;
        let tau_ee = -(kb * te_tt.transpose() + te_tt * kb.transpose()) / (4.0 * ne * ne);
        let tau_ff = -(kb * tf_tt.transpose() + tf_tt * kb.transpose()) / (4.0 * nf * nf);
        let tau_ef = (2.0 / chi * skew(&te) - kb * tt.transpose()) / (2.0 * ne * nf);
        h += (gtau * gtau.transpose()) * ct;
        let z = Vec3::zeros();
        scatter_hessian(
            &mut h,
            ct * dt,
            &tau_ee,
            &tau_ff,
            &tau_ef,
            [&z, &z, &z, &z],
            [0.0, 0.0],
        );
    }
    (energy, grad, h)
}

/// Signed angle from `a` to `b` about the unit axis `t` (both perpendicular to `t`) [rad].
pub fn signed_angle(a: &Vec3, b: &Vec3, t: &Vec3) -> f64 {
    a.cross(b).dot(t).atan2(a.dot(b))
}

/// `angle + 2πk` closest to `near`: keeps a cumulative angle (twist, θ) continuous
/// (docs/derivations/der-imc.md §E1.3: never reduce a twist modulo 2π).
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
                    rest_curvature: [
                        [0.2 * rng.next(), 0.2 * rng.next()],
                        [0.2 * rng.next(), 0.2 * rng.next()],
                    ],
                    rest_twist: 0.3 * rng.next(),
                    voronoi: 0.011,
                    form: CurvatureForm::PerEdge,
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
        // of the energy with time-transported reference frames, on 40 random bent, twisted
        // vertices with natural curvature and twist and anisotropic stiffness, half of them
        // with the per-edge curvature (DER 2008), half with the averaged one (IMC).
        let mut rng = Lcg(7);
        for k in 0..40 {
            let mut b = Base::random(&mut rng);
            if k % 2 == 1 {
                b.k.form = CurvatureForm::Averaged;
            }
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
        for k in 0..40 {
            let mut b = Base::random(&mut rng);
            if k % 2 == 1 {
                b.k.form = CurvatureForm::Averaged;
            }
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
