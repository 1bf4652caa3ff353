//! Contact for the quasi-static STRANDS rod (Pai 2002) as lagged point loads (issue #5).
//!
//! Pai's two-sweep solve takes loads, not potentials: a contact potential `V(x)` (obstacles,
//! self-contact) enters as the point loads `f = −∇V(x)` evaluated at the previous solution.
//! Each frame: solve; evaluate `f_new = −∇V` at the solution; update the point loads `f`;
//! solve again with `f` as dead point loads; stop when no node moved more than `tolerance`
//! [m] in the last pass (the contact point sliding between a segment's two nodes shuffles the
//! per-node loads long after the shape has settled), or after `max_passes`.
//!
//! The update is per node, on the load's magnitude λ along the contact force's direction: the
//! equilibrium is the root of `φ(λ) = λ − |f_new(λ)|`, which increases monotonically with λ
//! (a larger load lifts the rod, so the penalty pushes back less). Plain relaxation of this
//! one-sided map diverges or stalls (a penalty force is zero off contact and steep in it);
//! instead each node keeps a bracket `[lo, hi]` with `φ(lo) ≤ 0 ≤ φ(hi)`, grows the load
//! (at most doubling, from the problem's load scale) until bracketed, then narrows it by
//! regula falsi with the Illinois modification (bisection while `φ(lo)` is unknown).

//! Limits (stated, measured in tests/contact.rs):
//! - It is a fixed-point iteration on a penalty force, not a constraint. Near a solution the
//!   error is multiplied per pass by about `1 − ω (1 + k C)`, `k` the penalty stiffness and `C`
//!   the rod's compliance at the contact: a fixed ω converges only below `2/(1 + k C)`, tiny for
//!   a stiff penalty on a compliant rod (the usual case; k C ≈ 5000 for a suture on a bar).
//!   Aitken's ω finds that scale by itself for one dominant contact; many contacts changing
//!   together (a rod lying along a surface) converge slowly. The penetration is whatever `k`
//!   gives at equilibrium (no adaptive raises: raising `k` only slows the passes).
//! - Loads are dead during a solve (no contact stiffness in Pai's Newton on the unknowns), so a
//!   contact that appears or vanishes between passes can make the passes cycle; the report says
//!   whether the loads settled.
//! - Normal forces only: no friction.
//! - Several solves per frame: at 1 kHz only with few passes (the STRANDS solve itself is ~10 µs
//!   at 100 nodes).

use super::{ObstacleContact, SelfContact};
use crate::math::Vec3;
use crate::rod::{NodePotential, PotentialSink};
use crate::rod::{Strands, StrandsError, StrandsProblem, StrandsReport};

/// Lagged contact loads for one STRANDS rod.
#[derive(Clone, Debug)]
pub struct LaggedContact {
    /// Obstacles (penalty; `adaptive` is turned off).
    pub contact: Option<Box<ObstacleContact>>,
    /// Self-contact (IMC energy; `adaptive` is turned off).
    pub self_contact: Option<Box<SelfContact>>,
    /// Largest number of solves per frame.
    pub max_passes: usize,
    /// Largest node motion in a pass [m] below which the loads count as settled.
    pub tolerance: f64,
    /// Solves in the last frame.
    pub passes: usize,
    /// Largest node motion in the last pass [m].
    pub change: f64,
    loads: Vec<Vec3>,
    fresh: Vec<Vec3>,
    previous: Vec<Vec3>,
    brackets: Vec<Bracket>,
    grad: Vec<f64>,
}

/// One node's bracket on its load magnitude λ [N]: `φ(lo) ≤ 0 ≤ φ(hi)`.
#[derive(Clone, Copy, Debug)]
struct Bracket {
    lo: f64,
    /// φ(lo), if evaluated.
    phi_lo: Option<f64>,
    hi: f64,
    phi_hi: f64,
    /// Which end moved last (+1 hi, −1 lo, 0 none): Illinois halves the other's φ when
    /// the same end moves twice.
    last: i8,
}

impl Bracket {
    const OPEN: Bracket = Bracket {
        lo: 0.0,
        phi_lo: None,
        hi: f64::INFINITY,
        phi_hi: 0.0,
        last: 0,
    };
}

/// What one frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaggedReport {
    /// The last solve's report.
    pub last: StrandsReport,
    /// Solves this frame.
    pub passes: usize,
    /// Largest node motion in the last pass [m].
    pub change: f64,
    /// Relative residual of the loads `max|f_new − f| / max|f|` in the last pass.
    pub residual: f64,
    /// Whether the shape settled (motion below the tolerance).
    pub settled: bool,
}

impl LaggedContact {
    /// Lagged contact for a rod of `nodes` nodes (100 passes, settled below 1 µm of motion;
    /// the scene sets 1 % of the rod radius).
    pub fn new(
        nodes: usize,
        mut contact: Option<Box<ObstacleContact>>,
        mut self_contact: Option<Box<SelfContact>>,
    ) -> Self {
        if let Some(c) = contact.as_mut() {
            c.adaptive = false;
        }
        if let Some(c) = self_contact.as_mut() {
            c.adaptive = false;
        }
        LaggedContact {
            contact,
            self_contact,
            max_passes: 100,
            tolerance: 1e-6,
            passes: 0,
            change: 0.0,
            loads: vec![Vec3::zeros(); nodes],
            fresh: vec![Vec3::zeros(); nodes],
            previous: vec![Vec3::zeros(); nodes],
            brackets: vec![Bracket::OPEN; nodes],
            grad: vec![0.0; 6 * nodes],
        }
    }

    /// Feed the state a frame carries to the next (a state digest, `sim::World::digest`):
    /// the contact loads (the next frame's warm start), the obstacles' and self-contact's own
    /// state, and the last frame's passes and motion. Every field is named here, so a new one
    /// must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let LaggedContact {
            contact,
            self_contact,
            // The scene's settings.
            max_passes: _,
            tolerance: _,
            // Scratch of one frame: reset or overwritten before they are read.
            fresh: _,
            previous: _,
            brackets: _,
            grad: _,
            passes,
            change,
            loads,
        } = self;
        match contact {
            None => d.u64(0),
            Some(c) => {
                d.u64(1);
                c.digest_into(d);
            }
        }
        match self_contact {
            None => d.u64(0),
            Some(c) => {
                d.u64(1);
                c.digest_into(d);
            }
        }
        d.usize(*passes);
        d.f64(*change);
        d.vec3s(loads);
    }

    /// The contact forces `−∇V` at `x` into `fresh`.
    fn forces(&mut self, x: &[Vec3]) {
        self.grad.iter_mut().for_each(|g| *g = 0.0);
        let mut sink = PotentialSink::new(&mut self.grad, None);
        if let Some(c) = self.contact.as_mut() {
            c.begin(x, None);
            c.evaluate(x, Some(&mut sink));
        }
        if let Some(c) = self.self_contact.as_mut() {
            c.begin(x, None);
            c.evaluate(x, Some(&mut sink));
        }
        for (i, f) in self.fresh.iter_mut().enumerate() {
            *f = -Vec3::new(self.grad[6 * i], self.grad[6 * i + 1], self.grad[6 * i + 2]);
        }
    }

    /// Solve `prob` with the contact loads lagged and relaxed (see the module docs). The loads
    /// carry over from frame to frame (warm start).
    pub fn solve(
        &mut self,
        rod: &mut Strands,
        prob: &StrandsProblem,
    ) -> Result<LaggedReport, StrandsError> {
        let mut report = LaggedReport::default();
        // The problem's own load scale [N]: weight (distributed load × length), end forces.
        let reference = (prob.distributed_force.norm() * rod.length() + prob.tip_force.norm())
            .max(f64::MIN_POSITIVE);
        self.brackets.iter_mut().for_each(|b| *b = Bracket::OPEN);
        self.previous.copy_from_slice(rod.positions());
        rod.set_point_loads(&self.loads);
        report.last = rod.solve(prob)?;
        report.passes = 1;
        loop {
            let moved = rod
                .positions()
                .iter()
                .zip(&self.previous)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            self.previous.copy_from_slice(rod.positions());
            self.forces(rod.positions());
            let scale = self
                .fresh
                .iter()
                .chain(&self.loads)
                .map(|f| f.norm())
                .fold(0.0, f64::max);
            let change = self
                .fresh
                .iter()
                .zip(&self.loads)
                .map(|(g, f)| (g - f).norm())
                .fold(0.0, f64::max);
            report.residual = if scale > 0.0 { change / scale } else { 0.0 };
            report.change = moved;
            // Settled: the shape stopped moving (after at least one update of the loads), or
            // the loads already balance.
            report.settled =
                (report.passes > 1 && moved < self.tolerance) || report.residual < 1e-3;
            if report.settled || report.passes >= self.max_passes {
                break;
            }
            for ((f, g), b) in self
                .loads
                .iter_mut()
                .zip(&self.fresh)
                .zip(&mut self.brackets)
            {
                let (lambda, pull) = (f.norm(), g.norm());
                if lambda == 0.0 && pull == 0.0 {
                    continue;
                }
                let phi = lambda - pull;
                if phi <= 0.0 {
                    b.lo = lambda;
                    b.phi_lo = Some(phi);
                    if b.last == -1 {
                        b.phi_hi *= 0.5;
                    }
                    b.last = -1;
                } else {
                    b.hi = lambda;
                    b.phi_hi = phi;
                    if b.last == 1
                        && let Some(p) = b.phi_lo.as_mut()
                    {
                        *p *= 0.5;
                    }
                    b.last = 1;
                }
                let next = if b.hi.is_infinite() {
                    // Not bracketed yet: grow towards the penalty's force, at most doubling.
                    pull.min(2.0 * lambda.max(reference))
                } else {
                    match b.phi_lo {
                        Some(pl) if b.phi_hi > pl => b.lo - pl * (b.hi - b.lo) / (b.phi_hi - pl),
                        _ => 0.5 * (b.lo + b.hi),
                    }
                };
                let dir = if pull > 0.0 { g / pull } else { *f / lambda };
                *f = dir * next;
            }
            rod.set_point_loads(&self.loads);
            report.last = rod.solve(prob)?;
            report.passes += 1;
        }
        // Record the contact statistics at the final state.
        let x = rod.positions();
        if let Some(c) = self.contact.as_mut() {
            c.accept(x);
        }
        if let Some(c) = self.self_contact.as_mut() {
            c.accept(x);
        }
        self.passes = report.passes;
        self.change = report.change;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{Obstacle, Shape};

    /// The state digest sees the smallest change of every piece of state a frame carries to
    /// the next (the obstacles' and self-contact's own pieces: their modules' tests).
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp3};
        let plane = Obstacle {
            shape: Shape::Plane {
                point: Vec3::zeros(),
                normal: Vec3::y(),
            },
            friction: 0.0,
        };
        let mut c = LaggedContact::new(
            4,
            Some(Box::new(ObstacleContact::new(vec![plane], 1e-3, 4, 10.0))),
            Some(Box::new(SelfContact::new(1e-3, 1e-3))),
        );
        c.loads[3] = Vec3::new(0.0, 0.2, 0.0);
        c.passes = 3;
        c.change = 1e-7;
        let digest = |c: &LaggedContact| {
            let mut d = crate::math::Digest::default();
            c.digest_into(&mut d);
            d.0
        };
        assert_each_changes(
            &c,
            digest,
            &[
                ("loads", &|c| ulp3(&mut c.loads[3])),
                ("passes", &|c| c.passes += 1),
                ("change", &|c| ulp(&mut c.change)),
                ("contact", &|c| {
                    ulp(&mut c.contact.as_mut().expect("some").stiffness)
                }),
                ("contact (none)", &|c| c.contact = None),
                ("self_contact", &|c| {
                    ulp(&mut c.self_contact.as_mut().expect("some").params.stiffness)
                }),
                ("self_contact (none)", &|c| c.self_contact = None),
            ],
        );
    }
}
