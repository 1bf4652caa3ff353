//! Issue #22: `suture export --npz` writes the suture's centreline frames of the re-simulated
//! session (`suture` [T, nodes, 3], `suture_time` [T]), and `suture assess` names the knot of a
//! session that ties none "not a knot". The reference is this test's own offline run: the
//! recording's scene stepped with `World::step` on the recorded targets.
//!
//! About 10 s in release (a 2.5 s live session, its export, assessment and this replay):
//! `cargo test --release --test export_frames -- --nocapture`.

use std::path::{Path, PathBuf};
use std::process::Command;
use suture::session::format::{self, Recording};
use suture::session::npz::{self, Array};
use suture::session::replay::build_tool;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_suture"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("suture-export-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&str], extra: &[&Path]) -> (Option<i32>, String, String) {
    let o = bin().args(args).args(extra).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    println!("suture {args:?}: {out}{err}");
    (o.status.code(), out, err)
}

/// A live session of the interrupted stitch driven by the scripted bite (2.5 s: the needle
/// enters the skin at 1.49 s).
fn record(file: &Path) -> Recording {
    let (code, _, _) = run(
        &[
            "run",
            "scenes/interrupted_stitch.toml",
            "--headless",
            "--duration=2.5",
            "--device=scripted:docs/screens/stitch_drive.csv",
            &format!("--record={}", file.display()),
        ],
        &[],
    );
    assert_eq!(code, Some(0));
    format::decode(&std::fs::read(file).unwrap()).unwrap()
}

/// The suture's node positions after every step, from an offline run of the recording's scene
/// on its recorded targets (index 0: the initial state).
fn offline_positions(rec: &Recording) -> Vec<Vec<[f64; 3]>> {
    let h = &rec.header;
    let mut sc = suture::scene::parse(&h.scene_path, &h.scene_text, Default::default()).unwrap();
    let mut tools: Vec<_> = h
        .tools
        .iter()
        .map(|t| build_tool(&sc.world, t).unwrap())
        .collect();
    let n = tools.len();
    let rod = sc.world.suturing.as_ref().unwrap().rod;
    let copy = |w: &suture::sim::World| -> Vec<[f64; 3]> {
        w.rods[rod]
            .positions()
            .iter()
            .map(|p| [p.x, p.y, p.z])
            .collect()
    };
    let mut out = vec![copy(&sc.world)];
    for s in &rec.steps {
        let targets = s.targets();
        sc.world.step(&mut tools, &targets[..n], h.dt);
        out.push(copy(&sc.world));
    }
    out
}

fn same_bits(a: &Array, b: &Array) -> bool {
    a.shape == b.shape
        && a.data.len() == b.data.len()
        && a.data
            .iter()
            .zip(&b.data)
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn export_writes_the_sutures_frames_bit_for_bit_and_assess_finds_no_knot() {
    let file = tmp("stitch.surec");
    let rec = record(&file);
    let steps = rec.steps.len();
    assert!(steps >= 2400, "{steps}");

    // Frames every 20 ms (20 steps of 1 ms), and the recorded series alone.
    let with = tmp("with.npz");
    let without = tmp("without.npz");
    let (code, out, _) = run(
        &["export", "--frames-every=0.02"],
        &[&file, Path::new(&format!("--npz={}", with.display()))],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("re-simulated bit for bit"), "{out}");
    let (code, _, _) = run(
        &["export", "--no-frames"],
        &[&file, Path::new(&format!("--npz={}", without.display()))],
    );
    assert_eq!(code, Some(0));
    let a = npz::read(&std::fs::read(&with).unwrap()).unwrap();
    let b = npz::read(&std::fs::read(&without).unwrap()).unwrap();

    // The recorded series are the same arrays, bit for bit, with or without the frames; the
    // frames add exactly `suture` and `suture_time` (the scene has one rod).
    for (name, arr) in &b {
        assert!(same_bits(arr, &a[name]), "{name} changed");
    }
    let added: Vec<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    assert_eq!(added, ["suture", "suture_time"]);
    assert_eq!(b["step_time"].shape, vec![steps]);

    // Shapes and times: frames at t = 0 and after every 20th step.
    let reference = offline_positions(&rec);
    let nodes = reference[0].len();
    let t = steps / 20 + 1;
    assert_eq!(a["suture"].shape, vec![t, nodes, 3]);
    assert_eq!(a["suture_time"].shape, vec![t]);
    assert_eq!(a["suture_time"].data[0], 0.0);
    for j in 1..t {
        assert_eq!(
            a["suture_time"].data[j].to_bits(),
            rec.steps[20 * j - 1].time.to_bits(),
            "frame {j}"
        );
    }
    // Every frame's node positions equal the offline run's at that step, bit for bit.
    let frame = |j: usize| &a["suture"].data[j * nodes * 3..(j + 1) * nodes * 3];
    for j in 0..t {
        let want: Vec<f64> = reference[20 * j].iter().flatten().copied().collect();
        assert!(
            frame(j)
                .iter()
                .zip(&want)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "frame {j} (step {}) differs from the offline run",
            20 * j
        );
    }
    // The suture moved over the session (the frames are not one state repeated).
    let moved = frame(0)
        .iter()
        .zip(frame(t - 1))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    println!("{t} frames of {nodes} nodes; largest node displacement {moved:.3e} m");
    assert!(moved > 1e-4, "{moved}");

    // Bad values name the argument and exit 2; nothing is written.
    let never = tmp("never.npz");
    let npz_arg = format!("--npz={}", never.display());
    for bad in ["0", "-0.01", "abc", "nan", "inf", "61"] {
        let (code, _, err) = run(
            &["export", &format!("--frames-every={bad}")],
            &[&file, Path::new(&npz_arg)],
        );
        assert_eq!(code, Some(2), "{bad}");
        assert!(err.contains("--frames-every"), "{bad}: {err}");
    }
    let (code, _, err) = run(
        &["export", "--frames-every=0.0001"],
        &[&file, Path::new(&npz_arg)],
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--frames-every 0.0001: shorter than the recording's physics step"),
        "{err}"
    );
    let (code, _, err) = run(
        &["export", "--frames-every=0.01"],
        &[&file, Path::new(&format!("--csv={}", tmp("csv").display()))],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("--npz"), "{err}");
    assert!(!never.exists());

    // A recording whose re-simulation diverges (one target moved by 1 µm at step 700) gets
    // no frames: exit 1 and no .npz.
    let mut altered = rec.clone();
    altered.steps[699].target.as_mut().unwrap().position.x += 1e-6;
    let bad = tmp("altered.surec");
    std::fs::write(&bad, format::encode(&altered)).unwrap();
    let (code, _, err) = run(&["export"], &[&bad, Path::new(&npz_arg)]);
    assert_eq!(code, Some(1));
    assert!(err.contains("replay diverges at step 700"), "{err}");
    assert!(err.contains("no .npz is written"), "{err}");
    assert!(!never.exists());

    // The session ties no knot: `suture assess` says so, with no throw and no tying phase.
    let report = tmp("report");
    let (code, out, _) = run(
        &["assess"],
        &[&file, Path::new(&format!("--out={}", report.display()))],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("knot not a knot"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("stitch.json")).unwrap())
            .unwrap();
    assert_eq!(json["knot"], "not a knot");
    assert_eq!(json["knot_throws"].as_array().unwrap().len(), 0);
    assert!(json["knot_gap_mm"].is_null());
    assert!(
        json["knot_analysis"]
            .as_str()
            .unwrap()
            .starts_with(&format!("re-simulated {steps} steps bit for bit")),
        "{}",
        json["knot_analysis"]
    );
    let phases: Vec<&str> = json["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap())
        .collect();
    assert!(!phases.contains(&"tying"), "{phases:?}");
    let html = std::fs::read_to_string(report.join("stitch.html")).unwrap();
    assert!(
        html.contains("<tr><th>knot</th><td>not a knot</td></tr>"),
        "{html}"
    );
    // The altered recording: the knot is not analysed (its replay diverges), said so, and the
    // other metrics stand.
    let (code, out, err) = run(
        &["assess"],
        &[&bad, Path::new(&format!("--out={}", report.display()))],
    );
    assert_eq!(code, Some(0));
    assert!(err.contains("warning: the knot is not analysed"), "{err}");
    assert!(out.contains("knot not analysed"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("altered.json")).unwrap())
            .unwrap();
    assert!(json["knot"].is_null());
    assert!(
        json["knot_analysis"]
            .as_str()
            .unwrap()
            .contains("replay diverges at step 700"),
        "{}",
        json["knot_analysis"]
    );
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}
