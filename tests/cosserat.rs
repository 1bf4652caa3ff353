//! Dynamic Cosserat rod (Soler 2018 discretisation): statics against the elastica tables and the
//! STRANDS oracle, dynamics against analytic frequencies and conservation laws, and the
//! digest-cosserat Part D acceptance tests.

use suture::math::{Mat3, Vec3};
use suture::rod::{
    CosseratConfig, CosseratParams, CosseratRod, Drive, EndCondition, EndTarget, Integrator,
    Method, RodParams,
};

/// Nylon 2-0 (digest-cosserat C.1): r = 0.15 mm, E = 2 GPa, ν = 0.4, ρ = 1140 kg/m³.
fn nylon() -> RodParams {
    RodParams {
        radius: 0.15e-3,
        youngs_modulus: 2e9,
        shear_modulus: 2e9 / 2.8,
        density: 1140.0,
    }
}

/// Horizontal along +x, d1 = +y.
fn horizontal() -> Mat3 {
    Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()])
}

fn rod(
    p: &RodParams,
    length: f64,
    n: usize,
    ends: (EndCondition, EndCondition),
    config: CosseratConfig,
) -> CosseratRod {
    CosseratRod::straight(
        CosseratParams::new(p, length, n),
        ends,
        config,
        Vec3::zeros(),
        horizontal(),
    )
}

fn drive_for(r: &CosseratRod) -> Drive {
    let n = r.segments();
    let end = EndTarget {
        position: r.x[n],
        rotation: r.q[n - 1],
    };
    Drive {
        start: EndTarget {
            position: r.x[0],
            rotation: r.q[0],
        },
        end,
        gravity: Vec3::zeros(),
        start_force: Vec3::zeros(),
        start_torque: Vec3::zeros(),
        end_force: Vec3::zeros(),
        end_torque: Vec3::zeros(),
    }
}

const CANTILEVER: (EndCondition, EndCondition) = (EndCondition::Clamped, EndCondition::Free);

#[test]
fn static_tip_load_matches_elastica_table_d5() {
    // α = P L²/EI: (α, y/L, x/L) from digest-cosserat D.5.
    let p = nylon();
    let (l, n) = (0.1, 80);
    let ei = p.bending_stiffness();
    for (alpha, y_ref, x_ref) in [(1.0, 0.30172, 0.94357), (3.0, 0.60325, 0.74558)] {
        let mut r = rod(&p, l, n, CANTILEVER, CosseratConfig::default());
        let mut d = drive_for(&r);
        d.end_force = Vec3::new(0.0, -alpha * ei / (l * l), 0.0);
        let rep = r.equilibrate(&d).expect("converges");
        let tip = r.x[n];
        println!(
            "α {alpha}: y/L {:.5} x/L {:.5} ({rep:?})",
            -tip.y / l,
            tip.x / l
        );
        assert!(rep.converged, "{rep:?}");
        assert!(
            (-tip.y / l - y_ref).abs() < 0.01 * y_ref,
            "y/L {}",
            -tip.y / l
        );
        assert!(
            (tip.x / l - x_ref).abs() < 0.01 * x_ref,
            "x/L {}",
            tip.x / l
        );
    }
}

#[test]
fn static_self_weight_matches_heavy_elastica_table_d6() {
    // γ = q L³/EI = 5: y/L 0.49591, x/L 0.84666 (digest-cosserat D.6).
    let p = nylon();
    let n = 80;
    let q = p.linear_density() * 9.81;
    let l = (5.0 * p.bending_stiffness() / q).cbrt();
    let mut r = rod(&p, l, n, CANTILEVER, CosseratConfig::default());
    let mut d = drive_for(&r);
    d.gravity = Vec3::new(0.0, -9.81, 0.0);
    let rep = r.equilibrate(&d).expect("converges");
    let tip = r.x[n];
    println!(
        "γ 5, L = {l:.4} m: y/L {:.5} x/L {:.5} ({rep:?})",
        -tip.y / l,
        tip.x / l
    );
    assert!(rep.converged);
    assert!((-tip.y / l - 0.49591).abs() < 0.01 * 0.49591);
    assert!((tip.x / l - 0.84666).abs() < 0.01 * 0.84666);
}

/// Tip y after `steps` steps of `h` [s] under `d`, sampled every step.
fn run(r: &mut CosseratRod, d: &Drive, h: f64, steps: usize) -> Vec<(f64, f64)> {
    let n = r.segments();
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let rep = r.step(h, d).expect("step");
        out.push((r.x[n].y, rep.total_energy()));
    }
    out
}

#[test]
fn d12_suture_settles_to_its_static_deflection_within_the_newton_budget() {
    // Nylon 2-0, L = 0.15 m, N = 100, h = 1 ms; step tip force α = P L²/EI = 1 (digest D.12).
    let p = nylon();
    let (l, n, h): (f64, usize, f64) = (0.15, 100, 1e-3);
    let ei = p.bending_stiffness();
    let omega1 = 3.516 * (ei / (p.linear_density() * l.powi(4))).sqrt();
    // Air and handling dissipate quickly; take mode-1 critical mass damping α = 2ω₁, whose
    // physical settling time (to 5 %) is about 4.7/ω₁.
    let mut params = CosseratParams::new(&p, l, n);
    params.mass_damping = 2.0 * omega1;
    let settle = 6.0 / omega1;
    let steps = (settle / h).ceil() as usize;
    let force = Vec3::new(0.0, -ei / (l * l), 0.0);
    let reference = 0.30172 * l; // D.5, α = 1
    for (method, iterations) in [(Method::Newton, 3), (Method::Pd, 10)] {
        let config = CosseratConfig {
            method,
            max_iterations: iterations,
            ..Default::default()
        };
        let mut r = CosseratRod::straight(
            params.clone(),
            CANTILEVER,
            config,
            Vec3::zeros(),
            horizontal(),
        );
        let mut d = drive_for(&r);
        d.end_force = force;
        let trace = run(&mut r, &d, h, steps);
        let fraction = -trace.last().unwrap().0 / reference;
        println!(
            "D.12 {method:?} ({iterations} it/step): tip deflection after {:.3} s = {:.4} of static",
            steps as f64 * h,
            fraction
        );
        if method == Method::Newton {
            assert!((fraction - 1.0).abs() < 0.05, "{fraction}");
        }
    }
}

/// A clamped rod released from its static shape under a small tip force: tip y over time.
fn release(integrator: Integrator, n: usize, h: f64, seconds: f64) -> (Vec<(f64, f64)>, f64) {
    let p = nylon();
    let l = 0.1;
    let config = CosseratConfig {
        integrator,
        ..Default::default()
    };
    let mut r = rod(&p, l, n, CANTILEVER, config);
    let mut d = drive_for(&r);
    d.end_force = Vec3::new(0.0, -0.05 * p.bending_stiffness() / (l * l), 0.0);
    r.equilibrate(&d).expect("static");
    d.end_force = Vec3::zeros();
    let mut rep = suture::rod::CosseratReport::default();
    r.measure(&d.gravity, &mut rep);
    let e0 = rep.total_energy();
    (run(&mut r, &d, h, (seconds / h) as usize), e0)
}

#[test]
fn first_bending_frequency_matches_euler_bernoulli() {
    // f₁ = 3.516 sqrt(EI/(ρA L⁴)) / (2π) for a clamped–free beam.
    let p = nylon();
    let l: f64 = 0.1;
    let f1 = 3.516 * (p.bending_stiffness() / (p.linear_density() * l.powi(4))).sqrt()
        / (2.0 * std::f64::consts::PI);
    let h = 1e-3;
    let (trace, _) = release(Integrator::ImplicitMidpoint, 50, h, 1.0);
    // Upward zero crossings of the tip's y, linearly interpolated.
    let mut crossings = Vec::new();
    for k in 1..trace.len() {
        let (a, b) = (trace[k - 1].0, trace[k].0);
        if a < 0.0 && b >= 0.0 {
            crossings.push((k as f64 - b / (b - a)) * h);
        }
    }
    assert!(crossings.len() >= 4, "{crossings:?}");
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let f = 1.0 / period;
    println!(
        "f₁ measured {f:.4} Hz, Euler–Bernoulli {f1:.4} Hz ({:+.2} %)",
        100.0 * (f / f1 - 1.0)
    );
    assert!((f / f1 - 1.0).abs() < 0.03);
}

#[test]
fn undamped_energy_never_grows_with_implicit_euler_and_drifts_under_one_percent_with_midpoint() {
    let (euler, e0) = release(Integrator::ImplicitEuler, 30, 1e-3, 10.0);
    let mut prev = e0;
    for (k, &(_, e)) in euler.iter().enumerate() {
        assert!(e <= prev * (1.0 + 1e-9) + 1e-18, "step {k}: {e} > {prev}");
        prev = e;
    }
    let (mid, e0) = release(Integrator::ImplicitMidpoint, 30, 1e-3, 10.0);
    let worst = mid
        .iter()
        .map(|(_, e)| (e / e0 - 1.0).abs())
        .fold(0.0, f64::max);
    println!(
        "implicit Euler keeps {:.3} of the energy after 10 s; midpoint drifts at most {:.3e}",
        euler.last().unwrap().1 / e0,
        worst
    );
    assert!(worst < 0.01, "{worst}");
}
