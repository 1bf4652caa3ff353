//! Force Dimension omega, sigma, delta and lambda devices, and the Novint Falcon, through the
//! DHD API of the Force Dimension SDK, loaded at run time (libloading): neither the build nor
//! the tests need the SDK.
//!
//! The DHD API is polled: the haptic loop's own thread reads the device and sends it the
//! force each tick (no SDK thread). A call that fails (a negative return) is a device fault
//! (the loop zeroes the force and ramps it back in); the gripper's angle, where the device
//! has one, presses the jaw button at each change between open and closed (vendor::GripperSwitch).
//!
//! Only the functions and constants used are declared, from Force Dimension's public *SDK
//! documentation* ("DHD API" reference of the Force Dimension SDK 3.x, `dhdc.h`'s functions as
//! documented there): every function returns an `int`, negative on error, and takes the
//! device `char ID` last; `dhdErrorGetLast` / `dhdErrorGetLastStr` describe the last error.

use super::backend::{DeviceError, DeviceSample, HapticDevice};
use super::vendor::{
    Backend, GripperSwitch, LibrarySearch, Probe, SdkError, VendorProfile, load_profiles,
    pick_profile,
};
use crate::math::{Mat3, Vec3};
use std::ffi::{CStr, c_char, c_int, c_uchar, c_uint};

/// `DHD_ON` (dhdEnableForce).
const DHD_ON: c_uchar = 1;

/// Environment variable naming libdhd.
pub const LIBRARY_ENV: &str = "SUTURE_FORCEDIMENSION_LIB";

/// Where libdhd is looked for: the loader's path, then where the SDK's Linux makefiles and
/// distributions put it.
const DEFAULT_LIBRARIES: &[&str] = &[
    "libdhd.so",
    "libdhd.so.3",
    "/usr/local/lib/libdhd.so",
    "/usr/lib/libdhd.so",
    "/opt/forcedimension/lib/libdhd.so",
];

const INSTALL: &str = "Download the Force Dimension SDK for Linux (it also drives the Novint Falcon) from forcedimension.com and put its lib/libdhd.so on the loader's path; docs/devices-forcedimension.md.";

/// The DHD API functions used, from the loaded library.
struct DhdApi {
    path: String,
    get_device_count: unsafe extern "C" fn() -> c_int,
    open_id: unsafe extern "C" fn(c_char) -> c_int,
    close: unsafe extern "C" fn(c_char) -> c_int,
    get_system_name: unsafe extern "C" fn(c_char) -> *const c_char,
    enable_force: unsafe extern "C" fn(c_uchar, c_char) -> c_int,
    get_position_and_orientation_frame:
        unsafe extern "C" fn(*mut f64, *mut f64, *mut f64, *mut [[f64; 3]; 3], c_char) -> c_int,
    get_linear_velocity: unsafe extern "C" fn(*mut f64, *mut f64, *mut f64, c_char) -> c_int,
    get_gripper_angle_rad: unsafe extern "C" fn(*mut f64, c_char) -> c_int,
    get_button_mask: unsafe extern "C" fn(c_char) -> c_uint,
    set_force_and_torque_and_gripper_force:
        unsafe extern "C" fn(f64, f64, f64, f64, f64, f64, f64, c_char) -> c_int,
    error_get_last: unsafe extern "C" fn() -> c_int,
    error_get_last_str: unsafe extern "C" fn() -> *const c_char,
    // Last: the functions above point into it.
    _lib: libloading::Library,
}

#[allow(unsafe_code)]
impl DhdApi {
    fn load(search: &LibrarySearch) -> Result<DhdApi, SdkError> {
        let (lib, path) = search.load()?;
        macro_rules! sym {
            // SAFETY: each field's type is the API reference's signature of its function.
            ($name:literal) => {
                unsafe { super::vendor::symbol(&lib, "Force Dimension", &path, $name) }?
            };
        }
        Ok(DhdApi {
            get_device_count: sym!("dhdGetDeviceCount"),
            open_id: sym!("dhdOpenID"),
            close: sym!("dhdClose"),
            get_system_name: sym!("dhdGetSystemName"),
            enable_force: sym!("dhdEnableForce"),
            get_position_and_orientation_frame: sym!("dhdGetPositionAndOrientationFrame"),
            get_linear_velocity: sym!("dhdGetLinearVelocity"),
            get_gripper_angle_rad: sym!("dhdGetGripperAngleRad"),
            get_button_mask: sym!("dhdGetButtonMask"),
            set_force_and_torque_and_gripper_force: sym!("dhdSetForceAndTorqueAndGripperForce"),
            error_get_last: sym!("dhdErrorGetLast"),
            error_get_last_str: sym!("dhdErrorGetLastStr"),
            path,
            _lib: lib,
        })
    }

    /// The last error's text (not for the haptic tick: it allocates).
    fn last_error(&self) -> String {
        // SAFETY: no arguments; the string is the SDK's.
        let s = unsafe { (self.error_get_last_str)() };
        if s.is_null() {
            "no error given".into()
        } else {
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        }
    }

    /// The model name of the open device `id`.
    fn system_name(&self, id: c_char) -> String {
        // SAFETY: an open device's id; the string is the SDK's.
        let s = unsafe { (self.get_system_name)(id) };
        if s.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        }
    }

    /// The number of devices present, or why none can be counted.
    fn count(&self) -> Result<c_int, String> {
        // SAFETY: no arguments.
        let n = unsafe { (self.get_device_count)() };
        if n < 0 { Err(self.last_error()) } else { Ok(n) }
    }
}

/// A Force Dimension device (or Falcon), polled from the haptic loop.
pub struct DhdDevice {
    api: DhdApi,
    id: c_char,
    name: String,
    profile: VendorProfile,
    gripper: Option<GripperSwitch>,
}

/// Where libdhd is looked for.
pub fn search(library: Option<&str>) -> LibrarySearch {
    LibrarySearch {
        sdk: "Force Dimension",
        option: library.map(str::to_string),
        env: LIBRARY_ENV,
        defaults: DEFAULT_LIBRARIES,
        install: INSTALL,
    }
}

/// Open the device with index `index` (0: the first) with the profile in `profiles`
/// (devices/vendor) that serves its model, libdhd found by `library` (None: the environment
/// variable, then the default paths). Returns the device and its profile's file.
#[allow(unsafe_code)]
pub fn open(
    index: u8,
    library: Option<&str>,
    profiles: &str,
) -> Result<(DhdDevice, String), SdkError> {
    let api = DhdApi::load(&search(library))?;
    let candidates = load_profiles(profiles, Backend::ForceDimension)?;
    let count = api.count().map_err(|detail| SdkError::NoDevice {
        sdk: "Force Dimension",
        detail: format!("dhdGetDeviceCount: {detail}"),
    })?;
    if c_int::from(index) >= count {
        return Err(SdkError::NoDevice {
            sdk: "Force Dimension",
            detail: format!("device index {index} asked for, {count} present"),
        });
    }
    // SAFETY: an index below the count.
    let id = unsafe { (api.open_id)(index as c_char) };
    if id < 0 {
        return Err(SdkError::Call {
            sdk: "Force Dimension",
            call: "dhdOpenID",
            detail: api.last_error(),
        });
    }
    let id = id as c_char;
    let model = api.system_name(id);
    let Some((file, profile)) = pick_profile(&candidates, &model).cloned() else {
        unsafe { (api.close)(id) };
        return Err(SdkError::NoProfile {
            sdk: "Force Dimension",
            dir: profiles.to_string(),
            model,
        });
    };
    // SAFETY: an open device's id.
    if unsafe { (api.enable_force)(DHD_ON, id) } < 0 {
        let detail = api.last_error();
        unsafe { (api.close)(id) };
        return Err(SdkError::Call {
            sdk: "Force Dimension",
            call: "dhdEnableForce",
            detail,
        });
    }
    let name = format!("forcedimension:{index} ({model}, {})", api.path);
    Ok((
        DhdDevice {
            gripper: profile.gripper.map(GripperSwitch::new),
            api,
            id,
            name,
            profile,
        },
        file,
    ))
}

/// What `suture devices` reports: libdhd and the devices it counts, each opened for its model.
#[allow(unsafe_code)]
pub fn probe(library: Option<&str>) -> Result<Probe, SdkError> {
    let api = DhdApi::load(&search(library))?;
    let count = match api.count() {
        Ok(n) => n,
        Err(e) => {
            return Ok(Probe {
                library: api.path.clone(),
                devices: Vec::new(),
                none: Some(format!("dhdGetDeviceCount: {e}")),
            });
        }
    };
    let mut devices = Vec::new();
    let mut none = None;
    for i in 0..count.min(i32::from(c_char::MAX)) {
        // SAFETY: an index below the count; the device is closed again at once.
        let id = unsafe { (api.open_id)(i as c_char) };
        if id < 0 {
            none = Some(format!("dhdOpenID({i}): {}", api.last_error()));
            continue;
        }
        devices.push((format!("forcedimension:{i}"), api.system_name(id as c_char)));
        unsafe { (api.close)(id as c_char) };
    }
    if count == 0 {
        none = Some("dhdGetDeviceCount: 0 devices".into());
    }
    Ok(Probe {
        library: api.path.clone(),
        devices,
        none,
    })
}

impl DhdDevice {
    /// The profile.
    pub fn profile(&self) -> &VendorProfile {
        &self.profile
    }

    /// A failed call as a device fault (no allocation).
    fn fault(&self, call: &'static str) -> DeviceError {
        // SAFETY: no arguments.
        #[allow(unsafe_code)]
        let code = unsafe { (self.api.error_get_last)() };
        DeviceError::Sdk {
            call,
            code: i64::from(code),
        }
    }
}

#[allow(unsafe_code)]
impl HapticDevice for DhdDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        let (mut p, mut v) = ([0.0f64; 3], [0.0f64; 3]);
        let mut m = [[0.0f64; 3]; 3];
        let [px, py, pz] = &mut p;
        // SAFETY: out-pointers to locals of the documented types; our open device's id.
        if unsafe { (self.api.get_position_and_orientation_frame)(px, py, pz, &mut m, self.id) } < 0
        {
            return Err(self.fault("dhdGetPositionAndOrientationFrame"));
        }
        let [vx, vy, vz] = &mut v;
        if unsafe { (self.api.get_linear_velocity)(vx, vy, vz, self.id) } < 0 {
            return Err(self.fault("dhdGetLinearVelocity"));
        }
        let mut buttons = unsafe { (self.api.get_button_mask)(self.id) };
        if let Some(g) = self.gripper.as_mut() {
            let mut angle = 0.0;
            if unsafe { (self.api.get_gripper_angle_rad)(&mut angle, self.id) } < 0 {
                return Err(self.fault("dhdGetGripperAngleRad"));
            }
            if !angle.is_finite() {
                return Err(DeviceError::Sdk {
                    call: "dhdGetGripperAngleRad (non-finite)",
                    code: -1,
                });
            }
            buttons |= g.update(t, angle);
        }
        if !p
            .iter()
            .chain(&v)
            .chain(m.iter().flatten())
            .all(|x| x.is_finite())
        {
            return Err(DeviceError::Sdk {
                call: "dhdGetPositionAndOrientationFrame (non-finite)",
                code: -1,
            });
        }
        // Row-major [3][3].
        let rotation = Mat3::new(
            m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2],
        );
        let pr = &self.profile;
        Ok(Some(DeviceSample {
            t,
            position: pr.position(&Vec3::from(p)),
            rotation: pr.orientation(&rotation),
            velocity: pr.velocity(&Vec3::from(v)),
            angular_velocity: Vec3::zeros(),
            buttons,
        }))
    }

    /// Force, and torque where the profile gives the device a torque limit; no gripper force.
    fn command(&mut self, force: &Vec3, torque: &Vec3, enable: bool) -> Result<(), DeviceError> {
        let (f, t) = if enable {
            let t = if self.profile.max_torque > 0.0 {
                self.profile.to_sdk(torque)
            } else {
                Vec3::zeros()
            };
            (self.profile.to_sdk(force), t)
        } else {
            (Vec3::zeros(), Vec3::zeros())
        };
        // SAFETY: plain values; our open device's id. A positive return
        // (DHD_MOTOR_SATURATED) is not an error.
        let r = unsafe {
            (self.api.set_force_and_torque_and_gripper_force)(
                f.x, f.y, f.z, t.x, t.y, t.z, 0.0, self.id,
            )
        };
        if r < 0 {
            return Err(self.fault("dhdSetForceAndTorqueAndGripperForce"));
        }
        Ok(())
    }

    fn max_force(&self) -> f64 {
        self.profile.max_force
    }
}

impl Drop for DhdDevice {
    fn drop(&mut self) {
        // SAFETY: our open device's id; closing releases its motors.
        #[allow(unsafe_code)]
        unsafe {
            (self.api.close)(self.id)
        };
    }
}
