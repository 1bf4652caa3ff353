//! Broad phase for rod self-contact: a two-level box hierarchy over runs of consecutive
//! segments (docs/derivations/der-imc.md §E2.13: the reference code's O(N²) loop costs
//! ~0.5 ms at N = 150). Each segment's bounding box is grown by half the cutoff; runs of
//! [`RUN`] consecutive segments get the union of their boxes. Run pairs whose boxes overlap
//! are the only places where segment pairs are tested, first by their boxes, then by the exact
//! distance. A rod's consecutive segments lie close together, so a run's box is small and
//! the pairs come out in increasing `(i, j)` order without a sort. Pairs closer along the rod
//! than the exclusion rule allows are skipped (neighbours always touch).

use super::segment;
use crate::math::Vec3;

/// Segments per run of the hierarchy's upper level.
pub const RUN: usize = 8;

/// Candidate pairs `(i, j)`, `i < j`, of segments of the polyline `x` (segment k joins `x[k]`
/// and `x[k+1]`) with `j − i > skip` and exact distance < `cutoff` [m], sorted.
/// Expected cost O(N) box tests for a rod whose contacts are few per segment, plus
/// O((N/RUN)²) tests of the runs' boxes.
pub fn candidates(x: &[Vec3], skip: usize, cutoff: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    Broad::default().candidates_into(x, skip, cutoff, &mut out);
    out
}

/// The broad phase's working memory, kept across calls so that a caller stepping every
/// millisecond (self-contact in the physics loop) allocates only while its rod grows past
/// any earlier step's segments or its runs' overlaps past any earlier count.
#[derive(Clone, Debug, Default)]
pub struct Broad {
    /// Every segment's box, grown by half the cutoff: lowest and highest corners [m].
    lo: Vec<Vec3>,
    hi: Vec<Vec3>,
    /// Every run's box (the union of its segments' grown boxes).
    run_lo: Vec<Vec3>,
    run_hi: Vec<Vec3>,
    /// For run `a`, the runs `b ≥ a` whose boxes overlap its box, in increasing order:
    /// `near[near_start[a]..near_start[a + 1]]`.
    near: Vec<usize>,
    near_start: Vec<usize>,
}

/// Whether two axis-aligned boxes overlap (touching counts).
#[inline(always)]
fn overlap(lo_a: &Vec3, hi_a: &Vec3, lo_b: &Vec3, hi_b: &Vec3) -> bool {
    lo_a.x <= hi_b.x
        && lo_b.x <= hi_a.x
        && lo_a.y <= hi_b.y
        && lo_b.y <= hi_a.y
        && lo_a.z <= hi_b.z
        && lo_b.z <= hi_a.z
}

impl Broad {
    /// [`candidates`] into `out` (cleared first).
    pub fn candidates_into(
        &mut self,
        x: &[Vec3],
        skip: usize,
        cutoff: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        self.search(x, skip, cutoff, out, None);
    }

    /// [`Broad::candidates_into`], with each pair's exact distance [m] (`segment::distance`)
    /// into `distances` (cleared first), in the order of `out`.
    pub fn candidates_with_distances_into(
        &mut self,
        x: &[Vec3],
        skip: usize,
        cutoff: f64,
        out: &mut Vec<(usize, usize)>,
        distances: &mut Vec<f64>,
    ) {
        distances.clear();
        self.search(x, skip, cutoff, out, Some(distances));
    }

    /// The search of both.
    ///
    /// Two segments closer than `cutoff` have grown boxes that overlap (on every axis their
    /// closest points differ by less than the cutoff, and each box holds its segment's
    /// closest point), and so have their runs' boxes: the tests below pass every pair the
    /// exact distance keeps. The boxes are grown by a further 1e-9 of the cutoff, so a pair
    /// whose computed distance falls below the cutoff by less than the boxes' rounding is
    /// still tested by the exact distance, which alone decides.
    fn search(
        &mut self,
        x: &[Vec3],
        skip: usize,
        cutoff: f64,
        out: &mut Vec<(usize, usize)>,
        mut distances: Option<&mut Vec<f64>>,
    ) {
        out.clear();
        let n = x.len().saturating_sub(1);
        if n == 0 {
            return;
        }
        let grow = 0.5 * cutoff * (1.0 + 1e-9);
        self.lo.clear();
        self.hi.clear();
        for k in 0..n {
            self.lo.push(x[k].inf(&x[k + 1]).add_scalar(-grow));
            self.hi.push(x[k].sup(&x[k + 1]).add_scalar(grow));
        }
        let runs = n.div_ceil(RUN);
        self.run_lo.clear();
        self.run_hi.clear();
        for a in 0..runs {
            let seg = a * RUN..((a + 1) * RUN).min(n);
            let lo = self.lo[seg.clone()]
                .iter()
                .fold(self.lo[seg.start], |m, p| m.inf(p));
            let hi = self.hi[seg.clone()]
                .iter()
                .fold(self.hi[seg.start], |m, p| m.sup(p));
            self.run_lo.push(lo);
            self.run_hi.push(hi);
        }
        self.near.clear();
        self.near_start.clear();
        for a in 0..runs {
            self.near_start.push(self.near.len());
            for b in a..runs {
                // No segment of run b lies more than `skip` after one of run a.
                if (b + 1) * RUN - 1 <= a * RUN + skip {
                    continue;
                }
                if overlap(
                    &self.run_lo[a],
                    &self.run_hi[a],
                    &self.run_lo[b],
                    &self.run_hi[b],
                ) {
                    self.near.push(b);
                }
            }
        }
        self.near_start.push(self.near.len());
        for a in 0..runs {
            let near = &self.near[self.near_start[a]..self.near_start[a + 1]];
            for i in a * RUN..((a + 1) * RUN).min(n) {
                let (lo_i, hi_i) = (&self.lo[i], &self.hi[i]);
                for &b in near {
                    if !overlap(lo_i, hi_i, &self.run_lo[b], &self.run_hi[b]) {
                        continue;
                    }
                    for j in (b * RUN).max(i + skip + 1)..((b + 1) * RUN).min(n) {
                        if !overlap(lo_i, hi_i, &self.lo[j], &self.hi[j]) {
                            continue;
                        }
                        let d = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance;
                        if d < cutoff {
                            out.push((i, j));
                            if let Some(ds) = distances.as_deref_mut() {
                                ds.push(d);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The same by checking every pair (the reference for tests).
pub fn candidates_brute_force(x: &[Vec3], skip: usize, cutoff: f64) -> Vec<(usize, usize)> {
    let n = x.len().saturating_sub(1);
    let mut out = Vec::new();
    for i in 0..n {
        for j in i + skip + 1..n {
            if segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance < cutoff {
                out.push((i, j));
            }
        }
    }
    out
}
