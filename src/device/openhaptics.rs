//! 3D Systems Touch, Touch X and Phantom devices through OpenHaptics' HD API, loaded at run
//! time (libloading): neither the build nor the tests need the SDK.
//!
//! The HD API runs its own servo loop (the scheduler, 1 kHz) on its own thread; a device is
//! read and commanded inside a frame (`hdBeginFrame` … `hdEndFrame`) of a callback that the
//! scheduler calls. So the haptic tick runs *in* that callback: [`TouchDevice::take_servo`]
//! gives the runtime a [`Servo`] that schedules the tick, and the tick's reads
//! ([`HapticDevice::poll`]) and force ([`HapticDevice::command`]) fall inside the frame. The
//! callback does no locking and no allocation (the handoff to the physics is the runtime's
//! lock-free rings).
//!
//! Only the functions and constants used are declared, from the public *OpenHaptics Toolkit
//! API Reference* (3D Systems, version 3.4; "HD API" chapters: Device Routines, Scheduler
//! Routines, Parameter Routines, Error Routines, and the parameter tables "Get Parameters"
//! and "Set Parameters"); types as the reference gives them: `HHD` an unsigned int,
//! `HDSchedulerHandle` an unsigned long, `HDErrorInfo { HDerror errorCode; int
//! internalErrorCode; HHD hHD; }`, callbacks `HDCallbackCode (*)(void *)`.

use super::backend::{DeviceError, DeviceSample, HapticDevice, Servo};
use super::vendor::{
    Backend, LibrarySearch, Probe, SdkError, VendorProfile, load_profiles, pick_profile,
};
use crate::math::{Mat3, Vec3};
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_ulong, c_ushort, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

// The parameter codes (API Reference, "Get Parameters" / "Set Parameters", "Capabilities").
/// `HD_CURRENT_BUTTONS`: the button mask (int), bit 0 = button 1.
const HD_CURRENT_BUTTONS: c_uint = 0x2000;
/// `HD_CURRENT_POSITION`: 3 doubles [mm].
const HD_CURRENT_POSITION: c_uint = 0x2050;
/// `HD_CURRENT_VELOCITY`: 3 doubles [mm/s].
const HD_CURRENT_VELOCITY: c_uint = 0x2051;
/// `HD_CURRENT_TRANSFORM`: 16 doubles, the stylus' 4×4 transform, column-major.
const HD_CURRENT_TRANSFORM: c_uint = 0x2052;
/// `HD_CURRENT_FORCE`: 3 doubles [N] (set).
const HD_CURRENT_FORCE: c_uint = 0x2700;
/// `HD_DEVICE_MODEL_TYPE`: the model's name (string).
const HD_DEVICE_MODEL_TYPE: c_uint = 0x2501;
/// `HD_FORCE_OUTPUT` (hdEnable): the motors render force.
const HD_FORCE_OUTPUT: c_uint = 0x4000;
/// `HD_SUCCESS`: no error (Error Routines).
const HD_SUCCESS: c_uint = 0;
/// `HD_INVALID_HANDLE`: what hdInitDevice returns when it fails.
const HD_INVALID_HANDLE: c_uint = 0xFFFF_FFFF;
/// `HD_CALLBACK_DONE` / `HD_CALLBACK_CONTINUE`: a callback's return (Scheduler Routines).
const HD_CALLBACK_DONE: c_uint = 0;
/// See [`HD_CALLBACK_DONE`].
const HD_CALLBACK_CONTINUE: c_uint = 1;
/// `HD_DEFAULT_SCHEDULER_PRIORITY`: midway between HD_MIN (0) and HD_MAX (0xffff).
const HD_DEFAULT_SCHEDULER_PRIORITY: c_ushort = 0x7fff;

/// Environment variable naming libHD.
pub const LIBRARY_ENV: &str = "SUTURE_OPENHAPTICS_LIB";

/// Where libHD is looked for: the loader's path, then OpenHaptics for Linux's install folders.
const DEFAULT_LIBRARIES: &[&str] = &[
    "libHD.so",
    "libHD.so.3.4",
    "/usr/lib/libHD.so",
    "/usr/lib64/libHD.so",
    "/opt/OpenHaptics/Developer/3.4-0/lib/libHD.so",
];

const INSTALL: &str = "Install OpenHaptics for Linux (the Developer Edition, or the runtime that comes with the Touch device drivers) from 3D Systems' support site; docs/devices-openhaptics.md.";

/// `HDErrorInfo` (Error Routines).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct HdErrorInfo {
    error_code: c_uint,
    internal_error_code: c_int,
    hhd: c_uint,
}

type HdCallback = unsafe extern "C" fn(*mut c_void) -> c_uint;

/// The HD API functions used, from the loaded library.
struct HdApi {
    path: String,
    init_device: unsafe extern "C" fn(*const c_char) -> c_uint,
    disable_device: unsafe extern "C" fn(c_uint),
    make_current_device: unsafe extern "C" fn(c_uint),
    enable: unsafe extern "C" fn(c_uint),
    begin_frame: unsafe extern "C" fn(c_uint),
    end_frame: unsafe extern "C" fn(c_uint),
    get_doublev: unsafe extern "C" fn(c_uint, *mut f64),
    get_integerv: unsafe extern "C" fn(c_uint, *mut c_int),
    set_doublev: unsafe extern "C" fn(c_uint, *const f64),
    get_string: unsafe extern "C" fn(c_uint) -> *const c_char,
    get_error: unsafe extern "C" fn() -> HdErrorInfo,
    get_error_string: unsafe extern "C" fn(c_uint) -> *const c_char,
    schedule_asynchronous: unsafe extern "C" fn(HdCallback, *mut c_void, c_ushort) -> c_ulong,
    unschedule: unsafe extern "C" fn(c_ulong),
    start_scheduler: unsafe extern "C" fn(),
    stop_scheduler: unsafe extern "C" fn(),
    // Last: the functions above point into it.
    _lib: libloading::Library,
}

/// Servo loops of this process on the HD scheduler (one scheduler per process: the first
/// starts it, the last stops it).
static SCHEDULED: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
impl HdApi {
    fn load(search: &LibrarySearch) -> Result<Arc<HdApi>, SdkError> {
        let (lib, path) = search.load()?;
        macro_rules! sym {
            // SAFETY: each field's type is the API reference's signature of its function.
            ($name:literal) => {
                unsafe { super::vendor::symbol(&lib, "OpenHaptics", &path, $name) }?
            };
        }
        Ok(Arc::new(HdApi {
            init_device: sym!("hdInitDevice"),
            disable_device: sym!("hdDisableDevice"),
            make_current_device: sym!("hdMakeCurrentDevice"),
            enable: sym!("hdEnable"),
            begin_frame: sym!("hdBeginFrame"),
            end_frame: sym!("hdEndFrame"),
            get_doublev: sym!("hdGetDoublev"),
            get_integerv: sym!("hdGetIntegerv"),
            set_doublev: sym!("hdSetDoublev"),
            get_string: sym!("hdGetString"),
            get_error: sym!("hdGetError"),
            get_error_string: sym!("hdGetErrorString"),
            schedule_asynchronous: sym!("hdScheduleAsynchronous"),
            unschedule: sym!("hdUnschedule"),
            start_scheduler: sym!("hdStartScheduler"),
            stop_scheduler: sym!("hdStopScheduler"),
            path,
            _lib: lib,
        }))
    }

    /// The pending error, described (not for the haptic tick: it allocates).
    fn error(&self) -> Option<String> {
        // SAFETY: no arguments; the string is the SDK's static text.
        let e = unsafe { (self.get_error)() };
        if e.error_code == HD_SUCCESS {
            return None;
        }
        let text = unsafe { (self.get_error_string)(e.error_code) };
        let text = if text.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Some(format!(
            "{text} (HD error {:#06x}, internal {})",
            e.error_code, e.internal_error_code
        ))
    }

    /// Initialise the device `name` (None: the default device); its model name.
    fn init(&self, name: Option<&str>) -> Result<(c_uint, String), SdkError> {
        let cname = name.map(|n| CString::new(n).unwrap_or_default());
        let ptr = cname.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: a NUL-terminated name or null (HD_DEFAULT_DEVICE).
        let hhd = unsafe { (self.init_device)(ptr) };
        if hhd == HD_INVALID_HANDLE {
            let detail = self.error().unwrap_or_else(|| "no error given".into());
            return Err(SdkError::NoDevice {
                sdk: "OpenHaptics",
                detail: format!(
                    "hdInitDevice({}): {detail}",
                    name.unwrap_or("HD_DEFAULT_DEVICE")
                ),
            });
        }
        // SAFETY: a handle hdInitDevice returned; the model string is the SDK's.
        let model = unsafe {
            (self.make_current_device)(hhd);
            let s = (self.get_string)(HD_DEVICE_MODEL_TYPE);
            if s.is_null() {
                String::new()
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        };
        Ok((hhd, model))
    }
}

/// A device on the HD API: read and commanded inside the scheduler's frame (see the module
/// doc); its [`Servo`] runs the tick in the scheduler's callback.
pub struct TouchDevice {
    api: Arc<HdApi>,
    hhd: c_uint,
    name: String,
    profile: VendorProfile,
    servo: Option<Box<dyn Servo>>,
    buttons: c_int,
    position: [f64; 3],
    velocity: [f64; 3],
    transform: [f64; 16],
}

/// Open the OpenHaptics device `name` (None: the default device) with the profile in
/// `profiles` (devices/vendor) that serves its model, libHD found by `library` (None: the
/// environment variable, then the default paths). Returns the device and its profile's file.
pub fn open(
    name: Option<&str>,
    library: Option<&str>,
    profiles: &str,
) -> Result<(TouchDevice, String), SdkError> {
    let api = HdApi::load(&search(library))?;
    let candidates = load_profiles(profiles, Backend::OpenHaptics)?;
    let (hhd, model) = api.init(name)?;
    let fail = |call: &'static str, api: &HdApi| -> Result<(), SdkError> {
        match api.error() {
            None => Ok(()),
            Some(detail) => Err(SdkError::Call {
                sdk: "OpenHaptics",
                call,
                detail,
            }),
        }
    };
    let Some((file, profile)) = pick_profile(&candidates, &model).cloned() else {
        // SAFETY: the handle is ours; nothing else uses it.
        #[allow(unsafe_code)]
        unsafe {
            (api.disable_device)(hhd)
        };
        return Err(SdkError::NoProfile {
            sdk: "OpenHaptics",
            dir: profiles.to_string(),
            model,
        });
    };
    // SAFETY: the handle is current (init made it so).
    #[allow(unsafe_code)]
    unsafe {
        (api.enable)(HD_FORCE_OUTPUT)
    };
    fail("hdEnable(HD_FORCE_OUTPUT)", &api)?;
    let label = format!(
        "openhaptics:{} ({model}, {})",
        name.unwrap_or("default"),
        api.path
    );
    Ok((
        TouchDevice {
            servo: Some(Box::new(HdServo {
                api: api.clone(),
                hhd,
            })),
            api,
            hhd,
            name: label,
            profile,
            buttons: 0,
            position: [0.0; 3],
            velocity: [0.0; 3],
            transform: [0.0; 16],
        },
        file,
    ))
}

/// Where libHD is looked for.
pub fn search(library: Option<&str>) -> LibrarySearch {
    LibrarySearch {
        sdk: "OpenHaptics",
        option: library.map(str::to_string),
        env: LIBRARY_ENV,
        defaults: DEFAULT_LIBRARIES,
        install: INSTALL,
    }
}

/// What `suture devices` reports: libHD, and the default device if one initialises (the HD
/// API has no enumeration; named devices come from the vendor's Touch Setup).
pub fn probe(library: Option<&str>) -> Result<Probe, SdkError> {
    let api = HdApi::load(&search(library))?;
    match api.init(None) {
        Ok((hhd, model)) => {
            // SAFETY: the handle init returned.
            #[allow(unsafe_code)]
            unsafe {
                (api.disable_device)(hhd)
            };
            Ok(Probe {
                library: api.path.clone(),
                devices: vec![("openhaptics".into(), model)],
                none: None,
            })
        }
        Err(e) => Ok(Probe {
            library: api.path.clone(),
            devices: Vec::new(),
            none: Some(e.to_string()),
        }),
    }
}

impl TouchDevice {
    /// The profile.
    pub fn profile(&self) -> &VendorProfile {
        &self.profile
    }
}

#[allow(unsafe_code)]
impl HapticDevice for TouchDevice {
    fn name(&self) -> &str {
        &self.name
    }

    /// The stylus' state in the current frame (call only from the servo's tick).
    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        // SAFETY: the buffers have the lengths the parameters need (3, 3, 16 doubles, 1 int).
        let e = unsafe {
            (self.api.get_doublev)(HD_CURRENT_POSITION, self.position.as_mut_ptr());
            (self.api.get_doublev)(HD_CURRENT_VELOCITY, self.velocity.as_mut_ptr());
            (self.api.get_doublev)(HD_CURRENT_TRANSFORM, self.transform.as_mut_ptr());
            (self.api.get_integerv)(HD_CURRENT_BUTTONS, &mut self.buttons);
            (self.api.get_error)()
        };
        if e.error_code != HD_SUCCESS {
            return Err(DeviceError::Sdk {
                call: "hdGetError",
                code: i64::from(e.error_code),
            });
        }
        let finite = self
            .position
            .iter()
            .chain(&self.velocity)
            .chain(&self.transform)
            .all(|v| v.is_finite());
        if !finite {
            return Err(DeviceError::Sdk {
                call: "hdGetDoublev (non-finite)",
                code: -1,
            });
        }
        let m = &self.transform;
        // Column-major: element (row r, column c) at c * 4 + r.
        let rotation = Mat3::new(m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10]);
        let p = &self.profile;
        Ok(Some(DeviceSample {
            t,
            position: p.position(&Vec3::from(self.position)),
            rotation: p.orientation(&rotation),
            velocity: p.velocity(&Vec3::from(self.velocity)),
            angular_velocity: Vec3::zeros(),
            buttons: self.buttons as u32,
        }))
    }

    /// The force for this frame (call only from the servo's tick); the Touch family renders
    /// no torque.
    fn command(&mut self, force: &Vec3, _torque: &Vec3, enable: bool) -> Result<(), DeviceError> {
        let f = if enable {
            self.profile.to_sdk(force)
        } else {
            Vec3::zeros()
        };
        let f = [f.x, f.y, f.z];
        // SAFETY: 3 doubles, as HD_CURRENT_FORCE takes.
        unsafe { (self.api.set_doublev)(HD_CURRENT_FORCE, f.as_ptr()) };
        Ok(())
    }

    fn max_force(&self) -> f64 {
        self.profile.max_force
    }

    fn take_servo(&mut self) -> Option<Box<dyn Servo>> {
        self.servo.take()
    }
}

impl Drop for TouchDevice {
    fn drop(&mut self) {
        // SAFETY: our handle; the servo (which used it) has stopped before the device drops
        // (the runtime drops the tick's state after Servo::run returns).
        #[allow(unsafe_code)]
        unsafe {
            (self.api.disable_device)(self.hhd)
        };
    }
}

/// The HD scheduler as a [`Servo`] for one device.
struct HdServo {
    api: Arc<HdApi>,
    hhd: c_uint,
}

/// What the scheduler's callback is handed: the device, the tick, and a handshake that lets
/// `run` return only when no call is under way and no new one will touch the tick.
struct Trampoline<'a> {
    api: &'a HdApi,
    hhd: c_uint,
    tick: std::cell::UnsafeCell<&'a mut (dyn FnMut() + Send)>,
    busy: AtomicBool,
    retired: AtomicBool,
    panicked: AtomicBool,
}

/// The scheduler's callback: one frame of the device around one tick. No lock, no allocation.
#[allow(unsafe_code)]
unsafe extern "C" fn servo_callback(data: *mut c_void) -> c_uint {
    // SAFETY: `data` is the Trampoline HdServo::run scheduled, alive until it has seen the
    // callback retired and not busy.
    let t = unsafe { &*(data as *const Trampoline) };
    t.busy.store(true, Ordering::SeqCst);
    if t.retired.load(Ordering::SeqCst) {
        t.busy.store(false, Ordering::SeqCst);
        return HD_CALLBACK_DONE;
    }
    // SAFETY: only this callback (one call at a time, on the scheduler's thread) uses the tick.
    let tick = unsafe { &mut *t.tick.get() };
    unsafe { (t.api.begin_frame)(t.hhd) };
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(tick)).is_ok();
    unsafe { (t.api.end_frame)(t.hhd) };
    if !ok {
        t.panicked.store(true, Ordering::SeqCst);
        t.retired.store(true, Ordering::SeqCst);
    }
    t.busy.store(false, Ordering::SeqCst);
    if ok {
        HD_CALLBACK_CONTINUE
    } else {
        HD_CALLBACK_DONE
    }
}

/// How often `run` looks at the stop flag while the scheduler runs [ms].
const STOP_POLL_MS: u64 = 5;

#[allow(unsafe_code)]
impl Servo for HdServo {
    fn run(
        &mut self,
        tick: &mut (dyn FnMut() + Send),
        stop: &AtomicBool,
    ) -> Result<(), DeviceError> {
        let tramp = Trampoline {
            api: &self.api,
            hhd: self.hhd,
            tick: std::cell::UnsafeCell::new(tick),
            busy: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
        };
        let data = &tramp as *const Trampoline as *mut c_void;
        // SAFETY: the callback and its data outlive the schedule (see the handshake below).
        let handle = unsafe {
            (self.api.schedule_asynchronous)(servo_callback, data, HD_DEFAULT_SCHEDULER_PRIORITY)
        };
        let e = unsafe { (self.api.get_error)() };
        if e.error_code != HD_SUCCESS {
            return Err(DeviceError::Sdk {
                call: "hdScheduleAsynchronous",
                code: i64::from(e.error_code),
            });
        }
        if SCHEDULED.fetch_add(1, Ordering::SeqCst) == 0 {
            unsafe { (self.api.start_scheduler)() };
        }
        let started = unsafe { (self.api.get_error)() };
        while started.error_code == HD_SUCCESS
            && !stop.load(Ordering::Relaxed)
            && !tramp.panicked.load(Ordering::Relaxed)
        {
            std::thread::sleep(std::time::Duration::from_millis(STOP_POLL_MS));
        }
        // Retire the callback, wait out a call under way, then unschedule it; the last loop
        // stops the scheduler (which returns when its thread has stopped calling).
        tramp.retired.store(true, Ordering::SeqCst);
        while tramp.busy.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        unsafe { (self.api.unschedule)(handle) };
        if SCHEDULED.fetch_sub(1, Ordering::SeqCst) == 1 {
            unsafe { (self.api.stop_scheduler)() };
        }
        if started.error_code != HD_SUCCESS {
            return Err(DeviceError::Sdk {
                call: "hdStartScheduler",
                code: i64::from(started.error_code),
            });
        }
        if tramp.panicked.load(Ordering::SeqCst) {
            return Err(DeviceError::Sdk {
                call: "the haptic tick (panicked)",
                code: -1,
            });
        }
        Ok(())
    }
}
