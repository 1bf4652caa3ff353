//! `suture run`: load the scene, open the device, start the haptic and physics loops, and show
//! the viewer on the main thread (or wait headless), then print the loops' statistics.

use std::process::ExitCode;
use std::time::Duration;

use suture::coupling::WorkspaceMap;
use suture::device::{HapticDevice, MouseDevice, MouseHands, MouseInput, ScriptedDevice};
use suture::math::{Quat, Vec3};
use suture::runtime::run::{self, DeviceSetup, RunSetup};
use suture::scene::{self, Overrides};
use suture::session::format::Header;
use suture::session::recorder;
use suture::sim::tool::{Hand, ToolSetup};

use super::DeviceArg;

/// The default scene's path, and its text built into the binary for runs from elsewhere.
const DEFAULT_SCENE: &str = "scenes/suturing.toml";
const DEFAULT_SCENE_TEXT: &str = include_str!("../../scenes/suturing.toml");

/// How often a headless run takes the newest snapshot (and so can feed the knot analysis one):
/// faster than the analysis asks (runtime::analysis::PERIOD).
const HEADLESS_POLL: Duration = Duration::from_millis(20);

/// Arguments of `suture run`.
pub struct RunArgs {
    pub scene: Option<String>,
    pub device: DeviceArg,
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
    /// The trainee's id, recorded in the header (empty: not given).
    pub trainee: String,
    /// Do not ask for real-time scheduling.
    pub no_realtime: bool,
    /// The vendor SDKs' libraries (None: their environment variables, then default paths).
    pub libraries: VendorLibraries,
}

/// Paths of the vendor SDKs' shared libraries given on the command line.
#[derive(Clone, Debug, Default)]
pub struct VendorLibraries {
    /// OpenHaptics' libHD.
    pub openhaptics: Option<String>,
    /// Force Dimension's libdhd.
    pub forcedimension: Option<String>,
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
    /// The profile's text (HID with a profile file), for the recording.
    profile_text: String,
}

/// Why `--device` could not be opened.
#[derive(Debug, thiserror::Error)]
enum OpenError {
    /// The scene's workspace map is not valid.
    #[error("the {0} hand's tool workspace: {1}")]
    Workspace(&'static str, suture::coupling::spring::MapError),
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
    #[error("--device hid: no HID device present matches {0}{1} (see `suture devices`)")]
    NoMatch(String, &'static str),
    /// Built without hidapi.
    #[cfg(not(feature = "hid"))]
    #[error("built without HID support (cargo feature `hid`)")]
    NoHid,
    /// A vendor SDK device could not be opened (library missing, no device, …).
    #[error(transparent)]
    Vendor(#[from] suture::device::vendor::SdkError),
    /// A bad Force Dimension device index.
    #[error("--device {0}: the device index must be a number in 0..=127")]
    DhdIndex(String),
    /// Not a device this build knows.
    #[error(
        "--device: unknown device \"{0}\"; use mouse, hid, hid:PROFILE.toml, scripted:FILE.csv, openhaptics[:NAME] or forcedimension[:INDEX]"
    )]
    Unknown(String),
}

/// What opens a device: the profile folder (HID profiles; vendor profiles in its `vendor/`),
/// the vendor libraries, and the devices already opened for another hand (HID paths and
/// `forcedimension:N`), so each hand gets its own device.
struct Opener<'a> {
    profiles: &'a str,
    libraries: &'a VendorLibraries,
    headless: bool,
    used: Vec<String>,
}

/// Open `spec` for the tool `tool` of the scene.
fn open_device(
    spec: &str,
    op: &mut Opener,
    sc: &scene::Scene,
    tool: &ToolSetup,
) -> Result<Opened, OpenError> {
    let headless = op.headless;
    let hand = tool.hand.name();
    let frame = run::tool_frame(&sc.world, tool);
    let map = WorkspaceMap::new(
        tool.workspace_scale,
        tool.workspace_offset,
        Quat::identity(),
        [false; 3],
    )
    .map_err(|e| OpenError::Workspace(hand, e))?
    .with_frame(frame);
    if spec == "mouse" {
        if headless {
            return Err(OpenError::MouseHeadless);
        }
        // The mouse works in world coordinates: identity map (but the tool frame), starting
        // where the tool's target is at t = 0 (the held node, the needle's grip point, or the
        // instrument's hinge) at the identity orientation, so the tool does not jump.
        let start = run::start_tool(&sc.world, tool, 0.0)
            .map(|st| st.tool.coupling.target)
            .unwrap_or_else(|_| sc.world.rods[tool.rod].positions()[tool.node]);
        let (m, tx) = MouseDevice::new(start, Quat::identity(), 4096);
        let ident = WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3])
            .map_err(|e| OpenError::Workspace(hand, e))?
            .with_frame(frame);
        return Ok(Opened {
            device: Box::new(m),
            map: ident,
            max_stiffness: 0.0,
            mouse: Some(tx),
            profile_text: String::new(),
        });
    }
    if let Some(file) = spec.strip_prefix("scripted:") {
        let d = ScriptedDevice::load(file)?;
        return Ok(Opened {
            device: Box::new(d),
            map,
            max_stiffness: 0.0,
            mouse: None,
            profile_text: String::new(),
        });
    }
    if let Some(opened) = open_vendor(spec, op, map.clone())? {
        return Ok(opened);
    }
    if spec == "hid" || spec.starts_with("hid:") {
        let profile = spec.strip_prefix("hid:");
        let (device, max_stiffness) = open_hid(profile, op.profiles, &mut op.used)?;
        return Ok(Opened {
            device,
            map,
            max_stiffness,
            mouse: None,
            profile_text: profile
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default(),
        });
    }
    Err(OpenError::Unknown(spec.to_string()))
}

/// A vendor SDK device (`openhaptics[:NAME]`, `forcedimension[:INDEX]`) on `map`, with its
/// profile's limits and text; None: `spec` names no vendor device.
fn open_vendor(
    spec: &str,
    op: &mut Opener,
    map: WorkspaceMap,
) -> Result<Option<Opened>, OpenError> {
    use suture::device::{forcedimension, openhaptics};
    let dir = format!("{}/vendor", op.profiles);
    let (backend, arg) = spec.split_once(':').unwrap_or((spec, ""));
    match backend {
        "openhaptics" => {
            let name = (!arg.is_empty()).then_some(arg);
            let lib = op.libraries.openhaptics.as_deref();
            let (d, file) = openhaptics::open(name, lib, &dir)?;
            let k = d.profile().max_stiffness;
            Ok(Some(vendor_opened(Box::new(d), k, map, &file)))
        }
        "forcedimension" => {
            let index = if arg.is_empty() {
                (0..=127u8)
                    .find(|i| !op.used.contains(&format!("forcedimension:{i}")))
                    .unwrap_or(0)
            } else {
                arg.parse::<u8>()
                    .ok()
                    .filter(|i| *i <= 127)
                    .ok_or_else(|| OpenError::DhdIndex(spec.to_string()))?
            };
            let lib = op.libraries.forcedimension.as_deref();
            let (d, file) = forcedimension::open(index, lib, &dir)?;
            op.used.push(format!("forcedimension:{index}"));
            let k = d.profile().max_stiffness;
            Ok(Some(vendor_opened(Box::new(d), k, map, &file)))
        }
        _ => Ok(None),
    }
}

fn vendor_opened(
    device: Box<dyn HapticDevice>,
    max_stiffness: f64,
    map: WorkspaceMap,
    profile: &str,
) -> Opened {
    Opened {
        device,
        map,
        max_stiffness,
        mouse: None,
        profile_text: std::fs::read_to_string(profile).unwrap_or_default(),
    }
}

#[cfg(feature = "hid")]
fn open_hid(
    profile: Option<&str>,
    dir: &str,
    used: &mut Vec<String>,
) -> Result<(Box<dyn HapticDevice>, f64), OpenError> {
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
        let free = present
            .iter()
            .find(|d| p.matches(d.vendor_id, d.product_id) && !used.contains(&d.path));
        if let Some(d) = free {
            let k = p.max_stiffness;
            let name = p.name.clone();
            let dev = suture::device::hid::open_path(p, &d.path)
                .map_err(|source| OpenError::Open { name, source })?;
            used.push(d.path.clone());
            return Ok((Box::new(dev), k));
        }
    }
    Err(OpenError::NoMatch(
        profile.map_or(format!("a profile in {dir}/"), |f| f.to_string()),
        if used.is_empty() {
            ""
        } else {
            " that the other hand does not already use"
        },
    ))
}

#[cfg(not(feature = "hid"))]
fn open_hid(
    _: Option<&str>,
    _: &str,
    _: &mut Vec<String>,
) -> Result<(Box<dyn HapticDevice>, f64), OpenError> {
    Err(OpenError::NoHid)
}

/// The device spec of each of the scene's tools, from `--device`: a bare spec drives the only
/// tool, or the right hand's (the mouse: every tool, one at a time); `HAND=SPEC` drives that
/// hand's tool. Every tool needs a device and every device a tool: the error says which.
fn assign(arg: &DeviceArg, scene: &str, tools: &[ToolSetup]) -> Result<Vec<String>, String> {
    let hands: Vec<&str> = tools.iter().map(|t| t.hand.name()).collect();
    let listed = hands.join(" and ");
    let mut specs: Vec<Option<String>> = vec![None; tools.len()];
    for (hand, spec) in &arg.entries {
        match hand {
            None if spec == "mouse" => specs.iter_mut().for_each(|s| *s = Some(spec.clone())),
            None => {
                let i = if tools.len() == 1 {
                    0
                } else {
                    tools
                        .iter()
                        .position(|t| t.hand == Hand::Right)
                        .unwrap_or(0)
                };
                specs[i] = Some(spec.clone());
            }
            Some(h) => {
                let i = tools.iter().position(|t| t.hand == *h).ok_or_else(|| {
                    format!(
                        "--device {}={spec}: {scene} has no tool for the {} hand (its tools: {listed})",
                        h.name(),
                        h.name()
                    )
                })?;
                specs[i] = Some(spec.clone());
            }
        }
    }
    specs
        .into_iter()
        .zip(tools)
        .map(|(s, t)| {
            s.ok_or_else(|| {
                format!(
                    "--device {arg}: {scene}'s {} hand's tool has no device: name one for each hand, e.g. --device {}",
                    t.hand.name(),
                    hands
                        .iter()
                        .map(|h| format!("{h}=mouse"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
        })
        .collect()
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
    for line in sc.notes() {
        eprintln!("{name}: {line}");
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
    let specs = match assign(&a.device, &name, &sc.tools) {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    let mut devices: Vec<DeviceSetup> = Vec::with_capacity(specs.len());
    let mut mice: Vec<(String, ringbuf::HeapProd<MouseInput>)> = Vec::new();
    let mut visual_devices = Vec::with_capacity(specs.len());
    let mut opener = Opener {
        profiles: &a.profiles,
        libraries: &a.libraries,
        headless: a.headless,
        used: Vec::new(),
    };
    for (tool, spec) in sc.tools.iter().zip(&specs) {
        let opened = match open_device(spec, &mut opener, &sc, tool) {
            Ok(d) => d,
            Err(e) if sc.tools.len() > 1 => {
                return bad(format!("{} hand: {e}", tool.hand.name()));
            }
            Err(e) => return bad(e),
        };
        let device_name = opened.device.name().to_string();
        visual_devices.push((device_name.clone(), opened.device.max_force() > 0.0));
        if let Some(tx) = opened.mouse {
            mice.push((tool.hand.name().to_string(), tx));
        }
        devices.push(DeviceSetup {
            tool: *tool,
            device: opened.device,
            map: opened.map,
            device_max_stiffness: opened.max_stiffness,
            label: if device_name == *spec {
                device_name
            } else {
                format!("{device_name} ({spec})")
            },
            profile_text: opened.profile_text,
        });
    }
    let mouse = (!mice.is_empty()).then(|| MouseHands::new(mice));
    let device_names = devices
        .iter()
        .map(|d| {
            if devices.len() == 1 {
                d.label.clone()
            } else {
                format!("{} hand {}", d.tool.hand.name(), d.label)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
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
        let header = Header {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            scene_path: name.clone(),
            scene_text: text.clone(),
            trainee: a.trainee.clone(),
            task: scene::file::task_name(&sc.file, &name),
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
        devices,
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
    let couplings = running
        .couplings
        .iter()
        .zip(&sc.tools)
        .map(|((c, capped), t)| {
            format!(
                "{}k = {:.0} N/m{}, c = {:.2} N s/m",
                if sc.tools.len() > 1 {
                    format!("{} ", t.hand.name())
                } else {
                    String::new()
                },
                c.k,
                if *capped { " (capped)" } else { "" },
                c.c
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    eprintln!(
        "suture: {name}, device {device_names}, coupling {couplings}, physics dt = {} ms",
        dt * 1e3
    );
    let mut viewer_failed: Option<String> = None;
    let mut memory = MemoryTrace::default();
    if a.headless {
        // Wait out the run, taking the newest snapshot every 20 ms (the snapshots' consumer
        // feeds the live knot analysis the ones it retires, runtime::analysis) and sampling the
        // process's memory once a second (the soak's "memory flat after warm-up", issue #9);
        // the main thread is not a real-time loop.
        let end = std::time::Instant::now() + Duration::from_secs_f64(a.duration.expect("checked"));
        let start = std::time::Instant::now();
        let mut next_sample = start + Duration::from_secs(1);
        loop {
            let now = std::time::Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(HEADLESS_POLL));
            let _ = running.snapshots.latest();
            if std::time::Instant::now() >= next_sample {
                next_sample += Duration::from_secs(1);
                memory.sample(start.elapsed().as_secs_f64());
            }
        }
    } else {
        #[cfg(feature = "viewer")]
        {
            use suture::render::{DeviceVisual, ViewerOptions, Visuals};
            let mut opts = ViewerOptions {
                width: 1280,
                height: 800,
                screenshot: a.screenshot.as_ref().map(std::path::PathBuf::from),
                screenshot_at: a.shot_at,
                duration: a.duration,
                replay: None,
                knots: Some(running.knots.clone()),
            };
            let visuals = Visuals {
                needle: sc.needle,
                tissue: sc.tissue,
                view: sc.view.map(|v| suture::render::CameraPose {
                    eye: v.eye,
                    at: v.at,
                }),
                title: format!("suture — {name}"),
                devices: visual_devices
                    .iter()
                    .map(|(name, force_feedback)| DeviceVisual {
                        name: name.clone(),
                        force_feedback: *force_feedback,
                    })
                    .collect(),
            };
            if let Err(e) = suture::render::run(&mut opts, &visuals, &mut running.snapshots, mouse)
            {
                viewer_failed = Some(e.to_string());
            }
        }
    }
    #[cfg(not(feature = "viewer"))]
    let _ = (visual_devices, mouse, &mut running, &mut viewer_failed);
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
            "recorded {} steps, {} device samples, {} events, {} knot records, {} digests, {} bytes, {} dropped{}",
            r.steps,
            r.samples,
            r.events,
            r.knots,
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
        // Warm-up: the first half of the run, at most 30 s. Resident memory rises once, by
        // ~0.3-0.5 MB, while a scene's contacts first build up (the solver's scratch, e.g. the
        // Woodbury columns, rod::implicit::potential::Woodbury::prepare, and the low-rank
        // terms, grow to their high-water mark; malloc keeps what it mapped) and is flat after:
        // 10 % of a short run (2.3 s of the 23-s tie) ends before that, and the least-squares
        // slope then extrapolates the one-off rise as "+1.2 MB/min". Soak runs (60 s or more)
        // keep their 30 s.
        let warm = (0.5 * t_end).min(30.0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_devices;

    fn tools() -> [ToolSetup; 2] {
        let right = ToolSetup {
            hand: Hand::Right,
            instrument: Some(0),
            rod: 0,
            node: 0,
            mass: 0.02,
            inertia: 2e-6,
            frequency: 20.0,
            damping_ratio: 1.0,
            max_stiffness: 1000.0,
            workspace_scale: 1.0,
            workspace_offset: Vec3::zeros(),
        };
        let left = ToolSetup {
            hand: Hand::Left,
            instrument: Some(1),
            rod: 1,
            ..right
        };
        [right, left]
    }

    fn specs(arg: &str, tools: &[ToolSetup]) -> Result<Vec<String>, String> {
        assign(&parse_devices(arg).unwrap(), "two.toml", tools)
    }

    #[test]
    fn devices_are_assigned_to_the_scenes_hands() {
        let two = tools();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // Two HID devices, a device and the mouse, two trajectories; order free.
        assert_eq!(
            specs("right=hid:devices/a.toml,left=hid:devices/b.toml", &two),
            Ok(s(&["hid:devices/a.toml", "hid:devices/b.toml"]))
        );
        assert_eq!(
            specs("left=mouse,right=hid", &two),
            Ok(s(&["hid", "mouse"]))
        );
        assert_eq!(
            specs("right=scripted:r.csv,left=scripted:l=1.csv", &two),
            Ok(s(&["scripted:r.csv", "scripted:l=1.csv"]))
        );
        // The mouse alone drives both (one at a time).
        assert_eq!(specs("mouse", &two), Ok(s(&["mouse", "mouse"])));
        // A bare device: the only tool, whatever its hand.
        assert_eq!(
            specs("scripted:a=b.csv", &two[1..]),
            Ok(s(&["scripted:a=b.csv"]))
        );
        // A tool left without a device, named, with the fix.
        assert_eq!(
            specs("hid", &two),
            Err("--device hid: two.toml's left hand's tool has no device: name one for each hand, e.g. --device right=mouse,left=mouse".to_string())
        );
        assert_eq!(
            specs("right=mouse", &two).unwrap_err(),
            "--device right=mouse: two.toml's left hand's tool has no device: name one for each hand, e.g. --device right=mouse,left=mouse"
        );
        // A hand the scene has no tool for.
        assert_eq!(
            specs("right=mouse,left=mouse", &two[..1]).unwrap_err(),
            "--device left=mouse: two.toml has no tool for the left hand (its tools: right)"
        );
    }
}
