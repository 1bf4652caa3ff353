//! L3: recordings and exports: the recording format (format), the recorder thread
//! (recorder), replay verification (replay), the live knot analysis' core (knots), the rods'
//! frames and the knot of a re-simulated recording (frames, knot), assessment (assess,
//! report), the session library in SQLite, benchmarks and the cohort dashboard (library,
//! benchmark, cohort), export (export) and the `.npz` writer (npz).

pub mod assess;
pub mod benchmark;
pub mod cohort;
pub mod export;
pub mod format;
pub mod frames;
pub mod knot;
pub mod knots;
pub mod library;
pub mod npz;
pub mod recorder;
pub mod replay;
pub mod report;
