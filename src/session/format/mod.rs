//! The session recording format (issue #7), version 5 (issue #24: the header names the trainee
//! and the task; issue #22: every device and tool of a
//! session, version 2; the live knot analysis' records, version 3; issue #26: the header names
//! the build and the state digest's version, version 4; versions 1 to 4 still decode).
//! Little-endian throughout.
//!
//! ```text
//! file   = MAGIC (8 bytes "\x89SUTREC\n") · format version (u32) · chunk*
//! chunk  = payload length n (u32) · kind (u8) · payload (n bytes) · CRC-32 of kind+payload (u32)
//! kinds  = 1 header (once, first) · 2 steps · 3 device samples · 4 events · 5 digests · 6 end
//!          · 7 knots (version 3: the live knot analysis)
//! ```
//! A batch chunk (2–5, 7) holds a record count (u32) and the records. Strings are a u32 byte
//! length and UTF-8. The recorder writes a chunk of each kind at least every 50 ms, so a crash
//! loses at most the chunks not yet written; [`salvage`] reads every whole chunk before the
//! first damaged one. The end record carries the step count and the final state digest.
//!
//! The decoder never trusts a length: a chunk longer than what is left of the file is a
//! truncation, a record count larger than its payload allows is corruption, and nothing is
//! allocated beyond the file's own size (the fuzz target `fuzz/fuzz_targets/recording.rs`
//! checks that no input panics).
//!
//! The codec is split by role: `records` holds the record types and their byte
//! layouts, `write` the [`Writer`] and [`encode`], `read` the decoder ([`salvage`] of a damaged
//! file, [`decode`] of a whole one), `error` the [`DecodeError`]. Everything is re-exported
//! here, so `session::format::Writer` and the rest keep their paths.

mod error;
mod read;
mod records;
mod write;

pub use error::DecodeError;
pub use read::{decode, salvage};
pub use records::{
    BUILD, DT_RANGE, DigestRecord, End, EventRecord, FORMAT_VERSION, Header, HeaderError,
    KnotEvent, KnotRecord, MAGIC, MAX_CHUNK, Provenance, Recording, SampleRecord, StepRecord,
    ToolHeader, ToolStep,
};
pub use write::{Writer, encode, encode_as};
