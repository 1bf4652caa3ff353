//! Inputs that once hung the binary (issue #26). Each runs `suture` as a child process that is
//! killed after [`LIMIT`], so a regression fails the test instead of hanging CI.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use suture::session::npz;

/// Far above what any of these takes (well under a second each), far below CI's patience.
const LIMIT: Duration = Duration::from_secs(30);

/// Run the binary with `args`; `None` if it had to be killed after [`LIMIT`].
fn run_limited(args: &[&str]) -> (Option<Output>, Duration) {
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_suture"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn suture");
    loop {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            return (Some(out), t0.elapsed());
        }
        if t0.elapsed() > LIMIT {
            child.kill().expect("kill");
            child.wait().expect("reap");
            return (None, t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn draped_rope_loads_and_runs() {
    // A rope draped over a 5 cm bar, 120 elements: one segment's frame on the far side is a
    // rotation by π of the identity, on which nalgebra's Rotation3::from_matrix crept by
    // 5.6e-16 rad per iteration, forever (math::rotation_from_matrix).
    let out = std::env::temp_dir().join(format!("suture-drape-{}.npz", std::process::id()));
    let (o, took) = run_limited(&[
        "simulate",
        "tests/fixtures/draped_rope_hang.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    let o = o.unwrap_or_else(|| panic!("suture simulate still running after {took:?}: killed"));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Load and two 1 ms steps of 120 elements: measured 0.054 s; 5 s allows a loaded machine.
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The frames are the right ones, not what the creeping iteration held (about the
    // identity): the rope lies in the xz plane with `normal = [0, 1, 0]`, so parallel
    // transport keeps every d1 on +y.
    let arrays = npz::read(&std::fs::read(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).ok();
    let d1 = &arrays["rod0_directors"];
    assert_eq!(&d1.shape[1..], &[120, 3]);
    let mut worst: f64 = 0.0;
    for d in d1.data[..120 * 3].chunks(3) {
        worst = worst.max((d[0].abs()).max((d[1] - 1.0).abs()).max(d[2].abs()));
    }
    // Measured: 1.3e-15 (rounding of the transport around the bar); a wrong frame is off by 1.
    assert!(worst < 3e-15, "first frame's d1 off +y by {worst:e}");
}
