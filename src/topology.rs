//! Knot topology from geometry alone: is a rod knotted, and how (docs/derivations/der-imc.md §F5 C).
//!
//! An open rod is closed far outside its knot (both tails extended along their end tangents to
//! ten times the knot's bounding radius, then joined by a great-circle arc on that sphere). The
//! closed curve is projected along a few generic directions; crossings between non-adjacent
//! projected segments are collected with over/under from depth; the under-crossings cut the
//! curve into arcs; the Fox colouring matrix (per crossing: +2 at the over-arc, −1 at each of
//! the two under-arcs) gives the knot determinant as |det| of any (c−1)×(c−1) minor, computed
//! exactly with integer Bareiss elimination. Unknot 1, trefoil 3, figure-eight 5, T(2,5) 5,
//! T(2,7) 7, T(2,9) 9, square and granny knots 9 (Rolfsen's table). Every projection must
//! agree; a projection that is nearly degenerate (a crossing too close to a vertex, parallel
//! overlapping segments) is replaced by another direction.
//!
//! The Jones polynomial (Kauffman bracket, [`Diagram::jones`]) is computed on the diagram with
//! its Reidemeister I loops and II bigons taken out ([`Diagram::reduced`]), crossing by
//! crossing ([`bracket_planar`]), so a suture's diagram of dozens of crossings costs little;
//! it tells square from granny, and [`throws`] factors it into the throws of a surgical knot
//! (docs/knots.md).

use crate::math::{Vec3, any_perpendicular};

pub mod throws;
pub use throws::{
    KnotAnalysis, KnotChange, KnotName, KnotShape, KnotTracker, Sense, Strand, Throw, TrackedThrow,
    analyse_knot, factor_throws, knot_shape,
};

/// Why a determinant could not be computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TopologyError {
    /// Fewer than 3 distinct points.
    #[error("a curve needs at least 3 points, got {0}")]
    TooShort(usize),
    /// A point is not finite.
    #[error("point {0} is not finite")]
    NonFinite(usize),
    /// No generic projection direction was found.
    #[error("no generic projection found after {0} directions")]
    Degenerate(usize),
    /// Projections disagree (the curve passes through itself, or is too coarse).
    #[error("the projections disagree on the determinant: {0:?}")]
    Disagree(Vec<u128>),
    /// The exact elimination overflowed 128-bit integers (thousands of crossings).
    #[error("the determinant of {0} crossings overflowed 128-bit integers")]
    Overflow(usize),
    /// Projections disagree on the Jones polynomial (the curve passes through itself, or is too
    /// coarse).
    #[error("the projections disagree on the Jones polynomial")]
    JonesDisagree,
    /// The Jones polynomial's planar state sum grew too wide (a diagram of this many crossings
    /// after reduction, far beyond any tied suture).
    #[error("the Jones polynomial of {0} crossings is too costly")]
    TooComplex(usize),
}

/// The crossings of one projection.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagram {
    /// Per crossing: curve parameter (segment index + fraction) of the over and under strand,
    /// and the crossing's sign (+1 right-handed, −1 left-handed, oriented along the curve).
    pub crossings: Vec<Crossing>,
    /// Number of curve segments (the parameter runs over `0..segments`, cyclically).
    pub segments: usize,
}

/// One crossing of a diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// Curve parameter of the strand on top.
    pub over: f64,
    /// Curve parameter of the strand below.
    pub under: f64,
    /// +1 or −1 (right- or left-handed with the curve's orientation).
    pub sign: i32,
}

/// Close an open rod far outside its knot: extend both ends along their end tangents to
/// `10 ×` the bounding radius about the centroid, then join them by a great-circle arc on that
/// sphere (`arc_points` intermediate points). The result is a closed polygon (last point joins
/// the first).
pub fn close_open_curve(points: &[Vec3], arc_points: usize) -> Result<Vec<Vec3>, TopologyError> {
    check(points)?;
    let n = points.len();
    let c = points.iter().sum::<Vec3>() / n as f64;
    let r = points
        .iter()
        .map(|p| (p - c).norm())
        .fold(0.0, f64::max)
        .max(1e-12);
    let big = 10.0 * r;
    // Point on the ray p + t d (t ≥ 0) at distance `big` from c.
    let reach = |p: &Vec3, d: &Vec3| {
        let d = d.normalize();
        let q = p - c;
        let b = q.dot(&d);
        let t = -b + (b * b - q.norm_squared() + big * big).sqrt();
        p + d * t
    };
    let mut out = points.to_vec();
    let end = reach(&points[n - 1], &(points[n - 1] - points[n - 2]));
    let start = reach(&points[0], &(points[0] - points[1]));
    out.push(end);
    // Great-circle arc from `end` to `start` on the sphere of radius `big` about c.
    let a = (end - c).normalize();
    let b = (start - c).normalize();
    let cos = a.dot(&b).clamp(-1.0, 1.0);
    let angle = cos.acos();
    let axis = {
        let x = a.cross(&b);
        if x.norm() > 1e-9 {
            x.normalize()
        } else {
            any_perpendicular(&a)
        }
    };
    let m = arc_points.max(4);
    for k in 1..m {
        let th = angle * k as f64 / m as f64;
        let dir = a * th.cos() + axis.cross(&a) * th.sin();
        out.push(c + dir * big);
    }
    out.push(start);
    Ok(out)
}

fn check(points: &[Vec3]) -> Result<(), TopologyError> {
    if points.len() < 3 {
        return Err(TopologyError::TooShort(points.len()));
    }
    if let Some(i) = points.iter().position(|p| !p.iter().all(|v| v.is_finite())) {
        return Err(TopologyError::NonFinite(i));
    }
    Ok(())
}

/// The diagram of the closed polygon `closed` projected along `dir`, or None if the projection
/// is not generic (a crossing within `eps` of a segment end in parameter, or near-parallel
/// overlapping segments).
pub fn project(closed: &[Vec3], dir: &Vec3) -> Option<Diagram> {
    let n = closed.len();
    let d = dir.normalize();
    let e1 = any_perpendicular(&d);
    let e2 = d.cross(&e1);
    let p2: Vec<[f64; 2]> = closed.iter().map(|p| [p.dot(&e1), p.dot(&e2)]).collect();
    let depth: Vec<f64> = closed.iter().map(|p| p.dot(&d)).collect();
    let scale = p2
        .iter()
        .flat_map(|p| p.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-300);
    let eps = 1e-7;
    let seg = |i: usize| (p2[i], p2[(i + 1) % n]);
    // Candidate pairs by sort and sweep on the segments' x intervals (every pair whose boxes
    // overlap is among them), examined in (i, j) order as a double loop would.
    let boxes: Vec<[f64; 4]> = (0..n)
        .map(|i| {
            let (a0, a1) = seg(i);
            [
                a0[0].min(a1[0]),
                a0[0].max(a1[0]),
                a0[1].min(a1[1]),
                a0[1].max(a1[1]),
            ]
        })
        .collect();
    let mut by_x: Vec<usize> = (0..n).collect();
    by_x.sort_by(|&a, &b| boxes[a][0].total_cmp(&boxes[b][0]));
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (k, &i) in by_x.iter().enumerate() {
        for &j in &by_x[k + 1..] {
            if boxes[j][0] > boxes[i][1] {
                break;
            }
            let (i, j) = (i.min(j), i.max(j));
            if j < i + 2 || (i == 0 && j == n - 1) {
                continue; // the same or adjacent segments (through the closure too)
            }
            if boxes[j][3] < boxes[i][2] || boxes[j][2] > boxes[i][3] {
                continue;
            }
            pairs.push((i, j));
        }
    }
    pairs.sort_unstable();
    let mut crossings = Vec::new();
    for (i, j) in pairs {
        let (a0, a1) = seg(i);
        let (b0, b1) = seg(j);
        let r = [a1[0] - a0[0], a1[1] - a0[1]];
        let s = [b1[0] - b0[0], b1[1] - b0[1]];
        let den = r[0] * s[1] - r[1] * s[0];
        let q = [b0[0] - a0[0], b0[1] - a0[1]];
        let lr = (r[0] * r[0] + r[1] * r[1]).sqrt();
        let ls = (s[0] * s[0] + s[1] * s[1]).sqrt();
        if den.abs() <= 1e-12 * lr * ls + 1e-300 * scale {
            // Parallel: degenerate only if they overlap on one line.
            let off = (q[0] * r[1] - q[1] * r[0]).abs() / lr.max(1e-300);
            if off < 1e-9 * scale {
                return None;
            }
            continue;
        }
        let t = (q[0] * s[1] - q[1] * s[0]) / den;
        let u = (q[0] * r[1] - q[1] * r[0]) / den;
        if !(-eps..=1.0 + eps).contains(&t) || !(-eps..=1.0 + eps).contains(&u) {
            continue;
        }
        if t < eps || t > 1.0 - eps || u < eps || u > 1.0 - eps {
            return None; // through (or too near) a vertex: not generic
        }
        let za = depth[i] + t * (depth[(i + 1) % n] - depth[i]);
        let zb = depth[j] + u * (depth[(j + 1) % n] - depth[j]);
        let (pa, pb) = (i as f64 + t, j as f64 + u);
        // Sign: (over direction × under direction) · view direction, viewed from +d.
        let cross2 = r[0] * s[1] - r[1] * s[0];
        let (over, under, sign) = if za > zb {
            (pa, pb, cross2.signum())
        } else {
            (pb, pa, -cross2.signum())
        };
        crossings.push(Crossing {
            over,
            under,
            sign: sign as i32,
        });
    }
    Some(Diagram {
        crossings,
        segments: n,
    })
}

impl Diagram {
    /// The knot determinant |det| of a (c−1)×(c−1) minor of the Fox colouring matrix.
    pub fn determinant(&self) -> Result<u128, TopologyError> {
        let c = self.crossings.len();
        if c <= 1 {
            return Ok(1);
        }
        // Arcs run between consecutive under-crossings along the curve.
        let mut unders: Vec<(f64, usize)> = self
            .crossings
            .iter()
            .enumerate()
            .map(|(k, x)| (x.under, k))
            .collect();
        unders.sort_by(|a, b| a.0.total_cmp(&b.0));
        // arc m: from unders[m] to unders[m+1] (cyclic). arc_after[k] = arc starting at
        // crossing k's under point; the arc ending there is the previous one.
        let mut arc_after = vec![0usize; c];
        for (m, &(_, k)) in unders.iter().enumerate() {
            arc_after[k] = m;
        }
        let arc_of = |param: f64| -> usize {
            // The last under point before `param` starts the arc containing it (cyclic).
            match unders.partition_point(|&(u, _)| u < param) {
                0 => c - 1,
                i => i - 1,
            }
        };
        let mut m = vec![vec![0i128; c]; c];
        for (k, x) in self.crossings.iter().enumerate() {
            let after = arc_after[k];
            let before = (after + c - 1) % c;
            m[k][arc_of(x.over)] += 2;
            m[k][after] -= 1;
            m[k][before] -= 1;
        }
        let minor: Vec<Vec<i128>> = m[..c - 1].iter().map(|r| r[..c - 1].to_vec()).collect();
        bareiss(minor)
            .map(|d| d.unsigned_abs())
            .ok_or(TopologyError::Overflow(c))
    }

    /// Writhe: the sum of the crossing signs.
    pub fn writhe(&self) -> i32 {
        self.crossings.iter().map(|x| x.sign).sum()
    }
}

/// A Laurent polynomial in A with integer coefficients: `coeffs[i]` multiplies `A^(low + i)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Laurent {
    /// Exponent of the first coefficient.
    pub low: i32,
    /// Coefficients, lowest exponent first (no trailing or leading zeros; empty = 0).
    pub coeffs: Vec<i64>,
}

impl Laurent {
    /// The zero polynomial.
    pub fn zero() -> Self {
        Laurent {
            low: 0,
            coeffs: vec![],
        }
    }
    /// The constant 1 (the unknot's Jones polynomial).
    pub fn one() -> Self {
        Laurent::monomial(1, 0)
    }
    /// `c · A^e`.
    pub fn monomial(c: i64, e: i32) -> Self {
        Laurent {
            low: e,
            coeffs: vec![c],
        }
        .trim()
    }
    /// Whether this is the zero polynomial.
    pub fn is_zero(&self) -> bool {
        self.coeffs.is_empty()
    }
    fn trim(mut self) -> Self {
        while self.coeffs.last() == Some(&0) {
            self.coeffs.pop();
        }
        let lead = self.coeffs.iter().take_while(|c| **c == 0).count();
        self.coeffs.drain(..lead);
        self.low += lead as i32;
        if self.coeffs.is_empty() {
            self.low = 0;
        }
        self
    }
    /// The sum.
    pub fn add(&self, o: &Laurent) -> Laurent {
        if self.coeffs.is_empty() {
            return o.clone();
        }
        if o.coeffs.is_empty() {
            return self.clone();
        }
        let low = self.low.min(o.low);
        let high = (self.low + self.coeffs.len() as i32).max(o.low + o.coeffs.len() as i32);
        let mut c = vec![0i64; (high - low) as usize];
        for (i, v) in self.coeffs.iter().enumerate() {
            c[(self.low - low) as usize + i] += v;
        }
        for (i, v) in o.coeffs.iter().enumerate() {
            c[(o.low - low) as usize + i] += v;
        }
        Laurent { low, coeffs: c }.trim()
    }
    /// The product.
    pub fn mul(&self, o: &Laurent) -> Laurent {
        if self.coeffs.is_empty() || o.coeffs.is_empty() {
            return Laurent::zero();
        }
        let mut c = vec![0i64; self.coeffs.len() + o.coeffs.len() - 1];
        for (i, a) in self.coeffs.iter().enumerate() {
            for (j, b) in o.coeffs.iter().enumerate() {
                c[i + j] += a * b;
            }
        }
        Laurent {
            low: self.low + o.low,
            coeffs: c,
        }
        .trim()
    }
    /// Exact division in Z[A, A⁻¹]: `Some(q)` with `self = q · d`, or `None` when `d` does not
    /// divide `self` (or `d` is 0). Long division from the highest power down: every step must
    /// divide the leading coefficient exactly, and nothing may remain.
    pub fn div_exact(&self, d: &Laurent) -> Option<Laurent> {
        if d.is_zero() {
            return None;
        }
        if self.is_zero() {
            return Some(Laurent::zero());
        }
        let (n, m) = (self.coeffs.len(), d.coeffs.len());
        if n < m {
            return None;
        }
        let lead = *d.coeffs.last().expect("non-zero");
        let mut r = self.coeffs.clone();
        let mut q = vec![0i64; n - m + 1];
        for i in (0..=n - m).rev() {
            let c = r[i + m - 1];
            if c % lead != 0 {
                return None;
            }
            let f = c / lead;
            q[i] = f;
            if f != 0 {
                for (j, dj) in d.coeffs.iter().enumerate() {
                    r[i + j] -= f * dj;
                }
            }
        }
        if r.iter().any(|c| *c != 0) {
            return None;
        }
        Some(
            Laurent {
                low: self.low - d.low,
                coeffs: q,
            }
            .trim(),
        )
    }
    /// The mirror image's polynomial: A → 1/A.
    pub fn mirror(&self) -> Laurent {
        let mut c = self.coeffs.clone();
        c.reverse();
        Laurent {
            low: -(self.low + self.coeffs.len() as i32 - 1),
            coeffs: c,
        }
        .trim()
    }
    /// The terms in t = A⁻⁴ (`(k, c)`: c·tᵏ, ascending k), or None if some power of A is not a
    /// multiple of 4 (not a knot's Jones polynomial).
    pub fn to_t(&self) -> Option<Vec<(i32, i64)>> {
        let mut out: Vec<(i32, i64)> = Vec::new();
        for (i, c) in self.coeffs.iter().enumerate() {
            if *c == 0 {
                continue;
            }
            let e = self.low + i as i32;
            if e % 4 != 0 {
                return None;
            }
            out.push((-e / 4, *c));
        }
        out.reverse();
        Some(out)
    }
    /// The polynomial written in t (e.g. `t + t^3 - t^4`), or in A when it is not one in t.
    pub fn to_t_string(&self) -> String {
        let Some(terms) = self.to_t() else {
            return format!("{self:?}");
        };
        if terms.is_empty() {
            return "0".into();
        }
        let mut s = String::new();
        for (n, (k, c)) in terms.iter().enumerate() {
            let (sign, a) = if *c < 0 { ("-", -c) } else { ("+", *c) };
            if n == 0 {
                if sign == "-" {
                    s.push('-');
                }
            } else {
                s.push_str(&format!(" {sign} "));
            }
            let mono = match k {
                0 => String::new(),
                1 => "t".into(),
                k => format!("t^{k}"),
            };
            match (a, mono.is_empty()) {
                (_, true) => s.push_str(&a.to_string()),
                (1, false) => s.push_str(&mono),
                (_, false) => s.push_str(&format!("{a}{mono}")),
            }
        }
        s
    }
    /// |V(t = −1)|: the knot determinant, read off a knot's Jones polynomial.
    pub fn determinant(&self) -> Option<u128> {
        let terms = self.to_t()?;
        let v: i128 = terms
            .iter()
            .map(|(k, c)| {
                if k % 2 == 0 {
                    *c as i128
                } else {
                    -(*c as i128)
                }
            })
            .sum();
        Some(v.unsigned_abs())
    }
}

/// Largest crossing count for the Jones polynomial's plain state sum
/// ([`Diagram::jones_state_sum`], 2^c states).
pub const MAX_JONES_CROSSINGS: usize = 22;

/// Widest boundary (open edges) the planar state sum of [`Diagram::jones`] may reach; a
/// diagram needing more is refused (Catalan(width/2) boundary pairings at most).
pub const MAX_JONES_WIDTH: usize = 28;

impl Diagram {
    /// The passes in curve order: (parameter, crossing, over?).
    fn passes(&self) -> Vec<(f64, usize, bool)> {
        let mut passes: Vec<(f64, usize, bool)> = Vec::with_capacity(2 * self.crossings.len());
        for (k, x) in self.crossings.iter().enumerate() {
            passes.push((x.under, k, false));
            passes.push((x.over, k, true));
        }
        passes.sort_by(|a, b| a.0.total_cmp(&b.0));
        passes
    }

    /// The planar diagram (PD) code: edges are the curve cut at every pass (2c passes, edge e
    /// runs from pass e to pass e + 1 in curve order); per crossing `[i, j, k, l]`, its four
    /// edges counterclockwise from the incoming under edge `i`.
    pub fn pd_code(&self) -> Vec<[usize; 4]> {
        let c = self.crossings.len();
        let passes = self.passes();
        let m = 2 * c;
        // For each crossing: (incoming, outgoing) edge of its under and over strand.
        let mut under = vec![(0usize, 0usize); c];
        let mut over = vec![(0usize, 0usize); c];
        for (p, &(_, k, is_over)) in passes.iter().enumerate() {
            let inc = (p + m - 1) % m;
            if is_over {
                over[k] = (inc, p);
            } else {
                under[k] = (inc, p);
            }
        }
        (0..c)
            .map(|k| {
                let (i, kk) = under[k];
                let (oi, oo) = over[k];
                if self.crossings[k].sign > 0 {
                    [i, oo, kk, oi]
                } else {
                    [i, oi, kk, oo]
                }
            })
            .collect()
    }

    /// The same knot's diagram with every Reidemeister I loop and II bigon taken out, repeatedly,
    /// read off the Gauss code (the passes in curve order):
    /// - I: a crossing whose two passes are consecutive along the curve. The loop between them
    ///   crosses nothing, so on the sphere it bounds a disk free of the diagram and untwists.
    /// - II: crossings j and k whose over passes are consecutive and whose under passes are
    ///   consecutive, of opposite signs. The over arc between them crosses nothing else, so it
    ///   may be lifted and laid beside the under arc, on the side it comes from (the opposite
    ///   signs say it leaves on that side too), which drops both crossings. With equal signs
    ///   the two arcs close a curve with the continuations on opposite sides (no bigon), and
    ///   the pair is kept.
    ///
    /// Both moves keep the knot type and the Jones polynomial (the writhe is recomputed).
    pub fn reduced(&self) -> Diagram {
        let mut xs = self.crossings.clone();
        'reduce: loop {
            let d = Diagram {
                crossings: xs.clone(),
                segments: self.segments,
            };
            let passes = d.passes();
            let m = passes.len();
            if m == 0 {
                break;
            }
            let mut pos = vec![[0usize; 2]; xs.len()];
            for (p, &(_, k, o)) in passes.iter().enumerate() {
                pos[k][usize::from(o)] = p;
            }
            let adjacent = |a: usize, b: usize| (a + 1) % m == b || (b + 1) % m == a;
            if let Some(k) = (0..xs.len()).find(|&k| adjacent(pos[k][0], pos[k][1])) {
                xs.remove(k);
                continue 'reduce;
            }
            for p in 0..m {
                let (_, j, oj) = passes[p];
                let (_, k, ok) = passes[(p + 1) % m];
                if j != k
                    && oj == ok
                    && adjacent(pos[j][usize::from(!oj)], pos[k][usize::from(!ok)])
                    && xs[j].sign == -xs[k].sign
                {
                    let (a, b) = (j.max(k), j.min(k));
                    xs.remove(a);
                    xs.remove(b);
                    continue 'reduce;
                }
            }
            break;
        }
        Diagram {
            crossings: xs,
            segments: self.segments,
        }
    }

    /// The Jones polynomial as a Laurent polynomial in A (t = A^-4), from the Kauffman bracket
    /// (Kauffman 1987, "State models and the Jones polynomial", Topology 26):
    /// `V = (−A³)^(−w) ⟨D⟩`, `⟨D⟩ = Σ_s A^(a(s) − b(s)) d^(loops(s) − 1)`, `d = −A² − A⁻²`,
    /// on the [`reduced`](Self::reduced) diagram, summed crossing by crossing
    /// ([`bracket_planar`]). None if the sum grows wider than [`MAX_JONES_WIDTH`].
    pub fn jones(&self) -> Option<Laurent> {
        let r = self.reduced();
        let bracket = bracket_planar(&r.pd_code())?;
        Some(normalise_bracket(bracket, r.writhe()))
    }

    /// The same Jones polynomial by the plain state sum over all 2^c states of this diagram as
    /// it is (no reduction): the reference [`jones`](Self::jones) is tested against. None above
    /// [`MAX_JONES_CROSSINGS`] crossings.
    pub fn jones_state_sum(&self) -> Option<Laurent> {
        let c = self.crossings.len();
        if c > MAX_JONES_CROSSINGS {
            return None;
        }
        if c == 0 {
            return Some(Laurent::one());
        }
        let m = 2 * c;
        let pd = self.pd_code();
        let d = bracket_loop();
        // Powers of d, by loop count.
        let mut dpow = vec![Laurent::one()];
        for _ in 0..=c {
            let next = dpow.last().expect("non-empty").mul(&d);
            dpow.push(next);
        }
        // Coefficients of A^e · d^(loops−1), summed over states.
        let mut acc: std::collections::HashMap<(i32, usize), i64> = Default::default();
        let mut parent = vec![0usize; m];
        for state in 0u64..(1u64 << c) {
            for (i, p) in parent.iter_mut().enumerate() {
                *p = i;
            }
            fn find(p: &mut [usize], mut x: usize) -> usize {
                while p[x] != x {
                    p[x] = p[p[x]];
                    x = p[x];
                }
                x
            }
            let union = |a: usize, b: usize, p: &mut Vec<usize>| {
                let (ra, rb) = (find(p, a), find(p, b));
                if ra != rb {
                    p[ra] = rb;
                }
            };
            let mut a_count = 0i32;
            for (k, x) in pd.iter().enumerate() {
                if state >> k & 1 == 0 {
                    // A-smoothing joins (i, j) and (k, l).
                    a_count += 1;
                    union(x[0], x[1], &mut parent);
                    union(x[2], x[3], &mut parent);
                } else {
                    union(x[0], x[3], &mut parent);
                    union(x[1], x[2], &mut parent);
                }
            }
            let loops = (0..m).filter(|&i| find(&mut parent, i) == i).count();
            let e = a_count - (c as i32 - a_count);
            *acc.entry((e, loops - 1)).or_insert(0) += 1;
        }
        let mut bracket = Laurent::zero();
        for ((e, l), n) in acc {
            bracket = bracket.add(&Laurent::monomial(n, e).mul(&dpow[l]));
        }
        Some(normalise_bracket(bracket, self.writhe()))
    }
}

/// The loop value of the Kauffman bracket, `d = −A² − A⁻²`.
fn bracket_loop() -> Laurent {
    Laurent::monomial(-1, 2).add(&Laurent::monomial(-1, -2))
}

/// `(−A³)^(−w) ⟨D⟩`.
fn normalise_bracket(bracket: Laurent, w: i32) -> Laurent {
    let sign = if w % 2 == 0 { 1 } else { -1 };
    bracket.mul(&Laurent::monomial(sign, -3 * w))
}

/// The Kauffman bracket ⟨D⟩ of a PD code, summed crossing by crossing (the planar-algebra
/// contraction of Bar-Natan's "fast Khovanov homology computations", J. Knot Theory
/// Ramifications 16 (2007), §2, done here for the bracket): after some crossings are smoothed,
/// the partial states that connect their open edges the same way are merged, each carrying the
/// polynomial summed over the states that lead to it (closed loops already counted as factors
/// of d). The next crossing is the one with most edges already open, which keeps the boundary
/// narrow for the chains of throws of a surgical knot. None if the boundary grows past
/// [`MAX_JONES_WIDTH`] edges.
pub fn bracket_planar(pd: &[[usize; 4]]) -> Option<Laurent> {
    use std::collections::HashMap;
    let c = pd.len();
    if c == 0 {
        return Some(Laurent::one());
    }
    let m = pd.iter().flatten().max().map_or(0, |e| e + 1);
    let d = bracket_loop();
    let dpow = [Laurent::one(), d.clone(), d.mul(&d), d.mul(&d).mul(&d)];
    let mut seen = vec![0u8; m];
    let mut done = vec![false; c];
    // Partial states: the open edges' pairing (sorted pairs) → polynomial.
    let mut states: HashMap<Vec<(u32, u32)>, Laurent> = HashMap::new();
    states.insert(Vec::new(), Laurent::one());
    // Scratch adjacency over edge labels (two links per label at most).
    let mut adj = vec![[u32::MAX; 2]; m];
    let mut deg = vec![0u8; m];
    let mut mark = vec![false; m];
    for _ in 0..c {
        // The next crossing: most edges already open, then fewest new ones.
        let k = (0..c)
            .filter(|&k| !done[k])
            .max_by_key(|&k| {
                let open = pd[k].iter().filter(|&&e| seen[e] == 1).count();
                let new = pd[k].iter().filter(|&&e| seen[e] == 0).count();
                (open, usize::MAX - new, usize::MAX - k)
            })
            .expect("a crossing is left");
        done[k] = true;
        let x = pd[k].map(|e| e as u32);
        let mut next: HashMap<Vec<(u32, u32)>, Laurent> = HashMap::new();
        for (pairs, poly) in &states {
            for (smooth, a_exp) in [
                ([(x[0], x[1]), (x[2], x[3])], 1),
                ([(x[0], x[3]), (x[1], x[2])], -1),
            ] {
                let mut touched: Vec<u32> = Vec::with_capacity(2 * pairs.len() + 4);
                let mut loops = 0usize;
                let mut link = |a: u32, b: u32, touched: &mut Vec<u32>| {
                    for (p, q) in [(a, b), (b, a)] {
                        let pu = p as usize;
                        if deg[pu] == 0 {
                            touched.push(p);
                        }
                        adj[pu][deg[pu] as usize] = q;
                        deg[pu] += 1;
                    }
                };
                for &(a, b) in pairs {
                    link(a, b, &mut touched);
                }
                for &(a, b) in &smooth {
                    if a == b {
                        loops += 1; // a kink's edge closed on itself by this smoothing
                    } else {
                        link(a, b, &mut touched);
                    }
                }
                // Components: a path between two open ends is a new pair, a cycle a loop.
                let mut out: Vec<(u32, u32)> = Vec::with_capacity(pairs.len() + 2);
                for &s in &touched {
                    if mark[s as usize] {
                        continue;
                    }
                    let mut ends = [u32::MAX; 2];
                    let mut n_ends = 0;
                    let mut stack = vec![s];
                    mark[s as usize] = true;
                    while let Some(v) = stack.pop() {
                        let vu = v as usize;
                        if deg[vu] == 1 {
                            ends[n_ends.min(1)] = v;
                            n_ends += 1;
                        }
                        for &w in &adj[vu][..deg[vu] as usize] {
                            if !mark[w as usize] {
                                mark[w as usize] = true;
                                stack.push(w);
                            }
                        }
                    }
                    match n_ends {
                        0 => loops += 1,
                        2 => out.push((ends[0].min(ends[1]), ends[0].max(ends[1]))),
                        _ => unreachable!("a component has 0 or 2 open ends"),
                    }
                }
                for &s in &touched {
                    let su = s as usize;
                    deg[su] = 0;
                    mark[su] = false;
                }
                out.sort_unstable();
                if 2 * out.len() > MAX_JONES_WIDTH {
                    return None;
                }
                let term = poly.mul(&Laurent::monomial(1, a_exp)).mul(&dpow[loops]);
                let slot = next.entry(out).or_insert_with(Laurent::zero);
                *slot = slot.add(&term);
            }
        }
        for &e in &pd[k] {
            seen[e] += 1;
        }
        next.retain(|_, p| !p.is_zero());
        states = next;
    }
    // Every loop was counted as a factor d; the bracket counts loops − 1.
    let total = states.remove(&Vec::new()).unwrap_or_else(Laurent::zero);
    total.div_exact(&d)
}

/// Exact determinant of an integer matrix by fraction-free (Bareiss) elimination; None on
/// 128-bit overflow.
pub fn bareiss(mut a: Vec<Vec<i128>>) -> Option<i128> {
    let n = a.len();
    if n == 0 {
        return Some(1);
    }
    let mut sign = 1i128;
    let mut prev = 1i128;
    for k in 0..n - 1 {
        if a[k][k] == 0 {
            let Some(p) = (k + 1..n).find(|&i| a[i][k] != 0) else {
                return Some(0);
            };
            a.swap(k, p);
            sign = -sign;
        }
        for i in k + 1..n {
            for j in k + 1..n {
                let v = a[i][j]
                    .checked_mul(a[k][k])?
                    .checked_sub(a[i][k].checked_mul(a[k][j])?)?;
                a[i][j] = v / prev; // exact by Sylvester's identity
            }
        }
        prev = a[k][k];
    }
    a[n - 1][n - 1].checked_mul(sign)
}

/// Generic projection directions tried in turn (irrational-ish components, far from axes).
pub(crate) fn directions() -> impl Iterator<Item = Vec3> {
    // A golden-angle spiral over the sphere: well spread, deterministic.
    let g = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..64).map(move |k| {
        let z = 1.0 - 2.0 * (k as f64 + 0.5) / 64.0;
        let r = (1.0 - z * z).sqrt();
        let th = g * k as f64 + 0.3;
        Vec3::new(r * th.cos(), r * th.sin(), z)
    })
}

/// The knot determinant of a closed polygon (the last point joins the first), agreed by
/// `projections` generic projections.
pub fn determinant_closed(closed: &[Vec3], projections: usize) -> Result<u128, TopologyError> {
    check(closed)?;
    let mut dets = Vec::new();
    let mut tried = 0;
    for d in directions() {
        tried += 1;
        if let Some(diag) = project(closed, &d) {
            dets.push(diag.determinant()?);
            if dets.len() == projections.max(1) {
                break;
            }
        }
    }
    if dets.len() < projections.max(1) {
        return Err(TopologyError::Degenerate(tried));
    }
    if dets.iter().any(|d| *d != dets[0]) {
        return Err(TopologyError::Disagree(dets));
    }
    Ok(dets[0])
}

/// The material extent of the knot in an open rod, in node parameter (segment index +
/// fraction): in each of `projections` generic projections of the rod (closed far outside its
/// knot), the span from the first to the last rod point taking part in a crossing between two
/// rod strands; the narrowest such span over the projections is returned (a tail swinging
/// across the knot adds crossings in some projections, never in all). `None` if some
/// projection shows no crossing between rod strands (no knot to measure). A tightness
/// measure: the span shrinks as the knot is pulled tight.
pub fn knot_extent(
    points: &[Vec3],
    projections: usize,
) -> Result<Option<(f64, f64)>, TopologyError> {
    Ok(knot_crossings(points, projections)?.map(|k| k.extent))
}

/// The rod-to-rod crossings of the projection giving [`knot_extent`].
#[derive(Clone, Debug, PartialEq)]
pub struct KnotCrossings {
    /// The knot's extent (node parameters), as [`knot_extent`].
    pub extent: (f64, f64),
    /// The node parameters of both passes of every crossing between two rod strands in that
    /// projection, ascending.
    pub params: Vec<f64>,
    /// The projection direction.
    pub direction: Vec3,
}

/// [`knot_extent`] with the crossings of its narrowest projection.
pub fn knot_crossings(
    points: &[Vec3],
    projections: usize,
) -> Result<Option<KnotCrossings>, TopologyError> {
    let closed = close_open_curve(points, 32)?;
    // Segments 0..n−1 of the closed polygon are the rod's; the rest is the closure.
    let rod = (points.len() - 1) as f64;
    let (mut best, mut found, mut tried) = (None::<KnotCrossings>, 0, 0);
    for d in directions() {
        tried += 1;
        let Some(diag) = project(&closed, &d) else {
            continue;
        };
        found += 1;
        let mut span: Option<(f64, f64)> = None;
        let mut params = Vec::new();
        for c in diag
            .crossings
            .iter()
            .filter(|c| c.over < rod && c.under < rod)
        {
            let (lo, hi) = (c.over.min(c.under), c.over.max(c.under));
            params.extend([lo, hi]);
            span = Some(span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
        let Some(span) = span else {
            return Ok(None);
        };
        if best
            .as_ref()
            .is_none_or(|b| span.1 - span.0 < b.extent.1 - b.extent.0)
        {
            params.sort_by(f64::total_cmp);
            best = Some(KnotCrossings {
                extent: span,
                params,
                direction: d,
            });
        }
        if found == projections.max(1) {
            return Ok(best);
        }
    }
    Err(TopologyError::Degenerate(tried))
}

/// The Jones polynomial of a closed polygon and the fewest crossings left in a reduced
/// diagram: the [`Diagram::jones`] of the `projections` generic projections with the fewest
/// crossings among up to 24, which must agree (a curve passing through itself, or too coarse
/// for its bends, makes them disagree).
pub fn jones_closed(
    closed: &[Vec3],
    projections: usize,
) -> Result<(Laurent, usize), TopologyError> {
    check(closed)?;
    let mut diags: Vec<Diagram> = directions()
        .take(24)
        .filter_map(|d| project(closed, &d))
        .collect();
    let want = projections.max(1);
    if diags.len() < want {
        return Err(TopologyError::Degenerate(24));
    }
    diags.sort_by_key(|d| d.crossings.len());
    let mut first: Option<(Laurent, usize)> = None;
    for d in diags.iter().take(want) {
        let r = d.reduced();
        let v = bracket_planar(&r.pd_code())
            .map(|b| normalise_bracket(b, r.writhe()))
            .ok_or(TopologyError::TooComplex(r.crossings.len()))?;
        match &first {
            None => first = Some((v, r.crossings.len())),
            Some((v0, n0)) => {
                if *v0 != v {
                    return Err(TopologyError::JonesDisagree);
                }
                first = Some((v, r.crossings.len().min(*n0)));
            }
        }
    }
    Ok(first.expect("at least one projection"))
}

/// [`jones_closed`] for an open rod's centerline, closed far outside its knot.
pub fn jones_open(points: &[Vec3], projections: usize) -> Result<(Laurent, usize), TopologyError> {
    jones_closed(&close_open_curve(points, 32)?, projections)
}

/// A Jones polynomial given in t (`(k, c)`: c·t^k) as a Laurent polynomial in A (t = A^-4).
pub fn from_t(terms: &[(i32, i64)]) -> Laurent {
    terms.iter().fold(
        Laurent {
            low: 0,
            coeffs: vec![],
        },
        |acc, &(k, c)| acc.add(&Laurent::monomial(c, -4 * k)),
    )
}

/// A knot as identified from geometry.
#[derive(Clone, Debug, PartialEq)]
pub struct KnotId {
    /// The knot determinant (agreed by 3 projections).
    pub determinant: u128,
    /// The Jones polynomial (in A, t = A^-4) of the projection with the fewest crossings
    /// ([`Diagram::jones`]: reduced, then the planar state sum), unless that grows wider than
    /// [`MAX_JONES_WIDTH`].
    pub jones: Option<Laurent>,
    /// Crossings of that projection.
    pub crossings: usize,
    /// The name, when the Jones polynomial matches one of: unknot, trefoil, figure-eight,
    /// cinquefoil (5_1 = T(2,5)), square (3_1 # 3_1*), granny (3_1 # 3_1), surgeon's
    /// (5_1 # 3_1*), surgeon's, same sense (5_1 # 3_1), either chirality. The throws of a
    /// surgical knot one by one: [`throws`].
    pub name: Option<&'static str>,
}

/// Every name [`identify_closed`] gives a knot.
pub const KNOT_NAMES: &[&str] = &[
    "unknot",
    "trefoil",
    "figure-eight",
    "cinquefoil",
    "square",
    "granny",
    "surgeon's",
    "surgeon's, same sense",
];

/// Identify the knot of a closed polygon: determinant (3 projections agreeing) and, from the
/// projection with the fewest crossings among up to 24 generic ones, the Jones polynomial,
/// which tells square from granny (the square knot's is symmetric under A → 1/A; the granny's
/// is the square of a trefoil's).
pub fn identify_closed(closed: &[Vec3]) -> Result<KnotId, TopologyError> {
    let determinant = determinant_closed(closed, 3)?;
    let best = directions()
        .take(24)
        .filter_map(|d| project(closed, &d))
        .min_by_key(|d| d.crossings.len())
        .ok_or(TopologyError::Degenerate(24))?;
    let jones = best.jones();
    let trefoil = from_t(&[(1, 1), (3, 1), (4, -1)]);
    let fig8 = from_t(&[(-2, 1), (-1, -1), (0, 1), (1, -1), (2, 1)]);
    let cinq = from_t(&[(-7, -1), (-6, 1), (-5, -1), (-4, 1), (-2, 1)]);
    let table = [
        ("unknot", Laurent::monomial(1, 0)),
        ("trefoil", trefoil.clone()),
        ("figure-eight", fig8),
        ("cinquefoil", cinq.clone()),
        ("square", trefoil.mul(&trefoil.mirror())),
        ("granny", trefoil.mul(&trefoil)),
        // A double throw closes to the cinquefoil 5_1 = T(2,5) (its two wraps and the ends'
        // crossing are five half-twists of the two strands in one twist region; not the
        // three-twist knot 5_2: docs/knots.md §2, tests/throws.rs builds one as the instrument
        // tie makes it), with a single throw of the opposite sense (`cinq` is the left-handed
        // cinquefoil, `trefoil` the right-handed trefoil) or of the same sense.
        ("surgeon's", cinq.mul(&trefoil)),
        ("surgeon's, same sense", cinq.mul(&trefoil.mirror())),
    ];
    let name = jones.as_ref().and_then(|v| {
        table
            .iter()
            .find(|(_, t)| t == v || t.mirror() == *v)
            .map(|(n, _)| *n)
    });
    Ok(KnotId {
        determinant,
        jones,
        crossings: best.crossings.len(),
        name,
    })
}

/// [`identify_closed`] for an open rod's centerline, closed far outside its knot.
pub fn identify_open(points: &[Vec3]) -> Result<KnotId, TopologyError> {
    identify_closed(&close_open_curve(points, 32)?)
}

/// The knot determinant of an open rod's centerline (closed far outside its knot first),
/// agreed by 3 projections.
pub fn determinant_open(points: &[Vec3]) -> Result<u128, TopologyError> {
    determinant_closed(&close_open_curve(points, 32)?, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bareiss_matches_known_determinants() {
        assert_eq!(bareiss(vec![vec![2, -1], vec![-1, 2]]), Some(3));
        assert_eq!(
            bareiss(vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 9]]),
            Some(-3)
        );
        assert_eq!(bareiss(vec![vec![1, 2], vec![2, 4]]), Some(0));
    }

    fn torus_points(q: f64, n: usize) -> Vec<Vec3> {
        (0..n)
            .map(|k| {
                let t = 2.0 * std::f64::consts::PI * k as f64 / n as f64;
                let r = 2.0 + (q * t).cos();
                Vec3::new(r * (2.0 * t).cos(), r * (2.0 * t).sin(), (q * t).sin())
            })
            .collect()
    }

    #[test]
    fn exact_division_undoes_multiplication_and_refuses_remainders() {
        let a = from_t(&[(1, 1), (3, 1), (4, -1)]);
        let b = from_t(&[(-2, 1), (-1, -1), (0, 1), (1, -1), (2, 1)]);
        let ab = a.mul(&b);
        assert_eq!(ab.div_exact(&b), Some(a.clone()));
        assert_eq!(ab.div_exact(&a), Some(b.clone()));
        assert_eq!(a.div_exact(&b), None);
        assert_eq!(ab.add(&Laurent::one()).div_exact(&a), None);
        assert_eq!(a.div_exact(&Laurent::zero()), None);
        assert_eq!(Laurent::zero().div_exact(&a), Some(Laurent::zero()));
        assert_eq!(a.to_t_string(), "t + t^3 - t^4");
        assert_eq!(a.determinant(), Some(3));
        assert_eq!(b.determinant(), Some(5));
    }

    /// The planar state sum on the reduced diagram equals the plain 2^c state sum on the
    /// diagram as projected, for torus knots and a figure-eight seen from many directions.
    #[test]
    fn planar_state_sum_on_reduced_diagrams_matches_the_plain_state_sum() {
        let fig8: Vec<Vec3> = (0..300)
            .map(|k| {
                let t = 2.0 * std::f64::consts::PI * k as f64 / 300.0;
                let r = 2.0 + (2.0 * t).cos();
                Vec3::new(r * (3.0 * t).cos(), r * (3.0 * t).sin(), (4.0 * t).sin())
            })
            .collect();
        let mut checked = 0;
        for curve in [torus_points(3.0, 200), torus_points(5.0, 300), fig8] {
            for d in directions().take(12) {
                let Some(diag) = project(&curve, &d) else {
                    continue;
                };
                let Some(plain) = diag.jones_state_sum() else {
                    continue;
                };
                assert_eq!(diag.jones(), Some(plain.clone()), "{d:?}");
                assert!(bracket_planar(&diag.pd_code()).is_some());
                assert!(diag.reduced().crossings.len() <= diag.crossings.len());
                checked += 1;
            }
        }
        assert!(checked >= 20, "{checked}");
    }

    /// Reidemeister I and II moves made by hand are taken out: a kinked, doubled-back circle
    /// reduces to no crossing.
    #[test]
    fn reduction_removes_kinks_and_bigons() {
        // A circle with a small kink loop and a flap folded over the circle's rim.
        let mut pts = Vec::new();
        for k in 0..400 {
            let t = 2.0 * std::f64::consts::PI * k as f64 / 400.0;
            let mut p = Vec3::new(t.cos(), t.sin(), 0.0);
            // A kink: a loop of radius 0.2 around t = 1 (the curve advances 0.6 meanwhile).
            let u = (t - 1.0) / 0.3;
            if u.abs() < 1.0 {
                let a = std::f64::consts::PI * (u + 1.0);
                p += Vec3::new(0.2 * a.sin(), 0.2 * (1.0 - a.cos()), 0.05 * a.sin());
            }
            // A flap: around t = π the curve is pushed across the disk and out past the rim
            // at (1, 0), above it, and back: a bigon of two crossings.
            let v = (t - std::f64::consts::PI) / 0.3;
            if v.abs() < 1.0 {
                let w = 1.0 - v * v;
                p += Vec3::new(2.4 * w, 0.0, 0.3 * w);
            }
            pts.push(p);
        }
        let diag = project(&pts, &Vec3::new(0.02, 0.03, 1.0)).unwrap();
        assert!(diag.crossings.len() >= 3, "{:?}", diag.crossings);
        assert_eq!(diag.reduced().crossings.len(), 0, "{:?}", diag.crossings);
        assert_eq!(diag.jones(), Some(Laurent::one()));
    }

    /// The projection as a plain double loop over segment pairs (before the sweep).
    fn project_double_loop(closed: &[Vec3], dir: &Vec3) -> Option<Diagram> {
        let n = closed.len();
        let d = dir.normalize();
        let e1 = any_perpendicular(&d);
        let e2 = d.cross(&e1);
        let p2: Vec<[f64; 2]> = closed.iter().map(|p| [p.dot(&e1), p.dot(&e2)]).collect();
        let depth: Vec<f64> = closed.iter().map(|p| p.dot(&d)).collect();
        let scale = p2
            .iter()
            .flat_map(|p| p.iter())
            .fold(0.0f64, |m, v| m.max(v.abs()))
            .max(1e-300);
        let eps = 1e-7;
        let seg = |i: usize| (p2[i], p2[(i + 1) % n]);
        let mut crossings = Vec::new();
        for i in 0..n {
            let (a0, a1) = seg(i);
            let (ax0, ax1) = (a0[0].min(a1[0]), a0[0].max(a1[0]));
            let (ay0, ay1) = (a0[1].min(a1[1]), a0[1].max(a1[1]));
            for j in i + 2..n {
                if i == 0 && j == n - 1 {
                    continue; // adjacent through the closure
                }
                let (b0, b1) = seg(j);
                if b0[0].max(b1[0]) < ax0
                    || b0[0].min(b1[0]) > ax1
                    || b0[1].max(b1[1]) < ay0
                    || b0[1].min(b1[1]) > ay1
                {
                    continue;
                }
                let r = [a1[0] - a0[0], a1[1] - a0[1]];
                let s = [b1[0] - b0[0], b1[1] - b0[1]];
                let den = r[0] * s[1] - r[1] * s[0];
                let q = [b0[0] - a0[0], b0[1] - a0[1]];
                let lr = (r[0] * r[0] + r[1] * r[1]).sqrt();
                let ls = (s[0] * s[0] + s[1] * s[1]).sqrt();
                if den.abs() <= 1e-12 * lr * ls + 1e-300 * scale {
                    // Parallel: degenerate only if they overlap on one line.
                    let off = (q[0] * r[1] - q[1] * r[0]).abs() / lr.max(1e-300);
                    if off < 1e-9 * scale {
                        return None;
                    }
                    continue;
                }
                let t = (q[0] * s[1] - q[1] * s[0]) / den;
                let u = (q[0] * r[1] - q[1] * r[0]) / den;
                if !(-eps..=1.0 + eps).contains(&t) || !(-eps..=1.0 + eps).contains(&u) {
                    continue;
                }
                if t < eps || t > 1.0 - eps || u < eps || u > 1.0 - eps {
                    return None; // through (or too near) a vertex: not generic
                }
                let za = depth[i] + t * (depth[(i + 1) % n] - depth[i]);
                let zb = depth[j] + u * (depth[(j + 1) % n] - depth[j]);
                let (pa, pb) = (i as f64 + t, j as f64 + u);
                // Sign: (over direction × under direction) · view direction, viewed from +d.
                let cross2 = r[0] * s[1] - r[1] * s[0];
                let (over, under, sign) = if za > zb {
                    (pa, pb, cross2.signum())
                } else {
                    (pb, pa, -cross2.signum())
                };
                crossings.push(Crossing {
                    over,
                    under,
                    sign: sign as i32,
                });
            }
        }
        Some(Diagram {
            crossings,
            segments: n,
        })
    }

    /// The sweep finds the same crossings, in the same order, as the double loop.
    #[test]
    fn sweep_projection_matches_the_double_loop() {
        let mut n = 0;
        for curve in [torus_points(3.0, 200), torus_points(7.0, 500)] {
            let open = close_open_curve(&curve[3..curve.len() - 3], 32).unwrap();
            for c in [&curve, &open] {
                for d in directions().take(20) {
                    assert_eq!(project(c, &d), project_double_loop(c, &d), "{d:?}");
                    n += 1;
                }
            }
        }
        assert_eq!(n, 80);
    }
}
