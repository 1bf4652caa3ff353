//! The session recording format (issue #7), version 1. Little-endian throughout.
//!
//! ```text
//! file   = MAGIC (8 bytes "\x89SUTREC\n") · format version (u32) · chunk*
//! chunk  = payload length n (u32) · kind (u8) · payload (n bytes) · CRC-32 of kind+payload (u32)
//! kinds  = 1 header (once, first) · 2 steps · 3 device samples · 4 events · 5 digests · 6 end
//! ```
//! A batch chunk (2–5) holds a record count (u32) and the records. Strings are a u32 byte
//! length and UTF-8. The recorder writes a chunk of each kind at least every 50 ms, so a crash
//! loses at most the chunks not yet written; [`salvage`] reads every whole chunk before the
//! first damaged one. The end record carries the step count and the final state digest.
//!
//! The decoder never trusts a length: a chunk longer than what is left of the file is a
//! truncation, a record count larger than its payload allows is corruption, and nothing is
//! allocated beyond the file's own size (the fuzz target `fuzz/fuzz_targets/recording.rs`
//! checks that no input panics).

use crate::device::DeviceSample;
use crate::math::{Quat, Vec3};
use crate::sim::ToolTarget;
use crate::sim::suturing::{Event, EventKind};
use crate::tissue::Face;
use std::fmt;

/// The first 8 bytes of every recording.
pub const MAGIC: [u8; 8] = *b"\x89SUTREC\n";
/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// Chunk kinds.
const HEADER: u8 = 1;
const STEPS: u8 = 2;
const SAMPLES: u8 = 3;
const EVENTS: u8 = 4;
const DIGESTS: u8 = 5;
const END: u8 = 6;

/// Largest chunk payload the decoder accepts [bytes] (the recorder writes far smaller ones).
pub const MAX_CHUNK: usize = 64 << 20;

/// What a session was: enough to rebuild its world and coupling exactly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// `CARGO_PKG_VERSION` of the build that recorded.
    pub crate_version: String,
    /// The scene's path as given, and its full text.
    pub scene_path: String,
    /// See `scene_path`.
    pub scene_text: String,
    /// The device's name and its profile's text (empty: no profile, e.g. mouse or scripted).
    pub device: String,
    /// See `device`.
    pub profile_text: String,
    /// Physics step [s] and haptic period [s].
    pub dt: f64,
    /// See `dt`.
    pub haptic_period: f64,
    /// A state digest every this many steps.
    pub digest_every: u64,
    /// The held rod and node.
    pub tool_rod: u64,
    /// See `tool_rod`.
    pub tool_node: u64,
    /// Coupling gains in the physics: k [N/m], c [N s/m], k_r [N m/rad].
    pub k: f64,
    /// See `k`.
    pub c: f64,
    /// See `k`.
    pub kr: f64,
    /// Wall-clock start [s since the Unix epoch].
    pub started_unix: f64,
}

/// The physical range of a recording's physics step `dt` [s], inclusive: the range of a
/// scene's `[solver] dt` (`scene::DT_RANGE`, where it is explained), checked by
/// [`Header::validate`] when a recording is read for replay or assessment.
pub const DT_RANGE: std::ops::RangeInclusive<f64> = 1e-6..=0.1;

impl Header {
    /// Check the values replay and assessment compute with: `Err` names the field, its range
    /// and the value.
    pub fn validate(&self) -> Result<(), String> {
        if !DT_RANGE.contains(&self.dt) {
            return Err(format!(
                "header.dt must be in [{:e}, {}] [s] (the physics period of the session), got {:e}",
                DT_RANGE.start(),
                DT_RANGE.end(),
                self.dt
            ));
        }
        Ok(())
    }
}

/// One physics step: the target it consumed and what it produced.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepRecord {
    /// Step index (1 for the first step).
    pub step: u64,
    /// Simulated time after the step [s].
    pub time: f64,
    /// The device target the step consumed (None before the first device sample).
    pub target: Option<ToolTarget>,
    /// The tool's position after the step [m] (the needle's grip point, or the held node).
    pub tool_position: Vec3,
    /// Tool tip position [m] (the needle's point; the held node for a rod).
    pub tip_position: Vec3,
    /// The coupling spring's force on the tool [N].
    pub coupling_force: Vec3,
    /// Needle tip force on the skin [N], largest suture tension [N], incision gap [m]
    /// (0 without suturing).
    pub tip_force: f64,
    /// See `tip_force`.
    pub tension: f64,
    /// See `tip_force`.
    pub gap: f64,
    /// Force of all tissue channels on the tissue, summed in magnitude [N].
    pub tissue_force: f64,
    /// Whether the tool is grasped; whether the solve converged; whether it failed.
    pub grasped: bool,
    /// See `grasped`.
    pub converged: bool,
    /// See `grasped`.
    pub failed: bool,
}

/// One haptic tick: the raw device sample and the force sent to the hand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleRecord {
    /// Loop time [s since start].
    pub t: f64,
    /// The device's reading (None: the device faulted at this tick).
    pub sample: Option<DeviceSample>,
    /// Force rendered to the hand [N], world frame.
    pub hand_force: Vec3,
}

/// An event and the step that raised it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventRecord {
    /// Step index.
    pub step: u64,
    /// The event.
    pub event: Event,
}

/// A state digest (`sim::World::digest`) after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigestRecord {
    /// Step index.
    pub step: u64,
    /// Digest.
    pub digest: u64,
}

/// The end record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct End {
    /// Steps taken, and the state digest after the last one.
    pub steps: u64,
    /// See `steps`.
    pub digest: u64,
    /// Wall time of the session [s].
    pub wall: f64,
    /// Records the real-time loops could not hand to the recorder (ring full).
    pub dropped: u64,
    /// Why the session ended, and write errors, if any.
    pub note: String,
}

/// A decoded recording.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// Header.
    pub header: Header,
    /// Physics steps, in order.
    pub steps: Vec<StepRecord>,
    /// Device samples, in order.
    pub samples: Vec<SampleRecord>,
    /// Events, in order.
    pub events: Vec<EventRecord>,
    /// State digests, in order.
    pub digests: Vec<DigestRecord>,
    /// The end record (None: the session did not end cleanly).
    pub end: Option<End>,
}

/// Why a file is not a (whole) recording.
#[derive(Clone, Debug, PartialEq)]
pub enum DecodeError {
    /// The file does not start with [`MAGIC`].
    BadMagic {
        /// Its first bytes.
        found: Vec<u8>,
    },
    /// Written by a newer format than this build reads.
    NewerVersion {
        /// The file's version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
    },
    /// The file ends inside a chunk, or without an end record (a crash or a copy cut short).
    Truncated {
        /// Byte offset where the whole chunks end.
        offset: usize,
        /// Whole chunks before it.
        chunks: usize,
        /// What is missing.
        what: &'static str,
    },
    /// A chunk's CRC does not match, or its payload does not parse.
    Corrupt {
        /// Byte offset of the chunk.
        offset: usize,
        /// Its index.
        chunk: usize,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadMagic { found } => write!(
                f,
                "not a suture recording: the file starts with {found:02x?}, a recording starts with {MAGIC:02x?}"
            ),
            DecodeError::NewerVersion { found, supported } => write!(
                f,
                "recording format version {found} is newer than this build reads (up to {supported}): update suture"
            ),
            DecodeError::Truncated {
                offset,
                chunks,
                what,
            } => write!(
                f,
                "truncated recording: {what} at byte {offset} after {chunks} whole chunks (the session did not end cleanly; `suture export`/`assess` read what is there)"
            ),
            DecodeError::Corrupt {
                offset,
                chunk,
                what,
            } => write!(
                f,
                "corrupt recording: chunk {chunk} at byte {offset}: {what}"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

// ---------------------------------------------------------------- encoding

/// Appends little-endian values to a byte buffer.
#[derive(Default)]
pub struct Writer {
    /// The bytes so far.
    pub buf: Vec<u8>,
}

impl Writer {
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
        self.u32(FORMAT_VERSION);
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
        self.chunk(HEADER, |w| {
            w.str(&h.crate_version);
            w.str(&h.scene_path);
            w.str(&h.scene_text);
            w.str(&h.device);
            w.str(&h.profile_text);
            w.f64(h.dt);
            w.f64(h.haptic_period);
            w.u64(h.digest_every);
            w.u64(h.tool_rod);
            w.u64(h.tool_node);
            w.f64(h.k);
            w.f64(h.c);
            w.f64(h.kr);
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
            }
        });
    }

    /// A chunk of device samples.
    pub fn samples(&mut self, samples: &[SampleRecord]) {
        self.chunk(SAMPLES, |w| {
            w.u32(samples.len() as u32);
            for s in samples {
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
    let mut w = Writer::default();
    w.preamble();
    w.header(&r.header);
    w.steps(&r.steps);
    w.samples(&r.samples);
    w.events(&r.events);
    w.digests(&r.digests);
    if let Some(e) = &r.end {
        w.end(e);
    }
    w.buf
}

// ---------------------------------------------------------------- decoding

/// Reads little-endian values from a chunk's payload; running past its end is an error.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

type Parse<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Parse<&'a [u8]> {
        if self.b.len() - self.at < n {
            return Err(format!(
                "payload ends at byte {} of {} where {n} more were expected",
                self.at,
                self.b.len()
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Parse<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Parse<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Parse<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn f64(&mut self) -> Parse<f64> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn vec3(&mut self) -> Parse<Vec3> {
        Ok(Vec3::new(self.f64()?, self.f64()?, self.f64()?))
    }
    fn quat(&mut self) -> Parse<Quat> {
        let (i, j, k, w) = (self.f64()?, self.f64()?, self.f64()?, self.f64()?);
        // Stored exactly as the unit quaternion it was: no renormalisation.
        Ok(Quat::new_unchecked(nalgebra::Quaternion::new(w, i, j, k)))
    }
    fn str(&mut self) -> Parse<String> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| "a string is not UTF-8".to_string())
    }
    fn opt_f64(&mut self) -> Parse<Option<f64>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.f64()?)),
            t => Err(format!("option flag {t}")),
        }
    }
    /// A record count, checked against the bytes left (each record at least `min` bytes).
    fn count(&mut self, min: usize) -> Parse<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.b.len() - self.at {
            return Err(format!(
                "{n} records cannot fit in the {} bytes left",
                self.b.len() - self.at
            ));
        }
        Ok(n)
    }
    fn done(&self) -> Parse<()> {
        if self.at != self.b.len() {
            return Err(format!(
                "{} stray bytes after the records",
                self.b.len() - self.at
            ));
        }
        Ok(())
    }
    fn face(&mut self) -> Parse<Face> {
        match self.u8()? {
            0 => Ok(Face::Top),
            1 => Ok(Face::Wound),
            2 => Ok(Face::Other),
            t => Err(format!("face {t}")),
        }
    }
    fn target(&mut self) -> Parse<ToolTarget> {
        Ok(ToolTarget {
            t: self.f64()?,
            position: self.vec3()?,
            rotation: self.quat()?,
            velocity: self.vec3()?,
            angular_velocity: self.vec3()?,
            buttons: self.u32()?,
            hand_force: self.vec3()?,
        })
    }
    fn event_kind(&mut self) -> Parse<EventKind> {
        Ok(match self.u8()? {
            0 => EventKind::Puncture {
                face: self.face()?,
                position: self.vec3()?,
                angle: self.f64()?,
                force: self.f64()?,
                target_error: self.opt_f64()?,
                repeat: match self.u8()? {
                    0 => false,
                    1 => true,
                    t => return Err(format!("repeat flag {t}")),
                },
            },
            1 => EventKind::Exit {
                face: self.face()?,
                position: self.vec3()?,
                target_error: self.opt_f64()?,
            },
            2 => EventKind::Repuncture {
                position: self.vec3()?,
                force: self.f64()?,
            },
            3 => EventKind::Withdrawn {
                position: self.vec3()?,
            },
            4 => EventKind::SutureThrough {
                position: self.vec3()?,
            },
            5 => EventKind::NeedleDropped,
            6 => EventKind::NeedleGrasped { at: self.f64()? },
            7 => {
                let name = self.str()?;
                let name = if name.is_empty() {
                    None
                } else {
                    Some(
                        crate::topology::KNOT_NAMES
                            .iter()
                            .find(|n| **n == name)
                            .copied()
                            .ok_or_else(|| format!("unknown knot name {name:?}"))?,
                    )
                };
                let determinant = u128::from_le_bytes(self.take(16)?.try_into().expect("16"));
                let crossings = usize::try_from(self.u64()?)
                    .map_err(|_| "crossing count out of range".to_string())?;
                EventKind::KnotTied {
                    name,
                    determinant,
                    crossings,
                }
            }
            8 => EventKind::SutureBroken {
                segment: usize::try_from(self.u64()?)
                    .map_err(|_| "segment out of range".to_string())?,
                tension: self.f64()?,
            },
            t => return Err(format!("event kind {t}")),
        })
    }
}

fn header(r: &mut Reader) -> Parse<Header> {
    Ok(Header {
        crate_version: r.str()?,
        scene_path: r.str()?,
        scene_text: r.str()?,
        device: r.str()?,
        profile_text: r.str()?,
        dt: r.f64()?,
        haptic_period: r.f64()?,
        digest_every: r.u64()?,
        tool_rod: r.u64()?,
        tool_node: r.u64()?,
        k: r.f64()?,
        c: r.f64()?,
        kr: r.f64()?,
        started_unix: r.f64()?,
    })
}

fn payload(kind: u8, r: &mut Reader, rec: &mut Recording, seen_header: bool) -> Parse<()> {
    if !seen_header && kind != HEADER {
        return Err(format!("chunk kind {kind} before the header"));
    }
    match kind {
        HEADER if seen_header => return Err("a second header".to_string()),
        HEADER => rec.header = header(r)?,
        STEPS => {
            for _ in 0..r.count(8 + 8 + 1 + 12 * 8)? {
                let step = r.u64()?;
                let time = r.f64()?;
                let flags = r.u8()?;
                if flags > 15 {
                    return Err(format!("step flags {flags:#x}"));
                }
                let target = if flags & 1 != 0 {
                    Some(r.target()?)
                } else {
                    None
                };
                rec.steps.push(StepRecord {
                    step,
                    time,
                    target,
                    tool_position: r.vec3()?,
                    tip_position: r.vec3()?,
                    coupling_force: r.vec3()?,
                    tip_force: r.f64()?,
                    tension: r.f64()?,
                    gap: r.f64()?,
                    tissue_force: r.f64()?,
                    grasped: flags & 2 != 0,
                    converged: flags & 4 != 0,
                    failed: flags & 8 != 0,
                });
            }
        }
        SAMPLES => {
            for _ in 0..r.count(8 + 24 + 1)? {
                let t = r.f64()?;
                let hand_force = r.vec3()?;
                let sample = match r.u8()? {
                    0 => None,
                    1 => Some(DeviceSample {
                        t: r.f64()?,
                        position: r.vec3()?,
                        rotation: r.quat()?,
                        velocity: r.vec3()?,
                        angular_velocity: r.vec3()?,
                        buttons: r.u32()?,
                    }),
                    f => return Err(format!("sample flag {f}")),
                };
                rec.samples.push(SampleRecord {
                    t,
                    sample,
                    hand_force,
                });
            }
        }
        EVENTS => {
            for _ in 0..r.count(8 + 8 + 1)? {
                let step = r.u64()?;
                let time = r.f64()?;
                let kind = r.event_kind()?;
                rec.events.push(EventRecord {
                    step,
                    event: Event { time, kind },
                });
            }
        }
        DIGESTS => {
            for _ in 0..r.count(16)? {
                rec.digests.push(DigestRecord {
                    step: r.u64()?,
                    digest: r.u64()?,
                });
            }
        }
        END => {
            rec.end = Some(End {
                steps: r.u64()?,
                digest: r.u64()?,
                wall: r.f64()?,
                dropped: r.u64()?,
                note: r.str()?,
            })
        }
        k => return Err(format!("unknown chunk kind {k}")),
    }
    r.done()
}

/// Decode as much as is whole: every chunk before the first damaged or missing one. Returns
/// the recording so far and, if the file is not a whole recording, why (a file whose magic
/// or version is wrong yields an empty recording and that error).
pub fn salvage(bytes: &[u8]) -> (Recording, Option<DecodeError>) {
    let mut rec = Recording::default();
    if bytes.len() < 8 || bytes[..8] != MAGIC {
        return (
            rec,
            Some(DecodeError::BadMagic {
                found: bytes[..bytes.len().min(8)].to_vec(),
            }),
        );
    }
    if bytes.len() < 12 {
        return (
            rec,
            Some(DecodeError::Truncated {
                offset: 8,
                chunks: 0,
                what: "the file ends inside the format version",
            }),
        );
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
    if version > FORMAT_VERSION || version == 0 {
        return (
            rec,
            Some(DecodeError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            }),
        );
    }
    let mut at = 12;
    let mut chunks = 0;
    let mut seen_header = false;
    loop {
        if rec.end.is_some() {
            if at != bytes.len() {
                return (
                    rec,
                    Some(DecodeError::Corrupt {
                        offset: at,
                        chunk: chunks,
                        what: format!("{} bytes after the end record", bytes.len() - at),
                    }),
                );
            }
            return (rec, None);
        }
        let left = bytes.len() - at;
        if left == 0 {
            let what = if seen_header {
                "no end record"
            } else {
                "no header"
            };
            return (
                rec,
                Some(DecodeError::Truncated {
                    offset: at,
                    chunks,
                    what,
                }),
            );
        }
        if left < 9 {
            return (
                rec,
                Some(DecodeError::Truncated {
                    offset: at,
                    chunks,
                    what: "the file ends inside a chunk's frame",
                }),
            );
        }
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) as usize;
        if n > MAX_CHUNK {
            return (
                rec,
                Some(DecodeError::Corrupt {
                    offset: at,
                    chunk: chunks,
                    what: format!("chunk length {n} exceeds the format's {MAX_CHUNK}"),
                }),
            );
        }
        if left < 9 + n {
            return (
                rec,
                Some(DecodeError::Truncated {
                    offset: at,
                    chunks,
                    what: "the file ends inside a chunk",
                }),
            );
        }
        let body = &bytes[at + 4..at + 5 + n];
        let crc = u32::from_le_bytes(bytes[at + 5 + n..at + 9 + n].try_into().expect("4"));
        let actual = crc32fast::hash(body);
        if crc != actual {
            return (
                rec,
                Some(DecodeError::Corrupt {
                    offset: at,
                    chunk: chunks,
                    what: format!("CRC {actual:08x} where the chunk says {crc:08x}"),
                }),
            );
        }
        // Parse into a copy so that a chunk is taken whole or not at all.
        let kind = body[0];
        let mut r = Reader {
            b: &body[1..],
            at: 0,
        };
        let before = (
            rec.steps.len(),
            rec.samples.len(),
            rec.events.len(),
            rec.digests.len(),
        );
        if let Err(what) = payload(kind, &mut r, &mut rec, seen_header) {
            rec.steps.truncate(before.0);
            rec.samples.truncate(before.1);
            rec.events.truncate(before.2);
            rec.digests.truncate(before.3);
            return (
                rec,
                Some(DecodeError::Corrupt {
                    offset: at,
                    chunk: chunks,
                    what,
                }),
            );
        }
        seen_header |= kind == HEADER;
        chunks += 1;
        at += 9 + n;
    }
}

/// Decode a whole recording (header to end record, every CRC checked).
pub fn decode(bytes: &[u8]) -> Result<Recording, DecodeError> {
    match salvage(bytes) {
        (r, None) => Ok(r),
        (_, Some(e)) => Err(e),
    }
}
