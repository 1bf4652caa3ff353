//! The layer rule of ARCHITECTURE.md: a module may use only the modules listed for it.
//! Scans src/<module>/**.rs (and src/<module>.rs) for `crate::<name>` paths.

const ALLOWED: &[(&str, &[&str])] = &[
    ("math", &[]),
    ("located", &[]),
    ("rod", &["math"]),
    ("contact", &["math", "rod"]),
    ("topology", &["math"]),
    ("tissue", &["math"]),
    ("device", &["math", "located"]),
    ("sim", &["math", "rod", "contact", "topology", "tissue"]),
    ("coupling", &["math", "device"]),
    (
        "scene",
        &[
            "math", "located", "rod", "contact", "topology", "tissue", "device", "sim", "coupling",
        ],
    ),
    ("session", &["math", "sim", "device", "topology", "tissue"]),
    (
        "runtime",
        &[
            "math", "located", "rod", "contact", "topology", "tissue", "device", "sim", "coupling",
            "scene", "session",
        ],
    ),
    ("render", &["math", "sim", "tissue", "device", "runtime"]),
];

fn files(path: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            files(&e.unwrap().path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

#[test]
fn modules_respect_the_layer_rule() {
    let known: Vec<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    let mut violations = Vec::new();
    let mut scanned = 0;
    for (module, allowed) in ALLOWED {
        let mut fs = Vec::new();
        files(std::path::Path::new(&format!("src/{module}")), &mut fs);
        files(std::path::Path::new(&format!("src/{module}.rs")), &mut fs);
        for f in fs {
            scanned += 1;
            let text = std::fs::read_to_string(&f).unwrap();
            for (ln, line) in text.lines().enumerate() {
                let mut rest = line;
                while let Some(i) = rest.find("crate::") {
                    let after = &rest[i + 7..];
                    let name: String = after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if name != *module
                        && known.contains(&name.as_str())
                        && !allowed.contains(&name.as_str())
                    {
                        violations.push(format!(
                            "{}:{}: {module} uses crate::{name}: {}",
                            f.display(),
                            ln + 1,
                            line.trim()
                        ));
                    }
                    rest = after;
                }
            }
        }
    }
    assert!(scanned >= 8, "scanned only {scanned} files");
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_src_module_is_in_the_table() {
    for e in std::fs::read_dir("src").unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        // lib.rs, and the binary: main.rs with its cli/ modules (top level, above every layer).
        if name == "lib" || name == "main" || name == "cli" {
            continue;
        }
        assert!(
            ALLOWED.iter().any(|(m, _)| *m == name),
            "src/{name} is not in the layer table"
        );
    }
}

/// Code lines of every .rs file under `paths` (comments dropped), with their place.
fn code_lines(paths: &[&str]) -> Vec<(String, usize, String)> {
    let mut fs = Vec::new();
    for p in paths {
        files(std::path::Path::new(p), &mut fs);
    }
    assert!(!fs.is_empty(), "no files under {paths:?}");
    let mut out = Vec::new();
    for f in fs {
        let text = std::fs::read_to_string(&f).unwrap();
        for (ln, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !code.trim().is_empty() {
                out.push((f.display().to_string(), ln + 1, code.to_string()));
            }
        }
    }
    out
}

/// Lines of `paths` that contain any of `words`, as "file:line: text".
fn mentions(paths: &[&str], words: &[&str]) -> Vec<String> {
    code_lines(paths)
        .into_iter()
        .filter(|(_, _, code)| words.iter().any(|w| code.contains(w)))
        .map(|(f, ln, code)| format!("{f}:{ln}: {}", code.trim()))
        .collect()
}

#[test]
fn der_does_not_import_cosserat() {
    // The shared implicit-solver interface (drive, potentials, Newton host, report) lives in
    // rod/, not inside one model.
    let bad = mentions(&["src/rod/der"], &["cosserat"]);
    assert!(
        bad.is_empty(),
        "rod::der names rod::cosserat:\n{}",
        bad.join("\n")
    );
}

#[test]
fn nothing_above_sim_names_a_rod_models_internals() {
    // Above sim, a rod is what sim::World, sim::StepOutputs and the snapshot say of it.
    let bad = mentions(
        &[
            "src/session",
            "src/runtime",
            "src/render",
            "src/cli",
            "src/main.rs",
        ],
        &[
            "RodModel",
            "CosseratRod",
            "DerRod",
            "rod::cosserat",
            "rod::der",
            "rod::strands",
        ],
    );
    assert!(
        bad.is_empty(),
        "a rod model's internals named above sim:\n{}",
        bad.join("\n")
    );
}

#[test]
fn session_and_runtime_do_not_read_the_worlds_internals() {
    // The recorder, replay and the loops read a step through sim::StepOutputs, a tool through
    // sim::Tool::state and the world through its methods (digest, events_since, …).
    let bad = mentions(
        &["src/session", "src/runtime"],
        &[
            "world.rods",
            "world.suturing",
            "world.obstacle_motions",
            "sim::suturing::Suturing",
        ],
    );
    assert!(
        bad.is_empty(),
        "the world's internals read from session or runtime:\n{}",
        bad.join("\n")
    );
}

/// ARCHITECTURE.md names only what exists: every `name.rs` it mentions is a file under src/
/// or tests/,
/// and every CamelCase name with two or more capitals (a type: `StepOutputs`, `HapticCore`)
/// is declared in src/ as a struct, enum, trait or type.
#[test]
fn architecture_names_only_what_exists() {
    let text = std::fs::read_to_string("ARCHITECTURE.md").unwrap();
    let mut fs = Vec::new();
    files(std::path::Path::new("src"), &mut fs);
    let mut all = fs.clone();
    files(std::path::Path::new("tests"), &mut all);
    files(std::path::Path::new("build.rs"), &mut all);
    let names: Vec<String> = all
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    // Words with two capitals that are not types.
    let not_types = ["NaN", "NumPy", "OpenHaptics", "SQLite"];
    let source: String = fs
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let words = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'));
    let mut missing = Vec::new();
    for w in words {
        let w = w.trim_end_matches('.');
        if let Some(stem) = w.strip_suffix(".rs") {
            if !stem.is_empty() && !names.iter().any(|n| n == w) {
                missing.push(format!("file {w}"));
            }
            continue;
        }
        let capitals = w.chars().filter(|c| c.is_ascii_uppercase()).count();
        let camel = w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && w.chars().any(|c| c.is_ascii_lowercase())
            && capitals >= 2
            && w.chars().all(|c| c.is_ascii_alphanumeric());
        if camel
            && !not_types.contains(&w)
            && !["struct", "enum", "trait", "type"]
                .iter()
                .any(|k| source.contains(&format!("{k} {w}")))
        {
            missing.push(format!("type {w}"));
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what src/ does not have:\n{}",
        missing.join("\n")
    );
}
