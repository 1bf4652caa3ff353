//! One haptic tick (runtime::haptic::HapticCore::tick) over the open-stylus profile: decode a
//! 23-byte pose report, map it, compute the coupling wrench against a tool state, run the
//! watchdog and the force limiter, encode and write the 14-byte force report. The transport is
//! in memory (no USB), so this is the loop's own cost. Budget: < 50 µs (ARCHITECTURE.md).
//! Run: `cargo bench --bench haptic`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use suture::coupling::{ForceLimiter, VirtualCoupling, Watchdog, WorkspaceMap};
use suture::device::{DeviceError, DeviceProfile, HidDevice, Transport};
use suture::math::{Quat, Vec3};
use suture::runtime::haptic::{HapticConfig, HapticCore, ProxyState};

/// Hands out one pose report per tick and swallows the force reports.
struct Loopback {
    report: Vec<u8>,
    pending: bool,
    written: usize,
}

impl Transport for Loopback {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, DeviceError> {
        if !self.pending {
            self.pending = true;
            return Ok(0);
        }
        self.pending = false;
        buf[..self.report.len()].copy_from_slice(&self.report);
        Ok(self.report.len())
    }
    fn write(&mut self, report: &[u8]) -> Result<(), DeviceError> {
        self.written += report.len();
        Ok(())
    }
}

fn bench(c: &mut Criterion) {
    let profile = DeviceProfile::load("devices/open_stylus.toml").expect("open_stylus profile");
    // Pose (12.345 mm, -0.5 mm, 100 mm), identity orientation, no buttons.
    let mut report = vec![1u8];
    for um in [12_345i32, -500, 100_000] {
        report.extend_from_slice(&um.to_le_bytes());
    }
    for q in [32767i16, 0, 0, 0] {
        report.extend_from_slice(&q.to_le_bytes());
    }
    report.extend_from_slice(&[0, 0]);
    let device = HidDevice::new(
        profile,
        Loopback {
            report,
            pending: true,
            written: 0,
        },
    );
    let (coupling, _) = VirtualCoupling::new(0.02, 1e-6, 20.0, 1.0, 1000.0);
    let cfg = HapticConfig {
        period: Duration::from_millis(1),
        map: WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3]).unwrap(),
        coupling,
        limiter: ForceLimiter::new(3.0, 0.1, 0.05),
        watchdog: Watchdog::default(),
    };
    let mut core = HapticCore::new(Box::new(device), cfg);
    let mut t = 0.0;
    c.bench_function("haptic tick (open stylus, HID decode+encode)", |b| {
        b.iter(|| {
            t += 1e-3;
            let proxy = ProxyState {
                published: t,
                position: Vec3::new(0.013, 0.0, 0.1),
                rotation: Quat::identity(),
                velocity: Vec3::zeros(),
                angular_velocity: Vec3::zeros(),
                coupled: true,
            };
            black_box(core.tick(black_box(t), Some(proxy)))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
