//! Encoding: the [`Writer`] appends the preamble and CRC-framed chunks of records to a byte
//! buffer; [`encode`] writes a whole [`Recording`] (a knots chunk only if it has knot records).
//! Both write the current format version, or ([`Writer::of_version`], [`encode_as`]) an older
//! one this build still reads, as the builds before it wrote it (to test reading them).

use crate::math::{Quat, Vec3};
use crate::sim::suturing::EventKind;
use crate::sim::tool::Hand;
use crate::sim::{MAX_TOOLS, ToolTarget};
use crate::tissue::Face;

use super::records::{
    DIGESTS, DigestRecord, END, EVENTS, End, EventRecord, FORMAT_VERSION, HEADER, Header,
    KNOT_NAMES, KNOTS, KnotEvent, KnotRecord, MAGIC, Recording, SAMPLES, STEPS, SampleRecord,
    StepRecord, ToolHeader,
};
use crate::topology::{Sense, Throw};

/// Appends little-endian values to a byte buffer, in one format version.
pub struct Writer {
    /// The bytes so far.
    pub buf: Vec<u8>,
    version: u32,
}

impl Default for Writer {
    /// A writer of the current format ([`FORMAT_VERSION`]).
    fn default() -> Self {
        Writer {
            buf: Vec::new(),
            version: FORMAT_VERSION,
        }
    }
}

impl Writer {
    /// A writer of format `version` (1 to [`FORMAT_VERSION`]), laid out as the builds of that
    /// version wrote it: what an older version has no place for is left out (version 1: the
    /// tools after the first, a sample's tool; versions 1 to 3: the build and the digest
    /// version, which read back as empty and 1). Knot records (version 3) are written if
    /// asked, as a chunk an older version refuses.
    ///
    /// # Panics
    /// On a version outside 1 to [`FORMAT_VERSION`].
    pub fn of_version(version: u32) -> Self {
        assert!(
            (1..=FORMAT_VERSION).contains(&version),
            "format version {version}"
        );
        Writer {
            buf: Vec::new(),
            version,
        }
    }

    fn u8(&mut self, x: u8) {
        self.buf.push(x);
    }
    fn u32(&mut self, x: u32) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    fn vec3(&mut self, v: &Vec3) {
        self.f64(v.x);
        self.f64(v.y);
        self.f64(v.z);
    }
    fn quat(&mut self, q: &Quat) {
        for c in q.coords.iter() {
            self.f64(*c);
        }
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    fn opt_f64(&mut self, x: Option<f64>) {
        // NaN-free option: a flag byte, then the value.
        match x {
            Some(v) => {
                self.u8(1);
                self.f64(v);
            }
            None => self.u8(0),
        }
    }

    /// Start the file: magic and version.
    pub fn preamble(&mut self) {
        self.buf.extend_from_slice(&MAGIC);
        self.u32(self.version);
    }

    /// Append one chunk of `kind` whose payload `body` writes.
    fn chunk(&mut self, kind: u8, body: impl FnOnce(&mut Writer)) {
        let start = self.buf.len();
        self.u32(0);
        self.u8(kind);
        body(self);
        let n = (self.buf.len() - start - 5) as u32;
        self.buf[start..start + 4].copy_from_slice(&n.to_le_bytes());
        let crc = crc32fast::hash(&self.buf[start + 4..]);
        self.u32(crc);
    }

    /// The header chunk.
    pub fn header(&mut self, h: &Header) {
        if self.version == 1 {
            self.header_v1(h);
            return;
        }
        self.chunk(HEADER, |w| {
            w.str(&h.crate_version);
            if w.version >= 4 {
                w.str(&h.build);
            }
            w.str(&h.scene_path);
            w.str(&h.scene_text);
            w.f64(h.dt);
            w.f64(h.haptic_period);
            w.u64(h.digest_every);
            if w.version >= 4 {
                w.u32(h.digest_version);
            }
            w.f64(h.started_unix);
            if w.version >= 5 {
                w.str(&h.trainee);
                w.str(&h.task);
            }
            // At most MAX_TOOLS (the decoder refuses more); a longer list is cut here.
            let tools = &h.tools[..h.tools.len().min(MAX_TOOLS)];
            w.u8(tools.len() as u8);
            for t in tools {
                w.u8(match t.hand {
                    Hand::Right => 0,
                    Hand::Left => 1,
                });
                match t.instrument {
                    Some(i) => {
                        w.u8(1);
                        w.u64(i);
                    }
                    None => w.u8(0),
                }
                w.u64(t.rod);
                w.u64(t.node);
                w.f64(t.k);
                w.f64(t.c);
                w.f64(t.kr);
                w.str(&t.device);
                w.str(&t.profile_text);
            }
        });
    }

    /// Version 1's header: one tool (the first; none: an empty device at rod 0, node 0).
    fn header_v1(&mut self, h: &Header) {
        let none = ToolHeader::default();
        let t = h.tools.first().unwrap_or(&none);
        self.chunk(HEADER, |w| {
            w.str(&h.crate_version);
            w.str(&h.scene_path);
            w.str(&h.scene_text);
            w.str(&t.device);
            w.str(&t.profile_text);
            w.f64(h.dt);
            w.f64(h.haptic_period);
            w.u64(h.digest_every);
            w.u64(t.rod);
            w.u64(t.node);
            w.f64(t.k);
            w.f64(t.c);
            w.f64(t.kr);
            w.f64(h.started_unix);
        });
    }

    fn target(&mut self, t: &ToolTarget) {
        self.f64(t.t);
        self.vec3(&t.position);
        self.quat(&t.rotation);
        self.vec3(&t.velocity);
        self.vec3(&t.angular_velocity);
        self.u32(t.buttons);
        self.vec3(&t.hand_force);
    }

    /// A chunk of step records.
    pub fn steps(&mut self, steps: &[StepRecord]) {
        self.chunk(STEPS, |w| {
            w.u32(steps.len() as u32);
            for s in steps {
                w.u64(s.step);
                w.f64(s.time);
                let flags = u8::from(s.target.is_some())
                    | u8::from(s.grasped) << 1
                    | u8::from(s.converged) << 2
                    | u8::from(s.failed) << 3;
                w.u8(flags);
                if let Some(t) = &s.target {
                    w.target(t);
                }
                w.vec3(&s.tool_position);
                w.vec3(&s.tip_position);
                w.vec3(&s.coupling_force);
                w.f64(s.tip_force);
                w.f64(s.tension);
                w.f64(s.gap);
                w.f64(s.tissue_force);
                if w.version < 2 {
                    continue;
                }
                let more = s.more_tools.iter().take_while(|m| m.is_some()).count();
                w.u8(more as u8);
                for m in s.more_tools[..more].iter().flatten() {
                    w.u8(u8::from(m.target.is_some()) | u8::from(m.grasped) << 1);
                    if let Some(t) = &m.target {
                        w.target(t);
                    }
                    w.vec3(&m.position);
                    w.vec3(&m.coupling_force);
                }
            }
        });
    }

    /// A chunk of device samples.
    pub fn samples(&mut self, samples: &[SampleRecord]) {
        self.chunk(SAMPLES, |w| {
            w.u32(samples.len() as u32);
            for s in samples {
                if w.version >= 2 {
                    w.u8(s.tool);
                }
                w.f64(s.t);
                w.vec3(&s.hand_force);
                match &s.sample {
                    Some(d) => {
                        w.u8(1);
                        w.f64(d.t);
                        w.vec3(&d.position);
                        w.quat(&d.rotation);
                        w.vec3(&d.velocity);
                        w.vec3(&d.angular_velocity);
                        w.u32(d.buttons);
                    }
                    None => w.u8(0),
                }
            }
        });
    }

    /// A chunk of events.
    pub fn events(&mut self, events: &[EventRecord]) {
        self.chunk(EVENTS, |w| {
            w.u32(events.len() as u32);
            for e in events {
                w.u64(e.step);
                w.f64(e.event.time);
                w.event_kind(&e.event.kind);
            }
        });
    }

    fn face(&mut self, f: &Face) {
        self.u8(match f {
            Face::Top => 0,
            Face::Wound => 1,
            Face::Other => 2,
        });
    }

    fn event_kind(&mut self, k: &EventKind) {
        match k {
            EventKind::Puncture {
                face,
                position,
                angle,
                force,
                target_error,
                repeat,
            } => {
                self.u8(0);
                self.face(face);
                self.vec3(position);
                self.f64(*angle);
                self.f64(*force);
                self.opt_f64(*target_error);
                self.u8(u8::from(*repeat));
            }
            EventKind::Exit {
                face,
                position,
                target_error,
            } => {
                self.u8(1);
                self.face(face);
                self.vec3(position);
                self.opt_f64(*target_error);
            }
            EventKind::Repuncture { position, force } => {
                self.u8(2);
                self.vec3(position);
                self.f64(*force);
            }
            EventKind::Withdrawn { position } => {
                self.u8(3);
                self.vec3(position);
            }
            EventKind::SutureThrough { position } => {
                self.u8(4);
                self.vec3(position);
            }
            EventKind::NeedleDropped => self.u8(5),
            EventKind::NeedleGrasped { at } => {
                self.u8(6);
                self.f64(*at);
            }
            EventKind::KnotTied {
                name,
                determinant,
                crossings,
            } => {
                self.u8(7);
                self.str(name.unwrap_or(""));
                self.buf.extend_from_slice(&determinant.to_le_bytes());
                self.u64(*crossings as u64);
            }
            EventKind::SutureBroken { segment, tension } => {
                self.u8(8);
                self.u64(*segment as u64);
                self.f64(*tension);
            }
            EventKind::Instrument { hand, change } => {
                use crate::sim::instrument::GraspChange as G;
                self.u8(9);
                self.u8(match hand {
                    crate::sim::tool::Hand::Right => 0,
                    crate::sim::tool::Hand::Left => 1,
                });
                let (tag, v) = match change {
                    G::Needle(at) => (0, *at),
                    G::Suture(s) => (1, *s),
                    G::Nothing => (2, 0.0),
                    G::Opened => (3, 0.0),
                    G::Slipped(s) => (4, *s),
                    G::Lost => (5, 0.0),
                };
                self.u8(tag);
                self.f64(v);
            }
        }
    }

    /// A chunk of digests.
    pub fn digests(&mut self, digests: &[DigestRecord]) {
        self.chunk(DIGESTS, |w| {
            w.u32(digests.len() as u32);
            for d in digests {
                w.u64(d.step);
                w.u64(d.digest);
            }
        });
    }

    fn throw(&mut self, t: &Throw) {
        self.u8(match t.sense {
            Sense::Left => 0,
            Sense::Right => 1,
        });
        self.u8(t.wraps);
    }

    /// A chunk of the live knot analysis' records (format version 3).
    pub fn knots(&mut self, knots: &[KnotRecord]) {
        self.chunk(KNOTS, |w| {
            w.u32(knots.len() as u32);
            for k in knots {
                w.u64(k.step);
                w.f64(k.time);
                match &k.event {
                    KnotEvent::Added { index, throw } | KnotEvent::Undone { index, throw } => {
                        w.u8(u8::from(matches!(k.event, KnotEvent::Undone { .. })));
                        w.u8(*index);
                        w.throw(throw);
                    }
                    KnotEvent::Unrecognised => {
                        w.u8(2);
                        w.u8(0);
                        w.u8(0);
                        w.u8(0);
                    }
                }
                w.u8(KNOT_NAMES.iter().position(|n| *n == k.name).unwrap_or(0) as u8);
                // At most MAX_THROWS (the decoder refuses more); a longer list is cut here.
                let throws = &k.throws[..k.throws.len().min(crate::topology::throws::MAX_THROWS)];
                w.u8(throws.len() as u8);
                for t in throws {
                    w.throw(t);
                }
            }
        });
    }

    /// The end chunk.
    pub fn end(&mut self, e: &End) {
        self.chunk(END, |w| {
            w.u64(e.steps);
            w.u64(e.digest);
            w.f64(e.wall);
            w.u64(e.dropped);
            w.str(&e.note);
        });
    }
}

/// The whole recording as bytes (one chunk per record kind; the recorder writes many).
pub fn encode(r: &Recording) -> Vec<u8> {
    encode_as(r, FORMAT_VERSION)
}

/// The whole recording as bytes of format `version` ([`Writer::of_version`]).
pub fn encode_as(r: &Recording, version: u32) -> Vec<u8> {
    let mut w = Writer::of_version(version);
    w.preamble();
    w.header(&r.header);
    w.steps(&r.steps);
    w.samples(&r.samples);
    w.events(&r.events);
    w.digests(&r.digests);
    if !r.knots.is_empty() {
        w.knots(&r.knots);
    }
    if let Some(e) = &r.end {
        w.end(e);
    }
    w.buf
}
