//! Surgical instruments (issue #22): a needle driver or forceps per hand, each a rigid body
//! coupled to its device, with jaws that open and close and grasp the needle or the suture.
//!
//! Body frame: the jaws' hinge at the origin, the jaws along +z (closed: one capsule from the
//! hinge to `jaw_length`), opening symmetrically in the x–z plane (each jaw turned by ±α/2
//! about y, α the opening angle); the shaft along −z from the hinge.
//!
//! Dynamics: a rigid body of the instrument's mass and (isotropic) inertia about its hinge,
//! the coupling spring-damper to the device target implicit (solved exactly per step, stable
//! at any stiffness), the suture's pull on a grasp lagged one step — the scheme of the needle
//! (sim::needle, docs/models.md "needle"):
//!
//! `v' = (m v + h F + h k (x_t − x) + h c v_t) / (m + h c + h² k)`,
//! `ω' = (I ω + h τ + h k_r θ_err) / (I + h c_r + h² k_r)`,
//!
//! then `x += h v'`, `R ← exp(h ω') R`. While an instrument holds the needle the two move as
//! one body: the needle (with the instrument's mass) is driven by the instrument's device
//! through the grasp's fixed offset, and the instrument follows the needle.
//!
//! Contact: both jaws and the shaft are capsules among the suture's obstacles (with the
//! scene's friction), posed every step, so the suture wraps around a closed jaw and slides
//! off it. A grasped suture point is exempt from its own instrument's jaws.
//!
//! Grasping the suture: a spring from the suture's material point (segment e, parameter s)
//! to the grasp point on the jaws, inside the suture's implicit solve
//! (`V = ½ k |(1 − s) x_e + s x_{e+1} − a|²`, [`SutureGrips`]). Past the grip strength the
//! suture slides through the jaws (the held material point moves to the suture point nearest
//! the jaws); pulled out sideways past it, the grasp is lost.

use super::needle::{Needle, NeedleTarget};
use super::tool::Hand;
use crate::contact::{ObstacleContact, segment};
use crate::math::{Mat3, Quat, Vec3};
use crate::rod::{NodePotential, PotentialSink};

/// The kind of instrument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstrumentKind {
    /// A needle driver (needle holder): strong, short jaws.
    NeedleDriver,
    /// Tissue forceps: fine tips, a lighter grip.
    Forceps,
}

impl InstrumentKind {
    /// The name in scene files (`needle-driver`, `forceps`).
    pub fn name(self) -> &'static str {
        match self {
            InstrumentKind::NeedleDriver => "needle-driver",
            InstrumentKind::Forceps => "forceps",
        }
    }
}

/// An instrument's geometry and grip, as a scene sets it up (`[[instruments]]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstrumentSpec {
    /// Needle driver or forceps.
    pub kind: InstrumentKind,
    /// The hand (and device) that drives it.
    pub hand: Hand,
    /// Jaw length from the hinge to the tip [m] and the radius of a jaw's capsule [m] (at
    /// the hinge, for a tapered jaw).
    pub jaw_length: f64,
    /// See `jaw_length`.
    pub jaw_radius: f64,
    /// A jaw's radius at its tip [m]: `jaw_radius` for a capsule, less for a jaw that tapers
    /// (a round cone from `jaw_radius` at the hinge to this at the tip).
    pub jaw_tip_radius: f64,
    /// Shaft length behind the hinge [m] and its radius [m].
    pub shaft_length: f64,
    /// See `shaft_length`.
    pub shaft_radius: f64,
    /// Opening angle of the open jaws [rad] and how fast they open and close [rad/s].
    pub opening: f64,
    /// See `opening`.
    pub jaw_speed: f64,
    /// Largest force the closed jaws hold the suture with before it slides [N].
    pub grip_strength: f64,
    /// Stiffness of the grasp on the suture [N/m].
    pub grip_stiffness: f64,
    /// Mass [kg] and moment of inertia about the hinge [kg m²] (the instrument in the hand).
    pub mass: f64,
    /// See `mass`.
    pub inertia: f64,
}

/// What the jaws hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hold {
    /// Nothing.
    Nothing,
    /// The needle, at a fixed offset: the needle's grip point and frame in the body frame.
    Needle {
        /// Grip point in the body frame [m].
        position: Vec3,
        /// Needle frame relative to the body.
        rotation: Quat,
    },
    /// The suture's material point (segment, parameter in [0, 1]) at the grasp point of the
    /// jaws (body frame [m]).
    Suture {
        /// Segment.
        segment: usize,
        /// Parameter along it.
        s: f64,
        /// Grasp point on the jaws, body frame [m].
        anchor: Vec3,
    },
}

/// What happened to a grasp in a step (reported as events by the suturing state).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GraspChange {
    /// The jaws closed on the needle (arc fraction of the grasp).
    Needle(f64),
    /// The jaws closed on the suture at this arc length from its first node [m].
    Suture(f64),
    /// The jaws closed on nothing.
    Nothing,
    /// The jaws opened, letting go of what they held.
    Opened,
    /// The suture slid through the jaws (to this arc length [m]).
    Slipped(f64),
    /// The suture was pulled out of the jaws.
    Lost,
}

/// Obstacles of one instrument among the suture's contact: jaw A, jaw B, shaft.
pub const OBSTACLES_PER_INSTRUMENT: usize = 3;

/// What an instrument's jaws hold, as the viewer shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Holding {
    /// Nothing.
    Nothing,
    /// The needle.
    Needle,
    /// The suture's material point on segment `segment` at parameter `s` in [0, 1] (nodes
    /// `segment` and `segment + 1` of the sutured rod).
    Suture {
        /// Segment.
        segment: usize,
        /// Parameter along it.
        s: f64,
    },
}

/// An instrument after a step, as the viewer draws it (world frame, SI). `Copy` and
/// fixed-size: a step's outputs and the snapshots carry it without allocating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstrumentState {
    /// Needle driver or forceps.
    pub kind: InstrumentKind,
    /// Jaw A, jaw B and the shaft as the contact capsules they are (the suture's obstacles):
    /// the ends of each core segment [m] and its radius [m] (a jaw's at its hinge end).
    pub capsules: [(Vec3, Vec3, f64); OBSTACLES_PER_INSTRUMENT],
    /// A jaw's radius at its tip [m]: its capsule's radius, or less for a jaw that tapers (a
    /// round cone from the hinge's radius to this).
    pub jaw_tip_radius: f64,
    /// The jaws' opening angle now [rad], and that of the open jaws [rad].
    pub opening: f64,
    /// See `opening`.
    pub full_opening: f64,
    /// Whether the jaws are commanded closed (they may still be turning).
    pub closed: bool,
    /// What the jaws hold.
    pub holding: Holding,
}

/// The state of an instrument's jaws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jaws {
    /// Closed (opening 0).
    Closed,
    /// Commanded closed, still turning.
    Closing,
    /// Commanded open, still turning.
    Opening,
    /// Open (at the full opening).
    Open,
}

impl Jaws {
    /// `closed`, `closing`, `opening`, `open`.
    pub fn name(self) -> &'static str {
        match self {
            Jaws::Closed => "closed",
            Jaws::Closing => "closing",
            Jaws::Opening => "opening",
            Jaws::Open => "open",
        }
    }
}

impl InstrumentState {
    /// The radius [m] of capsule `j` (jaw A, jaw B, shaft) at its core's midpoint, across
    /// it: a tapered jaw's side there (docs/derivations/round-cone.md: `ρ = (ra − z sin β)/cos β`
    /// at `z = L/2`, `(ra + rb)/(2 cos β)`), else the capsule's radius.
    pub fn radius_at_middle(&self, j: usize) -> f64 {
        let (a, b, r) = self.capsules[j];
        let tip = self.jaw_tip_radius;
        if j >= 2 || tip >= r {
            return r;
        }
        let sin_b = (r - tip) / (b - a).norm();
        0.5 * (r + tip) / (1.0 - sin_b * sin_b).max(0.0).sqrt()
    }

    /// The jaws' state, from their command and their angle.
    pub fn jaws(&self) -> Jaws {
        match (self.closed, self.opening) {
            (true, a) if a <= 0.0 => Jaws::Closed,
            (true, _) => Jaws::Closing,
            (false, a) if a >= self.full_opening => Jaws::Open,
            (false, _) => Jaws::Opening,
        }
    }
}

/// An instrument and its state.
#[derive(Clone, Debug)]
pub struct Instrument {
    /// Geometry and grip.
    pub spec: InstrumentSpec,
    /// Hinge position [m] and body frame (body → world).
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Velocity [m/s] and angular velocity [rad/s] (world).
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Opening angle now [rad], and whether the jaws are commanded closed.
    pub opening: f64,
    /// See `opening`.
    pub closed: bool,
    /// The jaws were just told to close: what lies between them is caught this step.
    pub bite: bool,
    /// What the jaws hold.
    pub hold: Hold,
    /// The device's target for the hinge and the coupling's gains.
    pub target: NeedleTarget,
    /// Where the instrument is held when no device drives it (its pose at t = 0).
    pub home: NeedleTarget,
    /// Force of the coupling on the instrument over the last step [N] (the hand feels its
    /// opposite).
    pub coupling_force: Vec3,
    /// Index of its first obstacle among the suture's contact (jaw A, jaw B, shaft follow).
    pub first_obstacle: usize,
    /// The suture's nodes the jaws just let go of (first, last): still not pushed by the
    /// jaws until each lies clear of both, so the opening jaws do not strike the strand
    /// that lay squeezed between them.
    pub released: Option<(usize, usize)>,
    force: Vec3,
    torque: Vec3,
}

impl Instrument {
    /// An instrument at rest with its hinge at `position` and frame `rotation`, jaws closed,
    /// holding nothing; its obstacles start at `first_obstacle` in the suture's contact.
    pub fn new(
        spec: InstrumentSpec,
        position: Vec3,
        rotation: Quat,
        first_obstacle: usize,
    ) -> Self {
        let home = NeedleTarget {
            position,
            velocity: Vec3::zeros(),
            rotation,
            angular_velocity: Vec3::zeros(),
            k: 0.0,
            c: 0.0,
            kr: 0.0,
            cr: 0.0,
        };
        Instrument {
            spec,
            position,
            rotation,
            velocity: Vec3::zeros(),
            angular_velocity: Vec3::zeros(),
            opening: 0.0,
            closed: true,
            bite: false,
            hold: Hold::Nothing,
            target: home,
            home,
            coupling_force: Vec3::zeros(),
            first_obstacle,
            released: None,
            force: Vec3::zeros(),
            torque: Vec3::zeros(),
        }
    }

    /// The jaws' capsules and the shaft's in the body frame: (a, b, radius) each, jaw A,
    /// jaw B, shaft, at opening angle `alpha` [rad].
    pub fn body_capsules(&self, alpha: f64) -> [(Vec3, Vec3, f64); 3] {
        let s = &self.spec;
        let jaw = |sign: f64| {
            let (sn, cs) = (0.5 * alpha * sign).sin_cos();
            // The jaw turned by ±α/2 about y: its tip at L (sin, 0, cos).
            let dir = Vec3::new(sn, 0.0, cs);
            (Vec3::zeros(), dir * s.jaw_length, s.jaw_radius)
        };
        [
            jaw(1.0),
            jaw(-1.0),
            (
                Vec3::new(0.0, 0.0, -s.jaw_radius),
                Vec3::new(0.0, 0.0, -s.shaft_length),
                s.shaft_radius,
            ),
        ]
    }

    /// The capsules in the world (jaw A, jaw B, shaft), as the viewer draws them.
    pub fn capsules(&self) -> [(Vec3, Vec3, f64); 3] {
        self.body_capsules(self.opening)
            .map(|(a, b, r)| (self.to_world(&a), self.to_world(&b), r))
    }

    /// The instrument as the viewer draws it.
    pub fn state(&self) -> InstrumentState {
        InstrumentState {
            kind: self.spec.kind,
            capsules: self.capsules(),
            jaw_tip_radius: self.spec.jaw_tip_radius,
            opening: self.opening,
            full_opening: self.spec.opening,
            closed: self.closed,
            holding: match self.hold {
                Hold::Nothing => Holding::Nothing,
                Hold::Needle { .. } => Holding::Needle,
                Hold::Suture { segment, s, .. } => Holding::Suture { segment, s },
            },
        }
    }

    /// A body point in the world [m].
    pub fn to_world(&self, p: &Vec3) -> Vec3 {
        self.position + self.rotation * p
    }

    /// The jaws' tip (closed: the tip of the jaw capsule) [m].
    pub fn tip(&self) -> Vec3 {
        self.to_world(&Vec3::new(0.0, 0.0, self.spec.jaw_length))
    }

    /// Phase 1 of the step: the coupling's target and gains (`target`), and a press of the
    /// jaw button (toggles the jaws).
    pub fn take_target(&mut self, target: NeedleTarget, toggle: bool) {
        self.target = target;
        if toggle {
            self.closed = !self.closed;
            self.bite = self.closed;
        }
    }

    /// Turn the jaws toward their command over `h` [s] at the jaw speed.
    fn move_jaws(&mut self, h: f64) {
        let goal = if self.closed { 0.0 } else { self.spec.opening };
        let d = self.spec.jaw_speed * h;
        self.opening = if self.opening < goal {
            (self.opening + d).min(goal)
        } else {
            (self.opening - d).max(goal)
        };
    }

    /// Apply the suture's pull [N] at world point `at` for the next step.
    pub fn apply(&mut self, f: &Vec3, at: &Vec3) {
        self.force += f;
        self.torque += (at - self.position).cross(f);
    }

    /// One step of the free body (not holding the needle) under gravity `g` [m/s²], the
    /// lagged suture forces and the coupling (see the module's equations).
    fn step_body(&mut self, h: f64, g: &Vec3) {
        let t = &self.target;
        let (m, i) = (self.spec.mass, self.spec.inertia);
        let f = self.force + g * m;
        let v = (self.velocity * m
            + f * h
            + (t.position - self.position) * (h * t.k)
            + t.velocity * (h * t.c))
            / (m + h * t.c + h * h * t.k);
        let err = (t.rotation * self.rotation.inverse()).scaled_axis();
        let w = (self.angular_velocity * i
            + self.torque * h
            + err * (h * t.kr)
            + t.angular_velocity * (h * t.cr))
            / (i + h * t.cr + h * h * t.kr);
        self.velocity = v;
        self.angular_velocity = w;
        self.position += v * h;
        self.rotation = Quat::from_scaled_axis(w * h) * self.rotation;
        self.rotation.renormalize();
        self.coupling_force = (t.position - self.position) * t.k + (t.velocity - v) * t.c;
        self.force = Vec3::zeros();
        self.torque = Vec3::zeros();
    }

    /// The needle's coupling target while this instrument holds it at `offset`: the device's
    /// target composed with the grasp's offset, with this instrument's gains.
    fn needle_target(&self, position: &Vec3, rotation: &Quat) -> NeedleTarget {
        let t = &self.target;
        NeedleTarget {
            position: t.position + t.rotation * position,
            velocity: t.velocity,
            rotation: t.rotation * rotation,
            angular_velocity: t.angular_velocity,
            ..*t
        }
    }

    /// Follow the needle this instrument holds (the two are one body).
    fn follow(&mut self, needle: &Needle, position: &Vec3, rotation: &Quat) {
        self.rotation = needle.rotation * rotation.inverse();
        self.position = needle.grip_position - self.rotation * position;
        self.velocity = needle.velocity;
        self.angular_velocity = needle.angular_velocity;
        self.coupling_force = needle.coupling_force;
    }

    /// The point on the jaws' bisector nearest to world point `p`, and its parameter along
    /// the jaws in [0, 1] (0 hinge, 1 tip).
    fn bisector_nearest(&self, p: &Vec3) -> (Vec3, f64) {
        let b = self.rotation.inverse() * (p - self.position);
        let u = (b.z / self.spec.jaw_length).clamp(0.0, 1.0);
        (
            self.to_world(&Vec3::new(0.0, 0.0, u * self.spec.jaw_length)),
            u,
        )
    }
}

/// The suture as the instruments see it at a step's start.
#[derive(Clone, Copy, Debug)]
pub struct SutureAt<'a> {
    /// Node positions [m].
    pub x: &'a [Vec3],
    /// Radius [m].
    pub radius: f64,
    /// The broken segment, if any (nothing can be grasped there).
    pub broken: Option<usize>,
}

/// The instruments of a suturing world, their grasps on the suture, and the bookkeeping of
/// the needle between them.
#[derive(Clone, Debug)]
pub struct Instruments {
    /// The instruments (right hand first).
    pub list: Vec<Instrument>,
    /// The grasp springs on the suture, one slot per instrument (a potential of its solve).
    pub grips: SutureGrips,
    /// Which instrument holds the needle.
    pub needle_holder: Option<usize>,
    /// Changes of the last step, per instrument.
    pub changes: Vec<Option<GraspChange>>,
    exempt: Vec<bool>,
}

impl Instruments {
    /// A set of instruments; `nodes` is the suture's node count.
    pub fn new(list: Vec<Instrument>, nodes: usize) -> Self {
        let n = list.len();
        Instruments {
            list,
            grips: SutureGrips {
                grips: vec![None; n],
            },
            needle_holder: None,
            changes: vec![None; n],
            exempt: vec![false; nodes],
        }
    }

    /// Phase 2a: the jaws move and take or let go; the needle's target (from its holder, or
    /// uncoupled); each free instrument's body steps (step `h` [s], gravity `g` [m/s²]); the
    /// grasp springs and the instruments' obstacles are posed for the suture's solve.
    pub fn before_suture(
        &mut self,
        (h, g): (f64, &Vec3),
        needle: &Needle,
        suture: SutureAt<'_>,
        contact: Option<&mut ObstacleContact>,
    ) -> NeedleTarget {
        let SutureAt {
            x,
            radius: rod_radius,
            broken,
        } = suture;
        for (k, ins) in self.list.iter_mut().enumerate() {
            // Open command: let go at once.
            if !ins.closed && !matches!(ins.hold, Hold::Nothing) {
                if matches!(ins.hold, Hold::Needle { .. }) {
                    self.needle_holder = None;
                }
                if let Hold::Suture { segment, .. } = ins.hold {
                    ins.released = Some(held_nodes(segment, x.len()));
                }
                ins.hold = Hold::Nothing;
                self.grips.grips[k] = None;
                self.changes[k] = Some(GraspChange::Opened);
            }
            // The jaws start to close: catch what lies between them now (it is held from this
            // step, pulled onto the jaws' bisector as they close).
            let bite = std::mem::take(&mut ins.bite);
            if bite && matches!(ins.hold, Hold::Nothing) {
                ins.released = None;
                self.changes[k] = Some(catch(ins, needle, x, rod_radius, broken));
                match ins.hold {
                    Hold::Needle { .. } => {
                        // A hand-over: the other instrument lets go.
                        if let Some(o) = self.needle_holder.filter(|&o| o != k) {
                            self.changes[o] = Some(GraspChange::Opened);
                        }
                        self.needle_holder = Some(k);
                    }
                    Hold::Suture { segment, s, .. } => {
                        self.grips.grips[k] = Some(Grip {
                            segment,
                            s,
                            anchor: Vec3::zeros(),
                            k: ins.spec.grip_stiffness,
                            force: Vec3::zeros(),
                        });
                    }
                    Hold::Nothing => {}
                }
            }
            ins.move_jaws(h);
            // The let-go nodes are the jaws' again once each lies clear of both jaws.
            if let Some((lo, hi)) = ins.released {
                let caps = ins.capsules();
                let clear = x[lo..=hi].iter().all(|p| {
                    caps[..2]
                        .iter()
                        .all(|(a, b, r)| segment::distance(p, p, a, b).distance > r + rod_radius)
                });
                if clear {
                    ins.released = None;
                }
            }
        }
        // The instrument that lost the needle in a hand-over holds nothing now.
        for (k, ins) in self.list.iter_mut().enumerate() {
            if matches!(ins.hold, Hold::Needle { .. }) && self.needle_holder != Some(k) {
                ins.hold = Hold::Nothing;
            }
        }
        let needle_target = match self.needle_holder.map(|k| (&self.list[k], k)) {
            Some((ins, _)) => match ins.hold {
                Hold::Needle { position, rotation } => ins.needle_target(&position, &rotation),
                _ => unreachable!("the holder holds the needle"),
            },
            None => NeedleTarget {
                k: 0.0,
                c: 0.0,
                kr: 0.0,
                cr: 0.0,
                ..needle_home(needle)
            },
        };
        for (k, ins) in self.list.iter_mut().enumerate() {
            if self.needle_holder != Some(k) {
                ins.step_body(h, g);
            }
        }
        self.pose(contact, x.len());
        needle_target
    }

    /// Put the instruments' obstacles where the instruments are, as the scene builds them
    /// (twice, so the first step's friction does not see them move there from the origin).
    pub fn place(&mut self, contact: &mut ObstacleContact, nodes: usize) {
        self.pose(Some(&mut *contact), nodes);
        self.pose(Some(contact), nodes);
    }

    /// Pose the grasp springs' anchors and the instruments' obstacles (after the bodies
    /// moved; the holder of the needle after the needle moved, see [`Instruments::after_needle`]).
    fn pose(&mut self, contact: Option<&mut ObstacleContact>, nodes: usize) {
        for (k, ins) in self.list.iter().enumerate() {
            if let (Some(gr), Hold::Suture { anchor, .. }) =
                (self.grips.grips[k].as_mut(), ins.hold)
            {
                gr.anchor = ins.to_world(&anchor);
            }
        }
        let Some(c) = contact else { return };
        for ins in self.list.iter() {
            let rest = ins.body_capsules(0.0);
            let now = ins.body_capsules(ins.opening);
            let r = ins.rotation.to_rotation_matrix().into_inner();
            for (j, ((a0, b0, _), (a, b, _))) in rest.iter().zip(now.iter()).enumerate() {
                // The built capsule (body frame, closed jaws) is turned about its pivot (the
                // midpoint of its core): world = pivot + t + R (q − pivot) must be p + R' q
                // with R' the jaw's turn in the world: R' = R · turn, t = p + R' c − c.
                let turn = jaw_turn(a0, b0, a, b);
                let rw = r * turn;
                let c0 = 0.5 * (a0 + b0);
                let t = ins.position + rw * c0 - c0;
                c.set_pose(ins.first_obstacle + j, &rw, &t);
            }
            // The held suture point is not pushed by its own jaws.
            self.exempt.iter_mut().for_each(|e| *e = false);
            let held = match ins.hold {
                Hold::Suture { segment, .. } => Some(held_nodes(segment, nodes)),
                _ => ins.released,
            };
            if let Some((lo, hi)) = held {
                self.exempt[lo..=hi].iter_mut().for_each(|e| *e = true);
            }
            c.set_exempt(ins.first_obstacle, &self.exempt);
            c.set_exempt(ins.first_obstacle + 1, &self.exempt);
        }
    }

    /// After the needle's step: the holder follows the needle, and its obstacles move with it.
    pub fn after_needle(
        &mut self,
        needle: &Needle,
        contact: Option<&mut ObstacleContact>,
        nodes: usize,
    ) {
        if let Some(k) = self.needle_holder {
            let ins = &mut self.list[k];
            if let Hold::Needle { position, rotation } = ins.hold {
                ins.follow(needle, &position, &rotation);
            }
            self.pose(contact, nodes);
        }
    }

    /// After the suture's step: each grasp's pull reaches its instrument (next step), and a
    /// grasp pulled past its grip strength slides or is lost.
    pub fn after_suture(&mut self, x: &[Vec3], segment_length: f64) {
        for (k, ins) in self.list.iter_mut().enumerate() {
            let Some(gr) = self.grips.grips[k].as_mut() else {
                continue;
            };
            let f = gr.force;
            ins.apply(&(-f), &gr.anchor);
            if f.norm() <= ins.spec.grip_strength {
                continue;
            }
            // Slide: the material point moves to the suture point nearest the jaws.
            let (e, s, d) = nearest_on_polyline(x, &gr.anchor, gr.segment, 4);
            if gr.k * d > ins.spec.grip_strength {
                self.grips.grips[k] = None;
                ins.hold = Hold::Nothing;
                self.changes[k] = Some(GraspChange::Lost);
                continue;
            }
            gr.segment = e;
            gr.s = s;
            if let Hold::Suture { segment, s: hs, .. } = &mut ins.hold {
                *segment = e;
                *hs = s;
            }
            self.changes[k] = Some(GraspChange::Slipped((e as f64 + s) * segment_length));
        }
    }

    /// Whether every instrument's state is finite.
    pub fn is_finite(&self) -> bool {
        self.list.iter().all(|i| {
            i.position.iter().all(|c| c.is_finite())
                && i.velocity.iter().all(|c| c.is_finite())
                && i.angular_velocity.iter().all(|c| c.is_finite())
        })
    }

    /// Feed the state digest version 1 (`sim::DigestVersion::V1`) covers of the instruments
    /// (bodies, jaws, holds, grasp forces). Kept bit for bit for the recordings that carry it.
    pub fn digest_v1_into(&self, d: &mut crate::math::Digest) {
        for (k, i) in self.list.iter().enumerate() {
            d.vec3(&i.position);
            d.quat(&i.rotation);
            d.vec3(&i.velocity);
            d.vec3(&i.angular_velocity);
            d.f64(i.opening);
            d.u64(u64::from(i.closed));
            match i.hold {
                Hold::Nothing => d.u64(0),
                Hold::Needle { position, rotation } => {
                    d.u64(1);
                    d.vec3(&position);
                    d.quat(&rotation);
                }
                Hold::Suture { segment, s, anchor } => {
                    d.u64(2);
                    d.u64(segment as u64);
                    d.f64(s);
                    d.vec3(&anchor);
                }
            }
            if let Some(g) = &self.grips.grips[k] {
                d.vec3(&g.force);
            }
        }
    }
}

impl Instruments {
    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`):
    /// each instrument's (see [`Instrument::digest_into`]), the grasps on the suture, which
    /// instrument holds the needle and the grasp changes not yet reported. Every field is
    /// named here, so a new one must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Instruments {
            list,
            grips,
            needle_holder,
            changes,
            // Scratch of `pose`: rebuilt for each instrument before it is used.
            exempt: _,
        } = self;
        d.usize(list.len());
        for i in list {
            i.digest_into(d);
        }
        let SutureGrips { grips } = grips;
        for g in grips {
            match g {
                None => d.u64(0),
                Some(g) => {
                    d.u64(1);
                    let Grip {
                        segment,
                        s,
                        anchor,
                        k,
                        force,
                    } = g;
                    d.usize(*segment);
                    d.f64(*s);
                    d.vec3(anchor);
                    d.f64(*k);
                    d.vec3(force);
                }
            }
        }
        d.u64(needle_holder.map_or(u64::MAX, |k| k as u64));
        for c in changes {
            match c {
                None => d.u64(u64::MAX),
                Some(c) => c.digest_into(d),
            }
        }
    }
}

impl Instrument {
    /// Feed the state a step carries to the next (a state digest): the body's pose and
    /// velocities, the jaws (opening, command, a bite pending), the hold, the device's last
    /// target and gains (kept while the device sends none), the last coupling force and the
    /// suture's pull accumulated for the next step. Every field is named here, so a new one
    /// must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Instrument {
            // The scene's instrument: its geometry and grip, its pose at t = 0, its place
            // among the suture's obstacles.
            spec: _,
            home: _,
            first_obstacle: _,
            position,
            rotation,
            velocity,
            angular_velocity,
            opening,
            closed,
            bite,
            hold,
            target,
            coupling_force,
            released,
            force,
            torque,
        } = self;
        d.vec3(position);
        d.quat(rotation);
        d.vec3(velocity);
        d.vec3(angular_velocity);
        d.f64(*opening);
        d.bool(*closed);
        d.bool(*bite);
        match hold {
            Hold::Nothing => d.u64(0),
            Hold::Needle { position, rotation } => {
                d.u64(1);
                d.vec3(position);
                d.quat(rotation);
            }
            Hold::Suture { segment, s, anchor } => {
                d.u64(2);
                d.usize(*segment);
                d.f64(*s);
                d.vec3(anchor);
            }
        }
        target.digest_into(d);
        d.vec3(coupling_force);
        match released {
            None => d.u64(0),
            Some((lo, hi)) => {
                d.u64(1);
                d.usize(*lo);
                d.usize(*hi);
            }
        }
        d.vec3(force);
        d.vec3(torque);
    }
}

impl GraspChange {
    /// Feed the change to a state digest (a tag, then its value).
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let (tag, v) = match *self {
            GraspChange::Needle(v) => (0, v),
            GraspChange::Suture(v) => (1, v),
            GraspChange::Nothing => (2, 0.0),
            GraspChange::Opened => (3, 0.0),
            GraspChange::Slipped(v) => (4, v),
            GraspChange::Lost => (5, 0.0),
        };
        d.u64(tag);
        d.f64(v);
    }
}

/// The needle's pose as a target (zero gains): where an uncoupled needle is.
fn needle_home(n: &Needle) -> NeedleTarget {
    NeedleTarget {
        position: n.grip_position,
        velocity: Vec3::zeros(),
        rotation: n.rotation,
        angular_velocity: Vec3::zeros(),
        k: 0.0,
        c: 0.0,
        kr: 0.0,
        cr: 0.0,
    }
}

/// The rotation (body frame) turning the closed capsule (a0, b0) onto (a, b) about the
/// hinge's y axis (the jaws open in the x–z plane); identity for the shaft.
fn jaw_turn(a0: &Vec3, b0: &Vec3, a: &Vec3, b: &Vec3) -> Mat3 {
    let d0 = b0 - a0;
    let d = b - a;
    let ang = d0.z.atan2(d0.x) - d.z.atan2(d.x);
    if ang == 0.0 {
        return Mat3::identity();
    }
    // Rotation about y by `ang` takes the x–z direction at atan2(z, x) = φ to φ − ang.
    nalgebra::Rotation3::from_axis_angle(&Vec3::y_axis(), ang).into_inner()
}

/// The nodes around a held segment that its jaws do not push (first, last).
fn held_nodes(segment: usize, nodes: usize) -> (usize, usize) {
    (segment.saturating_sub(1), (segment + 2).min(nodes - 1))
}

/// The jaws start to close: take the needle if it lies between them, else the suture's
/// nearest point if it does, else nothing.
fn catch(
    ins: &mut Instrument,
    needle: &Needle,
    x: &[Vec3],
    rod_radius: f64,
    broken: Option<usize>,
) -> GraspChange {
    // The jaws closed from `spec.opening` (or less) this step: catch with the reach of the
    // jaws just open (a thing between open jaws is squeezed onto the bisector).
    // The jaws close from their present opening: a thing is caught within the half-gap at
    // its place along the jaws, plus the jaw's and its own radius.
    let reach_open = |ins: &Instrument, u: f64, r: f64| {
        ins.spec.jaw_length * u * (0.5 * ins.opening).sin() + ins.spec.jaw_radius + r
    };
    // The needle: its arc point nearest the bisector (sampled, then the exact projection).
    let arc = needle.shape.arc_angle;
    let mut best: Option<(f64, f64, f64)> = None; // (distance, θ, u)
    for k in 0..=32 {
        let th = arc * k as f64 / 32.0;
        let p = needle.point(th);
        let (q, u) = ins.bisector_nearest(&p);
        let d = (p - q).norm();
        if best.is_none_or(|b| d < b.0) {
            best = Some((d, th, u));
        }
    }
    if let Some((d, th, u)) = best
        && d <= reach_open(ins, u, needle.shape.wire_radius)
    {
        // The needle's grip moves to the grasped point; its frame is kept.
        let grip = (th / arc).clamp(0.0, 1.0);
        let mut n = needle.clone();
        n.regrasp(grip);
        let rinv = ins.rotation.inverse();
        ins.hold = Hold::Needle {
            position: rinv * (n.grip_position - ins.position),
            rotation: rinv * n.rotation,
        };
        return GraspChange::Needle(grip);
    }
    // The suture: the point nearest the jaws' bisector among those that lie between the
    // open jaws (inside the wedge, within a jaw's width of its plane): a suture wrapped
    // around the outside of the jaws is not between them.
    let a = ins.to_world(&Vec3::zeros());
    let b = ins.tip();
    let rinv = ins.rotation.inverse();
    let half = (0.5 * ins.opening).sin();
    let mut best: Option<(f64, usize, f64, f64)> = None; // (distance, e, s, u)
    for e in 0..x.len().saturating_sub(1) {
        if broken == Some(e) {
            continue;
        }
        let c = segment::distance(&x[e], &x[e + 1], &a, &b);
        let p = rinv * (x[e] + (x[e + 1] - x[e]) * c.t - ins.position);
        let u = p.z / ins.spec.jaw_length;
        let between = (0.05..=1.0).contains(&u)
            && p.x.abs() <= ins.spec.jaw_length * u * half
            && p.y.abs() <= ins.spec.jaw_radius + rod_radius;
        if between && best.is_none_or(|bb| c.distance < bb.0) {
            best = Some((c.distance, e, c.t, c.u));
        }
    }
    if let Some((_, e, s, u)) = best {
        let anchor = Vec3::new(0.0, 0.0, u * ins.spec.jaw_length);
        ins.hold = Hold::Suture {
            segment: e,
            s,
            anchor,
        };
        let l = (x[e + 1] - x[e]).norm();
        let before: f64 = x[..=e].windows(2).map(|w| (w[1] - w[0]).norm()).sum();
        return GraspChange::Suture(before + s * l);
    }
    GraspChange::Nothing
}

/// The point of polyline `x` nearest to `p` among segments within `span` of `around`:
/// (segment, parameter, distance [m]).
fn nearest_on_polyline(x: &[Vec3], p: &Vec3, around: usize, span: usize) -> (usize, f64, f64) {
    let lo = around.saturating_sub(span);
    let hi = (around + span).min(x.len() - 2);
    let mut best = (around, 0.0, f64::INFINITY);
    for e in lo..=hi {
        let d = x[e + 1] - x[e];
        let s = ((p - x[e]).dot(&d) / d.norm_squared().max(1e-300)).clamp(0.0, 1.0);
        let dist = (x[e] + d * s - p).norm();
        if dist < best.2 {
            best = (e, s, dist);
        }
    }
    best
}

/// One grasp on the suture: a spring from its material point to the jaws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grip {
    /// Segment and parameter of the held material point.
    pub segment: usize,
    /// See `segment`.
    pub s: f64,
    /// Grasp point on the jaws, world [m] (posed before the solve).
    pub anchor: Vec3,
    /// Stiffness [N/m].
    pub k: f64,
    /// Force of the grasp on the suture at the last accepted state [N].
    pub force: Vec3,
}

/// The instruments' grasps on the suture, as one potential of the suture's implicit solve
/// (`V = Σ ½ k |(1 − s) x_e + s x_{e+1} − a|²`).
#[derive(Clone, Debug, Default)]
pub struct SutureGrips {
    /// One slot per instrument.
    pub grips: Vec<Option<Grip>>,
}

impl NodePotential for SutureGrips {
    fn limits_steps(&self) -> bool {
        false
    }
    fn begin(&mut self, _x_start: &[Vec3], _h: Option<f64>) {}
    fn evaluate(&self, x: &[Vec3], mut sink: Option<&mut PotentialSink>) -> f64 {
        let mut v = 0.0;
        for g in self.grips.iter().flatten() {
            let (e, s) = (g.segment, g.s);
            let p = x[e] * (1.0 - s) + x[e + 1] * s;
            let d = p - g.anchor;
            v += 0.5 * g.k * d.norm_squared();
            if let Some(sk) = sink.as_deref_mut() {
                let grad = d * g.k;
                let w = [1.0 - s, s];
                sk.add_gradient(e, &(grad * w[0]));
                sk.add_gradient(e + 1, &(grad * w[1]));
                // The blocks (e, e), (e+1, e+1) and (e+1, e) (its transpose is implied).
                let i3 = Mat3::identity() * g.k;
                sk.add_hessian(e, e, &(i3 * (w[0] * w[0])));
                sk.add_hessian(e + 1, e + 1, &(i3 * (w[1] * w[1])));
                sk.add_hessian(e + 1, e, &(i3 * (w[0] * w[1])));
            }
        }
        v
    }
    fn accept(&mut self, x: &[Vec3]) -> bool {
        for g in self.grips.iter_mut().flatten() {
            let p = x[g.segment] * (1.0 - g.s) + x[g.segment + 1] * g.s;
            g.force = (g.anchor - p) * g.k;
        }
        true
    }
    fn relag(&mut self, _: &[Vec3]) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees the smallest change of every piece of state a step carries to
    /// the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp_q, ulp3};
        let spec = InstrumentSpec {
            kind: InstrumentKind::NeedleDriver,
            hand: Hand::Right,
            jaw_length: 0.012,
            jaw_radius: 6e-4,
            jaw_tip_radius: 6e-4,
            shaft_length: 0.1,
            shaft_radius: 2.5e-3,
            opening: 0.6,
            jaw_speed: 6.0,
            grip_strength: 5.0,
            grip_stiffness: 2000.0,
            mass: 0.05,
            inertia: 5e-5,
        };
        let rot = Quat::from_euler_angles(0.1, 0.2, 0.3);
        let mut a = Instrument::new(spec, Vec3::new(0.01, 0.02, 0.03), rot, 1);
        a.velocity = Vec3::new(0.01, 0.0, 0.0);
        a.angular_velocity = Vec3::new(0.0, 0.1, 0.0);
        a.opening = 0.3;
        a.hold = Hold::Suture {
            segment: 7,
            s: 0.25,
            anchor: Vec3::new(0.0, 0.0, 0.006),
        };
        a.coupling_force = Vec3::new(0.1, 0.2, 0.3);
        a.apply(&Vec3::new(0.0, 0.5, 0.0), &Vec3::new(0.01, 0.02, 0.04));
        let mut b = Instrument::new(
            InstrumentSpec {
                hand: Hand::Left,
                ..spec
            },
            Vec3::new(-0.01, 0.02, 0.03),
            rot,
            4,
        );
        b.hold = Hold::Needle {
            position: Vec3::new(0.0, 0.0, 0.004),
            rotation: rot,
        };
        b.target.k = 300.0;
        b.released = Some((3, 6));
        let mut set = Instruments::new(vec![a, b], 20);
        set.grips.grips[0] = Some(Grip {
            segment: 7,
            s: 0.25,
            anchor: Vec3::new(0.01, 0.02, 0.036),
            k: 2000.0,
            force: Vec3::new(0.0, 0.4, 0.0),
        });
        set.needle_holder = Some(1);
        set.changes[1] = Some(GraspChange::Needle(0.4));
        let digest = |s: &Instruments| {
            let mut d = crate::math::Digest::default();
            s.digest_into(&mut d);
            d.0
        };
        fn grip(s: &mut Instruments) -> &mut Grip {
            s.grips.grips[0].as_mut().expect("some")
        }
        assert_each_changes(
            &set,
            digest,
            &[
                ("position", &|s| ulp3(&mut s.list[1].position)),
                ("rotation", &|s| ulp_q(&mut s.list[1].rotation)),
                ("velocity", &|s| ulp3(&mut s.list[1].velocity)),
                ("angular_velocity", &|s| {
                    ulp3(&mut s.list[1].angular_velocity)
                }),
                ("opening", &|s| ulp(&mut s.list[1].opening)),
                ("closed", &|s| s.list[1].closed = false),
                ("bite", &|s| s.list[1].bite = true),
                ("hold (needle position)", &|s| match &mut s.list[1].hold {
                    Hold::Needle { position, .. } => ulp3(position),
                    _ => unreachable!(),
                }),
                ("hold (needle rotation)", &|s| match &mut s.list[1].hold {
                    Hold::Needle { rotation, .. } => ulp_q(rotation),
                    _ => unreachable!(),
                }),
                ("hold (suture segment)", &|s| match &mut s.list[0].hold {
                    Hold::Suture { segment, .. } => *segment += 1,
                    _ => unreachable!(),
                }),
                ("hold (suture s)", &|s| match &mut s.list[0].hold {
                    Hold::Suture { s, .. } => ulp(s),
                    _ => unreachable!(),
                }),
                ("hold (suture anchor)", &|s| match &mut s.list[0].hold {
                    Hold::Suture { anchor, .. } => ulp3(anchor),
                    _ => unreachable!(),
                }),
                ("hold (nothing)", &|s| s.list[0].hold = Hold::Nothing),
                ("target", &|s| ulp(&mut s.list[1].target.k)),
                ("coupling_force", &|s| ulp3(&mut s.list[1].coupling_force)),
                ("released", &|s| s.list[1].released = Some((3, 7))),
                ("released (none)", &|s| s.list[1].released = None),
                ("force", &|s| ulp3(&mut s.list[0].force)),
                ("torque", &|s| ulp3(&mut s.list[0].torque)),
                ("grips.segment", &|s| grip(s).segment += 1),
                ("grips.s", &|s| ulp(&mut grip(s).s)),
                ("grips.anchor", &|s| ulp3(&mut grip(s).anchor)),
                ("grips.k", &|s| ulp(&mut grip(s).k)),
                ("grips.force", &|s| ulp3(&mut grip(s).force)),
                ("grips (none)", &|s| s.grips.grips[0] = None),
                ("needle_holder", &|s| s.needle_holder = Some(0)),
                ("needle_holder (none)", &|s| s.needle_holder = None),
                ("changes", &|s| {
                    s.changes[1] = Some(GraspChange::Needle(0.4f64.next_up()))
                }),
                ("changes (kind)", &|s| {
                    s.changes[1] = Some(GraspChange::Suture(0.4))
                }),
                ("changes (none)", &|s| s.changes[1] = None),
            ],
        );
    }

    fn driver() -> Instrument {
        let spec = InstrumentSpec {
            kind: InstrumentKind::NeedleDriver,
            hand: Hand::Right,
            jaw_length: 0.012,
            jaw_radius: 0.0008,
            jaw_tip_radius: 0.0008,
            shaft_length: 0.06,
            shaft_radius: 0.002,
            opening: 0.5,
            jaw_speed: 8.0,
            grip_strength: 5.0,
            grip_stiffness: 5000.0,
            mass: 0.02,
            inertia: 2e-6,
        };
        let q = Quat::from_axis_angle(&Vec3::y_axis(), 0.3);
        Instrument::new(spec, Vec3::new(0.01, 0.02, 0.0), q, 0)
    }

    /// What the viewer is given: the contact capsules, the jaws' state as they turn, the hold.
    #[test]
    fn the_state_shows_the_capsules_the_jaws_and_the_hold() {
        let mut ins = driver();
        let st = ins.state();
        assert_eq!(st.capsules, ins.capsules());
        assert_eq!((st.jaws(), st.holding), (Jaws::Closed, Holding::Nothing));
        // Closed: both jaws on one core from the hinge to the tip.
        assert_eq!(st.capsules[0], st.capsules[1]);
        assert!((st.capsules[0].1 - ins.tip()).norm() < 1e-15);
        // The button opens them at the jaw speed (8 rad/s: 0.08 rad in 10 ms).
        let target = ins.target;
        ins.take_target(target, true);
        ins.move_jaws(0.01);
        assert_eq!(ins.state().jaws(), Jaws::Opening);
        for _ in 0..10 {
            ins.move_jaws(0.01);
        }
        let st = ins.state();
        assert_eq!(st.jaws(), Jaws::Open);
        // Open: the tips 2 L sin(α/2) apart, the shaft unmoved.
        let gap = (st.capsules[0].1 - st.capsules[1].1).norm();
        assert!((gap - 2.0 * 0.012 * 0.25f64.sin()).abs() < 1e-12, "{gap}");
        assert_eq!(
            st.capsules[2],
            ins.body_capsules(0.0)
                .map(|(a, b, r)| (ins.to_world(&a), ins.to_world(&b), r))[2]
        );
        ins.take_target(target, true);
        ins.move_jaws(0.01);
        assert_eq!(ins.state().jaws(), Jaws::Closing);
        ins.hold = Hold::Suture {
            segment: 3,
            s: 0.25,
            anchor: Vec3::zeros(),
        };
        assert_eq!(
            ins.state().holding,
            Holding::Suture {
                segment: 3,
                s: 0.25
            }
        );
        ins.hold = Hold::Needle {
            position: Vec3::zeros(),
            rotation: Quat::identity(),
        };
        assert_eq!(ins.state().holding, Holding::Needle);
    }
}
