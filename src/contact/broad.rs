//! Broad phase for rod self-contact: a uniform grid over segment bounding boxes (docs/derivations/der-imc.md §E2.13:
//! the reference code's O(N²) loop costs ~0.5 ms at N = 150). Cells are `cell` wide; each
//! segment is entered in every cell its box (grown by half the cutoff) overlaps; pairs sharing
//! a cell are checked with the exact distance. Pairs closer along the rod than the exclusion
//! rule allows are skipped (neighbours always touch).

use super::segment;
use crate::math::Vec3;

/// Candidate pairs `(i, j)`, `i < j`, of segments of the polyline `x` (segment k joins `x[k]`
/// and `x[k+1]`) with `j − i > skip` and exact distance < `cutoff` [m], sorted.
/// Expected cost O(N) for a rod whose segments are about `cutoff` long or longer.
pub fn candidates(x: &[Vec3], skip: usize, cutoff: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    Grid::default().candidates_into(x, skip, cutoff, &mut out);
    out
}

/// The broad phase's working memory, kept across calls so that a caller stepping every
/// millisecond (self-contact in the physics loop) allocates only while its rod's pair and
/// cell counts grow past any earlier step's.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    /// (cell, segment) for every cell a segment's grown box overlaps (the general path).
    entries: Vec<((i64, i64, i64), usize)>,
    /// The same packed into one word each, `cell x, y, z, segment` 16 bits apiece (cells
    /// counted from the lowest), where they fit: sorting words is several times cheaper than
    /// sorting tuples, and the order is the same.
    keys: Vec<u64>,
    /// Candidate pairs packed `i << 32 | j`, for the sort and the dedup.
    pair_keys: Vec<u64>,
}

impl Grid {
    /// [`candidates`] into `out` (cleared first): the cells are found by sorting the
    /// (cell, segment) entries rather than hashing them, and the pairs are the same set.
    pub fn candidates_into(
        &mut self,
        x: &[Vec3],
        skip: usize,
        cutoff: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        out.clear();
        self.entries.clear();
        let n = x.len().saturating_sub(1);
        if n == 0 {
            return;
        }
        let longest = (0..n).map(|k| (x[k + 1] - x[k]).norm()).fold(0.0, f64::max);
        let cell = (longest + cutoff).max(1e-12);
        if !self.packed(x, cutoff, cell, skip, out) {
            for k in 0..n {
                for_each_cell(x, k, cutoff, cell, |c| self.entries.push((c, k)));
            }
            self.entries.sort_unstable();
            let e = &self.entries;
            let mut start = 0;
            while start < e.len() {
                let mut end = start + 1;
                while end < e.len() && e[end].0 == e[start].0 {
                    end += 1;
                }
                // Segments in one cell, in increasing order.
                for a in start..end {
                    for b in a + 1..end {
                        let (i, j) = (e[a].1, e[b].1);
                        if j - i > skip {
                            out.push((i, j));
                        }
                    }
                }
                start = end;
            }
            out.sort_unstable();
            out.dedup();
        }
        out.retain(|&(i, j)| {
            segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance < cutoff
        });
    }
}

impl Grid {
    /// The cell pass of [`Grid::candidates_into`] on packed words, when every cell index
    /// (counted from the lowest) and every segment fits 16 bits: the same pairs in the same
    /// order into `out` (before the exact-distance filter). False, with `out` untouched,
    /// where they do not fit (a rod spread over more than 65 536 cells, or with more
    /// segments).
    fn packed(
        &mut self,
        x: &[Vec3],
        cutoff: f64,
        cell: f64,
        skip: usize,
        out: &mut Vec<(usize, usize)>,
    ) -> bool {
        let n = x.len() - 1;
        let key = |v: f64| (v / cell).floor() as i64;
        let lo = x.iter().fold(Vec3::repeat(f64::INFINITY), |m, p| m.inf(p));
        let hi = x
            .iter()
            .fold(Vec3::repeat(f64::NEG_INFINITY), |m, p| m.sup(p));
        let base = lo.add_scalar(-0.5 * cutoff).map(key);
        let top = hi.add_scalar(0.5 * cutoff).map(key);
        const FIELD: i64 = 1 << 16;
        if n >= FIELD as usize || (0..3).any(|a| top[a] - base[a] >= FIELD) {
            return false;
        }
        self.keys.clear();
        for k in 0..n {
            for_each_cell(x, k, cutoff, cell, |(i, j, l)| {
                let c = [i - base.x, j - base.y, l - base.z].map(|v| v as u64);
                self.keys
                    .push(c[0] << 48 | c[1] << 32 | c[2] << 16 | k as u64);
            });
        }
        self.keys.sort_unstable();
        self.pair_keys.clear();
        let e = &self.keys;
        let mut start = 0;
        while start < e.len() {
            let mut end = start + 1;
            while end < e.len() && e[end] >> 16 == e[start] >> 16 {
                end += 1;
            }
            for a in start..end {
                for b in a + 1..end {
                    let (i, j) = (e[a] & 0xffff, e[b] & 0xffff);
                    if (j - i) as usize > skip {
                        self.pair_keys.push(i << 32 | j);
                    }
                }
            }
            start = end;
        }
        self.pair_keys.sort_unstable();
        self.pair_keys.dedup();
        out.extend(
            self.pair_keys
                .iter()
                .map(|&p| ((p >> 32) as usize, (p & 0xffff_ffff) as usize)),
        );
        true
    }
}

/// Every cell (`cell` wide) that segment `k`'s box, grown by half of `cutoff`, overlaps.
#[inline]
fn for_each_cell(x: &[Vec3], k: usize, cutoff: f64, cell: f64, mut f: impl FnMut((i64, i64, i64))) {
    let key = |v: f64| (v / cell).floor() as i64;
    let lo = x[k].inf(&x[k + 1]).add_scalar(-0.5 * cutoff);
    let hi = x[k].sup(&x[k + 1]).add_scalar(0.5 * cutoff);
    for i in key(lo.x)..=key(hi.x) {
        for j in key(lo.y)..=key(hi.y) {
            for l in key(lo.z)..=key(hi.z) {
                f((i, j, l));
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
