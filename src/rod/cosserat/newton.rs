//! Coupled implicit Newton solver for the Cosserat rod (digest-cosserat C.2): the implicit step
//! is the minimiser of the incremental potential
//!
//!   Φ(x, u) = Σ_i m_i/(2h²)|x_i - x̃_i|²  +  Σ_e (2/h²) Im(ũ_e⁻¹u_e)ᵀ J_e Im(ũ_e⁻¹u_e)
//!           + V_SE + V_BT  - Σ m_i g·x_i - F·x_end  - τ·(rotation of the end segment)
//!           + damping:  α m_i/(2h)|x_i - x_i^n|²  +  (β/h) [V_SE, V_BT with the previous
//!             strains as rest strains]
//!
//! where `x̃ = x^n + h v^n`, `ũ = u^n ∘ exp(h ω^n)` are the inertial predictions (Soler 2018
//! Algorithm 1, lines 1–3, eq. (14); the rotational term is the quaternion distance in the body
//! frame, `(2/h²)|Im|²_J ≈ (1/(2h²)) θᵀ J θ`, digest B.6 advice). The Newton system is banded
//! (half-bandwidth 8) and solved by Cholesky; an indefinite Hessian gets a Marquardt shift.
//! The gyroscopic term `ω × Jω` is omitted: for a suture `J/h²` is ~1e-9 of the elastic terms
//! (digest C.1).

use super::energy::{self, Hessian};
use super::potential::{NodePotential, PotentialSink, woodbury};
use super::{CosseratError, CosseratReport, CosseratRod, Drive, EndCondition, Integrator};
use crate::math::{Quat, Vec3, exp_quat};

/// A Newton solve has converged when the largest force (moment/l) imbalance is below this
/// fraction of the rod's force scale (weight + end loads + EI/L²), or when the Newton step falls
/// below `config.tolerance`.
const RESIDUAL_TOLERANCE: f64 = 1e-9;

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

/// What [`objective`] computes besides the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eval {
    /// Value, gradient and banded Hessian of the given kind.
    Full(Hessian),
    /// Value and gradient (a line-search trial that will not be continued from).
    Gradient,
}

#[allow(clippy::needless_range_loop)] // node, segment and joint indices address several arrays
/// Evaluate Φ at (x, q) (the trial point with `trial`) with its gradient, and with
/// `Eval::Full` its banded Hessian.
fn objective(
    rod: &mut CosseratRod,
    trial: bool,
    dynamics: Option<Dynamics>,
    drive: &Drive,
    eval: Eval,
    pot: &dyn NodePotential,
) -> f64 {
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
        Eval::Full(k) => k,
        Eval::Gradient => Hessian::Skip,
    };
    let hessian = kind != Hessian::Skip;
    if hessian {
        w.h.clear();
    }
    w.g.iter_mut().for_each(|v| *v = 0.0);
    let mut phi = 0.0;
    // Nodes: inertia, mass damping, gravity, end forces.
    for i in 0..=n {
        let m = rod.mass[i];
        let mut f_ext = rod.mass[i] * drive.gravity;
        if i == 0 {
            f_ext += drive.start_force;
        }
        if i == n {
            f_ext += drive.end_force;
        }
        phi -= f_ext.dot(&x[i]);
        let mut grad = -f_ext;
        let mut diag = 0.0;
        if let Some(d) = dynamics {
            let wi = m / (d.h * d.h);
            let dx = x[i] - w.x_pred[i];
            phi += 0.5 * wi * dx.norm_squared();
            grad += dx * wi;
            diag += wi;
            if p.mass_damping > 0.0 {
                let wd = p.mass_damping * m / d.h;
                let dv = x[i] - w.x_prev[i];
                phi += 0.5 * wd * dv.norm_squared();
                grad += dv * wd;
                diag += wd;
            }
        }
        for k in 0..3 {
            w.g[xi(i) + k] += grad[k];
            if hessian {
                w.h.add_diagonal(xi(i) + k, diag);
            }
        }
    }
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
            w.g[xi(e) + a] += g9[a];
        }
        if hessian {
            w.h.add_dense(xi(e), &h9);
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
            w.g[ti(j) + a] += g6[a];
            w.g[ti(j + 1) + a] += g6[3 + a];
        }
        if hessian {
            w.h.add_dense(ti(j), &h6.fixed_view::<3, 3>(0, 0).into_owned());
            w.h.add_dense(ti(j + 1), &h6.fixed_view::<3, 3>(3, 3).into_owned());
            w.h.add_block3(ti(j + 1), ti(j), &h6.fixed_view::<3, 3>(3, 0).into_owned());
        }
    }
    // Clamped ends: a bend–twist joint of length l/2 between the held frame and the end
    // segment, so the clamp acts at s = 0 (or L) and not at the segment's midpoint (digest
    // B.11 item 11: clamping the segment frame itself shortens the rod by l/2, an O(1/N) error).
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
            w.g[ti(e) + a] += g6[off + a];
        }
        if hessian {
            let h3 = h6.fixed_view::<3, 3>(off, off).into_owned();
            w.h.add_dense(ti(e), &h3);
        }
    }
    // Dead end torques: virtual work τ·(R δ), so ∂Φ/∂δ = -Rᵀτ (no potential; see `step_work`).
    let t0 = q[0].inverse() * drive.start_torque;
    let t1 = q[n - 1].inverse() * drive.end_torque;
    for k in 0..3 {
        w.g[ti(0) + k] -= t0[k];
        w.g[ti(n - 1) + k] -= t1[k];
    }
    // External potentials on the node positions (obstacle contact and friction).
    w.low_rank.clear();
    let mut sink = PotentialSink {
        g: &mut w.g,
        h: if hessian { Some(&mut w.h) } else { None },
        low_rank: if hessian { Some(&mut w.low_rank) } else { None },
        stride: 6,
        offset: 0,
    };
    phi += pot.evaluate(x, Some(&mut sink));
    phi += pot.evaluate_frames(q, Some(&mut sink));
    // Dirichlet degrees of freedom: held end positions, or every position (frames-only solve).
    let mut hold = |node: usize| {
        for k in 0..3 {
            w.g[xi(node) + k] = 0.0;
            if hessian {
                w.h.pin(xi(node) + k);
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
    for t in w.low_rank.iter_mut() {
        for a in 0..4 {
            if held(t.nodes[a]) {
                t.u[3 * a..3 * a + 3].iter_mut().for_each(|v| *v = 0.0);
            }
        }
    }
    phi
}

/// Largest force [N] and moment [N m] imbalance of the assembled gradient.
fn residual(rod: &CosseratRod) -> (f64, f64) {
    largest(&rod.work.g, rod.params.segments)
}

/// Largest absolute position and rotation entries of a vector over the unknowns.
fn largest(z: &[f64], n: usize) -> (f64, f64) {
    let (mut f, mut m) = (0.0f64, 0.0f64);
    for c in z.chunks(6) {
        f = f.max(c[0].abs()).max(c[1].abs()).max(c[2].abs());
        if c.len() == 6 {
            m = m.max(c[3].abs()).max(c[4].abs()).max(c[5].abs());
        }
    }
    debug_assert_eq!(z.len(), 6 * n + 3);
    (f, m)
}

/// The residual of the assembled gradient relative to the force scale.
fn report_residual(rod: &CosseratRod, fscale: f64, l: f64) -> f64 {
    let (f, m) = residual(rod);
    (f / fscale).max(m / (fscale * l))
}

/// Newton iterations on Φ from the current state (ends already imposed).
fn newton(
    rod: &mut CosseratRod,
    dynamics: Option<Dynamics>,
    drive: &Drive,
    max_iterations: usize,
    report: &mut CosseratReport,
    pot: &dyn NodePotential,
) -> Result<(), CosseratError> {
    let n = rod.params.segments;
    let l = rod.params.segment_length;
    let tol = rod.config.tolerance;
    let fscale = rod.force_scale(drive);
    let mut phi = objective(rod, false, dynamics, drive, Eval::Full(Hessian::Exact), pot);
    report.converged = false;
    // Levenberg–Marquardt floor on the shift, raised when the line search stalls far from
    // equilibrium (the Newton model is poor there) and relaxed after full steps.
    let mut min_shift = 0.0f64;
    // Whether `work.h` is out of date: the accepted point of the last line search was a
    // backtracked trial, evaluated without its Hessian.
    let mut stale = false;
    for it in 0..max_iterations {
        if !phi.is_finite() || rod.work.g.iter().any(|v| !v.is_finite()) {
            return Err(CosseratError::NonFinite { iteration: it });
        }
        if stale {
            // The same point and the same arithmetic as the trial: Φ and g are unchanged.
            objective(rod, false, dynamics, drive, Eval::Full(Hessian::Exact), pot);
            stale = false;
        }
        // Factor, with a Marquardt shift if the Hessian is indefinite. Far from equilibrium
        // (a large perturbation, digest D.13) the exact Hessian can be so indefinite that only
        // a huge shift helps; switch to the positive semi-definite Gauss–Newton Hessian at the
        // same point instead, then shift that if needed (static free rods: rigid modes).
        let mut mu = min_shift;
        let mut gauss_newton = false;
        loop {
            let w = &mut rod.work;
            if w.chol.factor_from(&w.h, mu).is_ok() {
                break;
            }
            mu = if mu == 0.0 { 1e-8 } else { mu * 10.0 };
            if !gauss_newton && mu > 1e-3 {
                objective(
                    rod,
                    false,
                    dynamics,
                    drive,
                    Eval::Full(Hessian::GaussNewton),
                    pot,
                );
                gauss_newton = true;
                mu = min_shift;
            } else if mu > 1e4 {
                return Err(CosseratError::Singular);
            }
            report.shifts += 1;
        }
        let w = &mut rod.work;
        w.dz.iter_mut().zip(&w.g).for_each(|(d, g)| *d = -g);
        w.chol.solve(&mut w.dz);
        woodbury(&w.chol, &w.low_rank, xi, &mut w.dz, &mut w.wb_y);
        let slope: f64 = w.dz.iter().zip(&w.g).map(|(d, g)| d * g).sum();
        let (dx_max, dth_max) = largest(&w.dz, n);
        // Work of the dead end torques along the step, τ·(R dθ) per unit t.
        let tq = {
            let d0 = Vec3::new(w.dz[ti(0)], w.dz[ti(0) + 1], w.dz[ti(0) + 2]);
            let d1 = Vec3::new(w.dz[ti(n - 1)], w.dz[ti(n - 1) + 1], w.dz[ti(n - 1) + 2]);
            drive.start_torque.dot(&(rod.q[0] * d0)) + drive.end_torque.dot(&(rod.q[n - 1] * d1))
        };
        let small = dx_max <= tol * l && dth_max <= tol;
        let res_now = report_residual(rod, fscale, l);
        // Backtracking line search (Armijo) on Φ, assembling at the accepted point, from the
        // largest step the external potential allows (no tunnelling through obstacles).
        let t_max = if !pot.limits_steps() {
            1.0
        } else {
            let w = &mut rod.work;
            for i in 0..=n {
                w.x_trial[i] = rod.x[i] + Vec3::new(w.dz[xi(i)], w.dz[xi(i) + 1], w.dz[xi(i) + 2]);
            }
            pot.max_step(&rod.x, &w.x_trial).clamp(1e-12, 1.0)
        };
        let mut t = t_max;
        let mut accepted = false;
        let mut qerr = 0.0f64;
        for _ in 0..40 {
            let w = &mut rod.work;
            for i in 0..=n {
                let d = Vec3::new(w.dz[xi(i)], w.dz[xi(i) + 1], w.dz[xi(i) + 2]);
                w.x_trial[i] = rod.x[i] + d * t;
            }
            qerr = 0.0;
            for e in 0..n {
                let d = Vec3::new(w.dz[ti(e)], w.dz[ti(e) + 1], w.dz[ti(e) + 2]);
                let (qn, er) = rotate(&rod.q[e], &(d * t));
                w.q_trial[e] = qn;
                qerr = qerr.max(er);
            }
            // The full step is assembled with its Hessian (it is usually taken); a backtracked
            // trial, and the last allowed iteration's, only with its gradient: the Hessian is
            // assembled once the next iteration needs it (`stale`).
            let eval = if it + 1 == max_iterations || t < 0.3 * t_max {
                Eval::Gradient
            } else {
                Eval::Full(Hessian::Exact)
            };
            let phi_t = objective(rod, true, dynamics, drive, eval, pot) - t * tq;
            // Armijo on Φ; near convergence Φ's decrease sinks below its rounding (a weight of
            // 1e-5 J against decreases of 1e-20 J), so a full step that halves the residual is
            // accepted too.
            if phi_t <= phi + 1e-4 * t * slope
                || (t == t_max && report_residual(rod, fscale, l) < 0.5 * res_now)
                || (small && phi_t <= phi + 1e-12 * phi.abs())
            {
                phi = phi_t + 0.0;
                accepted = true;
                stale = t < 0.3 * t_max;
                break;
            }
            t *= 0.5;
        }
        report.iterations = it + 1;
        if !accepted {
            // No decrease along this direction: at the rounding floor, stop; otherwise the
            // model is poor here: reassemble where we are and retry with a larger shift.
            objective(rod, false, dynamics, drive, Eval::Full(Hessian::Exact), pot);
            report.residual = report_residual(rod, fscale, l);
            if report.residual < 1e3 * RESIDUAL_TOLERANCE {
                report.converged = true;
                return Ok(());
            }
            if min_shift >= 1e4 {
                return Ok(());
            }
            min_shift = (mu * 100.0).max(1e-6);
            report.shifts += 1;
            continue;
        }
        std::mem::swap(&mut rod.x, &mut rod.work.x_trial);
        std::mem::swap(&mut rod.q, &mut rod.work.q_trial);
        report.max_quaternion_error = report.max_quaternion_error.max(qerr);
        // Φ now includes the accumulated torque work; keep it relative to the new point.
        phi += t * tq;
        let (f, m) = residual(rod);
        report.residual = (f / fscale).max(m / (fscale * l));
        if (small && t == 1.0) || report.residual <= RESIDUAL_TOLERANCE {
            report.converged = true;
            return Ok(());
        }
        // At the rounding floor (EA/l against forces of 1e-4 N leaves relative residuals of
        // ~1e-8) the line search only finds damped steps that change nothing: stop there, as
        // when no step is accepted at all.
        if t < 1.0 && report.residual > 0.5 * res_now && report.residual < 1e3 * RESIDUAL_TOLERANCE
        {
            report.converged = true;
            return Ok(());
        }
        // Levenberg–Marquardt update of the shift's floor (Moré 1978; Nocedal & Wright 2006,
        // §10.3): up ×100 past a stall, up ×10 after a short step (the quadratic model is poor
        // at this scale: Gauss–Newton on a suture pulled round a hole zig-zagged with steps of
        // 1/32 and 1/64 for all 40 iterations, the residual falling 3 % per iteration), down
        // ×100 after a full one.
        min_shift = if t < 1e-6 {
            (mu * 100.0).max(1e-6)
        } else if t < 0.1 {
            (min_shift * 10.0).max(1e-6)
        } else if t == 1.0 && min_shift > 1e-8 {
            min_shift * 0.01
        } else if t == 1.0 {
            0.0
        } else {
            min_shift
        };
    }
    Ok(())
}

/// One implicit step of length `h` [s].
pub fn step(
    rod: &mut CosseratRod,
    h: f64,
    drive: &Drive,
    pot: &dyn NodePotential,
) -> Result<CosseratReport, CosseratError> {
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
    let mut report = CosseratReport::default();
    let cap = rod.config.max_iterations;
    if let Err(e) = newton(rod, Some(Dynamics { h: he }), &d, cap, &mut report, pot) {
        rod.x.copy_from_slice(&rod.work.x_prev);
        rod.q.copy_from_slice(&rod.work.q_prev);
        return Err(e);
    }
    finish_step(rod, h, midpoint);
    if midpoint {
        // The frames carry (almost) no inertia (J/h² ~ 1e-9 of the elastic terms for a suture,
        // digest C.1): they are algebraic unknowns, and extrapolating them like positions would
        // leave them off their equilibrium at t_{n+1} and bleed energy. Re-solve them with the
        // positions held, so the state at t_{n+1} is consistent.
        rod.work.pin_positions = true;
        let mut rot = CosseratReport::default();
        let r = newton(rod, None, drive, cap, &mut rot, pot);
        rod.work.pin_positions = false;
        if let Err(e) = r {
            rod.x.copy_from_slice(&rod.work.x_prev);
            rod.q.copy_from_slice(&rod.work.q_prev);
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

/// Static equilibrium by Newton with line search and Marquardt shifts (a local minimum of the
/// potential energy, reached from the current state). Velocities are set to zero.
pub fn equilibrate(
    rod: &mut CosseratRod,
    drive: &Drive,
    pot: &dyn NodePotential,
) -> Result<CosseratReport, CosseratError> {
    rod.work.x_prev.copy_from_slice(&rod.x);
    rod.work.q_prev.copy_from_slice(&rod.q);
    CosseratRod::impose_ends(&mut rod.x, rod.ends, drive);
    let mut report = CosseratReport::default();
    let cap = rod.config.max_iterations.max(500);
    if let Err(e) = newton(rod, None, drive, cap, &mut report, pot) {
        rod.x.copy_from_slice(&rod.work.x_prev);
        rod.q.copy_from_slice(&rod.work.q_prev);
        return Err(e);
    }
    rod.v.iter_mut().for_each(|v| *v = Vec3::zeros());
    rod.omega.iter_mut().for_each(|v| *v = Vec3::zeros());
    rod.measure(&drive.gravity, &mut report);
    Ok(report)
}
