//! The assessment report of one session: PNG plots (plotters into a pixel buffer, encoded by
//! png; text in DejaVu Sans, registered from assets/ so no system fonts are needed) and a
//! self-contained HTML page that shows the metrics, the phases, the events and the plots.
//!
//! Plots: force over time (the coupling force on the instrument and the force on the tissue),
//! suture tension over time, the instrument tip's path in two projections (top: x–z, side:
//! x–y) with punctures and exits marked, and the entry/exit error against a 1 mm line.

use super::assess::Metrics;
use super::format::Recording;
use crate::sim::suturing::EventKind;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is shipped with the crate and known to parse (tested by every plot).
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Drawing or encoding a plot failed (plotters' and png's errors, as they print).
    #[error("plot: {0}")]
    Plot(String),
}

type Plot = Result<(), ReportError>;

fn err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Plot(format!("{e:?}"))
}

/// Draw into an RGB buffer of `w`×`h` with `draw`, and write it as a PNG to `path`.
fn png(
    path: &Path,
    (w, h): (u32, u32),
    draw: impl FnOnce(DrawingArea<BitMapBackend, plotters::coord::Shift>) -> Plot,
) -> Plot {
    register_font();
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(root.clone())?;
        root.present().map_err(err)?;
    }
    let f = std::fs::File::create(path).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut enc = ::png::Encoder::new(std::io::BufWriter::new(f), w, h);
    enc.set_color(::png::ColorType::Rgb);
    enc.set_depth(::png::BitDepth::Eight);
    let mut wr = enc.write_header().map_err(err)?;
    wr.write_image_data(&buf).map_err(err)?;
    wr.finish().map_err(err)
}

/// At most `n` points of a series: the largest value of each bucket (peaks survive).
fn decimate(t: &[f64], y: &[f64], n: usize) -> Vec<(f64, f64)> {
    let per = t.len().div_ceil(n.max(1)).max(1);
    t.chunks(per)
        .zip(y.chunks(per))
        .map(|(tc, yc)| {
            let (i, v) = yc
                .iter()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |a, (i, v)| if *v > a.1 { (i, *v) } else { a },
                );
            (tc[i], v)
        })
        .collect()
}

fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad, hi + pad)
}

/// Time series `series` (name, colour, values per step) against the step times.
fn time_plot(
    path: &Path,
    rec: &Recording,
    title: &str,
    y_desc: &str,
    series: &[(&str, RGBColor, Vec<f64>)],
) -> Plot {
    let t: Vec<f64> = rec.steps.iter().map(|s| s.time).collect();
    let data: Vec<_> = series
        .iter()
        .map(|(n, c, y)| (*n, *c, decimate(&t, y, 2000)))
        .collect();
    let (_, t1) = range(t.iter().copied());
    let (_, y1) = range(data.iter().flat_map(|d| d.2.iter().map(|p| p.1)));
    png(path, (900, 340), |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t1.max(1e-3), 0.0..y1.max(1e-3))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time [s]")
            .y_desc(y_desc)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        for (name, colour, pts) in data {
            chart
                .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        }
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)
    })
}

/// Which coordinate of an (x, y, z) point a panel plots upward.
type Pick = fn(&(f64, f64, f64)) -> f64;

/// The tip path in mm, top (x, z) and side (x, y) views, with punctures (red) and exits
/// (blue) marked at their rest positions.
fn path_plot(path: &Path, rec: &Recording) -> Plot {
    let mm: Vec<(f64, f64, f64)> = rec
        .steps
        .iter()
        .step_by((rec.steps.len() / 4000).max(1))
        .map(|s| {
            let p = s.tip_position * 1e3;
            (p.x, p.y, p.z)
        })
        .collect();
    let marks: Vec<((f64, f64, f64), bool)> = rec
        .events
        .iter()
        .filter_map(|e| match &e.event.kind {
            EventKind::Puncture { position, .. } => Some((*position * 1e3, true)),
            EventKind::Exit { position, .. } => Some((*position * 1e3, false)),
            _ => None,
        })
        .map(|(p, entry)| ((p.x, p.y, p.z), entry))
        .collect();
    let all = || mm.iter().copied().chain(marks.iter().map(|m| m.0));
    let (x0, x1) = range(all().map(|p| p.0));
    let (y0, y1) = range(all().map(|p| p.1));
    let (z0, z1) = range(all().map(|p| p.2));
    png(path, (900, 420), |root| {
        let panels = root.split_evenly((1, 2));
        for (k, panel) in panels.iter().enumerate() {
            let (title, v0, v1, pick): (&str, f64, f64, Pick) = if k == 0 {
                ("tip path, top view", z0, z1, |p| p.2)
            } else {
                ("tip path, side view", y0, y1, |p| p.1)
            };
            let mut chart = ChartBuilder::on(panel)
                .caption(title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d(x0..x1, v0..v1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("x [mm]")
                .y_desc(if k == 0 { "z [mm]" } else { "y [mm]" })
                .label_style(("sans-serif", 13))
                .draw()
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    mm.iter().map(|p| (p.0, pick(p))),
                    RGBColor(40, 40, 40).stroke_width(2),
                ))
                .map_err(err)?;
            chart
                .draw_series(marks.iter().map(|(p, entry)| {
                    Circle::new(
                        (p.0, pick(p)),
                        5,
                        if *entry { RED.filled() } else { BLUE.filled() },
                    )
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}

/// Entry and exit error [mm] as bars beside a 1 mm line (a missing one is not drawn).
fn accuracy_plot(path: &Path, m: &Metrics) -> Plot {
    let bars = [("entry", m.entry_error_mm), ("exit", m.exit_error_mm)];
    let top = bars.iter().filter_map(|b| b.1).fold(1.5f64, f64::max) * 1.15;
    png(path, (900, 300), |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption("entry and exit accuracy", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..2.0, 0.0..top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("distance from the mark [mm]")
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().filter_map(|(i, (_, v))| {
                v.map(|v| {
                    let x = i as f64;
                    Rectangle::new(
                        [(x + 0.25, 0.0), (x + 0.75, v)],
                        if v <= 1.0 {
                            RGBColor(60, 150, 80).filled()
                        } else {
                            RGBColor(200, 80, 60).filled()
                        },
                    )
                })
            }))
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 1.0), (2.0, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
        // Labels above the bars (or at the foot, for a mark never reached).
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (name, v))| {
                let text = match v {
                    Some(v) => format!("{name}: {v:.2} mm"),
                    None => format!("{name}: none"),
                };
                Text::new(
                    text,
                    (i as f64 + 0.3, v.unwrap_or(0.0) + 0.04 * top),
                    ("sans-serif", 15),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                "1 mm",
                (1.9, 1.0 + 0.03 * top),
                ("sans-serif", 13),
            )))
            .map_err(err)?;
        Ok(())
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Write `STEM.html` and its plots `STEM-force.png`, `STEM-tension.png`, `STEM-path.png`,
/// `STEM-accuracy.png` into `dir`. Returns the files written.
pub fn write(
    rec: &Recording,
    m: &Metrics,
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, ReportError> {
    let file = |s: &str| dir.join(format!("{stem}-{s}.png"));
    let hand: Vec<f64> = rec.steps.iter().map(|s| s.coupling_force.norm()).collect();
    let tissue: Vec<f64> = rec.steps.iter().map(|s| s.tissue_force).collect();
    let tension: Vec<f64> = rec.steps.iter().map(|s| s.tension).collect();
    time_plot(
        &file("force"),
        rec,
        "force over time",
        "force [N]",
        &[
            ("coupling (instrument)", RGBColor(30, 90, 200), hand),
            ("on the tissue", RGBColor(200, 60, 40), tissue),
        ],
    )?;
    time_plot(
        &file("tension"),
        rec,
        "suture tension",
        "tension [N]",
        &[("largest tension", RGBColor(120, 60, 160), tension)],
    )?;
    path_plot(&file("path"), rec)?;
    accuracy_plot(&file("accuracy"), m)?;
    let mut h = String::new();
    let opt = |x: Option<f64>, unit: &str| x.map_or("—".into(), |v| format!("{v:.2} {unit}"));
    let rows = [
        ("score (0–100)", format!("{:.1}", m.score)),
        ("scene", esc(&m.scene)),
        ("device", esc(&m.device)),
        (
            "recording",
            if m.complete {
                "complete".into()
            } else {
                "incomplete (salvaged up to its last chunk)".into()
            },
        ),
        ("total time", format!("{:.2} s", m.duration)),
        ("path length", format!("{:.1} mm", m.path_length * 1e3)),
        ("economy of motion", format!("{:.3}", m.economy_of_motion)),
        (
            "normalised jerk (lower is smoother)",
            format!("{:.1}", m.normalized_jerk),
        ),
        ("entry error", opt(m.entry_error_mm, "mm")),
        ("exit error", opt(m.exit_error_mm, "mm")),
        (
            "needle angles to the normal",
            m.puncture_angles_deg
                .iter()
                .map(|a| format!("{a:.0}°"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "punctures / re-punctures / needle drops",
            format!("{} / {} / {}", m.punctures, m.repunctures, m.needle_drops),
        ),
        (
            "force on tissue, max / mean",
            format!("{:.2} N / {:.2} N", m.max_tissue_force, m.mean_tissue_force),
        ),
        (
            "suture tension, max / 95th percentile",
            format!("{:.2} N / {:.2} N", m.max_tension, m.p95_tension),
        ),
        (
            "suture broken",
            if m.suture_broken { "yes" } else { "no" }.into(),
        ),
        ("knot", esc(m.knot.as_deref().unwrap_or("not analysed"))),
        (
            "throws, in order (sense, wraps, laid flat)",
            if m.knot_throws.is_empty() {
                "—".into()
            } else {
                esc(&super::assess::describe_throws(&m.knot_throws))
            },
        ),
        (
            "knot complete at",
            m.knot_complete_at
                .map_or("—".into(), |t| format!("{t:.2} s")),
        ),
        ("incision gap under the knot", opt(m.knot_gap_mm, "mm")),
        (
            "knot security (tensile test)",
            m.knot_security
                .map_or("—".into(), |r| esc(&super::assess::describe_security(&r))),
        ),
        ("knot analysis", esc(&m.knot_analysis)),
        ("final incision gap", opt(m.final_gap_mm, "mm")),
        (
            "solver steps unconverged or failed",
            m.solver_failures.to_string(),
        ),
    ];
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>suture assessment: {stem}</title>\n\
<style>body{{font-family:sans-serif;margin:2em;max-width:960px}}table{{border-collapse:collapse}}\
td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left}}img{{display:block;margin:1em 0;max-width:100%}}\
.score{{font-size:2em}}</style></head>\n<body>\n<h1>Assessment: {}</h1>\n<p class=\"score\">score {:.1} / 100</p>\n<h2>Metrics</h2>\n<table>\n",
        esc(stem),
        m.score
    );
    for (k, v) in rows {
        let _ = writeln!(h, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    h += "</table>\n<h2>Phases</h2>\n<table><tr><th>phase</th><th>from</th><th>to</th><th>time</th></tr>\n";
    for (name, a, b) in &m.phases {
        let _ = writeln!(
            h,
            "<tr><td>{name}</td><td>{a:.2} s</td><td>{b:.2} s</td><td>{:.2} s</td></tr>",
            b - a
        );
    }
    h += "</table>\n<h2>Plots</h2>\n";
    for (s, alt) in [
        ("force", "force over time"),
        ("tension", "suture tension over time"),
        ("path", "instrument tip path, top and side views"),
        ("accuracy", "entry and exit error"),
    ] {
        let _ = writeln!(
            h,
            "<img class=\"plot\" src=\"{}-{s}.png\" alt=\"{alt}\">",
            esc(stem)
        );
    }
    h += "<h2>Events</h2>\n<table><tr><th>time</th><th>step</th><th>event</th></tr>\n";
    for e in &rec.events {
        let _ = writeln!(
            h,
            "<tr><td>{:.3} s</td><td>{}</td><td>{}</td></tr>",
            e.event.time,
            e.step,
            esc(&e.event.kind.describe())
        );
    }
    h += "</table>\n<p>Score formula and metric definitions: README, \"Recordings and replay\".</p>\n\
<script>\n// For tests and readers: how many plots loaded (data-plots-loaded on the body).\n\
window.addEventListener('load', () => {\n  const imgs = [...document.querySelectorAll('img.plot')];\n  \
document.body.dataset.plotsLoaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;\n});\n</script>\n</body></html>\n";
    let html = dir.join(format!("{stem}.html"));
    std::fs::write(&html, h).map_err(|source| ReportError::Io {
        path: html.clone(),
        source,
    })?;
    Ok(vec![
        html,
        file("force"),
        file("tension"),
        file("path"),
        file("accuracy"),
    ])
}
