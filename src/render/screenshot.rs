//! The screenshot: the frame as a PNG, and a JSON sidecar with the rod centerlines, the
//! needle, the pad's lattice cells and each instrument's capsule cores (and the suture point
//! its jaws hold) projected to pixels with the camera of that frame.

use super::scene::NEEDLE_PIECES;
use super::{RenderError, Visuals, f32v};
use crate::math::Vec3 as V3;
use crate::sim::snapshot::Snapshot;
use kiss3d::prelude::*;
use std::path::Path;

/// Points along each instrument capsule's core in the sidecar, less one.
const CORE_POINTS: usize = 8;

/// Write the window's last frame to `path` and its sidecar to `path`.json.
pub(super) fn write(
    window: &Window,
    path: &Path,
    cam: &OrbitCamera3d,
    s: &Snapshot,
    visuals: &Visuals,
) -> Result<(), RenderError> {
    let img = window.snap_image();
    let shot_size = Vec2::new(img.width() as f32, img.height() as f32);
    let err = |e: String| RenderError::Screenshot {
        path: path.to_path_buf(),
        message: e,
    };
    img.save(path).map_err(|e| err(e.to_string()))?;
    let rods: Vec<String> = s
        .rods
        .iter()
        .map(|r| json_points(&project(cam, shot_size, &r.positions)))
        .collect();
    let needle: Vec<V3> = match (&visuals.needle, super::scene::needle_pose(s)) {
        (Some(n), Some((swage, rotation))) => (0..=NEEDLE_PIECES)
            .map(|k| n.point(&swage, &rotation, k as f64 / NEEDLE_PIECES as f64))
            .collect(),
        _ => Vec::new(),
    };
    // Centres of the pad's top lattice cells (away from the drawn grid lines).
    let mut cells: Vec<V3> = Vec::new();
    if let Some(su) = &s.suturing {
        let mut base = 0;
        for &(nx, nz) in &su.grid {
            for j in 0..nz.saturating_sub(1) {
                for i in 0..nx.saturating_sub(1) {
                    let at = |i: usize, j: usize| su.top[base + j * nx + i];
                    cells.push((at(i, j) + at(i + 1, j) + at(i, j + 1) + at(i + 1, j + 1)) * 0.25);
                }
            }
            base += nx * nz;
        }
    }
    // Every tool's held point and its target (the ghost), in the order of the snapshot's tools.
    let tools: Vec<V3> = s.tools.iter().flatten().map(|t| t.position).collect();
    let ghosts: Vec<V3> = s.tools.iter().flatten().map(|t| t.target).collect();
    // Each instrument: its hand, its jaws' state, points along the cores of its capsules (jaw
    // A, jaw B, shaft; the drawn capsules cover them), their radii on screen, and the suture
    // point its jaws hold.
    let (eye, at) = (cam.eye(), cam.at());
    let fwd = at - eye;
    let across = V3::new(-fwd.z as f64, 0.0, fwd.x as f64)
        .try_normalize(1e-12)
        .unwrap_or(V3::x());
    let instruments: Vec<String> = s
        .tools
        .iter()
        .flatten()
        .filter_map(|t| Some((t, t.instrument.as_ref()?)))
        .map(|(t, ins)| {
            let cores: Vec<String> = ins
                .capsules
                .iter()
                .map(|(a, b, _)| {
                    let pts: Vec<V3> = (0..=CORE_POINTS)
                        .map(|k| a + (b - a) * (k as f64 / CORE_POINTS as f64))
                        .collect();
                    json_points(&project(cam, shot_size, &pts))
                })
                .collect();
            // Each capsule's radius on screen [px]: at its core's midpoint, across the view.
            let radii: Vec<String> = ins
                .capsules
                .iter()
                .enumerate()
                .map(|(j, (a, b, _))| {
                    let mid = (a + b) * 0.5;
                    let side = mid + across * ins.radius_at_middle(j);
                    match project(cam, shot_size, &[mid, side])[..] {
                        [Some(p), Some(q)] => format!("{:.2}", (p.0 - q.0).hypot(p.1 - q.1)),
                        _ => "null".to_string(),
                    }
                })
                .collect();
            let held: Vec<V3> = super::scene::held_point(s, t.rod, ins).into_iter().collect();
            format!(
                "{{\"hand\":\"{}\",\"jaws\":\"{}\",\"capsules\":[{}],\"radii_px\":[{}],\"held\":{}}}",
                t.hand.name(),
                ins.jaws().name(),
                cores.join(","),
                radii.join(","),
                json_points(&project(cam, shot_size, &held))
            )
        })
        .collect();
    let json = format!(
        "{{\"width\":{},\"height\":{},\"time\":{},\"rods\":[{}],\"needle\":{},\"tools\":{},\"ghosts\":{},\"tissue_cells\":{},\"instruments\":[{}]}}\n",
        img.width(),
        img.height(),
        s.time,
        rods.join(","),
        json_points(&project(cam, shot_size, &needle)),
        json_points(&project(cam, shot_size, &tools)),
        json_points(&project(cam, shot_size, &ghosts)),
        json_points(&project(cam, shot_size, &cells)),
        instruments.join(",")
    );
    let mut side = path.to_path_buf().into_os_string();
    side.push(".json");
    std::fs::write(&side, json).map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Pixel coordinates (x right, y down) in a `size` image of world points, with the camera
/// the viewer drew the frame with.
fn project(camera: &OrbitCamera3d, size: Vec2, points: &[V3]) -> Vec<Option<(f64, f64)>> {
    points
        .iter()
        .map(|p| {
            let q = camera.project(f32v(p), size);
            let (x, y) = (q.x as f64, size.y as f64 - q.y as f64);
            (x.is_finite() && y.is_finite()).then_some((x, y))
        })
        .collect()
}

/// `[[x,y],…]` with `null` for a point behind the camera.
fn json_points(pts: &[Option<(f64, f64)>]) -> String {
    let items: Vec<String> = pts
        .iter()
        .map(|p| match p {
            Some((x, y)) => format!("[{x:.2},{y:.2}]"),
            None => "null".to_string(),
        })
        .collect();
    format!("[{}]", items.join(","))
}
