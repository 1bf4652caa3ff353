//! Pai 2002 STRANDS against exact and tabulated references (docs/derivations/cosserat.md Part D:
//! D.1 circle, D.2 twist, D.3 helix, D.5/D.6 elastica tables, D.8 tension; A.7 posed-end
//! shooting; D.7's dead-load robustness has no test here). Tolerances are the issue's: 1e-12 for the exact cases,
//! 1 % in x/L and y/L for the tables at N = 80.

mod common;

use suture::math::{Mat3, Vec3, exp_so3, log_so3};
use suture::rod::{Scheme, Strands, StrandsConfig, StrandsError, StrandsProblem, Tip};

/// Base at the origin, tangent d3 = +x, d1 = +y, d2 = +z.
fn base() -> Mat3 {
    Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()])
}

fn problem(tip: Tip) -> StrandsProblem {
    StrandsProblem {
        base_rotation: base(),
        base_position: Vec3::zeros(),
        tip,
        tip_force: Vec3::zeros(),
        tip_torque: Vec3::zeros(),
        distributed_force: Vec3::zeros(),
    }
}

fn rod(n: usize, k: Vec3, rest: Vec3, scheme: Scheme) -> Strands {
    Strands::new(
        1.0,
        n,
        k,
        rest,
        StrandsConfig {
            scheme,
            ..Default::default()
        },
    )
}

const SCHEMES: [Scheme; 2] = [Scheme::Euler, Scheme::Midpoint];

#[test]
fn d1_end_moment_gives_exact_circle_for_any_n() {
    // M about d1 (world +y) and about d2 (world +z), anisotropic K: radius EI_i / M.
    let k = Vec3::new(1.0, 2.5, 0.7);
    for scheme in SCHEMES {
        for n in [1, 2, 5, 17, 100, 400] {
            for (axis, ei) in [(Vec3::y(), k.x), (Vec3::z(), k.y)] {
                let m = 2.0;
                let mut r = rod(n, k, Vec3::zeros(), scheme);
                let mut p = problem(Tip::Free);
                p.tip_torque = axis * m;
                r.solve(&p).unwrap();
                let rho = ei / m;
                // Centre of the circle: the rod turns about `axis`; d3 = x turns toward axis × x.
                let toward = axis.cross(&Vec3::x());
                let centre = toward * rho;
                for (j, x) in r.positions().iter().enumerate() {
                    let s = j as f64 / n as f64;
                    let phi = s / rho;
                    let expect = Vec3::x() * (rho * phi.sin()) + toward * (rho * (1.0 - phi.cos()));
                    assert!(
                        (x - expect).norm() < 1e-12,
                        "{scheme:?} n={n} node {j}: {x:?} vs {expect:?}"
                    );
                    assert!(((x - centre).norm() - rho).abs() < 1e-12);
                }
            }
        }
    }
}

#[test]
fn d2_end_twist_is_uniform_and_straight() {
    let k = Vec3::new(1.0, 1.0, 1.0 / 1.3);
    let mt = 0.9;
    for scheme in SCHEMES {
        for n in [3, 40] {
            let mut r = rod(n, k, Vec3::zeros(), scheme);
            let mut p = problem(Tip::Free);
            p.tip_torque = Vec3::x() * mt;
            r.solve(&p).unwrap();
            for (j, x) in r.positions().iter().enumerate() {
                let expect = Vec3::x() * (j as f64 / n as f64);
                assert!((x - expect).norm() < 1e-12, "node {j}: {x:?}");
            }
            for u in r.strains() {
                assert!((u - Vec3::new(0.0, 0.0, mt / k.z)).norm() < 1e-12, "{u:?}");
            }
            // End frame rotated by M_t L / GJ about the axis.
            let rel = log_so3(&(base().transpose() * r.rotations()[n]));
            assert!((rel - Vec3::z() * (mt / k.z)).norm() < 1e-12, "{rel:?}");
        }
    }
}

#[test]
fn d3_natural_helix_is_exact() {
    let (kappa, tau) = (7.0, 4.0);
    let rest = Vec3::new(kappa, 0.0, tau);
    let radius = kappa / (kappa * kappa + tau * tau);
    let pitch = 2.0 * std::f64::consts::PI * tau / (kappa * kappa + tau * tau);
    for scheme in SCHEMES {
        for n in [7, 50, 333] {
            let mut r = rod(n, Vec3::new(1.0, 1.3, 0.8), rest, scheme);
            r.solve(&problem(Tip::Free)).unwrap();
            let w = rest.norm();
            let axis = base() * rest / w;
            let normal = base() * rest.cross(&Vec3::z()) / kappa;
            let centre = normal * radius;
            for (j, x) in r.positions().iter().enumerate() {
                let s = j as f64 / n as f64;
                let d = x - centre;
                let radial = (d - axis * d.dot(&axis)).norm();
                assert!((radial - radius).abs() < 1e-12, "n={n} node {j}: {radial}");
                // Axial advance: pitch per turn, one turn per 2π/|û| of arc.
                let advance = x.dot(&axis);
                let expect = s * w / (2.0 * std::f64::consts::PI) * pitch;
                assert!((advance - expect).abs() < 1e-12, "n={n} node {j}");
            }
        }
    }
}

/// Solve the horizontal cantilever (EI = 1, L = 1, gravity and tip load along -y) and return
/// (x/L, y/L drop, tip angle).
fn cantilever(alpha: f64, gamma: f64, n: usize, scheme: Scheme) -> (f64, f64, f64) {
    let mut r = rod(n, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), scheme);
    let mut p = problem(Tip::Free);
    p.tip_force = -Vec3::y() * alpha;
    p.distributed_force = -Vec3::y() * gamma;
    r.solve(&p).unwrap();
    let tip = r.positions()[n];
    let t = r.rotations()[n].column(2).into_owned();
    (tip.x, -tip.y, (-t.y).atan2(t.x))
}

const D5: [(f64, f64, f64, f64); 6] = [
    (0.5, 0.16214, 0.98408, 14.011),
    (1.0, 0.30172, 0.94357, 26.434),
    (2.0, 0.49346, 0.83936, 44.791),
    (3.0, 0.60325, 0.74558, 56.495),
    (5.0, 0.71379, 0.61237, 69.635),
    (10.0, 0.81061, 0.44500, 81.949),
];

const D6: [(f64, f64, f64); 8] = [
    (0.1, 0.01250, 0.99991),
    (1.0, 0.12347, 0.99125),
    (5.0, 0.49591, 0.84666),
    (10.0, 0.70020, 0.65635),
    (16.02, 0.79702, 0.50999),
    (28.49, 0.86858, 0.35451),
    (90.2, 0.93393, 0.16933),
    (236.7, 0.96042, 0.09801),
];

#[test]
fn elastica_reference_reproduces_digest_tables() {
    // Our in-test reference (RK4 shooting) against the scipy numbers of
    // docs/derivations/cosserat.md Appendix A (5 digits).
    for (a, y, x, deg) in D5 {
        let (xr, yr, th) = common::elastica_tip(a, 0.0);
        assert!(
            (xr - x).abs() < 1e-5 && (yr - y).abs() < 1e-5,
            "α={a}: {xr} {yr}"
        );
        assert!(
            (th.to_degrees() - deg).abs() < 1e-3,
            "α={a}: {}",
            th.to_degrees()
        );
    }
    // Erratum: the rows labelled γ = 16.02 and 28.49 disagree with the elastica at those γ by
    // up to 4e-4 (the 16.02 row is the solution at γ = 16.00 to 1e-6); every other row agrees
    // to 1e-5. Those two rows are held to 4e-4 here and to the 1 % below.
    for (g, y, x) in D6 {
        let (xr, yr, _) = common::elastica_tip(0.0, g);
        let tol = if g == 16.02 || g == 28.49 { 4e-4 } else { 1e-5 };
        assert!(
            (xr - x).abs() < tol && (yr - y).abs() < tol,
            "γ={g}: {xr} {yr}"
        );
    }
    let (x16, y16, _) = common::elastica_tip(0.0, 16.0);
    assert!((x16 - 0.50999).abs() < 1e-5 && (y16 - 0.79702).abs() < 1e-5);
}

#[test]
fn d5_tip_load_table_within_1_percent_at_n80() {
    for scheme in SCHEMES {
        for (a, y, x, deg) in D5 {
            let (xs, ys, th) = cantilever(a, 0.0, 80, scheme);
            let (ex, ey) = ((xs - x).abs() / x, (ys - y).abs() / y);
            println!(
                "{scheme:?} α={a:5}: y/L {ys:.5} ({:+.3} %), x/L {xs:.5} ({:+.3} %), angle {:.3}° (table {deg})",
                100.0 * (ys - y) / y,
                100.0 * (xs - x) / x,
                th.to_degrees()
            );
            if scheme == Scheme::Midpoint {
                assert!(ex < 0.01 && ey < 0.01, "{scheme:?} α={a}: x {xs} y {ys}");
            }
        }
    }
}

#[test]
fn d6_self_weight_table_within_1_percent_at_n80_by_continuation() {
    for scheme in SCHEMES {
        for (g, y, x) in D6 {
            let (xs, ys, _) = cantilever(0.0, g, 80, scheme);
            println!(
                "{scheme:?} γ={g:6}: y/L {ys:.5} ({:+.3} %), x/L {xs:.5} ({:+.3} %)",
                100.0 * (ys - y) / y,
                100.0 * (xs - x) / x
            );
            // The default (midpoint) scheme is held to 1 %; Pai's first-order scheme is printed
            // (it is 1.7 % off at γ = 0.1, N = 80: its error is O(h) relative to a tiny drop).
            if scheme == Scheme::Midpoint {
                assert!(
                    (xs - x).abs() / x < 0.01 && (ys - y).abs() / y < 0.01,
                    "{scheme:?} γ={g}: x {xs} y {ys}"
                );
            }
        }
    }
}

#[test]
fn convergence_order_is_measured_and_asserted() {
    // Error of the tip drop against the RK4 elastica, N = 10 … 320.
    for (alpha, gamma) in [(1.0, 0.0), (0.0, 5.0), (2.0, 3.0)] {
        let (_, yref, _) = common::elastica_tip(alpha, gamma);
        for scheme in SCHEMES {
            let ns = [10, 20, 40, 80, 160, 320];
            let errs: Vec<f64> = ns
                .iter()
                .map(|&n| (cantilever(alpha, gamma, n, scheme).1 - yref).abs())
                .collect();
            let orders: Vec<f64> = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
            println!(
                "{scheme:?} α={alpha} γ={gamma}: errors {errs:.3?}, observed orders {orders:.3?}"
            );
            for (i, w) in errs.windows(2).enumerate() {
                // The default scheme's error at least halves whenever N doubles; the first-order
                // one approaches halving from below (ratio ≥ 1.9, i.e. order ≥ 0.93).
                let need = match scheme {
                    Scheme::Midpoint => 2.0,
                    Scheme::Euler => 1.9,
                };
                assert!(
                    w[0] / w[1] >= need,
                    "{scheme:?} N={}: {:e} -> {:e}",
                    ns[i],
                    w[0],
                    w[1]
                );
            }
            // …and the asymptotic order is the scheme's.
            let expected = match scheme {
                Scheme::Euler => 1.0,
                Scheme::Midpoint => 2.0,
            };
            let last = orders[orders.len() - 1];
            assert!((last - expected).abs() < 0.1, "{scheme:?}: order {last}");
        }
    }
}

#[test]
fn posed_end_shooting_recovers_the_load_that_made_the_pose() {
    // Make a pose with a known dead tip wrench, then ask for that pose: the clamped-clamped
    // shooting must return the same shape and a reaction equal to the wrench.
    let k = Vec3::new(1.0, 1.2, 0.8);
    let force = Vec3::new(-0.3, -1.0, 0.5);
    let torque = Vec3::new(0.15, 0.2, -0.3);
    let mut free = rod(100, k, Vec3::zeros(), Scheme::Midpoint);
    let mut p = problem(Tip::Free);
    p.tip_force = force;
    p.tip_torque = torque;
    free.solve(&p).unwrap();
    let n = 100;
    let tip_rot = free.rotations()[n];
    let tip_pos = free.positions()[n];

    let mut posed = rod(100, k, Vec3::zeros(), Scheme::Midpoint);
    let q = problem(Tip::Clamped {
        rotation: tip_rot,
        position: tip_pos,
    });
    let rep = posed.solve(&q).unwrap();
    println!("posed: {rep:?}");
    assert!(rep.residual < 1e-9, "{rep:?}");
    let (f, m) = posed.tip_wrench();
    assert!(
        (f - force).norm() < 1e-7 && (m - torque).norm() < 1e-7,
        "{f:?} {m:?}"
    );
    for (a, b) in posed.positions().iter().zip(free.positions()) {
        assert!((a - b).norm() < 1e-9);
    }
    assert!((posed.positions()[n] - tip_pos).norm() < 1e-9);
    assert!((log_so3(&(posed.rotations()[n].transpose() * tip_rot))).norm() < 1e-9);
}

/// A pinned tip from the straight rest shape (a fully stretched, singular start: the solver
/// goes by way of a clamped tip) finds the force that made the free rod's tip position.
#[test]
fn pinned_end_recovers_the_force_that_made_the_position() {
    let k = Vec3::new(1.0, 1.2, 0.8);
    let force = Vec3::new(-0.2, -0.8, 0.3);
    let torque = Vec3::new(0.1, 0.0, -0.1);
    let mut free = rod(100, k, Vec3::zeros(), Scheme::Midpoint);
    let mut p = problem(Tip::Free);
    p.tip_force = force;
    p.tip_torque = torque;
    free.solve(&p).unwrap();
    let tip_pos = free.positions()[100];
    let mut pinned = rod(100, k, Vec3::zeros(), Scheme::Midpoint);
    let mut q = problem(Tip::Pinned { position: tip_pos });
    q.tip_torque = torque;
    let rep = pinned.solve(&q).unwrap();
    assert!(rep.residual < 1e-9, "{rep:?}");
    assert!((pinned.tip_wrench().0 - force).norm() < 1e-7);
    for (a, b) in pinned.positions().iter().zip(free.positions()) {
        assert!((a - b).norm() < 1e-9);
    }
}

#[test]
fn posed_end_moves_frame_by_frame_with_warm_start() {
    // The needle end sweeps a quarter circle while twisting; every frame converges below 1e-9.
    // (Off the rod's axis: a straight rod compressed between aligned clamps is a buckling point.)
    let mut r = rod(
        100,
        Vec3::new(1.0, 1.0, 0.75),
        Vec3::zeros(),
        Scheme::Midpoint,
    );
    for i in 0..=20 {
        let t = i as f64 / 20.0;
        let ang = t * std::f64::consts::FRAC_PI_2;
        let pos = Vec3::new(0.3 + 0.4 * ang.cos(), 0.1 + 0.4 * ang.sin(), 0.05 + 0.1 * t);
        let rot = exp_so3(&Vec3::new(0.3 * t, 0.0, 1.2 * t)) * base();
        let rep = r
            .solve(&problem(Tip::Clamped {
                rotation: rot,
                position: pos,
            }))
            .unwrap();
        assert!(rep.residual < 1e-9, "frame {i}: {rep:?}");
        assert!((r.positions()[100] - pos).norm() < 1e-9);
    }
}

#[test]
fn unreachable_pose_is_a_clear_error() {
    let mut r = rod(
        50,
        Vec3::new(1.0, 1.0, 0.75),
        Vec3::zeros(),
        Scheme::Midpoint,
    );
    let e = r
        .solve(&problem(Tip::Clamped {
            rotation: base(),
            position: Vec3::new(1.05, 0.0, 0.0),
        }))
        .unwrap_err();
    assert_eq!(
        e,
        StrandsError::Unreachable {
            distance: 1.05,
            length: 1.0
        }
    );
    assert_eq!(
        e.to_string(),
        "posed tip is unreachable: the ends are 1.050000 m apart but the rod is 1.000000 m long"
    );
}

#[test]
fn d8_high_tension_is_detected_not_returned_wrong() {
    // Axial tension T L²/EI = 1e4 plus a 1e-12 transverse perturbation (docs/derivations/cosserat.md §D.8): the sweep
    // amplifies rounding by ~e^100; the solver must refuse, not return a shape.
    let mut r = rod(
        100,
        Vec3::new(1.0, 1.0, 0.75),
        Vec3::zeros(),
        Scheme::Midpoint,
    );
    let mut p = problem(Tip::Free);
    p.tip_force = Vec3::new(1e4, 1e-12, 0.0);
    match r.solve(&p) {
        Err(StrandsError::IllConditioned {
            tension_number,
            log10_amplification,
            ..
        }) => {
            assert!(
                (tension_number - 1e4).abs() / 1e4 < 0.01,
                "{tension_number}"
            );
            assert!(log10_amplification > 8.0);
        }
        other => panic!("expected IllConditioned, got {other:?}"),
    }
    // T L²/EI = 10 is well conditioned and stays straight (off-axis < 1e-9 L).
    let mut r = rod(
        100,
        Vec3::new(1.0, 1.0, 0.75),
        Vec3::zeros(),
        Scheme::Midpoint,
    );
    p.tip_force = Vec3::new(10.0, 1e-12, 0.0);
    let rep = r.solve(&p).unwrap();
    assert!(rep.amplification < 30.0, "{rep:?}");
    for x in r.positions() {
        assert!(x.y.abs() < 1e-9 && x.z.abs() < 1e-9);
    }
}

/// Point loads (contact as lagged loads, issue #5): a load on the tip node is the tip force;
/// a small load at mid-span deflects the tip as linear beam theory says (δ = P a²(3L − a)/6EI);
/// a large one bends the inner half as the elastica with a tip load and leaves the outer half
/// straight.
#[test]
fn point_loads_match_tip_force_beam_theory_and_the_elastica() {
    let n = 80;
    for scheme in SCHEMES {
        // On the tip node: identical to the tip force.
        let mut a = rod(n, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), scheme);
        let mut p = problem(Tip::Free);
        p.tip_force = Vec3::new(0.0, -2.0, 0.5);
        a.solve(&p).unwrap();
        let mut b = rod(n, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), scheme);
        let mut loads = vec![Vec3::zeros(); n + 1];
        loads[n] = p.tip_force;
        b.set_point_loads(&loads);
        b.solve(&problem(Tip::Free)).unwrap();
        let diff = (a.positions()[n] - b.positions()[n]).norm();
        assert!(diff < 1e-12, "{scheme:?}: {diff}");
        // Small load P at a = L/2 (EI = L = 1).
        let small = 0.01;
        let mut c = rod(n, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), scheme);
        let mut loads = vec![Vec3::zeros(); n + 1];
        loads[n / 2] = -Vec3::y() * small;
        c.set_point_loads(&loads);
        c.solve(&problem(Tip::Free)).unwrap();
        let (ha, hl) = (0.5f64, 1.0f64);
        let beam = small * ha * ha * (3.0 * hl - ha) / 6.0;
        let tip = -c.positions()[n].y;
        println!("{scheme:?}: tip deflection {tip:.6e} vs beam theory {beam:.6e}");
        // Midpoint is second order (as in D5); Euler's O(h) error is printed only.
        if scheme == Scheme::Midpoint {
            assert!((tip / beam - 1.0).abs() < 1e-3, "{tip} vs {beam}");
        }
        // Large load at mid-span: α' = P (L/2)²/EI = 2 on the inner half.
        let big = 8.0;
        let mut d = rod(n, Vec3::new(1.0, 1.0, 1.0 / 1.3), Vec3::zeros(), scheme);
        loads[n / 2] = -Vec3::y() * big;
        d.set_point_loads(&loads);
        d.solve(&problem(Tip::Free)).unwrap();
        let (ex, ey, eth) = common::elastica_tip(2.0, 0.0);
        let mid = d.positions()[n / 2];
        let t = d.rotations()[n / 2].column(2).into_owned();
        let th = (-t.y).atan2(t.x);
        println!(
            "{scheme:?}: mid-span ({:.5}, {:.5}), {th:.5} rad vs elastica ({:.5}, {:.5}), {eth:.5}",
            mid.x / 0.5,
            -mid.y / 0.5,
            ex,
            ey
        );
        if scheme == Scheme::Midpoint {
            assert!((mid.x / 0.5 - ex).abs() < 1e-3 * ex && (-mid.y / 0.5 - ey).abs() < 1e-3 * ey);
            assert!((th - eth).abs() < 1e-3 * eth);
        }
        // The outer half is straight along the mid-span tangent.
        let tip = d.positions()[n];
        assert!((tip - (mid + t * 0.5)).norm() < 1e-9, "outer half bent");
    }
}
