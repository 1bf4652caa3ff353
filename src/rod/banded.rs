//! Symmetric banded matrices and their `L D Lᵀ` (square-root-free Cholesky) factorisation, for the block-tridiagonal Newton
//! systems of the dynamic rods (docs/derivations/cosserat.md §C.2: O(N·b²) instead of a sparse or dense solve).
//!
//! Storage is the lower band by rows in increasing column order:
//! `band[i * (b + 1) + (b - (i - j))] = A[i][j]` for `j = i - b ..= i` (diagonal last). Every
//! inner product of the factorisation and the substitutions then runs over two contiguous
//! slices, which the compiler vectorises (the reversed layout ran the factor ~2× slower).
//! Entries left of column 0 in the first `b` rows are never read.
//! All buffers are allocated once, at construction; factor and solve never allocate.
//!
//! A factorisation may be *twisted* around an interval `K = [k0, k1)` (docs/derivations/banded.md):
//! rows `[0, k0)` are eliminated first, top down, then `[k1, n)` bottom up, then `K` top down.
//! Each stored entry `(i, j)`, `i > j`, then holds the multiplier of whichever of `i` and `j`
//! was eliminated first (for a pivot of the bottom-up part, its column above the diagonal
//! lies in its own row, so the storage is the same). `K`'s own factor is then that of the
//! Schur complement `B_KK − B_KO B_OO⁻¹ B_OK`, so a right-hand side supported in `K` is solved
//! for its `K` part by substitutions over `K` alone ([`Banded::solve_inner`]). The plain
//! factorisation is the twist around `K = [0, n)`.

use nalgebra::SMatrix;

/// A symmetric `n × n` matrix with half-bandwidth `b` (`A[i][j] = 0` for `|i - j| > b`).
#[derive(Clone, Debug)]
pub struct Banded {
    n: usize,
    b: usize,
    band: Vec<f64>,
    /// After a factorisation: `1 / D_ii` (multiplying is ~4× cheaper than dividing on the
    /// solves' critical path).
    inv: Vec<f64>,
    /// The interval `[k0, k1)` the factorisation was twisted around (eliminated last), see
    /// the module documentation; `(0, n)` for the plain one.
    inner: (usize, usize),
    /// Zero: a factorisation requires positive pivots (Cholesky). Positive: negative pivots
    /// are accepted too, as long as `|D_j|` exceeds this fraction of `|A_jj|` (an indefinite
    /// `L D Lᵀ` without pivoting, [`Banded::factor_indefinite_from`]).
    pivot_floor: f64,
    /// Negative pivots of the last factorisation: by Sylvester's law of inertia, the number of
    /// negative eigenvalues of the matrix factored.
    negatives: usize,
}

/// The factorisation met a pivot that is not positive: the matrix is not positive definite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NotPositiveDefinite {
    /// Row of the failing pivot.
    pub row: usize,
}

/// `Σ a_k b_k` over two equal-length slices, in four independent partial sums.
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0; 4];
    let (ca, ra) = a.split_at(n - n % 4);
    let (cb, rb) = b.split_at(n - n % 4);
    for (x, y) in ca.chunks_exact(4).zip(cb.chunks_exact(4)) {
        for k in 0..4 {
            s[k] += x[k] * y[k];
        }
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ra.iter().zip(rb) {
        t += x * y;
    }
    t
}

impl Banded {
    /// A zero matrix of size `n` and half-bandwidth `b`.
    pub fn new(n: usize, b: usize) -> Self {
        Banded {
            n,
            b,
            band: vec![0.0; n * (b + 1)],
            inv: vec![0.0; n],
            inner: (0, n),
            pivot_floor: 0.0,
            negatives: 0,
        }
    }

    /// Size.
    pub fn size(&self) -> usize {
        self.n
    }

    /// Half-bandwidth.
    pub fn bandwidth(&self) -> usize {
        self.b
    }

    /// Storage index of `A[i][j]`, `i ≥ j`, `i - j ≤ b`.
    #[inline]
    fn at(&self, i: usize, j: usize) -> usize {
        i * (self.b + 1) + self.b - (i - j)
    }

    /// `A ← D A D` for the diagonal `D = diag(d)` (a symmetric scaling, e.g. `D = diag(A)^{-½}`
    /// to equilibrate a badly scaled system before factoring).
    pub fn scale(&mut self, d: &[f64]) {
        assert_eq!(d.len(), self.n, "scale: length mismatch");
        for i in 0..self.n {
            for j in i.saturating_sub(self.b)..=i {
                let k = self.at(i, j);
                self.band[k] *= d[i] * d[j];
            }
        }
    }

    /// Set every entry to zero.
    pub fn clear(&mut self) {
        self.band.iter_mut().for_each(|v| *v = 0.0);
    }

    /// Entry `A[i][j]` (zero outside the band).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (i, j) = if i >= j { (i, j) } else { (j, i) };
        if i - j > self.b {
            0.0
        } else {
            self.band[self.at(i, j)]
        }
    }

    /// `A[i][j] += v` for `i ≥ j` (the lower triangle; the matrix is symmetric).
    ///
    /// # Panics
    /// If `(i, j)` is outside the band: a programming error in the assembly.
    #[inline]
    pub fn add_lower(&mut self, i: usize, j: usize, v: f64) {
        debug_assert!(i >= j && i - j <= self.b, "({i}, {j}) outside the band");
        let k = self.at(i, j);
        self.band[k] += v;
    }

    /// Add the symmetric block `m` (rows and columns at global indices `idx`), lower part only.
    #[inline]
    pub fn add_block<const D: usize>(&mut self, idx: &[usize; D], m: &[[f64; D]; D]) {
        for a in 0..D {
            for c in 0..D {
                if idx[a] >= idx[c] {
                    self.add_lower(idx[a], idx[c], m[a][c]);
                }
            }
        }
    }

    /// Add the lower triangle of the dense symmetric block `m` whose rows and columns are the
    /// consecutive indices `start..start + D` (`D ≤ b + 1`).
    #[inline]
    pub fn add_dense<const D: usize>(&mut self, start: usize, m: &SMatrix<f64, D, D>) {
        assert!(
            D <= self.b + 1 && start + D <= self.n,
            "block outside the band"
        );
        let w = self.b + 1;
        for a in 0..D {
            // Row start+a, columns start..=start+a at offsets b-a ..= b.
            let row = &mut self.band[(start + a) * w + self.b - a..(start + a) * w + w];
            for (c, r) in row.iter_mut().enumerate() {
                *r += m[(a, c)];
            }
        }
    }

    /// `A[r0+a][c0+c] += m[a][c]` for a full 3×3 block strictly below the diagonal
    /// (`r0 ≥ c0 + 3`, `r0 + 2 - c0 ≤ b`).
    #[inline]
    pub fn add_block3(&mut self, r0: usize, c0: usize, m: &SMatrix<f64, 3, 3>) {
        assert!(r0 >= c0 + 3 && r0 + 2 - c0 <= self.b && r0 + 3 <= self.n);
        let w = self.b + 1;
        for a in 0..3 {
            let base = (r0 + a) * w + self.b - (r0 + a - c0);
            let row = &mut self.band[base..base + 3];
            for (c, r) in row.iter_mut().enumerate() {
                *r += m[(a, c)];
            }
        }
    }

    /// `A[i][i] += v`.
    #[inline]
    pub fn add_diagonal(&mut self, i: usize, v: f64) {
        let k = self.at(i, i);
        self.band[k] += v;
    }

    /// Replace row and column `i` by those of the identity (a Dirichlet degree of freedom).
    pub fn pin(&mut self, i: usize) {
        for j in i.saturating_sub(self.b)..i {
            let k = self.at(i, j);
            self.band[k] = 0.0;
        }
        for r in i + 1..(i + self.b + 1).min(self.n) {
            let k = self.at(r, i);
            self.band[k] = 0.0;
        }
        let k = self.at(i, i);
        self.band[k] = 1.0;
    }

    /// `y = A x`.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..self.n {
            y[i] += self.band[self.at(i, i)] * x[i];
            for j in i.saturating_sub(self.b)..i {
                let a = self.band[self.at(i, j)];
                y[i] += a * x[j];
                y[j] += a * x[i];
            }
        }
    }

    /// Row `i`'s stored entries for columns `j0..j1` (`i - b ≤ j0 ≤ j1 ≤ i + 1`).
    #[inline]
    fn row(&self, i: usize, j0: usize, j1: usize) -> &[f64] {
        let base = i * (self.b + 1) + self.b - i;
        &self.band[base + j0..base + j1]
    }

    /// In-place factorisation `A = L D Lᵀ` (unit lower `L` below the diagonal, `D` on it; the
    /// square-root-free Cholesky). `A` must be positive definite: every pivot `D_ii > 0`, else
    /// the error names the first failing row and the matrix is left partially overwritten
    /// (re-assemble before trying again).
    pub fn factor(&mut self) -> Result<(), NotPositiveDefinite> {
        let n = self.n;
        match self.b {
            8 => self.factor_fixed::<8>(crate::math::avx2(), None, 0.0, 0, n),
            10 => self.factor_fixed::<10>(crate::math::avx2(), None, 0.0, 0, n),
            _ => {
                self.inner = (0, n);
                self.factor_any()
            }
        }
    }

    /// Factor `A + μ diag(|A_ii|)` (a Marquardt shift, `μ ≥ 0`) into `self`, leaving `a`
    /// untouched, so a failed attempt can be retried with a larger shift without
    /// re-assembling or backing up `a`. `self` must have `a`'s size and bandwidth.
    pub fn factor_from(&mut self, a: &Banded, shift: f64) -> Result<(), NotPositiveDefinite> {
        self.factor_twisted_from(a, shift, 0, a.n)
    }

    /// [`Banded::factor_from`], twisted around `K = [k0, k1)` (module documentation;
    /// docs/derivations/banded.md): afterwards [`Banded::solve_inner`] solves a right-hand side
    /// supported in `K` for its `K` part over `K` alone. The factorisation is of the same
    /// matrix (an elimination order, not an approximation), so [`Banded::solve`] still solves
    /// any right-hand side. Bandwidths other than the rods' 8 and 10 take the plain
    /// factorisation (`K` widened to `[0, n)`; [`Banded::inner`] says which was made). On an
    /// error the reported row is the failing pivot's, in this elimination order.
    pub fn factor_twisted_from(
        &mut self,
        a: &Banded,
        shift: f64,
        k0: usize,
        k1: usize,
    ) -> Result<(), NotPositiveDefinite> {
        assert!(
            self.n == a.n && self.b == a.b,
            "factor_from: shape mismatch"
        );
        assert!(
            k0 <= k1 && k1 <= self.n,
            "factor_twisted_from: bad interval"
        );
        match self.b {
            8 => self.factor_fixed::<8>(crate::math::avx2(), Some(a), shift, k0, k1),
            10 => self.factor_fixed::<10>(crate::math::avx2(), Some(a), shift, k0, k1),
            _ => {
                self.band.copy_from_slice(&a.band);
                if shift > 0.0 {
                    for i in 0..self.n {
                        let k = self.at(i, i);
                        self.band[k] += shift * a.band[k].abs();
                    }
                }
                self.inner = (0, self.n);
                self.factor_any()
            }
        }
    }

    /// [`Banded::factor_twisted_from`] for a symmetric matrix that may be indefinite: the same
    /// elimination (`L D Lᵀ` without pivoting, the same arithmetic), accepting negative pivots
    /// whose magnitude exceeds `floor · |A_jj|`. Returns the number of negative pivots, the
    /// matrix's negative eigenvalues (Sylvester's law of inertia; Golub & Van Loan 2013,
    /// Thm. 8.1.17). Without pivoting the factor's growth is bounded only by the pivots' floor,
    /// so a caller checks what it solves (docs/derivations/der-imc.md §F10). Bandwidths other
    /// than the rods' 8 and 10 are not supported (an error at row 0).
    pub fn factor_indefinite_from(
        &mut self,
        a: &Banded,
        shift: f64,
        k0: usize,
        k1: usize,
        floor: f64,
    ) -> Result<usize, NotPositiveDefinite> {
        assert!(
            floor > 0.0,
            "factor_indefinite_from: the pivots' floor must be positive"
        );
        if self.b != 8 && self.b != 10 {
            return Err(NotPositiveDefinite { row: 0 });
        }
        let w = self.b + 1;
        for (i, d) in self.inv.iter_mut().enumerate() {
            let a = a.band[i * w + w - 1];
            *d = (a + shift * a.abs()).abs();
        }
        self.pivot_floor = floor;
        self.negatives = 0;
        let r = self.factor_twisted_from(a, shift, k0, k1);
        self.pivot_floor = 0.0;
        r.map(|()| self.negatives)
    }

    /// The interval `[k0, k1)` the last factorisation was twisted around (`(0, n)`: plain).
    pub fn inner(&self) -> (usize, usize) {
        self.inner
    }

    /// The factorisation for a bandwidth known at compile time (the rods' `b = 8`), right-
    /// looking: once column `j` is final, its outer product is subtracted from the trailing
    /// `B × B` window. Those `B(B+1)/2` updates are independent of each other, so the critical
    /// path per row is one division and a multiply-subtract (a left-looking, dot-product
    /// Cholesky chains all `B(B+1)/2` subtractions plus a square root and ran 2–3× slower).
    /// Rows are read from `src` (or taken in place) as they enter the window, with `shift` on
    /// the diagonal. Twisted around `[k0, k1)`: pivots `0..k0` top down, `k1..n` bottom up,
    /// then `k0..k1` top down (the module documentation).
    ///
    /// Run in the copy compiled for AVX2 if `avx2` (the CPU must have it; callers pass
    /// [`crate::math::avx2`]), else in the baseline one: the same operations in the same order
    /// (no fused multiply-add), so the same bits, with the window's independent updates four
    /// to a register instead of two.
    fn factor_fixed<const B: usize>(
        &mut self,
        avx2: bool,
        src: Option<&Banded>,
        shift: f64,
        k0: usize,
        k1: usize,
    ) -> Result<(), NotPositiveDefinite> {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            assert!(crate::math::avx2(), "factor_fixed: this CPU has no AVX2");
            // SAFETY: the CPU has AVX2 (asserted above).
            #[allow(unsafe_code)] // calling the copy compiled for AVX2
            return unsafe { self.factor_fixed_avx2::<B>(src, shift, k0, k1) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = avx2;
        self.factor_fixed_any::<B>(src, shift, k0, k1)
    }

    /// [`Banded::factor_fixed_any`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn factor_fixed_avx2<const B: usize>(
        &mut self,
        src: Option<&Banded>,
        shift: f64,
        k0: usize,
        k1: usize,
    ) -> Result<(), NotPositiveDefinite> {
        self.factor_fixed_any::<B>(src, shift, k0, k1)
    }

    /// The body of [`Banded::factor_fixed`], inlined into each copy.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    fn factor_fixed_any<const B: usize>(
        &mut self,
        src: Option<&Banded>,
        shift: f64,
        k0: usize,
        k1: usize,
    ) -> Result<(), NotPositiveDefinite> {
        debug_assert_eq!(self.b, B);
        let w = B + 1;
        let n = self.n;
        self.inner = (k0, k1);
        let load = |band: &mut [f64], i: usize| {
            if let Some(a) = src {
                let row = &mut band[i * w..i * w + w];
                row.copy_from_slice(&a.band[i * w..i * w + w]);
                row[B] += shift * row[B].abs();
            }
        };
        let mut loaded = n.min(B);
        for i in 0..loaded {
            load(&mut self.band, i);
        }
        for j in 0..k0 {
            if j + B < n {
                load(&mut self.band, j + B);
                loaded = j + B + 1;
            }
            self.pivot_down::<B>(j, n)?;
        }
        if k1 < n {
            for i in loaded..n {
                load(&mut self.band, i);
            }
            loaded = n;
            for j in (k1..n).rev() {
                self.pivot_up::<B>(j, j.saturating_sub(B).max(k0))?;
            }
        }
        for j in k0..k1 {
            if j + B < n && j + B >= loaded {
                load(&mut self.band, j + B);
                loaded = j + B + 1;
            }
            self.pivot_down::<B>(j, k1)?;
        }
        Ok(())
    }

    /// `1 / D_j` of pivot `j` (stored for the substitutions), or the row where the matrix is
    /// not positive definite (a pivot ≤ 0, infinite or NaN).
    #[inline(always)]
    fn pivot_inverse<const B: usize>(&mut self, j: usize) -> Result<f64, NotPositiveDefinite> {
        let d = self.band[j * (B + 1) + B];
        if self.pivot_floor == 0.0 {
            // Also false for NaN.
            if !(d > 0.0 && d < f64::INFINITY) {
                return Err(NotPositiveDefinite { row: j });
            }
        } else {
            // `inv[j]` holds `|A_jj|` until the pivot is taken.
            if !(d.abs() > self.pivot_floor * self.inv[j] && d.abs() < f64::INFINITY) {
                return Err(NotPositiveDefinite { row: j });
            }
            if d < 0.0 {
                self.negatives += 1;
            }
        }
        let inv = 1.0 / d;
        self.inv[j] = inv;
        Ok(inv)
    }

    /// Pivot `j` of a top-down elimination whose uneliminated rows below `j` end before `end`:
    /// `1 / D_j`, column `j` scaled to `L`, and its outer product subtracted from the window.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    fn pivot_down<const B: usize>(
        &mut self,
        j: usize,
        end: usize,
    ) -> Result<(), NotPositiveDefinite> {
        let w = B + 1;
        let inv = self.pivot_inverse::<B>(j)?;
        // Column j below the diagonal: A[j+1+t][j] at row j+1+t, offset B-1-t. Scale it to
        // L and subtract L[·][j] D_j L[·][j]ᵀ = L[·][j] A[·][j]ᵀ from the window.
        let mut col = [0.0; B];
        if j + B < end {
            let win = &mut self.band[(j + 1) * w..(j + B + 1) * w];
            for t in 0..B {
                let k = t * w + B - 1 - t;
                col[t] = win[k];
                win[k] *= inv;
            }
            for t in 0..B {
                let lt = col[t] * inv;
                for u in 0..=t {
                    // A[j+1+t][j+1+u] at offset B - (t - u).
                    win[t * w + B - (t - u)] -= lt * col[u];
                }
            }
        } else {
            let m = end - 1 - j;
            for t in 0..m {
                let k = (j + 1 + t) * w + B - 1 - t;
                col[t] = self.band[k];
                self.band[k] *= inv;
            }
            for t in 0..m {
                let lt = col[t] * inv;
                for u in 0..=t {
                    self.band[(j + 1 + t) * w + B - (t - u)] -= lt * col[u];
                }
            }
        }
        Ok(())
    }

    /// Pivot `j` of the bottom-up elimination, whose uneliminated rows above `j` are `lo..j`:
    /// its column above the diagonal is row `j`'s band (`A[j][lo..j]`), scaled to the
    /// multipliers in place, and its outer product is subtracted from rows `lo..j`.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    fn pivot_up<const B: usize>(&mut self, j: usize, lo: usize) -> Result<(), NotPositiveDefinite> {
        let w = B + 1;
        let inv = self.pivot_inverse::<B>(j)?;
        let m = j - lo;
        let mut col = [0.0; B];
        if m == B {
            // The full window, rows j-B..=j, of a length known at compile time.
            let win = &mut self.band[(j - B) * w..(j + 1) * w];
            for t in 0..B {
                col[t] = win[B * w + t];
                win[B * w + t] *= inv;
            }
            for t in 0..B {
                let lt = col[t] * inv;
                for u in 0..=t {
                    // A[j-B+t][j-B+u] at offset B - (t - u).
                    win[t * w + B - (t - u)] -= lt * col[u];
                }
            }
            return Ok(());
        }
        let base = j * w + B - m;
        col[..m].copy_from_slice(&self.band[base..base + m]);
        self.band[base..base + m].iter_mut().for_each(|v| *v *= inv);
        for t in 0..m {
            let lt = col[t] * inv;
            // Row lo+t, columns lo..=lo+t at offsets B - t ..= B.
            let row = &mut self.band[(lo + t) * w + B - t..(lo + t) * w + w];
            for (r, c) in row.iter_mut().zip(&col[..=t]) {
                *r -= lt * c;
            }
        }
        Ok(())
    }

    /// Any bandwidth: left-looking `L D Lᵀ`, the reference for [`Banded::factor_fixed`].
    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    fn factor_any(&mut self) -> Result<(), NotPositiveDefinite> {
        let n = self.n;
        for i in 0..n {
            let j0 = i.saturating_sub(self.b);
            // Row i of L D (not yet divided by D): u_j = A[i][j] - Σ_{k<j} L[i][k] D_k L[j][k].
            for j in j0..=i {
                let mut s = self.band[self.at(i, j)];
                for k in j0..j {
                    let d = 1.0 / self.inv[k];
                    s -= self.band[self.at(i, k)] * d * self.band[self.at(j, k)];
                }
                let kk = self.at(i, j);
                if i == j {
                    if s.is_nan() || s <= 0.0 || !s.is_finite() {
                        return Err(NotPositiveDefinite { row: i });
                    }
                    self.band[kk] = s;
                    self.inv[i] = 1.0 / s;
                } else {
                    self.band[kk] = s * self.inv[j];
                }
            }
        }
        Ok(())
    }

    /// Solve `A x = rhs` in place, after a factorisation (twisted or not).
    pub fn solve(&self, x: &mut [f64]) {
        match self.b {
            8 => self.solve_fixed::<8>(x),
            10 => self.solve_fixed::<10>(x),
            _ => self.solve_any(x, 0),
        }
    }

    /// `(A⁻¹ rhs)_K` for a right-hand side supported in `K = [k0, k1)`, the interval the
    /// factorisation was twisted around ([`Banded::inner`]): `x` holds `K`'s entries
    /// (`x[i]` is row `k0 + i`, `x.len() = k1 - k0`), zero before `first`. Substitutions over
    /// `K` alone (`(A⁻¹)_KK` is the inverse of the Schur complement that `K`'s factor
    /// factors, docs/derivations/banded.md).
    pub fn solve_inner(&self, x: &mut [f64], first: usize) {
        let (k0, k1) = self.inner;
        assert_eq!(x.len(), k1 - k0, "solve_inner: length mismatch");
        debug_assert!(x[..first.min(x.len())].iter().all(|v| *v == 0.0));
        match self.b {
            8 => self.solve_inner_fixed::<8>(x, first),
            10 => self.solve_inner_fixed::<10>(x, first),
            _ => self.solve_any(x, first),
        }
    }

    /// [`Banded::solve_inner`] for `m` right-hand sides at once, interleaved: `xs[r * m + k]`
    /// is row `k0 + r` of side `k` (`xs.len() = m (k1 − k0)`), every side zero before row
    /// `k0 + first`. Every side gets the same operations in the same order as its own
    /// [`Banded::solve_inner`] (the same result, bit for bit: the rows a single solve skips
    /// carry zeros here), but row by row across all of them, in lanes side by side: the
    /// factor's rows are read once, and the substitutions' dependency chains, one per side,
    /// run in SIMD lanes instead of one after another (docs/performance.md: the Woodbury
    /// columns of self-contact).
    pub fn solve_inner_many(&self, xs: &mut [f64], m: usize, first: usize) {
        let len = self.inner.1 - self.inner.0;
        let firsts = vec![first.min(len); m];
        self.solve_inner_many_from(xs, m, &firsts, &vec![0; m]);
    }

    /// [`Banded::solve_inner_many`] with each side's own first nonzero row `firsts[k]` and the
    /// lowest row `needs[k]` its solution is wanted from (both relative to `k0`): rows before
    /// `needs[k]` are left unfinished. A block of sides in lanes starts its forward
    /// substitution at its sides' first `firsts` (the rows before carry zeros) and ends its
    /// backward one at their lowest `needs`: every wanted entry gets the operations
    /// [`Banded::solve_inner`] gives it, in its order, bit for bit (a row skipped ahead of a side's first is
    /// the `+0` the substitution would give it). What it saves depends on how
    /// the sides are ordered: for the Woodbury columns mostly the forward sweeps
    /// (docs/performance.md).
    pub fn solve_inner_many_from(
        &self,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
    ) {
        self.solve_inner_many_gapped(xs, m, firsts, needs, &mut Gaps::default());
    }

    /// [`Banded::solve_inner_many_from`] where every side is zero on the rows of each of
    /// `gaps`' spans and is not wanted there: the substitutions cross a span by its transfer
    /// maps ([`Gaps`]) instead of row by row, the same solution at every row outside the spans
    /// up to rounding (not bit for bit), rows inside them left unfinished. The spans must lie
    /// in `[b, len − b)` (relative to `k0`), and each side's `firsts` and `needs` outside them;
    /// bandwidths other than 8 and 10 ignore the spans.
    pub(crate) fn solve_inner_many_gapped(
        &self,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
        gaps: &mut Gaps,
    ) {
        self.solve_inner_many_on(crate::math::avx2(), xs, m, firsts, needs, gaps);
    }

    /// [`Banded::solve_inner_many_gapped`] in the copy compiled for AVX2 if `avx2` (the CPU
    /// must have it: [`crate::math::avx2`]), else in the baseline one; both give the same bits.
    pub(crate) fn solve_inner_many_on(
        &self,
        avx2: bool,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
        gaps: &mut Gaps,
    ) {
        let (k0, k1) = self.inner;
        assert_eq!(xs.len(), m * (k1 - k0), "solve_inner_many: length mismatch");
        assert!(firsts.len() == m && needs.len() == m);
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            assert!(
                crate::math::avx2(),
                "solve_inner_many: this CPU has no AVX2"
            );
            // SAFETY: the CPU has AVX2 (asserted above).
            #[allow(unsafe_code)] // calling the copy compiled for AVX2
            unsafe {
                self.solve_inner_many_avx2(xs, m, firsts, needs, gaps)
            };
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = avx2;
        self.solve_inner_many_any(xs, m, firsts, needs, gaps);
    }

    /// [`Banded::solve_inner_many_any`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn solve_inner_many_avx2(
        &self,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
        gaps: &mut Gaps,
    ) {
        self.solve_inner_many_any(xs, m, firsts, needs, gaps);
    }

    /// The body of [`Banded::solve_inner_many_on`], inlined into each copy.
    #[inline(always)]
    fn solve_inner_many_any(
        &self,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
        gaps: &mut Gaps,
    ) {
        let len = self.inner.1 - self.inner.0;
        match self.b {
            8 => self.solve_inner_many_fixed::<8>(xs, m, firsts, needs, gaps),
            10 => self.solve_inner_many_fixed::<10>(xs, m, firsts, needs, gaps),
            _ => {
                let mut x = vec![0.0; len];
                for k in 0..m {
                    x.iter_mut()
                        .enumerate()
                        .for_each(|(r, v)| *v = xs[r * m + k]);
                    self.solve_inner(&mut x, firsts[k].min(len));
                    x.iter().enumerate().for_each(|(r, v)| xs[r * m + k] = *v);
                }
            }
        }
    }

    #[inline(always)]
    fn solve_inner_many_fixed<const B: usize>(
        &self,
        xs: &mut [f64],
        m: usize,
        firsts: &[usize],
        needs: &[usize],
        gaps: &mut Gaps,
    ) {
        /// Sides per block of lanes.
        const L: usize = 8;
        let (k0, k1) = self.inner;
        let len = k1 - k0;
        let w = B + 1;
        // Side k's value at row r (relative to k0).
        let at = |r: usize, k: usize| r * m + k;
        // The blocks of lanes (L sides each, the last the rest, and past 71 blocks one block
        // of all the remaining sides): their first side and count, the first row any of them
        // is nonzero at, the lowest row any of them is wanted from.
        let mut blocks = [(0, 0, 0, 0); 72];
        let (mut nb, mut k) = (0, 0);
        while k < m {
            let n = if nb + 1 == blocks.len() {
                m - k
            } else {
                L.min(m - k)
            };
            let lo = firsts[k..k + n].iter().copied().min().unwrap_or(len);
            let need = needs[k..k + n].iter().copied().min().unwrap_or(0);
            blocks[nb] = (k, n, lo.min(len), need);
            nb += 1;
            k += n;
        }
        let first = blocks[..nb].iter().map(|b| b.2).min().unwrap_or(len);
        // Forward: `forward_rows(x, k0, k0 + first, k1, k0)`, row by row across the sides.
        let lo = k0 + first;
        let head = k1.min(k0 + B).max(lo);
        for i in lo..head {
            // `dot`'s four partial sums, side by side.
            let row = self.row(i, k0, i);
            let n = row.len();
            for k in (0..m).filter(|&k| firsts[k] <= i - k0) {
                let mut s4 = [0.0; 4];
                for c in 0..n / 4 {
                    for q in 0..4 {
                        s4[q] += row[4 * c + q] * xs[at(4 * c + q, k)];
                    }
                }
                let mut t = (s4[0] + s4[1]) + (s4[2] + s4[3]);
                for j in n - n % 4..n {
                    t += row[j] * xs[at(j, k)];
                }
                xs[at(i - k0, k)] -= t;
            }
        }
        gaps.prepare::<B>(self, m);
        let mut next_gap = 0;
        let mut i = lo.max(head);
        while i < k1 {
            if let Some(&(g0, g1)) = gaps.spans.get(next_gap)
                && i >= k0 + g0
            {
                next_gap += 1;
                if i == k0 + g0 {
                    gaps.forward::<B>(next_gap - 1, xs, m, &blocks[..nb]);
                    i = k0 + g1;
                    continue;
                }
            }
            let row = &self.band[i * w..i * w + w];
            let r0 = i - B - k0;
            let (before, from) = xs.split_at_mut(at(i - k0, 0));
            let window = &before[at(r0, 0)..];
            let xi = &mut from[..m];
            for &(k, n, _, _) in blocks[..nb].iter().filter(|b| b.2 <= i - k0) {
                lanes_block::<B, L>(row, 0, B - 1, window, m, k, n, xi);
            }
            i += 1;
        }
        for r in first.min(len)..len {
            let d = self.inv[k0 + r];
            xs[at(r, 0)..at(r, 0) + m].iter_mut().for_each(|v| *v *= d);
        }
        // Backward: `backward_rows(x, k0, k0, k1, k1)`, each block down to the lowest row it
        // is wanted from.
        let split = k1.saturating_sub(B).clamp(k0, k1);
        for i in (split..k1).rev() {
            let r = i - k0;
            let (upto, below) = xs.split_at_mut(at(r + 1, 0));
            let xi = &mut upto[at(r, 0)..];
            for rr in i + 1..k1 {
                let l = self.band[rr * w + B - (rr - i)];
                let xr = &below[at(rr - i - 1, 0)..at(rr - i - 1, 0) + m];
                for (v, x) in xi.iter_mut().zip(xr) {
                    *v -= l * x;
                }
            }
        }
        let mut gap = gaps.spans.len();
        let mut i = split;
        while i > k0 {
            i -= 1;
            let r = i - k0;
            if gap > 0 && r < gaps.spans[gap - 1].1 {
                gap -= 1;
                let (g0, g1) = gaps.spans[gap];
                if r + 1 == g1 {
                    gaps.backward::<B>(gap, xs, m, &blocks[..nb]);
                    i = k0 + g0;
                    continue;
                }
            }
            let below = &self.band[(i + 1) * w..(i + B + 1) * w];
            let (upto, after) = xs.split_at_mut(at(r + 1, 0));
            let xi = &mut upto[at(r, 0)..];
            // Column i of L below the diagonal: L[i + t][i] for t = 0..B.
            let mut col = [0.0; B];
            for (t, c) in col.iter_mut().enumerate() {
                *c = below[t * w + B - 1 - t];
            }
            let xi = &mut xi[..m];
            for &(k, n, _, _) in blocks[..nb].iter().filter(|b| b.3 <= r) {
                lanes_block::<B, L>(&col, 1, 0, after, m, k, n, xi);
            }
        }
    }

    /// [`Banded::solve`] for a right-hand side supported in `[start, k1)`, `start ≥ k0` (inside
    /// the interval the factorisation was twisted around): the eliminations of the rows
    /// outside `K`, which only carry zeros, are skipped.
    pub fn solve_from_inner(&self, x: &mut [f64], start: usize) {
        let (k0, k1) = self.inner;
        assert!(start >= k0, "solve_from_inner: start before the interval");
        debug_assert!(
            x[..start.min(x.len())].iter().all(|v| *v == 0.0)
                && x[k1..self.n].iter().all(|v| *v == 0.0)
        );
        match self.b {
            8 => self.solve_from_inner_fixed::<8>(x, start),
            10 => self.solve_from_inner_fixed::<10>(x, start),
            _ => self.solve_any(x, start),
        }
    }

    /// Forward substitution rows `lo..hi` of `L` (top-down pivots): `x_i −= Σ L[i][j] x_j` over
    /// `j ∈ [max(i − B, col_lo), i)`; `x[i - base]` holds row `i`.
    #[inline(always)]
    fn forward_rows<const B: usize>(
        &self,
        x: &mut [f64],
        base: usize,
        lo: usize,
        hi: usize,
        col_lo: usize,
    ) {
        let w = B + 1;
        // The first B rows after col_lo have fewer entries; the rest are full.
        let head = hi.min(col_lo + B).max(lo);
        for i in lo..head {
            x[i - base] -= dot(self.row(i, col_lo, i), &x[col_lo - base..i - base]);
        }
        let first = lo.max(head);
        let mut last = if first > base {
            x[first - 1 - base]
        } else {
            0.0
        };
        for i in first..hi {
            let row = &self.band[i * w..i * w + w];
            let xs = &x[i - B - base..i - base];
            // Two partial sums for the terms that do not depend on y[i-1], then the one that
            // does (kept in a register): the dependency chain per row is one multiply-subtract.
            let (mut a0, mut a1) = (0.0, 0.0);
            for o in (0..B - 1).step_by(2) {
                a0 += row[o] * xs[o];
                if o + 1 < B - 1 {
                    a1 += row[o + 1] * xs[o + 1];
                }
            }
            last = (x[i - base] - (a0 + a1)) - row[B - 1] * last;
            x[i - base] = last;
        }
    }

    /// Back substitution rows `hi − 1` down to `lo` of `Lᵀ` (top-down pivots, eliminated
    /// before the rows `< end` below them): `x_i −= Σ_r L[r][i] x_r` over
    /// `r ∈ (i, min(i + B, end − 1)]`, reading column `i` of `L` down the rows below (stride
    /// `b`); `x[i - base]` holds row `i`.
    #[inline(always)]
    fn backward_rows<const B: usize>(
        &self,
        x: &mut [f64],
        base: usize,
        lo: usize,
        hi: usize,
        end: usize,
    ) {
        let w = B + 1;
        let split = end.saturating_sub(B).clamp(lo, hi);
        for i in (split..hi).rev() {
            let mut s = x[i - base];
            for r in i + 1..end {
                s -= self.band[r * w + B - (r - i)] * x[r - base];
            }
            x[i - base] = s;
        }
        // x_{i+1} is the only term on the dependency chain.
        let mut next = if split < end { x[split - base] } else { 0.0 };
        for i in (lo..split).rev() {
            let below = &self.band[(i + 1) * w..(i + B + 1) * w];
            let xs = &x[i + 1 - base..i + B + 1 - base];
            let (mut a0, mut a1) = (0.0, 0.0);
            for t in (1..B).step_by(2) {
                a0 += below[t * w + B - 1 - t] * xs[t];
                if t + 1 < B {
                    a1 += below[(t + 1) * w + B - 2 - t] * xs[t + 1];
                }
            }
            next = (x[i - base] - (a0 + a1)) - below[B - 1] * next;
            x[i - base] = next;
        }
    }

    /// The back substitution of the bottom-up rows `k1..n`, in the reverse of their
    /// elimination order (after `K`'s): `x_p −= Σ L'[r][p] x_r` over the rows `r ∈ [max(p − B,
    /// k0), p)` eliminated after `p`, row `p`'s own band: the same sums over the same slots as
    /// a forward substitution of those rows.
    #[inline(always)]
    fn backward_bottom<const B: usize>(&self, x: &mut [f64]) {
        let (k0, k1) = self.inner;
        self.forward_rows::<B>(x, 0, k1, self.n, k0);
    }

    fn solve_fixed<const B: usize>(&self, x: &mut [f64]) {
        let w = B + 1;
        let n = self.n;
        let (k0, k1) = self.inner;
        assert!(x.len() >= n && self.band.len() >= n * w);
        // L y = rhs in the elimination order: the top rows, then the bottom rows (bottom up,
        // each pushing its multipliers onto the rows above it that are eliminated after it),
        // then K.
        self.forward_rows::<B>(x, 0, 0, k0, 0);
        for p in (k1..n).rev() {
            let j0 = p.saturating_sub(B);
            if j0 < k0 {
                x[p] -= dot(self.row(p, j0, k0), &x[j0..k0]);
            }
            let lo = j0.max(k0);
            let yp = x[p];
            if p - lo == B {
                let (row, xs) = (&self.band[p * w..p * w + B], &mut x[lo..p]);
                for t in 0..B {
                    xs[t] -= row[t] * yp;
                }
            } else {
                for (xr, l) in x[lo..p].iter_mut().zip(self.row(p, lo, p)) {
                    *xr -= l * yp;
                }
            }
        }
        self.forward_rows::<B>(x, 0, k0, k1, 0);
        // D z = y.
        for (v, d) in x[..n].iter_mut().zip(&self.inv) {
            *v *= d;
        }
        // Lᵀ x = z in the reverse order: K, the bottom rows top down, the top rows.
        self.backward_rows::<B>(x, 0, k0, k1, k1);
        self.backward_bottom::<B>(x);
        self.backward_rows::<B>(x, 0, 0, k0, n);
    }

    fn solve_inner_fixed<const B: usize>(&self, x: &mut [f64], first: usize) {
        let (k0, k1) = self.inner;
        // The rows outside K carry zeros: y and z vanish there, and K's rows see only K.
        self.forward_rows::<B>(x, k0, k0 + first, k1, k0);
        for (v, d) in x[first..].iter_mut().zip(&self.inv[k0 + first..k1]) {
            *v *= d;
        }
        self.backward_rows::<B>(x, k0, k0, k1, k1);
    }

    fn solve_from_inner_fixed<const B: usize>(&self, x: &mut [f64], start: usize) {
        let (k0, k1) = self.inner;
        self.forward_rows::<B>(x, 0, start, k1, k0);
        for (v, d) in x[start..k1].iter_mut().zip(&self.inv[start..k1]) {
            *v *= d;
        }
        self.backward_rows::<B>(x, 0, k0, k1, k1);
        self.backward_bottom::<B>(x);
        self.backward_rows::<B>(x, 0, 0, k0, self.n);
    }

    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    fn solve_any(&self, x: &mut [f64], start: usize) {
        let n = self.n;
        for i in start.min(n)..n {
            let j0 = i.saturating_sub(self.b);
            x[i] -= dot(self.row(i, j0, i), &x[j0..i]);
        }
        for (v, d) in x[..n].iter_mut().zip(&self.inv) {
            *v *= d;
        }
        for i in (0..n).rev() {
            let xi = x[i];
            let j0 = i.saturating_sub(self.b);
            for (xk, l) in x[j0..i].iter_mut().zip(self.row(i, j0, i)) {
                *xk -= l * xi;
            }
        }
    }
}

/// Spans of rows a multi-side solve crosses by transfer maps ([`Banded::solve_inner_many_gapped`]):
/// between two clusters of contact terms, the Woodbury columns are zero and not wanted
/// (docs/derivations/banded.md §5). Over such a span `[g0, g1)` the forward
/// substitution carries the `b` values above it, `w = x[g0 − b, g0)`, to the `b` values that
/// end it, `x[g1 − b, g1) = F w`; the backward one carries the `b` values below it,
/// `y[g1, g1 + b)`, and `w` (through the forward values inside, scaled by `D⁻¹`) to the `b`
/// values that start it, `y[g0, g0 + b) = P y[g1, g1 + b) + Q w`. `F`, `P` and `Q` (`b × b`)
/// are the substitutions applied to unit vectors, `3 b²` lanes per row of the span once, then
/// `3 b²` per side instead of `2 b` per side per row. Buffers grow to the largest use and are
/// kept.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gaps {
    /// The spans `[g0, g1)`, relative to the factor's `k0`, in increasing order.
    spans: Vec<(usize, usize)>,
    /// Per span: `F`, `P`, `Q`, each `b × b` row-major (entry `(a, j)` at `a b + j`).
    maps: Vec<f64>,
    /// Per span: every side's `w` (row `j` of side `q` at `j m + q`).
    entry: Vec<f64>,
    /// The forward and backward substitutions of the unit vectors.
    work_f: Vec<f64>,
    work_b: Vec<f64>,
}

impl Gaps {
    /// No spans.
    pub fn clear(&mut self) {
        self.spans.clear();
    }

    /// The spans.
    #[cfg(test)]
    pub fn spans(&self) -> &[(usize, usize)] {
        &self.spans
    }

    /// Add the span `[g0, g1)` (after the previous ones).
    pub fn push(&mut self, g0: usize, g1: usize) {
        debug_assert!(g0 < g1 && self.spans.last().is_none_or(|s| s.1 <= g0));
        self.spans.push((g0, g1));
    }

    /// Form each span's maps from the factor `chol` (twisted around `K`) and zero the sides'
    /// entry values (a span every side starts after is crossed with `w = 0`).
    #[inline(always)]
    fn prepare<const B: usize>(&mut self, chol: &Banded, m: usize) {
        let (k0, k1) = chol.inner;
        let w = B + 1;
        self.maps.clear();
        self.maps.resize(self.spans.len() * 3 * B * B, 0.0);
        self.entry.clear();
        self.entry.resize(self.spans.len() * B * m, 0.0);
        for (s, &(g0, g1)) in self.spans.iter().enumerate() {
            assert!(
                g0 >= B && g1 + B <= k1 - k0 && g0 < g1,
                "gaps: span outside [b, len - b)"
            );
            let g = g1 - g0;
            // Forward from the unit windows: row r at absolute k0 + g0 − B + r, B lanes.
            let f = &mut self.work_f;
            f.clear();
            f.resize((g + B) * B, 0.0);
            for j in 0..B {
                f[j * B + j] = 1.0;
            }
            for r in B..g + B {
                let i = k0 + g0 - B + r;
                let (above, row) = f.split_at_mut(r * B);
                let row = &mut row[..B];
                for t in 1..=B {
                    let l = chol.band[i * w + B - t];
                    let x = &above[(r - t) * B..(r - t + 1) * B];
                    for (v, x) in row.iter_mut().zip(x) {
                        *v -= l * x;
                    }
                }
            }
            let maps = &mut self.maps[s * 3 * B * B..(s + 1) * 3 * B * B];
            for a in 0..B {
                for j in 0..B {
                    maps[a * B + j] = f[(g + a) * B + j];
                }
            }
            // Backward: row q at absolute k0 + g0 + q, 2B lanes (P's unit windows below the
            // span, then Q's forward values inside it).
            let b2 = 2 * B;
            let y = &mut self.work_b;
            y.clear();
            y.resize((g + B) * b2, 0.0);
            for j in 0..B {
                y[(g + j) * b2 + j] = 1.0;
            }
            for q in (0..g).rev() {
                let i = k0 + g0 + q;
                let d = chol.inv[i];
                let (row, below) = y.split_at_mut((q + 1) * b2);
                let row = &mut row[q * b2..];
                for (v, x) in row[B..].iter_mut().zip(&f[(q + B) * B..(q + B + 1) * B]) {
                    *v = x * d;
                }
                for t in 1..=B {
                    let l = chol.band[(i + t) * w + B - t];
                    let x = &below[(t - 1) * b2..t * b2];
                    for (v, x) in row.iter_mut().zip(x) {
                        *v -= l * x;
                    }
                }
            }
            for a in 0..B {
                for j in 0..B {
                    maps[B * B + a * B + j] = y[a * b2 + j];
                    maps[2 * B * B + a * B + j] = y[a * b2 + B + j];
                }
            }
        }
    }

    /// Cross span `s` forward: keep every side's `w`, and give the sides of each block that
    /// starts before the span (`blocks`: first side, count, first row, lowest wanted row) their
    /// values `F w` at the span's last `B` rows.
    #[inline(always)]
    fn forward<const B: usize>(
        &mut self,
        s: usize,
        xs: &mut [f64],
        m: usize,
        blocks: &[(usize, usize, usize, usize)],
    ) {
        let (g0, g1) = self.spans[s];
        let entry = &mut self.entry[s * B * m..(s + 1) * B * m];
        entry.copy_from_slice(&xs[(g0 - B) * m..g0 * m]);
        let f = &self.maps[s * 3 * B * B..s * 3 * B * B + B * B];
        for &(k, n, _, _) in blocks.iter().filter(|b| b.2 < g0) {
            for a in 0..B {
                let out = &mut xs[(g1 - B + a) * m + k..(g1 - B + a) * m + k + n];
                out.fill(0.0);
                for j in 0..B {
                    let c = f[a * B + j];
                    for (v, x) in out.iter_mut().zip(&entry[j * m + k..j * m + k + n]) {
                        *v += c * x;
                    }
                }
            }
        }
    }

    /// Cross span `s` backward: the sides of each block wanted above the span get their values
    /// `P y + Q w` at its first `B` rows.
    #[inline(always)]
    fn backward<const B: usize>(
        &self,
        s: usize,
        xs: &mut [f64],
        m: usize,
        blocks: &[(usize, usize, usize, usize)],
    ) {
        let (g0, g1) = self.spans[s];
        let entry = &self.entry[s * B * m..(s + 1) * B * m];
        let maps = &self.maps[s * 3 * B * B..(s + 1) * 3 * B * B];
        let (p, q) = (&maps[B * B..2 * B * B], &maps[2 * B * B..]);
        let (upper, lower) = xs.split_at_mut(g1 * m);
        for &(k, n, _, _) in blocks.iter().filter(|b| b.3 < g0) {
            for a in 0..B {
                let out = &mut upper[(g0 + a) * m + k..(g0 + a) * m + k + n];
                out.fill(0.0);
                for j in 0..B {
                    let c = p[a * B + j];
                    for (v, x) in out.iter_mut().zip(&lower[j * m + k..j * m + k + n]) {
                        *v += c * x;
                    }
                }
                for j in 0..B {
                    let c = q[a * B + j];
                    for (v, x) in out.iter_mut().zip(&entry[j * m + k..j * m + k + n]) {
                        *v += c * x;
                    }
                }
            }
        }
    }
}

/// [`lanes_update`] for the `n` sides from `k`: `L` lanes at a time, then one by one.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // lanes_update's, and the block's extent
fn lanes_block<const B: usize, const L: usize>(
    c: &[f64],
    f: usize,
    last: usize,
    window: &[f64],
    m: usize,
    k: usize,
    n: usize,
    xi: &mut [f64],
) {
    let mut q = k;
    while q + L <= k + n {
        lanes_update::<B, L>(c, f, last, window, m, q, &mut xi[q..q + L]);
        q += L;
    }
    while q < k + n {
        lanes_update::<B, 1>(c, f, last, window, m, q, &mut xi[q..q + 1]);
        q += 1;
    }
}

/// One row of [`Banded::solve_inner_many`]'s substitutions for the `N` sides from `k`, with
/// `forward_rows`' and `backward_rows`' arithmetic in lanes: two partial sums over the
/// `B − 1` terms `c[f + j] · x_{f + j}` (`j` even into the first, odd into the second), then
/// `xi ← (xi − (a0 + a1)) − c[last] · x_last`, row `r` of the sides at `window[r m + k ..]`.
/// Forward: `c` the row of `L`, `window` from the row `B` above, `f = 0`, `last = B − 1`;
/// backward: `c` the column of `L` below the diagonal (`c[t] = L[i + t][i]`), `window` from
/// the row below, `f = 1`, `last = 0`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the row's coefficients, its sides and its shape
fn lanes_update<const B: usize, const N: usize>(
    c: &[f64],
    f: usize,
    last: usize,
    window: &[f64],
    m: usize,
    k: usize,
    xi: &mut [f64],
) {
    let lane = |r: usize| -> &[f64; N] { window[r * m + k..r * m + k + N].try_into().unwrap() };
    let (mut a0, mut a1) = ([0.0; N], [0.0; N]);
    for j in (0..B - 1).step_by(2) {
        let x = lane(f + j);
        for l in 0..N {
            a0[l] += c[f + j] * x[l];
        }
        if j + 1 < B - 1 {
            let x = lane(f + j + 1);
            for l in 0..N {
                a1[l] += c[f + j + 1] * x[l];
            }
        }
    }
    let x = lane(last);
    let xi: &mut [f64; N] = xi.try_into().unwrap();
    for l in 0..N {
        xi[l] = (xi[l] - (a0[l] + a1[l])) - c[last] * x[l];
    }
}

/// A fixed-seed LCG's uniform numbers in [−0.5, 0.5) (test matrices here and in
/// rod::implicit::potential).
#[cfg(test)]
pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max)
    }

    /// How far `f`'s solve of `(A + μ diag|A|) x = b` is from `x` [max abs], for a known `x`
    /// (`f` a factor of `a` shifted by `mu`).
    fn shifted_solve_error(a: &Banded, mu: f64, f: &Banded) -> f64 {
        let n = a.size();
        let mut shifted = a.clone();
        for i in 0..n {
            shifted.add_diagonal(i, mu * a.get(i, i).abs());
        }
        let x: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
        let mut rhs = vec![0.0; n];
        shifted.mul(&x, &mut rhs);
        f.solve(&mut rhs);
        max_abs_diff(&x, &rhs)
    }

    /// A random SPD banded matrix: diagonally dominant with a fixed-seed LCG.
    fn random(n: usize, b: usize, seed: u64) -> Banded {
        let mut rnd = uniform(seed);
        let mut a = Banded::new(n, b);
        for i in 0..n {
            for j in i.saturating_sub(b)..i {
                a.add_lower(i, j, rnd());
            }
        }
        for i in 0..n {
            a.add_diagonal(i, 2.0 * b as f64 + 1.0 + rnd());
        }
        a
    }

    #[test]
    fn solve_inverts_multiply() {
        for (n, b) in [
            (1, 0),
            (5, 2),
            (3, 8),
            (27, 8),
            (100, 8),
            (9, 20),
            (4, 10),
            (93, 10),
        ] {
            let a = random(n, b, 7 + n as u64);
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut rhs = vec![0.0; n];
            a.mul(&x, &mut rhs);
            let mut f = a.clone();
            f.factor().expect("SPD");
            f.solve(&mut rhs);
            let err = max_abs_diff(&x, &rhs);
            assert!(err < 1e-13, "n {n} b {b}: {err}");
        }
    }

    #[test]
    fn pinned_rows_keep_their_value_and_decouple() {
        let mut a = random(30, 8, 3);
        a.pin(0);
        a.pin(17);
        a.pin(29);
        let mut rhs: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let mut f = a.clone();
        f.factor().expect("SPD");
        f.solve(&mut rhs);
        for i in [0, 17, 29] {
            assert!((rhs[i] - i as f64).abs() < 1e-13);
        }
        for j in 0..30 {
            if j != 17 {
                assert_eq!(a.get(17, j), 0.0);
            }
        }
    }

    #[test]
    fn indefinite_matrix_is_reported() {
        let mut a = Banded::new(3, 1);
        a.add_diagonal(0, 1.0);
        a.add_diagonal(1, 1.0);
        a.add_diagonal(2, 1.0);
        a.add_lower(1, 0, 2.0);
        assert_eq!(a.factor(), Err(NotPositiveDefinite { row: 1 }));
    }

    #[test]
    fn block_adds_match_entrywise_adds() {
        let mut a = Banded::new(20, 8);
        let mut b = Banded::new(20, 8);
        let m9 = SMatrix::<f64, 9, 9>::from_fn(|i, j| (i.max(j) * 10 + i.min(j)) as f64);
        let m3 = SMatrix::<f64, 3, 3>::from_fn(|i, j| (i * 3 + j) as f64 + 0.5);
        a.add_dense(6, &m9);
        a.add_block3(15, 9, &m3);
        for i in 0..9 {
            for j in 0..=i {
                b.add_lower(6 + i, 6 + j, m9[(i, j)]);
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                b.add_lower(15 + i, 9 + j, m3[(i, j)]);
            }
        }
        for i in 0..20 {
            for j in 0..20 {
                assert_eq!(a.get(i, j), b.get(i, j), "({i}, {j})");
            }
        }
    }

    #[test]
    fn many_right_hand_sides_solve_as_each_alone_bit_for_bit() {
        // The Woodbury columns' multi-right-hand-side solve against one `solve_inner` per
        // side: the same floating-point operations, so the same bits (sides with zeros past
        // the shared `first`, as the self-contact terms have), for both fixed bandwidths and
        // intervals shorter and longer than the band.
        for (b, n) in [(8, 60), (10, 70)] {
            let a = random(n, b, 3);
            for (k0, k1) in [(0, n), (12, 44), (20, 26), (30, n)] {
                let mut f = Banded::new(n, b);
                f.factor_twisted_from(&a, 0.0, k0, k1).expect("SPD");
                let len = k1 - k0;
                let mut rnd = uniform(7);
                for (first, sides) in [(0, 5), (len / 3, 5), (0, 19), (0, 530)] {
                    let mut many = vec![0.0; sides * len];
                    for (k, x) in many.chunks_exact_mut(len).enumerate() {
                        // Side k is zero before first + 2k (at most the end).
                        let z = (first + 2 * k).min(len - 1);
                        x[z..].iter_mut().for_each(|v| *v = rnd());
                    }
                    let mut alone = many.clone();
                    for (k, x) in alone.chunks_exact_mut(len).enumerate() {
                        f.solve_inner(x, (first + 2 * k).min(len - 1));
                    }
                    // Interleaved: row r of side k at r · sides + k.
                    let mut lanes = vec![0.0; sides * len];
                    for (k, x) in many.chunks_exact(len).enumerate() {
                        for (r, v) in x.iter().enumerate() {
                            lanes[r * sides + k] = *v;
                        }
                    }
                    let mut own = lanes.clone();
                    f.solve_inner_many(&mut lanes, sides, first);
                    for (k, x) in alone.chunks_exact(len).enumerate() {
                        for (r, q) in x.iter().enumerate() {
                            let p = lanes[r * sides + k];
                            assert_eq!(
                                p.to_bits(),
                                q.to_bits(),
                                "b {b} K [{k0}, {k1}) first {first}: side {k} row {r}, {p} vs {q}"
                            );
                        }
                    }
                    // Each side from its own first row, wanted from a row of its own (every
                    // third side from its first, the others from rows before and after it).
                    let firsts: Vec<usize> =
                        (0..sides).map(|k| (first + 2 * k).min(len - 1)).collect();
                    let needs: Vec<usize> = (0..sides)
                        .map(|k| match k % 3 {
                            0 => firsts[k],
                            1 => firsts[k] / 2,
                            _ => (firsts[k] + 3).min(len - 1),
                        })
                        .collect();
                    f.solve_inner_many_from(&mut own, sides, &firsts, &needs);
                    for (k, x) in alone.chunks_exact(len).enumerate() {
                        for (r, q) in x.iter().enumerate().skip(needs[k]) {
                            let p = own[r * sides + k];
                            assert_eq!(
                                p.to_bits(),
                                q.to_bits(),
                                "b {b} K [{k0}, {k1}) own firsts: side {k} row {r}, {p} vs {q}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gapped_solve_matches_each_side_alone_outside_the_gaps() {
        // The transfer maps across spans where every side is zero and unwanted, against one
        // `solve_inner` per side: the same solution at every row outside the spans from each
        // side's lowest wanted row, to rounding (measured ≤ 7e-17 of the largest entry; the
        // bound 1e-13). The kernel's baseline and AVX2 copies give the same bits. Both fixed bandwidths, one and two spans, sides starting before,
        // between and after them, wanted from above or below them.
        for (b, n) in [(8, 130), (10, 140)] {
            let a = random(n, b, 5);
            let (k0, k1) = (12, n - 7);
            let mut f = Banded::new(n, b);
            f.factor_twisted_from(&a, 0.0, k0, k1).expect("SPD");
            let len = k1 - k0;
            for spans in [vec![(b + 14, 70)], vec![(b, b + 30), (62, len - b)]] {
                let inside = |r: usize| spans.iter().any(|&(g0, g1)| r >= g0 && r < g1);
                let outside: Vec<usize> = (0..len).filter(|&r| !inside(r)).collect();
                let mut rnd = uniform(11);
                let sides = 37;
                let firsts: Vec<usize> = (0..sides)
                    .map(|k| outside[(k * 7) % (outside.len() - 3)])
                    .collect();
                let needs: Vec<usize> = (0..sides)
                    .map(|k| {
                        if k % 4 == 1 {
                            outside[k % 5]
                        } else {
                            firsts[k]
                        }
                    })
                    .collect();
                let mut alone = vec![0.0; sides * len];
                for (k, x) in alone.chunks_exact_mut(len).enumerate() {
                    for (r, v) in x.iter_mut().enumerate().skip(firsts[k]) {
                        if !inside(r) {
                            *v = rnd();
                        }
                    }
                }
                let mut lanes = vec![0.0; sides * len];
                for (k, x) in alone.chunks_exact(len).enumerate() {
                    for (r, v) in x.iter().enumerate() {
                        lanes[r * sides + k] = *v;
                    }
                }
                for (k, x) in alone.chunks_exact_mut(len).enumerate() {
                    f.solve_inner(x, firsts[k]);
                }
                let mut gaps = Gaps::default();
                for &(g0, g1) in &spans {
                    gaps.push(g0, g1);
                }
                // Each copy of the kernel (baseline, and AVX2 where the CPU has it) from the
                // same sides: the same bits everywhere.
                let copies: Vec<Vec<f64>> = [false, true]
                    .into_iter()
                    .filter(|&avx2| !avx2 || crate::math::avx2())
                    .map(|avx2| {
                        let mut l = lanes.clone();
                        f.solve_inner_many_on(avx2, &mut l, sides, &firsts, &needs, &mut gaps);
                        l
                    })
                    .collect();
                f.solve_inner_many_gapped(&mut lanes, sides, &firsts, &needs, &mut gaps);
                for c in &copies {
                    let same = c
                        .iter()
                        .zip(&lanes)
                        .all(|(p, q)| p.to_bits() == q.to_bits());
                    assert!(same, "b {b} spans {spans:?}: the kernel's copies differ");
                }
                if !crate::math::avx2() {
                    eprintln!("this CPU has no AVX2: only the baseline copy was compared");
                }
                let scale = alone.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                let mut worst = 0.0f64;
                for (k, x) in alone.chunks_exact(len).enumerate() {
                    for r in (needs[k]..len).filter(|&r| !inside(r)) {
                        worst = worst.max((lanes[r * sides + k] - x[r]).abs() / scale);
                    }
                }
                assert!(worst < 1e-13, "b {b} spans {spans:?}: {worst:e}");
            }
        }
    }

    #[test]
    fn fixed_bandwidth_factor_matches_general_and_shift_recovers() {
        // b = 8 and 10 (Cosserat, DER) take the right-looking kernel; each is checked against
        // the reference left-looking one.
        for b in [8, 10] {
            let a = random(50, b, 11);
            let mut f1 = Banded::new(50, b);
            f1.factor_from(&a, 0.0).expect("SPD");
            let mut f2 = a.clone();
            f2.factor_any().expect("SPD");
            for i in 0..50usize {
                for j in i.saturating_sub(b)..=i {
                    assert!(
                        (f1.get(i, j) - f2.get(i, j)).abs() < 1e-13,
                        "b {b} ({i}, {j})"
                    );
                }
            }
        }
        // An indefinite b = 8 matrix fails at the right row and a shift makes it definite.
        let mut bad = random(30, 8, 5);
        bad.add_diagonal(12, -40.0);
        let mut f = Banded::new(30, 8);
        assert!(matches!(
            f.factor_from(&bad, 0.0),
            Err(NotPositiveDefinite { row: 12 })
        ));
        assert!(f.factor_from(&bad, 10.0).is_ok());
        // The source is untouched and the factor is of A + μ diag|A|.
        let err = shifted_solve_error(&bad, 10.0, &f);
        assert!(err < 1e-12, "{err}");
    }

    /// The factor compiled for AVX2 gives the baseline copy's bits: plain and twisted,
    /// shifted, and indefinite with negative pivots (the same count), at both rod bandwidths;
    /// and fails at the same row where the matrix is not definite.
    #[test]
    fn the_factor_compiled_for_avx2_is_the_baseline_bit_for_bit() {
        if !crate::math::avx2() {
            eprintln!("no AVX2 on this CPU: only the baseline copy runs");
            return;
        }
        let mut compared = 0;
        for b in [8, 10] {
            for (seed, n) in [(3u64, 60usize), (4, 97)] {
                let a = random(n, b, seed);
                // Indefinite for the floor's path: two strongly negative diagonal entries.
                let mut indefinite = a.clone();
                indefinite.add_diagonal(n / 3, -3.0 * indefinite.get(n / 3, n / 3).abs());
                indefinite
                    .add_diagonal(2 * n / 3, -3.0 * indefinite.get(2 * n / 3, 2 * n / 3).abs());
                for (k0, k1) in [(0, n), (n / 4, n / 2), (n / 2, n / 2 + 3)] {
                    for shift in [0.0, 1e-3] {
                        let factor = |avx2: bool, m: &Banded, floor: f64| {
                            let mut f = Banded::new(n, b);
                            f.pivot_floor = floor;
                            if floor > 0.0 {
                                let w = b + 1;
                                for (i, d) in f.inv.iter_mut().enumerate() {
                                    let a = m.band[i * w + w - 1];
                                    *d = (a + shift * a.abs()).abs();
                                }
                            }
                            let r = match b {
                                8 => f.factor_fixed::<8>(avx2, Some(m), shift, k0, k1),
                                _ => f.factor_fixed::<10>(avx2, Some(m), shift, k0, k1),
                            };
                            (r, f.band.clone(), f.inv.clone(), f.negatives)
                        };
                        for (m, floor) in [(&a, 0.0), (&indefinite, 0.0), (&indefinite, 1e-12)] {
                            let (r0, band0, inv0, neg0) = factor(false, m, floor);
                            let (r1, band1, inv1, neg1) = factor(true, m, floor);
                            assert_eq!(r0, r1, "b {b} n {n} K [{k0}, {k1}) shift {shift}");
                            let bits =
                                |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&band0), bits(&band1), "b {b} n {n} K [{k0}, {k1})");
                            assert_eq!(bits(&inv0), bits(&inv1), "b {b} n {n} K [{k0}, {k1})");
                            assert_eq!(neg0, neg1);
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 2 * 2 * 3 * 2 * 3);
    }

    #[test]
    fn solve_from_the_first_nonzero_equals_a_full_solve() {
        for (n, b) in [(60, 8), (40, 3)] {
            let a = random(n, b, 7);
            let mut f = a.clone();
            f.factor().unwrap();
            assert_eq!(f.inner(), (0, n));
            for start in [0, 1, 5, n / 2, n - 1] {
                let mut rhs = vec![0.0; n];
                for (k, v) in rhs.iter_mut().enumerate().skip(start) {
                    *v = ((k * 7919) % 13) as f64 - 6.0;
                }
                let mut full = rhs.clone();
                f.solve(&mut full);
                let mut part = rhs.clone();
                f.solve_from_inner(&mut part, start);
                assert!(
                    max_abs_diff(&full, &part) == 0.0,
                    "n {n} b {b} start {start}"
                );
            }
        }
    }

    /// A random SPD banded matrix that is barely diagonally dominant (each diagonal entry the
    /// sum of its row's off-diagonal magnitudes plus `margin`): far worse conditioned than
    /// [`random`]'s.
    fn random_weak(n: usize, b: usize, seed: u64, margin: f64) -> Banded {
        let mut rnd = uniform(seed);
        let mut a = Banded::new(n, b);
        let mut row_sum = vec![0.0; n];
        for i in 0..n {
            for j in i.saturating_sub(b)..i {
                let v = rnd();
                a.add_lower(i, j, v);
                row_sum[i] += v.abs();
                row_sum[j] += v.abs();
            }
        }
        for (i, r) in row_sum.iter().enumerate() {
            a.add_diagonal(i, r + margin);
        }
        a
    }

    fn dense(a: &Banded) -> nalgebra::DMatrix<f64> {
        nalgebra::DMatrix::from_fn(a.size(), a.size(), |i, j| a.get(i, j))
    }

    /// The twisted factorisation against a dense LU of the same matrix: full solves, the
    /// restricted solve of a right-hand side supported in K (its K part, `(A⁻¹)_KK rhs_K`)
    /// and the full solve of such a right-hand side, with K at the start, in the middle
    /// (wider and narrower than the band), at the end, empty and the whole range.
    #[test]
    fn twisted_solves_match_a_dense_reference() {
        let mut worst = [0.0f64; 3];
        for (n, b) in [(60, 8), (97, 10), (13, 8), (25, 10)] {
            for (kind, a) in [
                (0, random(n, b, 3 + n as u64)),
                (1, random_weak(n, b, 5 + n as u64, 1e-3)),
            ] {
                let d = dense(&a);
                let lu = d.clone().lu();
                let scale = d.norm() * lu.solve(&nalgebra::DMatrix::identity(n, n)).unwrap().norm();
                for (k0, k1) in [
                    (0, n),
                    (0, n / 3),
                    (n / 3, 2 * n / 3),
                    (n / 2, n / 2 + 3),
                    (n / 2, n / 2),
                    (n - n / 4, n),
                    (1, n - 1),
                ] {
                    let mut f = Banded::new(n, b);
                    f.factor_twisted_from(&a, 0.0, k0, k1).expect("SPD");
                    assert_eq!(f.inner(), (k0, k1));
                    // Any right-hand side.
                    let rhs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
                    let expect = lu.solve(&nalgebra::DVector::from_vec(rhs.clone())).unwrap();
                    let mut x = rhs.clone();
                    f.solve(&mut x);
                    let rel = |x: &[f64], e: &[f64]| {
                        max_abs_diff(x, e) / e.iter().fold(0.0f64, |m, v| m.max(v.abs()))
                    };
                    let e0 = rel(&x, expect.as_slice());
                    // A right-hand side supported in K from `first` on.
                    let len = k1 - k0;
                    let (mut e1, mut e2) = (0.0f64, 0.0f64);
                    for first in [0, len / 2, len.saturating_sub(1)] {
                        if first >= len {
                            continue;
                        }
                        let mut rk = vec![0.0; len];
                        for (i, v) in rk.iter_mut().enumerate().skip(first) {
                            *v = ((i * 7919) % 13) as f64 - 6.0;
                        }
                        let mut full = vec![0.0; n];
                        full[k0..k1].copy_from_slice(&rk);
                        let expect = lu
                            .solve(&nalgebra::DVector::from_vec(full.clone()))
                            .unwrap();
                        let mut xk = rk.clone();
                        f.solve_inner(&mut xk, first);
                        e1 = e1.max(rel(&xk, &expect.as_slice()[k0..k1]));
                        f.solve_from_inner(&mut full, k0 + first);
                        e2 = e2.max(rel(&full, expect.as_slice()));
                    }
                    for (w, e) in worst.iter_mut().zip([e0, e1, e2]) {
                        *w = w.max(e / scale);
                    }
                    // Relative error over the Frobenius condition estimate `scale`: measured
                    // at most 3.0e-17 (the three solves; `worst`, printed with --nocapture).
                    for (what, e) in [("solve", e0), ("inner", e1), ("from inner", e2)] {
                        assert!(
                            e <= 1e-16 * scale,
                            "n {n} b {b} kind {kind} K [{k0}, {k1}) {what}: {e:e} (cond ~{scale:e})"
                        );
                    }
                }
            }
        }
        eprintln!("worst relative error / condition estimate: {worst:?}");
    }

    #[test]
    fn twisted_factor_reports_an_indefinite_matrix_and_a_shift_recovers() {
        let mut bad = random(40, 8, 5);
        bad.add_diagonal(30, -40.0);
        for (k0, k1) in [(0, 40), (10, 20), (5, 35)] {
            let mut f = Banded::new(40, 8);
            assert!(f.factor_twisted_from(&bad, 0.0, k0, k1).is_err());
            assert!(f.factor_twisted_from(&bad, 10.0, k0, k1).is_ok());
            assert!(shifted_solve_error(&bad, 10.0, &f) < 1e-12);
        }
    }

    /// Other bandwidths take the plain factorisation: the interval widens to the whole range.
    #[test]
    fn other_bandwidths_twist_around_everything() {
        let a = random(30, 3, 9);
        let mut f = Banded::new(30, 3);
        f.factor_twisted_from(&a, 0.0, 10, 20).unwrap();
        assert_eq!(f.inner(), (0, 30));
    }
}
