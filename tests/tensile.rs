//! The virtual tensile test (`sim::tensile`, issue #24 "knot security", docs/knots.md §6) on
//! what needs no tie: a placed stitch with no knot, and a scene with no stitch. The knots
//! themselves (the square holds, a single throw slips) are tested where they are tied, in
//! tests/instrument_tie.rs.

use suture::scene::{self, Overrides};
use suture::sim::tensile::{TensileError, TensileParams, tensile_test};

fn world(path: &str) -> suture::sim::World {
    let text = std::fs::read_to_string(path).unwrap();
    scene::parse(path, &text, Overrides::default())
        .unwrap()
        .world
}

/// The scene at `path`, at its start (a stitch with no knot), holds nothing under the test.
fn holds_nothing(path: &str) {
    let w = world(path);
    let p = TensileParams::default();
    let r = tensile_test(&w, &p).unwrap();
    println!("{path}: {r:?}");
    assert!(!r.holds);
    assert!(r.peak_force < p.preload, "{r:?}");
    // The world it was given is untouched: the test runs on a copy.
    assert_eq!(w.time, 0.0);
}

/// A stitch with no knot is a loop whose two ends are free: nothing can hold it, so the
/// posts run its whole slack without feeling the preload (the loop is pulled through the
/// tissue's place with the resistance of its bending alone).
#[test]
fn a_stitch_without_a_knot_holds_nothing() {
    holds_nothing("scenes/instrument_tie_fresh.toml");
}

/// The same on the knot-tying scene: a stitch of two bites (four holes), its tail held by an
/// assistant (a clamped end, which the test cuts free like the other): with no knot it holds
/// nothing either.
#[test]
fn a_two_bite_stitch_with_a_held_tail_and_no_knot_holds_nothing() {
    holds_nothing("scenes/knot_tying.toml");
}

/// A scene that does not suture has no stitch to test.
#[test]
fn a_scene_without_a_stitch_cannot_be_tested() {
    let w = world("scenes/knot_overhand.toml");
    assert_eq!(
        tensile_test(&w, &TensileParams::default()),
        Err(TensileError::NoSuture)
    );
}
