//! Knot determinants of analytic knots (docs/derivations/der-imc.md §F5): unknot 1, T(2,3) 3, T(2,5) 5,
//! T(2,7) 7, T(2,9) 9, figure-eight 5, each agreed by several projections, closed and cut open.

use suture::math::Vec3;
use suture::topology::{self, TopologyError};

fn sample(n: usize, f: impl Fn(f64) -> Vec3) -> Vec<Vec3> {
    (0..n)
        .map(|k| f(2.0 * std::f64::consts::PI * k as f64 / n as f64))
        .collect()
}

/// The torus knot T(2, q) on a torus of radii 2 and 1.
fn torus(q: f64) -> impl Fn(f64) -> Vec3 {
    move |t| {
        let r = 2.0 + (q * t).cos();
        Vec3::new(r * (2.0 * t).cos(), r * (2.0 * t).sin(), (q * t).sin())
    }
}

fn figure_eight(t: f64) -> Vec3 {
    let r = 2.0 + (2.0 * t).cos();
    Vec3::new(r * (3.0 * t).cos(), r * (3.0 * t).sin(), (4.0 * t).sin())
}

fn circle(t: f64) -> Vec3 {
    Vec3::new(t.cos(), t.sin(), 0.1 * (3.0 * t).sin())
}

#[test]
fn closed_analytic_knots_have_their_determinants() {
    let cases: Vec<(&str, Vec<Vec3>, u128)> = vec![
        ("unknot", sample(200, circle), 1),
        ("T(2,3)", sample(300, torus(3.0)), 3),
        ("T(2,5)", sample(400, torus(5.0)), 5),
        ("T(2,7)", sample(500, torus(7.0)), 7),
        ("T(2,9)", sample(600, torus(9.0)), 9),
        ("figure-eight", sample(400, figure_eight), 5),
    ];
    for (name, pts, want) in cases {
        // Seven projections must agree.
        let d = topology::determinant_closed(&pts, 7).unwrap();
        assert_eq!(d, want, "{name}");
    }
}

#[test]
fn open_knots_closed_far_outside_keep_their_determinants() {
    for (name, f, want) in [
        ("T(2,3)", torus(3.0), 3u128),
        ("T(2,5)", torus(5.0), 5),
        ("T(2,7)", torus(7.0), 7),
    ] {
        // Cut the closed knot at one point, leaving a gap, with straight tails.
        let n = 400;
        let mut pts: Vec<Vec3> = (2..n - 2)
            .map(|k| f(2.0 * std::f64::consts::PI * k as f64 / n as f64))
            .collect();
        assert_eq!(topology::determinant_open(&pts).unwrap(), want, "{name}");
        // Long tails along the end tangents do not change it.
        let (a, b) = (pts[0], pts[1]);
        let (y, z) = (pts[pts.len() - 1], pts[pts.len() - 2]);
        for k in 1..20 {
            pts.insert(0, a + (a - b).normalize() * 0.2 * k as f64);
            pts.push(y + (y - z).normalize() * 0.2 * k as f64);
        }
        assert_eq!(
            topology::determinant_open(&pts).unwrap(),
            want,
            "{name} with tails"
        );
    }
    // A straight, an S-bent and a coiled (but unknotted) rod are unknots.
    let coil: Vec<Vec3> = (0..300)
        .map(|k| {
            let t = k as f64 * 0.1;
            Vec3::new(t.cos(), t.sin(), 0.05 * t)
        })
        .collect();
    assert_eq!(topology::determinant_open(&coil).unwrap(), 1);
}

#[test]
fn bad_curves_are_errors_not_panics() {
    assert_eq!(
        topology::determinant_open(&[Vec3::zeros(), Vec3::x()]),
        Err(TopologyError::TooShort(2))
    );
    let mut pts = sample(50, circle);
    pts[7].x = f64::NAN;
    assert_eq!(
        topology::determinant_closed(&pts, 3),
        Err(TopologyError::NonFinite(7))
    );
}

#[test]
fn jones_polynomials_of_the_trefoils_and_the_figure_eight() {
    // In A with t = A^-4: right trefoil V = -t^-4 + t^-3 + t^-1 (or its mirror).
    let tref = topology::project(&sample(300, torus(3.0)), &Vec3::new(0.3, 0.2, 0.93))
        .unwrap()
        .jones()
        .unwrap();
    // Exponents in A: t^k = A^(-4k): {16: -1, 12: 1, 4: 1} or mirrored {-16, -12, -4}.
    let right = topology::Laurent {
        low: 4,
        coeffs: vec![1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, -1],
    };
    assert!(tref == right || tref == right.mirror(), "{tref:?}");
    let fig8 = topology::project(&sample(400, figure_eight), &Vec3::new(0.3, 0.2, 0.93))
        .unwrap()
        .jones()
        .unwrap();
    // V(4_1) = t^2 - t + 1 - t^-1 + t^-2: amphichiral, so symmetric.
    assert_eq!(fig8, fig8.mirror());
    assert_eq!(fig8.coeffs.iter().filter(|c| **c != 0).count(), 5);
}

/// A trefoil arc cut open at its outer equator, shifted by `dx` along x and turned by π about
/// z when `flip` (so its cut faces −x); `mirror` reflects z (the other handedness).
fn trefoil_arc(dx: f64, flip: bool, mirror: bool) -> Vec<Vec3> {
    let n = 300;
    (3..n - 2)
        .map(|k| {
            let mut p = torus(3.0)(2.0 * std::f64::consts::PI * k as f64 / n as f64);
            if flip {
                p = Vec3::new(-p.x, -p.y, p.z);
            }
            if mirror {
                p.z = -p.z;
            }
            p + Vec3::new(dx, 0.0, 0.0)
        })
        .collect()
}

/// Two throws in a row: a trefoil arc, then a second one 8 units along x (its start faces
/// the first one's end); same handedness = granny, opposite = square.
fn two_throws(opposite: bool) -> Vec<Vec3> {
    let mut pts = trefoil_arc(0.0, false, false);
    // Leave the first throw from its cut (near (3, 0, 0)) and enter the second at (5, 0, 0).
    pts.extend(trefoil_arc(8.0, true, opposite));
    pts
}

#[test]
fn square_and_granny_knots_are_told_apart() {
    let square = topology::identify_open(&two_throws(true)).unwrap();
    let granny = topology::identify_open(&two_throws(false)).unwrap();
    println!(
        "square: det {} in {} crossings, {:?}\ngranny: det {} in {} crossings, {:?}",
        square.determinant,
        square.crossings,
        square.name,
        granny.determinant,
        granny.crossings,
        granny.name
    );
    assert_eq!((square.determinant, granny.determinant), (9, 9));
    assert_eq!(square.name, Some("square"));
    assert_eq!(granny.name, Some("granny"));
    // And the single knots by name.
    let t = topology::identify_open(&trefoil_arc(0.0, false, true)).unwrap();
    assert_eq!((t.determinant, t.name), (3, Some("trefoil")));
    let f = topology::identify_closed(&sample(400, figure_eight)).unwrap();
    assert_eq!((f.determinant, f.name), (5, Some("figure-eight")));
    let c = topology::identify_closed(&sample(400, torus(5.0))).unwrap();
    assert_eq!((c.determinant, c.name), (5, Some("cinquefoil")));
    let u = topology::identify_closed(&sample(100, circle)).unwrap();
    assert_eq!((u.determinant, u.name), (1, Some("unknot")));
}

/// The knot's extent along an open rod covers its knotted part and not its tails; an
/// unknotted rod has none.
#[test]
fn knot_extent_covers_the_knot_and_not_the_tails() {
    let n = 400;
    let build = || {
        // An open trefoil with 100-point straight tails on each side.
        let f = torus(3.0);
        let core: Vec<Vec3> = (2..n - 2)
            .map(|k| f(2.0 * std::f64::consts::PI * k as f64 / n as f64))
            .collect();
        // The cut is at the knot's outermost point (3, 0, 0): both tails leave radially (+x),
        // side by side, as when a knot is pulled out by its ends.
        let (a, y) = (core[0], core[core.len() - 1]);
        let out = Vec3::x();
        let mut pts: Vec<Vec3> = (1..=100).rev().map(|k| a + out * 0.05 * k as f64).collect();
        let first = pts.len();
        pts.extend(&core);
        let last = pts.len() - 1;
        pts.extend((1..=100).map(|k| y + out * 0.05 * k as f64));
        (pts, first as f64, last as f64)
    };
    let (pts, first, last) = build();
    assert_eq!(topology::determinant_open(&pts).unwrap(), 3);
    let (a, b) = topology::knot_extent(&pts, 32).unwrap().unwrap();
    println!("extent {a:.1}..{b:.1} in knot {first}..{last}");
    assert!(a >= first && b <= last, "{a} {b}");
    // It spans most of the knot: T(2,3) on this torus has crossings all along the curve.
    assert!(b - a > 0.6 * (last - first), "{a} {b}");
    // A straight rod, and a rod bent into an open arc, have no knot to measure.
    let straight: Vec<Vec3> = (0..50).map(|k| Vec3::new(k as f64, 0.0, 0.0)).collect();
    assert_eq!(topology::knot_extent(&straight, 5).unwrap(), None);
    let arc: Vec<Vec3> = (0..50)
        .map(|k| Vec3::new((k as f64 * 0.1).cos(), (k as f64 * 0.1).sin(), 0.0))
        .collect();
    assert_eq!(topology::knot_extent(&arc, 5).unwrap(), None);
}
