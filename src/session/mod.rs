//! L3: recordings and exports: the recording format (format), the recorder thread
//! (recorder), replay verification (replay), the live knot analysis' core (knots) and the
//! trajectory `.npz` of `suture simulate`.

pub mod assess;
pub mod export;
pub mod format;
pub mod knots;
pub mod npz;
pub mod recorder;
pub mod replay;
pub mod report;
