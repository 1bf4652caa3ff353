//! Broad phase for rod self-contact: a uniform grid over segment bounding boxes (docs/derivations/der-imc.md §E2.13:
//! the reference code's O(N²) loop costs ~0.5 ms at N = 150). Cells are `cell` wide; each
//! segment is entered in every cell its box (grown by half the cutoff) overlaps; pairs sharing
//! a cell are checked with the exact distance. Pairs closer along the rod than the exclusion
//! rule allows are skipped (neighbours always touch).

use super::segment;
use crate::math::Vec3;
use std::collections::HashMap;

/// Candidate pairs `(i, j)`, `i < j`, of segments of the polyline `x` (segment k joins `x[k]`
/// and `x[k+1]`) with `j − i > skip` and exact distance < `cutoff` [m], sorted.
/// Expected cost O(N) for a rod whose segments are about `cutoff` long or longer.
pub fn candidates(x: &[Vec3], skip: usize, cutoff: f64) -> Vec<(usize, usize)> {
    let n = x.len().saturating_sub(1);
    if n == 0 {
        return Vec::new();
    }
    let longest = (0..n).map(|k| (x[k + 1] - x[k]).norm()).fold(0.0, f64::max);
    let cell = (longest + cutoff).max(1e-12);
    let key = |v: f64| (v / cell).floor() as i64;
    let mut grid: HashMap<(i64, i64, i64), Vec<usize>> = HashMap::with_capacity(2 * n);
    for k in 0..n {
        let lo = x[k].inf(&x[k + 1]).add_scalar(-0.5 * cutoff);
        let hi = x[k].sup(&x[k + 1]).add_scalar(0.5 * cutoff);
        for i in key(lo.x)..=key(hi.x) {
            for j in key(lo.y)..=key(hi.y) {
                for l in key(lo.z)..=key(hi.z) {
                    grid.entry((i, j, l)).or_default().push(k);
                }
            }
        }
    }
    let mut out = Vec::new();
    for list in grid.values() {
        for (a, &i) in list.iter().enumerate() {
            for &j in &list[a + 1..] {
                let (i, j) = (i.min(j), i.max(j));
                if j - i <= skip {
                    continue;
                }
                out.push((i, j));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&(i, j)| segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance < cutoff);
    out
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
