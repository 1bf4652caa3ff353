//! External potentials on node positions (contact with obstacles, later rod–tool contact),
//! added to the implicit step by the Newton solver without the rod knowing what they are: the
//! `contact` module implements [`NodePotential`] (dependency inversion keeps the layer rule,
//! ARCHITECTURE.md: `contact` may use `rod`, not the reverse).
//!
//! A potential couples a node with itself or with its neighbour (Hessian blocks `(a, b)` with
//! `|a - b| ≤ 1`), which keeps the Newton system banded.

use crate::math::{Mat3, Quat, Vec3};
use crate::rod::banded::{Banded, Gaps};

/// A rank-one Hessian term `c u uᵀ` over the positions of four nodes (`u` has 3 entries per
/// node, in the order of `nodes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowRank {
    /// The nodes.
    pub nodes: [usize; 4],
    /// The vector over their positions.
    pub u: [f64; 12],
    /// The weight (nonzero; negative where a pair's exact Hessian is indefinite).
    pub c: f64,
}

/// The interval of solver indices `[k0, k1)` the rank-one terms touch (from the lowest node's
/// first position coordinate to the highest's last), `None` without terms: the interval the
/// Newton factor is twisted around for [`woodbury`].
pub(crate) fn interval(
    terms: &[LowRank],
    index: impl Fn(usize) -> usize,
) -> Option<(usize, usize)> {
    let lo = terms.iter().flat_map(|t| t.nodes).min()?;
    let hi = terms.iter().flat_map(|t| t.nodes).max()?;
    Some((index(lo), index(hi) + 3))
}

/// The Woodbury correction of a Newton step for the rank-one terms `U C Uᵀ` outside the band
/// (docs/derivations/banded.md; the exact self-contact Hessian, docs/derivations/der-imc.md
/// §F7): `(B + U C Uᵀ)⁻¹ = B⁻¹ − B⁻¹U S⁻¹ UᵀB⁻¹` with `S = C⁻¹ + UᵀB⁻¹U` (m×m, m the
/// terms). `S` needs `B⁻¹` on the interval `K` the terms touch only, so the banded factor is
/// twisted around it ([`interval`]): one banded solve over `K` per term (all in one pass,
/// side by side, [`Banded::solve_inner_many`]), then one full solve of the combined
/// `U S⁻¹ UᵀB⁻¹(−g)` per step.
///
/// The weights `c` may be negative (a pair's exact Hessian is indefinite). With `B` positive
/// definite, `B + UCUᵀ` is positive definite exactly when `S` has as many positive
/// eigenvalues as `C` has positive weights and no zero one (Haynsworth's inertia additivity
/// on `[[B, U], [Uᵀ, −C⁻¹]]`, whose Schur complements are `−S` and `B + UCUᵀ`). `S` is
/// factored as a block LDLᵀ with the positive terms first: their block `S_PP` (positive
/// definite, as `C_PP⁻¹` is) by Cholesky, and minus its Schur complement
/// `S_NN − S_NP S_PP⁻¹ S_PN` by Cholesky too, which succeeds exactly when that complement is
/// negative definite, i.e. when the corrected system is positive definite.
#[derive(Clone, Debug, Default)]
pub(crate) struct Woodbury {
    /// `(B⁻¹u_k)_K` of every term, interleaved (row `r` of term `k` at `r · m + k`; positive
    /// terms first), then a full-length vector.
    y: Vec<f64>,
    /// The terms' order: the positive weights' indices, then the negative ones'.
    order: Vec<usize>,
    /// How many of `order` are positive.
    positive: usize,
    /// Cholesky factor of `S_PP` (`p × p`, column-major), in its lower triangle (the upper
    /// one keeps `S_PP`'s entries and is never read).
    lp: Vec<f64>,
    /// `W = L_P⁻¹ S_PN` (`p × q`, column-major; `q = m − p`).
    w: Vec<f64>,
    /// Cholesky factor of `−(S_NN − WᵀW)` (`q × q`, column-major), in its lower triangle.
    ln: Vec<f64>,
    /// Whether the factors hold (false: no terms, or `S` could not be factored).
    ready: bool,
    /// Whether `S` (over `order`) is factored as one dense `L D Lᵀ` in `s` instead of by
    /// the blocks above: the banded part indefinite ([`Woodbury::prepare_indefinite`]).
    dense: bool,
    /// The capacitance `S` as [`Woodbury::capacitance`] assembles it (`s_dim × s_dim`,
    /// column-major, both triangles), and where `dense`, its `L D Lᵀ` in place: `L` unit lower
    /// triangular below the diagonal, `D` on it.
    s: Vec<f64>,
    /// The order of `s` when it was made (`order` may be cut to the positive terms since).
    s_dim: usize,
    /// Scratch: one row of `S` as it is summed.
    row: Vec<f64>,
    /// `W` by rows as it is solved ([`solve_lower_rows`]), which is `Wᵀ` column-major
    /// (`q × p`).
    rows: Vec<f64>,
    /// Scratch: `WᵀW` (`q × q`), the pivots' scales of [`Woodbury::prepare_indefinite`], and
    /// [`Woodbury::apply`]'s right-hand side and products. Every buffer of the correction
    /// keeps its capacity, so a warm physics loop allocates nothing here (tests/alloc_free.rs).
    prod: Vec<f64>,
    scale: Vec<f64>,
    r: Vec<f64>,
    t: Vec<f64>,
    /// Scratch: each column's first row in `K`, and the lowest row it is wanted from.
    firsts: Vec<usize>,
    needs: Vec<usize>,
    /// Scratch: the terms' first rows in K, sorted, and the spans between them the columns'
    /// solve crosses by its transfer maps.
    starts: Vec<usize>,
    gaps: Gaps,
    /// Whether the columns' solve may cross gaps ([`crate::rod::SolverConfig::cross_gaps`]).
    pub cross_gaps: bool,
}

/// The Cholesky factor `L` of the symmetric `n × n` matrix `a` (column-major, its lower
/// triangle read), in place in the lower triangle; false where a pivot is not positive (or
/// not finite). The operations of nalgebra's `Cholesky::new`, in its order (left-looking:
/// column `j` less `L_jk` times column `k` for `k < j`, then over the pivot's square root),
/// so the factor is the same to the bit, on a slice that runs in SIMD lanes (in the copy
/// compiled for AVX2 where the CPU has it, [`crate::math::avx2`]: the same bits, as the
/// lanes are rows, each with its operations in their order).
fn cholesky_lower(a: &mut [f64], n: usize) -> bool {
    cholesky_lower_on(crate::math::avx2(), a, n)
}

/// [`cholesky_lower`] in the copy compiled for AVX2 if `avx2` (the CPU must have it), else in
/// the baseline one.
fn cholesky_lower_on(avx2: bool, a: &mut [f64], n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        assert!(crate::math::avx2(), "cholesky_lower: this CPU has no AVX2");
        // SAFETY: the CPU has AVX2 (asserted above).
        #[allow(unsafe_code)] // calling the copy compiled for AVX2
        return unsafe { cholesky_lower_avx2(a, n) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = avx2;
    cholesky_lower_any(a, n)
}

/// [`cholesky_lower_any`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn cholesky_lower_avx2(a: &mut [f64], n: usize) -> bool {
    cholesky_lower_any(a, n)
}

/// The body of [`cholesky_lower`], inlined into each copy.
#[inline(always)]
fn cholesky_lower_any(a: &mut [f64], n: usize) -> bool {
    debug_assert_eq!(a.len(), n * n);
    for j in 0..n {
        let (left, right) = a.split_at_mut(j * n);
        let col_j = &mut right[j..n];
        for k in 0..j {
            let f = -left[j + k * n];
            for (y, x) in col_j.iter_mut().zip(&left[k * n + j..k * n + n]) {
                *y += f * x;
            }
        }
        let d = col_j[0];
        // nalgebra's `try_sqrt`: none for zero, negative or NaN.
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let r = d.sqrt();
        col_j[0] = r;
        for v in &mut col_j[1..] {
            *v /= r;
        }
    }
    true
}

/// `B ← L⁻¹ B` for the lower-triangular `n × n` factor `l` and the columns of `b` (both
/// column-major), by nalgebra's `solve_lower_triangular_mut` operations in its order (bit for
/// bit); false at a zero pivot. The reference [`solve_lower_rows`] is held to.
#[cfg(test)]
fn solve_lower_columns(l: &[f64], n: usize, b: &mut [f64]) -> bool {
    for col in b.chunks_exact_mut(n) {
        for i in 0..n {
            let d = l[i + i * n];
            if d == 0.0 {
                return false;
            }
            let coeff = col[i] / d;
            col[i] = coeff;
            let f = -coeff;
            for (y, x) in col[i + 1..].iter_mut().zip(&l[i * n + i + 1..(i + 1) * n]) {
                *y += f * x;
            }
        }
    }
    true
}

/// [`solve_lower_columns`] on `B` stored by rows (`t`: row `i` of `B`'s `q` columns at
/// `i q .. (i + 1) q`): each entry takes the same operations in the same order (over its
/// column's division by the pivot `L_ii`, then `y − L_ri x` for `i < r` ascending, which is
/// `y + (−x) L_ri` to the bit), so the result is nalgebra's to the bit; the lanes run along a
/// row, across the columns, so the divisions of one row pipeline instead of each stalling
/// its column's substitution (and in the copy compiled for AVX2 where the CPU has it). False
/// at a zero pivot.
fn solve_lower_rows(l: &[f64], n: usize, t: &mut [f64]) -> bool {
    solve_lower_rows_on(crate::math::avx2(), l, n, t)
}

/// [`solve_lower_rows`] in the copy compiled for AVX2 if `avx2` (the CPU must have it), else in
/// the baseline one.
fn solve_lower_rows_on(avx2: bool, l: &[f64], n: usize, t: &mut [f64]) -> bool {
    if (0..n).any(|i| l[i + i * n] == 0.0) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        assert!(
            crate::math::avx2(),
            "solve_lower_rows: this CPU has no AVX2"
        );
        // SAFETY: the CPU has AVX2 (asserted above).
        #[allow(unsafe_code)] // calling the copy compiled for AVX2
        unsafe {
            solve_lower_rows_avx2(l, n, t)
        };
        return true;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = avx2;
    solve_lower_rows_any(l, n, t);
    true
}

/// [`solve_lower_rows_any`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn solve_lower_rows_avx2(l: &[f64], n: usize, t: &mut [f64]) {
    solve_lower_rows_any(l, n, t);
}

/// The body of [`solve_lower_rows`] (its pivots checked), inlined into each copy.
#[inline(always)]
fn solve_lower_rows_any(l: &[f64], n: usize, t: &mut [f64]) {
    let q = t.len().checked_div(n).unwrap_or(0);
    debug_assert_eq!(t.len(), n * q);
    for i in 0..n {
        let d = l[i + i * n];
        let (done, rest) = t.split_at_mut((i + 1) * q);
        let row_i = &mut done[i * q..];
        for v in row_i.iter_mut() {
            *v /= d;
        }
        for (r, row_r) in rest.chunks_exact_mut(q).enumerate() {
            let f = l[i + 1 + r + i * n];
            for (y, x) in row_r.iter_mut().zip(row_i.iter()) {
                *y -= x * f;
            }
        }
    }
}

/// How [`Woodbury::prepare_indefinite`] corrected a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Definite {
    /// `B + U C Uᵀ` with every term is positive definite.
    Whole,
    /// Only with the positive terms (the negative ones left out, as IPC projects a pair).
    Positive,
    /// Neither.
    Not,
}

impl Woodbury {
    /// Factor `S` for `terms` against the banded factor `chol` (twisted around the terms'
    /// interval). `index(node)` is the solver's index of the node's first position coordinate.
    /// False when `B + UCUᵀ` is not positive definite (with a negative weight): the negative
    /// terms are then left out of the correction (each pair's Hessian projected onto its
    /// positive part, as IPC does), whose factor `S_PP` is already made. Also false when `S_PP`
    /// cannot be factored (rounding: the correction is then skipped and the banded step kept,
    /// a descent direction all the same).
    ///
    /// # Panics
    /// If a term lies outside the interval `chol` was twisted around.
    pub fn prepare(
        &mut self,
        chol: &Banded,
        terms: &[LowRank],
        index: impl Fn(usize) -> usize,
    ) -> bool {
        self.ready = false;
        self.dense = false;
        if terms.is_empty() {
            return true;
        }
        self.capacitance(chol, terms, &index);
        let (m, p) = (self.order.len(), self.positive);
        // S_PP = L_P L_Pᵀ (the leading p rows of S's first p columns).
        self.lp.clear();
        for j in 0..p {
            self.lp.extend_from_slice(&self.s[j * m..j * m + p]);
        }
        if p > 0 && !cholesky_lower(&mut self.lp, p) {
            return false;
        }
        if m == p {
            self.ready = true;
            return true;
        }
        // Not definite with the negative terms: correct with the positive ones alone.
        let positive_only = |wb: &mut Self| {
            wb.order.truncate(p);
            wb.ready = p > 0;
            false
        };
        // W = L_P⁻¹ S_PN, solved by rows: row i of S_PN is column i of S_NP below the
        // diagonal, S's own entries (capacitance writes both triangles).
        let q = m - p;
        self.rows.clear();
        for i in 0..p {
            self.rows.extend_from_slice(&self.s[p + i * m..m + i * m]);
        }
        if !solve_lower_rows(&self.lp, p, &mut self.rows) {
            return positive_only(self);
        }
        self.w.resize(p * q, 0.0);
        for (i, row) in self.rows.chunks_exact(q).enumerate() {
            for (c, v) in row.iter().enumerate() {
                self.w[i + c * p] = *v;
            }
        }
        // −(S_NN − WᵀW) = L_N L_Nᵀ. The product by nalgebra's own `gemm` (what its `*` runs,
        // on views of the same layout: the same bits), into a buffer that is kept.
        self.prod.resize(q * q, 0.0);
        {
            use nalgebra::{DMatrixView, DMatrixViewMut};
            let wt = DMatrixView::from_slice(&self.rows, q, p);
            let w = DMatrixView::from_slice(&self.w, p, q);
            DMatrixViewMut::from_slice(&mut self.prod, q, q).gemm(1.0, &wt, &w, 0.0);
        }
        self.ln.resize(q * q, 0.0);
        for j in 0..q {
            for i in 0..q {
                self.ln[i + j * q] = -(self.s[p + i + (p + j) * m] - self.prod[i + j * q]);
            }
        }
        if !cholesky_lower(&mut self.ln, q) {
            return positive_only(self);
        }
        self.ready = true;
        true
    }

    /// [`Woodbury::prepare`] against a banded factor `chol` of an indefinite `B` with
    /// `negatives` negative pivots ([`Banded::factor_indefinite_from`]). By Haynsworth's inertia
    /// additivity on `[[B, U], [Uᵀ, −C⁻¹]]` (Schur complements `−S` and `B + UCUᵀ`), the
    /// corrected system has `neg(B) + pos(S) − pos(C)` negative eigenvalues: it is positive
    /// definite exactly when `S` has `pos(C) − neg(B)` positive eigenvalues and no zero one
    /// (docs/derivations/der-imc.md §F10). `S` is factored as a dense `L D Lᵀ` without
    /// pivoting (positive terms first), whose pivots count its inertia (Sylvester), the leading
    /// `p` of them `S_PP`'s; a pivot below `1e-12` of its scale counts as failure. Tries every
    /// term, then the positive ones alone.
    pub fn prepare_indefinite(
        &mut self,
        chol: &Banded,
        terms: &[LowRank],
        index: impl Fn(usize) -> usize,
        negatives: usize,
    ) -> Definite {
        self.ready = false;
        self.dense = false;
        if terms.is_empty() {
            return if negatives == 0 {
                Definite::Whole
            } else {
                Definite::Not
            };
        }
        // The corrected system needs p − neg(B) positive pivots in all (and among S_PP's, for
        // the positive terms alone): with more negative pivots than positive terms it cannot
        // be definite, and a count that can no longer be met ends the factorisation.
        let p = terms.iter().filter(|t| t.c > 0.0).count();
        let Some(target) = p.checked_sub(negatives) else {
            return Definite::Not;
        };
        self.capacitance(chol, terms, &index);
        let m = self.order.len();
        debug_assert_eq!(p, self.positive);
        // Positive pivots among the first p (S_PP's) and among all m; None: a pivot too small.
        let mut pos_p = if p == 0 { Some(0) } else { None };
        let mut pos_m = None;
        let mut pos = 0usize;
        self.scale.clear();
        self.scale.extend((0..m).map(|j| self.s[j + j * m].abs()));
        let scale = &self.scale;
        let data = &mut self.s;
        // Column-major storage: entry (a, b) at a + b m.
        for j in 0..m {
            let d = data[j + j * m];
            let scale = scale[j] + (1.0 / terms[self.order[j]].c).abs();
            if !(d.abs() > 1e-12 * scale && d.is_finite()) {
                break;
            }
            if d > 0.0 {
                pos += 1;
            }
            if pos > target {
                break;
            }
            // Column j of L, and the trailing update S_ab −= L_aj D_j L_bj (lower part).
            let (left, right) = data.split_at_mut((j + 1) * m);
            let col_j = &mut left[j * m..];
            for v in &mut col_j[j + 1..] {
                *v /= d;
            }
            for (k, col_b) in right.chunks_exact_mut(m).enumerate() {
                let b = j + 1 + k;
                let lb = col_j[b] * d;
                for (x, l) in col_b[b..].iter_mut().zip(&col_j[b..]) {
                    *x -= l * lb;
                }
            }
            if j + 1 == p {
                pos_p = Some(pos);
            }
            if j + 1 == m {
                pos_m = Some(pos);
            }
        }
        let definite = if pos_m == Some(target) {
            Definite::Whole
        } else if p > 0 && pos_p == Some(target) {
            // The leading p × p block of the factor is S_PP's own.
            self.order.truncate(p);
            Definite::Positive
        } else {
            return Definite::Not;
        };
        self.dense = true;
        self.ready = true;
        definite
    }

    /// The terms' columns `(B⁻¹u_k)_K` into `y` (positive weights first, `order`) and the
    /// capacitance `S = C⁻¹ + UᵀB⁻¹U` over them.
    ///
    /// # Panics
    /// If a term lies outside the interval `chol` was twisted around.
    fn capacitance(&mut self, chol: &Banded, terms: &[LowRank], index: &impl Fn(usize) -> usize) {
        let m = terms.len();
        let dim = chol.size();
        let (k0, k1) = chol.inner();
        let len = k1 - k0;
        self.order.clear();
        self.order.extend((0..m).filter(|&k| terms[k].c > 0.0));
        self.positive = self.order.len();
        self.order.extend((0..m).filter(|&k| terms[k].c < 0.0));
        let m = self.order.len();
        self.y.clear();
        self.y.resize(m * len + dim, 0.0);
        // (B⁻¹ u_k)_K: the terms' columns, solved together (interleaved: row r of term k
        // at r · m + k).
        // Each column's first row; each is wanted from the first row of any term at or after
        // it (S's entry (a, b), b ≤ a, reads column b at term a's rows).
        self.firsts.clear();
        for (slot, &k) in self.order.iter().enumerate() {
            let t = &terms[k];
            let mut first = len;
            for a in 0..4 {
                let i = index(t.nodes[a]);
                assert!(
                    i >= k0 && i + 3 <= k1,
                    "woodbury: term outside the factor's interval"
                );
                for c in 0..3 {
                    self.y[(i - k0 + c) * m + slot] += t.u[3 * a + c];
                }
                first = first.min(i - k0);
            }
            self.firsts.push(first);
        }
        self.needs.clear();
        self.needs.resize(m, 0);
        let mut need = len;
        for (slot, &f) in self.firsts.iter().enumerate().rev() {
            need = need.min(f);
            self.needs[slot] = need;
        }
        // Between clusters of terms (a knot's strands far apart along the suture) the columns
        // are zero and unwanted: the solve crosses such a span of `g` rows by its transfer
        // maps (`Gaps`: 3b² per column instead of 2b per column per row, after 3b² per row
        // once) where that is cheaper by a third, `2b (g + m) < g m` (docs/performance.md).
        let b = chol.bandwidth();
        self.gaps.clear();
        if m > 2 * b && (b == 8 || b == 10) && self.cross_gaps {
            self.starts.clear();
            for t in terms {
                self.starts.extend(t.nodes.iter().map(|&n| index(n) - k0));
            }
            self.starts.sort_unstable();
            self.starts.dedup();
            for w in self.starts.windows(2) {
                let (g0, g1) = (w[0] + 3, w[1]);
                let g = g1.saturating_sub(g0);
                if g >= 2 * b && 2 * b * (g + m) < g * m && g0 >= b && g1 + b <= len {
                    self.gaps.push(g0, g1);
                }
            }
        }
        chol.solve_inner_many_gapped(
            &mut self.y[..m * len],
            m,
            &self.firsts,
            &self.needs,
            &mut self.gaps,
        );
        // Row a's entries `u_aᵀ (B⁻¹u_b)_K`, b ≤ a, side by side: each term's twelve
        // coordinates scale a run of the interleaved columns, so every entry gets the sum
        // [`dot_strided`] forms, in its order, bit for bit (docs/performance.md).
        // Every entry is written below (both triangles): no clearing.
        self.s.resize(m * m, 0.0);
        self.s_dim = m;
        let data = &mut self.s;
        self.row.clear();
        self.row.resize(m, 0.0);
        for a in 0..m {
            let ta = &terms[self.order[a]];
            let acc = &mut self.row[..=a];
            acc.fill(0.0);
            for n in 0..4 {
                let i = index(ta.nodes[n]) - k0;
                for c in 0..3 {
                    let u = ta.u[3 * n + c];
                    let col = &self.y[(i + c) * m..(i + c) * m + a + 1];
                    for (x, y) in acc.iter_mut().zip(col) {
                        *x += u * y;
                    }
                }
            }
            // Column-major: entry (a, b) at a + b m.
            for (b, &v) in acc.iter().enumerate() {
                data[a + b * m] = v;
                data[b + a * m] = v;
            }
            data[a + a * m] += 1.0 / ta.c;
        }
    }

    /// `dz ← dz − B⁻¹U S⁻¹ Uᵀ dz` for the terms [`Woodbury::prepare`] factored (`dz` the
    /// banded step `B⁻¹(−g)`); nothing if it did not.
    pub fn apply(
        &mut self,
        chol: &Banded,
        terms: &[LowRank],
        index: impl Fn(usize) -> usize,
        dz: &mut [f64],
    ) {
        if !self.ready {
            return;
        }
        let (p, m) = (self.positive, self.order.len());
        self.r.clear();
        self.r
            .extend(self.order.iter().map(|&k| dot(&terms[k], dz, 0, &index)));
        if self.dense {
            // S z = r by the dense L D Lᵀ (entry (a, j) at a + j · s_dim).
            let (z, l, n) = (&mut self.r, &self.s, self.s_dim);
            for j in 0..m {
                let zj = z[j];
                for a in j + 1..m {
                    z[a] -= l[a + j * n] * zj;
                }
            }
            for j in 0..m {
                z[j] /= l[j + j * n];
            }
            for j in (0..m).rev() {
                let mut v = z[j];
                for a in j + 1..m {
                    v -= l[a + j * n] * z[a];
                }
                z[j] = v;
            }
            self.spread(chol, terms, &index, dz);
            return;
        }
        // S z = r by the block LDLᵀ: a = L_P⁻¹ r_P, z_N = (S_NN − WᵀW)⁻¹ (r_N − Wᵀa),
        // L_Pᵀ z_P = a − W z_N; in place in `r` (z_P over its first p entries, z_N after),
        // by nalgebra's triangular solves and `gemm` (what its `*` runs) on views: its bits.
        use nalgebra::{DMatrixView, DVectorViewMut};
        let lp = DMatrixView::from_slice(&self.lp, p, p);
        let (rp, rn) = self.r.split_at_mut(p);
        lp.solve_lower_triangular_mut(&mut DVectorViewMut::from_slice(rp, p));
        if m > p {
            let q = m - p;
            self.t.resize(q.max(p), 0.0);
            // z_N = r_N − Wᵀa (`rows` is Wᵀ, column-major).
            less_product(rn, &mut self.t[..q], &self.rows, rp);
            let ln = DMatrixView::from_slice(&self.ln, q, q);
            let mut zn = DVectorViewMut::from_slice(rn, q);
            ln.solve_lower_triangular_mut(&mut zn);
            ln.tr_solve_lower_triangular_mut(&mut zn);
            zn.neg_mut();
            // z_P = a − W z_N.
            less_product(rp, &mut self.t[..p], &self.w, rn);
        }
        lp.tr_solve_lower_triangular_mut(&mut DVectorViewMut::from_slice(rp, p));
        self.spread(chol, terms, &index, dz);
    }

    /// `dz −= B⁻¹ (U z)` with `z` (in `r`) over `order`: one solve of a right-hand side
    /// supported in K.
    fn spread(
        &mut self,
        chol: &Banded,
        terms: &[LowRank],
        index: &impl Fn(usize) -> usize,
        dz: &mut [f64],
    ) {
        let m = self.order.len();
        let (k0, k1) = chol.inner();
        let len = k1 - k0;
        let v = &mut self.y[m * len..];
        v.iter_mut().for_each(|x| *x = 0.0);
        let mut first = k1;
        for (&k, &z) in self.order.iter().zip(&self.r) {
            let t = &terms[k];
            for a in 0..4 {
                let i = index(t.nodes[a]);
                for c in 0..3 {
                    v[i + c] += t.u[3 * a + c] * z;
                }
                first = first.min(i);
            }
        }
        chol.solve_from_inner(v, first);
        for (d, w) in dz.iter_mut().zip(v.iter()) {
            *d -= w;
        }
    }
}

/// `z ← z − A x` for the `z.len() × x.len()` matrix `a` (column-major), the product by
/// nalgebra's `gemm` (what its `*` runs, so its bits) into `work`, then subtracted entry by
/// entry, as `z − A x` on nalgebra's vectors is.
fn less_product(z: &mut [f64], work: &mut [f64], a: &[f64], x: &[f64]) {
    use nalgebra::{DMatrixView, DVectorView, DVectorViewMut};
    let (rows, cols) = (z.len(), x.len());
    DVectorViewMut::from_slice(work, rows).gemm(
        1.0,
        &DMatrixView::from_slice(a, rows, cols),
        &DVectorView::from_slice(x, cols),
        0.0,
    );
    for (z, t) in z.iter_mut().zip(work.iter()) {
        *z -= t;
    }
}

/// `u · v` over a term's nodes, `v` indexed from solver index `base`.
pub(crate) fn dot(t: &LowRank, v: &[f64], base: usize, index: &impl Fn(usize) -> usize) -> f64 {
    dot_strided(t, v, base, 1, index)
}

/// [`dot`] with solver index `i` at `v[(i − base) · stride]` (a column of interleaved ones).
fn dot_strided(
    t: &LowRank,
    v: &[f64],
    base: usize,
    stride: usize,
    index: &impl Fn(usize) -> usize,
) -> f64 {
    let mut s = 0.0;
    for a in 0..4 {
        for k in 0..3 {
            s += t.u[3 * a + k] * v[(index(t.nodes[a]) - base + k) * stride];
        }
    }
    s
}

/// Where a potential writes its gradient and Hessian (over node positions).
pub struct PotentialSink<'a> {
    pub(crate) g: &'a mut [f64],
    pub(crate) h: Option<&'a mut Banded>,
    pub(crate) low_rank: Option<&'a mut Vec<LowRank>>,
    /// Unknowns per node in the solver's interleaved vector (6 for the Cosserat rod: position
    /// and rotation; 4 for DER: position and edge angle).
    pub(crate) stride: usize,
    /// Index of node 0's first coordinate (DER puts a held ghost node before a clamped start).
    pub(crate) offset: usize,
}

impl<'a> PotentialSink<'a> {
    /// A sink over the rod's Newton unknowns: `g` has `6N + 3` entries (node `i`'s position at
    /// `6i`), `h` the matching banded Hessian (half-bandwidth 8), if wanted.
    pub fn new(g: &'a mut [f64], h: Option<&'a mut Banded>) -> Self {
        PotentialSink {
            g,
            h,
            low_rank: None,
            stride: 6,
            offset: 0,
        }
    }

    /// A sink that collects rank-one terms in `low_rank` instead of folding them into the band
    /// (what the Newton solver does; for tests that assemble the full Hessian).
    pub fn with_low_rank(
        g: &'a mut [f64],
        h: Option<&'a mut Banded>,
        low_rank: &'a mut Vec<LowRank>,
    ) -> Self {
        PotentialSink {
            g,
            h,
            low_rank: Some(low_rank),
            stride: 6,
            offset: 0,
        }
    }

    /// Add the rank-one Hessian term `c u uᵀ` (c of either sign; the solver keeps the negative ones only where the whole stays positive definite) over the positions of `nodes`, which
    /// may be far apart in index. The Newton solver keeps such terms out of the band and
    /// solves them by the Woodbury identity; a sink without that support (tests) adds the
    /// term's banded part (blocks of equal or adjacent nodes) only.
    pub fn add_low_rank(&mut self, nodes: [usize; 4], u: &[f64; 12], c: f64) {
        if self.h.is_none() || c == 0.0 {
            return;
        }
        if let Some(lr) = self.low_rank.as_deref_mut() {
            lr.push(LowRank { nodes, u: *u, c });
            return;
        }
        let block = |a: usize| Vec3::new(u[3 * a], u[3 * a + 1], u[3 * a + 2]);
        for a in 0..4 {
            for b in 0..4 {
                let (na, nb) = (nodes[a], nodes[b]);
                if na == nb || na == nb + 1 {
                    let m = block(a) * block(b).transpose() * c;
                    self.add_hessian(na, nb, &m);
                }
            }
        }
    }

    /// Whether the Hessian is wanted (otherwise [`PotentialSink::add_hessian`] is a no-op).
    pub fn wants_hessian(&self) -> bool {
        self.h.is_some()
    }

    /// `∂V/∂x_node += f` [N].
    #[inline]
    pub fn add_gradient(&mut self, node: usize, f: &Vec3) {
        for k in 0..3 {
            self.g[self.offset + self.stride * node + k] += f[k];
        }
    }

    /// Add `g` [N m] to the gradient of segment `e`'s rotation increment (body frame, the
    /// solver's `u ∘ exp_q(δ)`).
    #[inline]
    pub fn add_rotation_gradient(&mut self, e: usize, g: &Vec3) {
        debug_assert_eq!(
            self.stride, 6,
            "rotation unknowns exist in the Cosserat layout only"
        );
        for k in 0..3 {
            self.g[6 * e + 3 + k] += g[k];
        }
    }

    /// Add `m` [N m] to the Hessian block of segment `e`'s rotation increment.
    #[inline]
    pub fn add_rotation_hessian(&mut self, e: usize, m: &Mat3) {
        debug_assert_eq!(
            self.stride, 6,
            "rotation unknowns exist in the Cosserat layout only"
        );
        if let Some(h) = self.h.as_deref_mut() {
            h.add_dense(6 * e + 3, m);
        }
    }

    /// `∂²V/∂x_a∂x_b += m` [N/m] for `b ∈ {a, a - 1}` (the `(b, a)` block is its transpose).
    ///
    /// # Panics
    /// If the nodes are not equal or adjacent: a programming error in the potential.
    #[inline]
    pub fn add_hessian(&mut self, a: usize, b: usize, m: &Mat3) {
        let Some(h) = self.h.as_deref_mut() else {
            return;
        };
        if a == b {
            h.add_dense(self.offset + self.stride * a, m);
        } else {
            assert!(
                a == b + 1,
                "node potential couples nodes {a} and {b}: not banded"
            );
            h.add_block3(
                self.offset + self.stride * a,
                self.offset + self.stride * b,
                m,
            );
        }
    }
}

/// One Projective Dynamics constraint (Bouaziz et al. 2014, the form every term of Soler 2018
/// takes): the energy `(w/2)|Σ_a c_a x_{n_a} − p|²` asking a point of the rod (weights `c` on
/// one node, or on two neighbouring nodes `n_1 = n_0 + 1`) to sit at the target `p`, the
/// point's projection onto the constraint's feasible set at the current iterate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    /// Node indices (`[i, i]` for one node, `[i, i + 1]` for a point of segment i).
    pub nodes: [usize; 2],
    /// Weights on the nodes (`[1, 0]` for one node; `[1 − s, s]` on a segment).
    pub weights: [f64; 2],
    /// Number of nodes used (1 or 2).
    pub count: usize,
    /// Target position [m].
    pub target: Vec3,
    /// Constraint weight w [N/m].
    pub weight: f64,
}

/// A potential `V(x)` over the rod's node positions [J], possibly depending on the state at
/// the start of the step (lagged friction).
pub trait NodePotential {
    /// Called once per step (or static solve) with the positions at its start and the step
    /// length [s] (`None` for an equilibrium solve): fix lagged quantities here.
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>);

    /// Value [J] at `x`; with a sink, add the gradient (and Hessian, if wanted).
    fn evaluate(&self, x: &[Vec3], sink: Option<&mut PotentialSink>) -> f64;

    /// Called with the solved positions: return `false` to have the step re-solved from its
    /// start (after the potential changed itself, e.g. raised a penalty stiffness).
    fn accept(&mut self, x: &[Vec3]) -> bool;

    /// Whether [`NodePotential::max_step`] can ever return less than 1 (saves the solver a
    /// pass over the nodes per iteration when it cannot).
    fn limits_steps(&self) -> bool {
        true
    }

    /// Largest fraction `t ∈ (0, 1]` of the Newton step from `x` to `x_full` the line search
    /// may try (a conservative continuous-collision filter: no contact may be passed through
    /// between two iterates).
    fn max_step(&self, _x: &[Vec3], _x_full: &[Vec3]) -> f64 {
        1.0
    }

    /// Equilibrium solves only: re-evaluate lagged quantities (friction's normal forces) at
    /// `x`, keeping the start positions; return their largest relative change [-].
    fn relag(&mut self, x: &[Vec3]) -> f64;

    /// A potential on the segment frames (e.g. the tool's rotational coupling): value [J],
    /// adding its gradient and Hessian over the rotation increments through `sink`
    /// (`add_rotation_gradient`, `add_rotation_hessian`). Default: none.
    fn evaluate_frames(&self, _q: &[Quat], _sink: Option<&mut PotentialSink>) -> f64 {
        0.0
    }

    /// The Projective Dynamics solver's view of this potential: the constraints active at
    /// `x`, each handed to `out` (contact as projections onto the feasible set). Default:
    /// none (the potential is ignored by PD).
    fn project(&self, _x: &[Vec3], _out: &mut dyn FnMut(Projection)) {}
}

/// The external potentials of one solve, a list (obstacle contact, self-contact, the tool
/// coupling, the suture's holds…), acting as one potential: every part begins, accepts and
/// projects in list order, limits the step to the smallest of their limits and reports the
/// largest lagged change.
///
/// The values are added *pairwise*: the list is split in two halves, the first one the larger
/// (`[a, b, c, d]` gives `(a + b) + (c + d)`, `[a, b, c]` gives `(a + b) + c`), each half
/// likewise. Floating-point addition is not associative, and Φ's value feeds the line
/// search's Armijo test, so the grouping is part of the solver's results: this one is the
/// grouping the call sites had before the list existed (nested pairs: contact and
/// self-contact, then the holds), which keeps recordings replaying bit for bit. The gradients
/// and Hessians are added into the sink in list order. An absent potential is `None` (an
/// `Option<&mut P>` is a potential), and keeps its place in the grouping.
pub(crate) struct Potentials<'p, 'a>(pub &'p mut [&'a mut dyn NodePotential]);

/// The pairwise sum of the values of `list` (see [`Potentials`]).
fn pairwise(
    list: &[&mut dyn NodePotential],
    mut sink: Option<&mut PotentialSink>,
    value: &impl Fn(&dyn NodePotential, Option<&mut PotentialSink>) -> f64,
) -> f64 {
    match list.len() {
        0 => 0.0,
        1 => value(&*list[0], sink),
        n => {
            let (a, b) = list.split_at(n.div_ceil(2));
            let va = pairwise(a, sink.as_deref_mut(), value);
            va + pairwise(b, sink, value)
        }
    }
}

impl NodePotential for Potentials<'_, '_> {
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>) {
        self.0.iter_mut().for_each(|p| p.begin(x_start, h));
    }
    fn evaluate(&self, x: &[Vec3], sink: Option<&mut PotentialSink>) -> f64 {
        pairwise(self.0, sink, &|p, s| p.evaluate(x, s))
    }
    fn accept(&mut self, x: &[Vec3]) -> bool {
        // Every part must see the solved state (each may adapt itself): no short circuit.
        let mut all = true;
        for p in self.0.iter_mut() {
            all &= p.accept(x);
        }
        all
    }
    fn limits_steps(&self) -> bool {
        self.0.iter().any(|p| p.limits_steps())
    }
    fn project(&self, x: &[Vec3], out: &mut dyn FnMut(Projection)) {
        self.0.iter().for_each(|p| p.project(x, out));
    }
    fn max_step(&self, x: &[Vec3], x_full: &[Vec3]) -> f64 {
        self.0
            .iter()
            .map(|p| p.max_step(x, x_full))
            .reduce(f64::min)
            .unwrap_or(1.0)
    }
    fn relag(&mut self, x: &[Vec3]) -> f64 {
        self.0
            .iter_mut()
            .map(|p| p.relag(x))
            .reduce(f64::max)
            .unwrap_or(0.0)
    }
    fn evaluate_frames(&self, q: &[Quat], sink: Option<&mut PotentialSink>) -> f64 {
        pairwise(self.0, sink, &|p, s| p.evaluate_frames(q, s))
    }
}

/// A potential that may be absent (`None`: no potential; it keeps its place in a
/// [`Potentials`] list's grouping, adding 0 J).
impl<P: NodePotential + ?Sized> NodePotential for Option<&mut P> {
    fn begin(&mut self, x_start: &[Vec3], h: Option<f64>) {
        if let Some(p) = self {
            p.begin(x_start, h);
        }
    }
    fn evaluate(&self, x: &[Vec3], sink: Option<&mut PotentialSink>) -> f64 {
        self.as_ref().map_or(0.0, |p| p.evaluate(x, sink))
    }
    fn accept(&mut self, x: &[Vec3]) -> bool {
        self.as_mut().is_none_or(|p| p.accept(x))
    }
    fn limits_steps(&self) -> bool {
        self.as_ref().is_some_and(|p| p.limits_steps())
    }
    fn project(&self, x: &[Vec3], out: &mut dyn FnMut(Projection)) {
        if let Some(p) = self {
            p.project(x, out);
        }
    }
    fn max_step(&self, x: &[Vec3], x_full: &[Vec3]) -> f64 {
        self.as_ref().map_or(1.0, |p| p.max_step(x, x_full))
    }
    fn relag(&mut self, x: &[Vec3]) -> f64 {
        self.as_mut().map_or(0.0, |p| p.relag(x))
    }
    fn evaluate_frames(&self, q: &[Quat], sink: Option<&mut PotentialSink>) -> f64 {
        self.as_ref().map_or(0.0, |p| p.evaluate_frames(q, sink))
    }
}

#[cfg(test)]
mod woodbury_tests {
    use super::*;

    /// The Woodbury correction solves `(B + Σ c u uᵀ) x = rhs` as a dense LU of the same
    /// matrix does, with the factor twisted around the terms' interval: the whole rod, its
    /// middle, its end (and DER's layout, 4 unknowns a node after a ghost's).
    #[test]
    fn woodbury_matches_a_dense_solve_of_the_corrected_system() {
        woodbury_against_dense(&|_, r| 0.5 + r.abs() * 10.0, 2e-15);
    }

    /// Terms of either sign: a few negative weights small enough that the corrected system
    /// stays positive definite (the dense Cholesky says so), and one so large that it does
    /// not, which `prepare` must refuse.
    #[test]
    fn woodbury_with_negative_weights_solves_a_definite_system_and_refuses_an_indefinite_one() {
        woodbury_against_dense(
            &|k, r| {
                if k % 2 == 1 {
                    -0.05 - 0.05 * r.abs()
                } else {
                    0.5 + r.abs() * 10.0
                }
            },
            2e-15,
        );
        woodbury_against_dense(
            &|k, r| {
                if k == 2 {
                    -40.0 - r.abs()
                } else {
                    0.5 + r.abs() * 10.0
                }
            },
            0.0,
        );
    }

    /// The capacitance's Cholesky factor and triangular solve on slices give nalgebra's
    /// results to the bit (what keeps recordings replaying across the change), and refuse
    /// what nalgebra refuses.
    #[test]
    fn slice_cholesky_and_triangular_solve_are_nalgebras_bit_for_bit() {
        let mut rnd = crate::rod::banded::uniform(5);
        for n in [1, 2, 7, 8, 9, 33] {
            let g = nalgebra::DMatrix::from_fn(n, n + 3, |_, _| rnd());
            let a = &g * g.transpose() + nalgebra::DMatrix::identity(n, n) * 1e-3;
            let theirs = a.clone().cholesky().expect("SPD").unpack();
            let mut ours = a.clone();
            assert!(cholesky_lower(ours.as_mut_slice(), n));
            for j in 0..n {
                for i in j..n {
                    assert_eq!(ours[(i, j)].to_bits(), theirs[(i, j)].to_bits(), "n {n}");
                }
            }
            // Both copies of the factor (the AVX2 one where the CPU has it).
            for avx2 in [false, true]
                .into_iter()
                .filter(|&v| !v || crate::math::avx2())
            {
                let mut again = a.clone();
                assert!(cholesky_lower_on(avx2, again.as_mut_slice(), n));
                for j in 0..n {
                    for i in j..n {
                        assert_eq!(again[(i, j)].to_bits(), theirs[(i, j)].to_bits());
                    }
                }
            }
            for q in [1, 5, 6, 13] {
                let b = nalgebra::DMatrix::from_fn(n, q, |_, _| rnd());
                let mut theirs_b = b.clone();
                assert!(theirs.solve_lower_triangular_mut(&mut theirs_b));
                let mut ours_b = b.clone();
                assert!(solve_lower_columns(
                    ours.as_slice(),
                    n,
                    ours_b.as_mut_slice()
                ));
                assert!(
                    ours_b
                        .iter()
                        .zip(theirs_b.iter())
                        .all(|(p, q)| p.to_bits() == q.to_bits())
                );
                // By rows, in both copies: B's rows side by side.
                for avx2 in [false, true]
                    .into_iter()
                    .filter(|&v| !v || crate::math::avx2())
                {
                    let mut rows: Vec<f64> = (0..n)
                        .flat_map(|i| (0..q).map(move |c| (i, c)))
                        .map(|(i, c)| b[(i, c)])
                        .collect();
                    assert!(solve_lower_rows_on(avx2, ours.as_slice(), n, &mut rows));
                    for i in 0..n {
                        for c in 0..q {
                            assert_eq!(
                                rows[i * q + c].to_bits(),
                                theirs_b[(i, c)].to_bits(),
                                "n {n}, q {q}, avx2 {avx2}"
                            );
                        }
                    }
                }
            }
            // A zero pivot is refused by rows as by columns.
            let mut singular = ours.clone();
            singular[(n - 1, n - 1)] = 0.0;
            let mut rows = vec![1.0; 3 * n];
            assert!(!solve_lower_rows(singular.as_slice(), n, &mut rows));
            let mut cols = vec![1.0; 3 * n];
            assert!(!solve_lower_columns(singular.as_slice(), n, &mut cols));
            // Not positive definite: a negative pivot, then a NaN.
            let mut bad = a.clone();
            bad[(n - 1, n - 1)] = -1.0;
            assert!(bad.clone().cholesky().is_none());
            assert!(!cholesky_lower(bad.as_mut_slice(), n));
            let mut nan = a.clone();
            nan[(0, 0)] = f64::NAN;
            assert!(!cholesky_lower(nan.as_mut_slice(), n));
        }
    }

    /// Solve `(B + Σ c u uᵀ) x = rhs` both ways with the weights `weight(term, random)`; with
    /// `tol` = 0 the system must be indefinite and refused.
    /// Two clusters of terms far apart along the rod (a knot's strands), more terms than
    /// twice the bandwidth: with `cross_gaps` the columns' solve crosses the span between the
    /// clusters by its transfer maps, and the corrected step matches a dense solve of the
    /// corrected system as closely as the row-by-row solve does.
    #[test]
    fn woodbury_crossing_the_gap_between_two_clusters_matches_a_dense_solve() {
        for (stride, b) in [(3, 8), (4, 10)] {
            let nodes = 80;
            let n = nodes * stride;
            let index = |k: usize| stride * k;
            let mut rnd = crate::rod::banded::uniform(23);
            // A rod's kind of band: a sum of positive semi-definite element blocks (one
            // rank-one term over each window of b + 1 unknowns) and a small mass term, so that
            // B⁻¹ couples the clusters far apart (as a suture's stiffness does; a diagonally
            // dominant band's B⁻¹ would vanish across the span and hide the crossing).
            let mut band = Banded::new(n, b);
            let mut dense = nalgebra::DMatrix::<f64>::zeros(n, n);
            for i in 0..n - b {
                let v: Vec<f64> = (0..=b).map(|_| rnd()).collect();
                for r in 0..=b {
                    for c in 0..=r {
                        let e = v[r] * v[c];
                        if r == c {
                            band.add_diagonal(i + r, e);
                        } else {
                            band.add_lower(i + r, i + c, e);
                        }
                        dense[(i + r, i + c)] += e;
                        if r != c {
                            dense[(i + c, i + r)] += e;
                        }
                    }
                }
            }
            for i in 0..n {
                band.add_diagonal(i, 1e-3);
                dense[(i, i)] += 1e-3;
            }
            // 30 pairs between nodes 5–12 and 60–67.
            let terms: Vec<LowRank> = (0..30)
                .map(|k| {
                    let (p, q) = (5 + k % 7, 60 + (k * 3) % 7);
                    let mut u = [0.0; 12];
                    u.iter_mut().for_each(|v| *v = rnd());
                    LowRank {
                        nodes: [p, p + 1, q - 1, q],
                        u,
                        c: 0.5 + rnd().abs() * 10.0,
                    }
                })
                .collect();
            for t in &terms {
                let full = column(t, n, index);
                dense += &full * full.transpose() * t.c;
            }
            let rhs: Vec<f64> = (0..n).map(|_| rnd()).collect();
            let expect = dense
                .lu()
                .solve(&nalgebra::DVector::from_vec(rhs.clone()))
                .unwrap();
            let scale = expect.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let (k0, k1) = interval(&terms, index).unwrap();
            let mut chol = Banded::new(n, b);
            chol.factor_twisted_from(&band, 0.0, k0, k1).unwrap();
            let mut steps = Vec::new();
            let mut errors = Vec::new();
            for cross in [false, true] {
                let mut wb = Woodbury {
                    cross_gaps: cross,
                    ..Default::default()
                };
                assert!(wb.prepare(&chol, &terms, index));
                assert_eq!(wb.gaps.spans().len(), usize::from(cross), "stride {stride}");
                let (dz, err) = corrected_step(&chol, &mut wb, &terms, index, &rhs, &expect);
                errors.push(err / scale);
                steps.push(dz);
            }
            // Not the same arithmetic (the crossing was taken), and as close to the dense
            // solve: measured 6.23e-14 and 6.26e-14 relative (stride 3), 2.90e-14 and 2.90e-14
            // (stride 4), the dense LU's own round-off on this conditioning included.
            assert_ne!(
                steps[0], steps[1],
                "stride {stride}: the crossing changed nothing"
            );
            assert!(
                errors[0] < 7e-14,
                "stride {stride}: row by row {:e}",
                errors[0]
            );
            assert!(
                errors[1] < 1.02 * errors[0],
                "stride {stride}: crossing {:e} against row by row {:e}",
                errors[1],
                errors[0]
            );
        }
    }

    /// The corrected step `(B + UCUᵀ)⁻¹ rhs` by the banded factor and `wb`, and its largest
    /// difference from `expect`.
    fn corrected_step(
        chol: &Banded,
        wb: &mut Woodbury,
        terms: &[LowRank],
        index: impl Fn(usize) -> usize,
        rhs: &[f64],
        expect: &nalgebra::DVector<f64>,
    ) -> (Vec<f64>, f64) {
        let mut dz = rhs.to_vec();
        chol.solve(&mut dz);
        wb.apply(chol, terms, index, &mut dz);
        let err = dz
            .iter()
            .zip(expect.iter())
            .map(|(a, e)| (a - e).abs())
            .fold(0.0, f64::max);
        (dz, err)
    }

    /// A term's vector `u` over all `n` unknowns.
    fn column(t: &LowRank, n: usize, index: impl Fn(usize) -> usize) -> nalgebra::DVector<f64> {
        let mut full = nalgebra::DVector::<f64>::zeros(n);
        for a in 0..4 {
            for c in 0..3 {
                full[index(t.nodes[a]) + c] += t.u[3 * a + c];
            }
        }
        full
    }

    fn woodbury_against_dense(weight: &dyn Fn(usize, f64) -> f64, tol: f64) {
        let whole: &[(usize, usize)] = &[(2, 20), (5, 27), (11, 12), (0, 29), (14, 22)];
        let middle: &[(usize, usize)] = &[(8, 20), (9, 17), (11, 12), (14, 22)];
        let end: &[(usize, usize)] = &[(15, 29), (19, 27), (21, 28)];
        let mut worst = 0.0f64;
        for (pairs, stride, offset, b) in [
            (whole, 3, 0, 8),
            (middle, 3, 0, 8),
            (end, 3, 0, 8),
            (middle, 4, 4, 10),
        ] {
            let nodes = 30;
            let n = nodes * stride + offset;
            let index = |k: usize| offset + stride * k;
            let mut rnd = crate::rod::banded::uniform(17);
            let mut band = Banded::new(n, b);
            let mut dense = nalgebra::DMatrix::<f64>::zeros(n, n);
            for i in 0..n {
                for j in i.saturating_sub(b)..i {
                    let v = rnd();
                    band.add_lower(i, j, v);
                    dense[(i, j)] += v;
                    dense[(j, i)] += v;
                }
                let d = 2.0 * b as f64 + 1.0 + rnd();
                band.add_diagonal(i, d);
                dense[(i, i)] += d;
            }
            // Pairs far apart along the rod (outside the band), as self-contact makes them.
            let terms: Vec<LowRank> = pairs
                .iter()
                .enumerate()
                .map(|(k, &(p, q))| {
                    let mut u = [0.0; 12];
                    u.iter_mut().for_each(|v| *v = rnd());
                    LowRank {
                        nodes: [p, p + 1, q - 1, q],
                        u,
                        c: weight(k, rnd()),
                    }
                })
                .collect();
            // The corrected system, and the one with the positive terms alone (what a refused
            // factorisation corrects for).
            let mut positive = dense.clone();
            for t in &terms {
                let full = column(t, n, index);
                dense += &full * full.transpose() * t.c;
                if t.c > 0.0 {
                    positive += &full * full.transpose() * t.c;
                }
            }
            let rhs: Vec<f64> = (0..n).map(|_| rnd()).collect();
            let definite = dense.clone().cholesky().is_some();
            let (k0, k1) = interval(&terms, index).unwrap();
            let mut chol = Banded::new(n, b);
            chol.factor_twisted_from(&band, 0.0, k0, k1).unwrap();
            let mut wb = Woodbury::default();
            assert_eq!(wb.prepare(&chol, &terms, index), definite);
            if tol == 0.0 {
                assert!(
                    !definite,
                    "the large negative weight left {n} unknowns definite"
                );
            } else {
                assert!(definite);
            }
            let solved = if definite { dense } else { positive };
            let tol = if definite { tol } else { 2e-15 };
            let expect = solved
                .lu()
                .solve(&nalgebra::DVector::from_vec(rhs.clone()))
                .unwrap();
            assert_eq!(chol.inner(), (k0, k1));
            let (_, err) = corrected_step(&chol, &mut wb, &terms, index, &rhs, &expect);
            let scale = expect.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            worst = worst.max(err / scale);
            // Round-off of a well-conditioned 90-unknown solve: measured 8.9e-16 relative
            // at worst, both with the plain factor and one solve per term over the whole rod
            // and with the twisted one (the four cases); refused (the positive terms alone):
            // measured 7.8e-16.
            assert!(
                err <= tol * scale,
                "K [{k0}, {k1}) of {n}: max error {err:e} (scale {scale:e})"
            );
        }
        eprintln!("worst relative error {worst:e}");
    }
}
