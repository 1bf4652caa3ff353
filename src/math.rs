//! L0: f64 linear-algebra aliases over nalgebra and the small rotation helpers every model needs.
//!
//! Conventions: rotation matrices map body (material) coordinates to world coordinates,
//! `y_world = R y_body`; a rotation vector `φ` stands for the rotation by `|φ|` [rad] about
//! `φ/|φ|`; `[a]` is the skew matrix with `[a] b = a × b`.

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3};

/// 3-vector, f64.
pub type Vec3 = Vector3<f64>;
/// 3×3 matrix, f64.
pub type Mat3 = Matrix3<f64>;
/// Unit quaternion, f64.
pub type Quat = UnitQuaternion<f64>;
/// Rigid pose (rotation + translation), f64.
pub type Pose = Isometry3<f64>;

/// The unit vector `e3 = (0, 0, 1)`: the tangent director in body coordinates.
pub const E3: Vec3 = Vec3::new(0.0, 0.0, 1.0);

/// Skew (cross-product) matrix `[a]`, with `[a] b = a × b`.
#[inline]
pub fn skew(a: &Vec3) -> Mat3 {
    Mat3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// Coefficients of the alternating series `Σ_k (-1)^k x^k / (2k + n)!` for n = 1..4, k = 0..9,
/// i.e. `sinθ/θ`, `(1-cosθ)/θ²`, `(θ-sinθ)/θ³`, `(θ²/2-1+cosθ)/θ⁴` with `x = θ²`.
const fn series_coeffs(n: usize) -> [f64; 10] {
    let mut c = [0.0; 10];
    let mut k = 0;
    while k < 10 {
        // (2k+n)!
        let mut f = 1.0;
        let mut i = 2;
        while i <= 2 * k + n {
            f *= i as f64;
            i += 1;
        }
        c[k] = if k % 2 == 0 { 1.0 / f } else { -1.0 / f };
        k += 1;
    }
    c
}
const SER_A: [f64; 10] = series_coeffs(1);
const SER_B: [f64; 10] = series_coeffs(2);
const SER_C: [f64; 10] = series_coeffs(3);
const SER_D: [f64; 10] = series_coeffs(4);

#[inline]
fn horner(c: &[f64; 10], x: f64) -> f64 {
    let mut s = c[9];
    let mut i = 9;
    while i > 0 {
        i -= 1;
        // Plain multiply-add: `f64::mul_add` is a libm call unless the build targets FMA hardware.
        s = s * x + c[i];
    }
    s
}

/// The first five terms of [`horner`]'s series.
#[inline]
fn horner5(c: &[f64; 10], x: f64) -> f64 {
    (((c[4] * x + c[3]) * x + c[2]) * x + c[1]) * x + c[0]
}

/// The four Rodrigues-type coefficients of a rotation angle `θ`:
/// `a = sinθ/θ`, `b = (1-cosθ)/θ²`, `c = (θ-sinθ)/θ³`, `d = (θ²/2-1+cosθ)/θ⁴`.
///
/// Closed forms lose digits to cancellation for small θ (Pai 2002 eq. (13) even divides by
/// |u|); below θ = 1 the Taylor series (10 terms, truncation < 1e-20) is used instead
/// (docs/derivations/cosserat.md §A.6, "singularity-free form").
#[inline]
pub fn rodrigues_coeffs(theta2: f64) -> [f64; 4] {
    if theta2 < 1e-2 {
        // Five terms: the first omitted one is below θ¹⁰/11! < 3e-18.
        [
            horner5(&SER_A, theta2),
            horner5(&SER_B, theta2),
            horner5(&SER_C, theta2),
            horner5(&SER_D, theta2),
        ]
    } else if theta2 < 1.0 {
        [
            horner(&SER_A, theta2),
            horner(&SER_B, theta2),
            horner(&SER_C, theta2),
            horner(&SER_D, theta2),
        ]
    } else {
        let t = theta2.sqrt();
        let (s, c) = t.sin_cos();
        [
            s / t,
            (1.0 - c) / theta2,
            (t - s) / (theta2 * t),
            (0.5 * theta2 - 1.0 + c) / (theta2 * theta2),
        ]
    }
}

/// Rotation matrix `exp([φ])` (Rodrigues, Pai 2002 eq. (15)), exact for any angle.
#[inline]
pub fn exp_so3(phi: &Vec3) -> Mat3 {
    let [a, b, _, _] = rodrigues_coeffs(phi.norm_squared());
    let k = skew(phi);
    Mat3::identity() + k * a + k * k * b
}

/// Unit quaternion of a rotation vector `φ` [rad]: `(cos(θ/2), sin(θ/2) φ/θ)`, `θ = |φ|`, from
/// the half-angle Rodrigues coefficients (`sin x / x = a(x²)`, `1 - cos x = b(x²) x²` at
/// `x = θ/2`), so small angles need no `sin`/`cos` call and lose no digits.
#[inline]
pub fn exp_quat(phi: &Vec3) -> Quat {
    let s = 0.25 * phi.norm_squared();
    let [a, b, _, _] = rodrigues_coeffs(s);
    let q = nalgebra::Quaternion::from_parts(1.0 - b * s, phi * (0.5 * a));
    Quat::new_unchecked(q)
}

/// Rotation vector of a rotation matrix (the SO(3) log), robust near 0 and π.
#[inline]
pub fn log_so3(r: &Mat3) -> Vec3 {
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r));
    q.scaled_axis()
}

/// Kinematics of one segment of constant strain (Pai 2002 eqs. (12)–(14), singularity-free form
/// of docs/derivations/cosserat.md §A.6), walked for a length `sigma` [m] with body angular rate `w` [1/m] and
/// unit tangent `e3`:
/// - `rot = exp(σ[w])`, the frame at the far end relative to the start;
/// - `p = ∫₀^σ exp(t[w]) e3 dt`, the far end's position relative to the start (start frame);
/// - `pp = ∫₀^σ p(t) dt`, the first moment of the arc, needed to integrate distributed loads
///   exactly.
#[derive(Clone, Copy, Debug)]
pub struct Arc {
    /// Relative rotation exp(σ[w]).
    pub rot: Mat3,
    /// Chord vector in the start frame [m].
    pub p: Vec3,
    /// ∫ p dt [m²].
    pub pp: Vec3,
}

impl Arc {
    /// Evaluate the arc of length `sigma` [m] with body rate `w` [1/m].
    #[inline]
    pub fn new(w: &Vec3, sigma: f64) -> Arc {
        let phi = w * sigma;
        let t2 = phi.norm_squared();
        let [a, b, c, d] = rodrigues_coeffs(t2);
        // [φ]² = φφᵀ - θ² I, written out (a hot kernel: no 3×3 products).
        let (x, y, z) = (phi.x, phi.y, phi.z);
        let (bx, by, bz) = (b * x, b * y, b * z);
        let diag = 1.0 - b * t2;
        let rot = Mat3::new(
            diag + bx * x,
            bx * y - a * z,
            bx * z + a * y,
            by * x + a * z,
            diag + by * y,
            by * z - a * x,
            bz * x - a * y,
            bz * y + a * x,
            diag + bz * z,
        );
        // [φ] e3 = (y, -x, 0); [φ]² e3 = z φ - θ² e3.
        let ke3 = Vec3::new(y, -x, 0.0);
        let k2e3 = Vec3::new(z * x, z * y, z * z - t2);
        let p = (E3 + ke3 * b + k2e3 * c) * sigma;
        let pp = (E3 * 0.5 + ke3 * c + k2e3 * d) * (sigma * sigma);
        Arc { rot, p, pp }
    }
}

/// Rotation taking unit vector `a` to unit vector `b` by the smallest angle (parallel transport
/// of a frame along a polyline corner). Antiparallel vectors rotate by π about any axis
/// perpendicular to `a`.
pub fn rotation_between(a: &Vec3, b: &Vec3) -> Mat3 {
    let c = a.cross(b);
    let s = c.norm();
    let cosang = a.dot(b);
    if s < 1e-15 {
        if cosang > 0.0 {
            return Mat3::identity();
        }
        let axis = any_perpendicular(a);
        return exp_so3(&(axis * std::f64::consts::PI));
    }
    exp_so3(&(c / s * s.atan2(cosang)))
}

/// A unit vector perpendicular to `a` (uses the world axis least aligned with `a`).
pub fn any_perpendicular(a: &Vec3) -> Vec3 {
    let ax = a.abs();
    let e = if ax.x <= ax.y && ax.x <= ax.z {
        Vec3::x()
    } else if ax.y <= ax.z {
        Vec3::y()
    } else {
        Vec3::z()
    };
    a.cross(&e).normalize()
}

/// Build a pose from a rotation matrix (body to world) and a position [m].
pub fn pose_from(r: &Mat3, p: &Vec3) -> Pose {
    Pose::from_parts(
        Translation3::from(*p),
        UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r)),
    )
}

/// Iteration cap of [`rotation_from_matrix`]: see `tests::rotation_from_matrix_matches_nalgebra`
/// for the iteration counts it leaves a margin over.
pub const ROTATION_ITERATIONS: usize = 300;

/// Cap on the perturbations of one stall check in [`rotation_from_matrix`] (a proper
/// near-rotation leaves it after one).
const ROTATION_PERTURBATIONS: usize = 64;

/// The rotation nearest to a nearly orthonormal matrix `m` (body to world), as a unit
/// quaternion: Müller et al. 2016, "A Robust Method to Extract the Rotational Part of
/// Deformations", from the identity guess, to the angular tolerance `f64::EPSILON`.
///
/// This is nalgebra's `UnitQuaternion::from_matrix` (= `Rotation3::from_matrix_eps(m,
/// f64::EPSILON, 0, identity)`) operation for operation, so the two agree bit for bit whenever
/// nalgebra's iteration ends within [`ROTATION_ITERATIONS`] (recordings made before this
/// function existed replay unchanged), but both of its loops are capped:
///
/// - Each iteration turns the estimate `R` by `Σ rᵢ × mᵢ / |Σ rᵢ·mᵢ|` (columns `rᵢ`, `mᵢ`)
///   and stops when that angle is at most `f64::EPSILON` ≈ 2.2e-16 rad. When `m` is a
///   rotation by π (to rounding), the identity guess is the rotation *farthest* from it, a
///   stationary point where the cross products cancel by symmetry: the step is then only
///   `m`'s rounding-level asymmetry, which can stay just above the tolerance. The iteration
///   does not cycle, it creeps: a frame of `tests/fixtures/draped_rope_hang.toml` (the rope
///   going down the far side of the bar, columns `(e_y, a e_x, -b e_z)` with `1 - a` = 5 ulp)
///   turns the estimate by a constant 5.55e-16 rad per iteration about z, and would need
///   about (π/2) / 5.55e-16 ≈ 3e15 iterations to leave the identity: nalgebra's
///   `from_matrix` never returns. After the cap the estimate may be as wrong as that, so it is
///   discarded: the iteration restarts, capped, from the closed-form (Shepperd) quaternion of
///   `m`, normalised, which is within rounding of the answer for a near-rotation; if that does
///   not meet the tolerance either, its estimate is returned, re-orthonormalised.
/// - When the angle is below the tolerance, nalgebra checks that `R` is a minimum of
///   `|m - R|` by perturbing it about a coordinate axis until the distance changes; for a
///   matrix far from any rotation (zero, or a reflection such as `diag(1, 1, -1)`) the distance
///   never changes and that loop never ends. It is capped too, and such inputs take the same
///   fallback.
///
/// A non-finite `m` gives a non-finite quaternion (as the world's guard expects), not a hang.
pub fn rotation_from_matrix(m: &Mat3) -> Quat {
    if !m.iter().all(|v| v.is_finite()) {
        return Quat::new_unchecked(nalgebra::Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
    }
    let rot = match rotation_iterate(m, Mat3::identity(), ROTATION_ITERATIONS) {
        (rot, Some(_)) => rot,
        (_, None) => {
            let shepperd =
                UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*m))
                    .into_inner();
            let guess = Quat::new_normalize(shepperd)
                .to_rotation_matrix()
                .into_inner();
            match rotation_iterate(m, guess, ROTATION_ITERATIONS) {
                (rot, Some(_)) => rot,
                (rot, None) => orthonormalize(&rot),
            }
        }
    };
    Quat::from_rotation_matrix(&Rotation3::from_matrix_unchecked(rot))
}

/// The iteration of [`rotation_from_matrix`] (nalgebra 0.35 `Rotation3::from_matrix_eps` with
/// `eps = f64::EPSILON`, `max_iter` iterations, its perturbation loop capped) from `guess`: the
/// estimate and, if it met the tolerance, after how many iterations.
fn rotation_iterate(m: &Mat3, guess: Mat3, max_iter: usize) -> (Mat3, Option<usize>) {
    let eps = f64::EPSILON;
    let eps_disturbance = eps.sqrt().max(eps * eps);
    let mut perturbation_axes = Vector3::x_axis();
    let mut rot = guess;
    for it in 0..max_iter {
        let axis = rot.column(0).cross(&m.column(0))
            + rot.column(1).cross(&m.column(1))
            + rot.column(2).cross(&m.column(2));
        let denom = rot.column(0).dot(&m.column(0))
            + rot.column(1).dot(&m.column(1))
            + rot.column(2).dot(&m.column(2));
        let axisangle = axis / (denom.abs() + eps);
        match nalgebra::Unit::try_new_and_get(axisangle, eps) {
            Some((axis, angle)) => {
                rot = Rotation3::from_axis_angle(&axis, angle) * rot;
            }
            None => {
                // A minimum of |m - R| (done) or a maximum (perturb and go on)?
                let mut perturbed = rot;
                let norm_squared = (m - rot).norm_squared();
                let mut new_norm_squared = norm_squared;
                let mut changed = false;
                for _ in 0..ROTATION_PERTURBATIONS {
                    perturbed *= Rotation3::from_axis_angle(&perturbation_axes, eps_disturbance);
                    new_norm_squared = (m - perturbed).norm_squared();
                    // approx's `abs_diff_ne!(a, b, epsilon = f64::EPSILON)` (true for NaN).
                    let same = (norm_squared - new_norm_squared).abs() <= eps;
                    if !same {
                        changed = true;
                        break;
                    }
                }
                if !changed {
                    // No turn about this axis changes the distance: m is far from any
                    // rotation (e.g. zero, or a reflection).
                    return (rot, None);
                }
                if norm_squared < new_norm_squared {
                    return (rot, Some(it));
                }
                perturbation_axes = nalgebra::Unit::new_unchecked(perturbation_axes.yzx());
                rot = perturbed;
            }
        }
    }
    (rot, None)
}

/// Re-orthonormalise a nearly orthogonal matrix (Gram–Schmidt on the columns, e3 kept exact).
pub fn orthonormalize(r: &Mat3) -> Mat3 {
    let e3 = r.column(2).normalize();
    let e1 = r.column(0).into_owned();
    let e1 = (e1 - e3 * e3.dot(&e1)).normalize();
    let e2 = e3.cross(&e1);
    Mat3::from_columns(&[e1, e2, e3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rodrigues_series_matches_closed_form_at_switch() {
        // Both branches agree at the switch θ = 1 to machine precision.
        let series = [SER_A, SER_B, SER_C, SER_D].map(|c| horner(&c, 1.0));
        let closed = rodrigues_coeffs(1.0);
        for i in 0..4 {
            assert!(
                (series[i] - closed[i]).abs() < 4e-16,
                "{i}: {} vs {}",
                series[i],
                closed[i]
            );
        }
        // Small angles (θ = 1e-3, x = θ²): three Taylor terms are exact to < 1e-19 there.
        let x = 1e-6;
        let c = rodrigues_coeffs(x);
        assert!((c[0] - (1.0 - x / 6.0 + x * x / 120.0)).abs() < 1e-16);
        assert!((c[3] - (1.0 / 24.0 - x / 720.0 + x * x / 40320.0)).abs() < 1e-16);
    }

    #[test]
    fn short_series_matches_long_series_at_its_switch() {
        let x = 1e-2;
        for c in [SER_A, SER_B, SER_C, SER_D] {
            let (short, long) = (horner5(&c, x), horner(&c, x));
            assert!(
                (short - long).abs() <= 1e-17 * long.abs(),
                "{short} vs {long}"
            );
        }
    }

    #[test]
    fn arc_rotation_matches_nalgebra_on_every_branch() {
        // θ on the 5-term, 10-term and closed-form branches.
        for theta in [1e-9, 1e-3, 0.09, 0.11, 0.5, 0.99, 1.01, 2.5, 3.1] {
            let axis = Vec3::new(0.3, -0.8, 0.52).normalize();
            let arc = Arc::new(&(axis * theta), 1.0);
            let reference = Rotation3::new(axis * theta).into_inner();
            assert!((arc.rot - reference).amax() < 4e-16, "θ = {theta}");
        }
    }

    #[test]
    fn arc_matches_numerical_quadrature() {
        let w = Vec3::new(3.0, -2.0, 5.0);
        let sigma = 0.7;
        let arc = Arc::new(&w, sigma);
        // Composite Simpson on p(t) = ∫ exp(t[w]) e3 and pp = ∫ p.
        let n = 2000;
        let h = sigma / n as f64;
        let f = |t: f64| exp_so3(&(w * t)) * E3;
        let mut p = Vec3::zeros();
        let mut pp = Vec3::zeros();
        let mut p_at = vec![Vec3::zeros(); n + 1];
        for i in 0..n {
            let t0 = i as f64 * h;
            p += (f(t0) + f(t0 + h) * 1.0 + f(t0 + 0.5 * h) * 4.0) * (h / 6.0);
            p_at[i + 1] = p;
        }
        for i in 0..n {
            // trapezoid refined by the exact mid value is overkill; Simpson via Arc at mid:
            let tm = (i as f64 + 0.5) * h;
            let pm = Arc::new(&w, tm).p;
            pp += (p_at[i] + p_at[i + 1] + pm * 4.0) * (h / 6.0);
        }
        assert!((arc.p - p).norm() < 1e-12, "{:?} vs {:?}", arc.p, p);
        assert!((arc.pp - pp).norm() < 1e-12, "{:?} vs {:?}", arc.pp, pp);
        assert!((arc.rot - exp_so3(&(w * sigma))).norm() < 1e-15);
    }

    #[test]
    fn log_inverts_exp() {
        for phi in [
            Vec3::new(0.1, -0.2, 0.3),
            Vec3::new(1e-9, 0.0, 0.0),
            Vec3::new(0.0, 3.0, 0.0),
        ] {
            assert!((log_so3(&exp_so3(&phi)) - phi).norm() < 1e-13);
        }
        let a = Vec3::new(1.0, 2.0, -0.5).normalize();
        for b in [Vec3::new(-0.3, 0.1, 1.0).normalize(), -a, a] {
            let r = rotation_between(&a, &b);
            assert!((r * a - b).norm() < 1e-14);
            assert!((r.transpose() * r - Mat3::identity()).norm() < 1e-14);
        }
    }

    /// xorshift64*: a deterministic stream of uniform numbers in [0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn random_axis(state: &mut u64) -> Vec3 {
        let z = 2.0 * uniform(state) - 1.0;
        let phi = 2.0 * std::f64::consts::PI * uniform(state);
        let r = (1.0 - z * z).sqrt();
        Vec3::new(r * phi.cos(), r * phi.sin(), z)
    }

    #[test]
    fn rotation_from_matrix_matches_nalgebra() {
        // Rotations by every angle up to π (down to 1e-16 short of it, where the iteration
        // from the identity needs longest: the distance to π triples per iteration), rounded
        // compositions of many small turns (as the scenes' parallel-transported frames are), and
        // rotations perturbed by up to 1e-6 per entry. Wherever nalgebra's capped iteration
        // converges within the cap, ours gives the same bits.
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut most = 0;
        let mut cases = 0;
        for k in 0..3000 {
            let axis = random_axis(&mut state);
            let angle = match k % 3 {
                0 => std::f64::consts::PI * uniform(&mut state),
                1 => std::f64::consts::PI - 10f64.powf(-16.0 * uniform(&mut state)),
                _ => std::f64::consts::PI * uniform(&mut state).sqrt(),
            };
            let mut m = exp_so3(&(axis * angle));
            if k % 5 == 1 {
                for _ in 0..100 {
                    m = exp_so3(&(random_axis(&mut state) * 0.03)) * m;
                }
            }
            if k % 7 == 2 {
                for v in m.iter_mut() {
                    *v += 1e-6 * (2.0 * uniform(&mut state) - 1.0);
                }
            }
            let (_, iterations) = rotation_iterate(&m, Mat3::identity(), ROTATION_ITERATIONS);
            let n = iterations.expect("converges");
            most = most.max(n);
            let theirs: Quat = Rotation3::from_matrix_eps(
                &m,
                f64::EPSILON,
                ROTATION_ITERATIONS,
                Rotation3::identity(),
            )
            .into();
            let ours = rotation_from_matrix(&m);
            assert_eq!(
                ours.coords.map(f64::to_bits),
                theirs.coords.map(f64::to_bits),
                "case {k}"
            );
            cases += 1;
        }
        // Measured: 31-37 iterations for most angles, at most 70 here (74 in 30 000 such
        // cases) for angles within 1e-14 of π. The cap leaves 4× that.
        assert!(4 * most <= ROTATION_ITERATIONS, "{most} iterations");
        assert_eq!(cases, 3000);
    }

    #[test]
    fn rotation_from_matrix_ends_on_a_rotation_by_pi() {
        // The frame of tests/fixtures/draped_rope_hang.toml on which nalgebra's from_matrix
        // creeps forever: d1 = e_y, d2 = a e_x, d3 = -b e_z, a rotation by π about
        // (e_x + e_y)/√2, with 1 - a = 5 ulp.
        let bits: [u64; 9] = [
            0,
            4607182418800017408,
            0,
            4607182418800017403,
            0,
            0,
            0,
            0,
            13830554455654793211,
        ];
        let m = Mat3::from_iterator(bits.map(f64::from_bits));
        // From the identity it does not meet the tolerance...
        assert_eq!(
            rotation_iterate(&m, Mat3::identity(), ROTATION_ITERATIONS).1,
            None
        );
        // ... and the answer is the rotation m is within rounding of.
        let r = rotation_from_matrix(&m).to_rotation_matrix().into_inner();
        assert!((r - m).amax() < 1.2e-15, "{r} vs {m}");
        // Measured: 1.0e-15 from m, orthonormal to 8.9e-16.
        assert!((r.transpose() * r - Mat3::identity()).amax() < 1.2e-15);
    }

    #[test]
    fn rotation_from_matrix_ends_on_any_matrix() {
        // Far from any rotation: nalgebra's stall check never ends on these.
        for m in [
            Mat3::zeros(),
            Mat3::from_diagonal(&Vec3::new(1.0, 1.0, -1.0)),
            -Mat3::identity(),
            Mat3::from_element(1e300),
        ] {
            let q = rotation_from_matrix(&m);
            assert!(q.coords.iter().all(|v| v.is_finite()), "{m}");
            assert!((q.coords.norm() - 1.0).abs() < 1e-15, "{m}");
        }
        let nan = Mat3::from_element(f64::NAN);
        assert!(rotation_from_matrix(&nan).coords.iter().any(|v| v.is_nan()));
        assert!(
            !rotation_from_matrix(&Mat3::from_element(f64::INFINITY))
                .coords
                .iter()
                .all(|v| v.is_finite())
        );
    }

    #[test]
    fn exp_quat_matches_nalgebra_on_every_branch() {
        // θ = 1e-7 (short series), 0.5 and 1.5 (long series), 2.5 and 6 (closed form).
        for (k, th) in [1e-7, 0.5, 1.5, 2.5, 6.0].into_iter().enumerate() {
            let axis = Vec3::new(0.3, -0.8, 0.5 + k as f64 * 0.1).normalize();
            let phi = axis * th;
            let ours = exp_quat(&phi);
            let theirs = Quat::from_scaled_axis(phi);
            let err = (ours.coords - theirs.coords).amax();
            assert!(err < 5e-16, "θ {th}: {err}");
            assert!((ours.coords.norm() - 1.0).abs() < 5e-16);
        }
    }
}

/// Whether this CPU has AVX2, so that a hot kernel (the banded substitutions over many
/// right-hand sides, `Banded::solve_inner_many_gapped`; the Woodbury capacitance's Cholesky
/// factor and its triangular solve by rows, rod::implicit::potential) runs a copy of itself
/// compiled for it: twice the lanes a vector instruction holds. Both copies give the same
/// bits: Rust never fuses a multiply and an add into one rounding (no floating-point
/// contraction without `mul_add`), and each kernel is vectorised only across independent
/// lanes, each lane's operations in their written order (their tests run both copies against
/// each other). std checks the CPU once and caches the answer (no lock, no allocation), so the
/// real-time loops may ask.
#[inline]
pub fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A 64-bit FNV-1a hash over the exact bit patterns of f64 state (a state digest: two states
/// hash alike only if every bit matches, up to hash collisions). Allocation-free, one
/// multiply per byte; used by `sim::World::digest` for bit-for-bit replay checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(pub u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Feed the 8 bytes of `x` (little-endian).
    #[inline]
    pub fn u64(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Feed the bits of `x` (so -0.0 and 0.0, and NaN payloads, differ).
    #[inline]
    pub fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    /// Feed a vector's components.
    #[inline]
    pub fn vec3(&mut self, v: &Vec3) {
        self.f64(v.x);
        self.f64(v.y);
        self.f64(v.z);
    }
    /// Feed a quaternion's components (i, j, k, w).
    #[inline]
    pub fn quat(&mut self, q: &Quat) {
        for c in q.coords.iter() {
            self.f64(*c);
        }
    }
    /// Feed a slice of vectors.
    pub fn vec3s(&mut self, v: &[Vec3]) {
        for x in v {
            self.vec3(x);
        }
    }
    /// Feed a count or an index.
    #[inline]
    pub fn usize(&mut self, x: usize) {
        self.u64(x as u64);
    }
    /// Feed a flag (as one u64: 0 or 1).
    #[inline]
    pub fn bool(&mut self, x: bool) {
        self.u64(u64::from(x));
    }
    /// Feed a slice of flags: its length, then the flags packed 64 to a word.
    pub fn bools(&mut self, v: &[bool]) {
        self.usize(v.len());
        for chunk in v.chunks(64) {
            let word = chunk
                .iter()
                .enumerate()
                .fold(0u64, |w, (i, &b)| w | (u64::from(b) << i));
            self.u64(word);
        }
    }
    /// Feed a slice of numbers: its length, then each.
    pub fn f64s(&mut self, v: &[f64]) {
        self.usize(v.len());
        for x in v {
            self.f64(*x);
        }
    }
    /// Feed a matrix's components (column-major).
    #[inline]
    pub fn mat3(&mut self, m: &Mat3) {
        for c in m.iter() {
            self.f64(*c);
        }
    }
    /// Feed a string's length and bytes.
    pub fn str(&mut self, s: &str) {
        self.usize(s.len());
        for b in s.bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Helpers for the state-digest tests of every module that carries state from step to step:
/// each perturbs one piece of state by the smallest change (one ulp of an f64, one step of an
/// index, a flag flipped) and asserts that the digest sees it.
#[cfg(test)]
pub(crate) mod digest_test {
    use super::{Mat3, Quat, Vec3};

    /// One ulp up.
    pub fn ulp(x: &mut f64) {
        *x = x.next_up();
    }
    /// One ulp up in the last component of `v`.
    pub fn ulp3(v: &mut Vec3) {
        ulp(&mut v.z);
    }
    /// One ulp up in the last component of `m`.
    pub fn ulp_m(m: &mut Mat3) {
        ulp(&mut m[(2, 2)]);
    }
    /// One ulp up in the scalar part of `q` (kept as stored: no renormalisation).
    pub fn ulp_q(q: &mut Quat) {
        let mut c = q.into_inner();
        ulp(&mut c.w);
        *q = Quat::new_unchecked(c);
    }

    /// A named change of a state.
    pub type Change<'a, T> = (&'a str, &'a dyn Fn(&mut T));

    /// Assert that `digest` is reproducible on a copy of `base` and that each change, applied
    /// alone to a copy of `base`, changes it. Panics naming every change the digest missed.
    pub fn assert_each_changes<T: Clone>(
        base: &T,
        digest: impl Fn(&T) -> u64,
        changes: &[Change<'_, T>],
    ) {
        let d0 = digest(base);
        assert_eq!(d0, digest(&base.clone()), "the digest is not reproducible");
        let missed: Vec<&str> = changes
            .iter()
            .filter(|(_, change)| {
                let mut s = base.clone();
                change(&mut s);
                digest(&s) == d0
            })
            .map(|(name, _)| *name)
            .collect();
        assert!(missed.is_empty(), "the digest misses: {missed:?}");
    }
}
