//! `suture assess`: metrics and score per recording (JSON), an HTML report with PNG plots, and
//! a CSV summary across the files; files are read and assessed in parallel. Each session is
//! re-simulated (bit for bit, as `suture replay --verify`) for its knot (session::knot).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use suture::session::assess::{self, Metrics};
use suture::session::library::{Library, LibraryError};

use super::{ReadError, recorded_scene, salvage_bytes, warn_other_build};

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
    /// Storing it in the session library.
    #[error(transparent)]
    Library(#[from] LibraryError),
}

/// What `suture assess` does besides the metrics.
pub struct AssessArgs<'a> {
    /// The recordings.
    pub files: &'a [String],
    /// The output folder (JSON, HTML reports, summary.csv).
    pub out: &'a str,
    /// The session library (None: OUT/library.sqlite).
    pub db: Option<&'a str>,
    /// Do not re-simulate for the knot.
    pub no_knot: bool,
}

/// The library's path when `--db` is not given: beside the reports.
pub fn default_db(out: &str) -> String {
    Path::new(out)
        .join("library.sqlite")
        .to_string_lossy()
        .into_owned()
}

/// `suture assess FILES --out DIR [--db PATH] [--no-knot]`.
pub fn assess(a: AssessArgs) -> ExitCode {
    let (files, out) = (a.files, a.out);
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: --out {out}: {e}");
        return ExitCode::from(2);
    }
    let db = a.db.map_or_else(|| default_db(out), str::to_string);
    // Open (or create) the library once before assessing: a bad path or a file that is not a
    // library is bad input, found before any work.
    if let Err(e) = Library::open(Path::new(&db)) {
        eprintln!("error: --db {e}");
        return ExitCode::from(2);
    }
    let results = assess_all(files, out, &db, a.no_knot);
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

/// Assess the files in parallel, one worker per core (each with its own connection to the
/// library), with a progress bar on stderr when it is a terminal; the results in the order of
/// `files`.
fn assess_all(
    files: &[String],
    out: &str,
    db: &str,
    no_knot: bool,
) -> Vec<Result<Metrics, AssessError>> {
    use std::io::IsTerminal;
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(files.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("assess {bar:30} {pos}/{len} files {elapsed}")
                .expect("a valid template"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let results = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..workers.min(files.len()))
            .map(|_| {
                sc.spawn(|| {
                    let mut mine = Vec::new();
                    let mut lib = None;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        mine.push((i, assess_one(f, out, db, &mut lib, no_knot)));
                        bar.inc(1);
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
    bar.finish_and_clear();
    results
}

/// Read one recording (salvaging a truncated one), assess it, write OUT/STEM.json and its
/// HTML report, and store it in the library (`lib`: this worker's connection, opened on first
/// use), keyed on the file's content hash.
fn assess_one(
    f: &str,
    out: &str,
    db: &str,
    lib: &mut Option<Library>,
    no_knot: bool,
) -> Result<Metrics, AssessError> {
    let bytes = std::fs::read(f).map_err(|source| ReadError::Io {
        file: f.to_string(),
        source,
    })?;
    let rec = salvage_bytes(f, &bytes)?;
    let knot = if no_knot {
        Err("not analysed (--no-knot)".to_string())
    } else {
        knot(f, &rec)
    };
    let m = assess::assess_with_knot(&rec, knot);
    let stem = Path::new(f)
        .file_stem()
        .map_or("session".into(), |s| s.to_string_lossy().into_owned());
    let json = serde_json::to_string_pretty(&m).expect("plain data");
    let path = Path::new(out).join(format!("{stem}.json"));
    if let Err(source) = std::fs::write(&path, json) {
        return Err(AssessError::Json { path, source });
    }
    suture::session::report::write(&rec, &m, Path::new(out), &stem).map_err(AssessError::Report)?;
    let report = Path::new(out).join(format!("{stem}.html"));
    let report = std::fs::canonicalize(&report).unwrap_or(report);
    if lib.is_none() {
        *lib = Some(Library::open(Path::new(db))?);
    }
    let lib = lib.as_mut().expect("opened");
    let hash = suture::session::library::content_hash(&bytes);
    drop(bytes);
    lib.store(
        &hash,
        f,
        &rec,
        &m,
        &report.to_string_lossy(),
        super::lab::now_unix(),
    )?;
    let task = suture::session::library::task_of(&rec);
    super::lab::print_marks(f, lib, &hash, &task, &rec.header.trainee);
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
        "{f}: score {:.1}, {:.1} s, path {:.3} m, entry {} mm, exit {} mm, max tissue force {:.2} N, max tension {:.2} N, knot {}{}{}{}",
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
        m.knot_security.map_or(String::new(), |r| format!(
            ", security: {}",
            assess::describe_security(&r)
        )),
        if m.complete { "" } else { " (incomplete)" }
    );
    if m.tools.len() > 1 {
        let each: Vec<String> = m
            .tools
            .iter()
            .map(|t| {
                format!(
                    "{} hand path {:.3} m, idle {:.1} s",
                    t.hand, t.path_length, t.idle_time
                )
            })
            .collect();
        println!("{f}: {}", each.join("; "));
    }
}
