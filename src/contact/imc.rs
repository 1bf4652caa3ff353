//! The implicit contact model's pair energy (Choi 2021 thesis eq. 3.10/3.27, docs/derivations/der-imc.md §B4):
//! `E = k_c ln(1 + e^{k_e (2 − Δ/h)}) / k_e` for two segments at distance Δ, h the rod radius,
//! a softplus centred on contact (Δ = 2h) with a small cushion beyond it. Its gradient and
//! Hessian over the 12 node coordinates come from the exact distance's derivatives
//! (contact::segment): `∇E = E'(Δ)∇Δ`, `∇²E = E''(Δ)∇Δ∇Δᵀ + E'(Δ)∇²Δ`, or the positive
//! semi-definite Gauss–Newton block `E''∇Δ∇Δᵀ` (docs/derivations/der-imc.md §B5: the full Hessian is indefinite).

use super::segment::{self, Mat12, Vec12, logistic, softplus};
use crate::math::Vec3;

/// IMC parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImcParams {
    /// Rod radius h [m].
    pub radius: f64,
    /// Energy stiffness k_c [J] (scales the dimensionless softplus).
    pub stiffness: f64,
    /// Sharpness k_e [-] (50 in the thesis).
    pub sharpness: f64,
}

/// Which Hessian to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairHessian {
    /// `E''∇Δ∇Δᵀ + E'∇²Δ` (exact, indefinite).
    Exact,
    /// `E''∇Δ∇Δᵀ` (positive semi-definite).
    GaussNewton,
}

/// Energy [J] and its first and second derivatives in Δ [J/m, J/m²].
pub fn energy_of_distance(d: f64, p: &ImcParams) -> (f64, f64, f64) {
    let z = p.sharpness * (2.0 - d / p.radius);
    // Beyond contact (z < 0) `softplus` and `logistic` both start from `e^z`: taken once,
    // the same operations as each alone (the same bits).
    let (soft, s) = if z < 0.0 {
        let e = z.exp();
        (e.ln_1p(), e / (1.0 + e))
    } else {
        (softplus(z), logistic(z))
    };
    (
        p.stiffness * soft / p.sharpness,
        -p.stiffness * s / p.radius,
        p.stiffness * p.sharpness * s * (1.0 - s) / (p.radius * p.radius),
    )
}

/// One segment pair: energy [J], gradient [J/m] and Hessian [J/m²] over `[a0, a1, b0, b1]`,
/// and the distance. None where the distance is not differentiable (see
/// `segment::distance_derivatives`).
pub fn pair(
    a0: &Vec3,
    a1: &Vec3,
    b0: &Vec3,
    b1: &Vec3,
    p: &ImcParams,
    which: PairHessian,
) -> Option<(f64, Vec12, Mat12, f64)> {
    let c = segment::distance(a0, a1, b0, b1);
    let (gd, hd) = segment::distance_derivatives(a0, a1, b0, b1, &c)?;
    let (e, de, dde) = energy_of_distance(c.distance, p);
    let g = gd * de;
    let mut h = gd * gd.transpose() * dde;
    if which == PairHessian::Exact {
        h += hd * de;
    }
    Some((e, g, h, c.distance))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The energy and its derivatives from one `e^z` are those of `softplus` and `logistic`
    /// taken apart, to the bit, across contact (z from −300 to 60, through 0 and 30).
    #[test]
    fn one_exponential_gives_the_bits_of_softplus_and_logistic_apart() {
        let p = ImcParams {
            radius: 1.6e-3,
            stiffness: 2.6e-4,
            sharpness: 50.0,
        };
        let mut checked = [0usize; 2];
        for k in 0..=36_000 {
            let d = p.radius * (2.0 - (-300.0 + 0.01 * k as f64) / p.sharpness);
            let z = p.sharpness * (2.0 - d / p.radius);
            let s = logistic(z);
            let apart = (
                p.stiffness * softplus(z) / p.sharpness,
                -p.stiffness * s / p.radius,
                p.stiffness * p.sharpness * s * (1.0 - s) / (p.radius * p.radius),
            );
            let (e, de, dde) = energy_of_distance(d, &p);
            assert_eq!(
                [e.to_bits(), de.to_bits(), dde.to_bits()],
                [apart.0.to_bits(), apart.1.to_bits(), apart.2.to_bits()],
                "d = {d:e} (z = {z})"
            );
            checked[usize::from(z < 0.0)] += 1;
        }
        assert!(checked.iter().all(|&n| n > 5000), "{checked:?}");
    }
}
