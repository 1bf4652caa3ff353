//! Replay: re-simulate a recording from its recorded targets, step by step, with the same
//! tool (sim::Tool) and step (sim::World::step) the live physics loop used, and compare what each step produced (the
//! tool's position, tip and coupling force, bit for bit) and every recorded state digest (of
//! the version the header gives: `sim::DigestVersion`). A divergence of a recording whose
//! header names another build is reported as such (docs/recording-format.md).
//! The caller builds the world from the recording's scene text (session sits beside scene in
//! the layers, so it does not parse scenes itself).

use super::format::{BUILD, Provenance, Recording, StepRecord, ToolHeader};
use super::recorder::capture;
use crate::sim::World;
use crate::sim::{DigestVersion, Gains, MAX_TOOLS, NoSuchNode, Tool};
use std::fmt;

/// The first place a replay left the recorded run.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// Step index.
    pub step: u64,
    /// What differed (field name).
    pub what: &'static str,
    /// Recorded and replayed values, as text.
    pub recorded: String,
    /// See `recorded`.
    pub replayed: String,
}

/// What a verification found.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyReport {
    /// Steps re-simulated.
    pub steps: u64,
    /// Step records compared bit for bit, and digests compared.
    pub digests: u64,
    /// Whether the final state matched the end record's digest (None: no end record).
    pub end_matched: Option<bool>,
    /// The first divergence (None: the replay reproduced the run bit for bit).
    pub divergence: Option<Divergence>,
    /// The state digest the recording carries (and replay computed).
    pub digest: DigestVersion,
    /// Whether this build made the recording.
    pub provenance: Provenance,
}

impl fmt::Display for VerifyReport {
    /// A match: `replay matches bit for bit: N steps, M state digests, final digest (state
    /// digest version V …)`. A divergence: `replay diverges at step S: FIELD recorded …
    /// replayed … (…)`, as the simulation's; but when the header names another build,
    /// `recorded by another build (…; this is …): …` (a divergence is then expected, not a
    /// fault of the simulation), and when it names none (formats 1 to 3) a note that it may
    /// be another build's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(d) = &self.divergence else {
            write!(
                f,
                "replay matches bit for bit: {} steps, {} state digests{} ({})",
                self.steps,
                self.digests,
                match self.end_matched {
                    Some(true) => ", final digest",
                    Some(false) => ", final digest DIFFERS",
                    None => " (no end record)",
                },
                self.digest.describe()
            )?;
            if let Provenance::OtherBuild(b) = &self.provenance {
                write!(f, "; recorded by another build ({b}; this is {BUILD})")?;
            }
            return Ok(());
        };
        let at = format!(
            "at step {}: {} recorded {} replayed {} ({} steps, {} digests matched before)",
            d.step, d.what, d.recorded, d.replayed, self.steps, self.digests
        );
        match &self.provenance {
            Provenance::ThisBuild => write!(f, "replay diverges {at}"),
            Provenance::OtherBuild(b) => write!(
                f,
                "recorded by another build ({b}; this is {BUILD}): bit-for-bit replay needs the \
                 build that recorded it, and this one leaves the recording {at}"
            ),
            Provenance::Unknown => write!(
                f,
                "replay diverges {at}; the recording names no build (none before format 4 \
                 does), so this may be another build's divergence"
            ),
        }
    }
}

/// Why a replay could not run at all.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayError {
    /// A header's tool (hand, rod, node) does not exist in the scene's world.
    NoSuchTool(&'static str, u64, u64),
    /// More tools than a world steps (`sim::MAX_TOOLS`).
    TooManyTools(usize),
    /// The header's state digest version is not one this build computes.
    DigestVersion(u32),
    /// The step records are not 1, 2, 3, … in order.
    StepOrder {
        /// Position in the record list.
        index: usize,
        /// The step index found.
        found: u64,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::NoSuchTool(hand, r, n) => {
                write!(
                    f,
                    "the recording's {hand} hand's tool (rod {r}, node {n}) is not in its scene"
                )
            }
            ReplayError::TooManyTools(n) => write!(
                f,
                "the recording has {n} tools, a world steps at most {MAX_TOOLS}"
            ),
            ReplayError::DigestVersion(v) => write!(
                f,
                "the recording's state digests are of version {v}, which this build does not compute"
            ),
            ReplayError::StepOrder { index, found } => write!(
                f,
                "step record {index} has step index {found}, expected {}",
                index + 1
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// THE construction of a session's tool at t = 0 from its header entry (the hand's held rod
/// and node, or its instrument, and the coupling's gains in the physics): the live run
/// (runtime::run) builds its tools here from the entries it records, and replay builds them
/// again from the recorded ones, so both start from the same tools.
pub fn build_tool(world: &World, t: &ToolHeader) -> Result<Tool, NoSuchNode> {
    let gains = Gains {
        k: t.k,
        c: t.c,
        kr: t.kr,
    };
    let (rod, node) = (t.rod as usize, t.node as usize);
    match t.instrument {
        // The scene's [tool]: a coupling on a rod node (suturing: on the needle).
        None => Tool::at_start(world, rod, node, gains),
        // An instrument of the scene ([[instruments]]).
        Some(i) => Tool::for_instrument(world, i as usize, gains),
    }
}

/// The tools a recording's session started with, over `world` (built from its scene), in
/// the order the world steps them.
pub fn tools_for(rec: &Recording, world: &World) -> Result<Vec<Tool>, ReplayError> {
    if rec.header.tools.len() > MAX_TOOLS {
        return Err(ReplayError::TooManyTools(rec.header.tools.len()));
    }
    rec.header
        .tools
        .iter()
        .map(|t| {
            build_tool(world, t).map_err(|_| ReplayError::NoSuchTool(t.hand.name(), t.rod, t.node))
        })
        .collect()
}

fn bits_differ(a: &StepRecord, b: &StepRecord) -> Option<(&'static str, String, String)> {
    let v = |x: &crate::math::Vec3| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits()];
    let show = |x: &crate::math::Vec3| format!("({:e}, {:e}, {:e})", x.x, x.y, x.z);
    if a.time.to_bits() != b.time.to_bits() {
        return Some(("time", a.time.to_string(), b.time.to_string()));
    }
    if v(&a.tool_position) != v(&b.tool_position) {
        return Some((
            "tool position",
            show(&a.tool_position),
            show(&b.tool_position),
        ));
    }
    if v(&a.tip_position) != v(&b.tip_position) {
        return Some(("tip position", show(&a.tip_position), show(&b.tip_position)));
    }
    if v(&a.coupling_force) != v(&b.coupling_force) {
        return Some((
            "coupling force",
            show(&a.coupling_force),
            show(&b.coupling_force),
        ));
    }
    for (what, x, y) in [
        ("tip force", a.tip_force, b.tip_force),
        ("tension", a.tension, b.tension),
        ("gap", a.gap, b.gap),
        ("tissue force", a.tissue_force, b.tissue_force),
    ] {
        if x.to_bits() != y.to_bits() {
            return Some((what, format!("{x:e}"), format!("{y:e}")));
        }
    }
    if (a.grasped, a.converged, a.failed) != (b.grasped, b.converged, b.failed) {
        return Some((
            "grasped/converged/failed",
            format!("{:?}", (a.grasped, a.converged, a.failed)),
            format!("{:?}", (b.grasped, b.converged, b.failed)),
        ));
    }
    for (x, y) in a.more_tools.iter().zip(&b.more_tools) {
        match (x, y) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                if v(&x.position) != v(&y.position) {
                    return Some(("second tool position", show(&x.position), show(&y.position)));
                }
                if v(&x.coupling_force) != v(&y.coupling_force) {
                    return Some((
                        "second tool coupling force",
                        show(&x.coupling_force),
                        show(&y.coupling_force),
                    ));
                }
                if x.grasped != y.grasped {
                    return Some((
                        "second tool grasped",
                        x.grasped.to_string(),
                        y.grasped.to_string(),
                    ));
                }
            }
            (x, y) => {
                return Some((
                    "tool count",
                    format!("{}", 1 + usize::from(x.is_some())),
                    format!("{}", 1 + usize::from(y.is_some())),
                ));
            }
        }
    }
    None
}

/// Re-simulate `rec` on `world` (its scene's world at t = 0) and compare every step record and
/// digest; stops at the first divergence. `progress` is called with each step index.
pub fn verify(
    rec: &Recording,
    mut world: World,
    mut progress: impl FnMut(u64),
) -> Result<VerifyReport, ReplayError> {
    replay_each(rec, &mut world, |step, _| progress(step))
}

/// THE re-simulation of a recording, for `verify`, the frames of `suture export` and the knot
/// of `suture assess`: step `world` (its scene's world at t = 0) through [`World::step`] with
/// every tool's recorded targets, compare each step's record bit for bit and each recorded
/// digest, and call `each(step, &world)` after every step that matched (its record, and its
/// digest when one was recorded at it). Stops at the first divergence, which the report names;
/// `each` never sees a step that diverged. The end record's digest is compared last (after
/// `each` saw the last step). `world` is left at the last step stepped.
pub fn replay_each(
    rec: &Recording,
    world: &mut World,
    mut each: impl FnMut(u64, &World),
) -> Result<VerifyReport, ReplayError> {
    let mut tools = tools_for(rec, world)?;
    let version = rec
        .header
        .digest()
        .ok_or(ReplayError::DigestVersion(rec.header.digest_version))?;
    let n = tools.len();
    let h = rec.header.dt;
    let mut report = VerifyReport {
        steps: 0,
        digests: 0,
        end_matched: None,
        divergence: None,
        digest: version,
        provenance: rec.header.provenance(),
    };
    let mut digests = rec.digests.iter().peekable();
    for (i, s) in rec.steps.iter().enumerate() {
        if s.step != i as u64 + 1 {
            return Err(ReplayError::StepOrder {
                index: i,
                found: s.step,
            });
        }
        let targets = s.targets();
        let out = world.step(&mut tools, &targets[..n], h);
        let mine = capture(s.step, &targets[..n], &out);
        report.steps += 1;
        if let Some((what, a, b)) = bits_differ(s, &mine) {
            report.divergence = Some(Divergence {
                step: s.step,
                what,
                recorded: a,
                replayed: b,
            });
            return Ok(report);
        }
        while let Some(d) = digests.next_if(|d| d.step <= s.step) {
            if d.step < s.step {
                continue;
            }
            let mine = world.digest_as(&tools, version);
            if mine != d.digest {
                report.divergence = Some(Divergence {
                    step: s.step,
                    what: "state digest",
                    recorded: format!("{:016x}", d.digest),
                    replayed: format!("{mine:016x}"),
                });
                return Ok(report);
            }
            report.digests += 1;
        }
        each(s.step, world);
    }
    if let Some(e) = &rec.end
        && e.steps == report.steps
    {
        let mine = world.digest_as(&tools, version);
        report.end_matched = Some(mine == e.digest);
        if report.end_matched == Some(false) {
            report.divergence = Some(Divergence {
                step: e.steps,
                what: "final state digest",
                recorded: format!("{:016x}", e.digest),
                replayed: format!("{mine:016x}"),
            });
        }
    }
    Ok(report)
}
