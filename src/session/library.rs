//! The session library (issue #24): every assessed session's metrics, events, knot result
//! and marks in one SQLite database (rusqlite, its bundled SQLite: no system library).
//!
//! A session is keyed on its recording's content hash (SHA-256 of the file's bytes), so
//! assessing the same file again updates its rows instead of adding new ones. Every write is
//! one transaction (`BEGIN IMMEDIATE`: the writer takes the lock before reading), the journal
//! is a write-ahead log (WAL: a crash mid-write loses only that transaction; readers do not
//! block the writer) and a connection waits up to [`BUSY_TIMEOUT`] for another process's
//! write, so two `suture assess` runs on one database lose nothing (tests/assess_lab.rs).
//!
//! Tables (docs/assessment-lab.md has the schema in full): `sessions` (one row per recording:
//! who, which task, when, score, knot, the report's path, the metrics as JSON), `metrics`
//! (one row per session and metric), `events` (the recording's suturing events), `marks`
//! (pass/fail per session and benchmarked metric), `benchmarks` (per task and metric: the
//! experts' mean, SD and the threshold), `tasks` (per benchmarked task: the rule, the experts,
//! N of proficiency).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::assess::Metrics;
use super::benchmark::{self, Direction, Threshold, Values};
use super::format::Recording;

/// How long a connection waits for another's write lock before failing.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The schema's version (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY,
    file TEXT NOT NULL,
    trainee TEXT NOT NULL,
    task TEXT NOT NULL,
    started_unix REAL,
    assessed_unix REAL NOT NULL,
    duration_s REAL,
    score REAL,
    complete INTEGER NOT NULL,
    knot TEXT,
    knot_throws TEXT NOT NULL,
    knot_gap_mm REAL,
    knot_analysis TEXT NOT NULL,
    report TEXT NOT NULL,
    expert INTEGER NOT NULL DEFAULT 0,
    metrics_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_trainee ON sessions (trainee, task, started_unix);
CREATE INDEX IF NOT EXISTS sessions_by_task ON sessions (task, started_unix);
CREATE TABLE IF NOT EXISTS metrics (
    hash TEXT NOT NULL REFERENCES sessions (hash) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (hash, metric)
);
CREATE TABLE IF NOT EXISTS events (
    hash TEXT NOT NULL REFERENCES sessions (hash) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    step INTEGER NOT NULL,
    time REAL NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (hash, seq)
);
CREATE TABLE IF NOT EXISTS marks (
    hash TEXT NOT NULL REFERENCES sessions (hash) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL,
    threshold REAL NOT NULL,
    pass INTEGER NOT NULL,
    PRIMARY KEY (hash, metric)
);
CREATE TABLE IF NOT EXISTS tasks (
    task TEXT PRIMARY KEY,
    consecutive INTEGER NOT NULL,
    rule TEXT NOT NULL,
    experts TEXT NOT NULL,
    created_unix REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS benchmarks (
    task TEXT NOT NULL REFERENCES tasks (task) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    direction TEXT NOT NULL,
    n INTEGER NOT NULL,
    mean REAL NOT NULL,
    sd REAL NOT NULL,
    threshold REAL NOT NULL,
    PRIMARY KEY (task, metric)
);
";

/// What went wrong with the library; each names the database file.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// SQLite refused: the file cannot be opened or created, is not a database, is corrupt,
    /// or a write failed.
    #[error("{}: {source}", path.display())]
    Sql {
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A database of a newer schema than this build knows.
    #[error("{}: session library schema version {found}, this build reads up to {SCHEMA_VERSION}", path.display())]
    Schema {
        /// The database.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
    },
    /// A benchmark cannot be built.
    #[error("{}: task \"{task}\": {source}", path.display())]
    Benchmark {
        /// The database.
        path: PathBuf,
        /// The task.
        task: String,
        /// Why.
        source: benchmark::BenchmarkError,
    },
    /// A recording named as an expert is not in the library.
    #[error("{}: {file} is not in the session library (assess it first: suture assess {file} --db {})", path.display(), path.display())]
    NotAssessed {
        /// The database.
        path: PathBuf,
        /// The recording.
        file: String,
    },
    /// The experts' sessions are of several tasks.
    #[error("{}: the expert sessions are of several tasks ({}): benchmark one task at a time", path.display(), tasks.join(", "))]
    Tasks {
        /// The database.
        path: PathBuf,
        /// The tasks found.
        tasks: Vec<String>,
    },
}

/// One session as the library holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    /// SHA-256 of the recording's bytes, lowercase hex.
    pub hash: String,
    /// The recording's path when last assessed.
    pub file: String,
    /// Trainee id (empty: not recorded).
    pub trainee: String,
    /// Task.
    pub task: String,
    /// When the attempt started [s since the Unix epoch] (NaN: the recording's was not a
    /// finite number; so for `duration` and `score`).
    pub started_unix: f64,
    /// When it was last assessed [s since the Unix epoch].
    pub assessed_unix: f64,
    /// Simulated duration [s].
    pub duration: f64,
    /// Score, 0–100.
    pub score: f64,
    /// Whether the recording ended cleanly.
    pub complete: bool,
    /// The knot's name (None: not analysed, no event).
    pub knot: Option<String>,
    /// Its throws in words.
    pub knot_throws: String,
    /// Incision gap under the knot [mm].
    pub knot_gap_mm: Option<f64>,
    /// The HTML report's path.
    pub report: String,
    /// Whether the session is one of its task's benchmark experts.
    pub expert: bool,
}

/// A selection of sessions (None: any).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// This trainee only.
    pub trainee: Option<String>,
    /// This task only.
    pub task: Option<String>,
    /// Started at or after [s since the Unix epoch].
    pub since: Option<f64>,
    /// Started before [s since the Unix epoch].
    pub until: Option<f64>,
}

/// A task's benchmark as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Benchmark {
    /// The task.
    pub task: String,
    /// Proficiency: every metric passes on this many consecutive attempts.
    pub consecutive: u32,
    /// The rule, in words ([`benchmark::RULE`]).
    pub rule: String,
    /// The experts' content hashes.
    pub experts: Vec<String>,
    /// Per metric, in [`benchmark::METRICS`] order.
    pub thresholds: Vec<Threshold>,
}

/// A trainee's attempts at a task, in the order started, and their proficiency.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The trainee.
    pub trainee: String,
    /// Each attempt, with its values and whether every metric passed.
    pub attempts: Vec<Attempt>,
    /// The attempt (1-based) at which the trainee became proficient.
    pub proficient_at: Option<usize>,
}

/// One attempt of a [`Progress`].
#[derive(Clone, Debug)]
pub struct Attempt {
    /// The session.
    pub session: Session,
    /// Its benchmarked values.
    pub values: Values,
    /// Marks per metric: (metric, pass).
    pub marks: Vec<(String, bool)>,
    /// Whether every benchmarked metric passed (false without a benchmark).
    pub all_pass: bool,
}

/// SHA-256 of `bytes`, lowercase hex: a recording's key in the library.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The task of a recording: its header's, else (before format version 5) its scene path's
/// stem.
pub fn task_of(rec: &Recording) -> String {
    if !rec.header.task.is_empty() {
        return rec.header.task.clone();
    }
    Path::new(&rec.header.scene_path)
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// A value SQLite can store (it has no NaN: a value that is not finite is stored as NULL and
/// reads back as NaN).
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The session library at a path.
pub struct Library {
    conn: Connection,
    path: PathBuf,
}

impl Library {
    /// Open the library at `path`, creating it (and its schema) if absent.
    pub fn open(path: &Path) -> Result<Library, LibraryError> {
        let path = path.to_path_buf();
        let sql = |source| LibraryError::Sql {
            path: path.clone(),
            source,
        };
        let conn = Connection::open(&path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // WAL is a property of the file, set once; setting it again is a no-op. It needs the
        // write lock the first time, which busy_timeout waits for.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(sql(rusqlite::Error::InvalidParameterName(format!(
                "journal mode {mode}, expected wal"
            ))));
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(sql)?;
        let mut lib = Library { conn, path };
        lib.schema()?;
        Ok(lib)
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> LibraryError + '_ {
        |source| LibraryError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// Create the tables if absent, in one transaction; refuse a newer schema.
    fn schema(&mut self) -> Result<(), LibraryError> {
        let path = self.path.clone();
        let sql = |source| LibraryError::Sql {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let found: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if found > SCHEMA_VERSION {
            return Err(LibraryError::Schema { path, found });
        }
        tx.execute_batch(SCHEMA).map_err(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
            .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// The database's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Store an assessed session (insert, or update the rows of the same recording), its
    /// metrics, events and, if its task has a benchmark, its marks: one transaction. `now`:
    /// the time of the assessment [s since the Unix epoch] (the caller reads the clock).
    /// Returns whether the recording was already in the library.
    pub fn store(
        &mut self,
        hash: &str,
        file: &str,
        rec: &Recording,
        m: &Metrics,
        report: &str,
        now: f64,
    ) -> Result<bool, LibraryError> {
        let path = self.path.clone();
        let sql = |source| LibraryError::Sql {
            path: path.clone(),
            source,
        };
        let task = task_of(rec);
        let values = benchmark::values(m);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let existed = tx
            .query_row("SELECT 1 FROM sessions WHERE hash = ?1", [hash], |_| Ok(()))
            .optional()
            .map_err(sql)?
            .is_some();
        tx.execute(
            "INSERT INTO sessions (hash, file, trainee, task, started_unix, assessed_unix,
                duration_s, score, complete, knot, knot_throws, knot_gap_mm, knot_analysis,
                report, metrics_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (hash) DO UPDATE SET file = excluded.file, trainee = excluded.trainee,
                task = excluded.task, started_unix = excluded.started_unix,
                assessed_unix = excluded.assessed_unix, duration_s = excluded.duration_s,
                score = excluded.score, complete = excluded.complete, knot = excluded.knot,
                knot_throws = excluded.knot_throws, knot_gap_mm = excluded.knot_gap_mm,
                knot_analysis = excluded.knot_analysis, report = excluded.report,
                metrics_json = excluded.metrics_json",
            params![
                hash,
                file,
                rec.header.trainee,
                task,
                finite(rec.header.started_unix),
                now,
                finite(m.duration),
                finite(m.score),
                m.complete,
                m.knot,
                super::assess::describe_throws(&m.knot_throws),
                m.knot_gap_mm.and_then(finite),
                m.knot_analysis,
                report,
                serde_json::to_string(m).expect("plain data"),
            ],
        )
        .map_err(sql)?;
        for table in ["metrics", "events", "marks"] {
            tx.execute(&format!("DELETE FROM {table} WHERE hash = ?1"), [hash])
                .map_err(sql)?;
        }
        {
            let mut ins = tx
                .prepare("INSERT INTO metrics (hash, metric, value) VALUES (?1, ?2, ?3)")
                .map_err(sql)?;
            for (k, v) in &values {
                ins.execute(params![hash, k, v]).map_err(sql)?;
            }
            let mut ev = tx
                .prepare(
                    "INSERT INTO events (hash, seq, step, time, kind, detail)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(sql)?;
            for (i, e) in rec.events.iter().enumerate() {
                let detail = format!("{:?}", e.event.kind);
                let kind: String = detail.chars().take_while(|c| c.is_alphanumeric()).collect();
                ev.execute(params![
                    hash,
                    i as i64,
                    e.step as i64,
                    e.event.time,
                    kind,
                    detail
                ])
                .map_err(sql)?;
            }
        }
        if let Some(b) = read_benchmark(&tx, &task).map_err(sql)? {
            write_marks(&tx, hash, &values, &b.thresholds).map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(existed)
    }

    /// The sessions a filter selects, by task, trainee and start.
    pub fn sessions(&self, f: &Filter) -> Result<Vec<Session>, LibraryError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT hash, file, trainee, task, started_unix, assessed_unix, duration_s, score,
                    complete, knot, knot_throws, knot_gap_mm, report, expert
                 FROM sessions
                 WHERE (?1 IS NULL OR trainee = ?1) AND (?2 IS NULL OR task = ?2)
                   AND (?3 IS NULL OR started_unix >= ?3) AND (?4 IS NULL OR started_unix < ?4)
                 ORDER BY task, trainee, started_unix, hash",
            )
            .map_err(self.sql())?;
        let rows = st
            .query_map(params![f.trainee, f.task, f.since, f.until], |r| {
                Ok(Session {
                    hash: r.get(0)?,
                    file: r.get(1)?,
                    trainee: r.get(2)?,
                    task: r.get(3)?,
                    started_unix: r.get::<_, Option<f64>>(4)?.unwrap_or(f64::NAN),
                    assessed_unix: r.get(5)?,
                    duration: r.get::<_, Option<f64>>(6)?.unwrap_or(f64::NAN),
                    score: r.get::<_, Option<f64>>(7)?.unwrap_or(f64::NAN),
                    complete: r.get(8)?,
                    knot: r.get(9)?,
                    knot_throws: r.get(10)?,
                    knot_gap_mm: r.get(11)?,
                    report: r.get(12)?,
                    expert: r.get(13)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// A session's benchmarked values.
    pub fn values(&self, hash: &str) -> Result<Values, LibraryError> {
        let mut st = self
            .conn
            .prepare("SELECT metric, value FROM metrics WHERE hash = ?1")
            .map_err(self.sql())?;
        let rows = st
            .query_map([hash], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// A session's marks: (metric, value, threshold, pass), in metric order.
    #[allow(clippy::type_complexity)]
    pub fn marks(&self, hash: &str) -> Result<Vec<(String, Option<f64>, f64, bool)>, LibraryError> {
        let mut st = self
            .conn
            .prepare("SELECT metric, value, threshold, pass FROM marks WHERE hash = ?1")
            .map_err(self.sql())?;
        let rows = st
            .query_map([hash], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(self.sql())?;
        let mut v: Vec<(String, Option<f64>, f64, bool)> =
            rows.collect::<Result<_, _>>().map_err(self.sql())?;
        v.sort_by_key(|m| metric_order(&m.0));
        Ok(v)
    }

    /// The recorded events of a session: (time [s], kind, detail).
    pub fn events(&self, hash: &str) -> Result<Vec<(f64, String, String)>, LibraryError> {
        let mut st = self
            .conn
            .prepare("SELECT time, kind, detail FROM events WHERE hash = ?1 ORDER BY seq")
            .map_err(self.sql())?;
        let rows = st
            .query_map([hash], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// Build a task's benchmark from expert sessions ((file, content hash) each; the file
    /// names it in errors), store it, mark them as the task's experts and re-mark every
    /// session of the task: one transaction. `now`: when [s since the Unix epoch].
    pub fn set_benchmark(
        &mut self,
        experts: &[(String, String)],
        consecutive: u32,
        now: f64,
    ) -> Result<Benchmark, LibraryError> {
        let path = self.path.clone();
        let sql = |source| LibraryError::Sql {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let mut tasks: Vec<String> = Vec::new();
        let mut values = Vec::new();
        // The same recording given twice (two paths, or twice one) counts once.
        let mut seen = std::collections::BTreeSet::new();
        let experts: Vec<&(String, String)> =
            experts.iter().filter(|(_, h)| seen.insert(h)).collect();
        for (file, hash) in experts.iter().copied() {
            let task: Option<String> = tx
                .query_row("SELECT task FROM sessions WHERE hash = ?1", [hash], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(sql)?;
            let Some(task) = task else {
                return Err(LibraryError::NotAssessed {
                    path,
                    file: file.clone(),
                });
            };
            if !tasks.contains(&task) {
                tasks.push(task);
            }
            values.push(read_values(&tx, hash).map_err(sql)?);
        }
        let task = match tasks.as_slice() {
            [t] => t.clone(),
            [] => {
                return Err(LibraryError::Benchmark {
                    path,
                    task: String::new(),
                    source: benchmark::BenchmarkError::TooFew(0),
                });
            }
            _ => return Err(LibraryError::Tasks { path, tasks }),
        };
        let thresholds =
            benchmark::thresholds(&values).map_err(|source| LibraryError::Benchmark {
                path: path.clone(),
                task: task.clone(),
                source,
            })?;
        let hashes: Vec<String> = experts.iter().map(|(_, h)| h.clone()).collect();
        tx.execute("DELETE FROM tasks WHERE task = ?1", [&task])
            .map_err(sql)?;
        tx.execute(
            "INSERT INTO tasks (task, consecutive, rule, experts, created_unix)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                task,
                consecutive,
                benchmark::RULE,
                serde_json::to_string(&hashes).expect("strings"),
                now
            ],
        )
        .map_err(sql)?;
        for t in &thresholds {
            tx.execute(
                "INSERT INTO benchmarks (task, metric, direction, n, mean, sd, threshold)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    task,
                    t.metric,
                    t.direction.name(),
                    t.n as i64,
                    t.mean,
                    t.sd,
                    t.limit
                ],
            )
            .map_err(sql)?;
        }
        tx.execute("UPDATE sessions SET expert = 0 WHERE task = ?1", [&task])
            .map_err(sql)?;
        for h in &hashes {
            tx.execute("UPDATE sessions SET expert = 1 WHERE hash = ?1", [h])
                .map_err(sql)?;
        }
        // Re-mark every session of the task.
        let all: Vec<String> = {
            let mut st = tx
                .prepare("SELECT hash FROM sessions WHERE task = ?1")
                .map_err(sql)?;
            st.query_map([&task], |r| r.get(0))
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?
        };
        for h in &all {
            tx.execute("DELETE FROM marks WHERE hash = ?1", [h])
                .map_err(sql)?;
            let v = read_values(&tx, h).map_err(sql)?;
            write_marks(&tx, h, &v, &thresholds).map_err(sql)?;
        }
        let b = read_benchmark(&tx, &task)
            .map_err(sql)?
            .expect("just written");
        tx.commit().map_err(sql)?;
        Ok(b)
    }

    /// A task's benchmark (None: none built).
    pub fn benchmark(&self, task: &str) -> Result<Option<Benchmark>, LibraryError> {
        read_benchmark(&self.conn, task).map_err(self.sql())
    }

    /// Every trainee's attempts at a task (experts left out), in the order started, with
    /// their marks and proficiency against the task's benchmark (none: nobody passes).
    pub fn progress(&self, task: &str) -> Result<Vec<Progress>, LibraryError> {
        let b = self.benchmark(task)?;
        let n = b
            .as_ref()
            .map_or(benchmark::DEFAULT_CONSECUTIVE, |b| b.consecutive);
        let sessions = self.sessions(&Filter {
            task: Some(task.to_string()),
            ..Default::default()
        })?;
        let mut out: Vec<Progress> = Vec::new();
        for s in sessions.into_iter().filter(|s| !s.expert) {
            let values = self.values(&s.hash)?;
            let marks: Vec<(String, bool)> = self
                .marks(&s.hash)?
                .into_iter()
                .map(|(m, _, _, p)| (m, p))
                .collect();
            let all_pass = b.is_some() && !marks.is_empty() && marks.iter().all(|m| m.1);
            let a = Attempt {
                session: s,
                values,
                marks,
                all_pass,
            };
            match out.iter_mut().find(|p| p.trainee == a.session.trainee) {
                Some(p) => p.attempts.push(a),
                None => out.push(Progress {
                    trainee: a.session.trainee.clone(),
                    attempts: vec![a],
                    proficient_at: None,
                }),
            }
        }
        for p in &mut out {
            let passes: Vec<bool> = p.attempts.iter().map(|a| a.all_pass).collect();
            p.proficient_at = benchmark::proficient_at(&passes, n);
        }
        Ok(out)
    }

    /// The tasks the library holds sessions of.
    pub fn tasks(&self) -> Result<Vec<String>, LibraryError> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT task FROM sessions ORDER BY task")
            .map_err(self.sql())?;
        let rows = st.query_map([], |r| r.get(0)).map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }
}

/// A metric's place in [`benchmark::METRICS`] (unknown ones last).
fn metric_order(name: &str) -> usize {
    benchmark::METRICS
        .iter()
        .position(|d| d.name == name)
        .unwrap_or(usize::MAX)
}

fn read_values(c: &Connection, hash: &str) -> rusqlite::Result<Values> {
    let mut st = c.prepare("SELECT metric, value FROM metrics WHERE hash = ?1")?;
    let rows = st.query_map([hash], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
    })?;
    rows.collect()
}

fn write_marks(
    c: &Connection,
    hash: &str,
    values: &Values,
    thresholds: &[Threshold],
) -> rusqlite::Result<()> {
    let mut ins = c.prepare(
        "INSERT INTO marks (hash, metric, value, threshold, pass) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (t, (metric, value, pass)) in thresholds.iter().zip(benchmark::marks(values, thresholds)) {
        ins.execute(params![hash, metric, value, t.limit, pass])?;
    }
    Ok(())
}

fn read_benchmark(c: &Connection, task: &str) -> rusqlite::Result<Option<Benchmark>> {
    let head: Option<(u32, String, String)> = c
        .query_row(
            "SELECT consecutive, rule, experts FROM tasks WHERE task = ?1",
            [task],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((consecutive, rule, experts)) = head else {
        return Ok(None);
    };
    let mut st = c.prepare(
        "SELECT metric, direction, n, mean, sd, threshold FROM benchmarks WHERE task = ?1",
    )?;
    let mut thresholds: Vec<Threshold> = st
        .query_map([task], |r| {
            let dir: String = r.get(1)?;
            Ok(Threshold {
                metric: r.get(0)?,
                direction: Direction::from_name(&dir).unwrap_or(Direction::Lower),
                n: r.get::<_, i64>(2)? as usize,
                mean: r.get(3)?,
                sd: r.get(4)?,
                limit: r.get(5)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    thresholds.sort_by_key(|t| metric_order(&t.metric));
    Ok(Some(Benchmark {
        task: task.to_string(),
        consecutive,
        rule,
        experts: serde_json::from_str(&experts).unwrap_or_default(),
        thresholds,
    }))
}

/// Seconds since the Unix epoch at 00:00 UTC of a proleptic Gregorian day (Howard Hinnant's
/// days-from-civil algorithm); None for a month or day out of range.
pub fn unix_of_date(y: i64, m: u32, d: u32) -> Option<f64> {
    let days_in = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if !(1..=12).contains(&m) {
        return None;
    }
    let dmax = days_in[m as usize - 1] + u32::from(m == 2 && leap);
    if !(1..=dmax).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) as f64 * 86_400.0)
}

/// `YYYY-MM-DD HH:MM` (UTC) of a time [s since the Unix epoch] (civil-from-days).
pub fn date_of_unix(t: f64) -> String {
    let secs = t.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_with_values_that_are_not_finite_is_stored_and_read_back() {
        let dir = std::env::temp_dir().join(format!("suture-lib-nan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut lib = Library::open(&dir.join("l.sqlite")).unwrap();
        let mut rec = Recording::default();
        rec.header.started_unix = f64::NAN;
        rec.header.scene_path = "scenes/x.toml".into();
        let m = Metrics {
            score: f64::NAN,
            duration: f64::INFINITY,
            path_length: 0.25,
            ..Default::default()
        };
        assert!(!lib.store("h", "f", &rec, &m, "r.html", 1.0).unwrap());
        // Stored again: an update, not a second session.
        assert!(lib.store("h", "f", &rec, &m, "r.html", 2.0).unwrap());
        let s = lib.sessions(&Filter::default()).unwrap();
        assert_eq!(s.len(), 1);
        assert!(s[0].score.is_nan() && s[0].duration.is_nan() && s[0].started_unix.is_nan());
        assert_eq!((s[0].task.as_str(), s[0].assessed_unix), ("x", 2.0));
        let v = lib.values("h").unwrap();
        assert_eq!(v.get("path_length_m"), Some(&0.25));
        assert!(!v.contains_key("score") && !v.contains_key("duration_s"));
        drop(lib);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn dates_round_trip() {
        // 2024-02-29 is day 19782 since the epoch (1 709 164 800 s).
        assert_eq!(unix_of_date(2024, 2, 29), Some(1_709_164_800.0));
        assert_eq!(unix_of_date(1970, 1, 1), Some(0.0));
        assert_eq!(unix_of_date(2023, 2, 29), None);
        assert_eq!(unix_of_date(2023, 13, 1), None);
        assert_eq!(date_of_unix(1_709_164_800.0 + 3_723.0), "2024-02-29 01:02");
        assert_eq!(date_of_unix(0.0), "1970-01-01 00:00");
    }
}
