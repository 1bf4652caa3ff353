//! Dynamic Cosserat rod after Soler, Martin & Sorkine-Hornung 2018 ("Cosserat Rods with
//! Projective Dynamics"): `N + 1` nodes and one unit quaternion per segment, stretch–shear and
//! bend–twist energies (eqs. (8)–(11), with the continuum stiffness, see [`energy`]).
//!
//! Two solvers share the discrete energy:
//! - [`Method::Newton`] (default, [`newton`]): coupled implicit Newton on node positions and
//!   body-frame rotation increments, banded Cholesky (half-bandwidth 8), warm start, line
//!   search, Levenberg shift when the Hessian is indefinite (docs/derivations/cosserat.md §C.2).
//! - [`Method::Pd`] ([`pd`]): the published local/global iteration (Algorithm 1) with the
//!   corrected bend–twist weight and body-frame inertia (docs/derivations/cosserat.md §B.6), prefactored tridiagonal
//!   position solves; attachments move without refactorisation (docs/derivations/cosserat.md §B.7).
//!
//! Time integration (both solvers): implicit Euler, or implicit midpoint computed as an implicit
//! Euler half step followed by extrapolation (`x_{n+1} = 2 y - x_n`), which is second order and
//! conserves the energy of linear oscillations.
//!
//! Indexing: node `i` (0..=N), segment `e` (0..N) joins nodes `e` and `e+1`; joint `j` (0..N-1)
//! joins segments `j` and `j+1`. Newton unknowns are interleaved
//! `[x_0, θ_0, x_1, θ_1, …, θ_{N-1}, x_N]`, so every energy couples indices at most 8 apart.

pub mod energy;
pub mod newton;
pub mod pd;

use crate::math::{Mat3, Quat, Vec3};
use crate::rod::implicit::newton::LinearSystem;
use crate::rod::implicit::{Drive, DynamicParams, EndCondition, SolverConfig, SolverReport};

/// Scratch space of the solvers, allocated once.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    /// The Newton system (6 unknowns per node: position, then the segment's rotation).
    pub sys: LinearSystem,
    pub x_prev: Vec<Vec3>,
    pub q_prev: Vec<Quat>,
    pub x_pred: Vec<Vec3>,
    pub q_pred: Vec<Quat>,
    pub gamma_prev: Vec<Vec3>,
    pub omega_prev: Vec<Vec3>,
    pub x_trial: Vec<Vec3>,
    pub q_trial: Vec<Quat>,
    pub pd: Option<pd::PdWork>,
    /// Hold every node position (the rotation-only solve of the midpoint rule).
    pub pin_positions: bool,
    /// Held frames at the start of the step.
    pub held_prev: (Quat, Quat),
    /// Velocities at the start of the step (for re-solves).
    pub v_start: Vec<Vec3>,
    pub omega_start: Vec<Vec3>,
    /// The whole state at the start of a subdivided step (`SolverConfig::subdivide`):
    /// positions, frames, velocities, angular velocities.
    pub checkpoint: (Vec<Vec3>, Vec<Quat>, Vec<Vec3>, Vec<Vec3>),
    /// The held frames before that step (`held_prev` at its start).
    pub checkpoint_held: (Quat, Quat),
}

/// One dynamic Cosserat rod: state, parameters, held ends and solver settings.
#[derive(Clone, Debug)]
pub struct CosseratRod {
    /// Material and discretisation.
    pub params: DynamicParams,
    /// Start (s = 0) and end (s = L) conditions.
    pub ends: (EndCondition, EndCondition),
    /// Solver settings.
    pub config: SolverConfig,
    /// Node positions [m].
    pub x: Vec<Vec3>,
    /// Node velocities [m/s].
    pub v: Vec<Vec3>,
    /// Segment frames (body to world).
    pub q: Vec<Quat>,
    /// Segment angular velocities, body frame [rad/s].
    pub omega: Vec<Vec3>,
    /// Lumped node masses [kg].
    pub mass: Vec<f64>,
    /// Frames held at the start and the end (used by clamped ends) at the current time.
    pub held_frames: (Quat, Quat),
    pub(crate) work: Work,
}

impl CosseratRod {
    /// A rod at rest in the given configuration: `positions` (N+1 nodes) and `frames` (N).
    ///
    /// # Panics
    /// If `frames.len() + 1 != positions.len()` or there are no segments, or if
    /// `params.segments` disagrees: these are programming errors (scenes are validated first).
    pub fn new(
        params: DynamicParams,
        ends: (EndCondition, EndCondition),
        config: SolverConfig,
        positions: Vec<Vec3>,
        frames: Vec<Quat>,
    ) -> Self {
        let n = frames.len();
        assert!(n >= 1 && positions.len() == n + 1 && params.segments == n);
        // Lumped masses m_i = ρA (l_{i-1} + l_i)/2 (docs/derivations/cosserat.md §B.3 advice).
        let m = params.linear_density * params.segment_length;
        let mut mass = vec![m; n + 1];
        mass[0] = 0.5 * m;
        mass[n] = 0.5 * m;
        let dofs = 6 * n + 3;
        let work = Work {
            sys: LinearSystem::new(dofs, 8, 6, 0),
            x_prev: positions.clone(),
            q_prev: frames.clone(),
            x_pred: positions.clone(),
            q_pred: frames.clone(),
            gamma_prev: vec![Vec3::zeros(); n],
            omega_prev: vec![Vec3::zeros(); n.saturating_sub(1)],
            x_trial: positions.clone(),
            q_trial: frames.clone(),
            pd: None,
            pin_positions: false,
            held_prev: (frames[0], frames[n - 1]),
            v_start: vec![Vec3::zeros(); n + 1],
            omega_start: vec![Vec3::zeros(); n],
            checkpoint: (
                positions.clone(),
                frames.clone(),
                vec![Vec3::zeros(); n + 1],
                vec![Vec3::zeros(); n],
            ),
            checkpoint_held: (frames[0], frames[n - 1]),
        };
        let held_frames = (frames[0], frames[n - 1]);
        CosseratRod {
            params,
            ends,
            config,
            held_frames,
            v: vec![Vec3::zeros(); n + 1],
            omega: vec![Vec3::zeros(); n],
            x: positions,
            q: frames,
            mass,
            work,
        }
    }

    /// A straight rod from `start` along the unit `tangent` with material direction `normal`
    /// (perpendicular to the tangent), at rest.
    pub fn straight(
        params: DynamicParams,
        ends: (EndCondition, EndCondition),
        config: SolverConfig,
        start: Vec3,
        frame: Mat3,
    ) -> Self {
        let n = params.segments;
        let (x, q0) = params.straight(start, &frame);
        CosseratRod::new(params, ends, config, x, vec![q0; n])
    }

    /// Segments N.
    pub fn segments(&self) -> usize {
        self.params.segments
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): node
    /// positions and velocities, segment frames and angular velocities, the held end frames
    /// (the midpoint rule starts its half step from them), the broken segment and the rest
    /// shape (natural curvature and segment length). Every field is named here, so a new one
    /// must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let CosseratRod {
            params,
            // Set at construction from the scene.
            ends: _,
            config: _,
            mass: _,
            x,
            v,
            q,
            omega,
            held_frames,
            work,
        } = self;
        let DynamicParams {
            segments: _,
            stretch_stiffness: _,
            bend_stiffness: _,
            linear_density: _,
            rotational_density: _,
            mass_damping: _,
            stiffness_damping: _,
            segment_length,
            rest_darboux,
            broken,
        } = params;
        // Scratch of one step: `begin_step` (the start and the prediction), the strains at
        // the step's start, `hold` (velocities and frames for re-solves), the trial point of
        // a line search, PD's factor (a cache of the step size and ends), and the start of a
        // subdivided step.
        let Work {
            sys: _,
            x_prev: _,
            q_prev: _,
            x_pred: _,
            q_pred: _,
            gamma_prev: _,
            omega_prev: _,
            x_trial: _,
            q_trial: _,
            pd: _,
            pin_positions: _,
            held_prev: _,
            v_start: _,
            omega_start: _,
            checkpoint: _,
            checkpoint_held: _,
        } = work;
        d.vec3s(x);
        d.vec3s(v);
        q.iter().for_each(|q| d.quat(q));
        d.vec3s(omega);
        d.quat(&held_frames.0);
        d.quat(&held_frames.1);
        d.u64(broken.map_or(u64::MAX, |b| b as u64));
        d.f64(*segment_length);
        d.vec3(rest_darboux);
    }

    /// Node positions [m].
    pub fn positions(&self) -> &[Vec3] {
        &self.x
    }

    /// Material direction d1 per segment.
    pub fn directors(&self) -> Vec<Vec3> {
        self.q.iter().map(|q| q * Vec3::x()).collect()
    }

    /// Frame of segment `e` as a rotation matrix (body to world).
    pub fn frame(&self, e: usize) -> Mat3 {
        self.q[e].to_rotation_matrix().into_inner()
    }

    /// Darboux vector Ω per joint [1/m] (Soler eq. (11)).
    pub fn darboux(&self) -> Vec<Vec3> {
        let l = self.params.segment_length;
        self.q
            .windows(2)
            .map(|w| energy::darboux(&w[0], &w[1], l))
            .collect()
    }

    /// Largest bending curvature `sqrt(Ω1² + Ω2²)` over the joints [1/m].
    pub fn max_curvature(&self) -> f64 {
        let l = self.params.segment_length;
        self.q
            .windows(2)
            .map(|w| energy::darboux(&w[0], &w[1], l).xy().norm())
            .fold(0.0, f64::max)
    }

    /// Stretch–shear and bend–twist energies [J], including the half-length joints of clamped
    /// ends.
    pub fn elastic_energy(&self) -> (f64, f64) {
        let p = &self.params;
        let l = p.segment_length;
        let mut se = 0.0;
        for e in 0..p.segments {
            let gam = energy::shear_strain(&self.x[e], &self.x[e + 1], &self.frame(e), l);
            se += 0.5 * l * gam.dot(&gam.component_mul(&p.stretch_stiffness));
        }
        let mut bt = 0.0;
        // (Joint by joint, not through `darboux()`'s vector: the physics loop measures every
        // step and must not allocate.)
        for w in self.q.windows(2) {
            let d = energy::darboux(&w[0], &w[1], l) - p.rest_darboux;
            bt += 0.5 * l * d.dot(&d.component_mul(&p.bend_stiffness));
        }
        let n = p.segments;
        let mut boundary = |a: &Quat, b: &Quat| {
            let d = energy::darboux(a, b, 0.5 * l) - p.rest_darboux;
            bt += 0.25 * l * d.dot(&d.component_mul(&p.bend_stiffness));
        };
        if self.ends.0 == EndCondition::Clamped {
            boundary(&self.held_frames.0, &self.q[0]);
        }
        if self.ends.1 == EndCondition::Clamped {
            boundary(&self.q[n - 1], &self.held_frames.1);
        }
        (se, bt)
    }

    /// Kinetic energy `½ Σ m v² + ½ Σ ωᵀ J ω` [J].
    pub fn kinetic_energy(&self) -> f64 {
        let jl = self.params.rotational_density * self.params.segment_length;
        let t: f64 = self
            .mass
            .iter()
            .zip(&self.v)
            .map(|(m, v)| 0.5 * m * v.norm_squared())
            .sum();
        let r: f64 = self
            .omega
            .iter()
            .map(|w| 0.5 * w.dot(&w.component_mul(&jl)))
            .sum();
        t + r
    }

    /// The report fields that describe the state (energies, stretch, quaternion error).
    pub fn measure(&self, gravity: &Vec3, report: &mut SolverReport) {
        let l = self.params.segment_length;
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
        let qerr = self
            .q
            .iter()
            .map(|q| (1.0 - q.into_inner().norm()).abs())
            .fold(0.0, f64::max);
        report.max_quaternion_error = report.max_quaternion_error.max(qerr);
        report.max_stretch = self
            .x
            .windows(2)
            .map(|w| ((w[1] - w[0]).norm() / l - 1.0).abs())
            .fold(0.0, f64::max);
    }

    /// Apply the held-end targets of `drive` to the node positions.
    pub(crate) fn impose_ends(x: &mut [Vec3], ends: (EndCondition, EndCondition), d: &Drive) {
        let n = x.len() - 1;
        if ends.0 != EndCondition::Free {
            x[0] = d.start.position;
        }
        if ends.1 != EndCondition::Free {
            x[n] = d.end.position;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees one ulp of every piece of state a step carries to the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp_q, ulp3};
        let p = crate::rod::RodParams {
            radius: 2e-4,
            youngs_modulus: 2e9,
            shear_modulus: 7e8,
            density: 1100.0,
        };
        let mut params = DynamicParams::new(&p, 0.1, 10);
        params.rest_darboux = Vec3::new(1.0, 0.0, 0.0);
        let mut rod = CosseratRod::straight(
            params,
            (EndCondition::Clamped, EndCondition::Free),
            SolverConfig::default(),
            Vec3::zeros(),
            Mat3::identity(),
        );
        let drive = Drive {
            start: crate::rod::EndTarget {
                position: Vec3::zeros(),
                rotation: Quat::identity(),
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
        let digest = |r: &CosseratRod| {
            let mut d = crate::math::Digest::default();
            r.digest_into(&mut d);
            d.0
        };
        assert_each_changes(
            &rod,
            digest,
            &[
                ("x", &|r| ulp3(&mut r.x[10])),
                ("v", &|r| ulp3(&mut r.v[10])),
                ("q", &|r| ulp_q(&mut r.q[9])),
                ("omega", &|r| ulp3(&mut r.omega[9])),
                ("held_frames.0", &|r| ulp_q(&mut r.held_frames.0)),
                ("held_frames.1", &|r| ulp_q(&mut r.held_frames.1)),
                ("params.broken", &|r| r.params.broken = Some(4)),
                ("params.segment_length", &|r| {
                    crate::math::digest_test::ulp(&mut r.params.segment_length)
                }),
                ("params.rest_darboux", &|r| ulp3(&mut r.params.rest_darboux)),
            ],
        );
    }
}
