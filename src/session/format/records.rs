//! The record types of a recording and their byte layouts (little-endian; `vec3` is three
//! f64, `quat` four f64 in the order i, j, k, w, `str` a u32 byte length and UTF-8).

use crate::device::DeviceSample;
use crate::math::Vec3;
use crate::sim::suturing::Event;
use crate::sim::tool::Hand;
use crate::sim::{DigestVersion, MAX_TOOLS, ToolTarget};
use crate::topology::{KnotName, Throw};

/// The first 8 bytes of every recording.
pub const MAGIC: [u8; 8] = *b"\x89SUTREC\n";
/// The format version this build writes and the newest it reads (version 5: the header names
/// the trainee and the task, issue #24; version 4: the header names
/// the build and the state digest's version, issue #26; version 3: the live knot analysis'
/// records, chunk kind 7; version 2: every device and tool of a session, issue #22; versions
/// 1 to 4 still decode, versions 1 to 3 carry state digests of version 1).
pub const FORMAT_VERSION: u32 = 5;

/// The identity of this build, as a recording's header names it (`build.rs`: the crate's
/// version, a hash of the simulation's sources and Cargo.lock, the compiler and the target),
/// e.g. `suture 0.1.0, sim 1f0c3a5e9b7d2468, rustc 1.95.0 (59807616e 2026-04-14),
/// x86_64-unknown-linux-gnu`. Two builds with the same identity re-simulate a recording alike.
pub const BUILD: &str = env!("SUTURE_BUILD");

/// Chunk kinds (the byte after a chunk's length).
pub(super) const HEADER: u8 = 1;
pub(super) const STEPS: u8 = 2;
pub(super) const SAMPLES: u8 = 3;
pub(super) const EVENTS: u8 = 4;
pub(super) const DIGESTS: u8 = 5;
pub(super) const END: u8 = 6;
pub(super) const KNOTS: u8 = 7;

/// Smallest encoded size of a step, sample, event and digest record [bytes]: the decoder
/// refuses a record count its chunk's payload cannot hold.
pub(super) const MIN_STEP: usize = 8 + 8 + 1 + 12 * 8;
/// See [`MIN_STEP`].
pub(super) const MIN_SAMPLE: usize = 8 + 24 + 1;
/// See [`MIN_STEP`].
pub(super) const MIN_EVENT: usize = 8 + 8 + 1;
/// See [`MIN_STEP`].
pub(super) const MIN_DIGEST: usize = 16;
/// See [`MIN_STEP`].
pub(super) const MIN_KNOT: usize = 8 + 8 + 4 + 2;

/// Largest chunk payload the decoder accepts [bytes] (the recorder writes far smaller ones).
pub const MAX_CHUNK: usize = 64 << 20;

/// What a session was: enough to rebuild its world and its tools exactly.
///
/// Layout (chunk kind 1), version 5: `crate_version`, `build`, `scene_path`, `scene_text`
/// (str) · `dt`, `haptic_period` (f64) · `digest_every` (u64) · `digest_version` (u32) ·
/// `started_unix` (f64) · `trainee`, `task` (str) · tool count u8 (at most `sim::MAX_TOOLS`) · per tool
/// ([`ToolHeader`]): hand u8 (0 right, 1 left) · instrument (a flag u8 and a u64 if 1) ·
/// `rod`, `node` (u64) · `k`, `c`, `kr` (f64) · `device`, `profile_text` (str).
///
/// Version 4: the same without `trainee` and `task` (they decode empty).
///
/// Versions 2 and 3: the same without `build`, `digest_version`, `trainee` and `task` (they decode to an empty
/// build and digest version 1).
///
/// Version 1 (one tool, the right hand): `crate_version`, `scene_path`, `scene_text`,
/// `device`, `profile_text` (str) · `dt`, `haptic_period` (f64) · `digest_every`, `tool_rod`,
/// `tool_node` (u64) · `k`, `c`, `kr`, `started_unix` (f64); it decodes to one [`ToolHeader`].
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// `CARGO_PKG_VERSION` of the build that recorded.
    pub crate_version: String,
    /// The identity of the build that recorded ([`BUILD`]); empty: not known (a recording of
    /// format version 1 to 3, or a header written without it).
    pub build: String,
    /// The version of the state digests the recording carries (`sim::DigestVersion`; 1 for
    /// format versions 1 to 3).
    pub digest_version: u32,
    /// The scene's path as given, and its full text.
    pub scene_path: String,
    /// See `scene_path`.
    pub scene_text: String,
    /// Physics step [s] and haptic period [s].
    pub dt: f64,
    /// See `dt`.
    pub haptic_period: f64,
    /// A state digest every this many steps.
    pub digest_every: u64,
    /// Wall-clock start [s since the Unix epoch]: the attempt's time.
    pub started_unix: f64,
    /// Who performed the session (`suture run --trainee ID`); empty: not given (and every
    /// recording before format version 5).
    pub trainee: String,
    /// The task performed: the scene's `task`, else its file stem (e.g. `interrupted_stitch`);
    /// empty before format version 5 (assessment then uses the scene path's stem).
    pub task: String,
    /// The device-driven tools, in the order the world steps them (`tools[i]` consumed the
    /// step records' `targets()[i]`).
    pub tools: Vec<ToolHeader>,
}

/// One device-driven tool of a session: what builds it again for replay (hand, instrument,
/// held rod and node, the coupling's gains in the physics) and the device that drove it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolHeader {
    /// The hand (and device) that drove it.
    pub hand: Hand,
    /// The instrument (index into the world's instruments); None: the scene's `[tool]`.
    pub instrument: Option<u64>,
    /// The held rod and node.
    pub rod: u64,
    /// See `rod`.
    pub node: u64,
    /// Coupling gains in the physics: k [N/m], c [N s/m], k_r [N m/rad].
    pub k: f64,
    /// See `k`.
    pub c: f64,
    /// See `k`.
    pub kr: f64,
    /// The device's name, and its profile's text (empty: no profile, e.g. mouse or scripted).
    pub device: String,
    /// See `device`.
    pub profile_text: String,
}

impl Default for Header {
    /// An empty header that carries this build's state digests and names no build.
    fn default() -> Self {
        Header {
            crate_version: String::new(),
            build: String::new(),
            digest_version: DigestVersion::CURRENT.number(),
            scene_path: String::new(),
            scene_text: String::new(),
            dt: 0.0,
            haptic_period: 0.0,
            digest_every: 0,
            started_unix: 0.0,
            trainee: String::new(),
            task: String::new(),
            tools: Vec::new(),
        }
    }
}

/// Whether the build that made a recording is this one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// The header names this build ([`BUILD`]).
    ThisBuild,
    /// The header names another build (its identity): its re-simulation here need not be
    /// bit for bit.
    OtherBuild(String),
    /// The header names no build (format versions 1 to 3, or a header written without one):
    /// the crate version it gives is the same for every commit.
    Unknown,
}

impl Header {
    /// The state digest version the recording carries (None: one this build does not
    /// compute; [`Header::validate`] refuses it).
    pub fn digest(&self) -> Option<DigestVersion> {
        DigestVersion::from_number(self.digest_version)
    }

    /// Whether this build made the recording.
    pub fn provenance(&self) -> Provenance {
        if self.build.is_empty() {
            Provenance::Unknown
        } else if self.build == BUILD {
            Provenance::ThisBuild
        } else {
            Provenance::OtherBuild(self.build.clone())
        }
    }

    /// The devices in words: the only device's name, or `right: NAME, left: NAME`.
    pub fn devices(&self) -> String {
        match self.tools.as_slice() {
            [] => String::new(),
            [t] => t.device.clone(),
            ts => ts
                .iter()
                .map(|t| format!("{}: {}", t.hand.name(), t.device))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// The physical range of a recording's physics step `dt` [s], inclusive: the range of a
/// scene's `[solver] dt` (`scene::DT_RANGE`, where it is explained), checked by
/// [`Header::validate`] when a recording is read for replay or assessment.
pub const DT_RANGE: std::ops::RangeInclusive<f64> = 1e-6..=0.1;

/// A header value replay and assessment cannot compute with.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HeaderError {
    /// Two tools driven by the same hand.
    #[error("header.tools: the {0} hand drives two tools")]
    SameHand(&'static str),
    /// A state digest version this build does not compute.
    #[error(
        "header.digest_version must be a state digest version this build computes (1 to \
         {newest}), got {0}",
        newest = DigestVersion::CURRENT.number()
    )]
    DigestVersion(u32),
    /// `dt` outside [`DT_RANGE`].
    #[error(
        "header.dt must be in [{:e}, {}] [s] (the physics period of the session), got {dt:e}",
        DT_RANGE.start(),
        DT_RANGE.end()
    )]
    Dt {
        /// The recorded value [s].
        dt: f64,
    },
}

impl Header {
    /// Check the values replay and assessment compute with: the error names the field, its
    /// range and the value.
    pub fn validate(&self) -> Result<(), HeaderError> {
        if !DT_RANGE.contains(&self.dt) {
            return Err(HeaderError::Dt { dt: self.dt });
        }
        if self.digest().is_none() {
            return Err(HeaderError::DigestVersion(self.digest_version));
        }
        for (i, t) in self.tools.iter().enumerate() {
            if self.tools[..i].iter().any(|u| u.hand == t.hand) {
                return Err(HeaderError::SameHand(t.hand.name()));
            }
        }
        Ok(())
    }
}

/// One physics step: the targets its tools consumed and what it produced.
///
/// Layout (in a chunk of kind 2): `step` u64 · `time` f64 · flags u8 (bit 0 a target of the
/// first tool follows, 1 grasped, 2 converged, 3 failed) · the target if any (`t` f64, position
/// vec3, rotation quat, velocity vec3, angular velocity vec3, buttons u32, hand force vec3) ·
/// `tool_position`, `tip_position`, `coupling_force` (vec3) · `tip_force`, `tension`, `gap`,
/// `tissue_force` (f64); version 2 then: the count of further tools u8 (at most
/// `sim::MAX_TOOLS − 1`) and per tool ([`ToolStep`]) flags u8 (bit 0 a target follows, 1
/// grasped) · the target if any · `position`, `coupling_force` (vec3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepRecord {
    /// Step index (1 for the first step).
    pub step: u64,
    /// Simulated time after the step [s].
    pub time: f64,
    /// The device target the first tool consumed (None: no device sample yet, so the coupling
    /// kept its target).
    pub target: Option<ToolTarget>,
    /// The first tool's position after the step [m] (the needle's grip point, or the held
    /// node).
    pub tool_position: Vec3,
    /// Tool tip position [m] (the needle's point; the held node for a rod).
    pub tip_position: Vec3,
    /// The first tool's coupling spring force on the tool [N].
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
    /// Whether the first tool is grasped; whether the solve converged; whether it failed.
    pub grasped: bool,
    /// See `grasped`.
    pub converged: bool,
    /// See `grasped`.
    pub failed: bool,
    /// The tools after the first (`more_tools[i]` is tool `i + 1`; None: the session has no
    /// such tool). Version 1 recordings have none.
    pub more_tools: [Option<ToolStep>; MAX_TOOLS - 1],
}

/// A tool after the first at one step: the target it consumed and where it went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolStep {
    /// The device target it consumed (None: no new sample, the coupling kept its target).
    pub target: Option<ToolTarget>,
    /// Its position after the step [m] (the held node, or the instrument's grip point).
    pub position: Vec3,
    /// Its coupling spring's force [N].
    pub coupling_force: Vec3,
    /// Whether it is grasped.
    pub grasped: bool,
}

impl StepRecord {
    /// The target each tool consumed: `targets()[i]` for tool `i` (tools past the session's
    /// count are None).
    pub fn targets(&self) -> [Option<ToolTarget>; MAX_TOOLS] {
        let mut t = [None; MAX_TOOLS];
        t[0] = self.target;
        for (dst, m) in t[1..].iter_mut().zip(&self.more_tools) {
            *dst = m.and_then(|m| m.target);
        }
        t
    }
}

/// One haptic tick of one device: the raw device sample and the force sent to the hand.
///
/// Layout (in a chunk of kind 3): version 2 `tool` u8, then (as version 1) `t` f64 · `hand_force` vec3 · flag u8 (1: a sample follows:
/// `t` f64, position vec3, rotation quat, velocity vec3, angular velocity vec3, buttons u32).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleRecord {
    /// The tool (index into the header's `tools`) whose device and haptic loop this is (0 in
    /// version 1).
    pub tool: u8,
    /// Loop time [s since start].
    pub t: f64,
    /// The device's reading (None: the device faulted at this tick).
    pub sample: Option<DeviceSample>,
    /// Force rendered to the hand [N], world frame.
    pub hand_force: Vec3,
}

/// An event and the step that raised it.
///
/// Layout (in a chunk of kind 4): `step` u64 · event time f64 · event kind u8 (0 puncture,
/// 1 exit, 2 repuncture, 3 withdrawn, 4 suture through, 5 needle dropped, 6 needle grasped,
/// 7 knot tied, 8 suture broken) and its fields in declaration order (a face as u8: 0 top,
/// 1 wound, 2 other; a bool as u8; an optional f64 as a flag byte and the value; a knot name as a
/// string, empty for none; its determinant as u128; counts and indices as u64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventRecord {
    /// Step index.
    pub step: u64,
    /// The event.
    pub event: Event,
}

/// A state digest (`sim::World::digest` of the world and its tools, of the version the
/// header gives) after a step.
///
/// Layout (in a chunk of kind 5): `step` u64 · `digest` u64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigestRecord {
    /// Step index.
    pub step: u64,
    /// Digest.
    pub digest: u64,
}

/// What the live knot analysis saw change (topology::KnotChange, as recorded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KnotEvent {
    /// A throw was added at `index` (0: the first).
    Added {
        /// Its place in the stack.
        index: u8,
        /// The throw.
        throw: Throw,
    },
    /// The throw at `index` was undone.
    Undone {
        /// Its place in the stack.
        index: u8,
        /// The throw.
        throw: Throw,
    },
    /// The knot became one that is no product of throws.
    Unrecognised,
}

/// A change of the suture's knot seen by the live analysis thread (runtime::analysis), and the
/// knot after it. Not part of the simulation: when it is seen depends on the analysis thread's
/// timing, so replay's bit-for-bit verification ignores these records (docs/recording-format.md).
///
/// Layout (in a chunk of kind 7, format version 3): `step` u64 · `time` f64 · event u8 (0 added,
/// 1 undone, 2 unrecognised) · `index` u8 · the throw (sense u8: 0 left, 1 right; wraps u8: 1
/// or 2; both 0 for unrecognised) · `name` u8 (the order of topology::KnotName: 0 not a knot,
/// 1 single throw, 2 double throw, 3 square, 4 granny, 5 surgeon's, 6 surgeon's same sense,
/// 7 half hitches, 8 stack, 9 unrecognised) · throw count u8 (at most
/// topology::throws::MAX_THROWS) · the throws (sense u8, wraps u8 each), in the order tied.
#[derive(Clone, Debug, PartialEq)]
pub struct KnotRecord {
    /// The physics step of the snapshot analysed (as numbered in the step records) and its
    /// simulated time [s].
    pub step: u64,
    /// See `step`.
    pub time: f64,
    /// What changed.
    pub event: KnotEvent,
    /// The knot's name after the change.
    pub name: KnotName,
    /// Its throws after the change, in the order tied.
    pub throws: Vec<Throw>,
}

/// The knot names in the order of their codes in a [`KnotRecord`].
pub(super) const KNOT_NAMES: [KnotName; 10] = [
    KnotName::NotAKnot,
    KnotName::SingleThrow,
    KnotName::DoubleThrow,
    KnotName::Square,
    KnotName::Granny,
    KnotName::Surgeons,
    KnotName::SurgeonsSameSense,
    KnotName::HalfHitches,
    KnotName::Stack,
    KnotName::Unrecognised,
];

/// The end record.
///
/// Layout (chunk kind 6): `steps`, `digest` (u64) · `wall` f64 · `dropped` u64 · `note` str.
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
    /// The live knot analysis' records, in order (none before format version 3).
    pub knots: Vec<KnotRecord>,
    /// The end record (None: the session did not end cleanly).
    pub end: Option<End>,
}
