//! Scene errors with file, line, column and field.

use std::fmt;

/// A scene file could not be read, parsed or validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneError {
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

impl fmt::Display for SceneError {
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

impl std::error::Error for SceneError {}

/// 1-based (line, column) of a byte offset; columns count characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}
