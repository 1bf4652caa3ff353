//! `suture` command line. Exit codes: 0 success, 1 solver failure, 2 bad input (scene, arguments).

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

#[path = "cli/run.rs"]
mod run;
use suture::rod::SolverReport;
use suture::scene::{self, ModelName, Overrides};
use suture::session::npz::{self, Array};
use suture::sim::{ContactStats, RodReport, SelfContactStats};

#[derive(Parser)]
#[command(name = "suture", version, about = "Haptic surgical suture simulator")]
struct Cli {
    /// Without a subcommand: `run` the default suturing scene with the mouse.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    Strands,
    Cosserat,
    Der,
}

#[derive(Subcommand)]
enum Command {
    /// Run the simulator: haptic loop (1 kHz), physics loop, and the viewer (or --headless).
    Run {
        /// Scene file (TOML) with a [tool]; default scenes/suturing.toml (built in if absent).
        scene: Option<String>,
        /// Input device: mouse, hid (first device matching a profile), hid:PROFILE.toml, or
        /// scripted:FILE.csv (a trajectory t,x,y,z,rx,ry,rz,buttons).
        #[arg(long, default_value = "mouse")]
        device: String,
        /// Folder of device profiles (for --device hid).
        #[arg(long, default_value = "devices")]
        profiles: String,
        /// No window: run for --duration seconds and print the loop statistics.
        #[arg(long)]
        headless: bool,
        /// Wall time to run [s] (headless: required; with a window: close after it).
        #[arg(long, value_parser = parse_seconds)]
        duration: Option<f64>,
        /// Render one frame to this PNG (after --shot-at simulated seconds) and exit; also
        /// writes PNG.json with the projected rod centerlines.
        #[arg(long)]
        screenshot: Option<String>,
        /// Simulated time of the screenshot [s].
        #[arg(long, default_value_t = 0.5, value_parser = parse_time)]
        shot_at: f64,
        /// Record the session to FILE (default: a new file sessions/SCENE-UNIXTIME.surec).
        #[arg(long, value_name = "FILE", conflicts_with = "no_record")]
        record: Option<String>,
        /// Do not record the session.
        #[arg(long)]
        no_record: bool,
        /// Run the haptic and physics loops at normal priority (by default they ask for
        /// SCHED_FIFO 80 and 70, which needs root, CAP_SYS_NICE or an rtprio limit; refused,
        /// they run at normal priority and the run says so).
        #[arg(long)]
        no_realtime: bool,
    },
    /// Replay a recorded session: `--headless --verify` re-simulates it from the recorded
    /// targets and checks every step and state digest bit for bit (exit 0 only if all match,
    /// 1 at the first divergence, 2 for a bad file).
    Replay {
        /// The recording (.surec).
        file: String,
        /// No window.
        #[arg(long)]
        headless: bool,
        /// Compare every step and digest with the recording.
        #[arg(long)]
        verify: bool,
        /// Viewer: playback speed (1/16 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
        /// Viewer: start at this simulated time [s].
        #[arg(long, default_value_t = 0.0, value_parser = parse_time)]
        start: f64,
        /// Viewer: close after this many wall seconds.
        #[arg(long, value_parser = parse_seconds)]
        duration: Option<f64>,
        /// Viewer: render one frame to this PNG (once the replay reaches --shot-at) and exit.
        #[arg(long)]
        screenshot: Option<String>,
        /// Simulated time of the screenshot [s].
        #[arg(long, default_value_t = 0.5, value_parser = parse_time)]
        shot_at: f64,
    },
    /// Assess recorded sessions: metrics and score per file as JSON (DIR/NAME.json), an HTML
    /// report with PNG plots (DIR/NAME.html, DIR/NAME-*.png), and a CSV summary across them
    /// (DIR/summary.csv). A truncated recording is assessed up to its last
    /// chunk (reported incomplete).
    Assess {
        /// Recordings (.surec).
        #[arg(required = true)]
        files: Vec<String>,
        /// Output folder.
        #[arg(long, default_value = "assessment")]
        out: String,
    },
    /// Export a recording's series: CSV files (steps, samples, events) and/or a NumPy .npz.
    Export {
        /// The recording (.surec).
        file: String,
        /// Folder for steps.csv, samples.csv and events.csv.
        #[arg(long)]
        csv: Option<String>,
        /// The .npz file.
        #[arg(long)]
        npz: Option<String>,
    },
    /// List the HID devices present and the profile (devices/*.toml) that matches each.
    Devices {
        /// Folder of device profiles.
        #[arg(long, default_value = "devices")]
        profiles: String,
    },
    /// Run the 1 kHz pacer alone for a while and report its rate and period jitter.
    Jitter {
        /// Duration [s].
        #[arg(long, default_value_t = 5.0, value_parser = parse_seconds)]
        seconds: f64,
    },
    /// Run a scene headless and write the trajectory as a NumPy .npz file.
    Simulate {
        /// Scene file (TOML).
        scene: String,
        /// Output file (.npz): times [T], rod{i} [T, nodes, 3], rod{i}_directors [T, nodes-1, 3].
        #[arg(long)]
        out: String,
        /// Number of frames, evenly spaced from 0 to the scene's duration inclusive
        /// (default 101, or 1 when the duration is 0).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        frames: Option<u32>,
        /// Elements per rod (overrides the scene).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        elements: Option<u32>,
        /// Rod model (overrides the scene's solver.model).
        #[arg(long, value_enum)]
        model: Option<ModelArg>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Run {
        scene: None,
        device: "mouse".to_string(),
        profiles: "devices".to_string(),
        headless: false,
        duration: None,
        screenshot: None,
        shot_at: 0.5,
        record: None,
        no_record: false,
        no_realtime: false,
    });
    match command {
        Command::Run {
            scene,
            device,
            profiles,
            headless,
            duration,
            screenshot,
            shot_at,
            record,
            no_record,
            no_realtime,
        } => run::run(run::RunArgs {
            scene,
            device,
            profiles,
            headless,
            duration,
            screenshot,
            shot_at,
            record,
            no_record,
            no_realtime,
        }),
        Command::Replay {
            file,
            headless,
            verify,
            speed,
            start,
            duration,
            screenshot,
            shot_at,
        } => {
            if headless || verify {
                replay(&file, headless, verify)
            } else {
                replay_viewer(&file, speed, start, duration, screenshot, shot_at)
            }
        }
        Command::Assess { files, out } => assess(&files, &out),
        Command::Export { file, csv, npz } => export(&file, csv.as_deref(), npz.as_deref()),
        Command::Simulate {
            scene,
            out,
            frames,
            elements,
            model,
        } => simulate(&scene, &out, frames, elements, model),
        Command::Devices { profiles } => devices(&profiles),
        Command::Jitter { seconds } => jitter(seconds),
    }
}

/// Read a recording for replay or assessment: exit 2 with `FILE: message` if it is not whole.
fn read_recording(file: &str) -> Result<suture::session::format::Recording, ExitCode> {
    let bytes = std::fs::read(file).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    let rec = suture::session::format::decode(&bytes).map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    rec.header.validate().map_err(|e| {
        eprintln!("error: {file}: {e}");
        ExitCode::from(2)
    })?;
    Ok(rec)
}

/// Read a recording, salvaging a truncated one (with a warning); other damage is an error.
fn read_salvaged(file: &str) -> Result<suture::session::format::Recording, String> {
    use suture::session::format::{DecodeError, salvage};
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let rec = match salvage(&bytes) {
        (r, None) => r,
        (r, Some(e @ DecodeError::Truncated { .. })) if !r.steps.is_empty() => {
            eprintln!("warning: {file}: {e}");
            r
        }
        (_, Some(e)) => return Err(format!("{file}: {e}")),
    };
    rec.header.validate().map_err(|e| format!("{file}: {e}"))?;
    Ok(rec)
}

fn assess(files: &[String], out: &str) -> ExitCode {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use suture::session::assess;
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: --out {out}: {e}");
        return ExitCode::from(2);
    }
    // Files in parallel, one worker per core, with a progress line on stderr.
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results: Vec<Result<assess::Metrics, String>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..workers.min(files.len()))
            .map(|_| {
                sc.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        let r = read_salvaged(f).and_then(|rec| {
                            let m = assess::assess(&rec);
                            let stem = std::path::Path::new(f)
                                .file_stem()
                                .map_or("session".into(), |s| s.to_string_lossy().into_owned());
                            let json = serde_json::to_string_pretty(&m).expect("plain data");
                            let path = std::path::Path::new(out).join(format!("{stem}.json"));
                            std::fs::write(&path, json)
                                .map_err(|e| format!("{}: {e}", path.display()))?;
                            suture::session::report::write(
                                &rec,
                                &m,
                                std::path::Path::new(out),
                                &stem,
                            )?;
                            Ok(m)
                        });
                        mine.push((i, r));
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
    let mut csv = format!("{}\n", assess::SUMMARY_HEADER);
    let mut bad = false;
    for (f, r) in files.iter().zip(&results) {
        match r {
            Ok(m) => {
                println!(
                    "{f}: score {:.1}, {:.1} s, path {:.3} m, entry {} mm, exit {} mm, max tissue force {:.2} N, max tension {:.2} N{}",
                    m.score,
                    m.duration,
                    m.path_length,
                    m.entry_error_mm.map_or("-".into(), |e| format!("{e:.2}")),
                    m.exit_error_mm.map_or("-".into(), |e| format!("{e:.2}")),
                    m.max_tissue_force,
                    m.max_tension,
                    if m.complete { "" } else { " (incomplete)" }
                );
                csv += &assess::summary_row(f, m);
                csv.push('\n');
            }
            Err(e) => {
                eprintln!("error: {e}");
                bad = true;
            }
        }
    }
    let path = std::path::Path::new(out).join("summary.csv");
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

fn export(file: &str, csv: Option<&str>, npz: Option<&str>) -> ExitCode {
    use suture::session::export;
    if csv.is_none() && npz.is_none() {
        eprintln!("error: export needs --csv DIR and/or --npz FILE");
        return ExitCode::from(2);
    }
    let rec = match read_salvaged(file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(d) = csv
        && let Err(e) = export::write_csv(&rec, std::path::Path::new(d))
    {
        eprintln!("error: --csv {d}: {e}");
        return ExitCode::from(1);
    }
    if let Some(p) = npz
        && let Err(e) = export::write_npz(&rec, std::path::Path::new(p))
    {
        eprintln!("error: --npz {p}: {e}");
        return ExitCode::from(1);
    }
    println!(
        "{file}: {} steps, {} device samples, {} events exported",
        rec.steps.len(),
        rec.samples.len(),
        rec.events.len()
    );
    ExitCode::SUCCESS
}

#[cfg(feature = "viewer")]
fn replay_viewer(
    file: &str,
    speed: f64,
    start: f64,
    duration: Option<f64>,
    screenshot: Option<String>,
    shot_at: f64,
) -> ExitCode {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use suture::runtime::replay::{self, Player, ReplayCommand};
    let rec = match read_salvaged(file) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let h = &rec.header;
    let sc = match scene::parse(&h.scene_path, &h.scene_text, Overrides::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {file}: its scene: {e}");
            return ExitCode::from(2);
        }
    };
    let mut player = match Player::new(rec.clone(), sc.world.clone()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    player.speed = speed;
    player.seek(start);
    let length = player.duration();
    let (snap_tx, mut snap_rx) = suture::sim::snapshot::snapshot_channel(&sc.world, 4);
    let (cmd_tx, cmd_rx) = ringbuf::traits::Split::split(ringbuf::HeapRb::<ReplayCommand>::new(64));
    let stop = Arc::new(AtomicBool::new(false));
    let thread = replay::spawn(player, snap_tx, cmd_rx, stop.clone());
    let mut opts = suture::render::ViewerOptions {
        width: 1280,
        height: 800,
        screenshot: screenshot.map(std::path::PathBuf::from),
        screenshot_at: shot_at,
        duration,
        replay: Some(suture::render::ReplayControl {
            commands: cmd_tx,
            duration: length,
            paused: false,
            speed,
        }),
    };
    let visuals = suture::render::Visuals {
        needle: sc.needle,
        tissue: sc.tissue,
        title: format!("suture — replay of {file}"),
        device: h.device.clone(),
        force_feedback: false,
    };
    let result = suture::render::run(&mut opts, &visuals, &mut snap_rx, None);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let player = thread.join();
    if let Ok(p) = &player {
        println!(
            "{file}: replayed to {:.2} s of {:.2} s, {} digests checked{}",
            p.time(),
            length,
            p.digests_checked,
            match p.diverged_at {
                None => String::new(),
                Some(s) => format!(", DIVERGED at step {s}"),
            }
        );
    }
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: viewer: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(not(feature = "viewer"))]
fn replay_viewer(_: &str, _: f64, _: f64, _: Option<f64>, _: Option<String>, _: f64) -> ExitCode {
    eprintln!("error: built without the viewer (cargo feature `viewer`): use --headless --verify");
    ExitCode::from(2)
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (1.0 / 16.0..=16.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("must be in [0.0625, 16], got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

fn replay(file: &str, headless: bool, verify: bool) -> ExitCode {
    if !headless {
        eprintln!("error: --verify runs headless: add --headless");
        return ExitCode::from(2);
    }
    if !verify {
        eprintln!("error: --headless replay needs --verify (it has nothing else to show)");
        return ExitCode::from(2);
    }
    let rec = match read_recording(file) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let h = &rec.header;
    let sc = match scene::parse(&h.scene_path, &h.scene_text, Overrides::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {file}: its scene: {e}");
            return ExitCode::from(2);
        }
    };
    if h.crate_version != env!("CARGO_PKG_VERSION") {
        eprintln!(
            "warning: {file} was recorded by suture {}, this is {}: bit-for-bit replay needs the same build",
            h.crate_version,
            env!("CARGO_PKG_VERSION")
        );
    }
    let t0 = Instant::now();
    match suture::session::replay::verify(&rec, sc.world, |_| {}) {
        Ok(r) => {
            println!(
                "{file}: {r} ({:.2} s simulated in {:.2} s)",
                r.steps as f64 * h.dt,
                t0.elapsed().as_secs_f64()
            );
            if r.divergence.is_none() && r.end_matched != Some(false) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {file}: {e}");
            ExitCode::from(2)
        }
    }
}

fn parse_time(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("must be in [0, 3600] s, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        Ok(v) => Err(format!("must be in (0, 3600] s, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

/// `suture jitter`: the haptic pacer's achieved rate and period percentiles on this machine.
fn jitter(seconds: f64) -> ExitCode {
    let mut p = suture::runtime::Pacer::catching_up(
        std::time::Duration::from_millis(1),
        suture::runtime::haptic::HAPTIC_MAX_LAG,
    );
    let ticks = (seconds * 1000.0).round() as usize;
    let mut work = std::time::Duration::ZERO;
    for _ in 0..=ticks {
        let t = p.tick(work);
        work = t.elapsed();
    }
    let s = p.stats.summary();
    println!(
        "1 kHz pacer (spin_sleep, SpinLoopHint) for {seconds} s: {:.2} Hz achieved, period p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs, {} overruns (> 1.5 ms)",
        s.rate, s.p50, s.p99, s.max, s.overruns
    );
    ExitCode::SUCCESS
}

/// `suture devices`: HID interfaces present, each with its matching profile.
fn devices(dir: &str) -> ExitCode {
    let profiles = match suture::device::load_dir(dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{} device profiles in {dir}/:", profiles.len());
    for (file, p) in &profiles {
        let ids: Vec<String> = p.product_ids.iter().map(|id| format!("{id:04x}")).collect();
        println!(
            "  {file}: {} ({:04x}:{}, {:?} mode, {})",
            p.name,
            p.vendor_id,
            ids.join("/"),
            p.mode,
            if p.output.is_some() {
                format!("force ≤ {} N", p.max_force)
            } else {
                "input only".to_string()
            }
        );
    }
    list_hid(&profiles)
}

#[cfg(feature = "hid")]
fn list_hid(profiles: &[(String, suture::device::DeviceProfile)]) -> ExitCode {
    let found = match suture::device::hid::enumerate() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if found.is_empty() {
        println!(
            "no HID devices found (plug one in, or check permissions on /dev/hidraw*); the mouse works without one"
        );
        return ExitCode::SUCCESS;
    }
    println!("{} HID interfaces:", found.len());
    for d in &found {
        let matched = profiles
            .iter()
            .find(|(_, p)| p.matches(d.vendor_id, d.product_id))
            .map_or("no profile".to_string(), |(f, _)| format!("profile {f}"));
        println!(
            "  {:04x}:{:04x} {} {} (interface {}, {}): {matched}",
            d.vendor_id, d.product_id, d.manufacturer, d.product, d.interface, d.path
        );
    }
    ExitCode::SUCCESS
}

#[cfg(not(feature = "hid"))]
fn list_hid(_: &[(String, suture::device::DeviceProfile)]) -> ExitCode {
    println!("built without HID support (cargo feature `hid`): no devices can be listed");
    ExitCode::SUCCESS
}

fn simulate(
    path: &str,
    out: &str,
    frames: Option<u32>,
    elements: Option<u32>,
    model: Option<ModelArg>,
) -> ExitCode {
    let overrides = Overrides {
        elements: elements.map(|e| e as usize),
        model: model.map(|m| match m {
            ModelArg::Strands => ModelName::Strands,
            ModelArg::Cosserat => ModelName::Cosserat,
            ModelArg::Der => ModelName::Der,
        }),
    };
    let mut sc = match scene::load(path, overrides) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for line in sc.rest_shape_notes() {
        eprintln!("{line}");
    }
    let duration = sc.file.duration;
    let frames = frames.unwrap_or(if duration > 0.0 { 101 } else { 1 }) as usize;
    let times: Vec<f64> = (0..frames)
        .map(|i| {
            if frames == 1 {
                0.0
            } else {
                duration * i as f64 / (frames - 1) as f64
            }
        })
        .collect();
    let nrods = sc.world.rods.len();
    let mut pos: Vec<Vec<f64>> = vec![Vec::new(); nrods];
    let mut dirs: Vec<Vec<f64>> = vec![Vec::new(); nrods];
    let mut iterations = vec![0usize; nrods];
    let mut sweeps = vec![0usize; nrods];
    let mut max_kappa = vec![0.0f64; nrods];
    let mut warned = vec![false; nrods];
    let mut steps = vec![0usize; nrods];
    let mut unconverged = vec![0usize; nrods];
    let mut last_report: Vec<Option<SolverReport>> = vec![None; nrods];
    let mut contact: Vec<Option<ContactStats>> = vec![None; nrods];
    let mut deepest = vec![0.0f64; nrods];
    let mut self_contact: Vec<Option<SelfContactStats>> = vec![None; nrods];
    let mut min_gap = vec![f64::INFINITY; nrods];
    // The knot each self-contacting rod starts in (named again at the end).
    let knot_at_start: Vec<Option<String>> = sc
        .world
        .rods
        .iter()
        .map(|rod| {
            rod.self_contact_enabled()
                .then(|| describe_knot(rod.positions()))
        })
        .collect();
    let started = Instant::now();
    for &t in &times {
        let report = match sc.world.advance_to(t) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {path}: {e}");
                return ExitCode::from(1);
            }
        };
        for (i, rod) in sc.world.rods.iter().enumerate() {
            max_kappa[i] = max_kappa[i].max(rod.max_curvature());
            match &report.rods[i] {
                RodReport::Strands(r) => {
                    iterations[i] += r.newton_iterations;
                    sweeps[i] += r.sweeps;
                    if r.amplification > 1e6 && !warned[i] {
                        warned[i] = true;
                        eprintln!(
                            "warning: rods[{i}] at t = {t} s: tension number T L²/EI = {:.0}; the two-sweep amplifies rounding by {:.1e} (refused above 1e8)",
                            r.tension_number, r.amplification
                        );
                    }
                }
                RodReport::Cosserat {
                    last,
                    steps: k,
                    iterations: it,
                    unconverged: u,
                    contact: cs,
                    self_contact: sc_stats,
                } => {
                    if let Some(st) = sc_stats {
                        min_gap[i] = min_gap[i].min(st.min_distance);
                        self_contact[i] = Some(*st);
                    }
                    if let Some(cs) = cs {
                        deepest[i] = deepest[i].max(cs.max_penetration);
                        contact[i] = Some(*cs);
                    }
                    iterations[i] += it;
                    steps[i] += k;
                    unconverged[i] += u;
                    last_report[i] = Some(*last);
                }
            }
            for p in rod.positions() {
                pos[i].extend_from_slice(&[p.x, p.y, p.z]);
            }
            for d in rod.directors() {
                dirs[i].extend_from_slice(&[d.x, d.y, d.z]);
            }
        }
    }
    let wall = started.elapsed();
    let mut arrays = vec![(
        "times".to_string(),
        Array {
            shape: vec![frames],
            data: times.clone(),
        },
    )];
    for i in 0..nrods {
        let nodes = sc.world.rods[i].positions().len();
        arrays.push((
            format!("rod{i}"),
            Array {
                shape: vec![frames, nodes, 3],
                data: std::mem::take(&mut pos[i]),
            },
        ));
        arrays.push((
            format!("rod{i}_directors"),
            Array {
                shape: vec![frames, nodes - 1, 3],
                data: std::mem::take(&mut dirs[i]),
            },
        ));
    }
    let file = match std::fs::File::create(out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: cannot create {out}: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = npz::write(std::io::BufWriter::new(file), &arrays) {
        eprintln!("error: writing {out}: {e}");
        return ExitCode::from(1);
    }
    for (i, rod) in sc.world.rods.iter().enumerate() {
        let tip = rod.positions()[rod.positions().len() - 1];
        let solver = match &last_report[i] {
            None => format!(
                "{} Newton iterations ({} sweeps) over {} frames",
                iterations[i], sweeps[i], frames
            ),
            Some(r) => format!(
                "{} steps, {} iterations ({} steps unconverged); final: stretch {:.1e}, energy {:.4e} J (bend {:.3e}, kinetic {:.3e})",
                steps[i],
                iterations[i],
                unconverged[i],
                r.max_stretch,
                r.total_energy(),
                r.bend_energy,
                r.kinetic_energy
            ),
        };
        println!(
            "rod{i}: model {} N={} tip [{:.6}, {:.6}, {:.6}] m, max curvature {:.4} 1/m, {solver}, wall {:.3} ms",
            sc.model.as_str(),
            rod.positions().len() - 1,
            tip.x,
            tip.y,
            tip.z,
            max_kappa[i],
            wall.as_secs_f64() * 1e3
        );
        if let Some(c) = contact[i] {
            let r = sc.params[i].radius;
            println!(
                "rod{i}: contact: {} points at the end, deepest sink over the run {:.3e} m ({:.2} % of the rod radius), penalty stiffness {:.2e} N/m ({} raises)",
                c.active,
                deepest[i],
                100.0 * deepest[i] / r,
                c.stiffness,
                c.raises
            );
        }
        if let Some(c) = self_contact[i] {
            let r = sc.params[i].radius;
            println!(
                "rod{i}: self-contact: {} of {} candidate pairs touching at the end, closest approach over the run {:.4e} m = 2r {:+.2} % r, IMC stiffness {:.2e} J ({} raises)",
                c.active,
                c.candidates,
                min_gap[i],
                100.0 * (min_gap[i] - 2.0 * r) / r,
                c.stiffness,
                c.raises
            );
        }
        if let Some(l) = &rod.lagged {
            let sink = l.contact.as_ref().map_or(0.0, |c| c.max_penetration);
            println!(
                "rod{i}: lagged contact loads (STRANDS): {} solves in the last frame, last motion {:.1e} m ({}), deepest sink at the end {sink:.3e} m",
                l.passes,
                l.change,
                if l.change < l.tolerance {
                    "settled"
                } else {
                    "NOT settled: raise the pass limit or use model cosserat"
                }
            );
        }
        if let Some(start) = &knot_at_start[i] {
            println!(
                "rod{i}: knot at t = 0: {start}; at the end: {}",
                describe_knot(rod.positions())
            );
        }
        if unconverged[i] > 0 {
            eprintln!(
                "warning: rods[{i}]: {} of {} steps hit the iteration cap before converging (raise solver.iterations)",
                unconverged[i], steps[i]
            );
        }
    }
    if let Some(su) = &sc.world.suturing {
        use suture::sim::suturing::Through;
        let through = su
            .passages
            .iter()
            .filter(|p| matches!(p.through, Through::Suture(_)))
            .count();
        println!(
            "suturing: {} holes ({through} with the suture through), incision {:.2} mm, suture tension {:.3} N, needle coupling force {:.3} N, {} events",
            su.passages.len(),
            su.tissue.gap_at(su.tissue.geometry.center.z) * 1e3,
            su.tension,
            su.needle.coupling_force.norm(),
            su.events.len()
        );
        for e in &su.events {
            println!("  {:.3} s: {}", e.time, e.kind.describe());
        }
    }
    println!("wrote {out}");
    ExitCode::SUCCESS
}

/// The knot of an open rod from its geometry alone (`topology`): name, determinant, crossings
/// and the material span between its outermost self-crossings (node parameters).
fn describe_knot(x: &[suture::math::Vec3]) -> String {
    match suture::topology::identify_open(x) {
        Err(e) => format!("not identified ({e})"),
        Ok(id) => {
            let extent = match suture::topology::knot_extent(x, 8) {
                Ok(Some((a, b))) => format!(", knotted between nodes {a:.1} and {b:.1}"),
                _ => String::new(),
            };
            format!(
                "{} (determinant {}, {} crossings{extent})",
                id.name.unwrap_or("unnamed"),
                id.determinant,
                id.crossings
            )
        }
    }
}
