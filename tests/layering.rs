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

/// Issue #21: the two dynamic rod models share their solver interface through `rod::implicit`;
/// DER does not reach into the Cosserat model (no `use` of it, no path through it).
#[test]
fn der_does_not_use_the_cosserat_model() {
    let mut fs = Vec::new();
    files(std::path::Path::new("src/rod/der"), &mut fs);
    assert!(fs.len() >= 4, "scanned only {} files", fs.len());
    let mut violations = Vec::new();
    for f in fs {
        let text = std::fs::read_to_string(&f).unwrap();
        for (ln, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let uses = code.starts_with("use ") || code.starts_with("pub use ");
            if (uses && code.contains("cosserat")) || code.contains("cosserat::") {
                violations.push(format!("{}:{}: {}", f.display(), ln + 1, code));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "rod::der names rod::cosserat:\n{}",
        violations.join("\n")
    );
}
