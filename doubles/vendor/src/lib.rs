//! A test double of the two vendor haptic SDKs suture loads at run time: OpenHaptics' HD API
//! (`hd*` functions, libHD) and Force Dimension's DHD API (`dhd*` functions, libdhd), with the
//! C signatures of the vendors' public API references. One crate, built once per SDK: with
//! feature `hd` it is libHD's double and exports only the `hd*` functions, with `dhd` libdhd's
//! and only the `dhd*` ones (the script, faults and force log below are shared). It is not
//! the vendors' code: each function does what tests/vendor.rs needs of a device.
//!
//! Each SDK's device is configured by a file named in an environment variable,
//! `VENDOR_DOUBLE_HD` or `VENDOR_DOUBLE_DHD` (unset: the SDK finds no device). Lines:
//!
//! ```text
//! model Touch                 # what the SDK calls the device
//! devices 2                   # DHD: how many devices dhdGetDeviceCount reports (default 1)
//! key T X Y Z RX RY RZ BUTTONS GRIP   # the script: time [s], position (SDK units and axes),
//!                             # rotation vector [rad] (SDK axes), button mask, gripper [rad]
//! error FROM TO               # every call fails in [FROM, TO) s (hdGetError, negative returns)
//! miss AT SECONDS             # HD: the servo thread calls no callback for SECONDS from AT
//! stall AT SECONDS            # the thread named suture-physics is stopped for SECONDS at AT
//! log PATH                    # every force sent is written to PATH-ID.csv when the device
//!                             # closes: t, fx, fy, fz, tx, ty, tz, gripper force
//! ```
//!
//! Times are seconds since the library's first call. Between keys the pose is linear (the
//! rotation vector too), before the first and after the last it holds. HD's scheduler runs a
//! servo thread at 1 kHz (SCHED_FIFO 85 when permitted), as hdStartScheduler does (ticks it was
//! late for are made up, up to 20 ms); DHD is called from the caller's thread.
#![allow(clippy::missing_safety_doc)]
// Built for one SDK, the shared part has imports and fields only the other uses.
#![cfg_attr(
    not(all(feature = "hd", feature = "dhd")),
    allow(unused_imports, dead_code)
)]

use std::ffi::{CStr, c_char, c_int, c_uchar, c_uint, c_ulong, c_ushort, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The script's key poses, the fault windows and where to log.
#[derive(Clone, Debug, Default)]
struct Config {
    model: String,
    devices: i32,
    keys: Vec<[f64; 10]>,
    errors: Vec<(f64, f64)>,
    misses: Vec<(f64, f64)>,
    stalls: Vec<(f64, f64)>,
    log: Option<String>,
}

fn parse(text: &str) -> Config {
    let mut c = Config {
        devices: 1,
        ..Config::default()
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut w = line.split_whitespace();
        let Some(kind) = w.next() else { continue };
        let nums: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        match kind {
            "model" => c.model = line[5..].trim().to_string(),
            "devices" => c.devices = nums[0] as i32,
            "key" => {
                let mut k = [0.0; 10];
                k[..nums.len().min(10)].copy_from_slice(&nums[..nums.len().min(10)]);
                c.keys.push(k);
            }
            "error" => c.errors.push((nums[0], nums[1])),
            "miss" => c.misses.push((nums[0], nums[0] + nums[1])),
            "stall" => c.stalls.push((nums[0], nums[1])),
            "log" => c.log = Some(line[3..].trim().to_string()),
            _ => panic!("vendor double: unknown line {line:?}"),
        }
    }
    c
}

fn config(var: &str) -> Option<Config> {
    let path = std::env::var(var).ok()?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("vendor double: {var}={path}: {e}"));
    Some(parse(&text))
}

/// The library's clock origin: its first call.
fn clock() -> f64 {
    static T0: OnceLock<Instant> = OnceLock::new();
    T0.get_or_init(Instant::now).elapsed().as_secs_f64()
}

fn within(windows: &[(f64, f64)], t: f64) -> bool {
    windows.iter().any(|&(a, b)| t >= a && t < b)
}

/// The scripted state at `t`: position, rotation vector, velocity (per second), buttons, grip.
struct Pose {
    p: [f64; 3],
    r: [f64; 3],
    v: [f64; 3],
    buttons: u32,
    grip: f64,
}

fn pose(keys: &[[f64; 10]], t: f64) -> Pose {
    let hold = |k: &[f64; 10]| Pose {
        p: [k[1], k[2], k[3]],
        r: [k[4], k[5], k[6]],
        v: [0.0; 3],
        buttons: k[7] as u32,
        grip: k[8],
    };
    let Some(first) = keys.first() else {
        return hold(&[0.0; 10]);
    };
    if t <= first[0] {
        return hold(first);
    }
    let last = keys[keys.len() - 1];
    if t >= last[0] {
        return hold(&last);
    }
    let i = keys.partition_point(|k| k[0] <= t) - 1;
    let (a, b) = (keys[i], keys[i + 1]);
    let s = (t - a[0]) / (b[0] - a[0]);
    let lerp = |j: usize| a[j] + (b[j] - a[j]) * s;
    let rate = |j: usize| (b[j] - a[j]) / (b[0] - a[0]);
    Pose {
        p: [lerp(1), lerp(2), lerp(3)],
        r: [lerp(4), lerp(5), lerp(6)],
        v: [rate(1), rate(2), rate(3)],
        buttons: a[7] as u32,
        grip: lerp(8),
    }
}

/// Row-major rotation matrix of a rotation vector (Rodrigues).
fn rotation(r: [f64; 3]) -> [[f64; 3]; 3] {
    let th = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    if th < 1e-15 {
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let (x, y, z) = (r[0] / th, r[1] / th, r[2] / th);
    let (c, s) = (th.cos(), th.sin());
    let t = 1.0 - c;
    [
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
    ]
}

/// Forces received by one device: (t, fx, fy, fz, tx, ty, tz, gripper force).
type Log = Mutex<Vec<[f64; 8]>>;

fn write_log(cfg: &Config, id: i64, log: &Log) {
    let Some(base) = &cfg.log else { return };
    let rows = log.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = String::with_capacity(rows.len() * 80);
    out.push_str("t,fx,fy,fz,tx,ty,tz,fg\n");
    for r in rows.iter() {
        let cells: Vec<String> = r.iter().map(|v| format!("{v:e}")).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    let path = format!("{base}-{id}.csv");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("vendor double: {path}: {e}"));
}

// ---- physics stalls: a signal handler that sleeps on the thread it interrupts ----

static STALL_NS: AtomicU64 = AtomicU64::new(0);

extern "C" fn stall_handler(_: c_int) {
    let ns = STALL_NS.load(Ordering::SeqCst);
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: nanosleep is async-signal-safe.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// The thread id of the thread named `name` in this process.
fn thread_named(name: &str) -> Option<libc::pid_t> {
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            return e.file_name().to_str()?.parse().ok();
        }
    }
    None
}

/// Stop the physics thread for each `(at, seconds)` (a helper thread of the double's own).
fn schedule_stalls(stalls: &[(f64, f64)]) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if stalls.is_empty() || STARTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let stalls = stalls.to_vec();
    std::thread::spawn(move || {
        // SAFETY: installing a handler that only sleeps.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = stall_handler as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
        }
        for (at, seconds) in stalls {
            let wait = at - clock();
            if wait > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(wait));
            }
            STALL_NS.store((seconds * 1e9) as u64, Ordering::SeqCst);
            match thread_named("suture-physics") {
                // SAFETY: a thread of this process; the handler above sleeps on it.
                Some(tid) => unsafe {
                    libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGUSR2);
                },
                None => eprintln!("vendor double: no thread named suture-physics to stall"),
            }
        }
    });
}

// ================================ OpenHaptics HD API ================================

/// The HD API, in the build with feature `hd` (libHD's double).
#[cfg(feature = "hd")]
mod hd_api {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct HdErrorInfo {
        error_code: c_uint,
        internal_error_code: c_int,
        hhd: c_uint,
    }

    const HD_SUCCESS: c_uint = 0;
    const HD_COMM_ERROR: c_uint = 0x0201;
    const HD_DEVICE_ALREADY_INITIATED: c_uint = 0x0200;
    const HD_INVALID_HANDLE: c_uint = 0xFFFF_FFFF;
    const HD_CALLBACK_CONTINUE: c_uint = 1;

    type HdCallback = unsafe extern "C" fn(*mut c_void) -> c_uint;

    struct HdDevice {
        name: String,
        log: Log,
    }

    struct Hd {
        cfg: Config,
        devices: Mutex<Vec<Option<HdDevice>>>,
        callbacks: Mutex<Vec<(c_ulong, HdCallback, usize)>>,
        next_handle: AtomicU64,
        running: AtomicBool,
        thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    }

    fn hd() -> &'static Hd {
        static HD: OnceLock<Hd> = OnceLock::new();
        HD.get_or_init(|| {
            clock();
            Hd {
                cfg: config("VENDOR_DOUBLE_HD").unwrap_or_default(),
                devices: Mutex::new(Vec::new()),
                callbacks: Mutex::new(Vec::new()),
                next_handle: AtomicU64::new(1),
                running: AtomicBool::new(false),
                thread: Mutex::new(None),
            }
        })
    }

    thread_local! {
        static CURRENT: std::cell::Cell<c_uint> = const { std::cell::Cell::new(0) };
        static ERROR: std::cell::Cell<c_uint> = const { std::cell::Cell::new(0) };
        static FRAME_T: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    }

    fn set_error(e: c_uint) {
        ERROR.with(|c| c.set(e));
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn hdInitDevice(name: *const c_char) -> c_uint {
        let h = hd();
        if h.cfg.keys.is_empty() && h.cfg.model.is_empty() {
            set_error(HD_COMM_ERROR);
            return HD_INVALID_HANDLE;
        }
        let name = if name.is_null() {
            "Default Device".to_string()
        } else {
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        let mut d = h.devices.lock().unwrap();
        if d.iter().flatten().any(|x| x.name == name) {
            set_error(HD_DEVICE_ALREADY_INITIATED);
            return HD_INVALID_HANDLE;
        }
        d.push(Some(HdDevice {
            name,
            log: Mutex::new(Vec::with_capacity(1 << 16)),
        }));
        schedule_stalls(&h.cfg.stalls);
        let hhd = d.len() as c_uint - 1;
        CURRENT.with(|c| c.set(hhd));
        hhd
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdDisableDevice(hhd: c_uint) {
        let h = hd();
        let dev = h
            .devices
            .lock()
            .unwrap()
            .get_mut(hhd as usize)
            .and_then(Option::take);
        if let Some(dev) = dev {
            write_log(&h.cfg, i64::from(hhd), &dev.log);
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdMakeCurrentDevice(hhd: c_uint) {
        CURRENT.with(|c| c.set(hhd));
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdEnable(_cap: c_uint) {}

    #[unsafe(no_mangle)]
    pub extern "C" fn hdBeginFrame(hhd: c_uint) {
        CURRENT.with(|c| c.set(hhd));
        let t = clock();
        FRAME_T.with(|c| c.set(t));
        if within(&hd().cfg.errors, t) {
            set_error(HD_COMM_ERROR);
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdEndFrame(_hhd: c_uint) {}

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn hdGetDoublev(param: c_uint, out: *mut f64) {
        let t = FRAME_T.with(|c| c.get());
        let p = pose(&hd().cfg.keys, t);
        let write = |vals: &[f64]| {
            for (i, v) in vals.iter().enumerate() {
                unsafe { *out.add(i) = *v };
            }
        };
        match param {
            0x2050 => write(&p.p),
            0x2051 => write(&p.v),
            0x2052 => {
                let m = rotation(p.r);
                // Column-major 4×4 with the position in the last column.
                let mut x = [0.0; 16];
                for (r, row) in m.iter().enumerate() {
                    for (c, v) in row.iter().enumerate() {
                        x[c * 4 + r] = *v;
                    }
                }
                x[12..15].copy_from_slice(&p.p);
                x[15] = 1.0;
                write(&x);
            }
            _ => set_error(0x0100),
        }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn hdGetIntegerv(param: c_uint, out: *mut c_int) {
        let t = FRAME_T.with(|c| c.get());
        match param {
            0x2000 => unsafe { *out = pose(&hd().cfg.keys, t).buttons as c_int },
            _ => set_error(0x0100),
        }
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn hdSetDoublev(param: c_uint, v: *const f64) {
        if param != 0x2700 {
            set_error(0x0100);
            return;
        }
        let t = FRAME_T.with(|c| c.get());
        let f = unsafe { [*v, *v.add(1), *v.add(2)] };
        let hhd = CURRENT.with(|c| c.get());
        if let Some(Some(d)) = hd().devices.lock().unwrap().get(hhd as usize) {
            d.log
                .lock()
                .unwrap()
                .push([t, f[0], f[1], f[2], 0.0, 0.0, 0.0, 0.0]);
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdGetString(param: c_uint) -> *const c_char {
        static MODEL: OnceLock<std::ffi::CString> = OnceLock::new();
        match param {
            0x2501 => MODEL
                .get_or_init(|| std::ffi::CString::new(hd().cfg.model.clone()).unwrap())
                .as_ptr(),
            _ => std::ptr::null(),
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdGetError() -> HdErrorInfo {
        let e = ERROR.with(|c| c.replace(HD_SUCCESS));
        HdErrorInfo {
            error_code: e,
            internal_error_code: if e == HD_SUCCESS { 0 } else { -1 },
            hhd: CURRENT.with(|c| c.get()),
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdGetErrorString(code: c_uint) -> *const c_char {
        match code {
            HD_COMM_ERROR => c"Communication error (vendor double)".as_ptr(),
            HD_DEVICE_ALREADY_INITIATED => c"Device already initiated (vendor double)".as_ptr(),
            _ => c"Error (vendor double)".as_ptr(),
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdScheduleAsynchronous(
        cb: HdCallback,
        data: *mut c_void,
        _priority: c_ushort,
    ) -> c_ulong {
        let h = hd();
        let handle = h.next_handle.fetch_add(1, Ordering::SeqCst) as c_ulong;
        h.callbacks
            .lock()
            .unwrap()
            .push((handle, cb, data as usize));
        handle
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdUnschedule(handle: c_ulong) {
        hd().callbacks
            .lock()
            .unwrap()
            .retain(|(h, _, _)| *h != handle);
    }

    /// The servo thread: every scheduled callback once a millisecond, on an absolute schedule:
    /// ticks this thread was late for (the host preempted it) are made up back to back, up to
    /// 20 ms, as a device's own clock would have run them; the `miss` windows' ticks are lost.
    fn servo_loop() {
        // SAFETY: the calling thread's own scheduling.
        unsafe {
            let p = libc::sched_param { sched_priority: 85 };
            libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p);
        }
        let h = hd();
        let period = Duration::from_millis(1);
        let mut next = Instant::now();
        while h.running.load(Ordering::SeqCst) {
            let now = Instant::now();
            if next > now {
                let left = next - now;
                if left > Duration::from_micros(200) {
                    std::thread::sleep(left - Duration::from_micros(150));
                }
                while Instant::now() < next {
                    std::hint::spin_loop();
                }
            } else if now - next > 20 * period {
                next = now;
            }
            next += period;
            if within(&h.cfg.misses, clock()) {
                continue;
            }
            let mut cbs = h.callbacks.lock().unwrap();
            cbs.retain(|&(_, cb, data)| unsafe { cb(data as *mut c_void) } == HD_CALLBACK_CONTINUE);
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdStartScheduler() {
        let h = hd();
        if h.running.swap(true, Ordering::SeqCst) {
            return;
        }
        *h.thread.lock().unwrap() = Some(std::thread::spawn(servo_loop));
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn hdStopScheduler() {
        let h = hd();
        h.running.store(false, Ordering::SeqCst);
        if let Some(t) = h.thread.lock().unwrap().take() {
            let _ = t.join();
        }
    }
}

// ============================== Force Dimension DHD API ==============================

/// The DHD API, in the build with feature `dhd` (libdhd's double).
#[cfg(feature = "dhd")]
mod dhd_api {
    use super::*;

    struct Dhd {
        cfg: Config,
        logs: Vec<Log>,
        open: Vec<AtomicBool>,
        last_error: AtomicU64,
    }

    fn dhd() -> &'static Dhd {
        static DHD: OnceLock<Dhd> = OnceLock::new();
        DHD.get_or_init(|| {
            clock();
            let cfg = config("VENDOR_DOUBLE_DHD").unwrap_or_default();
            let n = if cfg.keys.is_empty() {
                0
            } else {
                cfg.devices.max(0) as usize
            };
            Dhd {
                logs: (0..n)
                    .map(|_| Mutex::new(Vec::with_capacity(1 << 16)))
                    .collect(),
                open: (0..n).map(|_| AtomicBool::new(false)).collect(),
                cfg,
                last_error: AtomicU64::new(0),
            }
        })
    }

    /// DHD_ERROR_COM in the reference's error list (any non-zero code serves the tests).
    const DHD_ERROR_COM: u64 = 2;

    /// A call at the current time: Err when in an error window (and the error is recorded).
    fn dhd_call(id: c_char) -> Result<(&'static Dhd, f64), c_int> {
        let d = dhd();
        let ok = usize::try_from(id)
            .ok()
            .and_then(|i| d.open.get(i))
            .is_some_and(|o| o.load(Ordering::SeqCst));
        let t = clock();
        if !ok || within(&d.cfg.errors, t) {
            d.last_error.store(DHD_ERROR_COM, Ordering::SeqCst);
            return Err(-1);
        }
        Ok((d, t))
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdGetDeviceCount() -> c_int {
        dhd().logs.len() as c_int
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdOpenID(index: c_char) -> c_int {
        let d = dhd();
        match usize::try_from(index).ok().and_then(|i| d.open.get(i)) {
            Some(o) if !o.swap(true, Ordering::SeqCst) => {
                schedule_stalls(&d.cfg.stalls);
                c_int::from(index)
            }
            _ => {
                d.last_error.store(DHD_ERROR_COM, Ordering::SeqCst);
                -1
            }
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdClose(id: c_char) -> c_int {
        let d = dhd();
        let Some(i) = usize::try_from(id).ok().filter(|&i| i < d.open.len()) else {
            return -1;
        };
        if d.open[i].swap(false, Ordering::SeqCst) {
            write_log(&d.cfg, i64::from(id), &d.logs[i]);
        }
        0
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdGetSystemName(_id: c_char) -> *const c_char {
        static MODEL: OnceLock<std::ffi::CString> = OnceLock::new();
        MODEL
            .get_or_init(|| std::ffi::CString::new(dhd().cfg.model.clone()).unwrap())
            .as_ptr()
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdEnableForce(_val: c_uchar, id: c_char) -> c_int {
        dhd_call(id).map_or(-1, |_| 0)
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn dhdGetPositionAndOrientationFrame(
        px: *mut f64,
        py: *mut f64,
        pz: *mut f64,
        m: *mut [[f64; 3]; 3],
        id: c_char,
    ) -> c_int {
        let (d, t) = match dhd_call(id) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let p = pose(&d.cfg.keys, t);
        unsafe {
            *px = p.p[0];
            *py = p.p[1];
            *pz = p.p[2];
            *m = rotation(p.r);
        }
        0
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn dhdGetLinearVelocity(
        vx: *mut f64,
        vy: *mut f64,
        vz: *mut f64,
        id: c_char,
    ) -> c_int {
        let (d, t) = match dhd_call(id) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let p = pose(&d.cfg.keys, t);
        unsafe {
            *vx = p.v[0];
            *vy = p.v[1];
            *vz = p.v[2];
        }
        0
    }

    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn dhdGetGripperAngleRad(a: *mut f64, id: c_char) -> c_int {
        let (d, t) = match dhd_call(id) {
            Ok(x) => x,
            Err(e) => return e,
        };
        unsafe { *a = pose(&d.cfg.keys, t).grip };
        0
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdGetButtonMask(id: c_char) -> c_uint {
        dhd_call(id).map_or(0, |(d, t)| pose(&d.cfg.keys, t).buttons)
    }

    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub extern "C" fn dhdSetForceAndTorqueAndGripperForce(
        fx: f64,
        fy: f64,
        fz: f64,
        tx: f64,
        ty: f64,
        tz: f64,
        fg: f64,
        id: c_char,
    ) -> c_int {
        match dhd_call(id) {
            Ok((d, t)) => {
                d.logs[id as usize]
                    .lock()
                    .unwrap()
                    .push([t, fx, fy, fz, tx, ty, tz, fg]);
                0
            }
            Err(e) => e,
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdErrorGetLast() -> c_int {
        dhd().last_error.load(Ordering::SeqCst) as c_int
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn dhdErrorGetLastStr() -> *const c_char {
        match dhd().last_error.load(Ordering::SeqCst) {
            0 => c"no error".as_ptr(),
            _ => c"communication error (vendor double)".as_ptr(),
        }
    }
}
