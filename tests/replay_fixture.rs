//! A recording made before the house restructuring (issue #21) replays bit for bit after it.
//!
//! `tests/fixtures/replay/knot_tying_stitch.surec` was recorded by the build at ebef0ee:
//!
//! ```text
//! suture run scenes/knot_tying.toml --headless --duration 3 --no-realtime \
//!     --device scripted:tests/fixtures/replay/knot_tying_drive.csv \
//!     --record tests/fixtures/replay/knot_tying_stitch.surec
//! ```
//!
//! 3002 steps of the knot-tying scene (a placed stitch through the deformable pad, IMC
//! self-contact with stick friction, the rigid needle on the coupling): the needle end loops
//! over the wound, is let go at 1.50 s and taken again at its point at 1.69 s. The recording
//! carries its scene's text, so the scene file may change without touching this test. A
//! change that alters the physics on purpose regenerates the fixture with the command above
//! and says why in its commit.

use std::process::Command;

#[test]
fn a_recording_from_before_the_restructuring_replays_bit_for_bit() {
    let out = Command::new(env!("CARGO_BIN_EXE_suture"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "replay",
            "tests/fixtures/replay/knot_tying_stitch.surec",
            "--headless",
            "--verify",
        ])
        .output()
        .expect("run suture");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "replay --verify failed ({:?}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    assert!(
        stdout.contains("replay matches bit for bit: 3002 steps, 30 state digests, final digest"),
        "unexpected replay output:\n{stdout}\n{stderr}"
    );
}
