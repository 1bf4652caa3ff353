//! The binary's subcommands, one file each; `main.rs` holds only the clap definitions and
//! dispatches here. Exit codes: 0 success, 1 solver or output failure, 2 bad input.
//!
//! Shared here: clap's value parsers for times and speeds, and reading a recording.

pub mod assess;
pub mod devices;
pub mod export;
pub mod jitter;
pub mod lab;
pub mod replay;
pub mod run;
pub mod simulate;

use std::process::ExitCode;

use suture::session::format::{DecodeError, HeaderError, Recording, decode, salvage};

/// Read a recording for replay or assessment: exit 2 with `FILE: message` if it is not whole.
fn read_recording(file: &str) -> Result<Recording, ExitCode> {
    let bytes = std::fs::read(file).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    let rec = decode(&bytes).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    rec.header.validate().map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    Ok(rec)
}

/// The scene a recording carries, built as it was recorded; the error (`FILE: its scene:
/// file:line:col …`) is bad input (exit 2).
fn recorded_scene(
    file: &str,
    h: &suture::session::format::Header,
) -> Result<suture::scene::Scene, String> {
    suture::scene::parse(
        &h.scene_path,
        &h.scene_text,
        suture::scene::Overrides::default(),
    )
    .map_err(|e| format!("{file}: its scene: {e}"))
}

/// Warn when a recording was made by another build of suture (its header's build identity,
/// docs/recording-format.md; a recording before format 4 names none: then another crate
/// version): a re-simulation (replay, the frames of `export`, the knot of `assess`) is bit for
/// bit only on the build that recorded it.
fn warn_other_build(file: &str, h: &suture::session::format::Header) {
    use suture::session::format::{BUILD, Provenance};
    match h.provenance() {
        Provenance::ThisBuild => {}
        Provenance::OtherBuild(b) => eprintln!(
            "warning: {file} was recorded by another build ({b}; this is {BUILD}): bit-for-bit replay needs the same build"
        ),
        Provenance::Unknown if h.crate_version != env!("CARGO_PKG_VERSION") => eprintln!(
            "warning: {file} was recorded by suture {}, this is {}: bit-for-bit replay needs the same build",
            h.crate_version,
            env!("CARGO_PKG_VERSION")
        ),
        Provenance::Unknown => {}
    }
}

/// Why a recording could not be read (for `assess`, `export` and the replay viewer).
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    /// Not a recording, or damaged other than truncated (or truncated before any step).
    #[error("{file}: {source}")]
    Damaged { file: String, source: DecodeError },
    /// A header value out of its range.
    #[error("{file}: {source}")]
    Header { file: String, source: HeaderError },
}

/// Read a recording, salvaging a truncated one (with a warning); other damage is an error.
fn read_salvaged(file: &str) -> Result<Recording, ReadError> {
    let bytes = std::fs::read(file).map_err(|source| ReadError::Io {
        file: file.to_string(),
        source,
    })?;
    salvage_bytes(file, &bytes)
}

/// [`read_salvaged`] of a file's bytes already read.
fn salvage_bytes(file: &str, bytes: &[u8]) -> Result<Recording, ReadError> {
    let rec = match salvage(bytes) {
        (r, None) => r,
        (r, Some(e @ DecodeError::Truncated { .. })) if !r.steps.is_empty() => {
            eprintln!("warning: {file}: {e}");
            r
        }
        (_, Some(source)) => {
            return Err(ReadError::Damaged {
                file: file.to_string(),
                source,
            });
        }
    };
    rec.header.validate().map_err(|source| ReadError::Header {
        file: file.to_string(),
        source,
    })?;
    Ok(rec)
}

/// A command-line value out of its range, or not a number (clap prints it after
/// `invalid value 'V' for '--ARG'`).
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// A replay speed outside [1/16, 16].
    #[error("must be in [0.0625, 16], got {0}")]
    Speed(f64),
    /// A simulated time outside [0, 3600] s.
    #[error("must be in [0, 3600] s, got {0}")]
    Time(f64),
    /// A duration outside (0, 3600] s.
    #[error("must be in (0, 3600] s, got {0}")]
    Seconds(f64),
    /// A frame interval outside (0, 60] s (or not finite).
    #[error("must be in (0, 60] s of simulated time, got {0}")]
    FrameInterval(f64),
    /// A trainee id that is empty, too long or has other characters than letters, digits,
    /// `-`, `_`, `.` and `@`.
    #[error("must be 1 to 64 letters, digits, '-', '_', '.' or '@', got \"{0}\"")]
    Trainee(String),
    /// A date not of the form YYYY-MM-DD, or no such day.
    #[error("must be a day YYYY-MM-DD (UTC), got \"{0}\"")]
    Date(String),
    /// Not a number.
    #[error(transparent)]
    Number(#[from] std::num::ParseFloatError),
    /// `--device HAND=SPEC` with a hand other than right or left.
    #[error("unknown hand \"{0}\" in \"{0}=...\": the hands are right and left")]
    Hand(String),
    /// The same hand twice in `--device`.
    #[error("the {0} hand is given two devices")]
    SameHand(&'static str),
    /// An empty `--device` entry, or a bare device beside `HAND=` ones.
    #[error("{0}")]
    DeviceList(String),
}

/// `--device`: one device for the only tool (or the right hand), or `HAND=SPEC` pairs
/// separated by commas, e.g. `right=hid:devices/x.toml,left=mouse`.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceArg {
    /// Each device and the hand it drives (None: a bare device, the only entry).
    pub entries: Vec<(Option<suture::sim::tool::Hand>, String)>,
}

impl std::fmt::Display for DeviceArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .entries
            .iter()
            .map(|(h, s)| match h {
                Some(h) => format!("{}={s}", h.name()),
                None => s.clone(),
            })
            .collect();
        write!(f, "{}", parts.join(","))
    }
}

/// clap value parser for `--device`: a device spec (`mouse`, `hid`, `hid:PROFILE.toml`,
/// `scripted:FILE.csv`), or `HAND=SPEC` pairs separated by commas (hands `right`, `left`,
/// each at most once). A device spec is not checked here (opening it is).
pub fn parse_devices(s: &str) -> Result<DeviceArg, ArgError> {
    use suture::sim::tool::Hand;
    let mut entries: Vec<(Option<Hand>, String)> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(ArgError::DeviceList(format!(
                "an empty device in \"{s}\": give SPEC or HAND=SPEC,HAND=SPEC"
            )));
        }
        // `HAND=SPEC`: an `=` before any `:` (a spec's own `=`, e.g. in a file name after
        // `scripted:`, is not a hand).
        let hand_eq = part
            .find('=')
            .filter(|&i| !part[..i].contains(':') && !part[..i].contains('/'));
        let entry = match hand_eq {
            Some(i) => {
                let (name, spec) = (part[..i].trim(), part[i + 1..].trim());
                let hand = Hand::from_name(name).ok_or_else(|| ArgError::Hand(name.to_string()))?;
                if spec.is_empty() {
                    return Err(ArgError::DeviceList(format!(
                        "no device after \"{name}=\": give {name}=SPEC (mouse, hid, hid:PROFILE.toml or scripted:FILE.csv)"
                    )));
                }
                if entries.iter().any(|(h, _)| *h == Some(hand)) {
                    return Err(ArgError::SameHand(hand.name()));
                }
                (Some(hand), spec.to_string())
            }
            None => (None, part.to_string()),
        };
        entries.push(entry);
    }
    if entries.len() > 1 && entries.iter().any(|(h, _)| h.is_none()) {
        return Err(ArgError::DeviceList(format!(
            "\"{s}\": with several devices, name each one's hand: right=SPEC,left=SPEC"
        )));
    }
    Ok(DeviceArg { entries })
}

/// clap value parser: a replay speed in [1/16, 16].
pub fn parse_speed(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>()? {
        v if (1.0 / 16.0..=16.0).contains(&v) => Ok(v),
        v => Err(ArgError::Speed(v)),
    }
}

/// clap value parser: a simulated time in [0, 3600] s.
pub fn parse_time(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>()? {
        v if (0.0..=3600.0).contains(&v) => Ok(v),
        v => Err(ArgError::Time(v)),
    }
}

/// clap value parser: a duration in (0, 3600] s.
pub fn parse_seconds(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>()? {
        v if v > 0.0 && v <= 3600.0 => Ok(v),
        v => Err(ArgError::Seconds(v)),
    }
}

/// clap value parser: the simulated time between two exported frames, in (0, 60] s.
pub fn parse_frame_interval(s: &str) -> Result<f64, ArgError> {
    match s.parse::<f64>()? {
        v if v > 0.0 && v <= 60.0 => Ok(v),
        v => Err(ArgError::FrameInterval(v)),
    }
}

/// clap value parser: a trainee id, 1 to 64 ASCII letters, digits, `-`, `_`, `.` or `@` (it
/// names the trainee in the session library and in file names of the cohort report).
pub fn parse_trainee(s: &str) -> Result<String, ArgError> {
    let ok = (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c));
    if ok {
        Ok(s.to_string())
    } else {
        Err(ArgError::Trainee(s.to_string()))
    }
}

/// clap value parser: a day `YYYY-MM-DD` (UTC), as seconds since the Unix epoch at its start.
pub fn parse_date(s: &str) -> Result<f64, ArgError> {
    let bad = || ArgError::Date(s.to_string());
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let (y, m, d) = (
        y.parse::<i64>().map_err(|_| bad())?,
        m.parse::<u32>().map_err(|_| bad())?,
        d.parse::<u32>().map_err(|_| bad())?,
    );
    suture::session::library::unix_of_date(y, m, d).ok_or_else(bad)
}
