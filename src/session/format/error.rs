//! Why a file is not a (whole) recording ([`DecodeError`]), and why a chunk's payload does not
//! parse (`PayloadError`, reported as a corrupt chunk's `what`).

use super::records::MAGIC;

/// Why a file is not a (whole) recording.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The file does not start with [`MAGIC`].
    #[error(
        "not a suture recording: the file starts with {found:02x?}, a recording starts with {magic:02x?}",
        magic = MAGIC
    )]
    BadMagic {
        /// Its first bytes.
        found: Vec<u8>,
    },
    /// Written by a newer format than this build reads.
    #[error(
        "recording format version {found} is newer than this build reads (up to {supported}): update suture"
    )]
    NewerVersion {
        /// The file's version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
    },
    /// The file ends inside a chunk, or without an end record (a crash or a copy cut short).
    #[error(
        "truncated recording: {what} at byte {offset} after {chunks} whole chunks (the session did not end cleanly; `suture export`/`assess` read what is there)"
    )]
    Truncated {
        /// Byte offset where the whole chunks end.
        offset: usize,
        /// Whole chunks before it.
        chunks: usize,
        /// What is missing.
        what: &'static str,
    },
    /// A chunk's CRC does not match, or its payload does not parse.
    #[error("corrupt recording: chunk {chunk} at byte {offset}: {what}")]
    Corrupt {
        /// Byte offset of the chunk.
        offset: usize,
        /// Its index.
        chunk: usize,
        /// What is wrong.
        what: String,
    },
}

/// Why a chunk's payload does not parse.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(super) enum PayloadError {
    #[error("payload ends at byte {at} of {len} where {n} more were expected")]
    Short { at: usize, len: usize, n: usize },
    #[error("a string is not UTF-8")]
    NotUtf8,
    #[error("option flag {0}")]
    OptionFlag(u8),
    #[error("{n} records cannot fit in the {left} bytes left")]
    Count { n: usize, left: usize },
    #[error("{0} stray bytes after the records")]
    Stray(usize),
    #[error("face {0}")]
    Face(u8),
    #[error("repeat flag {0}")]
    RepeatFlag(u8),
    #[error("unknown knot name {0:?}")]
    UnknownKnot(String),
    #[error("crossing count out of range")]
    Crossings,
    #[error("segment out of range")]
    Segment,
    #[error("event kind {0}")]
    EventKind(u8),
    #[error("instrument change {0}")]
    GraspChange(u8),
    #[error("chunk kind {0} before the header")]
    BeforeHeader(u8),
    #[error("a second header")]
    SecondHeader,
    #[error("step flags {0:#x}")]
    StepFlags(u8),
    #[error("sample flag {0}")]
    SampleFlag(u8),
    #[error("{0} tools, more than the format's {max}", max = crate::sim::MAX_TOOLS)]
    Tools(usize),
    #[error("hand {0}")]
    Hand(u8),
    #[error("unknown chunk kind {0}")]
    UnknownChunk(u8),
    #[error("throw byte {0} (sense 0 or 1, wraps 1 or 2)")]
    Throw(u8),
    #[error("knot event {0}")]
    KnotEvent(u8),
    #[error("knot name code out of range")]
    KnotName,
    #[error("{0} throws, more than the format's {max}", max = crate::topology::throws::MAX_THROWS)]
    Throws(usize),
}
