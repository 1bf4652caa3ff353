//! Issue #22: `suture assess` names the knot of a recorded session by re-simulating it and
//! tracking the suture's centreline. The sessions are the square, granny and surgeon's knot
//! scenes (prescribed end motions, no device: scenes/gen/knots.py builds each as that knot)
//! stepped offline through `World::step`, the step the live physics loop takes, and recorded
//! with the recorder's own step capture; the reference name is `topology::identify_open` (the
//! knot table by determinant and Jones polynomial, not the throw tracker) on this test's final
//! centreline, and the throws are the knot's construction (a square knot: two single throws of
//! opposite sense; a granny: the same sense; a surgeon's: a double throw and a single throw of
//! the opposite sense).
//!
//! About 15 s in release: `cargo test --release --test knot_assess -- --nocapture`.

use std::path::PathBuf;
use std::process::Command;
use suture::math::Vec3;
use suture::session::format::{self, DigestRecord, End, Header, Recording};
use suture::session::recorder::capture;

/// Steps recorded (1 ms each): the knots are tied at t = 0 and held still for the first
/// second, so 0.3 s is a recording that ends in the knot.
const STEPS: u64 = 300;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("suture-knot-assess-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Record `STEPS` steps of a device-free scene as the physics loop would (no tools), with a
/// digest every 100 steps and an end record; returns the recording and the final centreline.
fn record(path: &str) -> (Recording, Vec<Vec3>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sc = suture::scene::parse(path, &text, Default::default()).unwrap();
    let dt = sc.world.dt().unwrap();
    let mut rec = Recording {
        header: Header {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            scene_path: path.to_string(),
            scene_text: text,
            dt,
            haptic_period: 1e-3,
            digest_every: 100,
            ..Default::default()
        },
        ..Default::default()
    };
    for k in 1..=STEPS {
        let out = sc.world.step(&mut [], &[], dt);
        assert!(out.error.is_none(), "{path}: step {k}: {:?}", out.error);
        rec.steps.push(capture(k, &[], &out));
        if k % 100 == 0 {
            rec.digests.push(DigestRecord {
                step: k,
                digest: sc.world.digest(&[]),
            });
        }
    }
    rec.end = Some(End {
        steps: STEPS,
        digest: sc.world.digest(&[]),
        ..Default::default()
    });
    let x = sc.world.rods[0].positions().to_vec();
    (rec, x)
}

fn assess(file: &PathBuf) -> serde_json::Value {
    let out_dir = file.with_extension("report");
    let o = Command::new(env!("CARGO_BIN_EXE_suture"))
        .arg("assess")
        .arg(file)
        .arg(format!("--out={}", out_dir.display()))
        .output()
        .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0));
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join(format!("{stem}.json"))).unwrap(),
    )
    .unwrap();
    let html = std::fs::read_to_string(out_dir.join(format!("{stem}.html"))).unwrap();
    let name = json["knot"].as_str().unwrap();
    assert!(
        html.contains(&format!("<tr><th>knot</th><td>{name}</td></tr>")),
        "the report's knot row: {html}"
    );
    json
}

#[test]
fn assess_names_the_square_granny_and_surgeons_knots() {
    for (scene, wraps, same_sense) in [
        ("scenes/knot_square.toml", [1, 1], false),
        ("scenes/knot_granny.toml", [1, 1], true),
        ("scenes/knot_surgeons.toml", [2, 1], false),
    ] {
        let (rec, x) = record(scene);
        let file = tmp(&format!(
            "{}.surec",
            scene
                .trim_start_matches("scenes/")
                .trim_end_matches(".toml")
        ));
        std::fs::write(&file, format::encode(&rec)).unwrap();
        let want = suture::topology::identify_open(&x).unwrap();
        let want = want.name.expect("the knot table names the scene's knot");
        let json = assess(&file);
        println!("{scene}: identify_open {want}; assess {}", json["knot"]);
        assert_eq!(json["knot"].as_str().unwrap(), want, "{scene}");
        // The throws: the scene's construction, in the factorisation's order (doubles first:
        // both were there at t = 0).
        let throws = json["knot_throws"].as_array().unwrap();
        let got: Vec<u64> = throws
            .iter()
            .map(|t| t["wraps"].as_u64().unwrap())
            .collect();
        assert_eq!(got, wraps, "{scene}: {throws:?}");
        let senses: Vec<&str> = throws
            .iter()
            .map(|t| t["sense"].as_str().unwrap())
            .collect();
        assert_eq!(senses[0] == senses[1], same_sense, "{scene}: {senses:?}");
        // First seen at the first look (t = 0; accepted at the second, 0.05 s later).
        for t in throws {
            assert_eq!(t["at"].as_f64().unwrap(), 0.0, "{scene}: {t}");
            // No skin in these scenes: laid flat is not judged, and there is no incision.
            assert!(t["laid_flat"].is_null());
        }
        assert!(json["knot_gap_mm"].is_null());
        assert_eq!(json["knot_complete_at"].as_f64().unwrap(), 0.0);
        // The knot was there from the start: the session is all after the knot, no tying.
        let phases: Vec<&str> = json["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[0].as_str().unwrap())
            .collect();
        assert_eq!(phases, ["after the knot"], "{scene}");
        let _ = std::fs::remove_file(&file);
    }
}
