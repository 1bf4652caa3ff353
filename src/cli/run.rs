//! `suture run`: load the scene, open the device, start the haptic and physics loops, and show
//! the viewer on the main thread (or wait headless), then print the loops' statistics.

use std::process::ExitCode;
use std::time::Duration;

use suture::coupling::WorkspaceMap;
use suture::device::{HapticDevice, MouseDevice, MouseInput, ScriptedDevice};
use suture::math::{Quat, Vec3};
use suture::runtime::run::{self, RunSetup};
use suture::scene::{self, Overrides};
use suture::session::format::Header;
use suture::session::recorder;

/// The default scene's path, and its text built into the binary for runs from elsewhere.
const DEFAULT_SCENE: &str = "scenes/suturing.toml";
const DEFAULT_SCENE_TEXT: &str = include_str!("../../scenes/suturing.toml");

/// Arguments of `suture run`.
pub struct RunArgs {
    pub scene: Option<String>,
    pub device: String,
    pub profiles: String,
    pub headless: bool,
    pub duration: Option<f64>,
    pub screenshot: Option<String>,
    #[cfg_attr(not(feature = "viewer"), allow(dead_code))]
    pub shot_at: f64,
    /// Record to this file (None: a new file in sessions/ unless `no_record`).
    pub record: Option<String>,
    /// Do not record.
    pub no_record: bool,
    /// Do not ask for real-time scheduling.
    pub no_realtime: bool,
}

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A device opened from `--device`.
struct Opened {
    device: Box<dyn HapticDevice>,
    /// Device → world mapping.
    map: WorkspaceMap,
    /// The device's largest stable stiffness [N/m] (0: none given).
    max_stiffness: f64,
    /// The mouse device's input ring, for the viewer.
    mouse: Option<ringbuf::HeapProd<MouseInput>>,
}

/// Why `--device` could not be opened.
#[derive(Debug, thiserror::Error)]
enum OpenError {
    /// The scene's workspace map is not valid.
    #[error("[tool] workspace: {0}")]
    Workspace(suture::coupling::spring::MapError),
    /// The mouse without a window.
    #[error("--device mouse needs the viewer; a headless run needs --device scripted:FILE or hid")]
    MouseHeadless,
    /// A bad trajectory file or device profile (located).
    #[error(transparent)]
    File(#[from] suture::located::FileError),
    /// The HID subsystem could not be listed.
    #[cfg(feature = "hid")]
    #[error(transparent)]
    Enumerate(#[from] suture::device::hid::EnumerateError),
    /// A matching HID device could not be opened.
    #[cfg(feature = "hid")]
    #[error("cannot open {name}: {source} (check permissions on /dev/hidraw*)")]
    Open {
        /// The profile's name.
        name: String,
        /// What the device layer said.
        source: suture::device::DeviceError,
    },
    /// No present HID device matches.
    #[cfg(feature = "hid")]
    #[error("--device hid: no HID device present matches {0} (see `suture devices`)")]
    NoMatch(String),
    /// Built without hidapi.
    #[cfg(not(feature = "hid"))]
    #[error("built without HID support (cargo feature `hid`)")]
    NoHid,
    /// Not a device this build knows.
    #[error(
        "--device: unknown device \"{0}\"; use mouse, hid, hid:PROFILE.toml or scripted:FILE.csv"
    )]
    Unknown(String),
}

fn open_device(
    spec: &str,
    profiles: &str,
    sc: &scene::Scene,
    headless: bool,
) -> Result<Opened, OpenError> {
    let tool = sc.tools.first().copied().expect("checked by the caller");
    let frame = run::tool_frame(&sc.world, &tool);
    let map = WorkspaceMap::new(
        tool.workspace_scale,
        tool.workspace_offset,
        Quat::identity(),
        [false; 3],
    )
    .map_err(OpenError::Workspace)?
    .with_frame(frame);
    if spec == "mouse" {
        if headless {
            return Err(OpenError::MouseHeadless);
        }
        let rod = &sc.world.rods[tool.rod];
        // The mouse works in world coordinates: identity map (but the tool frame), starting
        // on the held node at the identity orientation.
        let (m, tx) = MouseDevice::new(rod.positions()[tool.node], Quat::identity(), 4096);
        let ident = WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3])
            .map_err(OpenError::Workspace)?
            .with_frame(frame);
        return Ok(Opened {
            device: Box::new(m),
            map: ident,
            max_stiffness: 0.0,
            mouse: Some(tx),
        });
    }
    if let Some(file) = spec.strip_prefix("scripted:") {
        let d = ScriptedDevice::load(file)?;
        return Ok(Opened {
            device: Box::new(d),
            map,
            max_stiffness: 0.0,
            mouse: None,
        });
    }
    if spec == "hid" || spec.starts_with("hid:") {
        let (device, max_stiffness) = open_hid(spec.strip_prefix("hid:"), profiles)?;
        return Ok(Opened {
            device,
            map,
            max_stiffness,
            mouse: None,
        });
    }
    Err(OpenError::Unknown(spec.to_string()))
}

#[cfg(feature = "hid")]
fn open_hid(profile: Option<&str>, dir: &str) -> Result<(Box<dyn HapticDevice>, f64), OpenError> {
    use suture::device::DeviceProfile;
    let candidates: Vec<DeviceProfile> = match profile {
        Some(file) => vec![DeviceProfile::load(file)?],
        None => suture::device::load_dir(dir)?
            .into_iter()
            .map(|(_, p)| p)
            .collect(),
    };
    let present = suture::device::hid::enumerate()?;
    for p in candidates {
        if present.iter().any(|d| p.matches(d.vendor_id, d.product_id)) {
            let k = p.max_stiffness;
            let name = p.name.clone();
            let dev =
                suture::device::hid::open(p).map_err(|source| OpenError::Open { name, source })?;
            return Ok((Box::new(dev), k));
        }
    }
    Err(OpenError::NoMatch(
        profile.map_or(format!("a profile in {dir}/"), |f| f.to_string()),
    ))
}

#[cfg(not(feature = "hid"))]
fn open_hid(_: Option<&str>, _: &str) -> Result<(Box<dyn HapticDevice>, f64), OpenError> {
    Err(OpenError::NoHid)
}

/// `suture run`.
pub fn run(a: RunArgs) -> ExitCode {
    // The scene's text is kept for the recording (replay rebuilds the world from it).
    let text = match &a.scene {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}")),
        None => Ok(std::fs::read_to_string(DEFAULT_SCENE)
            .unwrap_or_else(|_| DEFAULT_SCENE_TEXT.to_string())),
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => return bad(e),
    };
    let loaded = scene::parse(
        a.scene.as_deref().unwrap_or(DEFAULT_SCENE),
        &text,
        Overrides::default(),
    );
    let sc = match loaded {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    let name = a.scene.as_deref().unwrap_or(DEFAULT_SCENE).to_string();
    if sc.tools.is_empty() {
        return bad(format!(
            "{name}: the scene has no [tool] section: `suture run` needs a held rod end \
             (see README, scene format)"
        ));
    }
    if let Err(e) = sc.world.check_realtime() {
        return bad(format!("{name}: {e}"));
    }
    if a.headless && a.duration.is_none() {
        return bad("--headless needs --duration S");
    }
    if a.headless && a.screenshot.is_some() {
        return bad("--screenshot needs the viewer (drop --headless)");
    }
    #[cfg(not(feature = "viewer"))]
    if !a.headless {
        return bad("built without the viewer (cargo feature `viewer`): use --headless");
    }
    let Opened {
        device,
        map,
        max_stiffness,
        mouse,
    } = match open_device(&a.device, &a.profiles, &sc, a.headless) {
        Ok(d) => d,
        Err(e) => return bad(e),
    };
    let device_name = device.name().to_string();
    let force_feedback = device.max_force() > 0.0;
    let dt = sc.file.solver.dt.unwrap_or(1e-3);
    let record = if a.no_record {
        None
    } else {
        let path = a.record.clone().map_or_else(
            || {
                let unix = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64());
                recorder::default_path(&name, unix)
            },
            std::path::PathBuf::from,
        );
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return bad(format!("--record: {}: {e}", dir.display()));
        }
        let file = match std::fs::File::create(&path) {
            Ok(f) => f,
            Err(e) => return bad(format!("--record: {}: {e}", path.display())),
        };
        let profile_text = a
            .device
            .strip_prefix("hid:")
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        let header = Header {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            scene_path: name.clone(),
            scene_text: text.clone(),
            device: if device_name == a.device {
                device_name.clone()
            } else {
                format!("{device_name} ({})", a.device)
            },
            profile_text,
            ..Default::default()
        };
        eprintln!("suture: recording to {}", path.display());
        Some((
            Box::new(std::io::BufWriter::with_capacity(1 << 16, file))
                as Box<dyn std::io::Write + Send>,
            header,
        ))
    };
    let setup = RunSetup {
        world: sc.world.clone(),
        tool: sc.tools.first().copied().expect("checked"),
        device,
        map,
        device_max_stiffness: max_stiffness,
        haptic_period: Duration::from_millis(1),
        physics_dt: Duration::from_secs_f64(dt),
        snapshot_every: 16,
        record,
        realtime: !a.no_realtime,
    };
    let mut running = match run::start(setup) {
        Ok(r) => r,
        Err(e) => return bad(format!("{name}: {e}")),
    };
    let (c, capped) = running.coupling.clone();
    eprintln!(
        "suture: {name}, device {device_name}, coupling k = {:.0} N/m{}, c = {:.2} N s/m, physics dt = {} ms",
        c.k,
        if capped { " (capped)" } else { "" },
        c.c,
        dt * 1e3
    );
    let mut viewer_failed: Option<String> = None;
    let mut memory = MemoryTrace::default();
    if a.headless {
        // Wait out the run, sampling the process's memory once a second (the soak's "memory
        // flat after warm-up", issue #9); the main thread is not a real-time loop.
        let end = std::time::Instant::now() + Duration::from_secs_f64(a.duration.expect("checked"));
        let start = std::time::Instant::now();
        loop {
            let now = std::time::Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(Duration::from_secs(1)));
            memory.sample(start.elapsed().as_secs_f64());
        }
    } else {
        #[cfg(feature = "viewer")]
        {
            use suture::render::{ViewerOptions, Visuals};
            let mut opts = ViewerOptions {
                width: 1280,
                height: 800,
                screenshot: a.screenshot.as_ref().map(std::path::PathBuf::from),
                screenshot_at: a.shot_at,
                duration: a.duration,
                replay: None,
            };
            let visuals = Visuals {
                needle: sc.needle,
                tissue: sc.tissue,
                title: format!("suture — {name}"),
                device: device_name.clone(),
                force_feedback,
            };
            if let Err(e) = suture::render::run(&mut opts, &visuals, &mut running.snapshots, mouse)
            {
                viewer_failed = Some(e.to_string());
            }
        }
    }
    #[cfg(not(feature = "viewer"))]
    let _ = (force_feedback, mouse, &mut running, &mut viewer_failed);
    let report = match running.stop() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    println!("{report}");
    if let Some(line) = memory.summary() {
        println!("{line}");
    }
    if !a.no_record {
        let r = &report.recorder;
        println!(
            "recorded {} steps, {} device samples, {} events, {} digests, {} bytes, {} dropped{}",
            r.steps,
            r.samples,
            r.events,
            r.digests,
            r.bytes,
            r.dropped,
            r.error
                .as_ref()
                .map_or(String::new(), |e| format!(", write error: {e}"))
        );
    }
    if let Some(e) = viewer_failed {
        eprintln!("error: viewer: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Resident memory of this process over a headless run, from /proc/self/status (Linux).
#[derive(Default)]
struct MemoryTrace {
    /// (time [s], resident set [kB]) once a second.
    samples: Vec<(f64, u64)>,
    /// Peak resident set [kB] (VmHWM).
    peak: u64,
}

impl MemoryTrace {
    fn sample(&mut self, t: f64) {
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
            return;
        };
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        };
        if let Some(rss) = field("VmRSS:") {
            self.samples.push((t, rss));
        }
        if let Some(hwm) = field("VmHWM:") {
            self.peak = self.peak.max(hwm);
        }
    }

    /// `memory: resident 41.2 MB after warm-up (t = 30 s), 41.3 MB final, 41.9 MB peak; growth
    /// after warm-up +0.1 MB (+0.02 MB/min by least squares)`; None without samples.
    fn summary(&self) -> Option<String> {
        let (&(t_end, last), _) = (self.samples.last()?, ());
        // Warm-up: the first 10 % of the run, at most 30 s.
        let warm = (0.1 * t_end).min(30.0);
        let after: Vec<(f64, f64)> = self
            .samples
            .iter()
            .filter(|(t, _)| *t >= warm)
            .map(|(t, k)| (*t, *k as f64 / 1024.0))
            .collect();
        let (tw, mw) = *after.first()?;
        let n = after.len() as f64;
        let (st, sm) = after
            .iter()
            .fold((0.0, 0.0), |a, (t, m)| (a.0 + t, a.1 + m));
        let (mt, mm) = (st / n, sm / n);
        let (num, den) = after.iter().fold((0.0, 0.0), |a, (t, m)| {
            (a.0 + (t - mt) * (m - mm), a.1 + (t - mt) * (t - mt))
        });
        let slope = if den > 0.0 { num / den * 60.0 } else { 0.0 };
        Some(format!(
            "memory: resident {mw:.1} MB after warm-up (t = {tw:.0} s), {:.1} MB final, {:.1} MB peak; growth after warm-up {:+.2} MB ({slope:+.3} MB/min by least squares over {} samples)",
            last as f64 / 1024.0,
            self.peak as f64 / 1024.0,
            last as f64 / 1024.0 - mw,
            after.len()
        ))
    }
}
