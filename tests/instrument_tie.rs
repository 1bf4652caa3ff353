//! The instrument tie scripted (issue #22): the first throw of examples/tie_script.rs, stepped
//! offline through `World::step` (the live loop's step) on scenes/instrument_tie.toml.
//!
//! The left hand wraps the long end round the right driver's closed jaws; the driver opens,
//! takes the tail tip first, backs out through the wraps, and the hands cross and pull the
//! throw down. Checked against what the project's own topology and the wound say, not against
//! recorded numbers: one single throw, the wound closed under it, no strand through another.

#[path = "../examples/tie_script.rs"]
#[allow(dead_code)]
mod tie_script;

use suture::contact::segment;
use suture::math::Vec3;
use suture::sim::instrument::GraspChange;
use suture::sim::suturing::EventKind;
use suture::sim::tool::Hand;
use suture::topology::throws::KnotTracker;
use tie_script::{Eye, Knot};

#[test]
fn the_first_throw_of_the_scripted_instrument_tie_is_one_single_throw_that_closes_the_wound() {
    let sc = tie_script::scene();
    let plans = tie_script::plans_upto(&sc, Knot::Square, &mut Eye::new(&sc), 1);
    let mut world = sc.world.clone();
    let r = suture::rod::params::usp_radius("3-0").unwrap();
    let seg = {
        let x0 = world.rods[0].positions();
        (x0[1] - x0[0]).norm()
    };
    let mut gap0 = f64::NAN;
    let mut tracker = KnotTracker::with_confirmations(2);
    let mut changes = Vec::new();
    let (mut steps, mut unconverged, mut failed) = (0usize, 0usize, 0usize);
    // When the wraps start to slide off the jaws onto the tail (the driver backing out) [s].
    let pulled_through = 6.2;
    let mut unconverged_before = 0usize;
    let mut closest = f64::INFINITY;
    let mut last_gap = f64::NAN;
    let mut seen = 0;
    let mut grasped_tail = false;
    tie_script::run(&sc, &mut world, &plans, |w, out| {
        steps += 1;
        unconverged += usize::from(!out.converged);
        if !out.converged && out.time < pulled_through {
            unconverged_before += 1;
        }
        failed += usize::from(out.error.is_some());
        if steps == 1 {
            gap0 = out.gap;
        }
        last_gap = out.gap;
        for e in w.events_since(seen) {
            if let EventKind::Instrument {
                hand: Hand::Right,
                change: GraspChange::Suture(s),
            } = e.kind
            {
                // The tail is the suture's first 2 cm (it starts at the tail's free end).
                grasped_tail |= s < 0.02;
            }
        }
        seen = out.events;
        let x = w.rods[0].positions();
        // No two segments that are not neighbours closer than the suture's diameter (less
        // 1 % of its radius: the contact's tolerance).
        for i in 0..x.len() - 1 {
            for j in i + 2..x.len() - 1 {
                let d = segment::distance(&x[i], &x[i + 1], &x[j], &x[j + 1]).distance;
                closest = closest.min(d);
            }
        }
        // The knot, at 10 Hz as the live analysis does.
        if steps.is_multiple_of(100) {
            let up = Vec3::y();
            if let Ok(c) = tracker.update(x, &up) {
                changes.extend(c);
            }
        }
    });
    println!(
        "{steps} steps, {unconverged} unconverged, {failed} failed; closest approach {:.6} mm (2r = {:.4} mm, segment {:.2} mm); gap {:.2} → {:.2} mm; knot {:?}; changes {changes:?}",
        closest * 1e3,
        2.0 * r * 1e3,
        seg * 1e3,
        gap0 * 1e3,
        last_gap * 1e3,
        tracker.name(),
    );
    assert!(grasped_tail, "the driver never took the tail");
    assert_eq!(failed, 0);
    // One throw, a single one.
    let throws = tracker.throws();
    assert_eq!(throws.len(), 1, "{changes:?}");
    assert_eq!(throws[0].throw.wraps, 1);
    // The wound closed under it: the 3 mm gap down to at most 0.5 mm.
    assert!(gap0 > 0.0025 && last_gap <= 0.0005, "gap {last_gap}");
    // No strand passed through another.
    assert!(closest >= 2.0 * r - 0.01 * r, "closest {closest}");
    println!(
        "unconverged {unconverged_before} before the wraps leave the jaws, {unconverged} in all"
    );
    // Newton's 40 iterations converge while the suture is wrapped and grasped: measured 5
    // unconverged steps, all as the jaws open inside the wraps (the wraps are stretched in one
    // step).
    assert!(unconverged_before <= 10, "{unconverged_before}");
    // From the moment strands cross in contact (the wraps sliding onto the tail, the throw
    // pulled down) about one step in eight does not converge: self-contact with stick friction
    // where the throw's strands cross (measured 1241 of 10302). Making the knot converge at
    // 1 kHz is issue #23; this bound holds the line until then.
    assert!(unconverged <= 1300, "{unconverged}");
}
