//! The skills lab of issue #24, end to end through the binary: the synthetic lab's recordings
//! (examples/synthetic_lab/lab.rs) assessed into the session library, the benchmark from the
//! experts, the marks checked against thresholds computed here from the experts' JSON, each
//! trainee's proficiency attempt, the cohort dashboard opened in headless Chromium; the
//! library under two concurrent `assess` processes and re-assessment; bad input; and a live
//! run recording its trainee and task.
//!
//! `SUTURE_UPDATE_SCREENS=1 cargo test --release --test assess_lab` also writes the
//! dashboard's screenshot to docs/screens/cohort.png (the figure README shows).

mod common;
#[path = "../examples/synthetic_lab/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_suture"))
}

/// A fresh folder under the system's temporary one, removed on drop.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("suture-lab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scene() -> String {
    std::fs::read_to_string(lab::SCENE).unwrap()
}

/// The benchmarked metrics as this test knows them: the name stored, the key of the
/// assessment's JSON, whether higher is better, and the metric's range.
const METRICS: [(&str, &str, bool, f64, f64); 9] = [
    ("score", "score", true, 0.0, 100.0),
    ("duration_s", "duration", false, 0.0, f64::INFINITY),
    ("path_length_m", "path_length", false, 0.0, f64::INFINITY),
    ("economy", "economy_of_motion", true, 0.0, 1.0),
    (
        "normalized_jerk",
        "normalized_jerk",
        false,
        0.0,
        f64::INFINITY,
    ),
    (
        "entry_error_mm",
        "entry_error_mm",
        false,
        0.0,
        f64::INFINITY,
    ),
    ("exit_error_mm", "exit_error_mm", false, 0.0, f64::INFINITY),
    (
        "max_tissue_force_n",
        "max_tissue_force",
        false,
        0.0,
        f64::INFINITY,
    ),
    ("repunctures", "repunctures", false, 0.0, f64::INFINITY),
];

fn json(out: &Path, recording: &Path) -> serde_json::Value {
    let stem = recording.file_stem().unwrap().to_string_lossy();
    serde_json::from_str(&std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap())
        .unwrap()
}

fn count(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn assess(files: &[&Path], out: &Path, db: &Path) -> Command {
    let mut c = bin();
    c.arg("assess")
        .args(files)
        .arg(format!("--out={}", out.display()))
        .arg(format!("--db={}", db.display()))
        .arg("--no-knot");
    c
}

#[test]
fn a_synthetic_lab_through_the_library_the_benchmark_and_the_cohort_dashboard() {
    let tmp = Tmp::new("cohort");
    let files = lab::write_lab(&tmp.0, &scene()).unwrap();
    assert_eq!(files.len(), 5 + 3 * 5);
    let out = tmp.0.join("assessment");
    let db = out.join("library.sqlite");
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    ok(&mut assess(&paths, &out, &db));
    let experts: Vec<&Path> = files
        .iter()
        .filter(|f| f.expert)
        .map(|f| f.path.as_path())
        .collect();
    let said = ok(bin()
        .arg("benchmark")
        .args(&experts)
        .arg(format!("--db={}", db.display())));
    assert!(said.contains("from 5 expert sessions"), "{said}");

    // The rows: one session per recording, with the header's trainee, task and start, its
    // metrics and every event of the recording.
    let c = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sessions"), 20);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM sessions WHERE expert = 1"),
        5
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM metrics"), 20 * 9);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM marks"), 20 * 9);
    let mut events = 0;
    for f in &files {
        let rec = suture::session::format::decode(&std::fs::read(&f.path).unwrap()).unwrap();
        events += rec.events.len() as i64;
        let (trainee, task, started, file): (String, String, f64, String) = c
            .query_row(
                "SELECT trainee, task, started_unix, file FROM sessions WHERE hash = ?1",
                [suture::session::library::content_hash(
                    &std::fs::read(&f.path).unwrap(),
                )],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (trainee.as_str(), task.as_str(), file.as_str()),
            (
                f.trainee.as_str(),
                "interrupted stitch",
                f.path.to_str().unwrap()
            )
        );
        assert_eq!(started, rec.header.started_unix);
    }
    assert_eq!(count(&c, "SELECT COUNT(*) FROM events"), events);

    // The thresholds by hand: mean and sample SD of the experts' JSON values, ± 2 SD against
    // the direction, clipped to the range.
    let mut limits = BTreeMap::new();
    for (name, key, higher, lo, hi) in METRICS {
        let v: Vec<f64> = experts
            .iter()
            .map(|p| json(&out, p)[key].as_f64().unwrap())
            .collect();
        let mean = v.iter().sum::<f64>() / 5.0;
        let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 4.0).sqrt();
        let limit = if higher {
            (mean - 2.0 * sd).max(lo)
        } else {
            (mean + 2.0 * sd).min(hi)
        };
        let (m, s, l): (f64, f64, f64) = c
            .query_row(
                "SELECT mean, sd, threshold FROM benchmarks WHERE task = 'interrupted stitch' AND metric = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        assert!(
            close(m, mean) && close(s, sd) && close(l, limit),
            "{name}: stored {m} {s} {l}, by hand {mean} {sd} {limit}"
        );
        limits.insert(name, (limit, higher, key));
    }
    // The marks of every trainee session against the hand-computed thresholds, and each
    // trainee's proficiency: the first attempt that completes 2 all-pass attempts in a row.
    let mut proficient = BTreeMap::new();
    let mut fails = 0;
    for (who, _) in lab::TRAINEES {
        let mut run = 0;
        let mut at = None;
        for f in files.iter().filter(|f| f.trainee == who) {
            let j = json(&out, &f.path);
            let hash = suture::session::library::content_hash(&std::fs::read(&f.path).unwrap());
            let mut all = true;
            for (name, (limit, higher, key)) in &limits {
                let v = j[*key].as_f64().unwrap();
                let pass = if *higher { v >= *limit } else { v <= *limit };
                let stored: bool = c
                    .query_row(
                        "SELECT pass FROM marks WHERE hash = ?1 AND metric = ?2",
                        [&hash, &name.to_string()],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(stored, pass, "{} {name}: {v} vs {limit}", f.path.display());
                all &= pass;
                fails += usize::from(!pass);
            }
            run = if all { run + 1 } else { 0 };
            if run == 2 && at.is_none() {
                at = Some(f.attempt);
            }
        }
        proficient.insert(who, at);
    }
    assert!(fails > 20, "the poor attempts fail metrics: {fails}");
    // As designed in lab.rs: a passes from attempt 3 on, b passes 2, 4 and 5, c never.
    assert_eq!(
        proficient.into_iter().collect::<Vec<_>>(),
        [
            ("trainee-a", Some(4)),
            ("trainee-b", Some(5)),
            ("trainee-c", None)
        ]
    );
    let said = ok(bin()
        .args(["sessions", "--trainee=trainee-a"])
        .arg(format!("--db={}", db.display())));
    assert_eq!(
        said.lines().filter(|l| l.contains("\ttrainee-a\t")).count(),
        5
    );
    assert!(
        said.contains("trainee-a: 5 attempts, proficient at attempt 4"),
        "{said}"
    );
    let said = ok(bin()
        .args(["sessions", "--trainee=trainee-b"])
        .arg(format!("--db={}", db.display())));
    assert!(said.contains("proficient at attempt 5"), "{said}");
    // By date: day 3 of the lab (2026-11-05) holds attempt 3 of each trainee.
    let said = ok(bin()
        .args(["sessions", "--since=2026-11-05", "--until=2026-11-05"])
        .arg(format!("--db={}", db.display())));
    let rows: Vec<&str> = said.lines().filter(|l| l.starts_with("2026-")).collect();
    assert_eq!(rows.len(), 3, "{said}");
    assert!(rows.iter().all(|r| r.contains("-3.surec")), "{said}");

    // Re-assessing a recording updates its rows: still 20 sessions, 180 metrics.
    let again = files[7].path.as_path();
    assert_eq!(
        (files[7].trainee.as_str(), files[7].attempt),
        ("trainee-a", 3)
    );
    let said = ok(&mut assess(&[again], &out, &db));
    assert!(
        said.contains(
            "benchmark: 9/9 metrics pass; trainee-a attempt 3 of 5: proficient at attempt 4"
        ),
        "{said}"
    );
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sessions"), 20);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM metrics"), 180);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM marks"), 180);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM events"), events);

    // The dashboard.
    let said = ok(bin().arg("cohort").arg(format!("--db={}", db.display())));
    let page = out.join("cohort-interrupted_stitch.html");
    assert!(said.contains(page.to_str().unwrap()), "{said}");
    let html = std::fs::read_to_string(&page).unwrap();
    // Each attempt links to its own report, which exists.
    let hrefs: Vec<&str> = html
        .split("href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(hrefs.len(), 20, "15 attempts and 5 experts");
    for h in &hrefs {
        assert!(out.join(h).exists(), "{h}");
    }
    // Self-contained: no script, and no address but the SVG namespace.
    assert!(!html.contains("<script"));
    assert_eq!(
        html.matches("http").count(),
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    let dom = chromium(&tmp.0, &page, &["--dump-dom".to_string()]);
    assert!(dom.contains("data-plots=\"18\""), "{dom}");
    assert_eq!(dom.matches("<svg").count(), 18);
    assert_eq!(
        dom.matches("class=\"band\"").count(),
        18,
        "every plot has its band"
    );
    assert!(dom.contains("at attempt 4") && dom.contains("at attempt 5"));
    let shot = tmp.0.join("cohort.png");
    chromium(
        &tmp.0,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,1500".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    let (w, h, px) = read_png(&shot);
    assert_eq!((w, h), (1100, 1500));
    let not_white = px.iter().filter(|p| p.iter().any(|c| *c < 240)).count();
    let colours: std::collections::BTreeSet<_> = px.iter().collect();
    println!(
        "screenshot: {:.1} % not white, {} colours",
        100.0 * not_white as f64 / px.len() as f64,
        colours.len()
    );
    assert!(not_white * 20 > px.len(), "blank screenshot");
    assert!(colours.len() > 50);
    if std::env::var_os("SUTURE_UPDATE_SCREENS").is_some() {
        std::fs::copy(&shot, "docs/screens/cohort.png").unwrap();
    }
}

/// Open a page in headless Chromium; no console error. Returns stdout.
fn chromium(dir: &Path, page: &Path, extra: &[String]) -> String {
    common::chromium(dir, page, extra)
}

/// Width, height and RGB pixels of a PNG.
fn read_png(p: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let px = buf[..info.buffer_size()]
        .chunks(ch)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

/// Two `suture assess` processes writing one library at once, their files overlapping: every
/// session, metric and event is there once. Then one killed mid-run loses nothing committed.
#[test]
fn two_assess_processes_writing_one_library_lose_nothing() {
    let tmp = Tmp::new("concurrent");
    let files = lab::write_lab(&tmp.0, &scene()).unwrap();
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let db = tmp.0.join("library.sqlite");
    let start = std::time::Instant::now();
    let spawn = |files: &[&Path], out: &str| {
        assess(files, &tmp.0.join(out), &db)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn(&paths[..12], "a"), spawn(&paths[8..], "b"));
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    println!("two processes: {:.2} s", start.elapsed().as_secs_f64());
    let c = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sessions"), 20);
    assert_eq!(count(&c, "SELECT COUNT(DISTINCT file) FROM sessions"), 20);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM metrics"), 20 * 9);
    let events: i64 = files
        .iter()
        .map(|f| {
            suture::session::format::decode(&std::fs::read(&f.path).unwrap())
                .unwrap()
                .events
                .len() as i64
        })
        .sum();
    assert_eq!(count(&c, "SELECT COUNT(*) FROM events"), events);
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");

    // Killed mid-run (SIGKILL once a first session is in): the library is whole, every
    // session in it has all its metrics (a session is one transaction), and assessing again
    // completes it.
    let db = tmp.0.join("killed.sqlite");
    let mut p = assess(&paths, &tmp.0.join("k"), &db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = 0;
    while seen == 0 && p.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(5));
        if let Ok(c) = rusqlite::Connection::open(&db) {
            seen = c
                .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
                .unwrap_or(0);
        }
    }
    let killed = p.try_wait().unwrap().is_none();
    let _ = p.kill();
    let _ = p.wait();
    let c = rusqlite::Connection::open(&db).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let n = count(&c, "SELECT COUNT(*) FROM sessions");
    println!("killed mid-run: {killed}, {n} sessions committed before");
    assert_eq!(count(&c, "SELECT COUNT(*) FROM metrics"), 9 * n);
    drop(c);
    ok(&mut assess(&paths, &tmp.0.join("k"), &db));
    let c = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&c, "SELECT COUNT(*) FROM sessions"), 20);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM metrics"), 180);
}

/// Bad input: a clear error naming the file or the argument, exit 2, no panic.
#[test]
fn bad_libraries_experts_and_arguments_exit_2() {
    let tmp = Tmp::new("bad");
    let files = lab::write_lab(&tmp.0, &scene()).unwrap();
    let one = files[0].path.as_path();
    let out = tmp.0.join("out");
    let expect2 = |cmd: &mut Command, needle: &str| {
        let o = cmd.output().unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains(needle), "{needle}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    };
    // A library in a folder that does not exist.
    let nowhere = tmp.0.join("no/such/folder/library.sqlite");
    expect2(
        &mut assess(&[one], &out, &nowhere),
        nowhere.to_str().unwrap(),
    );
    // A file that is not a database.
    let junk = tmp.0.join("junk.sqlite");
    std::fs::write(&junk, "not a database ".repeat(200)).unwrap();
    expect2(&mut assess(&[one], &out, &junk), "junk.sqlite");
    expect2(
        bin()
            .arg("sessions")
            .arg(format!("--db={}", junk.display())),
        "not a database",
    );
    // Experts not assessed, too few, or missing.
    let db = tmp.0.join("library.sqlite");
    ok(&mut assess(&[one], &out, &db));
    let db_arg = format!("--db={}", db.display());
    expect2(
        bin()
            .arg("benchmark")
            .arg(&files[1].path)
            .arg(&files[2].path)
            .arg(&db_arg),
        "is not in the session library",
    );
    expect2(
        bin().arg("benchmark").arg(one).arg(&db_arg),
        "at least 2 expert sessions",
    );
    expect2(
        bin()
            .arg("benchmark")
            .arg(tmp.0.join("missing.surec"))
            .arg(one)
            .arg(&db_arg),
        "missing.surec",
    );
    expect2(
        bin().args(["cohort", "--task=no such task"]).arg(&db_arg),
        "no such task",
    );
    // Arguments.
    expect2(
        bin().args(["sessions", "--since=2026-13-01"]).arg(&db_arg),
        "YYYY-MM-DD",
    );
    expect2(
        bin()
            .args(["benchmark", "--consecutive=0"])
            .arg(one)
            .arg(&db_arg),
        "consecutive",
    );
    expect2(
        bin().args(["run", "--headless", "--duration=1", "--trainee=two words"]),
        "--trainee",
    );
}

/// A live run records the trainee given and the scene's task (format 5).
#[test]
fn a_run_records_its_trainee_and_task() {
    let tmp = Tmp::new("run");
    let file = tmp.0.join("s.surec");
    ok(bin()
        .args(["run", lab::SCENE, "--headless", "--duration=0.3"])
        .arg("--device=scripted:docs/screens/stitch_drive.csv")
        .arg("--trainee=t-01")
        .arg(format!("--record={}", file.display())));
    let rec = suture::session::format::decode(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(rec.header.trainee, "t-01");
    assert_eq!(rec.header.task, "interrupted stitch");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((now - rec.header.started_unix).abs() < 120.0);
}
