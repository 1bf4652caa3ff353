//! A recording one step past the decoder: what `suture replay --headless --verify` and
//! `suture assess` do with it, in the library calls they make (src/cli/replay.rs,
//! src/cli/assess.rs): decode it whole (replay) or salvage a truncated one (assess), check its
//! header, build the scene it carries, re-simulate it step by step against its records and
//! digests (`session::replay::verify`), track its knot over a second re-simulation
//! (`session::knot::track`), compute the metrics, and write the JSON and the HTML report with
//! its plots into a scratch folder. Each chunk's CRC is set right first (as in the
//! `recording` target) so that mutations reach the payloads. Errors are fine; a panic, abort,
//! hang or runaway allocation is not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use suture::session::format::{DecodeError, Recording, decode, salvage};
use suture::session::{assess, knot, replay, report};

#[path = "common/crc.rs"]
mod crc;
use crc::fix_crcs;

/// The scene a recording carries, built as it was recorded (cli::recorded_scene).
fn scene(rec: &Recording) -> Option<suture::scene::Scene> {
    let h = &rec.header;
    suture::scene::parse(
        &h.scene_path,
        &h.scene_text,
        suture::scene::Overrides::default(),
    )
    .ok()
}

/// `suture replay --headless --verify` (cli::replay::verify after cli::read_recording), with
/// the recording's world as its scene builds it.
fn replay_verify(bytes: &[u8], world: suture::sim::World) {
    let Ok(rec) = decode(bytes) else { return };
    if rec.header.validate().is_err() {
        return;
    }
    if let Ok(r) = replay::verify(&rec, world, |_| {}) {
        let _ = r.to_string();
    }
}

/// `suture assess` on one file (cli::assess::assess_one after cli::read_salvaged, and
/// cli::assess::knot), then `replay_verify` on the same bytes. The scene is built once for
/// both (the two commands each build it from the same header text).
fn assess_and_replay(bytes: &[u8]) {
    let rec = match salvage(bytes) {
        (r, None) => r,
        (r, Some(DecodeError::Truncated { .. })) if !r.steps.is_empty() => r,
        _ => return,
    };
    if rec.header.validate().is_err() {
        return;
    }
    let sc = scene(&rec);
    let knot = match &sc {
        None => Err("its scene".to_string()),
        Some(sc) => {
            let mut world = sc.world.clone();
            let every = knot::steps_between_looks(rec.header.dt);
            match knot::track(&rec, &mut world, every) {
                Err(e) => Err(e.to_string()),
                Ok((_, verify)) if verify.divergence.is_some() => Err(verify.to_string()),
                Ok((k, _)) => Ok((k, String::new())),
            }
        }
    };
    let m = assess::assess_with_knot(&rec, knot);
    let _ = serde_json::to_string_pretty(&m).expect("plain data");
    let _ = assess::summary_row("fuzz.surec", &m);
    let _ = report::write(&rec, &m, scratch(), "fuzz");
    if let Some(sc) = sc {
        replay_verify(bytes, sc.world);
    }
}

/// A scratch folder for the reports, one per process.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("suture-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch folder");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    assess_and_replay(&fix_crcs(data));
});
