//! The DER rod with the fully implicit scheme of the IMC thesis (Choi 2021 §3.1,
//! docs/derivations/der-imc.md §B1/F1): unknowns `q = [x_0, θ_0, x_1, θ_1, …, θ_{M−1}, x_M]` (4 per node, interleaved, so
//! every energy couples indices at most 10 apart and the Newton system is banded), backward
//! Euler as the minimisation of the incremental potential
//!
//!   Φ(q) = Σ_i m_i/(2h²)|x_i − x̃_i|² + Σ_j I_j/(2h²)(θ_j − θ̃_j)² + E_s + E_b + E_t
//!          − Σ m_i g·x_i − F·x_end + (external potentials: contact, obstacles)
//!
//! (IMC eq. 3.6 is its stationarity condition), Newton with a banded `L D Lᵀ` solve, Marquardt
//! shifts when the Hessian is indefinite, Woodbury for self-contact's far couplings and a
//! backtracking line search. Reference frames are carried by parallel transport in time from
//! iterate to iterate (docs/derivations/der-imc.md §A2 "reference-frame variant") with the reference twist in τ.
//!
//! Clamped ends (cosserat's clamp, docs/derivations/cosserat.md §B.11 item 11): the held frame sits at the
//! rod's end node, so the clamp is a *ghost edge* of rest length `l` outside the rod, held
//! with its angle. The first bending vertex is the end node itself, with a Voronoi length of
//! `l/2` (the turning angle from the clamp's tangent at s = 0 to edge 0's at s = l/2), so a
//! clamped–clamped twist has exactly `GJ φ²/(2L)` and a tip load's deflection converges at
//! second order. Ghost nodes are hidden from [`DerRod::positions`] and from contact.

use super::energy::{self, EdgePair, VertexStiffness};
use super::{parallel_transport, stretch};
use crate::math::{E3, Mat3, Quat, Vec3, rotation_from_matrix};
use crate::rod::implicit::newton::{Eval, LinearSystem, NewtonRod, Nodes, Problem, newton};
use crate::rod::implicit::{
    Drive, DynamicParams, EndCondition, ImplicitRod, NodePotential, SolverConfig, SolverError,
    SolverReport,
};

/// Half-bandwidth of the Newton system: a vertex couples 11 consecutive unknowns.
const BAND: usize = 10;

/// Scratch space, allocated once.
#[derive(Clone, Debug)]
struct Work {
    /// The Newton system (4 unknowns per node: position, then the edge's angle).
    sys: LinearSystem,
    x_prev: Vec<Vec3>,
    theta_prev: Vec<f64>,
    a1_prev: Vec<Vec3>,
    mref_prev: Vec<f64>,
    x_pred: Vec<Vec3>,
    theta_pred: Vec<f64>,
    x_trial: Vec<Vec3>,
    theta_trial: Vec<f64>,
    a1_trial: Vec<Vec3>,
    mref_trial: Vec<f64>,
    v_start: Vec<Vec3>,
    omega_start: Vec<f64>,
}

/// A Discrete Elastic Rod: state, parameters, held ends and solver settings. The material,
/// loads and boundary conditions are those of the Cosserat rod ([`DynamicParams`],
/// [`Drive`], [`EndCondition`]), so a scene runs either model unchanged.
#[derive(Clone, Debug)]
pub struct DerRod {
    /// Material and discretisation (stretch `EA` = `stretch_stiffness.z`; bending
    /// `bend_stiffness.x, .y`; twisting `bend_stiffness.z`; natural curvature and twist
    /// `rest_darboux`, mapped to DER's κ̄ = (Ω̂₂, −Ω̂₁) L, τ̄ = Ω̂₃ L).
    pub params: DynamicParams,
    /// Start (s = 0) and end (s = L) conditions.
    pub ends: (EndCondition, EndCondition),
    /// Solver settings (`method` and `integrator` are ignored: DER is stepped by backward
    /// Euler and Newton).
    pub config: SolverConfig,
    /// All nodes, ghosts included [m].
    pub(crate) x: Vec<Vec3>,
    /// Node velocities [m/s].
    v: Vec<Vec3>,
    /// Edge angles from the reference frame [rad].
    pub(crate) theta: Vec<f64>,
    /// Edge angle rates [rad/s].
    omega: Vec<f64>,
    /// Reference director `a1` per edge (unit, ⟂ its edge).
    pub(crate) a1: Vec<Vec3>,
    /// Reference twist per vertex (vertex k joins edges k and k+1) [rad], unwrapped.
    pub(crate) mref: Vec<f64>,
    /// Rest edge lengths [m].
    pub(crate) rest: Vec<f64>,
    /// Elastic constants per vertex.
    pub(crate) stiff: Vec<VertexStiffness>,
    /// Lumped node masses [kg] (ghosts: 0).
    pub(crate) mass: Vec<f64>,
    /// Rotational inertia of each edge about its tangent `ρ J |ē|` [kg m²].
    pub(crate) inertia: Vec<f64>,
    /// Index of the rod's node 0 among all nodes (1 after a start ghost).
    pub(crate) first: usize,
    work: Work,
}

/// Index of node `i`'s first coordinate.
#[inline]
pub(crate) fn xi(i: usize) -> usize {
    4 * i
}

/// Index of edge `e`'s angle.
#[inline]
pub(crate) fn ti(e: usize) -> usize {
    4 * e + 3
}

/// The material frame `(m1, m2)` of an edge with reference director `a1`, tangent `t`, angle θ.
#[inline]
pub(crate) fn material(a1: &Vec3, t: &Vec3, theta: f64) -> (Vec3, Vec3) {
    let a2 = t.cross(a1);
    let (s, c) = theta.sin_cos();
    (c * a1 + s * a2, -s * a1 + c * a2)
}

/// Carry reference frames from the configuration `x0` (directors `a0`, reference twists
/// `m0`) to `x`: each director by parallel transport in time from its old tangent to the new
/// (docs/derivations/der-imc.md §A2), each reference twist recomputed and unwrapped next to its old value.
fn transport(x0: &[Vec3], a0: &[Vec3], m0: &[f64], x: &[Vec3], a: &mut [Vec3], m: &mut [f64]) {
    for e in 0..a.len() {
        let t0 = (x0[e + 1] - x0[e]).normalize();
        let t = (x[e + 1] - x[e]).normalize();
        let p = parallel_transport(&a0[e], &t0, &t);
        a[e] = (p - t * t.dot(&p)).normalize();
    }
    for k in 0..m.len() {
        let te = (x[k + 1] - x[k]).normalize();
        let tf = (x[k + 2] - x[k + 1]).normalize();
        m[k] = energy::reference_twist(&a[k], &te, &a[k + 1], &tf, m0[k]);
    }
}

/// The first index of each held unknown (a node's 3 coordinates or an edge's angle) for
/// the end conditions, with the rod's node 0 at `f` and node N at `last` (docs/derivations/der-imc.md §A6: a clamp
/// holds its ghost edge, its angle and the end node; a pin holds the end node).
pub(crate) fn held_dofs(
    ends: (EndCondition, EndCondition),
    f: usize,
    last: usize,
) -> [Option<usize>; 6] {
    let mut pins = [None; 6];
    let mut np = 0;
    let mut push = |i: usize| {
        pins[np] = Some(i);
        np += 1;
    };
    if ends.0 != EndCondition::Free {
        push(xi(f));
    }
    if ends.0 == EndCondition::Clamped {
        push(xi(f - 1));
        push(ti(f - 1));
    }
    if ends.1 != EndCondition::Free {
        push(xi(last));
    }
    if ends.1 == EndCondition::Clamped {
        push(xi(last + 1));
        push(ti(last));
    }
    pins
}

impl DerRod {
    /// A rod at rest in the given configuration: `positions` (N+1 nodes) and the material
    /// `frames` of its N segments (d3 along the segment). The rest shape is straight with the
    /// scene's natural curvature `params.rest_darboux`, and rest edge lengths `L/N`.
    ///
    /// # Panics
    /// On inconsistent sizes (programming errors; scenes are validated first).
    pub fn new(
        params: DynamicParams,
        ends: (EndCondition, EndCondition),
        config: SolverConfig,
        positions: Vec<Vec3>,
        frames: Vec<Quat>,
    ) -> Self {
        let n = frames.len();
        assert!(n >= 1 && positions.len() == n + 1 && params.segments == n);
        let l = params.segment_length;
        let start_ghost = ends.0 == EndCondition::Clamped;
        let end_ghost = ends.1 == EndCondition::Clamped;
        let first = usize::from(start_ghost);
        let mut x = Vec::with_capacity(n + 3);
        let mut fr = Vec::with_capacity(n + 2);
        if start_ghost {
            x.push(positions[0] - (frames[0] * E3) * l);
            fr.push(frames[0]);
        }
        x.extend_from_slice(&positions);
        fr.extend_from_slice(&frames);
        if end_ghost {
            x.push(positions[n] + (frames[n - 1] * E3) * l);
            fr.push(frames[n - 1]);
        }
        let nodes = x.len();
        let edges = nodes - 1;
        let a1: Vec<Vec3> = (0..edges)
            .map(|e| {
                let t = (x[e + 1] - x[e]).normalize();
                let d1 = fr[e] * Vec3::x();
                let p = d1 - t * t.dot(&d1);
                if p.norm() > 1e-6 {
                    p.normalize()
                } else {
                    crate::math::any_perpendicular(&t)
                }
            })
            .collect();
        let mut mref = vec![0.0; edges - 1];
        for k in 0..edges - 1 {
            let te = (x[k + 1] - x[k]).normalize();
            let tf = (x[k + 2] - x[k + 1]).normalize();
            mref[k] = energy::reference_twist(&a1[k], &te, &a1[k + 1], &tf, 0.0);
        }
        // θ: the material frame's d1 against the reference director (0 unless the frames
        // are not adapted to the centerline).
        let theta: Vec<f64> = (0..edges)
            .map(|e| {
                let t = (x[e + 1] - x[e]).normalize();
                energy::signed_angle(&a1[e], &(fr[e] * Vec3::x()), &t)
            })
            .collect();
        let rest = vec![l; edges];
        let (bx, by, gj) = (
            params.bend_stiffness.x,
            params.bend_stiffness.y,
            params.bend_stiffness.z,
        );
        let om = params.rest_darboux;
        let ghost = |e: usize| (start_ghost && e == 0) || (end_ghost && e == edges - 1);
        // Voronoi length of a vertex: half of each adjacent edge of the rod. A ghost edge
        // contributes nothing: the clamp vertex covers [0, l/2], where its turning angle (from
        // the clamp's tangent at s = 0 to edge 0's at s = l/2) lives.
        let voronoi = |k: usize| {
            0.5 * (if ghost(k) { 0.0 } else { rest[k] }
                + if ghost(k + 1) { 0.0 } else { rest[k + 1] })
        };
        let stiff = (0..edges - 1)
            .map(|k| {
                let lv = voronoi(k);
                VertexStiffness {
                    // κ1 (toward m1) bends about d2: EI₂ = C^Ω.y; κ2 about d1: C^Ω.x.
                    bend: [by, bx],
                    twist: gj,
                    rest_curvature: [[om.y * lv, -om.x * lv]; 2],
                    rest_twist: om.z * lv,
                    voronoi: lv,
                    form: energy::CurvatureForm::PerEdge,
                }
            })
            .collect();
        let ml = params.linear_density * l;
        let mut mass = vec![0.0; nodes];
        for (k, m) in mass.iter_mut().skip(first).take(n + 1).enumerate() {
            *m = if k == 0 || k == n { 0.5 * ml } else { ml };
        }
        let inertia = vec![params.rotational_density.z * l; edges];
        let dofs = 4 * nodes - 1;
        let work = Work {
            sys: LinearSystem::new(dofs, BAND, 4, 4 * first),
            x_prev: x.clone(),
            theta_prev: theta.clone(),
            a1_prev: a1.clone(),
            mref_prev: mref.clone(),
            x_pred: x.clone(),
            theta_pred: theta.clone(),
            x_trial: x.clone(),
            theta_trial: theta.clone(),
            a1_trial: a1.clone(),
            mref_trial: mref.clone(),
            v_start: vec![Vec3::zeros(); nodes],
            omega_start: vec![0.0; edges],
        };
        DerRod {
            params,
            ends,
            config,
            v: vec![Vec3::zeros(); nodes],
            omega: vec![0.0; edges],
            x,
            theta,
            a1,
            mref,
            rest,
            stiff,
            mass,
            inertia,
            first,
            work,
        }
    }

    /// A straight rod from `start` along the frame's d3, material d1 along the frame's d1.
    pub fn straight(
        params: DynamicParams,
        ends: (EndCondition, EndCondition),
        config: SolverConfig,
        start: Vec3,
        frame: Mat3,
    ) -> Self {
        let n = params.segments;
        let (x, q0) = params.straight(start, &frame);
        DerRod::new(params, ends, config, x, vec![q0; n])
    }

    /// A rod at rest along the polyline `x` (N+1 nodes), material frames carried along it by
    /// parallel transport (Bishop frames, θ = 0) from `normal` at the start, with the rest
    /// shape set to this configuration (lengths, curvatures and twist as authored).
    pub fn from_centerline(
        mut params: DynamicParams,
        ends: (EndCondition, EndCondition),
        config: SolverConfig,
        x: Vec<Vec3>,
        normal: &Vec3,
    ) -> Self {
        let n = x.len() - 1;
        params.segments = n;
        params.segment_length = (0..n).map(|e| (x[e + 1] - x[e]).norm()).sum::<f64>() / n as f64;
        let frames = super::bishop_frames(&x, normal)
            .iter()
            .map(|(t, u, v)| rotation_from_matrix(&Mat3::from_columns(&[*u, *v, *t])))
            .collect();
        let mut rod = DerRod::new(params, ends, config, x, frames);
        rod.set_rest_to_current();
        rod
    }

    /// Make the current configuration the rest shape: rest edge lengths, and natural
    /// curvature and twist per vertex (Bergou 2008 Algorithm 1 step 1: ω̄ from the rest
    /// shape). Used for rods authored in a shape, and by the sag-free optimiser.
    pub fn set_rest_to_current(&mut self) {
        let edges = self.x.len() - 1;
        for e in 0..edges {
            self.rest[e] = (self.x[e + 1] - self.x[e]).norm();
        }
        for k in 0..edges - 1 {
            let (e, f) = (self.x[k + 1] - self.x[k], self.x[k + 2] - self.x[k + 1]);
            let (te, tf) = (e.normalize(), f.normalize());
            let (m1e, m2e) = material(&self.a1[k], &te, self.theta[k]);
            let (m1f, m2f) = material(&self.a1[k + 1], &tf, self.theta[k + 1]);
            let pair = EdgePair { m1e, m2e, m1f, m2f };
            let ghost = |e: usize| {
                (self.ends.0 == EndCondition::Clamped && e == 0)
                    || (self.ends.1 == EndCondition::Clamped && e == edges - 1)
            };
            let lv = 0.5
                * (if ghost(k) { 0.0 } else { self.rest[k] }
                    + if ghost(k + 1) { 0.0 } else { self.rest[k + 1] });
            let s = &mut self.stiff[k];
            s.voronoi = lv;
            s.rest_curvature = energy::edge_curvatures(&e, &f, &pair);
            s.rest_twist = self.theta[k + 1] - self.theta[k] + self.mref[k];
        }
    }

    /// Rest lengths of the N segments [m] (ghost edges excluded).
    pub fn rest_lengths(&self) -> &[f64] {
        &self.rest[self.first..self.first + self.params.segments]
    }

    /// Rest material curvatures (ω̄^e, ω̄^f) and rest twist τ̄ per vertex, integrated, ghost
    /// vertices included (the clamp vertex first when the start is clamped).
    pub fn rest_strains(&self) -> Vec<([[f64; 2]; 2], f64)> {
        self.stiff
            .iter()
            .map(|s| (s.rest_curvature, s.rest_twist))
            .collect()
    }

    /// Copy the dynamic state (positions, velocities, angles, reference frames) of a rod of
    /// the same shape, without allocating (benchmarks step one rod from a fixed state).
    pub fn copy_state_from(&mut self, other: &DerRod) {
        self.x.copy_from_slice(&other.x);
        self.v.copy_from_slice(&other.v);
        self.theta.copy_from_slice(&other.theta);
        self.omega.copy_from_slice(&other.omega);
        self.a1.copy_from_slice(&other.a1);
        self.mref.copy_from_slice(&other.mref);
    }

    /// Segments N (of the rod, ghosts excluded).
    pub fn segments(&self) -> usize {
        self.params.segments
    }

    /// Node positions [m] (N+1; ghosts excluded).
    pub fn positions(&self) -> &[Vec3] {
        &self.x[self.first..self.first + self.params.segments + 1]
    }

    /// Node velocities [m/s].
    pub fn velocities(&self) -> &[Vec3] {
        &self.v[self.first..self.first + self.params.segments + 1]
    }

    /// Feed the dynamic state (ghosts included: positions, velocities, angles and their
    /// rates, reference twists, reference directors) to a state digest: what digest version 1
    /// (`sim::DigestVersion::V1`) covers of a DER rod. Kept bit for bit for the recordings
    /// that carry it.
    pub fn digest_v1_into(&self, d: &mut crate::math::Digest) {
        d.vec3s(&self.x);
        d.vec3s(&self.v);
        for v in self.theta.iter().chain(&self.omega).chain(&self.mref) {
            d.f64(*v);
        }
        d.vec3s(&self.a1);
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`):
    /// the dynamic state of [`DerRod::digest_v1_into`], the broken segment and the rest shape
    /// (rest edge lengths, rest curvatures, twist and Voronoi lengths: authored or
    /// optimised shapes set them after construction). Every field is named here, so a new one
    /// must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let DerRod {
            params,
            // Set at construction from the scene.
            ends: _,
            config: _,
            mass: _,
            inertia: _,
            first: _,
            x,
            v,
            theta,
            omega,
            a1,
            mref,
            rest,
            stiff,
            work,
        } = self;
        // Scratch of one step: the start (`save`), the prediction, a line search's trial
        // point, the velocities for re-solves (`hold`).
        let Work {
            sys: _,
            x_prev: _,
            theta_prev: _,
            a1_prev: _,
            mref_prev: _,
            x_pred: _,
            theta_pred: _,
            x_trial: _,
            theta_trial: _,
            a1_trial: _,
            mref_trial: _,
            v_start: _,
            omega_start: _,
        } = work;
        d.vec3s(x);
        d.vec3s(v);
        d.f64s(theta);
        d.f64s(omega);
        d.vec3s(a1);
        d.f64s(mref);
        // The material and discretisation are the scene's; DER reads the rest shape from
        // `rest` and `stiff` (set from `rest_darboux` at construction).
        let DynamicParams {
            segments: _,
            segment_length: _,
            stretch_stiffness: _,
            bend_stiffness: _,
            linear_density: _,
            rotational_density: _,
            rest_darboux: _,
            mass_damping: _,
            stiffness_damping: _,
            broken,
        } = params;
        d.u64(broken.map_or(u64::MAX, |b| b as u64));
        d.f64s(rest);
        for s in stiff {
            let VertexStiffness {
                // Material constants of the scene.
                bend: _,
                twist: _,
                form: _,
                rest_curvature,
                rest_twist,
                voronoi,
            } = s;
            for c in rest_curvature.iter().flatten() {
                d.f64(*c);
            }
            d.f64(*rest_twist);
            d.f64(*voronoi);
        }
    }

    /// Edge angles θ from the reference frames [rad] (N).
    pub fn angles(&self) -> &[f64] {
        &self.theta[self.first..self.first + self.params.segments]
    }

    /// Reference twist per vertex [rad], ghost vertices included.
    pub fn reference_twists(&self) -> &[f64] {
        &self.mref
    }

    /// Material frame of segment `e` (columns m1, m2, t).
    pub fn frame(&self, e: usize) -> Mat3 {
        let k = self.first + e;
        let t = (self.x[k + 1] - self.x[k]).normalize();
        let (m1, m2) = material(&self.a1[k], &t, self.theta[k]);
        Mat3::from_columns(&[m1, m2, t])
    }

    /// Material frames of the N segments as unit quaternions (body to world).
    pub fn frames_into(&self, out: &mut Vec<Quat>) {
        for e in 0..self.params.segments {
            let r = self.frame(e);
            out.push(Quat::from_rotation_matrix(
                &nalgebra::Rotation3::from_matrix_unchecked(r),
            ));
        }
    }

    /// Material direction d1 per segment.
    pub fn directors(&self) -> Vec<Vec3> {
        (0..self.params.segments)
            .map(|e| self.frame(e).column(0).into_owned())
            .collect()
    }

    /// The bending strain every vertex uses (default: per edge, Bergou 2008).
    pub fn set_curvature_form(&mut self, form: energy::CurvatureForm) {
        self.stiff.iter_mut().for_each(|s| s.form = form);
    }

    /// The edge pair of vertex k (edge vectors and directors).
    fn vertex(&self, k: usize) -> (Vec3, Vec3, EdgePair) {
        let (e, f) = (self.x[k + 1] - self.x[k], self.x[k + 2] - self.x[k + 1]);
        let (te, tf) = (e.normalize(), f.normalize());
        let (m1e, m2e) = material(&self.a1[k], &te, self.theta[k]);
        let (m1f, m2f) = material(&self.a1[k + 1], &tf, self.theta[k + 1]);
        (e, f, EdgePair { m1e, m2e, m1f, m2f })
    }

    /// Per vertex (ghost vertices included): the integrated material curvatures in the frames
    /// of its two edges (ω^e, ω^f) and the integrated twist τ.
    pub fn strains(&self) -> Vec<([[f64; 2]; 2], f64)> {
        (0..self.x.len() - 2)
            .map(|k| {
                let (e, f, pair) = self.vertex(k);
                (
                    energy::edge_curvatures(&e, &f, &pair),
                    self.theta[k + 1] - self.theta[k] + self.mref[k],
                )
            })
            .collect()
    }

    /// Largest pointwise bending curvature `|κb|/L` over the vertices [1/m].
    pub fn max_curvature(&self) -> f64 {
        self.strains()
            .iter()
            .zip(&self.stiff)
            .map(|((w, _), s)| w[0][0].hypot(w[0][1]) / s.voronoi)
            .fold(0.0, f64::max)
    }

    /// Stretching and bending-plus-twisting energies [J].
    pub fn elastic_energy(&self) -> (f64, f64) {
        let ea = self.params.stretch_stiffness.z;
        let mut se = 0.0;
        for e in 0..self.x.len() - 1 {
            se += stretch(&(self.x[e + 1] - self.x[e]), self.rest[e], ea, false).0;
        }
        let mut bt = 0.0;
        for k in 0..self.x.len() - 2 {
            let (e, f, pair) = self.vertex(k);
            let tau = self.theta[k + 1] - self.theta[k] + self.mref[k];
            bt += energy::bend_twist(&e, &f, &pair, tau, &self.stiff[k], false).0;
        }
        (se, bt)
    }

    /// Kinetic energy, translational and of the edges' spin [J].
    pub fn kinetic_energy(&self) -> f64 {
        let t: f64 = self
            .mass
            .iter()
            .zip(&self.v)
            .map(|(m, v)| 0.5 * m * v.norm_squared())
            .sum();
        let r: f64 = self
            .inertia
            .iter()
            .zip(&self.omega)
            .map(|(i, w)| 0.5 * i * w * w)
            .sum();
        t + r
    }

    /// The report fields that describe the state.
    pub fn measure(&self, gravity: &Vec3, report: &mut SolverReport) {
        let (se, bt) = self.elastic_energy();
        report.stretch_energy = se;
        report.bend_energy = bt;
        report.kinetic_energy = self.kinetic_energy();
        report.gravity_energy = -self
            .mass
            .iter()
            .zip(&self.x)
            .map(|(m, x)| m * gravity.dot(x))
            .sum::<f64>();
        report.max_stretch = (0..self.x.len() - 1)
            .map(|e| ((self.x[e + 1] - self.x[e]).norm() / self.rest[e] - 1.0).abs())
            .fold(0.0, f64::max);
    }

    /// One backward-Euler step of `h` [s].
    fn implicit_step(&mut self, p: &Problem) -> Result<SolverReport, SolverError> {
        let (h, drive, pot) = (p.h.expect("a step"), p.drive, p.pot);
        self.save();
        {
            let w = &mut self.work;
            for i in 0..self.x.len() {
                w.x_pred[i] = self.x[i] + self.v[i] * h;
            }
            for e in 0..self.theta.len() {
                w.theta_pred[e] = self.theta[e] + self.omega[e] * h;
            }
        }
        // Warm start at the inertial prediction unless it passes into an obstacle.
        let (a, b) = (self.first, self.first + self.params.segments + 1);
        let into_obstacle =
            pot.limits_steps() && pot.max_step(&self.x[a..b], &self.work.x_pred[a..b]) < 1.0;
        if !into_obstacle {
            let old = self.x.clone();
            self.x.copy_from_slice(&self.work.x_pred);
            self.theta.copy_from_slice(&self.work.theta_pred);
            let (a0, m0) = (self.a1.clone(), self.mref.clone());
            transport(&old, &a0, &m0, &self.x, &mut self.a1, &mut self.mref);
        }
        self.impose(drive);
        let mut report = SolverReport::default();
        let cap = self.config.max_iterations;
        if let Err(e) = newton(self, p, cap, &mut report) {
            self.restore();
            return Err(e);
        }
        let w = &self.work;
        for i in 0..self.x.len() {
            self.v[i] = (self.x[i] - w.x_prev[i]) / h;
        }
        for e in 0..self.theta.len() {
            self.omega[e] = (self.theta[e] - w.theta_prev[e]) / h;
        }
        self.measure(&drive.gravity, &mut report);
        Ok(report)
    }

    /// Φ at the current state (or the trial state) with its gradient and, unless `eval` is
    /// [`Eval::Gradient`], its (exact) banded Hessian. Trial frames are carried from the
    /// current state.
    #[allow(clippy::needless_range_loop)] // node, edge and vertex indices address several arrays
    fn assemble(&mut self, trial: bool, eval: Eval, p: &Problem) -> f64 {
        let (h, drive, pot) = (p.h, p.drive, p.pot);
        debug_assert!(eval != Eval::GaussNewton, "DER has no Gauss–Newton Hessian");
        let hessian = eval != Eval::Gradient;
        if trial {
            let w = &mut self.work;
            transport(
                &self.x,
                &self.a1,
                &self.mref,
                &w.x_trial,
                &mut w.a1_trial,
                &mut w.mref_trial,
            );
        }
        let n = self.params.segments;
        let (f, last) = (self.first, self.first + n);
        let ea = self.params.stretch_stiffness.z;
        let w = &mut self.work;
        let (x, theta, a1, mref) = if trial {
            (&w.x_trial, &w.theta_trial, &w.a1_trial, &w.mref_trial)
        } else {
            (&self.x, &self.theta, &self.a1, &self.mref)
        };
        let s = &mut w.sys;
        s.clear(hessian);
        // Nodes: inertia, mass damping, gravity, end forces.
        let damping = self.params.mass_damping;
        let nodes = Nodes::new(x, &w.x_pred, &w.x_prev, &self.mass, (f, last), damping);
        let mut phi = s.add_nodes(&nodes, p, hessian);
        let edges = x.len() - 1;
        // Edges: stretching and spin inertia.
        for e in 0..edges {
            let ev = x[e + 1] - x[e];
            let (v, g3, h3) = stretch(&ev, self.rest[e], ea, false);
            phi += v;
            for k in 0..3 {
                s.g[xi(e) + k] -= g3[k];
                s.g[xi(e + 1) + k] += g3[k];
            }
            if hessian {
                s.h.add_dense(xi(e), &h3);
                s.h.add_dense(xi(e + 1), &h3);
                s.h.add_block3(xi(e + 1), xi(e), &(-h3));
            }
            if let Some(h) = h {
                let wi = self.inertia[e] / (h * h);
                let d = theta[e] - w.theta_pred[e];
                phi += 0.5 * wi * d * d;
                s.g[ti(e)] += wi * d;
                if hessian {
                    s.h.add_diagonal(ti(e), wi);
                }
            }
        }
        // Vertices: bending and twisting.
        for k in 0..edges - 1 {
            let (ev, fv) = (x[k + 1] - x[k], x[k + 2] - x[k + 1]);
            let (te, tf) = (ev.normalize(), fv.normalize());
            let (m1e, m2e) = material(&a1[k], &te, theta[k]);
            let (m1f, m2f) = material(&a1[k + 1], &tf, theta[k + 1]);
            let pair = EdgePair { m1e, m2e, m1f, m2f };
            let tau = theta[k + 1] - theta[k] + mref[k];
            let (v, g11, h11) = energy::bend_twist(&ev, &fv, &pair, tau, &self.stiff[k], hessian);
            phi += v;
            for a in 0..11 {
                s.g[xi(k) + a] += g11[a];
            }
            if hessian {
                s.h.add_dense::<11>(xi(k), &h11);
            }
        }
        // Dead end torques (virtual work τ·δφ of the end edge's rotation δφ = t × δt + δθ t):
        // generalised forces (τ × t)/l on the edge's far node, the opposite on its near node,
        // τ·t on its angle. Gradient only; the line search adds their work (see `newton`).
        for (tq, e) in [(drive.start_torque, f), (drive.end_torque, last - 1)] {
            if tq == Vec3::zeros() {
                continue;
            }
            let ev = x[e + 1] - x[e];
            let le = ev.norm();
            let t = ev / le;
            let fo = tq.cross(&t) / le;
            for c in 0..3 {
                s.g[xi(e + 1) + c] -= fo[c];
                s.g[xi(e) + c] += fo[c];
            }
            s.g[ti(e)] -= tq.dot(&t);
        }
        // External potentials on the rod's nodes (ghosts excluded).
        let mut sink = s.sink(hessian);
        phi += pot.evaluate(&x[f..=last], Some(&mut sink));
        // Held unknowns.
        let pins = held_dofs(self.ends, f, last);
        for p in pins.iter().flatten() {
            let count = if p % 4 == 3 { 1 } else { 3 };
            for c in 0..count {
                s.g[p + c] = 0.0;
                if hessian {
                    s.h.pin(p + c);
                }
            }
        }
        // Held positions leave the rank-one terms too (their nodes are rod nodes 0..=N).
        s.release_held(|node| {
            (node == 0 && self.ends.0 != EndCondition::Free)
                || (node == n && self.ends.1 != EndCondition::Free)
        });
        phi
    }

    /// Assemble the static Hessian (no inertia) at the current state and report whether it
    /// factors without a shift (is positive definite over the free unknowns).
    pub(crate) fn static_hessian_factors(
        &mut self,
        drive: &Drive,
        pot: &dyn NodePotential,
    ) -> bool {
        let p = Problem {
            h: None,
            drive,
            pot,
        };
        self.assemble(false, Eval::Exact, &p);
        let s = &mut self.work.sys;
        s.chol.factor_from(&s.h, 0.0).is_ok()
    }
}

impl NewtonRod for DerRod {
    fn parts(&mut self) -> (&DynamicParams, &SolverConfig, &mut LinearSystem) {
        (&self.params, &self.config, &mut self.work.sys)
    }
    fn load_scale(&self) -> f64 {
        // EA |ε|, the edge's tension (Bergou 2010 §4.1's stretching energy; energy::stretch).
        let ea = self.params.stretch_stiffness.z;
        (0..self.x.len() - 1)
            .map(|e| ea * ((self.x[e + 1] - self.x[e]).norm() / self.rest[e] - 1.0).abs())
            .fold(0.0, f64::max)
    }
    fn objective(&mut self, trial: bool, eval: Eval, p: &Problem) -> f64 {
        self.assemble(trial, eval, p)
    }
    fn torque_work(&self, drive: &Drive) -> f64 {
        let n = self.params.segments;
        let (f, last) = (self.first, self.first + n);
        let mut wk = 0.0;
        for (tq, e) in [(drive.start_torque, f), (drive.end_torque, last - 1)] {
            if tq == Vec3::zeros() {
                continue;
            }
            let ev = self.x[e + 1] - self.x[e];
            let le = ev.norm();
            let t = ev / le;
            let fo = tq.cross(&t) / le;
            let dz = &self.work.sys.dz;
            let d1 = Vec3::new(dz[xi(e + 1)], dz[xi(e + 1) + 1], dz[xi(e + 1) + 2]);
            let d0 = Vec3::new(dz[xi(e)], dz[xi(e) + 1], dz[xi(e) + 2]);
            wk += fo.dot(&(d1 - d0)) + tq.dot(&t) * dz[ti(e)];
        }
        wk
    }

    fn set_trial_positions(&mut self, t: f64) {
        let w = &mut self.work;
        let dz = &w.sys.dz;
        for i in 0..self.x.len() {
            let d = Vec3::new(dz[xi(i)], dz[xi(i) + 1], dz[xi(i) + 2]);
            w.x_trial[i] = self.x[i] + d * t;
        }
    }
    fn set_trial_rest(&mut self, t: f64) -> f64 {
        let w = &mut self.work;
        for e in 0..self.theta.len() {
            w.theta_trial[e] = self.theta[e] + w.sys.dz[ti(e)] * t;
        }
        0.0
    }
    fn positions_and_trial(&self) -> (&[Vec3], &[Vec3]) {
        let (a, b) = (self.first, self.first + self.params.segments + 1);
        (&self.x[a..b], &self.work.x_trial[a..b])
    }
    fn take_trial(&mut self) {
        let w = &mut self.work;
        std::mem::swap(&mut self.x, &mut w.x_trial);
        std::mem::swap(&mut self.theta, &mut w.theta_trial);
        std::mem::swap(&mut self.a1, &mut w.a1_trial);
        std::mem::swap(&mut self.mref, &mut w.mref_trial);
    }
    const GAUSS_NEWTON: bool = false;
    const MAX_SHIFT: f64 = 1e6;
}

impl ImplicitRod for DerRod {
    fn node_positions(&self) -> &[Vec3] {
        self.positions()
    }
    fn hold(&mut self, _drive: &Drive) {
        self.work.v_start.copy_from_slice(&self.v);
        self.work.omega_start.copy_from_slice(&self.omega);
    }
    fn rewind(&mut self) {
        self.restore();
        self.v.copy_from_slice(&self.work.v_start);
        self.omega.copy_from_slice(&self.work.omega_start);
    }
    fn save(&mut self) {
        let w = &mut self.work;
        w.x_prev.copy_from_slice(&self.x);
        w.theta_prev.copy_from_slice(&self.theta);
        w.a1_prev.copy_from_slice(&self.a1);
        w.mref_prev.copy_from_slice(&self.mref);
    }

    fn restore(&mut self) {
        let w = &self.work;
        self.x.copy_from_slice(&w.x_prev);
        self.theta.copy_from_slice(&w.theta_prev);
        self.a1.copy_from_slice(&w.a1_prev);
        self.mref.copy_from_slice(&w.mref_prev);
    }
    fn max_node_speed(&self) -> f64 {
        self.v.iter().map(|v| v.norm()).fold(0.0, f64::max)
    }

    /// Move the held nodes (and the ghost edges' angles) to the drive's targets, carrying
    /// the reference frames along.
    fn impose(&mut self, d: &Drive) {
        let n = self.params.segments;
        let l = self.params.segment_length;
        let (f, last) = (self.first, self.first + n);
        let old = self.x.clone();
        match self.ends.0 {
            EndCondition::Free => {}
            EndCondition::Pinned => self.x[f] = d.start.position,
            EndCondition::Clamped => {
                self.x[f] = d.start.position;
                self.x[f - 1] = d.start.position - (d.start.rotation * E3) * l;
            }
        }
        match self.ends.1 {
            EndCondition::Free => {}
            EndCondition::Pinned => self.x[last] = d.end.position,
            EndCondition::Clamped => {
                self.x[last] = d.end.position;
                self.x[last + 1] = d.end.position + (d.end.rotation * E3) * l;
            }
        }
        let (a0, m0) = (self.a1.clone(), self.mref.clone());
        transport(&old, &a0, &m0, &self.x, &mut self.a1, &mut self.mref);
        // Ghost edge angles: the held d1 against the transported reference director.
        if self.ends.0 == EndCondition::Clamped {
            let t = (self.x[f] - self.x[f - 1]).normalize();
            let a = energy::signed_angle(&self.a1[f - 1], &(d.start.rotation * Vec3::x()), &t);
            self.theta[f - 1] = energy::unwrap_near(a, self.theta[f - 1]);
        }
        if self.ends.1 == EndCondition::Clamped {
            let t = (self.x[last + 1] - self.x[last]).normalize();
            let a = energy::signed_angle(&self.a1[last], &(d.end.rotation * Vec3::x()), &t);
            self.theta[last] = energy::unwrap_near(a, self.theta[last]);
        }
    }

    fn settle(&mut self, gravity: &Vec3, report: &mut SolverReport) {
        self.v.iter_mut().for_each(|v| *v = Vec3::zeros());
        self.omega.iter_mut().for_each(|w| *w = 0.0);
        self.measure(gravity, report);
    }
    fn solve_step(&mut self, p: &Problem) -> Result<SolverReport, SolverError> {
        self.implicit_step(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees one ulp of every piece of state a step carries to the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp3};
        let p = crate::rod::RodParams {
            radius: 2e-4,
            youngs_modulus: 2e9,
            shear_modulus: 7e8,
            density: 1100.0,
        };
        let x: Vec<Vec3> = (0..=10)
            .map(|i| Vec3::new(0.01 * i as f64, 1e-3 * (i as f64).sin(), 0.0))
            .collect();
        let mut rod = DerRod::from_centerline(
            DynamicParams::new(&p, 0.1, 10),
            (EndCondition::Clamped, EndCondition::Free),
            SolverConfig::default(),
            x,
            &Vec3::z(),
        );
        let drive = Drive {
            start: crate::rod::EndTarget {
                position: rod.positions()[0],
                rotation: Quat::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(
                    rod.frame(0),
                )),
            },
            end: crate::rod::EndTarget {
                position: Vec3::zeros(),
                rotation: Quat::identity(),
            },
            gravity: Vec3::new(0.0, -9.81, 0.0),
            start_force: Vec3::zeros(),
            start_torque: Vec3::zeros(),
            end_force: Vec3::zeros(),
            end_torque: Vec3::zeros(),
        };
        for _ in 0..3 {
            crate::rod::DynamicRod::step(&mut rod, 1e-3, &drive).unwrap();
        }
        let digest = |r: &DerRod| {
            let mut d = crate::math::Digest::default();
            r.digest_into(&mut d);
            d.0
        };
        let last = rod.x.len() - 1;
        let edges = last;
        assert_each_changes(
            &rod,
            digest,
            &[
                ("x", &|r| ulp3(&mut r.x[last])),
                ("x (start ghost)", &|r| ulp3(&mut r.x[0])),
                ("v", &|r| ulp3(&mut r.v[last])),
                ("theta", &|r| ulp(&mut r.theta[edges - 1])),
                ("omega", &|r| ulp(&mut r.omega[edges - 1])),
                ("a1", &|r| ulp3(&mut r.a1[edges - 1])),
                ("mref", &|r| ulp(&mut r.mref[edges - 2])),
                ("params.broken", &|r| r.params.broken = Some(3)),
                ("rest", &|r| ulp(&mut r.rest[edges - 1])),
                ("stiff.rest_curvature", &|r| {
                    ulp(&mut r.stiff[edges - 2].rest_curvature[1][1])
                }),
                ("stiff.rest_twist", &|r| {
                    ulp(&mut r.stiff[edges - 2].rest_twist)
                }),
                ("stiff.voronoi", &|r| ulp(&mut r.stiff[edges - 2].voronoi)),
            ],
        );
    }
}
