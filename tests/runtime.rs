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
fn pacer_holds_1_khz_over_two_seconds() {
    let _serial = serial();
    let mut p = Pacer::new(Duration::from_millis(1));
    let start = Instant::now();
    let mut work = Duration::ZERO;
    for _ in 0..2000 {
        let t = p.tick(work);
        // ~50 µs of work per tick, as a haptic tick might do.
        while t.elapsed() < Duration::from_micros(50) {
            std::hint::spin_loop();
        }
        work = t.elapsed();
    }
    let wall = start.elapsed().as_secs_f64();
    let s = p.stats.summary();
    println!(
        "pacer: {} periods, {:.1} Hz (wall {:.3} s), p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs, {} overruns, compute {:.0}/{:.0} µs",
        s.ticks, s.rate, wall, s.p50, s.p99, s.max, s.overruns, s.compute_mean, s.compute_max
    );
    assert_eq!(s.ticks, 1999);
    assert!(s.rate >= 990.0, "achieved {} Hz", s.rate);
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
        // 1 kHz for 1 s, then stalls. k = m (2π 30 Hz)² = 711 N/m → 7.1 N, clamped to 3 N.
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
        let start = Instant::now();
        let h = haptic::spawn(
            start,
            Box::new(device),
            cfg,
            proxy_rx,
            targets_tx,
            stop.clone(),
        );
        // The physics stand-in, on this thread. Drain the targets as the physics would.
        let mut pacer = Pacer::new(Duration::from_millis(1));
        let stall_at = 1.0;
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
                });
            }
            if t > 1.5 {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let report = h.join().expect("haptic thread");
        let forces: Vec<(f64, f64)> = std::iter::from_fn(|| rec_rx.try_pop()).collect();
        let peak = forces.iter().map(|f| f.1).fold(0.0, f64::max);
        // The clamped 3 N is held while physics runs (a tick or two may fade if the shared VM
        // stalls this test's physics stand-in past the 5 ms deadline on its own).
        let window: Vec<&(f64, f64)> = forces
            .iter()
            .filter(|(t, _)| *t > 0.2 && *t < 0.95)
            .collect();
        let at_limit = window
            .iter()
            .filter(|(_, f)| (f - 3.0).abs() < 1e-9)
            .count();
        let held = at_limit as f64 >= 0.98 * window.len() as f64 && window.len() > 700;
        // Zero within 5 ms deadline + 10 ms fade of the last publication (plus 2 ms for the
        // two threads' scheduling).
        let last_pub = stall_at;
        let late: Vec<&(f64, f64)> = forces
            .iter()
            .filter(|(t, _)| *t > last_pub + 0.017)
            .collect();
        println!(
            "haptic: {:.1} Hz, p99 {:.1} µs, {} commands, peak {peak:.3} N, {targets} targets, {report:?}",
            report.stats.rate,
            report.stats.p99,
            forces.len()
        );
        assert!(report.stats.rate >= 990.0, "{}", report.stats.rate);
        assert!(peak <= 3.0 + 1e-12, "peak {peak}");
        assert!(held, "the clamped 3 N was not held while physics ran");
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
    use ringbuf::HeapRb;
    use ringbuf::traits::Split;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    use suture::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
    use suture::device::ScriptedDevice;
    use suture::math::{Mat3, Quat, Vec3};
    use suture::rod::{
        CosseratConfig, CosseratParams, CosseratRod, Drive, EndCondition, EndTarget, RodParams,
    };
    use suture::runtime::{haptic, physics};
    use suture::sim::tool::ToolSpring;

    #[test]
    fn haptic_and_physics_threads_drive_the_suture_tip_along_the_script() {
        let _serial = super::serial();
        // A 10 cm nylon 2-0 suture clamped at the origin, its tip coupled (k = 200 N/m,
        // critically damped for a 20 g tool) to a scripted stylus that lifts it 2 cm in 1 s while
        // drawing it 4 mm back, to (0.096, 0.02): within the rod's reach, so it bends to follow.
        let p = RodParams {
            radius: 0.15e-3,
            youngs_modulus: 2e9,
            shear_modulus: 2e9 / 2.8,
            density: 1140.0,
        };
        let (l, n) = (0.1, 30);
        let rod = CosseratRod::straight(
            CosseratParams {
                mass_damping: 2.0,
                ..CosseratParams::new(&p, l, n)
            },
            (EndCondition::Clamped, EndCondition::Free),
            CosseratConfig::default(),
            Vec3::zeros(),
            Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()]),
        );
        let held = EndTarget {
            position: Vec3::zeros(),
            rotation: rod.q[0],
        };
        let drive = Drive {
            start: held,
            end: held,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            start_force: Vec3::zeros(),
            start_torque: Vec3::zeros(),
            end_force: Vec3::zeros(),
            end_torque: Vec3::zeros(),
        };
        let (coupling, _) = VirtualCoupling::new(0.02, 1e-6, 15.915, 1.0, 1000.0);
        let mut spring = ToolSpring::new(n, coupling.k, coupling.c);
        spring.target = rod.x[n];
        let script = "0.0, 0, 0, 0, 0, 0, 0, 0\n0.2, 0, 0, 0, 0, 0, 0, 0\n1.2, -0.004, 0.02, 0, 0, 0, 0, 0\n";
        let device = ScriptedDevice::parse("lift.csv", script).unwrap();
        let cfg = haptic::HapticConfig {
            period: Duration::from_millis(1),
            map: WorkspaceMap::new(1.0, Vec3::new(l, 0.0, 0.0), Quat::identity(), [false; 3])
                .unwrap(),
            coupling,
            limiter: ForceLimiter::new(3.0, 0.1, 0.05),
            watchdog: Watchdog::default(),
        };
        let (proxy_tx, proxy_rx) = haptic::latest(256);
        let (target_tx, target_rx_raw) = HeapRb::new(256).split();
        let target_rx = haptic::Latest::from_consumer(target_rx_raw);
        let stop = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let hap = haptic::spawn(
            start,
            Box::new(device),
            cfg,
            proxy_rx,
            target_tx,
            stop.clone(),
        );
        let phys = physics::spawn(
            start,
            rod,
            drive,
            spring,
            None,
            Duration::from_millis(1),
            target_rx,
            proxy_tx,
            stop.clone(),
        );
        std::thread::sleep(Duration::from_millis(1600));
        stop.store(true, Ordering::Relaxed);
        let h = hap.join().expect("haptic thread");
        let ph = phys.join().expect("physics thread");
        let tip = ph.rod.x[n];
        let err = (tip - Vec3::new(l - 0.004, 0.02, 0.0)).norm();
        println!(
            "end to end: tip {tip:?} (error {err:.2e} m); haptic {:.1} Hz p99 {:.0} µs, stalls {}; physics {:.1} Hz, step {:.0}/{:.0} µs mean/max, {} steps, {} unconverged, {} failed; coupling force {:?} N",
            h.stats.rate,
            h.stats.p99,
            h.stalls,
            ph.stats.rate,
            ph.stats.compute_mean,
            ph.stats.compute_max,
            ph.steps,
            ph.unconverged,
            ph.failed,
            ph.spring.force
        );
        assert!(err < 1e-3, "tip {tip:?}");
        assert!(h.stats.rate >= 990.0 && ph.stats.rate >= 990.0);
        // Watchdog stalls (physics state older than 5 ms) are per-tick events that a shared VM
        // can cause on its own: printed above, not asserted.
        assert_eq!((h.device_faults, h.non_finite), (0, 0));
        assert_eq!((ph.failed, ph.unconverged), (0, 0));
        assert!(ph.spring.force.norm() < 0.05);
    }
}
