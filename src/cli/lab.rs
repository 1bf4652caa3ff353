//! The skills lab (issue #24): `suture sessions` (query the session library), `suture
//! benchmark` (thresholds from expert recordings), `suture cohort` (a dashboard per task), and
//! the marks `suture assess` prints after storing a session.

use std::path::Path;
use std::process::ExitCode;

use suture::session::benchmark::Direction;
use suture::session::library::{self, Filter, Library};

/// The wall clock [s since the Unix epoch].
pub fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn open(db: &str) -> Result<Library, ExitCode> {
    Library::open(Path::new(db)).map_err(|e| {
        eprintln!("error: --db {e}");
        ExitCode::from(2)
    })
}

/// After `assess` stored a session: its marks against its task's benchmark and the trainee's
/// proficiency, one line on stdout (nothing without a benchmark).
pub fn print_marks(f: &str, lib: &Library, hash: &str, task: &str, trainee: &str) {
    let Ok(marks) = lib.marks(hash) else { return };
    if marks.is_empty() {
        return;
    }
    // Where this session stands in its trainee's attempts (an expert's is none of them).
    let standing = lib
        .progress(task)
        .ok()
        .and_then(|all| all.into_iter().find(|p| p.trainee == trainee))
        .and_then(|p| {
            let k = p.attempts.iter().position(|a| a.session.hash == hash)? + 1;
            let n = lib.benchmark(task).ok()??.consecutive;
            Some(format!(
                "; {} attempt {k} of {}: {}",
                if trainee.is_empty() {
                    "(no trainee id)"
                } else {
                    trainee
                },
                p.attempts.len(),
                match p.proficient_at {
                    Some(at) => format!("proficient at attempt {at}"),
                    None => format!("not yet proficient ({n} all-pass attempts in a row needed)"),
                }
            ))
        })
        .unwrap_or_default();
    let failed: Vec<String> = marks
        .iter()
        .filter(|m| !m.3)
        .map(|(name, v, t, _)| match v {
            Some(v) => format!("{name} {v:.4} (threshold {t:.4})"),
            None => format!("{name} missing"),
        })
        .collect();
    let passed = marks.len() - failed.len();
    println!(
        "{f}: benchmark: {passed}/{} metrics pass{}{standing}",
        marks.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("; fail: {}", failed.join(", "))
        }
    );
}

/// `suture sessions --db PATH [--trainee ID] [--task T] [--since D] [--until D]`: one
/// tab-separated line per session (started UTC, trainee, task, attempt, score, marks,
/// proficient, file, hash), then each trainee's proficiency per task.
pub fn sessions(db: &str, f: Filter) -> ExitCode {
    let lib = match open(db) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let run = || -> Result<(), library::LibraryError> {
        let rows = lib.sessions(&f)?;
        println!("started_utc\ttrainee\ttask\tscore\tmarks\trole\tfile\thash");
        for s in &rows {
            let marks = lib.marks(&s.hash)?;
            let pass = marks.iter().filter(|m| m.3).count();
            println!(
                "{}\t{}\t{}\t{:.1}\t{}\t{}\t{}\t{}",
                library::date_of_unix(s.started_unix),
                if s.trainee.is_empty() {
                    "-"
                } else {
                    &s.trainee
                },
                s.task,
                s.score,
                if marks.is_empty() {
                    "-".to_string()
                } else {
                    format!("{pass}/{}", marks.len())
                },
                if s.expert { "expert" } else { "trainee" },
                s.file,
                &s.hash[..12.min(s.hash.len())]
            );
        }
        let mut tasks: Vec<&str> = rows.iter().map(|s| s.task.as_str()).collect();
        tasks.dedup();
        for task in tasks {
            let Some(b) = lib.benchmark(task)? else {
                println!("# {task}: no benchmark (suture benchmark EXPERT.surec... --db {db})");
                continue;
            };
            for p in lib.progress(task)? {
                if f.trainee.as_ref().is_some_and(|t| *t != p.trainee) {
                    continue;
                }
                println!(
                    "# {task}: {}: {} attempts, {}",
                    p.trainee,
                    p.attempts.len(),
                    match p.proficient_at {
                        Some(k) => format!(
                            "proficient at attempt {k} (every metric passed on {} in a row)",
                            b.consecutive
                        ),
                        None => format!("not yet proficient ({} in a row needed)", b.consecutive),
                    }
                );
            }
        }
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `suture benchmark EXPERT.surec... --db PATH [--consecutive N]`.
pub fn benchmark(files: &[String], db: &str, consecutive: u32) -> ExitCode {
    let mut lib = match open(db) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let mut experts = Vec::new();
    for f in files {
        match std::fs::read(f) {
            Ok(bytes) => experts.push((f.clone(), library::content_hash(&bytes))),
            Err(e) => {
                eprintln!("error: {f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let b = match lib.set_benchmark(&experts, consecutive, now_unix()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "benchmark of task \"{}\" from {} expert sessions ({}); proficient: every metric passes on {} consecutive attempts",
        b.task,
        b.experts.len(),
        b.rule,
        b.consecutive
    );
    println!("metric\tbetter\tn\tmean\tsd\tthreshold");
    for t in &b.thresholds {
        println!(
            "{}\t{}\t{}\t{:.6}\t{:.6}\t{} {:.6}",
            t.metric,
            t.direction.name(),
            t.n,
            t.mean,
            t.sd,
            match t.direction {
                Direction::Lower => "<=",
                Direction::Higher => ">=",
            },
            t.limit
        );
    }
    ExitCode::SUCCESS
}

/// `suture cohort --db PATH [--task T] [--out DIR]`.
pub fn cohort(db: &str, task: Option<&str>, out: Option<&str>) -> ExitCode {
    let lib = match open(db) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let out = out.map_or_else(
        || {
            Path::new(db)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf()
        },
        std::path::PathBuf::from,
    );
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("error: --out {}: {e}", out.display());
        return ExitCode::from(2);
    }
    let tasks = match task {
        Some(t) => vec![t.to_string()],
        None => match lib.tasks() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    if tasks.is_empty() {
        eprintln!("error: --db {db}: the library holds no sessions");
        return ExitCode::from(2);
    }
    for t in &tasks {
        match suture::session::cohort::write(&lib, t, &out) {
            Ok(path) => println!("{t}: {}", path.display()),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(
                    if matches!(e, suture::session::cohort::CohortError::Io { .. }) {
                        1
                    } else {
                        2
                    },
                );
            }
        }
    }
    ExitCode::SUCCESS
}
