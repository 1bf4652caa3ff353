//! Decoding: [`salvage`] reads every whole chunk before the first damaged or missing one;
//! [`decode`] insists on a whole recording. A chunk is taken whole or not at all.

use crate::device::DeviceSample;
use crate::math::{Quat, Vec3};
use crate::sim::suturing::{Event, EventKind};
use crate::sim::tool::Hand;
use crate::sim::{MAX_TOOLS, ToolTarget};
use crate::tissue::Face;

use super::error::{DecodeError, PayloadError};
use super::records::{
    DIGESTS, DigestRecord, END, EVENTS, End, EventRecord, FORMAT_VERSION, HEADER, Header,
    KNOT_NAMES, KNOTS, KnotEvent, KnotRecord, MAGIC, MAX_CHUNK, MIN_DIGEST, MIN_EVENT, MIN_KNOT,
    MIN_SAMPLE, MIN_STEP, Recording, SAMPLES, STEPS, SampleRecord, StepRecord, ToolHeader,
    ToolStep,
};
use crate::topology::{Sense, Throw};

/// Reads little-endian values from a chunk's payload; running past its end is an error.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

/// A parse of part of a payload.
type Parse<T> = Result<T, PayloadError>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Parse<&'a [u8]> {
        if self.b.len() - self.at < n {
            return Err(PayloadError::Short {
                at: self.at,
                len: self.b.len(),
                n,
            });
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
        String::from_utf8(b.to_vec()).map_err(|_| PayloadError::NotUtf8)
    }
    fn opt_f64(&mut self) -> Parse<Option<f64>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.f64()?)),
            t => Err(PayloadError::OptionFlag(t)),
        }
    }
    /// A record count, checked against the bytes left (each record at least `min` bytes).
    fn count(&mut self, min: usize) -> Parse<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.b.len() - self.at {
            return Err(PayloadError::Count {
                n,
                left: self.b.len() - self.at,
            });
        }
        Ok(n)
    }
    fn done(&self) -> Parse<()> {
        if self.at != self.b.len() {
            return Err(PayloadError::Stray(self.b.len() - self.at));
        }
        Ok(())
    }
    fn face(&mut self) -> Parse<Face> {
        match self.u8()? {
            0 => Ok(Face::Top),
            1 => Ok(Face::Wound),
            2 => Ok(Face::Other),
            t => Err(PayloadError::Face(t)),
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
    fn throw(&mut self) -> Parse<Throw> {
        let sense = match self.u8()? {
            0 => Sense::Left,
            1 => Sense::Right,
            b => return Err(PayloadError::Throw(b)),
        };
        match self.u8()? {
            w @ (1 | 2) => Ok(Throw { sense, wraps: w }),
            w => Err(PayloadError::Throw(w)),
        }
    }
    fn knot(&mut self) -> Parse<KnotRecord> {
        let step = self.u64()?;
        let time = self.f64()?;
        let event = match self.u8()? {
            e @ (0 | 1) => {
                let index = self.u8()?;
                let throw = self.throw()?;
                if e == 0 {
                    KnotEvent::Added { index, throw }
                } else {
                    KnotEvent::Undone { index, throw }
                }
            }
            2 => {
                self.take(3)?;
                KnotEvent::Unrecognised
            }
            e => return Err(PayloadError::KnotEvent(e)),
        };
        let name = *KNOT_NAMES
            .get(self.u8()? as usize)
            .ok_or(PayloadError::KnotName)?;
        let n = self.u8()? as usize;
        if n > crate::topology::throws::MAX_THROWS {
            return Err(PayloadError::Throws(n));
        }
        let mut throws = Vec::with_capacity(n);
        for _ in 0..n {
            throws.push(self.throw()?);
        }
        Ok(KnotRecord {
            step,
            time,
            event,
            name,
            throws,
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
                    t => return Err(PayloadError::RepeatFlag(t)),
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
                            .ok_or(PayloadError::UnknownKnot(name))?,
                    )
                };
                let determinant = u128::from_le_bytes(self.take(16)?.try_into().expect("16"));
                let crossings =
                    usize::try_from(self.u64()?).map_err(|_| PayloadError::Crossings)?;
                EventKind::KnotTied {
                    name,
                    determinant,
                    crossings,
                }
            }
            8 => EventKind::SutureBroken {
                segment: usize::try_from(self.u64()?).map_err(|_| PayloadError::Segment)?,
                tension: self.f64()?,
            },
            9 => {
                use crate::sim::instrument::GraspChange as G;
                let hand = match self.u8()? {
                    0 => crate::sim::tool::Hand::Right,
                    1 => crate::sim::tool::Hand::Left,
                    t => return Err(PayloadError::Hand(t)),
                };
                let tag = self.u8()?;
                let v = self.f64()?;
                let change = match tag {
                    0 => G::Needle(v),
                    1 => G::Suture(v),
                    2 => G::Nothing,
                    3 => G::Opened,
                    4 => G::Slipped(v),
                    5 => G::Lost,
                    t => return Err(PayloadError::GraspChange(t)),
                };
                EventKind::Instrument { hand, change }
            }
            t => return Err(PayloadError::EventKind(t)),
        })
    }
}

fn header(r: &mut Reader, version: u32) -> Parse<Header> {
    if version == 1 {
        let (crate_version, scene_path, scene_text) = (r.str()?, r.str()?, r.str()?);
        let (device, profile_text) = (r.str()?, r.str()?);
        let (dt, haptic_period, digest_every) = (r.f64()?, r.f64()?, r.u64()?);
        let (rod, node) = (r.u64()?, r.u64()?);
        let (k, c, kr) = (r.f64()?, r.f64()?, r.f64()?);
        return Ok(Header {
            crate_version,
            build: String::new(),
            digest_version: 1,
            scene_path,
            scene_text,
            dt,
            haptic_period,
            digest_every,
            started_unix: r.f64()?,
            trainee: String::new(),
            task: String::new(),
            tools: vec![ToolHeader {
                hand: Hand::Right,
                instrument: None,
                rod,
                node,
                k,
                c,
                kr,
                device,
                profile_text,
            }],
        });
    }
    // Version 4 names the build and the digest version; 2 and 3 carry digests of version 1.
    let crate_version = r.str()?;
    let build = if version >= 4 {
        r.str()?
    } else {
        String::new()
    };
    let (scene_path, scene_text) = (r.str()?, r.str()?);
    let (dt, haptic_period, digest_every) = (r.f64()?, r.f64()?, r.u64()?);
    let digest_version = if version >= 4 { r.u32()? } else { 1 };
    let mut h = Header {
        crate_version,
        build,
        digest_version,
        scene_path,
        scene_text,
        dt,
        haptic_period,
        digest_every,
        started_unix: r.f64()?,
        trainee: String::new(),
        task: String::new(),
        tools: Vec::new(),
    };
    // Version 5 names the trainee and the task.
    if version >= 5 {
        h.trainee = r.str()?;
        h.task = r.str()?;
    }
    let n = r.u8()? as usize;
    if n > MAX_TOOLS {
        return Err(PayloadError::Tools(n));
    }
    for _ in 0..n {
        h.tools.push(ToolHeader {
            hand: match r.u8()? {
                0 => Hand::Right,
                1 => Hand::Left,
                b => return Err(PayloadError::Hand(b)),
            },
            instrument: match r.u8()? {
                0 => None,
                1 => Some(r.u64()?),
                b => return Err(PayloadError::OptionFlag(b)),
            },
            rod: r.u64()?,
            node: r.u64()?,
            k: r.f64()?,
            c: r.f64()?,
            kr: r.f64()?,
            device: r.str()?,
            profile_text: r.str()?,
        });
    }
    Ok(h)
}

/// Version 2's tools after the first in a step record.
fn more_tools(r: &mut Reader) -> Parse<[Option<ToolStep>; MAX_TOOLS - 1]> {
    let mut more = [None; MAX_TOOLS - 1];
    let n = r.u8()? as usize;
    if n > MAX_TOOLS - 1 {
        return Err(PayloadError::Tools(n + 1));
    }
    for m in more.iter_mut().take(n) {
        let flags = r.u8()?;
        if flags > 3 {
            return Err(PayloadError::StepFlags(flags));
        }
        let target = if flags & 1 != 0 {
            Some(r.target()?)
        } else {
            None
        };
        *m = Some(ToolStep {
            target,
            position: r.vec3()?,
            coupling_force: r.vec3()?,
            grasped: flags & 2 != 0,
        });
    }
    Ok(more)
}

fn payload(
    kind: u8,
    r: &mut Reader,
    rec: &mut Recording,
    seen_header: bool,
    version: u32,
) -> Parse<()> {
    if !seen_header && kind != HEADER {
        return Err(PayloadError::BeforeHeader(kind));
    }
    match kind {
        HEADER if seen_header => return Err(PayloadError::SecondHeader),
        HEADER => rec.header = header(r, version)?,
        STEPS => {
            for _ in 0..r.count(MIN_STEP)? {
                let step = r.u64()?;
                let time = r.f64()?;
                let flags = r.u8()?;
                if flags > 15 {
                    return Err(PayloadError::StepFlags(flags));
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
                    more_tools: [None; MAX_TOOLS - 1],
                });
                if version >= 2 {
                    rec.steps.last_mut().expect("pushed").more_tools = more_tools(r)?;
                }
            }
        }
        SAMPLES => {
            for _ in 0..r.count(MIN_SAMPLE)? {
                let tool = if version >= 2 { r.u8()? } else { 0 };
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
                    f => return Err(PayloadError::SampleFlag(f)),
                };
                rec.samples.push(SampleRecord {
                    tool,
                    t,
                    sample,
                    hand_force,
                });
            }
        }
        EVENTS => {
            for _ in 0..r.count(MIN_EVENT)? {
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
            for _ in 0..r.count(MIN_DIGEST)? {
                rec.digests.push(DigestRecord {
                    step: r.u64()?,
                    digest: r.u64()?,
                });
            }
        }
        KNOTS if version >= 3 => {
            for _ in 0..r.count(MIN_KNOT)? {
                let k = r.knot()?;
                rec.knots.push(k);
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
        k => return Err(PayloadError::UnknownChunk(k)),
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
            rec.knots.len(),
        );
        if let Err(what) = payload(kind, &mut r, &mut rec, seen_header, version) {
            rec.steps.truncate(before.0);
            rec.samples.truncate(before.1);
            rec.events.truncate(before.2);
            rec.digests.truncate(before.3);
            rec.knots.truncate(before.4);
            return (
                rec,
                Some(DecodeError::Corrupt {
                    offset: at,
                    chunk: chunks,
                    what: what.to_string(),
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
