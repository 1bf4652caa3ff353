//! The throws of a surgical knot from the suture's geometry (issue #22; docs/knots.md).
//!
//! Synthetic sutures built here, parametrically, in metres with y up (the skin is y = 0, the
//! wound runs along z, the stitch crosses it along x): the tail comes out of the skin at
//! x = −3 mm, the long end at x = +3 mm, joined by the bite under the skin. On them:
//! - `flat_knot`: throws laid flat, stacked on the wound: in each throw the two strands twist
//!   about each other about the x axis through (2·wraps + 1) half turns, swinging wide in z
//!   and little in y (a throw pressed flat), and leave on opposite sides (the hands crossed);
//! - `half_hitches`: the tail held straight up as a post, the long end coiled round it;
//! - `instrument_tie_throw`: a throw as the instrument tie first makes it: the long end coiled
//!   on the driver (a helix about a straight line), the tail pulled straight through the coil.
//!
//! Each is checked tight and loose, turned to an arbitrary orientation, and with noise.

use suture::math::Vec3;
use suture::topology::{
    self, KnotChange, KnotName, KnotTracker, Laurent, Sense, Strand, Throw, analyse_knot,
};

const PI: f64 = std::f64::consts::PI;

/// Straight-line points from `a` to `b` (excluding `a`, including `b`), `n` of them.
fn line(a: Vec3, b: Vec3, n: usize) -> Vec<Vec3> {
    (1..=n)
        .map(|k| a + (b - a) * (k as f64 / n as f64))
        .collect()
}

/// The bite: from the tail's exit (−w, 0, 0) down under the skin and up to the long end's exit
/// (w, 0, 0), both exits excluded.
fn bite(w: f64) -> Vec<Vec3> {
    (1..40)
        .map(|k| {
            let a = PI * k as f64 / 40.0;
            Vec3::new(-w * a.cos(), -w * a.sin(), 0.0)
        })
        .collect()
}

/// The rod from the tail's free end to the long end's: `tail` and `long` are built from the
/// skin outwards (first point at the exit).
fn rod(tail: &[Vec3], long: &[Vec3], w: f64) -> Vec<Vec3> {
    let mut pts: Vec<Vec3> = tail.iter().rev().copied().collect();
    pts.extend(bite(w));
    pts.extend_from_slice(long);
    pts
}

/// Sizes of a synthetic knot [m].
#[derive(Clone, Copy)]
struct Size {
    /// Half width of a throw's swing across x (in z).
    swing: f64,
    /// Half height of a throw (in y).
    lift: f64,
    /// Half length of a throw along x.
    half_len: f64,
    /// Gap between stacked throws.
    gap: f64,
}

const TIGHT: Size = Size {
    swing: 1.0e-3,
    lift: 0.3e-3,
    half_len: 2.0e-3,
    gap: 0.3e-3,
};
const LOOSE: Size = Size {
    swing: 4.0e-3,
    lift: 1.2e-3,
    half_len: 7.0e-3,
    gap: 1.0e-3,
};

/// Half the bite's width [m].
const W: f64 = 3.0e-3;

fn sign(s: Sense) -> f64 {
    match s {
        Sense::Right => 1.0,
        Sense::Left => -1.0,
    }
}

/// Throws laid flat on the wound, the first on the skin's side. Throw k lies at height
/// y_k = 2 mm + k (2 lift + gap), x in [−L, L]; the strand entering it from −x (the tail in
/// even throws, the long end in odd ones) sits at offset
/// `σ (swing cos φ ẑ − s lift sin φ ŷ)` from the throw's axis, the other strand opposite it,
/// φ = (2 wraps + 1) π (x + L) / 2L, σ = (−1)^k, s = +1 for a right-handed twist: the offset
/// turns from ẑ towards −ŷ, a positive turn about +x as x grows. Consecutive throws join by
/// vertical steps at x = ±L; after the last one the tail leaves 20 mm and the long end 60 mm
/// along the axis.
fn flat_knot(throws: &[Throw], size: Size) -> Vec<Vec3> {
    let Size {
        swing,
        lift,
        half_len: l,
        gap,
    } = size;
    let mut tail = vec![Vec3::new(-W, 0.0, 0.0)];
    let mut long = vec![Vec3::new(W, 0.0, 0.0)];
    let y0 = 2.0e-3 + lift;
    // The tissue sides to the first throw's entries: up below the entry, then into it.
    let first_z = swing;
    tail.extend(line(tail[0], Vec3::new(-l, y0 - 1.5e-3, first_z), 8));
    tail.extend(line(*tail.last().unwrap(), Vec3::new(-l, y0, first_z), 6));
    long.extend(line(long[0], Vec3::new(l, y0 - 1.5e-3, first_z), 8));
    long.extend(line(*long.last().unwrap(), Vec3::new(l, y0, first_z), 6));
    for (k, t) in throws.iter().enumerate() {
        let y = y0 + k as f64 * (2.0 * lift + gap);
        let sigma = if k % 2 == 0 { 1.0 } else { -1.0 };
        let s = sign(t.sense);
        let half_turns = 2.0 * t.wraps as f64 + 1.0;
        let n = 40 * (2 * t.wraps as usize + 1);
        let offset = |phi: f64| Vec3::new(0.0, -s * lift * phi.sin(), swing * phi.cos()) * sigma;
        // The strand from −x (p) and the one from +x (q), each in its own direction of travel.
        let p: Vec<Vec3> = (0..=n)
            .map(|j| {
                let u = j as f64 / n as f64;
                Vec3::new(-l + 2.0 * l * u, y, 0.0) + offset(PI * half_turns * u)
            })
            .collect();
        let q: Vec<Vec3> = (0..=n)
            .rev()
            .map(|j| {
                let u = j as f64 / n as f64;
                Vec3::new(-l + 2.0 * l * u, y, 0.0) - offset(PI * half_turns * u)
            })
            .collect();
        let (from_minus, from_plus) = if k % 2 == 0 {
            (&mut tail, &mut long)
        } else {
            (&mut long, &mut tail)
        };
        // Step up to this throw's height (the first throw's entries are already there).
        for (strand, path) in [(from_minus, &p), (from_plus, &q)] {
            let last = *strand.last().unwrap();
            if (last - path[0]).norm() > 1e-12 {
                strand.extend(line(last, path[0], 6));
            }
            strand.extend_from_slice(&path[1..]);
        }
    }
    // The free ends along the axis, away from the knot.
    for (strand, len) in [(&mut tail, 20.0e-3), (&mut long, 60.0e-3)] {
        let last = *strand.last().unwrap();
        let out = Vec3::new(last.x.signum(), 0.0, 0.0);
        strand.extend(line(last, last + out * len, 10));
    }
    rod(&tail, &long, W)
}

/// Half hitches: the tail goes up from its exit to the axis x = z = 0 and straight up it (the
/// post, held taut, 40 mm past the knot); the long end climbs beside it (radius 3 mm) and, per
/// throw, coils down round the post through (2 wraps + 1) half turns (radius 1.2 mm, 3 mm of
/// post per throw, right-handed for `Right`),
/// steps out and climbs to the next one; after the last it leaves 60 mm sideways.
fn half_hitches(throws: &[Throw], size: Size) -> Vec<Vec3> {
    let r = size.swing * 1.2;
    let r_out = 3.0 * r;
    let height = 3.0 * size.half_len / 2.0;
    let y0 = 3.0e-3;
    let top = y0 + throws.len() as f64 * (height + size.gap);
    let mut tail = vec![Vec3::new(-W, 0.0, 0.0)];
    tail.extend(line(tail[0], Vec3::new(0.0, 1.5e-3, 0.0), 8));
    tail.extend(line(
        *tail.last().unwrap(),
        Vec3::new(0.0, top + 40.0e-3, 0.0),
        200,
    ));
    let mut long = vec![Vec3::new(W, 0.0, 0.0)];
    let at =
        |angle: f64, radius: f64, y: f64| Vec3::new(radius * angle.cos(), y, radius * angle.sin());
    let mut angle = 0.0f64;
    long.extend(line(long[0], at(angle, r_out, 1.5e-3), 8));
    for (k, t) in throws.iter().enumerate() {
        let y_top = y0 + (k as f64 + 1.0) * (height + size.gap) - size.gap;
        let y_bottom = y_top - height;
        let last = *long.last().unwrap();
        long.extend(line(last, at(angle, r_out, y_top), 20));
        long.extend(line(at(angle, r_out, y_top), at(angle, r, y_top), 6));
        // `at` turns x̂ towards ẑ as the angle grows: negatively about +y. Going down, a
        // right-handed coil turns negatively about +y: the angle grows.
        let turn = sign(t.sense) * PI * (2.0 * t.wraps as f64 + 1.0);
        let n = 40 * (2 * t.wraps as usize + 1);
        for j in 1..=n {
            let u = j as f64 / n as f64;
            long.push(at(angle + turn * u, r, y_top - height * u));
        }
        angle += turn;
        long.extend(line(at(angle, r, y_bottom), at(angle, r_out, y_bottom), 6));
    }
    let last = *long.last().unwrap();
    let out = Vec3::new(angle.cos(), 0.0, angle.sin());
    long.extend(line(last, last + out * 60.0e-3, 10));
    rod(&tail, &long, W)
}

/// One throw as the instrument tie makes it, before it is laid down: the long end coiled
/// `wraps` times (radius 2 mm) about the driver's line (x = 0, y = 10 mm, along z) over
/// z ∈ [−4, 4] mm, right-handed; the tail pulled through the coil along that line from
/// z = +6 mm to its free end at z = −40 mm. A `Left` throw is its mirror image in the plane
/// z = 0 (the driver laid the other way along the wound, the coil left-handed). `from_handle`: the coil runs from its standing
/// part at z = −4 mm (the driver's handle side) to z = +4 mm (the tip, where the tail enters),
/// and the long end leaves from the tip side; otherwise the other way round.
fn instrument_tie_throw(sense: Sense, wraps: u8, from_handle: bool) -> Vec<Vec3> {
    let (h, r, c, e) = (10.0e-3, 2.0e-3, 4.0e-3, 2.0e-3);
    let mut tail = vec![Vec3::new(-W, 0.0, 0.0)];
    tail.extend(line(tail[0], Vec3::new(-W, h, c + e), 10));
    tail.extend(line(*tail.last().unwrap(), Vec3::new(0.0, h, c + e), 6));
    tail.extend(line(*tail.last().unwrap(), Vec3::new(0.0, h, -40.0e-3), 60));
    let (z0, z1) = if from_handle { (-c, c) } else { (c, -c) };
    let mut long = vec![Vec3::new(W, 0.0, 0.0)];
    long.extend(line(long[0], Vec3::new(W, h, z0), 10));
    long.extend(line(*long.last().unwrap(), Vec3::new(r, h, z0), 4));
    // Right-handed about the direction of travel: the angle about +z grows as z grows.
    let turn = 2.0 * PI * wraps as f64 * (z1 - z0).signum();
    let n = 80 * wraps as usize;
    for j in 1..=n {
        let u = j as f64 / n as f64;
        let a = turn * u;
        long.push(Vec3::new(r * a.cos(), h + r * a.sin(), z0 + (z1 - z0) * u));
    }
    long.extend(line(*long.last().unwrap(), Vec3::new(W, h, z1), 4));
    long.extend(line(
        *long.last().unwrap(),
        Vec3::new(W, h + 60.0e-3, z1),
        30,
    ));
    let pts = rod(&tail, &long, W);
    match sense {
        Sense::Right => pts,
        // The mirror image in the plane z = 0: the driver pointing the other way along the
        // wound, the coil left-handed.
        Sense::Left => pts.iter().map(|p| Vec3::new(p.x, p.y, -p.z)).collect(),
    }
}

/// A fixed, arbitrary rotation (axis (0.3, −0.8, 0.5), 1.1 rad) and a shift.
fn turned(pts: &[Vec3]) -> Vec<Vec3> {
    let rot = nalgebra::Rotation3::from_axis_angle(
        &nalgebra::Unit::new_normalize(Vec3::new(0.3, -0.8, 0.5)),
        1.1,
    );
    pts.iter()
        .map(|p| rot * p + Vec3::new(0.05, -0.02, 0.3))
        .collect()
}

fn turned_up() -> Vec3 {
    turned(&[Vec3::zeros(), Vec3::y()])
        .windows(2)
        .map(|w| w[1] - w[0])
        .next()
        .unwrap()
}

/// Deterministic noise of amplitude `amp` [m] on every point (a linear congruential generator).
fn noisy(pts: &[Vec3], amp: f64) -> Vec<Vec3> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    pts.iter()
        .map(|p| p + Vec3::new(next(), next(), next()) * amp)
        .collect()
}

/// Every variant of a synthetic knot: tight and loose, as built, turned, turned with noise
/// (amplitude 1 % of the throw's lift); with the skin normal to match.
fn variants(build: impl Fn(Size) -> Vec<Vec3>) -> Vec<(String, Vec<Vec3>, Vec3)> {
    let mut out = Vec::new();
    for (name, size) in [("tight", TIGHT), ("loose", LOOSE)] {
        let pts = build(size);
        out.push((name.to_string(), pts.clone(), Vec3::y()));
        out.push((format!("{name}, turned"), turned(&pts), turned_up()));
        out.push((
            format!("{name}, turned, noisy"),
            noisy(&turned(&pts), 0.01 * size.lift),
            turned_up(),
        ));
    }
    out
}

const R1: Throw = Throw {
    sense: Sense::Right,
    wraps: 1,
};
const L1: Throw = Throw {
    sense: Sense::Left,
    wraps: 1,
};
const R2: Throw = Throw {
    sense: Sense::Right,
    wraps: 2,
};
const L2: Throw = Throw {
    sense: Sense::Left,
    wraps: 2,
};

/// The right-handed trefoil, V = t + t³ − t⁴, and cinquefoil, V = t² + t⁴ − t⁵ + t⁶ − t⁷.
fn right_trefoil() -> Laurent {
    topology::from_t(&[(1, 1), (3, 1), (4, -1)])
}
fn right_cinquefoil() -> Laurent {
    topology::from_t(&[(2, 1), (4, 1), (5, -1), (6, 1), (7, -1)])
}
/// The three-twist knot 5_2 as the Knot Atlas lists it: −q⁻⁶ + q⁻⁵ − q⁻⁴ + 2q⁻³ − q⁻² + q⁻¹.
fn three_twist() -> Laurent {
    topology::from_t(&[(-6, -1), (-5, 1), (-4, -1), (-3, 2), (-2, -1), (-1, 1)])
}

/// A double-wrap throw as the instrument tie makes it (the long end coiled twice on the driver,
/// the tail pulled through the coil) closes to the cinquefoil 5_1 = T(2,5), of the coil's
/// handedness, not to the three-twist knot 5_2; one wrap closes to the trefoil. A coil laid
/// the other way along the driver (its standing part where the tail goes in) gives no knot.
#[test]
fn a_double_wrap_instrument_tie_throw_closes_to_the_cinquefoil() {
    for sense in [Sense::Right, Sense::Left] {
        for wraps in [1u8, 2] {
            let pts = instrument_tie_throw(sense, wraps, true);
            let (v, crossings) = topology::jones_open(&pts, 3).unwrap();
            let right = if wraps == 2 {
                right_cinquefoil()
            } else {
                right_trefoil()
            };
            let want = if sense == Sense::Right {
                right.clone()
            } else {
                right.mirror()
            };
            println!(
                "{sense:?} x{wraps}: V = {} ({crossings} crossings reduced), det {:?}",
                v.to_t_string(),
                v.determinant()
            );
            assert_eq!(v, want, "{sense:?} x{wraps}: {}", v.to_t_string());
            assert_ne!(v, three_twist());
            assert_ne!(v, three_twist().mirror());
            // The same through the knot names.
            let id = topology::identify_open(&pts).unwrap();
            let name = if wraps == 2 { "cinquefoil" } else { "trefoil" };
            assert_eq!(id.name, Some(name));
            assert_eq!(id.determinant, 2 * wraps as u128 + 1);
            // And as a throw: as tied, before it is laid down, the tail runs straight through
            // the coil, so it is a half hitch on the tail.
            let a = analyse_knot(&pts, &Vec3::y()).unwrap();
            assert_eq!(a.throws, vec![Throw { sense, wraps }]);
            assert_eq!(a.name, KnotName::HalfHitches);
            assert_eq!(a.shape.unwrap().post, Some(Strand::Tail));
            // The coil laid the other way: the wraps slide off, no knot.
            let other = instrument_tie_throw(sense, wraps, false);
            assert_eq!(topology::jones_open(&other, 3).unwrap().0, Laurent::one());
        }
    }
}

/// A single throw of each sense closes to the trefoil of that handedness and is reported as one
/// single throw of that sense, tight or loose, turned, with noise; laid flat in the skin's plane.
#[test]
fn single_throws_are_trefoils_of_their_sense() {
    for throw in [R1, L1] {
        for (name, pts, up) in variants(|s| flat_knot(&[throw], s)) {
            let a = analyse_knot(&pts, &up).unwrap();
            let want = if throw.sense == Sense::Right {
                right_trefoil()
            } else {
                right_trefoil().mirror()
            };
            assert_eq!(a.jones, want, "{throw:?} {name}: {}", a.jones.to_t_string());
            assert_eq!(a.throws, vec![throw], "{name}");
            assert_eq!(a.name, KnotName::SingleThrow, "{name}");
            assert_eq!(topology::identify_open(&pts).unwrap().name, Some("trefoil"));
            let shape = a.shape.unwrap();
            assert_eq!(shape.post, None, "{name}: {shape:?}");
            assert!(shape.laid_flat, "{name}: {shape:?}");
        }
    }
}

/// Square, granny, surgeon's and the same-sense surgeon's knot, laid flat, by name; their
/// throws as multisets; identify_open's names agree.
#[test]
fn square_granny_and_surgeons_knots_are_named() {
    let cases: [(&[Throw], KnotName, &str); 6] = [
        (&[R1, L1], KnotName::Square, "square"),
        (&[L1, R1], KnotName::Square, "square"),
        (&[R1, R1], KnotName::Granny, "granny"),
        (&[L1, L1], KnotName::Granny, "granny"),
        (&[R2, L1], KnotName::Surgeons, "surgeon's"),
        (
            &[L2, L1],
            KnotName::SurgeonsSameSense,
            "surgeon's, same sense",
        ),
    ];
    for (throws, want, id_name) in cases {
        for (name, pts, up) in variants(|s| flat_knot(throws, s)) {
            let a = analyse_knot(&pts, &up).unwrap();
            println!(
                "{throws:?} {name}: {:?}, {} crossings, V = {}",
                a.name,
                a.crossings,
                a.jones.to_t_string()
            );
            assert_eq!(a.name, want, "{throws:?} {name}");
            let mut sorted = throws.to_vec();
            sorted.sort_by_key(|t| (std::cmp::Reverse(t.wraps), std::cmp::Reverse(t.sense)));
            assert_eq!(a.throws, sorted, "{name}");
            assert_eq!(a.alternating, throws[0].sense != throws[1].sense);
            let shape = a.shape.as_ref().unwrap();
            assert_eq!(shape.post, None, "{name}: {shape:?}");
            assert!(shape.laid_flat, "{name}: {shape:?}");
            assert_eq!(
                topology::identify_open(&pts).unwrap().name,
                Some(id_name),
                "{name}"
            );
        }
    }
}

/// The FLS knot: a double throw then two single throws, alternating; and a four-throw square
/// stack. Their throws are found (as multisets), the stack is alternating.
#[test]
fn three_and_four_throw_stacks_factor_into_their_throws() {
    for throws in [&[R2, L1, R1][..], &[L1, R1, L1, R1][..]] {
        let pts = flat_knot(throws, TIGHT);
        let a = analyse_knot(&turned(&pts), &turned_up()).unwrap();
        let mut sorted = throws.to_vec();
        sorted.sort_by_key(|t| (std::cmp::Reverse(t.wraps), std::cmp::Reverse(t.sense)));
        assert_eq!(a.throws, sorted);
        assert_eq!(a.name, KnotName::Stack);
        assert!(a.alternating);
    }
}

/// The tracker fed the knot as it is tied: nothing, the first throw, both: it reports throw 1
/// then throw 2 with their senses and wraps, and names the knot at each stage; a throw pulled
/// out again is reported undone.
#[test]
fn the_tracker_reports_throws_in_order() {
    for (first, second, name) in [
        (R1, L1, KnotName::Square),
        (L1, L1, KnotName::Granny),
        (R2, L1, KnotName::Surgeons),
        (L2, L1, KnotName::SurgeonsSameSense),
    ] {
        for (label, size) in [("tight", TIGHT), ("loose", LOOSE)] {
            let up = turned_up();
            let mut tr = KnotTracker::new();
            let none = turned(&flat_knot(&[], size));
            let one = turned(&flat_knot(&[first], size));
            let two = turned(&flat_knot(&[first, second], size));
            assert_eq!(tr.update(&none, &up).unwrap(), vec![]);
            assert_eq!(tr.name(), KnotName::NotAKnot);
            assert_eq!(
                tr.update(&one, &up).unwrap(),
                vec![KnotChange::Added {
                    index: 0,
                    throw: first
                }],
                "{label}"
            );
            assert_eq!(tr.update(&one, &up).unwrap(), vec![]);
            let want_one = if first.wraps == 2 {
                KnotName::DoubleThrow
            } else {
                KnotName::SingleThrow
            };
            assert_eq!(tr.name(), want_one);
            assert_eq!(
                tr.update(&two, &up).unwrap(),
                vec![KnotChange::Added {
                    index: 1,
                    throw: second
                }],
                "{label}"
            );
            assert_eq!(tr.name(), name, "{label}");
            assert_eq!(
                tr.throws().iter().map(|t| t.throw).collect::<Vec<_>>(),
                vec![first, second]
            );
            assert_eq!(tr.alternating(), first.sense != second.sense);
            // Each throw kept the knot's shape at its tightest: laid flat.
            assert!(
                tr.throws()
                    .iter()
                    .all(|t| t.shape.as_ref().unwrap().laid_flat)
            );
            // The second throw pulled out again.
            assert_eq!(
                tr.update(&one, &up).unwrap(),
                vec![KnotChange::Undone {
                    index: 1,
                    throw: second
                }]
            );
            assert_eq!(tr.update(&none, &up).unwrap().len(), 1);
            assert_eq!(tr.name(), KnotName::NotAKnot);
        }
    }
}

/// With confirmations, a change must be seen in consecutive updates before it is reported.
#[test]
fn the_tracker_waits_for_confirmations() {
    let up = Vec3::y();
    let mut tr = KnotTracker::with_confirmations(2);
    let one = flat_knot(&[R1], TIGHT);
    let none = flat_knot(&[], TIGHT);
    assert_eq!(tr.update(&one, &up).unwrap(), vec![]);
    assert_eq!(tr.update(&none, &up).unwrap(), vec![]);
    assert_eq!(tr.update(&one, &up).unwrap(), vec![]);
    assert_eq!(
        tr.update(&one, &up).unwrap(),
        vec![KnotChange::Added {
            index: 0,
            throw: R1
        }]
    );
}

/// A double throw losing a wrap is reported as the double undone and a single added; a knot that
/// is no product of throws (a figure-eight) is reported unrecognised, and a throw after it is
/// added afresh.
#[test]
fn the_tracker_reports_a_lost_wrap_and_an_unrecognised_knot() {
    let up = Vec3::y();
    let mut tr = KnotTracker::new();
    tr.update(&flat_knot(&[R2], TIGHT), &up).unwrap();
    assert_eq!(tr.name(), KnotName::DoubleThrow);
    assert_eq!(
        tr.update(&flat_knot(&[R1], TIGHT), &up).unwrap(),
        vec![
            KnotChange::Undone {
                index: 0,
                throw: R2
            },
            KnotChange::Added {
                index: 0,
                throw: R1
            }
        ]
    );
    // A figure-eight knot, cut open far from its crossings, in place of the suture.
    let fig8: Vec<Vec3> = (3..397)
        .map(|k| {
            let t = 2.0 * PI * k as f64 / 400.0;
            let r = 2.0 + (2.0 * t).cos();
            Vec3::new(r * (3.0 * t).cos(), r * (3.0 * t).sin(), (4.0 * t).sin()) * 1e-3
        })
        .collect();
    let changes = tr.update(&fig8, &up).unwrap();
    assert!(
        matches!(changes.as_slice(), [KnotChange::Unrecognised { .. }]),
        "{changes:?}"
    );
    assert_eq!(tr.name(), KnotName::Unrecognised);
    assert!(tr.throws().is_empty());
    assert_eq!(
        tr.update(&flat_knot(&[L1], TIGHT), &up).unwrap(),
        vec![KnotChange::Added {
            index: 0,
            throw: L1
        }]
    );
}

/// Two half hitches on the straight tail (topologically a square or a granny knot) are named
/// half hitches, the tail the post, and are not laid flat.
#[test]
fn half_hitches_on_a_straight_strand_are_a_slip_knot() {
    for throws in [[R1, L1], [R1, R1]] {
        for (name, pts, up) in variants(|s| half_hitches(&throws, s)) {
            let a = analyse_knot(&pts, &up).unwrap();
            let shape = a.shape.as_ref().unwrap();
            println!(
                "{throws:?} {name}: {:?} {:?} straightness tail {:.3} long {:.3}",
                a.name, a.throws, shape.tail_straightness, shape.long_straightness
            );
            let mut sorted = throws.to_vec();
            sorted.sort();
            let mut got = a.throws.clone();
            got.sort();
            assert_eq!(got, sorted, "{name}");
            assert_eq!(a.name, KnotName::HalfHitches, "{name}");
            assert_eq!(shape.post, Some(Strand::Tail), "{name}");
            assert!(!shape.laid_flat, "{name}");
            // The same throws laid flat are no slip knot.
            let flat = analyse_knot(&flat_knot(&throws, TIGHT), &Vec3::y()).unwrap();
            assert_ne!(flat.name, KnotName::HalfHitches);
        }
    }
}

/// A stitch with no throw, and one whose ends are merely crossed and coiled loosely, is not a
/// knot.
#[test]
fn an_unknotted_stitch_is_not_a_knot() {
    for (name, pts, up) in variants(|s| flat_knot(&[], s)) {
        let a = analyse_knot(&pts, &up).unwrap();
        assert_eq!(a.name, KnotName::NotAKnot, "{name}");
        assert!(a.throws.is_empty() && a.shape.is_none());
    }
    // The long end coiled round the tail with the tail never pulled through (the coil of an
    // instrument tie slid off the driver): no knot.
    let coil = instrument_tie_throw(Sense::Right, 2, false);
    let a = analyse_knot(&coil, &Vec3::y()).unwrap();
    assert_eq!(a.name, KnotName::NotAKnot);
}

/// The factorisation into throws is unique: the products of up to six throws' polynomials are
/// all different, and each factors back into its own throws.
#[test]
fn throw_products_factor_uniquely() {
    fn multisets(n: usize, from: usize, acc: &mut Vec<Throw>, out: &mut Vec<Vec<Throw>>) {
        out.push(acc.clone());
        if n == 0 {
            return;
        }
        for i in from..4 {
            acc.push(Throw::ALL[i]);
            multisets(n - 1, i, acc, out);
            acc.pop();
        }
    }
    let mut all = Vec::new();
    multisets(topology::throws::MAX_THROWS, 0, &mut Vec::new(), &mut all);
    assert_eq!(all.len(), 210);
    let mut seen = std::collections::HashMap::new();
    for m in &all {
        let v = m.iter().fold(Laurent::one(), |acc, t| acc.mul(&t.jones()));
        assert!(seen.insert(v.coeffs.clone(), m.clone()).is_none(), "{m:?}");
        assert_eq!(topology::factor_throws(&v).as_ref(), Some(m), "{m:?}");
    }
    // The figure-eight is no product of throws.
    let fig8 = topology::from_t(&[(-2, 1), (-1, -1), (0, 1), (1, -1), (2, 1)]);
    assert_eq!(topology::factor_throws(&fig8), None);
}
