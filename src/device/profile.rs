//! Device profiles (devices/*.toml): what a HID device is and how its reports map to SI.
//!
//! A profile names the device (vendor and product ids), its input report fields (pose or rate
//! axes, buttons), an optional output report for force and torque, its limits and its
//! capabilities. Decoding and encoding go through [`Field`]: little-endian bit fields with an
//! affine map to SI units. See devices/README.md for the format and the open stylus protocol.

use super::report::Field;
use crate::located::{self, Doc, FileError, Seg};
use crate::math::{Quat, Vec3};
use serde::Deserialize;

/// What an input field carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    /// Position [m] (or linear rate [m/s] in rate mode), world-aligned device axes.
    X,
    /// See [`Axis::X`].
    Y,
    /// See [`Axis::X`].
    Z,
    /// Rotation vector component [rad] (or angular rate [rad/s] in rate mode).
    Rx,
    /// See [`Axis::Rx`].
    Ry,
    /// See [`Axis::Rx`].
    Rz,
    /// Orientation quaternion component [-] (position devices).
    Qw,
    /// See [`Axis::Qw`].
    Qx,
    /// See [`Axis::Qw`].
    Qy,
    /// See [`Axis::Qw`].
    Qz,
    /// A bit mask of buttons (bit k = button k).
    Buttons,
}

/// What an output field carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutAxis {
    /// Force [N] along device x.
    Fx,
    /// Force along y.
    Fy,
    /// Force along z.
    Fz,
    /// Torque [N m] about x.
    Tx,
    /// Torque about y.
    Ty,
    /// Torque about z.
    Tz,
    /// A constant enable flag (value 1 while force is allowed, 0 to release).
    Enable,
}

/// How the input is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Axes are a pose (haptic stylus).
    Position,
    /// Axes are velocities (SpaceMouse): the coupling integrates them.
    Rate,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldFile<A> {
    name: A,
    report_id: u8,
    byte: usize,
    #[serde(default)]
    bit: u32,
    bits: u32,
    #[serde(default)]
    signed: bool,
    #[serde(default = "one")]
    scale: f64,
    #[serde(default)]
    offset: f64,
}

impl<A> FieldFile<A> {
    fn field(&self) -> Field {
        Field {
            byte: self.byte,
            bit: self.bit,
            bits: self.bits,
            signed: self.signed,
            scale: self.scale,
            offset: self.offset,
        }
    }
}

fn one() -> f64 {
    1.0
}

/// Longest input or output report a profile may declare [bytes], id included: Linux's
/// `HID_MAX_BUFFER_SIZE` (16 KiB, include/linux/hid.h), the largest report hidraw passes.
/// The device's buffers are allocated at this length when it opens.
pub const MAX_REPORT_LENGTH: usize = 16 * 1024;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputFile {
    report_id: u8,
    length: usize,
    fields: Vec<FieldFile<OutAxis>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    #[serde(default)]
    max_force: f64,
    #[serde(default)]
    max_torque: f64,
    #[serde(default)]
    max_stiffness: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: String,
    vendor_id: u16,
    product_ids: Vec<u16>,
    mode: Mode,
    /// Input report length including the id byte [bytes].
    input_length: usize,
    input: Vec<FieldFile<Axis>>,
    output: Option<OutputFile>,
    limits: LimitsFile,
}

/// An input field of a profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputField {
    /// What it carries.
    pub axis: Axis,
    /// Report id (byte 0 of the report).
    pub report_id: u8,
    /// The bit field.
    pub field: Field,
}

/// An output field of a profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputField {
    /// What it carries.
    pub axis: OutAxis,
    /// The bit field.
    pub field: Field,
}

/// A validated device profile.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceProfile {
    /// Human-readable name.
    pub name: String,
    /// USB vendor id.
    pub vendor_id: u16,
    /// USB product ids this profile serves.
    pub product_ids: Vec<u16>,
    /// Pose or rate input.
    pub mode: Mode,
    /// Input report length [bytes], id included.
    pub input_length: usize,
    /// Input fields.
    pub input: Vec<InputField>,
    /// Output report: id, length [bytes] and fields (absent: no force feedback).
    pub output: Option<(u8, usize, Vec<OutputField>)>,
    /// Largest force [N] the device may be sent (0 without force feedback).
    pub max_force: f64,
    /// Largest torque [N m].
    pub max_torque: f64,
    /// Largest coupling stiffness [N/m] the device renders stably.
    pub max_stiffness: f64,
}

/// The input state accumulated from reports (devices spread axes over several reports).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InputState {
    /// x, y, z [m or m/s].
    pub linear: Vec3,
    /// rx, ry, rz [rad or rad/s].
    pub angular: Vec3,
    /// Orientation quaternion (w, x, y, z), if the device reports one.
    pub quat: Option<[f64; 4]>,
    /// Button mask.
    pub buttons: u32,
}

impl InputState {
    /// The orientation: the reported quaternion (normalised), else the rotation vector.
    pub fn rotation(&self) -> Quat {
        match self.quat {
            Some([w, x, y, z]) => Quat::from_quaternion(nalgebra::Quaternion::new(w, x, y, z)),
            None => Quat::from_scaled_axis(self.angular),
        }
    }
}

impl DeviceProfile {
    /// Load and validate a profile file.
    pub fn load(path: &str) -> Result<Self, FileError> {
        let text = located::read(path, "device profile")?;
        Self::parse(path, &text)
    }

    /// Parse and validate profile text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, FileError> {
        use Seg::{Idx, Key};
        let (pf, doc): (ProfileFile, _) = Doc::parse(file, text)?;
        if pf.product_ids.is_empty() {
            return Err(doc.err(&[Key("product_ids")], "must list at least one id".into()));
        }
        if !(2..=MAX_REPORT_LENGTH).contains(&pf.input_length) {
            return Err(doc.err(
                &[Key("input_length")],
                format!(
                    "must be in 2..={MAX_REPORT_LENGTH} [bytes] (report id and data, at most a HID report), got {}",
                    pf.input_length
                ),
            ));
        }
        if let Some(o) = &pf.output
            && !(2..=MAX_REPORT_LENGTH).contains(&o.length)
        {
            return Err(doc.err(
                &[Key("output"), Key("length")],
                format!(
                    "must be in 2..={MAX_REPORT_LENGTH} [bytes] (report id and data, at most a HID report), got {}",
                    o.length
                ),
            ));
        }
        if pf.input.is_empty() {
            return Err(doc.err(&[Key("input")], "must list at least one field".into()));
        }
        let field = |bf: Field, path: &[Seg], len: usize| -> Result<Field, FileError> {
            if let Err(e) = bf.validate() {
                return Err(doc.err(path, format!("{e}")));
            }
            if bf.byte == 0 {
                return Err(doc.err(
                    path,
                    "byte 0 is the report id; fields start at byte 1".into(),
                ));
            }
            if bf.last_byte() >= len {
                return Err(doc.err(
                    path,
                    format!(
                        "ends in byte {} but the report has {len} bytes",
                        bf.last_byte()
                    ),
                ));
            }
            Ok(bf)
        };
        let mut input = Vec::with_capacity(pf.input.len());
        for (i, f) in pf.input.iter().enumerate() {
            let path = [Key("input"), Idx(i), Key("byte")];
            input.push(InputField {
                axis: f.name,
                report_id: f.report_id,
                field: field(f.field(), &path, pf.input_length)?,
            });
        }
        let output = match &pf.output {
            None => None,
            Some(o) => {
                let mut fields = Vec::with_capacity(o.fields.len());
                for (i, f) in o.fields.iter().enumerate() {
                    let path = [Key("output"), Key("fields"), Idx(i), Key("byte")];
                    fields.push(OutputField {
                        axis: f.name,
                        field: field(f.field(), &path, o.length)?,
                    });
                }
                Some((o.report_id, o.length, fields))
            }
        };
        let lim = &pf.limits;
        for (k, v) in [
            ("max_force", lim.max_force),
            ("max_torque", lim.max_torque),
            ("max_stiffness", lim.max_stiffness),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(doc.err(
                    &[Key("limits"), Key(k)],
                    format!("must be ≥ 0 and finite, got {v}"),
                ));
            }
        }
        if output.is_some() && !(lim.max_force > 0.0 && lim.max_stiffness > 0.0) {
            return Err(doc.err(
                &[Key("limits"), Key("max_force")],
                "must be > 0, with max_stiffness > 0, for a device with an output report".into(),
            ));
        }
        Ok(DeviceProfile {
            name: pf.name,
            vendor_id: pf.vendor_id,
            product_ids: pf.product_ids,
            mode: pf.mode,
            input_length: pf.input_length,
            input,
            output,
            max_force: lim.max_force,
            max_torque: lim.max_torque,
            max_stiffness: lim.max_stiffness,
        })
    }

    /// Whether the profile serves this USB device.
    pub fn matches(&self, vendor_id: u16, product_id: u16) -> bool {
        self.vendor_id == vendor_id && self.product_ids.contains(&product_id)
    }

    /// Apply one input report (byte 0 = report id) to `state`. Returns how many fields it
    /// carried (0: a report this profile does not describe). A report too short for a field
    /// that its id promises is an error (garbage from the device).
    pub fn decode(
        &self,
        report: &[u8],
        state: &mut InputState,
    ) -> Result<usize, super::FieldError> {
        let Some(&id) = report.first() else {
            return Ok(0);
        };
        let mut n = 0;
        let mut quat = state.quat.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        let mut has_quat = false;
        for f in self.input.iter().filter(|f| f.report_id == id) {
            let v = f.field.decode(report)?;
            match f.axis {
                Axis::X => state.linear.x = v,
                Axis::Y => state.linear.y = v,
                Axis::Z => state.linear.z = v,
                Axis::Rx => state.angular.x = v,
                Axis::Ry => state.angular.y = v,
                Axis::Rz => state.angular.z = v,
                Axis::Qw => (quat[0], has_quat) = (v, true),
                Axis::Qx => (quat[1], has_quat) = (v, true),
                Axis::Qy => (quat[2], has_quat) = (v, true),
                Axis::Qz => (quat[3], has_quat) = (v, true),
                Axis::Buttons => state.buttons = f.field.raw(report)? as u32,
            }
            n += 1;
        }
        if has_quat {
            state.quat = Some(quat);
        }
        Ok(n)
    }

    /// Encode a force [N] and torque [N m] command (already limited) into `out` (resized to the
    /// output report's length, byte 0 = report id). `enable = false` releases the device.
    /// Returns whether any field saturated; `None` if the device has no output report.
    pub fn encode(
        &self,
        force: &Vec3,
        torque: &Vec3,
        enable: bool,
        out: &mut [u8],
    ) -> Option<Result<bool, super::FieldError>> {
        let (id, len, fields) = self.output.as_ref()?;
        if out.len() < *len {
            return Some(Err(super::FieldError::TooShort {
                len: out.len(),
                need: len - 1,
            }));
        }
        out[..*len].iter_mut().for_each(|b| *b = 0);
        out[0] = *id;
        let mut saturated = false;
        for f in fields {
            let v = match f.axis {
                OutAxis::Fx => force.x,
                OutAxis::Fy => force.y,
                OutAxis::Fz => force.z,
                OutAxis::Tx => torque.x,
                OutAxis::Ty => torque.y,
                OutAxis::Tz => torque.z,
                OutAxis::Enable => f64::from(u8::from(enable)) * f.field.scale + f.field.offset,
            };
            match f.field.encode(v, out) {
                Ok(s) => saturated |= s,
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(saturated))
    }
}

/// Every `*.toml` profile in `dir`, sorted by file name; the first bad one is an error.
pub fn load_dir(dir: &str) -> Result<Vec<(String, DeviceProfile)>, FileError> {
    located::toml_files(dir, "device profile folder")?
        .into_iter()
        .map(|f| DeviceProfile::load(&f).map(|p| (f, p)))
        .collect()
}
