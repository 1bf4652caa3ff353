//! Rod–obstacle contact: smooth penalty on the penetration of the rod's surface into planes,
//! finite solid cylinders, capsules and round cones (tapered capsules: instruments, the
//! needle; rigidly posed per step), with Coulomb friction in the lagged form of Incremental Potential
//! Contact (Li et al. 2020, §5: normal forces frozen at the start of the step, a smoothed
//! sliding potential `μ λ f0(|u|)` on the tangential displacement `u` over the step).
//!
//! Contact points: every node for a plane (a segment's lowest point against a plane is one of
//! its nodes); for a cylinder, the point of each segment closest to the cylinder's axis
//! (where the segment penetrates deepest; for a capsule, its closest point to the core
//! segment; for a round cone, the least of its signed distance along the segment, found by
//! Newton's method), or a node where both neighbouring segments' closest
//! points are that node.
//!
//! Penalty (C², per contact point, penetration `δ = r_rod - d`, `d` the signed distance of the
//! point to the obstacle surface):
//!
//!   `E(δ) = k δ³/(6ε)` for `0 ≤ δ ≤ ε`,  `E(δ) = k (δ²/2 - εδ/2 + ε²/6)` for `δ > ε`,
//!
//! so the force `E'(δ)` grows from zero smoothly and the stiffness reaches `k` [N/m] at `δ = ε`.
//! `k` adapts: a solved state sinking deeper than the tolerance (1 % of the rod radius by
//! default) raises `k` tenfold and the step is re-solved.
//!
//! Friction (IPC eq. (14)–(15)): `D(u) = μ λ f0(|u|)` with
//! `f0(y) = -y³/(3ε_u²) + y²/ε_u + ε_u/3` below `ε_u`, `y` above; `f0' = f1 = min(1, 2y/ε_u - y²/ε_u²)`.
//! `λ` is the normal force at the start of the step; `u` the tangential (w.r.t. the start
//! normal) displacement of the contact's material point since the start. Sliding below
//! `ε_u` per step is the "stick" regime.

use crate::contact::segment;
use crate::math::{Mat3, Vec3, any_perpendicular};
use crate::rod::{NodePotential, PotentialSink, Projection};

/// Obstacle geometry (world frame, SI).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Half-space `(x - point)·normal ≤ 0` is solid.
    Plane {
        /// A point of the plane [m].
        point: Vec3,
        /// Unit outward normal.
        normal: Vec3,
    },
    /// Finite solid cylinder.
    Cylinder {
        /// Centre [m].
        center: Vec3,
        /// Unit axis.
        axis: Vec3,
        /// Radius [m].
        radius: f64,
        /// Half of the length [m].
        half_length: f64,
    },
    /// Solid capsule: every point within `radius` of the segment from `a` to `b` (an
    /// instrument's jaw or shaft, a needle's wire).
    Capsule {
        /// One end of the core segment [m].
        a: Vec3,
        /// The other end [m].
        b: Vec3,
        /// Radius [m].
        radius: f64,
    },
    /// Solid round cone, a tapered capsule: the convex hull of the ball of radius `ra` about
    /// `a` and the ball of radius `rb` about `b` (a needle driver's jaw, thicker at its hinge
    /// than at its tip). Equivalently the union of the balls about the core's points with
    /// radii linear along it. Needs `|ra − rb| < |b − a|` ([`Shape::round_cone`]).
    RoundCone {
        /// The core's end with radius `ra` [m].
        a: Vec3,
        /// The core's end with radius `rb` [m].
        b: Vec3,
        /// Radius about `a` [m].
        ra: f64,
        /// Radius about `b` [m].
        rb: f64,
    },
}

/// A round cone's signed distance [m] at `p`, its gradient and Hessian [1/m]
/// (docs/derivations/round-cone.md).
///
/// In the meridian half-plane of `p` (axial coordinate `z = (p − a)·t` along the core's unit
/// direction `t`, radial distance `ρ` from the core's line, radial unit vector `e`) the shape
/// is the hull of the discs about `(0, 0)` and `(L, 0)`; its side is their common tangent,
/// with outward normal `(sin β, cos β)`, `sin β = (ra − rb)/L`, touching the discs where the
/// tangential coordinate `w = z cos β − ρ sin β` is `0` and `L cos β`. So
/// - `w < 0`: the ball about `a`: `d = |p − a| − ra`, `∇d = n`, `∇²d = (I − n nᵀ)/|p − a|`;
/// - `w > L cos β`: the ball about `b`, likewise;
/// - else the side: `d = z sin β + ρ cos β − ra`, `∇d = sin β t + cos β e`,
///   `∇²d = cos β (I − t tᵀ − e eᵀ)/ρ`.
///
/// `d` is C¹ across the seams `w = 0`, `w = L cos β` (both sides give `d = n·(p − a) − ra`
/// there with the same `n`); `∇²d` jumps, as a capsule's does. With `ra = rb` it is the
/// capsule's distance.
fn round_cone_distance(p: &Vec3, a: &Vec3, b: &Vec3, ra: f64, rb: f64) -> (f64, Vec3, Mat3) {
    let ab = b - a;
    let l = ab.norm();
    let ball = |c: &Vec3, r: f64| {
        let v = p - c;
        let rho = v.norm();
        if rho <= 1e-300 {
            let n = if l > 0.0 {
                any_perpendicular(&ab)
            } else {
                Vec3::x()
            };
            return (-r, n, Mat3::zeros());
        }
        let n = v / rho;
        (rho - r, n, (Mat3::identity() - n * n.transpose()) / rho)
    };
    if l <= 0.0 {
        return ball(a, ra.max(rb));
    }
    let t = ab / l;
    let sin_b = (ra - rb) / l;
    let cos_b = (1.0 - sin_b * sin_b).max(0.0).sqrt();
    let q = p - a;
    let z = q.dot(&t);
    let radial = q - t * z;
    let rho = radial.norm();
    let w = z * cos_b - rho * sin_b;
    if w < 0.0 {
        return ball(a, ra);
    }
    if w > l * cos_b {
        return ball(b, rb);
    }
    if rho <= 1e-300 {
        // On the core's line, inside: the side's nearest direction is any perpendicular.
        let e = any_perpendicular(&t);
        return (z * sin_b - ra, t * sin_b + e * cos_b, Mat3::zeros());
    }
    let e = radial / rho;
    let h = (Mat3::identity() - t * t.transpose() - e * e.transpose()) * (cos_b / rho);
    (z * sin_b + rho * cos_b - ra, t * sin_b + e * cos_b, h)
}

/// The parameter `s ∈ [0, 1]` of segment `[p0, p1]` where `shape`'s signed distance is least
/// (a round cone's contact point: where the segment penetrates deepest). The signed distance
/// of a convex body is convex, so its slope along the segment, `g(s) = ∇d · (p1 − p0)`, does
/// not decrease: an end where the slope points outward is the answer; otherwise Newton's
/// method on `g` (`g' = Δᵀ ∇²d Δ`), kept inside the bracket where `g` changes sign (bisection
/// where a Newton step leaves it), from `s0` (the segment's point nearest the core), to the
/// last bits: the contact's Hessian assumes `s` is the exact stationary point (its Schur
/// complement, [`ObstacleContact`]'s `evaluate`).
fn deepest_on_segment(shape: &Shape, p0: &Vec3, p1: &Vec3, s0: f64) -> f64 {
    let delta = p1 - p0;
    let slope = |s: f64| {
        let (_, n, h) = shape.distance(&(p0 + delta * s));
        (n.dot(&delta), delta.dot(&(h * delta)))
    };
    if slope(0.0).0 >= 0.0 {
        return 0.0;
    }
    if slope(1.0).0 <= 0.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut s = s0.clamp(0.0, 1.0);
    for _ in 0..64 {
        let (g, c) = slope(s);
        if g == 0.0 {
            return s;
        }
        if g < 0.0 {
            lo = s;
        } else {
            hi = s;
        }
        let newton = s - g / c;
        let next = if c > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - s).abs() <= 4.0 * f64::EPSILON || hi - lo <= 4.0 * f64::EPSILON {
            return next;
        }
        s = next;
    }
    s
}

impl Shape {
    /// A round cone (see [`Shape::RoundCone`]), or why not: the radii must be positive and
    /// finite and differ by less than the core's length (else one ball holds the other and
    /// there is no side).
    pub fn round_cone(a: Vec3, b: Vec3, ra: f64, rb: f64) -> Result<Shape, String> {
        let l = (b - a).norm();
        if !(ra > 0.0 && rb > 0.0 && ra.is_finite() && rb.is_finite()) {
            return Err(format!("radii must be positive [m], got {ra} and {rb}"));
        }
        if (ra - rb).abs() >= l {
            return Err(format!(
                "the radii {ra} and {rb} [m] must differ by less than the core's length {l} [m]"
            ));
        }
        Ok(Shape::RoundCone { a, b, ra, rb })
    }

    /// Signed distance [m] of `p` to the surface (negative inside), its gradient (the unit
    /// outward normal) and its Hessian [1/m].
    pub fn distance(&self, p: &Vec3) -> (f64, Vec3, Mat3) {
        match self {
            Shape::Plane { point, normal } => ((p - point).dot(normal), *normal, Mat3::zeros()),
            Shape::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                let rel = p - center;
                let t = rel.dot(axis);
                let rho = rel - axis * t;
                let r = rho.norm();
                let e = if r > 1e-300 {
                    rho / r
                } else {
                    any_perpendicular(axis)
                };
                let sign = if t >= 0.0 { 1.0 } else { -1.0 };
                let dl = r - radius;
                let dc = t.abs() - half_length;
                // Lateral surface: d = r - R, ∇²d = (I - aaᵀ - eeᵀ)/r.
                let lateral = |d: f64| {
                    let h = if r > 1e-300 {
                        (Mat3::identity() - axis * axis.transpose() - e * e.transpose()) / r
                    } else {
                        Mat3::zeros()
                    };
                    (d, e, h)
                };
                let cap = |d: f64| (d, axis * sign, Mat3::zeros());
                if dl <= 0.0 && dc <= 0.0 {
                    if dl > dc { lateral(dl) } else { cap(dc) }
                } else if dc <= 0.0 {
                    lateral(dl)
                } else if dl <= 0.0 {
                    cap(dc)
                } else {
                    // Outside the rim: distance to the rim circle.
                    let v = e * dl + axis * (sign * dc);
                    let d = v.norm();
                    let n = v / d;
                    // ∇²d = (I - nnᵀ)/d restricted, plus the rim's curvature term in the
                    // circumferential direction: (1 - R/r)... kept exact below.
                    let tang = axis.cross(&e);
                    let h = (Mat3::identity() - n * n.transpose() - tang * tang.transpose()) / d
                        + tang * tang.transpose() * (dl / (d * r));
                    (d, n, h)
                }
            }
            Shape::Capsule { a, b, radius } => {
                // Closest point c = a + s (b − a) of the core: d = |p − c| − R, ∇d = n, and
                // ∇²d = (I − n nᵀ − t tᵀ)/ρ beside the core (t its unit direction), where the
                // surface is a cylinder, or (I − n nᵀ)/ρ on the spherical caps.
                let ab = b - a;
                let l2 = ab.norm_squared();
                let s = if l2 > 0.0 {
                    ((p - a).dot(&ab) / l2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let v = p - (a + ab * s);
                let rho = v.norm();
                if rho <= 1e-300 {
                    let n = if l2 > 0.0 {
                        any_perpendicular(&ab)
                    } else {
                        Vec3::x()
                    };
                    return (-radius, n, Mat3::zeros());
                }
                let n = v / rho;
                let mut h = Mat3::identity() - n * n.transpose();
                if s > 0.0 && s < 1.0 {
                    let t = ab / l2.sqrt();
                    h -= t * t.transpose();
                }
                (rho - radius, n, h / rho)
            }
            Shape::RoundCone { a, b, ra, rb } => round_cone_distance(p, a, b, *ra, *rb),
        }
    }

    /// The point the shape is posed about: a plane's `point`, a cylinder's `center`, the
    /// midpoint of a capsule's (or round cone's) core [m].
    pub fn pivot(&self) -> Vec3 {
        match self {
            Shape::Plane { point, .. } => *point,
            Shape::Cylinder { center, .. } => *center,
            Shape::Capsule { a, b, .. } | Shape::RoundCone { a, b, .. } => 0.5 * (a + b),
        }
    }

    /// This shape rotated by `rotation` about its [`Shape::pivot`], then translated by
    /// `translation` [m].
    pub fn posed(&self, rotation: &Mat3, translation: &Vec3) -> Shape {
        match self {
            Shape::Plane { point, normal } => Shape::Plane {
                point: point + translation,
                normal: rotation * normal,
            },
            Shape::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => Shape::Cylinder {
                center: center + translation,
                axis: rotation * axis,
                radius: *radius,
                half_length: *half_length,
            },
            Shape::Capsule { a, b, radius } => {
                let m = 0.5 * (a + b);
                Shape::Capsule {
                    a: m + translation + rotation * (a - m),
                    b: m + translation + rotation * (b - m),
                    radius: *radius,
                }
            }
            Shape::RoundCone { a, b, ra, rb } => {
                let m = 0.5 * (a + b);
                Shape::RoundCone {
                    a: m + translation + rotation * (a - m),
                    b: m + translation + rotation * (b - m),
                    ra: *ra,
                    rb: *rb,
                }
            }
        }
    }

    /// Feed the geometry to a state digest.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        match self {
            Shape::Plane { point, normal } => {
                d.u64(0);
                d.vec3(point);
                d.vec3(normal);
            }
            Shape::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                d.u64(1);
                d.vec3(center);
                d.vec3(axis);
                d.f64(*radius);
                d.f64(*half_length);
            }
            Shape::Capsule { a, b, radius } => {
                d.u64(2);
                d.vec3(a);
                d.vec3(b);
                d.f64(*radius);
            }
            Shape::RoundCone { a, b, ra, rb } => {
                d.u64(3);
                d.vec3(a);
                d.vec3(b);
                d.f64(*ra);
                d.f64(*rb);
            }
        }
    }

    /// Curvature radius of the surface for conservative advancement [m] (∞ for a plane).
    fn curvature_radius(&self) -> f64 {
        match self {
            Shape::Plane { .. } => f64::INFINITY,
            Shape::Cylinder { radius, .. } | Shape::Capsule { radius, .. } => *radius,
            // The side's circumferential curvature cos β/ρ is at most 1/min(ra, rb) on it
            // (ρ ≥ min(ra, rb) cos β there), the balls' 1/ra and 1/rb.
            Shape::RoundCone { ra, rb, .. } => ra.min(*rb),
        }
    }
}

/// An obstacle: geometry and Coulomb friction coefficient.
#[derive(Clone, Debug, PartialEq)]
pub struct Obstacle {
    /// Geometry.
    pub shape: Shape,
    /// Coulomb friction coefficient μ [-].
    pub friction: f64,
}

/// Lagged friction data of one contact slot (a node of a plane, a segment of a cylinder).
#[derive(Clone, Copy, Debug, Default)]
struct Lag {
    /// Normal force at the start [N] (0: no friction this step).
    lambda: f64,
    /// Unit normal at the start.
    normal: Vec3,
    /// Segment parameter of the material point (cylinders; 0 for plane nodes).
    s: f64,
    /// How far the obstacle's surface under the contact moves over the step [m] (moving
    /// obstacles): sliding is measured relative to it.
    carry: Vec3,
}

/// One contact point of an evaluation: up to two nodes with weights.
#[derive(Clone, Copy, Debug)]
struct Point {
    nodes: [usize; 2],
    weights: [f64; 2],
    /// Number of nodes used (1 or 2).
    count: usize,
    /// Slot index into the obstacle's lag table.
    slot: usize,
}

impl Point {
    /// The contact point at node `node` alone, in lag slot `slot`.
    fn node(node: usize, slot: usize) -> Self {
        Point {
            nodes: [node, node],
            weights: [1.0, 0.0],
            count: 1,
            slot,
        }
    }
}

/// Contact of one rod with a set of static obstacles, as a potential for the Newton solver.
#[derive(Clone, Debug)]
pub struct ObstacleContact {
    obstacles: Vec<Obstacle>,
    /// Each obstacle's geometry as built (poses are relative to it).
    rest: Vec<Shape>,
    /// Each obstacle's pose (rotation about its rest pivot, translation [m]): current and
    /// before the last [`ObstacleContact::set_pose`].
    pose: Vec<(Mat3, Vec3)>,
    prev_pose: Vec<(Mat3, Vec3)>,
    /// Rod radius [m].
    rod_radius: f64,
    /// Penalty stiffness k [N/m].
    pub stiffness: f64,
    /// Largest allowed penetration [m] (default 1 % of the rod radius).
    pub tolerance: f64,
    /// Friction's stick–slip transition speed ε_v [m/s] (ε_u = ε_v h; static solves use
    /// ε_u = ε_v · 1 ms).
    pub slip_speed: f64,
    eps_u: f64,
    x_start: Vec<Vec3>,
    lags: Vec<Vec<Lag>>,
    scratch: Vec<Lag>,
    /// Deepest penetration of the last accepted state [m].
    pub max_penetration: f64,
    /// Contact points active (penetrating) in the last accepted state.
    pub active: usize,
    /// Stiffness raises so far.
    pub raises: usize,
    /// The stiffness is never raised past this [N/m] (see [`ObstacleContact::stiffness_cap`]);
    /// infinite unless the scene sets it.
    pub max_stiffness: f64,
    /// Per obstacle, nodes that do not touch it (empty: none).
    exempt: Vec<Vec<bool>>,
    /// A segment of the rod that has broken ([`ObstacleContact::set_broken`]): it touches
    /// no capsule or cylinder; its two nodes are the ends of the two pieces.
    broken: Option<usize>,
    /// Skip a capsule's segments out of reach in the penalty and the step bound (the same
    /// sums; off only in the test that checks so).
    cull: bool,
    /// Raise the stiffness (and have the step re-solved) when the rod sinks deeper than the
    /// tolerance. Off for Projective Dynamics, whose penetration is bounded by its iteration
    /// count rather than the weight (raising it only ruins the conditioning).
    pub adaptive: bool,
}

/// Default largest penetration, as a fraction of the rod radius (issue #3: "without sinking
/// more than 1 % of its radius").
const TOLERANCE_FRACTION: f64 = 0.01;

/// A lower bound of the distance between segment `[p0, p1]` and a capsule's core segment
/// (midpoint `mid`, half length `half`) [m]: the distance of the two segments' bounding
/// spheres (each about its midpoint).
#[inline]
fn distance_lower_bound(p0: &Vec3, p1: &Vec3, mid: &Vec3, half: f64) -> f64 {
    ((p0 + p1) * 0.5 - mid).norm() - 0.5 * (p1 - p0).norm() - half
}

/// A capsule's (or round cone's) core midpoint, half length, the largest radius about the
/// core (the shape lies within it of the core) and the least curvature radius of its surface,
/// or `None` for another shape. For a capsule both radii are its radius.
fn capsule_sphere(shape: &Shape) -> Option<(Vec3, f64, f64, f64)> {
    match shape {
        Shape::Capsule { a, b, radius } => {
            Some(((a + b) * 0.5, 0.5 * (b - a).norm(), *radius, *radius))
        }
        Shape::RoundCone { a, b, ra, rb } => Some((
            (a + b) * 0.5,
            0.5 * (b - a).norm(),
            ra.max(*rb),
            ra.min(*rb),
        )),
        _ => None,
    }
}

/// Smoothed penalty: value, first and second derivative in the penetration δ.
#[inline]
fn penalty(delta: f64, k: f64, eps: f64) -> (f64, f64, f64) {
    if delta <= 0.0 {
        (0.0, 0.0, 0.0)
    } else if delta <= eps {
        (
            k * delta.powi(3) / (6.0 * eps),
            k * delta * delta / (2.0 * eps),
            k * delta / eps,
        )
    } else {
        (
            k * (0.5 * delta * delta - 0.5 * eps * delta + eps * eps / 6.0),
            k * (delta - 0.5 * eps),
            k,
        )
    }
}

/// IPC's friction mollifier: f0, f1 = f0', f1' (y ≥ 0).
#[inline]
pub(crate) fn mollifier(y: f64, eps: f64) -> (f64, f64, f64) {
    if y < eps {
        (
            -y.powi(3) / (3.0 * eps * eps) + y * y / eps + eps / 3.0,
            -y * y / (eps * eps) + 2.0 * y / eps,
            -2.0 * y / (eps * eps) + 2.0 / eps,
        )
    } else {
        (y, 1.0, 0.0)
    }
}

impl ObstacleContact {
    /// Contact of a rod of `nodes` nodes and radius `rod_radius` [m]; the initial penalty
    /// stiffness is `stiffness` [N/m] (raised as needed).
    pub fn new(obstacles: Vec<Obstacle>, rod_radius: f64, nodes: usize, stiffness: f64) -> Self {
        let lags = obstacles
            .iter()
            .map(|_| vec![Lag::default(); nodes])
            .collect();
        let rest = obstacles.iter().map(|o| o.shape.clone()).collect();
        let identity = vec![(Mat3::identity(), Vec3::zeros()); obstacles.len()];
        let identity_exempt = vec![Vec::new(); obstacles.len()];
        ObstacleContact {
            obstacles,
            rest,
            pose: identity.clone(),
            prev_pose: identity,
            rod_radius,
            stiffness,
            tolerance: TOLERANCE_FRACTION * rod_radius,
            slip_speed: 1e-4,
            eps_u: 1e-7,
            x_start: vec![Vec3::zeros(); nodes],
            lags,
            scratch: vec![Lag::default(); nodes],
            max_penetration: 0.0,
            active: 0,
            raises: 0,
            max_stiffness: f64::INFINITY,
            adaptive: true,
            exempt: identity_exempt,
            broken: None,
            cull: true,
        }
    }

    /// Nodes that do not touch obstacle `o` (e.g. a suture's nodes inside the tissue the
    /// obstacle stands for); `nodes` has one flag per node.
    pub fn set_exempt(&mut self, o: usize, nodes: &[bool]) {
        let e = &mut self.exempt[o];
        if e.len() != nodes.len() {
            *e = nodes.to_vec();
        } else {
            e.copy_from_slice(nodes);
        }
    }

    /// The rod's broken segment (`RodParams::broken`), if any: no longer material, it touches
    /// nothing. Its nodes part, and the straight line between them would otherwise be caught
    /// on a jaw or a shaft (a suture snapped live was held 4.7 cm apart across the driver's
    /// jaws, every later step at the iteration cap).
    pub fn set_broken(&mut self, broken: Option<usize>) {
        self.broken = broken;
    }

    /// The largest stiffness [N/m] worth raising to for a rod of axial stiffness `ea` = E A [N]
    /// and radius `rod_radius` [m]: [`ObstacleContact::stiffness_for`] the force EA, which
    /// would stretch the rod to twice its length, held on one point at the tolerance. A
    /// penetration that persists at this stiffness is no load a rod survives (a segment caught
    /// through a jaw, a broken end's recoil), which no stiffness undoes. Without the cap each
    /// step re-solved eight times, raising k tenfold each time: a suture snapped live took it
    /// from 3.5e6 to 3.5e155 N/m in 30 ms, and every later step ran to the iteration cap
    /// (docs/performance.md, 2026-11-28, fifth session). Self-contact has the same cap
    /// (`SelfContact::stiffness_cap`).
    pub fn stiffness_cap(ea: f64, rod_radius: f64) -> f64 {
        Self::stiffness_for(ea, rod_radius)
    }

    /// A starting penalty stiffness [N/m] for loads of total magnitude `force` [N] (weight,
    /// end loads, tension): the whole load on one contact point sinks it by one tolerance.
    /// (The stiffness still adapts upwards if needed.)
    pub fn stiffness_for(force: f64, rod_radius: f64) -> f64 {
        force.max(1e-9) / (TOLERANCE_FRACTION * rod_radius)
    }

    /// The obstacles (in their current poses).
    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// Pose obstacle `o` rigidly: its geometry as built, rotated by `rotation` about its
    /// [`Shape::pivot`] and translated by `translation` [m] (a scripted instrument). Call it
    /// before each step with the pose at the step's end time; friction then measures sliding
    /// relative to the surface as it moves from its previous pose (pose once per step).
    pub fn set_pose(&mut self, o: usize, rotation: &Mat3, translation: &Vec3) {
        self.prev_pose[o] = self.pose[o];
        self.pose[o] = (*rotation, *translation);
        self.obstacles[o].shape = self.rest[o].posed(rotation, translation);
    }

    /// The force the rod at `x` presses on obstacle `o` with [N, world]: the sum over its
    /// contact points of the penalty's reaction `E'(δ) (−n)` (the penalty of the module doc;
    /// friction not included). A tensile test's load cell (sim::tensile).
    pub fn force_on(&self, o: usize, x: &[Vec3]) -> Vec3 {
        let (k, eps) = (self.stiffness, self.eps());
        let shape = &self.obstacles[o].shape;
        let mut f = Vec3::zeros();
        self.points(o, x, |p| {
            let (d, n, _) = shape.distance(&Self::at(&p, x));
            f -= n * penalty(self.rod_radius - d, k, eps).1;
        });
        f
    }

    /// How far the last pose change moved the material point of obstacle `o` that was at `p`
    /// [m] under the previous pose (the start of the step).
    fn carry(&self, o: usize, p: &Vec3) -> Vec3 {
        // A body point at q in the built geometry sits at c + t + R (q − c) under pose
        // (R, t), c the pivot: recover q − c from the previous pose, re-pose it.
        let c = self.rest[o].pivot();
        let (r0, t0) = &self.prev_pose[o];
        let (r1, t1) = &self.pose[o];
        let q = r0.transpose() * (p - c - t0);
        c + t1 + r1 * q - p
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): each
    /// obstacle as posed now, its pose and the pose before (friction measures sliding relative
    /// to the surface's move between them), the adaptive penalty stiffness, the nodes exempt
    /// from each obstacle, and the statistics of the last accepted state. The lagged friction
    /// (`lags`, the start positions) is not carried: [`NodePotential::begin`] rebuilds it at
    /// every step's start from the positions, the poses and the stiffness. Every field is
    /// named here, so a new one must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let ObstacleContact {
            obstacles,
            // The geometry as built, the rod's radius and the scene's contact settings.
            rest: _,
            rod_radius: _,
            tolerance: _,
            slip_speed: _,
            adaptive: _,
            max_stiffness: _,
            // A way of computing the same sums, not state.
            cull: _,
            // The rod's own broken segment (in its digest), set before every step.
            broken: _,
            // Rebuilt by `begin` at each step's start (and by `relag` within a solve).
            eps_u: _,
            x_start: _,
            lags: _,
            scratch: _,
            pose,
            prev_pose,
            stiffness,
            max_penetration,
            active,
            raises,
            exempt,
        } = self;
        d.usize(obstacles.len());
        for (o, ob) in obstacles.iter().enumerate() {
            ob.shape.digest_into(d);
            d.f64(ob.friction);
            for (r, t) in [&pose[o], &prev_pose[o]] {
                d.mat3(r);
                d.vec3(t);
            }
            d.bools(&exempt[o]);
        }
        d.f64(*stiffness);
        d.f64(*max_penetration);
        d.usize(*active);
        d.usize(*raises);
    }

    /// Smoothing length of the penalty onset [m].
    fn eps(&self) -> f64 {
        0.5 * self.tolerance
    }

    /// Visit the contact points of obstacle `o` at `x`.
    fn points(&self, o: usize, x: &[Vec3], visit: impl FnMut(Point)) {
        self.points_near(o, x, |_| true, visit)
    }

    /// [`ObstacleContact::points`] without the segments `near(e)` rules out (capsules only):
    /// a caller passes a test that only rules out segments none of whose points could
    /// contribute, so what it sums is the same, bit for bit.
    fn points_near(
        &self,
        o: usize,
        x: &[Vec3],
        near: impl Fn(usize) -> bool,
        mut visit: impl FnMut(Point),
    ) {
        let n = x.len() - 1;
        // Points on exempt nodes only (e.g. suture inside tissue) do not touch.
        let ex = &self.exempt[o];
        let mut f = |p: Point| {
            if ex.is_empty() || !(0..p.count).all(|a| ex[p.nodes[a]]) {
                visit(p)
            }
        };
        match &self.obstacles[o].shape {
            Shape::Plane { .. } => {
                for i in 0..=n {
                    f(Point::node(i, i));
                }
            }
            shape @ (Shape::Cylinder { .. } | Shape::Capsule { .. } | Shape::RoundCone { .. }) => {
                // Where segment e penetrates deepest: its closest parameter to the cylinder's
                // axis line, or to the capsule's core segment (exact segment distance),
                // clamped to [0, 1].
                let param = |e: usize| match shape {
                    Shape::Capsule { a, b, .. } => segment::distance(&x[e], &x[e + 1], a, b).t,
                    // Where the tapered surface is deepest, from the point nearest the core.
                    Shape::RoundCone { a, b, .. } => {
                        let s0 = segment::distance(&x[e], &x[e + 1], a, b).t;
                        deepest_on_segment(shape, &x[e], &x[e + 1], s0)
                    }
                    Shape::Cylinder { center, axis, .. } => {
                        let d = x[e + 1] - x[e];
                        let w0 = x[e] - center;
                        let (a, b, c) = (d.dot(&d), d.dot(axis), 1.0);
                        let (dd, ee) = (d.dot(&w0), axis.dot(&w0));
                        let den = a * c - b * b;
                        if den <= 1e-12 * a * c {
                            0.5
                        } else {
                            ((b * ee - c * dd) / den).clamp(0.0, 1.0)
                        }
                    }
                    Shape::Plane { .. } => unreachable!("planes use nodes"),
                };
                let mut prev_end = false; // previous segment's point clamped to its end node
                let capsule = matches!(shape, Shape::Capsule { .. } | Shape::RoundCone { .. });
                for e in 0..n {
                    if self.broken == Some(e) {
                        // Torn: node e ends the first piece (its point if the segment before
                        // was clamped to it, as at the rod's end), node e + 1 starts the
                        // second (below, as at the rod's start).
                        if prev_end {
                            f(Point::node(e, e - 1));
                        }
                        prev_end = false;
                        continue;
                    }
                    if capsule && !near(e) {
                        // Ruled out: its points, and the end nodes it shares, are out of
                        // reach (so the next segment's start node is not its point either).
                        prev_end = false;
                        continue;
                    }
                    let s = param(e);
                    if s > 0.0 && s < 1.0 {
                        f(Point {
                            nodes: [e, e + 1],
                            weights: [1.0 - s, s],
                            count: 2,
                            slot: e,
                        });
                    } else if s == 0.0 && (e == 0 || prev_end || self.broken == Some(e - 1)) {
                        // Node e is the closest point of both neighbours (or the rod's start,
                        // or a broken piece's).
                        f(Point::node(e, e));
                    }
                    prev_end = s == 1.0;
                }
                if prev_end {
                    f(Point::node(n, n - 1));
                }
            }
        }
    }

    /// The contact point's position.
    #[inline]
    fn at(p: &Point, x: &[Vec3]) -> Vec3 {
        let mut v = x[p.nodes[0]] * p.weights[0];
        if p.count == 2 {
            v += x[p.nodes[1]] * p.weights[1];
        }
        v
    }

    /// Normal forces at `x` into the lag tables (keeping the material points of contacts that
    /// already had one), and the largest change relative to the largest normal force.
    /// Allocation-free: the new table is built in `scratch` and swapped in.
    fn lag_normals(&mut self, x: &[Vec3]) -> f64 {
        let (k, eps) = (self.stiffness, self.eps());
        let mut change = 0.0f64;
        for o in 0..self.obstacles.len() {
            let mut fresh = std::mem::take(&mut self.scratch);
            fresh.iter_mut().for_each(|l| *l = Lag::default());
            self.points(o, x, |p| {
                let pos = Self::at(&p, x);
                let (d, n, _) = self.obstacles[o].shape.distance(&pos);
                let (_, f, _) = penalty(self.rod_radius - d, k, eps);
                if f > 0.0 {
                    let s = if p.count == 2 {
                        p.weights[1]
                    } else if p.slot + 1 == p.nodes[0] {
                        // The rod's end node (or a broken piece's), as the end of its last
                        // segment.
                        1.0
                    } else {
                        0.0
                    };
                    fresh[p.slot] = Lag {
                        lambda: f,
                        normal: n,
                        s,
                        carry: self.carry(o, &pos),
                    };
                }
            });
            let old = &mut self.lags[o];
            let scale = fresh.iter().map(|l| l.lambda).fold(0.0, f64::max);
            for (new, prev) in fresh.iter_mut().zip(old.iter()) {
                if scale > 0.0 {
                    change = change.max((new.lambda - prev.lambda).abs() / scale);
                }
                if prev.lambda > 0.0 {
                    new.s = prev.s;
                }
            }
            std::mem::swap(old, &mut fresh);
            self.scratch = fresh;
        }
        change
    }
}

impl NodePotential for ObstacleContact {
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>) {
        self.x_start.copy_from_slice(x_start);
        self.eps_u = self.slip_speed * h.unwrap_or(1e-3);
        for t in self.lags.iter_mut() {
            t.iter_mut().for_each(|l| *l = Lag::default());
        }
        self.lag_normals(x_start);
    }

    fn evaluate(&self, x: &[Vec3], mut sink: Option<&mut PotentialSink>) -> f64 {
        let (k, eps) = (self.stiffness, self.eps());
        let mut value = 0.0;
        for o in 0..self.obstacles.len() {
            let ob = &self.obstacles[o];
            // A capsule's segments beyond the rod's radius of its surface, with a margin for
            // the bound's rounding, have no penalty (penalty(δ ≤ 0) = 0): skipped.
            let sphere = capsule_sphere(&ob.shape);
            let near = |e: usize| {
                !self.cull
                    || sphere.is_none_or(|(mid, half, radius, _)| {
                        let reach = (self.rod_radius + radius) * (1.0 + 1e-9) + 1e-12;
                        distance_lower_bound(&x[e], &x[e + 1], &mid, half) < reach
                    })
            };
            // Penalty.
            self.points_near(o, x, near, |p| {
                let pos = Self::at(&p, x);
                let (d, n, hd) = ob.shape.distance(&pos);
                let (e, de, dde) = penalty(self.rod_radius - d, k, eps);
                if de == 0.0 && dde == 0.0 {
                    return;
                }
                value += e;
                let Some(sink) = sink.as_deref_mut() else {
                    return;
                };
                // ∇_p E = -E' n,  ∇²_p E = E'' n nᵀ - E' ∇²d.
                let gp = -n * de;
                let hp = n * n.transpose() * dde - hd * de;
                for a in 0..p.count {
                    sink.add_gradient(p.nodes[a], &(gp * p.weights[a]));
                }
                if !sink.wants_hessian() {
                    return;
                }
                let (w0, w1) = (p.weights[0], p.weights[1]);
                if p.count == 1 {
                    sink.add_hessian(p.nodes[0], p.nodes[0], &hp);
                    return;
                }
                let (i, j) = (p.nodes[0], p.nodes[1]);
                let mut h00 = hp * (w0 * w0);
                let mut h11 = hp * (w1 * w1);
                let mut h10 = hp * (w0 * w1);
                // The point maximises the penetration over the segment (s = s*(x)): the
                // Hessian of E(x, s*(x)) is the Schur complement H_xx - H_xs H_ss⁻¹ H_sx.
                let delta = x[j] - x[i];
                let ess = delta.dot(&(hp * delta));
                if ess < 0.0 {
                    let c0 = hp * delta * w0 - gp;
                    let c1 = hp * delta * w1 + gp;
                    h00 -= c0 * c0.transpose() / ess;
                    h11 -= c1 * c1.transpose() / ess;
                    h10 -= c1 * c0.transpose() / ess;
                }
                sink.add_hessian(i, i, &h00);
                sink.add_hessian(j, j, &h11);
                sink.add_hessian(j, i, &h10);
            });
            // Friction on the slots that were in contact at the start.
            if ob.friction <= 0.0 {
                continue;
            }
            let n_nodes = x.len();
            for (slot, lag) in self.lags[o].iter().enumerate() {
                if lag.lambda <= 0.0 {
                    continue;
                }
                let (nodes, weights, count) = match ob.shape {
                    Shape::Plane { .. } => ([slot, slot], [1.0, 0.0], 1),
                    Shape::Cylinder { .. } | Shape::Capsule { .. } | Shape::RoundCone { .. }
                        if slot + 1 < n_nodes =>
                    {
                        ([slot, slot + 1], [1.0 - lag.s, lag.s], 2)
                    }
                    Shape::Cylinder { .. } | Shape::Capsule { .. } | Shape::RoundCone { .. } => {
                        ([slot, slot], [1.0, 0.0], 1)
                    }
                };
                // Sliding relative to the obstacle's surface (which moves with its pose).
                let mut dp = -lag.carry;
                for a in 0..count {
                    dp += (x[nodes[a]] - self.x_start[nodes[a]]) * weights[a];
                }
                let nn = lag.normal;
                let pt = Mat3::identity() - nn * nn.transpose();
                let u = pt * dp;
                let y = u.norm();
                let ml = ob.friction * lag.lambda;
                let (f0, f1, df1) = mollifier(y, self.eps_u);
                value += ml * f0;
                let Some(sink) = sink.as_deref_mut() else {
                    continue;
                };
                // ∇D = μλ f1(y)/y · u (through P_t), ∇²D = μλ [f1/y P_t + (f1' - f1/y) û ûᵀ].
                let (ratio, radial) = if y > 1e-300 {
                    (f1 / y, df1 - f1 / y)
                } else {
                    (2.0 / self.eps_u, 0.0)
                };
                let g = u * (ml * ratio);
                let uh = if y > 1e-300 { u / y } else { Vec3::zeros() };
                let hp = (pt * ratio + uh * uh.transpose() * radial) * ml;
                for a in 0..count {
                    sink.add_gradient(nodes[a], &(g * weights[a]));
                }
                if sink.wants_hessian() {
                    if count == 1 {
                        sink.add_hessian(nodes[0], nodes[0], &hp);
                    } else {
                        let (w0, w1) = (weights[0], weights[1]);
                        sink.add_hessian(nodes[0], nodes[0], &(hp * (w0 * w0)));
                        sink.add_hessian(nodes[1], nodes[1], &(hp * (w1 * w1)));
                        sink.add_hessian(nodes[1], nodes[0], &(hp * (w0 * w1)));
                    }
                }
            }
        }
        value
    }

    fn accept(&mut self, x: &[Vec3]) -> bool {
        let mut deepest = 0.0f64;
        let mut active = 0;
        for o in 0..self.obstacles.len() {
            self.points(o, x, |p| {
                let (d, _, _) = self.obstacles[o].shape.distance(&Self::at(&p, x));
                let delta = self.rod_radius - d;
                if delta > 0.0 {
                    active += 1;
                    deepest = deepest.max(delta);
                }
            });
        }
        self.max_penetration = deepest;
        self.active = active;
        // Raise up to the cap; at the cap the state is taken as solved (see
        // `ObstacleContact::stiffness_cap`).
        if self.adaptive && deepest > self.tolerance && self.stiffness < self.max_stiffness {
            self.stiffness = (self.stiffness * 10.0).min(self.max_stiffness);
            self.raises += 1;
            return false;
        }
        true
    }

    fn max_step(&self, x: &[Vec3], x_full: &[Vec3]) -> f64 {
        // Conservative advancement: a contact point at gap g = d - r moving towards the
        // obstacle at normal speed v_n per unit t may advance to t = (g + tolerance)/v_n
        // (at least a quarter tolerance when already deeper), so no iterate jumps through a
        // surface, however weak the penalty still is.
        let tol = self.tolerance;
        let mut t = 1.0f64;
        for o in 0..self.obstacles.len() {
            // A capsule's segment whose gap bound (plus the tolerance) exceeds the most its
            // points can approach in the step (`s + s²/2R`, s its nodes' longest move), with
            // a margin for rounding, allows t ≥ 1: skipped.
            let sphere = capsule_sphere(&self.obstacles[o].shape);
            let near = |e: usize| {
                !self.cull
                    || sphere.is_none_or(|(mid, half, radius, curvature)| {
                        let gap = distance_lower_bound(&x[e], &x[e + 1], &mid, half)
                            - radius
                            - self.rod_radius;
                        let s = (x_full[e] - x[e])
                            .norm()
                            .max((x_full[e + 1] - x[e + 1]).norm());
                        let reach = s + s * s / (2.0 * curvature);
                        gap + tol < 1.01 * reach + 1e-12
                    })
            };
            self.points_near(o, x, near, |p| {
                let pos = Self::at(&p, x);
                let (d, n, _) = self.obstacles[o].shape.distance(&pos);
                let gap = d - self.rod_radius;
                let step = Self::at(&p, x_full) - pos;
                // Towards the surface along the normal, plus, on a curved surface, the drop
                // of the surface under a tangential move s: s²/(2R) (bounded by t·s²/(2R)).
                let sn = step.dot(&n);
                let curve = (step.norm_squared() - sn * sn).max(0.0)
                    / (2.0 * self.obstacles[o].shape.curvature_radius());
                let vn = (-sn).max(0.0) + curve;
                if vn > 0.0 {
                    t = t.min((gap + tol).max(0.25 * tol) / vn);
                }
            });
        }
        t
    }

    fn relag(&mut self, x: &[Vec3]) -> f64 {
        self.lag_normals(x)
    }

    /// PD: every penetrating contact point is projected onto the surface offset by the rod
    /// radius (`p + n δ`), with the penalty stiffness as the weight, so `(k/2)δ²` is the
    /// penalty's quadratic regime; the same tolerance raises it (re-solving the step).
    fn project(&self, x: &[Vec3], out: &mut dyn FnMut(Projection)) {
        for o in 0..self.obstacles.len() {
            self.points(o, x, |p| {
                let pos = Self::at(&p, x);
                let (d, n, _) = self.obstacles[o].shape.distance(&pos);
                let delta = self.rod_radius - d;
                if delta > 0.0 {
                    out(Projection {
                        nodes: p.nodes,
                        weights: p.weights,
                        count: p.count,
                        target: pos + n * delta,
                        weight: self.stiffness,
                    });
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The force on an obstacle is minus the derivative of the penalty energy with respect to
    /// the obstacle's translation `t` (the generalised force of its coordinate, −∂E/∂t):
    /// checked by central differences for a rod bent round a cylinder, in the penalty's
    /// quadratic range and in its cubic start.
    #[test]
    fn force_on_an_obstacle_is_the_penalty_energy_derivative_in_its_translation() {
        let r = 1e-4;
        let cyl = Shape::Cylinder {
            center: Vec3::zeros(),
            axis: Vec3::new(0.1, 0.0, 1.0).normalize(),
            radius: 0.001,
            half_length: 0.01,
        };
        // A strand bent half round the cylinder, pressed in by `press` [m].
        for press in [2e-6, 4e-7] {
            let x: Vec<Vec3> = (0..13)
                .map(|i| {
                    let a = std::f64::consts::PI * i as f64 / 12.0;
                    let rho = 0.001 + r - press;
                    Vec3::new(rho * a.cos(), -rho * a.sin(), 0.0002 * i as f64)
                })
                .collect();
            let mut c = ObstacleContact::new(
                vec![Obstacle {
                    shape: cyl.clone(),
                    friction: 0.0,
                }],
                r,
                x.len(),
                1.0e4,
            );
            let f = c.force_on(0, &x);
            assert!(f.norm() > 0.0);
            let mut fd = Vec3::zeros();
            let d = 1e-9;
            for k in 0..3 {
                let mut e = [0.0; 2];
                for (j, sgn) in [1.0, -1.0].iter().enumerate() {
                    let mut t = Vec3::zeros();
                    t[k] = sgn * d;
                    c.set_pose(0, &Mat3::identity(), &t);
                    e[j] = c.evaluate(&x, None);
                }
                fd[k] = (e[0] - e[1]) / (2.0 * d);
            }
            c.set_pose(0, &Mat3::identity(), &Vec3::zeros());
            // Measured: 2.4e-11 and 5.5e-11 relative (the differences' rounding, E/d · 1e-16).
            assert!((f + fd).norm() <= 1e-10 * f.norm(), "{f} vs {fd}");
        }
    }

    /// Skipping a capsule's segments out of reach changes nothing: the penalty's value,
    /// gradient and Hessian and the step bound, bit for bit, with and without, on a rod that
    /// passes close by, through and far from the capsule, stepped toward it by various lengths.
    #[test]
    fn skipping_segments_out_of_reach_leaves_every_sum_the_same() {
        use crate::rod::banded::Banded;
        let r = 1e-4;
        let make = || {
            ObstacleContact::new(
                vec![Obstacle {
                    shape: Shape::Capsule {
                        a: Vec3::new(0.0, 0.0, -0.004),
                        b: Vec3::new(0.0, 0.0, 0.004),
                        radius: 0.0008,
                    },
                    friction: 0.0,
                }],
                r,
                41,
                50.0,
            )
        };
        let mut rnd = crate::rod::banded::uniform(5);
        let (mut skipped_some, mut pressed, mut limited) = (false, false, false);
        for trial in 0..40 {
            // A wavy rod 4 cm long crossing near the capsule at a height 0.5–1.3 mm.
            let h = 0.0005 + 0.0008 * (trial as f64 / 40.0);
            let x: Vec<Vec3> = (0..41)
                .map(|i| {
                    let s = i as f64 / 40.0 - 0.5;
                    Vec3::new(0.04 * s, h + 0.002 * (7.0 * s).sin() * s, 0.001 * rnd())
                })
                .collect();
            let scale = 1e-4 * trial as f64;
            let x_full: Vec<Vec3> = x
                .iter()
                .map(|p| p + Vec3::new(rnd(), rnd() - 0.5, rnd()) * scale)
                .collect();
            let run = |cull: bool| {
                let mut c = make();
                c.cull = cull;
                c.begin(&x, Some(1e-3));
                let mut g = vec![0.0; 3 * 41];
                let mut band = Banded::new(3 * 41, 5);
                let mut low = Vec::new();
                let mut sink = PotentialSink {
                    g: &mut g,
                    h: Some(&mut band),
                    low_rank: Some(&mut low),
                    stride: 3,
                    offset: 0,
                };
                let v = c.evaluate(&x, Some(&mut sink));
                let t = c.max_step(&x, &x_full);
                let hb: Vec<u64> = (0..3 * 41)
                    .flat_map(|i: usize| (i.saturating_sub(5)..=i).map(move |j| (i, j)))
                    .map(|(i, j)| band.get(i, j).to_bits())
                    .collect();
                (
                    v.to_bits(),
                    g.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    hb,
                    t.to_bits(),
                )
            };
            let (with, without) = (run(true), run(false));
            assert_eq!(with, without, "trial {trial}");
            pressed |= f64::from_bits(with.0) > 0.0;
            limited |= f64::from_bits(with.3) < 1.0;
            skipped_some |= x
                .windows(2)
                .any(|w| distance_lower_bound(&w[0], &w[1], &Vec3::zeros(), 0.004) > 0.0009 * 1.01);
        }
        // Segments were skipped, and the sums compared include pressing points and steps
        // the bound shortens.
        assert!(skipped_some && pressed && limited);
    }

    /// The stiffness is raised tenfold per re-solve while a point sinks past the tolerance,
    /// but never past its cap; at the cap the state is taken as solved (a point that stays
    /// 50 tolerances deep through a plane, as a broken end's recoil left one live, no longer
    /// re-solves the step forever). The cap of nylon 3-0 (E = 2 GPa, r = 0.1 mm: EA = 62.8 N)
    /// is the stiffness that holds EA on one point at the tolerance (1 µm): 6.28e7 N/m.
    #[test]
    fn the_stiffness_is_raised_up_to_its_cap_and_no_further() {
        let r = 1e-4;
        let mut c = ObstacleContact::new(
            vec![Obstacle {
                shape: Shape::Plane {
                    point: Vec3::zeros(),
                    normal: Vec3::y(),
                },
                friction: 0.0,
            }],
            r,
            3,
            1.0,
        );
        let ea = crate::rod::params::NYLON.youngs_modulus * std::f64::consts::PI * r * r;
        c.max_stiffness = ObstacleContact::stiffness_cap(ea, r);
        assert!((c.max_stiffness - 6.283e7).abs() <= 1e-4 * 6.283e7);
        let x = [
            Vec3::new(0.0, r, 0.0),
            Vec3::new(0.001, r - 50.0 * c.tolerance, 0.0),
            Vec3::new(0.002, r, 0.0),
        ];
        c.begin(&x, Some(1e-3));
        let mut raised = 0;
        while !c.accept(&x) {
            raised += 1;
            assert!(raised <= 8, "raised past its cap: {}", c.stiffness);
        }
        // 1 N/m to 6.28e7 N/m: seven raises of ten, the eighth clipped to the cap.
        assert_eq!(raised, 8);
        assert_eq!(c.stiffness, c.max_stiffness);
        assert!(c.accept(&x) && c.stiffness == c.max_stiffness);
        // Uncapped (the default), it goes on raising.
        c.max_stiffness = f64::INFINITY;
        assert!(!c.accept(&x));
    }

    /// A rod broken at segment `b` touches a capsule as its two pieces would, each on its
    /// own (the independent reference: two rods): the straight line between the parted
    /// nodes, which here runs through the capsule, presses on nothing, and each piece's end
    /// node still does. Checked on the energy and the step bound, for a break whose line
    /// crosses the capsule with the first piece's end node pressed on it, and with the second
    /// piece's start node pressed on it.
    #[test]
    fn a_broken_segment_touches_nothing_and_its_pieces_touch_as_two_rods() {
        let r = 1e-4;
        let capsule = Obstacle {
            shape: Shape::Capsule {
                a: Vec3::new(0.0, 0.0, -0.004),
                b: Vec3::new(0.0, 0.0, 0.004),
                radius: 0.0008,
            },
            friction: 0.0,
        };
        let make = |nodes: usize| ObstacleContact::new(vec![capsule.clone()], r, nodes, 50.0);
        // Pressed 5 µm into the capsule's surface, at angle `a` round it, and z.
        let on = |a: f64, z: f64| {
            let rho = 0.0008 + r - 5e-6;
            Vec3::new(rho * a.cos(), rho * a.sin(), z)
        };
        for first in [true, false] {
            // Two pieces of 8 segments leaving the capsule outward; the end at the break
            // (node 8 of the first piece, or node 9 starting the second) pressed on it, the
            // other piece's end 3 mm off on the far side, so the broken segment 8 crosses it.
            let radial = |a: f64, from: Vec3, k: usize| {
                from + Vec3::new(a.cos(), a.sin(), 0.0) * (0.001 * k as f64)
            };
            let (a0, a1) = (0.3, 0.3 + std::f64::consts::PI);
            let end0 = if first {
                on(a0, 0.001)
            } else {
                on(a0, 0.001) + Vec3::new(a0.cos(), a0.sin(), 0.0) * 0.003
            };
            let start1 = if first {
                on(a1, -0.001) + Vec3::new(a1.cos(), a1.sin(), 0.0) * 0.003
            } else {
                on(a1, -0.001)
            };
            let mut x: Vec<Vec3> = (0..9).rev().map(|k| radial(a0, end0, k)).collect();
            x.extend((0..9).map(|k| radial(a1, start1, k)));
            let b = 8;
            let mut whole = make(x.len());
            let unbroken = whole.evaluate(&x, None);
            whole.set_broken(Some(b));
            let broken = whole.evaluate(&x, None);
            let (pa, pb) = (&x[..=b], &x[b + 1..]);
            let pieces = make(pa.len()).evaluate(pa, None) + make(pb.len()).evaluate(pb, None);
            // The break's line through the capsule pressed hard; the pieces only at one end.
            assert!(unbroken > 10.0 * broken, "{unbroken} vs {broken}");
            assert!(broken > 0.0);
            assert!(
                (broken - pieces).abs() <= 1e-12 * pieces,
                "{broken} vs {pieces}"
            );
            // Every node moved toward the capsule's axis by 10 µm: the bound is the pieces'.
            let x_full: Vec<Vec3> = x
                .iter()
                .map(|p| p - Vec3::new(p.x, p.y, 0.0).normalize() * 1e-5)
                .collect();
            let t = whole.max_step(&x, &x_full);
            let tp = make(pa.len())
                .max_step(pa, &x_full[..=b])
                .min(make(pb.len()).max_step(pb, &x_full[b + 1..]));
            assert_eq!(t.to_bits(), tp.to_bits());
            assert!(t < 1.0);
        }
    }

    /// The state digest sees the smallest change of every piece of state a step carries to
    /// the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp_m, ulp3};
        let x: Vec<Vec3> = (0..6)
            .map(|i| Vec3::new(0.01 * i as f64, 0.0009, 0.0))
            .collect();
        let mut c = ObstacleContact::new(
            vec![
                Obstacle {
                    shape: Shape::Plane {
                        point: Vec3::zeros(),
                        normal: Vec3::y(),
                    },
                    friction: 0.3,
                },
                Obstacle {
                    shape: Shape::Capsule {
                        a: Vec3::new(0.0, 0.01, -0.01),
                        b: Vec3::new(0.0, 0.01, 0.01),
                        radius: 0.002,
                    },
                    friction: 0.2,
                },
            ],
            0.001,
            x.len(),
            10.0,
        );
        let turn = nalgebra::Rotation3::from_axis_angle(&Vec3::x_axis(), 0.1).into_inner();
        c.set_pose(1, &Mat3::identity(), &Vec3::new(0.001, 0.0, 0.0));
        c.set_pose(1, &turn, &Vec3::new(0.002, 0.0, 0.0));
        c.set_exempt(0, &[false, true, false, false, false, false]);
        c.begin(&x, Some(1e-3));
        assert!(
            !c.accept(&x),
            "sinks past the tolerance: the stiffness is raised"
        );
        assert!(c.active > 0 && c.raises == 1);
        let digest = |c: &ObstacleContact| {
            let mut d = crate::math::Digest::default();
            c.digest_into(&mut d);
            d.0
        };
        let capsule_b = |c: &mut ObstacleContact| match &mut c.obstacles[1].shape {
            Shape::Capsule { b, .. } => ulp3(b),
            _ => unreachable!(),
        };
        assert_each_changes(
            &c,
            digest,
            &[
                ("obstacles[0].shape", &|c| match &mut c.obstacles[0].shape {
                    Shape::Plane { point, .. } => ulp3(point),
                    _ => unreachable!(),
                }),
                ("obstacles[1].shape", &capsule_b),
                ("pose[1].0", &|c| ulp_m(&mut c.pose[1].0)),
                ("pose[1].1", &|c| ulp3(&mut c.pose[1].1)),
                ("prev_pose[1].0", &|c| ulp_m(&mut c.prev_pose[1].0)),
                ("prev_pose[1].1", &|c| ulp3(&mut c.prev_pose[1].1)),
                ("stiffness", &|c| ulp(&mut c.stiffness)),
                ("max_penetration", &|c| ulp(&mut c.max_penetration)),
                ("active", &|c| c.active += 1),
                ("raises", &|c| c.raises += 1),
                ("exempt[0]", &|c| c.exempt[0][5] = true),
                ("exempt[1]", &|c| c.exempt[1] = vec![false; 6]),
            ],
        );
    }
}
