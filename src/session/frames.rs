//! The rods' centreline frames of a recorded session (issue #22), for `suture export --npz`:
//! the recording keeps no rod geometry, so the session is re-simulated by
//! [`replay::replay_each`](super::replay::replay_each) (the re-simulation `suture replay
//! --verify` checks bit for bit) and every rod's node positions are copied every `every`
//! physics steps, from t = 0 (the scene's initial state) on.
//!
//! Arrays (docs/recording-format.md, "Export"): `suture` [T, nodes, 3] the suture's node
//! positions [m] (the rod swaged on the needle; in a scene without a needle, the scene's first
//! rod), in the rod's node order; `suture_time` [T] the simulated time of each frame [s]; every
//! other rod `rod{i}` [T, nodes, 3] (`i` its index in the scene), sampled at the same times.

use super::format::Recording;
use super::npz::Array;
use super::replay::{ReplayError, VerifyReport, replay_each};
use crate::sim::World;

/// One rod's frames.
#[derive(Clone, Debug, PartialEq)]
pub struct RodFrames {
    /// The array's name: `suture` or `rod{i}`.
    pub name: String,
    /// The rod's index in the scene.
    pub rod: usize,
    /// Nodes per frame.
    pub nodes: usize,
    /// Positions [m], frame-major then node then x, y, z (C order of [T, nodes, 3]).
    pub data: Vec<f64>,
}

/// The frames of every rod at the same times.
#[derive(Clone, Debug, PartialEq)]
pub struct Frames {
    /// Physics steps between frames.
    pub every: u64,
    /// The step index of each frame (0: the initial state, before the first step).
    pub steps: Vec<u64>,
    /// Simulated time of each frame [s].
    pub time: Vec<f64>,
    /// Each rod's frames, the suture first.
    pub rods: Vec<RodFrames>,
}

/// The index of the rod called the suture: the rod swaged on the needle, else rod 0 (None for
/// a world without rods).
pub fn suture_rod(world: &World) -> Option<usize> {
    match world.sutured_rod() {
        Some((rod, _)) => Some(rod),
        None => (world.rod_count() > 0).then_some(0),
    }
}

/// Each rod's array name, the suture first: `suture`, then `rod{i}` by scene index.
pub fn rod_names(world: &World) -> Vec<(usize, String)> {
    let suture = suture_rod(world);
    let mut out: Vec<(usize, String)> = suture
        .map(|r| (r, "suture".to_string()))
        .into_iter()
        .collect();
    out.extend(
        (0..world.rod_count())
            .filter(|i| Some(*i) != suture)
            .map(|i| (i, format!("rod{i}"))),
    );
    out
}

impl Frames {
    fn push(&mut self, step: u64, world: &World) {
        self.steps.push(step);
        self.time.push(world.time);
        for r in &mut self.rods {
            for p in world.rod_positions(r.rod) {
                r.data.extend_from_slice(&[p.x, p.y, p.z]);
            }
        }
    }

    /// Frames taken.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether no frame was taken.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The `.npz` arrays: `suture` [T, nodes, 3], `suture_time` [T], then `rod{i}`
    /// [T, nodes, 3] for every other rod.
    pub fn arrays(&self) -> Vec<(String, Array)> {
        let t = self.len();
        let mut out = Vec::new();
        for (k, r) in self.rods.iter().enumerate() {
            out.push((
                r.name.clone(),
                Array {
                    shape: vec![t, r.nodes, 3],
                    data: r.data.clone(),
                },
            ));
            if k == 0 {
                out.push((
                    "suture_time".to_string(),
                    Array {
                        shape: vec![t],
                        data: self.time.clone(),
                    },
                ));
            }
        }
        out
    }
}

/// Re-simulate `rec` on `world` (its scene's world at t = 0) and take every rod's frame at
/// t = 0 and after every `every`-th step (`every` ≥ 1) that replayed bit for bit. The report
/// says whether the re-simulation reproduced the recording; on a divergence the frames stop
/// before it, and the caller must not present them as the session's.
pub fn sample(
    rec: &Recording,
    world: &mut World,
    every: u64,
) -> Result<(Frames, VerifyReport), ReplayError> {
    let every = every.max(1);
    let mut frames = Frames {
        every,
        steps: Vec::new(),
        time: Vec::new(),
        rods: rod_names(world)
            .into_iter()
            .map(|(rod, name)| RodFrames {
                name,
                rod,
                nodes: world.rod_positions(rod).len(),
                data: Vec::new(),
            })
            .collect(),
    };
    frames.push(0, world);
    let report = replay_each(rec, world, |step, w| {
        if step % every == 0 {
            frames.push(step, w);
        }
    })?;
    Ok((frames, report))
}
