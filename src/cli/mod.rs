//! The binary's subcommands, one file each; `main.rs` holds only the clap definitions and
//! dispatches here. Exit codes: 0 success, 1 solver or output failure, 2 bad input.
//!
//! Shared here: clap's value parsers for times and speeds, and reading a recording.

pub mod assess;
pub mod devices;
pub mod export;
pub mod jitter;
pub mod replay;
pub mod run;
pub mod simulate;

use std::process::ExitCode;

use suture::session::format::{DecodeError, Recording, decode, salvage};

/// Read a recording for replay or assessment: exit 2 with `FILE: message` if it is not whole.
fn read_recording(file: &str) -> Result<Recording, ExitCode> {
    let bytes = std::fs::read(file).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    decode(&bytes).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })
}

/// Read a recording, salvaging a truncated one (with a warning); other damage is an error.
fn read_salvaged(file: &str) -> Result<Recording, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    match salvage(&bytes) {
        (r, None) => Ok(r),
        (r, Some(e @ DecodeError::Truncated { .. })) if !r.steps.is_empty() => {
            eprintln!("warning: {file}: {e}");
            Ok(r)
        }
        (_, Some(e)) => Err(format!("{file}: {e}")),
    }
}

/// clap value parser: a replay speed in [1/16, 16].
pub fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (1.0 / 16.0..=16.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("must be in [0.0625, 16], got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

/// clap value parser: a simulated time in [0, 3600] s.
pub fn parse_time(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("must be in [0, 3600] s, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

/// clap value parser: a duration in (0, 3600] s.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        Ok(v) => Err(format!("must be in (0, 3600] s, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}
