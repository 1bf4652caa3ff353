//! A committed recording replays bit for bit on later builds (across refactors: nothing in it
//! may change unless the physics changes on purpose).
//!
//! `tests/fixtures/replay/knot_tying_stitch.surec` was recorded (format 5, state digests of
//! version 2) by the build that made the Newton convergence test measure the residual against
//! the forces in play (issue #23, docs/derivations/der-imc.md §F8), with:
//!
//! ```text
//! suture run scenes/knot_tying.toml --headless --duration 3 --no-realtime \
//!     --device scripted:tests/fixtures/replay/knot_tying_drive.csv \
//!     --record tests/fixtures/replay/knot_tying_stitch.surec
//! ```
//!
//! 3001 steps of the knot-tying scene (a placed stitch through the deformable pad, IMC
//! self-contact with stick friction, the rigid needle on the coupling): the needle end loops
//! over the wound, is let go at 1.50 s and taken again at its point at 1.69 s. The recording
//! carries its scene's text, so the scene file may change without touching this test. A
//! change that alters the physics on purpose regenerates the fixture with the command above
//! and says why in its commit. (The recording before it, of format 1, was made at ebef0ee
//! before the house restructuring of issue #21 and replayed bit for bit through it; the
//! convergence test's change moves every step's last bits, from step 3 on.)

use std::process::Command;

#[test]
fn the_committed_recording_replays_bit_for_bit() {
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
        stdout.contains("replay matches bit for bit: 3001 steps, 30 state digests, final digest"),
        "unexpected replay output:\n{stdout}\n{stderr}"
    );
}
