//! The screenshot: the frame as a PNG, and a JSON sidecar with the rod centerlines, the
//! needle and the pad's lattice cells projected to pixels with the camera of that frame.

use super::scene::NEEDLE_PIECES;
use super::{RenderError, Visuals, f32v};
use crate::math::Vec3 as V3;
use crate::sim::snapshot::Snapshot;
use kiss3d::prelude::*;
use std::path::Path;

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
    let needle: Vec<V3> = match (&visuals.needle, s.tool()) {
        (Some(n), Some(t)) => (0..=NEEDLE_PIECES)
            .map(|k| n.point(&t.position, &t.rotation, k as f64 / NEEDLE_PIECES as f64))
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
    let json = format!(
        "{{\"width\":{},\"height\":{},\"time\":{},\"rods\":[{}],\"needle\":{},\"tools\":{},\"ghosts\":{},\"tissue_cells\":{}}}\n",
        img.width(),
        img.height(),
        s.time,
        rods.join(","),
        json_points(&project(cam, shot_size, &needle)),
        json_points(&project(cam, shot_size, &tools)),
        json_points(&project(cam, shot_size, &ghosts)),
        json_points(&project(cam, shot_size, &cells))
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
