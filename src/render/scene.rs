//! The scene graph: each rod as a shaded tube with a stripe along its material direction d1
//! (so twist shows as a helix), the curved needle, the tissue pad (an incised pad's skin as
//! each half's deformed top surface, so the wound is seen to close), each instrument's jaws and
//! shaft as the contact capsules they are (a colour per hand) with a bead on the suture point
//! its jaws hold, and the lines drawn each frame (skin lattice, targets and holes, and per tool
//! its ghost, coupling spring and force arrow); the initial camera pose.

use super::{Visuals, f32v};
use crate::math::Vec3 as V3;
use crate::sim::MAX_TOOLS;
use crate::sim::instrument::{Holding, InstrumentState};
use crate::sim::snapshot::{Snapshot, ToolSnapshot};
use crate::sim::tool::{Hand, NeedleShape};
use kiss3d::prelude::*;

/// Suture colour (nylon blue-violet), stripe, needle, tissue, ghost needle, force.
const SUTURE: Color = Color::new(0.25, 0.2, 0.85, 1.0);
const STRIPE: Color = Color::new(0.95, 0.8, 0.1, 1.0);
const NEEDLE: Color = Color::new(0.78, 0.8, 0.84, 1.0);
const TISSUE: Color = Color::new(0.93, 0.62, 0.58, 1.0);
const GHOST: Color = Color::new(0.6, 0.6, 0.6, 1.0);
const FORCE: Color = Color::new(0.95, 0.1, 0.1, 1.0);

/// The bead on a grasped suture point (bright yellow, over the jaws).
const BEAD: Color = Color::new(1.0, 0.92, 0.2, 1.0);

/// An instrument's colours by the hand that drives it: (jaws, shaft). Right orange, left
/// teal: apart from the suture (blue-violet), the tissue (pink), the needle (steel) and each
/// other.
pub(super) fn instrument_colours(hand: Hand) -> (Color, Color) {
    match hand {
        Hand::Right => (
            Color::new(1.0, 0.5, 0.08, 1.0),
            Color::new(0.72, 0.36, 0.06, 1.0),
        ),
        Hand::Left => (
            Color::new(0.1, 0.8, 0.58, 1.0),
            Color::new(0.07, 0.56, 0.42, 1.0),
        ),
    }
}

/// Needle drawn with this many cylinders.
pub(super) const NEEDLE_PIECES: usize = 16;
/// Force arrow scale [m/N] and cap [m].
const ARROW_PER_NEWTON: f64 = 0.02;
const ARROW_MAX: f64 = 0.06;

/// Display radius of a rod: the true radius, or 0.8 % of the scene size if that is larger
/// (a 0.15 mm suture in a 12 cm scene is sub-pixel). Returns (radius, exaggeration).
fn display_radius(radius: f64, scene_size: f64) -> (f64, f64) {
    let r = radius.max(0.008 * scene_size);
    (r, r / radius)
}

/// Place a capsule mesh (made along +Y with its true radius and core length) on the core
/// segment `a`–`b`.
fn place_capsule(node: &mut SceneNode3d, a: &V3, b: &V3) {
    let d = b - a;
    let len = d.norm();
    if !(len.is_finite() && len > 0.0) {
        node.set_visible(false);
        return;
    }
    node.set_visible(true);
    node.set_position(f32v(&((a + b) * 0.5)));
    node.set_rotation(Quat::from_rotation_arc(Vec3::Y, f32v(&(d / len))));
}

/// A round cone's surface (contact::Shape::RoundCone: the hull of the ball of radius `ra` at
/// y = −len/2 and of `rb` at +len/2), along +Y about the origin as a capsule mesh is, for
/// [`place_capsule`]: its meridian (the ball about the −Y end from its pole to where the
/// side touches it, the side, the other ball to its pole; the side's normal
/// `(sin β, cos β)`, `sin β = (ra − rb)/len`, docs/derivations/round-cone.md) turned about Y
/// in `around` steps, each ball's arc in `arc` steps.
fn round_cone_mesh(
    ra: f64,
    rb: f64,
    len: f64,
    around: u32,
    arc: u32,
) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let sin_b = ((ra - rb) / len).clamp(-1.0, 1.0);
    let beta = sin_b.asin();
    let half = std::f64::consts::FRAC_PI_2;
    // Meridian points (y, ρ); a point of a ball at angle φ from its equator (toward +Y) is
    // (centre + r sin φ, r cos φ), and the side touches both balls at φ = β. The −Y ball from
    // its pole (φ = −π/2) to β, then the +Y ball from β to its pole: the side joins them.
    let mut profile: Vec<(f64, f64)> = Vec::new();
    for k in 0..=arc {
        let phi = -half + (half + beta) * k as f64 / arc as f64;
        profile.push((-0.5 * len + ra * phi.sin(), ra * phi.cos()));
    }
    for k in 0..=arc {
        let phi = beta + (half - beta) * k as f64 / arc as f64;
        profile.push((0.5 * len + rb * phi.sin(), rb * phi.cos()));
    }
    let m = profile.len() as u32;
    let mut vertices = Vec::with_capacity((m * around) as usize);
    for j in 0..around {
        let th = std::f64::consts::TAU * j as f64 / around as f64;
        let (s, c) = th.sin_cos();
        for &(y, rho) in &profile {
            vertices.push(Vec3::new((rho * c) as f32, y as f32, (rho * s) as f32));
        }
    }
    let mut indices = Vec::with_capacity((2 * m * around) as usize);
    for j in 0..around {
        let (a, b) = (j * m, ((j + 1) % around) * m);
        for k in 0..m - 1 {
            indices.push([a + k, a + k + 1, b + k + 1]);
            indices.push([a + k, b + k + 1, b + k]);
        }
    }
    (vertices, indices)
}

/// The suture point an instrument holds [m], from the snapshot's rod `rod`.
pub(super) fn held_point(snap: &Snapshot, rod: usize, ins: &InstrumentState) -> Option<V3> {
    let Holding::Suture { segment, s } = ins.holding else {
        return None;
    };
    let x = &snap.rods.get(rod)?.positions;
    let (a, b) = (x.get(segment)?, x.get(segment + 1)?);
    Some(a + (b - a) * s)
}

/// The needle's swage point and frame: the suturing world's needle, else the first tool's
/// (drawn from its swage).
pub(super) fn needle_pose(snap: &Snapshot) -> Option<(V3, crate::math::Quat)> {
    match (&snap.suturing, snap.tool()) {
        (Some(su), _) => Some((su.swage, su.rotation)),
        (None, Some(t)) => Some((t.position, t.rotation)),
        (None, None) => None,
    }
}

/// Place a unit cylinder (radius 0.5, height 1, along +Y) between `a` and `b` with radius `r`.
fn place(node: &mut SceneNode3d, a: &V3, b: &V3, r: f64) {
    let d = b - a;
    let len = d.norm();
    if !(len.is_finite() && len > 0.0) {
        node.set_visible(false);
        return;
    }
    node.set_visible(true);
    node.set_position(f32v(&((a + b) * 0.5)));
    node.set_rotation(Quat::from_rotation_arc(Vec3::Y, f32v(&(d / len))));
    node.set_local_scale(2.0 * r as f32, len as f32, 2.0 * r as f32);
}

/// The camera pose the viewer starts with (and keeps until a screenshot is taken).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    /// Eye and target [m].
    pub eye: V3,
    /// See `eye`.
    pub at: V3,
}

/// The scene's camera (`[view]`), else the rods and the tissue framed from above-front (35°
/// elevation, 20° azimuth) so that their bounding sphere fits a 45° field of view.
pub fn initial_camera(snapshot: &Snapshot, visuals: &Visuals) -> CameraPose {
    if let Some(v) = visuals.view {
        return v;
    }
    let mut lo = V3::repeat(f64::INFINITY);
    let mut hi = V3::repeat(f64::NEG_INFINITY);
    for p in snapshot.rods.iter().flat_map(|r| r.positions.iter()) {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    if let Some(t) = &visuals.tissue {
        lo = lo.inf(&(t.center - t.size * 0.5));
        hi = hi.sup(&(t.center + t.size * 0.5));
    }
    if !lo.iter().all(|v| v.is_finite()) {
        lo = V3::repeat(-0.05);
        hi = V3::repeat(0.05);
    }
    let at = (lo + hi) * 0.5;
    let radius = ((hi - lo).norm() * 0.5).max(1e-3);
    let (el, az) = (35f64.to_radians(), 20f64.to_radians());
    let dir = V3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos());
    let dist = radius / (std::f64::consts::PI / 8.0).sin() * 1.05;
    CameraPose {
        eye: at + dir * dist,
        at,
    }
}

/// An instrument's nodes: jaw A, jaw B, the shaft, and the bead on the suture point it holds.
struct InstrumentNodes {
    parts: Vec<SceneNode3d>,
    bead: SceneNode3d,
}

/// Scene graph nodes, made once from the first snapshot's shape.
struct Nodes {
    tubes: Vec<Vec<SceneNode3d>>,
    stripes: Vec<Vec<SceneNode3d>>,
    needle: Vec<SceneNode3d>,
    /// Per tool slot, its instrument's nodes.
    instruments: [Option<InstrumentNodes>; MAX_TOOLS],
    /// The skin: each half's deformed top surface (suturing scenes; None for a lattice too
    /// small to mesh).
    skin: Vec<Option<SceneNode3d>>,
}

/// The bead's radius [m]: over the jaws it sits between (and the drawn suture).
fn bead_radius(ins: &InstrumentState, suture_radius: f64) -> f64 {
    1.6 * ins.capsules[0].2.max(suture_radius)
}

/// An instrument's capsules (made with their true radii and lengths; only their pose
/// changes) in its hand's colours, and its bead.
fn build_instrument(
    scene: &mut SceneNode3d,
    ins: &InstrumentState,
    hand: Hand,
    suture_radius: f64,
) -> InstrumentNodes {
    let (jaw, shaft) = instrument_colours(hand);
    let parts = ins
        .capsules
        .iter()
        .enumerate()
        .map(|(j, (a, b, r))| {
            let len = (b - a).norm();
            let mut c = if j < 2 && ins.jaw_tip_radius < *r {
                let (v, i) = round_cone_mesh(*r, ins.jaw_tip_radius, len, 24, 8);
                scene.add_trimesh(v, i, Vec3::ONE, false)
            } else {
                scene.add_capsule_with_subdiv(*r as f32, len as f32, 24, 8)
            };
            c.set_color(if j < 2 { jaw } else { shaft });
            c
        })
        .collect();
    let mut bead = scene.add_sphere(bead_radius(ins, suture_radius) as f32);
    bead.set_color(BEAD);
    bead.set_visible(false);
    InstrumentNodes { parts, bead }
}

/// Add a tube and a stripe per rod segment, the needle's pieces, the tissue pad and each
/// tool's instrument.
fn build(scene: &mut SceneNode3d, snap: &Snapshot, visuals: &Visuals, size: f64) -> Nodes {
    let mut skin = Vec::new();
    let mut tubes = Vec::new();
    let mut stripes = Vec::new();
    for r in &snap.rods {
        let segs = r.positions.len().saturating_sub(1);
        tubes.push(
            (0..segs)
                .map(|_| {
                    let mut c = scene.add_cylinder(0.5, 1.0);
                    c.set_color(SUTURE);
                    c
                })
                .collect(),
        );
        stripes.push(
            (0..segs)
                .map(|_| {
                    let mut c = scene.add_cylinder(0.5, 1.0);
                    c.set_color(STRIPE);
                    c
                })
                .collect(),
        );
    }
    let needle = if visuals.needle.is_some() {
        (0..NEEDLE_PIECES)
            .map(|_| {
                let mut c = scene.add_cylinder(0.5, 1.0);
                c.set_color(NEEDLE);
                c
            })
            .collect()
    } else {
        Vec::new()
    };
    match (&visuals.tissue, &snap.suturing) {
        (Some(t), Some(su)) => {
            // The incised pad: one block per half (from the first snapshot's lattice), the
            // skin over it as each half's deformed top surface (a mesh on the lattice, moved
            // each frame: the wound is seen to close) with its lattice lines (draw_lines).
            let n0 = su.grid[0].0 * su.grid[0].1;
            for (&(nx, nz), half) in su.grid.iter().zip([&su.top[..n0], &su.top[n0..]]) {
                skin.push((nx > 1 && nz > 1 && half.len() == nx * nz).then(|| {
                    let pts: Vec<Vec3> = half.iter().map(f32v).collect();
                    let mut top = SceneNode3d::quad_with_vertices(&pts, nx, nz);
                    top.set_color(TISSUE);
                    scene.add_child(top.clone());
                    top
                }));
            }
            for half in [&su.top[..n0], &su.top[n0..]] {
                let (lo, hi) = half
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |m, p| {
                        (m.0.min(p.x), m.1.max(p.x))
                    });
                let mut pad = scene.add_cube(1.0, 1.0, 1.0);
                let h = t.size.y - 2e-4;
                pad.set_local_scale((hi - lo) as f32, h as f32, t.size.z as f32);
                pad.set_position(f32v(&V3::new(
                    0.5 * (lo + hi),
                    t.center.y - 1e-4,
                    t.center.z,
                )));
                pad.set_color(TISSUE);
            }
        }
        (Some(t), None) => {
            let mut pad = scene.add_cube(1.0, 1.0, 1.0);
            pad.set_local_scale(t.size.x as f32, t.size.y as f32, t.size.z as f32);
            pad.set_position(f32v(&t.center));
            pad.set_color(TISSUE);
        }
        _ => {}
    }
    let mut instruments = [const { None }; MAX_TOOLS];
    for (slot, t) in instruments.iter_mut().zip(&snap.tools) {
        if let Some((t, ins)) = t.as_ref().and_then(|t| Some((t, t.instrument.as_ref()?))) {
            let r = snap.rods.get(t.rod).map_or(1e-4, |r| r.radius);
            *slot = Some(build_instrument(
                scene,
                ins,
                t.hand,
                display_radius(r, size).0,
            ));
        }
    }
    Nodes {
        tubes,
        stripes,
        needle,
        instruments,
        skin,
    }
}

/// The radius of the sphere the initial camera frames [m].
fn scene_size(snap: &Snapshot, visuals: &Visuals) -> f64 {
    let c = initial_camera(snap, visuals);
    (c.eye - c.at).norm() * (std::f64::consts::PI / 8.0).sin()
}

/// Move the nodes to the snapshot; returns the tube radius exaggeration.
fn update(nodes: &mut Nodes, snap: &Snapshot, visuals: &Visuals, size: f64) -> f64 {
    if let Some(su) = &snap.suturing {
        let mut off = 0;
        for (k, &(nx, nz)) in su.grid.iter().enumerate() {
            let Some(half) = su.top.get(off..off + nx * nz) else {
                break;
            };
            off += nx * nz;
            if let Some(node) = nodes.skin.get_mut(k).and_then(Option::as_mut) {
                node.modify_vertices(&mut |v: &mut Vec<Vec3>| {
                    for (dst, p) in v.iter_mut().zip(half) {
                        *dst = f32v(p);
                    }
                });
                // The quad's triangles wind clockwise seen from +y: its normals face down.
                node.recompute_normals();
                node.modify_normals(&mut |n: &mut Vec<Vec3>| n.iter_mut().for_each(|v| *v = -*v));
            }
        }
    }
    let mut exaggeration = 1.0;
    for (k, r) in snap.rods.iter().enumerate() {
        let (dr, ex) = display_radius(r.radius, size);
        exaggeration = ex;
        for (e, node) in nodes.tubes[k].iter_mut().enumerate() {
            place(node, &r.positions[e], &r.positions[e + 1], dr);
        }
        for (e, node) in nodes.stripes[k].iter_mut().enumerate() {
            let d1 = r.frames.get(e).map_or(V3::zeros(), |q| q * V3::x());
            let off = d1 * dr * 0.75;
            place(
                node,
                &(r.positions[e] + off),
                &(r.positions[e + 1] + off),
                0.4 * dr,
            );
        }
    }
    if let (Some(n), Some((swage, rotation))) = (&visuals.needle, needle_pose(snap)) {
        let rod = snap.tool().map_or(0, |t| t.rod);
        let dr = display_radius(snap.rods.get(rod).map_or(1e-4, |r| r.radius), size).0;
        let wr = n.wire_radius.max(0.6 * dr);
        for (k, node) in nodes.needle.iter_mut().enumerate() {
            let u0 = k as f64 / NEEDLE_PIECES as f64;
            let u1 = (k + 1) as f64 / NEEDLE_PIECES as f64;
            place(
                node,
                &n.point(&swage, &rotation, u0),
                &n.point(&swage, &rotation, u1),
                wr,
            );
        }
    } else {
        for node in nodes.needle.iter_mut() {
            node.set_visible(false);
        }
    }
    for (slot, t) in nodes.instruments.iter_mut().zip(&snap.tools) {
        let Some(nodes) = slot.as_mut() else { continue };
        match t.as_ref().and_then(|t| Some((t, t.instrument.as_ref()?))) {
            Some((t, ins)) => {
                for (node, (a, b, _)) in nodes.parts.iter_mut().zip(&ins.capsules) {
                    place_capsule(node, a, b);
                }
                match held_point(snap, t.rod, ins) {
                    Some(p) => {
                        nodes.bead.set_visible(true);
                        nodes.bead.set_position(f32v(&p));
                    }
                    None => {
                        nodes.bead.set_visible(false);
                    }
                }
            }
            None => {
                for node in nodes.parts.iter_mut() {
                    node.set_visible(false);
                }
                nodes.bead.set_visible(false);
            }
        }
    }
    exaggeration
}

/// Lines drawn each frame: the ghost needle and spring, the force arrow, the incision mark.
pub(super) fn draw_lines(window: &mut Window, snap: &Snapshot, visuals: &Visuals) {
    if let Some(su) = &snap.suturing {
        // The skin: the deformed top lattice of each half.
        let skin = Color::new(0.62, 0.32, 0.30, 1.0);
        let mut off = 0;
        for &(nx, nz) in &su.grid {
            let at = |i: usize, j: usize| su.top[off + j * nx + i] + V3::new(0.0, 1e-4, 0.0);
            for j in 0..nz {
                for i in 0..nx {
                    if i + 1 < nx {
                        window.draw_line(f32v(&at(i, j)), f32v(&at(i + 1, j)), skin, 1.0, false);
                    }
                    if j + 1 < nz {
                        window.draw_line(f32v(&at(i, j)), f32v(&at(i, j + 1)), skin, 1.0, false);
                    }
                }
            }
            off += nx * nz;
        }
        // Targets (entry green, exit blue) and holes (yellow: suture through, white: needle).
        let cross = |window: &mut Window, p: &V3, r: f64, c: Color| {
            let lift = V3::new(0.0, 2e-4, 0.0);
            for d in [V3::new(r, 0.0, r), V3::new(r, 0.0, -r)] {
                window.draw_line(f32v(&(p + lift - d)), f32v(&(p + lift + d)), c, 3.0, false);
            }
        };
        for (p, entry) in &su.targets {
            let c = if *entry {
                Color::new(0.1, 0.8, 0.2, 1.0)
            } else {
                Color::new(0.2, 0.4, 1.0, 1.0)
            };
            cross(window, p, 1.2e-3, c);
        }
        for (p, suture) in &su.holes {
            let c = if *suture {
                Color::new(1.0, 0.85, 0.1, 1.0)
            } else {
                Color::new(1.0, 1.0, 1.0, 1.0)
            };
            cross(window, p, 1.0e-3, c);
        }
    } else if let Some(t) = &visuals.tissue {
        let top = t.center.y + 0.5 * t.size.y + 1e-4;
        // The incision runs across the pad (along z), as a stitch crosses it.
        let a = V3::new(t.center.x, top, t.center.z - 0.35 * t.size.z);
        let b = V3::new(t.center.x, top, t.center.z + 0.35 * t.size.z);
        window.draw_line(
            f32v(&a),
            f32v(&b),
            Color::new(0.45, 0.1, 0.1, 1.0),
            3.0,
            false,
        );
    }
    for (i, tool) in snap.tools.iter().enumerate() {
        if let Some(tool) = tool {
            // The scene's needle is on the first tool (without instruments); an instrument's
            // ghost is its capsules' cores; the other tools' ghosts are crosses.
            let needle = visuals
                .needle
                .as_ref()
                .filter(|_| i == 0 && tool.instrument.is_none());
            draw_tool(window, tool, needle);
        }
    }
}

/// One tool's lines: its ghost (the needle at the device's pose, the instrument's capsule
/// cores at the device's pose, or a cross at the target), the coupling spring and the force
/// arrow.
fn draw_tool(window: &mut Window, tool: &ToolSnapshot, needle: Option<&NeedleShape>) {
    match (needle, &tool.instrument) {
        (_, Some(ins)) => {
            // Body → world at the instrument's pose, then at the device's.
            let inv = tool.rotation.inverse();
            let ghost = |p: &V3| tool.target + tool.target_rotation * (inv * (p - tool.position));
            for (a, b, _) in &ins.capsules {
                window.draw_line(f32v(&ghost(a)), f32v(&ghost(b)), GHOST, 2.0, false);
            }
        }
        (Some(n), None) => {
            let mut prev = n.point(&tool.target, &tool.target_rotation, 0.0);
            for k in 1..=NEEDLE_PIECES {
                let p = n.point(
                    &tool.target,
                    &tool.target_rotation,
                    k as f64 / NEEDLE_PIECES as f64,
                );
                window.draw_line(f32v(&prev), f32v(&p), GHOST, 2.0, false);
                prev = p;
            }
        }
        (None, None) => {
            let r = 1.5e-3;
            for d in [V3::x(), V3::y(), V3::z()] {
                let (a, b) = (tool.target - d * r, tool.target + d * r);
                window.draw_line(f32v(&a), f32v(&b), GHOST, 2.0, false);
            }
        }
    }
    // The coupling spring from the device pose to the held node.
    window.draw_line(
        f32v(&tool.target),
        f32v(&tool.position),
        Color::new(0.3, 0.9, 0.4, 1.0),
        1.5,
        false,
    );
    // Force on the rod (the hand feels its opposite).
    let f = tool.force;
    let len = (f.norm() * ARROW_PER_NEWTON).min(ARROW_MAX);
    if len > 1e-5 {
        let dir = f / f.norm();
        let tip = tool.position + dir * len;
        window.draw_line(f32v(&tool.position), f32v(&tip), FORCE, 4.0, false);
        let side = crate::math::any_perpendicular(&dir) * (0.2 * len);
        let back = tip - dir * (0.3 * len);
        window.draw_line(f32v(&tip), f32v(&(back + side)), FORCE, 4.0, false);
        window.draw_line(f32v(&tip), f32v(&(back - side)), FORCE, 4.0, false);
    }
}

/// The 3-D scene: the light, and the rod, needle, pad and instrument nodes once the first
/// snapshot came.
pub(super) struct View {
    /// The scene graph's root.
    pub(super) root: SceneNode3d,
    /// Kept with the scene it lights.
    _light: SceneNode3d,
    /// The nodes (None until the first snapshot).
    nodes: Option<Nodes>,
    /// The scene's size [m] (display radii are relative to it).
    size: f64,
}

impl View {
    /// Background, ambient light and a point light; no nodes yet.
    pub(super) fn new(window: &mut Window) -> Self {
        window.set_background_color(Color::new(0.16, 0.17, 0.19, 1.0));
        window.set_ambient(0.35);
        let mut root = SceneNode3d::empty();
        let mut light = root.add_light(Light::point(100.0));
        light.set_position(Vec3::new(0.3, 0.8, 0.5));
        Self {
            root,
            _light: light,
            nodes: None,
            size: 0.1,
        }
    }

    /// Make the nodes from the first snapshot's shape.
    pub(super) fn build(&mut self, snap: &Snapshot, visuals: &Visuals) {
        self.size = scene_size(snap, visuals);
        self.nodes = Some(build(&mut self.root, snap, visuals, self.size));
    }

    /// Move the nodes to `snap`; returns the tube radius exaggeration, or None before
    /// [`View::build`].
    pub(super) fn update(&mut self, snap: &Snapshot, visuals: &Visuals) -> Option<f64> {
        let size = self.size;
        self.nodes.as_mut().map(|n| update(n, snap, visuals, size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawn tapered jaw is the contact's round cone (contact::Shape::RoundCone, the hull
    /// of the two balls, docs/derivations/round-cone.md): every vertex of the mesh lies on it
    /// by an independent reference, the least of `|p − c(u)| − r(u)` over its core sampled at
    /// 20 000 points (the union of the balls with radii linear along the core); the mesh is
    /// closed (each edge in two triangles, once each way) and its triangles face outward.
    #[test]
    fn the_round_cone_mesh_lies_on_the_contact_surface_and_is_closed() {
        let (ra, rb, len) = (0.0008, 0.00055, 0.012);
        let (around, arc) = (24, 8);
        let (v, tris) = round_cone_mesh(ra, rb, len, around, arc);
        let at = |p: &Vec3| V3::new(p.x as f64, p.y as f64, p.z as f64);
        let m = 20_000;
        let surface = |p: &V3| {
            (0..=m)
                .map(|k| {
                    let u = k as f64 / m as f64;
                    let c = V3::new(0.0, (u - 0.5) * len, 0.0);
                    (p - c).norm() - (ra + (rb - ra) * u)
                })
                .fold(f64::INFINITY, f64::min)
        };
        let worst = v
            .iter()
            .map(|p| surface(&at(p)).abs())
            .fold(0.0f64, f64::max);
        println!("round cone mesh: worst distance from the surface {worst:.1e} m");
        // f32 vertices up to 6.8 mm from the origin are rounded by at most half an ulp
        // (2.3e-10 m) a coordinate, 4e-10 m in all; the sampled core adds at most
        // (0.3 µm)²/(2 · 0.55 mm) ≈ 1e-10 m.
        assert!(worst < 5e-10, "{worst}");
        let mut edges = std::collections::HashMap::new();
        for t in &tris {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
            // Outward: the normal by the winding points away from the core's point at the
            // triangle's height (inside a convex body, every inner point is behind each face).
            let (a, b, c) = (
                at(&v[t[0] as usize]),
                at(&v[t[1] as usize]),
                at(&v[t[2] as usize]),
            );
            let n = (b - a).cross(&(c - a));
            let mid = (a + b + c) / 3.0;
            let core = V3::new(0.0, mid.y.clamp(-0.5 * len, 0.5 * len), 0.0);
            if n.norm() > 1e-18 {
                assert!(n.dot(&(mid - core)) > 0.0, "triangle {t:?} faces in");
            }
        }
        // Closed: every directed edge has its reverse, but the poles' rings, whose points lie
        // within rounding of the pole (ρ = r cos(±π/2) ≈ 5e-20 m).
        let open = edges
            .keys()
            .filter(|&&(i, j)| {
                let (p, q) = (&v[i as usize], &v[j as usize]);
                (p - q).length() > 1e-12 && !edges.contains_key(&(j, i))
            })
            .count();
        assert_eq!(open, 0);
        assert_eq!(v.len(), (around * (2 * arc + 2)) as usize);
    }
}
