//! L0: TOML files with located errors. Every input file the project reads (scenes, device
//! profiles) reports a bad value as `file:line:column: field message`, pointing at the value
//! itself, or at its deepest parent present when the field is missing.

use serde::de::DeserializeOwned;
use std::fmt;
use toml::de::{DeTable, DeValue};

/// An input file could not be read, parsed or validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// File the error is in (as given by the user).
    pub file: String,
    /// 1-based line (0 if unknown, e.g. the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Field path, e.g. `rods[0].radius` (empty for syntax errors).
    pub field: String,
    /// What is wrong, with unit and allowed range.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} {}", self.field, self.message)
        }
    }
}

impl std::error::Error for FileError {}

/// 1-based (line, column) of a byte offset; columns count characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Read a file; `what` names its kind in the error ("scene", "device profile").
pub fn read(path: &str, what: &str) -> Result<String, FileError> {
    std::fs::read_to_string(path).map_err(|e| FileError {
        file: path.to_string(),
        line: 0,
        col: 0,
        field: String::new(),
        message: format!("cannot read {what} file: {e}"),
    })
}

/// Every `*.toml` file in `dir`, sorted by name; `what` names the folder in the error
/// ("device profile folder").
pub fn toml_files(dir: &str, what: &str) -> Result<Vec<String>, FileError> {
    let entries = std::fs::read_dir(dir).map_err(|e| FileError {
        file: dir.to_string(),
        line: 0,
        col: 0,
        field: String::new(),
        message: format!("cannot read the {what}: {e}"),
    })?;
    let mut files: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    Ok(files)
}

/// One step of a field path.
#[derive(Clone, Copy, Debug)]
pub enum Seg<'a> {
    /// A table key.
    Key(&'a str),
    /// An array index.
    Idx(usize),
}

/// A parsed document, kept for locating errors found after deserialisation.
pub struct Doc<'a> {
    file: &'a str,
    text: &'a str,
    doc: toml::Spanned<DeTable<'a>>,
}

impl<'a> Doc<'a> {
    /// Parse `text` (named `file` in errors) and deserialise it into `T`; syntax errors and
    /// type errors (unknown fields, wrong types) are located.
    pub fn parse<T: DeserializeOwned>(
        file: &'a str,
        text: &'a str,
    ) -> Result<(T, Self), FileError> {
        let located = |line: usize, col: usize, field: String, message: String| FileError {
            file: file.to_string(),
            line,
            col,
            field,
            message,
        };
        let doc = DeTable::parse(text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            located(
                line,
                col,
                String::new(),
                format!("TOML syntax error: {}", e.message().trim()),
            )
        })?;
        let de = toml::Deserializer::from(doc.clone());
        match serde_path_to_error::deserialize(de) {
            Ok(v) => Ok((v, Doc { file, text, doc })),
            Err(e) => {
                let path = e.path().to_string();
                let inner = e.into_inner();
                let (line, col) = inner.span().map_or((1, 1), |s| line_col(text, s.start));
                Err(located(
                    line,
                    col,
                    if path == "." { String::new() } else { path },
                    inner.message().trim().to_string(),
                ))
            }
        }
    }

    /// An error at the deepest part of `path` present in the document.
    pub fn err(&self, path: &[Seg], message: String) -> FileError {
        let mut span = self.doc.span();
        let mut cur: Option<&toml::Spanned<DeValue>> = None;
        let mut field = String::new();
        let push = |field: &mut String, seg: &Seg, first: bool| match seg {
            Seg::Key(k) => {
                if !first {
                    field.push('.');
                }
                field.push_str(k);
            }
            Seg::Idx(n) => field.push_str(&format!("[{n}]")),
        };
        for (i, seg) in path.iter().enumerate() {
            push(&mut field, seg, i == 0);
            let next = match (cur, seg) {
                (None, Seg::Key(k)) => self.doc.get_ref().get(*k),
                (Some(v), Seg::Key(k)) => v.get_ref().get(*k),
                (Some(v), Seg::Idx(n)) => v.get_ref().get(*n),
                (None, Seg::Idx(_)) => None,
            };
            if let Some(v) = next {
                span = v.span();
                cur = Some(v);
            } else {
                // Keep the span of the deepest existing parent.
                for s in &path[i + 1..] {
                    push(&mut field, s, false);
                }
                break;
            }
        }
        let (line, col) = line_col(self.text, span.start);
        FileError {
            file: self.file.to_string(),
            line,
            col,
            field,
            message,
        }
    }
}
