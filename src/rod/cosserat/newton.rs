//! Coupled implicit Newton solver for the Cosserat rod (docs/derivations/cosserat.md §C.2): the implicit step
//! is the minimiser of the incremental potential
//!
//!   Φ(x, u) = Σ_i m_i/(2h²)|x_i - x̃_i|²  +  Σ_e (2/h²) Im(ũ_e⁻¹u_e)ᵀ J_e Im(ũ_e⁻¹u_e)
//!           + V_SE + V_BT  - Σ m_i g·x_i - F·x_end  - τ·(rotation of the end segment)
//!           + damping:  α m_i/(2h)|x_i - x_i^n|²  +  (β/h) [V_SE, V_BT with the previous
//!             strains as rest strains]
//!
//! where `x̃ = x^n + h v^n`, `ũ = u^n ∘ exp(h ω^n)` are the inertial predictions (Soler 2018
//! Algorithm 1, lines 1–3, eq. (14); the rotational term is the quaternion distance in the body
//! frame, `(2/h²)|Im|²_J ≈ (1/(2h²)) θᵀ J θ`, docs/derivations/cosserat.md §B.6 advice). The Newton system is banded
//! (half-bandwidth 8) and solved by Cholesky; an indefinite Hessian gets a Marquardt shift.
//! The gyroscopic term `ω × Jω` is omitted: for a suture `J/h²` is ~1e-9 of the elastic terms
//! (docs/derivations/cosserat.md §C.1).

use super::CosseratRod;
use super::energy::{self, Hessian};
use crate::math::{Quat, Vec3, exp_quat};
use crate::rod::implicit::newton::{Eval, LinearSystem, NewtonRod, Nodes, Problem, newton};
use crate::rod::implicit::{
    Drive, DynamicParams, EndCondition, ImplicitRod, Integrator, Method, SolverConfig, SolverError,
    SolverReport,
};

/// Inertia and damping of one solve: `None` for a static (equilibrium) solve.
#[derive(Clone, Copy, Debug)]
struct Dynamics {
    /// Effective step [s] (h, or h/2 for the midpoint half step).
    h: f64,
}

/// Global index of node `i`'s first position coordinate.
#[inline]
fn xi(i: usize) -> usize {
    6 * i
}

/// Global index of segment `e`'s first rotation coordinate.
#[inline]
fn ti(e: usize) -> usize {
    6 * e + 3
}

/// Body-frame rotation increment: `u ∘ exp_q(δ)`, renormalised. Returns the norm error.
#[inline]
fn rotate(q: &Quat, d: &Vec3) -> (Quat, f64) {
    let r = q.into_inner() * exp_quat(d).into_inner();
    let n = r.norm();
    (Quat::new_unchecked(r / n), (1.0 - n).abs())
}

#[allow(clippy::needless_range_loop)] // node, segment and joint indices address several arrays
/// Evaluate Φ at (x, q) (the trial point with `trial`) with its gradient, and the banded
/// Hessian `eval` asks for.
fn objective(rod: &mut CosseratRod, trial: bool, eval: Eval, problem: &Problem) -> f64 {
    let dynamics = problem.h.map(|h| Dynamics { h });
    let (drive, pot) = (problem.drive, problem.pot);
    let p = &rod.params;
    let n = p.segments;
    let l = p.segment_length;
    let w = &mut rod.work;
    let (x, q) = if trial {
        (&w.x_trial, &w.q_trial)
    } else {
        (&rod.x, &rod.q)
    };
    let kind = match eval {
        Eval::Exact => Hessian::Exact,
        Eval::GaussNewton => Hessian::GaussNewton,
        Eval::Gradient => Hessian::Skip,
    };
    let hessian = kind != Hessian::Skip;
    let s = &mut w.sys;
    s.clear(hessian);
    // Nodes: inertia, mass damping, gravity, end forces.
    let nodes = Nodes::new(x, &w.x_pred, &w.x_prev, &rod.mass, (0, n), p.mass_damping);
    let mut phi = s.add_nodes(&nodes, problem, hessian);
    let zero = Vec3::zeros();
    let beta = dynamics.map_or(0.0, |d| p.stiffness_damping / d.h);
    // Segments: stretch–shear (+ its strain-rate damping) and rotational inertia. The element's
    // unknowns [x_e, δ_e, x_{e+1}] are the consecutive indices 6e .. 6e + 9.
    for e in 0..n {
        let r = q[e].to_rotation_matrix().into_inner();
        let (mut v, mut g9, mut h9) =
            energy::stretch_shear(&x[e], &x[e + 1], &r, l, &p.stretch_stiffness, &zero, kind);
        if p.broken == Some(e) {
            // A broken segment carries no stretch–shear (its nodes part); its frame keeps
            // its inertia.
            (v, g9, h9) = (0.0, Default::default(), Default::default());
        } else if beta > 0.0 {
            let c = p.stretch_stiffness * beta;
            let (vd, gd, hd) =
                energy::stretch_shear(&x[e], &x[e + 1], &r, l, &c, &w.gamma_prev[e], kind);
            v += vd;
            g9 += gd;
            h9 += hd;
        }
        phi += v;
        if let Some(d) = dynamics {
            // (2/h²) Im(ũ⁻¹u)ᵀ J Im(ũ⁻¹u) against the prediction (Soler eq. (14)).
            let c = p.rotational_density * (l / (d.h * d.h));
            let (vr, gr, hr) = energy::rotational_inertia(&w.q_pred[e], &q[e], &c, kind);
            phi += vr;
            let mut g3 = g9.fixed_rows_mut::<3>(3);
            g3 += gr;
            let mut h3 = h9.fixed_view_mut::<3, 3>(3, 3);
            h3 += hr;
        }
        for a in 0..9 {
            s.g[xi(e) + a] += g9[a];
        }
        if hessian {
            s.h.add_dense(xi(e), &h9);
        }
    }
    // Joints: bend–twist (+ damping).
    for j in 0..n.saturating_sub(1) {
        if p.broken.is_some_and(|b| b == j || b == j + 1) {
            continue;
        }
        let (mut v, mut g6, mut h6) = energy::bend_twist(
            &q[j],
            &q[j + 1],
            l,
            &p.bend_stiffness,
            &p.rest_darboux,
            kind,
        );
        if beta > 0.0 {
            let c = p.bend_stiffness * beta;
            let (vd, gd, hd) = energy::bend_twist(&q[j], &q[j + 1], l, &c, &w.omega_prev[j], kind);
            v += vd;
            g6 += gd;
            h6 += hd;
        }
        phi += v;
        for a in 0..3 {
            s.g[ti(j) + a] += g6[a];
            s.g[ti(j + 1) + a] += g6[3 + a];
        }
        if hessian {
            s.h.add_dense(ti(j), &h6.fixed_view::<3, 3>(0, 0).into_owned());
            s.h.add_dense(ti(j + 1), &h6.fixed_view::<3, 3>(3, 3).into_owned());
            s.h.add_block3(ti(j + 1), ti(j), &h6.fixed_view::<3, 3>(3, 0).into_owned());
        }
    }
    // Clamped ends: a bend–twist joint of length l/2 between the held frame and the end
    // segment, so the clamp acts at s = 0 (or L) and not at the segment's midpoint
    // (docs/derivations/cosserat.md §B.11 item 11: clamping the segment frame itself shortens the rod by l/2, an O(1/N) error).
    let half = 0.5 * l;
    let clamps = [
        (rod.ends.0, drive.start.rotation, q[0], 0, 3),
        (rod.ends.1, drive.end.rotation, q[n - 1], n - 1, 0),
    ];
    for (end, held_frame, seg, e, off) in clamps {
        if end != EndCondition::Clamped {
            continue;
        }
        // Start: joint (held, u_0), the segment is `b`; end: joint (u_{N-1}, held), it is `a`.
        let (qa, qb) = if off == 3 {
            (held_frame, seg)
        } else {
            (seg, held_frame)
        };
        let (v, g6, h6) =
            energy::bend_twist(&qa, &qb, half, &p.bend_stiffness, &p.rest_darboux, kind);
        phi += v;
        for a in 0..3 {
            s.g[ti(e) + a] += g6[off + a];
        }
        if hessian {
            let h3 = h6.fixed_view::<3, 3>(off, off).into_owned();
            s.h.add_dense(ti(e), &h3);
        }
    }
    // Dead end torques: virtual work τ·(R δ), so ∂Φ/∂δ = -Rᵀτ (no potential; see `step_work`).
    let t0 = q[0].inverse() * drive.start_torque;
    let t1 = q[n - 1].inverse() * drive.end_torque;
    for k in 0..3 {
        s.g[ti(0) + k] -= t0[k];
        s.g[ti(n - 1) + k] -= t1[k];
    }
    // External potentials on the node positions (obstacle contact and friction).
    let mut sink = s.sink(hessian);
    phi += pot.evaluate(x, Some(&mut sink));
    phi += pot.evaluate_frames(q, Some(&mut sink));
    // Dirichlet degrees of freedom: held end positions, or every position (frames-only solve).
    let mut hold = |node: usize| {
        for k in 0..3 {
            s.g[xi(node) + k] = 0.0;
            if hessian {
                s.h.pin(xi(node) + k);
            }
        }
    };
    if w.pin_positions {
        (0..=n).for_each(&mut hold);
    } else {
        if rod.ends.0 != EndCondition::Free {
            hold(0);
        }
        if rod.ends.1 != EndCondition::Free {
            hold(n);
        }
    }
    // Held positions are fixed: their entries leave the rank-one terms too.
    let held = |node: usize| {
        w.pin_positions
            || (node == 0 && rod.ends.0 != EndCondition::Free)
            || (node == n && rod.ends.1 != EndCondition::Free)
    };
    s.release_held(held);
    phi
}

impl NewtonRod for CosseratRod {
    fn parts(&mut self) -> (&DynamicParams, &SolverConfig, &mut LinearSystem) {
        (&self.params, &self.config, &mut self.work.sys)
    }
    fn load_scale(&self) -> f64 {
        // |R C Γ| = |C Γ|, the element's stretch–shear force (Soler 2018 eqs. (8)–(9);
        // energy::stretch_shear).
        let (l, c) = (self.params.segment_length, self.params.stretch_stiffness);
        (0..self.q.len())
            .filter(|&e| self.params.broken != Some(e))
            .map(|e| {
                let r = self.q[e].to_rotation_matrix().into_inner();
                energy::shear_strain(&self.x[e], &self.x[e + 1], &r, l)
                    .component_mul(&c)
                    .norm()
            })
            .fold(0.0, f64::max)
    }
    fn objective(&mut self, trial: bool, eval: Eval, p: &Problem) -> f64 {
        objective(self, trial, eval, p)
    }
    fn torque_work(&self, drive: &Drive) -> f64 {
        // τ·(R dθ) of the dead end torques.
        let n = self.params.segments;
        let dz = &self.work.sys.dz;
        let d0 = Vec3::new(dz[ti(0)], dz[ti(0) + 1], dz[ti(0) + 2]);
        let d1 = Vec3::new(dz[ti(n - 1)], dz[ti(n - 1) + 1], dz[ti(n - 1) + 2]);
        drive.start_torque.dot(&(self.q[0] * d0)) + drive.end_torque.dot(&(self.q[n - 1] * d1))
    }
    fn set_trial_positions(&mut self, t: f64) {
        let w = &mut self.work;
        let dz = &w.sys.dz;
        for i in 0..=self.params.segments {
            let d = Vec3::new(dz[xi(i)], dz[xi(i) + 1], dz[xi(i) + 2]);
            w.x_trial[i] = self.x[i] + d * t;
        }
    }
    fn set_trial_rest(&mut self, t: f64) -> f64 {
        let w = &mut self.work;
        let dz = &w.sys.dz;
        let mut qerr = 0.0f64;
        for e in 0..self.params.segments {
            let d = Vec3::new(dz[ti(e)], dz[ti(e) + 1], dz[ti(e) + 2]);
            let (qn, er) = rotate(&self.q[e], &(d * t));
            w.q_trial[e] = qn;
            qerr = qerr.max(er);
        }
        qerr
    }
    fn positions_and_trial(&self) -> (&[Vec3], &[Vec3]) {
        (&self.x, &self.work.x_trial)
    }
    fn take_trial(&mut self) {
        std::mem::swap(&mut self.x, &mut self.work.x_trial);
        std::mem::swap(&mut self.q, &mut self.work.q_trial);
    }
    const GAUSS_NEWTON: bool = true;
    const MAX_SHIFT: f64 = 1e4;
}

impl ImplicitRod for CosseratRod {
    fn node_positions(&self) -> &[Vec3] {
        &self.x
    }
    fn hold(&mut self, drive: &Drive) {
        self.work.held_prev = self.held_frames;
        self.held_frames = (drive.start.rotation, drive.end.rotation);
        self.work.v_start.copy_from_slice(&self.v);
        self.work.omega_start.copy_from_slice(&self.omega);
    }
    fn release(&mut self) {
        self.held_frames = self.work.held_prev;
    }
    fn rewind(&mut self) {
        self.restore();
        self.v.copy_from_slice(&self.work.v_start);
        self.omega.copy_from_slice(&self.work.omega_start);
    }
    fn save(&mut self) {
        self.work.x_prev.copy_from_slice(&self.x);
        self.work.q_prev.copy_from_slice(&self.q);
    }
    fn restore(&mut self) {
        self.x.copy_from_slice(&self.work.x_prev);
        self.q.copy_from_slice(&self.work.q_prev);
    }
    fn max_node_speed(&self) -> f64 {
        self.v.iter().map(|v| v.norm()).fold(0.0, f64::max)
    }
    fn impose(&mut self, drive: &Drive) {
        CosseratRod::impose_ends(&mut self.x, self.ends, drive);
    }
    fn settle(&mut self, gravity: &Vec3, report: &mut SolverReport) {
        self.v.iter_mut().for_each(|v| *v = Vec3::zeros());
        self.omega.iter_mut().for_each(|v| *v = Vec3::zeros());
        self.measure(gravity, report);
    }
    /// The PD solver sees the potential through `NodePotential::project` (contact as
    /// projections).
    fn solve_step(&mut self, p: &Problem) -> Result<SolverReport, SolverError> {
        match self.config.method {
            Method::Newton => step(self, p),
            Method::Pd => super::pd::step(self, p),
        }
    }
    fn subdivisions(&self) -> usize {
        match self.config.method {
            Method::Newton => self.config.subdivide,
            Method::Pd => 0,
        }
    }
    fn checkpoint(&mut self) {
        self.work.checkpoint_held = self.work.held_prev;
        let (x, q, v, omega) = &mut self.work.checkpoint;
        x.copy_from_slice(&self.x);
        q.copy_from_slice(&self.q);
        v.copy_from_slice(&self.v);
        omega.copy_from_slice(&self.omega);
    }
    fn to_checkpoint(&mut self) {
        let w = &mut self.work;
        let (x, q, v, omega) = &w.checkpoint;
        w.x_prev.copy_from_slice(x);
        w.q_prev.copy_from_slice(q);
        w.v_start.copy_from_slice(v);
        w.omega_start.copy_from_slice(omega);
        w.held_prev = w.checkpoint_held;
        self.rewind();
    }
    /// The second half starts where the first ended: its velocities, and (the midpoint rule's
    /// half-way frame) the held frames the first half reached.
    fn restart(&mut self) {
        self.work.v_start.copy_from_slice(&self.v);
        self.work.omega_start.copy_from_slice(&self.omega);
        self.work.held_prev = self.held_frames;
    }
}

/// One implicit step of length `problem.h` [s].
pub(crate) fn step(rod: &mut CosseratRod, problem: &Problem) -> Result<SolverReport, SolverError> {
    let (h, drive, pot) = (problem.h.expect("a step"), problem.drive, problem.pot);
    let n = rod.params.segments;
    let l = rod.params.segment_length;
    let midpoint = rod.config.integrator == Integrator::ImplicitMidpoint;
    let he = if midpoint { 0.5 * h } else { h };
    {
        let w = &mut rod.work;
        for e in 0..n {
            let r = rod.q[e].to_rotation_matrix().into_inner();
            w.gamma_prev[e] = energy::shear_strain(&rod.x[e], &rod.x[e + 1], &r, l);
        }
        for j in 0..n.saturating_sub(1) {
            w.omega_prev[j] = energy::darboux(&rod.q[j], &rod.q[j + 1], l);
        }
    }
    let d = begin_step(rod, he, drive, midpoint);
    // Warm start at the inertial prediction, unless it would pass into an obstacle: then from
    // the (contact-feasible) start of the step, as Incremental Potential Contact does.
    if pot.limits_steps() && pot.max_step(&rod.work.x_prev, &rod.x) < 1.0 {
        rod.x.copy_from_slice(&rod.work.x_prev);
    }
    CosseratRod::impose_ends(&mut rod.x, rod.ends, &d);
    let mut report = SolverReport::default();
    let cap = rod.config.max_iterations;
    let p = Problem {
        h: Some(he),
        drive: &d,
        pot,
    };
    if let Err(e) = newton(rod, &p, cap, &mut report) {
        rod.restore();
        return Err(e);
    }
    finish_step(rod, h, midpoint);
    if midpoint {
        // The frames carry (almost) no inertia (J/h² ~ 1e-9 of the elastic terms for a suture,
        // docs/derivations/cosserat.md §C.1): they are algebraic unknowns, and extrapolating them like positions would
        // leave them off their equilibrium at t_{n+1} and bleed energy. Re-solve them with the
        // positions held, so the state at t_{n+1} is consistent.
        rod.work.pin_positions = true;
        let mut rot = SolverReport::default();
        let p = Problem {
            h: None,
            drive,
            pot,
        };
        let r = newton(rod, &p, cap, &mut rot);
        rod.work.pin_positions = false;
        if let Err(e) = r {
            rod.restore();
            return Err(e);
        }
        report.iterations += rot.iterations;
        report.shifts += rot.shifts;
        let n = rod.params.segments;
        for e in 0..n {
            rod.omega[e] = (rod.work.q_prev[e].inverse() * rod.q[e]).scaled_axis() / h;
        }
    }
    rod.measure(&drive.gravity, &mut report);
    Ok(report)
}

/// Start a step: remember the state, move it to the inertial prediction `x + he v`,
/// `u ∘ exp(he ω)` (Soler Algorithm 1, lines 1–3) as the warm start, and return the drive whose
/// held ends are those of the step's end (Euler) or half way there (midpoint half step), with
/// the held node positions imposed. Shared by the Newton and PD solvers.
pub(crate) fn begin_step(rod: &mut CosseratRod, he: f64, drive: &Drive, midpoint: bool) -> Drive {
    let n = rod.params.segments;
    let w = &mut rod.work;
    w.x_prev.copy_from_slice(&rod.x);
    w.q_prev.copy_from_slice(&rod.q);
    for i in 0..=n {
        w.x_pred[i] = rod.x[i] + rod.v[i] * he;
    }
    for e in 0..n {
        w.q_pred[e] = rod.q[e] * exp_quat(&(rod.omega[e] * he));
    }
    rod.x.copy_from_slice(&w.x_pred);
    rod.q.copy_from_slice(&w.q_pred);
    let mut d = *drive;
    if midpoint {
        let (q0, qn) = w.held_prev;
        d.start.position = (w.x_prev[0] + drive.start.position) * 0.5;
        d.end.position = (w.x_prev[n] + drive.end.position) * 0.5;
        d.start.rotation = q0.slerp(&align(&drive.start.rotation, &q0), 0.5);
        d.end.rotation = qn.slerp(&align(&drive.end.rotation, &qn), 0.5);
    }
    CosseratRod::impose_ends(&mut rod.x, rod.ends, &d);
    d
}

/// The same sign as `reference` (q and -q are the same rotation).
fn align(q: &Quat, reference: &Quat) -> Quat {
    if q.coords.dot(&reference.coords) < 0.0 {
        Quat::new_unchecked(-q.into_inner())
    } else {
        *q
    }
}

/// Velocities from the solved positions; for the midpoint rule, extrapolate the half step.
pub(crate) fn finish_step(rod: &mut CosseratRod, h: f64, midpoint: bool) {
    let n = rod.params.segments;
    let w = &rod.work;
    if midpoint {
        let he = 0.5 * h;
        for i in 0..=n {
            let v_half = (rod.x[i] - w.x_prev[i]) / he;
            rod.x[i] = rod.x[i] * 2.0 - w.x_prev[i];
            rod.v[i] = v_half * 2.0 - rod.v[i];
        }
        for e in 0..n {
            let half = (w.q_prev[e].inverse() * rod.q[e]).scaled_axis();
            rod.q[e] = w.q_prev[e] * Quat::from_scaled_axis(half * 2.0);
            rod.omega[e] = half / he * 2.0 - rod.omega[e];
        }
    } else {
        for i in 0..=n {
            rod.v[i] = (rod.x[i] - w.x_prev[i]) / h;
        }
        for e in 0..n {
            rod.omega[e] = (w.q_prev[e].inverse() * rod.q[e]).scaled_axis() / h;
        }
    }
}
