//! The throws of a surgical knot, from the suture's centreline alone (issue #22; derivation and
//! sources: docs/knots.md).
//!
//! A knot tied on a stitch is a stack of throws; closed far outside (as
//! [`identify_open`](super::identify_open) does), its knot is the connected sum of one prime
//! knot per throw: a single throw (one wrap) is a trefoil T(2,3), a double throw (two wraps, the
//! first throw of a surgeon's knot) a cinquefoil T(2,5) (docs/knots.md §2 builds a real
//! double-wrap throw and computes it). The Jones polynomial multiplies under connected sum
//! (Jones, "A polynomial invariant for knots via von Neumann algebras", Bull. AMS 12, 1985;
//! Lickorish, "An introduction to knot theory", GTM 175, 1997, ch. 3), so the knot's polynomial
//! factors into one polynomial per throw, and the newest throw is the quotient of the new
//! polynomial by the old. The throw's chirality is its
//! [`Sense`]. What topology cannot see (a throw laid flat, or half hitches on a straight
//! strand: a slip knot, topologically the same as a square or granny knot) is judged from the
//! geometry of the two strands inside the knot ([`KnotShape`]).
//!
//! Everything here is pure geometry (no threads, no clocks): [`KnotTracker::update`] is meant
//! for a snapshot of the suture's centreline every ~0.1 s, [`analyse_knot`] for a final state.

use super::{
    Laurent, TopologyError, close_open_curve, directions, from_t, jones_closed, knot_crossings,
    project,
};
use crate::math::{Mat3, Vec3};

/// The sense of a throw: the handedness of the two-strand twist it makes.
///
/// Inside a throw the two strands (the tail and the long end) twist about each other like the
/// two strands of a rope; `Right` when that twist is a right-handed double helix (as a
/// right-hand-thread screw: curling the right hand's fingers along the turn of the strands, the
/// thumb points along the direction they advance), `Left` for a left-handed one. Equivalently,
/// a `Right` throw closes to the right-handed (positive) trefoil, V = t + t³ − t⁴ (a double
/// throw: the positive cinquefoil, V = t² + t⁴ − t⁵ + t⁶ − t⁷): every crossing of its minimal
/// diagram is positive. It does not depend on the direction the suture is traversed or on the
/// viewpoint, so it is a property of the knot alone. In the instrument tie, wrapping the long
/// end around the driver as a right-handed coil makes a `Right` throw (docs/knots.md §2).
/// A square knot is two throws of opposite sense, a granny two of the same sense.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sense {
    /// A left-handed twist (negative crossings).
    Left,
    /// A right-handed twist (positive crossings).
    Right,
}

impl Sense {
    /// The other sense.
    pub fn opposite(self) -> Sense {
        match self {
            Sense::Left => Sense::Right,
            Sense::Right => Sense::Left,
        }
    }
}

/// One throw: its sense and its wraps (1: a single throw; 2: a double throw, the first throw of
/// a surgeon's knot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Throw {
    /// The handedness of the twist.
    pub sense: Sense,
    /// How many times one strand wraps the other: 1 or 2.
    pub wraps: u8,
}

impl Throw {
    /// A single throw of sense `sense`.
    pub fn single(sense: Sense) -> Throw {
        Throw { sense, wraps: 1 }
    }
    /// A double throw of sense `sense`.
    pub fn double(sense: Sense) -> Throw {
        Throw { sense, wraps: 2 }
    }
    /// The four throws, in the order they are tried when factoring (doubles first).
    pub const ALL: [Throw; 4] = [
        Throw {
            sense: Sense::Right,
            wraps: 2,
        },
        Throw {
            sense: Sense::Left,
            wraps: 2,
        },
        Throw {
            sense: Sense::Right,
            wraps: 1,
        },
        Throw {
            sense: Sense::Left,
            wraps: 1,
        },
    ];
    /// The Jones polynomial of this throw's knot (in A, t = A⁻⁴): the torus knot
    /// T(2, 2·wraps + 1), right-handed for [`Sense::Right`]: t + t³ − t⁴ and
    /// t² + t⁴ − t⁵ + t⁶ − t⁷ (Jones 1985; the Knot Atlas pages 3_1, which lists the left-handed
    /// −q⁻⁴ + q⁻³ + q⁻¹, and T(5,2); docs/knots.md §2 computes both on built throws).
    pub fn jones(self) -> Laurent {
        let right = match self.wraps {
            2 => from_t(&[(2, 1), (4, 1), (5, -1), (6, 1), (7, -1)]),
            _ => from_t(&[(1, 1), (3, 1), (4, -1)]),
        };
        match self.sense {
            Sense::Right => right,
            Sense::Left => right.mirror(),
        }
    }
    /// "single left", "double right", ….
    pub fn describe(self) -> String {
        format!(
            "{} {}",
            if self.wraps == 2 { "double" } else { "single" },
            match self.sense {
                Sense::Left => "left",
                Sense::Right => "right",
            }
        )
    }
}

/// The most throws [`factor_throws`] looks for (nylon is tied with 4 to 6).
pub const MAX_THROWS: usize = 6;

/// The multiset of throws whose Jones polynomials multiply to `v`: the factorisation of `v`
/// into [`Throw::jones`] factors, at most [`MAX_THROWS`] of them, by exact division (depth-first,
/// doubles first). `Some(vec![])` for the unknot (`v = 1`); `None` if `v` is no such product
/// (another knot: a figure-eight from a botched tie, or more throws). The factorisation is
/// unique: the 210 products of up to 6 factors are all distinct (tested).
pub fn factor_throws(v: &Laurent) -> Option<Vec<Throw>> {
    fn go(v: &Laurent, from: usize, left: usize, acc: &mut Vec<Throw>) -> bool {
        if *v == Laurent::one() {
            return true;
        }
        if left == 0 {
            return false;
        }
        for (i, t) in Throw::ALL.iter().enumerate().skip(from) {
            if let Some(q) = v.div_exact(&t.jones()) {
                acc.push(*t);
                if go(&q, i, left - 1, acc) {
                    return true;
                }
                acc.pop();
            }
        }
        false
    }
    let mut acc = Vec::new();
    go(v, 0, MAX_THROWS, &mut acc).then_some(acc)
}

/// What a knot is called, from its throws (in the order tied, or as a multiset) and its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KnotName {
    /// No knot: the suture closes to the unknot (no throw, or every throw undone).
    NotAKnot,
    /// One single throw (a half knot).
    SingleThrow,
    /// One double throw (a surgeon's throw alone).
    DoubleThrow,
    /// Two single throws of opposite sense (reef knot, 3_1 # 3_1*).
    Square,
    /// Two single throws of the same sense (3_1 # 3_1).
    Granny,
    /// A double throw and a single throw of the opposite sense (5_1 # 3_1*).
    Surgeons,
    /// A double throw and a single throw of the same sense (5_1 # 3_1): the granny-like
    /// surgeon's knot.
    SurgeonsSameSense,
    /// Throws made by one strand around the other held straight ([`KnotShape::post`]): half
    /// hitches, a slip (sliding) knot, whatever the senses.
    HalfHitches,
    /// Three throws or more (or two doubles): see the throws themselves and
    /// [`alternating`].
    Stack,
    /// A knot that is no product of throws (see [`factor_throws`]).
    Unrecognised,
}

impl KnotName {
    /// A short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            KnotName::NotAKnot => "not a knot",
            KnotName::SingleThrow => "single throw",
            KnotName::DoubleThrow => "double throw",
            KnotName::Square => "square",
            KnotName::Granny => "granny",
            KnotName::Surgeons => "surgeon's",
            KnotName::SurgeonsSameSense => "surgeon's, same sense",
            KnotName::HalfHitches => "half hitches (slip knot)",
            KnotName::Stack => "stack of throws",
            KnotName::Unrecognised => "unrecognised",
        }
    }

    /// The name of a knot of `throws` (in any order), `post` when one strand runs straight
    /// through it ([`KnotShape::post`]).
    pub fn of(throws: &[Throw], post: bool) -> KnotName {
        if throws.is_empty() {
            return KnotName::NotAKnot;
        }
        if post {
            return KnotName::HalfHitches;
        }
        match throws {
            [t] if t.wraps == 1 => KnotName::SingleThrow,
            [_] => KnotName::DoubleThrow,
            [a, b] if a.wraps == 1 && b.wraps == 1 => {
                if a.sense == b.sense {
                    KnotName::Granny
                } else {
                    KnotName::Square
                }
            }
            [a, b] if a.wraps != b.wraps => {
                if a.sense == b.sense {
                    KnotName::SurgeonsSameSense
                } else {
                    KnotName::Surgeons
                }
            }
            _ => KnotName::Stack,
        }
    }
}

/// Whether the throws (a multiset) can be tied so that each throw's sense is opposite to the
/// one before (every pair of consecutive throws square): the counts of the two senses differ
/// by at most one.
pub fn alternating(throws: &[Throw]) -> bool {
    let right = throws.iter().filter(|t| t.sense == Sense::Right).count();
    right.abs_diff(throws.len() - right) <= 1
}

/// Which strand of the suture: the tail (the rod's first node's side) or the long end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strand {
    /// The short tail: the part of the suture before the stitch.
    Tail,
    /// The long (needle) end: the part after the stitch.
    Long,
}

/// A strand whose part inside the knot has chord / arc length at least this is straight: the
/// chord of a circular arc turning through θ is `sin(θ/2) / (θ/2)` of its length, 0.90 at
/// θ = 90°; a strand wrapped around another turns through 180° or more (chord/arc ≤ 2/π ≈
/// 0.64) (docs/knots.md §4).
pub const STRAIGHT: f64 = 0.9;
/// The other strand must be bent below this (θ ≳ 125°) for the straight one to be a post.
pub const WRAPPED: f64 = 0.8;
/// A knot lies flat when its strands run within 30° of the skin's plane in the mean square:
/// [`KnotShape::slope`] at most sin 30° (docs/knots.md §4).
pub const FLAT_SLOPE: f64 = 0.5;
/// Projections looked at for a knot's shape.
const SHAPE_PROJECTIONS: usize = 12;

/// The shape of the knot's strands: which strand (if any) runs straight through it, and how the
/// knot lies relative to the skin (docs/knots.md §4).
#[derive(Clone, Debug, PartialEq)]
pub struct KnotShape {
    /// The tail strand's part inside the knot (node parameters: segment index + fraction),
    /// between its first and last crossing with the long strand.
    pub tail: (f64, f64),
    /// The long strand's part inside the knot (node parameters).
    pub long: (f64, f64),
    /// Chord / arc length of the tail's part (1: straight).
    pub tail_straightness: f64,
    /// Chord / arc length of the long end's part.
    pub long_straightness: f64,
    /// The strand held straight through the knot while the other wraps it: `Some` makes the
    /// throws half hitches (a slip knot). At least [`STRAIGHT`] while the other is below
    /// [`WRAPPED`].
    pub post: Option<Strand>,
    /// How steeply the strands run inside the knot: the root mean square, over both parts
    /// weighted by length, of the sine of a segment's angle to the skin's plane (its tangent's
    /// component along the skin's normal). 0 when every wrap lies in a plane parallel to the
    /// skin, 1/√3 ≈ 0.58 for directions at random, 1 along a vertical post.
    pub slope: f64,
    /// The share of the knot's second moment (both parts, weighted by length, about their
    /// centroid) along the skin's normal: 1/3 for a round knot, near 0 for one lying flat on
    /// the skin (it grows with the number of throws stacked).
    pub vertical_share: f64,
    /// Unit normal of the knot's best-fit plane (its axis of least second moment), on the
    /// skin's outward side.
    pub normal: Vec3,
    /// The angle between that normal and the skin's normal [rad] (ill-defined for a round
    /// knot).
    pub tilt: f64,
    /// Laid flat: no post, and a slope at most [`FLAT_SLOPE`].
    pub laid_flat: bool,
    /// The length of the suture inside the knot (both parts) [m]: shrinks as the knot is
    /// tightened.
    pub length: f64,
    /// Height of the knot's centroid above the lowest point of the stitch, along the skin's
    /// normal [m] (the bite's depth plus the knot's height above the skin).
    pub height: f64,
}

/// A point at node parameter `s` (segment index + fraction).
fn at(points: &[Vec3], s: f64) -> Vec3 {
    let n = points.len();
    let i = (s.floor().max(0.0) as usize).min(n - 2);
    let f = (s - i as f64).clamp(0.0, 1.0);
    points[i] * (1.0 - f) + points[i + 1] * f
}

/// The polyline of the rod between node parameters `a ≤ b`.
fn piece(points: &[Vec3], a: f64, b: f64) -> Vec<Vec3> {
    let mut out = vec![at(points, a)];
    let first = a.floor() as usize + 1;
    let last = b.ceil() as usize;
    for p in points.iter().take(last).skip(first) {
        out.push(*p);
    }
    out.push(at(points, b));
    out
}

fn arc_length(p: &[Vec3]) -> f64 {
    p.windows(2).map(|w| (w[1] - w[0]).norm()).sum()
}

/// The shape of the knot in a suture tied on a stitch (the rod's nodes from the tail to the
/// long end [m]; `up` the skin's outward normal); `None` when there is no knot to measure
/// (some projection shows no crossing).
///
/// The stitch is found as the rod's lowest point (along `up`) within the knot's extent
/// ([`knot_crossings`]): the suture dives under the skin between its two strands. In each of
/// 12 generic projections, the crossings between a point before it and one after it are the
/// crossings of the two strands with each other; the tail's part in the knot runs from the
/// first to the last such crossing on its side, the long end's likewise; the projection where
/// the two parts are shortest is kept (a strand seen across the knot from one side only adds
/// crossings in some projections). Each part's straightness is its chord over its arc length.
/// Meaningless for a knot tied with no stitch below it.
pub fn knot_shape(points: &[Vec3], up: &Vec3) -> Result<Option<KnotShape>, TopologyError> {
    let Some(kc) = knot_crossings(points, 8)? else {
        return Ok(None);
    };
    let up = up.normalize();
    let (a, b) = kc.extent;
    let (i0, i1) = (
        a.floor() as usize,
        (b.ceil() as usize).min(points.len() - 1),
    );
    let low = (i0..=i1)
        .min_by(|&i, &j| points[i].dot(&up).total_cmp(&points[j].dot(&up)))
        .expect("a non-empty extent");
    let split = low as f64;
    let closed = close_open_curve(points, 32)?;
    let rod = (points.len() - 1) as f64;
    // (tail part, long part, their total arc length)
    type Parts = ((f64, f64), (f64, f64), f64);
    let mut best: Option<Parts> = None;
    for d in directions().take(SHAPE_PROJECTIONS) {
        let Some(diag) = project(&closed, &d) else {
            continue;
        };
        let mut tail: Option<(f64, f64)> = None;
        let mut long: Option<(f64, f64)> = None;
        for c in &diag.crossings {
            let (p, q) = (c.over.min(c.under), c.over.max(c.under));
            if q >= rod || !(p < split && split < q) {
                continue;
            }
            tail = Some(tail.map_or((p, p), |(x, y)| (x.min(p), y.max(p))));
            long = Some(long.map_or((q, q), |(x, y)| (x.min(q), y.max(q))));
        }
        let (Some(t), Some(l)) = (tail, long) else {
            continue;
        };
        let cost = arc_length(&piece(points, t.0, t.1)) + arc_length(&piece(points, l.0, l.1));
        if best.is_none_or(|b| cost < b.2) {
            best = Some((t, l, cost));
        }
    }
    let Some((tail, long, _)) = best else {
        return Ok(None);
    };
    let straightness = |(s0, s1): (f64, f64)| {
        let p = piece(points, s0, s1);
        let l = arc_length(&p);
        if l <= 0.0 {
            1.0
        } else {
            (p[p.len() - 1] - p[0]).norm() / l
        }
    };
    let (ts, ls) = (straightness(tail), straightness(long));
    let post = if ts >= STRAIGHT && ls < WRAPPED {
        Some(Strand::Tail)
    } else if ls >= STRAIGHT && ts < WRAPPED {
        Some(Strand::Long)
    } else {
        None
    };
    // Second moments of both parts about their centroid, each segment weighted by its length
    // (a segment's own moment about its midpoint, d dᵀ / 12, included).
    let segs: Vec<(Vec3, Vec3)> = [tail, long]
        .iter()
        .flat_map(|&(s0, s1)| {
            let p = piece(points, s0, s1);
            p.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>()
        })
        .collect();
    let length: f64 = segs.iter().map(|(p, q)| (q - p).norm()).sum();
    let centroid = segs
        .iter()
        .map(|(p, q)| (p + q) * 0.5 * (q - p).norm())
        .sum::<Vec3>()
        / length.max(1e-300);
    let mut m = Mat3::zeros();
    for (p, q) in &segs {
        let l = (q - p).norm();
        let c = (p + q) * 0.5 - centroid;
        let d = q - p;
        m += (c * c.transpose() + d * d.transpose() / 12.0) * l;
    }
    let vertical_share = (up.transpose() * m * up)[0] / m.trace().max(1e-300);
    let slope = (segs
        .iter()
        .map(|(p, q)| {
            let d = q - p;
            let l = d.norm();
            if l > 0.0 { d.dot(&up).powi(2) / l } else { 0.0 }
        })
        .sum::<f64>()
        / length.max(1e-300))
    .sqrt();
    let eig = m.symmetric_eigen();
    let least = (0..3)
        .min_by(|&i, &j| eig.eigenvalues[i].total_cmp(&eig.eigenvalues[j]))
        .expect("three");
    let mut normal: Vec3 = eig.eigenvectors.column(least).into_owned();
    if normal.dot(&up) < 0.0 {
        normal = -normal;
    }
    let tilt = normal.dot(&up).clamp(-1.0, 1.0).acos();
    let laid_flat = post.is_none() && slope <= FLAT_SLOPE;
    Ok(Some(KnotShape {
        tail,
        long,
        tail_straightness: ts,
        long_straightness: ls,
        post,
        slope,
        vertical_share,
        normal,
        tilt,
        laid_flat,
        length,
        height: (centroid - points[low]).dot(&up),
    }))
}

/// Projections whose Jones polynomials must agree in [`analyse_knot`] and the tracker.
const AGREE: usize = 2;

/// A final knot, analysed once.
#[derive(Clone, Debug, PartialEq)]
pub struct KnotAnalysis {
    /// Its name ([`KnotName::of`] the throws and the post).
    pub name: KnotName,
    /// The throws, as a multiset (the order they were tied is not in the final geometry):
    /// doubles first, right before left. Empty for no knot and for an unrecognised one.
    pub throws: Vec<Throw>,
    /// Whether the throws can alternate in sense ([`alternating`]).
    pub alternating: bool,
    /// The Jones polynomial (in A, t = A⁻⁴).
    pub jones: Laurent,
    /// The knot determinant, |V(−1)|.
    pub determinant: u128,
    /// The fewest crossings left in a reduced diagram.
    pub crossings: usize,
    /// The shape (None for no knot).
    pub shape: Option<KnotShape>,
}

/// Analyse a suture's final knot: `points` the centreline from the tail to the long end [m],
/// `up` the skin's outward normal. The Jones polynomial (2 projections agreeing,
/// [`jones_closed`]) factored into throws ([`factor_throws`]), the shape ([`knot_shape`]),
/// and the name from both.
pub fn analyse_knot(points: &[Vec3], up: &Vec3) -> Result<KnotAnalysis, TopologyError> {
    let (jones, crossings) = jones_closed(&close_open_curve(points, 32)?, AGREE)?;
    let determinant = jones.determinant().unwrap_or(0);
    let factors = factor_throws(&jones);
    let shape = if jones == Laurent::one() {
        None
    } else {
        knot_shape(points, up)?
    };
    let post = shape.as_ref().is_some_and(|s| s.post.is_some());
    let (name, throws) = match factors {
        Some(t) => (KnotName::of(&t, post), t),
        None => (KnotName::Unrecognised, Vec::new()),
    };
    Ok(KnotAnalysis {
        name,
        alternating: alternating(&throws),
        throws,
        jones,
        determinant,
        crossings,
        shape,
    })
}

/// A change of the knot reported by [`KnotTracker::update`].
#[derive(Clone, Debug, PartialEq)]
pub enum KnotChange {
    /// A throw was added at `index` (0: the first).
    Added {
        /// Its place in the stack.
        index: usize,
        /// The throw.
        throw: Throw,
    },
    /// The throw at `index` was undone (a wrap slipped off, or the throw was pulled out).
    Undone {
        /// Its place in the stack.
        index: usize,
        /// The throw.
        throw: Throw,
    },
    /// The knot became one that is no product of throws; the throws are forgotten.
    Unrecognised {
        /// Its Jones polynomial.
        jones: Laurent,
    },
}

/// One throw as tracked: the throw and the knot's shape at its tightest while it was the
/// newest throw (once the surgeon has laid it down, before the next wraps begin).
#[derive(Clone, Debug, PartialEq)]
pub struct TrackedThrow {
    /// The throw.
    pub throw: Throw,
    /// The knot's shape when the knot was shortest ([`KnotShape::length`]) while this was the
    /// newest throw.
    pub shape: Option<KnotShape>,
}

/// Follows a knot as it is tied, from snapshots of the suture's centreline (~10 Hz): keeps the
/// last identified knot (its Jones polynomial and its throws in the order tied) and reports,
/// when the knot changes, what changed ([`KnotChange`]).
///
/// A new polynomial is accepted after it has been seen in `confirmations` consecutive updates
/// (1 by default; 2 or 3 filter out a snapshot taken while two strands momentarily pass
/// through each other). Then, with `old` the throws so far and `new` the factorisation of the
/// new polynomial: the longest prefix of `old` that `new` still contains is kept, the rest of
/// `old` is reported undone (last first), and the throws of `new` beyond it are reported added.
/// When one throw is added, this is exactly: the quotient new / old is one throw's polynomial.
#[derive(Clone, Debug)]
pub struct KnotTracker {
    confirmations: usize,
    jones: Laurent,
    throws: Vec<TrackedThrow>,
    unrecognised: bool,
    shape: Option<KnotShape>,
    pending: Option<(Laurent, usize)>,
}

impl Default for KnotTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl KnotTracker {
    /// A tracker starting from no knot, accepting a change at once.
    pub fn new() -> Self {
        Self::with_confirmations(1)
    }
    /// A tracker accepting a change once seen in `n` consecutive updates (at least 1).
    pub fn with_confirmations(n: usize) -> Self {
        KnotTracker {
            confirmations: n.max(1),
            jones: Laurent::one(),
            throws: Vec::new(),
            unrecognised: false,
            shape: None,
            pending: None,
        }
    }
    /// The throws so far, in the order tied.
    pub fn throws(&self) -> &[TrackedThrow] {
        &self.throws
    }
    /// The current knot's Jones polynomial.
    pub fn jones(&self) -> &Laurent {
        &self.jones
    }
    /// The current knot's shape (from the last update; None for no knot).
    pub fn shape(&self) -> Option<&KnotShape> {
        self.shape.as_ref()
    }
    /// The current knot's name.
    pub fn name(&self) -> KnotName {
        if self.unrecognised {
            return KnotName::Unrecognised;
        }
        let throws: Vec<Throw> = self.throws.iter().map(|t| t.throw).collect();
        KnotName::of(
            &throws,
            self.shape.as_ref().is_some_and(|s| s.post.is_some()),
        )
    }
    /// Whether every throw's sense is opposite to the one before.
    pub fn alternating(&self) -> bool {
        self.throws
            .windows(2)
            .all(|w| w[0].throw.sense != w[1].throw.sense)
    }

    /// Look at a new snapshot of the centreline (`points` from the tail to the long end [m];
    /// `up` the skin's outward normal). Returns what changed (usually nothing). An error (a
    /// snapshot whose projections disagree, …) leaves the tracker as it was.
    pub fn update(&mut self, points: &[Vec3], up: &Vec3) -> Result<Vec<KnotChange>, TopologyError> {
        let (v, _) = jones_closed(&close_open_curve(points, 32)?, AGREE)?;
        let shape = if v == Laurent::one() {
            None
        } else {
            knot_shape(points, up)?
        };
        self.shape = shape.clone();
        if v == self.jones {
            self.pending = None;
            self.note_shape(shape);
            return Ok(Vec::new());
        }
        let seen = match &self.pending {
            Some((p, n)) if *p == v => n + 1,
            _ => 1,
        };
        if seen < self.confirmations {
            self.pending = Some((v, seen));
            return Ok(Vec::new());
        }
        self.pending = None;
        self.jones = v.clone();
        let mut changes = Vec::new();
        let Some(new) = factor_throws(&v) else {
            self.throws.clear();
            self.unrecognised = true;
            changes.push(KnotChange::Unrecognised { jones: v });
            return Ok(changes);
        };
        self.unrecognised = false;
        // Keep the longest prefix of the old throws that the new multiset still holds.
        let mut rest = new.clone();
        let mut keep = 0;
        for t in &self.throws {
            match rest.iter().position(|r| *r == t.throw) {
                Some(i) => {
                    rest.remove(i);
                    keep += 1;
                }
                None => break,
            }
        }
        let added = rest;
        while self.throws.len() > keep {
            let index = self.throws.len() - 1;
            let t = self.throws.pop().expect("non-empty");
            changes.push(KnotChange::Undone {
                index,
                throw: t.throw,
            });
        }
        for throw in added {
            changes.push(KnotChange::Added {
                index: self.throws.len(),
                throw,
            });
            self.throws.push(TrackedThrow { throw, shape: None });
        }
        self.note_shape(shape);
        Ok(changes)
    }

    /// Keep `shape` on the newest throw if the knot is the shortest yet while it is newest.
    fn note_shape(&mut self, shape: Option<KnotShape>) {
        let (Some(last), Some(s)) = (self.throws.last_mut(), shape) else {
            return;
        };
        if last.shape.as_ref().is_none_or(|old| s.length < old.length) {
            last.shape = Some(s);
        }
    }
}
