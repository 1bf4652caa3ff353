//! The 1 kHz pacer holds its rate. Rates, not per-tick jitter, are asserted (the machine is a
//! shared 2-core VM); jitter is reported by `suture jitter`.

use std::time::{Duration, Instant};
use suture::runtime::Pacer;

/// The timing tests run one at a time: each spins up to three 1 kHz threads, and the machine
/// has two cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn pacer_holds_1_khz_over_three_seconds() {
    let _serial = serial();
    // The haptic loop's pacer: 1 ms, up to 3 ms of lag made up.
    let mut p = Pacer::catching_up(
        Duration::from_millis(1),
        suture::runtime::haptic::HAPTIC_MAX_LAG,
    );
    let steal = suture::runtime::steal::StealMeter::start();
    let start = Instant::now();
    let mut work = Duration::ZERO;
    for _ in 0..3000 {
        let t = p.tick(work);
        // ~50 µs of work per tick, as a haptic tick might do.
        while t.elapsed() < Duration::from_micros(50) {
            std::hint::spin_loop();
        }
        work = t.elapsed();
    }
    let wall = start.elapsed().as_secs_f64();
    let stolen = steal.map(|m| m.stolen()).unwrap_or_default();
    let s = p.stats.summary();
    println!(
        "pacer: {} periods, {:.1} Hz (wall {:.3} s), p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs, {} overruns, compute {:.0}/{:.0} µs; {stolen}",
        s.ticks, s.rate, wall, s.p50, s.p99, s.max, s.overruns, s.compute_mean, s.compute_max
    );
    assert_eq!(s.ticks, 2999);
    // Over the time the machine was ours: a shared VM's hypervisor may take a CPU away, and
    // then no thread on it runs (runtime::steal).
    let rate = s.rate_excluding(stolen.max);
    assert!(
        rate >= 990.0,
        "achieved {rate} Hz ({} Hz; {stolen})",
        s.rate
    );
    assert!(s.compute_mean >= 50.0);
}

mod haptic {
    use ringbuf::traits::{Consumer, Producer, Split};
    use ringbuf::{HeapProd, HeapRb};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    use suture::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
    use suture::device::{DeviceError, DeviceSample, HapticDevice, ScriptedDevice};
    use suture::math::{Quat, Vec3};
    use suture::runtime::Pacer;
    use suture::runtime::haptic::{self, HapticConfig, ProxyState};

    /// A scripted device that records every commanded force with the time of the last poll
    /// (into a ring: the haptic loop must not lock even in a test).
    struct Recorder {
        inner: ScriptedDevice,
        t: f64,
        out: HeapProd<(f64, f64)>,
    }

    impl HapticDevice for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }
        fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
            self.t = t;
            self.inner.poll(t)
        }
        fn command(&mut self, f: &Vec3, _: &Vec3, _: bool) -> Result<(), DeviceError> {
            let _ = self.out.try_push((self.t, f.norm()));
            Ok(())
        }
        fn max_force(&self) -> f64 {
            3.0
        }
    }

    #[test]
    fn haptic_loop_renders_clamped_force_and_fades_it_when_physics_stalls() {
        let _serial = super::serial();
        // Device held at the origin; the "physics" holds the tool 1 cm away and publishes at
        // 1 kHz for 2.5 s (the loop's rate is asserted over 3 s), then stalls. k = m (2π 30 Hz)² = 711 N/m → 7.1 N, clamped to 3 N.
        let script = "0, 0, 0, 0, 0, 0, 0, 0\n10, 0, 0, 0, 0, 0, 0, 0\n";
        let (rec_tx, mut rec_rx) = HeapRb::<(f64, f64)>::new(10_000).split();
        let device = Recorder {
            inner: ScriptedDevice::parse("still.csv", script).unwrap(),
            t: 0.0,
            out: rec_tx,
        };
        let (coupling, _) = VirtualCoupling::new(0.02, 1e-6, 30.0, 1.0, 0.0);
        let cfg = HapticConfig {
            period: Duration::from_millis(1),
            map: WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3]).unwrap(),
            coupling,
            limiter: ForceLimiter::new(3.0, 0.1, 0.05),
            watchdog: Watchdog::default(),
        };
        let (mut proxy_tx, proxy_rx) = haptic::latest::<ProxyState>(64);
        let (targets_tx, mut targets_rx) = HeapRb::new(4096).split();
        let stop = Arc::new(AtomicBool::new(false));
        let steal = suture::runtime::steal::StealMeter::start();
        let start = Instant::now();
        let h = haptic::spawn(
            start,
            Box::new(device),
            cfg,
            haptic::HapticLinks {
                proxy: proxy_rx,
                targets: targets_tx,
                figures: None,
                recorder: suture::session::recorder::RecorderTx::disabled(),
                tool: 0,
            },
            stop.clone(),
            // As `suture run` does (SCHED_FIFO where permitted): its rate is asserted.
            true,
        );
        // The physics stand-in, on this thread. Drain the targets as the physics would.
        // Paced as the physics loop is (missed ticks made up, up to 20 ms).
        let mut pacer =
            Pacer::catching_up(Duration::from_millis(1), suture::runtime::physics::MAX_LAG);
        let stall_at = 2.5;
        let mut targets = 0usize;
        loop {
            let t = (pacer.tick(Duration::ZERO) - start).as_secs_f64();
            while targets_rx.try_pop().is_some() {
                targets += 1;
            }
            if t < stall_at {
                let _ = proxy_tx.try_push(ProxyState {
                    published: t,
                    position: Vec3::new(0.01, 0.0, 0.0),
                    rotation: Quat::identity(),
                    velocity: Vec3::zeros(),
                    angular_velocity: Vec3::zeros(),
                    coupled: true,
                });
            }
            if t > stall_at + 0.5 {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let report = h.join().expect("haptic thread");
        let stolen = steal.map(|m| m.stolen()).unwrap_or_default();
        let forces: Vec<(f64, f64)> = std::iter::from_fn(|| rec_rx.try_pop()).collect();
        let peak = forces.iter().map(|f| f.1).fold(0.0, f64::max);
        // The clamped 3 N is held while physics runs.
        let window: Vec<&(f64, f64)> = forces
            .iter()
            .filter(|(t, _)| *t > 0.2 && *t < stall_at - 0.05)
            .collect();
        let at_limit = window
            .iter()
            .filter(|(_, f)| (f - 3.0).abs() < 1e-9)
            .count();
        // Every tick holds it, except those the watchdog faded because this test's physics
        // stand-in (not real-time) itself stalled past the deadline: each such stall costs
        // under 100 ticks (the 5 ms deadline, the fade, the ramp back; measured 49), as in
        // tests/faults.rs. The deliberate stall at `stall_at` is outside the window.
        let own_stalls = report.stalls.saturating_sub(1) as usize;
        let held = window.len() - at_limit <= 100 * own_stalls && window.len() > 2000;
        // Zero within 5 ms deadline + 10 ms fade of the last publication (plus 2 ms for the
        // two threads' scheduling).
        let last_pub = stall_at;
        let late: Vec<&(f64, f64)> = forces
            .iter()
            .filter(|(t, _)| *t > last_pub + 0.017)
            .collect();
        println!(
            "haptic: {:.1} Hz, p99 {:.1} µs, {} commands, peak {peak:.3} N, {targets} targets, {stolen}, {report:?}",
            report.stats.rate,
            report.stats.p99,
            forces.len()
        );
        // Over the time the machine was ours (runtime::steal).
        let rate = report.stats.rate_excluding(stolen.max);
        assert!(rate >= 990.0, "{rate} Hz ({}; {stolen})", report.stats.rate);
        assert!(peak <= 3.0 + 1e-12, "peak {peak}");
        assert!(
            held,
            "the clamped 3 N was not held while physics ran: {at_limit} of {} ticks, {own_stalls} stalls of the stand-in",
            window.len()
        );
        assert!(
            !late.is_empty() && late.iter().all(|(_, f)| *f == 0.0),
            "force after the stall"
        );
        assert!(report.stalls >= 1, "the deliberate stall was not seen");
        assert!(report.clamped > 500 && report.device_faults == 0);
        assert!(targets > 1400, "{targets} targets reached the physics");
    }
}

mod end_to_end {
    use std::time::Duration;
    use suture::coupling::WorkspaceMap;
    use suture::device::{DeviceError, DeviceSample, HapticDevice, ScriptedDevice};
    use suture::math::{Quat, Vec3};
    use suture::runtime::pacer::{HAPTIC_PRIORITY, MemoryLock, PHYSICS_NICE, Priority};
    use suture::runtime::run::{self, RunSetup};
    use suture::scene::{self, Overrides};

    /// A 10 cm nylon 2-0 suture clamped at the origin, its free end held by the tool (20 g,
    /// 15.9 Hz critically damped: k = 200 N/m), gravity on.
    const LIFT_SCENE: &str = r#"
version = 1
[solver]
model = "cosserat"
dt = 1e-3
elements = 30
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
end = "free"
mass_damping = 2.0
[tool]
mass = 0.02
frequency = 15.915
damping_ratio = 1.0
"#;

    fn setup(text: &str, device: Box<dyn HapticDevice>) -> RunSetup {
        let sc = scene::parse("test.toml", text, Overrides::default()).unwrap();
        let tool = sc.tools[0];
        let frame = run::tool_frame(&sc.world, &tool);
        RunSetup {
            world: sc.world,
            devices: vec![run::DeviceSetup {
                tool,
                device,
                map: WorkspaceMap::new(1.0, tool.workspace_offset, Quat::identity(), [false; 3])
                    .unwrap()
                    .with_frame(frame),
                device_max_stiffness: 0.0,
                label: String::new(),
                profile_text: String::new(),
            }],
            haptic_period: Duration::from_millis(1),
            physics_dt: Duration::from_millis(1),
            snapshot_every: 16,
            record: None,
            // As `suture run` does (SCHED_FIFO where permitted).
            realtime: true,
        }
    }

    #[test]
    fn haptic_and_physics_threads_drive_the_suture_tip_along_the_script() {
        let _serial = super::serial();
        // The stylus lifts the tip 2 cm in 1 s while drawing it 4 mm back, to (0.096, 0.02):
        // within the rod's reach, so it bends to follow.
        let script = "0.0, 0, 0, 0, 0, 0, 0, 0\n0.2, 0, 0, 0, 0, 0, 0, 0\n1.2, -0.004, 0.02, 0, 0, 0, 0, 0\n";
        let device = ScriptedDevice::parse("lift.csv", script).unwrap();
        let mut running = run::start(setup(LIFT_SCENE, Box::new(device))).unwrap();
        // Take snapshots as a viewer would (the pool has 4 buffers). The run lasts 3 s, as
        // every run whose rate is asserted: the shared CI machine at times freezes both loops
        // at once for up to 26 ms (CI, 2026-11-24: 1580 ticks in 1.6 s), and 1 % of 3 s is
        // 30 ms.
        let mut snap_tool = None;
        for _ in 0..30 {
            std::thread::sleep(Duration::from_millis(100));
            snap_tool = running.snapshots.latest().and_then(|s| s.tool().copied());
        }
        let r = running.stop().unwrap();
        let n = 30;
        let tip = r.physics.world.rods[0].positions()[n];
        let err = (tip - Vec3::new(0.096, 0.02, 0.0)).norm();
        let spring = &r.physics.tools[0].coupling;
        println!("end to end: tip {tip:?} (error {err:.2e} m)\n{r}");
        assert!(err < 1e-3, "tip {tip:?}");
        assert!(r.lowest_rate() >= 990.0, "{r}");
        // The haptic loop asked for SCHED_FIFO, the physics loop for a raised nice value (never
        // real-time: pacer::PHYSICS_NICE says why); both granted where the user may, e.g. as
        // root on CI, both refused otherwise.
        match (r.hands[0].haptic.priority, r.physics.priority) {
            (Priority::Realtime(h), Priority::Nice(p)) => {
                assert_eq!((h, p), (HAPTIC_PRIORITY, PHYSICS_NICE))
            }
            (Priority::Refused(_), Priority::NiceRefused(_)) => {}
            other => panic!("priorities {other:?}"),
        }
        // The memory was locked before the loops started where the process may (as root on
        // CI): the kernel counts it locked (VmLck in /proc/self/status).
        if r.memory == MemoryLock::Locked {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let kb: u64 = status
                .lines()
                .find_map(|l| l.strip_prefix("VmLck:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .expect("VmLck");
            assert!(kb > 1000, "{kb} kB locked");
        } else {
            assert!(
                matches!(r.memory, MemoryLock::Limited(_) | MemoryLock::Refused(_)),
                "{:?}",
                r.memory
            );
        }
        // Watchdog stalls (physics state older than 5 ms) are per-tick events that a shared VM
        // can cause on its own: printed above, not asserted.
        assert_eq!(
            (
                r.hands[0].haptic.device_faults,
                r.hands[0].haptic.non_finite
            ),
            (0, 0)
        );
        assert_eq!((r.physics.failed, r.physics.unconverged), (0, 0));
        assert!(spring.force.norm() < 0.05);
        // The viewer's snapshots carry the tool near the tip.
        let st = snap_tool.expect("a snapshot with the tool");
        assert!(st.grasped && (st.position - tip).norm() < 2e-3);
    }

    /// The quasi-static model in the loop (docs/derivations/cosserat.md §C.6): a STRANDS suture (5 cm, N = 20, curved
    /// at rest with radius 5 cm so it never passes the straight, fully stretched state where
    /// shooting is singular) clamped at the origin, its tip coupled by the solved tip force;
    /// the stylus lifts the tip 5 mm and draws it 1 mm back. The physics solves the coupled
    /// equilibrium each tick; the tool ends where the stylus put it, held back only by the
    /// rod's force / k.
    #[test]
    fn a_quasi_static_suture_follows_the_stylus() {
        let _serial = super::serial();
        let scene = r#"
version = 1
gravity = [0.0, 0.0, 0.0]
[solver]
model = "strands"
elements = 20
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.0], [0.05, 0.0, 0.0]]
normal = [0.0, 1.0, 0.0]
rest_curvature = [0.0, 20.0]
start = "clamped"
[tool]
mass = 0.02
frequency = 5.0
"#;
        let script = "0.0, 0, 0, 0, 0, 0, 0, 0
0.2, 0, 0, 0, 0, 0, 0, 0
1.0, -0.001, 0.005, 0, 0, 0, 0, 0
";
        let device = ScriptedDevice::parse("lift.csv", script).unwrap();
        let st = setup(scene, Box::new(device));
        let sc_tip0 = st.devices[0].tool.workspace_offset;
        let running = run::start(st).unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let r = running.stop().unwrap();
        let x = r.physics.world.rods[0].positions();
        let tip = x[x.len() - 1];
        let spring = &r.physics.tools[0].coupling;
        let tip0 = sc_tip0;
        println!(
            "quasi-static: tip {tip:?}, target {:?}, coupling force {:?}, last error {:?}\n{r}",
            spring.target, spring.force, r.physics.first_error
        );
        // A tick whose STRANDS solve is refused would keep the previous state (reported, the
        // loop goes on), but nothing here should refuse one: the stylus moves at most 6.4 µm a
        // tick and each solve starts warm from the last equilibrium. Measured 0 failed of 1502
        // ticks in seven runs (`cargo test --release --test runtime
        // a_quasi_static_suture_follows_the_stylus -- --nocapture`); was ≤ 1 % of the ticks.
        assert_eq!(
            r.physics.failed, 0,
            "{} of {} ticks failed, last error {:?}",
            r.physics.failed, r.physics.steps, r.physics.first_error
        );
        assert!(r.physics.steps > 100);
        // The tool follows the stylus; the rod's bending pulls it back by force/k only.
        let target = tip0 + Vec3::new(-0.001, 0.005, 0.0);
        let k = 0.02 * (2.0 * std::f64::consts::PI * 5.0f64).powi(2);
        assert!((tip + spring.force / k - target).norm() < 1e-6 * 0.05 + 1e-9);
        assert!((tip - target).norm() < 1e-3, "{tip:?}");
    }

    /// A scripted stylus drawing 1 cm circles over the default suturing scene.
    fn circles() -> String {
        let mut s = String::new();
        for k in 0..=400 {
            let t = k as f64 * 0.01;
            let a = 2.0 * std::f64::consts::PI * t;
            s += &format!(
                "{t}, {}, {}, {}, 0, 0, 0, 0\n",
                0.01 * a.cos() - 0.01,
                0.01 * a.sin(),
                0.005 * (0.5 * a).sin()
            );
        }
        s
    }

    #[test]
    fn the_default_scene_runs_three_seconds_with_both_loops_at_rate() {
        let _serial = super::serial();
        let text = std::fs::read_to_string("scenes/suturing.toml").unwrap();
        let device = ScriptedDevice::parse("circles.csv", &circles()).unwrap();
        let running = run::start(setup(&text, Box::new(device))).unwrap();
        std::thread::sleep(Duration::from_secs(3));
        let r = running.stop().unwrap();
        println!("default scene, 3 s:\n{r}");
        let stolen = r.stolen_s();
        assert!(
            r.hands[0].haptic.stats.rate_excluding(stolen) >= 990.0,
            "haptic {} ({stolen} s stolen)",
            r.hands[0].haptic.stats.rate
        );
        // The physics never falls behind: one step per millisecond of the machine's time.
        let expected = (r.wall - stolen) / 1e-3;
        assert!(
            r.physics.steps as f64 >= 0.99 * expected - 2.0,
            "{} steps in {:.3} s",
            r.physics.steps,
            r.wall
        );
        assert!(
            r.physics.stats.rate_excluding(stolen) >= 990.0,
            "physics {} ({stolen} s stolen)",
            r.physics.stats.rate
        );
        assert_eq!(r.physics.failed, 0);
        assert_eq!(r.hands[0].haptic.device_faults, 0);
    }

    /// A scripted device that fails (I/O error) for polls in [from, to) s.
    struct Failing {
        inner: ScriptedDevice,
        from: f64,
        to: f64,
    }

    impl HapticDevice for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
            if t >= self.from && t < self.to {
                return Err(DeviceError::Io("unplugged".to_string()));
            }
            self.inner.poll(t)
        }
        fn command(&mut self, _: &Vec3, _: &Vec3, _: bool) -> Result<(), DeviceError> {
            Ok(())
        }
        fn max_force(&self) -> f64 {
            3.0
        }
    }

    #[test]
    fn a_device_that_fails_mid_run_is_reported_and_the_session_goes_on() {
        let _serial = super::serial();
        // The stylus pulls the tip 1 cm off its rest pose and holds it there: a steady force.
        let script = "0.0, 0, 0, 0, 0, 0, 0, 0\n0.3, 0, 0.01, 0, 0, 0, 0, 0\n";
        let device = Failing {
            inner: ScriptedDevice::parse("hold.csv", script).unwrap(),
            from: 0.8,
            to: 1.1,
        };
        let running = run::start(setup(LIFT_SCENE, Box::new(device))).unwrap();
        // 3 s: the physics rate is asserted over 3 s.
        std::thread::sleep(Duration::from_millis(3000));
        let r = running.stop().unwrap();
        println!("failing device:\n{r}");
        // ~300 failed polls (one per tick in the 0.3 s fault), each reported.
        assert!(
            r.hands[0].haptic.device_faults >= 250 && r.hands[0].haptic.device_faults <= 310,
            "{}",
            r.hands[0].haptic.device_faults
        );
        // The session went on: the physics kept its rate through and after the fault.
        assert!(r.physics.stats.rate_excluding(r.stolen_s()) >= 990.0 && r.physics.failed == 0);
        assert!(r.physics.steps as f64 >= 0.99 * (r.wall - r.stolen_s()) / 1e-3 - 2.0);
        assert!(r.hands[0].haptic.non_finite == 0);
    }
}

#[test]
fn run_headless_prints_its_loop_stats() {
    let _serial = serial();
    let script = std::env::temp_dir().join(format!("suture-still-{}.csv", std::process::id()));
    std::fs::write(
        &script,
        "0, 0, 0, 0, 0, 0, 0, 0\n1, 0, 0.005, 0, 0, 0, 0, 0\n",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
        .args([
            "run",
            "scenes/suturing.toml",
            "--headless",
            // 3 s: rates are asserted over 3 s.
            "--duration",
            "3",
        ])
        .arg(format!("--device=scripted:{}", script.display()))
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&script);
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    // First line: `haptic 1000.0 Hz (p99 jitter 0.5 µs), physics 999.9 Hz, overruns 0`.
    let first = out.lines().next().unwrap();
    let num = |after: &str| -> f64 {
        let i = first.find(after).unwrap() + after.len();
        first[i..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(first.starts_with("haptic ") && first.contains("p99 jitter"));
    // Over the time the machine was ours, as every rate test (docs/running.md, "Rates on a
    // virtual machine"): the threads line ends with `hypervisor steal N ms`, the most taken
    // from one CPU; the rates printed are over the whole 3 s (`LoopSummary::rate_excluding`).
    // (None where /proc/stat has no steal counters: nothing is excluded.)
    let stolen_ms: f64 = out
        .lines()
        .find_map(|l| l.split("hypervisor steal ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .map_or(0.0, |v| v.parse().unwrap());
    let ours = |rate: f64| rate * 3.0 / (3.0 - 1e-3 * stolen_ms);
    assert!(
        ours(num("haptic ")) >= 990.0 && ours(num("physics ")) >= 990.0,
        "{first} ({stolen_ms} ms stolen)"
    );
}
