//! The cohort dashboard (issue #24): one self-contained HTML page per task, from the session
//! library, that opens from disk with no network and no script: the benchmark (rule, experts,
//! thresholds), who reached proficiency after how many attempts (each attempt linked to its
//! own report), a learning curve per metric (every trainee's value by attempt, the benchmark's
//! passing band shaded, the threshold dashed, the experts' mean dotted) and the cohort's
//! distribution per metric (every attempt of every trainee and every expert session as a dot,
//! the threshold across). Plots are inline SVG written here; the page's `<body>` carries
//! `data-plots` = the number of plots, for tests.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::benchmark::{self, Direction};
use super::library::{self, Benchmark, Filter, Library, LibraryError, Progress};

/// Why a dashboard could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CohortError {
    /// Reading the library.
    #[error(transparent)]
    Library(#[from] LibraryError),
    /// The task has no sessions in the library.
    #[error("task \"{task}\" has no sessions in the library {}", db.display())]
    NoSessions {
        /// The task.
        task: String,
        /// The library.
        db: PathBuf,
    },
    /// Writing the page.
    #[error("{}: {source}", path.display())]
    Io {
        /// The page.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Trainee colours (Okabe–Ito, colour-blind safe).
const COLOURS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
];

/// A trainee's name as shown: the id, or "(no id)" for sessions recorded without one.
fn who(id: &str) -> String {
    if id.is_empty() {
        "(no id)".to_string()
    } else {
        esc(id)
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The file name of a task's dashboard: `cohort-TASK.html`, the task's characters other than
/// letters, digits, `-` and `_` as `_`.
pub fn file_name(task: &str) -> String {
    let t: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("cohort-{t}.html")
}

/// `to` relative to the folder `from` (both made absolute), for a link; else `to` as a
/// `file://` URL.
fn link(from: &Path, to: &str) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to_p) = (abs(from), abs(Path::new(to)));
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to_p.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return format!("file://{}", to_p.display());
    }
    let mut parts: Vec<String> = (common..a.len()).map(|_| "..".to_string()).collect();
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// Plot geometry: data ranges mapped into a `w` × `h` box inside margins.
struct Frame {
    x: (f64, f64),
    y: (f64, f64),
    w: f64,
    h: f64,
}

const LEFT: f64 = 62.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 34.0;
const RIGHT: f64 = 12.0;

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x.0) / (self.x.1 - self.x.0) * self.w
    }
    fn py(&self, y: f64) -> f64 {
        TOP + (self.y.1 - y) / (self.y.1 - self.y.0) * self.h
    }
    /// The SVG's opening, title, frame and y ticks.
    fn open(&self, svg: &mut String, title: &str) {
        let (tw, th) = (LEFT + self.w + RIGHT, TOP + self.h + BOTTOM);
        let _ = write!(
            svg,
            r##"<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{tw}" height="{th}" viewBox="0 0 {tw} {th}" role="img"><title>{t}</title><rect x="0" y="0" width="{tw}" height="{th}" fill="#fff"/><text x="{LEFT}" y="16" font-size="13" font-weight="bold">{t}</text><rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#888"/>"##,
            t = esc(title),
            w = self.w,
            h = self.h
        );
        for i in 0..=4 {
            let v = self.y.0 + (self.y.1 - self.y.0) * i as f64 / 4.0;
            let y = self.py(v);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{tx}" y="{ty:.1}" font-size="10" text-anchor="end">{l}</text>"##,
                x2 = LEFT + self.w,
                tx = LEFT - 4.0,
                ty = y + 3.0,
                l = tick(v)
            );
        }
    }
    /// The benchmark's passing band, its threshold (dashed) and the experts' mean (dotted).
    fn band(&self, svg: &mut String, t: Option<&benchmark::Threshold>) {
        let Some(t) = t else { return };
        let lim = self.py(t.limit.clamp(self.y.0, self.y.1));
        let (y0, y1) = match t.direction {
            Direction::Lower => (lim, TOP + self.h),
            Direction::Higher => (TOP, lim),
        };
        let _ = write!(
            svg,
            r##"<rect class="band" x="{LEFT}" y="{y0:.1}" width="{w}" height="{h:.1}" fill="#2a2" fill-opacity="0.12"><title>passes: {dir} {lim}</title></rect><line x1="{LEFT}" x2="{x2}" y1="{l:.1}" y2="{l:.1}" stroke="#2a2" stroke-dasharray="6 3"/><line x1="{LEFT}" x2="{x2}" y1="{m:.1}" y2="{m:.1}" stroke="#666" stroke-dasharray="2 2"><title>expert mean {mean}</title></line>"##,
            w = self.w,
            h = (y1 - y0).max(0.0),
            dir = if t.direction == Direction::Lower {
                "≤"
            } else {
                "≥"
            },
            lim = tick(t.limit),
            x2 = LEFT + self.w,
            l = self.py(t.limit),
            m = self.py(t.mean.clamp(self.y.0, self.y.1)),
            mean = tick(t.mean)
        );
    }
}

fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// A y range covering the values and the threshold, padded by 8 %.
fn range(vals: impl Iterator<Item = f64>, t: Option<&benchmark::Threshold>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.chain(t.map(|t| t.limit)).chain(t.map(|t| t.mean)) {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        0.08 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1.0)
    };
    (lo - pad, hi + pad)
}

fn learning_curve(metric: &str, progress: &[Progress], t: Option<&benchmark::Threshold>) -> String {
    let attempts = progress.iter().map(|p| p.attempts.len()).max().unwrap_or(1);
    let vals = progress.iter().flat_map(|p| {
        p.attempts
            .iter()
            .filter_map(|a| a.values.get(metric).copied())
    });
    let f = Frame {
        x: (0.5, attempts as f64 + 0.5),
        y: range(vals, t),
        w: 380.0,
        h: 190.0,
    };
    let mut svg = String::new();
    f.open(&mut svg, &format!("{metric} by attempt"));
    f.band(&mut svg, t);
    for k in 1..=attempts {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle">{k}</text>"#,
            f.px(k as f64),
            TOP + f.h + 14.0
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle">attempt</text>"#,
        LEFT + f.w / 2.0,
        TOP + f.h + 28.0
    );
    for (i, p) in progress.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let pts: Vec<(f64, f64, bool)> = p
            .attempts
            .iter()
            .enumerate()
            .filter_map(|(k, a)| {
                let v = a.values.get(metric)?;
                let pass = a.marks.iter().any(|(m, ok)| m == metric && *ok);
                Some((f.px(k as f64 + 1.0), f.py(*v), pass))
            })
            .collect();
        let line: Vec<String> = pts
            .iter()
            .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.8" points="{}"/>"#,
            line.join(" ")
        );
        for (x, y, pass) in pts {
            let _ = write!(
                svg,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" stroke="{c}" fill="{}"><title>{} ({})</title></circle>"##,
                if pass { c } else { "#fff" },
                who(&p.trainee),
                if pass { "pass" } else { "fail" }
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

fn distribution(
    metric: &str,
    progress: &[Progress],
    experts: &[benchmark::Values],
    t: Option<&benchmark::Threshold>,
) -> String {
    let groups: Vec<(String, &str, Vec<f64>)> = std::iter::once((
        "experts".to_string(),
        "#555",
        experts
            .iter()
            .filter_map(|v| v.get(metric).copied())
            .collect(),
    ))
    .chain(progress.iter().enumerate().map(|(i, p)| {
        (
            if p.trainee.is_empty() {
                "(no id)".to_string()
            } else {
                p.trainee.clone()
            },
            COLOURS[i % COLOURS.len()],
            p.attempts
                .iter()
                .filter_map(|a| a.values.get(metric).copied())
                .collect(),
        )
    }))
    .collect();
    let f = Frame {
        x: (0.0, groups.len() as f64),
        y: range(groups.iter().flat_map(|g| g.2.iter().copied()), t),
        w: 380.0,
        h: 190.0,
    };
    let mut svg = String::new();
    f.open(&mut svg, &format!("{metric}: cohort"));
    f.band(&mut svg, t);
    for (i, (name, c, vals)) in groups.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle">{}</text>"#,
            f.px(i as f64 + 0.5),
            TOP + f.h + 14.0,
            esc(name)
        );
        let n = vals.len().max(1) as f64;
        for (k, v) in vals.iter().enumerate() {
            // Spread the dots across the group's column, in attempt order.
            let x = f.px(i as f64 + 0.25 + 0.5 * (k as f64 + 0.5) / n);
            let _ = write!(
                svg,
                r##"<circle cx="{x:.1}" cy="{:.1}" r="3.5" fill="{c}" fill-opacity="0.75"><title>{} #{}: {}</title></circle>"##,
                f.py(*v),
                esc(name),
                k + 1,
                tick(*v)
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Write `OUT/cohort-TASK.html` for a task; returns its path.
pub fn write(lib: &Library, task: &str, out: &Path) -> Result<PathBuf, CohortError> {
    let all = lib.sessions(&Filter {
        task: Some(task.to_string()),
        ..Default::default()
    })?;
    if all.is_empty() {
        return Err(CohortError::NoSessions {
            task: task.to_string(),
            db: lib.path().to_path_buf(),
        });
    }
    let bench = lib.benchmark(task)?;
    let progress = lib.progress(task)?;
    let experts: Vec<&library::Session> = all.iter().filter(|s| s.expert).collect();
    let expert_values = experts
        .iter()
        .map(|s| lib.values(&s.hash))
        .collect::<Result<Vec<_>, _>>()?;
    let page = page(
        task,
        out,
        bench.as_ref(),
        &progress,
        &experts,
        &expert_values,
    );
    let path = out.join(file_name(task));
    std::fs::write(&path, page).map_err(|source| CohortError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

fn page(
    task: &str,
    out: &Path,
    bench: Option<&Benchmark>,
    progress: &[Progress],
    experts: &[&library::Session],
    expert_values: &[benchmark::Values],
) -> String {
    let mut h = String::new();
    let mut plots = 0;
    let mut body = String::new();
    // The benchmark.
    match bench {
        Some(b) => {
            let _ = write!(
                body,
                "<h2>Benchmark</h2><p>From {} expert sessions; rule: {}. Proficient: every metric passes on <b>{}</b> consecutive attempts.</p><table><tr><th>metric</th><th>better</th><th>n</th><th>expert mean</th><th>SD</th><th>threshold</th></tr>",
                b.experts.len(),
                esc(&b.rule),
                b.consecutive
            );
            for t in &b.thresholds {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td></tr>",
                    t.metric,
                    t.direction.name(),
                    t.n,
                    tick(t.mean),
                    tick(t.sd),
                    if t.direction == Direction::Lower { "≤" } else { "≥" },
                    tick(t.limit)
                );
            }
            body.push_str("</table>");
        }
        None => body.push_str(
            "<h2>Benchmark</h2><p>None yet: <code>suture benchmark EXPERT.surec... --db LIBRARY</code>. Nobody can pass until there is one.</p>",
        ),
    }
    // Proficiency.
    let attempts = progress.iter().map(|p| p.attempts.len()).max().unwrap_or(0);
    body.push_str("<h2>Proficiency</h2><table class=\"prof\"><tr><th>trainee</th>");
    for k in 1..=attempts {
        let _ = write!(body, "<th>#{k}</th>");
    }
    body.push_str("<th>proficient</th></tr>");
    for p in progress {
        let _ = write!(body, "<tr><td>{}</td>", who(&p.trainee));
        for k in 0..attempts {
            match p.attempts.get(k) {
                Some(a) => {
                    let pass = a.marks.iter().filter(|m| m.1).count();
                    let _ = write!(
                        body,
                        "<td class=\"{}\"><a href=\"{}\" title=\"{} — {}\">{} {:.1}</a><br><small>{}/{}</small></td>",
                        if a.all_pass { "pass" } else { "fail" },
                        esc(&link(out, &a.session.report)),
                        esc(&a.session.file),
                        library::date_of_unix(a.session.started_unix),
                        if a.all_pass { "✓" } else { "✗" },
                        a.session.score,
                        pass,
                        a.marks.len()
                    );
                }
                None => body.push_str("<td></td>"),
            }
        }
        let _ = write!(
            body,
            "<td class=\"verdict\">{}</td></tr>",
            match p.proficient_at {
                Some(k) => format!("at attempt {k}"),
                None => "not yet".to_string(),
            }
        );
    }
    body.push_str("</table>");
    if !experts.is_empty() {
        body.push_str("<p>Expert sessions: ");
        let links: Vec<String> = experts
            .iter()
            .map(|s| {
                format!(
                    "<a href=\"{}\">{}</a>",
                    esc(&link(out, &s.report)),
                    esc(if s.trainee.is_empty() {
                        &s.file
                    } else {
                        &s.trainee
                    })
                )
            })
            .collect();
        body.push_str(&links.join(", "));
        body.push_str("</p>");
    }
    // Legend.
    body.push_str("<p class=\"legend\">");
    for (i, p) in progress.iter().enumerate() {
        let _ = write!(
            body,
            "<span style=\"color:{}\">● {}</span> ",
            COLOURS[i % COLOURS.len()],
            who(&p.trainee)
        );
    }
    body.push_str("— filled: the metric passes; shaded: the benchmark's passing band; dashed: threshold; dotted: expert mean.</p>");
    // Per metric: learning curve and distribution.
    body.push_str("<h2>Learning curves and the cohort, per metric</h2>");
    for d in benchmark::METRICS {
        let t = bench.and_then(|b| b.thresholds.iter().find(|t| t.metric == d.name));
        let _ = write!(
            body,
            "<div class=\"row\">{}{}</div>",
            learning_curve(d.name, progress, t),
            distribution(d.name, progress, expert_values, t)
        );
        plots += 2;
    }
    let _ = writeln!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Cohort: {t}</title><style>body{{font-family:sans-serif;margin:1.5em;color:#222}}table{{border-collapse:collapse;margin:.5em 0}}td,th{{border:1px solid #ccc;padding:3px 7px;font-size:13px;text-align:center}}td.pass{{background:#e6f4e6}}td.fail{{background:#fbe9e7}}.row{{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:8px}}a{{color:#0645ad}}</style></head><body data-plots=\"{plots}\"><h1>Cohort: {t}</h1>{body}</body></html>",
        t = esc(task)
    );
    h
}
