//! What the two vendor-SDK backends (device::openhaptics, device::forcedimension) share: their
//! device profiles (devices/vendor/*.toml: the SDK's units and axes mapped to SI and suture's
//! device frame, the limits, the gripper), finding and loading the vendor's shared library at
//! run time, and the gripper's angle turned into presses of the jaw button.
//!
//! suture's device frame (devices/README.md): right-handed, x right, y up, z toward the user,
//! metres, origin at the workspace centre.

use crate::located::{self, Doc, FileError, Seg};
use crate::math::{Mat3, Quat, Vec3};

use serde::Deserialize;

/// Which vendor SDK a profile is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// 3D Systems OpenHaptics (HD API): Touch, Touch X, Phantom.
    OpenHaptics,
    /// Force Dimension DHD: omega, sigma, delta, lambda, Novint Falcon.
    ForceDimension,
}

impl Backend {
    /// The name used on the command line (`--device openhaptics`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::OpenHaptics => "openhaptics",
            Backend::ForceDimension => "forcedimension",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    max_force: f64,
    #[serde(default)]
    max_torque: f64,
    max_stiffness: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GripperFile {
    close_below: f64,
    open_above: f64,
    #[serde(default)]
    button: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VendorFile {
    name: String,
    backend: Backend,
    models: Vec<String>,
    position_scale: f64,
    axes: [String; 3],
    #[serde(default)]
    centre: [f64; 3],
    limits: LimitsFile,
    gripper: Option<GripperFile>,
}

/// The gripper's angle turned into the jaw button: below `close_below` [rad] it is closed,
/// above `open_above` [rad] open (the gap between is hysteresis).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GripperSpec {
    /// Angle under which the gripper counts as closed [rad].
    pub close_below: f64,
    /// Angle over which it counts as open [rad].
    pub open_above: f64,
    /// Button bit pressed at each change (0: the jaw button, sim::GRASP_BUTTON).
    pub button: u32,
}

/// A validated vendor device profile.
#[derive(Clone, Debug, PartialEq)]
pub struct VendorProfile {
    /// Human-readable name.
    pub name: String,
    /// The SDK.
    pub backend: Backend,
    /// The model names (as the SDK reports them) it serves; `"*"` serves any model of its SDK.
    pub models: Vec<String>,
    /// Rotation from the SDK's axes to suture's device frame (a signed permutation).
    pub sdk_to_device: Mat3,
    /// Metres per SDK length unit (OpenHaptics: 1e-3, millimetres; DHD: 1, metres).
    pub position_scale: f64,
    /// Workspace centre in suture's device frame [m], subtracted from every position.
    pub centre: Vec3,
    /// Largest force [N].
    pub max_force: f64,
    /// Largest torque [N m] (0: the device renders none).
    pub max_torque: f64,
    /// Largest stable coupling stiffness [N/m].
    pub max_stiffness: f64,
    /// The gripper, if the device has one.
    pub gripper: Option<GripperSpec>,
}

/// An axis name `+x`, `-y`, … as (SDK axis index, sign).
fn signed_axis(s: &str) -> Option<(usize, f64)> {
    let (sign, axis) = match s.as_bytes() {
        [b'+', a] => (1.0, *a),
        [b'-', a] => (-1.0, *a),
        _ => return None,
    };
    let i = match axis {
        b'x' => 0,
        b'y' => 1,
        b'z' => 2,
        _ => return None,
    };
    Some((i, sign))
}

impl VendorProfile {
    /// Load and validate a vendor profile file.
    pub fn load(path: &str) -> Result<Self, FileError> {
        let text = located::read(path, "device profile")?;
        Self::parse(path, &text)
    }

    /// Parse and validate profile text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, FileError> {
        use Seg::{Idx, Key};
        let (vf, doc): (VendorFile, _) = Doc::parse(file, text)?;
        if vf.models.is_empty() {
            return Err(doc.err(
                &[Key("models")],
                "must list at least one model name (or \"*\")".into(),
            ));
        }
        if !(vf.position_scale.is_finite() && vf.position_scale > 0.0) {
            return Err(doc.err(
                &[Key("position_scale")],
                format!(
                    "must be > 0 and finite [m per SDK unit], got {}",
                    vf.position_scale
                ),
            ));
        }
        let mut m = Mat3::zeros();
        let mut used = [false; 3];
        for (row, name) in vf.axes.iter().enumerate() {
            let Some((col, sign)) = signed_axis(name) else {
                return Err(doc.err(
                    &[Key("axes"), Idx(row)],
                    format!("must be a signed SDK axis (+x, -x, +y, -y, +z, -z), got \"{name}\""),
                ));
            };
            if used[col] {
                return Err(doc.err(
                    &[Key("axes"), Idx(row)],
                    format!("names SDK axis {} twice", &name[1..]),
                ));
            }
            used[col] = true;
            m[(row, col)] = sign;
        }
        if m.determinant() < 0.0 {
            return Err(doc.err(
                &[Key("axes")],
                "is a reflection (left-handed); flip one more axis".into(),
            ));
        }
        if vf.centre.iter().any(|c| !c.is_finite()) {
            return Err(doc.err(&[Key("centre")], "must be finite [m]".into()));
        }
        let lim = &vf.limits;
        for (k, v, positive) in [
            ("max_force", lim.max_force, true),
            ("max_torque", lim.max_torque, false),
            ("max_stiffness", lim.max_stiffness, true),
        ] {
            let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 };
            if !ok {
                return Err(doc.err(
                    &[Key("limits"), Key(k)],
                    format!(
                        "must be {} and finite, got {v}",
                        if positive { "> 0" } else { "≥ 0" }
                    ),
                ));
            }
        }
        let gripper = match &vf.gripper {
            None => None,
            Some(g) => {
                if !(g.close_below.is_finite()
                    && g.open_above.is_finite()
                    && g.close_below < g.open_above)
                {
                    return Err(doc.err(
                        &[Key("gripper"), Key("open_above")],
                        format!(
                            "must be finite and above close_below ({} rad), got {}",
                            g.close_below, g.open_above
                        ),
                    ));
                }
                if g.button > 31 {
                    return Err(doc.err(
                        &[Key("gripper"), Key("button")],
                        format!("must be a button bit in 0..=31, got {}", g.button),
                    ));
                }
                Some(GripperSpec {
                    close_below: g.close_below,
                    open_above: g.open_above,
                    button: g.button,
                })
            }
        };
        Ok(VendorProfile {
            name: vf.name,
            backend: vf.backend,
            models: vf.models,
            sdk_to_device: m,
            position_scale: vf.position_scale,
            centre: Vec3::from(vf.centre),
            max_force: lim.max_force,
            max_torque: lim.max_torque,
            max_stiffness: lim.max_stiffness,
            gripper,
        })
    }

    /// Whether it serves `model` (as the SDK names it; case-insensitive), not counting `"*"`.
    pub fn names(&self, model: &str) -> bool {
        self.models.iter().any(|m| m.eq_ignore_ascii_case(model))
    }

    /// A position in SDK units and axes, in suture's device frame [m].
    pub fn position(&self, p_sdk: &Vec3) -> Vec3 {
        self.sdk_to_device * p_sdk * self.position_scale - self.centre
    }

    /// A velocity in SDK units and axes (per second), in suture's device frame [m/s].
    pub fn velocity(&self, v_sdk: &Vec3) -> Vec3 {
        self.sdk_to_device * v_sdk * self.position_scale
    }

    /// An orientation given as a rotation matrix in SDK axes, in suture's device frame.
    pub fn orientation(&self, r_sdk: &Mat3) -> Quat {
        let r = self.sdk_to_device * r_sdk * self.sdk_to_device.transpose();
        // Capped iterations: a reading far from a rotation cannot hang the haptic tick.
        crate::math::rotation_from_matrix(&r)
    }

    /// A force [N] (or torque [N m]) in suture's device frame, in SDK axes.
    pub fn to_sdk(&self, v_device: &Vec3) -> Vec3 {
        self.sdk_to_device.transpose() * v_device
    }
}

/// The vendor profiles for `backend` in `dir` (every `*.toml`, sorted by file name), with
/// their files; the first bad one is an error.
pub fn load_profiles(
    dir: &str,
    backend: Backend,
) -> Result<Vec<(String, VendorProfile)>, FileError> {
    let files = located::toml_files(dir, "vendor device profile folder")?;
    let mut out = Vec::new();
    for f in files {
        let p = VendorProfile::load(&f)?;
        if p.backend == backend {
            out.push((f, p));
        }
    }
    Ok(out)
}

/// The profile for a device that calls itself `model`: the first naming it, else the first
/// serving any model (`"*"`).
pub fn pick_profile<'a>(
    profiles: &'a [(String, VendorProfile)],
    model: &str,
) -> Option<&'a (String, VendorProfile)> {
    profiles
        .iter()
        .find(|(_, p)| p.names(model))
        .or_else(|| profiles.iter().find(|(_, p)| p.names("*")))
}

/// Where a vendor's shared library is looked for, in order: the command line's path, the
/// environment variable, then the vendor's default names and install paths.
#[derive(Clone, Debug, PartialEq)]
pub struct LibrarySearch {
    /// The SDK's name in messages.
    pub sdk: &'static str,
    /// A path given on the command line.
    pub option: Option<String>,
    /// The environment variable naming the library.
    pub env: &'static str,
    /// Default names (found through the dynamic loader's path) and install paths.
    pub defaults: &'static [&'static str],
    /// How to install it, for the error.
    pub install: &'static str,
}

impl LibrarySearch {
    /// The candidates in order, each with where it came from.
    pub fn candidates(&self) -> Vec<(String, String)> {
        if let Some(p) = &self.option {
            return vec![(p.clone(), "given on the command line".into())];
        }
        if let Ok(p) = std::env::var(self.env)
            && !p.is_empty()
        {
            return vec![(p, format!("from {}", self.env))];
        }
        self.defaults
            .iter()
            .map(|d| (d.to_string(), "default".to_string()))
            .collect()
    }

    /// Load the first candidate that loads.
    pub fn load(&self) -> Result<(libloading::Library, String), SdkError> {
        let mut tried = Vec::new();
        for (path, from) in self.candidates() {
            // SAFETY: loading a library runs its initialisers; the vendor SDKs' are plain C
            // set-up. This is the one way to use an SDK that the build must not link.
            #[allow(unsafe_code)]
            match unsafe { libloading::Library::new(&path) } {
                Ok(lib) => return Ok((lib, path)),
                Err(e) => tried.push(format!("{path} ({from}: {})", short_dl_error(&e))),
            }
        }
        Err(SdkError::Missing {
            sdk: self.sdk,
            tried: tried.join(", "),
            env: self.env,
            install: self.install,
        })
    }
}

/// The function `name` of a loaded vendor library, as the type `T` (an `unsafe extern "C" fn`
/// pointer).
///
/// # Safety
/// `T` must be the function's signature as the vendor's API reference gives it.
#[allow(unsafe_code)]
pub unsafe fn symbol<T: Copy>(
    lib: &libloading::Library,
    sdk: &'static str,
    path: &str,
    name: &'static str,
) -> Result<T, SdkError> {
    let mut cname = Vec::with_capacity(name.len() + 1);
    cname.extend_from_slice(name.as_bytes());
    cname.push(0);
    // SAFETY: the caller vouches for the signature; the pointer is copied out, valid while
    // the library stays loaded (the backends keep it beside their pointers).
    match unsafe { lib.get::<T>(&cname) } {
        Ok(f) => Ok(*f),
        Err(_) => Err(SdkError::Symbol {
            sdk,
            library: path.to_string(),
            symbol: name,
        }),
    }
}

/// dlopen's message without the path it repeats.
fn short_dl_error(e: &libloading::Error) -> String {
    let s = e.to_string();
    match s.rfind(": ") {
        Some(i) => s[i + 2..].to_string(),
        None => s,
    }
}

/// Why a vendor device could not be opened or listed.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// The vendor's library is not on this machine (or does not load).
    #[error(
        "{sdk}: cannot load the vendor's library; looked for {tried}. {install} Or give its path with {env}=PATH."
    )]
    Missing {
        /// The SDK.
        sdk: &'static str,
        /// Every path tried, with dlopen's reason.
        tried: String,
        /// The environment variable that names the library.
        env: &'static str,
        /// How to install it.
        install: &'static str,
    },
    /// The library loaded but lacks a function the backend uses.
    #[error("{sdk}: {library} has no function {symbol}: is it the vendor's library?")]
    Symbol {
        /// The SDK.
        sdk: &'static str,
        /// The library's path.
        library: String,
        /// The missing function.
        symbol: &'static str,
    },
    /// The SDK found no device.
    #[error("{sdk}: no device found ({detail})")]
    NoDevice {
        /// The SDK.
        sdk: &'static str,
        /// What the SDK said.
        detail: String,
    },
    /// The SDK refused to open or set up the device.
    #[error("{sdk}: {call} failed: {detail}")]
    Call {
        /// The SDK.
        sdk: &'static str,
        /// The function that failed.
        call: &'static str,
        /// What the SDK said.
        detail: String,
    },
    /// No profile in the folder serves the device.
    #[error(
        "{sdk}: no profile in {dir}/ serves the device \"{model}\" (add its model name, or \"*\", to a profile's models)"
    )]
    NoProfile {
        /// The SDK.
        sdk: &'static str,
        /// The profile folder.
        dir: String,
        /// The model the SDK reported.
        model: String,
    },
    /// A bad profile (located).
    #[error(transparent)]
    Profile(#[from] FileError),
}

/// What `suture devices` says of a backend: the library it loaded and the devices it found,
/// or why it found none.
#[derive(Debug)]
pub struct Probe {
    /// The library loaded (its path).
    pub library: String,
    /// Each device found: its identifier for `--device` and the model the SDK reports.
    pub devices: Vec<(String, String)>,
    /// Why no device was found (the SDK's message), when none was.
    pub none: Option<String>,
}

/// Length of a jaw-button press made by the gripper [s]: long enough for the physics (which
/// takes the newest target each step) to see it, and kept released as long after it.
pub const GRIPPER_PRESS: f64 = 0.02;

/// The gripper's angle turned into presses of a button: one press at each change between open
/// and closed. The instrument's jaws start closed, and so does the switch: a gripper open at
/// start opens them; from then on the jaws follow the gripper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GripperSwitch {
    spec: GripperSpec,
    /// The state last pressed for (the jaws' state).
    told_closed: bool,
    /// The gripper's state (with hysteresis).
    closed: bool,
    /// When the current press started [s].
    pressed_at: Option<f64>,
    /// When the last press ended [s].
    released_at: f64,
}

impl GripperSwitch {
    /// A switch starting closed.
    pub fn new(spec: GripperSpec) -> Self {
        GripperSwitch {
            spec,
            told_closed: true,
            closed: true,
            pressed_at: None,
            released_at: f64::NEG_INFINITY,
        }
    }

    /// The button bits at time `t` [s] for the gripper at `angle` [rad]. Allocation-free.
    pub fn update(&mut self, t: f64, angle: f64) -> u32 {
        if angle < self.spec.close_below {
            self.closed = true;
        } else if angle > self.spec.open_above {
            self.closed = false;
        }
        if let Some(at) = self.pressed_at {
            if t - at < GRIPPER_PRESS {
                return 1 << self.spec.button;
            }
            self.pressed_at = None;
            self.released_at = t;
        }
        if self.closed != self.told_closed && t - self.released_at >= GRIPPER_PRESS {
            self.told_closed = self.closed;
            self.pressed_at = Some(t);
            return 1 << self.spec.button;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOUCH: &str = r#"
name = "t"
backend = "openhaptics"
models = ["Touch", "*"]
position_scale = 1.0e-3
axes = ["+x", "+y", "+z"]
centre = [0.0, 0.0, 0.01]
[limits]
max_force = 3.3
max_stiffness = 1000.0
"#;

    const FALCON: &str = r#"
name = "f"
backend = "forcedimension"
models = ["Falcon"]
position_scale = 1.0
axes = ["+y", "+z", "+x"]
[limits]
max_force = 9.0
max_stiffness = 2000.0
[gripper]
close_below = 0.2
open_above = 0.3
"#;

    #[test]
    fn units_and_axes_map_to_si_and_the_device_frame() {
        let t = VendorProfile::parse("t.toml", TOUCH).unwrap();
        let p = t.position(&Vec3::new(10.0, -20.0, 30.0));
        assert!((p - Vec3::new(0.01, -0.02, 0.02)).norm() < 1e-15);
        // DHD: x toward the user, y right, z up.
        let f = VendorProfile::parse("f.toml", FALCON).unwrap();
        assert_eq!(
            f.position(&Vec3::new(0.01, 0.02, 0.03)),
            Vec3::new(0.02, 0.03, 0.01)
        );
        assert_eq!(
            f.to_sdk(&Vec3::new(1.0, 2.0, 3.0)),
            Vec3::new(3.0, 1.0, 2.0)
        );
        // A quarter turn about DHD's z (up) is a quarter turn about suture's y.
        let rz = nalgebra::Rotation3::from_axis_angle(&Vec3::z_axis(), 0.5);
        let q = f.orientation(rz.matrix());
        assert!((q.scaled_axis() - Vec3::new(0.0, 0.5, 0.0)).norm() < 1e-12);
        assert!(t.names("touch") && !t.names("Falcon") && t.names("*"));
    }

    #[test]
    fn bad_profiles_name_file_line_and_field() {
        let e = |text: String| {
            VendorProfile::parse("v.toml", &text)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e(FALCON.replace("\"+x\"]", "\"+w\"]")),
            "v.toml:6:21: axes[2] must be a signed SDK axis (+x, -x, +y, -y, +z, -z), got \"+w\""
        );
        assert_eq!(
            e(FALCON.replace("\"+x\"]", "\"-x\"]")),
            "v.toml:6:8: axes is a reflection (left-handed); flip one more axis"
        );
        assert_eq!(
            e(FALCON.replace("max_force = 9.0", "max_force = -1.0")),
            "v.toml:8:13: limits.max_force must be > 0 and finite, got -1"
        );
        assert_eq!(
            e(FALCON.replace("open_above = 0.3", "open_above = 0.1")),
            "v.toml:12:14: gripper.open_above must be finite and above close_below (0.2 rad), got 0.1"
        );
    }

    #[test]
    fn the_gripper_presses_the_button_once_per_change() {
        let mut g = GripperSwitch::new(GripperSpec {
            close_below: 0.2,
            open_above: 0.3,
            button: 0,
        });
        let mut presses = Vec::new();
        let mut last = 0;
        // Closed, opened at 0.1 s, a wobble inside the hysteresis, closed at 0.3 s.
        for k in 0..500 {
            let t = k as f64 * 1e-3;
            let a = match t {
                t if t < 0.1 => 0.1,
                t if t < 0.2 => 0.5,
                t if t < 0.3 => 0.25,
                _ => 0.05,
            };
            let b = g.update(t, a);
            if b != 0 && last == 0 {
                presses.push(k);
            }
            last = b;
        }
        assert_eq!(presses, vec![100, 300]);
    }
}
