//! Symmetric banded matrices and their Cholesky factorisation, for the block-tridiagonal Newton
//! systems of the dynamic rods (digest-cosserat C.2: O(N·b²) instead of a sparse or dense solve).
//!
//! Storage is the lower band by rows: `band[i * (b + 1) + k] = A[i][i - k]` for `k = 0..=b`.
//! All buffers are allocated once, at construction; factor and solve never allocate.

/// A symmetric `n × n` matrix with half-bandwidth `b` (`A[i][j] = 0` for `|i - j| > b`).
#[derive(Clone, Debug)]
pub struct Banded {
    n: usize,
    b: usize,
    band: Vec<f64>,
}

/// The factorisation met a pivot that is not positive: the matrix is not positive definite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NotPositiveDefinite {
    /// Row of the failing pivot.
    pub row: usize,
}

impl Banded {
    /// A zero matrix of size `n` and half-bandwidth `b`.
    pub fn new(n: usize, b: usize) -> Self {
        Banded {
            n,
            b,
            band: vec![0.0; n * (b + 1)],
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
            self.band[i * (self.b + 1) + (i - j)]
        }
    }

    /// `A[i][j] += v` for `i ≥ j` (the lower triangle; the matrix is symmetric).
    ///
    /// # Panics
    /// If `(i, j)` is outside the band: a programming error in the assembly.
    #[inline]
    pub fn add_lower(&mut self, i: usize, j: usize, v: f64) {
        debug_assert!(i >= j && i - j <= self.b, "({i}, {j}) outside the band");
        self.band[i * (self.b + 1) + (i - j)] += v;
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

    /// `A[i][i] += v`.
    #[inline]
    pub fn add_diagonal(&mut self, i: usize, v: f64) {
        self.band[i * (self.b + 1)] += v;
    }

    /// Replace row and column `i` by those of the identity (a Dirichlet degree of freedom).
    pub fn pin(&mut self, i: usize) {
        let w = self.b + 1;
        for k in 1..=self.b.min(i) {
            self.band[i * w + k] = 0.0;
        }
        for r in i + 1..(i + self.b + 1).min(self.n) {
            self.band[r * w + (r - i)] = 0.0;
        }
        self.band[i * w] = 1.0;
    }

    /// `y = A x`.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        let w = self.b + 1;
        y.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..self.n {
            y[i] += self.band[i * w] * x[i];
            for k in 1..=self.b.min(i) {
                let a = self.band[i * w + k];
                y[i] += a * x[i - k];
                y[i - k] += a * x[i];
            }
        }
    }

    /// In-place Cholesky `A = L Lᵀ` (L stored in the band). On failure the matrix is left
    /// partially overwritten: re-assemble before trying again.
    pub fn factor(&mut self) -> Result<(), NotPositiveDefinite> {
        let w = self.b + 1;
        let (n, b) = (self.n, self.b);
        for i in 0..n {
            let j0 = i.saturating_sub(b);
            for j in j0..=i {
                // s = A[i][j] - Σ_{k = max(j0, j - b)}^{j-1} L[i][k] L[j][k]
                let mut s = self.band[i * w + (i - j)];
                let k0 = j0.max(j.saturating_sub(b));
                for k in k0..j {
                    s -= self.band[i * w + (i - k)] * self.band[j * w + (j - k)];
                }
                if i == j {
                    if s.is_nan() || s <= 0.0 || !s.is_finite() {
                        return Err(NotPositiveDefinite { row: i });
                    }
                    self.band[i * w] = s.sqrt();
                } else {
                    self.band[i * w + (i - j)] = s / self.band[j * w];
                }
            }
        }
        Ok(())
    }

    /// Solve `L Lᵀ x = rhs` in place, after [`Banded::factor`].
    #[allow(clippy::needless_range_loop)] // banded index arithmetic reads clearer as loops
    pub fn solve(&self, x: &mut [f64]) {
        let w = self.b + 1;
        let (n, b) = (self.n, self.b);
        for i in 0..n {
            let mut s = x[i];
            for k in 1..=b.min(i) {
                s -= self.band[i * w + k] * x[i - k];
            }
            x[i] = s / self.band[i * w];
        }
        for i in (0..n).rev() {
            let mut s = x[i];
            for r in i + 1..(i + b + 1).min(n) {
                s -= self.band[r * w + (r - i)] * x[r];
            }
            x[i] = s / self.band[i * w];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random SPD banded matrix: diagonally dominant with a fixed-seed LCG.
    fn random(n: usize, b: usize, seed: u64) -> Banded {
        let mut s = seed;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
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
        for (n, b) in [(1, 0), (5, 2), (27, 8), (100, 8), (9, 20)] {
            let a = random(n, b, 7 + n as u64);
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut rhs = vec![0.0; n];
            a.mul(&x, &mut rhs);
            let mut f = a.clone();
            f.factor().expect("SPD");
            f.solve(&mut rhs);
            let err = x
                .iter()
                .zip(&rhs)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
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
}
