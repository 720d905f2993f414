//! Source files, spans and diagnostics for every compiler stage.
//!
//! What it is for: one place that knows where source text lives
//! ([`SourceMap`], [`FileId`], [`Span`]) and how problems are reported
//! ([`Diagnostic`], rendered with `codespan-reporting`).
//!
//! Contract:
//! - A [`Span`] is a [`FileId`] plus a byte range into that file's original
//!   text (before preprocessing). Ranges are clamped when rendered, so a bad
//!   span never panics; it just points at the end of the file.
//! - [`Diagnostic`] mirrors codespan's model: a [`Severity`] (ordered
//!   `Help < Note < Warning < Error < Bug`), a stable code `P4E0xxx` (see
//!   [`codes`]), a message, primary/secondary labels and notes. An internal
//!   compiler error is a [`Severity::Bug`] diagnostic, never a panic.
//! - Rendering ([`Diagnostic::render`]) produces `file:line:column` headers,
//!   the source line and carets; colour is off unless asked for, so rendered
//!   text can be pinned in tests.

use std::ops::Range;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
use codespan_reporting::term;

/// Identifies one file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span over `start..end` in `file`.
    pub fn new(file: FileId, start: u32, end: u32) -> Self {
        Span {
            file,
            start,
            end: end.max(start),
        }
    }

    /// The smallest span covering both, when both are in the same file;
    /// otherwise `self`.
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span::new(
            self.file,
            self.start.min(other.start),
            self.end.max(other.end),
        )
    }

    /// The byte range as `usize`s.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Stable diagnostic codes. `P4E00xx`: preprocessor; `P4E01xx`: lexer and
/// parser; `P4E02xx` and above: reserved for the checker and back ends;
/// `P4E0999`: internal compiler error.
pub mod codes {
    /// Unknown preprocessor directive (`#foo`).
    pub const UNKNOWN_DIRECTIVE: &str = "P4E0001";
    /// `#include` file not found.
    pub const INCLUDE_NOT_FOUND: &str = "P4E0002";
    /// `#endif`/`#else`/`#elif` without `#if`, or a missing `#endif`.
    pub const UNBALANCED_CONDITIONAL: &str = "P4E0003";
    /// Malformed directive (bad `#define`, `#if` expression, `#include` syntax).
    pub const MALFORMED_DIRECTIVE: &str = "P4E0004";
    /// Includes nested too deeply (probably recursive).
    pub const INCLUDE_DEPTH: &str = "P4E0005";
    /// `#error` directive reached.
    pub const ERROR_DIRECTIVE: &str = "P4E0006";
    /// Macro expansion too deep (probably recursive) or bad macro call.
    pub const MACRO_EXPANSION: &str = "P4E0007";
    /// A character that cannot start any token.
    pub const UNEXPECTED_CHAR: &str = "P4E0101";
    /// `/*` without `*/`.
    pub const UNTERMINATED_COMMENT: &str = "P4E0102";
    /// `"` without closing `"`.
    pub const UNTERMINATED_STRING: &str = "P4E0103";
    /// Malformed integer literal (digits, width, overflow).
    pub const BAD_INTEGER: &str = "P4E0104";
    /// The parser expected something else here.
    pub const UNEXPECTED_TOKEN: &str = "P4E0110";
    /// `(`, `[`, `{` or `<` never closed.
    pub const UNCLOSED_DELIMITER: &str = "P4E0111";
    /// Nesting too deep for the parser.
    pub const TOO_DEEP: &str = "P4E0112";
    /// Malformed annotation.
    pub const BAD_ANNOTATION: &str = "P4E0113";
    /// Malformed `transition` statement.
    pub const BAD_TRANSITION: &str = "P4E0114";
    /// Malformed declaration (e.g. a table property in the wrong form).
    pub const BAD_DECLARATION: &str = "P4E0115";
    /// Cannot read a source file.
    pub const IO: &str = "P4E0120";
    /// Internal compiler error.
    pub const BUG: &str = "P4E0999";
}

/// How bad a diagnostic is; ordered as codespan orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A suggestion.
    Help,
    /// Extra information.
    Note,
    /// Suspicious but compiles.
    Warning,
    /// The program is rejected.
    Error,
    /// An internal compiler error.
    Bug,
}

/// A labelled span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
    /// Primary labels mark the error itself; secondary ones give context.
    pub primary: bool,
}

/// One problem report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// Stable code, e.g. `P4E0110`.
    pub code: String,
    /// One-line message.
    pub message: String,
    /// Labels; the first primary one gives the `file:line:column`.
    pub labels: Vec<Label>,
    /// Notes printed after the snippet.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic of the given severity.
    pub fn new(severity: Severity, code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code: code.to_owned(),
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// An error.
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A warning.
    pub fn warning(code: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// An internal compiler error (code [`codes::BUG`]).
    pub fn bug(message: impl Into<String>) -> Self {
        Self::new(Severity::Bug, codes::BUG, message)
    }

    /// Adds a primary label.
    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The first primary label's span, if any.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }

    /// Whether this diagnostic stops compilation.
    pub fn is_error(&self) -> bool {
        self.severity >= Severity::Error
    }

    /// Renders to text (`error[P4E0110]: ...` then ` ┌─ file:line:col`, the
    /// source line and carets). `color` adds ANSI colours.
    pub fn render(&self, sources: &SourceMap, color: bool) -> String {
        let severity = match self.severity {
            Severity::Help => cs::Severity::Help,
            Severity::Note => cs::Severity::Note,
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
            Severity::Bug => cs::Severity::Bug,
        };
        let labels = self
            .labels
            .iter()
            .filter(|l| (l.span.file.0 as usize) < sources.files.len())
            .map(|l| {
                let range = sources.clamp(l.span);
                let label = if l.primary {
                    cs::Label::primary(l.span.file, range)
                } else {
                    cs::Label::secondary(l.span.file, range)
                };
                label.with_message(l.message.clone())
            })
            .collect();
        let diagnostic = cs::Diagnostic::new(severity)
            .with_code(self.code.clone())
            .with_message(self.message.clone())
            .with_labels(labels)
            .with_notes(self.notes.clone());
        let config = term::Config::default();
        let mut out = Vec::new();
        let result = if color {
            let mut w = term::termcolor::Ansi::new(&mut out);
            term::emit(&mut w, &config, sources, &diagnostic)
        } else {
            let mut w = term::termcolor::NoColor::new(&mut out);
            term::emit(&mut w, &config, sources, &diagnostic)
        };
        match result {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            // Only reachable with a label outside the map; fall back to a
            // plain one-liner rather than losing the message.
            Err(_) => format!(
                "{}[{}]: {}\n",
                severity_word(self.severity),
                self.code,
                self.message
            ),
        }
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Help => "help",
        Severity::Note => "note",
        Severity::Warning => "warning",
        Severity::Error => "error",
        Severity::Bug => "bug",
    }
}

/// Renders several diagnostics, one after the other, colour off.
pub fn render_all(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    diagnostics
        .iter()
        .map(|d| d.render(sources, false))
        .collect()
}

/// One source file: its display name, text and line starts.
#[derive(Clone, Debug)]
struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

/// All source files of a compilation, addressed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let text = text.into();
        let line_starts = files::line_starts(&text).collect();
        self.files.push(SourceFile {
            name: name.into(),
            text,
            line_starts,
        });
        FileId((self.files.len() - 1) as u32)
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file was added.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The display name of a file (`""` for an unknown id).
    pub fn file_name(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map_or("", |f| &f.name)
    }

    /// The text of a file (`""` for an unknown id).
    pub fn text(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map_or("", |f| &f.text)
    }

    /// The files whose path ends in `/name` or is `name`.
    pub fn files_named(&self, name: &str) -> Vec<FileId> {
        (0..self.files.len())
            .filter(|&i| {
                let n = self.files[i].name.as_str();
                n == name || n.strip_suffix(name).is_some_and(|d| d.ends_with('/'))
            })
            .map(|i| FileId(i as u32))
            .collect()
    }

    /// The id of the first file with this name.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }

    /// The text a span covers (clamped; `""` for a bad span).
    pub fn snippet(&self, span: Span) -> &str {
        let text = self.text(span.file);
        text.get(self.clamp(span)).unwrap_or("")
    }

    /// 1-based line and column (in chars) of a span's start.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        let Some(f) = self.files.get(span.file.0 as usize) else {
            return (1, 1);
        };
        let offset = (span.start as usize).min(f.text.len());
        let line = match f.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let line_start = f.line_starts[line];
        let col = f
            .text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// `file:line:column` of a span's start.
    pub fn location(&self, span: Span) -> String {
        let (l, c) = self.line_col(span);
        format!("{}:{}:{}", self.file_name(span.file), l, c)
    }

    /// A span's range clamped to its file and to char boundaries.
    fn clamp(&self, span: Span) -> Range<usize> {
        let text = self.text(span.file);
        let mut start = (span.start as usize).min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (span.end as usize).clamp(start, text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        start..end
    }
}

impl<'a> Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files
            .get(id.0 as usize)
            .map(|f| f.name.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files
            .get(id.0 as usize)
            .map(|f| f.text.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        let f = self
            .files
            .get(id.0 as usize)
            .ok_or(files::Error::FileMissing)?;
        Ok(match f.line_starts.binary_search(&byte_index) {
            Ok(l) => l,
            Err(l) => l - 1,
        })
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self
            .files
            .get(id.0 as usize)
            .ok_or(files::Error::FileMissing)?;
        let start = *f
            .line_starts
            .get(line_index)
            .ok_or(files::Error::LineTooLarge {
                given: line_index,
                max: f.line_starts.len() - 1,
            })?;
        let end = f
            .line_starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(f.text.len());
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_line_and_caret_without_colour() {
        let mut map = SourceMap::new();
        let f = map.add("a.p4", "const bit<8> x = 1\nfoo\n");
        let d = Diagnostic::error(codes::UNEXPECTED_TOKEN, "expected `;`, found `foo`")
            .with_primary(Span::new(f, 19, 22), "unexpected here")
            .with_note("a declaration ends with `;`");
        let text = d.render(&map, false);
        assert!(
            text.starts_with("error[P4E0110]: expected `;`, found `foo`"),
            "{text}"
        );
        assert!(text.contains("a.p4:2:1"), "{text}");
        assert!(text.contains("foo\n"), "{text}");
        assert!(text.contains("^^^ unexpected here"), "{text}");
        assert!(text.contains("= a declaration ends with `;`"), "{text}");
        assert!(!text.contains('\u{1b}'), "colour must be off: {text}");
    }

    #[test]
    fn line_col_counts_from_one_and_in_chars() {
        let mut map = SourceMap::new();
        let f = map.add("u.p4", "ab\n\u{e9}x\n");
        assert_eq!(map.line_col(Span::new(f, 0, 1)), (1, 1));
        assert_eq!(map.line_col(Span::new(f, 5, 6)), (2, 2));
        assert_eq!(map.location(Span::new(f, 3, 4)), "u.p4:2:1");
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let mut map = SourceMap::new();
        let f = map.add("x.p4", "\u{e9}");
        let d = Diagnostic::error(codes::BUG, "x").with_primary(Span::new(f, 1, 99), "");
        let _ = d.render(&map, false);
        let d = Diagnostic::error(codes::BUG, "x").with_primary(Span::new(FileId(7), 0, 1), "");
        assert!(d.render(&map, false).contains("error[P4E0999]: x"));
    }

    #[test]
    fn severities_order_as_codespan() {
        assert!(Severity::Help < Severity::Note);
        assert!(Severity::Warning < Severity::Error);
        assert!(Severity::Error < Severity::Bug);
        assert!(Diagnostic::bug("x").is_error());
        assert!(!Diagnostic::warning("P4E0200", "x").is_error());
    }
}
