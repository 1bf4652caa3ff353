//! The virtual coupling inside the implicit step (docs/derivations/cosserat.md §C.5): a spring-damper from a
//! rod node (the needle's swage end, or a grasped point) to the tool target the haptic loop
//! publishes, added to the Newton solve as a potential so a stiff coupling stays stable at the
//! physics step (an explicit spring of the same stiffness would need a far smaller step).
//!
//!   `V = ½ k |x - x_t|²  +  ½ c h |(x - x₀)/h - v_t|²`
//!
//! (the second term is the implicit-Euler dissipation potential of the damper, `x₀` the node at
//! the start of the step). The force on the rod at the solution, `-∂V/∂x`, is what the hand feels
//! reversed.

use crate::math::{Mat3, Quat, Vec3};
use crate::rod::cosserat::energy::{Hessian, bend_twist};
use crate::rod::{NodePotential, PotentialSink};

/// A spring-damper from one node to a moving target.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpring {
    /// The coupled node.
    pub node: usize,
    /// Stiffness [N/m].
    pub k: f64,
    /// Damping [N s/m].
    pub c: f64,
    /// Target position [m] and velocity [m/s] (world).
    pub target: Vec3,
    /// See `target`.
    pub target_velocity: Vec3,
    h: Option<f64>,
    x0: Vec3,
    /// Force of the coupling on the rod at the last accepted state [N].
    pub force: Vec3,
    /// Rotational stiffness [N m/rad] pulling the frame of the held node's segment toward
    /// `target_rotation` (0: position only).
    pub kr: f64,
    /// Target frame of the held segment (body → world).
    pub target_rotation: Quat,
    /// The held node's segment (0 for node 0, else node − 1).
    pub segment: usize,
    /// When the held rod is quasi-static (STRANDS): the coupled tip-force solve used instead
    /// of the potential (created on the first step).
    pub quasi_static: Option<Box<StrandsCoupling>>,
}

impl ToolSpring {
    /// A coupling of stiffness `k` [N/m] and damping `c` [N s/m] on `node`.
    pub fn new(node: usize, k: f64, c: f64) -> Self {
        ToolSpring {
            node,
            k,
            c,
            target: Vec3::zeros(),
            target_velocity: Vec3::zeros(),
            h: None,
            x0: Vec3::zeros(),
            force: Vec3::zeros(),
            kr: 0.0,
            target_rotation: Quat::identity(),
            segment: node.saturating_sub(1),
            quasi_static: None,
        }
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): the
    /// gains now (a released grasp zeroes them), the target and its velocity and frame (kept
    /// while the device sends none), the last accepted force (the needle feels the suture's
    /// pull through it next step) and the quasi-static coupling's solve state. Every field
    /// is named here, so a new one must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let ToolSpring {
            // Which node and segment it holds: the scene's.
            node: _,
            segment: _,
            // Set by `begin` at each step's start.
            h: _,
            x0: _,
            k,
            c,
            kr,
            target,
            target_velocity,
            target_rotation,
            force,
            quasi_static,
        } = self;
        for g in [k, c, kr] {
            d.f64(*g);
        }
        d.vec3(target);
        d.vec3(target_velocity);
        d.quat(target_rotation);
        d.vec3(force);
        match quasi_static {
            None => d.u64(0),
            Some(q) => {
                d.u64(1);
                q.digest_into(d);
            }
        }
    }

    fn gradient(&self, x: &Vec3) -> Vec3 {
        let mut g = (x - self.target) * self.k;
        if let Some(h) = self.h {
            g += ((x - self.x0) / h - self.target_velocity) * self.c;
        }
        g
    }
}

impl NodePotential for ToolSpring {
    fn limits_steps(&self) -> bool {
        false
    }
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>) {
        self.h = h;
        self.x0 = x_start[self.node];
    }
    fn evaluate(&self, x: &[Vec3], sink: Option<&mut PotentialSink>) -> f64 {
        let p = &x[self.node];
        let mut v = 0.5 * self.k * (p - self.target).norm_squared();
        if let Some(h) = self.h {
            v += 0.5 * self.c * h * ((p - self.x0) / h - self.target_velocity).norm_squared();
        }
        if let Some(s) = sink {
            s.add_gradient(self.node, &self.gradient(p));
            let stiff = self.k + self.h.map_or(0.0, |h| self.c / h);
            s.add_hessian(self.node, self.node, &(Mat3::identity() * stiff));
        }
        v
    }
    fn accept(&mut self, x: &[Vec3]) -> bool {
        self.force = -self.gradient(&x[self.node]);
        true
    }
    fn relag(&mut self, _: &[Vec3]) -> f64 {
        0.0
    }
    /// The rotational spring: the bend–twist joint energy of Soler eqs. (10)–(11) between the
    /// held segment's frame u and the target frame u_t, with joint length 1 and stiffness
    /// `k_r (1, 1, 1)`: `V = 2 k_r |Im(ū u_t)|² = 2 k_r sin²(θ/2) ≈ ½ k_r θ²` for a relative
    /// rotation θ, with the joint's exact gradient and Hessian.
    fn evaluate_frames(&self, q: &[Quat], sink: Option<&mut PotentialSink>) -> f64 {
        if self.kr <= 0.0 {
            return 0.0;
        }
        let e = self.segment.min(q.len() - 1);
        let hess = if sink.as_ref().is_some_and(|s| s.wants_hessian()) {
            Hessian::Exact
        } else {
            Hessian::Skip
        };
        let (v, g, h) = bend_twist(
            &q[e],
            &self.target_rotation,
            1.0,
            &Vec3::repeat(self.kr),
            &Vec3::zeros(),
            hess,
        );
        if let Some(s) = sink {
            s.add_rotation_gradient(e, &g.fixed_rows::<3>(0).into_owned());
            if hess == Hessian::Exact {
                s.add_rotation_hessian(e, &h.fixed_view::<3, 3>(0, 0).into_owned());
            }
        }
        v
    }
}

/// A curved suture needle: a circular arc of radius `curvature_radius` [m] spanning
/// `arc_angle` [rad] (3/8 circle = 3π/4, 1/2 circle = π), wire radius `wire_radius` [m]. The
/// swage end sits on the coupled rod node; the arc leaves along the end segment's tangent
/// (d3, continuing the suture) and curves toward its d1. The rigid needle the coupling drives
/// is sim::needle::Needle, which carries this shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NeedleShape {
    /// Radius of curvature [m].
    pub curvature_radius: f64,
    /// Arc angle [rad].
    pub arc_angle: f64,
    /// Wire radius [m].
    pub wire_radius: f64,
}

impl NeedleShape {
    /// Point at fraction `u ∈ [0, 1]` of the arc (0 = swage, 1 = point) for a swage at
    /// `position` [m] with frame `rotation` (d1 = rotation·x, d3 = rotation·z):
    /// `p(θ) = swage + R (sin θ d3 + (1 − cos θ) d1)`, `θ = u · arc_angle`.
    pub fn point(&self, position: &Vec3, rotation: &Quat, u: f64) -> Vec3 {
        let th = u * self.arc_angle;
        let d1 = rotation * Vec3::x();
        let d3 = rotation * Vec3::z();
        position + (d3 * th.sin() + d1 * (1.0 - th.cos())) * self.curvature_radius
    }
}

/// A rigid tissue pad: an axis-aligned box whose top face (+y) is a contact plane for the
/// rods (a `[tissue]` without a Young's modulus; with one, the pad is the deformable
/// tissue::Tissue).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TissuePad {
    /// Centre [m].
    pub center: Vec3,
    /// Edge lengths along x, y, z [m].
    pub size: Vec3,
    /// Coulomb friction of the surface [-].
    pub friction: f64,
}

/// Which of the surgeon's hands (and so which device) drives a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Hand {
    /// The right hand: the scene's `[tool]`, or the instrument named "right" (the needle
    /// driver of a right-handed surgeon).
    #[default]
    Right,
    /// The left hand (forceps or a second driver).
    Left,
}

impl Hand {
    /// Both hands, in the order a world steps their tools.
    pub const ALL: [Hand; 2] = [Hand::Right, Hand::Left];

    /// The name used in scenes and on the command line (`right`, `left`).
    pub fn name(self) -> &'static str {
        match self {
            Hand::Right => "right",
            Hand::Left => "left",
        }
    }

    /// The hand of a name (`right`, `left`).
    pub fn from_name(s: &str) -> Option<Hand> {
        Hand::ALL.into_iter().find(|h| h.name() == s)
    }
}

/// The tool a device drives, as a scene sets it up (`[tool]`, or one of `[[instruments]]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolSetup {
    /// The hand (and device) that drives it.
    pub hand: Hand,
    /// The instrument it is (index into the world's instruments), or None for the legacy
    /// `[tool]`: a coupling on a rod node (suturing: on the needle).
    pub instrument: Option<usize>,
    /// Held rod and node.
    pub rod: usize,
    /// See `rod`.
    pub node: usize,
    /// Virtual tool mass [kg] and moment of inertia [kg m²].
    pub mass: f64,
    /// See `mass`.
    pub inertia: f64,
    /// Coupling natural frequency [Hz] and damping ratio [-].
    pub frequency: f64,
    /// See `frequency`.
    pub damping_ratio: f64,
    /// Largest coupling stiffness [N/m].
    pub max_stiffness: f64,
    /// Device → world scale [-] and world position of the device origin [m].
    pub workspace_scale: f64,
    /// See `workspace_scale`.
    pub workspace_offset: Vec3,
}

/// The virtual coupling for the quasi-static model (docs/derivations/cosserat.md §C.6, "In Pai's
/// quasi-static model"): the tip force is not lagged but solved for. With the rod's tip
/// position `r(F)` at equilibrium under the tip force `F`, find `F` with
///
///   `g(F) = F − k (p_d − r(F)) − c (v_d − (r(F) − r_prev)/h) = 0`
///
/// by Newton with the Jacobian `I + (k + c/h) ∂r/∂F`; `∂r/∂F` (the tip compliance) comes from
/// six finite-difference solves, is kept across ticks and corrected by Broyden's secant update
/// after every iteration, and is recomputed only when an iteration fails to reduce `|g|`.
/// Warm-started from the previous tick's force.
#[derive(Clone, Debug, PartialEq)]
pub struct StrandsCoupling {
    /// Stiffness [N/m] and damping [N s/m].
    pub k: f64,
    /// See `k`.
    pub c: f64,
    /// Force on the rod's tip at the last solve [N].
    pub force: Vec3,
    /// Tip position at the last solve [m].
    pub tip: Vec3,
    compliance: Option<Mat3>,
    /// Rod solves so far (each a STRANDS equilibrium), and compliance recomputations.
    pub solves: u64,
    /// See `solves`.
    pub jacobians: u64,
}

/// Newton iterations on the tip force per tick before giving up.
pub const MAX_COUPLING_ITERATIONS: usize = 30;

/// Why a coupled quasi-static solve failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CouplingError {
    /// The rod solve failed.
    #[error(transparent)]
    Rod(#[from] crate::rod::StrandsError),
    /// Newton on the tip force did not converge.
    #[error("the coupled tip force did not converge (|g| = {0:.3e} N)")]
    NoConvergence(f64),
}

impl StrandsCoupling {
    /// A coupling of stiffness `k` [N/m] and damping `c` [N s/m], its tip at `tip` [m].
    pub fn new(k: f64, c: f64, tip: Vec3) -> Self {
        StrandsCoupling {
            k,
            c,
            force: Vec3::zeros(),
            tip,
            compliance: None,
            solves: 0,
            jacobians: 0,
        }
    }

    /// Feed the state a tick carries to the next (a state digest): the gains, the last force
    /// and tip (the warm start and the damper's previous position), the tip compliance kept
    /// across ticks (Broyden-updated) and the solve counts. Every field is named here.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let StrandsCoupling {
            k,
            c,
            force,
            tip,
            compliance,
            solves,
            jacobians,
        } = self;
        d.f64(*k);
        d.f64(*c);
        d.vec3(force);
        d.vec3(tip);
        match compliance {
            None => d.u64(0),
            Some(m) => {
                d.u64(1);
                d.mat3(m);
            }
        }
        d.u64(*solves);
        d.u64(*jacobians);
    }

    fn tip_under(
        &mut self,
        rod: &mut crate::rod::Strands,
        prob: &crate::rod::StrandsProblem,
        f: &Vec3,
    ) -> Result<Vec3, crate::rod::StrandsError> {
        let mut p = *prob;
        p.tip = crate::rod::Tip::Free;
        p.tip_force = prob.tip_force + f;
        rod.solve(&p)?;
        self.solves += 1;
        let x = rod.positions();
        Ok(x[x.len() - 1])
    }

    /// Solve the coupled equilibrium for the device at `p_d` [m] moving at `v_d` [m/s], the
    /// tick `h` [s] after the previous one (`h = 0`: no damping), the rod's loads and base from
    /// `prob` (its tip condition is replaced by a free tip under the coupling force). Returns
    /// the Newton iterations used.
    pub fn solve(
        &mut self,
        rod: &mut crate::rod::Strands,
        prob: &crate::rod::StrandsProblem,
        p_d: &Vec3,
        v_d: &Vec3,
        h: f64,
    ) -> Result<usize, CouplingError> {
        let r_prev = self.tip;
        let (k, c) = (self.k, self.c);
        let kd = if h > 0.0 { k + c / h } else { k };
        let g = |f: &Vec3, r: &Vec3| {
            let mut g = f - (p_d - r) * k;
            if h > 0.0 {
                g -= (v_d - (r - r_prev) / h) * c;
            }
            g
        };
        let mut f = self.force;
        let mut r = self.tip_under(rod, prob, &f)?;
        let mut gf = g(&f, &r);
        let scale = (self.k * rod.length()).max(1e-12);
        // 1e-9 of k·L: far below any force a hand or a suture feels.
        let tol = 1e-9 * scale;
        for it in 0..MAX_COUPLING_ITERATIONS {
            if gf.norm() <= tol {
                self.force = f;
                self.tip = r;
                return Ok(it);
            }
            if self.compliance.is_none() {
                // ∂r/∂F by central differences (symmetric for a conservative load).
                let eps = 1e-6 * (f.norm() + 1e-3 * scale);
                let mut cmat = Mat3::zeros();
                for a in 0..3 {
                    let mut e = Vec3::zeros();
                    e[a] = eps;
                    let rp = self.tip_under(rod, prob, &(f + e))?;
                    let rm = self.tip_under(rod, prob, &(f - e))?;
                    cmat.set_column(a, &((rp - rm) / (2.0 * eps)));
                }
                self.compliance = Some(cmat);
                self.jacobians += 1;
            }
            let j = Mat3::identity() + self.compliance.expect("set above") * kd;
            let Some(ji) = j.try_inverse() else {
                self.compliance = None;
                continue;
            };
            // A step in force of at most k·L/10 (the force that moves the device a tenth of
            // the rod away): the shooting solve then starts near its last solution.
            let mut df = ji * gf;
            let cap = 0.1 * scale;
            if df.norm() > cap {
                df *= cap / df.norm();
            }
            let f_new = f - df;
            let r_new = self.tip_under(rod, prob, &f_new)?;
            let g_new = g(&f_new, &r_new);
            if g_new.norm() >= 0.5 * gf.norm() {
                // Slow or no progress: the stored compliance is stale; recompute it here.
                self.compliance = None;
            } else if let Some(cm) = self.compliance.as_mut() {
                // Broyden's update of the compliance with the secant (ΔF, Δr): no extra solve.
                let df = f_new - f;
                let dr = r_new - r;
                let nn = df.norm_squared();
                if nn > 0.0 {
                    *cm += (dr - *cm * df) * df.transpose() / nn;
                }
            }
            (f, r, gf) = (f_new, r_new, g_new);
        }
        if gf.norm() <= 1e3 * tol {
            self.force = f;
            self.tip = r;
            return Ok(MAX_COUPLING_ITERATIONS);
        }
        // Leave the rod at the last accepted force, so the next tick starts from a
        // consistent state.
        let last = self.force;
        let _ = self.tip_under(rod, prob, &last);
        Err(CouplingError::NoConvergence(gf.norm()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees one ulp of every piece of state a step carries to the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp_m, ulp_q, ulp3};
        let mut s = ToolSpring::new(3, 200.0, 1.5);
        s.kr = 0.02;
        s.target = Vec3::new(0.01, 0.02, 0.03);
        s.target_velocity = Vec3::new(0.1, 0.0, 0.0);
        s.target_rotation = Quat::from_euler_angles(0.1, 0.2, 0.3);
        s.force = Vec3::new(0.5, -0.2, 0.1);
        let mut q = StrandsCoupling::new(200.0, 0.0, Vec3::new(0.1, 0.0, 0.0));
        q.force = Vec3::new(0.1, 0.2, 0.3);
        q.compliance = Some(Mat3::identity() * 0.01);
        (q.solves, q.jacobians) = (12, 1);
        s.quasi_static = Some(Box::new(q));
        let digest = |s: &ToolSpring| {
            let mut d = crate::math::Digest::default();
            s.digest_into(&mut d);
            d.0
        };
        fn qs(s: &mut ToolSpring) -> &mut StrandsCoupling {
            s.quasi_static.as_deref_mut().expect("some")
        }
        assert_each_changes(
            &s,
            digest,
            &[
                ("k", &|s| ulp(&mut s.k)),
                ("c", &|s| ulp(&mut s.c)),
                ("kr", &|s| ulp(&mut s.kr)),
                ("target", &|s| ulp3(&mut s.target)),
                ("target_velocity", &|s| ulp3(&mut s.target_velocity)),
                ("target_rotation", &|s| ulp_q(&mut s.target_rotation)),
                ("force", &|s| ulp3(&mut s.force)),
                ("quasi_static (none)", &|s| s.quasi_static = None),
                ("quasi_static.k", &|s| ulp(&mut qs(s).k)),
                ("quasi_static.c", &|s| ulp(&mut qs(s).c)),
                ("quasi_static.force", &|s| ulp3(&mut qs(s).force)),
                ("quasi_static.tip", &|s| ulp3(&mut qs(s).tip)),
                ("quasi_static.compliance", &|s| {
                    ulp_m(qs(s).compliance.as_mut().expect("some"))
                }),
                ("quasi_static.compliance (none)", &|s| {
                    qs(s).compliance = None
                }),
                ("quasi_static.solves", &|s| qs(s).solves += 1),
                ("quasi_static.jacobians", &|s| qs(s).jacobians += 1),
            ],
        );
    }
}
