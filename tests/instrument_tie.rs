//! The instrument tie scripted (issue #22): examples/tie_script.rs's two hands, stepped offline
//! through `World::step` (the live loop's step).
//!
//! The left hand wraps the long end round the right driver's closed jaws; the driver opens,
//! takes the tail tip first, backs out through the wraps, and the hands cross and pull the
//! throw down. Checked against what the project's own topology and the wound say, not against
//! recorded numbers: the throws the KnotTracker sees, the wound closed under them, no strand
//! through another.

#[path = "../examples/tie_script.rs"]
#[allow(dead_code)]
mod tie_script;

use suture::contact::segment;
use suture::math::Vec3;
use suture::sim::instrument::GraspChange;
use suture::sim::suturing::EventKind;
use suture::sim::tensile::{TensileParams, TensileReport, tensile_test_traced};
use suture::sim::tool::Hand;
use suture::topology::throws::{KnotChange, KnotName, KnotTracker};
use tie_script::{Eye, Knot};

/// What a scripted tie did, stepped offline through `World::step`.
struct Tied {
    /// The knot the project's KnotTracker follows, updated at 10 Hz.
    tracker: KnotTracker,
    /// Its changes, in order.
    changes: Vec<KnotChange>,
    /// Steps, unconverged steps (all; before `strands_cross`), failed steps.
    steps: usize,
    /// Newton iterations summed over the steps.
    iterations: usize,
    unconverged: usize,
    unconverged_before: usize,
    failed: usize,
    /// The wound's gap at the first and the last step [m].
    gap0: f64,
    last_gap: f64,
    /// The closest approach of two segments that are not neighbours, over every step [m],
    /// and when [s] and which segments.
    closest: f64,
    closest_at: (f64, usize, usize),
    /// How many times the right driver took the tail (the suture's first 2 cm).
    tail_grasps: usize,
    /// The world at the end.
    world: suture::sim::World,
}

/// Tie `knot` on the scene at `path` (its first `upto` throws), counting unconverged steps
/// before `strands_cross` [s] apart.
impl Tied {
    /// At most `before` unconverged steps before the strands cross, `all` in all, and
    /// `per_step` Newton iterations a step on average.
    fn converges_within(&self, before: usize, all: usize, per_step: f64) {
        assert!(
            self.unconverged_before <= before,
            "{}",
            self.unconverged_before
        );
        assert!(self.unconverged <= all, "{}", self.unconverged);
        let mean = self.iterations as f64 / self.steps as f64;
        assert!(mean <= per_step, "{mean:.3} iterations per step");
    }
}

fn tie(path: &str, knot: Knot, upto: usize, strands_cross: f64) -> Tied {
    tie_scene(path, tie_script::scene_at(path), knot, upto, strands_cross)
}

/// [`tie`] on the scene `sc` (loaded from `path`, perhaps changed).
fn tie_scene(
    path: &str,
    sc: suture::scene::Scene,
    knot: Knot,
    upto: usize,
    strands_cross: f64,
) -> Tied {
    let plans = tie_script::plans_upto(&sc, knot, &mut Eye::new(&sc), upto);
    let mut world = sc.world.clone();
    let mut t = Tied {
        tracker: KnotTracker::with_confirmations(2),
        changes: Vec::new(),
        steps: 0,
        iterations: 0,
        unconverged: 0,
        unconverged_before: 0,
        failed: 0,
        gap0: f64::NAN,
        last_gap: f64::NAN,
        closest: f64::INFINITY,
        closest_at: (0.0, 0, 0),
        tail_grasps: 0,
        world: sc.world.clone(),
    };
    let mut seen = 0;
    tie_script::run(&sc, &mut world, &plans, |w, out| {
        t.steps += 1;
        t.iterations += out.iterations;
        t.unconverged += usize::from(!out.converged);
        if !out.converged && out.time < strands_cross {
            t.unconverged_before += 1;
        }
        t.failed += usize::from(out.error.is_some());
        if t.steps == 1 {
            t.gap0 = out.gap;
        }
        t.last_gap = out.gap;
        for e in w.events_since(seen) {
            if let EventKind::Instrument {
                hand: Hand::Right,
                change: GraspChange::Suture(s),
            } = e.kind
            {
                // The tail is the suture's first 2 cm (it starts at the tail's free end).
                t.tail_grasps += usize::from(s < 0.02);
            }
        }
        seen = out.events;
        let x = w.rods[0].positions();
        for i in 0..x.len() - 1 {
            for j in i + 2..x.len() - 1 {
                let d = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance;
                if d < t.closest {
                    t.closest = d;
                    t.closest_at = (out.time, i, j);
                }
            }
        }
        // The knot, at 10 Hz as the live analysis does.
        if t.steps.is_multiple_of(100)
            && let Ok(c) = t.tracker.update(x, &Vec3::y())
        {
            t.changes.extend(c);
        }
    });
    println!(
        "{path} {knot:?}: {} steps ({:.3} Newton iterations per step), {} unconverged ({} before {strands_cross} s), {} failed; closest approach {:.6} mm (at {:.3} s, segments {} and {}); gap {:.2} → {:.2} mm; knot {:?}; changes {:?}",
        t.steps,
        t.iterations as f64 / t.steps as f64,
        t.unconverged,
        t.unconverged_before,
        t.failed,
        t.closest * 1e3,
        t.closest_at.0,
        t.closest_at.1,
        t.closest_at.2,
        t.gap0 * 1e3,
        t.last_gap * 1e3,
        t.tracker.name(),
        t.changes,
    );
    t.world = world;
    t
}

#[test]
fn the_first_throw_of_the_scripted_instrument_tie_is_one_single_throw_that_closes_the_wound() {
    // The wraps start to slide off the jaws onto the tail (the driver backing out) at 6.2 s.
    let t = tie("scenes/instrument_tie.toml", Knot::Square, 1, 6.2);
    let r = suture::rod::params::usp_radius("3-0").unwrap();
    assert!(t.tail_grasps >= 1, "the driver never took the tail");
    assert_eq!(t.failed, 0);
    // One throw, a single one.
    let throws = t.tracker.throws();
    assert_eq!(throws.len(), 1, "{:?}", t.changes);
    assert_eq!(throws[0].throw.wraps, 1);
    // The wound closed under it: the 3 mm gap down to at most 0.5 mm.
    assert!(
        t.gap0 > 0.0025 && t.last_gap <= 0.0005,
        "gap {}",
        t.last_gap
    );
    // No strand passed through another: no two segments that are not neighbours closer than
    // the suture's diameter less 1 % of its radius (the contact's tolerance).
    assert!(t.closest >= 2.0 * r - 0.01 * r, "closest {}", t.closest);
    // Newton's 40 iterations converge while the suture is wrapped and grasped: measured 6
    // unconverged steps, all as the jaws open inside the wraps (the wraps are stretched in one
    // step); the same with the contact's full Newton model. With a step that does not converge
    // halved down to 62.5 µs (the scene's `subdivide = 4`, der-imc.md §F12; 2026-11-29, third
    // session): 3, at 4.4–4.5 s and 5.5 s, which no halving resolves. The bound is 5 % over,
    // rounded up.
    let before = 4;
    // From the moment strands cross in contact (the wraps sliding onto the tail, the throw
    // pulled down): measured 18 unconverged of 10302 steps (2026-11-28, third session: where
    // only the band is indefinite, the exact step, der-imc.md §F10; 24 with the band shifted
    // there, the residual measured against the forces in play, der-imc.md §F8; 28 before it, with each pressing pair's
    // exact Hessian, der-imc.md §F7; 702 with the Gauss–Newton pair Hessian, about one step in
    // sixteen: linear convergence while the strands slide). The trajectory is chaotic once
    // strands slide in contact, so builds that change only the rounding differ by a few
    // steps. With the contact's full Newton model (der-imc.md §F11, the default since
    // 2026-11-28, fourth session; in this scene since the fifth): 21 of 10 302, gap 2.98 → −0.30 mm,
    // closest approach 0.199086 mm. With unconverged steps halved (the scene's
    // `subdivide = 4`; 2026-11-29, third session): 3 of 10 302, all before 6.2 s, gap 2.98 →
    // −0.34 mm, closest approach 0.199083 mm; the throw's wraps snapping off the jaws' tip at
    // 7.1 s, once 4–7 unconverged steps that decided the throw by rounding, now converge in
    // halved steps. The bound is 5 % over, rounded up.
    let all = 4;
    // Newton iterations per step over the whole tie (the cap is 40; a halved step counts the
    // iterations of its failed attempt and of every half): measured 5.523 with unconverged
    // steps halved (5.222 without, with the full model; 5.161 with the near one; 5.254 before
    // §F10, 6.175 before der-imc.md §F8; 10.997 with the Gauss–Newton pair Hessian, #23). The
    // bound is 5 % over, so a regression that costs one step in twenty another iteration fails.
    t.converges_within(before, all, 5.523 * 1.05);
    // A single throw does not hold its loop (issue #24, docs/knots.md §6): its ends free, the
    // strands run through it (the capstan bound with no tension on the tail is zero), so
    // the posts never feel the preload while they take up the loop's whole slack.
    let (r, closest) = security(&t);
    assert!(!r.holds, "{r:?}");
    assert!(r.peak_force < TensileParams::default().preload, "{r:?}");
    assert!(closest >= closest_allowed(), "closest {closest}");
}

/// The closest two segments that are not neighbours may come: the suture's diameter less 1 %
/// of its radius (the contact's tolerance) [m].
fn closest_allowed() -> f64 {
    let r = suture::rod::params::usp_radius("3-0").unwrap();
    2.0 * r - 0.01 * r
}

// Measured (`cargo test --release --test instrument_tie -- --ignored --nocapture`, 2026-11-26):
// with self-contact skipping |i − j| ≤ 2 (`DEFAULT_SKIP`), the KnotTracker named it granny
// (gap 1.00 → −0.04 mm, 3738 of 22 506 steps unconverged, 0 failed), but segments 48 and 50
// of the long end came within 0.046 mm at 20.98 s: the second throw's crossing was made
// through a hairpin at segment 49 that self-contact did not see. der-imc.md §F5 A's rule for
// these 1.4 mm segments (`SelfContact::skip_for`: |i − j| ≥ 2 interact; on main since
// 2026-11-27) removes the hairpin (closest 0.199 mm) and with it the second throw (one throw:
// the wraps slip off over the 1.5 mm of tail beyond the grip; taking the very end,
// tie_script's `TIE_GI=3`, the loop rides back onto the jaws as the hands cross; issue #22,
// examples/tie_script.rs, Status). The rule leaves the first throw above as it was (the same
// iterations, unconverged steps and closest approach: no two segments one apart come near).
//
// 2026-11-27, second session: on the fresh scene at 110 elements (0.94 mm segments), the jaws
// taking the tail's very end and the second wraps put on at it with no cone in the orbit
// (tie_script's `LIFT_AIM`, `LIFT_WRAP_AT`, the flattened orbit), the second throw forms:
// the KnotTracker adds two throws of the same sense (Right, Right), the gap closes
// (1.00 → −0.06 mm), closest approach 0.199038 mm; but the tail is left straight through the
// knot (a post: [`KnotShape::post`]), so it is named half hitches, not granny; 4220 of 22 480
// steps unconverged (13.98 iterations a step), nearly all of them from 19 s, as the hands
// cross. With the later throws laid down by feel (tie_script's `LAY_PULL`, 1.2 N each, as the
// square below) the granny slips: the hands never feel 1.2 N (nor 0.8 N), draw the tail out,
// and the knot is the unknot by 22.6 s (the gap back to 1.1 mm); pulled to fixed places (the
// tail's end 25 mm out, `TIE_FIXED=1 TIE_RX2=25 TIE_RZ2=0 TIE_RY2=2`) it ends a granny with
// both strands bent (chord/arc 0.09 and 0.10, laid flat) but the gap at 0.64–0.66 mm; 27 mm
// out, the second throw is lost. A granny slips more readily than a square knot; this one
// slipped under the square's lay.
//
// 2026-11-28: with the residual measured against the forces in play (der-imc.md §F8) the
// granny laid by feel holds as it is laid: measured 23 979 steps, 13.880 Newton iterations a
// step, 4909 unconverged (9 before 6.2 s), 0 failed; closest approach 0.199058 mm (segments 2
// and 84 at 7.174 s, in the first throw); gap 1.00 → 0.29 mm; two throws, Right and Right;
// named granny (`cargo test --release --test instrument_tie granny -- --nocapture`, about
// 4 min). Its second throw backs out in 1.5 s (tie_script's `BACKOUT_OTHER` on the ranges
// that tie each knot).
//
// 2026-11-28, third session, with the exact step where only the band is indefinite
// (der-imc.md §F10): 23 981 steps, 6.374 Newton iterations a step, 223 unconverged (9 before
// 6.2 s), 0 failed; closest approach 0.199031 mm (segments 2 and 84 at 7.174 s); gap 1.00 →
// 0.26 mm; Right, Right; named granny.
//
// 2026-11-28, fifth session: the contact's full Newton model (der-imc.md §F11) is the
// default here too; with it the hands crossing on straight paths let the ends go slack
// (0.1–0.2 N) and the second throw came undone, so now they keep 0.5 N on their ends as they
// cross and lay the throw at 3 N (tie_script's `CROSS_PULL`, `LAY_PULL`): 23 981 steps,
// 5.082 Newton iterations a step, 79 unconverged (0 before 6.2 s), 0 failed; closest approach
// 0.199004 mm (segments 19 and 66 at 23.373 s); gap 1.00 → 0.07 mm; Right, Right; named
// granny; in the tensile test it takes 0.81 N (5.2 × its loop's 0.156 N) and slips.
//
// 2026-11-29, second session: the left hand holds the long end still while the right jaws
// come down on the tail for the second throw (tie_script's `taut_grasping`; feeling for its
// pull it drew the suture through the first throw, and whether the jaws caught the tail
// turned on rounding): 23 988 steps, 5.395 Newton iterations a step, 95 unconverged (0 before
// 6.2 s), 0 failed; closest approach 0.199001 mm (segments 22 and 69 at 23.304 s); gap 1.00 →
// 0.15 mm; Right, Right; named granny. The bounds are these figures plus 5 %, rounded up.
#[test]
fn the_scripted_granny_on_the_fresh_wound_is_named_granny_and_closes_it() {
    // Two single throws of the same sense on the 1 mm wound (tie_script's second throw: the
    // driver takes the tail near its end and stands it up from the knot, the long end is
    // wrapped round the jaws holding it, which back out so the wraps slide onto the tail).
    let t = tie("scenes/instrument_tie_fresh.toml", Knot::Granny, 2, 6.2);
    two_single_throws_close_the_fresh_wound(&t, KnotName::Granny, true);
    t.converges_within(0, 100, 5.395 * 1.05);
    let (r, closest) = security(&t);
    assert!(closest >= closest_allowed(), "closest {closest}");
    println!("granny security: {r:?}");
}

/// The knot's security (issue #24, docs/knots.md §6): the virtual tensile test with its
/// default settings from the tie's last state, and the closest approach of two segments that
/// are not neighbours over the test [m] (no strand may pass through another under the load).
fn security(t: &Tied) -> (TensileReport, f64) {
    let mut closest = f64::INFINITY;
    let r = tensile_test_traced(&t.world, &TensileParams::default(), |s| {
        let x = s.positions;
        for i in 0..x.len() - 1 {
            for j in i + 2..x.len() - 1 {
                closest =
                    closest.min(segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance);
            }
        }
    })
    .expect("the tensile test runs");
    println!(
        "tensile test: {r:?}; closest approach {:.6} mm",
        closest * 1e3
    );
    (r, closest)
}

/// What both knots of two single throws on the fresh wound must show: no failed step, the
/// knot named `name`, two single throws (of the same sense when `same_sense`, else opposite),
/// the wound's 1 mm rest gap closed to at most 0.5 mm under it, and no two segments ever
/// closer than 2r − 1 % r.
fn two_single_throws_close_the_fresh_wound(t: &Tied, name: KnotName, same_sense: bool) {
    assert_eq!(t.failed, 0);
    assert_eq!(t.tracker.name(), name, "{:?}", t.changes);
    let throws = t.tracker.throws();
    assert_eq!(throws.len(), 2, "{:?}", t.changes);
    let second = if same_sense {
        throws[1].throw.sense
    } else {
        throws[1].throw.sense.opposite()
    };
    assert_eq!(throws[0].throw.sense, second);
    assert!(throws.iter().all(|th| th.throw.wraps == 1));
    closes_the_fresh_wound_no_strand_through(t);
}

/// The fresh wound's 1 mm rest gap closed to at most 0.5 mm under the knot, and no two
/// segments ever closer than 2r − 1 % r.
fn closes_the_fresh_wound_no_strand_through(t: &Tied) {
    assert!(
        t.gap0 > 0.0008 && t.last_gap <= 0.0005,
        "gap {} -> {}",
        t.gap0,
        t.last_gap
    );
    assert!(t.closest >= closest_allowed(), "closest {}", t.closest);
}

// The square knot of issue #22's item 1, tied by the two scripted instruments on the fresh
// wound (`cargo test --release --test instrument_tie square -- --nocapture`, about 3.5 min).
// Measured 2026-11-28 (the residual measured against the forces in play, der-imc.md §F8;
// the second throw backing out in 3 s, tie_script's `BACKOUT_OTHER`): 25 797 steps, 15.201
// Newton iterations a step, 6306 unconverged (9 before 6.2 s), 0 failed; closest approach
// 0.199058 mm (segments 2 and 84 at 7.174 s, in the first throw); gap 1.00 → 0.44 mm; two
// throws, Right then Left; named square. (2026-11-27, before §F8 and with a 1.5 s back-out:
// 16.169 iterations a step, 6037 unconverged, gap 0.45 mm. With §F8 and a 1.5 or 2 s back-out
// the second wraps leave the jaws' tip without the tail and the knot is undone.) The hands
// pull it down with 1.2 N each (tie_script's `LAY_PULL`). Nearly every unconverged step is
// from 19 s, as the hands pull the strands through each other: there, at the 40-iteration
// cap, the Newton step is still about 3e-8 m and 8e-6 rad (the median), so these steps did
// not converge, a known defect (#23).
//
// 2026-11-28, third session: there the band alone is indefinite while the whole Hessian with
// the contact terms is not, and the exact Newton step is now taken (der-imc.md §F10): 25 795
// steps, 7.930 Newton iterations a step, 703 unconverged (9 before 6.2 s), 0 failed; closest
// approach 0.199031 mm (segments 2 and 84 at 7.174 s); gap 1.00 → 0.28 mm; Right then Left;
// named square.
//
// 2026-11-28, fifth session, with the contact's full Newton model (der-imc.md §F11) and the
// hands keeping their ends taut as they cross (0.5 N) and laying the throw at 3 N
// (tie_script's `CROSS_PULL`, `LAY_PULL`; crossing slack and laid at 1.2 N the full model
// left it 0.88 mm open): 25 795 steps, 5.295 Newton iterations a step, 79 unconverged (0
// before 6.2 s), 0 failed; closest approach 0.199001 mm (segments 17 and 65 at 25.186 s);
// gap 1.00 → −0.01 mm; Right then Left; named square.
//
// 2026-11-29, second session, the left hand holding the long end still while the right jaws
// come down on the tail (as in the granny's test): 25 788 steps, 5.684 Newton iterations a
// step, 110 unconverged (0 before 6.2 s), 0 failed; closest approach 0.199048 mm (segments 2
// and 84 at 7.172 s); gap 1.00 → −0.01 mm; Right then Left; named square. The bounds below
// are these figures plus 5 %, rounded up, so a regression in convergence fails here.
#[test]
fn the_scripted_square_knot_on_the_fresh_wound_is_named_square_and_closes_it() {
    // Two single throws of opposite sense on the 1 mm wound: the first as in the test above,
    // the second as the granny's, turned the other way.
    let t = tie("scenes/instrument_tie_fresh.toml", Knot::Square, 2, 6.2);
    two_single_throws_close_the_fresh_wound(&t, KnotName::Square, false);
    assert!(
        t.tail_grasps >= 2,
        "the driver took the tail {} times",
        t.tail_grasps
    );
    t.converges_within(0, 116, 5.684 * 1.05);
    // Its security (issue #24, docs/knots.md §6): cut out of the pad and loaded on two posts
    // inside its loop, it must take more than the wound's own pull before it slips: the
    // posts' force is the loop's tension times 1 + cos θ (θ between the strands leaving a
    // post), at most twice it, so a peak over twice the loop's tension when the test began
    // (what the closed wound pulled with) is a knot that holds the wound closed. Measured
    // (fifth session, laid at 3 N on the full model): it holds the test's whole 1.5 N (peak
    // 1.498 N against 2 × 0.288 N; closest approach 0.205 mm). Laid at 1.2 N on the near
    // model it slipped at 0.294 N (against 2 × 0.109 N), and at 0.32 N laid with 2 N. No
    // strand passes through another.
    let (r, closest) = security(&t);
    println!("square security: {r:?}");
    assert!(r.peak_force > 2.0 * r.loop_tension, "{r:?}");
    assert!(closest >= closest_allowed(), "closest {closest}");
}

// The square's plan is not a path only today's exact bits take (2026-11-29): the same tie on
// the suture nudged by at most 1 pm per coordinate (tie_script's `nudge`, seed 1: about 10⁵
// rounding units of a 3 cm coordinate, 10⁻⁸ of the suture's radius) must still tie a square
// knot that closes the wound. Before the left hand held the long end still while the right
// jaws came down on the tail (tie_script's `taut_grasping`), another rounding (the Woodbury
// columns crossing the gaps, `[solver] gaps`) made the jaws close on nothing and the knot was
// never tied. Measured: 25 787 steps, 5.269 Newton iterations a step, 96 unconverged, 0
// failed; closest approach 0.199002 mm; gap 1.00 → 0.37 mm; Right then Left; named square.
// Not every rounding is taken yet: with `gaps = true` as well, the first throw is undone as
// its wraps leave the jaws' tip (tie_script's Status), the margin still to be found.
#[test]
fn the_scripted_square_knot_ties_on_a_suture_nudged_by_a_picometre() {
    let path = "scenes/instrument_tie_fresh.toml";
    let mut sc = tie_script::scene_at(path);
    tie_script::nudge(&mut sc, 1);
    let t = tie_scene(path, sc, Knot::Square, 2, 6.2);
    two_single_throws_close_the_fresh_wound(&t, KnotName::Square, false);
}

// The surgeon's knot of issue #22's item 1: a double first throw, then a single throw of the
// other sense, tied by the two scripted instruments on the fresh wound (`cargo test --release
// --test instrument_tie surgeon -- --nocapture`, about 5 min). Measured 2026-11-28: 27 868 steps,
// 14.223 Newton iterations a step, 6405 unconverged (12 before 6.2 s), 0 failed; closest
// approach 0.199023 mm (segments 97 and 104 at 5.461 s, in the double wrap); gap 1.00 →
// −0.01 mm; the KnotTracker saw a single throw added, undone and a double one added as the
// wraps slid onto the tail (7.3 s), then a single throw of the other sense; named surgeon's.
// The first throw's double wrap locks on the jaws (a capstan of e^{μ 4π}), so the left hand
// lets the long end in before the jaws open inside it (tie_script's give; without it the
// suture broke at 5.93 s under 16.3 N), and on the second orbit the left driver's shaft is
// first turned toward the orbit's axis so it dips at most 53° under the horizontal (straight
// down, it entered the pad by the stitch at 18.95 s and pinched the suture there: the Newton
// system singular from 19.0 s). Nearly every unconverged step was from 21 s, as the hands lay
// the second throw down (#23's late-tie stall, as in the square above). With the exact step
// where only the band is indefinite (der-imc.md §F10; 2026-11-28, third session): 27 871
// steps, 7.123 Newton iterations a step, 274 unconverged (8 before 6.2 s), 0 failed; closest
// approach 0.199023 mm; gap 1.00 → −0.01 mm; the same throws; named surgeon's.
// 2026-11-28, fifth session, with the contact's full Newton model (der-imc.md §F11), the
// hands keeping 0.5 N on their ends as they cross and laying the throw at 3 N (tie_script's
// `CROSS_PULL`, `LAY_PULL`): 27 868 steps, 6.628 Newton iterations a step, 226 unconverged
// (1 before 6.2 s), 0 failed; closest approach 0.199025 mm (segments 97 and 104 at 5.461 s);
// gap 1.00 → −0.05 mm; the same throws; named surgeon's.
// 2026-11-29, second session, the left hand holding the long end still while the right jaws
// come down on the tail (as in the granny's test): 27 864 steps, 6.394 Newton iterations a
// step, 186 unconverged (1 before 6.2 s), 0 failed; closest approach 0.199025 mm (segments 97
// and 104 at 5.461 s); gap 1.00 → −0.04 mm; the same throws; named surgeon's; it holds the
// tensile test's 1.5 N (loop tension 0.185 N). The bounds are these figures plus 5 %,
// rounded up.
#[test]
fn the_scripted_surgeons_knot_on_the_fresh_wound_is_named_surgeons_and_closes_it() {
    let t = tie("scenes/instrument_tie_fresh.toml", Knot::Surgeons, 2, 6.2);
    assert_eq!(t.failed, 0);
    assert_eq!(t.tracker.name(), KnotName::Surgeons, "{:?}", t.changes);
    let throws = t.tracker.throws();
    assert_eq!(throws.len(), 2, "{:?}", t.changes);
    assert_eq!(throws[0].throw.wraps, 2, "{:?}", t.changes);
    assert_eq!(throws[1].throw.wraps, 1, "{:?}", t.changes);
    assert_eq!(throws[0].throw.sense, throws[1].throw.sense.opposite());
    closes_the_fresh_wound_no_strand_through(&t);
    // The suture never broke (a broken suture would leave two ends for the tracker to join).
    let broke = t
        .world
        .events_since(0)
        .iter()
        .any(|e| matches!(e.kind, EventKind::SutureBroken { .. }));
    assert!(!broke, "the suture broke");
    t.converges_within(2, 196, 6.394 * 1.05);
    // Its security (docs/knots.md §6), as the square's: more than twice its loop's tension
    // when the test began, the wound's own pull. Measured (fifth session, laid at 3 N on the
    // full model): it holds the whole 1.5 N (peak 1.498 N against 2 × 0.181 N). Laid at
    // 1.2 N on the near model it slipped below its wound's pull (peak 0.097 N, loop tension
    // 0.129 N). No strand passes through another under the test either.
    let (r, closest) = security(&t);
    println!("surgeon's security: {r:?}");
    assert!(r.peak_force > 2.0 * r.loop_tension, "{r:?}");
    assert!(closest >= closest_allowed(), "closest {closest}");
    // The verdict is the knot's, not the test's unconverged steps': 143 of the test's 877
    // steps run out of Newton iterations as the ends are let go (none once it is loaded).
    // With those steps halved down to 62.5 µs (`subdivide = 4`, as the scene's solver can)
    // 14 are left, and the knot holds the same (measured: peak 1.4989 N, loop grown 0.38 mm,
    // both as without halving).
    let halved = TensileParams {
        subdivide: Some(4),
        ..TensileParams::default()
    };
    let h = tensile_test_traced(&t.world, &halved, |_| {}).expect("the tensile test runs");
    println!("surgeon's security, the test's steps halved: {h:?}");
    assert!(h.holds && h.peak_force > 2.0 * h.loop_tension, "{h:?}");
    assert!(h.unconverged < r.unconverged, "{h:?} against {r:?}");
}

#[test]
fn the_first_throw_recorded_offline_replays_bit_for_bit_and_is_assessed_a_single_throw() {
    // tie_script's `--record`: the plan stepped offline, written as the live physics loop
    // writes a session; `suture replay --verify` must re-simulate every step and state digest
    // bit for bit, and `suture assess` (which re-simulates for the knot) must name it.
    let path = "scenes/instrument_tie.toml";
    let sc = tie_script::scene_at(path);
    let plans = tie_script::plans_upto(&sc, Knot::Square, &mut Eye::new(&sc), 1);
    let dir = std::env::temp_dir().join(format!("suture-tie-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("first_throw.surec");
    tie_script::record(&sc, path, &plans, &rec);
    let suture = env!("CARGO_BIN_EXE_suture");
    let verify = std::process::Command::new(suture)
        .args(["replay", "--headless", "--verify"])
        .arg(&rec)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(
        verify.status.success() && said.contains("replay matches bit for bit"),
        "{said}{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let assess = std::process::Command::new(suture)
        .arg("assess")
        .arg(&rec)
        .arg("--out")
        .arg(dir.join("assessment"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&assess.stdout);
    assert!(assess.status.success(), "{said}");
    assert!(said.contains("knot single throw"), "{said}");
    // Its security, by the tensile test from the re-simulated final state: a single throw
    // slips.
    assert!(said.contains("security: slips at"), "{said}");
    std::fs::remove_dir_all(&dir).ok();
}
