//! A closed DER rod (a ring), for the Michell (Zajac) instability of a twisted ring (DER 2008
//! Fig. 8; docs/derivations/der-imc.md §D2). It uses the same vertex and edge energies as [`super::DerRod`]
//! (`energy::bend_twist`, `stretch`) and the same time-parallel reference frames, on periodic
//! indices: vertex k joins edges k and k+1 (mod n) at node k+1. The internal twist Θ applied
//! before closing sits at a *twist seam*: the vertex joining edge n−1 to edge 0 carries
//! `τ = θ_0 − θ_{n−1} + m_ref + Θ` (the paper does not describe its closure; docs/derivations/der-imc.md §D2).
//!
//! The Newton system is not banded (the seam couples the last unknowns with the first), and a
//! ring for this test is small (n = 50: 200 unknowns), so it is solved dense (Cholesky, with a
//! Marquardt shift when indefinite). Backward Euler as in [`super::DerRod`].

use super::energy::{self, EdgePair, VertexStiffness};
use super::{parallel_transport, stretch};
use crate::math::Vec3;
use nalgebra::{DMatrix, DVector};

/// A closed discrete elastic rod.
#[derive(Clone, Debug)]
pub struct DerRing {
    /// Node positions [m] (n).
    pub x: Vec<Vec3>,
    /// Node velocities [m/s].
    pub v: Vec<Vec3>,
    /// Edge angles from the reference frames [rad] (n; edge e joins nodes e and e+1 mod n).
    pub theta: Vec<f64>,
    /// Edge angle rates [rad/s].
    pub omega: Vec<f64>,
    a1: Vec<Vec3>,
    mref: Vec<f64>,
    rest: Vec<f64>,
    stiff: VertexStiffness,
    /// Internal twist at the seam Θ [rad].
    pub seam_twist: f64,
    /// Axial stiffness EA [N].
    pub stretch_stiffness: f64,
    mass: f64,
    inertia: f64,
}

/// Transport the ring's reference directors from `x0` to `x` and recompute the reference
/// twists next to their old values (as `rod::transport`, periodic).
fn transport_ring(x0: &[Vec3], a0: &[Vec3], m0: &[f64], x: &[Vec3], a: &mut [Vec3], m: &mut [f64]) {
    let n = x.len();
    let t = |p: &[Vec3], e: usize| (p[(e + 1) % n] - p[e]).normalize();
    for e in 0..n {
        let p = parallel_transport(&a0[e], &t(x0, e), &t(x, e));
        let te = t(x, e);
        a[e] = (p - te * te.dot(&p)).normalize();
    }
    for k in 0..n {
        let f = (k + 1) % n;
        m[k] = energy::reference_twist(&a[k], &t(x, k), &a[f], &t(x, f), m0[k]);
    }
}

impl DerRing {
    /// A circle of `n` nodes and radius `radius` [m] in the xy plane, naturally straight
    /// (rest curvature and twist zero), bending stiffness `bend` and twisting stiffness `twist`
    /// [N m²], axial stiffness `ea` [N], linear density [kg/m], spin inertia per length
    /// [kg m], with the internal twist `total_twist` [rad] spread uniformly (its equilibrium).
    pub fn circle(
        n: usize,
        radius: f64,
        (bend, twist, ea): (f64, f64, f64),
        (linear_density, spin_inertia): (f64, f64),
        total_twist: f64,
    ) -> Self {
        let x: Vec<Vec3> = (0..n)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                Vec3::new(radius * a.cos(), radius * a.sin(), 0.0)
            })
            .collect();
        let l = (x[1] - x[0]).norm();
        // Reference directors out of the plane: transporting one to the next about z leaves
        // it unchanged, so the reference twist is 0 and θ carries the twist.
        let a1 = vec![Vec3::z(); n];
        let theta: Vec<f64> = (0..n).map(|e| total_twist * e as f64 / n as f64).collect();
        DerRing {
            v: vec![Vec3::zeros(); n],
            omega: vec![0.0; n],
            mref: vec![0.0; n],
            rest: vec![l; n],
            stiff: VertexStiffness {
                bend: [bend, bend],
                twist,
                rest_curvature: [[0.0; 2]; 2],
                rest_twist: 0.0,
                voronoi: l,
                form: energy::CurvatureForm::PerEdge,
            },
            seam_twist: total_twist,
            stretch_stiffness: ea,
            mass: linear_density * l,
            inertia: spin_inertia * l,
            x,
            theta,
            a1,
        }
    }

    /// Unknowns: 4 per node, `[x_k, θ_k]`.
    fn dofs(&self) -> usize {
        4 * self.x.len()
    }

    /// Integrated twist of every vertex (the seam's includes Θ) [rad].
    pub fn twists(&self) -> Vec<f64> {
        let n = self.x.len();
        (0..n)
            .map(|k| self.tau(&self.theta, &self.mref, k))
            .collect()
    }

    fn tau(&self, theta: &[f64], mref: &[f64], k: usize) -> f64 {
        let n = self.x.len();
        let f = (k + 1) % n;
        let seam = if f == 0 { self.seam_twist } else { 0.0 };
        theta[f] - theta[k] + mref[k] + seam
    }

    /// Elastic energy plus, with `h`, the inertial term against `(x_pred, θ_pred)`; gradient
    /// and (with `hessian`) dense Hessian over the unknowns.
    #[allow(clippy::too_many_arguments)]
    fn objective(
        &self,
        x: &[Vec3],
        theta: &[f64],
        a1: &[Vec3],
        mref: &[f64],
        inertial: Option<(f64, &[Vec3], &[f64])>,
        hessian: bool,
    ) -> (f64, DVector<f64>, DMatrix<f64>) {
        let n = x.len();
        let dim = self.dofs();
        let mut g = DVector::zeros(dim);
        let mut hm = if hessian {
            DMatrix::zeros(dim, dim)
        } else {
            DMatrix::zeros(0, 0)
        };
        let mut phi = 0.0;
        // Index of local unknown `a` of the stencil starting at node k (periodic).
        let at = |k: usize, a: usize| (4 * k + a) % dim;
        if let Some((h, xp, tp)) = inertial {
            let wm = self.mass / (h * h);
            let wi = self.inertia / (h * h);
            for k in 0..n {
                let d = x[k] - xp[k];
                phi += 0.5 * wm * d.norm_squared();
                for c in 0..3 {
                    g[4 * k + c] += wm * d[c];
                    if hessian {
                        hm[(4 * k + c, 4 * k + c)] += wm;
                    }
                }
                let dt = theta[k] - tp[k];
                phi += 0.5 * wi * dt * dt;
                g[4 * k + 3] += wi * dt;
                if hessian {
                    hm[(4 * k + 3, 4 * k + 3)] += wi;
                }
            }
        }
        for e in 0..n {
            let f = (e + 1) % n;
            let (v, g3, h3) = stretch(&(x[f] - x[e]), self.rest[e], self.stretch_stiffness, false);
            phi += v;
            for c in 0..3 {
                g[4 * f + c] += g3[c];
                g[4 * e + c] -= g3[c];
                if hessian {
                    for d in 0..3 {
                        hm[(4 * e + c, 4 * e + d)] += h3[(c, d)];
                        hm[(4 * f + c, 4 * f + d)] += h3[(c, d)];
                        hm[(4 * e + c, 4 * f + d)] -= h3[(c, d)];
                        hm[(4 * f + c, 4 * e + d)] -= h3[(c, d)];
                    }
                }
            }
        }
        for k in 0..n {
            let (k1, k2) = ((k + 1) % n, (k + 2) % n);
            let (ev, fv) = (x[k1] - x[k], x[k2] - x[k1]);
            let (te, tf) = (ev.normalize(), fv.normalize());
            let (m1e, m2e) = super::rod::material(&a1[k], &te, theta[k]);
            let (m1f, m2f) = super::rod::material(&a1[k1], &tf, theta[k1]);
            let tau = self.tau(theta, mref, k);
            let (v, g11, h11) = energy::bend_twist(
                &ev,
                &fv,
                &EdgePair { m1e, m2e, m1f, m2f },
                tau,
                &self.stiff,
                hessian,
            );
            phi += v;
            for a in 0..11 {
                g[at(k, a)] += g11[a];
                if hessian {
                    for b in 0..11 {
                        hm[(at(k, a), at(k, b))] += h11[(a, b)];
                    }
                }
            }
        }
        (phi, g, hm)
    }

    /// The static Hessian's eigenvalues, ascending. The ring has 7 zero modes (3 translations,
    /// 3 rotations, and turning every material frame together); a negative eigenvalue beyond
    /// them means the ring is unstable.
    pub fn static_eigenvalues(&self) -> Vec<f64> {
        let (_, _, h) = self.objective(&self.x, &self.theta, &self.a1, &self.mref, None, true);
        let mut ev: Vec<f64> = h.symmetric_eigen().eigenvalues.iter().copied().collect();
        ev.sort_by(f64::total_cmp);
        ev
    }

    /// Largest distance of a node from the plane z = mean z [m] (the out-of-plane amplitude).
    pub fn out_of_plane(&self) -> f64 {
        let mean = self.x.iter().map(|p| p.z).sum::<f64>() / self.x.len() as f64;
        self.x
            .iter()
            .map(|p| (p.z - mean).abs())
            .fold(0.0, f64::max)
    }

    /// Move node k by `dz[k]` out of the plane (a perturbation), carrying the frames along.
    pub fn perturb(&mut self, dz: impl Fn(usize) -> f64) {
        let old = self.x.clone();
        for (k, p) in self.x.iter_mut().enumerate() {
            p.z += dz(k);
        }
        let (a0, m0) = (self.a1.clone(), self.mref.clone());
        transport_ring(&old, &a0, &m0, &self.x, &mut self.a1, &mut self.mref);
    }

    /// One backward-Euler step of `h` [s] by Newton (dense; Marquardt shift when indefinite;
    /// Armijo backtracking). Returns the iterations used, or `None` if it did not converge.
    pub fn step(&mut self, h: f64) -> Option<usize> {
        let n = self.x.len();
        let xp: Vec<Vec3> = (0..n).map(|k| self.x[k] + self.v[k] * h).collect();
        let tp: Vec<f64> = (0..n).map(|k| self.theta[k] + self.omega[k] * h).collect();
        let (x0, t0) = (self.x.clone(), self.theta.clone());
        // Warm start at the prediction.
        let (a0, m0) = (self.a1.clone(), self.mref.clone());
        let mut x = xp.clone();
        let mut theta = tp.clone();
        let (mut a1, mut mref) = (a0.clone(), m0.clone());
        transport_ring(&x0, &a0, &m0, &x, &mut a1, &mut mref);
        let scale = self.stiff.bend[0] / (self.rest[0] * self.rest[0]);
        for it in 0..50 {
            let (phi, g, hm) = self.objective(&x, &theta, &a1, &mref, Some((h, &xp, &tp)), true);
            if g.amax() <= 1e-10 * scale {
                self.finish(x, theta, a1, mref, &x0, &t0, h);
                return Some(it);
            }
            let mut mu = 0.0;
            let dz = loop {
                let mut shifted = hm.clone();
                for i in 0..shifted.nrows() {
                    shifted[(i, i)] += mu * hm[(i, i)].abs().max(1e-300);
                }
                if let Some(ch) = shifted.cholesky() {
                    break ch.solve(&(-&g));
                }
                mu = if mu == 0.0 { 1e-8 } else { mu * 10.0 };
                if mu > 1e6 {
                    return None;
                }
            };
            let slope = dz.dot(&g);
            let mut t = 1.0;
            let mut accepted = false;
            for _ in 0..40 {
                let xt: Vec<Vec3> = (0..n)
                    .map(|k| x[k] + Vec3::new(dz[4 * k], dz[4 * k + 1], dz[4 * k + 2]) * t)
                    .collect();
                let tt: Vec<f64> = (0..n).map(|k| theta[k] + dz[4 * k + 3] * t).collect();
                let (mut at, mut mt) = (a1.clone(), mref.clone());
                transport_ring(&x, &a1, &mref, &xt, &mut at, &mut mt);
                let (pt, _, _) = self.objective(&xt, &tt, &at, &mt, Some((h, &xp, &tp)), false);
                if pt <= phi + 1e-4 * t * slope || (t == 1.0 && pt <= phi + 1e-12 * phi.abs()) {
                    (x, theta, a1, mref) = (xt, tt, at, mt);
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
            if !accepted {
                self.finish(x, theta, a1, mref, &x0, &t0, h);
                return Some(it + 1);
            }
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        x: Vec<Vec3>,
        theta: Vec<f64>,
        a1: Vec<Vec3>,
        mref: Vec<f64>,
        x0: &[Vec3],
        t0: &[f64],
        h: f64,
    ) {
        for k in 0..x.len() {
            self.v[k] = (x[k] - x0[k]) / h;
            self.omega[k] = (theta[k] - t0[k]) / h;
        }
        (self.x, self.theta, self.a1, self.mref) = (x, theta, a1, mref);
    }
}
