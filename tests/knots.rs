//! Knot tightening with IMC self-contact (issue #5, digest-der-imc D10/F5) on the thesis rod:
//! L = 1 m, r = 1.6 mm, E = 0.18 MPa, ρ = 1180 kg/m³ (scenes/knot_overhand.toml: a loose
//! overhand knot held for 1 s, then pulled apart along its collinear tails at 12 mm/s each).
//! Checked every 0.1 s over 10 s: the knot stays a trefoil (determinant 3, from geometry
//! alone), no non-neighbour segment pair is closer than 2r − 1 % r (brute force over all
//! pairs); every step: no node moves farther than 0.5 r; over the pull the loop shrinks and the
//! pull force rises (by thirds of the pull). About a minute in release.

use suture::contact::segment;
use suture::math::Vec3;
use suture::scene::{self, Overrides};
use suture::sim::RodModel;
use suture::topology;

fn closest_non_neighbours(x: &[Vec3], skip: usize) -> f64 {
    let n = x.len() - 1;
    let mut best = f64::INFINITY;
    for i in 0..n {
        for j in i + skip + 1..n {
            best = best.min(segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance);
        }
    }
    best
}

#[test]
fn overhand_knot_tightens_as_a_trefoil_without_interpenetration() {
    let mut sc = scene::load("scenes/knot_overhand.toml", Overrides::default()).unwrap();
    let r = sc.params[0].radius;
    let l = sc.lengths[0];
    let area = std::f64::consts::PI * r * r;
    let ea = sc.params[0].youngs_modulus * area;
    assert_eq!(
        topology::determinant_open(sc.world.rods[0].positions()).unwrap(),
        3
    );
    {
        let x = sc.world.rods[0].positions();
        let n = x.len() - 1;
        let (mut best, mut at) = (f64::INFINITY, (0, 0));
        for i in 0..n {
            for j in i + 3..n {
                let d = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance;
                if d < best {
                    (best, at) = (d, (i, j));
                }
            }
        }
        println!(
            "x[{}] = {:?}, x[{}] = {:?}, x[{}]={:?}",
            at.0,
            x[at.0],
            at.1,
            x[at.1],
            at.1 + 1,
            x[at.1 + 1]
        );
        println!(
            "t 0: closest non-neighbour pair {at:?} at {best:.4e} m = 2r {:+.2} % r",
            100.0 * (best - 2.0 * r) / r
        );
    }
    let mut prev = sc.world.rods[0].positions().to_vec();
    // The tails are pulled along their own lines: a node still on its tail's line (within
    // r/2) is tail; the rest is the knot's loop.
    let x0 = prev.clone();
    let m = x0.len() - 1;
    let seg = l / m as f64;
    let lines = [
        (x0[0], (x0[0] - x0[1]).normalize()),
        (x0[m], (x0[m] - x0[m - 1]).normalize()),
    ];
    let on_line = |p: &Vec3, (a, d): (Vec3, Vec3)| {
        let v = p - a;
        (v - d * v.dot(&d)).norm() < 2.0 * r
    };
    let loop_length = |x: &[Vec3]| {
        let a = x.iter().take_while(|p| on_line(p, lines[0])).count();
        let b = x.iter().rev().take_while(|p| on_line(p, lines[1])).count();
        l - (a + b).saturating_sub(2) as f64 * seg
    };
    let (mut loop_len, mut force) = (Vec::new(), Vec::new());
    let mut iterations = 0;
    let mut max_moved = 0.0f64;
    let steps_per_check = 100;
    for k in 1..=100 {
        // Step by step (1 ms) to check every step's largest node motion.
        for s in 1..=steps_per_check {
            let t = (k - 1) as f64 * 0.1 + s as f64 * 1e-3;
            let rep = sc.world.advance_to(t).unwrap();
            if let suture::sim::RodReport::Cosserat { iterations: it, .. } = &rep.rods[0] {
                iterations += it;
            }
            let x = sc.world.rods[0].positions();
            let moved = x
                .iter()
                .zip(&prev)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            // No step moves a node farther than 0.5 r (digest F5 B; candidate pairs are
            // frozen over 4r, so this leaves a wide safety factor against tunnelling).
            max_moved = max_moved.max(moved);
            assert!(
                moved < 0.5 * r,
                "t {t}: a node moved {moved:.3e} m in one step"
            );
            prev.copy_from_slice(x);
        }
        let x = sc.world.rods[0].positions();
        let t = k as f64 * 0.1;
        let det = topology::determinant_open(x).unwrap();
        assert_eq!(det, 3, "t {t}: the knot changed (determinant {det})");
        let dmin = closest_non_neighbours(x, 2);
        assert!(
            dmin >= 2.0 * r - 0.01 * r,
            "t {t}: pair at {dmin:.4e} m < 2r − 1 % r"
        );
        let lp = loop_length(x);
        // Pull force: the tension of the first (straight, clamped-end) segment.
        let stretch = (x[1] - x[0]).norm() / (l / (x.len() - 1) as f64) - 1.0;
        if t > 1.0 {
            loop_len.push(lp);
            force.push(ea * stretch);
        }
        if k % 10 == 0 {
            println!(
                "t {t:.1} s: loop {:.4} m, pull {:.3e} N, closest pair 2r {:+.3} % r, det {det}",
                lp,
                ea * stretch,
                100.0 * (dmin - 2.0 * r) / r
            );
        }
    }
    if let RodModel::Cosserat {
        self_contact: Some(c),
        ..
    } = &sc.world.rods[0].model
    {
        println!(
            "{} Newton iterations in 10000 steps ({:.2} per step); IMC stiffness {:.2e} J after {} raises; largest step motion {max_moved:.2e} m",
            iterations,
            iterations as f64 / 10000.0,
            c.params.stiffness,
            c.raises
        );
    }
    // The loop shrinks while pulled (means over thirds of the pull: the tail-line measure
    // moves in steps of a segment and the tails sway), and the pull force rises with it.
    let n = loop_len.len();
    let third =
        |v: &[f64], k: usize| v[k * n / 3..(k + 1) * n / 3].iter().sum::<f64>() / (n / 3) as f64;
    let (l0, l1, l2) = (
        third(&loop_len, 0),
        third(&loop_len, 1),
        third(&loop_len, 2),
    );
    let (f0, f1, f2) = (third(&force, 0), third(&force, 1), third(&force, 2));
    println!("loop by thirds {l0:.4} > {l1:.4} > {l2:.4} m; pull {f0:.3e} < {f1:.3e} < {f2:.3e} N");
    assert!(l0 > l1 && l1 > l2, "{loop_len:?}");
    assert!(f0 < f1 && f1 < f2 && f2 > 2.0 * f0, "{force:?}");
}

/// The knot's loop in material length [m] (rest length, so the tails' stretch does not count):
/// from each end, the material coordinate where the rod leaves a cylinder of radius 2r about
/// that tail's axis (the line through the end along the end segment), interpolated between
/// nodes; the loop lies between the two exits. `seg` is the rest segment length.
fn material_loop(x: &[Vec3], seg: f64, r: f64) -> f64 {
    let m = x.len() - 1;
    let exit = |idx: &dyn Fn(usize) -> usize| -> f64 {
        let (a, d) = (x[idx(0)], (x[idx(0)] - x[idx(1)]).normalize());
        let off = |p: &Vec3| {
            let v = p - a;
            (v - d * v.dot(&d)).norm()
        };
        for k in 1..m {
            let (o0, o1) = (off(&x[idx(k - 1)]), off(&x[idx(k)]));
            if o1 > 2.0 * r {
                return (k - 1) as f64 + (2.0 * r - o0) / (o1 - o0);
            }
        }
        m as f64
    };
    let s0 = exit(&|k| k);
    let s1 = exit(&|k| m - k);
    (m as f64 - s0 - s1) * seg
}

/// Tighten the overhand knot (as above, for `pull` seconds) with self-contact friction `mu`, then release
/// the ends and load them with a constant tension `fraction` × the last pull force along the
/// tails for `hold` seconds. Returns the knot's material loop length at the start and the end
/// of the hold, and the load.
fn tighten_then_hold(mu: f64, fraction: f64, pull: f64, hold: f64) -> (f64, f64, f64) {
    use suture::rod::EndCondition;
    // The scene pulls 0.108 m per end from 1 s to 10 s; keep the speed, pull for `pull` s.
    let text = std::fs::read_to_string("scenes/knot_overhand.toml")
        .unwrap()
        .replace(
            "self_contact = true",
            &format!("self_contact = true\nself_friction = {mu}"),
        )
        .replace(
            "times = [0.0, 1.0, 10.0]",
            &format!("times = [0.0, 1.0, {}]", 1.0 + pull),
        )
        .replace("0.108000", &format!("{:.6}", 0.012 * pull));
    let mut sc = scene::parse("knot.toml", &text, Overrides::default()).unwrap();
    let r = sc.params[0].radius;
    let l = sc.lengths[0];
    let ea = sc.params[0].youngs_modulus * std::f64::consts::PI * r * r;
    let t_end = 1.0 + pull;
    sc.world.advance_to(t_end).unwrap();
    let x = sc.world.rods[0].positions().to_vec();
    let m = x.len() - 1;
    let seg = l / m as f64;
    let pull = ea * ((x[1] - x[0]).norm() / seg - 1.0);
    let (d0, d1) = ((x[0] - x[1]).normalize(), (x[m] - x[m - 1]).normalize());
    let t = fraction * pull;
    let rod = &mut sc.world.rods[0];
    if let RodModel::Cosserat { rod: c, .. } = &mut rod.model {
        c.ends = (EndCondition::Free, EndCondition::Free);
    }
    rod.drive.base_force = d0 * t;
    rod.drive.tip_force = d1 * t;
    let before = material_loop(sc.world.rods[0].positions(), seg, r);
    sc.world.advance_to(t_end + hold).unwrap();
    let after = material_loop(sc.world.rods[0].positions(), seg, r);
    (before, after, t)
}

/// Digest F3 / issue #5: after tightening, a constant load below the slip threshold keeps the
/// loop length within 1 % for 10 s with static friction (μ = 0.1, the thesis value); without
/// friction (what a knot with only velocity-scaled kinetic friction does at rest) the same load
/// lets the loop change by more.
#[test]
#[ignore = "fails for now (−3 % with μ = 0.1, +18 % without, over 10 s), and slow (11 min): \
            cargo test --release --test knots tightened -- --ignored --nocapture"]
fn tightened_knot_holds_under_load_with_static_friction() {
    let (b1, a1, t1) = tighten_then_hold(0.1, 0.5, 20.0, 10.0);
    let (b0, a0, t0) = tighten_then_hold(0.0, 0.5, 20.0, 10.0);
    println!(
        "μ = 0.1: load {t1:.3e} N, loop {b1:.5} → {a1:.5} m ({:+.2} %); frictionless: load {t0:.3e} N, loop {b0:.5} → {a0:.5} m ({:+.2} %)",
        100.0 * (a1 / b1 - 1.0),
        100.0 * (a0 / b0 - 1.0)
    );
    assert!((a1 / b1 - 1.0).abs() < 0.01);
    assert!((a0 / b0 - 1.0).abs() > 0.01);
}

/// scenes/plectoneme.toml: twisting a clamped soft rod 5 turns while its ends approach makes
/// it buckle into a supercoil whose strands meet (closest non-neighbour pair within 10 % r of
/// contact) but never interpenetrate (≥ 2r − 1 % r), and it stays unknotted (determinant 1).
#[test]
fn plectoneme_forms_without_interpenetration() {
    let mut sc = scene::load("scenes/plectoneme.toml", Overrides::default()).unwrap();
    let r = sc.params[0].radius;
    let mut closest = f64::INFINITY;
    for k in 1..=40 {
        sc.world.advance_to(k as f64 * 0.1).unwrap();
        let x = sc.world.rods[0].positions();
        let d = closest_non_neighbours(x, 2);
        assert!(
            d >= 2.0 * r - 0.01 * r,
            "t {}: pair at {d:.4e} m",
            k as f64 * 0.1
        );
        closest = closest.min(d);
        assert_eq!(topology::determinant_open(x).unwrap(), 1);
    }
    let kappa = sc.world.rods[0].max_curvature();
    println!(
        "plectoneme: closest pair 2r {:+.2} % r, max curvature {kappa:.1} 1/m",
        100.0 * (closest - 2.0 * r) / r
    );
    assert!(
        closest < 2.0 * r + 0.1 * r,
        "the strands never met: {closest:.4e} m"
    );
    assert!(kappa > 50.0, "no loop formed: max curvature {kappa} 1/m");
}
