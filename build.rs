//! The build identity a recording names (docs/recording-format.md, "Build identity"):
//! `SUTURE_BUILD`, e.g. `suture 0.1.0, sim 1f0c3a5e9b7d2468, rustc 1.95.0 (…), x86_64-unknown-linux-gnu`.
//!
//! `sim` is a 64-bit FNV-1a hash of the sources a re-simulation runs (the files below, each
//! by its path relative to the crate and its text with `\r` removed, in path order) and of
//! Cargo.lock (the dependencies' versions: nalgebra's arithmetic is part of the simulation).
//! With the compiler's version and the target it changes when the simulation code or what
//! compiles it does, and not otherwise: the viewer, the CLI's wording, the docs or the tests
//! leave it alone. It needs no git (a clean clone, a crates tarball and a dirty tree all hash
//! what they build) and is deterministic (no time, no path outside the crate).

use std::path::{Path, PathBuf};

/// What a re-simulation runs: the world and its step, the scene that builds it, the record
/// capture, the replay that drives it and the format that carries its inputs.
const SIM_SOURCES: &[&str] = &[
    "src/math.rs",
    "src/located.rs",
    "src/rod",
    "src/contact",
    "src/tissue.rs",
    "src/sim",
    "src/scene",
    "src/session/format",
    "src/session/recorder.rs",
    "src/session/replay.rs",
    "Cargo.lock",
];

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut files = Vec::new();
    for s in SIM_SOURCES {
        let p = root.join(s);
        if p.exists() {
            println!("cargo:rerun-if-changed={s}");
        }
        collect(&p, &mut files);
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let mut names: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).expect("under the crate");
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (name, f)
        })
        .collect();
    names.sort();
    if !names.iter().any(|(n, _)| n == "Cargo.lock") {
        h.bytes(b"no Cargo.lock\0");
    }
    for (name, f) in &names {
        let text: Vec<u8> = std::fs::read(f)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .into_iter()
            .filter(|&b| b != b'\r')
            .collect();
        h.bytes(name.as_bytes());
        h.bytes(&[0]);
        h.bytes(&(text.len() as u64).to_le_bytes());
        h.bytes(&text);
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc (version unknown)".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    println!(
        "cargo:rustc-env=SUTURE_BUILD=suture {}, sim {:016x}, {version}, {target}",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        h.0
    );
    println!("cargo:rerun-if-changed=build.rs");
}
