//! Pai 2002, "STRANDS: Interactive Simulation of Thin Solids using Cosserat Models": the
//! quasi-static Cosserat rod solved by a backward sweep (stresses and strains) and a forward
//! sweep (frames and positions), with Newton shooting for world-frame loads and posed ends.
//!
//! Read docs/derivations/cosserat.md Part A before changing this file. What differs from the printed paper:
//! - Signs follow the classical convention (docs/derivations/cosserat.md §A.3): `n(s)`, `m(s)` are the force and moment
//!   that the part beyond `s` exerts on the part before it, `m = K(u - û)`, and the applied loads
//!   enter with their physical sign. Pai's eqs. (3)/(5) hold with `η` negated.
//! - Eqs. (9a)+(9b) rotate the force twice (docs/derivations/cosserat.md §A.6, "CORRECTION"); here each segment is
//!   integrated in the fixed frame of its tip-side node and transformed once, exactly.
//! - Strain is piecewise constant, one value per segment (eq. (12)); the balance of force and
//!   moment over a segment is integrated *exactly* for that geometry and a uniform world-frame
//!   load, so the only discretisation error is where the constitutive law `m = K(u - û)` is
//!   collocated: at the segment's base-side node ([`Scheme::Euler`], first order like the paper)
//!   or at its midpoint ([`Scheme::Midpoint`], second order). Both are exact for constant-strain
//!   solutions (circles, helices, uniform twist).
//! - Eq. (13) divides by |u|; [`crate::math::Arc`] uses the singularity-free series.
//! - World-frame (dead) loads make the body-frame loads depend on the unknown frames (docs/derivations/cosserat.md §A.8).
//!   They are handled exactly by shooting on the tip frame: the backward sweep starts from a
//!   guessed tip orientation `Q`, carries the world orientation down the rod, and Newton drives
//!   the orientation it arrives with at the base onto the clamped base (3 unknowns). Posed ends
//!   add the tip reaction force (pinned) or wrench (clamped) as unknowns with the base position
//!   as residual (Pai A.7: single shooting, Newton with backtracking, finite-difference Jacobian).
//!   Loads and poses are reached by continuation when a direct Newton solve fails; there is no
//!   lagged fixed point anywhere (docs/derivations/cosserat.md §A.8: Picard diverges for α ≥ 3).
//! - Under axial tension the backward sweep amplifies rounding like `exp(∫ sqrt(T/EI) ds)`
//!   (docs/derivations/cosserat.md §A.8). Every sweep measures that factor; a solution whose amplification exceeds
//!   [`StrandsConfig::max_amplification`] is refused with [`StrandsError::IllConditioned`].

use crate::math::{Arc, Mat3, Vec3, exp_so3, log_so3, orthonormalize};

/// Where the constitutive law is collocated on each constant-strain segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scheme {
    /// First order: at the base-side node of the segment (Pai 2002 eq. (10), corrected as
    /// docs/derivations/cosserat.md §A.6 variant (a)).
    Euler,
    /// Second order: at the segment midpoint (a Magnus/midpoint collocation of the same sweep).
    #[default]
    Midpoint,
}

impl Scheme {
    /// Fraction of the segment, from its base-side node, at which `m = K(u - û)` is imposed.
    fn collocation(self) -> f64 {
        match self {
            Scheme::Euler => 0.0,
            Scheme::Midpoint => 0.5,
        }
    }
}

/// Boundary condition at the tip (`s = L`). The base (`s = 0`) is always clamped: the Standard
/// BVP of Pai 2002 eq. (7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tip {
    /// Wrench given (the applied tip load): Pai's Standard BVP, eq. (8).
    Free,
    /// Position imposed [m, world], moment free (equal to the applied tip torque).
    Pinned {
        /// Tip position [m].
        position: Vec3,
    },
    /// Full pose imposed (the needle held by the hand): Pai A.7, shooting.
    Clamped {
        /// Tip frame, body to world (columns d1, d2, d3 = tangent).
        rotation: Mat3,
        /// Tip position [m].
        position: Vec3,
    },
}

/// One quasi-static problem: what holds the rod and what loads it, all in world frame, SI.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrandsProblem {
    /// Base frame, body to world.
    pub base_rotation: Mat3,
    /// Base position [m].
    pub base_position: Vec3,
    /// Tip condition.
    pub tip: Tip,
    /// Applied tip force, world frame [N] (ignored by a clamped tip, which takes it as reaction).
    pub tip_force: Vec3,
    /// Applied tip torque, world frame [N m].
    pub tip_torque: Vec3,
    /// Uniform distributed force, world frame [N/m], e.g. weight `ρ A g`.
    pub distributed_force: Vec3,
}

/// Solver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrandsConfig {
    /// Collocation scheme.
    pub scheme: Scheme,
    /// Newton stops when the base residual is below this (max norm; rotation [rad], position
    /// [in units of L]).
    pub tolerance: f64,
    /// Newton iterations per (continuation) solve.
    pub max_newton_iterations: usize,
    /// Continuation steps before giving up.
    pub max_continuation_steps: usize,
    /// Largest accepted rounding amplification of the backward sweep, `exp(∫ sqrt(T/EI) ds)`.
    pub max_amplification: f64,
}

impl Default for StrandsConfig {
    fn default() -> Self {
        StrandsConfig {
            scheme: Scheme::Midpoint,
            tolerance: 1e-13,
            max_newton_iterations: 30,
            max_continuation_steps: 400,
            max_amplification: 1e8,
        }
    }
}

/// Why a STRANDS solve failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StrandsError {
    /// The posed tip is farther from the base than the rod is long.
    #[error(
        "posed tip is unreachable: the ends are {distance:.6} m apart but the rod is {length:.6} m long"
    )]
    Unreachable {
        /// Distance between the base and the imposed tip position [m].
        distance: f64,
        /// Rod length [m].
        length: f64,
    },
    /// Axial tension makes the backward sweep lose all precision (docs/derivations/cosserat.md §A.8).
    #[error(
        "tension too high for the two-sweep method: T L²/EI = {tension_number:.3e}, rounding amplified by 1e{log10_amplification:.1} (limit 1e{log10_limit:.1}); use a dynamic model (cosserat) for taut sutures"
    )]
    IllConditioned {
        /// Largest `T L² / EI` along the rod.
        tension_number: f64,
        /// log10 of the sweep's rounding amplification.
        log10_amplification: f64,
        /// log10 of the configured limit.
        log10_limit: f64,
    },
    /// Newton with continuation did not reach the tolerance.
    #[error(
        "shooting did not converge: residual {residual:.3e} after {iterations} Newton iterations"
    )]
    NotConverged {
        /// Best residual reached.
        residual: f64,
        /// Newton iterations spent.
        iterations: usize,
    },
}

/// What one solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StrandsReport {
    /// Newton iterations (all continuation steps together).
    pub newton_iterations: usize,
    /// Backward sweeps run (including finite-difference Jacobian columns).
    pub sweeps: usize,
    /// Continuation steps taken (0 when the direct solve converged).
    pub continuation_steps: usize,
    /// Final residual (max norm).
    pub residual: f64,
    /// Rounding amplification `exp(∫ sqrt(T/EI) ds)` of the final backward sweep.
    pub amplification: f64,
    /// Largest `T L²/EI` of the solution (axial tension number).
    pub tension_number: f64,
}

/// Result of one backward sweep.
#[derive(Clone, Copy, Debug)]
struct Sweep {
    /// Base orientation reached from the tip orientation.
    base_rotation: Mat3,
    /// `r(0) - r(L)` [m, world].
    base_from_tip: Vec3,
    /// `∫ sqrt(max(T,0)/EI) ds`.
    log_amplification: f64,
    /// Largest axial tension [N].
    max_tension: f64,
    /// All local solves converged and everything is finite.
    ok: bool,
}

/// The unknowns of the shooting problem, as absolute values.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Unknowns {
    tip_rotation: Mat3,
    tip_force: Vec3,
    tip_torque: Vec3,
}

/// A quasi-static Cosserat rod (inextensible, unshearable) with the Pai 2002 two-sweep solver.
///
/// Index spaces: nodes `0..=n` (positions, frames, internal force), segments `0..n` (strain).
#[derive(Clone, Debug)]
pub struct Strands {
    length: f64,
    n: usize,
    h: f64,
    /// `K = diag(EI1, EI2, GJ)` [N m²].
    stiffness: Vec3,
    inv_stiffness: Vec3,
    /// Rest strain `û` per segment [1/m] (κ1, κ2, twist).
    rest_strain: Vec<Vec3>,
    config: StrandsConfig,
    /// Strain `u` per segment [1/m], body frame.
    strain: Vec<Vec3>,
    /// `R_{k+1} = R_k d_rot[k]`.
    d_rot: Vec<Mat3>,
    /// `r_{k+1} - r_k` in frame k [m].
    d_pos: Vec<Vec3>,
    /// Internal force per node, body frame [N].
    force: Vec<Vec3>,
    /// Frames per node, body to world.
    rotations: Vec<Mat3>,
    /// Positions per node [m].
    positions: Vec<Vec3>,
    /// Current unknowns (warm start).
    unknowns: Unknowns,
    /// The strain before the current solve (branch guard), kept to avoid allocating per solve.
    strain_before: Vec<Vec3>,
    /// The last problem solved, with `unknowns` its solution.
    solved: Option<StrandsProblem>,
    /// Largest sweep amplification (log) of the iterates of the current solve.
    max_log_amplification: f64,
    /// Point loads per node, world frame [N] (contact as lagged loads); all zero by default.
    point_loads: Vec<Vec3>,
}

/// The moment at the collocation point in its own frame, minus the constitutive moment, divided
/// by K: `g(u) = û + K⁻¹ m_c(u) - u`. Zero at the segment's strain.
///
/// Moment at distance σ back from the tip-side node, in that node's frame, for a uniform load f
/// (exact for the constant-strain arc; see module docs):
///   M(σ) = m_b + P(σ) × n_b + (σ P(σ) - PP(σ)) × f_b,
/// with P, PP the chord and its first moment of the backward arc (rate -u), and
/// m_c = exp(-σ[u])ᵀ M(σ).
#[inline]
#[allow(clippy::too_many_arguments)] // a hot kernel: plain arguments, no struct shuffling
fn strain_map(
    u: &Vec3,
    u_hat: &Vec3,
    inv_k: &Vec3,
    m_b: &Vec3,
    n_b: &Vec3,
    f_b: &Vec3,
    sc: f64,
) -> (Vec3, Arc) {
    let arc = Arc::new(&(-u), sc);
    let m_sc = m_b + arc.p.cross(n_b) + (arc.p * sc - arc.pp).cross(f_b);
    let m_c = arc.rot.transpose() * m_sc;
    (u_hat + m_c.component_mul(inv_k) - u, arc)
}

/// Solve `u = û + K⁻¹ m_c(u)` for one segment: fixed-point passes (contraction ≈ σ|m|/EI, fast
/// on fine meshes), then Newton with a finite-difference 3×3 Jacobian and backtracking when the
/// segment is long or strongly curved. Returns the strain and the collocation arc for it.
#[inline]
#[allow(clippy::too_many_arguments)]
fn local_strain(
    guess: Vec3,
    u_hat: &Vec3,
    inv_k: &Vec3,
    m_b: &Vec3,
    n_b: &Vec3,
    f_b: &Vec3,
    sc: f64,
    inv_len: f64,
) -> Option<(Vec3, Arc)> {
    let mut u = guess;
    let (mut g, mut arc) = strain_map(&u, u_hat, inv_k, m_b, n_b, f_b, sc);
    let tol = |u: &Vec3| 1e-15 * (u.amax() + inv_len);
    let mut prev = f64::INFINITY;
    for _ in 0..12 {
        let du = g.amax();
        if du <= tol(&u) {
            return Some((u, arc));
        }
        if du.is_nan() || du >= 0.5 * prev {
            break;
        }
        prev = du;
        u += g;
        (g, arc) = strain_map(&u, u_hat, inv_k, m_b, n_b, f_b, sc);
    }
    // Newton on g(u) = 0.
    for _ in 0..40 {
        let norm = g.amax();
        if norm <= tol(&u) {
            return Some((u, arc));
        }
        if !norm.is_finite() {
            return None;
        }
        let eps = 1e-7 * (u.amax() + inv_len);
        let mut jac = Mat3::zeros();
        for i in 0..3 {
            let mut ui = u;
            ui[i] += eps;
            let (gi, _) = strain_map(&ui, u_hat, inv_k, m_b, n_b, f_b, sc);
            jac.set_column(i, &((gi - g) / eps));
        }
        let step = jac.lu().solve(&(-g))?;
        let mut t = 1.0;
        loop {
            let ut = u + step * t;
            let (gt, at) = strain_map(&ut, u_hat, inv_k, m_b, n_b, f_b, sc);
            if gt.amax() < (1.0 - 1e-4 * t) * norm || gt.amax() <= tol(&ut) {
                u = ut;
                g = gt;
                arc = at;
                break;
            }
            t *= 0.5;
            if t < 1e-6 {
                // Stagnation at rounding level counts as converged.
                return (norm <= 1e3 * tol(&u)).then_some((u, arc));
            }
        }
    }
    None
}

/// Largest change of any strain component, times L, that one continuation step may make. Larger
/// changes are taken as a jump to another equilibrium branch and the step is halved.
const MAX_STRAIN_CHANGE: f64 = 1.0;

/// A Newton iteration that can no longer decrease the residual is accepted below this residual
/// (rad, or units of L): the rounding floor of long rods and high loads lies around 1e-13.
const STAGNATION_FLOOR: f64 = 1e-10;

/// Small dense solve `A x = b` (Gaussian elimination, partial pivoting) for d ≤ 6.
fn solve_small(a: &mut [[f64; 6]; 6], b: &mut [f64; 6], d: usize) -> Option<[f64; 6]> {
    for col in 0..d {
        let piv = (col..d).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 || !a[piv][col].is_finite() {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..d {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (dst, src) in a[row][col..d].iter_mut().zip(&pivot_row[col..d]) {
                *dst -= f * src;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 6];
    for row in (0..d).rev() {
        let mut s = b[row];
        for k in row + 1..d {
            s -= a[row][k] * x[k];
        }
        x[row] = s / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn max_abs(r: &[f64; 6], d: usize) -> f64 {
    r[..d].iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// Interpolate between two rotations along the geodesic, `a exp(t log(aᵀ b))`.
fn slerp(a: &Mat3, b: &Mat3, t: f64) -> Mat3 {
    a * exp_so3(&(log_so3(&(a.transpose() * b)) * t))
}

impl StrandsProblem {
    /// Feed every field to a state digest (the last problem a rod solved is warm-start state).
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let StrandsProblem {
            base_rotation,
            base_position,
            tip,
            tip_force,
            tip_torque,
            distributed_force,
        } = self;
        d.mat3(base_rotation);
        d.vec3(base_position);
        match tip {
            Tip::Free => d.u64(0),
            Tip::Pinned { position } => {
                d.u64(1);
                d.vec3(position);
            }
            Tip::Clamped { rotation, position } => {
                d.u64(2);
                d.mat3(rotation);
                d.vec3(position);
            }
        }
        d.vec3(tip_force);
        d.vec3(tip_torque);
        d.vec3(distributed_force);
    }

    /// The problem a fraction `t` of the way from `self` to `other` (same tip kind): poses along
    /// geodesics, loads linearly. The continuation path of [`Strands::solve`].
    fn lerp(&self, other: &StrandsProblem, t: f64) -> StrandsProblem {
        let tip = match (self.tip, other.tip) {
            (Tip::Pinned { position: a }, Tip::Pinned { position: b }) => Tip::Pinned {
                position: a.lerp(&b, t),
            },
            (
                Tip::Clamped {
                    rotation: ra,
                    position: pa,
                },
                Tip::Clamped {
                    rotation: rb,
                    position: pb,
                },
            ) => Tip::Clamped {
                rotation: slerp(&ra, &rb, t),
                position: pa.lerp(&pb, t),
            },
            _ => other.tip,
        };
        StrandsProblem {
            base_rotation: slerp(&self.base_rotation, &other.base_rotation, t),
            base_position: self.base_position.lerp(&other.base_position, t),
            tip,
            tip_force: self.tip_force.lerp(&other.tip_force, t),
            tip_torque: self.tip_torque.lerp(&other.tip_torque, t),
            distributed_force: self.distributed_force.lerp(&other.distributed_force, t),
        }
    }
}

impl Strands {
    /// A rod of length `length` [m] in `n` segments with stiffness `K = diag(EI1, EI2, GJ)`
    /// [N m²] and uniform rest strain `û = (κ1, κ2, τ)` [1/m]. It starts in its rest shape.
    pub fn new(
        length: f64,
        n: usize,
        stiffness: Vec3,
        rest_strain: Vec3,
        config: StrandsConfig,
    ) -> Strands {
        assert!(n >= 1 && length > 0.0, "invariant: validated by the scene");
        let inv_stiffness = Vec3::new(1.0 / stiffness.x, 1.0 / stiffness.y, 1.0 / stiffness.z);
        Strands {
            length,
            n,
            h: length / n as f64,
            stiffness,
            inv_stiffness,
            rest_strain: vec![rest_strain; n],
            config,
            strain: vec![rest_strain; n],
            d_rot: vec![Mat3::identity(); n],
            d_pos: vec![Vec3::zeros(); n],
            force: vec![Vec3::zeros(); n + 1],
            rotations: vec![Mat3::identity(); n + 1],
            positions: vec![Vec3::zeros(); n + 1],
            strain_before: Vec::with_capacity(n),
            unknowns: Unknowns {
                tip_rotation: Mat3::identity(),
                tip_force: Vec3::zeros(),
                tip_torque: Vec3::zeros(),
            },
            solved: None,
            max_log_amplification: 0.0,
            point_loads: vec![Vec3::zeros(); n + 1],
        }
    }

    /// Set the point load on every node, world frame [N] (`loads.len()` = nodes), applied by
    /// every following solve until changed: dead loads, e.g. contact forces lagged from the
    /// previous solution. A load on the base node is carried by the base support; on the tip
    /// node it adds to the tip force.
    pub fn set_point_loads(&mut self, loads: &[Vec3]) {
        assert_eq!(loads.len(), self.n + 1, "one load per node");
        self.point_loads.copy_from_slice(loads);
    }

    /// The point loads per node, world frame [N].
    pub fn point_loads(&self) -> &[Vec3] {
        &self.point_loads
    }

    /// Feed the state a solve carries to the next (a state digest, `sim::World::digest`):
    /// the equilibrium (strains, the sweeps' increments, internal forces, frames, positions),
    /// the warm start (the shooting unknowns and the last problem solved, from which a failed
    /// warm start continues), the point loads (lagged contact) and the rest strain. Every
    /// field is named here, so a new one must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Strands {
            // Set at construction from the scene (material, discretisation, solver).
            length: _,
            n: _,
            h: _,
            stiffness: _,
            inv_stiffness: _,
            config: _,
            // Scratch of one solve: overwritten before it is read.
            strain_before: _,
            max_log_amplification: _,
            rest_strain,
            strain,
            d_rot,
            d_pos,
            force,
            rotations,
            positions,
            unknowns,
            solved,
            point_loads,
        } = self;
        d.vec3s(rest_strain);
        d.vec3s(strain);
        d_rot.iter().for_each(|m| d.mat3(m));
        d.vec3s(d_pos);
        d.vec3s(force);
        rotations.iter().for_each(|m| d.mat3(m));
        d.vec3s(positions);
        let Unknowns {
            tip_rotation,
            tip_force,
            tip_torque,
        } = unknowns;
        d.mat3(tip_rotation);
        d.vec3(tip_force);
        d.vec3(tip_torque);
        match solved {
            None => d.u64(0),
            Some(p) => {
                d.u64(1);
                p.digest_into(d);
            }
        }
        d.vec3s(point_loads);
    }

    /// Place the rod in its rest shape (strain = rest strain) from the base pose, before any
    /// solve: the positions and frames are otherwise zero until the first [`Strands::solve`].
    pub fn set_rest_pose(&mut self, base_rotation: &Mat3, base_position: &Vec3) {
        self.strain.clone_from(&self.rest_strain);
        for k in 0..self.n {
            // The segment's increments as the backward sweep stores them (rate −u).
            let arc = Arc::new(&(-self.strain[k]), self.h);
            let rt = arc.rot.transpose();
            self.d_rot[k] = rt;
            self.d_pos[k] = rt * arc.p;
        }
        self.sweep_forward(base_rotation, base_position);
    }

    /// Number of segments.
    pub fn segments(&self) -> usize {
        self.n
    }
    /// Rest length [m].
    pub fn length(&self) -> f64 {
        self.length
    }
    /// Node positions `0..=n` [m].
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }
    /// Node frames `0..=n`, body to world (columns d1, d2, d3 = tangent).
    pub fn rotations(&self) -> &[Mat3] {
        &self.rotations
    }
    /// Strain per segment `0..n` [1/m], body frame (κ1, κ2, twist).
    pub fn strains(&self) -> &[Vec3] {
        &self.strain
    }
    /// Internal force at each node in world frame [N] (action of the tip side on the base side).
    pub fn internal_forces_world(&self) -> Vec<Vec3> {
        self.rotations
            .iter()
            .zip(&self.force)
            .map(|(r, f)| r * f)
            .collect()
    }
    /// The current settings.
    pub fn config(&self) -> &StrandsConfig {
        &self.config
    }
    /// Change the settings (scheme, tolerances); the warm start is kept.
    pub fn set_config(&mut self, config: StrandsConfig) {
        self.config = config;
    }
    /// Material direction d1 of each segment `0..n`, taken at the segment midpoint (unit,
    /// perpendicular to the segment's chord for a constant-strain segment).
    pub fn directors(&self) -> Vec<Vec3> {
        (0..self.n)
            .map(|k| {
                let mid = Arc::new(&self.strain[k], 0.5 * self.h).rot;
                self.rotations[k] * mid.column(0)
            })
            .collect()
    }
    /// Largest bending curvature `sqrt(u1² + u2²)` over the segments [1/m].
    pub fn max_curvature(&self) -> f64 {
        self.strain
            .iter()
            .map(|u| u.xy().norm())
            .fold(0.0, f64::max)
    }
    /// Tip reaction wrench that the solution carries at `s = L`, world frame ([N], [N m]).
    pub fn tip_wrench(&self) -> (Vec3, Vec3) {
        (self.unknowns.tip_force, self.unknowns.tip_torque)
    }

    /// One backward sweep from the tip (frame `q_tip`, world wrench `force`, `torque`) to the base
    /// with uniform world load `f_dist` [N/m]. Fills `strain`, `d_rot`, `d_pos`, `force`.
    fn sweep_back(&mut self, q_tip: &Mat3, force: &Vec3, torque: &Vec3, f_dist: &Vec3) -> Sweep {
        let h = self.h;
        let c = self.config.scheme.collocation();
        let sc = (1.0 - c) * h; // distance from the tip-side node back to the collocation point
        let ei_min = self.stiffness.x.min(self.stiffness.y);
        let qt = q_tip.transpose();
        // Body components in the frame of node k+1.
        // Point loads (Pai's sweep with concentrated loads): crossing node k towards the base,
        // the internal force picks up the node's load.
        let mut n_b = qt * (force + self.point_loads[self.n]);
        let mut m_b = qt * torque;
        let mut f_b = qt * f_dist;
        let mut rot = *q_tip;
        let mut base_from_tip = Vec3::zeros();
        let mut log_amp = 0.0;
        let mut max_tension: f64 = n_b.z;
        self.force[self.n] = n_b;
        let mut ok = true;
        for k in (0..self.n).rev() {
            let u_hat = self.rest_strain[k];
            let guess = self.strain[k];
            let (u, arc_c) = match local_strain(
                guess,
                &u_hat,
                &self.inv_stiffness,
                &m_b,
                &n_b,
                &f_b,
                sc,
                1.0 / self.length,
            ) {
                Some(v) => v,
                None => {
                    ok = false;
                    (guess, Arc::new(&(-guess), sc))
                }
            };
            // Whole segment from the collocation arc.
            let arc = if c == 0.0 {
                arc_c
            } else {
                let r = arc_c.rot;
                Arc {
                    rot: r * r,
                    p: arc_c.p + r * arc_c.p,
                    pp: arc_c.pp + arc_c.p * sc + r * arc_c.pp,
                }
            };
            let n_k = n_b + f_b * h;
            let m_k = m_b + arc.p.cross(&n_b) + (arc.p * h - arc.pp).cross(&f_b);
            let rt = arc.rot.transpose();
            // Frame k relative to frame k+1 is arc.rot; ^k y = arc.rotᵀ ^{k+1} y.
            base_from_tip -= rot * arc.p;
            rot *= arc.rot;
            n_b = rt * n_k + rot.transpose() * self.point_loads[k];
            m_b = rt * m_k;
            f_b = rt * f_b;
            self.strain[k] = u;
            self.d_rot[k] = rt;
            self.d_pos[k] = rt * arc.p;
            self.force[k] = n_b;
            let t = n_b.z;
            max_tension = max_tension.max(t);
            if t > 0.0 {
                log_amp += h * (t / ei_min).sqrt();
            }
        }
        Sweep {
            base_rotation: rot,
            base_from_tip,
            log_amplification: log_amp,
            max_tension,
            ok: ok && base_from_tip.iter().all(|v| v.is_finite()),
        }
    }

    /// Forward sweep (Pai eq. (16)): frames and positions from the base pose, using the segment
    /// increments of the last backward sweep.
    fn sweep_forward(&mut self, base_rotation: &Mat3, base_position: &Vec3) {
        self.rotations[0] = *base_rotation;
        self.positions[0] = *base_position;
        for k in 0..self.n {
            let r = self.rotations[k];
            self.positions[k + 1] = self.positions[k] + r * self.d_pos[k];
            let mut next = r * self.d_rot[k];
            if k % 32 == 31 {
                next = orthonormalize(&next);
            }
            self.rotations[k + 1] = next;
        }
    }

    /// Pai's Standard BVP with both sweeps and no Newton: base pose given, tip frame orientation
    /// `tip_rotation` assumed, world tip wrench and uniform world load. Exact when the assumed tip
    /// orientation is the true one (always, for follower loads expressed in that frame). Returns
    /// `false` if a local solve failed. This is the O(n) kernel that [`Strands::solve`] iterates.
    pub fn two_sweep(
        &mut self,
        base_rotation: &Mat3,
        base_position: &Vec3,
        tip_rotation: &Mat3,
        tip_force: &Vec3,
        tip_torque: &Vec3,
        distributed_force: &Vec3,
    ) -> bool {
        let s = self.sweep_back(tip_rotation, tip_force, tip_torque, distributed_force);
        self.sweep_forward(base_rotation, base_position);
        s.ok
    }

    fn scales(&self) -> (f64, f64) {
        let ei = self.stiffness.x.min(self.stiffness.y);
        (ei / (self.length * self.length), ei / self.length)
    }

    /// Number of shooting unknowns for a tip condition.
    fn dim(tip: &Tip) -> usize {
        match tip {
            Tip::Free => 3,
            Tip::Pinned { .. } | Tip::Clamped { .. } => 6,
        }
    }

    /// Newton (μ = 0) or Levenberg–Marquardt step: `(JᵀJ + μ‖J‖² I) Δ = -Jᵀ r`, or `J Δ = -r`.
    fn damped_step(jac: &[[f64; 6]; 6], r: &[f64; 6], d: usize, mu: f64) -> Option<[f64; 6]> {
        let mut a = [[0.0; 6]; 6];
        let mut b = [0.0; 6];
        if mu == 0.0 {
            for i in 0..d {
                a[i][..d].copy_from_slice(&jac[i][..d]);
                b[i] = -r[i];
            }
        } else {
            let mut scale: f64 = 0.0;
            for i in 0..d {
                for j in 0..d {
                    a[i][j] = (0..d).map(|k| jac[k][i] * jac[k][j]).sum();
                }
                b[i] = -(0..d).map(|k| jac[k][i] * r[k]).sum::<f64>();
                scale = scale.max(a[i][i]);
            }
            for (i, row) in a.iter_mut().enumerate().take(d) {
                row[i] += mu * scale.max(1e-300);
            }
        }
        solve_small(&mut a, &mut b, d)
    }

    /// Absolute unknowns from the reference plus a scaled increment `x`.
    fn unknowns_at(&self, base: &Unknowns, prob: &StrandsProblem, x: &[f64; 6]) -> Unknowns {
        let (fs, ms) = self.scales();
        let x0 = Vec3::new(x[0], x[1], x[2]);
        let x1 = Vec3::new(x[3], x[4], x[5]);
        match prob.tip {
            Tip::Free => Unknowns {
                tip_rotation: exp_so3(&x0) * base.tip_rotation,
                tip_force: prob.tip_force,
                tip_torque: prob.tip_torque,
            },
            Tip::Pinned { .. } => Unknowns {
                tip_rotation: exp_so3(&x0) * base.tip_rotation,
                tip_force: base.tip_force + x1 * fs,
                tip_torque: prob.tip_torque,
            },
            Tip::Clamped { rotation, .. } => Unknowns {
                tip_rotation: rotation,
                tip_force: base.tip_force + x0 * fs,
                tip_torque: base.tip_torque + x1 * ms,
            },
        }
    }

    /// Backward sweep for given unknowns; the residual is the base pose mismatch.
    fn residual(&mut self, prob: &StrandsProblem, un: &Unknowns) -> (Sweep, [f64; 6]) {
        let s = self.sweep_back(
            &un.tip_rotation,
            &un.tip_force,
            &un.tip_torque,
            &prob.distributed_force,
        );
        let rot_err = log_so3(&(prob.base_rotation.transpose() * s.base_rotation));
        let mut r = [rot_err.x, rot_err.y, rot_err.z, 0.0, 0.0, 0.0];
        let tip_pos = match prob.tip {
            Tip::Free => None,
            Tip::Pinned { position } | Tip::Clamped { position, .. } => Some(position),
        };
        if let Some(p) = tip_pos {
            let e = (p + s.base_from_tip - prob.base_position) / self.length;
            r[3] = e.x;
            r[4] = e.y;
            r[5] = e.z;
        }
        if !s.ok || r.iter().any(|v| !v.is_finite()) {
            r = [f64::INFINITY; 6];
        }
        (s, r)
    }

    /// Newton with finite-difference Jacobian and backtracking (Pai A.7) from the current
    /// unknowns. On success the unknowns and the sweep buffers hold the solution.
    fn newton(
        &mut self,
        prob: &StrandsProblem,
        report: &mut StrandsReport,
    ) -> Result<Sweep, (f64, f64)> {
        let d = Self::dim(&prob.tip);
        let base = self.unknowns;
        let mut x = [0.0; 6];
        let un0 = self.unknowns_at(&base, prob, &x);
        let (mut sweep, mut r) = self.residual(prob, &un0);
        report.sweeps += 1;
        let mut norm = max_abs(&r, d);
        let eps = 1e-5;
        let mut prev_norm = f64::INFINITY;
        for _ in 0..self.config.max_newton_iterations {
            // Converged, or at the rounding floor where further iterations only shave noise.
            if norm < self.config.tolerance || (norm < STAGNATION_FLOOR && norm > 0.1 * prev_norm) {
                self.unknowns = self.unknowns_at(&base, prob, &x);
                report.residual = norm;
                return Ok(sweep);
            }
            if !norm.is_finite() {
                break;
            }
            report.newton_iterations += 1;
            // Central differences: the shooting map is strongly nonlinear near limit points,
            // where a one-sided Jacobian's O(ε) error stalls Newton.
            let mut jac = [[0.0; 6]; 6];
            for i in 0..d {
                let mut xp = x;
                let mut xm = x;
                xp[i] += eps;
                xm[i] -= eps;
                let (_, rp) = self.residual(prob, &self.unknowns_at(&base, prob, &xp));
                let (_, rm) = self.residual(prob, &self.unknowns_at(&base, prob, &xm));
                report.sweeps += 2;
                for row in 0..d {
                    jac[row][i] = (rp[row] - rm[row]) / (2.0 * eps);
                }
            }
            let mut accepted = false;
            // Newton step first; if the Jacobian is singular (e.g. at a buckling point) or the
            // line search fails, Levenberg–Marquardt steps with growing damping.
            prev_norm = norm;
            let mus: &[f64] = if norm < STAGNATION_FLOOR {
                &[0.0]
            } else {
                &[0.0, 1e-8, 1e-6, 1e-4, 1e-2, 1.0]
            };
            for &mu in mus {
                let Some(step) = Self::damped_step(&jac, &r, d, mu) else {
                    continue;
                };
                let mut t = 1.0;
                while t > 1e-4 {
                    let mut xt = x;
                    for i in 0..d {
                        xt[i] += t * step[i];
                    }
                    let un = self.unknowns_at(&base, prob, &xt);
                    let (st, rt) = self.residual(prob, &un);
                    report.sweeps += 1;
                    let nt = max_abs(&rt, d);
                    if nt.is_finite() && nt < (1.0 - 1e-4 * t) * norm {
                        x = xt;
                        r = rt;
                        sweep = st;
                        norm = nt;
                        accepted = true;
                        break;
                    }
                    t *= 0.5;
                }
                if accepted {
                    break;
                }
            }
            if !accepted {
                break;
            }
        }
        self.max_log_amplification = self.max_log_amplification.max(sweep.log_amplification);
        // No further decrease possible: accept the rounding floor if it is far below what any
        // caller can see (1e-10 of L or rad).
        if norm < self.config.tolerance.max(STAGNATION_FLOOR) {
            self.unknowns = self.unknowns_at(&base, prob, &x);
            report.residual = norm;
            return Ok(sweep);
        }
        Err((norm, sweep.log_amplification))
    }

    /// The rest shape hanging from `prob`'s base with no load: the start of every continuation.
    fn rest_problem(&mut self, prob: &StrandsProblem) -> StrandsProblem {
        self.strain.clone_from(&self.rest_strain);
        // Rest-shape frames from the base: u = û on every segment.
        let mut rot = prob.base_rotation;
        let mut pos = prob.base_position;
        for k in 0..self.n {
            let arc = Arc::new(&self.rest_strain[k], self.h);
            pos += rot * arc.p;
            rot *= arc.rot;
        }
        let tip = match prob.tip {
            Tip::Free => Tip::Free,
            Tip::Pinned { .. } => Tip::Pinned { position: pos },
            Tip::Clamped { .. } => Tip::Clamped {
                rotation: rot,
                position: pos,
            },
        };
        self.unknowns = Unknowns {
            tip_rotation: rot,
            tip_force: Vec3::zeros(),
            tip_torque: Vec3::zeros(),
        };
        StrandsProblem {
            base_rotation: prob.base_rotation,
            base_position: prob.base_position,
            tip,
            tip_force: Vec3::zeros(),
            tip_torque: Vec3::zeros(),
            distributed_force: Vec3::zeros(),
        }
    }

    /// Solve the quasi-static equilibrium of `prob`, warm-started from the last solution.
    ///
    /// Newton is tried directly first; if it fails, the problem is reached by continuation from
    /// the last solved problem (or from the unloaded rest shape) with adaptive steps. On success
    /// [`Strands::positions`], [`Strands::rotations`] and [`Strands::strains`] hold the equilibrium.
    pub fn solve(&mut self, prob: &StrandsProblem) -> Result<StrandsReport, StrandsError> {
        if let Tip::Pinned { position } | Tip::Clamped { position, .. } = prob.tip {
            let distance = (position - prob.base_position).norm();
            if distance > self.length {
                return Err(StrandsError::Unreachable {
                    distance,
                    length: self.length,
                });
            }
        }
        let mut report = StrandsReport::default();
        self.max_log_amplification = 0.0;
        let same_kind = self
            .solved
            .is_some_and(|s| std::mem::discriminant(&s.tip) == std::mem::discriminant(&prob.tip));
        let mut start = if same_kind {
            self.solved.expect("invariant: checked by same_kind")
        } else {
            self.rest_problem(prob)
        };
        // The unknowns that solve `start`, to fall back on: taken after `rest_problem`, which
        // sets them to the rest shape's. (Taken before it, a first solve whose direct Newton
        // was refused by the branch guard went on from the unknowns of `Strands::new`, a tip
        // frame equal to the identity whatever the base frame: the continuation then started
        // with a base orientation residual as large as the base frame's angle, π for a base
        // frame that is a half-turn, where Newton on the SO(3) log cannot converge. The
        // answer depended on how the scene was turned and on the reference normal.)
        let saved_unknowns = self.unknowns;
        // Branch guard: a solve that changes the strain a lot may have jumped to another
        // equilibrium. It applies to warm starts (frame-to-frame continuity) and to dead loads
        // from the rest shape; a posed end from the straight rest shape starts at a singular
        // (fully stretched) state, where large changes are expected and any branch will do.
        let guard = same_kind || prob.tip == Tip::Free;
        let mut before = std::mem::take(&mut self.strain_before);
        before.clone_from(&self.strain);
        let mut result = self.newton(prob, &mut report);
        if guard && result.is_ok() && self.strain_change(&before) > MAX_STRAIN_CHANGE {
            // Converged, but far from the warm start: possibly onto another equilibrium branch.
            // Redo it by continuation, which follows the branch the warm start is on.
            self.unknowns = saved_unknowns;
            self.strain.clone_from(&before);
            result = Err((f64::INFINITY, 0.0));
        }
        if result.is_err() && same_kind {
            // The warm start failed; fall back to continuation from the previous solution, and
            // if that fails too, from the rest shape.
            result = self.continuation(&start, prob, true, &mut report);
            if result.is_err() {
                start = self.rest_problem(prob);
                result = self.continuation(&start, prob, prob.tip == Tip::Free, &mut report);
            }
        } else if result.is_err() {
            result = self.continuation(&start, prob, guard, &mut report);
        }
        if result.is_err()
            && let Tip::Pinned { position } = prob.tip
        {
            result = self.pinned_by_way_of_clamped(prob, position, &mut report);
        }
        self.strain_before = before;
        let tension_scale = self.length * self.length / self.stiffness.x.min(self.stiffness.y);
        let limit = self.config.max_amplification.ln();
        match result {
            Ok(sweep) => {
                report.amplification = sweep.log_amplification.exp();
                report.tension_number = sweep.max_tension.max(0.0) * tension_scale;
                if sweep.log_amplification > limit {
                    self.solved = None;
                    return Err(StrandsError::IllConditioned {
                        tension_number: report.tension_number,
                        log10_amplification: sweep.log_amplification / std::f64::consts::LN_10,
                        log10_limit: limit / std::f64::consts::LN_10,
                    });
                }
                self.sweep_forward(&prob.base_rotation, &prob.base_position);
                self.solved = Some(*prob);
                Ok(report)
            }
            Err((residual, log_amp)) => {
                self.solved = None;
                let log_amp = log_amp.max(self.max_log_amplification);
                if log_amp > limit || !log_amp.is_finite() {
                    // Estimate the tension number from the applied loads for the message.
                    let t = (prob.tip_force.norm() + prob.distributed_force.norm() * self.length)
                        * tension_scale;
                    return Err(StrandsError::IllConditioned {
                        tension_number: t,
                        log10_amplification: log_amp / std::f64::consts::LN_10,
                        log10_limit: limit / std::f64::consts::LN_10,
                    });
                }
                Err(StrandsError::NotConverged {
                    residual,
                    iterations: report.newton_iterations,
                })
            }
        }
    }

    /// A pinned tip reached by way of a clamped one. From the straight rest shape a pinned
    /// tip starts at the fully stretched state, where the shooting's Jacobian is singular
    /// (the tip's rotation has no effect on where the tip is) and Newton stalls. A clamped tip
    /// at the same `position`, its rotation the rest shape's, converges from there; its
    /// solution, with the tip torque the clamp exerts, is an equilibrium of the pinned problem
    /// whose applied tip torque is that torque, and continuation carries the tip torque from
    /// there to `prob`'s (Pai 2002 §3, the Standard BVP, and §5, Newton on the residual of a
    /// posed end: the tip's unknowns of our pinned and clamped variants).
    fn pinned_by_way_of_clamped(
        &mut self,
        prob: &StrandsProblem,
        position: Vec3,
        report: &mut StrandsReport,
    ) -> Result<Sweep, (f64, f64)> {
        let rest = self.rest_problem(prob);
        let clamped = StrandsProblem {
            tip: Tip::Clamped {
                rotation: self.unknowns.tip_rotation,
                position,
            },
            ..*prob
        };
        let rest_clamped = StrandsProblem {
            tip: Tip::Clamped {
                rotation: self.unknowns.tip_rotation,
                position: match rest.tip {
                    Tip::Pinned { position } => position,
                    _ => position,
                },
            },
            ..rest
        };
        self.continuation(&rest_clamped, &clamped, false, report)?;
        // The clamp's tip torque becomes the pinned problem's applied torque; the unknowns
        // (tip rotation and force) solve it as they are.
        let from = StrandsProblem {
            tip: Tip::Pinned { position },
            tip_torque: self.unknowns.tip_torque,
            ..*prob
        };
        self.continuation(&from, prob, false, report)
    }

    /// Largest change of curvature or twist against `before`, times L (dimensionless).
    fn strain_change(&self, before: &[Vec3]) -> f64 {
        // Relative to the strain already present: a strongly bent rod may change a lot in
        // absolute terms for a small move of its ends.
        let scale = 1.0 + 0.5 * before.iter().map(|u| u.amax()).fold(0.0, f64::max) * self.length;
        self.strain
            .iter()
            .zip(before)
            .map(|(a, b)| (a - b).amax())
            .fold(0.0, f64::max)
            * self.length
            / scale
    }

    /// Adaptive continuation from the solved problem `from` (whose solution the unknowns hold)
    /// to `to`.
    fn continuation(
        &mut self,
        from: &StrandsProblem,
        to: &StrandsProblem,
        guard: bool,
        report: &mut StrandsReport,
    ) -> Result<Sweep, (f64, f64)> {
        let mut lambda: f64 = 0.0;
        let mut step: f64 = 0.125;
        let mut last_err = (f64::INFINITY, 0.0);
        for _ in 0..self.config.max_continuation_steps {
            let target = (lambda + step).min(1.0);
            let saved_unknowns = self.unknowns;
            let saved_strain = self.strain.clone();
            let p = from.lerp(to, target);
            match self.newton(&p, report) {
                Ok(sweep)
                    if !guard
                        || self.strain_change(&saved_strain) <= MAX_STRAIN_CHANGE
                        || step < 1e-3 =>
                {
                    report.continuation_steps += 1;
                    lambda = target;
                    if lambda >= 1.0 {
                        return Ok(sweep);
                    }
                    step = (step * 2.0).min(0.5);
                }
                other => {
                    if let Err(e) = other {
                        last_err = e;
                    }
                    self.unknowns = saved_unknowns;
                    self.strain = saved_strain;
                    step *= 0.5;
                    if step < 1e-5 {
                        break;
                    }
                }
            }
        }
        Err(last_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clamped_x(tip: Tip) -> StrandsProblem {
        // Base at the origin, tangent d3 along +x, d1 along +y.
        StrandsProblem {
            base_rotation: Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()]),
            base_position: Vec3::zeros(),
            tip,
            tip_force: Vec3::zeros(),
            tip_torque: Vec3::zeros(),
            distributed_force: Vec3::zeros(),
        }
    }

    #[test]
    fn small_solver_solves() {
        let mut a = [[0.0; 6]; 6];
        let mut b = [0.0; 6];
        let m = [[4.0, 1.0, 2.0], [1.0, 5.0, -1.0], [0.5, 2.0, 3.0]];
        let x = [1.0, -2.0, 0.5];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] = m[i][j];
                b[i] += m[i][j] * x[j];
            }
        }
        let s = solve_small(&mut a, &mut b, 3).unwrap();
        for i in 0..3 {
            assert!((s[i] - x[i]).abs() < 1e-14);
        }
    }

    /// The state digest sees one ulp of every piece of state a solve carries to the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp_m, ulp3};
        let mut rod = Strands::new(
            1.0,
            10,
            Vec3::new(1.0, 1.0, 0.8),
            Vec3::new(0.1, 0.0, 0.0),
            StrandsConfig::default(),
        );
        let mut p = clamped_x(Tip::Free);
        p.tip_force = Vec3::new(0.0, -0.3, 0.1);
        rod.solve(&p).unwrap();
        rod.set_point_loads(&[Vec3::new(0.0, 0.01, 0.0); 11]);
        let digest = |r: &Strands| {
            let mut d = crate::math::Digest::default();
            r.digest_into(&mut d);
            d.0
        };
        fn solved(r: &mut Strands) -> &mut StrandsProblem {
            r.solved.as_mut().expect("solved")
        }
        assert_each_changes(
            &rod,
            digest,
            &[
                ("rest_strain", &|r| ulp3(&mut r.rest_strain[9])),
                ("strain", &|r| ulp3(&mut r.strain[9])),
                ("d_rot", &|r| ulp_m(&mut r.d_rot[9])),
                ("d_pos", &|r| ulp3(&mut r.d_pos[9])),
                ("force", &|r| ulp3(&mut r.force[10])),
                ("rotations", &|r| ulp_m(&mut r.rotations[10])),
                ("positions", &|r| ulp3(&mut r.positions[10])),
                ("unknowns.tip_rotation", &|r| {
                    ulp_m(&mut r.unknowns.tip_rotation)
                }),
                ("unknowns.tip_force", &|r| ulp3(&mut r.unknowns.tip_force)),
                ("unknowns.tip_torque", &|r| ulp3(&mut r.unknowns.tip_torque)),
                ("solved (none)", &|r| r.solved = None),
                ("solved.base_rotation", &|r| {
                    ulp_m(&mut solved(r).base_rotation)
                }),
                ("solved.base_position", &|r| {
                    ulp3(&mut solved(r).base_position)
                }),
                ("solved.tip (pinned)", &|r| {
                    solved(r).tip = Tip::Pinned {
                        position: Vec3::zeros(),
                    }
                }),
                ("solved.tip_force", &|r| ulp3(&mut solved(r).tip_force)),
                ("solved.tip_torque", &|r| ulp3(&mut solved(r).tip_torque)),
                ("solved.distributed_force", &|r| {
                    ulp3(&mut solved(r).distributed_force)
                }),
                ("point_loads", &|r| ulp3(&mut r.point_loads[10])),
                ("point_loads (x)", &|r| ulp(&mut r.point_loads[0].x)),
            ],
        );
    }

    #[test]
    fn unloaded_rod_stays_straight() {
        let mut rod = Strands::new(
            1.0,
            10,
            Vec3::new(1.0, 1.0, 0.8),
            Vec3::zeros(),
            StrandsConfig::default(),
        );
        let rep = rod.solve(&clamped_x(Tip::Free)).unwrap();
        assert_eq!(rep.newton_iterations, 0);
        let tip = rod.positions()[10];
        assert!((tip - Vec3::x()).norm() < 1e-14);
    }

    #[test]
    fn dead_moment_about_d1_gives_circle_with_any_scheme() {
        // docs/derivations/cosserat.md §D.1 with M = 2, EI = 1, L = 1 → ρ = 0.5, φ = 2.
        for scheme in [Scheme::Euler, Scheme::Midpoint] {
            let cfg = StrandsConfig {
                scheme,
                ..Default::default()
            };
            let mut rod = Strands::new(1.0, 5, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), cfg);
            let mut p = clamped_x(Tip::Free);
            p.tip_torque = Vec3::y() * 2.0; // d1 of the base is +y
            rod.solve(&p).unwrap();
            let tip = rod.positions()[5];
            // Bending about d1 = +y turns d3 = +x toward -d2 = -z: tip at (ρ sinφ, 0, -ρ(1-cosφ)).
            let expect = Vec3::new(0.5 * 2f64.sin(), 0.0, -0.5 * (1.0 - 2f64.cos()));
            assert!(
                (tip - expect).norm() < 1e-12,
                "{scheme:?}: {tip:?} vs {expect:?}"
            );
        }
    }
}
