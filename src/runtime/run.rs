//! Starting and stopping a simulator session: the haptic loop and the physics loop on their
//! threads, wired by lock-free rings, with the snapshot channel handed to the caller (the
//! viewer on the main thread, or a headless wait).

use super::haptic::{self, HapticConfig, HapticFigures, HapticReport, ProxyState, ToolTarget};
use super::physics::{self, PhysicsLinks, PhysicsReport};
use crate::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use crate::device::HapticDevice;
use crate::session::format::{End, Header};
use crate::session::recorder::{DIGEST_EVERY, Recorder, RecorderReport};
use crate::sim::World;
use crate::sim::snapshot::{SnapshotRx, snapshot_channel};
use crate::sim::tool::ToolSetup;
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

/// What a session needs.
pub struct RunSetup {
    /// The world (every rod a dynamic Cosserat rod).
    pub world: World,
    /// The tool the device drives.
    pub tool: ToolSetup,
    /// The device.
    pub device: Box<dyn HapticDevice>,
    /// Device → world mapping (its `frame` should be the held segment's frame at t = 0, see
    /// [`tool_frame`]).
    pub map: WorkspaceMap,
    /// The device's largest stable stiffness [N/m] (0: no limit beyond the scene's).
    pub device_max_stiffness: f64,
    /// Haptic loop period and physics step.
    pub haptic_period: Duration,
    /// See `haptic_period`.
    pub physics_dt: Duration,
    /// Publish a snapshot every this many physics steps.
    pub snapshot_every: u64,
    /// Record the session to this writer, with this header (its scene and device fields set
    /// by the caller; the coupling, tool, periods and start time are filled in here). None:
    /// no recording.
    pub record: Option<(Box<dyn std::io::Write + Send>, Header)>,
    /// Ask for real-time scheduling (`SCHED_FIFO`) for the haptic and physics loops' threads
    /// (runtime::pacer::request_realtime); refused, they run at normal priority and the
    /// report says so.
    pub realtime: bool,
}

/// A running session.
pub struct Running {
    stop: Arc<AtomicBool>,
    haptic: std::thread::JoinHandle<HapticReport>,
    physics: std::thread::JoinHandle<PhysicsReport>,
    /// Snapshots of the world (the viewer takes them).
    pub snapshots: SnapshotRx,
    /// When the loops started.
    pub started: Instant,
    /// The coupling used (after the stiffness cap), and whether it was capped.
    pub coupling: (VirtualCoupling, bool),
    haptic_period: Duration,
    recorder: Recorder,
}

/// What a session did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The haptic loop.
    pub haptic: HapticReport,
    /// The physics loop (with the final world).
    pub physics: PhysicsReport,
    /// Wall time the loops ran [s].
    pub wall: f64,
    /// The haptic loop's target period [µs] (jitter = |p99 period − this|).
    pub haptic_period_us: f64,
    /// The recorder (a default report when the session was not recorded).
    pub recorder: RecorderReport,
}

/// The frame of the held segment at t = 0 (the map's `frame`: a device at its identity
/// orientation holds the tool as the scene placed it).
pub fn tool_frame(world: &World, tool: &ToolSetup) -> crate::math::Quat {
    world.held_frame(tool.rod, tool.node)
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
    /// The recording could not be started.
    #[error("recording: {0}")]
    Recording(std::io::Error),
    /// A loop's thread panicked.
    #[error("the {0} thread panicked")]
    Panicked(&'static str),
}

/// Start the haptic and physics loops.
pub fn start(setup: RunSetup) -> Result<Running, RunError> {
    setup.world.check_realtime()?;
    let t = setup.tool;
    let max_k = if setup.device_max_stiffness > 0.0 {
        t.max_stiffness.min(setup.device_max_stiffness)
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
    if let Some((mass, inertia)) = setup.world.needle_mass()
        && mass > 0.0
    {
        coupling.cr = coupling.c * inertia / mass;
    }
    // A quasi-static (STRANDS) rod is coupled by its tip force only (docs/derivations/cosserat.md §C.6).
    if setup.world.is_quasi_static(t.rod) {
        coupling.kr = 0.0;
    }
    let gains = crate::sim::Gains {
        k: coupling.k,
        c: coupling.c,
        kr: coupling.kr,
    };
    let tool = crate::sim::Tool::at_start(&setup.world, t.rod, t.node, gains)?;
    let max_force = match setup.device.max_force() {
        f if f > 0.0 && f.is_finite() => f,
        _ => NOMINAL_FORCE_LIMIT,
    };
    let cfg = HapticConfig {
        period: setup.haptic_period,
        map: setup.map,
        coupling: coupling.clone(),
        limiter: ForceLimiter::new(max_force, TORQUE_LIMIT, RAMP),
        watchdog: Watchdog::default(),
    };
    let mut recorder = match setup.record {
        None => Recorder::disabled(),
        Some((out, mut header)) => {
            header.dt = setup.physics_dt.as_secs_f64();
            header.haptic_period = setup.haptic_period.as_secs_f64();
            header.digest_every = DIGEST_EVERY;
            header.tool_rod = t.rod as u64;
            header.tool_node = t.node as u64;
            (header.k, header.c, header.kr) = (gains.k, gains.c, gains.kr);
            header.started_unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            Recorder::start(out, &header).map_err(RunError::Recording)?
        }
    };
    let (rec_physics, rec_haptic) = recorder.take_ends();
    let (proxy_tx, proxy_rx) = haptic::latest::<ProxyState>(256);
    let (target_tx, target_rx) = HeapRb::<ToolTarget>::new(256).split();
    let (fig_tx, fig_rx) = haptic::latest::<HapticFigures>(16);
    let (snap_tx, snap_rx) = snapshot_channel(&setup.world, 4);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let haptic_period = setup.haptic_period;
    let haptic = haptic::spawn(
        started,
        setup.device,
        cfg,
        haptic::HapticLinks {
            proxy: proxy_rx,
            targets: target_tx,
            figures: Some(fig_tx),
            recorder: rec_haptic,
        },
        stop.clone(),
        setup.realtime,
    );
    let physics = physics::spawn(
        started,
        setup.world,
        Some(tool),
        setup.physics_dt,
        PhysicsLinks {
            targets: haptic::Latest::from_consumer(target_rx),
            proxy: proxy_tx,
            haptic: fig_rx,
            snapshots: snap_tx,
            snapshot_every: setup.snapshot_every,
            recorder: rec_physics,
        },
        stop.clone(),
        setup.realtime,
    );
    Ok(Running {
        stop,
        haptic,
        physics,
        snapshots: snap_rx,
        started,
        coupling: (coupling, capped),
        haptic_period,
        recorder,
    })
}

impl Running {
    /// Stop both loops and collect their reports.
    pub fn stop(self) -> Result<RunReport, RunError> {
        self.stop.store(true, Ordering::Relaxed);
        let wall = self.started.elapsed().as_secs_f64();
        let haptic = self
            .haptic
            .join()
            .map_err(|_| RunError::Panicked("haptic"))?;
        let physics = self
            .physics
            .join()
            .map_err(|_| RunError::Panicked("physics"))?;
        let recorder = self.recorder.finish(End {
            steps: physics.recorded_steps,
            digest: physics.world.digest(),
            wall,
            dropped: 0,
            note: "stopped".into(),
        });
        Ok(RunReport {
            haptic,
            physics,
            wall,
            haptic_period_us: self.haptic_period.as_secs_f64() * 1e6,
            recorder,
        })
    }
}

impl fmt::Display for RunReport {
    /// `haptic 1000.1 Hz (p99 jitter 38 µs), physics 1000.0 Hz, overruns 0` and the rest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, p) = (&self.haptic, &self.physics);
        let jitter = |s: &super::LoopSummary, target_us: f64| (s.p99 - target_us).abs();
        writeln!(
            f,
            "haptic {:.1} Hz (p99 jitter {:.1} µs), physics {:.1} Hz, overruns {}",
            h.stats.rate,
            jitter(&h.stats, self.haptic_period_us),
            p.stats.rate,
            h.stats.overruns + p.stats.overruns
        )?;
        writeln!(
            f,
            "haptic period p50/p99/max {:.1}/{:.1}/{:.1} µs, tick {:.1}/{:.1} µs mean/max, {} ticks",
            h.stats.p50,
            h.stats.p99,
            h.stats.max,
            h.stats.compute_mean,
            h.stats.compute_max,
            h.stats.ticks
        )?;
        writeln!(
            f,
            "physics period p50/p99/max {:.1}/{:.1}/{:.1} µs, step {:.0}/{:.0} µs mean/max, {} steps, {} unconverged, {} failed, {} ticks dropped",
            p.stats.p50,
            p.stats.p99,
            p.stats.max,
            p.stats.compute_mean,
            p.stats.compute_max,
            p.steps,
            p.unconverged,
            p.failed,
            p.dropped_ticks
        )?;
        writeln!(
            f,
            "device faults {}, physics stalls {}, forces clamped {}, non-finite forces {}, wall {:.2} s",
            h.device_faults, h.stalls, h.clamped, h.non_finite, self.wall
        )?;
        write!(f, "threads: haptic {}, physics {}", h.priority, p.priority)
    }
}
