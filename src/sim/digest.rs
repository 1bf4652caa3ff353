//! The state digest (issue #7, widened in issue #26): a 64-bit hash (`math::Digest`, FNV-1a
//! over the exact bits) of the state one physics step hands the next. Replay reproduces a run
//! bit for bit when every recorded digest matches; a recording says which version of the
//! digest it carries (docs/recording-format.md, "State digests"), and replay computes that
//! version.
//!
//! - [`DigestVersion::V1`] (recordings of format versions 1 to 3): the time, the rods' nodes,
//!   velocities and frames, the needle's pose and velocities, the tissue lattice, the holes'
//!   rest points and slips, the suture channels' arc lengths, the event count and the
//!   instruments' bodies, jaws and holds. It leaves out state that carries from step to step:
//!   the adaptive contact stiffnesses, the obstacles' poses, the STRANDS warm start, the
//!   needle tip's state and lagged speed, the forces accumulated for the next step, the tools'
//!   couplings and button edges, and more. Kept bit for bit: older recordings still verify.
//! - [`DigestVersion::V2`] (format version 4 on): every piece of state a step carries to the
//!   next, world and tools. Each type feeds its own (`digest_into` beside its fields, which it
//!   names one by one: a new field does not compile until it is placed in the digest or
//!   among what is not carried), and each module's tests perturb every piece it feeds by the
//!   smallest change (one ulp) and check that the digest sees it.
//!
//! Not in either: what a step recomputes before reading it (solver scratch, the lagged
//! friction rebuilt at each step's start, caches of the step size), the scene's constants
//! (materials, geometry as built, solver settings, scripted motions: the recording carries the
//! scene), and what lives outside the world and its tools (the haptic loops' couplings,
//! limiters and watchdogs, which replay does not run: their output is the recorded targets).

use super::{RodModel, SimRod, Tool, World};
use crate::math::Digest;

/// Which state digest a recording carries (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestVersion {
    /// The digest of recordings of format versions 1 to 3.
    V1,
    /// Every piece of carried state, world and tools (format version 4 on).
    V2,
}

impl DigestVersion {
    /// The version this build writes.
    pub const CURRENT: DigestVersion = DigestVersion::V2;

    /// The number a recording stores.
    pub fn number(self) -> u32 {
        match self {
            DigestVersion::V1 => 1,
            DigestVersion::V2 => 2,
        }
    }

    /// The version of a stored number; None for a number this build does not know.
    pub fn from_number(n: u32) -> Option<DigestVersion> {
        match n {
            1 => Some(DigestVersion::V1),
            2 => Some(DigestVersion::V2),
            _ => None,
        }
    }

    /// What the version covers, in a few words (for replay's report).
    pub fn describe(self) -> &'static str {
        match self {
            DigestVersion::V1 => {
                "state digest version 1, of recordings before format 4: it leaves out some \
                 state carried between steps"
            }
            DigestVersion::V2 => "state digest version 2: every piece of carried state",
        }
    }
}

impl World {
    /// The state digest this build records ([`DigestVersion::CURRENT`]) of the world and the
    /// `tools` it steps with. Allocation-free (the physics loop calls it every 100 steps).
    pub fn digest(&self, tools: &[Tool]) -> u64 {
        self.digest_as(tools, DigestVersion::CURRENT)
    }

    /// The state digest of version `version` (the one a recording carries): version 1 of the
    /// world alone, version 2 of the world and its tools.
    pub fn digest_as(&self, tools: &[Tool], version: DigestVersion) -> u64 {
        match version {
            DigestVersion::V1 => self.digest_v1(),
            DigestVersion::V2 => self.digest_v2(tools),
        }
    }

    /// Version 1, bit for bit as recordings of format versions 1 to 3 carry it.
    fn digest_v1(&self) -> u64 {
        let mut d = Digest::default();
        d.f64(self.time);
        for rod in &self.rods {
            match &rod.model {
                RodModel::Strands(s) => {
                    d.vec3s(s.positions());
                    for m in s.rotations() {
                        for c in m.iter() {
                            d.f64(*c);
                        }
                    }
                }
                RodModel::Cosserat { rod: c, .. } => {
                    d.vec3s(&c.x);
                    d.vec3s(&c.v);
                    for q in &c.q {
                        d.quat(q);
                    }
                    d.vec3s(&c.omega);
                    d.u64(c.params.broken.map_or(u64::MAX, |b| b as u64));
                }
                RodModel::Der { rod: c, .. } => c.digest_v1_into(&mut d),
            }
        }
        if let Some(s) = self.suturing.as_ref() {
            let n = &s.needle;
            d.quat(&n.rotation);
            d.vec3(&n.grip_position);
            d.vec3(&n.velocity);
            d.vec3(&n.angular_velocity);
            d.f64(n.grip);
            d.u64(u64::from(s.held));
            s.tissue.digest_v1_into(&mut d);
            d.f64(s.tension);
            d.f64(s.tip_force);
            for p in &s.passages {
                d.vec3(&p.point.rest);
                d.f64(p.slip);
            }
            for c in &s.channel.points {
                d.f64(c.sigma);
            }
            d.u64(s.events.len() as u64);
            if let Some(set) = s.instruments.as_ref() {
                set.digest_v1_into(&mut d);
            }
        }
        d.0
    }

    /// Version 2: every piece of carried state. Every field of the world is named here.
    fn digest_v2(&self, tools: &[Tool]) -> u64 {
        let World {
            rods,
            time,
            // The scene's scripted obstacle motions (their poses now: each contact's).
            obstacle_motions: _,
            suturing,
        } = self;
        let mut d = Digest::default();
        d.u64(u64::from(DigestVersion::V2.number()));
        d.f64(*time);
        d.usize(rods.len());
        for rod in rods {
            digest_rod(rod, &mut d);
        }
        match suturing {
            None => d.u64(0),
            Some(s) => {
                d.u64(1);
                s.digest_into(&mut d);
            }
        }
        d.usize(tools.len());
        for t in tools {
            t.digest_into(&mut d);
        }
        d.0
    }
}

/// One rod's model, contact and lagged contact.
fn digest_rod(rod: &SimRod, d: &mut Digest) {
    let SimRod {
        model,
        // The scene's drive (held ends, motions, loads) and radius.
        drive: _,
        radius: _,
        lagged,
    } = rod;
    match model {
        RodModel::Strands(s) => {
            d.u64(0);
            s.digest_into(d);
        }
        RodModel::Cosserat {
            rod,
            dt: _,
            quasi_static: _,
            contact,
            self_contact,
        } => {
            d.u64(1);
            rod.digest_into(d);
            contacts(d, contact, self_contact);
        }
        RodModel::Der {
            rod,
            dt: _,
            quasi_static: _,
            contact,
            self_contact,
        } => {
            d.u64(2);
            rod.digest_into(d);
            contacts(d, contact, self_contact);
        }
    }
    option(d, lagged.is_some());
    if let Some(l) = lagged {
        l.digest_into(d);
    }
}

/// Whether an optional piece of state is present, into the digest.
fn option(d: &mut Digest, present: bool) {
    d.u64(u64::from(present));
}

/// A rod's obstacle contact and self-contact, each present or not, into the digest.
fn contacts(
    d: &mut Digest,
    contact: &Option<Box<crate::contact::ObstacleContact>>,
    self_contact: &Option<Box<crate::contact::SelfContact>>,
) {
    option(d, contact.is_some());
    if let Some(c) = contact {
        c.digest_into(d);
    }
    option(d, self_contact.is_some());
    if let Some(c) = self_contact {
        c.digest_into(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{Obstacle, ObstacleContact, SelfContact, Shape};
    use crate::math::{Mat3, Quat, Vec3};
    use crate::rod::{
        CosseratRod, DerRod, DynamicParams, EndCondition, RodParams, SolverConfig, Strands,
        StrandsConfig,
    };
    use crate::sim::instrument::{Instrument, InstrumentKind, InstrumentSpec, Instruments};
    use crate::sim::suturing::Suturing;
    use crate::sim::tool::{Hand, ToolSpring};
    use crate::sim::{EndMotion, RodDrive, TipHold};

    fn drive() -> RodDrive {
        RodDrive {
            base_hold: TipHold::Clamped,
            base: (Mat3::identity(), Vec3::zeros()),
            tip: (Mat3::identity(), Vec3::zeros()),
            tip_hold: TipHold::Free,
            start_motion: EndMotion::default(),
            end_motion: EndMotion::default(),
            base_force: Vec3::zeros(),
            base_torque: Vec3::zeros(),
            tip_force: Vec3::zeros(),
            tip_torque: Vec3::zeros(),
            distributed_force: Vec3::zeros(),
            gravity: Vec3::new(0.0, -9.81, 0.0),
        }
    }

    fn plane() -> Obstacle {
        Obstacle {
            shape: Shape::Plane {
                point: Vec3::new(0.0, -0.01, 0.0),
                normal: Vec3::y(),
            },
            friction: 0.3,
        }
    }

    /// A world with a rod of every model (a sutured Cosserat rod with obstacles and
    /// self-contact, a DER rod with an obstacle, a STRANDS rod with lagged contact), the
    /// needle, the tissue and two instruments, and two tools.
    fn world() -> (World, Vec<Tool>) {
        let p = RodParams {
            radius: 2e-4,
            youngs_modulus: 2e9,
            shear_modulus: 7e8,
            density: 1100.0,
        };
        let dp = DynamicParams::new(&p, 0.1, 10);
        let ends = (EndCondition::Free, EndCondition::Free);
        let cosserat = CosseratRod::straight(
            dp.clone(),
            ends,
            SolverConfig::default(),
            Vec3::zeros(),
            Mat3::identity(),
        );
        let der = DerRod::straight(
            dp,
            ends,
            SolverConfig::default(),
            Vec3::new(0.0, 0.0, 0.2),
            Mat3::identity(),
        );
        let mut strands = Strands::new(
            0.1,
            10,
            Vec3::new(1e-4, 1e-4, 8e-5),
            Vec3::zeros(),
            StrandsConfig::default(),
        );
        strands.set_rest_pose(&Mat3::identity(), &Vec3::new(0.0, 0.0, 0.4));
        let rods = vec![
            SimRod {
                model: RodModel::Cosserat {
                    rod: Box::new(cosserat),
                    dt: 1e-3,
                    quasi_static: false,
                    contact: Some(Box::new(ObstacleContact::new(vec![plane()], 2e-4, 11, 1.0))),
                    self_contact: Some(Box::new(SelfContact::new(2e-4, 1e-4))),
                },
                drive: drive(),
                radius: 2e-4,
                lagged: None,
            },
            SimRod {
                model: RodModel::Der {
                    rod: Box::new(der),
                    dt: 1e-3,
                    quasi_static: false,
                    contact: Some(Box::new(ObstacleContact::new(vec![plane()], 2e-4, 11, 1.0))),
                    self_contact: None,
                },
                drive: drive(),
                radius: 2e-4,
                lagged: None,
            },
            SimRod {
                model: RodModel::Strands(Box::new(strands)),
                drive: drive(),
                radius: 2e-4,
                lagged: Some(Box::new(crate::contact::LaggedContact::new(
                    11,
                    Some(Box::new(ObstacleContact::new(vec![plane()], 2e-4, 11, 1.0))),
                    None,
                ))),
            },
        ];
        let mut su = crate::sim::suturing::test_suturing(
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(0.1, -0.01, 0.0),
            11,
        );
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
        let list = vec![
            Instrument::new(spec, Vec3::new(0.1, 0.02, 0.0), Quat::identity(), 1),
            Instrument::new(
                InstrumentSpec {
                    hand: Hand::Left,
                    ..spec
                },
                Vec3::new(0.0, 0.02, 0.0),
                Quat::identity(),
                4,
            ),
        ];
        su.instruments = Some(Box::new(Instruments::new(list, 11)));
        let world = World {
            rods,
            time: 0.25,
            obstacle_motions: Vec::new(),
            suturing: Some(Box::new(su)),
        };
        let tools = vec![
            Tool::new(0, ToolSpring::new(10, 100.0, 1.0)),
            Tool::new(0, ToolSpring::new(10, 200.0, 1.0)),
        ];
        (world, tools)
    }

    /// Version 2 feeds every part of the world and of each tool: the smallest change of one
    /// piece of each (the pieces of each part: its own module's test) changes it.
    #[test]
    fn version_2_sees_every_part_of_the_world_and_the_tools() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp3};
        let base = world();
        type State = (World, Vec<Tool>);
        fn cosserat(w: &mut World, i: usize) -> &mut RodModel {
            &mut w.rods[i].model
        }
        fn su(w: &mut World) -> &mut Suturing {
            w.suturing.as_deref_mut().expect("suturing")
        }
        let digest = |(w, t): &State| w.digest_as(t, DigestVersion::V2);
        assert_each_changes(
            &base,
            digest,
            &[
                ("time", &|(w, _)| ulp(&mut w.time)),
                ("rods[0] (cosserat)", &|(w, _)| {
                    if let RodModel::Cosserat { rod, .. } = cosserat(w, 0) {
                        ulp3(&mut rod.v[10])
                    }
                }),
                ("rods[0] contact", &|(w, _)| {
                    if let RodModel::Cosserat { contact, .. } = cosserat(w, 0) {
                        ulp(&mut contact.as_mut().expect("some").stiffness)
                    }
                }),
                ("rods[0] contact (none)", &|(w, _)| {
                    if let RodModel::Cosserat { contact, .. } = cosserat(w, 0) {
                        *contact = None
                    }
                }),
                ("rods[0] self-contact", &|(w, _)| {
                    if let RodModel::Cosserat { self_contact, .. } = cosserat(w, 0) {
                        ulp(&mut self_contact.as_mut().expect("some").params.stiffness)
                    }
                }),
                ("rods[0] self-contact (none)", &|(w, _)| {
                    if let RodModel::Cosserat { self_contact, .. } = cosserat(w, 0) {
                        *self_contact = None
                    }
                }),
                ("rods[1] (der)", &|(w, _)| {
                    if let RodModel::Der { rod, .. } = cosserat(w, 1) {
                        ulp3(&mut rod.x[10])
                    }
                }),
                ("rods[1] contact", &|(w, _)| {
                    if let RodModel::Der { contact, .. } = cosserat(w, 1) {
                        ulp(&mut contact.as_mut().expect("some").stiffness)
                    }
                }),
                ("rods[2] (strands)", &|(w, _)| {
                    if let RodModel::Strands(s) = cosserat(w, 2) {
                        let mut loads = [Vec3::zeros(); 11];
                        loads[10].z = f64::MIN_POSITIVE;
                        s.set_point_loads(&loads)
                    }
                }),
                ("rods[2] lagged", &|(w, _)| {
                    let l = w.rods[2].lagged.as_mut().expect("some");
                    ulp(&mut l.contact.as_mut().expect("some").stiffness)
                }),
                ("rods[2] lagged (none)", &|(w, _)| w.rods[2].lagged = None),
                ("rods (one fewer)", &|(w, _)| {
                    w.rods.pop();
                }),
                ("suturing", &|(w, _)| ulp3(&mut su(w).needle.velocity)),
                ("suturing instruments", &|(w, _)| {
                    su(w).instruments.as_mut().expect("some").needle_holder = Some(1)
                }),
                ("suturing (none)", &|(w, _)| w.suturing = None),
                ("tools[1]", &|(_, t)| ulp3(&mut t[1].coupling.force)),
                ("tools[1] grasp", &|(_, t)| t[1].grasped = false),
                ("tools (one fewer)", &|(_, t)| {
                    t.pop();
                }),
            ],
        );
    }

    /// Version 1 is what recordings of format versions 1 to 3 carry: pinned to its value on
    /// a world of every kind of part, so a change to it (it must not change: those recordings
    /// verify against it) fails here; it does not see the tools, nor state it never covered.
    #[test]
    fn version_1_is_pinned_and_leaves_out_what_it_always_did() {
        let (w, tools) = world();
        let v1 = w.digest_as(&tools, DigestVersion::V1);
        assert_eq!(v1, 0x65d3_2414_25b7_8366, "version 1 changed: {v1:#018x}");
        assert_eq!(w.digest_as(&[], DigestVersion::V1), v1);
        let mut w2 = w.clone();
        if let RodModel::Cosserat { contact, .. } = &mut w2.rods[0].model {
            contact.as_mut().expect("some").stiffness *= 10.0;
        }
        assert_eq!(w2.digest_as(&tools, DigestVersion::V1), v1);
        assert_ne!(w2.digest_as(&tools, DigestVersion::V2), w.digest(&tools));
        assert_eq!(w.digest(&tools), w.digest_as(&tools, DigestVersion::V2));
        for v in [DigestVersion::V1, DigestVersion::V2] {
            assert_eq!(DigestVersion::from_number(v.number()), Some(v));
        }
        assert_eq!(DigestVersion::from_number(3), None);
        assert_eq!(DigestVersion::from_number(0), None);
    }
}
