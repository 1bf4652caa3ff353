//! Soler, Martin & Sorkine-Hornung 2018, Algorithm 1: Projective Dynamics for Cosserat rods,
//! with the corrections of docs/derivations/cosserat.md §B.6–B.7.
//!
//! Local step: the stretch–shear projection decoupled into a position target (edge = l d3,
//! eq. (17)) and an orientation target (minimal rotation of d3 onto the edge, eq. (18)); the
//! bend–twist projection rotates both quaternions half way towards the rest relative rotation
//! (eq. (21), rest-curvature form of docs/derivations/cosserat.md §B.5).
//!
//! Global step (eq. (13)), decoupled (docs/derivations/cosserat.md §B.7): positions solve three tridiagonal systems with
//! one prefactored matrix `M/h² + α M/h + (EA/l) L` (held nodes are Dirichlet rows, so moving
//! targets only change the right-hand side); each quaternion is the weighted average of its
//! targets, renormalised.
//!
//! Weights, in the quaternion metric `|Δu|² ≈ θ²/4` so that each PD term equals the continuum
//! energy to second order (docs/derivations/cosserat.md §B.6: the published `w_BT = 4GJ/l` gives twice the bending
//! stiffness, and the published `J` acts on world components):
//!   positions  `w = EA l` on `|Δx/l - d3|²`            (Soler eq. (22))
//!   shear      `w = 4 GA l`                            (shear energy `(l/2) GA θ²`)
//!   bend–twist `w = 8 EI / l`                          (`(l/2) EI (θ/l)²`; twist also gets EI)
//!   inertia    `w = 4 J_e / h²`, body frame            (`J θ²/(2h²)`)
//!   torque     quaternion force `2 u ∘ τ_body`         (docs/derivations/cosserat.md §B.6 advice)
//! Stiffness damping (β) is not available in PD; mass damping (α) is.
//!
//! Contact (obstacles, self-contact) enters as projection constraints
//! ([`NodePotential::project`]; Bouaziz et al. 2014): each active contact asks a point of one
//! segment (or a node) to sit at its projection onto the feasible set, with a weight [N/m].
//! A constraint on a segment point couples only the segment's two nodes, so the position
//! system stays tridiagonal: it is re-factored (O(N)) in each iteration that has any active
//! constraint, the contact-free factor is kept for the others. Self-contact pairs become two
//! such constraints, one on each segment (a Jacobi split of the pair: each side's target is
//! computed from the other's current position). No friction in PD, and no continuous
//! collision filter (PD has no line search): fast approaches can tunnel.

use super::CosseratRod;
use crate::math::{E3, Quat, Vec3};
use crate::rod::implicit::newton::Problem;
use crate::rod::implicit::{EndCondition, Integrator, Projection, SolverError, SolverReport};
use nalgebra::Quaternion;

/// Prefactored position matrix and local-step buffers.
#[derive(Clone, Debug)]
pub struct PdWork {
    /// Step the factor was built for [s], and the end conditions.
    key: (f64, EndCondition, EndCondition),
    /// LDLᵀ of the tridiagonal matrix: diagonal `d` and sub-diagonal multipliers `m`.
    d: Vec<f64>,
    m: Vec<f64>,
    /// The matrix itself (diagonal, sub-diagonal; Dirichlet rows applied), for re-factoring
    /// with contact constraints added.
    diag0: Vec<f64>,
    sub0: Vec<f64>,
    /// Scratch: the matrix with this iteration's constraints, and its factor.
    diag: Vec<f64>,
    sub: Vec<f64>,
    dc: Vec<f64>,
    mc: Vec<f64>,
    /// This iteration's active projections (capacity reused).
    proj: Vec<Projection>,
    off: f64,
    rhs: Vec<Vec3>,
    num: Vec<Quaternion<f64>>,
}

/// LDLᵀ (Thomas) of the symmetric tridiagonal matrix (`diag`, `sub`) into `d` and the
/// multipliers `m`: d_i = a_i − s_{i−1}²/d_{i−1}, m_{i−1} = s_{i−1}/d_{i−1}.
fn factor(diag: &[f64], sub: &[f64], d: &mut [f64], m: &mut [f64]) {
    let n = d.len() - 1;
    d[0] = diag[0];
    for i in 1..=n {
        m[i - 1] = sub[i - 1] / d[i - 1];
        d[i] = diag[i] - m[i - 1] * sub[i - 1];
    }
}

/// Solve with a factor from [`factor`], in place.
fn solve_factored(d: &[f64], m: &[f64], rhs: &mut [Vec3]) {
    let n = d.len() - 1;
    for i in 1..=n {
        let prev = rhs[i - 1];
        rhs[i] -= prev * m[i - 1];
    }
    for i in 0..=n {
        rhs[i] /= d[i];
    }
    for i in (0..n).rev() {
        let next = rhs[i + 1];
        rhs[i] -= next * m[i];
    }
}

impl PdWork {
    fn new(rod: &CosseratRod, h: f64) -> Self {
        let n = rod.params.segments;
        let p = &rod.params;
        let k = p.stretch_stiffness.z / p.segment_length; // EA / l
        let mut diag: Vec<f64> = rod
            .mass
            .iter()
            .map(|m| m / (h * h) + p.mass_damping * m / h)
            .collect();
        for e in 0..n {
            diag[e] += k;
            diag[e + 1] += k;
        }
        let held = |i: usize| {
            (i == 0 && rod.ends.0 != EndCondition::Free)
                || (i == n && rod.ends.1 != EndCondition::Free)
        };
        // Sub-diagonal -k, zeroed next to Dirichlet rows (the known value moves to the RHS).
        let mut sub = vec![-k; n];
        for i in 0..=n {
            if held(i) {
                diag[i] = 1.0;
                if i > 0 {
                    sub[i - 1] = 0.0;
                }
                if i < n {
                    sub[i] = 0.0;
                }
            }
        }
        let mut d = vec![0.0; n + 1];
        let mut m = vec![0.0; n];
        factor(&diag, &sub, &mut d, &mut m);
        PdWork {
            key: (h, rod.ends.0, rod.ends.1),
            d: d.clone(),
            m: m.clone(),
            diag: diag.clone(),
            sub: sub.clone(),
            diag0: diag,
            sub0: sub,
            dc: d,
            mc: m,
            proj: Vec::with_capacity(4 * (n + 1)),
            off: k,
            rhs: vec![Vec3::zeros(); n + 1],
            num: vec![Quaternion::new(0.0, 0.0, 0.0, 0.0); n],
        }
    }

    /// Add this iteration's projections (in `proj`) to a copy of the matrix and to the
    /// right-hand side, re-factor, and solve; without projections, solve with the kept
    /// factor. `held(i)`: node i is a Dirichlet row (value `x[i]`).
    fn solve(&mut self, x: &[Vec3], held: impl Fn(usize) -> bool) {
        if self.proj.is_empty() {
            solve_factored(&self.d, &self.m, &mut self.rhs);
            return;
        }
        self.diag.copy_from_slice(&self.diag0);
        self.sub.copy_from_slice(&self.sub0);
        for p in &self.proj {
            // Energy (w/2)|Σ c_a x_a − p|²: adds w c_a c_b to A[a][b], w c_a p to rhs[a].
            for a in 0..p.count {
                let i = p.nodes[a];
                if !held(i) {
                    self.diag[i] += p.weight * p.weights[a] * p.weights[a];
                    self.rhs[i] += p.target * (p.weight * p.weights[a]);
                }
            }
            if p.count == 2 {
                let (i, j) = (p.nodes[0], p.nodes[1]);
                debug_assert_eq!(j, i + 1, "a projection spans one segment");
                let c = p.weight * p.weights[0] * p.weights[1];
                match (held(i), held(j)) {
                    (false, false) => self.sub[i] += c,
                    // A Dirichlet neighbour's known value moves to the right-hand side.
                    (false, true) => self.rhs[i] -= x[j] * c,
                    (true, false) => self.rhs[j] -= x[i] * c,
                    (true, true) => {}
                }
            }
        }
        factor(&self.diag, &self.sub, &mut self.dc, &mut self.mc);
        solve_factored(&self.dc, &self.mc, &mut self.rhs);
    }
}

/// `q` or `-q`, whichever is closer to `reference`.
fn align(q: Quaternion<f64>, reference: &Quaternion<f64>) -> Quaternion<f64> {
    if q.coords.dot(&reference.coords) < 0.0 {
        -q
    } else {
        q
    }
}

/// The minimal rotation taking unit `a` to unit `b` (docs/derivations/cosserat.md §B.4 closed form).
fn from_two_vectors(a: &Vec3, b: &Vec3) -> Quaternion<f64> {
    let c = 1.0 + a.dot(b);
    if c < 1e-12 {
        let axis = crate::math::any_perpendicular(a);
        return Quaternion::new(0.0, axis.x, axis.y, axis.z);
    }
    let v = a.cross(b);
    Quaternion::new(c, v.x, v.y, v.z).normalize()
}

/// One PD step of length `h` [s] with `config.max_iterations` local/global iterations, with
/// the contact constraints `pot` projects in each iteration.
pub(crate) fn step(rod: &mut CosseratRod, problem: &Problem) -> Result<SolverReport, SolverError> {
    let (h, drive, pot) = (problem.h.expect("a step"), problem.drive, problem.pot);
    let n = rod.params.segments;
    let midpoint = rod.config.integrator == Integrator::ImplicitMidpoint;
    let he = if midpoint { 0.5 * h } else { h };
    let rebuild = match &rod.work.pd {
        Some(w) => w.key != (he, rod.ends.0, rod.ends.1),
        None => true,
    };
    if rebuild {
        rod.work.pd = Some(PdWork::new(rod, he));
    }
    let mut pw = rod.work.pd.take().expect("built above");
    let p = rod.params.clone();
    let l = p.segment_length;
    let d = super::newton::begin_step(rod, he, drive, midpoint);
    let held_node = |i: usize| {
        (i == 0 && rod.ends.0 != EndCondition::Free) || (i == n && rod.ends.1 != EndCondition::Free)
    };
    let ea = p.stretch_stiffness.z;
    let w_shear = 4.0 * p.stretch_stiffness.x * l;
    let w_bend = 8.0 * p.bend_stiffness.x.min(p.bend_stiffness.y) / l;
    // Rest relative rotation q0 with Im = lΩ̂/2 (Soler eq. (11) inverted).
    let im0 = p.rest_darboux * (0.5 * l);
    let q0 = Quaternion::new(
        (1.0 - im0.norm_squared()).max(0.0).sqrt(),
        im0.x,
        im0.y,
        im0.z,
    );
    let mut report = SolverReport::default();
    for _ in 0..rod.config.max_iterations {
        // Position right-hand side: inertia, damping, gravity, loads, and the SE targets l d3.
        for i in 0..=n {
            let m = rod.mass[i];
            pw.rhs[i] = rod.work.x_pred[i] * (m / (he * he))
                + rod.work.x_prev[i] * (p.mass_damping * m / he)
                + d.gravity * m;
        }
        pw.rhs[0] += d.start_force;
        pw.rhs[n] += d.end_force;
        for e in 0..n {
            let d3 = rod.q[e] * E3;
            pw.rhs[e + 1] += d3 * ea;
            pw.rhs[e] -= d3 * ea;
            // Quaternion targets: inertia, then shear (eq. (18)).
            let u = rod.q[e].into_inner();
            let inert = p.rotational_density * (4.0 * l / (he * he));
            let w_in = (inert.x + inert.y + inert.z) / 3.0;
            pw.num[e] = align(rod.work.q_pred[e].into_inner(), &u) * w_in;
            let edge = rod.x[e + 1] - rod.x[e];
            let b = (rod.q[e].inverse() * edge).normalize();
            let target = u * from_two_vectors(&E3, &b);
            pw.num[e] += align(target, &u) * w_shear;
        }
        // Dirichlet rows: the held value, and its coupling moved to the neighbours' RHS.
        for i in [0, n] {
            if held_node(i) {
                let xv = rod.x[i];
                pw.rhs[i] = xv;
                if i > 0 && !held_node(i - 1) {
                    pw.rhs[i - 1] += xv * pw.off;
                }
                if i < n && !held_node(i + 1) {
                    pw.rhs[i + 1] += xv * pw.off;
                }
            }
        }
        // Bend–twist targets (eq. (21), rest-curvature form).
        for j in 0..n.saturating_sub(1) {
            let ua = rod.q[j].into_inner();
            let ub = rod.q[j + 1].into_inner();
            let mut rel = ua.conjugate() * ub;
            if rel.w < 0.0 {
                rel = -rel;
            }
            let excess = rel * q0.conjugate();
            let half = (excess + Quaternion::identity()).normalize();
            let ta = ua * half;
            let tb = ub * (rel.conjugate() * half * q0);
            pw.num[j] += align(ta, &ua) * w_bend;
            pw.num[j + 1] += align(tb, &ub) * w_bend;
        }
        // Clamped ends: the half-length boundary joint (as in the Newton solver) pulls the end
        // segment all the way to the held frame times half the rest rotation; energy
        // (l/4) EI (2θ/l)² = EI θ²/l = (w/2)(θ²/4) gives the same weight 8 EI/l.
        let im_half = p.rest_darboux * (0.25 * l);
        let q_half = Quaternion::new(
            (1.0 - im_half.norm_squared()).max(0.0).sqrt(),
            im_half.x,
            im_half.y,
            im_half.z,
        );
        if rod.ends.0 == EndCondition::Clamped {
            let u = rod.q[0].into_inner();
            let target = d.start.rotation.into_inner() * q_half;
            pw.num[0] += align(target, &u) * w_bend;
        }
        if rod.ends.1 == EndCondition::Clamped {
            let u = rod.q[n - 1].into_inner();
            let target = d.end.rotation.into_inner() * q_half.conjugate();
            pw.num[n - 1] += align(target, &u) * w_bend;
        }
        // End torques as quaternion forces 2 u ∘ τ_body.
        for (e, tau) in [(0, d.start_torque), (n - 1, d.end_torque)] {
            let tb = rod.q[e].inverse() * tau;
            let u = rod.q[e].into_inner();
            pw.num[e] += u * Quaternion::new(0.0, tb.x, tb.y, tb.z) * 2.0;
        }
        // Contact projections at the current iterate (the local step's collision part).
        pw.proj.clear();
        {
            let proj = &mut pw.proj;
            pot.project(&rod.x, &mut |p| proj.push(p));
        }
        pw.solve(&rod.x, held_node);
        for i in 0..=n {
            if !held_node(i) {
                rod.x[i] = pw.rhs[i];
            }
        }
        for e in 0..n {
            rod.q[e] = Quat::new_normalize(pw.num[e]);
        }
        report.iterations += 1;
    }
    rod.work.pd = Some(pw);
    if rod.x.iter().any(|x| !x.iter().all(|v| v.is_finite())) {
        rod.x.copy_from_slice(&rod.work.x_prev);
        rod.q.copy_from_slice(&rod.work.q_prev);
        return Err(SolverError::NonFinite {
            iteration: report.iterations,
        });
    }
    super::newton::finish_step(rod, h, midpoint);
    rod.measure(&drive.gravity, &mut report);
    Ok(report)
}
