//! L2: the world (rods and what drives them) and the stepper.
//!
//! For the quasi-static model a "step" is the equilibrium at a given time: the end motions and
//! loads are evaluated at `t` and the rod is solved, warm-started from the previous frame.

mod digest;
pub mod instrument;
pub mod needle;
pub mod snapshot;
mod step;
pub mod suturing;
pub mod tensile;
pub mod tool;

pub use digest::DigestVersion;
pub use step::{
    GRASP_BUTTON, Gains, MAX_TOOLS, NoSuchNode, StepOutputs, Substep, Tool, ToolState, ToolTarget,
};

use crate::contact::{LaggedContact, ObstacleContact, SelfContact};
use crate::math::{Mat3, Quat, Vec3, exp_so3, rotation_from_matrix};
use crate::rod::{
    CosseratRod, DerRod, Drive, DynamicRod, EndTarget, NodePotential, SolverError, SolverReport,
    Strands, StrandsError, StrandsProblem, StrandsReport, Tip,
};

/// A prescribed motion of a clamped end: piecewise linear in time, holding the first value
/// before the first time and the last value after the last.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndMotion {
    /// Key times [s], strictly increasing.
    pub times: Vec<f64>,
    /// Displacement from the initial position at each key time [m, world].
    pub displacement: Vec<Vec3>,
    /// Rotation vector applied to the initial frame at each key time [rad, world].
    pub rotation: Vec<Vec3>,
}

impl EndMotion {
    /// Displacement [m] and rotation vector [rad] at time `t` [s].
    pub fn at(&self, t: f64) -> (Vec3, Vec3) {
        let n = self.times.len();
        if n == 0 {
            return (Vec3::zeros(), Vec3::zeros());
        }
        let pick = |v: &Vec<Vec3>, i: usize| v.get(i).copied().unwrap_or_else(Vec3::zeros);
        if t <= self.times[0] {
            return (pick(&self.displacement, 0), pick(&self.rotation, 0));
        }
        if t >= self.times[n - 1] {
            return (pick(&self.displacement, n - 1), pick(&self.rotation, n - 1));
        }
        let i = self.times.partition_point(|&x| x <= t) - 1;
        let s = (t - self.times[i]) / (self.times[i + 1] - self.times[i]);
        let lerp = |v: &Vec<Vec3>| pick(v, i).lerp(&pick(v, i + 1), s);
        (lerp(&self.displacement), lerp(&self.rotation))
    }

    /// The pose at `t` of an end whose initial frame is `rot0`, position `pos0`: rotated by the
    /// rotation vector (world axes, about the end point), then displaced.
    pub fn pose_at(&self, t: f64, rot0: &Mat3, pos0: &Vec3) -> (Mat3, Vec3) {
        let (d, r) = self.at(t);
        (exp_so3(&r) * rot0, pos0 + d)
    }
}

/// How the tip (s = L) of a rod is held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TipHold {
    /// Free: loaded by the tip force and torque.
    Free,
    /// Position held at its initial value plus the end motion's displacement.
    Pinned,
    /// Pose held at its initial value moved by the end motion.
    Clamped,
}

/// Everything that drives one rod: its held ends, motions and loads (world frame, SI).
#[derive(Clone, Debug, PartialEq)]
pub struct RodDrive {
    /// How the start (s = 0) is held (strands: always clamped).
    pub base_hold: TipHold,
    /// Initial base frame (body to world) and position [m].
    pub base: (Mat3, Vec3),
    /// Initial tip frame and position [m].
    pub tip: (Mat3, Vec3),
    /// How the tip is held.
    pub tip_hold: TipHold,
    /// Motion of the clamped base.
    pub start_motion: EndMotion,
    /// Motion of a held tip.
    pub end_motion: EndMotion,
    /// Applied start force [N, world] (dynamic models).
    pub base_force: Vec3,
    /// Applied start torque [N m, world] (dynamic models).
    pub base_torque: Vec3,
    /// Applied tip force [N, world].
    pub tip_force: Vec3,
    /// Applied tip torque [N m, world].
    pub tip_torque: Vec3,
    /// Uniform distributed force, e.g. weight ρ A g [N/m, world].
    pub distributed_force: Vec3,
    /// Gravitational acceleration [m/s²] (dynamic models weigh their lumped masses).
    pub gravity: Vec3,
}

impl RodDrive {
    /// The quasi-static problem at time `t` [s].
    pub fn problem_at(&self, t: f64) -> StrandsProblem {
        let (base_rotation, base_position) =
            self.start_motion.pose_at(t, &self.base.0, &self.base.1);
        let (tip_rot, tip_pos) = self.end_motion.pose_at(t, &self.tip.0, &self.tip.1);
        let tip = match self.tip_hold {
            TipHold::Free => Tip::Free,
            TipHold::Pinned => Tip::Pinned { position: tip_pos },
            TipHold::Clamped => Tip::Clamped {
                rotation: tip_rot,
                position: tip_pos,
            },
        };
        StrandsProblem {
            base_rotation,
            base_position,
            tip,
            tip_force: self.tip_force,
            tip_torque: self.tip_torque,
            distributed_force: self.distributed_force,
        }
    }
}

impl RodDrive {
    /// The dynamic models' drive at time `t` [s]: held-end targets and loads.
    pub fn drive_at(&self, t: f64) -> Drive {
        let (r0, p0) = self.start_motion.pose_at(t, &self.base.0, &self.base.1);
        let (r1, p1) = self.end_motion.pose_at(t, &self.tip.0, &self.tip.1);
        Drive {
            start: EndTarget {
                position: p0,
                rotation: rotation_from_matrix(&r0),
            },
            end: EndTarget {
                position: p1,
                rotation: rotation_from_matrix(&r1),
            },
            gravity: self.gravity,
            start_force: self.base_force,
            start_torque: self.base_torque,
            end_force: self.tip_force,
            end_torque: self.tip_torque,
        }
    }
}

/// A rod model with its state. One variant per model.
#[derive(Clone, Debug)]
pub enum RodModel {
    /// Pai 2002 quasi-static rod.
    Strands(Box<Strands>),
    /// Soler 2018 dynamic Cosserat rod, stepped at `dt` [s] (or solved for equilibrium per
    /// frame when `quasi_static`).
    Cosserat {
        /// The rod.
        rod: Box<CosseratRod>,
        /// Time step [s].
        dt: f64,
        /// Equilibrium per frame instead of dynamics.
        quasi_static: bool,
        /// Contact with the scene's obstacles, if any.
        contact: Option<Box<ObstacleContact>>,
        /// Self-contact (IMC), if the scene asks for it.
        self_contact: Option<Box<SelfContact>>,
    },
    /// Bergou 2008 Discrete Elastic Rod, stepped implicitly as in the IMC thesis (the same
    /// fields as the Cosserat rod).
    Der {
        /// The rod.
        rod: Box<DerRod>,
        /// Time step [s].
        dt: f64,
        /// Equilibrium per frame instead of dynamics.
        quasi_static: bool,
        /// Contact with the scene's obstacles, if any.
        contact: Option<Box<ObstacleContact>>,
        /// Self-contact (IMC), if the scene asks for it.
        self_contact: Option<Box<SelfContact>>,
    },
}

/// The parts of a dynamic rod model (Cosserat or DER) a step needs.
pub(crate) struct DynamicParts<'a> {
    /// The rod, through the solver interface both models share.
    pub rod: &'a mut dyn DynamicRod,
    /// Equilibrium per frame instead of dynamics.
    pub quasi_static: bool,
    /// Contact with the scene's obstacles, if any.
    pub contact: &'a mut Option<Box<ObstacleContact>>,
    /// Self-contact (IMC), if the scene asks for it.
    pub self_contact: &'a mut Option<Box<SelfContact>>,
}

impl RodModel {
    /// A dynamic model's parts (None for STRANDS).
    pub(crate) fn dynamic_mut(&mut self) -> Option<DynamicParts<'_>> {
        let (rod, quasi_static, contact, self_contact): (&mut dyn DynamicRod, _, _, _) = match self
        {
            RodModel::Strands(_) => return None,
            RodModel::Cosserat {
                rod,
                quasi_static,
                contact,
                self_contact,
                ..
            } => (rod.as_mut(), *quasi_static, contact, self_contact),
            RodModel::Der {
                rod,
                quasi_static,
                contact,
                self_contact,
                ..
            } => (rod.as_mut(), *quasi_static, contact, self_contact),
        };
        Some(DynamicParts {
            rod,
            quasi_static,
            contact,
            self_contact,
        })
    }
}

/// One rod of the world.
#[derive(Clone, Debug)]
pub struct SimRod {
    /// The model and its state.
    pub model: RodModel,
    /// What holds and loads it.
    pub drive: RodDrive,
    /// Cross-section radius [m] (for contact set-up and display).
    pub radius: f64,
    /// A STRANDS rod's contact, as lagged point loads (contact::lagged); `None` otherwise.
    pub lagged: Option<Box<LaggedContact>>,
}

impl SimRod {
    /// Node positions [m].
    pub fn positions(&self) -> &[Vec3] {
        match &self.model {
            RodModel::Strands(s) => s.positions(),
            RodModel::Cosserat { rod, .. } => rod.positions(),
            RodModel::Der { rod, .. } => rod.positions(),
        }
    }
    /// Material direction d1 per segment (unit).
    pub fn directors(&self) -> Vec<Vec3> {
        match &self.model {
            RodModel::Strands(s) => s.directors(),
            RodModel::Cosserat { rod, .. } => rod.directors(),
            RodModel::Der { rod, .. } => rod.directors(),
        }
    }
    /// Append the material frame of every segment (body → world) to `out`; allocation-free
    /// when `out` has the capacity.
    pub fn frames_into(&self, out: &mut Vec<Quat>) {
        match &self.model {
            RodModel::Strands(s) => {
                let r = s.rotations();
                out.extend(r[..r.len() - 1].iter().map(|m| {
                    Quat::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(*m))
                }))
            }
            RodModel::Cosserat { rod, .. } => out.extend_from_slice(&rod.q),
            RodModel::Der { rod, .. } => rod.frames_into(out),
        }
    }
    /// Whether the rod has self-contact (and so can hold a knot).
    pub fn self_contact_enabled(&self) -> bool {
        matches!(
            &self.model,
            RodModel::Cosserat {
                self_contact: Some(_),
                ..
            } | RodModel::Der {
                self_contact: Some(_),
                ..
            }
        )
    }
    /// Largest bending curvature [1/m].
    pub fn max_curvature(&self) -> f64 {
        match &self.model {
            RodModel::Strands(s) => s.max_curvature(),
            RodModel::Cosserat { rod, .. } => rod.max_curvature(),
            RodModel::Der { rod, .. } => rod.max_curvature(),
        }
    }
}

/// A step failed for one rod.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("rods[{rod}] at t = {time} s: {source}")]
pub struct SimError {
    /// Index of the rod in the scene.
    pub rod: usize,
    /// Simulation time [s].
    pub time: f64,
    /// What the solver said.
    pub source: ModelError,
}

/// Why a world cannot run in the real-time loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RealtimeError {
    /// A dynamic rod solved for its equilibrium each frame.
    #[error(
        "rods[{rod}] is quasi-static; the real-time loop steps dynamic rods (remove quasi_static = true)"
    )]
    QuasiStatic {
        /// The rod's index in the scene.
        rod: usize,
    },
}

/// A model's solver error.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// From STRANDS.
    #[error(transparent)]
    Strands(#[from] StrandsError),
    /// From the Cosserat rod.
    #[error(transparent)]
    Cosserat(#[from] SolverError),
    /// From the quasi-static coupling's tip-force solve.
    #[error(transparent)]
    Coupling(#[from] tool::CouplingError),
    /// A state or set-up the step cannot take.
    #[error("{0}")]
    Unsupported(&'static str),
}

/// What one rod's solver did over a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum RodReport {
    /// STRANDS: the equilibrium solve.
    Strands(StrandsReport),
    /// Cosserat: the last step (or equilibrium) report, with `steps` steps and the iterations
    /// of all of them.
    Cosserat {
        /// Report of the last step.
        last: SolverReport,
        /// Steps taken over the frame.
        steps: usize,
        /// Iterations summed over the steps.
        iterations: usize,
        /// Steps that hit the iteration cap without converging.
        unconverged: usize,
        /// Contact with obstacles at the end of the frame, if the scene has any.
        contact: Option<ContactStats>,
        /// Self-contact at the end of the frame, if the scene has it.
        self_contact: Option<SelfContactStats>,
    },
}

/// Obstacle contact of one rod at the end of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactStats {
    /// Contact points penetrating (touching) an obstacle.
    pub active: usize,
    /// Deepest penetration of the rod's surface [m].
    pub max_penetration: f64,
    /// Penalty stiffness reached [N/m].
    pub stiffness: f64,
    /// Times the stiffness was raised so far.
    pub raises: usize,
}

/// Self-contact of one rod at the end of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfContactStats {
    /// Candidate segment pairs and pairs in contact (Δ < 2h).
    pub candidates: usize,
    /// See `candidates`.
    pub active: usize,
    /// Smallest distance between candidate segments [m].
    pub min_distance: f64,
    /// IMC stiffness reached [J], and times it was raised.
    pub stiffness: f64,
    /// See `stiffness`.
    pub raises: usize,
}

fn self_contact_stats(c: &Option<Box<SelfContact>>) -> Option<SelfContactStats> {
    c.as_ref().map(|c| SelfContactStats {
        candidates: c.pairs.len(),
        active: c.active,
        min_distance: c.min_distance,
        stiffness: c.params.stiffness,
        raises: c.raises,
    })
}

fn contact_stats(c: &Option<Box<ObstacleContact>>) -> Option<ContactStats> {
    c.as_ref().map(|c| ContactStats {
        active: c.active,
        max_penetration: c.max_penetration,
        stiffness: c.stiffness,
        raises: c.raises,
    })
}

/// What a step did, per rod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Time reached [s].
    pub time: f64,
    /// Solver report per rod.
    pub rods: Vec<RodReport>,
}

/// The simulated world: rods and time.
#[derive(Clone, Debug)]
pub struct World {
    /// The rods.
    pub rods: Vec<SimRod>,
    /// Current time [s].
    pub time: f64,
    /// Scripted rigid motion of each obstacle (by index in every rod's contact; empty: the
    /// obstacle stays where it was built): displacement and rotation vector about its pivot.
    pub obstacle_motions: Vec<EndMotion>,
    /// Needle, deformable tissue and their interaction, if the scene sutures (issue #6).
    pub suturing: Option<Box<suturing::Suturing>>,
}

impl World {
    /// The time step of the dynamic rods [s] (the scene's `[solver] dt`, shared by every
    /// rod); None for a world of quasi-static STRANDS rods only.
    pub fn dt(&self) -> Option<f64> {
        self.rods.iter().find_map(|r| match &r.model {
            RodModel::Cosserat { dt, .. } | RodModel::Der { dt, .. } => Some(*dt),
            RodModel::Strands(_) => None,
        })
    }

    /// The frame (body → world) of the segment a tool on node `node` of rod `rod` holds:
    /// the segment before the node (segment 0 for node 0).
    pub fn held_frame(&self, rod: usize, node: usize) -> Quat {
        let mut frames = Vec::new();
        self.rods[rod].frames_into(&mut frames);
        frames[node.saturating_sub(1).min(frames.len() - 1)]
    }

    /// The needle's mass [kg] and moment of inertia about its grip [kg m²] (suturing scenes).
    pub fn needle_mass(&self) -> Option<(f64, f64)> {
        self.suturing
            .as_ref()
            .map(|su| (su.needle.mass, su.needle.inertia))
    }

    /// Whether rod `rod` is solved for its equilibrium each step (STRANDS).
    pub fn is_quasi_static(&self, rod: usize) -> bool {
        matches!(self.rods[rod].model, RodModel::Strands(_))
    }

    /// How many rods the world has.
    pub fn rod_count(&self) -> usize {
        self.rods.len()
    }

    /// The node positions of rod `rod` [m] (panics past [`World::rod_count`]).
    pub fn rod_positions(&self, rod: usize) -> &[Vec3] {
        self.rods[rod].positions()
    }

    /// The sutured rod (the suture swaged on the needle) and its node at the swage, in a
    /// suturing scene.
    pub fn sutured_rod(&self) -> Option<(usize, usize)> {
        self.suturing.as_ref().map(|s| (s.rod, s.node))
    }

    /// The skin's outward unit normal in a suturing scene: the pad's top face is +y
    /// (`tissue::Face::Top`).
    pub fn skin_normal(&self) -> Option<Vec3> {
        self.suturing.as_ref().map(|_| Vec3::y())
    }

    /// The incision's width [m] at the skin at rest coordinate `z` [m] along the cut (clamped
    /// to the pad's length): the wound gap measure the step records at the pad's centre
    /// (`tissue::Tissue::gap_at`). None without tissue.
    pub fn incision_gap_at(&self, z: f64) -> Option<f64> {
        self.suturing.as_ref().map(|s| {
            let g = &s.tissue.geometry;
            let half = 0.5 * g.size.z;
            s.tissue
                .gap_at(z.clamp(g.center.z - half, g.center.z + half))
        })
    }
}

/// The axial force of segment `e` of a Cosserat rod [N]: `EA Γ₃` (Soler eq. (5),
/// Γ₃ = d₃·(x_{e+1} − x_e)/l − 1), tension positive.
pub(crate) fn axial_force(c: &CosseratRod, e: usize) -> f64 {
    let d3 = c.q[e] * Vec3::z();
    c.params.stretch_stiffness.z * (d3.dot(&(c.x[e + 1] - c.x[e])) / c.params.segment_length - 1.0)
}

/// One step of the sutured rod with the needle and the tissue (sim::suturing, phases 1–5).
fn suture_step(
    s: &mut suturing::Suturing,
    rod: &mut SimRod,
    motions: &[EndMotion],
    h: f64,
    t: f64,
    target: Option<&needle::NeedleTarget>,
) -> Result<SolverReport, ModelError> {
    let radius = rod.radius;
    let RodModel::Cosserat {
        rod: c,
        contact,
        self_contact,
        ..
    } = &mut rod.model
    else {
        return Err(ModelError::Unsupported(
            "suturing needs a dynamic cosserat rod",
        ));
    };
    let g = rod.drive.gravity;
    pose_obstacles(contact, motions, t);
    // Instruments (phase 2a): the jaws move, take or let go; the needle's holder drives it;
    // the free instruments step; their capsules and grasps are posed.
    let mut instruments = s.instruments.take();
    let target = match (instruments.as_deref_mut(), target) {
        (Some(set), _) => {
            let suture = instrument::SutureAt {
                x: &c.x,
                radius,
                broken: c.params.broken,
            };
            let nt = set.before_suture((h, &g), &s.needle, suture, contact.as_deref_mut());
            s.step_needle(h, &g, &nt);
            set.after_needle(&s.needle, contact.as_deref_mut(), c.x.len());
            None
        }
        (None, Some(target)) => Some(*target),
        (None, None) => Some(s.home),
    };
    if let Some(target) = target {
        s.step_needle(h, &g, &target);
    }
    s.prepare_suture(
        contact.as_deref_mut(),
        c.params.segment_length,
        c.params.broken,
        &c.x,
    );
    // A broken segment touches nothing (its nodes part: the line between them is no suture).
    if let Some(k) = contact.as_deref_mut() {
        k.set_broken(c.params.broken);
    }
    if let Some(k) = self_contact.as_deref_mut() {
        k.broken = c.params.broken;
    }
    let [mut k0, mut k1] = contact_potentials(contact, self_contact);
    // The grasps sit beside the channels (`channel + grips`, the grips 0 J when absent, so a
    // scene without instruments sums Φ as before).
    let mut grips = instruments.as_deref_mut().map(|set| &mut set.grips);
    let mut holds = crate::rod::Potentials(&mut [&mut s.channel, &mut grips]);
    let rep = c.step_with(
        h,
        &rod.drive.drive_at(t),
        &mut [&mut k0, &mut k1, &mut s.attach, &mut holds],
    );
    if let Some(set) = instruments.as_deref_mut() {
        set.after_suture(&c.x, c.params.segment_length);
        for k in 0..set.list.len() {
            if let Some(change) = set.changes[k].take() {
                s.instrument_event(t, set.list[k].spec.hand, change);
            }
        }
    }
    s.instruments = instruments;
    // Tension: the axial force EA Γ₃ (Soler eq. (5), Γ₃ = d₃·(x_{e+1} − x_e)/l − 1; shear,
    // which a sharp bend through a hole induces, is not tension), largest over the segments
    // (the broken segment excluded).
    let mut tension = (0.0f64, 0usize);
    for e in 0..c.params.segments {
        if c.params.broken == Some(e) {
            continue;
        }
        let f = axial_force(c, e);
        if f > tension.0 {
            tension = (f, e);
        }
    }
    s.finish(h, t, &c.x, tension);
    if tension.0 > s.params.breaking_force && c.params.broken.is_none() {
        c.params.broken = Some(tension.1);
        s.broke(t, tension.1, tension.0);
    }
    if !s.is_finite() || !s.instruments.as_ref().is_none_or(|set| set.is_finite()) {
        return Err(ModelError::Unsupported(
            "needle, tissue or instrument state is not finite",
        ));
    }
    // A state that is finite but absurd (the solve has run away, e.g. after a break: a suture
    // at 1e24 N, an instrument metres off) is refused as a non-finite one is: the step is
    // reported failed, and the live loop decouples the hands (issue #26).
    let far = |p: &Vec3| p.norm() > DIVERGED_REACH;
    if tension.0 > DIVERGED_TENSION
        || c.x.iter().any(far)
        || far(&s.needle.grip_position)
        || s.instruments
            .as_ref()
            .is_some_and(|set| set.list.iter().any(|i| far(&i.position)))
    {
        return Err(ModelError::Unsupported(
            "the suturing state has diverged (a tension over 10 kN or a body over 10 m from the origin)",
        ));
    }
    rep.map_err(ModelError::from)
}

/// A suture tension no solve that has not run away reaches [N]: about 300 times the breaking
/// force of nylon 2-0 (35 N, the material preset's strength × area, scenes/README.md).
const DIVERGED_TENSION: f64 = 1e4;

/// How far from the origin a suturing scene's bodies can be before the solve is taken to
/// have run away [m] (a scene is a pad of centimetres and hands within a metre of it).
const DIVERGED_REACH: f64 = 10.0;

/// Pose every scripted obstacle of a rod's contact at time `t` [s] (before a step ending at
/// `t`). Allocation-free.
fn pose_obstacles(contact: &mut Option<Box<ObstacleContact>>, motions: &[EndMotion], t: f64) {
    let Some(c) = contact else {
        return;
    };
    for (o, m) in motions.iter().enumerate() {
        if !m.times.is_empty() && o < c.obstacles().len() {
            let (d, r) = m.at(t);
            c.set_pose(o, &exp_so3(&r), &d);
        }
    }
}

/// The rod's obstacle contact and self-contact, the first two potentials of its solver's list
/// (an absent one is `None` and keeps its place: the list's values are summed pairwise, see
/// `rod::DynamicRod`).
fn contact_potentials<'a>(
    contact: &'a mut Option<Box<ObstacleContact>>,
    self_contact: &'a mut Option<Box<SelfContact>>,
) -> [Option<&'a mut dyn NodePotential>; 2] {
    [
        contact.as_deref_mut().map(|k| k as &mut dyn NodePotential),
        self_contact
            .as_deref_mut()
            .map(|k| k as &mut dyn NodePotential),
    ]
}

impl World {
    /// The rod whose knot the live analysis follows (runtime::analysis): the suture of a
    /// suturing scene, else the first rod; None without rods.
    pub fn knot_rod(&self) -> Option<usize> {
        match &self.suturing {
            Some(s) => Some(s.rod),
            None => (!self.rods.is_empty()).then_some(0),
        }
    }

    /// Whether the world can run in the real-time loop: every rod a dynamic Cosserat rod or a
    /// STRANDS rod (solved to equilibrium each tick). The error says which rod is not, and why.
    pub fn check_realtime(&self) -> Result<(), RealtimeError> {
        for (i, r) in self.rods.iter().enumerate() {
            if let RodModel::Cosserat {
                quasi_static: true, ..
            }
            | RodModel::Der {
                quasi_static: true, ..
            } = &r.model
            {
                return Err(RealtimeError::QuasiStatic { rod: i });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motion_interpolates_and_holds() {
        let m = EndMotion {
            times: vec![1.0, 3.0],
            displacement: vec![Vec3::zeros(), Vec3::new(2.0, 0.0, 0.0)],
            rotation: vec![],
        };
        assert_eq!(m.at(0.0).0, Vec3::zeros());
        assert!((m.at(2.0).0 - Vec3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
        assert_eq!(m.at(5.0).0, Vec3::new(2.0, 0.0, 0.0));
        assert_eq!(m.at(2.0).1, Vec3::zeros());
    }
}
