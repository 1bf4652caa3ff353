//! The documentation a reader opens in a fresh clone is whole: every relative link and image in
//! README.md, docs/*.md, scenes/README.md, devices/README.md and ARCHITECTURE.md points at a
//! file that exists and, when the repository is a git work tree, is tracked by git (a file
//! that is only on this machine, e.g. ignored by .gitignore, is a broken image in a clone).
//! README.md stays a short page for users (under 15 000 bytes), and its first `cargo test`
//! command is the one CI runs (.ci/run).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The markdown files whose links are checked, relative to the repository root.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files: Vec<PathBuf> = ["README.md", "scenes/README.md", "devices/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    if root.join("ARCHITECTURE.md").is_file() {
        files.push(PathBuf::from("ARCHITECTURE.md"));
    }
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Link and image targets `](target)` in markdown text, with the line each is on. Fenced code
/// blocks are skipped; an optional title (`](target "title")`) and angle brackets are dropped.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(k) = rest.find("](") {
            let after = &rest[k + 2..];
            let Some(end) = after.find(')') else { break };
            let mut target = after[..end].trim();
            if let Some(sp) = target.find(char::is_whitespace) {
                target = &target[..sp];
            }
            let target = target.trim_start_matches('<').trim_end_matches('>');
            out.push((i + 1, target.to_string()));
            rest = &after[end + 1..];
        }
    }
    out
}

/// Whether `git ls-files` answers in the repository (git installed, a work tree).
fn git_works(root: &Path) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "--error-unmatch", "Cargo.toml"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether git tracks `path` (a file, or a folder holding tracked files).
fn tracked(root: &Path, path: &Path) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "--error-unmatch", "--"])
        .arg(path)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `target` resolved against `dir` (a folder relative to the root), `..` and `.` folded.
fn resolve(dir: &Path, target: &str) -> PathBuf {
    let mut parts: Vec<String> = dir
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p.to_string()),
        }
    }
    parts.iter().collect()
}

/// Every local link of every file, checked; returns one line per broken link.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let use_git = git_works(root);
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = file.parent().unwrap_or(Path::new(""));
        for (line, target) in link_targets(&text) {
            let lower = target.to_ascii_lowercase();
            if lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower.starts_with("mailto:")
            {
                continue;
            }
            let path = target.split('#').next().unwrap_or("");
            if path.is_empty() {
                continue; // an anchor in the same file
            }
            let resolved = resolve(dir, path);
            let why = if !root.join(&resolved).exists() {
                Some("does not exist")
            } else if use_git && !tracked(root, &resolved) {
                Some("is not tracked by git (ignored or not added: a clone will not have it)")
            } else {
                None
            };
            if let Some(why) = why {
                broken.push(format!(
                    "{}:{line}: ({target}) -> {} {why}",
                    file.display(),
                    resolved.display()
                ));
            }
        }
    }
    broken
}

#[test]
fn every_link_and_image_in_the_docs_resolves_in_a_clone() {
    let root = root();
    let files = markdown_files();
    let broken = broken_links(&root, &files);
    assert!(
        broken.is_empty(),
        "{} broken link(s) in the documentation:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_link_checker_catches_a_missing_file_and_skips_what_it_should() {
    let text = "see [a](docs/no_such_file.md) and ![b](missing.png \"title\"), \
                [web](https://example.org/x) [mail](mailto:a@b.c) [here](#anchor)\n\
                ```\n[in code](not/checked.md)\n```\n[up](../README.md#cli)\n";
    let targets: Vec<String> = link_targets(text).into_iter().map(|t| t.1).collect();
    assert_eq!(
        targets,
        [
            "docs/no_such_file.md",
            "missing.png",
            "https://example.org/x",
            "mailto:a@b.c",
            "#anchor",
            "../README.md#cli"
        ]
    );
    assert_eq!(
        resolve(Path::new("docs"), "../scenes/./README.md"),
        PathBuf::from("scenes/README.md")
    );
    let dir = std::env::temp_dir().join(format!("suture-docs-links-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(dir.join("README.md"), "# x\n").unwrap();
    std::fs::write(dir.join("docs/page.md"), text).unwrap();
    let broken = broken_links(&dir, &[PathBuf::from("docs/page.md")]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("docs/docs/no_such_file.md does not exist"));
    assert!(broken[1].contains("docs/missing.png does not exist"));
}

#[test]
fn readme_is_a_short_page_for_users() {
    let len = std::fs::metadata(root().join("README.md")).unwrap().len();
    assert!(
        len < 15_000,
        "README.md is {len} bytes: move reference material into docs/ (limit 15 000)"
    );
}

/// The first `cargo test ...` in `text` (to the end of its line, a closing backtick or a `#`
/// comment), trimmed.
fn first_cargo_test(text: &str) -> Option<String> {
    let start = text.find("cargo test")?;
    let rest = &text[start..];
    let end = rest.find(['\n', '`', '#']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

#[test]
fn readme_test_command_is_the_one_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let from_readme = first_cargo_test(&readme).expect("README.md names a cargo test command");
    let ci_commands: Vec<String> = ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo test"))
        .map(|l| first_cargo_test(l).unwrap())
        .collect();
    assert!(
        ci_commands.contains(&from_readme),
        "README.md's first test command `{from_readme}` is not what .ci/run runs: {ci_commands:?}"
    );
}
