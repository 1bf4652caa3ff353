//! `suture assess`: metrics and score per recording (JSON), an HTML report with PNG plots, and
//! a CSV summary across the files; files are read and assessed in parallel. Each session is
//! re-simulated (bit for bit, as `suture replay --verify`) for its knot (session::knot).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use suture::session::assess::{self, Metrics};

use super::{ReadError, read_salvaged, recorded_scene, warn_other_build};

/// Why one file could not be assessed.
#[derive(Debug, thiserror::Error)]
enum AssessError {
    /// Reading the recording.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing its JSON.
    #[error("{}: {source}", path.display())]
    Json {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// Writing its HTML report and plots.
    #[error(transparent)]
    Report(#[from] suture::session::report::ReportError),
}

/// `suture assess FILES --out DIR`.
pub fn assess(files: &[String], out: &str) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: --out {out}: {e}");
        return ExitCode::from(2);
    }
    let results = assess_all(files, out);
    let mut csv = format!("{}\n", assess::SUMMARY_HEADER);
    let mut bad = false;
    for (f, r) in files.iter().zip(&results) {
        match r {
            Ok(m) => {
                print_metrics(f, m);
                csv += &assess::summary_row(f, m);
                csv.push('\n');
            }
            Err(e) => {
                eprintln!("error: {e}");
                bad = true;
            }
        }
    }
    let path = Path::new(out).join("summary.csv");
    if let Err(e) = std::fs::write(&path, csv) {
        eprintln!("error: {}: {e}", path.display());
        return ExitCode::from(1);
    }
    if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// Assess the files in parallel, one worker per core, with a progress line on stderr; the
/// results in the order of `files`.
fn assess_all(files: &[String], out: &str) -> Vec<Result<Metrics, AssessError>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..workers.min(files.len()))
            .map(|_| {
                sc.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        mine.push((i, assess_one(f, out)));
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        eprint!("\rassess: {n}/{} files", files.len());
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("assess worker"))
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, r)| r).collect()
    });
    eprintln!();
    results
}

/// Read one recording (salvaging a truncated one), assess it, and write OUT/STEM.json and its
/// HTML report.
fn assess_one(f: &str, out: &str) -> Result<Metrics, AssessError> {
    let rec = read_salvaged(f)?;
    let m = assess::assess_with_knot(&rec, knot(f, &rec));
    let stem = Path::new(f)
        .file_stem()
        .map_or("session".into(), |s| s.to_string_lossy().into_owned());
    let json = serde_json::to_string_pretty(&m).expect("plain data");
    let path = Path::new(out).join(format!("{stem}.json"));
    if let Err(source) = std::fs::write(&path, json) {
        return Err(AssessError::Json { path, source });
    }
    suture::session::report::write(&rec, &m, Path::new(out), &stem).map_err(AssessError::Report)?;
    Ok(m)
}

/// The session's knot: re-simulate the recording and track the suture's knot
/// (session::knot::track); `Err` says why there is none (its scene no longer parses, the
/// replay cannot start or diverges), also printed as a warning: the other metrics, from the
/// recording alone, stand.
fn knot(
    f: &str,
    rec: &suture::session::format::Recording,
) -> Result<(suture::session::knot::KnotReport, String), String> {
    use suture::session::knot;
    let outcome = (|| {
        let sc = recorded_scene(f, &rec.header)?;
        warn_other_build(f, &rec.header);
        let mut world = sc.world;
        let every = knot::steps_between_looks(rec.header.dt);
        let (k, verify) = knot::track(rec, &mut world, every).map_err(|e| format!("{f}: {e}"))?;
        if verify.divergence.is_some() {
            return Err(format!("{f}: {verify}"));
        }
        let how = format!(
            "re-simulated {} steps bit for bit; the suture's knot looked at every {} steps ({:.3} s), {} looks ({} with disagreeing projections)",
            verify.steps,
            every,
            every as f64 * rec.header.dt,
            k.looks,
            k.failed_looks
        );
        Ok((k, how))
    })();
    outcome.map_err(|e| {
        eprintln!("warning: the knot is not analysed: {e}");
        format!("not analysed: {e}")
    })
}

/// The one-line summary of a file's metrics on stdout.
fn print_metrics(f: &str, m: &Metrics) {
    println!(
        "{f}: score {:.1}, {:.1} s, path {:.3} m, entry {} mm, exit {} mm, max tissue force {:.2} N, max tension {:.2} N, knot {}{}{}",
        m.score,
        m.duration,
        m.path_length,
        m.entry_error_mm.map_or("-".into(), |e| format!("{e:.2}")),
        m.exit_error_mm.map_or("-".into(), |e| format!("{e:.2}")),
        m.max_tissue_force,
        m.max_tension,
        m.knot.as_deref().unwrap_or("not analysed"),
        if m.knot_throws.is_empty() {
            String::new()
        } else {
            format!(" ({})", assess::describe_throws(&m.knot_throws))
        },
        if m.complete { "" } else { " (incomplete)" }
    );
}
