//! A scripted device: plays a trajectory file, for tests, demos and soak runs.
//!
//! Format: CSV text, one key pose per line, `t, x, y, z, rx, ry, rz, buttons`: time [s] (strictly
//! increasing), position [m], rotation vector [rad], button mask. Blank lines and lines starting
//! with `#` are ignored; the first other line may be a header starting with `t`. Between keys the
//! position is linear and the orientation a slerp; before the first key and after the last the
//! pose holds.

use super::backend::{DeviceError, DeviceSample, HapticDevice};
use crate::located::FileError;
use crate::math::{Quat, Vec3};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Key {
    t: f64,
    p: Vec3,
    q: Quat,
    buttons: u32,
}

/// A device that replays key poses.
#[derive(Clone, Debug)]
pub struct ScriptedDevice {
    name: String,
    keys: Vec<Key>,
}

impl ScriptedDevice {
    /// Load a trajectory file.
    pub fn load(path: &str) -> Result<Self, FileError> {
        let text = crate::located::read(path, "trajectory")?;
        Self::parse(path, &text)
    }

    /// Parse trajectory text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, FileError> {
        const COLUMNS: [&str; 8] = ["t", "x", "y", "z", "rx", "ry", "rz", "buttons"];
        let err = |line: usize, col: usize, field: &str, message: String| FileError {
            file: file.to_string(),
            line,
            col,
            field: field.to_string(),
            message,
        };
        let mut keys: Vec<Key> = Vec::new();
        for (ln, raw) in text.lines().enumerate() {
            let line = ln + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if keys.is_empty() && trimmed.starts_with('t') {
                continue; // header
            }
            let mut v = [0.0f64; 8];
            let mut col = 1;
            let mut count = 0;
            for (k, cell) in raw.split(',').enumerate() {
                if k >= 8 {
                    return Err(err(
                        line,
                        col,
                        "",
                        format!("has more than 8 columns ({})", COLUMNS.join(", ")),
                    ));
                }
                let c = col + cell.len() - cell.trim_start().len();
                v[k] = cell.trim().parse::<f64>().map_err(|_| {
                    err(
                        line,
                        c,
                        COLUMNS[k],
                        format!("must be a number, got \"{}\"", cell.trim()),
                    )
                })?;
                if !v[k].is_finite() {
                    return Err(err(
                        line,
                        c,
                        COLUMNS[k],
                        format!("must be finite, got {}", v[k]),
                    ));
                }
                col += cell.chars().count() + 1;
                count += 1;
            }
            if count != 8 {
                return Err(err(
                    line,
                    1,
                    "",
                    format!("needs 8 columns ({}), got {count}", COLUMNS.join(", ")),
                ));
            }
            if let Some(prev) = keys.last()
                && v[0] <= prev.t
            {
                return Err(err(
                    line,
                    1,
                    "t",
                    format!("must increase strictly, got {} after {}", v[0], prev.t),
                ));
            }
            if v[7] < 0.0 || v[7] > u32::MAX as f64 || v[7].fract() != 0.0 {
                return Err(err(
                    line,
                    col.saturating_sub(1),
                    "buttons",
                    format!("must be a whole number in 0..=4294967295, got {}", v[7]),
                ));
            }
            keys.push(Key {
                t: v[0],
                p: Vec3::new(v[1], v[2], v[3]),
                q: Quat::from_scaled_axis(Vec3::new(v[4], v[5], v[6])),
                buttons: v[7] as u32,
            });
        }
        if keys.is_empty() {
            return Err(err(0, 0, "", "has no key poses".to_string()));
        }
        Ok(ScriptedDevice {
            name: format!("scripted:{file}"),
            keys,
        })
    }

    /// Duration of the script [s] (time of the last key).
    pub fn duration(&self) -> f64 {
        self.keys[self.keys.len() - 1].t
    }

    /// The pose at time `t` [s].
    pub fn sample(&self, t: f64) -> DeviceSample {
        let n = self.keys.len();
        let hold = |k: &Key| DeviceSample {
            t,
            position: k.p,
            rotation: k.q,
            velocity: Vec3::zeros(),
            angular_velocity: Vec3::zeros(),
            buttons: k.buttons,
        };
        if t <= self.keys[0].t {
            return hold(&self.keys[0]);
        }
        if t >= self.keys[n - 1].t {
            return hold(&self.keys[n - 1]);
        }
        let i = self.keys.partition_point(|k| k.t <= t) - 1;
        let (a, b) = (&self.keys[i], &self.keys[i + 1]);
        let span = b.t - a.t;
        let s = (t - a.t) / span;
        let rel = (a.q.inverse() * b.q).scaled_axis();
        DeviceSample {
            t,
            position: a.p.lerp(&b.p, s),
            rotation: a.q * Quat::from_scaled_axis(rel * s),
            velocity: (b.p - a.p) / span,
            angular_velocity: a.q * rel / span,
            buttons: a.buttons,
        }
    }
}

impl HapticDevice for ScriptedDevice {
    fn name(&self) -> &str {
        &self.name
    }
    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        Ok(Some(self.sample(t)))
    }
    fn command(&mut self, _: &Vec3, _: &Vec3, _: bool) -> Result<(), DeviceError> {
        Ok(())
    }
    fn max_force(&self) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "# a 2 cm push along x while turning 0.4 rad about z\n\
                          t, x, y, z, rx, ry, rz, buttons\n\
                          0.0, 0.0, 0, 0, 0, 0, 0.0, 0\n\
                          0.5, 0.02, 0, 0, 0, 0, 0.4, 1\n";

    #[test]
    fn interpolates_and_holds() {
        let d = ScriptedDevice::parse("s.csv", SCRIPT).unwrap();
        assert_eq!(d.duration(), 0.5);
        let s = d.sample(0.25);
        assert!((s.position - Vec3::new(0.01, 0.0, 0.0)).norm() < 1e-15);
        assert!((s.rotation.scaled_axis() - Vec3::new(0.0, 0.0, 0.2)).norm() < 1e-15);
        assert!((s.velocity - Vec3::new(0.04, 0.0, 0.0)).norm() < 1e-15);
        assert!((s.angular_velocity - Vec3::new(0.0, 0.0, 0.8)).norm() < 1e-14);
        assert_eq!(s.buttons, 0);
        let end = d.sample(3.0);
        assert_eq!(end.position, Vec3::new(0.02, 0.0, 0.0));
        assert_eq!((end.buttons, end.velocity), (1, Vec3::zeros()));
        assert_eq!(d.sample(-1.0).position, Vec3::zeros());
    }

    #[test]
    fn bad_lines_name_line_column_and_field() {
        let e = |text: &str| {
            ScriptedDevice::parse("s.csv", text)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("0, 0, 0, abc, 0, 0, 0, 0\n"),
            "s.csv:1:10: z must be a number, got \"abc\""
        );
        assert_eq!(
            e("0, 0, 0, 0, 0, 0, 0, 0\n0, 1, 0, 0, 0, 0, 0, 0\n"),
            "s.csv:2:1: t must increase strictly, got 0 after 0"
        );
        assert_eq!(
            e("0, 0, 0\n"),
            "s.csv:1:1: needs 8 columns (t, x, y, z, rx, ry, rz, buttons), got 3"
        );
        assert_eq!(e("# nothing\n"), "s.csv: has no key poses");
    }
}
