//! A device profile one step past the parser: opened against a simulated HID device and
//! driven by the haptic loop's tick, as `suture run --device hid:PROFILE` does
//! (src/cli/run.rs `open_hid`, runtime::run::start): the profile is parsed
//! (`DeviceProfile::parse`, what `DeviceProfile::load` runs on the file), matched against the
//! device's vendor and product ids, opened as a `HidDevice` over a transport that plays the
//! input's reports (the place of hidapi's), and ticked by a `HapticCore` with the coupling,
//! limiter and watchdog a session gives it, for the right-hand tool of `scenes/suturing.toml`.
//! The core polls the reports, maps the pose and commands forces, which the profile encodes
//! into output reports written to the device.
//!
//! Input: the profile's TOML text, a 0xFF byte (never in UTF-8), then reports, each a length
//! byte and that many bytes (length 0: nothing pending at this read; 0xFE: an I/O error).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::Duration;
use suture::coupling::{ForceLimiter, Watchdog, WorkspaceMap};
use suture::device::{DeviceError, DeviceProfile, HapticDevice, HidDevice, Transport};
use suture::math::{Quat, Vec3};
use suture::runtime::haptic::{DEVICE_SILENCE, HapticConfig, HapticCore, ProxyState};
use suture::runtime::run::{NOMINAL_FORCE_LIMIT, RAMP, TORQUE_LIMIT, start_tool};

/// Haptic ticks per input (1 ms each).
const TICKS: usize = 64;

/// The simulated device: reads pop the queued reports (as hidapi copies at most the buffer's
/// length); writes are kept.
struct SimHid {
    pending: VecDeque<Option<Vec<u8>>>,
    written: usize,
}

impl Transport for SimHid {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, DeviceError> {
        match self.pending.pop_front() {
            None => Ok(0),
            Some(None) => Err(DeviceError::Io("simulated I/O error".into())),
            Some(Some(r)) => {
                let n = r.len().min(buf.len());
                buf[..n].copy_from_slice(&r[..n]);
                Ok(n)
            }
        }
    }

    fn write(&mut self, report: &[u8]) -> Result<(), DeviceError> {
        self.written += report.len();
        Ok(())
    }
}

/// The scene whose tool the device drives.
fn scene() -> &'static suture::scene::Scene {
    static SCENE: OnceLock<suture::scene::Scene> = OnceLock::new();
    SCENE.get_or_init(|| {
        suture::scene::parse(
            "scenes/suturing.toml",
            include_str!("../../scenes/suturing.toml"),
            suture::scene::Overrides::default(),
        )
        .expect("shipped scene")
    })
}

fn reports(mut b: &[u8]) -> VecDeque<Option<Vec<u8>>> {
    let mut out = VecDeque::new();
    while let Some((&n, rest)) = b.split_first() {
        if n == 0xfe {
            out.push_back(None);
            b = rest;
            continue;
        }
        let n = (n as usize).min(rest.len());
        out.push_back(Some(rest[..n].to_vec()));
        b = &rest[n..];
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let (text, rest) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(profile) = DeviceProfile::parse("fuzz.toml", text) else {
        return;
    };
    // The simulated device has the profile's ids (hid::enumerate would list it so).
    let Some(&pid) = profile.product_ids.first() else {
        return;
    };
    if !profile.matches(profile.vendor_id, pid) {
        return;
    }
    // cli::run::open_device and runtime::run::start.
    let sc = scene();
    let setup = &sc.tools[0];
    let Ok(st) = start_tool(&sc.world, setup, profile.max_stiffness) else {
        return;
    };
    let map = WorkspaceMap::new(
        setup.workspace_scale,
        setup.workspace_offset,
        Quat::identity(),
        [false; 3],
    )
    .expect("the scene's workspace")
    .with_frame(sc.world.tool_frame(setup));
    let device = HidDevice::new(
        profile,
        SimHid {
            pending: reports(rest),
            written: 0,
        },
    );
    let max_force = match device.max_force() {
        f if f > 0.0 && f.is_finite() => f,
        _ => NOMINAL_FORCE_LIMIT,
    };
    let streams = device.max_force() > 0.0;
    let cfg = HapticConfig {
        period: Duration::from_millis(1),
        map,
        coupling: st.coupling,
        limiter: ForceLimiter::new(max_force, TORQUE_LIMIT, RAMP),
        watchdog: Watchdog::default(),
    };
    let mut core = HapticCore::new(Box::new(device), cfg);
    if streams {
        core = core.with_silence_limit(DEVICE_SILENCE);
    }
    // The tool sits where it starts, coupled, 1 cm off the device's pose: a force to render.
    let proxy = ProxyState {
        published: 0.0,
        position: st.tool.coupling.target + Vec3::new(0.01, 0.0, 0.0),
        rotation: Quat::identity(),
        velocity: Vec3::zeros(),
        angular_velocity: Vec3::zeros(),
        coupled: true,
    };
    for k in 0..TICKS {
        let now = k as f64 * 1e-3;
        let p = ProxyState {
            published: now,
            ..proxy
        };
        let _ = core.tick(now, Some(p));
    }
    core.release();
});
