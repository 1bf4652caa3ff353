//! The virtual tensile test of a tied knot (issue #24, "knot security"): a loop test as a
//! knot-security bench does it (docs/knots.md §6 has the definition, the choices and the
//! measured results).
//!
//! From a suturing world's state (the end of a session), the suture alone is taken out: the
//! needle is cut off (its swage hold dropped), the instruments' grips and the pad are gone, so
//! nothing holds the knot but itself. Its self-contact (IMC, with the friction the session
//! had) is kept; gravity is left out (a bench test: 0.35 mN/m of weight against newtons).
//! Two frictionless cylindrical posts are put inside the stitch's loop (the part of the
//! suture that ran through the tissue), a quarter of the way along it from each end, their
//! axes normal to the loop's plane; they are pulled apart along the line between the loop's
//! two skin punctures, as the wound's two edges pull when it is under tension. The posts'
//! pull on the loop along that line is the load cell's force `F`.
//!
//! 1. **Letting go** (`release`): the hands' tension on the ends (the axial force of each
//!    end's second segment at the start) is kept as a pair of equal and opposite forces
//!    pulling the ends apart along the line between them, falling linearly to zero; the posts
//!    stand still. Cutting everything loose in one step flung the strands apart and decided
//!    the knot's fate by the rounding (docs/knots.md §6).
//! 2. **Loading**: load-controlled, as a servo testing machine runs a creep test: the load
//!    `F*` starts at a preload and rises at a set rate to `max_force`, then stands there for
//!    `hold`; the crosshead moves at `gain (F* − F)` (at most `max_speed`). The crosshead's
//!    travel from the first time `F` reached the preload is the loop's growth (the elastic
//!    stretch of a loop of 3-0 nylon, EA = 63 N, is a few tenths of a millimetre here).
//!
//! - **Holds**: the load reached `max_force` (within [`REACHED`]) and stood there for `hold`
//!   with the loop grown less than `slip`.
//! - **Slips**: the loop grew `slip` first (the strands run through the knot: a half knot
//!   whose free tail carries no tension cannot hold its loop, the capstan bound
//!   `T ≤ T_tail e^{μθ}` being zero), or the crosshead ran the loop's whole slack without
//!   ever feeling the preload, or the load did not come up within [`GIVE_UP`] of the planned
//!   end. The force reported is the largest the posts measured once the
//!   ends were let go.
//!
//! Every step is one implicit step of the suture (`DynamicRod::step_with`) at the session's
//! time step, with the posts' contact and the self-contact as its potentials.

use super::{RodModel, World, axial_force, contact_potentials};
use crate::contact::{Obstacle, ObstacleContact, Shape};
use crate::math::{Mat3, Vec3};
use crate::rod::EndCondition;

/// The test's settings (SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensileParams {
    /// The force the knot must hold [N] (the posts' pull along the crosshead's line).
    pub max_force: f64,
    /// The force the load starts at, and from which the loop's growth counts [N].
    pub preload: f64,
    /// How fast the load rises from the preload to `max_force` [N/s].
    pub rate: f64,
    /// Loop growth past the preload that counts as a slip [m].
    pub slip: f64,
    /// Time the load stands at `max_force` [s].
    pub hold: f64,
    /// The crosshead's servo: its speed per newton of force error [m/(N s)], and its largest
    /// speed [m/s].
    pub gain: f64,
    /// See `gain`.
    pub max_speed: f64,
    /// Post radius [m].
    pub post_radius: f64,
    /// Time over which the hands let go of the ends [s]: each end is pulled along its
    /// tangent with the tension it had, falling linearly to zero, while the posts stand still.
    pub release: f64,
    /// Refine the suture's Marquardt-shifted Newton steps (`SolverConfig::refine_steps`,
    /// docs/derivations/der-imc.md §F9): a free suture on frictionless posts has rigid modes
    /// only the shift regularises, so without it the loaded steps converge linearly.
    pub refine: bool,
    /// Take the exact Newton step where the suture's band alone is indefinite
    /// (`SolverConfig::indefinite_band`, docs/derivations/der-imc.md §F10).
    pub indefinite: bool,
    /// Halvings an unconverged step of the test may take (`SolverConfig::subdivide`); `None`
    /// keeps the session's own setting.
    pub subdivide: Option<usize>,
}

impl Default for TensileParams {
    /// The defaults of docs/knots.md §6: 1.5 N (about a tenth of a 3-0 nylon suture's straight
    /// pull strength, 15.7 N, `rod::params::NYLON`; above the 1.2 N each hand lays a throw
    /// down with in examples/tie_script.rs) from a 0.3 N preload (it takes up the slack and
    /// draws the loop round the posts) at 5 N/s, held 0.3 s; a slip is 2 mm of growth; the
    /// servo moves 20 mm/s per newton of error, at most 50 mm/s; posts of 1 mm radius; the
    /// ends let go over 0.2 s first.
    fn default() -> Self {
        TensileParams {
            max_force: 1.5,
            preload: 0.3,
            rate: 5.0,
            slip: 0.002,
            hold: 0.3,
            gain: 0.02,
            max_speed: 0.05,
            post_radius: 0.001,
            release: 0.2,
            refine: false,
            indefinite: true,
            subdivide: None,
        }
    }
}

/// The fraction of `max_force` at which the load counts as reached (the servo approaches it
/// exponentially, with a time constant of about 1/(gain · loop stiffness) ≈ 20 ms).
pub const REACHED: f64 = 0.98;

/// Time past the end of the planned test after which it stops, the load not held [s].
pub const GIVE_UP: f64 = 3.0;

/// What the test found.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TensileReport {
    /// The knot held `max_force` (see the module doc).
    pub holds: bool,
    /// The force it had to hold [N].
    pub max_force: f64,
    /// The largest force the posts measured once the ends were let go [N].
    pub peak_force: f64,
    /// The force at the end of the test [N].
    pub final_force: f64,
    /// The loop's growth from the preload to the end [m] (the crosshead's travel).
    pub growth: f64,
    /// Simulated time the test took [s].
    pub duration: f64,
    /// Steps, and those whose Newton solve did not converge.
    pub steps: usize,
    /// See `steps`.
    pub unconverged: usize,
    /// The largest force imbalance an unconverged step was left with [N]: its Newton residual
    /// (relative to the rod's force scale, `DynamicParams::force_scale`) times that scale
    /// (0 if every step converged). Against the test's load it says how far from converged.
    pub max_residual: f64,
    /// The same over the loading only (after the ends were let go) [N].
    pub max_residual_loaded: f64,
    /// The loop's tension when the test began: the mean axial force `EA Γ₃` over its
    /// segments through the tissue [N], what the closed wound pulled the knot with.
    pub loop_tension: f64,
}

/// Why the test could not be run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TensileError {
    /// Not a suturing world with a dynamic suture.
    #[error("no suture to test: the scene does not suture with a dynamic rod")]
    NoSuture,
    /// The suture never went through the tissue.
    #[error("no stitch loop: no part of the suture lies in the tissue")]
    NoLoop,
    /// A step of the test failed.
    #[error("the tensile test's step at {time:.3} s failed: {message}")]
    Step {
        /// Time into the test [s].
        time: f64,
        /// The solver's error.
        message: String,
    },
}

/// A point at arc length `s` [m] along the polyline `x`.
fn at_arc(x: &[Vec3], s: f64) -> Vec3 {
    let mut left = s;
    for w in x.windows(2) {
        let l = (w[1] - w[0]).norm();
        if left <= l && l > 0.0 {
            return w[0] + (w[1] - w[0]) * (left / l);
        }
        left -= l;
    }
    x[x.len() - 1]
}

/// One step of the test, for a trace.
#[derive(Clone, Copy, Debug)]
pub struct TensileSample<'a> {
    /// Time into the test [s].
    pub time: f64,
    /// The crosshead's travel from the start [m].
    pub travel: f64,
    /// The posts' force along the crosshead's line [N].
    pub force: f64,
    /// The suture's nodes [m].
    pub positions: &'a [Vec3],
    /// Each post's axis as a segment [m].
    pub posts: [(Vec3, Vec3); 2],
}

/// The posts: a dynamic rod's obstacle contact.
fn posts_of(model: &RodModel) -> Option<&ObstacleContact> {
    match model {
        RodModel::Cosserat { contact, .. } | RodModel::Der { contact, .. } => contact.as_deref(),
        RodModel::Strands(_) => None,
    }
}

/// Run the tensile test on `world`'s suture (its state is not changed).
pub fn tensile_test(world: &World, p: &TensileParams) -> Result<TensileReport, TensileError> {
    tensile_test_traced(world, p, |_| {})
}

/// [`tensile_test`], calling `each` after every step.
pub fn tensile_test_traced(
    world: &World,
    p: &TensileParams,
    mut each: impl FnMut(&TensileSample),
) -> Result<TensileReport, TensileError> {
    let s = world.suturing.as_deref().ok_or(TensileError::NoSuture)?;
    let h = world.dt().ok_or(TensileError::NoSuture)?;
    let mut rod = world.rods[s.rod].clone();
    let r_rod = rod.radius;
    // A bench test: the suture's weight (0.35 mN/m for 3-0 nylon) is left out, so the free
    // ends do not fall away.
    let mut drive = rod.drive.clone();
    drive.gravity = Vec3::zeros();
    drive.distributed_force = Vec3::zeros();
    let x = rod.positions().to_vec();
    // What the hands pulled the ends with: the axial force EA Γ₃ (Soler eq. (5), as
    // `sim::suture_step` measures tension) of the second segment from each end (the tail's end
    // is held at its first segment, the long end by the needle). While they let go, the ends
    // are pulled apart along the line between them with the mean of the two, a pair of equal
    // and opposite forces: the rod is not pushed off the posts.
    let RodModel::Cosserat { rod: cr, .. } = &rod.model else {
        return Err(TensileError::NoSuture);
    };
    let axial = |e: usize| axial_force(cr, e).max(0.0);
    let n = x.len();
    if n < 4 {
        return Err(TensileError::NoLoop);
    }
    let apart = (x[n - 1] - x[0]).normalize() * (0.5 * (axial(1) + axial(n - 3)));
    if !apart.iter().all(|v| v.is_finite()) {
        return Err(TensileError::NoLoop);
    }
    // The loop: the run of the suture through the tissue, from its first node inside to its
    // last (the crossing of the incision between them).
    let inside = s.suture_inside();
    let i0 = inside.iter().position(|&b| b).ok_or(TensileError::NoLoop)?;
    let i1 = inside
        .iter()
        .rposition(|&b| b)
        .ok_or(TensileError::NoLoop)?;
    let run = &x[i0..=i1];
    if run.len() < 3 {
        return Err(TensileError::NoLoop);
    }
    // The loop's plane: the normal of the run closed by its chord (the vector area of the
    // polygon), and the crosshead's line: the chord (exit puncture to entry) in that plane.
    let c = run.iter().sum::<Vec3>() / run.len() as f64;
    let normal = run
        .windows(2)
        .map(|w| (w[0] - c).cross(&(w[1] - c)))
        .sum::<Vec3>()
        .normalize();
    let chord = run[0] - run[run.len() - 1];
    let along = (chord - normal * chord.dot(&normal)).normalize();
    if !along.iter().chain(normal.iter()).all(|v| v.is_finite()) {
        return Err(TensileError::NoLoop);
    }
    let loop_tension = (i0..i1).map(axial).sum::<f64>() / (i1 - i0).max(1) as f64;
    let mid = (run[0] + run[run.len() - 1]) * 0.5;
    let length: f64 = run.windows(2).map(|w| (w[1] - w[0]).norm()).sum();
    // A post a quarter of the run from each end, just inside the loop (towards the middle of
    // the punctures' chord, in the loop's plane), its surface half the suture's radius clear
    // of the suture's; a metre long: frictionless, it lets the loop slide along it (a knot
    // that is not flat pulls it along at a few millimetres a second), but never off.
    let post = |at: f64| {
        let q = at_arc(run, at);
        let to_mid = mid - q;
        let inward = (to_mid - normal * to_mid.dot(&normal)).normalize();
        Obstacle {
            shape: Shape::Cylinder {
                center: q + inward * (p.post_radius + r_rod * 1.5),
                axis: normal,
                radius: p.post_radius,
                half_length: 0.5,
            },
            friction: 0.0,
        }
    };
    let posts = vec![post(0.25 * length), post(0.75 * length)];
    let stiffness = ObstacleContact::stiffness_for(1.0, r_rod);
    let RodModel::Cosserat {
        rod: cr, contact, ..
    } = &mut rod.model
    else {
        return Err(TensileError::NoSuture);
    };
    *contact = Some(Box::new(ObstacleContact::new(
        posts,
        r_rod,
        x.len(),
        stiffness,
    )));
    // The ends cut free: a scene whose assistant held the tail (knot_tying.toml) lets go of
    // it too, or the held end would carry the loop's load past the knot.
    cr.ends = (EndCondition::Free, EndCondition::Free);
    cr.config.refine_steps = p.refine;
    cr.config.indefinite_band = p.indefinite;
    if let Some(k) = p.subdivide {
        cr.config.subdivide = k;
    }
    // The crosshead: travel [m] and the last force measured [N].
    let (mut travel, mut force) = (0.0_f64, 0.0_f64);
    let (mut preloaded_at, mut peak, mut at_max) = (None::<f64>, 0.0_f64, None::<f64>);
    let (mut steps, mut unconverged) = (0, 0);
    let (mut max_residual, mut max_residual_loaded) = (0.0_f64, 0.0_f64);
    let start = world.time;
    let mut t = start;
    loop {
        let elapsed = t + h - start;
        // While the ends let go they squeeze the loop onto the posts: the knot is loaded from
        // the end of the release on.
        let loaded = elapsed > p.release;
        // Letting go: the ends' pulls fall to zero, the posts stand still.
        let letting = (1.0 - elapsed / p.release).max(0.0);
        drive.base_force = -apart * letting;
        drive.tip_force = apart * letting;
        if loaded {
            let loading = elapsed - p.release;
            let target = (p.preload + p.rate * loading).min(p.max_force);
            let speed = (p.gain * (target - force)).clamp(-p.max_speed, p.max_speed);
            travel = (travel + speed * h).max(0.0);
        }
        t += h;
        let Some(parts) = rod.model.dynamic_mut() else {
            return Err(TensileError::NoSuture);
        };
        let Some(k) = parts.contact.as_deref_mut() else {
            return Err(TensileError::NoSuture);
        };
        k.set_pose(0, &Mat3::identity(), &(along * (0.5 * travel)));
        k.set_pose(1, &Mat3::identity(), &(along * (-0.5 * travel)));
        let [mut k0, mut k1] = contact_potentials(parts.contact, parts.self_contact);
        let at_t = drive.drive_at(t);
        let rep = parts
            .rod
            .step_with(h, &at_t, &mut [&mut k0, &mut k1])
            .map_err(|e| TensileError::Step {
                time: elapsed,
                message: e.to_string(),
            })?;
        steps += 1;
        unconverged += usize::from(!rep.converged);
        if !rep.converged
            && let RodModel::Cosserat { rod: cr, .. } = &rod.model
        {
            let left = rep.residual * cr.params.force_scale(&at_t);
            max_residual = max_residual.max(left);
            if loaded {
                max_residual_loaded = max_residual_loaded.max(left);
            }
        }
        let Some(k) = posts_of(&rod.model) else {
            return Err(TensileError::NoSuture);
        };
        let xs = rod.positions();
        // The loop pulls each post back towards the other: the load cell reads that pull.
        force = 0.5 * (k.force_on(1, xs).dot(&along) - k.force_on(0, xs).dot(&along));
        if !force.is_finite() {
            return Err(TensileError::Step {
                time: elapsed,
                message: "the posts' force is not finite".into(),
            });
        }
        let axis_of = |o: usize| match k.obstacles()[o].shape {
            Shape::Cylinder {
                center,
                axis,
                half_length,
                ..
            } => (center - axis * half_length, center + axis * half_length),
            _ => (Vec3::zeros(), Vec3::zeros()),
        };
        each(&TensileSample {
            time: elapsed,
            travel,
            force,
            positions: xs,
            posts: [axis_of(0), axis_of(1)],
        });
        if loaded {
            peak = peak.max(force);
        }
        if preloaded_at.is_none() && loaded && force >= p.preload {
            preloaded_at = Some(travel);
        }
        if at_max.is_none() && loaded && force >= REACHED * p.max_force {
            at_max = Some(elapsed);
        }
        let growth = preloaded_at.map_or(0.0, |a| travel - a);
        let report = |holds: bool| TensileReport {
            holds,
            max_force: p.max_force,
            peak_force: peak,
            final_force: force,
            growth,
            duration: elapsed,
            steps,
            unconverged,
            max_residual,
            max_residual_loaded,
            loop_tension,
        };
        // The loop ran its whole slack (posts inside a loop of perimeter P part at most P/2)
        // and the slip allowance without ever feeling the preload: it runs free.
        let ran_free = preloaded_at.is_none() && travel > 0.5 * length + p.slip;
        if growth > p.slip || ran_free {
            return Ok(report(false));
        }
        if at_max.is_some_and(|t0| elapsed - t0 >= p.hold) {
            return Ok(report(true));
        }
        // The load never came up (the crosshead cannot find the loop, or it stalls short of
        // the force without the loop growing): the knot did not show it holds.
        if elapsed > p.release + (p.max_force - p.preload) / p.rate + p.hold + GIVE_UP {
            return Ok(report(false));
        }
    }
}
