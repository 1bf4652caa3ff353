//! Export of a recording's series for analysis in Python: CSV files (steps, device samples,
//! events) and one NumPy `.npz` (session::npz), all in SI units.

use super::format::Recording;
use super::npz::{self, Array};
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// The step series as CSV (one row per physics step).
pub fn steps_csv(r: &Recording) -> String {
    let mut s = String::from(
        "step,time_s,has_target,target_x_m,target_y_m,target_z_m,buttons,tool_x_m,tool_y_m,tool_z_m,tip_x_m,tip_y_m,tip_z_m,coupling_fx_n,coupling_fy_n,coupling_fz_n,tip_force_n,tension_n,gap_m,tissue_force_n,grasped,converged,failed,tool2_has_target,tool2_target_x_m,tool2_target_y_m,tool2_target_z_m,tool2_buttons,tool2_x_m,tool2_y_m,tool2_z_m,tool2_coupling_fx_n,tool2_coupling_fy_n,tool2_coupling_fz_n,tool2_grasped\n",
    );
    for k in &r.steps {
        let (tx, b) = k.target.map_or(([f64::NAN; 3], 0), |t| {
            ([t.position.x, t.position.y, t.position.z], t.buttons)
        });
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            k.step,
            k.time,
            u8::from(k.target.is_some()),
            tx[0],
            tx[1],
            tx[2],
            b,
            k.tool_position.x,
            k.tool_position.y,
            k.tool_position.z,
            k.tip_position.x,
            k.tip_position.y,
            k.tip_position.z,
            k.coupling_force.x,
            k.coupling_force.y,
            k.coupling_force.z,
            k.tip_force,
            k.tension,
            k.gap,
            k.tissue_force,
            u8::from(k.grasped),
            u8::from(k.converged),
            u8::from(k.failed)
        );
        // The second tool (a two-device session), empty cells without one.
        s.pop();
        match k.more_tools[0] {
            None => s.push_str(",,,,,,,,,,,,\n"),
            Some(m) => {
                let (tx, b) = m.target.map_or(([f64::NAN; 3], 0), |t| {
                    ([t.position.x, t.position.y, t.position.z], t.buttons)
                });
                let _ = writeln!(
                    s,
                    ",{},{},{},{},{},{},{},{},{},{},{},{}",
                    u8::from(m.target.is_some()),
                    tx[0],
                    tx[1],
                    tx[2],
                    b,
                    m.position.x,
                    m.position.y,
                    m.position.z,
                    m.coupling_force.x,
                    m.coupling_force.y,
                    m.coupling_force.z,
                    u8::from(m.grasped)
                );
            }
        }
    }
    s
}

/// The device samples as CSV (one row per haptic tick of each device, `tool` its index in the
/// header's tools and `hand` its hand; a faulted tick has empty pose cells).
pub fn samples_csv(r: &Recording) -> String {
    let mut s = String::from(
        "t_s,device_x_m,device_y_m,device_z_m,buttons,hand_fx_n,hand_fy_n,hand_fz_n,tool,hand\n",
    );
    for k in &r.samples {
        let pose = k.sample.map_or(",,,".to_string(), |d| {
            format!(
                "{},{},{},{}",
                d.position.x, d.position.y, d.position.z, d.buttons
            )
        });
        let hand = r
            .header
            .tools
            .get(k.tool as usize)
            .map_or("", |t| t.hand.name());
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{hand}",
            k.t, pose, k.hand_force.x, k.hand_force.y, k.hand_force.z, k.tool
        );
    }
    s
}

/// The events as CSV: step, time, and the event described in words.
pub fn events_csv(r: &Recording) -> String {
    let mut s = String::from("step,time_s,event\n");
    for e in &r.events {
        let _ = writeln!(
            s,
            "{},{},\"{}\"",
            e.step,
            e.event.time,
            e.event.kind.describe().replace('"', "\"\"")
        );
    }
    s
}

/// Write `steps.csv`, `samples.csv` and `events.csv` into `dir` (created if missing).
pub fn write_csv(r: &Recording, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("steps.csv"), steps_csv(r))?;
    std::fs::write(dir.join("samples.csv"), samples_csv(r))?;
    std::fs::write(dir.join("events.csv"), events_csv(r))
}

/// The series as `.npz` arrays: `step_time` [N], `target_position`, `tool_position`,
/// `tip_position`, `coupling_force` [N, 3] (a step without a target has NaN), `tip_force`,
/// `tension`, `gap`, `tissue_force` [N]; the second tool's (NaN without one)
/// `tool2_target_position`, `tool2_position`, `tool2_coupling_force` [N, 3]; `sample_time`,
/// `sample_tool` (the device's tool index) [M], `device_position`, `hand_force` [M, 3];
/// `event_time` [E].
pub fn npz_arrays(r: &Recording) -> Vec<(String, Array)> {
    let n = r.steps.len();
    let col = |f: &dyn Fn(&super::format::StepRecord) -> f64| Array {
        shape: vec![n],
        data: r.steps.iter().map(f).collect(),
    };
    let v3 = |f: &dyn Fn(&super::format::StepRecord) -> [f64; 3]| Array {
        shape: vec![n, 3],
        data: r.steps.iter().flat_map(f).collect(),
    };
    let m = r.samples.len();
    vec![
        ("step_time".into(), col(&|s| s.time)),
        (
            "target_position".into(),
            v3(&|s| {
                s.target.map_or([f64::NAN; 3], |t| {
                    [t.position.x, t.position.y, t.position.z]
                })
            }),
        ),
        (
            "tool_position".into(),
            v3(&|s| [s.tool_position.x, s.tool_position.y, s.tool_position.z]),
        ),
        (
            "tip_position".into(),
            v3(&|s| [s.tip_position.x, s.tip_position.y, s.tip_position.z]),
        ),
        (
            "coupling_force".into(),
            v3(&|s| [s.coupling_force.x, s.coupling_force.y, s.coupling_force.z]),
        ),
        ("tip_force".into(), col(&|s| s.tip_force)),
        ("tension".into(), col(&|s| s.tension)),
        ("gap".into(), col(&|s| s.gap)),
        ("tissue_force".into(), col(&|s| s.tissue_force)),
        (
            "tool2_target_position".into(),
            v3(&|s| {
                s.more_tools[0]
                    .and_then(|m| m.target)
                    .map_or([f64::NAN; 3], |t| {
                        [t.position.x, t.position.y, t.position.z]
                    })
            }),
        ),
        (
            "tool2_position".into(),
            v3(&|s| {
                s.more_tools[0].map_or([f64::NAN; 3], |m| {
                    [m.position.x, m.position.y, m.position.z]
                })
            }),
        ),
        (
            "tool2_coupling_force".into(),
            v3(&|s| {
                s.more_tools[0].map_or([f64::NAN; 3], |m| {
                    [m.coupling_force.x, m.coupling_force.y, m.coupling_force.z]
                })
            }),
        ),
        (
            "sample_time".into(),
            Array {
                shape: vec![m],
                data: r.samples.iter().map(|s| s.t).collect(),
            },
        ),
        (
            "sample_tool".into(),
            Array {
                shape: vec![m],
                data: r.samples.iter().map(|s| f64::from(s.tool)).collect(),
            },
        ),
        (
            "device_position".into(),
            Array {
                shape: vec![m, 3],
                data: r
                    .samples
                    .iter()
                    .flat_map(|s| {
                        s.sample.map_or([f64::NAN; 3], |d| {
                            [d.position.x, d.position.y, d.position.z]
                        })
                    })
                    .collect(),
            },
        ),
        (
            "hand_force".into(),
            Array {
                shape: vec![m, 3],
                data: r
                    .samples
                    .iter()
                    .flat_map(|s| [s.hand_force.x, s.hand_force.y, s.hand_force.z])
                    .collect(),
            },
        ),
        (
            "event_time".into(),
            Array {
                shape: vec![r.events.len()],
                data: r.events.iter().map(|e| e.event.time).collect(),
            },
        ),
    ]
}

/// Write the `.npz`.
pub fn write_npz(r: &Recording, path: &Path) -> io::Result<()> {
    let f = io::BufWriter::new(std::fs::File::create(path)?);
    npz::write(f, &npz_arrays(r))
}
