//! What reaches the hand is always safe: the force limiter's invariants over random inputs
//! (limits, forces, time steps, special values), and a device fault mid-run zeroes the force,
//! is counted, and the force ramps back in from zero when the device answers again.

use std::time::Duration;
use suture::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use suture::device::{DeviceError, DeviceSample, HapticDevice};
use suture::math::{Quat, Vec3};
use suture::runtime::haptic::{HapticConfig, HapticCore, ProxyState};

mod common;
use common::Rng;

/// Values that break naive code mixed with ordinary ones: NaN, ±inf, ±0, subnormals, huge,
/// arbitrary bit patterns and log-uniform magnitudes.
trait Values {
    fn value(&mut self) -> f64;
}

impl Values for Rng {
    fn value(&mut self) -> f64 {
        match self.next() % 10 {
            0 => [
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                0.0,
                -0.0,
                f64::MIN_POSITIVE / 3.0,
                f64::MAX,
                -f64::MAX,
            ][(self.next() % 8) as usize],
            1 => f64::from_bits(self.next() << 11 | self.next() & 0x7ff),
            // log-uniform magnitudes 1e-6 .. 1e4 with random sign
            _ => {
                let m = 10f64.powf(-6.0 + 10.0 * self.uniform());
                if self.next().is_multiple_of(2) { m } else { -m }
            }
        }
    }
}

#[test]
fn limiter_never_emits_a_non_finite_or_over_limit_force_and_ramps_after_faults() {
    let mut rng = Rng(0x5eed);
    for _ in 0..200 {
        let max_f = 10f64.powf(-2.0 + 4.0 * rng.uniform());
        let max_t = 10f64.powf(-3.0 + 3.0 * rng.uniform());
        let ramp = 0.1 * rng.uniform();
        let mut l = ForceLimiter::new(max_f, max_t, ramp);
        // Time since the last restart, as the limiter should see it.
        let mut since = 0.0f64;
        for _ in 0..2000 {
            let f = Vec3::new(rng.value(), rng.value(), rng.value());
            let t = Vec3::new(rng.value(), rng.value(), rng.value());
            let dt = match rng.next() % 20 {
                0 => f64::NAN,
                1 => -1e-3,
                2 => f64::INFINITY,
                _ => 1e-3 * (0.5 + rng.uniform()),
            };
            let (fo, to, ev) = l.apply(f, t, dt);
            assert!(fo.iter().chain(to.iter()).all(|v| v.is_finite()));
            assert!(fo.norm() <= max_f * (1.0 + 1e-12), "{fo:?} over {max_f}");
            assert!(to.norm() <= max_t * (1.0 + 1e-12), "{to:?} over {max_t}");
            let bad = !(f.iter().chain(t.iter()).all(|v| v.is_finite()) && dt.is_finite());
            if bad {
                assert!(ev.non_finite && fo == Vec3::zeros() && to == Vec3::zeros());
                since = 0.0;
            } else {
                since += dt.max(0.0);
                // Ramp-in: at most max · since / ramp while ramping.
                if ramp > 0.0 && since < ramp {
                    assert!(fo.norm() <= max_f * since / ramp * (1.0 + 1e-9) + 1e-300);
                }
            }
        }
    }
}

/// A device at rest that fails every poll in [0.5, 0.6) s.
struct Flaky {
    from: f64,
    to: f64,
    last_command: Option<(Vec3, bool)>,
}

/// A haptic core on a [`Flaky`] device that fails over `[from, to)` [s], with [`config`].
fn flaky_core(from: f64, to: f64) -> HapticCore {
    let dev = Flaky {
        from,
        to,
        last_command: None,
    };
    HapticCore::new(Box::new(dev), config())
}

impl HapticDevice for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        if t >= self.from && t < self.to {
            return Err(DeviceError::BadReport("garbage".to_string()));
        }
        Ok(Some(DeviceSample {
            t,
            position: Vec3::zeros(),
            rotation: Quat::identity(),
            velocity: Vec3::zeros(),
            angular_velocity: Vec3::zeros(),
            buttons: 0,
        }))
    }
    fn command(&mut self, f: &Vec3, _: &Vec3, enable: bool) -> Result<(), DeviceError> {
        self.last_command = Some((*f, enable));
        Ok(())
    }
    fn max_force(&self) -> f64 {
        2.0
    }
}

/// The haptic loop's settings of these tests: 1 kHz, identity workspace, a 300 N/m coupling,
/// a 2 N limit with a 50 ms ramp, the default watchdog (5 ms deadline, 10 ms fade).
fn config() -> HapticConfig {
    let (coupling, _) = VirtualCoupling::new(0.02, 0.0, 19.49, 1.0, 300.0);
    HapticConfig {
        period: Duration::from_millis(1),
        map: WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3]).unwrap(),
        coupling,
        limiter: ForceLimiter::new(2.0, 0.1, 0.05),
        watchdog: Watchdog::default(),
    }
}

/// The coupled tool at rest `x` [m] along +x, as the physics published it at `published` [s].
fn tool_at(published: f64, x: f64) -> ProxyState {
    ProxyState {
        published,
        position: Vec3::new(x, 0.0, 0.0),
        rotation: Quat::identity(),
        velocity: Vec3::zeros(),
        angular_velocity: Vec3::zeros(),
        coupled: true,
    }
}

#[test]
fn a_device_fault_zeroes_the_force_and_it_ramps_back_in() {
    // Tool held 1 cm from the device by a 300 N/m coupling: 3 N wanted, 2 N allowed.
    let mut core = flaky_core(0.5, 0.6);
    let proxy = |t: f64| tool_at(t, 0.01);
    let mut trace = Vec::new();
    for k in 0..1000 {
        let t = k as f64 * 1e-3;
        let target = core.tick(t, Some(proxy(t)));
        trace.push((t, target.is_some(), core.hand_force.norm()));
    }
    let at = |t: f64| trace[(t * 1e3).round() as usize];
    // Before: clamped at 2 N, pulling the hand toward the tool (+x).
    assert!((at(0.4).2 - 2.0).abs() < 1e-12);
    // During the fault: no target for the physics, zero force, every poll counted.
    for &(t, has_target, f) in &trace[500..600] {
        assert!(!has_target && f == 0.0, "t {t}: force {f}");
    }
    assert_eq!(core.device_faults, 100);
    // After: the force ramps in from zero over 50 ms (no step back to 2 N).
    let first = at(0.6).2;
    assert!(
        first <= 2.0 * 1e-3 / 0.05 + 1e-12,
        "first force after the fault {first}"
    );
    for w in trace[600..650].windows(2) {
        assert!(w[1].2 <= w[0].2 + 2.0 * 1e-3 / 0.05 + 1e-12);
    }
    assert!((at(0.7).2 - 2.0).abs() < 1e-12, "ramped back to the limit");
}

/// Physics stalls 7 ms (past the watchdog's 5 ms deadline, so the force has begun to fade)
/// and comes back: the force ramps back in from where the fade took it. Restarting the ramp
/// from zero dropped it from 90 % to 2 % in one tick (tests/faults.rs caught it on a
/// VM whose hypervisor stole 130 ms of a 3 s run).
#[test]
fn a_short_physics_stall_fades_the_force_and_it_ramps_back_from_the_fade() {
    // Tool held 5 mm from the device: a steady force under the 2 N limit.
    let mut core = flaky_core(10.0, 10.0);
    // Physics publishes every ms, except from 0.500 s to 0.507 s.
    let proxy = |t: f64| tool_at(if (0.5..0.507).contains(&t) { 0.5 } else { t }, 0.005);
    let mut f = Vec::new();
    for k in 0..700 {
        let t = k as f64 * 1e-3;
        core.tick(t, Some(proxy(t)));
        f.push(core.hand_force.norm());
    }
    // Steady before the stall; past the 5 ms deadline the watchdog fades it linearly over
    // 10 ms: to 90 % at 0.506 s (the state 6 ms old).
    let full = f[499];
    assert!(
        full > 0.5 && full < 2.0 && f[498] == full,
        "{} {full}",
        f[498]
    );
    let faded = f[506];
    assert!(
        (faded - 0.9 * full).abs() < 1e-12,
        "faded to {faded} N of {full} N"
    );
    // Back at 0.507 s: no drop, and a rise of at most the ramp's (the force × 1 ms / 50 ms) a
    // tick.
    let step = full * 1e-3 / 0.05 + 1e-12;
    assert!(
        f[507] >= faded && f[507] <= faded + step,
        "{faded} N → {} N at the resume",
        f[507]
    );
    for w in f[507..600].windows(2) {
        assert!(w[1] >= w[0] - 1e-12 && w[1] <= w[0] + step, "{w:?}");
    }
    assert!(
        (f[600] - full).abs() < 1e-12,
        "ramped back: {} of {full} N",
        f[600]
    );
}
