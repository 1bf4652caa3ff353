//! Shared test references (independent of the crate's solvers) and fixtures.
#![allow(dead_code)]

/// Tip of the planar elastica clamped horizontally at σ = 0 and free at σ = 1, under a dead tip
/// load α = P L²/EI and self-weight γ = q L³/EI, both acting downwards (docs/derivations/cosserat.md
/// Appendix A):  θ'' = -(α + γ(1-σ)) cos θ, θ(0) = 0, θ'(1) = 0, x' = cos θ, y' = sin θ.
/// Solved by shooting on θ'(0) with RK4 (4000 steps) and Newton, with continuation in the load
/// from zero. Returns (x/L, y/L drop, tip angle [rad]).
pub fn elastica_tip(alpha: f64, gamma: f64) -> (f64, f64, f64) {
    let steps = 4000;
    let integrate = |k0: f64, a: f64, g: f64| -> [f64; 4] {
        // state: θ, θ', x, y
        let f = |s: f64, y: [f64; 4]| -> [f64; 4] {
            [
                y[1],
                -(a + g * (1.0 - s)) * y[0].cos(),
                y[0].cos(),
                y[0].sin(),
            ]
        };
        let h = 1.0 / steps as f64;
        let mut y = [0.0, k0, 0.0, 0.0];
        for i in 0..steps {
            let s = i as f64 * h;
            let k1 = f(s, y);
            let add = |y: [f64; 4], k: [f64; 4], c: f64| {
                [
                    y[0] + c * k[0],
                    y[1] + c * k[1],
                    y[2] + c * k[2],
                    y[3] + c * k[3],
                ]
            };
            let k2 = f(s + 0.5 * h, add(y, k1, 0.5 * h));
            let k3 = f(s + 0.5 * h, add(y, k2, 0.5 * h));
            let k4 = f(s + h, add(y, k3, h));
            for j in 0..4 {
                y[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
            }
        }
        y
    };
    // Adaptive continuation in the load: a step is accepted only if Newton converges and the
    // shooting parameter moves little, so the solution stays on the branch that grows from zero.
    let newton = |mut k: f64, a: f64, g: f64| -> Option<f64> {
        for _ in 0..60 {
            let r = integrate(k, a, g)[1];
            if r.abs() < 1e-11 {
                return Some(k);
            }
            let d = 1e-7 * (1.0 + k.abs());
            let dr = (integrate(k + d, a, g)[1] - r) / d;
            let step = r / dr;
            k -= step;
            if !k.is_finite() {
                return None;
            }
            // At large γ the residual θ'(1) carries amplified rounding; converge on the step.
            if step.abs() < 1e-13 * (1.0 + k.abs()) {
                return Some(k);
            }
        }
        None
    };
    let mut k0 = 0.0;
    let mut lam: f64 = 0.0;
    let mut dl: f64 = 0.01;
    while lam < 1.0 {
        let next = (lam + dl).min(1.0);
        match newton(k0, alpha * next, gamma * next) {
            Some(k) if (k - k0).abs() < 0.1 * (1.0 + k0.abs()) => {
                k0 = k;
                lam = next;
                dl = (dl * 1.5).min(0.02);
            }
            _ => {
                dl *= 0.5;
                assert!(dl > 1e-9, "elastica continuation stalled at λ = {lam}");
            }
        }
    }
    let y = integrate(k0, alpha, gamma);
    assert!(
        y[1].abs() < 1e-8,
        "elastica shooting failed: θ'(1) = {}",
        y[1]
    );
    (y[2], y[3], y[0])
}

/// Nylon 2-0 from the library's presets (docs/derivations/cosserat.md §C.1): r = 0.15 mm, E = 2 GPa,
/// ν = 0.4, ρ = 1140 kg/m³.
pub fn nylon() -> suture::rod::RodParams {
    use suture::rod::params::{NYLON, shear_from_poisson, usp_radius};
    suture::rod::RodParams {
        radius: usp_radius("2-0").expect("USP 2-0"),
        youngs_modulus: NYLON.youngs_modulus,
        shear_modulus: shear_from_poisson(NYLON.youngs_modulus, NYLON.poisson_ratio),
        density: NYLON.density,
    }
}

/// A small deterministic generator for randomised tests (an LCG; the high bits are used).
pub struct Rng(pub u64);

impl Rng {
    /// Raw 53 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }
    /// Uniform in the unit cube.
    pub fn vec(&mut self) -> suture::math::Vec3 {
        suture::math::Vec3::new(self.uniform(), self.uniform(), self.uniform())
    }
}

/// Open `page` in headless Chromium (the flags this machine's closed network needs; a fresh
/// profile under `dir`) with `extra` arguments, and assert that it loaded with no console
/// error. Returns its stdout (the DOM with `--dump-dom`).
pub fn chromium(dir: &std::path::Path, page: &std::path::Path, extra: &[String]) -> String {
    let profile = dir.join("chromium-profile");
    let o = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium (apt package chromium; .ci/run installs it)");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    for bad in [
        "Uncaught",
        "Failed to load resource",
        "ERR_FILE_NOT_FOUND",
        "CONSOLE",
    ] {
        assert!(!err.contains(bad), "{bad}: {err}");
    }
    assert!(o.status.success(), "{err}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The closest approach of two segments of the polyline `x` more than `skip` apart
/// (`j − i > skip`) [m].
pub fn closest_non_neighbours(x: &[suture::math::Vec3], skip: usize) -> f64 {
    let n = x.len() - 1;
    let mut best = f64::INFINITY;
    for i in 0..n {
        for j in i + skip + 1..n {
            best = best.min(
                suture::contact::segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance,
            );
        }
    }
    best
}
