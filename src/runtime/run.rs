//! Starting and stopping a simulator session: one haptic loop per device and the physics loop
//! on their threads, wired by lock-free rings, with the snapshot channel handed to the caller
//! (the viewer on the main thread, or a headless wait), and the live knot analysis
//! (runtime::analysis) tapping that channel.

use super::analysis::{self, Analysis, AnalysisReport};
use super::haptic::{self, HapticConfig, HapticFigures, HapticReport, ProxyState, ToolTarget};
use super::pacer::MemoryLock;
use super::physics::{self, PhysicsLinks, PhysicsReport};
use crate::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use crate::device::HapticDevice;
use crate::session::format::{End, Header, ToolHeader};
use crate::session::knots::{CONFIRMATIONS, KnotWatch};
use crate::session::recorder::{DIGEST_EVERY, Recorder, RecorderReport};
use crate::session::replay::build_tool;
use crate::sim::snapshot::{KnotStatus, SnapshotRx, snapshot_channel};
use crate::sim::tool::Hand;
use crate::sim::tool::ToolSetup;
use crate::sim::{DigestVersion, MAX_TOOLS, Tool, World};
use ringbuf::HeapRb;
use ringbuf::traits::Split;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Force limit used for input-only devices (max_force 0), whose commands are ignored: the
/// hand force is then what a force-feedback device would render, shown in the HUD [N].
pub const NOMINAL_FORCE_LIMIT: f64 = 10.0;

/// Torque limit of the limiter [N m]. The rod solve couples the tool's position only, so the
/// coupling's rotational spring is off and this bound is a guard, not a rendered torque.
pub const TORQUE_LIMIT: f64 = 0.1;

/// Force ramp-in time at start and after a fault [s].
pub const RAMP: f64 = 0.05;

/// One device of a session and the tool it drives.
pub struct DeviceSetup {
    /// The tool the device drives (its hand, held rod and node or instrument, coupling).
    pub tool: ToolSetup,
    /// The device.
    pub device: Box<dyn HapticDevice>,
    /// Device → world mapping (its `frame` should be the held segment's frame at t = 0, see
    /// [`tool_frame`]).
    pub map: WorkspaceMap,
    /// The device's largest stable stiffness [N/m] (0: no limit beyond the scene's).
    pub device_max_stiffness: f64,
    /// What the recording and the report call the device (empty: its own name).
    pub label: String,
    /// The device profile's text, for the recording (empty: none, e.g. mouse or scripted).
    pub profile_text: String,
}

/// What a session needs.
pub struct RunSetup {
    /// The world (every rod a dynamic Cosserat rod).
    pub world: World,
    /// The devices, one per tool (at most `sim::MAX_TOOLS`, each hand at most once), in the
    /// order the world steps their tools; each gets its own haptic loop.
    pub devices: Vec<DeviceSetup>,
    /// Haptic loop period and physics step.
    pub haptic_period: Duration,
    /// See `haptic_period`.
    pub physics_dt: Duration,
    /// Publish a snapshot every this many physics steps.
    pub snapshot_every: u64,
    /// Record the session to this writer, with this header (its scene fields set by the
    /// caller; the tools and devices, periods and start time are filled in here). None: no
    /// recording.
    pub record: Option<(Box<dyn std::io::Write + Send>, Header)>,
    /// Ask for real-time scheduling: `SCHED_FIFO` for the haptic loops' threads
    /// (runtime::pacer::request_realtime), nice −10 for the physics loop's
    /// (runtime::pacer::PHYSICS_NICE), and the process's memory locked in RAM
    /// (runtime::pacer::lock_memory); refused, they run at normal priority and the report says
    /// so.
    pub realtime: bool,
}

/// A running session.
pub struct Running {
    stop: Arc<AtomicBool>,
    haptic: Vec<(Hand, String, std::thread::JoinHandle<HapticReport>)>,
    physics: std::thread::JoinHandle<PhysicsReport>,
    analysis: Option<Analysis>,
    /// Snapshots of the world (the viewer takes them). Whoever holds them feeds the live knot
    /// analysis: it must call `latest()` at least as often as the analysis asks
    /// (runtime::analysis::PERIOD), as the viewer's frames and the headless wait of
    /// `suture run` do.
    pub snapshots: SnapshotRx,
    /// The live knot analysis' status after each snapshot it analysed, for the HUD (a bounded
    /// channel: statuses nobody reads are dropped).
    pub knots: crossbeam::channel::Receiver<KnotStatus>,
    /// When the loops started.
    pub started: Instant,
    /// Each tool's coupling (after the stiffness cap), and whether it was capped, in the order
    /// of the setup's devices.
    pub couplings: Vec<(VirtualCoupling, bool)>,
    haptic_period: Duration,
    recorder: Recorder,
    memory: MemoryLock,
    steal: Option<super::steal::StealMeter>,
}

/// What one device's haptic loop did.
#[derive(Clone, Debug)]
pub struct HandReport {
    /// The hand.
    pub hand: Hand,
    /// The device (its label).
    pub device: String,
    /// Its haptic loop.
    pub haptic: HapticReport,
}

/// What a session did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Each device's haptic loop, in the order of the setup's devices.
    pub hands: Vec<HandReport>,
    /// The physics loop (with the final world and tools).
    pub physics: PhysicsReport,
    /// Wall time the loops ran [s].
    pub wall: f64,
    /// The haptic loops' target period [µs] (jitter = |p99 period − this|).
    pub haptic_period_us: f64,
    /// The recorder (a default report when the session was not recorded).
    pub recorder: RecorderReport,
    /// The live knot analysis (None: the world has no rod, or its thread panicked).
    pub analysis: Option<AnalysisReport>,
    /// Whether the process's memory was locked in RAM for the run.
    pub memory: MemoryLock,
    /// Time the hypervisor took from the CPUs while the loops ran (None: no /proc/stat).
    pub stolen: Option<super::steal::Stolen>,
}

/// The frame of the held segment at t = 0 (the map's `frame`: a device at its identity
/// orientation holds the tool as the scene placed it).
pub fn tool_frame(world: &World, tool: &ToolSetup) -> crate::math::Quat {
    world.tool_frame(tool)
}

/// Why a session could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The world cannot run in the real-time loop.
    #[error(transparent)]
    Realtime(#[from] crate::sim::RealtimeError),
    /// The scene's tool holds a node the world does not have.
    #[error(transparent)]
    Tool(#[from] crate::sim::NoSuchNode),
    /// No device, or more than a world steps.
    #[error("a session needs 1 to {MAX_TOOLS} devices, got {0}")]
    Devices(usize),
    /// Two devices for one hand.
    #[error("two devices drive the {0} hand")]
    SameHand(&'static str),
    /// The recording could not be started.
    #[error("recording: {0}")]
    Recording(std::io::Error),
    /// A loop's thread panicked.
    #[error("the {0} thread panicked")]
    Panicked(&'static str),
}

/// A tool as a session starts it, from its [`ToolSetup`] and its device's stiffness limit.
pub struct StartedTool {
    /// The tool the world steps.
    pub tool: Tool,
    /// The hand's virtual coupling (the haptic loop renders it), and whether its stiffness
    /// was capped.
    pub coupling: VirtualCoupling,
    /// See `coupling`.
    pub capped: bool,
    /// What the recording says of it (hand, rod, node, instrument, gains; the device's name and
    /// profile are the caller's to fill in), and what [`build_tool`] built the tool from.
    pub entry: ToolHeader,
}

/// THE construction of a session's tool from a [`ToolSetup`]: the coupling's gains (the scene's
/// tool, capped by the device's largest stable stiffness [N/m], 0: none), then the tool itself
/// by [`build_tool`] from the header entry the recording keeps, so replay builds the same tool
/// from the same entry.
pub fn start_tool(
    world: &World,
    t: &ToolSetup,
    device_max_stiffness: f64,
) -> Result<StartedTool, RunError> {
    let max_k = if device_max_stiffness > 0.0 {
        t.max_stiffness.min(device_max_stiffness)
    } else {
        t.max_stiffness
    };
    let (mut coupling, capped) =
        VirtualCoupling::new(t.mass, t.inertia, t.frequency, t.damping_ratio, max_k);
    // The rod solve couples the held segment's frame by a spring without a damper
    // (sim::tool::ToolSpring::evaluate_frames): no rotational damper on the hand either, so
    // what the hand feels is what the rod receives.
    coupling.cr = 0.0;
    // The rigid needle (suturing scenes) is a body with the tool's inertia: its rotational
    // coupling has the damper the translational one has (sim::World::step gives it c·I/m),
    // and the hand feels the same.
    if let Some((mass, inertia)) = world.needle_mass()
        && mass > 0.0
    {
        coupling.cr = coupling.c * inertia / mass;
    }
    // A quasi-static (STRANDS) rod is coupled by its tip force only (docs/derivations/cosserat.md §C.6).
    if world.is_quasi_static(t.rod) {
        coupling.kr = 0.0;
    }
    let entry = ToolHeader {
        hand: t.hand,
        instrument: t.instrument.map(|i| i as u64),
        rod: t.rod as u64,
        node: t.node as u64,
        k: coupling.k,
        c: coupling.c,
        kr: coupling.kr,
        device: String::new(),
        profile_text: String::new(),
    };
    let tool = build_tool(world, &entry)?;
    Ok(StartedTool {
        tool,
        coupling,
        capped,
        entry,
    })
}

/// Start the physics loop and one haptic loop per device.
pub fn start(setup: RunSetup) -> Result<Running, RunError> {
    setup.world.check_realtime()?;
    // Before the loops start: their first touch of a page must not fault.
    let memory = if setup.realtime {
        super::pacer::lock_memory()
    } else {
        MemoryLock::NotAsked
    };
    let n = setup.devices.len();
    if n == 0 || n > MAX_TOOLS {
        return Err(RunError::Devices(n));
    }
    for (i, d) in setup.devices.iter().enumerate() {
        if setup.devices[..i]
            .iter()
            .any(|e| e.tool.hand == d.tool.hand)
        {
            return Err(RunError::SameHand(d.tool.hand.name()));
        }
    }
    let mut tools = Vec::with_capacity(n);
    let mut entries = Vec::with_capacity(n);
    let mut couplings = Vec::with_capacity(n);
    for d in &setup.devices {
        let mut st = start_tool(&setup.world, &d.tool, d.device_max_stiffness)?;
        st.entry.device = if d.label.is_empty() {
            d.device.name().to_string()
        } else {
            d.label.clone()
        };
        st.entry.profile_text = d.profile_text.clone();
        tools.push(st.tool);
        entries.push(st.entry);
        couplings.push((st.coupling, st.capped));
    }
    let mut recorder = match setup.record {
        None => Recorder::disabled(),
        Some((out, mut header)) => {
            header.dt = setup.physics_dt.as_secs_f64();
            header.haptic_period = setup.haptic_period.as_secs_f64();
            header.digest_every = DIGEST_EVERY;
            // What this build records: its identity, and the state digests its physics loop
            // computes.
            header.build = crate::session::format::BUILD.to_string();
            header.digest_version = DigestVersion::CURRENT.number();
            header.tools = entries.clone();
            header.started_unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            Recorder::start(out, &header).map_err(RunError::Recording)?
        }
    };
    let (rec_physics, rec_haptic) = recorder.take_ends(n);
    // Five buffers: one being filled, one in flight, one shown, one on its way to or back from
    // the knot analysis, one spare.
    let (snap_tx, mut snap_rx) = snapshot_channel(&setup.world, 5);
    let (knot_tx, knots) = crossbeam::channel::bounded(16);
    let analysis = setup.world.knot_rod().map(|rod| {
        let watch = KnotWatch::new(rod, crate::math::Vec3::y(), CONFIRMATIONS);
        let (a, tap) = analysis::spawn(
            watch,
            analysis::PERIOD,
            recorder.take_knots(),
            Some(knot_tx),
        );
        snap_rx.set_tap(tap);
        a
    });
    let stop = Arc::new(AtomicBool::new(false));
    let steal = super::steal::StealMeter::start();
    let started = Instant::now();
    let haptic_period = setup.haptic_period;
    let mut links = PhysicsLinks {
        targets: Vec::with_capacity(n),
        proxies: Vec::with_capacity(n),
        haptic: Vec::with_capacity(n),
        hands: Vec::with_capacity(n),
        snapshots: snap_tx,
        snapshot_every: setup.snapshot_every,
        recorder: rec_physics,
    };
    let mut haptic = Vec::with_capacity(n);
    for (i, ((d, rec), entry)) in setup
        .devices
        .into_iter()
        .zip(rec_haptic)
        .zip(&entries)
        .enumerate()
    {
        let (coupling, _) = &couplings[i];
        let max_force = match d.device.max_force() {
            f if f > 0.0 && f.is_finite() => f,
            _ => NOMINAL_FORCE_LIMIT,
        };
        let cfg = HapticConfig {
            period: setup.haptic_period,
            map: d.map,
            coupling: coupling.clone(),
            limiter: ForceLimiter::new(max_force, TORQUE_LIMIT, RAMP),
            watchdog: Watchdog::default(),
        };
        let (proxy_tx, proxy_rx) = haptic::latest::<ProxyState>(256);
        let (target_tx, target_rx) = HeapRb::<ToolTarget>::new(256).split();
        let (fig_tx, fig_rx) = haptic::latest::<HapticFigures>(16);
        links.targets.push(haptic::Latest::from_consumer(target_rx));
        links.proxies.push(proxy_tx);
        links.haptic.push(fig_rx);
        links.hands.push(d.tool.hand);
        let thread = haptic::spawn(
            started,
            d.device,
            cfg,
            haptic::HapticLinks {
                proxy: proxy_rx,
                targets: target_tx,
                figures: Some(fig_tx),
                recorder: rec,
                tool: i as u8,
            },
            stop.clone(),
            setup.realtime,
        );
        haptic.push((d.tool.hand, entry.device.clone(), thread));
    }
    let physics = physics::spawn(
        started,
        setup.world,
        tools,
        setup.physics_dt,
        links,
        stop.clone(),
        setup.realtime,
    );
    Ok(Running {
        stop,
        haptic,
        physics,
        analysis,
        snapshots: snap_rx,
        knots,
        started,
        couplings,
        haptic_period,
        recorder,
        memory,
        steal,
    })
}

impl Running {
    /// Stop the loops and collect their reports.
    pub fn stop(self) -> Result<RunReport, RunError> {
        self.stop.store(true, Ordering::Relaxed);
        let wall = self.started.elapsed().as_secs_f64();
        let stolen = self.steal.as_ref().map(|m| m.stolen());
        let mut hands = Vec::with_capacity(self.haptic.len());
        let mut panicked = false;
        for (hand, device, thread) in self.haptic {
            match thread.join() {
                Ok(haptic) => hands.push(HandReport {
                    hand,
                    device,
                    haptic,
                }),
                Err(_) => panicked = true,
            }
        }
        let physics = self
            .physics
            .join()
            .map_err(|_| RunError::Panicked("physics"))?;
        if panicked {
            return Err(RunError::Panicked("haptic"));
        }
        // The analysis stops before the recorder, so its last records are written.
        let analysis = self.analysis.and_then(Analysis::stop);
        let recorder = self.recorder.finish(End {
            steps: physics.recorded_steps,
            digest: physics.world.digest(&physics.tools),
            wall,
            dropped: 0,
            note: "stopped".into(),
        });
        Ok(RunReport {
            hands,
            physics,
            wall,
            haptic_period_us: self.haptic_period.as_secs_f64() * 1e6,
            recorder,
            analysis,
            memory: self.memory,
            stolen,
        })
    }
}

impl RunReport {
    /// The most the hypervisor took from one CPU while the loops ran [s] (0 where unknown):
    /// the time to leave out of a loop's rate (`LoopSummary::rate_excluding`).
    pub fn stolen_s(&self) -> f64 {
        self.stolen.map_or(0.0, |s| s.max)
    }

    /// The lowest rate of any loop, haptic or physics, over the time the machine was ours
    /// (`LoopSummary::rate_excluding` with [`RunReport::stolen_s`]) [Hz].
    pub fn lowest_rate(&self) -> f64 {
        let s = self.stolen_s();
        self.hands
            .iter()
            .map(|h| h.haptic.stats.rate_excluding(s))
            .fold(self.physics.stats.rate_excluding(s), f64::min)
    }
}

impl fmt::Display for RunReport {
    /// First line `haptic 1000.1 Hz (p99 jitter 38 µs), physics 1000.0 Hz, overruns 0` (the
    /// slowest haptic loop, overruns of all loops), then one line per hand
    /// (`haptic right (mouse) 1000.1 Hz: period p50/p99/max …, device faults 0, …`), the
    /// physics loop, and the wall time and threads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.physics;
        let jitter = |s: &super::LoopSummary| (s.p99 - self.haptic_period_us).abs();
        let slowest = self
            .hands
            .iter()
            .map(|r| r.haptic.stats)
            .min_by(|a, b| a.rate.total_cmp(&b.rate))
            .unwrap_or_default();
        let worst_jitter = self
            .hands
            .iter()
            .map(|r| jitter(&r.haptic.stats))
            .fold(0.0, f64::max);
        let overruns: u64 = self.hands.iter().map(|r| r.haptic.stats.overruns).sum();
        writeln!(
            f,
            "haptic {:.1} Hz (p99 jitter {:.1} µs), physics {:.1} Hz, overruns {}",
            slowest.rate,
            worst_jitter,
            p.stats.rate,
            overruns + p.stats.overruns
        )?;
        for r in &self.hands {
            let h = &r.haptic;
            writeln!(
                f,
                "haptic {} ({}) {:.1} Hz: period p50/p99/max {:.1}/{:.1}/{:.1} µs (longest ending {:.3} s in), tick {:.1}/{:.1} µs mean/max, {} ticks, {} overruns; device faults {}{}, physics stalls {}, forces clamped {}, non-finite forces {}",
                r.hand.name(),
                r.device,
                h.stats.rate,
                h.stats.p50,
                h.stats.p99,
                h.stats.max,
                h.stats.max_at,
                h.stats.compute_mean,
                h.stats.compute_max,
                h.stats.ticks,
                h.stats.overruns,
                h.device_faults,
                if h.missed_ticks > 0 {
                    format!(" ({} missed servo ticks)", h.missed_ticks)
                } else {
                    String::new()
                },
                h.stalls,
                h.clamped,
                h.non_finite
            )?;
        }
        writeln!(
            f,
            "physics period p50/p99/max {:.1}/{:.1}/{:.1} µs (longest ending {:.3} s in), step {:.0}/{:.0} µs mean/max, {} steps, {} unconverged, {} failed, {} ticks dropped",
            p.stats.p50,
            p.stats.p99,
            p.stats.max,
            p.stats.max_at,
            p.stats.compute_mean,
            p.stats.compute_max,
            p.steps,
            p.unconverged,
            p.failed,
            p.dropped_ticks
        )?;
        if let Some((step, e)) = &p.first_error {
            writeln!(f, "physics first failed step {step}: {e}")?;
        }
        let threads = self
            .hands
            .iter()
            .map(|r| format!("haptic {} {}", r.hand.name(), r.haptic.priority))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(a) = &self.analysis {
            writeln!(f, "{a}")?;
        }
        write!(
            f,
            "wall {:.2} s; threads: {threads}, physics {}; {}",
            self.wall, p.priority, self.memory
        )?;
        if let Some(s) = &self.stolen {
            write!(f, "; {s}")?;
        }
        Ok(())
    }
}
