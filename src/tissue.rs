//! L1: a deformable tissue pad split by an incision — a linear spring lattice, stepped by
//! implicit Euler with a prefactored matrix.
//!
//! The pad is an axis-aligned box (edges `size` along x, y, z around `center`, top face +y),
//! cut along the plane x = center.x by an incision of rest width `gap` (a gaping wound: the cut
//! faces are `gap` apart). Each half is a thin volume whose base is glued to the table:
//!
//! - Nodes: a grid on the top face of each half (spacing ≈ `spacing`), each with a node
//!   directly below it on the base. Base nodes and the top nodes of the outer edge (the pad's
//!   frame) are fixed; the other top nodes move.
//! - Springs (a lattice, not a continuum discretisation; its stiffness scales with E and is
//!   measured by [`Tissue::indentation_stiffness`]): top structural springs of stiffness
//!   `E T/2` (the upper half of the thickness, per unit width × width / length), top
//!   diagonals `E T/4`, verticals `E a_x a_z / T`, and diagonals from each top node to the
//!   four neighbouring base nodes `E a_x a_z / (2 L)` (shear).
//! - Linear (small-strain) elasticity: each spring acts along its rest direction d with
//!   `f = −k d dᵀ (u_a − u_b)` — displacements of a few millimetres on a 1 cm pad.
//! - Mass: the upper half of each column, `ρ a_x a_z T/2`, lumped on the top node.
//! - Damping: Rayleigh, `C = α M + β K`.
//! - Implicit Euler: `(M + hC + h²K) v' = M v + h (f − K u)`, `u' = u + h v'`. The matrix is
//!   constant for a fixed step, so its inverse is formed once (a few hundred unknowns per
//!   half) and each step is one matrix–vector product: no allocation, no factorisation.
//!
//! A material point X (rest coordinates inside a half) moves by
//! `u(X) = w_y(X) Σ w_ij(X) u_ij`: bilinear over the top grid cell, linear in depth from the
//! top (moving) to the base (fixed). Forces applied at X are spread with the same weights.

use crate::math::Vec3;
use nalgebra::DMatrix;

/// Solve the dense `n × n` system `a x = b` in place (b ← x) by Gaussian elimination with
/// partial pivoting (n ≤ 3·MAX_SPRINGS; no allocation). A zero pivot leaves that unknown 0.
fn solve_dense(a: &mut [f64], b: &mut [f64], n: usize) {
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap_or(k);
        if p != k {
            for c in 0..n {
                a.swap(k * n + c, p * n + c);
            }
            b.swap(k, p);
        }
        let piv = a[k * n + k];
        if piv.abs() < 1e-300 {
            continue;
        }
        for i in k + 1..n {
            let f = a[i * n + k] / piv;
            if f != 0.0 {
                for c in k..n {
                    a[i * n + c] -= f * a[k * n + c];
                }
                b[i] -= f * b[k];
            }
        }
    }
    for k in (0..n).rev() {
        let piv = a[k * n + k];
        if piv.abs() < 1e-300 {
            b[k] = 0.0;
            continue;
        }
        let s: f64 = (k + 1..n).map(|c| a[k * n + c] * b[c]).sum();
        b[k] = (b[k] - s) / piv;
    }
}

/// Material and lattice of a tissue pad (SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TissueParams {
    /// Young's modulus [Pa].
    pub youngs_modulus: f64,
    /// Density [kg/m³].
    pub density: f64,
    /// Rayleigh mass damping α [1/s].
    pub mass_damping: f64,
    /// Rayleigh stiffness damping β [s].
    pub stiffness_damping: f64,
    /// Lattice spacing [m] (rounded so each half has whole cells).
    pub spacing: f64,
}

/// Pad geometry (SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TissueGeometry {
    /// Centre of the pad [m].
    pub center: Vec3,
    /// Edge lengths along x, y, z [m] (y: thickness).
    pub size: Vec3,
    /// Rest width of the incision [m] (the cut runs along z at x = center.x).
    pub gap: f64,
}

/// Which face of a half a point is nearest to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// The top (skin) surface, +y.
    Top,
    /// The cut face of the incision.
    Wound,
    /// Any other face (outer edge, base, ends).
    Other,
}

#[derive(Clone, Debug)]
struct Spring {
    a: usize,
    /// `None`: a fixed node.
    b: Option<usize>,
    k: f64,
    d: Vec3,
}

/// One half of the pad.
#[derive(Clone, Debug)]
struct Half {
    /// Rest box: x range, z range (y from the pad).
    x0: f64,
    x1: f64,
    z0: f64,
    z1: f64,
    nx: usize,
    nz: usize,
    /// Free DOF index of top node (i, j) (i along x, j along z); None if fixed.
    dof: Vec<Option<usize>>,
    mass: Vec<f64>,
    springs: Vec<Spring>,
    /// (M + hC + h²K)⁻¹ for `h_built`.
    inv: DMatrix<f64>,
    h_built: f64,
    u: Vec<Vec3>,
    v: Vec<Vec3>,
    f: Vec<Vec3>,
    /// Scratch.
    rhs: Vec<f64>,
    ku: Vec<Vec3>,
    z: Vec<f64>,
    /// A⁻¹ U for the point springs (3n × 3·MAX_SPRINGS, column-major) and the small system.
    au: Vec<f64>,
    small: Vec<f64>,
    small_rhs: Vec<f64>,
}

/// Most point springs per half and step (more are ignored and counted).
pub const MAX_SPRINGS: usize = 24;

/// A spring from a material point to a world target, implicit in the tissue's step:
/// force on the tissue `K (target − x(X))` with `K` symmetric positive semi-definite [N/m]
/// (e.g. `k (I − t tᵀ)` for a channel that only resists sideways).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointSpring {
    /// Where it acts.
    pub point: MaterialPoint,
    /// The other end, held fixed during the step [m].
    pub target: Vec3,
    /// Stiffness matrix [N/m].
    pub stiffness: nalgebra::Matrix3<f64>,
}

/// A deformable, incised tissue pad.
#[derive(Clone, Debug)]
pub struct Tissue {
    /// Material and lattice.
    pub params: TissueParams,
    /// Geometry.
    pub geometry: TissueGeometry,
    halves: [Half; 2],
    y_top: f64,
    y_bot: f64,
}

/// A material point of the pad: which half (0: x below the cut, 1: above) and its rest
/// coordinates [m].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialPoint {
    /// Half index.
    pub half: usize,
    /// Rest position [m].
    pub rest: Vec3,
}

impl Half {
    fn new(
        x0: f64,
        x1: f64,
        z0: f64,
        z1: f64,
        outer_at_x0: bool,
        thickness: f64,
        p: &TissueParams,
    ) -> Self {
        let nx = (((x1 - x0) / p.spacing).round() as usize).max(1) + 1;
        let nz = (((z1 - z0) / p.spacing).round() as usize).max(1) + 1;
        let ax = (x1 - x0) / (nx - 1) as f64;
        let az = (z1 - z0) / (nz - 1) as f64;
        let mut dof = vec![None; nx * nz];
        let mut n = 0;
        for j in 0..nz {
            for i in 0..nx {
                let outer = if outer_at_x0 { i == 0 } else { i == nx - 1 };
                if !outer {
                    dof[j * nx + i] = Some(n);
                    n += 1;
                }
            }
        }
        let e = p.youngs_modulus;
        let t = thickness;
        let mut springs = Vec::new();
        let pos = |i: usize, j: usize, top: bool| {
            Vec3::new(i as f64 * ax, if top { 0.0 } else { -t }, j as f64 * az)
        };
        let mut add = |ia: (usize, usize), ib: (usize, usize), b_top: bool, k: f64| {
            let a = dof[ia.1 * nx + ia.0];
            let b = if b_top { dof[ib.1 * nx + ib.0] } else { None };
            let d = (pos(ib.0, ib.1, b_top) - pos(ia.0, ia.1, true)).normalize();
            // Orient so that `a` is free.
            match (a, b) {
                (Some(a), b) => springs.push(Spring { a, b, k, d }),
                (None, Some(b)) => springs.push(Spring {
                    a: b,
                    b: None,
                    k,
                    d: -d,
                }),
                (None, None) => {}
            }
        };
        for j in 0..nz {
            for i in 0..nx {
                if i + 1 < nx {
                    add((i, j), (i + 1, j), true, e * t / 2.0);
                }
                if j + 1 < nz {
                    add((i, j), (i, j + 1), true, e * t / 2.0);
                }
                if i + 1 < nx && j + 1 < nz {
                    add((i, j), (i + 1, j + 1), true, e * t / 4.0);
                    add((i + 1, j), (i, j + 1), true, e * t / 4.0);
                }
                add((i, j), (i, j), false, e * ax * az / t);
                let l = |dx: f64| (dx * dx + t * t).sqrt();
                if i > 0 {
                    add((i, j), (i - 1, j), false, e * ax * az / (2.0 * l(ax)));
                }
                if i + 1 < nx {
                    add((i, j), (i + 1, j), false, e * ax * az / (2.0 * l(ax)));
                }
                if j > 0 {
                    add((i, j), (i, j - 1), false, e * ax * az / (2.0 * l(az)));
                }
                if j + 1 < nz {
                    add((i, j), (i, j + 1), false, e * ax * az / (2.0 * l(az)));
                }
            }
        }
        let m = p.density * ax * az * t / 2.0;
        Half {
            x0,
            x1,
            z0,
            z1,
            nx,
            nz,
            dof,
            mass: vec![m; n],
            springs,
            inv: DMatrix::zeros(0, 0),
            h_built: 0.0,
            u: vec![Vec3::zeros(); n],
            v: vec![Vec3::zeros(); n],
            f: vec![Vec3::zeros(); n],
            rhs: vec![0.0; 3 * n],
            ku: vec![Vec3::zeros(); n],
            z: vec![0.0; 3 * n],
            au: vec![0.0; 3 * n * 3 * MAX_SPRINGS],
            small: vec![0.0; 9 * MAX_SPRINGS * MAX_SPRINGS],
            small_rhs: vec![0.0; 3 * MAX_SPRINGS],
        }
    }

    fn free(&self) -> usize {
        self.mass.len()
    }

    /// Dense stiffness K (3n × 3n).
    fn stiffness(&self) -> DMatrix<f64> {
        let n = self.free();
        let mut k = DMatrix::zeros(3 * n, 3 * n);
        for s in &self.springs {
            let b = s.d * s.d.transpose() * s.k;
            for r in 0..3 {
                for c in 0..3 {
                    k[(3 * s.a + r, 3 * s.a + c)] += b[(r, c)];
                    if let Some(bn) = s.b {
                        k[(3 * bn + r, 3 * bn + c)] += b[(r, c)];
                        k[(3 * s.a + r, 3 * bn + c)] -= b[(r, c)];
                        k[(3 * bn + r, 3 * s.a + c)] -= b[(r, c)];
                    }
                }
            }
        }
        k
    }

    fn build(&mut self, h: f64, p: &TissueParams) {
        let n = self.free();
        let k = self.stiffness();
        let mut a = k * (h * h + h * p.stiffness_damping);
        for i in 0..n {
            for c in 0..3 {
                a[(3 * i + c, 3 * i + c)] += self.mass[i] * (1.0 + h * p.mass_damping);
            }
        }
        self.inv = a
            .cholesky()
            .expect("the lattice matrix M + hC + h²K is positive definite")
            .inverse();
        self.h_built = h;
    }

    /// K u into `ku`.
    fn apply_k(&mut self) {
        for v in &mut self.ku {
            *v = Vec3::zeros();
        }
        for s in &self.springs {
            let du = match s.b {
                Some(b) => self.u[s.a] - self.u[b],
                None => self.u[s.a],
            };
            let f = s.d * (s.k * s.d.dot(&du));
            self.ku[s.a] += f;
            if let Some(b) = s.b {
                self.ku[b] -= f;
            }
        }
    }

    /// Node weights (free DOF, weight incl. depth) of a material point.
    fn point_weights(&self, m: &MaterialPoint, y_bot: f64, t: f64) -> [(Option<usize>, f64); 4] {
        let wy = ((m.rest.y - y_bot) / t).clamp(0.0, 1.0);
        self.weights(m.rest.x, m.rest.z)
            .map(|(node, w)| (self.dof[node], w * wy))
    }

    /// Implicit Euler with point springs (see [`Tissue::step_with`]).
    fn step(&mut self, h: f64, p: &TissueParams, springs: &[PointSpring], (y_bot, t): (f64, f64)) {
        if self.h_built != h {
            self.build(h, p);
        }
        self.apply_k();
        let n = self.free();
        let dim = 3 * n;
        // Spring forces at the start of the step, on the right side.
        for s in springs {
            let x = s.point.rest + self.disp(&s.point, y_bot, t);
            let f = s.stiffness * (s.target - x);
            for (d, w) in self.point_weights(&s.point, y_bot, t) {
                if let Some(d) = d {
                    self.f[d] += f * w;
                }
            }
        }
        // rhs = M v + h (f − K u); the damping and the h²K, h²K_s parts of the implicit
        // update sit in the matrix.
        for i in 0..n {
            let r = self.v[i] * self.mass[i] + (self.f[i] - self.ku[i]) * h;
            self.rhs[3 * i..3 * i + 3].copy_from_slice(r.as_slice());
        }
        // z = A⁻¹ rhs. The inverse is symmetric: row r of it is column r, contiguous.
        sym_mul(&self.inv, &self.rhs, &mut self.z[..dim]);
        // Woodbury (push-through form) for A + U S Uᵀ, U = the springs' weights, S = h² K_s:
        // v' = z − A⁻¹U (I + S Uᵀ A⁻¹ U)⁻¹ S Uᵀ z.
        let m = springs.len();
        if m > 0 {
            let cols = 3 * m;
            for (si, s) in springs.iter().enumerate() {
                let w = self.point_weights(&s.point, y_bot, t);
                for c in 0..3 {
                    let out = &mut self.au[(3 * si + c) * dim..(3 * si + c + 1) * dim];
                    out.iter_mut().for_each(|v| *v = 0.0);
                    for (d, wt) in w {
                        if let Some(d) = d
                            && wt != 0.0
                        {
                            let col = self.inv.column(3 * d + c);
                            for (o, a) in out.iter_mut().zip(col.iter()) {
                                *o += wt * a;
                            }
                        }
                    }
                }
            }
            // G = Uᵀ A⁻¹ U (cols × cols), then B = I + S G, rhs = S Uᵀ z.
            let ut = |v: &[f64], s: &PointSpring, c: usize, wts: &[(Option<usize>, f64); 4]| {
                let _ = s;
                wts.iter()
                    .filter_map(|(d, w)| d.map(|d| w * v[3 * d + c]))
                    .sum::<f64>()
            };
            let mut g = [0.0; 9 * MAX_SPRINGS * MAX_SPRINGS];
            for (sj, _) in springs.iter().enumerate() {
                for cj in 0..3 {
                    let col = &self.au[(3 * sj + cj) * dim..(3 * sj + cj + 1) * dim];
                    for (si, s) in springs.iter().enumerate() {
                        let wts = self.point_weights(&s.point, y_bot, t);
                        for ci in 0..3 {
                            g[(3 * si + ci) * cols + 3 * sj + cj] = ut(col, s, ci, &wts);
                        }
                    }
                }
            }
            let mut utz = [0.0; 3 * MAX_SPRINGS];
            for (si, s) in springs.iter().enumerate() {
                let wts = self.point_weights(&s.point, y_bot, t);
                for ci in 0..3 {
                    utz[3 * si + ci] = ut(&self.z, s, ci, &wts);
                }
            }
            let b = &mut self.small[..cols * cols];
            let rb = &mut self.small_rhs[..cols];
            for (si, s) in springs.iter().enumerate() {
                let k = s.stiffness * (h * h);
                for r in 0..3 {
                    let row = 3 * si + r;
                    rb[row] = (0..3).map(|c| k[(r, c)] * utz[3 * si + c]).sum();
                    for col in 0..cols {
                        let mut v = (0..3)
                            .map(|c| k[(r, c)] * g[(3 * si + c) * cols + col])
                            .sum::<f64>();
                        if col == row {
                            v += 1.0;
                        }
                        b[row * cols + col] = v;
                    }
                }
            }
            solve_dense(b, rb, cols);
            for (k, y) in rb.iter().enumerate() {
                let col = &self.au[k * dim..(k + 1) * dim];
                for (zv, a) in self.z.iter_mut().zip(col) {
                    *zv -= a * y;
                }
            }
        }
        for i in 0..n {
            self.v[i] = Vec3::new(self.z[3 * i], self.z[3 * i + 1], self.z[3 * i + 2]);
            self.u[i] += self.v[i] * h;
            self.f[i] = Vec3::zeros();
        }
    }

    fn disp(&self, m: &MaterialPoint, y_bot: f64, t: f64) -> Vec3 {
        let mut u = Vec3::zeros();
        for (d, w) in self.point_weights(m, y_bot, t) {
            if let Some(d) = d {
                u += self.u[d] * w;
            }
        }
        u
    }

    /// Cell and weights of rest point (x, z): ((node index, weight) × 4).
    fn weights(&self, x: f64, z: f64) -> [(usize, f64); 4] {
        let fx = ((x - self.x0) / (self.x1 - self.x0) * (self.nx - 1) as f64)
            .clamp(0.0, (self.nx - 1) as f64);
        let fz = ((z - self.z0) / (self.z1 - self.z0) * (self.nz - 1) as f64)
            .clamp(0.0, (self.nz - 1) as f64);
        let i = (fx.floor() as usize).min(self.nx - 2);
        let j = (fz.floor() as usize).min(self.nz - 2);
        let (sx, sz) = (fx - i as f64, fz - j as f64);
        let nx = self.nx;
        [
            (j * nx + i, (1.0 - sx) * (1.0 - sz)),
            (j * nx + i + 1, sx * (1.0 - sz)),
            ((j + 1) * nx + i, (1.0 - sx) * sz),
            ((j + 1) * nx + i + 1, sx * sz),
        ]
    }
}

impl Tissue {
    /// Feed the lattice's displacements and velocities (both halves) to a state digest: what
    /// digest version 1 (`sim::DigestVersion::V1`) covers of the tissue. Kept bit for bit for
    /// the recordings that carry it.
    pub fn digest_v1_into(&self, d: &mut crate::math::Digest) {
        for h in &self.halves {
            d.vec3s(&h.u);
            d.vec3s(&h.v);
        }
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): per
    /// half, the displacements, velocities and the forces applied for the next step
    /// ([`Tissue::apply_force`]). Every field is named here, so a new one must be placed on
    /// one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Tissue {
            // The scene's material and pad, and what the lattice is built from.
            params: _,
            geometry: _,
            y_top: _,
            y_bot: _,
            halves,
        } = self;
        for h in halves {
            let Half {
                // The lattice as built.
                x0: _,
                x1: _,
                z0: _,
                z1: _,
                nx: _,
                nz: _,
                dof: _,
                mass: _,
                springs: _,
                // (M + hC + h²K)⁻¹: a cache of the step size and the lattice.
                inv: _,
                h_built: _,
                // Scratch of one step.
                rhs: _,
                ku: _,
                z: _,
                au: _,
                small: _,
                small_rhs: _,
                u,
                v,
                f,
            } = h;
            d.vec3s(u);
            d.vec3s(v);
            d.vec3s(f);
        }
    }

    /// A pad at rest. Panics only on non-positive sizes (the scene validates them).
    pub fn new(geometry: TissueGeometry, params: TissueParams) -> Self {
        let c = geometry.center;
        let s = geometry.size;
        let (xa, xb) = (c.x - s.x / 2.0, c.x + s.x / 2.0);
        let (z0, z1) = (c.z - s.z / 2.0, c.z + s.z / 2.0);
        let g = geometry.gap / 2.0;
        let halves = [
            Half::new(xa, c.x - g, z0, z1, true, s.y, &params),
            Half::new(c.x + g, xb, z0, z1, false, s.y, &params),
        ];
        Tissue {
            params,
            geometry,
            halves,
            y_top: c.y + s.y / 2.0,
            y_bot: c.y - s.y / 2.0,
        }
    }

    /// Height of the rest top surface [m].
    pub fn top(&self) -> f64 {
        self.y_top
    }

    /// Moving nodes (both halves).
    pub fn free_nodes(&self) -> usize {
        self.halves.iter().map(Half::free).sum()
    }

    /// Grid size (nodes along x, along z) of each half.
    pub fn grid(&self) -> [(usize, usize); 2] {
        [
            (self.halves[0].nx, self.halves[0].nz),
            (self.halves[1].nx, self.halves[1].nz),
        ]
    }

    /// Displacement [m] of a material point.
    pub fn displacement(&self, m: &MaterialPoint) -> Vec3 {
        let h = &self.halves[m.half];
        let wy = ((m.rest.y - self.y_bot) / (self.y_top - self.y_bot)).clamp(0.0, 1.0);
        let mut u = Vec3::zeros();
        for (node, w) in h.weights(m.rest.x, m.rest.z) {
            if let Some(d) = h.dof[node] {
                u += h.u[d] * w;
            }
        }
        u * wy
    }

    /// Current position [m] of a material point.
    pub fn position(&self, m: &MaterialPoint) -> Vec3 {
        m.rest + self.displacement(m)
    }

    /// Velocity [m/s] of a material point.
    pub fn velocity(&self, m: &MaterialPoint) -> Vec3 {
        let h = &self.halves[m.half];
        let wy = ((m.rest.y - self.y_bot) / (self.y_top - self.y_bot)).clamp(0.0, 1.0);
        let mut v = Vec3::zeros();
        for (node, w) in h.weights(m.rest.x, m.rest.z) {
            if let Some(d) = h.dof[node] {
                v += h.v[d] * w;
            }
        }
        v * wy
    }

    /// Apply a force [N] at a material point for the next step (spread with the displacement
    /// weights, so the work is consistent).
    pub fn apply_force(&mut self, m: &MaterialPoint, f: &Vec3) {
        let wy = ((m.rest.y - self.y_bot) / (self.y_top - self.y_bot)).clamp(0.0, 1.0);
        let h = &mut self.halves[m.half];
        for (node, w) in h.weights(m.rest.x, m.rest.z) {
            if let Some(d) = h.dof[node] {
                h.f[d] += f * (w * wy);
            }
        }
    }

    /// Whether rest point `x` lies inside half `half` (closed box).
    fn inside_rest(&self, half: usize, x: &Vec3) -> bool {
        let h = &self.halves[half];
        let g = &self.geometry;
        x.x >= h.x0
            && x.x <= h.x1
            && x.y >= self.y_bot
            && x.y <= self.y_top
            && x.z >= g.center.z - g.size.z / 2.0
            && x.z <= g.center.z + g.size.z / 2.0
    }

    /// The material point now at world position `p`, if `p` is inside the deformed pad: the
    /// rest point X with X + u(X) = p, by fixed-point iteration from X = p (u varies slowly:
    /// strains ≪ 1).
    pub fn locate(&self, p: &Vec3) -> Option<MaterialPoint> {
        for half in 0..2 {
            let mut m = MaterialPoint { half, rest: *p };
            for _ in 0..4 {
                let clamped = self.clamp_rest(half, &m.rest);
                let u = self.displacement(&MaterialPoint {
                    half,
                    rest: clamped,
                });
                m.rest = p - u;
            }
            if self.inside_rest(half, &m.rest) {
                return Some(m);
            }
        }
        None
    }

    /// The rest point of `half` nearest to `x` (inside or on its box).
    pub fn clamp_rest(&self, half: usize, x: &Vec3) -> Vec3 {
        let h = &self.halves[half];
        let g = &self.geometry;
        Vec3::new(
            x.x.clamp(h.x0, h.x1),
            x.y.clamp(self.y_bot, self.y_top),
            x.z.clamp(g.center.z - g.size.z / 2.0, g.center.z + g.size.z / 2.0),
        )
    }

    /// The face of `half` nearest to rest point `x`, with its outward unit normal (rest) and
    /// the depth of `x` below it [m].
    pub fn nearest_face(&self, half: usize, x: &Vec3) -> (Face, Vec3, f64) {
        let h = &self.halves[half];
        let g = &self.geometry;
        let (wound_depth, wound_n, outer_depth, outer_n) = if half == 0 {
            (h.x1 - x.x, Vec3::x(), x.x - h.x0, -Vec3::x())
        } else {
            (x.x - h.x0, -Vec3::x(), h.x1 - x.x, Vec3::x())
        };
        let zl = x.z - (g.center.z - g.size.z / 2.0);
        let zh = g.center.z + g.size.z / 2.0 - x.z;
        let candidates = [
            (Face::Top, Vec3::y(), self.y_top - x.y),
            (Face::Wound, wound_n, wound_depth),
            (Face::Other, outer_n, outer_depth),
            (Face::Other, -Vec3::y(), x.y - self.y_bot),
            (Face::Other, -Vec3::z(), zl),
            (Face::Other, Vec3::z(), zh),
        ];
        candidates
            .into_iter()
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .unwrap()
    }

    /// Advance by `h` [s] under the forces applied since the last step (then cleared).
    /// Allocation-free after the first step at a given `h` (which forms the inverse).
    pub fn step(&mut self, h: f64) {
        self.step_with(h, &mut []);
    }

    /// [`Tissue::step`] with point springs to fixed targets, implicit in the step (so a stiff
    /// needle or suture channel cannot make the light tissue nodes unstable): the matrix
    /// `M + hC + h²K` gains `h² Σ Wᵀ K_s W` through the Woodbury identity around the stored
    /// inverse (a small dense solve of 3 unknowns per spring). At most [`MAX_SPRINGS`] per
    /// half; more are dropped (the count is returned). On return each spring's `target`
    /// holds the force it exerted on the tissue at the end of the step [N].
    pub fn step_with(&mut self, h: f64, springs: &mut [PointSpring]) -> usize {
        let p = self.params;
        let (y_bot, t) = (self.y_bot, self.y_top - self.y_bot);
        let mut dropped = 0;
        // The cut faces meet but do not pass: where a row's edges overlap, each edge is held
        // (implicitly, along x) toward where the other edge is, with ten times the lattice's
        // structural stiffness.
        let mut wound = [PointSpring {
            point: MaterialPoint {
                half: 0,
                rest: Vec3::zeros(),
            },
            target: Vec3::zeros(),
            stiffness: nalgebra::Matrix3::zeros(),
        }; 2 * MAX_SPRINGS];
        let mut nw = 0;
        let nz = self.halves[0].nz.min(self.halves[1].nz);
        let kw = 10.0 * p.youngs_modulus * t / 2.0;
        for j in 0..nz {
            let z = self.halves[0].z0
                + (self.halves[0].z1 - self.halves[0].z0) * j as f64 / (nz - 1) as f64;
            let a = MaterialPoint {
                half: 0,
                rest: Vec3::new(self.halves[0].x1, self.y_top, z),
            };
            let b = MaterialPoint {
                half: 1,
                rest: Vec3::new(self.halves[1].x0, self.y_top, z),
            };
            let (pa, pb) = (self.position(&a), self.position(&b));
            if pb.x < pa.x && nw + 2 <= wound.len() {
                let k = Vec3::x() * Vec3::x().transpose() * kw;
                let mid = (pa.x + pb.x) / 2.0;
                wound[nw] = PointSpring {
                    point: a,
                    target: Vec3::new(mid, pa.y, pa.z),
                    stiffness: k,
                };
                wound[nw + 1] = PointSpring {
                    point: b,
                    target: Vec3::new(mid, pb.y, pb.z),
                    stiffness: k,
                };
                nw += 2;
            }
        }
        for (hi, half) in self.halves.iter_mut().enumerate() {
            let mut buf = [PointSpring {
                point: MaterialPoint {
                    half: 0,
                    rest: Vec3::zeros(),
                },
                target: Vec3::zeros(),
                stiffness: nalgebra::Matrix3::zeros(),
            }; MAX_SPRINGS];
            let mut m = 0;
            for s in springs
                .iter()
                .chain(&wound[..nw])
                .filter(|s| s.point.half == hi)
            {
                if m < MAX_SPRINGS {
                    buf[m] = *s;
                    m += 1;
                } else {
                    dropped += 1;
                }
            }
            half.step(h, &p, &buf[..m], (y_bot, t));
        }
        for s in springs.iter_mut() {
            let x = self.position(&s.point);
            s.target = s.stiffness * (s.target - x);
        }
        dropped
    }

    /// Prepare the step matrices for step `h` [s] (else done on the first step).
    pub fn prepare(&mut self, h: f64) {
        let p = self.params;
        for half in &mut self.halves {
            if half.h_built != h {
                half.build(h, &p);
            }
        }
    }

    /// Width of the incision [m] at the top surface at rest coordinate `z`: the distance
    /// along x between the two cut edges' current positions.
    pub fn gap_at(&self, z: f64) -> f64 {
        let y = self.y_top;
        let a = MaterialPoint {
            half: 0,
            rest: Vec3::new(self.halves[0].x1, y, z),
        };
        let b = MaterialPoint {
            half: 1,
            rest: Vec3::new(self.halves[1].x0, y, z),
        };
        self.position(&b).x - self.position(&a).x
    }

    /// Elastic energy ½ uᵀ K u [J] (both halves).
    pub fn elastic_energy(&self) -> f64 {
        let mut e = 0.0;
        for h in &self.halves {
            for s in &h.springs {
                let du = match s.b {
                    Some(b) => h.u[s.a] - h.u[b],
                    None => h.u[s.a],
                };
                e += 0.5 * s.k * s.d.dot(&du).powi(2);
            }
        }
        e
    }

    /// Kinetic energy [J].
    pub fn kinetic_energy(&self) -> f64 {
        self.halves
            .iter()
            .map(|h| {
                h.v.iter()
                    .zip(&h.mass)
                    .map(|(v, m)| 0.5 * m * v.norm_squared())
                    .sum::<f64>()
            })
            .sum()
    }

    /// Static stiffness [N/m] of the top surface against a vertical point load at rest point
    /// (x, top, z): the load over the static displacement, from the lattice stiffness.
    pub fn indentation_stiffness(&self, x: f64, z: f64) -> f64 {
        let half = usize::from(x > self.geometry.center.x);
        let h = &self.halves[half];
        let k = h.stiffness();
        let mut f = nalgebra::DVector::zeros(3 * h.free());
        let w = h.weights(x, z);
        for (node, wt) in w {
            if let Some(d) = h.dof[node] {
                f[3 * d + 1] = -wt;
            }
        }
        let u = k.cholesky().expect("K is positive definite").solve(&f);
        let mut uy = 0.0;
        for (node, wt) in w {
            if let Some(d) = h.dof[node] {
                uy += u[3 * d + 1] * wt;
            }
        }
        1.0 / (-uy)
    }

    /// Top-node positions of both halves [m] for drawing: (half, i, j, position).
    pub fn top_nodes(&self) -> impl Iterator<Item = (usize, usize, usize, Vec3)> + '_ {
        (0..2).flat_map(move |half| {
            let h = &self.halves[half];
            (0..h.nz).flat_map(move |j| {
                (0..h.nx).map(move |i| {
                    let rest = Vec3::new(
                        h.x0 + (h.x1 - h.x0) * i as f64 / (h.nx - 1) as f64,
                        self.y_top,
                        h.z0 + (h.z1 - h.z0) * j as f64 / (h.nz - 1) as f64,
                    );
                    let u = h.dof[j * h.nx + i].map_or(Vec3::zeros(), |d| h.u[d]);
                    (half, i, j, rest + u)
                })
            })
        })
    }

    /// Rest x range of a half [m].
    pub fn half_x_range(&self, half: usize) -> (f64, f64) {
        (self.halves[half].x0, self.halves[half].x1)
    }

    /// Largest displacement of any node [m].
    pub fn max_displacement(&self) -> f64 {
        self.halves
            .iter()
            .flat_map(|h| h.u.iter().map(|u| u.norm()))
            .fold(0.0, f64::max)
    }

    /// Whether every node's state is finite.
    pub fn is_finite(&self) -> bool {
        self.halves.iter().all(|h| {
            h.u.iter()
                .chain(&h.v)
                .all(|x| x.iter().all(|c| c.is_finite()))
        })
    }
}

/// `z = A b` for a symmetric `A` (column-major, so row `r` is the contiguous column `r`):
/// each `z_r` is the dot product of column `r` with `b`, summed in index order from −0.0 as
/// `Iterator::sum` does, so the result is bit for bit that of the plain loop. Sixteen columns
/// are summed side by side (then eight, four, and one at a time), which hides the latency of
/// the additions: on a half's 297 × 297 inverse sixteen took 0.6–0.8 of the time of four
/// (a micro-benchmark run alternately on the shared VM), four about a third of one
/// (docs/performance.md, "Suturing step").
fn sym_mul(a: &DMatrix<f64>, b: &[f64], z: &mut [f64]) {
    let n = z.len();
    debug_assert!(a.nrows() == n && a.ncols() == n && b.len() >= n);
    let s = a.as_slice();
    let b = &b[..n];
    let mut r = 0;
    r = sym_mul_columns::<16>(s, b, z, r);
    r = sym_mul_columns::<8>(s, b, z, r);
    r = sym_mul_columns::<4>(s, b, z, r);
    for (rr, zr) in z.iter_mut().enumerate().skip(r) {
        *zr = s[rr * n..(rr + 1) * n]
            .iter()
            .zip(b)
            .map(|(x, y)| x * y)
            .sum();
    }
}

/// [`sym_mul`]'s rows from `r` on in blocks of `W` side by side, while a whole block is left;
/// returns the first row not done.
#[inline(always)]
fn sym_mul_columns<const W: usize>(s: &[f64], b: &[f64], z: &mut [f64], mut r: usize) -> usize {
    let n = z.len();
    while r + W <= n {
        let c: [&[f64]; W] = std::array::from_fn(|j| &s[(r + j) * n..(r + j + 1) * n]);
        let mut acc = [-0.0f64; W];
        for (k, &bk) in b.iter().enumerate() {
            for (a, col) in acc.iter_mut().zip(&c) {
                *a += col[k] * bk;
            }
        }
        z[r..r + W].copy_from_slice(&acc);
        r += W;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees one ulp of every piece of state a step carries to the next, in
    /// either half.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp3};
        let mut t = Tissue::new(
            TissueGeometry {
                center: Vec3::zeros(),
                size: Vec3::new(0.02, 0.005, 0.01),
                gap: 1e-3,
            },
            TissueParams {
                youngs_modulus: 1e5,
                density: 1000.0,
                mass_damping: 1.0,
                stiffness_damping: 1e-3,
                spacing: 2.5e-3,
            },
        );
        let press = |t: &mut Tissue| {
            for (half, x) in [(0, -0.004), (1, 0.004)] {
                let m = MaterialPoint {
                    half,
                    rest: Vec3::new(x, 0.0025, 0.0),
                };
                t.apply_force(&m, &Vec3::new(0.0, -0.1, 0.01));
            }
        };
        press(&mut t);
        t.step(1e-3);
        press(&mut t);
        let digest = |t: &Tissue| {
            let mut d = crate::math::Digest::default();
            t.digest_into(&mut d);
            d.0
        };
        let last = |t: &Tissue, h: usize| t.halves[h].u.len() - 1;
        assert_each_changes(
            &t,
            digest,
            &[
                ("halves[0].u", &|t| {
                    let k = last(t, 0);
                    ulp3(&mut t.halves[0].u[k])
                }),
                ("halves[1].u", &|t| {
                    let k = last(t, 1);
                    ulp3(&mut t.halves[1].u[k])
                }),
                ("halves[0].v", &|t| {
                    let k = last(t, 0);
                    ulp3(&mut t.halves[0].v[k])
                }),
                ("halves[1].v", &|t| {
                    let k = last(t, 1);
                    ulp3(&mut t.halves[1].v[k])
                }),
                ("halves[0].f", &|t| {
                    let k = last(t, 0);
                    ulp3(&mut t.halves[0].f[k])
                }),
                ("halves[1].f", &|t| {
                    let k = last(t, 1);
                    ulp3(&mut t.halves[1].f[k])
                }),
            ],
        );
    }

    /// `sym_mul` is bit for bit the plain `Iterator::sum` dot products (a replay of a session
    /// recorded before it must not diverge), for sizes with and without a remainder of 4.
    #[test]
    fn sym_mul_matches_the_plain_loop_bit_for_bit() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in [1, 3, 4, 7, 8, 12, 13, 16, 20, 29, 297] {
            let mut a = DMatrix::<f64>::zeros(n, n);
            for i in 0..n {
                for j in 0..=i {
                    let v = rnd() * 10f64.powi((i % 7) as i32 - 3);
                    a[(i, j)] = v;
                    a[(j, i)] = v;
                }
            }
            let b: Vec<f64> = (0..n).map(|_| rnd()).collect();
            let mut z = vec![0.0; n];
            sym_mul(&a, &b, &mut z);
            for (r, zr) in z.iter().enumerate() {
                let plain: f64 = a.column(r).iter().zip(&b).map(|(x, y)| x * y).sum();
                assert_eq!(zr.to_bits(), plain.to_bits(), "n = {n}, row {r}");
            }
        }
    }
}
