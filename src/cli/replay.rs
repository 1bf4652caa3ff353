//! `suture replay`: re-simulate a recording headless and check it bit for bit (`--headless
//! --verify`), or play it in the viewer with pause, speed and seek.

use std::process::ExitCode;
use std::time::Instant;

#[cfg(feature = "viewer")]
use super::read_salvaged;
use super::{read_recording, recorded_scene, warn_other_build};

/// Arguments of `suture replay`.
pub struct ReplayArgs {
    /// The recording (.surec).
    pub file: String,
    /// No window.
    pub headless: bool,
    /// Compare every step and digest with the recording.
    pub verify: bool,
    /// Viewer: playback speed.
    pub speed: f64,
    /// Viewer: start at this simulated time [s].
    pub start: f64,
    /// Viewer: close after this many wall seconds.
    pub duration: Option<f64>,
    /// Viewer: render one frame to this PNG and exit.
    pub screenshot: Option<String>,
    /// Simulated time of the screenshot [s].
    pub shot_at: f64,
}

/// `suture replay`: verify headless if `--headless` or `--verify` is given, else the viewer.
pub fn replay(a: ReplayArgs) -> ExitCode {
    if a.headless || a.verify {
        verify(&a.file, a.headless, a.verify)
    } else {
        view(
            &a.file,
            a.speed,
            a.start,
            a.duration,
            a.screenshot,
            a.shot_at,
        )
    }
}

/// `--headless --verify`: exit 0 only if every step and digest matches, 1 at the first
/// divergence, 2 for a bad file or missing flag.
fn verify(file: &str, headless: bool, verify: bool) -> ExitCode {
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
    let sc = match recorded_scene(file, h) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    warn_other_build(file, h);
    let t0 = Instant::now();
    match suture::session::replay::verify(&rec, sc.world, |_| {}) {
        Ok(r) => {
            println!(
                "{file}: {r} ({:.2} s simulated in {:.2} s)",
                r.steps as f64 * h.dt,
                t0.elapsed().as_secs_f64()
            );
            // The live knot analysis' records depend on its thread's timing: shown, not
            // verified (docs/recording-format.md).
            if !rec.knots.is_empty() {
                println!(
                    "{file}: live knot analysis (not part of the verification): {} records",
                    rec.knots.len()
                );
                for k in &rec.knots {
                    println!(
                        "  step {} ({:.3} s): {}; knot {}",
                        k.step,
                        k.time,
                        k.event.describe(),
                        suture::sim::snapshot::KnotStatus::of(k.step, k.time, k.name, &k.throws)
                            .describe()
                    );
                }
            }
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

/// The viewer: the replay player thread feeds snapshots to the window, which sends it pause,
/// speed and seek commands; prints how far the replay got and whether it diverged.
#[cfg(feature = "viewer")]
fn view(
    file: &str,
    speed: f64,
    start: f64,
    duration: Option<f64>,
    screenshot: Option<String>,
    shot_at: f64,
) -> ExitCode {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use suture::render::{DeviceVisual, ReplayControl, ViewerOptions, Visuals};
    use suture::runtime::replay::{self, Player, ReplayCommand};
    let rec = match read_salvaged(file) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let h = &rec.header;
    let sc = match recorded_scene(file, h) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
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
    let mut opts = ViewerOptions {
        width: 1280,
        height: 800,
        screenshot: screenshot.map(std::path::PathBuf::from),
        screenshot_at: shot_at,
        duration,
        replay: Some(ReplayControl {
            commands: cmd_tx,
            duration: length,
            paused: false,
            speed,
        }),
        knots: None,
    };
    let visuals = Visuals {
        needle: sc.needle,
        tissue: sc.tissue,
        view: sc.view.map(|v| suture::render::CameraPose {
            eye: v.eye,
            at: v.at,
        }),
        title: format!("suture — replay of {file}"),
        devices: h
            .tools
            .iter()
            .map(|t| DeviceVisual {
                name: t.device.clone(),
                force_feedback: false,
            })
            .collect(),
    };
    let result = suture::render::run(&mut opts, &visuals, &mut snap_rx, None);
    stop.store(true, Ordering::Relaxed);
    let player = thread.join();
    if let Ok(p) = &player {
        println!(
            "{file}: replayed to {:.2} s of {:.2} s, {} digests checked{}",
            p.time(),
            length,
            p.digests_checked,
            match (p.diverged_at, h.provenance()) {
                (None, _) => String::new(),
                (Some(s), suture::session::format::Provenance::OtherBuild(b)) => format!(
                    ", left the recording at step {s}: recorded by another build ({b}; this is {})",
                    suture::session::format::BUILD
                ),
                (Some(s), _) => format!(", DIVERGED at step {s}"),
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
fn view(_: &str, _: f64, _: f64, _: Option<f64>, _: Option<String>, _: f64) -> ExitCode {
    eprintln!("error: built without the viewer (cargo feature `viewer`): use --headless --verify");
    ExitCode::from(2)
}
