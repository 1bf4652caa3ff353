//! Suturing (issue #6): the rigid needle, the deformable tissue, punctures and the channels
//! they leave, the suture pulled through them, breakage, targets and events.
//!
//! Per step ([`Suturing::step`] drives the phases in this order):
//! 1. Needle forces from the tissue at the start of the step: the tip pressing on a face
//!    (`k_tip` along the face normal, before puncture), each passage the needle runs through
//!    (a channel: `k_n` on the offset of the passage from the needle's arc, i.e. only motion
//!    off the arc is resisted), friction along the arc (`μ N + drag`) and the cutting
//!    resistance of the tip advancing through tissue (`cut_force`), the suture's pull at the
//!    swage. Friction and cutting are viscous-regularised and implicit in the needle's 6×6
//!    solve, the rest explicit (soft next to `m/h²`).
//! 2. The needle steps with its coupling to the device (implicit spring-damper).
//! 3. The suture steps (caller), with its end held to the swage by a stiff spring-damper
//!    (sim::tool::ToolSpring) and each passage it runs through as a [`SutureChannel`]: a
//!    spring on the suture's offset from the passage across its tangent, and lagged Coulomb
//!    friction along it.
//! 4. The tissue steps with every channel and the pressing tip as springs implicit in its
//!    step (tissue::PointSpring), and the friction and cutting reactions as forces.
//! 5. Book-keeping: punctures when the pressing force passes `puncture_force`, exits when the
//!    tip leaves a half, passages handed from the needle to the suture when the swage has
//!    passed them, tearing when a channel's side force passes `tear_force` (a re-puncture),
//!    breakage when the suture's tension passes its breaking force; events with their time.

use super::needle::{Needle, NeedleTarget};
use super::tool::ToolSpring;
use crate::contact::ObstacleContact;
use crate::math::{Mat3, Vec3};
use crate::rod::{NodePotential, PotentialSink};
use crate::tissue::{Face, MaterialPoint, PointSpring, Tissue};

/// Interaction parameters (SI), from the scene's `[tissue]` and `[needle]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuturingParams {
    /// Tip force along the surface normal at which the needle pierces [N].
    pub puncture_force: f64,
    /// Stiffness of the tip pressing on a face before it pierces [N/m].
    pub tip_stiffness: f64,
    /// Resistance of the tissue to the tip cutting forward [N].
    pub cut_force: f64,
    /// Side stiffness of a channel on the needle [N/m].
    pub needle_channel_stiffness: f64,
    /// Side stiffness of a channel on the suture [N/m].
    pub suture_channel_stiffness: f64,
    /// Coulomb coefficient of sliding in a channel [-].
    pub friction: f64,
    /// Grip of a channel on what slides through it, independent of the side force [N].
    pub drag: f64,
    /// Side force at which a channel tears and the needle cuts a new path [N].
    pub tear_force: f64,
    /// Speed below which sliding friction and cutting are viscous [m/s].
    pub slip_speed: f64,
    /// Breaking force of the suture [N].
    pub breaking_force: f64,
}

/// A mark on the tissue the trainee should hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// Entry or exit.
    pub kind: TargetKind,
    /// Rest position of the mark [m].
    pub position: Vec3,
}

/// What a target marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// Where the needle should enter the skin.
    Entry,
    /// Where it should come out.
    Exit,
}

/// What runs through a passage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Through {
    /// The needle (its arc angle at the passage, last step).
    Needle(f64),
    /// The suture, at arc length σ [m] from its start.
    Suture(f64),
    /// Nothing any more (the suture's end has been pulled out of it).
    Empty,
}

/// A hole the needle made in a face of the tissue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Passage {
    /// The material point of the hole.
    pub point: MaterialPoint,
    /// The face it pierces.
    pub face: Face,
    /// Entering the tissue (true) or leaving it (false), in the needle's direction.
    pub entry: bool,
    /// What runs through it.
    pub through: Through,
    /// Force of the channel on the tissue at the last step [N].
    pub force: Vec3,
    /// Sliding speed through it at the last step [m/s] (lags the friction's regularisation).
    pub slip: f64,
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventKind {
    /// The tip pierced a face into the tissue.
    Puncture {
        /// Face pierced.
        face: Face,
        /// Rest position [m].
        position: Vec3,
        /// Angle between the needle's tip and the inward normal [rad].
        angle: f64,
        /// Tip force at the moment [N].
        force: f64,
        /// Distance to the nearest entry target [m] (top face only).
        target_error: Option<f64>,
        /// A second or later entry through the skin on the same side.
        repeat: bool,
    },
    /// The tip came out through a face.
    Exit {
        /// Face.
        face: Face,
        /// Rest position [m].
        position: Vec3,
        /// Distance to the nearest exit target [m] (top face only).
        target_error: Option<f64>,
    },
    /// A channel tore under side load and the needle cut a new path (re-puncture).
    Repuncture {
        /// Rest position of the new hole [m].
        position: Vec3,
        /// Side force that tore it [N].
        force: f64,
    },
    /// The needle was backed out of a hole.
    Withdrawn {
        /// Rest position of the hole [m].
        position: Vec3,
    },
    /// The swage passed a hole: the suture runs through it now.
    SutureThrough {
        /// Rest position of the hole [m].
        position: Vec3,
    },
    /// The needle was released by the driver.
    NeedleDropped,
    /// The needle was grasped (at arc fraction `at`).
    NeedleGrasped {
        /// Grip fraction.
        at: f64,
    },
    /// The suture's geometry became knotted (topology: determinant ≠ 1), or a different knot.
    KnotTied {
        /// Name from the Jones polynomial, if known ("trefoil", "square", …).
        name: Option<&'static str>,
        /// Knot determinant.
        determinant: u128,
        /// Crossings in the projection used.
        crossings: usize,
    },
    /// An instrument's jaws took or let go of something (issue #22).
    Instrument {
        /// The hand whose instrument it is.
        hand: super::tool::Hand,
        /// What happened.
        change: super::instrument::GraspChange,
    },
    /// The suture broke.
    SutureBroken {
        /// Segment.
        segment: usize,
        /// Tension at the break [N].
        tension: f64,
    },
}

impl EventKind {
    /// One line for a HUD or a log (mm, degrees, N).
    pub fn describe(&self) -> String {
        let mm = |p: &Vec3| format!("({:.1}, {:.1}, {:.1}) mm", p.x * 1e3, p.y * 1e3, p.z * 1e3);
        let face = |f: &Face| match f {
            Face::Top => "skin",
            Face::Wound => "wound face",
            Face::Other => "pad side",
        };
        match self {
            EventKind::Puncture {
                face: f,
                position,
                angle,
                force,
                target_error,
                repeat,
            } => format!(
                "{}puncture of the {} at {}, {:.0}° to the normal, {:.2} N{}",
                if *repeat { "repeated " } else { "" },
                face(f),
                mm(position),
                angle.to_degrees(),
                force,
                target_error.map_or(String::new(), |e| format!(
                    ", {:.1} mm from the mark",
                    e * 1e3
                ))
            ),
            EventKind::Exit {
                face: f,
                position,
                target_error,
            } => format!(
                "exit through the {} at {}{}",
                face(f),
                mm(position),
                target_error.map_or(String::new(), |e| format!(
                    ", {:.1} mm from the mark",
                    e * 1e3
                ))
            ),
            EventKind::Repuncture { position, force } => {
                format!("re-puncture (torn at {force:.2} N) at {}", mm(position))
            }
            EventKind::Withdrawn { position } => format!("needle withdrawn from {}", mm(position)),
            EventKind::SutureThrough { position } => format!("suture through {}", mm(position)),
            EventKind::NeedleDropped => "needle dropped".to_string(),
            EventKind::NeedleGrasped { at } => {
                format!("needle grasped at {:.0} % of its arc", at * 100.0)
            }
            EventKind::Instrument { hand, change } => {
                use super::instrument::GraspChange as G;
                let what = match change {
                    G::Needle(at) => format!("took the needle at {:.0} % of its arc", at * 100.0),
                    G::Suture(s) => format!("grasped the suture {:.1} mm from its tail", s * 1e3),
                    G::Nothing => "closed on nothing".to_string(),
                    G::Opened => "opened, letting go".to_string(),
                    G::Slipped(s) => {
                        format!("let the suture slide (now {:.1} mm from its tail)", s * 1e3)
                    }
                    G::Lost => "lost the suture (pulled out of the jaws)".to_string(),
                };
                format!("{} instrument {what}", hand.name())
            }
            EventKind::SutureBroken { segment, tension } => {
                format!("suture broken at segment {segment} under {tension:.2} N")
            }
            EventKind::KnotTied {
                name,
                determinant,
                crossings,
            } => format!(
                "knot tied: {} (determinant {determinant}, {crossings} crossings)",
                name.unwrap_or("unnamed")
            ),
        }
    }
}

/// An event and its time [s].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Simulated time [s].
    pub time: f64,
    /// What.
    pub kind: EventKind,
}

impl Event {
    /// Feed the event (its time, kind and every value) to a state digest.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let face = |d: &mut crate::math::Digest, f: &Face| d.u64(face_tag(f));
        let opt = |d: &mut crate::math::Digest, x: &Option<f64>| match x {
            None => d.u64(0),
            Some(v) => {
                d.u64(1);
                d.f64(*v);
            }
        };
        d.f64(self.time);
        match &self.kind {
            EventKind::Puncture {
                face: f,
                position,
                angle,
                force,
                target_error,
                repeat,
            } => {
                d.u64(0);
                face(d, f);
                d.vec3(position);
                d.f64(*angle);
                d.f64(*force);
                opt(d, target_error);
                d.bool(*repeat);
            }
            EventKind::Exit {
                face: f,
                position,
                target_error,
            } => {
                d.u64(1);
                face(d, f);
                d.vec3(position);
                opt(d, target_error);
            }
            EventKind::Repuncture { position, force } => {
                d.u64(2);
                d.vec3(position);
                d.f64(*force);
            }
            EventKind::Withdrawn { position } => {
                d.u64(3);
                d.vec3(position);
            }
            EventKind::SutureThrough { position } => {
                d.u64(4);
                d.vec3(position);
            }
            EventKind::NeedleDropped => d.u64(5),
            EventKind::NeedleGrasped { at } => {
                d.u64(6);
                d.f64(*at);
            }
            EventKind::KnotTied {
                name,
                determinant,
                crossings,
            } => {
                d.u64(7);
                d.str(name.unwrap_or(""));
                d.u64(*determinant as u64);
                d.u64((*determinant >> 64) as u64);
                d.usize(*crossings);
            }
            EventKind::Instrument { hand, change } => {
                d.u64(8);
                d.u64(match hand {
                    super::tool::Hand::Right => 0,
                    super::tool::Hand::Left => 1,
                });
                change.digest_into(d);
            }
            EventKind::SutureBroken { segment, tension } => {
                d.u64(9);
                d.usize(*segment);
                d.f64(*tension);
            }
        }
    }
}

/// Where the needle's tip is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tip {
    Outside,
    /// Pressing on a face at this (sliding) material point, with its outward rest normal.
    Pressing(MaterialPoint, Face, Vec3),
    /// Inside a half, last at this material point.
    Inside(MaterialPoint),
}

/// Most events kept (older ones are not dropped; new ones beyond this are counted only).
pub const MAX_EVENTS: usize = 4096;
/// Most passages at once.
pub const MAX_PASSAGES: usize = 12;

/// The suturing state of a scene.
#[derive(Clone, Debug)]
pub struct Suturing {
    /// The needle.
    pub needle: Needle,
    /// The tissue pad.
    pub tissue: Tissue,
    /// Parameters.
    pub params: SuturingParams,
    /// The suture (rod index) swaged on the needle, and its end node there.
    pub rod: usize,
    /// See `rod`.
    pub node: usize,
    /// Suture end ↔ swage spring-damper (inside the suture's implicit step).
    pub attach: ToolSpring,
    /// The passages the suture runs through, as a potential for its step.
    pub channel: SutureChannel,
    /// All holes.
    pub passages: Vec<Passage>,
    /// Targets.
    pub targets: Vec<Target>,
    /// Events so far (at most [`MAX_EVENTS`]).
    pub events: Vec<Event>,
    /// Events not kept.
    pub events_lost: usize,
    /// Largest suture tension at the last step [N] and where.
    pub tension: f64,
    /// See `tension`.
    pub tension_segment: usize,
    /// Force of the tip pressing on the tissue at the last step [N] (0 unless pressing).
    pub tip_force: f64,
    /// Whether the driver holds the needle.
    pub held: bool,
    /// Index of the tissue's contact plane among the suture's obstacles.
    pub plane: Option<usize>,
    /// Where the needle is held when no device drives it (`suture simulate`, a world stepped
    /// without a tool): its initial pose, with the scene's coupling.
    pub home: NeedleTarget,
    tip: Tip,
    springs: Vec<PointSpring>,
    /// Per spring: the passage it belongs to (usize::MAX: the pressing tip).
    spring_of: Vec<usize>,
    exempt: Vec<bool>,
    /// Lagged sliding speeds for the regularised friction (per passage) and the tip [m/s].
    tip_speed: f64,
    /// The instruments the hands drive (scenes with `[[instruments]]`; None: the `[tool]`
    /// drives the needle directly).
    pub instruments: Option<Box<super::instrument::Instruments>>,
    /// A running digest of every event kept, in order (each folded in as it is raised), so
    /// the state digest covers the event log without hashing it whole.
    events_digest: u64,
}

impl Suturing {
    /// A suturing state: `needle` swaged on node `node` of rod `rod`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        needle: Needle,
        tissue: Tissue,
        params: SuturingParams,
        rod: usize,
        node: usize,
        nodes: usize,
        attach: ToolSpring,
        targets: Vec<Target>,
    ) -> Self {
        Suturing {
            needle,
            tissue,
            params,
            rod,
            node,
            attach,
            channel: SutureChannel::new(
                params.suture_channel_stiffness,
                params.friction,
                params.drag,
            ),
            passages: Vec::with_capacity(MAX_PASSAGES),
            targets,
            events: Vec::with_capacity(MAX_EVENTS),
            events_lost: 0,
            tension: 0.0,
            tension_segment: 0,
            tip_force: 0.0,
            held: true,
            plane: None,
            home: NeedleTarget {
                position: Vec3::zeros(),
                velocity: Vec3::zeros(),
                rotation: crate::math::Quat::identity(),
                angular_velocity: Vec3::zeros(),
                k: 0.0,
                c: 0.0,
                kr: 0.0,
                cr: 0.0,
            },
            tip: Tip::Outside,
            springs: Vec::with_capacity(MAX_PASSAGES + 1),
            spring_of: Vec::with_capacity(MAX_PASSAGES + 1),
            exempt: vec![false; nodes],
            tip_speed: 0.0,
            instruments: None,
            events_digest: crate::math::Digest::default().0,
        }
    }

    fn event(&mut self, time: f64, kind: EventKind) {
        if self.events.len() < MAX_EVENTS {
            let e = Event { time, kind };
            let mut d = crate::math::Digest(self.events_digest);
            e.digest_into(&mut d);
            self.events_digest = d.0;
            self.events.push(e);
        } else {
            self.events_lost += 1;
        }
    }

    fn nearest_target(&self, kind: TargetKind, p: &Vec3) -> Option<f64> {
        self.targets
            .iter()
            .filter(|t| t.kind == kind)
            .map(|t| (t.position - p).norm())
            .min_by(f64::total_cmp)
    }

    /// Phases 1–2: the needle's forces from the tissue and the suture, then its step toward
    /// `target` (all-zero stiffness when not held) under gravity `g`.
    pub fn step_needle(&mut self, h: f64, gravity: &Vec3, target: &NeedleTarget) {
        // The event log's room, once: a cloned world's Vec keeps only its length, and the
        // physics loop must not allocate when an event comes (tests/alloc_free.rs).
        if self.events.capacity() < MAX_EVENTS {
            self.events.reserve_exact(MAX_EVENTS - self.events.len());
        }
        let p = self.params;
        let arc = self.needle.shape.arc_angle;
        // The suture's pull at the swage (lagged: the attach spring's force on the suture
        // at the end of the last step, reversed).
        let swage = self.needle.swage();
        let pull = -self.attach.force;
        self.needle.apply(&pull, &swage);
        // Drag terms for the implicit solve: (point, unit direction, force magnitude, lagged
        // speed along it, one-sided forward only).
        let mut drags: [(Vec3, Vec3, f64, f64, bool); MAX_PASSAGES + 1] =
            [(Vec3::zeros(), Vec3::zeros(), 0.0, 0.0, false); MAX_PASSAGES + 1];
        let mut nd = 0;
        for ps in &mut self.passages {
            let Through::Needle(_) = ps.through else {
                continue;
            };
            let at = self.tissue.position(&ps.point);
            let (th, off) = self.needle.closest(&at);
            ps.through = Through::Needle(th);
            if !(0.0..=arc).contains(&th) {
                continue;
            }
            let c = self.needle.point(th);
            let f = off * p.needle_channel_stiffness;
            self.needle.apply(&f, &c);
            let tau = self.needle.tangent(th);
            let v = (self.needle.velocity_at(th) - self.tissue.velocity(&ps.point)).dot(&tau);
            if nd < drags.len() {
                drags[nd] = (c, tau, p.friction * f.norm() + p.drag, v, false);
                nd += 1;
            }
        }
        // The tip: pressing on a face, or cutting forward inside.
        self.tip_force = 0.0;
        let tip = self.needle.tip();
        let tau = self.needle.tangent(arc);
        match self.tip {
            Tip::Pressing(m, _, n) => {
                let depth = self.pressing_depth(&m, &n, &tip);
                let f = p.tip_stiffness * depth.max(0.0);
                self.tip_force = f;
                self.needle.apply(&(n * f), &tip);
            }
            Tip::Inside(_) => {
                if nd < drags.len() {
                    drags[nd] = (tip, tau, p.cut_force, self.tip_speed, true);
                    nd += 1;
                }
            }
            Tip::Outside => {}
        }
        self.tip_speed = self.needle.velocity_at(arc).dot(&tau);
        self.needle
            .step_with_drags(h, gravity, target, &drags[..nd], p.slip_speed);
    }

    /// Depth of the tip behind the face at the pressed point, along the outward normal [m].
    fn pressing_depth(&self, m: &MaterialPoint, n: &Vec3, tip: &Vec3) -> f64 {
        (self.tissue.position(m) - tip).dot(n)
    }

    /// Phase 3 set-up: the swage spring's target and the suture's channels for its step, and
    /// which suture nodes lie inside the tissue (exempt from the pad's contact plane).
    pub fn prepare_suture(
        &mut self,
        contact: Option<&mut ObstacleContact>,
        segment: f64,
        broken: Option<usize>,
        x: &[Vec3],
    ) {
        self.channel.segment = segment;
        self.channel.broken = broken;
        // A hole the suture's end (or a broken end) has left is empty.
        let n = x.len() - 1;
        for ps in &mut self.passages {
            if let Through::Suture(sigma) = ps.through {
                let k = (sigma / segment).round() as usize;
                let at_end = k == 0 || k >= n || broken.is_some_and(|b| k == b || k == b + 1);
                let anchor = self.tissue.position(&ps.point);
                let near = x[k.min(n)];
                if at_end && (near - anchor).norm() > 2.0 * segment {
                    ps.through = Through::Empty;
                }
            }
        }
        let sw = self.needle.swage();
        self.attach.target = sw;
        self.attach.target_velocity = self.needle.velocity_at(0.0);
        self.attach.target_rotation = self.needle.rotation;
        self.channel.points.clear();
        for (i, ps) in self.passages.iter().enumerate() {
            if let Through::Suture(sigma) = ps.through {
                let mut cp = ChannelPoint::new(i, self.tissue.position(&ps.point), sigma);
                cp.slip = ps.slip;
                self.channel.points.push(cp);
            }
        }
        // Exempt: nodes between an entry and the next exit along the suture, plus one
        // segment either side of every hole.
        let n = self.exempt.len();
        let mut order: [(f64, bool); MAX_PASSAGES] = [(0.0, false); MAX_PASSAGES];
        let mut m = 0;
        for ps in &self.passages {
            if let Through::Suture(s) = ps.through
                && m < MAX_PASSAGES
            {
                order[m] = (s, ps.entry);
                m += 1;
            }
        }
        let order = &mut order[..m];
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let needle_inside = self
            .passages
            .iter()
            .any(|p| matches!(p.through, Through::Needle(_)) && p.entry);
        let top = self.tissue.top();
        for (k, e) in self.exempt.iter_mut().enumerate() {
            let s = k as f64 * segment;
            let last = order.iter().rev().find(|(sp, _)| *sp <= s);
            let inside = match last {
                Some(&(_, entry)) => entry,
                None => false,
            };
            let near = order.iter().any(|(sp, _)| (sp - s).abs() <= 1.5 * segment);
            // A node that was under the skin stays exempt until it is back above it (else
            // the skin's contact would kick it out at once).
            let below = *e && x[k].y < top;
            *e = inside || near || below;
            // The end near the swage while the swage is still inside.
            if needle_inside && k + 2 >= n {
                *e = true;
            }
        }
        if let (Some(c), Some(o)) = (contact, self.plane) {
            c.set_exempt(o, &self.exempt);
        }
    }

    /// Phases 4–5 after the suture's step: tissue step with the channels and the pressing
    /// tip, then punctures, exits, hand-overs, tears and breakage. `x` are the suture's
    /// nodes, `tension` its largest segment tension [N] and that segment.
    pub fn finish(&mut self, h: f64, time: f64, x: &[Vec3], tension: (f64, usize)) {
        let p = self.params;
        let arc = self.needle.shape.arc_angle;
        self.springs.clear();
        self.spring_of.clear();
        // Needle channels.
        for (i, ps) in self.passages.iter().enumerate() {
            if let Through::Needle(th) = ps.through
                && (0.0..=arc).contains(&th)
            {
                let c = self.needle.point(th);
                let t = self.needle.tangent(th);
                let k = (Mat3::identity() - t * t.transpose()) * p.needle_channel_stiffness;
                self.springs.push(PointSpring {
                    point: ps.point,
                    target: c,
                    stiffness: k,
                });
                self.spring_of.push(i);
                // Friction reaction along the arc: opposite of what the needle felt.
                let v = (self.needle.velocity_at(th) - self.tissue.velocity(&ps.point)).dot(&t);
                let side =
                    (c - self.tissue.position(&ps.point)).norm() * p.needle_channel_stiffness;
                let f = (p.friction * side + p.drag) * (v / p.slip_speed).clamp(-1.0, 1.0);
                self.tissue.apply_force(&ps.point, &(t * f));
            }
        }
        // Suture channels (force on the tissue = minus the channel's force on the suture).
        for cp in &self.channel.points {
            let ps = &self.passages[cp.passage];
            let xr = x[cp.seg] * (1.0 - cp.a) + x[cp.seg + 1] * cp.a;
            let k = Mat3::identity() * p.suture_channel_stiffness;
            self.springs.push(PointSpring {
                point: ps.point,
                target: xr,
                stiffness: k,
            });
            self.spring_of.push(cp.passage);
            self.tissue
                .apply_force(&ps.point, &(cp.t * cp.t.dot(&(-cp.force))));
        }
        // The pressing tip, and the cutting reaction.
        let tip = self.needle.tip();
        let tau = self.needle.tangent(arc);
        match self.tip {
            Tip::Pressing(m, _, n) => {
                self.springs.push(PointSpring {
                    point: m,
                    target: tip,
                    stiffness: n * n.transpose() * p.tip_stiffness,
                });
                self.spring_of.push(usize::MAX);
            }
            Tip::Inside(m) => {
                let f = p.cut_force * (self.tip_speed / p.slip_speed).clamp(0.0, 1.0);
                self.tissue.apply_force(&m, &(tau * f));
            }
            Tip::Outside => {}
        }
        self.tissue.step_with(h, &mut self.springs);
        for (s, &i) in self.springs.iter().zip(&self.spring_of) {
            if i != usize::MAX {
                self.passages[i].force = s.target;
            }
        }
        self.update_passages(time, x);
        self.update_tip(time);
        self.tension = tension.0;
        self.tension_segment = tension.1;
    }

    fn update_passages(&mut self, time: f64, x: &[Vec3]) {
        let p = self.params;
        let arc = self.needle.shape.arc_angle;
        // Suture channels: carry σ forward.
        for cp in &self.channel.points {
            if let Through::Suture(_) = self.passages[cp.passage].through {
                self.passages[cp.passage].through = Through::Suture(cp.sigma);
                self.passages[cp.passage].slip = cp.slip;
            }
        }
        let length = self.channel.segment * (x.len() - 1) as f64;
        let mut k = 0;
        while k < self.passages.len() {
            let ps = self.passages[k];
            if let Through::Needle(_) = ps.through {
                let at = self.tissue.position(&ps.point);
                let (th, off) = self.needle.closest(&at);
                if th < 0.0 {
                    // The swage has passed: the suture runs through now.
                    self.passages[k].through = Through::Suture(length);
                    self.event(
                        time,
                        EventKind::SutureThrough {
                            position: ps.point.rest,
                        },
                    );
                } else if th > arc {
                    self.passages.remove(k);
                    self.event(
                        time,
                        EventKind::Withdrawn {
                            position: ps.point.rest,
                        },
                    );
                    continue;
                } else {
                    let side = off.norm() * p.needle_channel_stiffness;
                    if side > p.tear_force {
                        // Tear: the hole moves to where the needle is.
                        let c = self.needle.point(th);
                        let half = ps.point.half;
                        let rest = self
                            .tissue
                            .locate(&c)
                            .filter(|m| m.half == half)
                            .map_or_else(
                                || {
                                    self.tissue.clamp_rest(
                                        half,
                                        &(c - self.tissue.displacement(&ps.point)),
                                    )
                                },
                                |m| m.rest,
                            );
                        self.passages[k].point = MaterialPoint { half, rest };
                        self.event(
                            time,
                            EventKind::Repuncture {
                                position: rest,
                                force: side,
                            },
                        );
                    }
                }
            }
            k += 1;
        }
    }

    fn update_tip(&mut self, time: f64) {
        let p = self.params;
        let tip = self.needle.tip();
        let arc = self.needle.shape.arc_angle;
        let tau = self.needle.tangent(arc);
        let here = self.tissue.locate(&tip);
        self.tip = match (self.tip, here) {
            (Tip::Outside, None) => Tip::Outside,
            (Tip::Outside, Some(m)) => {
                // Touching a face: press on it (no hole yet).
                let (face, n, _) = self.tissue.nearest_face(m.half, &m.rest);
                let on = MaterialPoint {
                    half: m.half,
                    rest: project_on_face(&self.tissue, m.half, &m.rest, face, &n),
                };
                Tip::Pressing(on, face, n)
            }
            (Tip::Pressing(on, face, n), _) => {
                let depth = self.pressing_depth(&on, &n, &tip);
                if depth <= 0.0 {
                    Tip::Outside
                } else if p.tip_stiffness * depth >= p.puncture_force {
                    // Puncture.
                    let angle = tau.dot(&-n).clamp(-1.0, 1.0).acos();
                    let repeat = face == Face::Top
                        && self.events.iter().any(|e| {
                            matches!(e.kind, EventKind::Puncture { face: Face::Top, position, .. }
                                if usize::from(position.x > self.tissue.geometry.center.x) == on.half)
                        });
                    let target_error = (face == Face::Top)
                        .then(|| self.nearest_target(TargetKind::Entry, &on.rest))
                        .flatten();
                    self.event(
                        time,
                        EventKind::Puncture {
                            face,
                            position: on.rest,
                            angle,
                            force: p.tip_stiffness * depth,
                            target_error,
                            repeat,
                        },
                    );
                    if self.passages.len() < MAX_PASSAGES {
                        self.passages.push(Passage {
                            point: on,
                            face,
                            entry: true,
                            through: Through::Needle(arc),
                            force: Vec3::zeros(),
                            slip: 0.0,
                        });
                    }
                    Tip::Inside(here.unwrap_or(on))
                } else {
                    // A sharp point catches where it first touched; it only re-seats if it
                    // skids more than a millimetre across the face.
                    let skid = here.filter(|m| m.half == on.half).and_then(|m| {
                        let r = project_on_face(&self.tissue, m.half, &m.rest, face, &n);
                        ((r - on.rest).norm() > 1e-3).then_some(MaterialPoint {
                            half: m.half,
                            rest: r,
                        })
                    });
                    Tip::Pressing(skid.unwrap_or(on), face, n)
                }
            }
            (Tip::Inside(last), Some(m)) if m.half == last.half => Tip::Inside(m),
            (Tip::Inside(last), _) => {
                // Out through the face nearest to where it last was.
                let (face, n, _) = self.tissue.nearest_face(last.half, &last.rest);
                let rest = project_on_face(&self.tissue, last.half, &last.rest, face, &n);
                let target_error = (face == Face::Top)
                    .then(|| self.nearest_target(TargetKind::Exit, &rest))
                    .flatten();
                self.event(
                    time,
                    EventKind::Exit {
                        face,
                        position: rest,
                        target_error,
                    },
                );
                if self.passages.len() < MAX_PASSAGES {
                    self.passages.push(Passage {
                        point: MaterialPoint {
                            half: last.half,
                            rest,
                        },
                        face,
                        entry: false,
                        through: Through::Needle(arc),
                        force: Vec3::zeros(),
                        slip: 0.0,
                    });
                }
                match here {
                    Some(m) => Tip::Pressing(
                        MaterialPoint {
                            half: m.half,
                            rest: {
                                let (f2, n2, _) = self.tissue.nearest_face(m.half, &m.rest);
                                project_on_face(&self.tissue, m.half, &m.rest, f2, &n2)
                            },
                        },
                        self.tissue.nearest_face(m.half, &m.rest).0,
                        self.tissue.nearest_face(m.half, &m.rest).1,
                    ),
                    None => Tip::Outside,
                }
            }
        };
    }

    /// Thread the suture through the tissue where its centreline crosses a face at rest (a
    /// stitch placed before the session starts): a hole per crossing, the suture through it
    /// at that arc length. `x` are the suture's nodes, `segment` its segment length [m].
    pub fn thread_initial(&mut self, x: &[Vec3], segment: f64) {
        let inside = |p: &Vec3| self.tissue.locate(p);
        let mut holes: Vec<Passage> = Vec::new();
        for e in 0..x.len().saturating_sub(1) {
            let (a, b) = (inside(&x[e]), inside(&x[e + 1]));
            if a.map(|m| m.half) == b.map(|m| m.half) {
                continue;
            }
            // Bisect for the face: the inside end's half.
            let (half, entry) = match (a, b) {
                (None, Some(m)) => (m.half, true),
                (Some(m), _) => (m.half, false),
                _ => continue,
            };
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                let p = x[e] + (x[e + 1] - x[e]) * mid;
                let inh = inside(&p).is_some_and(|m| m.half == half);
                if inh == entry {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let s = if entry { hi } else { lo };
            let p = x[e] + (x[e + 1] - x[e]) * s;
            let rest = self.tissue.clamp_rest(half, &p);
            let (face, n, _) = self.tissue.nearest_face(half, &rest);
            let point = MaterialPoint {
                half,
                rest: project_on_face(&self.tissue, half, &rest, face, &n),
            };
            if holes.len() < MAX_PASSAGES {
                holes.push(Passage {
                    point,
                    face,
                    entry,
                    through: Through::Suture((e as f64 + s) * segment),
                    force: Vec3::zeros(),
                    slip: 0.0,
                });
            }
        }
        self.passages.extend(holes);
        // The suture's nodes inside the tissue are exempt from the skin's contact from the
        // start.
        let top = self.tissue.top();
        for (k, e) in self.exempt.iter_mut().enumerate() {
            *e = x[k].y < top && inside(&x[k]).is_some();
        }
    }

    /// Release (or grasp at the needle point nearest to `at`) the needle.
    pub fn set_held(&mut self, time: f64, held: bool, at: &Vec3) {
        if held == self.held {
            return;
        }
        self.held = held;
        if held {
            let (th, _) = self.needle.closest(at);
            let u = (th / self.needle.shape.arc_angle).clamp(0.0, 1.0);
            self.needle.regrasp(u);
            self.event(time, EventKind::NeedleGrasped { at: u });
        } else {
            self.event(time, EventKind::NeedleDropped);
        }
    }

    /// Look at the suture's knot (crate::topology: closure far outside, determinant over
    /// several projections, Jones name) and report a `KnotTied` event when it differs from the
    /// last knot reported (the unknot at first). Allocates: not for the real-time loop (the
    /// offline stepping of `World::advance_to` calls it once per frame).
    pub fn check_knot(&mut self, time: f64, x: &[Vec3]) {
        let Ok(id) = crate::topology::identify_open(x) else {
            return;
        };
        let last = self.events.iter().rev().find_map(|e| match e.kind {
            EventKind::KnotTied { determinant, .. } => Some(determinant),
            _ => None,
        });
        if id.determinant != last.unwrap_or(1) {
            self.event(
                time,
                EventKind::KnotTied {
                    name: id.name,
                    determinant: id.determinant,
                    crossings: id.crossings,
                },
            );
        }
    }

    /// Record what an instrument's jaws did.
    pub fn instrument_event(
        &mut self,
        time: f64,
        hand: super::tool::Hand,
        change: super::instrument::GraspChange,
    ) {
        self.event(time, EventKind::Instrument { hand, change });
    }

    /// Record a break of the suture at `segment` under `tension` [N].
    pub fn broke(&mut self, time: f64, segment: usize, tension: f64) {
        self.event(time, EventKind::SutureBroken { segment, tension });
    }

    /// Per suture node, whether it lies in the tissue through its passages (or within a
    /// segment and a half of one) at the last step: the nodes exempt from the skin's contact.
    pub fn suture_inside(&self) -> &[bool] {
        &self.exempt
    }

    /// Whether the needle's tip is in the tissue (pressing or inside).
    pub fn tip_in_tissue(&self) -> bool {
        !matches!(self.tip, Tip::Outside)
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`):
    /// the needle, the tissue, the swage spring (its force is the suture's pull on the needle
    /// next step), every hole (material point, face, direction, what runs through it, its
    /// force and slip), the event log (its length and running digest) and the events lost,
    /// the last tension, tip force and grasp, the tip's state (outside, pressing on a face at
    /// a point, inside), the suture nodes exempt from the skin's contact, the tip's lagged
    /// speed and the instruments. Every field is named here, so a new one must be placed on
    /// one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Suturing {
            // The scene's: parameters, which rod and node the needle is swaged on, the
            // targets, the skin plane's index, the needle's home pose.
            params: _,
            rod: _,
            node: _,
            targets: _,
            plane: _,
            home: _,
            // Rebuilt from the passages at each step (`prepare_suture`, `finish`).
            channel: _,
            springs: _,
            spring_of: _,
            needle,
            tissue,
            attach,
            passages,
            events,
            events_digest,
            events_lost,
            tension,
            tension_segment,
            tip_force,
            held,
            tip,
            exempt,
            tip_speed,
            instruments,
        } = self;
        needle.digest_into(d);
        tissue.digest_into(d);
        attach.digest_into(d);
        d.usize(passages.len());
        for p in passages {
            let Passage {
                point,
                face,
                entry,
                through,
                force,
                slip,
            } = p;
            d.usize(point.half);
            d.vec3(&point.rest);
            d.u64(face_tag(face));
            d.bool(*entry);
            match through {
                Through::Needle(th) => {
                    d.u64(0);
                    d.f64(*th);
                }
                Through::Suture(s) => {
                    d.u64(1);
                    d.f64(*s);
                }
                Through::Empty => d.u64(2),
            }
            d.vec3(force);
            d.f64(*slip);
        }
        d.usize(events.len());
        d.u64(*events_digest);
        d.usize(*events_lost);
        d.f64(*tension);
        d.usize(*tension_segment);
        d.f64(*tip_force);
        d.bool(*held);
        match tip {
            Tip::Outside => d.u64(0),
            Tip::Pressing(m, face, n) => {
                d.u64(1);
                d.usize(m.half);
                d.vec3(&m.rest);
                d.u64(face_tag(face));
                d.vec3(n);
            }
            Tip::Inside(m) => {
                d.u64(2);
                d.usize(m.half);
                d.vec3(&m.rest);
            }
        }
        d.bools(exempt);
        d.f64(*tip_speed);
        match instruments {
            None => d.u64(0),
            Some(set) => {
                d.u64(1);
                set.digest_into(d);
            }
        }
    }

    /// Whether the needle and tissue states are finite.
    pub fn is_finite(&self) -> bool {
        self.needle.is_finite() && self.tissue.is_finite()
    }
}

/// A face's tag in a state digest.
fn face_tag(f: &Face) -> u64 {
    match f {
        Face::Top => 0,
        Face::Wound => 1,
        Face::Other => 2,
    }
}

/// The rest point `x` of `half` moved onto `face` along its normal.
fn project_on_face(t: &Tissue, half: usize, x: &Vec3, face: Face, n: &Vec3) -> Vec3 {
    let (_, _, depth) = t.nearest_face(half, x);
    let _ = face;
    t.clamp_rest(half, &(x + n * depth))
}

/// One passage the suture runs through, for its step (see [`SutureChannel`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelPoint {
    /// Index of the passage in `Suturing::passages`.
    pub passage: usize,
    /// Position of the hole, held during the step [m].
    pub anchor: Vec3,
    /// Arc length [m] of the suture at the hole.
    pub sigma: f64,
    /// Segment and parameter at the step's start.
    pub seg: usize,
    /// See `seg`.
    pub a: f64,
    /// Unit tangent at the step's start.
    pub t: Vec3,
    /// Friction force magnitude (lagged) [N].
    pub lambda: f64,
    /// Sliding speed along t [m/s]: of the last step on entry, of this step after it.
    pub slip: f64,
    /// Suture point at the step's start [m].
    pub x0: Vec3,
    /// Segments searched for the closest point this step.
    pub lo: usize,
    /// See `lo`.
    pub hi: usize,
    /// The material point at the hole at the step's start (segment, parameter).
    pub seg0: usize,
    /// See `seg0`.
    pub a0: f64,
    /// Force of the channel on the suture at the end of the step [N].
    pub force: Vec3,
}

impl ChannelPoint {
    fn new(passage: usize, anchor: Vec3, sigma: f64) -> Self {
        ChannelPoint {
            passage,
            anchor,
            sigma,
            seg: 0,
            a: 0.0,
            t: Vec3::z(),
            lambda: 0.0,
            slip: 0.0,
            x0: Vec3::zeros(),
            lo: 0,
            hi: 0,
            seg0: 0,
            a0: 0.0,
            force: Vec3::zeros(),
        }
    }
}

/// The suture's channels through the tissue, as a potential on its nodes: per hole P,
/// `½ k |m − P|²` on the suture's material point m closest to P at the step's start (found
/// among a few segments around the arc length σ where it was; re-found every step, so the
/// suture slides through; within a step the term is a smooth quadratic and Newton converges
/// as without it — a distance re-found at every evaluation, tried first, switched segments
/// inside the solve and stalled it), plus Coulomb friction along the tangent t on the slip y
/// of m,
/// `λ = μ k |offset₀| + drag`, as the smooth convex dissipation potential
/// `λ ε (√(1 + (y/ε)²) − 1)` of the slip y over the step (pseudo-Huber, ε = v_s h): its force
/// `λ y/√(ε² + y²)` never exceeds λ and is viscous below the slip speed v_s. (IPC's C¹ stick
/// mollifier made the taut suture's Newton solve stall; a damper lagged on the last step's
/// speed overshot λ many times when the sliding sped up.) σ follows the suture: at each step's start it
/// moves to the closest point to P within a few segments of where it was.
#[derive(Clone, Debug)]
pub struct SutureChannel {
    /// Holes of this step.
    pub points: Vec<ChannelPoint>,
    /// Side stiffness [N/m], friction coefficient [-], drag [N].
    pub stiffness: f64,
    /// See `stiffness`.
    pub friction: f64,
    /// See `stiffness`.
    pub drag: f64,
    /// Speed below which the friction is viscous [m/s].
    pub slip_speed: f64,
    /// Rest segment length of the suture [m].
    pub segment: f64,
    /// A broken segment of the suture (not a segment any more).
    pub broken: Option<usize>,
    h: f64,
}

impl SutureChannel {
    /// Channels with side stiffness `stiffness` [N/m], friction `friction` and drag [N].
    pub fn new(stiffness: f64, friction: f64, drag: f64) -> Self {
        SutureChannel {
            points: Vec::with_capacity(MAX_PASSAGES),
            stiffness,
            friction,
            drag,
            slip_speed: 1e-3,
            segment: 1e-3,
            broken: None,
            h: 1e-3,
        }
    }
}

impl SutureChannel {
    /// The suture's closest point to the hole among segments `lo..=hi` (not the broken one):
    /// (segment, parameter, point).
    fn closest(&self, x: &[Vec3], anchor: &Vec3, lo: usize, hi: usize) -> (usize, f64, Vec3) {
        let mut best = (f64::INFINITY, lo, 0.0, x[lo]);
        for e in lo..=hi {
            if self.broken == Some(e) {
                continue;
            }
            let d = x[e + 1] - x[e];
            let a = ((anchor - x[e]).dot(&d) / d.norm_squared().max(1e-300)).clamp(0.0, 1.0);
            let p = x[e] + d * a;
            let dist = (p - anchor).norm_squared();
            if dist < best.0 {
                best = (dist, e, a, p);
            }
        }
        (best.1, best.2, best.3)
    }
}

impl NodePotential for SutureChannel {
    fn limits_steps(&self) -> bool {
        false
    }

    fn begin(&mut self, x: &[Vec3], h: Option<f64>) {
        self.h = h.unwrap_or(1e-3);
        let n = x.len() - 1;
        let rest_seg = self.segment;
        for k in 0..self.points.len() {
            let cp = self.points[k];
            let guess = ((cp.sigma / rest_seg).floor() as usize).min(n - 1);
            let (lo, hi) = (guess.saturating_sub(2), (guess + 2).min(n - 1));
            let (seg, a, p) = self.closest(x, &cp.anchor, lo, hi);
            let cp = &mut self.points[k];
            cp.seg = seg;
            cp.a = a;
            cp.lo = lo;
            cp.hi = hi;
            cp.sigma = (seg as f64 + a) * rest_seg;
            cp.t = (x[seg + 1] - x[seg]).normalize();
            cp.x0 = p;
            let side = (p - cp.anchor).norm() * self.stiffness;
            cp.lambda = self.friction * side + self.drag;
            // The material point at the hole, for the friction's slip.
            cp.a0 = a;
            cp.seg0 = seg;
        }
    }

    fn evaluate(&self, x: &[Vec3], mut sink: Option<&mut PotentialSink>) -> f64 {
        let mut value = 0.0;
        let eps = self.slip_speed * self.h;
        for cp in &self.points {
            // The hole holds the suture's material point that was closest to it at the step's
            // start, m = (1 − a) x_e + a x_{e+1}: ½ k |m − P|² (a smooth quadratic; the point
            // is re-found at the next step, so the suture slides through the hole from step
            // to step, with an extra viscous drag k h v along it).
            let m = x[cp.seg0] * (1.0 - cp.a0) + x[cp.seg0 + 1] * cp.a0;
            let d = m - cp.anchor;
            value += 0.5 * self.stiffness * d.norm_squared();
            // Coulomb friction on the slip along the suture.
            let y = cp.t.dot(&(m - cp.x0));
            let r = (eps * eps + y * y).sqrt();
            value += cp.lambda * (r - eps);
            let Some(s) = sink.as_deref_mut() else {
                continue;
            };
            let g = d * self.stiffness + cp.t * (cp.lambda * y / r);
            let w = [(cp.seg0, 1.0 - cp.a0), (cp.seg0 + 1, cp.a0)];
            for (node, wt) in w {
                s.add_gradient(node, &(g * wt));
            }
            if s.wants_hessian() {
                let hm = Mat3::identity() * self.stiffness
                    + cp.t * cp.t.transpose() * (cp.lambda * eps * eps / (r * r * r));
                s.add_hessian(cp.seg0, cp.seg0, &(hm * (w[0].1 * w[0].1)));
                s.add_hessian(cp.seg0 + 1, cp.seg0 + 1, &(hm * (w[1].1 * w[1].1)));
                s.add_hessian(cp.seg0 + 1, cp.seg0, &(hm * (w[0].1 * w[1].1)));
            }
        }
        value
    }

    fn accept(&mut self, x: &[Vec3]) -> bool {
        let eps = self.slip_speed * self.h;
        for k in 0..self.points.len() {
            let cp = self.points[k];
            let m = x[cp.seg0] * (1.0 - cp.a0) + x[cp.seg0 + 1] * cp.a0;
            let y = cp.t.dot(&(m - cp.x0));
            let r = (eps * eps + y * y).sqrt();
            let (seg, a, _) = self.closest(x, &cp.anchor, cp.lo, cp.hi);
            let c = &mut self.points[k];
            c.force = -((m - cp.anchor) * self.stiffness + cp.t * (cp.lambda * y / r));
            c.slip = y / self.h;
            c.seg = seg;
            c.a = a;
            c.sigma = (seg as f64 + a) * self.segment;
            c.t = (x[seg + 1] - x[seg]).normalize();
        }
        true
    }

    fn relag(&mut self, _: &[Vec3]) -> f64 {
        0.0
    }
}

/// A small suturing state for unit tests: a 3/8 needle at `needle_at` [m], a 2 × 0.5 × 1 cm
/// pad centred at `tissue_center` [m], a suture of `nodes` nodes held at its last.
#[cfg(test)]
pub(crate) fn test_suturing(needle_at: Vec3, tissue_center: Vec3, nodes: usize) -> Suturing {
    use crate::math::Quat;
    use crate::tissue::{TissueGeometry, TissueParams};
    let shape = super::tool::NeedleShape {
        curvature_radius: 0.008,
        arc_angle: 0.75 * std::f64::consts::PI,
        wire_radius: 3.5e-4,
    };
    let needle = Needle::new(shape, needle_at, Quat::identity(), 0.5, 1e-3, 1e-8);
    let tissue = Tissue::new(
        TissueGeometry {
            center: tissue_center,
            size: Vec3::new(0.02, 0.005, 0.01),
            gap: 1e-3,
        },
        TissueParams {
            youngs_modulus: 1e5,
            density: 1000.0,
            mass_damping: 1.0,
            stiffness_damping: 1e-3,
            spacing: 2.5e-3,
        },
    );
    let params = SuturingParams {
        puncture_force: 1.0,
        tip_stiffness: 500.0,
        cut_force: 0.2,
        needle_channel_stiffness: 1000.0,
        suture_channel_stiffness: 1000.0,
        friction: 0.3,
        drag: 0.05,
        tear_force: 5.0,
        slip_speed: 1e-3,
        breaking_force: 10.0,
    };
    Suturing::new(
        needle,
        tissue,
        params,
        0,
        nodes - 1,
        nodes,
        ToolSpring::new(nodes - 1, 100.0, 1.0),
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees the smallest change of every piece of state a step carries to
    /// the next (the needle's, the tissue's, the swage spring's and the instruments' own
    /// pieces: their modules' tests; here, that each is fed).
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp3};
        let mut s = test_suturing(Vec3::new(0.0, 0.01, 0.0), Vec3::zeros(), 21);
        let m = MaterialPoint {
            half: 1,
            rest: Vec3::new(0.004, 0.0025, 0.001),
        };
        for (through, entry) in [
            (Through::Needle(1.2), true),
            (Through::Suture(0.03), false),
            (Through::Empty, true),
        ] {
            s.passages.push(Passage {
                point: m,
                face: Face::Top,
                entry,
                through,
                force: Vec3::new(0.0, 0.1, 0.0),
                slip: 1e-4,
            });
        }
        s.event(0.5, EventKind::NeedleGrasped { at: 0.5 });
        s.event(0.6, EventKind::NeedleDropped);
        s.attach.force = Vec3::new(0.0, 0.0, 0.2);
        s.tension = 0.4;
        s.tension_segment = 12;
        s.tip_force = 0.3;
        s.tip = Tip::Pressing(m, Face::Top, Vec3::y());
        s.exempt[5] = true;
        s.tip_speed = 2e-3;
        s.instruments = Some(Box::new(super::super::instrument::Instruments::new(
            Vec::new(),
            21,
        )));
        let digest = |s: &Suturing| {
            let mut d = crate::math::Digest::default();
            s.digest_into(&mut d);
            d.0
        };
        fn tip_point(s: &mut Suturing) -> &mut MaterialPoint {
            match &mut s.tip {
                Tip::Pressing(m, ..) | Tip::Inside(m) => m,
                Tip::Outside => unreachable!(),
            }
        }
        assert_each_changes(
            &s,
            digest,
            &[
                ("needle", &|s| ulp3(&mut s.needle.velocity)),
                ("tissue", &|s| {
                    let m = MaterialPoint {
                        half: 0,
                        rest: Vec3::new(-0.004, 0.0025, 0.0),
                    };
                    s.tissue.apply_force(&m, &Vec3::new(0.0, 1e-300, 0.0))
                }),
                ("attach", &|s| ulp3(&mut s.attach.force)),
                ("passages.point.half", &|s| s.passages[2].point.half = 0),
                ("passages.point.rest", &|s| {
                    ulp3(&mut s.passages[2].point.rest)
                }),
                ("passages.face", &|s| s.passages[2].face = Face::Wound),
                ("passages.entry", &|s| s.passages[2].entry = false),
                ("passages.through (needle)", &|s| {
                    s.passages[0].through = Through::Needle(1.2f64.next_up())
                }),
                ("passages.through (suture)", &|s| {
                    s.passages[1].through = Through::Suture(0.03f64.next_up())
                }),
                ("passages.through (kind)", &|s| {
                    s.passages[2].through = Through::Suture(0.0)
                }),
                ("passages.force", &|s| ulp3(&mut s.passages[2].force)),
                ("passages.slip", &|s| ulp(&mut s.passages[2].slip)),
                ("passages (one fewer)", &|s| {
                    s.passages.pop();
                }),
                ("events (one more)", &|s| {
                    s.event(0.7, EventKind::NeedleDropped)
                }),
                ("events (a value)", &|s| {
                    s.events.clear();
                    s.events_digest = crate::math::Digest::default().0;
                    s.event(
                        0.5,
                        EventKind::NeedleGrasped {
                            at: 0.5f64.next_up(),
                        },
                    );
                    s.event(0.6, EventKind::NeedleDropped);
                }),
                ("events_lost", &|s| s.events_lost += 1),
                ("tension", &|s| ulp(&mut s.tension)),
                ("tension_segment", &|s| s.tension_segment += 1),
                ("tip_force", &|s| ulp(&mut s.tip_force)),
                ("held", &|s| s.held = false),
                ("tip (kind)", &|s| s.tip = Tip::Inside(m)),
                ("tip (outside)", &|s| s.tip = Tip::Outside),
                ("tip (point half)", &|s| tip_point(s).half = 0),
                ("tip (point rest)", &|s| ulp3(&mut tip_point(s).rest)),
                ("tip (face)", &|s| {
                    s.tip = Tip::Pressing(m, Face::Wound, Vec3::y())
                }),
                ("tip (normal)", &|s| {
                    s.tip = Tip::Pressing(m, Face::Top, Vec3::new(0.0, 1.0, 1e-300))
                }),
                ("exempt", &|s| s.exempt[20] = true),
                ("tip_speed", &|s| ulp(&mut s.tip_speed)),
                ("instruments", &|s| {
                    s.instruments.as_mut().expect("some").needle_holder = Some(0)
                }),
                ("instruments (none)", &|s| s.instruments = None),
            ],
        );
        // Every kind of event is fed, with its values.
        let kinds = [
            EventKind::Puncture {
                face: Face::Top,
                position: Vec3::x(),
                angle: 0.1,
                force: 1.0,
                target_error: Some(1e-3),
                repeat: false,
            },
            EventKind::Exit {
                face: Face::Wound,
                position: Vec3::x(),
                target_error: None,
            },
            EventKind::Repuncture {
                position: Vec3::x(),
                force: 5.0,
            },
            EventKind::Withdrawn {
                position: Vec3::x(),
            },
            EventKind::SutureThrough {
                position: Vec3::x(),
            },
            EventKind::NeedleDropped,
            EventKind::NeedleGrasped { at: 0.5 },
            EventKind::KnotTied {
                name: Some("trefoil"),
                determinant: 3,
                crossings: 3,
            },
            EventKind::Instrument {
                hand: super::super::tool::Hand::Left,
                change: super::super::instrument::GraspChange::Slipped(0.01),
            },
            EventKind::SutureBroken {
                segment: 4,
                tension: 9.0,
            },
        ];
        let digest = |e: &Event| {
            let mut d = crate::math::Digest::default();
            e.digest_into(&mut d);
            d.0
        };
        let all: Vec<u64> = kinds
            .iter()
            .map(|&kind| digest(&Event { time: 1.0, kind }))
            .collect();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[..i].contains(a), "event kinds {i} digest alike");
        }
        let e = Event {
            time: 1.0,
            kind: kinds[0],
        };
        assert_each_changes(
            &e,
            digest,
            &[
                ("time", &|e| ulp(&mut e.time)),
                ("puncture face", &|e| {
                    if let EventKind::Puncture { face, .. } = &mut e.kind {
                        *face = Face::Other
                    }
                }),
                ("puncture position", &|e| {
                    if let EventKind::Puncture { position, .. } = &mut e.kind {
                        ulp3(position)
                    }
                }),
                ("puncture angle", &|e| {
                    if let EventKind::Puncture { angle, .. } = &mut e.kind {
                        ulp(angle)
                    }
                }),
                ("puncture force", &|e| {
                    if let EventKind::Puncture { force, .. } = &mut e.kind {
                        ulp(force)
                    }
                }),
                ("puncture target_error", &|e| {
                    if let EventKind::Puncture { target_error, .. } = &mut e.kind {
                        *target_error = None
                    }
                }),
                ("puncture repeat", &|e| {
                    if let EventKind::Puncture { repeat, .. } = &mut e.kind {
                        *repeat = true
                    }
                }),
            ],
        );
    }
}
